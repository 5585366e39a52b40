"""BipedalWalkerVector: ``num_envs`` BipedalWalkers stepped in one compiled call (``gymnasium.make_vec``).

Env i is :class:`carom.envs.BipedalWalker` seeded ``seed + i``, bitwise, in both variants (``hardcore`` too): its
course and walker are built by the single environment's own code at each reset, then stepped in a
:class:`carom.batch.WorldBatch` with every other env's. Each vector step is three compiled calls over all envs:
the motors (``walker_motors``: each joint's speed and largest torque from the action, the joint's bodies woken
when they change, as setting ``Joint.motor_speed`` does), the worlds' step, and ``walker_observe``: the lower legs'
ground flags and the fall from the contacts within ``SKIN`` (``BipedalWalker._read_contacts``), the ten lidar
rays cast against the env's packed course (``_lidar_fractions``, the single environment's kernel), the 24
observed numbers, the reward and the episode's end, by the single environment's formulas in the same order of
operations.

Resets: the first builds every env's world with the single environment's code (tens of milliseconds each: 200
terrain points in 20 chains) and keeps env 0's as the template. Every later ordinary reset draws its course in
Python with the single environment's own code (the random numbers in its order, about a millisecond), then one
compiled call over all the envs of the reset puts each world back into the template's state in place and lays
the course into it (``walker_reset``): byte for byte the single environment's new world (the tests compare
every array). Hardcore courses differ in their obstacles, so in their worlds' layout: there every reset builds
its world with the single environment's code. A walker draws no random number after its reset.
"""
from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np
from numba import prange
from numba.typed import List as typed_list

import gymnasium as gym

from ..batch import WorldBatch
from .._jit import njit
from ..batch import _adapter
from ..batch._kernels import threads_for
from ..batch._slots import borrowed_world
from ._vector import BatchVectorEnv
from .bipedal_walker import (FPS, INITIAL_RANDOM, LIDAR_DIRECTIONS, MOTOR_SPEEDS, MOTORS_TORQUE, SCALE, SKIN, SPEED_HIP, SPEED_KNEE,
                             TERRAIN_GRASS, TERRAIN_LENGTH, TERRAIN_STEP, VIEWPORT_H, VIEWPORT_W, BipedalWalker,
                             _lidar_fractions)

#: columns of the per-env body rows: the hull, then each leg's upper and lower part
HULL, UPPER0, LOWER0, UPPER1, LOWER1 = range(5)
#: the joints' bodies (as columns of the body rows) and reference angles, hips and knees in the action's order
JOINT_A = np.array([HULL, UPPER0, HULL, UPPER1])
JOINT_B = np.array([UPPER0, LOWER0, UPPER1, LOWER1])
JOINT_REF = np.array([-0.05, 0.0, 0.05, 0.0])
#: the most terrain shapes a lower leg is kept touching at once (the single env's sets; a foot meets a few)
PARTNERS = 32
#: the motors' settings when a walker is built: speeds, largest torques
START_SPEEDS = np.array([-1.0, 1.0, 1.0, 1.0])
#: the terrain's colour as the single environment draws it
TERRAIN_COLOUR = (102, 153, 76)


class BipedalWalkerVector(BatchVectorEnv):
    """``num_envs`` BipedalWalkers in one compiled call (module docstring). ``hardcore`` and ``render_mode`` as
    :class:`carom.envs.BipedalWalker`; ``max_episode_steps`` (1,600, or 2,000 in hardcore, from the
    registrations) truncates an episode as ``TimeLimit`` does; ``autoreset_mode`` a
    ``gymnasium.vector.AutoresetMode`` (or its value), NEXT_STEP by default."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": FPS, "autoreset_mode": None}

    def __init__(self, num_envs: int = 1, hardcore: bool = False, render_mode: str | None = None,
                 max_episode_steps: int | None = 1600, autoreset_mode: Any = "NextStep"):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got "
                             f"{render_mode!r}")
        self._setup(num_envs, max_episode_steps, autoreset_mode, render_mode)
        n = self.num_envs
        self.hardcore = bool(hardcore)
        self._envs = [BipedalWalker(render_mode=render_mode, hardcore=hardcore) for _ in range(n)]
        self._spaces_from(self._envs[0])
        self._obs = np.zeros((n, 24), np.float32)
        self._bodies = np.zeros((n, 5), np.int64)
        self._joints = np.zeros((n, 4), np.int64)
        self._shapes = np.zeros((n, 3), np.int64)         # the hull's shape row, the lower legs'
        self._motor = np.zeros((n, 2, 4))                 # each joint's motor speed and largest torque now
        self._ground = np.zeros((n, 2))
        self._partners = np.zeros((n, 2, PARTNERS), np.int64)
        self._partner_count = np.zeros((n, 2), np.int64)
        self._game_over = np.zeros(n, np.bool_)
        self._prev_shaping = np.zeros(n)
        self._x = np.zeros(n)
        self._lidar = np.ones((n, 10))
        self._none = np.zeros(n, np.bool_)
        self._no_action = np.zeros((n, 4))
        self._courses: Any = None
        self._template: Any = None
        self._segments = np.zeros(0, np.int64)
        self._pieces = np.zeros(0, np.int64)
        self._hull_mass = 0.0
        self._surface = np.zeros((n, TERRAIN_LENGTH, 2))
        self._one_way = np.zeros((n, TERRAIN_LENGTH - 1, 2))
        self._push = np.zeros(n)
        self._batch: WorldBatch | None = None
        self._first: list = [None] * n

    # --- resets ------------------------------------------------------------------------------------------
    def _reset_envs(self, mask: np.ndarray, seeds: list | None) -> None:
        """New episodes for the envs of ``mask``. The first reset, and every reset in hardcore (whose courses
        differ in their obstacles, so in their worlds' layout), build each world with the single environment's
        code (``_reset_env``). Later ordinary resets draw each course in Python with the single environment's
        own code (``_generate_terrain``, ``_generate_clouds``, the push: the random numbers in its order), then
        put every world of ``mask`` back into the template's state and lay its course into it in one compiled
        call (``walker_reset``)."""
        if self._batch is None or self.hardcore:
            super()._reset_envs(mask, seeds)
            if self._template is None and not self.hardcore and self._batch is not None:
                self._make_template()
            return
        for i in np.flatnonzero(mask):
            env = self._envs[i]
            if seeds is not None and seeds[i] is not None:
                gym.Env.reset(env, seed=seeds[i])
            env._generate_terrain()
            env._generate_clouds()
            self._push[i] = env.np_random.uniform(-INITIAL_RANDOM, INITIAL_RANDOM)
            surface = np.stack([env.terrain_x, env.terrain_y], axis=1)
            self._surface[i] = surface
            self._one_way[i] = _chain_sides(surface)
            pack, xmin, xmax = env._lidar_layout(surface, [])
            env._lidar_pack, env._lidar_xmin, env._lidar_xmax = pack, xmin, xmax
            self._courses[i] = tuple(pack) + (xmin, xmax)
        tables, previous, approach = self._tables()[6:9]
        with threads_for(self.num_envs):
            walker_reset(mask, self._template, self._segments, self._pieces, self._bodies[0, HULL], self._hull_mass,
                         self._surface, self._one_way, self._push, tables, previous, approach)
        self._batch._restored(mask)
        self._motor[mask, 0] = START_SPEEDS
        self._motor[mask, 1] = MOTORS_TORQUE
        self._ground[mask] = 1.0
        self._partner_count[mask] = 0
        self._game_over[mask] = False

    def _make_template(self) -> None:
        """After the first reset: env 0's world, before its first step, as the template of the later resets, its
        terrain segments' shape rows and their chain pieces (every ordinary walker world has the same layout)."""
        assert self._batch is not None
        env = self._envs[0]
        assert env.world is not None
        t = env.world.tables
        segments = np.flatnonzero(t.s_chain[:t.n_shapes] != 0)
        self._segments = segments.astype(np.int64)
        pieces = t.s_body[segments]
        self._pieces = np.searchsorted(np.unique(pieces), pieces).astype(np.int64)
        self._hull_mass = float(env.hull.mass) if env.hull is not None else 0.0
        template = self._batch._tables[0]
        want = _adapter.layout(template)
        if any(_adapter.layout(t) != want for t in self._batch._tables) or (self._bodies != self._bodies[0]).any():
            raise AssertionError("the walker worlds differ in layout: the compiled reset needs them alike")
        # (in a typed list, as the batch's tables: a parallel loop takes a list of tables, not a tuple of them)
        self._template = typed_list([_adapter.copy_tables(template)])

    def _reset_env(self, i: int, seed: int | None) -> None:
        """Env i's new episode: its single environment's course and walker built from its generator (seeded with
        ``seed`` when given), put in slot i of the batch, its course packed for the lidar."""
        env = self._envs[i]
        if seed is not None:
            gym.Env.reset(env, seed=seed)
        env._build()
        world = env.world
        assert world is not None and env.hull is not None
        course = tuple(env._lidar_pack) + (env._lidar_xmin, env._lidar_xmax)
        if self._batch is not None:
            self._batch.replace(i, world, keep_initial=False)
            self._courses[i] = course
        else:
            # the first reset: the batch is made from every env's first world at once
            self._first[i] = (world, course)
            if all(w is not None for w in self._first):
                self._batch = WorldBatch([w for w, _ in self._first], keep_initial=False)
                self._courses = typed_list([c for _, c in self._first])
                self._first = []
        self._bodies[i] = [env.hull.index] + [leg.index for leg in env.legs]
        self._joints[i] = [j.index for j in env.joints]
        self._shapes[i] = [env._hull_shape_row, *env._lower_shape_rows]
        self._motor[i, 0] = START_SPEEDS
        self._motor[i, 1] = MOTORS_TORQUE
        self._ground[i] = 1.0                   # (the original's first step begins both feet's contacts)
        self._partner_count[i] = 0
        self._game_over[i] = False

    def _check_actions(self, actions: Any) -> np.ndarray:
        """The actions as a float64 (N, 4) array, or Gymnasium's ``InvalidAction`` naming them."""
        return self._box_actions(actions, 4)

    def _no_actions(self) -> np.ndarray:
        return self._no_action

    # --- the compiled step -------------------------------------------------------------------------------
    def _run(self, actions: np.ndarray, run: np.ndarray, fresh: np.ndarray) -> None:
        """Three compiled calls, each over every env: the motors (``walker_motors``), the worlds' step and the
        observations, rewards and ends (``walker_observe``). The envs of ``run`` act and step; those of
        ``fresh`` (just reset) are observed only, as ``BipedalWalker.reset`` does."""
        state = self._tables()
        tables = state[6]
        with threads_for(self.num_envs):
            walker_motors(run, actions, self._joints, self._motor, tables)
            self._step_worlds(state, run, 1.0 / FPS)
            walker_observe(run, fresh, actions, self._bodies, self._shapes, self._ground, self._partners,
                           self._partner_count, self._game_over, self._prev_shaping, self._x, self._lidar,
                           self._obs, self._rewards, self._terminations, tables, self._courses, state[9])
        self._raise_refused(state, run)

    def render(self) -> tuple[Any, ...] | None:
        """One frame per sub-environment (``render_mode="rgb_array"``), each drawn by its single environment,
        scrolled to its walker."""
        if self.render_mode is not None and self._ready.all():
            for env, x, lidar in zip(self._envs, self._x, self._lidar):
                env.scroll = float(x) - VIEWPORT_W / SCALE / 5
                env.lidar_fractions[:] = lidar
                x_, y_ = env.terrain_x, env.terrain_y
                env.terrain_poly = [([(x_[k], y_[k]), (x_[k + 1], y_[k + 1]), (x_[k + 1], 0.0), (x_[k], 0.0)],
                                     TERRAIN_COLOUR) for k in range(x_.shape[0] - 1)]
        return super().render()


def _chain_sides(surface: np.ndarray) -> np.ndarray:
    """Each terrain segment's free side (its ``one_way`` direction) as ``Body.add_chain`` and ``Body.add_shape``
    compute it: (−d_y, d_x)/|d|, made unit again (Python's ``math.hypot``, which a compiled kernel does not
    reproduce bit for bit, so this stays in Python)."""
    out = np.empty((surface.shape[0] - 1, 2))
    for k in range(surface.shape[0] - 1):
        d = surface[k + 1] - surface[k]
        nrm = np.array([-d[1], d[0]]) / math.hypot(d[0], d[1])
        x, y = float(nrm[0]), float(nrm[1])
        length = math.hypot(x, y)
        out[k, 0] = x / length
        out[k, 1] = y / length
    return out


@njit
def _reset_one(i, template, segments, pieces, hull, hull_mass, surface, one_way, push, tables, previous, approach):
    """Env i's new episode, as ``BipedalWalker._build`` makes it from its course (the same formulas and order
    of operations, so bitwise the same world): the world put back into the template's state
    (``_adapter.restore_world``), then each terrain segment's vertices, edge normals, free side, ghost vertices
    (its chain piece's neighbours, as ``Body.add_chain`` sets them), reach and broad-phase box, each piece's
    smallest extent (``mass.parts_mass``), and the hull's push."""
    _adapter.restore_world(template[0], tables, previous, approach, i)
    t = tables[i]
    body = _adapter.shape_bodies(t)
    one_way_of, ghost = _adapter.chain_arrays(t)
    min_extent, _ = _adapter.body_extent(t)
    count = segments.shape[0]
    extent = np.full(pieces[count - 1] + 1, np.inf)
    for k in range(count):
        sh = segments[k]
        ext = _adapter.put_static_segment(t, sh, surface[i, k, 0], surface[i, k, 1], surface[i, k + 1, 0],
                                          surface[i, k + 1, 1])
        extent[pieces[k]] = min(extent[pieces[k]], max(ext, 0.0))
        one_way_of[sh, 0], one_way_of[sh, 1] = one_way[i, k, 0], one_way[i, k, 1]
        first = k == 0 or pieces[k - 1] != pieces[k]
        last = k == count - 1 or pieces[k + 1] != pieces[k]
        for c in range(4):
            ghost[sh, c] = 0.0
        if not first:
            ghost[sh, 0], ghost[sh, 1] = surface[i, k - 1, 0], surface[i, k - 1, 1]
        if not last:
            ghost[sh, 2], ghost[sh, 3] = surface[i, k + 2, 0], surface[i, k + 2, 1]
    for k in range(count):
        if k == 0 or pieces[k - 1] != pieces[k]:
            min_extent[body[segments[k]]] = extent[pieces[k]]
    com, angle_of, vel, angvel, inv_mass, inv_inertia, lc, asleep = _adapter.lander_arrays(t)
    vel[hull, 0] = push[i] / FPS / hull_mass * 1.0
    vel[hull, 1] = 0.0 * 1.0


@numba.njit(cache=True, parallel=True)
def walker_reset(mask, template, segments, pieces, hull, hull_mass, surface, one_way, push, tables, previous,
                 approach):
    """A new episode for every env of ``mask`` from its course (``_reset_one``), the envs spread over the
    threads."""
    for i in prange(mask.shape[0]):
        if mask[i]:
            _reset_one(np.int64(i), template, segments, pieces, hull, hull_mass, surface, one_way, push, tables,
                       previous, approach)


@njit
def _motors(i, actions, joints, motor, tables):
    """Env i's motors from its action, as ``BipedalWalker.step`` sets them: speed sign(a)·(4 or 6) rad/s, largest
    torque min(|a|, 1)·80 N·m; a joint whose setting changes has it written and its two bodies woken (as
    ``Joint.__setattr__`` does, ``World._wake`` of each)."""
    t = borrowed_world(tables, i)           # (read borrowed: ``batch._slots``)
    param, body = _adapter.joint_arrays(t)
    for k in range(4):
        a = actions[i, k]
        speed = np.sign(a) * MOTOR_SPEEDS[k]
        torque = min(abs(a), 1.0) * MOTORS_TORQUE
        if speed != motor[i, 0, k] or torque != motor[i, 1, k]:
            j = joints[i, k]
            param[j, _adapter.REVOLUTE_MOTOR_SPEED] = speed
            _adapter.wake(t, body[j, 0])
            _adapter.wake(t, body[j, 1])
            param[j, _adapter.REVOLUTE_MAX_MOTOR_TORQUE] = torque
            _adapter.wake(t, body[j, 0])
            _adapter.wake(t, body[j, 1])
        motor[i, 0, k] = speed
        motor[i, 1, k] = torque


@njit
def _contacts(i, shapes, ground, partners, count, game_over, tables):
    """Env i's lower legs' ground flags and its fall after a step, as ``BipedalWalker._read_contacts`` keeps
    them: the contacts with points (sensors aside) whose point lies within ``SKIN``; the hull among them is the
    fall; each lower leg's set of terrain partners compared with the last step's: a new partner sets its flag,
    a lost one clears it (the clearing wins)."""
    keys, n_points, separation, sensor = _adapter.contact_points(borrowed_world(tables, i))
    hull = shapes[i, 0]
    now = np.empty((2, PARTNERS), np.int64)
    size = np.zeros(2, np.int64)
    for r in range(keys.shape[0]):
        if sensor[r]:
            continue
        a, b = _adapter.key_shapes(keys[r])
        for p in range(n_points[r]):
            if not separation[r, p] < SKIN:
                continue
            if a == hull or b == hull:
                game_over[i] = True
            for leg in range(2):
                other = -1
                if a == shapes[i, 1 + leg]:
                    other = b
                elif b == shapes[i, 1 + leg]:
                    other = a
                if other >= 0:
                    known = False
                    for q in range(size[leg]):
                        known = known or now[leg, q] == other
                    if not known:
                        if size[leg] == PARTNERS:
                            raise ValueError("a lower leg touches more terrain shapes than PARTNERS")
                        now[leg, size[leg]] = other
                        size[leg] += 1
    for leg in range(2):
        gained = False
        for q in range(size[leg]):
            seen = False
            for r in range(count[i, leg]):
                seen = seen or partners[i, leg, r] == now[leg, q]
            gained = gained or not seen
        lost = False
        for r in range(count[i, leg]):
            kept = False
            for q in range(size[leg]):
                kept = kept or partners[i, leg, r] == now[leg, q]
            lost = lost or not kept
        if gained:
            ground[i, leg] = 1.0
        if lost:
            ground[i, leg] = 0.0
        count[i, leg] = size[leg]
        for q in range(size[leg]):
            partners[i, leg, q] = now[leg, q]


@njit
def _observe(i, run, actions, bodies, shapes, ground, game_over, prev_shaping, x_of, lidar, obs, rewards,
             terminations, tables, courses):
    """Env i's observation, reward and end, as ``BipedalWalker._observe`` and ``step`` compute them (a just reset
    env: observation only, its shaping kept for the next reward)."""
    com, angle_of, vel, angvel, lc, alive = _adapter.body_arrays(borrowed_world(tables, i))
    h = bodies[i, HULL]
    angle = angle_of[h]
    c, s = math.cos(angle), math.sin(angle)
    px = com[h, 0] - (c * lc[h, 0] - s * lc[h, 1])
    py = com[h, 1] - (s * lc[h, 0] + c * lc[h, 1])
    vx, vy = vel[h, 0], vel[h, 1]
    course = courses[i]
    _lidar_fractions(course[0], course[1], course[2], course[3], course[4], course[5], course[6], course[7],
                     course[8], course[9], course[10], px, py, LIDAR_DIRECTIONS, lidar[i])
    obs[i, 0] = angle
    obs[i, 1] = 2.0 * angvel[h] / FPS
    obs[i, 2] = 0.3 * vx * (VIEWPORT_W / SCALE) / FPS
    obs[i, 3] = 0.3 * vy * (VIEWPORT_H / SCALE) / FPS
    for leg in range(2):
        for k in range(2):
            j = 2 * leg + k
            a, b = bodies[i, JOINT_A[j]], bodies[i, JOINT_B[j]]
            joint_angle = angle_of[b] - angle_of[a] - JOINT_REF[j]
            joint_speed = angvel[b] - angvel[a]
            col = 4 + 5 * leg + 2 * k
            if k == 0:
                obs[i, col] = joint_angle
                obs[i, col + 1] = joint_speed / SPEED_HIP
            else:
                obs[i, col] = joint_angle + 1.0
                obs[i, col + 1] = joint_speed / SPEED_KNEE
        obs[i, 8 + 5 * leg] = ground[i, leg]
    for r in range(10):
        obs[i, 14 + r] = lidar[i, r]
    x_of[i] = px
    shaping = 130 * px / SCALE - 5.0 * abs(angle)
    if not run[i]:
        prev_shaping[i] = shaping
        rewards[i] = 0.0
        terminations[i] = False
        return
    reward = shaping - prev_shaping[i]
    prev_shaping[i] = shaping
    total = 0.0
    for k in range(4):
        total += min(abs(actions[i, k]), 1.0)
    reward -= 0.00035 * MOTORS_TORQUE * total
    terminated = False
    if game_over[i] or px < 0:
        reward = -100.0
        terminated = True
    if px > (TERRAIN_LENGTH - TERRAIN_GRASS) * TERRAIN_STEP:
        terminated = True
    rewards[i] = reward
    terminations[i] = terminated


@numba.njit(cache=True, parallel=True)
def walker_motors(run, actions, joints, motor, tables):
    """The motors of every env of ``run`` (``_motors``), the envs spread over the threads."""
    for i in prange(run.shape[0]):
        if run[i]:
            _motors(np.int64(i), actions, joints, motor, tables)


@numba.njit(cache=True, parallel=True)
def walker_observe(run, fresh, actions, bodies, shapes, ground, partners, count, game_over, prev_shaping, x_of, lidar,
                   obs, rewards, terminations, tables, courses, bad):
    """The contacts (``_contacts``, for the envs that stepped) and the observations, rewards and ends
    (``_observe``) of every env of ``run`` whose step was not refused and of ``fresh``, spread over the threads."""
    for i in prange(run.shape[0]):
        if (run[i] and bad[i, 0] == _adapter.BODY_OK) or fresh[i]:
            if run[i]:
                _contacts(np.int64(i), shapes, ground, partners, count, game_over, tables)
            _observe(np.int64(i), run, actions, bodies, shapes, ground, game_over, prev_shaping, x_of, lidar, obs,
                     rewards, terminations, tables, courses)
