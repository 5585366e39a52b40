"""A stable-baselines3 ``VecEnv`` over carom's native vector environments (SB3 does not take Gymnasium's
``VectorEnv`` directly).

``SB3VecEnv(gymnasium.make_vec("carom/LunarLander-v3", num_envs=16, autoreset_mode="SameStep"))`` gives SB3 what
its own ``DummyVecEnv`` gives it: observations, rewards and ``dones`` (terminated or truncated) as arrays, an
env that ended reset in the same step, its last observation in ``infos[i]["terminal_observation"]`` and
``infos[i]["TimeLimit.truncated"]`` set when the time limit, not the task, ended it. Seeds: ``seed(s)`` (or SB3's
``set_seed``) gives env i the seed ``s + i`` at the next ``reset()``, as SB3's own vector envs do.

Needs stable-baselines3 (not a carom dependency: ``pip install stable-baselines3`` with a CPU build of torch).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env import VecEnv

from ._vector import BatchVectorEnv


class SB3VecEnv(VecEnv):
    """stable-baselines3's ``VecEnv`` interface over ``env``, a carom native vector environment made with
    ``autoreset_mode="SameStep"`` (module docstring)."""

    def __init__(self, env: Any):
        base = getattr(env, "unwrapped", env)
        if not isinstance(base, BatchVectorEnv):
            raise TypeError(f"SB3VecEnv takes a carom native vector env (gymnasium.make_vec('carom/...')), got "
                            f"{type(env).__name__}")
        if base.autoreset_mode != AutoresetMode.SAME_STEP:
            raise ValueError("SB3VecEnv needs the vector env made with autoreset_mode='SameStep' (SB3 resets an "
                             f"env in the step that ends it), got {base.autoreset_mode}")
        self.env = env
        self.render_mode = base.render_mode
        super().__init__(base.num_envs, base.single_observation_space, base.single_action_space)
        self._actions: np.ndarray | None = None
        self._next_seeds: list | None = None

    def reset(self) -> np.ndarray:
        """Reset every env (with the seeds given by ``seed``, once); returns the observations."""
        seeds = self._next_seeds
        self._next_seeds = None
        obs, _ = self.env.reset(seed=seeds)
        return obs

    def seed(self, seed: int | None = None) -> Sequence[None | int]:
        """Seeds ``seed + i`` for env i at the next ``reset()`` (SB3's convention); returns them."""
        if seed is None:
            return [None] * self.num_envs
        self._next_seeds = [int(seed) + i for i in range(self.num_envs)]
        return list(self._next_seeds)

    def step_async(self, actions: np.ndarray) -> None:
        """Keep ``actions`` (one per env) for :meth:`step_wait`."""
        self._actions = np.asarray(actions)

    def step_wait(self) -> Any:
        """Step every env with the kept actions; returns (observations, rewards, dones, infos): ``infos`` a list
        of one dict per env, with ``terminal_observation`` and ``TimeLimit.truncated`` for the envs that ended."""
        obs, rewards, terminated, truncated, info = self.env.step(self._actions)
        dones = terminated | truncated
        infos: list[dict] = [{} for _ in range(self.num_envs)]
        for i in np.flatnonzero(dones):
            infos[i]["terminal_observation"] = info["final_obs"][i]
            infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
        return obs, rewards.astype(np.float32), dones, infos

    def close(self) -> None:
        """Close the vector env."""
        self.env.close()

    def get_images(self) -> Sequence[np.ndarray | None]:
        """One frame per env (the vector env's ``render()``, ``render_mode="rgb_array"``)."""
        frames = self.env.render()
        return list(frames) if frames is not None else [None] * self.num_envs

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        """The attribute ``attr_name`` of each env of ``indices`` (all by default): the vector env's own."""
        return [getattr(self.env.unwrapped, attr_name) for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        """Set ``attr_name`` to ``value`` on the vector env (``indices`` is accepted for SB3's interface)."""
        setattr(self.env.unwrapped, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
        """Call ``method_name`` of the vector env once per env of ``indices`` (SB3's interface; the call is the
        vector env's)."""
        method = getattr(self.env.unwrapped, method_name)
        return [method(*method_args, **method_kwargs) for _ in self._get_indices(indices)]

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        """False for each env of ``indices`` (``wrapper_class`` is never applied: the vector env has no wrappers)."""
        return [False for _ in self._get_indices(indices)]
