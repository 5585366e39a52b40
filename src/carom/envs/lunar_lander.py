"""LunarLander on carom: Gymnasium's ``LunarLander-v3`` task (discrete and continuous) without Box2D.

The task, as an agent sees it, is Gymnasium 1.x's: a lander (a six-sided hull of density 5 and two legs of
density 1 on revolute joints) starts at the top centre of a 20 × 13.3 m screen with a random push; the
terrain is 11 random chunks smoothed, with a flat pad between the flags at x = 8 and 12 m, y = 3.33 m. Every
step of 1/50 s an action fires nothing, the left or right orientation engine or the main engine (discrete), or
throttles them (continuous: main off below 0, 50-100 % over 0..1; side engines beyond ±0.5). Engines are
impulses at a point with the same small random dispersion; the observation is the 8 numbers of the original
(position from the pad, velocity, angle, angular velocity scaled as there, and whether each leg touches);
the reward is the same shaping difference less 0.3 per main-engine and 0.03 per side-engine frame, −100 on a
crash (the hull touches the ground) or leaving the screen (|x| ≥ 1), +100 when the lander comes to rest
(its island falls asleep). The random numbers are drawn from ``np_random`` in the original's order, so a
seed gives the original's terrain, push and engine dispersion.

Where Box2D 2.3 and carom differ, and what was done about it (each measured against the original, and the
heuristic's landings over seeds 0-49 checked: mean return 263 here, 265 there; 49 and 49 landed):

* Box2D 2.3 solves with sequential impulses and a separate position pass (the original asks for 180 velocity
  and 60 position iterations); carom solves with Box2D v3's soft step (``SUBSTEPS`` substeps, soft contacts
  and joints).
* The original builds each leg 0.6 m from its joint, at its joint's reference angle ±0.05 rad (pybox2d sets
  the reference angle to the bodies' angle at creation, so the joint limits [0.4, 0.9] and [−0.9, −0.4] are
  relative to it). Box2D's first step pulls the legs in without giving them speed (its position pass) and
  leaves them 0.54 rad open, from where their motors fold them at 0.3 rad/s; a soft step would turn that gap
  into speed, so here the legs start where Box2D's first step leaves them. That first step also drags the
  legs with the pushed hull through joints in the wrong places, which turns and shifts the whole lander in
  proportion to the random push; that is fitted (``_first_step_kick``) and given to the lander as one body
  before its first step, so that the first observation is the original's within 1e-4 and the flights agree.
* Box2D's joint limits are hard (position pass), carom's are soft springs whose stiffness scales with the
  row's effective mass; a leg alone (0.0018 kg·m²) made its folded limit give 0.07 rad under the motor's
  40 N·m. Each leg turns with ``LEG_INERTIA`` instead and the hull gives up the difference, so that the
  lander's inertia as a whole is the original's and the limits hold within 0.01 rad.
* Box2D's contact listener sets a leg's flag when a contact of the leg with a terrain edge begins and clears
  it when one ends, so a leg sliding onto the next edge loses its flag while it still stands (the observation
  then shows no contact and the heuristic flies on, which brakes a sliding lander). The agent sees that
  flag, so it is kept: carom's begin and end events of (leg, terrain segment) pairs set and clear it.
* A sliding original lander slows at about 1.6 m/s² where its friction √(0.2·0.1)·g gives 1.4 (its legs'
  skins and motors drag): the legs' friction is 0.3 here instead of Box2D's default 0.2.
* Box2D 2.3 polygons carry a 1 cm skin (``b2_polygonRadius``), so the original lander rests 1-2 cm higher and
  its contacts begin that far out; carom's shapes rest on their surface (0.003 in the observed height).
* Box2D 2.3 puts an island to sleep after 0.5 s below 0.01 m/s and 2°/s; carom's bodies sleep after
  ``SLEEP_TIME`` (0.5 s) below ``Body.sleep_threshold`` (m/s, and rad/s times the body's extent), here
  ``SLEEP_THRESHOLD``. A sleeping lander ends the episode with +100, as "not awake" does in the original.
* The exhaust particles of the original are Box2D bodies (drawn only, never touching the lander); here they
  are a few NumPy rows moved ballistically and bounced off the terrain, made only when rendering.

The step does no Python work per body: the engines are two impulses on one body, and the legs' contacts are
read from the step's contact events (``World.contact_events``, arrays).
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

import gymnasium as gym
from gymnasium import spaces
from gymnasium.error import ResetNeeded
from gymnasium.utils import EzPickle

import carom
from carom import joints
from carom.geometry import Polygon, Segment, box

from ._common import PygameWindow, step_one_thread

if TYPE_CHECKING:
    import pygame

FPS = 50
SCALE = 30.0            # pixels per metre of the original's screen
VIEWPORT_W, VIEWPORT_H = 600, 400
W, H = VIEWPORT_W / SCALE, VIEWPORT_H / SCALE

MAIN_ENGINE_POWER = 13.0
SIDE_ENGINE_POWER = 0.6
INITIAL_RANDOM = 1000.0          # N, the largest initial push in x and y (applied as a force over the first step)
LANDER_POLY = ((-14, 17), (-17, 0), (-17, -10), (17, -10), (17, 0), (14, 17))    # pixels
LEG_AWAY, LEG_DOWN = 20, 18      # pixels: where the legs hang from the hull's origin
LEG_W, LEG_H = 2, 8              # pixels, half extents of a leg
LEG_SPRING_TORQUE = 40.0         # N·m, the leg motors' largest torque
SIDE_ENGINE_HEIGHT = 14
SIDE_ENGINE_AWAY = 12
MAIN_ENGINE_Y_LOCATION = 4
CHUNKS = 11

HULL_DENSITY, LEG_DENSITY = 5.0, 1.0
GROUND_FRICTION, HULL_FRICTION = 0.1, 0.1
#: the legs: 0.3 where the original has Box2D's default 0.2 (the module docstring says why)
LEG_FRICTION = 0.3
GROUND, HULL, LEGS = 0x0001, 0x0010, 0x0020

#: the legs' joint angle when the first step begins (radians, from the folded limit's side: see _build)
LEG_START_ANGLE = 0.54
#: kg·m² each leg turns with (its box alone: 0.0018); the hull gives up the difference (see the module docstring)
LEG_INERTIA = 0.02
#: Box2D's first step beyond the push (``LunarLander._first_step_kick``): rad/s and m/s per N of push, m per N
KICK_SPIN = -2.565e-4
KICK_X, KICK_Y, KICK_Y0, KICK_ANGLE = 2.96e-5, 3.0e-5, 0.0045, -1.78e-6
KICK_VX, KICK_VY0 = 7.76e-6, -0.0079
#: carom substeps per 1/50 s step
SUBSTEPS = 4
#: m/s (and rad/s times extent) below which the lander's bodies count as resting
SLEEP_THRESHOLD = 0.05


class LunarLander(PygameWindow, gym.Env, EzPickle):
    """Land on the pad between the flags (Gymnasium's ``LunarLander-v3`` on carom; the module docstring says
    what differs from the Box2D original).

    ``continuous``: ``Box(-1, 1, (2,))`` actions (main throttle, side throttle) instead of ``Discrete(4)`` (nothing,
    left engine, main engine, right engine). ``gravity`` in (−12, 0) m/s². ``enable_wind`` adds a horizontal
    force of at most ``wind_power`` N and a torque of at most ``turbulence_power`` N·m while no leg touches,
    following tanh(sin(2kt) + sin(πkt)), k = 0.01, from a random phase. ``render_mode``: None, ``"human"`` (a
    window at ``render_fps``) or ``"rgb_array"`` (``render`` returns 400 × 600 × 3 pixels)."""

    metadata = {"render_modes": ["human", "rgb_array"], "render_fps": FPS}

    def __init__(self, render_mode: str | None = None, continuous: bool = False, gravity: float = -10.0,
                 enable_wind: bool = False, wind_power: float = 15.0, turbulence_power: float = 1.5):
        EzPickle.__init__(self, render_mode, continuous, gravity, enable_wind, wind_power, turbulence_power)
        if not -12.0 < gravity < 0.0:
            raise ValueError(f"gravity (current value: {gravity}) must be between -12 and 0")
        if not 0.0 <= wind_power <= 20.0:
            gym.logger.warn(f"wind_power value is recommended to be between 0.0 and 20.0, (current value: "
                            f"{wind_power})")
        if not 0.0 <= turbulence_power <= 2.0:
            gym.logger.warn(f"turbulence_power value is recommended to be between 0.0 and 2.0, (current value: "
                            f"{turbulence_power})")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got "
                             f"{render_mode!r}")
        self.gravity = float(gravity)
        self.enable_wind = bool(enable_wind)
        self.wind_power = float(wind_power)
        self.turbulence_power = float(turbulence_power)
        self.continuous = bool(continuous)
        self.render_mode = render_mode

        low = np.array([-2.5, -2.5, -10.0, -10.0, -2 * math.pi, -10.0, -0.0, -0.0], np.float32)
        high = np.array([2.5, 2.5, 10.0, 10.0, 2 * math.pi, 10.0, 1.0, 1.0], np.float32)
        self.observation_space = spaces.Box(low, high)
        if self.continuous:
            self.action_space = spaces.Box(-1, +1, (2,), dtype=np.float32)
        else:
            self.action_space = spaces.Discrete(4)

        self.world: carom.World | None = None
        self.lander: carom.Body | None = None
        self.legs: list[carom.Body] = []
        self.game_over = False
        self.prev_shaping: float | None = None
        self.leg_contact = np.zeros(2)
        self._state = np.zeros(8, np.float32)
        # rendering
        self.screen: pygame.Surface | None = None
        self.clock: pygame.time.Clock | None = None
        self.surf: pygame.Surface | None = None
        self.isopen = True
        self.particles = np.zeros((0, 6))      # x, y, vx, vy, ttl, kind (0 main, 1 side)
        self.sky_polys: list[list[tuple[float, float]]] = []

    # --- the world ----------------------------------------------------------------------------------------
    def _build(self) -> None:
        """A new world: terrain, hull, legs (the random numbers drawn in the original's order)."""
        rng = self.np_random
        world = carom.World(gravity=(0.0, self.gravity), substeps=SUBSTEPS)
        height = rng.uniform(0, H / 2, size=(CHUNKS + 1,))
        height[CHUNKS // 2 - 2:CHUNKS // 2 + 3] = H / 4           # the pad
        smooth_y = np.array([0.33 * (height[i - 1] + height[i] + height[i + 1]) for i in range(CHUNKS)])
        self._set_terrain(smooth_y)

        # the original's moon: two-sided edges (each on a static body of its own: adding shapes to one body
        # recomputes its mass data each time, 0.5 ms a shape); the ground's shape row first, then the terrain's
        self._terrain_shape_rows = [
            world.add_body(kind="static").add_shape(Segment(a, b), friction=GROUND_FRICTION, category=GROUND).index
            for a, b in [((0.0, 0.0), (W, 0.0))] + list(zip(self.terrain[:-1], self.terrain[1:]))]

        x0, y0 = W / 2, H
        lander = world.add_body(position=(x0, y0))
        self.hull_shape = lander.add_shape(Polygon([(x / SCALE, y / SCALE) for x, y in LANDER_POLY]),
                                           density=HULL_DENSITY, friction=HULL_FRICTION, category=HULL, mask=GROUND)
        lander.sleep_threshold = SLEEP_THRESHOLD
        push = (rng.uniform(-INITIAL_RANDOM, INITIAL_RANDOM), rng.uniform(-INITIAL_RANDOM, INITIAL_RANDOM))
        lander.apply_force(push)
        if self.enable_wind:
            self.wind_idx = int(rng.integers(-9999, 9999))
            self.torque_idx = int(rng.integers(-9999, 9999))

        legs, leg_shapes = [], []
        extra_inertia = 0.0
        for i in (-1, +1):
            # Box2D's first step leaves the leg where its joint holds it at a joint angle of about 0.54 (0.05
            # past the spread side of the folded limit, 0.4); the motor then folds it at 0.3 rad/s
            ref = i * 0.05
            theta = -i * LEG_START_ANGLE + ref
            ax, ay = i * LEG_AWAY / SCALE, LEG_DOWN / SCALE
            c, s = math.cos(theta), math.sin(theta)
            pos = (x0 - (c * ax - s * ay), y0 - (s * ax + c * ay))
            leg = world.add_body(position=pos, angle=theta)
            shape = leg.add_shape(box(LEG_W / SCALE, LEG_H / SCALE), density=LEG_DENSITY, friction=LEG_FRICTION,
                                  category=LEGS, mask=GROUND)
            leg_shapes.append(shape.index)
            leg.sleep_threshold = SLEEP_THRESHOLD
            extra_inertia += LEG_INERTIA - leg.inertia
            leg.inertia = LEG_INERTIA
            lower, upper = (0.9 - 0.5, 0.9) if i == -1 else (-0.9, -0.9 + 0.5)
            world.add_joint(joints.Revolute(lander, leg, local_anchor_a=(0.0, 0.0), local_anchor_b=(ax, ay),
                                            reference_angle=ref, lower=lower, upper=upper, motor_speed=0.3 * i,
                                            max_motor_torque=LEG_SPRING_TORQUE))
            legs.append(leg)
        lander.inertia = lander.inertia - extra_inertia
        self._unkicked = self._first_step_kick(world, [lander] + legs, push)
        self.world, self.lander, self.legs = world, lander, legs
        self._lander_row = lander.index
        self._leg_rows = np.array([legs[0].index, legs[1].index])
        self._hull_shape_row = self.hull_shape.index
        self._leg_shape_rows = leg_shapes

    def _set_terrain(self, smooth_y: np.ndarray) -> None:
        """The terrain's points (``terrain``, (CHUNKS, 2)) and the sky above it (``sky_polys``, for drawing) from the
        heights of its points."""
        chunk_x = np.array([W / (CHUNKS - 1) * i for i in range(CHUNKS)])
        self.helipad_x1 = float(chunk_x[CHUNKS // 2 - 1])
        self.helipad_x2 = float(chunk_x[CHUNKS // 2 + 1])
        self.helipad_y = H / 4
        self.terrain = np.stack([chunk_x, smooth_y], axis=1)
        self.sky_polys = [[(chunk_x[i], smooth_y[i]), (chunk_x[i + 1], smooth_y[i + 1]), (chunk_x[i + 1], H),
                           (chunk_x[i], H)] for i in range(CHUNKS - 1)]

    @staticmethod
    def _first_step_kick(world: carom.World, bodies: list, push: tuple[float, float]) -> tuple:
        """Give the lander what Box2D's first step gives it beyond the push.

        The original builds the legs 0.6 m from their joints; in its first step Box2D's position pass pulls them
        in and its velocity pass drags them with the pushed hull through joints in their wrong places, which
        leaves the whole lander turning and displaced in proportion to the push (fx, fy): measured over seeds,
        after the first step the original's hull is (3.0e-5·fx, 3.0e-5·fy + 0.0045) m further, turned by
        −1.8e-6·fx rad and turning 2.6e-4·fx rad/s faster, than a lander built in one piece (a least-squares
        fit whose residual is below 1e-3 of the effect). The lander is given that turn and shift as one rigid body before its
        first step, so that the first observation and the flight after it are the original's."""
        fx, fy = push
        rows = np.array([b.index for b in bodies])
        centres = np.array([b.world_center for b in bodies])
        starts = np.array([b.position for b in bodies])
        turned = np.array([b.angle for b in bodies])
        moving = np.array([b.velocity for b in bodies])
        hub = centres[0]
        spin = KICK_SPIN * fx
        shift = np.array([KICK_X * fx, KICK_Y * fy + KICK_Y0])
        arm = centres - hub
        velocities = moving + spin * np.stack([-arm[:, 1], arm[:, 0]], axis=1)
        velocities[:, 0] += KICK_VX * fx
        velocities[:, 1] += KICK_VY0
        turn = KICK_ANGLE * fx
        c, s = math.cos(turn), math.sin(turn)
        origins = starts - hub
        positions = hub + shift + np.stack([c * origins[:, 0] - s * origins[:, 1],
                                            s * origins[:, 0] + c * origins[:, 1]], axis=1)
        angles = turned + turn
        world.set_state(rows, positions=positions, angles=angles, velocities=velocities,
                        angular_velocities=np.full(3, spin))
        # (the bodies before the kick: what the native vector env's compiled reset starts from)
        return centres, starts, turned, moving

    # --- Gymnasium API ------------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        """Start an episode: a new terrain and lander (from ``seed`` when given, else from the environment's
        random generator), then one step with no engine; returns (observation, {}). ``options`` is not used."""
        super().reset(seed=seed)
        self.game_over = False
        self.prev_shaping = None
        self.leg_contact = np.zeros(2)
        self.particles = np.zeros((0, 6))
        self._build()
        obs = self.step(np.array([0.0, 0.0], np.float32) if self.continuous else 0)[0]
        return obs, {}

    def _check_action(self, action: Any) -> tuple[float, float]:
        """(main throttle 0 or 0.5..1, signed side throttle: 0, or ±0.5..1) from an action, or an error naming it."""
        if self.continuous:
            a = np.asarray(action, dtype=np.float64) if not isinstance(action, str) else None
            if a is None or a.shape != (2,) or not np.isfinite(a).all() or np.abs(a).max() > 1.0:
                raise gym.error.InvalidAction(f"action {action!r} is not in the action space {self.action_space} "
                                              "(two finite numbers in [-1, 1])")
            main = (min(a[0], 1.0) + 1.0) * 0.5 if a[0] > 0.0 else 0.0
            side = 0.0
            if abs(a[1]) > 0.5:
                side = math.copysign(min(max(abs(a[1]), 0.5), 1.0), a[1])
            return main, side
        if not self.action_space.contains(action):
            raise gym.error.InvalidAction(f"action {action!r} ({type(action).__name__}) is not in the action space "
                                          f"{self.action_space} (0 nothing, 1 left engine, 2 main engine, 3 right "
                                          "engine)")
        choice = int(action)
        return (1.0 if choice == 2 else 0.0), (float(choice - 2) if choice in (1, 3) else 0.0)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Fire the engines ``action`` asks for and advance the world 1/50 s; returns (observation, reward,
        terminated, truncated (always False: the time limit is the registration's), {}). ``action``: 0-3
        (discrete) or two numbers in [-1, 1] (``continuous``); anything else raises ``InvalidAction``."""
        if self.world is None:
            raise ResetNeeded("Cannot call env.step() before calling env.reset()")
        m_power, side = self._check_action(action)
        lander = self.lander
        assert lander is not None           # (built with the world)
        if self.enable_wind and not (self.leg_contact[0] or self.leg_contact[1]):
            wind = math.tanh(math.sin(0.02 * self.wind_idx) + math.sin(math.pi * 0.01 * self.wind_idx))
            self.wind_idx += 1
            torque = math.tanh(math.sin(0.02 * self.torque_idx) + math.sin(math.pi * 0.01 * self.torque_idx))
            self.torque_idx += 1
            lander.apply_force((wind * self.wind_power, 0.0))
            lander.apply_torque(torque * self.turbulence_power)

        angle = lander.angle
        px, py = lander.position
        tip = (math.sin(angle), math.cos(angle))
        side_dir = (-tip[1], tip[0])
        d0 = self.np_random.uniform(-1.0, +1.0) / SCALE
        d1 = self.np_random.uniform(-1.0, +1.0) / SCALE

        impulses, points = [], []
        if m_power > 0.0:
            # the main engine, 4 px below the origin with dispersion, pushes along the hull's axis
            reach = MAIN_ENGINE_Y_LOCATION / SCALE + 2 * d0
            ox = tip[0] * reach + side_dir[0] * d1
            oy = -tip[1] * reach - side_dir[1] * d1
            impulses.append((-ox * MAIN_ENGINE_POWER * m_power, -oy * MAIN_ENGINE_POWER * m_power))
            points.append((px + ox, py + oy))
            self._emit(px + ox, py + oy, ox * MAIN_ENGINE_POWER * m_power, oy * MAIN_ENGINE_POWER * m_power,
                       m_power, 0)
        s_power = abs(side)
        if s_power > 0.0:
            direction = math.copysign(1.0, side)
            lever = 3 * d1 + direction * SIDE_ENGINE_AWAY / SCALE
            ox = tip[0] * d0 + side_dir[0] * lever
            oy = -tip[1] * d0 - side_dir[1] * lever
            # (the original's point: 17 px along the axis in x but SIDE_ENGINE_HEIGHT = 14 px in y, kept as is)
            qx = px + ox - tip[0] * 17 / SCALE
            qy = py + oy + tip[1] * SIDE_ENGINE_HEIGHT / SCALE
            impulses.append((-ox * SIDE_ENGINE_POWER * s_power, -oy * SIDE_ENGINE_POWER * s_power))
            points.append((qx, qy))
            self._emit(qx, qy, ox * SIDE_ENGINE_POWER * s_power, oy * SIDE_ENGINE_POWER * s_power, s_power, 1)
        if len(impulses) == 1:
            lander.apply_impulse(impulses[0], points[0])
        elif impulses:
            self.world.apply_impulses([lander, lander], impulses, points)

        step_one_thread(self.world, 1.0 / FPS)
        self._read_contacts()

        px, py = lander.position
        vx, vy = lander.velocity
        state = self._state
        state[0] = (px - W / 2) / (W / 2)
        state[1] = (py - (self.helipad_y + LEG_DOWN / SCALE)) / (H / 2)
        state[2] = vx * (W / 2) / FPS
        state[3] = vy * (H / 2) / FPS
        state[4] = lander.angle
        state[5] = 20.0 * lander.angular_velocity / FPS
        state[6] = self.leg_contact[0]
        state[7] = self.leg_contact[1]
        s = state.astype(np.float64)
        # the shaping is computed from the float64 state, as the original computes it from its Python list
        s[0] = (px - W / 2) / (W / 2)
        s[1] = (py - (self.helipad_y + LEG_DOWN / SCALE)) / (H / 2)
        s[2] = vx * (W / 2) / FPS
        s[3] = vy * (H / 2) / FPS
        s[4] = lander.angle
        shaping = (-100 * math.sqrt(s[0] * s[0] + s[1] * s[1]) - 100 * math.sqrt(s[2] * s[2] + s[3] * s[3])
                   - 100 * abs(s[4]) + 10 * s[6] + 10 * s[7])
        reward = 0.0
        if self.prev_shaping is not None:
            reward = shaping - self.prev_shaping
        self.prev_shaping = shaping
        reward -= m_power * 0.30
        reward -= s_power * 0.03

        terminated = False
        if self.game_over or abs(s[0]) >= 1.0:
            terminated = True
            reward = -100.0
        if lander.sleeping:
            terminated = True
            reward = +100.0
        if self.render_mode == "human":
            self.render()
        return state.copy(), float(reward), terminated, False, {}

    def _read_contacts(self) -> None:
        """The legs' ground flags and the crash flag from this step's contact events, as the original's
        contact listener keeps them: a begin of a leg's contact with a terrain segment sets the leg's flag, an
        end clears it (in the same step the end wins: Box2D reports the newer contact first), and a begin of
        the hull's contact is a crash (module docstring)."""
        assert self.world is not None
        events = self.world.contact_events()
        begin, end = events.begin, events.end
        if begin.size:
            shapes = np.concatenate([begin["shape_a"], begin["shape_b"]])
            if (shapes == self._hull_shape_row).any():
                self.game_over = True
            for k in range(2):
                if (shapes == self._leg_shape_rows[k]).any():
                    self.leg_contact[k] = 1.0
        if end.size:
            shapes = np.concatenate([end["shape_a"], end["shape_b"]])
            for k in range(2):
                if (shapes == self._leg_shape_rows[k]).any():
                    self.leg_contact[k] = 0.0

    # --- drawing --------------------------------------------------------------------------------------------
    def _emit(self, x: float, y: float, jx: float, jy: float, power: float, kind: int) -> None:
        """An exhaust particle (drawn only): the original's particle bodies get the engine's impulse in reverse
        on masses of 3.5 and 0.7 kg/m² × π(2/30 m)²."""
        if self.render_mode is None:
            return
        mass = (3.5 if kind == 0 else 0.7) * math.pi * (2 / SCALE) ** 2
        row = np.array([[x, y, jx / mass, jy / mass, power, kind]])
        self.particles = np.concatenate([self.particles, row])

    def _move_particles(self) -> None:
        """Advance the particles one step: gravity, and a bounce (restitution 0.3) off the terrain."""
        p = self.particles
        if not p.size:
            return
        dt = 1.0 / FPS
        p[:, 3] += self.gravity * dt
        p[:, 0:2] += p[:, 2:4] * dt
        ground = np.interp(p[:, 0], self.terrain[:, 0], self.terrain[:, 1])
        below = p[:, 1] < ground
        p[below, 1] = ground[below]
        p[below, 3] = np.abs(p[below, 3]) * 0.3
        p[below, 2] *= 0.9

    def render(self) -> np.ndarray | None:
        """Draw the current frame as Gymnasium's original does: in ``"rgb_array"`` mode return it (400 × 600 × 3
        uint8), in ``"human"`` mode show it in a window at ``render_fps`` and return None (None also, with a
        warning, without a render mode)."""
        frame = self._begin_frame((VIEWPORT_W, VIEWPORT_H), ready=self.world is not None)
        if frame is None:
            return None
        pygame, gfxdraw = frame
        surf = pygame.Surface((VIEWPORT_W, VIEWPORT_H))
        surf.fill((255, 255, 255))          # the ground is white; the sky above the terrain is painted black

        self._move_particles()
        p = self.particles
        if p.size:
            p[:, 4] -= 0.15
            self.particles = p = p[p[:, 4] >= 0.0]
        for poly in self.sky_polys:
            pts = [(x * SCALE, y * SCALE) for x, y in poly]
            pygame.draw.polygon(surf, (0, 0, 0), pts)
            gfxdraw.aapolygon(surf, pts, (0, 0, 0))
        for x, y, _, _, ttl, _ in p:
            colour = (int(max(0.2, 0.15 + ttl) * 255), int(max(0.2, 0.5 * ttl) * 255),
                      int(max(0.2, 0.5 * ttl) * 255))
            pygame.draw.circle(surf, colour, (x * SCALE, y * SCALE), 2.0)
        fill, edge = (128, 102, 230), (77, 77, 128)
        hull = [(x / SCALE, y / SCALE) for x, y in LANDER_POLY]
        leg = [(-LEG_W / SCALE, -LEG_H / SCALE), (LEG_W / SCALE, -LEG_H / SCALE), (LEG_W / SCALE, LEG_H / SCALE),
               (-LEG_W / SCALE, LEG_H / SCALE)]
        assert self.lander is not None
        for body, verts in ((self.lander, hull), (self.legs[0], leg), (self.legs[1], leg)):
            (bx, by), a = body.position, body.angle
            c, s = math.cos(a), math.sin(a)
            path = [((bx + c * vx - s * vy) * SCALE, (by + s * vx + c * vy) * SCALE) for vx, vy in verts]
            pygame.draw.polygon(surf, fill, path)
            gfxdraw.aapolygon(surf, path, fill)
            pygame.draw.aalines(surf, edge, True, path)
        for x in (self.helipad_x1, self.helipad_x2):
            x = x * SCALE
            y1 = self.helipad_y * SCALE
            y2 = y1 + 50
            pygame.draw.line(surf, (255, 255, 255), (x, y1), (x, y2), 1)
            flag = [(x, y2), (x, y2 - 10), (x + 25, y2 - 5)]
            pygame.draw.polygon(surf, (204, 204, 0), flag)
            gfxdraw.aapolygon(surf, flag, (204, 204, 0))
        surf = pygame.transform.flip(surf, False, True)
        self.surf = surf
        if self.render_mode == "human":
            assert self.screen is not None and self.clock is not None
            self.screen.blit(surf, (0, 0))
            pygame.event.pump()
            self.clock.tick(self.metadata["render_fps"])
            pygame.display.flip()
            return None
        return np.transpose(np.array(pygame.surfarray.pixels3d(surf)), axes=(1, 0, 2))
