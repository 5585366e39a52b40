"""The pre-solve hook's cost: 36 pyramids of base 10 (1,980 boxes, 5,220 contacts) with a pre-solve
function called on every contact, against the same scene without one, side by side in one run.

Three worlds step in turn, in rounds of 50 steps (so that the machine's load falls on all alike): no hook; a
hook that returns 1 and changes nothing (the cost of the call itself: the world must stay bitwise that of no
hook); a hook that works on every contact (friction from the normal's slope, restitution 0, tangent speed
0). Sleeping is off, so every contact is solved, and the hook called, every step. Quality: the deepest overlap
and the drift of the pyramids' top boxes (``carom.bench.quality``, the rigid benchmark's ruler) after the
run. The hook runs at the start of the prepare stage, whose time (``World.profile_times``) is shown beside the
step's. Writes its section of benchmarks/RESULTS.md (``--no-write``: print only).
"""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))

import numpy as np  # noqa: E402

import carom  # noqa: E402
from carom.bench import describe, quality  # noqa: E402
from carom.scenes.rigid_scenes import many_pyramids  # noqa: E402
from _results import write_section, table  # noqa: E402

DT = 1 / 60
ROUNDS = 8
STEPS = 50


@carom.pre_solve_function
def keep_all(shape_a, shape_b, body_a, body_b, nx, ny, count, points, material):
    return 1


@carom.pre_solve_function
def slope_friction(shape_a, shape_b, body_a, body_b, nx, ny, count, points, material):
    # full friction on level contacts, half on vertical ones; no bounce, no belt
    material[0] = material[0] * (0.5 + 0.5 * abs(ny))
    material[1] = 0.0
    material[2] = 0.0
    return 1


def build(hook):
    w = many_pyramids(rows=6, columns=6)
    w.sleep_enabled = False
    w.pre_solve = hook
    return w


def main():
    configs = [("no hook", None), ("hook: keep every contact as it is", keep_all),
               ("hook: friction from the normal on every contact", slope_friction)]
    worlds = [build(hook) for _, hook in configs]
    desc = describe(worlds[0])
    for w in worlds:               # compile, and settle the first contacts
        w.step(DT)
    times = [[] for _ in configs]
    # the prepare stage's time (the hook runs at its start, ``World.profile_times``), step by step
    prepare = [[] for _ in configs]
    for w in worlds:
        w.profile = True
    for _ in range(ROUNDS):
        for i, w in enumerate(worlds):
            t = time.perf_counter()
            for _ in range(STEPS):
                w.step(DT)
                prepare[i].append(w.profile_times["prepare"])
            times[i].append((time.perf_counter() - t) / STEPS * 1000.0)
    contacts = len(worlds[0].contacts())
    spec = dict(pyramid=True)
    elapsed = (1 + ROUNDS * STEPS) * DT
    base = float(np.median(times[0]))
    base_prepare = float(np.median(prepare[0]))
    rows = []
    for (name, _), w, t, tp in zip(configs, worlds, times, prepare):
        q = quality(spec, desc, (w.positions, w.angles, w.velocities, w.angular_velocities), elapsed)
        same = all(np.array_equal(getattr(w.tables, a), getattr(worlds[0].tables, a)) for a in ("com", "angle", "vel"))
        med = float(np.median(t))
        rows.append((name, f"{med:.3f}", f"{min(t):.3f}", f"{med / base:.3f}", f"{np.median(tp):.3f}",
                     f"{np.median(tp) - base_prepare:+.3f}", f"{q['overlap_mm']:.2f}",
                     f"{q['drift_m']:.4f}", "yes" if same else "no"))
    body = (f"many_pyramids(rows=6, columns=6): {len(desc['kind'])} boxes, {contacts} contacts, dt = 1/60, "
            f"4 substeps, sleeping off, {carom.get_num_threads()} threads; {ROUNDS} rounds of {STEPS} steps, "
            "the worlds in turn.\n\n"
            + table(["world", "ms per step (median of rounds)", "best round", "÷ no hook",
                     "prepare stage ms (median step)", "− no hook", "deepest overlap mm",
                     "top drift m", "bitwise = no hook"], rows))
    print(body)
    if "--no-write" not in sys.argv:
        write_section("pre_solve", "Pre-solve hook on every contact", body)


if __name__ == "__main__":
    main()
