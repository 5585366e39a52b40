"""Cold compile of carom source trees side by side: each round runs, for each tree in turn, a fresh process
with an empty Numba cache that imports carom, builds a 15-box pyramid and steps once (``bench.STARTUP_CODE``;
``--library``: every compiled part of the public API, ``bench.LIBRARY_CODE``), and reports its wall time and
the CPU time of it and the processes it waited for (the compile helper).

    python benchmarks/cold_compile.py --trees /path/to/base/src src --rounds 3 [--library]

Each tree is put first on PYTHONPATH, so one environment measures several commits. Nothing else should run on
the machine meanwhile.
"""
import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
from carom import bench  # noqa: E402


def cold_run(tree, code):
    with tempfile.TemporaryDirectory(prefix="carom-cold-", ignore_cleanup_errors=True) as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=os.path.abspath(tree))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        time.sleep(0.5)     # (the background compile ends within 0.2 s of the program)
    if proc.returncode:
        raise SystemExit(f"{tree}: {proc.stderr.strip().splitlines()[-1:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trees", nargs="+", required=True, help="src folders of the trees to compare")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--library", action="store_true", help="the whole library, not the step")
    a = ap.parse_args(argv)
    code = bench.LIBRARY_CODE if a.library else bench.STARTUP_CODE
    results = {t: [] for t in a.trees}
    for r in range(a.rounds):
        for t in a.trees:
            wall, cpu = cold_run(t, code)
            results[t].append((wall, cpu))
            print(f"round {r + 1}: {t}: {wall:.1f} s wall, {cpu:.1f} s CPU", flush=True)
    print(f"\n| tree | {'library' if a.library else 'step'}: mean wall (CPU) | rounds |")
    print("|---|---|---|")
    for t, rs in results.items():
        w = sum(x for x, _ in rs) / len(rs)
        c = sum(y for _, y in rs) / len(rs)
        print(f"| {t} | {w:.1f} s ({c:.1f} s) | " + ", ".join(f"{x:.1f}" for x, _ in rs) + " |")


if __name__ == "__main__":
    main()
