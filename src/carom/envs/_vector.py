"""What carom's native vector environments share: Gymnasium 1.x's ``VectorEnv`` contract over one
:class:`carom.batch.WorldBatch`.

A subclass keeps one single environment object per sub-environment (for building its world at a reset, its
random generator and its drawing) and steps every world in one compiled call. Here: the seeds (``seed + i``
for env i, so env i equals the single environment seeded ``seed + i``), the autoreset modes (NEXT_STEP by
default, SAME_STEP, DISABLED with ``reset(options={"reset_mask": ...})``), the time limit (truncation after
``max_episode_steps``, as the registration's ``TimeLimit`` wrapper does), the infos (dicts of arrays with their
``_key`` masks) and ``render()``.

A subclass provides ``_reset_envs(mask, seeds)`` (a new episode for every env of the boolean mask, env i's
generator seeded with ``seeds[i]`` when that is not None; or ``_reset_env(i, seed)``, one env at a time),
``_check_actions``
(the actions as arrays, or an error that changes nothing) and ``_run(actions, run, fresh)`` (one compiled call:
the worlds of ``run`` step, those of ``fresh`` take their reset's first step without an action; fills
``self._obs``, ``self._rewards`` and ``self._terminations``).
"""
from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector.utils import batch_space

import gymnasium as gym
from gymnasium.vector import AutoresetMode, VectorEnv


class BatchVectorEnv(VectorEnv):
    """The VectorEnv contract over a batch of worlds (module docstring); not made directly."""

    _envs: list
    _obs: np.ndarray

    def _spaces_from(self, env: Any) -> None:
        """The single env's spaces and their batched forms (Gymnasium's ``VectorEnv`` attributes)."""
        self.single_observation_space = env.observation_space
        self.single_action_space = env.action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)

    def _setup(self, num_envs: int, max_episode_steps: int | None, autoreset_mode: Any,
               render_mode: str | None) -> None:
        """The common state: counts, the autoreset mode, the time limit, the result arrays."""
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        mode = AutoresetMode(autoreset_mode) if not isinstance(autoreset_mode, AutoresetMode) else autoreset_mode
        self.num_envs = int(num_envs)
        self.autoreset_mode = mode
        self.metadata = dict(self.metadata, autoreset_mode=mode)
        self.render_mode = render_mode
        if max_episode_steps is not None and (isinstance(max_episode_steps, bool) or
                                              not isinstance(max_episode_steps, (int, np.integer)) or
                                              max_episode_steps < 1):
            raise ValueError(f"max_episode_steps must be a positive integer or None, got {max_episode_steps!r}")
        self.max_episode_steps = max_episode_steps
        n = self.num_envs
        self._elapsed = np.zeros(n, np.int64)
        self._rewards = np.zeros(n)
        self._terminations = np.zeros(n, np.bool_)
        self._truncations = np.zeros(n, np.bool_)
        self._autoreset = np.zeros(n, np.bool_)
        self._ready = np.zeros(n, np.bool_)          # env i has been reset at least once
        self._none = np.zeros(n, np.bool_)

    # --- the contract ------------------------------------------------------------------------------------
    def reset(self, *, seed: int | list[int | None] | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset every sub-environment (or, with ``options={"reset_mask": mask}``, those where the boolean mask
        (num_envs,) is True): seeds ``seed + i`` for env i (an int), one per env (a list), or none (each env
        goes on with its own random generator). Returns (observations, infos)."""
        n = self.num_envs
        if seed is None:
            seeds: list = [None] * n
        elif isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            seeds = [int(seed) + i for i in range(n)]
        else:
            seeds = list(seed)  # type: ignore[arg-type]
            if len(seeds) != n:
                raise ValueError(f"If seeds are passed as a list the length must match num_envs={n} but got "
                                 f"length={len(seeds)}.")
        mask = np.ones(n, np.bool_)
        if options is not None and "reset_mask" in options:
            mask = options["reset_mask"]
            if not isinstance(mask, np.ndarray):
                raise TypeError(f"`options['reset_mask']` must be a numpy array, got {type(mask)}")
            if mask.shape != (n,):
                raise ValueError(f"`options['reset_mask']` must have shape `({n},)`, got {mask.shape}")
            if mask.dtype != np.bool_:
                raise TypeError(f"`options['reset_mask']` must have `dtype=np.bool_`, got {mask.dtype}")
            if not mask.any():
                raise ValueError("`options['reset_mask']` must contain a boolean array with at least one True value, "
                                 f"got reset_mask={mask}")
        self._reset_envs(mask, seeds)
        self._run(self._no_actions(), self._none, mask)
        self._after_reset(mask)
        self._terminations[mask] = False
        self._truncations[mask] = False
        self._autoreset[mask] = False
        self._ready[mask] = True
        return self._obs.copy(), {}

    def _after_reset(self, mask: np.ndarray) -> None:
        self._elapsed[mask] = 0

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step every sub-environment with its action (``actions``: one per env, a leading env axis; one compiled
        call); returns (observations, rewards,
        terminations, truncations, infos) as arrays with a leading env axis. Autoreset as
        ``metadata["autoreset_mode"]`` says: NEXT_STEP (an env that ended is reset by the next call, its action
        ignored, reward 0), SAME_STEP (reset in the same call; the last observation in ``infos["final_obs"]``)
        or DISABLED (reset with ``reset(options={"reset_mask": ...})``)."""
        if not self._ready.all():
            raise gym.error.ResetNeeded("Cannot call step() before calling reset() on every sub-environment")
        acts = self._check_actions(actions)
        mode = self.autoreset_mode
        if mode == AutoresetMode.NEXT_STEP:
            fresh = self._autoreset.copy()
        else:
            fresh = self._none
        if fresh.any():
            self._reset_envs(fresh, None)
        run = ~fresh
        self._run(acts, run, fresh)
        self._elapsed[run] += 1
        self._elapsed[fresh] = 0
        rewards = np.where(fresh, 0.0, self._rewards)
        terminated = self._terminations & run
        # (as the registration's TimeLimit: truncated once the limit is reached, terminated or not)
        truncated = np.zeros(self.num_envs, np.bool_)
        if self.max_episode_steps is not None:
            truncated = run & (self._elapsed >= self.max_episode_steps)
        infos: dict[str, Any] = {}
        if mode == AutoresetMode.SAME_STEP:
            done = terminated | truncated
            if done.any():
                final = np.full(self.num_envs, None, dtype=object)
                for i in np.flatnonzero(done):
                    final[i] = self._obs[i].copy()
                infos = {"final_obs": final, "_final_obs": done.copy(), "final_info": {}, "_final_info": done.copy()}
                self._reset_envs(done, None)
                self._run(self._no_actions(), self._none, done)
                self._elapsed[done] = 0
        self._terminations = terminated
        self._truncations = truncated
        self._autoreset = terminated | truncated
        return self._obs.copy(), rewards, terminated.copy(), truncated.copy(), infos

    def render(self) -> tuple[Any, ...] | None:
        """One frame per sub-environment (``render_mode="rgb_array"``: a tuple of arrays), drawn by each env's
        single environment from its world."""
        if self.render_mode is None:
            gym.logger.warn("You are calling render method without specifying any render mode.")
            return None
        if not self._ready.all():
            raise gym.error.ResetNeeded("Cannot call render() before calling reset()")
        return tuple(env.render() for env in self._envs)

    def close_extras(self, **kwargs: Any) -> None:
        """Close the sub-environments' windows, if any."""
        for env in self._envs:
            env.close()

    # --- for subclasses ----------------------------------------------------------------------------------
    def _reset_envs(self, mask: np.ndarray, seeds: list | None) -> None:
        """A new episode for every env of ``mask`` (env i's generator seeded with ``seeds[i]`` first when ``seeds``
        is a list and that is not None): here one env at a time, by ``_reset_env``."""
        for i in np.flatnonzero(mask):
            self._reset_env(int(i), None if seeds is None else seeds[i])

    def _reset_env(self, i: int, seed: int | None) -> None:
        raise NotImplementedError

    def _check_actions(self, actions: Any) -> Any:
        raise NotImplementedError

    def _no_actions(self) -> Any:
        raise NotImplementedError

    def _run(self, actions: Any, run: np.ndarray, fresh: np.ndarray) -> None:
        raise NotImplementedError

    # --- shared by subclasses ----------------------------------------------------------------------------
    _batch: Any

    def _box_actions(self, actions: Any, width: int) -> np.ndarray:
        """Continuous actions as a float64 (num_envs, width) array of finite numbers in [-1, 1], or Gymnasium's
        ``InvalidAction`` naming them (nothing changed)."""
        n = self.num_envs
        a = np.asarray(actions, dtype=np.float64) if not isinstance(actions, str) else None
        if a is None or a.shape != (n, width) or not np.isfinite(a).all() or np.abs(a).max() > 1.0:
            raise gym.error.InvalidAction(f"actions must be {n} × {width} finite numbers in [-1, 1] (the action "
                                          f"space {self.action_space}), got {actions!r}")
        return a

    def _tables(self) -> tuple:
        """The batch's compiled state (``WorldBatch._kernel_state``), or ``ResetNeeded`` before the first reset."""
        if self._batch is None:
            raise gym.error.ResetNeeded("the first reset() must reset every sub-environment (no reset_mask)")
        return self._batch._kernel_state()

    def _step_worlds(self, state: tuple, active: np.ndarray, dt: float) -> None:
        """One compiled call stepping the worlds of ``active`` by ``dt`` (``state``: :meth:`_tables`)."""
        from ..batch import _adapter
        from ..batch._kernels import step_worlds
        substeps, gravity, friction, restitution, sleep, skip, tables, previous, approach, bad = state
        bad[:, 0] = _adapter.BODY_OK
        step_worlds(dt, substeps, gravity, friction, restitution, sleep, skip, active, tables, previous, approach, bad)
        self._batch._stepped(active, dt)

    def _raise_refused(self, state: tuple, active: np.ndarray) -> None:
        """The error ``World.step`` raises for the first world of ``active`` whose step was refused, if any."""
        from ..batch import _adapter
        bad = state[-1]
        # (the worlds not stepped have BODY_OK, set before the step: the mask is looked at only after a refusal)
        if (bad[:, 0] != _adapter.BODY_OK).any() and (bad[active, 0] != _adapter.BODY_OK).any():
            i = int(np.flatnonzero(active & (bad[:, 0] != _adapter.BODY_OK))[0])
            raise _adapter.refused(self._batch._worlds[i], int(bad[i, 0]), int(bad[i, 1]))


class RandomStreams:
    """Each sub-environment's own random generator, read in compiled code from a buffer of its next draws.

    Env i's generator is the single environment's ``np_random``; the compiled step reads the uniform draws it
    needs (``Generator.random()``, doubles in [0, 1), as ``uniform(a, b)`` = a + (b − a)·u draws them) from
    row i of :attr:`buffer` at :attr:`position` [i]. The generator itself runs ahead by the buffer's length;
    :meth:`sync` puts it back where the draws used so far leave it (before a reset builds from it), by
    restoring its state before the buffer was drawn and drawing again the ones used. Bitwise the same draws
    as the single environment's, in the same order."""

    def __init__(self, count: int, length: int = 512):
        self.buffer = np.zeros((count, length))
        self.position = np.full(count, length, np.int64)
        self._saved: list = [None] * count
        self._gen: list = [None] * count

    def attach(self, i: int, generator: np.random.Generator) -> None:
        """Env i draws from ``generator`` from now on (its state as it is now)."""
        self._gen[i] = generator
        self._fill(i)

    def sync(self, i: int) -> np.random.Generator:
        """Env i's generator, put where the draws used so far leave it."""
        g = self._gen[i]
        if self._saved[i] is not None:
            g.bit_generator.state = self._saved[i]
            used = int(self.position[i])
            if used:
                g.random(used)
            self._saved[i] = None
            self.position[i] = self.buffer.shape[1]
        return g

    def _fill(self, i: int) -> None:
        g = self._gen[i]
        self._saved[i] = g.bit_generator.state
        self.buffer[i] = g.random(self.buffer.shape[1])
        self.position[i] = 0

    def refill(self, need: int) -> None:
        """New draws for every env with fewer than ``need`` left (their generators are exactly at the buffer's
        end when all are used, so a refill continues the stream)."""
        if int(self.position.max(initial=0)) + need <= self.buffer.shape[1]:
            return
        low = np.flatnonzero(self.position + need > self.buffer.shape[1])
        for i in low:
            self.sync(int(i))
            self._fill(int(i))
