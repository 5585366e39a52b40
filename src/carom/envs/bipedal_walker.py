"""BipedalWalker on carom: Gymnasium's ``BipedalWalker-v3`` and ``BipedalWalkerHardcore-v3`` without Box2D.

The task, as an agent sees it, is Gymnasium 1.x's: a five-piece walker (a hull of density 5; two legs of two
boxes each, density 1, on revolute hip and knee joints with motors of 80 N·m at most) on 200 terrain steps of
14/30 m, smooth random grass, and in hardcore also stumps, pits and stairs. Each 1/50 s step an action in
[−1, 1]⁴ sets each joint motor's speed to its sign times 4 rad/s (hips) or 6 rad/s (knees) and its largest
torque to |a|·80 N·m. The observation is the original's 24 numbers: the hull's angle, angular velocity and
velocity (scaled as there), each joint's angle and speed, whether each lower leg touches the ground, and ten
lidar fractions along rays of 160/30 m fanning from straight down to 1.35 rad forward. The reward is the
difference of the shaping 130·x/30 − 5·|angle| less 0.00035·80·|a| per motor; −100 and the end when the hull
touches the ground or the walker walks off the left edge; the end also when it passes 190 terrain steps.
The random numbers are drawn from ``np_random`` in the original's order (terrain, clouds, push), so a seed
gives the original's course.

Where Box2D 2.3 and carom differ, and what was done about it:

* Box2D 2.3 solves with sequential impulses and a position pass (the original asks for 180 velocity and 60
  position iterations); carom solves with Box2D v3's soft step, ``SUBSTEPS`` substeps a step.
* The original builds its upper legs 0.53 m above their hip joints and its lower legs in the ground, and lets
  Box2D's first steps sort that out (the position pass moves bodies without speed): the reset step leaves the
  knees 0.2 m apart, the next snaps the walker into a crouch. Here the walker starts in that crouch
  (``START_POSE``, measured; the same for every seed), so the first observation shows the knees bent where
  the original's shows them straight (and bends them at its first step). The joints keep pybox2d's frames
  (the reference angle is the bodies' relative angle when the joint was made: ±0.05 rad at the hips), so the
  joint angles the agent reads are the original's.
* Box2D 2.3's joint limits give way by up to its angular slop (2°) under a motor; carom's hold, so the limits
  are ``LIMIT_SLOP`` wider (chosen by how far the heuristic walks, see there). In the air, joint angles and
  speeds under the same actions agree with the original's to about 0.03 rad over 12 steps.
* The terrain is the original's edges and polygons. The edges are carom chains of ``CHAIN_PIECE`` edges (smooth
  where two edges meet, solid from above), each on a static body of its own as the original's edges are; the
  obstacles are polygons. (Separate two-sided segments walked no differently.)
* Lidar: Box2D's ``world.RayCast`` with a callback that keeps the closest terrain fixture. Here the terrain is
  static, so its shapes are packed once per episode into the layout of carom's ray-cast kernels
  (``carom.geometry.raycast``), and the ten rays of a step are cast in one compiled call
  (``_lidar_fractions``) against the shapes their span crosses. The fractions are those of the same
  geometry (segment and polygon hits, Box2D's conventions).
* A lower leg's ground flag follows Box2D's contact listener: set when a contact of the leg with a terrain
  piece begins, cleared when one ends, and the hull's first contact is the fall. Box2D's contacts begin 2 cm
  out (two 1 cm skins), so here a contact counts from ``SKIN`` (``World.contact_data``).
* How far Gymnasium's heuristic walks (hull x at the fall, seeds 2000-2004): 19.8-81.7 m, mean 44.2, where the
  original walks 13.5-72.9 m, mean 42.9 (seeds 2000-2019: 43.0 m and 44.0 m); hardcore 10.4-25.5 m, mean
  17.9, the original 6.0-26.1 m, mean 17.1. The heuristic is a sensitive judge of the solver: the original
  itself walks 8 m on average with 8 velocity and 3 position iterations instead of its 180 and 60. With 4
  carom substeps the walker fell at 11 m; ``SUBSTEPS`` is 8.

The step reads all body angles and speeds as bulk arrays (``World.angles``, ``World.angular_velocities``) and
derives the joint angles and speeds from them; only the four motors' settings are written one by one.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numba
import numpy as np

import gymnasium as gym
from gymnasium import spaces
from gymnasium.error import ResetNeeded
from gymnasium.utils import EzPickle

import carom
from carom import joints
from carom.geometry import Polygon, box
from carom.geometry.raycast import raycast_world_kernel

from ._common import PygameWindow, step_one_thread

if TYPE_CHECKING:
    import pygame

FPS = 50
SCALE = 30.0
MOTORS_TORQUE = 80.0
SPEED_HIP = 4.0
SPEED_KNEE = 6.0
LIDAR_RANGE = 160 / SCALE
INITIAL_RANDOM = 5.0
HULL_POLY = ((-30, 9), (6, 9), (34, 1), (34, -8), (-30, -8))
LEG_DOWN = -8 / SCALE
LEG_W, LEG_H = 8 / SCALE, 34 / SCALE
VIEWPORT_W, VIEWPORT_H = 600, 400
TERRAIN_STEP = 14 / SCALE
TERRAIN_LENGTH = 200
TERRAIN_HEIGHT = VIEWPORT_H / SCALE / 4
TERRAIN_GRASS = 10
TERRAIN_STARTPAD = 20
FRICTION = 2.5
HULL_DENSITY, LEG_DENSITY = 5.0, 1.0
HULL_FRICTION, LEG_FRICTION = 0.1, 0.2          # the legs have Box2D's default fixture friction
TERRAIN, WALKER = 0x0001, 0x0020
GRASS, STUMP, STAIRS, PIT, STATE_COUNT = range(5)

#: The walker as Box2D leaves it after its first two steps (the same for every seed to 1e-3): (x from the start,
#: y above the start pad, angle) of the hull, then each leg's upper and lower part. The original builds the legs
#: inside the ground and 0.53 m off their hips; its reset step leaves the knees 0.2 m apart and the next step
#: snaps them into this crouch (Box2D's position pass moves bodies without speed; a soft step would turn those
#: gaps into speed), so the walker starts crouched here.
START_POSE = ((-0.0155, 2.3991, -0.0052), (0.1927, 1.6068, 0.3804), (0.1291, 0.5846, -0.5048),
              (0.1950, 1.6068, 0.3832), (0.1349, 0.5845, -0.5004))
#: m: Box2D's skins (1 cm on each polygon and edge) and its first steps hold the original's feet 3.5 cm up;
#: carom's stand on the ground
START_SINK = 0.035
#: rad: how much wider than the original's the joint limits are set. Box2D 2.3 corrects a limit only beyond its
#: angular slop (2°): a motor pushing a joint steadily into its limit holds it up to 0.03 rad past it, a joint
#: swinging into it stops nearer; carom's limits hold where they are set. The heuristic walker drives its joints
#: into their limits every stride and is sensitive to this (mean distance over seeds 2000-2019: 15.7 m at −0.02,
#: 38.0 at 0, 43.0 at 0.005, 42.1 at 0.01, 32.0 at 0.02, 28.8 at 0.03; the original 44.0)
LIMIT_SLOP = 0.005
#: m: how near a contact counts as touching for the flags the agent sees (Box2D 2.3's two 1 cm skins)
SKIN = 0.02
#: terrain edges per chain (each chain is smooth along itself; the pieces meet as separate edges do)
CHAIN_PIECE = 10
#: carom substeps per 1/50 s step
SUBSTEPS = 8

MOTOR_SPEEDS = np.array([SPEED_HIP, SPEED_KNEE, SPEED_HIP, SPEED_KNEE])
LIDAR_DIRECTIONS = np.array([(math.sin(1.5 * i / 10.0) * LIDAR_RANGE, -math.cos(1.5 * i / 10.0) * LIDAR_RANGE)
                             for i in range(10)])


@numba.njit(cache=True)
def _lidar_fractions(vertices, normals, offsets, counts, radii, xs, ys, cs, ss, xmin, xmax, ox, oy, directions,
                     out):
    """The first-hit fraction of each ray ``(ox, oy) → (ox, oy) + directions[i]`` over the packed shapes (1.0
    where none is hit); a shape whose x extent [xmin, xmax] misses the ray's is skipped."""
    for i in range(directions.shape[0]):
        dx = directions[i, 0]
        dy = directions[i, 1]
        lo = min(ox, ox + dx)
        hi = max(ox, ox + dx)
        best = 1.0
        for k in range(offsets.shape[0]):
            if xmax[k] < lo or xmin[k] > hi:
                continue
            a = offsets[k]
            b = a + counts[k]
            hit, t, _, _, _, _ = raycast_world_kernel(vertices[a:b], normals[a:b], radii[k], xs[k], ys[k], cs[k],
                                                      ss[k], ox, oy, dx, dy)
            if hit and t < best:
                best = t
        out[i] = best


class BipedalWalker(PygameWindow, gym.Env, EzPickle):
    """Walk to the end of the course (Gymnasium's ``BipedalWalker-v3`` on carom; ``hardcore=True`` adds stumps,
    pits and stairs; the module docstring says what differs from the Box2D original).

    ``render_mode``: None, ``"human"`` (a window at ``render_fps``) or ``"rgb_array"`` (``render`` returns
    400 × 600 × 3 pixels)."""

    metadata = {"render_modes": ["human", "rgb_array"], "render_fps": FPS}

    def __init__(self, render_mode: str | None = None, hardcore: bool = False):
        EzPickle.__init__(self, render_mode, hardcore)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got "
                             f"{render_mode!r}")
        self.hardcore = bool(hardcore)
        self.render_mode = render_mode
        pi = math.pi
        low = np.array([-pi, -5.0, -5.0, -5.0, -pi, -5.0, -pi, -5.0, -0.0, -pi, -5.0, -pi, -5.0, -0.0]
                       + [-1.0] * 10, np.float32)
        high = np.array([pi, 5.0, 5.0, 5.0, pi, 5.0, pi, 5.0, 5.0, pi, 5.0, pi, 5.0, 5.0] + [1.0] * 10, np.float32)
        self.action_space = spaces.Box(np.array([-1, -1, -1, -1], np.float32), np.array([1, 1, 1, 1], np.float32))
        self.observation_space = spaces.Box(low, high)
        self.world: carom.World | None = None
        self.hull: carom.Body | None = None
        self.legs: list[carom.Body] = []
        self.joints: list[joints.Joint] = []
        self.game_over = False
        self.prev_shaping: float | None = None
        self.scroll = 0.0
        self.lidar_render = 0
        self.lidar_fractions = np.ones(10)
        self._state = np.zeros(24, np.float32)
        self.screen: pygame.Surface | None = None
        self.clock: pygame.time.Clock | None = None
        self.surf: pygame.Surface | None = None
        self.isopen = True

    # --- the course ---------------------------------------------------------------------------------------
    def _generate_terrain(self) -> None:
        """The original's course, drawing the same random numbers in the same order: ``terrain_x``,
        ``terrain_y`` (the surface, 200 points), ``obstacles`` (polygons: pit walls, stumps, stair steps)."""
        rng = self.np_random
        state, velocity, y = GRASS, 0.0, TERRAIN_HEIGHT
        counter: int | np.int64 = TERRAIN_STARTPAD      # (np.int64 once drawn, as in the original)
        oneshot = False
        stair_steps: int | np.int64 = 0
        stair_width: int | np.int64 = 0
        stair_height = 0
        original_y = 0.0
        xs, ys, obstacles = [], [], []
        step = TERRAIN_STEP
        for i in range(TERRAIN_LENGTH):
            x = i * step
            xs.append(x)
            if state == GRASS and not oneshot:
                velocity = 0.8 * velocity + 0.01 * np.sign(TERRAIN_HEIGHT - y)
                if i > TERRAIN_STARTPAD:
                    velocity += rng.uniform(-1, 1) / SCALE
                y += velocity
            elif state == PIT and oneshot:
                counter = rng.integers(3, 5)
                wall = [(x, y), (x + step, y), (x + step, y - 4 * step), (x, y - 4 * step)]
                obstacles.append(wall)
                obstacles.append([(px + step * counter, py) for px, py in wall])
                counter += 2
                original_y = y
            elif state == PIT and not oneshot:
                y = original_y
                if counter > 1:
                    y -= 4 * step
            elif state == STUMP and oneshot:
                counter = rng.integers(1, 3)
                obstacles.append([(x, y), (x + counter * step, y), (x + counter * step, y + counter * step),
                                  (x, y + counter * step)])
            elif state == STAIRS and oneshot:
                stair_height = +1 if rng.random() > 0.5 else -1
                stair_width = rng.integers(4, 5)
                stair_steps = rng.integers(3, 5)
                original_y = y
                for s in range(stair_steps):
                    x0, x1 = x + s * stair_width * step, x + (1 + s) * stair_width * step
                    top, bottom = y + s * stair_height * step, y + (-1 + s * stair_height) * step
                    obstacles.append([(x0, top), (x1, top), (x1, bottom), (x0, bottom)])
                counter = stair_steps * stair_width
            elif state == STAIRS and not oneshot:
                s = stair_steps * stair_width - counter - stair_height
                y = original_y + (s / stair_width * stair_height) * step
            oneshot = False
            ys.append(y)
            counter -= 1
            if counter == 0:
                counter = rng.integers(TERRAIN_GRASS // 2, TERRAIN_GRASS)
                if state == GRASS and self.hardcore:
                    state = int(rng.integers(1, STATE_COUNT))
                else:
                    state = GRASS
                oneshot = True
        self.terrain_x = np.array(xs)
        self.terrain_y = np.array(ys)
        self.obstacles = obstacles

    def _generate_clouds(self) -> None:
        """Ten clouds (drawn only), from the original's random numbers."""
        rng = self.np_random
        self.cloud_poly = []
        for _ in range(TERRAIN_LENGTH // 20):
            x = rng.uniform(0, TERRAIN_LENGTH) * TERRAIN_STEP
            y = VIEWPORT_H / SCALE * 3 / 4
            poly = [(x + 15 * TERRAIN_STEP * math.sin(3.14 * 2 * a / 5) + rng.uniform(0, 5 * TERRAIN_STEP),
                     y + 5 * TERRAIN_STEP * math.cos(3.14 * 2 * a / 5) + rng.uniform(0, 5 * TERRAIN_STEP))
                    for a in range(5)]
            self.cloud_poly.append((poly, min(p[0] for p in poly), max(p[0] for p in poly)))

    @staticmethod
    def _lidar_layout(surface: np.ndarray, obstacles: list) -> tuple:
        """The terrain in the packed layout of carom's ray-cast kernels (``carom.geometry.raycast``): each
        surface edge a segment (its core the two ends, its normals the two faces'), then each obstacle polygon;
        all placed at the origin. Also each shape's x extent."""
        n = surface.shape[0] - 1
        d = surface[1:] - surface[:-1]
        face = np.stack([d[:, 1], -d[:, 0]], axis=1) / np.hypot(d[:, 0], d[:, 1])[:, None]
        seg_vertices = np.stack([surface[:-1], surface[1:]], axis=1).reshape(-1, 2)
        seg_normals = np.stack([face, -face], axis=1).reshape(-1, 2)
        vertices = np.concatenate([seg_vertices] + [p.vertices for p in obstacles])
        normals = np.concatenate([seg_normals] + [p.normals for p in obstacles])
        counts = np.array([2] * n + [p.vertices.shape[0] for p in obstacles], np.int64)
        offsets = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        k = counts.shape[0]
        radii, xs, ys, cs, ss = np.zeros(k), np.zeros(k), np.zeros(k), np.ones(k), np.zeros(k)
        xmin = np.minimum.reduceat(vertices[:, 0], offsets)
        xmax = np.maximum.reduceat(vertices[:, 0], offsets)
        return (vertices, normals, offsets, counts, radii, xs, ys, cs, ss), xmin, xmax

    def _build(self) -> None:
        world = carom.World(gravity=(0.0, -10.0), substeps=SUBSTEPS)
        self._generate_terrain()
        self._generate_clouds()
        surface = np.stack([self.terrain_x, self.terrain_y], axis=1)
        # each terrain piece on a static body of its own, as in the original (and because a static body's mass
        # data are recomputed over all its shapes at each shape added: one body of 200 shapes cost 0.3 s a reset)
        for start in range(0, TERRAIN_LENGTH - 1, CHAIN_PIECE):
            piece = world.add_body(kind="static")
            piece.add_chain(surface[start:start + CHAIN_PIECE + 1], friction=FRICTION, category=TERRAIN)
        obstacles = [Polygon(poly) for poly in self.obstacles]
        for shape in obstacles:
            world.add_body(kind="static").add_shape(shape, friction=FRICTION, category=TERRAIN)
        self._lidar_pack, self._lidar_xmin, self._lidar_xmax = self._lidar_layout(surface, obstacles)
        self.terrain_poly = [([(xs0, ys0), (xs1, ys1), (xs1, 0.0), (xs0, 0.0)],
                              (102, 153, 76)) for xs0, ys0, xs1, ys1 in
                             zip(self.terrain_x[:-1], self.terrain_y[:-1], self.terrain_x[1:], self.terrain_y[1:])]

        init_x = TERRAIN_STEP * TERRAIN_STARTPAD / 2
        init_y = TERRAIN_HEIGHT + 2 * LEG_H
        hull_shape = Polygon([(x / SCALE, y / SCALE) for x, y in HULL_POLY])
        leg_shape = box(LEG_W / 2, LEG_H / 2)
        lower_shape = box(0.8 * LEG_W / 2, LEG_H / 2)
        ground_y = TERRAIN_HEIGHT - START_SINK
        poses = [(init_x + dx, ground_y + dy, angle) for dx, dy, angle in START_POSE]
        hull = world.add_body(position=poses[0][:2], angle=poses[0][2])
        self.hull_shape = hull.add_shape(hull_shape, density=HULL_DENSITY, friction=HULL_FRICTION, category=WALKER,
                                         mask=TERRAIN)
        push = self.np_random.uniform(-INITIAL_RANDOM, INITIAL_RANDOM)
        legs, jts, lower_shapes = [], [], []
        for side, i in enumerate((-1, +1)):
            upper_pose, lower_pose = poses[1 + 2 * side], poses[2 + 2 * side]
            leg = world.add_body(position=upper_pose[:2], angle=upper_pose[2])
            leg.add_shape(leg_shape, density=LEG_DENSITY, friction=LEG_FRICTION, category=WALKER, mask=TERRAIN)
            jts.append(world.add_joint(joints.Revolute(
                hull, leg, local_anchor_a=(0.0, LEG_DOWN), local_anchor_b=(0.0, LEG_H / 2), reference_angle=i * 0.05,
                lower=-0.8 - LIMIT_SLOP, upper=1.1 + LIMIT_SLOP, motor_speed=float(i), max_motor_torque=MOTORS_TORQUE)))
            lower = world.add_body(position=lower_pose[:2], angle=lower_pose[2])
            lower_shapes.append(lower.add_shape(lower_shape, density=LEG_DENSITY, friction=LEG_FRICTION,
                                                category=WALKER, mask=TERRAIN).index)
            jts.append(world.add_joint(joints.Revolute(
                leg, lower, local_anchor_a=(0.0, -LEG_H / 2), local_anchor_b=(0.0, LEG_H / 2), reference_angle=0.0,
                lower=-1.6 - LIMIT_SLOP, upper=-0.1 + LIMIT_SLOP, motor_speed=1.0, max_motor_torque=MOTORS_TORQUE)))
            legs += [leg, lower]
        # the push: a force over the original's first step, on the hull
        hull.velocity = (push / FPS / hull.mass, 0.0)
        self.world, self.hull, self.legs, self.joints = world, hull, legs, jts
        self._lower_shape_rows = lower_shapes
        self._hull_shape_row = self.hull_shape.index
        self._leg_pairs: list[set[int]] = [set(), set()]
        self._motor = (np.array([-1.0, 1.0, 1.0, 1.0]), np.full(4, MOTORS_TORQUE))
        # rows of the bulk arrays (World.bodies order: hull, then each leg's upper and lower part)
        order = [b.index for b in world.bodies]
        self._rows = np.array([order.index(b.index) for b in [hull] + legs])
        self._joint_a = self._rows[[0, 1, 0, 3]]
        self._joint_b = self._rows[[1, 2, 3, 4]]
        self._joint_ref = np.array([-0.05, 0.0, 0.05, 0.0])

    # --- Gymnasium API ------------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        """Start an episode: a new course and walker (from ``seed`` when given, else from the environment's random
        generator); returns (observation, {}). ``options`` is not used."""
        super().reset(seed=seed)
        self.game_over = False
        self.prev_shaping = None
        self.scroll = 0.0
        self.lidar_render = 0
        self.ground_contact = np.ones(2)        # the original's first step begins both feet's contacts
        self._build()
        obs = self._observe()
        self.prev_shaping = self._shaping
        if self.render_mode == "human":
            self.render()
        return obs, {}

    def _check_action(self, action: Any) -> np.ndarray:
        a = None if isinstance(action, str) else np.asarray(action, dtype=np.float64)
        if a is None or a.shape != (4,) or not np.isfinite(a).all() or np.abs(a).max() > 1.0:
            raise gym.error.InvalidAction(f"action {action!r} is not in the action space {self.action_space} (four "
                                          "finite numbers in [-1, 1]: hip and knee of each leg)")
        return a

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Set the four joint motors from ``action`` (four numbers in [-1, 1]: hip and knee of each leg; anything
        else raises ``InvalidAction``) and advance the world 1/50 s; returns (observation, reward, terminated,
        truncated (always False: the time limit is the registration's), {})."""
        if self.world is None:
            raise ResetNeeded("Cannot call env.step() before calling env.reset()")
        a = self._check_action(action)
        speeds = np.sign(a) * MOTOR_SPEEDS
        torques = np.minimum(np.abs(a), 1.0) * MOTORS_TORQUE
        for k in np.flatnonzero((speeds != self._motor[0]) | (torques != self._motor[1])):
            joint = self.joints[k]
            joint.motor_speed = float(speeds[k])
            joint.max_motor_torque = float(torques[k])
        self._motor = (speeds, torques)
        step_one_thread(self.world, 1.0 / FPS)
        self._read_contacts()

        state = self._observe()
        px = self._x
        shaping = self._shaping
        reward = 0.0
        if self.prev_shaping is not None:
            reward = shaping - self.prev_shaping
        self.prev_shaping = shaping
        reward -= 0.00035 * MOTORS_TORQUE * float(np.minimum(np.abs(a), 1.0).sum())
        terminated = False
        if self.game_over or px < 0:
            reward = -100.0
            terminated = True
        if px > (TERRAIN_LENGTH - TERRAIN_GRASS) * TERRAIN_STEP:
            terminated = True
        if self.render_mode == "human":
            self.render()
        return state, float(reward), terminated, False, {}

    def _observe(self) -> np.ndarray:
        """The 24 numbers the agent sees, from the bodies' bulk arrays and the lidar (also ``_x``, the hull's x,
        and ``_shaping``)."""
        world = self.world
        hull = self.hull
        assert world is not None and hull is not None
        angles = world.angles
        spins = world.angular_velocities
        px, py = hull.position
        vx, vy = hull.velocity
        _lidar_fractions(*self._lidar_pack, self._lidar_xmin, self._lidar_xmax, px, py, LIDAR_DIRECTIONS,
                         self.lidar_fractions)
        ja = angles[self._joint_b] - angles[self._joint_a] - self._joint_ref
        js = spins[self._joint_b] - spins[self._joint_a]
        hull_angle = angles[self._rows[0]]
        state = self._state
        state[0] = hull_angle
        state[1] = 2.0 * spins[self._rows[0]] / FPS
        state[2] = 0.3 * vx * (VIEWPORT_W / SCALE) / FPS
        state[3] = 0.3 * vy * (VIEWPORT_H / SCALE) / FPS
        state[4] = ja[0]
        state[5] = js[0] / SPEED_HIP
        state[6] = ja[1] + 1.0
        state[7] = js[1] / SPEED_KNEE
        state[8] = self.ground_contact[0]
        state[9] = ja[2]
        state[10] = js[2] / SPEED_HIP
        state[11] = ja[3] + 1.0
        state[12] = js[3] / SPEED_KNEE
        state[13] = self.ground_contact[1]
        state[14:] = self.lidar_fractions
        self.scroll = px - VIEWPORT_W / SCALE / 5
        self._x = px
        self._shaping = 130 * px / SCALE - 5.0 * abs(hull_angle)
        return state.copy()

    def _read_contacts(self) -> None:
        """Lower legs' ground flags and the fall, as the original's contact listener keeps them.

        Box2D 2.3 gives every polygon and edge a 1 cm skin, so its contacts begin when the shapes come within
        2 cm of each other. The flags here follow that: a (lower leg, terrain shape) pair counts as touching
        when the contact's closest point is within ``SKIN`` (``World.contact_data``); a pair that starts
        touching sets the leg's flag, one that stops clears it (in the same step the clearing wins: Box2D
        reports the newer contact first). The hull falls when any of its contacts comes within the skin."""
        assert self.world is not None
        c = self.world.contact_data()
        near = c.separation < SKIN
        sa, sb = c.shape_a[near], c.shape_b[near]
        if (sa == self._hull_shape_row).any() or (sb == self._hull_shape_row).any():
            self.game_over = True
        for k in range(2):
            leg = self._lower_shape_rows[k]
            now = set(sb[sa == leg].tolist()) | set(sa[sb == leg].tolist())
            before = self._leg_pairs[k]
            if now != before:
                if now - before:
                    self.ground_contact[k] = 1.0
                if before - now:
                    self.ground_contact[k] = 0.0
                self._leg_pairs[k] = now

    # --- drawing --------------------------------------------------------------------------------------------
    def render(self) -> np.ndarray | None:
        """Draw the current frame as Gymnasium's original does: in ``"rgb_array"`` mode return it (400 × 600 × 3
        uint8), in ``"human"`` mode show it in a window at ``render_fps`` and return None (None also, with a
        warning, without a render mode)."""
        frame = self._begin_frame((VIEWPORT_W, VIEWPORT_H), ready=self.world is not None)
        if frame is None:
            return None
        pygame, gfxdraw = frame
        scroll = self.scroll
        surf = pygame.Surface((VIEWPORT_W + max(0.0, scroll) * SCALE, VIEWPORT_H))
        pygame.draw.polygon(surf, (215, 215, 255), [(scroll * SCALE, 0), (scroll * SCALE + VIEWPORT_W, 0),
                                                    (scroll * SCALE + VIEWPORT_W, VIEWPORT_H),
                                                    (scroll * SCALE, VIEWPORT_H)])
        for poly, x1, x2 in self.cloud_poly:
            if x2 < scroll / 2 or x1 > scroll / 2 + VIEWPORT_W / SCALE:
                continue
            pts = [(p[0] * SCALE + scroll * SCALE / 2, p[1] * SCALE) for p in poly]
            pygame.draw.polygon(surf, (255, 255, 255), pts)
            gfxdraw.aapolygon(surf, pts, (255, 255, 255))
        for poly, colour in self.terrain_poly:
            if poly[1][0] < scroll or poly[0][0] > scroll + VIEWPORT_W / SCALE:
                continue
            pts = [(x * SCALE, y * SCALE) for x, y in poly]
            pygame.draw.polygon(surf, colour, pts)
            gfxdraw.aapolygon(surf, pts, colour)

        self.lidar_render = (self.lidar_render + 1) % 100
        i = self.lidar_render
        assert self.hull is not None
        if i < 20:
            k = i if i < 10 else 19 - i
            (hx, hy) = self.hull.position
            f = self.lidar_fractions[k]
            end = (hx + f * LIDAR_DIRECTIONS[k, 0], hy + f * LIDAR_DIRECTIONS[k, 1])
            pygame.draw.line(surf, (255, 0, 0), (hx * SCALE, hy * SCALE), (end[0] * SCALE, end[1] * SCALE), 1)

        def draw_poly(points, fill, edge):
            pygame.draw.polygon(surf, fill, points)
            gfxdraw.aapolygon(surf, points, fill)
            pygame.draw.polygon(surf, edge, points + [points[0]], width=1)
            gfxdraw.aapolygon(surf, points, edge)

        # terrain edges (the surface line, alternating greens) and obstacles
        for i in range(TERRAIN_LENGTH - 1):
            x0, x1 = self.terrain_x[i], self.terrain_x[i + 1]
            if x1 < scroll or x0 > scroll + VIEWPORT_W / SCALE:
                continue
            colour = (76, 255 if i % 2 == 0 else 204, 76)
            pygame.draw.aaline(surf, colour, (x0 * SCALE, self.terrain_y[i] * SCALE),
                               (x1 * SCALE, self.terrain_y[i + 1] * SCALE))
        for poly in self.obstacles:
            if poly[1][0] < scroll or poly[0][0] > scroll + VIEWPORT_W / SCALE:
                continue
            draw_poly([(x * SCALE, y * SCALE) for x, y in poly], (255, 255, 255), (153, 153, 153))
        leg_box = [(-LEG_W / 2, -LEG_H / 2), (LEG_W / 2, -LEG_H / 2), (LEG_W / 2, LEG_H / 2), (-LEG_W / 2, LEG_H / 2)]
        lower_box = [(0.8 * x, y) for x, y in leg_box]
        hull_poly = [(x / SCALE, y / SCALE) for x, y in HULL_POLY]
        sides = (-1, -1, 1, 1)
        for body, verts, side in zip(self.legs, (leg_box, lower_box, leg_box, lower_box), sides):
            fill = (153 - side * 25, 76 - side * 25, 127 - side * 25)
            edge = (102 - side * 25, 51 - side * 25, 76 - side * 25)
            draw_poly(self._world_points(body, verts), fill, edge)
        draw_poly(self._world_points(self.hull, hull_poly), (127, 51, 229), (76, 76, 127))

        flagy1 = TERRAIN_HEIGHT * SCALE
        flagy2 = flagy1 + 50
        x = TERRAIN_STEP * 3 * SCALE
        pygame.draw.aaline(surf, (0, 0, 0), (x, flagy1), (x, flagy2))
        flag = [(x, flagy2), (x, flagy2 - 10), (x + 25, flagy2 - 5)]
        pygame.draw.polygon(surf, (230, 51, 0), flag)
        pygame.draw.lines(surf, (0, 0, 0), False, flag + [flag[0]], 1)
        surf = pygame.transform.flip(surf, False, True)
        self.surf = surf
        if self.render_mode == "human":
            assert self.screen is not None and self.clock is not None
            self.screen.blit(surf, (-scroll * SCALE, 0))
            pygame.event.pump()
            self.clock.tick(self.metadata["render_fps"])
            pygame.display.flip()
            return None
        return np.transpose(np.array(pygame.surfarray.pixels3d(surf)), axes=(1, 0, 2))[:, -VIEWPORT_W:]

    @staticmethod
    def _world_points(body, verts) -> list:
        (bx, by), a = body.position, body.angle
        c, s = math.cos(a), math.sin(a)
        return [((bx + c * x - s * y) * SCALE, (by + s * x + c * y) * SCALE) for x, y in verts]
