"""Build a wheel of carom that carries its compiled kernels (``make wheel``), so that a first run compiles
nothing (``carom._cpu_level`` has the why and how).

1. The package is copied (without any cache) into a build folder, unless ``--in-tree`` builds from the source
   tree's own caches (faster where they are fresh, e.g. in a clean clone that has just run its tests;
   never after editing a kernel: Numba's cache does not notice a changed callee in another module).
2. For each level (``x86-64-v4``, ``x86-64-v3`` and the ``x86-64`` baseline) that the build machine's processor
   supports (``buildable_levels``: compiling a level means running its kernels), a process with
   ``CAROM_CPU_LEVEL`` set to it compiles every kernel a user can reach (``carom._warmup.every_kernel``) into
   the package's ``__pycache__``. A wheel built without AVX-512 ships no ``x86-64-v4`` kernels; on a processor
   with it, the wheel's best level that the processor supports is taken (``carom._cpu_level.choose``).
3. ``_kernels.json`` records the levels and the Numba, llvmlite and Python versions, and the wheel is built
   with ``CAROM_KERNEL_WHEEL=1``: ``setup.py`` then pins Numba and llvmlite exactly (a cache is only valid for
   the versions that wrote it) and tags the wheel for this Python and platform (the cache files are).

    python tools/kernel_wheel.py [--out dist] [--levels x86-64-v4,x86-64-v3,x86-64] [--in-tree]
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
WARM = "from carom._warmup import every_kernel; every_kernel()"
#: the levels a wheel ships (``carom._cpu_level.LEVELS``)
LEVELS = ("x86-64-v4", "x86-64-v3", "x86-64")


def buildable_levels():
    """The levels of ``LEVELS`` this machine's processor runs, best first: those a wheel built here ships."""
    sys.path.insert(0, os.path.join(ROOT, "src"))
    from carom import _cpu_level
    fits = _cpu_level.supported(_cpu_level._host_features())
    return [level for level in LEVELS if level in fits]


def copy_tree(build):
    """The project files a wheel needs, into ``build`` (caches and build leftovers left out)."""
    if os.path.exists(build):
        shutil.rmtree(build)
    os.makedirs(build)
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy2(os.path.join(ROOT, name), build)
    shutil.copytree(os.path.join(ROOT, "src"), os.path.join(build, "src"),
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "_kernels.json"))


def compile_level(src, level, log=sys.stderr):
    env = dict(os.environ, CAROM_CPU_LEVEL=level, PYTHONPATH=src)
    env.pop("NUMBA_CACHE_DIR", None)
    env.pop("NUMBA_CPU_NAME", None)
    env.pop("NUMBA_CPU_FEATURES", None)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", WARM], env=env, check=True, cwd=src)
    print(f"kernel_wheel: {level}: kernels compiled or loaded in {time.perf_counter() - t0:.1f} s", file=log,
          flush=True)


def write_manifest(src, levels):
    import numba
    import llvmlite
    manifest = {"levels": list(levels), "numba": numba.__version__, "llvmlite": llvmlite.__version__,
                "python": f"{sys.version_info[0]}.{sys.version_info[1]}"}
    with open(os.path.join(src, "carom", "_kernels.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    return manifest


def build(out, levels, in_tree=False, log=sys.stderr):
    """Build the wheel into ``out``; returns its path."""
    project = ROOT if in_tree else os.path.join(ROOT, "build", "kernel-wheel")
    if not in_tree:
        copy_tree(project)
    src = os.path.join(project, "src")
    for level in levels:
        compile_level(src, level, log)
    manifest = write_manifest(src, levels)
    os.makedirs(out, exist_ok=True)
    env = dict(os.environ, CAROM_KERNEL_WHEEL="1")
    try:
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet",
                        "-w", out, project], env=env, check=True)
    finally:
        if in_tree:     # a source checkout ships nothing: only a wheel's package lists its levels
            os.remove(os.path.join(src, "carom", "_kernels.json"))
    wheel = max(glob.glob(os.path.join(out, "carom-*.whl")), key=os.path.getmtime)     # (the one just written)
    print(f"kernel_wheel: {wheel} ({os.path.getsize(wheel) / 1e6:.1f} MB; {manifest})", file=log)
    return wheel


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(ROOT, "dist"))
    ap.add_argument("--levels", default=None, help="default: every level this processor runs")
    ap.add_argument("--in-tree", action="store_true", help="use the source tree's own caches")
    a = ap.parse_args(argv)
    levels = buildable_levels() if a.levels is None else [x for x in a.levels.split(",") if x]
    build(a.out, levels, a.in_tree)


if __name__ == "__main__":
    main()
