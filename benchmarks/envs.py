"""carom.envs against Gymnasium's Box2D originals: steps per second with random actions, one process, one
thread, in one run; the first episode on an empty compile cache; and (``--train``) a PPO training run on
LunarLander for both engines.

Speed: each pair of environments (carom's and the original) runs in turn, in rounds, so that the machine's load
falls on both alike; actions are sampled from the action space (seeded), episodes reset when they end (resets
count, as they would in training), and each environment takes warm-up steps first (compiling, caches). carom
runs with one thread (``carom.set_num_threads(1)``). CarRacing's steps include drawing its 96 × 96 observation,
as the original's do.

Cold start: a fresh process with an empty Numba cache (``NUMBA_CACHE_DIR`` pointed at a new directory, so the
project's own cache is left alone) makes ``carom/LunarLander-v3`` and runs one episode with random actions; the
time from ``gym.make`` to the episode's end is reported.

Training (``--train``): stable-baselines3 PPO with the same hyper-parameters (the rl-zoo's for LunarLander,
16 environments of 1,024 steps) and seed on both engines, at least ``--train-steps`` (200,000) environment steps
each (whole rollouts: 13 of 16,384 steps), evaluated after each rollout on 10 fixed seeds; the two learning
curves go to ``benchmarks/envs_training.png``. It needs stable-baselines3 and a CPU build of torch, which
``make test`` does not install: ``.venv/bin/pip install torch==2.13.0 stable-baselines3`` (with the CPU wheel at
hand, so that pip does not fetch a CUDA build).

Prints its section and writes it to ``benchmarks/envs_results.md`` (``--no-write``: print only).
"""
from __future__ import annotations

import argparse
import datetime
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))

import numpy as np  # noqa: E402

import gymnasium as gym  # noqa: E402
import carom  # noqa: E402
import carom.envs  # noqa: E402,F401
from _results import machine, table  # noqa: E402

RESULTS = os.path.join(HERE, "envs_results.md")
PAIRS = (("LunarLander", "carom/LunarLander-v3", "LunarLander-v3", 20000, 2000),
         ("BipedalWalker", "carom/BipedalWalker-v3", "BipedalWalker-v3", 8000, 800),
         ("CarRacing", "carom/CarRacing-v3", "CarRacing-v3", 800, 60))
ROUNDS = 4


class Runner:
    """One environment stepping with seeded random actions, resetting when an episode ends."""

    def __init__(self, env_id: str, seed: int = 0):
        self.env = gym.make(env_id)
        self.env.action_space.seed(seed)
        self.env.reset(seed=seed)
        self.episodes = 0

    def run(self, steps: int) -> float:
        env = self.env
        sample = env.action_space.sample
        start = time.perf_counter()
        for _ in range(steps):
            _, _, terminated, truncated, _ = env.step(sample())
            if terminated or truncated:
                env.reset()
                self.episodes += 1
        return time.perf_counter() - start


def speed(rounds: int = ROUNDS) -> list:
    rows = []
    for name, ours_id, theirs_id, steps, warmup in PAIRS:
        ours, theirs = Runner(ours_id), Runner(theirs_id)
        ours.run(warmup)
        theirs.run(warmup)
        t_ours = t_theirs = 0.0
        for _ in range(rounds):
            t_ours += ours.run(steps // rounds)
            t_theirs += theirs.run(steps // rounds)
        a, b = steps / t_ours, steps / t_theirs
        rows.append((name, f"{a:,.0f}", f"{b:,.0f}", f"{a / b:.2f}", steps, ours.episodes, theirs.episodes))
        print(f"{name}: carom {a:,.0f} steps/s, Box2D {b:,.0f} steps/s ({a / b:.2f}x)", flush=True)
    return rows


COLD = """
import time, gymnasium as gym
t0 = time.perf_counter()
import carom.envs
env = gym.make("carom/LunarLander-v3")
env.action_space.seed(0)
env.reset(seed=0)
steps = 0
while True:
    _, _, terminated, truncated, _ = env.step(env.action_space.sample())
    steps += 1
    if terminated or truncated:
        break
print(time.perf_counter() - t0, steps)
"""


def cold_start() -> tuple[float, int]:
    """Seconds from importing carom.envs to the end of a first LunarLander episode on an empty compile cache."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=os.path.join(os.path.dirname(HERE), "src"))
        out = subprocess.run([sys.executable, "-c", COLD], env=env, capture_output=True, text=True, check=True)
    seconds, steps = out.stdout.split()[-2:]
    return float(seconds), int(steps)


def train(total_steps: int, seed: int = 0) -> dict:
    """PPO on both engines' LunarLander; returns {engine: (steps, mean returns)}; draws the learning curves."""
    try:
        from stable_baselines3 import PPO
        from stable_baselines3.common.env_util import make_vec_env
        import torch
    except ImportError as e:
        raise SystemExit(f"--train needs stable-baselines3 and torch (CPU): {e}") from e
    torch.set_num_threads(1)
    params = dict(n_steps=1024, batch_size=64, gae_lambda=0.98, gamma=0.999, n_epochs=4, ent_coef=0.01,
                  verbose=0, seed=seed, device="cpu")
    rollout = 16 * params["n_steps"]
    curves = {}
    for engine, env_id in (("carom", "carom/LunarLander-v3"), ("Box2D", "LunarLander-v3")):
        vec = make_vec_env(env_id, n_envs=16, seed=seed)
        model = PPO("MlpPolicy", vec, **params)
        evaluator = gym.make(env_id)
        xs, ys = [], []
        start = time.perf_counter()
        while model.num_timesteps < total_steps:
            # one rollout of 16 × 1,024 steps and its update, then an evaluation (learn collects whole rollouts)
            model.learn(rollout, reset_num_timesteps=False)
            done_steps = model.num_timesteps
            returns = []
            for k in range(10):
                obs, _ = evaluator.reset(seed=10_000 + k)
                total = 0.0
                while True:
                    action, _ = model.predict(obs, deterministic=True)
                    obs, r, terminated, truncated, _ = evaluator.step(action)
                    total += r
                    if terminated or truncated:
                        break
                returns.append(total)
            xs.append(done_steps)
            ys.append(float(np.mean(returns)))
            print(f"train {engine}: {done_steps} steps, mean return {ys[-1]:.1f} "
                  f"({time.perf_counter() - start:.0f} s)", flush=True)
        curves[engine] = (xs, ys, time.perf_counter() - start)
        vec.close()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 4))
    for engine, (xs, ys, _) in curves.items():
        ax.plot(xs, ys, marker="o", label=engine)
    ax.axhline(200, color="grey", lw=0.8, ls="--")
    ax.set_xlabel("environment steps")
    ax.set_ylabel("mean return, 10 fixed seeds")
    ax.set_title("PPO on LunarLander-v3: carom vs Box2D")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, "envs_training.png"), dpi=100)
    return curves


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--train", action="store_true")
    parser.add_argument("--train-steps", type=int, default=200_000)
    parser.add_argument("--no-cold", action="store_true")
    args = parser.parse_args()
    carom.set_num_threads(1)
    rows = speed()
    body = [table(("environment", "carom steps/s", "Box2D steps/s", "carom / Box2D", "steps timed",
                   "carom episodes", "Box2D episodes"), rows),
            "",
            f"Random actions, one process, carom on one thread, {ROUNDS} alternating rounds per pair after warm-up "
            "steps; resets included. CarRacing includes drawing the 96 × 96 observation."]
    if not args.no_cold:
        seconds, steps = cold_start()
        body += ["", f"First `gym.make(\"carom/LunarLander-v3\")` episode on an empty Numba cache (import, make, "
                     f"reset, {steps} random steps): {seconds:.1f} s."]
        print(f"cold start: {seconds:.1f} s ({steps} steps)", flush=True)
    if args.train:
        curves = train(args.train_steps)
        lines = [f"{engine}: final mean return {ys[-1]:.1f} after {xs[-1]:,} steps (best {max(ys):.1f}; "
                 f"{seconds:.0f} s)" for engine, (xs, ys, seconds) in curves.items()]
        body += ["", "PPO (stable-baselines3, MlpPolicy, 16 envs × 1,024 steps, batch 64, 4 epochs, γ 0.999, "
                     "λ 0.98, entropy 0.01, seed 0, CPU) on LunarLander-v3, evaluated after each rollout "
                     "(16,384 steps) on seeds 10000-10009 (deterministic policy); curves in `benchmarks/envs_training.png`:", ""]
        body += [f"- {line}" for line in lines]
    text = "\n".join(body)
    section = (f"## Gymnasium environments (carom.envs) against the Box2D originals\n\n"
               f"{datetime.date.today().isoformat()} — {machine()} — `benchmarks/envs.py`\n\n{text}\n")
    print()
    print(section)
    if not args.no_write:
        with open(RESULTS, "w") as f:
            f.write(section)


if __name__ == "__main__":
    main()
