"""PPO on LunarLander against the wall clock: the single carom environment (the usual way, stable-baselines3's
``DummyVecEnv`` over 16 of them) against the native vector environment (``gymnasium.make_vec(
"carom/LunarLander-v3", num_envs=256)``, every lander in one compiled call, through ``carom.envs.sb3.SB3VecEnv``).

Both runs use stable-baselines3's PPO with the same hyper-parameters (rl-zoo's for LunarLander: batch 64, 4 epochs,
γ 0.999, λ 0.98, entropy 0.01) and the same rollout size, 16,384 steps: 16 envs × 1,024 steps for the single env,
256 envs × 64 steps for the vector env (``n_envs`` and ``n_steps`` are the only differences). Seeds are fixed (PPO
seed 0, env i seeded i). torch runs on the CPU with one thread; the vector env's compiled calls use Numba's threads.

Each run trains for ``--budget`` seconds of wall time (the clock starts when ``learn`` starts) and logs every
training episode's return (``VecMonitor``) with the time it ended; the curve is the mean return of the last 100
episodes against wall time. The claim to check: the vector run reaches the single-env run's final mean return in
less wall time. Both curves go to ``benchmarks/ppo_lunar.png``, the figures to the ``ppo_lunar`` section of
``benchmarks/RESULTS.md`` (``--no-write``: print only).

Needs the ``bench`` extra (stable-baselines3 and a CPU build of torch: ``pip install torch==2.13.0`` with the CPU
wheel at hand, so that pip does not fetch a CUDA build).
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
import carom.envs  # noqa: E402,F401
from _results import table, write_section  # noqa: E402

ID = "carom/LunarLander-v3"
ROLLOUT = 16_384
PARAMS = dict(batch_size=64, gae_lambda=0.98, gamma=0.999, n_epochs=4, ent_coef=0.01, verbose=0, seed=0,
              device="cpu")
#: episodes in the running mean of the curves
WINDOW = 100


def train(kind: str, n_envs: int, budget: float) -> tuple[np.ndarray, np.ndarray, int]:
    """One PPO run of ``budget`` seconds: ``kind`` "single" (DummyVecEnv over ``n_envs`` single envs) or "vector"
    (the native vector env of ``n_envs``). Returns (end times of the episodes in s, their returns, env steps)."""
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor
    from carom.envs.sb3 import SB3VecEnv

    if kind == "single":
        vec = DummyVecEnv([lambda: gym.make(ID) for _ in range(n_envs)])
    else:
        vec = SB3VecEnv(gym.make_vec(ID, num_envs=n_envs, autoreset_mode="SameStep"))
    vec = VecMonitor(vec)
    model = PPO("MlpPolicy", vec, n_steps=ROLLOUT // n_envs, **PARAMS)
    times: list[float] = []
    returns: list[float] = []

    class Log(BaseCallback):
        def _on_training_start(self) -> None:
            self.start = time.perf_counter()

        def _on_step(self) -> bool:
            now = time.perf_counter() - self.start
            for info in self.locals["infos"]:
                if "episode" in info:
                    times.append(now)
                    returns.append(float(info["episode"]["r"]))
            return now < budget

    model.learn(total_timesteps=10**9, callback=Log())
    vec.close()
    return np.array(times), np.array(returns), int(model.num_timesteps)


def running_mean(values: np.ndarray) -> np.ndarray:
    """The mean of the last ``WINDOW`` values at each value (fewer at the start)."""
    c = np.concatenate([[0.0], np.cumsum(values)])
    k = np.arange(1, values.size + 1)
    lo = np.maximum(k - WINDOW, 0)
    return (c[k] - c[lo]) / (k - lo)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget", type=float, default=330.0, help="seconds of training per run")
    parser.add_argument("--single-envs", type=int, default=16)
    parser.add_argument("--vector-envs", type=int, default=256)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    import torch
    torch.set_num_threads(1)
    runs = {}
    for kind, n in (("single", args.single_envs), ("vector", args.vector_envs)):
        t, r, steps = train(kind, n, args.budget)
        runs[kind] = (t, running_mean(r), steps, r.size)
        print(f"{kind}: {steps:,} env steps, {r.size} episodes in {args.budget:.0f} s; final mean return "
              f"{runs[kind][1][-1]:.1f}", flush=True)
    t1, m1, s1, e1 = runs["single"]
    t2, m2, s2, e2 = runs["vector"]
    target = float(m1[-1])
    reached = np.flatnonzero(m2 >= target)
    when = float(t2[reached[0]]) if reached.size else float("nan")
    single_when = float(t1[np.flatnonzero(m1 >= target)[0]])

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.plot(t1, m1, label=f"single carom env, DummyVecEnv × {args.single_envs}")
    ax.plot(t2, m2, label=f"native vector env, {args.vector_envs} envs (SB3VecEnv)")
    ax.axhline(target, color="grey", lw=0.8, ls="--")
    if reached.size:
        ax.plot([when], [target], "o", color="black")
    ax.set_xlabel("wall time (s)")
    ax.set_ylabel(f"training episode return (mean of last {WINDOW})")
    ax.set_title("PPO on carom/LunarLander-v3: single env vs native vector env")
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, "ppo_lunar.png"), dpi=100)

    rows = [(f"single env (DummyVecEnv × {args.single_envs}, n_steps {ROLLOUT // args.single_envs})",
             f"{s1:,}", f"{s1 / args.budget:,.0f}", e1, f"{m1[-1]:.1f}", f"{single_when:.0f}"),
            (f"native vector env ({args.vector_envs} envs, n_steps {ROLLOUT // args.vector_envs})",
             f"{s2:,}", f"{s2 / args.budget:,.0f}", e2, f"{m2[-1]:.1f}", f"{when:.0f}")]
    verdict = (f"The vector run reached the single-env run's final mean return ({target:.1f}) after {when:.0f} s of "
               f"its {args.budget:.0f} s (the single-env run first reached it after {single_when:.0f} s)."
               if reached.size else
               f"The vector run did not reach the single-env run's final mean return ({target:.1f}) within "
               f"{args.budget:.0f} s.")
    body = "\n".join([
        "stable-baselines3 PPO (MlpPolicy; batch 64, 4 epochs, γ 0.999, λ 0.98, entropy 0.01; rollouts of "
        f"{ROLLOUT:,} steps; PPO seed 0, env i seeded i; torch on the CPU, one thread), {args.budget:.0f} s of wall "
        "time per run, one after the other on this machine. Return: the mean of the last "
        f"{WINDOW} training episodes (VecMonitor). Curves in `benchmarks/ppo_lunar.png`.",
        "",
        table(("run", "env steps", "env steps/s (with training)", "episodes", "final mean return",
               "s to reach the single run's final"), rows),
        "",
        verdict,
    ])
    print(body)
    if not args.no_write:
        write_section("ppo_lunar", "PPO on LunarLander: single env against the native vector env", body)


if __name__ == "__main__":
    main()
