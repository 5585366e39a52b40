"""LunarLanderVector: ``num_envs`` LunarLanders stepped in one compiled call (``gymnasium.make_vec``).

Env i is :class:`carom.envs.LunarLander` seeded ``seed + i``, bitwise: its world is built by the single
environment's own code at each reset, then stepped in a :class:`carom.batch.WorldBatch` with every other
env's, and the engines, the leg flags, the observation and the reward are computed in the same compiled
call, by the single environment's formulas in the same order of operations (``_lander_one``). The engines'
random dispersion is drawn from each env's own generator (``RandomStreams``).

What stays in Python: a reset builds its world (about a millisecond), so an env costs Python time once per
episode, not per step. The wind (``enable_wind``) is not offered here; ``gymnasium.make_vec(...,
vectorization_mode="sync")`` runs it over the single environment.
"""
from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np
from numba import prange
from numba.typed import List as typed_list

import gymnasium as gym
from gymnasium import spaces

from ..batch import WorldBatch
from .._jit import njit
from ..batch import _adapter
from ..batch._kernels import threads_for
from ..batch._slots import borrowed_world
from ._vector import BatchVectorEnv, RandomStreams
from .lunar_lander import (CHUNKS, FPS, H, INITIAL_RANDOM, KICK_ANGLE, KICK_SPIN, KICK_VX, KICK_VY0, KICK_X,
                           KICK_Y, KICK_Y0, LEG_DOWN, MAIN_ENGINE_POWER, MAIN_ENGINE_Y_LOCATION, SCALE, SIDE_ENGINE_AWAY,
                           SIDE_ENGINE_HEIGHT, SIDE_ENGINE_POWER, W, LunarLander)

#: columns of the per-env row table: the lander's body row, its hull's shape row, the legs' shape rows
LANDER, HULL, LEG0, LEG1 = range(4)
#: the uniform draws of a reset (``LunarLander._build``): the terrain's CHUNKS + 1 heights, the push's two
RESET_DRAWS = CHUNKS + 3


class LunarLanderVector(BatchVectorEnv):
    """``num_envs`` LunarLanders in one compiled call (module docstring). ``continuous``, ``gravity`` and
    ``render_mode`` as :class:`carom.envs.LunarLander`; ``max_episode_steps`` (1,000 from the registration)
    truncates an episode as ``TimeLimit`` does; ``autoreset_mode`` a ``gymnasium.vector.AutoresetMode`` (or its
    value), NEXT_STEP by default. ``enable_wind`` must be False (the wind is not offered here: module docstring);
    ``wind_power`` and ``turbulence_power`` are accepted for the registration's sake and unused."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": FPS, "autoreset_mode": None}

    def __init__(self, num_envs: int = 1, continuous: bool = False, gravity: float = -10.0,
                 enable_wind: bool = False, wind_power: float = 15.0, turbulence_power: float = 1.5,
                 render_mode: str | None = None, max_episode_steps: int | None = 1000,
                 autoreset_mode: Any = "NextStep"):
        if enable_wind:
            raise ValueError("enable_wind is not offered by the native vector LunarLander; use "
                             "gymnasium.make_vec(..., vectorization_mode='sync') for wind")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got "
                             f"{render_mode!r}")
        self._setup(num_envs, max_episode_steps, autoreset_mode, render_mode)
        n = self.num_envs
        self._envs = [LunarLander(render_mode=render_mode, continuous=continuous, gravity=gravity)
                      for _ in range(n)]
        self.continuous = bool(continuous)
        self._spaces_from(self._envs[0])
        self._obs = np.zeros((n, 8), np.float32)
        self._rows = np.zeros((n, 4), np.int64)
        self._prev_shaping = np.full(n, np.nan)
        self._game_over = np.zeros(n, np.bool_)
        self._leg_contact = np.zeros((n, 2))
        self._power = np.zeros((n, 2))
        self._streams = RandomStreams(n)
        self._discrete_none = np.zeros(n, np.int64)
        self._continuous_none = np.zeros((n, 2))
        self._batch: WorldBatch | None = None
        self._smooth = np.zeros((n, CHUNKS))          # each env's terrain heights (for drawing)
        self._template: Any = None
        self._terrain_rows = np.zeros(CHUNKS, np.int64)
        self._kick_rows = np.zeros(3, np.int64)
        self._unkicked: tuple = ()

    # --- resets ------------------------------------------------------------------------------------------
    def _reset_envs(self, mask: np.ndarray, seeds: list | None) -> None:
        """New episodes for the envs of ``mask``. The first reset builds every env's world with its single
        environment's own code (``LunarLander._build``) and keeps env 0's, before its first step, as the template;
        every later one is one compiled call over all of them (``lander_reset``): each world put back into the
        template's state in place, then given its new terrain, push and first-step kick from its own generator's
        next draws, as ``_build`` draws and computes them."""
        if self._batch is None:
            if not mask.all():
                raise gym.error.ResetNeeded("the first reset() must reset every sub-environment (no reset_mask)")
            self._build_all(seeds)
            return
        streams = self._streams
        if seeds is not None:
            for i in np.flatnonzero(mask):
                if seeds[i] is not None:
                    env = self._envs[i]
                    gym.Env.reset(env, seed=seeds[i])
                    streams.attach(int(i), env.np_random)
        streams.refill(RESET_DRAWS + 2)
        tables, previous, approach = self._tables()[6:9]
        centres, starts, turned, moving = self._unkicked
        with threads_for(self.num_envs):
            lander_reset(mask, self._template, self._terrain_rows, self._kick_rows, centres, starts, turned, moving, streams.buffer, streams.position,
                         self._smooth, tables, previous, approach)
        self._batch._restored(mask)
        self._prev_shaping[mask] = np.nan
        self._game_over[mask] = False
        self._leg_contact[mask] = 0.0

    def _build_all(self, seeds: list | None) -> None:
        """The first reset: every env's world built by its single environment, the batch made of them, env 0's
        tables copied as the template of the later resets."""
        worlds = []
        for i, env in enumerate(self._envs):
            if seeds is not None and seeds[i] is not None:
                gym.Env.reset(env, seed=seeds[i])
            env.game_over = False
            env.prev_shaping = None
            env.leg_contact = np.zeros(2)
            env.particles = np.zeros((0, 6))
            env._build()
            assert env.world is not None
            worlds.append(env.world)
            self._rows[i] = (env._lander_row, env._hull_shape_row, env._leg_shape_rows[0], env._leg_shape_rows[1])
            self._smooth[i] = env.terrain[:, 1]
            self._streams.attach(i, env.np_random)
        first = self._envs[0]
        template = _adapter.world_tables(first.world)[1]
        # (in a typed list, as the batch's tables: a parallel loop takes a list of tables, not a tuple of them)
        self._template = typed_list([_adapter.copy_tables(template)])
        self._terrain_rows = np.array(first._terrain_shape_rows, np.int64)
        self._kick_rows = np.array([first._lander_row, *first._leg_rows], np.int64)
        self._unkicked = tuple(np.ascontiguousarray(a, np.float64) for a in first._unkicked)
        self._batch = WorldBatch(worlds, keep_initial=False)
        want = _adapter.layout(template)
        if any(_adapter.layout(t) != want for t in self._batch._tables) or (self._rows != self._rows[0]).any():
            raise AssertionError("the LunarLander worlds differ in layout: the compiled reset needs them alike")
        self._prev_shaping[:] = np.nan
        self._game_over[:] = False
        self._leg_contact[:] = 0.0

    def render(self) -> tuple[Any, ...] | None:
        """One frame per sub-environment (``render_mode="rgb_array"``), each drawn by its single environment from
        its world and its terrain."""
        if self.render_mode is not None and self._ready.all():
            for env, heights in zip(self._envs, self._smooth):
                env._set_terrain(heights.copy())
        return super().render()

    def _check_actions(self, actions: Any) -> Any:
        """The actions as an int64 (N,) or float64 (N, 2) array, or Gymnasium's ``InvalidAction`` naming them."""
        n = self.num_envs
        if self.continuous:
            return self._box_actions(actions, 2)
        a = np.asarray(actions) if not isinstance(actions, str) else np.zeros(0)
        if (a.shape != (n,) or a.dtype.kind not in "iu" or (a < 0).any() or (a > 3).any()):
            raise gym.error.InvalidAction(f"actions must be {n} integers in 0..3 (the action space "
                                          f"{self.action_space}), got {actions!r}")
        return a.astype(np.int64)

    def _no_actions(self) -> Any:
        return self._continuous_none if self.continuous else self._discrete_none

    # --- the compiled step -------------------------------------------------------------------------------
    def _run(self, actions: Any, run: np.ndarray, fresh: np.ndarray) -> None:
        """Three compiled calls, each over every env: the engines (``lander_fire``), the worlds' step (the
        batch's ``step_worlds``: all worlds in one call) and the observations and rewards (``lander_observe``).
        The envs of ``run`` fire their engines, those of ``fresh`` take their reset's first step (no engine)."""
        state = self._tables()
        self._streams.refill(2)
        discrete = self._discrete_none if self.continuous else actions
        continuous = actions if self.continuous else self._continuous_none
        active = run | fresh
        tables, previous, bad = state[6], state[7], state[9]
        with threads_for(self.num_envs):
            lander_fire(self.continuous, discrete, continuous, run, active, self._streams.buffer,
                        self._streams.position, self._rows, self._power, tables)
            self._step_worlds(state, active, 1.0 / FPS)
            lander_observe(active, self._rows, self._power, self._prev_shaping, self._game_over, self._leg_contact,
                           self._obs, self._rewards, self._terminations, tables, previous, bad)
        self._raise_refused(state, active)


@njit
def _engines(continuous, discrete, cont, i):
    """(main throttle, signed side throttle) of env i's action, as ``LunarLander._check_action``."""
    if continuous:
        a0 = cont[i, 0]
        a1 = cont[i, 1]
        main = (min(a0, 1.0) + 1.0) * 0.5 if a0 > 0.0 else 0.0
        side = 0.0
        if abs(a1) > 0.5:
            side = math.copysign(min(max(abs(a1), 0.5), 1.0), a1)
        return main, side
    choice = discrete[i]
    return (1.0 if choice == 2 else 0.0), (float(choice - 2) if choice == 1 or choice == 3 else 0.0)


@njit
def _impulse(b, jx, jy, qx, qy, com, vel, angvel, inv_mass, inv_inertia):
    """The impulse (jx, jy) at the point (qx, qy) on body b, as ``World.apply_impulses`` adds it."""
    vel[b, 0] = vel[b, 0] + inv_mass[b] * jx
    vel[b, 1] = vel[b, 1] + inv_mass[b] * jy
    rx = qx - com[b, 0]
    ry = qy - com[b, 1]
    angvel[b] = angvel[b] + inv_inertia[b] * (rx * jy - ry * jx)


@njit
def _touches(i, rows, game_over, leg_contact, contacts, previous):
    """The touch events of env i's last step, as ``World.contact_events`` finds them (``_step.event_rows``: the
    two steps' sorted contact keys merged, a pair touching now and not before begins, one touching before and
    not now ends), read as the single env's contact listener reads them: a begin of the hull's contact is a
    crash, a leg's begin sets its flag, its end clears it (the end winning). Without building the event arrays."""
    old_keys, old_touch, keys, touch = _adapter.touch_flags(previous, contacts)
    hull, leg0, leg1 = rows[i, HULL], rows[i, LEG0], rows[i, LEG1]
    began0 = began1 = ended0 = ended1 = False
    n, n_old = keys.shape[0], old_keys.shape[0]
    a = b = 0
    while a < n or b < n_old:
        key, begins, ends = 0, False, False
        if b >= n_old or (a < n and keys[a] < old_keys[b]):
            key, begins = keys[a], touch[a]
            a += 1
        elif a >= n or old_keys[b] < keys[a]:
            key, ends = old_keys[b], old_touch[b]
            b += 1
        else:
            key, begins, ends = keys[a], touch[a] and not old_touch[b], old_touch[b] and not touch[a]
            a += 1
            b += 1
        if begins or ends:
            s1, s2 = _adapter.key_shapes(key)
            if begins:
                if s1 == hull or s2 == hull:
                    game_over[i] = True
                began0 = began0 or s1 == leg0 or s2 == leg0
                began1 = began1 or s1 == leg1 or s2 == leg1
            else:
                ended0 = ended0 or s1 == leg0 or s2 == leg0
                ended1 = ended1 or s1 == leg1 or s2 == leg1
    if began0:
        leg_contact[i, 0] = 1.0
    if began1:
        leg_contact[i, 1] = 1.0
    if ended0:
        leg_contact[i, 0] = 0.0
    if ended1:
        leg_contact[i, 1] = 0.0


@njit
def _fire(i, continuous, discrete, cont, run, buffer, position, rows, power, tables):
    """Env i's engines, as ``LunarLander.step`` fires them (the same formulas in the same order, so bitwise the
    same): two uniform draws for the dispersion, then the main and side engines' impulses on the hull, one after
    the other as ``Body.apply_impulse`` (and ``World.apply_impulses``) adds them, waking the hull as they do.
    Without ``run[i]`` (a reset's first step) no engine fires. The throttles go to ``power[i]``."""
    if run[i]:
        m_power, side = _engines(continuous, discrete, cont, i)
    else:
        m_power, side = 0.0, 0.0
    # (each env's tables read once, borrowed: ``batch._slots``)
    t = borrowed_world(tables, i)
    com, angle_of, vel, angvel, inv_mass, inv_inertia, lc, asleep = _adapter.lander_arrays(t)
    L = rows[i, LANDER]
    angle = angle_of[L]
    c, s = math.cos(angle), math.sin(angle)
    px = com[L, 0] - (c * lc[L, 0] - s * lc[L, 1])
    py = com[L, 1] - (s * lc[L, 0] + c * lc[L, 1])
    tip0, tip1 = math.sin(angle), math.cos(angle)
    side0, side1 = -tip1, tip0
    p = position[i]
    d0 = (-1.0 + 2.0 * buffer[i, p]) / SCALE
    d1 = (-1.0 + 2.0 * buffer[i, p + 1]) / SCALE
    position[i] = p + 2
    # (the two impulses as the single env adds them, main engine first; scalars, not arrays: no allocation)
    main_x = main_y = main_px = main_py = side_x = side_y = side_px = side_py = 0.0
    if m_power > 0.0:
        reach = MAIN_ENGINE_Y_LOCATION / SCALE + 2 * d0
        ox = tip0 * reach + side0 * d1
        oy = -tip1 * reach - side1 * d1
        main_x = -ox * MAIN_ENGINE_POWER * m_power
        main_y = -oy * MAIN_ENGINE_POWER * m_power
        main_px = px + ox
        main_py = py + oy
    s_power = abs(side)
    if s_power > 0.0:
        direction = math.copysign(1.0, side)
        lever = 3 * d1 + direction * SIDE_ENGINE_AWAY / SCALE
        ox = tip0 * d0 + side0 * lever
        oy = -tip1 * d0 - side1 * lever
        side_x = -ox * SIDE_ENGINE_POWER * s_power
        side_y = -oy * SIDE_ENGINE_POWER * s_power
        side_px = px + ox - tip0 * 17 / SCALE
        side_py = py + oy + tip1 * SIDE_ENGINE_HEIGHT / SCALE
    if m_power > 0.0:
        _impulse(L, main_x, main_y, main_px, main_py, com, vel, angvel, inv_mass, inv_inertia)
    if s_power > 0.0:
        _impulse(L, side_x, side_y, side_px, side_py, com, vel, angvel, inv_mass, inv_inertia)
    if m_power > 0.0 or s_power > 0.0:
        _adapter.wake(t, L)
    power[i, 0] = m_power
    power[i, 1] = s_power


@njit
def _observe(i, rows, power, prev_shaping, game_over, leg_contact, obs, rewards, terminations, tables, previous):
    """Env i after its step, as ``LunarLander.step`` reads it: the contact events (a begin of the hull's contact is
    a crash; a leg's begin sets its flag, its end clears it, the end winning), the observation, the shaping
    reward less the engines' fuel, and the episode's end (a crash or leaving the screen: −100; the hull
    asleep: +100)."""
    t = borrowed_world(tables, i)
    _touches(i, rows, game_over, leg_contact, t.contacts, borrowed_world(previous, i))
    com, angle_of, vel, angvel, inv_mass, inv_inertia, lc, asleep = _adapter.lander_arrays(t)
    L = rows[i, LANDER]
    angle = angle_of[L]
    c, s = math.cos(angle), math.sin(angle)
    px = com[L, 0] - (c * lc[L, 0] - s * lc[L, 1])
    py = com[L, 1] - (s * lc[L, 0] + c * lc[L, 1])
    vx, vy = vel[L, 0], vel[L, 1]
    pad = H / 4 + LEG_DOWN / SCALE
    s0 = (px - W / 2) / (W / 2)
    s1 = (py - pad) / (H / 2)
    s2 = vx * (W / 2) / FPS
    s3 = vy * (H / 2) / FPS
    obs[i, 0] = s0
    obs[i, 1] = s1
    obs[i, 2] = s2
    obs[i, 3] = s3
    obs[i, 4] = angle
    obs[i, 5] = 20.0 * angvel[L] / FPS
    obs[i, 6] = leg_contact[i, 0]
    obs[i, 7] = leg_contact[i, 1]
    s6 = np.float64(obs[i, 6])
    s7 = np.float64(obs[i, 7])
    shaping = (-100 * math.sqrt(s0 * s0 + s1 * s1) - 100 * math.sqrt(s2 * s2 + s3 * s3) - 100 * abs(angle)
               + 10 * s6 + 10 * s7)
    reward = 0.0
    if not math.isnan(prev_shaping[i]):
        reward = shaping - prev_shaping[i]
    prev_shaping[i] = shaping
    reward -= power[i, 0] * 0.30
    reward -= power[i, 1] * 0.03
    terminated = False
    if game_over[i] or abs(s0) >= 1.0:
        terminated = True
        reward = -100.0
    if asleep[L]:
        terminated = True
        reward = +100.0
    rewards[i] = reward
    terminations[i] = terminated


@numba.njit(cache=True, parallel=True)
def lander_fire(continuous, discrete, cont, run, active, buffer, position, rows, power, tables):
    """The engines of every env of ``active`` (``_fire``), the envs spread over the threads."""
    for i in prange(active.shape[0]):
        if active[i]:
            _fire(np.int64(i), continuous, discrete, cont, run, buffer, position, rows, power, tables)


@numba.njit(cache=True, parallel=True)
def lander_observe(active, rows, power, prev_shaping, game_over, leg_contact, obs, rewards, terminations, tables,
                   previous, bad):
    """Observations, rewards and episode ends of every env of ``active`` whose step was not refused
    (``_observe``), the envs spread over the threads."""
    for i in prange(active.shape[0]):
        if active[i] and bad[i, 0] == _adapter.BODY_OK:
            _observe(np.int64(i), rows, power, prev_shaping, game_over, leg_contact, obs, rewards, terminations,
                     tables, previous)


@njit
def _reset_one(i, template, terrain_rows, kick_rows, centres, starts, turned, moving, buffer, position, smooth, tables,
               previous, approach):
    """Env i's new episode, as ``LunarLander._build`` makes it (the same draws, formulas and order of operations,
    so bitwise the same world): the world put back into the template's state (``_adapter.restore_world``), then
    from the env's next ``RESET_DRAWS`` uniform draws the terrain (CHUNKS + 1 heights in [0, H/2), the pad's five
    flat, smoothed over three neighbours; each segment's vertices, edge normals, reach, its static body's smallest
    extent and its broad-phase box, as ``Body.add_shape`` computes them), the push (a force on the lander) and the
    first-step kick (``LunarLander._first_step_kick``, then ``World.set_state``'s centres of mass)."""
    _adapter.restore_world(template[0], tables, previous, approach, i)
    t = tables[i]
    p = position[i]
    height = np.empty(CHUNKS + 1)
    for k in range(CHUNKS + 1):
        height[k] = 0.0 + (H / 2 - 0.0) * buffer[i, p + k]
    for k in range(CHUNKS // 2 - 2, CHUNKS // 2 + 3):
        height[k] = H / 4
    for k in range(CHUNKS):
        smooth[i, k] = 0.33 * (height[k - 1] + height[k] + height[k + 1])
    min_extent, force = _adapter.body_extent(t)
    body = _adapter.shape_bodies(t)
    step_x = W / (CHUNKS - 1)
    for k in range(CHUNKS - 1):
        sh = terrain_rows[k + 1]
        ext = _adapter.put_static_segment(t, sh, step_x * k, smooth[i, k], step_x * (k + 1), smooth[i, k + 1])
        min_extent[body[sh]] = ext
    p += CHUNKS + 1
    fx = -INITIAL_RANDOM + (INITIAL_RANDOM - -INITIAL_RANDOM) * buffer[i, p]
    fy = -INITIAL_RANDOM + (INITIAL_RANDOM - -INITIAL_RANDOM) * buffer[i, p + 1]
    position[i] = p + 2
    lander = kick_rows[0]
    force[lander, 0] = 0.0 + fx
    force[lander, 1] = 0.0 + fy
    com, angle_of, vel, angvel, inv_mass, inv_inertia, lc, asleep = _adapter.lander_arrays(t)
    spin = KICK_SPIN * fx
    sx, sy = KICK_X * fx, KICK_Y * fy + KICK_Y0
    hx, hy = centres[0, 0], centres[0, 1]
    turn = KICK_ANGLE * fx
    c, s = math.cos(turn), math.sin(turn)
    for k in range(kick_rows.shape[0]):
        b = kick_rows[k]
        arm_x, arm_y = centres[k, 0] - hx, centres[k, 1] - hy
        vx = moving[k, 0] + spin * -arm_y
        vy = moving[k, 1] + spin * arm_x
        ox, oy = starts[k, 0] - hx, starts[k, 1] - hy
        px = (hx + sx) + (c * ox - s * oy)
        py = (hy + sy) + (s * ox + c * oy)
        a = turned[k] + turn
        angle_of[b] = a
        ca, sa = math.cos(a), math.sin(a)
        com[b, 0] = px + (ca * lc[b, 0] - sa * lc[b, 1])
        com[b, 1] = py + (sa * lc[b, 0] + ca * lc[b, 1])
        vel[b, 0] = vx + KICK_VX * fx
        vel[b, 1] = vy + KICK_VY0
        angvel[b] = spin


@numba.njit(cache=True, parallel=True)
def lander_reset(mask, template, terrain_rows, kick_rows, centres, starts, turned, moving, buffer, position, smooth,
                 tables, previous, approach):
    """A new episode for every env of ``mask`` (``_reset_one``), the envs spread over the threads."""
    for i in prange(mask.shape[0]):
        if mask[i]:
            _reset_one(np.int64(i), template, terrain_rows, kick_rows, centres, starts, turned, moving, buffer,
                       position, smooth, tables, previous, approach)
