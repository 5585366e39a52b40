"""Where a step goes, carom against Box2D v3, stage by stage, on Box2D's own benchmark scenes (one thread).

``benchmarks/box2d.py`` says how long a step takes in each engine; this says where the time goes, so that a scene
where carom is slower shows which part of the step is. Each engine's own profile:

- **Box2D v3**: ``box2d_profile.c`` makes the scene with Box2D's ``shared/benchmarks.c`` as its ``benchmark``
  app makes it (one worker, no task system) and averages ``b2World_GetProfile`` over the steps after the first.
  Compiled with ``cc`` against the build ``benchmarks/box2d.py`` makes in ``build/box2d`` (run that first).
- **carom**: the scene from ``carom.scenes.box2d_scenes``, ``carom.set_num_threads(1, adaptive=False)``,
  ``World.profile`` (the compiled step's own stage clocks) averaged over the same steps.

Both also give the wall time per step with the scene's own per-step work (rain's new ragdolls, the spinner's
motor), which ``box2d.py`` times too: the difference between that and the profiled step is what each engine spends
outside its step.

The stages do not split the same way; the table's columns put together what does the same work:

| column | carom stages | Box2D v3 profile fields |
|---|---|---|
| boxes, pairs, continuous | bounds, broad, continuous | transforms, refit, pairs, bullets |
| manifolds | narrow | collide |
| prepare | prepare | solverSetup, prepareConstraints |
| solve | solve | integrateVelocities, warmStart, solveImpulses, integratePositions, relaxImpulses, applyRestitution, storeImpulses |
| sleep and events | sleep | splitIslands, sleepIslands, sensors, sensorHits, jointEvents, hitEvents |

(Box2D finds the bodies' new boxes and the moved proxies while it finishes the solve, ``transforms``, where it also
runs the continuous collision of fast bodies that are not bullets, and refits its trees after, ``refit``; carom finds
the boxes before its broad phase, ``bounds``, refits in ``broad`` and runs its continuous stage after the solve.)

Rounds are interleaved (every scene of both engines once a round); the table gives the median over rounds of each
figure, ms per step.

    python benchmarks/box2d_profile.py [--rounds 3] [--scenes rain,large_pyramid] [--no-write]
"""
import argparse
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _results import table, write_section  # noqa: E402
from box2d import B2_STEPS, SCENES, run_carom  # noqa: E402
from settle_probe import compile_probe  # noqa: E402

#: (column, carom's stages, Box2D's profile fields): the parts of a step that do the same work
ROWS = (
    ("boxes, pairs, continuous", ("bounds", "broad", "continuous"), ("transforms", "refit", "pairs", "bullets")),
    ("manifolds", ("narrow",), ("collide",)),
    ("prepare", ("prepare",), ("solverSetup", "prepareConstraints")),
    ("solve", ("solve",), ("integrateVelocities", "warmStart", "solveImpulses", "integratePositions", "relaxImpulses",
                           "applyRestitution", "storeImpulses")),
    ("sleep and events", ("sleep",), ("splitIslands", "sleepIslands", "sensors", "sensorHits", "jointEvents",
                                      "hitEvents")),
)

#: no ratio where Box2D's figure is below this (ms): a part that costs Box2D next to nothing gives a meaningless one
RATIO_FLOOR = 0.01

CAROM = """
import json, sys, time
import carom
from carom.scenes import box2d_scenes as b
name = sys.argv[1]
carom.set_num_threads(1, adaptive=False)
scene = b.build(name)
world = scene.world
steps = b.STEPS[name]
world.profile = True                 # (before the untimed first step, which calibrates the cycle counter: 20 ms)
scene.before_step(0)
world.step(b.TIME_STEP)
total = {}
t0 = time.perf_counter()
for i in range(1, steps):
    scene.before_step(i)
    world.step(b.TIME_STEP)
    for key, ms in world.profile_times.items():
        total[key] = total.get(key, 0.0) + ms
wall = (time.perf_counter() - t0) * 1e3 / (steps - 1)
print(json.dumps(dict({key: ms / (steps - 1) for key, ms in total.items()}, wall=wall)))
"""


def carom_profile(scene):
    """carom's mean ms per step of each stage of ``World.profile``, its total, and the wall time per step."""
    return run_carom(CAROM, scene)


def box2d_profile(exe, scene):
    """Box2D's mean ms per step of each ``b2Profile`` field and the wall time per step (``box2d_profile.c``)."""
    out = subprocess.run([exe, scene, str(B2_STEPS[scene])], capture_output=True, text=True, check=True).stdout
    return {name: float(value) for name, value in (line.split() for line in out.splitlines() if line.strip())}


#: the table's columns after the scene: the parts of ``ROWS``, then these
TOTALS = ("the step", "outside it", "wall per step")


def parts_of(mine, theirs):
    """[(carom ms, Box2D ms or None)] of one scene, in the table's column order, from the medians of each engine's
    figures."""
    parts = [(sum(mine[k] for k in ours), sum(theirs[k] for k in box2d) if theirs else None)
             for _, ours, box2d in ROWS]
    parts.append((mine["total"], theirs["step"] if theirs else None))
    parts.append((mine["wall"] - mine["total"], theirs["wall"] - theirs["step"] if theirs else None))
    parts.append((mine["wall"], theirs["wall"] if theirs else None))
    return parts


def cell(a, b):
    """'carom / Box2D (ratio)': no Box2D figure without Box2D, no ratio where its part is under RATIO_FLOOR."""
    if b is None:
        return f"{a:.3f}"
    return f"{a:.3f} / {b:.3f}" + (f" ({a / b:.2f})" if b >= RATIO_FLOOR else "")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--scenes", default=",".join(SCENES))
    ap.add_argument("--no-write", action="store_true", help="print the table only, leave RESULTS.md alone")
    ap.add_argument("--note", default="", help="a remark added after the table")
    args = ap.parse_args(argv)
    scenes = [s for s in args.scenes.split(",") if s]
    unknown = [s for s in scenes if s not in SCENES]
    if unknown:
        raise SystemExit(f"no such scene: {', '.join(unknown)} (Box2D's: {', '.join(SCENES)})")
    exe = compile_probe("box2d_profile", shared=True)
    if exe is None:
        print("Box2D is not built (python benchmarks/box2d.py --build-only): carom's figures only", file=sys.stderr)
    mine = {s: [] for s in scenes}
    theirs = {s: [] for s in scenes}
    for r in range(args.rounds):
        for s in scenes:
            mine[s].append(carom_profile(s))
            if exe:
                theirs[s].append(box2d_profile(exe, s))
            print(f"  round {r + 1}, {s}: carom {mine[s][-1]['wall']:.3f} ms"
                  + (f", Box2D {theirs[s][-1]['wall']:.3f} ms" if exe else ""), file=sys.stderr, flush=True)
    rows = []
    for s in scenes:
        median = {k: statistics.median(m[k] for m in mine[s]) for k in mine[s][0]}
        other = {k: statistics.median(m[k] for m in theirs[s]) for k in theirs[s][0]} if exe else None
        rows.append([s] + [cell(a, b) for a, b in parts_of(median, other)])
    text = table(["scene"] + [name for name, _, _ in ROWS] + list(TOTALS), rows)
    text += (f"\n\nOne thread each, median of {args.rounds} interleaved rounds of each engine's own profile (carom: "
             "`World.profile`; Box2D v3: `b2World_GetProfile`, `benchmarks/box2d_profile.c`), ms per step over the "
             "steps after the first (Box2D's step counts); each cell carom / Box2D (carom ÷ Box2D). The columns put "
             "together the stages that do the same work (the script's docstring lists them). 'Outside it' is the wall "
             "time per step less the profiled step: the scene's own per-step work (rain's new ragdolls: Python here, "
             "C in Box2D) and, for carom, the call from Python.")
    if args.note:
        text += "\n\n" + args.note
    text += "\n"
    print(text)
    if not args.no_write:
        write_section("box2d_profile", "Where the step goes: carom against Box2D v3, stage by stage", text)


if __name__ == "__main__":
    main()
