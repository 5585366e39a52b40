"""Env-steps per second of the native vector LunarLander (``gymnasium.make_vec("carom/LunarLander-v3",
num_envs=N)``: every world's step in one compiled call) against Gymnasium's ``SyncVectorEnv`` over (a) the Box2D
original ``LunarLander-v3`` and (b) the single carom environment, at N = 1, 16, 256 and 4,096, random actions
(seeded), episodes resetting as they end (NEXT_STEP), in one run on this machine's threads.

Also the native vector BipedalWalker (``gymnasium.make_vec("carom/BipedalWalker-v3", num_envs=N)``) against
``SyncVectorEnv`` over the Box2D original and over the single carom env, at N = 16 and 256 (``WALKER_SIZES``).

Each contender first takes ``--warmup`` vector steps untimed (100: random landers crash after 60-120 steps, so
the timed steps include resets at their steady rate, not only the first episodes' flights), then ``--steps``
timed ones (the kernels come from the cache; run the tests once first). Writes its section of ``benchmarks/RESULTS.md`` (``--no-write``: print
only). ``--profile`` also prints where the native env's time goes at the largest N (the compiled step against
the Python resets).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))

import numpy as np  # noqa: E402

import gymnasium as gym  # noqa: E402
import numba  # noqa: E402
import carom.envs  # noqa: E402,F401
from _results import table, write_section  # noqa: E402

SIZES = (1, 16, 256, 4096)
WALKER_SIZES = (16, 256)


def rate(make, n: int, warmup: int, steps: int) -> float:
    """Env-steps/s of the vector env ``make(n)`` under seeded random actions, over ``steps`` vector steps after
    ``warmup`` untimed ones."""
    env = make(n)
    env.reset(seed=0)
    env.action_space.seed(0)
    actions = [env.action_space.sample() for _ in range(64)]
    for k in range(warmup):
        env.step(actions[k % 64])
    start = time.perf_counter()
    for k in range(steps):
        env.step(actions[k % 64])
    elapsed = time.perf_counter() - start
    env.close()
    return steps * n / elapsed


def native(n):
    return gym.make_vec("carom/LunarLander-v3", num_envs=n)


def native_walker(n):
    return gym.make_vec("carom/BipedalWalker-v3", num_envs=n)


def sync_carom_walker(n):
    return gym.make_vec("carom/BipedalWalker-v3", num_envs=n, vectorization_mode="sync")


def sync_box2d_walker(n):
    return gym.make_vec("BipedalWalker-v3", num_envs=n, vectorization_mode="sync")


def sync_carom(n):
    return gym.make_vec("carom/LunarLander-v3", num_envs=n, vectorization_mode="sync")


def sync_box2d(n):
    return gym.make_vec("LunarLander-v3", num_envs=n, vectorization_mode="sync")


def profile(n: int, warmup: int, steps: int) -> str:
    """Where the native env's time goes at N = n: the compiled calls of the step (engines, worlds, observations)
    against the rest (the resets, one compiled call over the envs that need one, and the Python around)."""
    env = native(n).unwrapped
    env.reset(seed=0)
    env.action_space.seed(0)
    for _ in range(warmup):
        env.step(env.action_space.sample())
    run_time = 0.0
    original = env._run

    def timed(*args):
        nonlocal run_time
        t = time.perf_counter()
        original(*args)
        run_time += time.perf_counter() - t
    env._run = timed
    start = time.perf_counter()
    for _ in range(steps):
        env.step(env.action_space.sample())
    total = time.perf_counter() - start
    return (f"At N = {n:,}: {1000 * total / steps:.1f} ms a vector step, of which the compiled calls (all "
            f"{n:,} worlds) {1000 * run_time / steps:.1f} ms and the rest (the resets' compiled call, checks, "
            f"Python) {1000 * (total - run_time) / steps:.1f} ms; the step's compiled calls alone are "
            f"{n * steps / run_time:,.0f} env-steps/s.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    rows = []
    for n in SIZES:
        steps = max(args.steps, 4096 // n * args.steps // 16)       # (more vector steps for the small N)
        ours = rate(native, n, args.warmup, steps)
        box2d = rate(sync_box2d, n, args.warmup, steps)
        single = rate(sync_carom, n, args.warmup, steps)
        rows.append((f"{n:,}", f"{ours:,.0f}", f"{box2d:,.0f}", f"{single:,.0f}", f"{ours / box2d:.2f}",
                     f"{ours / single:.1f}", steps))
        print(rows[-1], flush=True)
    walker_rows = []
    for n in WALKER_SIZES:
        steps = max(args.steps, 256 // n * args.steps // 4)
        ours = rate(native_walker, n, args.warmup, steps)
        box2d = rate(sync_box2d_walker, n, args.warmup, steps)
        single = rate(sync_carom_walker, n, args.warmup, steps)
        walker_rows.append((f"{n:,}", f"{ours:,.0f}", f"{box2d:,.0f}", f"{single:,.0f}", f"{ours / box2d:.2f}",
                            f"{ours / single:.1f}", steps))
        print(walker_rows[-1], flush=True)
    note = profile(SIZES[-1], args.warmup, args.steps)
    print(note)
    body = "\n".join([
        f"Env-steps per second, random actions, episodes resetting as they end; {numba.get_num_threads()} threads. "
        "Native: `gymnasium.make_vec(\"carom/LunarLander-v3\", num_envs=N)`, every world's step in one compiled call (three "
        "compiled calls a vector step: engines, step, observations; resets one more, over the envs that need one); SyncVectorEnv: Gymnasium's, over the Box2D original or over the single carom env.",
        "",
        table(("N", "native carom", "SyncVectorEnv Box2D", "SyncVectorEnv carom", "× Box2D", "× carom single",
               "vector steps timed"), rows),
        "",
        f"Each after {args.warmup} untimed vector steps (so that episodes end and reset at their steady rate).",
        "",
        note,
        "",
        "BipedalWalker (`carom/BipedalWalker-v3`), the same way:",
        "",
        table(("N", "native carom", "SyncVectorEnv Box2D", "SyncVectorEnv carom", "× Box2D", "× carom single",
               "vector steps timed"), walker_rows),
    ])
    print(body)
    if not args.no_write:
        write_section("batch", "Many worlds: the native vector LunarLander", body)


if __name__ == "__main__":
    main()
