"""First run from an installed wheel that carries its kernels: a fresh virtual environment in a new folder,
the wheel installed, then ``bench.STARTUP_CODE`` (import carom, a 15-box pyramid, one step) timed in fresh
processes, per processor level; beside it the warm start of the source checkout (its cache present).

    python benchmarks/first_run.py [--wheel dist/carom-...whl] [--rounds 3]

Without ``--wheel`` the wheel is built first (``tools/kernel_wheel.py``, from a clean copy of the package).
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "src"))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from carom import bench  # noqa: E402

COUNT = ("import numba.core.event as ev\nn = []\nclass C(ev.Listener):\n"
         "    def on_start(self, e): n.append(1)\n    def on_end(self, e): pass\nev.register('numba:compile', C())\n")


def timed(py, env, cwd):
    t0 = time.perf_counter()
    proc = subprocess.run([py, "-c", COUNT + bench.STARTUP_CODE + "\nprint('compiled', len(n))"], env=env, cwd=cwd,
                          capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode:
        raise SystemExit(proc.stderr)
    return wall, int(proc.stdout.split("compiled")[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wheel")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args(argv)
    wheel = a.wheel
    if wheel is None:
        import kernel_wheel
        wheel = kernel_wheel.build(os.path.join(ROOT, "dist"), kernel_wheel.buildable_levels())
    folder = tempfile.mkdtemp(prefix="carom-first-run-")
    try:
        venv = os.path.join(folder, "venv")
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        py = os.path.join(venv, "bin", "python")
        subprocess.run([py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", wheel], check=True)
        clean = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "CAROM_", "PYTHON"))}
        rows = []
        for level in ("x86-64-v4", "x86-64-v3", "x86-64"):
            runs = [timed(py, dict(clean, CAROM_CPU_LEVEL=level), folder) for _ in range(a.rounds)]
            rows.append((f"installed wheel, {level}", runs))
        src_env = dict(clean, PYTHONPATH=os.path.join(ROOT, "src"))
        timed(sys.executable, src_env, ROOT)            # (fills the checkout's cache if it was not)
        rows.append(("source checkout, warm cache", [timed(sys.executable, src_env, ROOT) for _ in range(a.rounds)]))
        print(f"wheel: {os.path.basename(wheel)}\n")
        print("| first run (import + 15-box pyramid + one step) | wall, each round | kernels compiled |")
        print("|---|---|---|")
        for label, runs in rows:
            print(f"| {label} | " + ", ".join(f"{w:.2f} s" for w, _ in runs) + f" | {max(c for _, c in runs)} |")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
