"""The rigid-body benchmark: carom vs pymunk vs pybox2d on Box2D's scenes, appended to RESULTS.md.

Runs ``carom bench`` (:mod:`carom.bench`) on every benchmark scene — large_pyramid, many_pyramids, smash,
tumbler and a 5,000-circle pile — in carom, pymunk and pybox2d, plus carom's cold-compile and warm-start
times, and appends a dated section (machine: CPU model, cores, Python / NumPy / Numba / engine versions) to
benchmarks/RESULTS.md. Arguments are passed on to ``carom bench``:

    python benchmarks/run.py                      # everything (a few minutes on 2 cores)
    python benchmarks/run.py smash --steps 200    # one scene, more steps
    python benchmarks/run.py --no-write           # print only

This replaces the former benchmarks/rigid.py (same scenes and quality measures, now in carom.bench).
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))

from carom.bench import main  # noqa: E402

RESULTS = os.path.join(HERE, "RESULTS.md")

if __name__ == "__main__":
    argv = sys.argv[1:]
    command = " ".join(["python benchmarks/run.py"] + argv)
    if "--out" not in argv:
        argv += ["--out", RESULTS]
    sys.exit(main(argv, command=command))
