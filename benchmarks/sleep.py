"""Sleeping: what a step costs once a pyramid of base 20 has fallen asleep, against the same pyramid awake.

The pyramid (210 boxes) settles and sleeps; we time steps of the sleeping world, then of an identical world
with sleeping switched off (every body awake, the same contacts solved every step), and check that a ball
dropped on the sleeping pyramid wakes it. Writes its section of benchmarks/RESULTS.md.
"""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))

from carom.geometry import Circle  # noqa: E402
from carom.scenes.rigid_scenes import pyramid  # noqa: E402
from _results import write_section, table  # noqa: E402

DT = 1 / 60


def ms_per_step(world, steps=300, runs=3):
    best = float("inf")
    for _ in range(runs):
        t = time.perf_counter()
        for _ in range(steps):
            world.step(DT)
        best = min(best, (time.perf_counter() - t) / steps * 1000)
    return best


def main():
    asleep = pyramid(base=20)
    steps = 0
    while asleep.awake_count and steps < 600:
        asleep.step(DT)
        steps += 1
    fell_asleep = steps * DT
    awake = pyramid(base=20)
    awake.sleep_enabled = False
    for _ in range(steps):
        awake.step(DT)
    t_asleep = ms_per_step(asleep)
    t_awake = ms_per_step(awake)
    ball = asleep.add_body(position=(0, 22))
    ball.add_shape(Circle(0.5), density=5.0)
    woke = 0
    for _ in range(90):
        asleep.step(DT)
        woke = max(woke, asleep.awake_count)
    rows = [("awake (sleeping off)", f"{t_awake:.4f}", "1.00", awake.awake_count),
            ("asleep", f"{t_asleep:.4f}", f"{t_asleep / t_awake:.3f}", 0)]
    body = (f"Pyramid of base 20 (210 boxes), dt = 1/60, 4 substeps. It fell asleep after {fell_asleep:.2f} s "
            f"of simulated time; a ball dropped on it then woke {woke} bodies.\n\n"
            + table(["world", "ms per step (best of 3 × 300 steps)", "÷ awake", "awake bodies"], rows))
    print(body)
    if "--no-write" not in sys.argv:
        write_section("sleep", "Sleeping pyramid", body)


if __name__ == "__main__":
    main()
