"""The car of CarRacing on carom: a hull of four polygons and four wheels on revolute joints, driven by the
original's tyre model.

The tyre model is not a contact model (the track is flat and the car touches nothing): each step, for each
wheel, from its forward and sideways speed vf, vs and its spin ω (a number the model keeps, with the wheel's
radius r and moment of inertia I):

* the engine (rear wheels) adds dt·P·gas/I/(|ω| + 5) to ω; a brake of 0.9 or more stops ω, a lighter one takes
  up to 15·brake rad/s off it;
* the ground pushes with f = k·(ω·r − vf) along the wheel and p = −k·vs across it, k = 205000·SIZE², the pair
  scaled down to the friction limit (FRICTION_LIMIT on road, 0.6 of it on grass) when longer;
* ω loses dt·f·r/I, and the force (f, p) acts on the wheel's centre for the next step.

These are the original's (Gymnasium's ``car_dynamics``), and its constants carry over. Here the four wheels are
one set of NumPy rows: their poses and speeds are read from carom's bulk arrays and the four forces written with
one ``World.apply_forces``, so a step does no Python work per wheel beyond the steering motors' settings.

Box2D 2.3 against carom: the steering joints are revolute joints with limits ±0.4 rad and motors (at most
64.8 N·m) driven towards the steering angle at up to 3 rad/s, as there; carom's soft step holds the wheels on
the hull as Box2D's joint solver does at the original's 1/50 s step (the wheels weigh a twelfth of the hull).
"""
from __future__ import annotations

import math

import numpy as np

import carom
from carom import joints
from carom.geometry import Polygon

SIZE = 0.02
ENGINE_POWER = 100000000 * SIZE * SIZE
WHEEL_MOMENT_OF_INERTIA = 4000 * SIZE * SIZE
FRICTION_LIMIT = 1000000 * SIZE * SIZE
GRIP = 205000 * SIZE * SIZE
WHEEL_R = 27
WHEEL_W = 14
WHEELPOS = ((-55, +80), (+55, +80), (-55, -82), (+55, -82))
HULL_POLY1 = ((-60, +130), (+60, +130), (+60, +110), (-60, +110))
HULL_POLY2 = ((-15, +120), (+15, +120), (+20, +20), (-20, 20))
HULL_POLY3 = ((+25, +20), (+50, -10), (+50, -40), (+20, -90), (-20, -90), (-50, -40), (-50, -10), (-25, +20))
HULL_POLY4 = ((-50, -120), (+50, -120), (+50, -90), (-50, -90))
HULL_POLYS = (HULL_POLY1, HULL_POLY2, HULL_POLY3, HULL_POLY4)
WHEEL_POLY = ((-WHEEL_W, +WHEEL_R), (+WHEEL_W, +WHEEL_R), (+WHEEL_W, -WHEEL_R), (-WHEEL_W, -WHEEL_R))
WHEEL_COLOR = (0, 0, 0)
WHEEL_WHITE = (77, 77, 77)
MUD_COLOR = (102, 102, 0)
HULL_COLOR = (204, 0, 0)
BRAKE_FORCE = 15.0                   # rad/s taken off a wheel's spin per step at full (light) braking
STEER_LIMIT = 0.4
STEER_TORQUE = 180 * 900 * SIZE * SIZE
WHEEL_CATEGORY = 0x0020


class Car:
    """The car's bodies in a carom world and the state of its tyre model (one row per wheel: front left, front
    right, rear left, rear right).

    The hull and wheels are added to ``world`` with the hull's origin at (``init_x``, ``init_y``), all turned by
    ``init_angle`` (radians; 0 points the car along +y)."""

    def __init__(self, world: carom.World, init_angle: float, init_x: float, init_y: float):
        self.world = world
        self.hull = world.add_body(position=(init_x, init_y), angle=init_angle)
        for poly in HULL_POLYS:
            self.hull.add_shape(Polygon([(x * SIZE, y * SIZE) for x, y in poly]), density=1.0)
        c, s = math.cos(init_angle), math.sin(init_angle)
        wheel_shape = Polygon([(x * SIZE, y * SIZE) for x, y in WHEEL_POLY])
        self.wheels = []
        self.joints = []
        for wx, wy in WHEELPOS:
            lx, ly = wx * SIZE, wy * SIZE
            wheel = world.add_body(position=(init_x + c * lx - s * ly, init_y + s * lx + c * ly), angle=init_angle)
            wheel.add_shape(wheel_shape, density=0.1, category=WHEEL_CATEGORY, mask=0x0001)
            self.joints.append(world.add_joint(joints.Revolute(
                self.hull, wheel, local_anchor_a=(lx, ly), local_anchor_b=(0.0, 0.0), reference_angle=0.0,
                lower=-STEER_LIMIT, upper=STEER_LIMIT, motor_speed=0.0, max_motor_torque=STEER_TORQUE)))
            self.wheels.append(wheel)
        self.wheel_shape_rows = np.array([w.shapes[0].index for w in self.wheels])
        rows = [b.index for b in world.bodies]
        self._hull_row = rows.index(self.hull.index)
        self._wheel_rows = np.array([rows.index(w.index) for w in self.wheels])
        self.wheel_rad = WHEEL_R * SIZE
        self.gas_level = np.zeros(4)
        self.brake_level = np.zeros(4)
        self.steer_target = np.zeros(4)
        self.phase = np.zeros(4)
        self.omega = np.zeros(4)
        self.on_road = np.zeros(4, np.bool_)
        self.fuel_spent = 0.0
        self._motor_speed = np.zeros(4)
        # skid marks (drawn only): per wheel the start of a skid and the open mark; marks are (colour, points)
        self.skid_start: list = [None] * 4
        self.skid_mark: list = [None] * 4
        self.particles: list = []

    # --- controls (the original's) --------------------------------------------------------------------------
    def gas(self, gas: float) -> None:
        """Rear-wheel drive: the throttle rises by at most 0.1 a step towards ``gas`` (clipped to 0..1) and drops
        at once."""
        g = min(max(float(gas), 0.0), 1.0)
        rear = self.gas_level[2:4]
        rear += np.minimum(g - rear, 0.1)

    def brake(self, b: float) -> None:
        """Brake all wheels at ``b`` (0..1): 0.9 or more blocks them."""
        self.brake_level[:] = b

    def steer(self, s: float) -> None:
        """Steering target of the front wheels (−1..1 as the joint's limit ±0.4 rad allows)."""
        self.steer_target[0:2] = s

    # --- the tyre model ---------------------------------------------------------------------------------------
    def step(self, dt: float, angles: np.ndarray, velocities: np.ndarray, positions: np.ndarray | None,
             friction_limit: np.ndarray) -> None:
        """One step of ``dt`` seconds of the model (module docstring): steering motors, wheel spins, and the wheels'
        forces for the next world step. ``angles`` and ``velocities`` are the world's bulk arrays;
        ``friction_limit`` per wheel; ``positions`` (or None when nothing is drawn) for the skid marks."""
        wheel_angle = angles[self._wheel_rows]
        joint_angle = wheel_angle - angles[self._hull_row]
        gap = self.steer_target - joint_angle
        speed = np.sign(gap) * np.minimum(50.0 * np.abs(gap), 3.0)
        for k in np.flatnonzero(speed != self._motor_speed):
            self.joints[k].motor_speed = float(speed[k])
        self._motor_speed = speed

        c, s = np.cos(wheel_angle), np.sin(wheel_angle)
        v = velocities[self._wheel_rows]
        vf = -s * v[:, 0] + c * v[:, 1]          # along the wheel (its local +y)
        vs = c * v[:, 0] + s * v[:, 1]           # across it (its local +x)
        omega = self.omega
        omega += dt * ENGINE_POWER * self.gas_level / WHEEL_MOMENT_OF_INERTIA / (np.abs(omega) + 5.0)
        self.fuel_spent += dt * ENGINE_POWER * float(self.gas_level.sum())
        brake = self.brake_level
        blocked = brake >= 0.9
        omega[blocked] = 0.0
        light = (brake > 0.0) & ~blocked
        if light.any():
            cut = np.minimum(BRAKE_FORCE * brake, np.abs(omega))
            omega[light] -= (np.sign(omega) * cut)[light]
        self.phase += omega * dt
        f = (omega * self.wheel_rad - vf) * GRIP
        p = -vs * GRIP
        force = np.hypot(f, p)
        if positions is not None:
            self._skids(force, friction_limit, positions[self._wheel_rows])
        over = force > friction_limit
        if over.any():
            scale = np.where(over, friction_limit / np.where(over, force, 1.0), 1.0)
            f *= scale
            p *= scale
        omega -= dt * f * self.wheel_rad / WHEEL_MOMENT_OF_INERTIA
        forces = np.stack([p * c - f * s, p * s + f * c], axis=1)
        self.world.apply_forces(self.wheels, forces)

    def _skids(self, force: np.ndarray, friction_limit: np.ndarray, positions: np.ndarray) -> None:
        """The original's skid marks: a wheel pushing beyond twice its friction limit leaves a line (black on
        road, mud on grass), up to 30 points long; at most 30 lines are kept."""
        for k in range(4):
            if force[k] > 2.0 * friction_limit[k]:
                grass = not self.on_road[k]
                mark = self.skid_mark[k]
                if mark is not None and mark[2] == grass and len(mark[1]) < 30:
                    mark[1].append(tuple(positions[k]))
                elif self.skid_start[k] is None:
                    self.skid_start[k] = tuple(positions[k])
                else:
                    mark = [MUD_COLOR if grass else WHEEL_COLOR, [self.skid_start[k], tuple(positions[k])], grass]
                    self.particles.append(mark)
                    del self.particles[:-30]
                    self.skid_mark[k] = mark
                    self.skid_start[k] = None
            else:
                self.skid_start[k] = None
                self.skid_mark[k] = None
