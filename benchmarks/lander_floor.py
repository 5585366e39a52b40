"""The floor under issue 50's target: what one step of one LunarLander world costs, carom against Box2D v3's own C
step of the same world, one thread each.

A native vector env can go no faster than its engine steps its worlds. 1,000,000 env-steps/s on 2 cores leaves
2 µs of one core per lander step, engines, observations and rewards included; 20 × Gymnasium's ``SyncVectorEnv``
over the Box2D original (``benchmarks/batch.py``) leaves about 4.5 µs. This measures the engine's part alone:

- **Box2D v3**: ``lander_floor.c``, compiled with ``cc`` against the library ``benchmarks/box2d.py`` builds into
  ``build/box2d`` (run that first; without it only carom's figures are given). One worker, no task system.
- **carom**: the same worlds (``carom.envs.lunar_lander.LunarLander``'s, seeds 1, 2, …) in a ``carom.WorldBatch``
  on one thread, so that each world step is the compiled step alone, without Python per world.

Both: the lander pushed at random and left to fall (no engines), 1/50 s steps of 4 substeps, sleeping on as in the
env. Two phases: **awake**, steps 0-99 (the fall and the landing, every body awake: what a vector env of random
actions mostly steps, as its landers crash or fly off within 60-120 steps and are reset), and **asleep**, steps
301 on (the landers at rest; the table says in how many worlds every body was asleep at step 300).

    python benchmarks/lander_floor.py [--worlds 64] [--steps 500] [--rounds 3] [--no-write]
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _results import table, write_section  # noqa: E402
from settle_probe import compile_probe  # noqa: E402

import numba  # noqa: E402

import carom  # noqa: E402
from carom.envs.lunar_lander import LunarLander  # noqa: E402

AWAKE, ASLEEP = 100, 300


def lander_world(seed):
    """carom's LunarLander world of ``seed``, as the env builds it at a reset."""
    env = LunarLander()
    env.reset(seed=seed)
    return env.world


def carom_us(worlds, steps):
    """carom's mean µs per world step, awake and asleep, and the number of worlds asleep at step ``ASLEEP``
    (``WorldBatch`` of ``worlds`` landers, one thread)."""
    batch = carom.WorldBatch(lambda i: lander_world(i + 1), worlds)
    awake = asleep = 0.0
    asleep_worlds = 0
    for i in range(steps):
        if i == ASLEEP:
            asleep_worlds = sum(all(b.sleeping for b in batch.world(k).bodies if b.kind == "dynamic")
                                for k in range(worlds))
        t = time.perf_counter()
        batch.step(1 / 50)
        d = time.perf_counter() - t
        if i < AWAKE:
            awake += d
        elif i > ASLEEP:
            asleep += d
    return awake / (AWAKE * worlds) * 1e6, asleep / ((steps - ASLEEP - 1) * worlds) * 1e6, asleep_worlds


def box2d_us(exe, worlds, steps):
    """Box2D v3's mean µs per world step, awake and asleep, and the number of worlds asleep at step ``ASLEEP``
    (``lander_floor.c``)."""
    out = subprocess.run([exe, str(worlds), str(steps), "1"], capture_output=True, text=True, check=True).stdout
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines() if line.strip()}
    return float(rows["awake"][2]), float(rows["asleep"][2]), int(rows["asleep_worlds"][0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--worlds", type=int, default=64)
    ap.add_argument("--steps", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    if args.steps <= ASLEEP + 1:
        raise SystemExit(f"--steps must be above {ASLEEP + 1}")
    numba.set_num_threads(1)
    exe = compile_probe("lander_floor")
    carom_us(2, ASLEEP + 2)                    # compile or load the batch's kernels first
    mine, theirs = [], []
    for _ in range(args.rounds):               # interleaved: this machine's speed drifts
        mine.append(carom_us(args.worlds, args.steps))
        if exe:
            theirs.append(box2d_us(exe, args.worlds, args.steps))
    rows = []
    for k, phase in enumerate((f"awake (steps 0-{AWAKE - 1})", f"asleep (steps {ASLEEP + 1}-{args.steps - 1})")):
        c = [r[k] for r in mine]
        row = [phase, f"{min(c):.2f} / {statistics.median(c):.2f}"]
        if theirs:
            b = [r[k] for r in theirs]
            row += [f"{min(b):.2f} / {statistics.median(b):.2f}", f"{min(c) / min(b):.2f} / "
                    f"{statistics.median(c) / statistics.median(b):.2f}", f"{2e6 / min(b):,.0f}"]
        else:
            row += ["(not built)", "", ""]
        rows.append(row)
    text = table(["phase", "carom µs (min / median)", "Box2D v3 µs (min / median)", "carom ÷ Box2D",
                  "Box2D's ceiling on 2 cores, env-steps/s"], rows)
    text += (f"\n\nWorlds with every body asleep at step {ASLEEP}: carom {mine[0][2]} of {args.worlds}"
             + (f", Box2D {theirs[0][2]} of {args.worlds}." if theirs else "."))
    text += (f"\n\n{args.worlds} worlds, {args.rounds} interleaved rounds, one thread each; µs of one core per "
             "world step, the engine's step alone. The ceiling is 2 cores ÷ Box2D's fastest step: what a vector "
             "env on Box2D v3 could reach if the env's own work (engines, observations, rewards, resets) cost "
             "nothing. Issue 50's target, 1,000,000 env-steps/s on 2 cores, needs 2 µs.\n")
    print(text)
    if not args.no_write:
        write_section("lander_floor", "Many worlds: the floor of a lander step, carom against Box2D v3", text)


if __name__ == "__main__":
    main()
