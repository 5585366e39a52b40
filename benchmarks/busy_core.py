"""Threads beside a busy core: large_pyramid's step with one thread, with two threads held at two, and with
two threads as a world runs them (``carom._jit.ThreadGovernor`` picks two threads or one by timing the
steps), while another process keeps one core busy the whole time.

Issue 33's bound: two threads beside a busy core take at most 1.25 × the one-thread time per step. The
quality figure is the top box's height after the run (the pyramid stands: 19.5 m less its settling), the
same in every column since the result does not depend on the thread count. Writes its section of
benchmarks/RESULTS.md (``--no-write``: print only).
"""
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))

import numba  # noqa: E402

import carom  # noqa: E402
from carom._jit import ThreadGovernor  # noqa: E402
from carom.scenes.rigid_scenes import pyramid  # noqa: E402
from _results import write_section, table  # noqa: E402

DT = 1 / 60
STEPS = 300


class HeldThreads(ThreadGovernor):
    """Always the threads available: the step as it ran before the governor."""
    def threads(self, available):
        return available


def ms_per_step(threads, held, rounds=3):
    """Best of ``rounds`` runs of STEPS steps of a settled large pyramid (base 100, 5,050 boxes); the top
    box's height at the end."""
    carom.set_num_threads(threads)
    best, top = float("inf"), 0.0
    for _ in range(rounds):
        w = pyramid(base=100)
        if held:
            w._governor = HeldThreads()
        for _ in range(30):
            w.step(DT)
        t = time.perf_counter()
        for _ in range(STEPS):
            w.step(DT)
        best = min(best, (time.perf_counter() - t) / STEPS * 1000)
        top = float(w.positions[-1, 1])
    return best, top


def main():
    most = numba.config.NUMBA_NUM_THREADS
    if most < 2:
        print("one core: nothing to measure")
        return
    pyramid(base=10).step(DT)           # compile (or load) the step before anything is timed
    rows = []
    for busy in (False, True):
        hog = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if busy else None
        try:
            one, top1 = ms_per_step(1, False)
            held, top2 = ms_per_step(2, True)
            governed, top3 = ms_per_step(2, False)
        finally:
            if hog is not None:
                hog.kill()
                hog.wait()
        rows.append(("another process busy on a core" if busy else "quiet machine", f"{one:.2f}",
                     f"{held:.2f} ({held / one:.2f} ×)", f"{governed:.2f} ({governed / one:.2f} ×)",
                     f"{top1:.3f} / {top2:.3f} / {top3:.3f}"))
    carom.set_num_threads(most)
    body = ("large_pyramid (5,050 boxes), dt = 1/60, 4 substeps; best of 3 runs of 300 steps after 30. The "
            "bound (issue 33): two threads beside a busy core within 1.25 × the one-thread time.\n\n"
            + table(["machine", "1 thread (ms/step)", "2 threads held", "2 threads, governed (the default)",
                     "top box height (m): 1 / held / governed"], rows))
    print(body)
    if "--no-write" not in sys.argv:
        write_section("busy_core", "Threads beside a busy core", body)


if __name__ == "__main__":
    main()
