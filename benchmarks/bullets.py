"""Bullets at a dynamic plate: how many of 40 shots pass, per bullet kind and speed (tests/plate_shots.py).

Two setups: the plate at rest, and the plate spinning at up to 30 rad/s and coming at the bullet at up to
20 m/s. Box2D v3's figures (617d32ab, built on the same kind of machine; the issue's audit: circle, thin box,
0.5 m box, capsule at 10/20/50/100/200/400 m/s) are quoted beside carom's.

    python benchmarks/bullets.py
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
import plate_shots  # noqa: E402

BOX2D_V3_AT_REST = {"circle": [0, 0, 0, 0, 4, 18], "thin_box": [0, 0, 0, 0, 0, 3], "box": [0] * 6,
                    "capsule": [0] * 6}


def main():
    t0 = time.perf_counter()
    speeds = " / ".join(f"{v:g}" for v in plate_shots.SPEEDS)
    print(f"passes of 40 shots at {speeds} m/s\n")
    print("| bullet | carom, plate at rest | carom, plate spinning and coming | Box2D v3 (audit) |")
    print("|---|---|---|---|")
    for kind in plate_shots.BULLETS:
        rest = [plate_shots.passes(kind, v) for v in plate_shots.SPEEDS]
        moving = [plate_shots.passes(kind, v, moving=True) for v in plate_shots.SPEEDS]
        fmt = lambda xs: "/".join(map(str, xs))  # noqa: E731
        print(f"| {kind} | {fmt(rest)} | {fmt(moving)} | {fmt(BOX2D_V3_AT_REST[kind])} |", flush=True)
    print(f"\n({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
