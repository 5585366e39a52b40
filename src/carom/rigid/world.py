"""The rigid-body world: bodies and shapes as handles over structure-of-arrays storage.

Python validates input and keeps handles; ``World.step`` is one compiled call (``_step.step_kernel``).
Arrays grow by doubling. A handle is (world, index, generation): a removed body's slot may be reused, and
the old handle then raises :class:`StaleHandleError` instead of aliasing the new body.
"""
from typing import TYPE_CHECKING
if TYPE_CHECKING:  # (annotations only)
    from typing import Tuple
    from .._types import Any, ArrayLike, Bits, Optional, Points, TransformLike, Vec2
import copy
import math
from collections import namedtuple

import numpy as np

from .. import _validate
from .._jit import (announce_compile, compile_helper, start_compile_helper, cycles_per_second, step_threads,
                    ThreadGovernor)
from ..constants import (MAX_TIME_STEP, WORLD_LIMIT, HIT_EVENT_THRESHOLD, FLOAT32_LIMIT, ANGLE_LIMIT, MAX_SUBSTEPS,
                         SPECULATIVE_DISTANCE, MAX_TRANSLATION_SPEED, WELDING_TOLERANCE, SLEEP_LINEAR_TOLERANCE)

#: Every collision category bit set: the default mask (a shape collides with all categories).
ALL_CATEGORIES = np.uint64(0xFFFFFFFFFFFFFFFF)
from ..errors import SimulationError, StaleHandleError, WorldLockedError, GeometryError, CaromError, \
    SnapshotError
from ..geometry.shapes import Shape, Segment
from ..geometry.mass import shape_moments
from ..geometry.aabb import core_aabb
from ..geometry.broadphase import DynamicTree
from . import _step, _solver, queries
from . import joints as _joints
from .joints import Joint, JointEvent
from . import snapshot as _snapshot
from . import presolve as _presolve
from .snapshot import Snapshot

KINDS = {"static": _step.STATIC, "kinematic": _step.KINEMATIC, "dynamic": _step.DYNAMIC}
KIND_NAMES = {v: k for k, v in KINDS.items()}
MIX_RULES = {"sqrt": _solver.MIX_SQRT, "min": _solver.MIX_MIN, "max": _solver.MIX_MAX,
             "mean": _solver.MIX_MEAN, "multiply": _solver.MIX_MULTIPLY}

#: bits of ``World._mass_override``: which of a body's mass, inertia and centre of mass the user set
#: (``Body.mass``, ``Body.inertia``, ``Body.local_center``); the shapes no longer decide those until
#: ``Body.reset_mass``
MASS_SET, INERTIA_SET, CENTER_SET = 1, 2, 4


# every number entering the world passes carom._validate (the shapes' constructors use it too); the names are
# kept for carom.rigid.queries
_number = _validate.number
_vector = _validate.vector
_bits = _validate.bits
_flag = _validate.flag


#: the step's compile helper job (``carom._jit.compile_helper``)
STEP_HELPER_JOB = "carom._warmup:late_stages_then_public_api"
#: whether a world of this process has asked for the step's compile helper (the first world does)
_step_helper_asked = False


def _group(value):
    return _validate.integer(value, "group", -2 ** 63, 2 ** 63 - 1)


def _one_way(value):
    """A one-way direction as stored: None → (0, 0) (not one-way), else a nonzero finite vector made unit."""
    if value is None:
        return np.zeros(2)
    d = _vector(value, "one_way", FLOAT32_LIMIT)
    length = math.hypot(d[0], d[1])
    if not length > 1e-12:
        raise SimulationError(f"one_way = {value!r} has no direction (use None for an ordinary shape)")
    return d / length


def _unlocked(locks):
    """(1 or 0, 1 or 0) per body of ``locks`` (World._locks): the factors that keep a locked axis's velocity 0."""
    locks = np.asarray(locks)
    return np.stack([(locks & _solver.LOCK_X) == 0, (locks & _solver.LOCK_Y) == 0], axis=-1).astype(np.float64)


def _grow(arr, size):
    out = np.zeros((size,) + arr.shape[1:], dtype=arr.dtype)
    out[: arr.shape[0]] = arr
    return out


_PAIR_FIELDS = [("shape_a", np.int64), ("shape_b", np.int64), ("body_a", np.int64), ("body_b", np.int64)]
#: begin-touch records: the shapes (rows of the shape table), their bodies, a contact point and the normal
#: (from A to B); for a sensor overlap ``sensor`` is True and shape_a is the sensor
BEGIN_DTYPE = np.dtype(_PAIR_FIELDS + [("point", np.float64, 2), ("normal", np.float64, 2), ("sensor", np.bool_)])
END_DTYPE = np.dtype(_PAIR_FIELDS + [("sensor", np.bool_)])
#: hit records: the point that approached fastest and its approach speed (m/s) before the solve
HIT_DTYPE = np.dtype(_PAIR_FIELDS + [("point", np.float64, 2), ("normal", np.float64, 2), ("speed", np.float64)])

#: The events of the last step: three NumPy record arrays (``BEGIN_DTYPE``, ``END_DTYPE``, ``HIT_DTYPE``).
ContactEvents = namedtuple("ContactEvents", "begin end hit")

EVENT_KINDS = ("begin", "end", "hit", "leave", "joint", "post_solve")

#: The contacts of the last step as arrays, one row per contact point (``World.contact_data``): shape and body
#: rows, the point and the normal (world frame; the normal from shape_a to shape_b), the separation (m, negative
#: when overlapping), the normal and tangent impulse over the whole step (N·s, on shape_b's body; the tangent is
#: (normal.y, −normal.x)), the approach speed −v_n before the solve (m/s, positive when approaching) and whether
#: the contact touches.
ContactData = namedtuple("ContactData", "shape_a shape_b body_a body_b point normal separation normal_impulse "
                                        "tangent_impulse approach_speed touching")


class ContactEvent:
    """One event as handed to a handler: handles instead of row numbers (``speed`` is set for hits)."""

    __slots__ = ("kind", "shape_a", "shape_b", "body_a", "body_b", "point", "normal", "speed", "sensor")

    def __init__(self, kind, shape_a, shape_b, body_a, body_b, point, normal, speed, sensor):
        self.kind = kind
        self.shape_a = shape_a
        self.shape_b = shape_b
        self.body_a = body_a
        self.body_b = body_b
        self.point = point
        self.normal = normal
        self.speed = speed
        self.sensor = sensor

    def __repr__(self):
        return f"<ContactEvent {self.kind} {self.shape_a!r} {self.shape_b!r}>"


class Body:
    """Handle to a body of a :class:`World`. Properties read and write the world's arrays.

    Handles are made by the world (:meth:`World.add_body`, :attr:`World.bodies`, :meth:`World.body_handle`), not by
    hand: ``world``, the body's row ``index`` and the row's ``generation`` (a handle to a removed body raises
    StaleHandleError instead of reaching a newer one).
    """

    __slots__ = ("world", "index", "generation")

    def __init__(self, world: "Any", index: "int", generation: "int"):
        self.world = world
        self.index = index
        self.generation = generation

    def _i(self):
        w = self.world
        if w._gen[self.index] != self.generation or not w._alive[self.index]:
            raise StaleHandleError(f"body {self.index} (generation {self.generation}) has been removed")
        return self.index

    def __eq__(self, other):
        return (isinstance(other, Body) and other.world is self.world and other.index == self.index
                and other.generation == self.generation)

    def __hash__(self):
        return hash((id(self.world), self.index, self.generation))

    def __repr__(self):
        alive = self.world._gen[self.index] == self.generation and self.world._alive[self.index]
        if not alive:
            return f"<Body {self.index} removed>"
        return f"<Body {self.index} {self.kind} at ({self.position[0]:.4g}, {self.position[1]:.4g})>"

    # --- kinematic state -------------------------------------------------------------------------------
    @property
    def kind(self) -> str:
        """``"dynamic"``, ``"kinematic"`` or ``"static"`` (fixed when the body is made)."""
        return KIND_NAMES[int(self.world._kind[self._i()])]

    @property
    def position(self) -> np.ndarray:
        """Body origin in world coordinates (the frame its shapes are defined in)."""
        return self.world._origin_frame(self._i())[0]

    @position.setter
    def position(self, value: "Any"):
        i = self._i()
        self.world._check_unlocked()
        p = _vector(value, "position", WORLD_LIMIT)
        w = self.world
        c, s = math.cos(w._angle[i]), math.sin(w._angle[i])
        lc = w._local_center[i]
        w._com[i] = p + np.array([c * lc[0] - s * lc[1], s * lc[0] + c * lc[1]])
        w._query_boxes = None
        w._wake(i, partners=True)

    @property
    def world_center(self) -> np.ndarray:
        """Centre of mass in world coordinates."""
        return self.world._com[self._i()].copy()

    @property
    def local_center(self) -> np.ndarray:
        """The centre of mass in the body frame: the shapes' centroid, or the point set here (dynamic bodies
        only), kept until :meth:`reset_mass`. Setting it keeps the body's origin where it is, so the centre
        of mass moves in the world; the velocity (the centre's) is kept as it is."""
        return self.world._local_center[self._i()].copy()

    @property
    def angle(self) -> float:
        """Rotation (radians, counter-clockwise) about the body origin; setting it turns the body about its origin,
        keeps its position and wakes it and what touches it."""
        return float(self.world._angle[self._i()])

    @angle.setter
    def angle(self, value: "Any"):
        i = self._i()
        w = self.world
        w._check_unlocked()
        a = _number(value, "angle", magnitude=ANGLE_LIMIT)
        p = self.position
        c, s = math.cos(a), math.sin(a)
        lc = w._local_center[i]
        w._angle[i] = a
        w._com[i] = p + np.array([c * lc[0] - s * lc[1], s * lc[0] + c * lc[1]])
        w._query_boxes = None
        w._wake(i, partners=True)

    @property
    def velocity(self) -> np.ndarray:
        """Velocity of the centre of mass."""
        return self.world._vel[self._i()].copy()

    @velocity.setter
    def velocity(self, value: "Any"):
        i = self._i()
        self.world._check_unlocked()
        # (a locked axis keeps 0, as the angle of a body with fixed_rotation does)
        self.world._vel[i] = _vector(value, "velocity", FLOAT32_LIMIT) * _unlocked(self.world._locks[i])
        self.world._wake(i)

    @property
    def angular_velocity(self) -> float:
        """Angular velocity (rad/s, counter-clockwise positive); a body with :attr:`fixed_rotation` keeps 0."""
        return float(self.world._angvel[self._i()])

    @angular_velocity.setter
    def angular_velocity(self, value: "Any"):
        # (a body with fixed_rotation keeps 0, as in Box2D: it does not turn)
        i = self._i()
        w = self.world
        w._check_unlocked()
        av = _number(value, "angular_velocity", magnitude=FLOAT32_LIMIT)
        w._angvel[i] = 0.0 if w._fixed_rotation[i] else av
        w._wake(i)

    @property
    def contact_force(self) -> np.ndarray:
        """The total force (N) the body's contacts put on it over the last step: the normal and tangent
        impulses of the whole step (every substep's, and the restitution's) summed over its contact points,
        divided by the step's dt. For a box at rest on the ground it is its weight, for the bottom box of a
        stack the weight of the whole stack. Zero before the first step, and for contacts the step did not
        solve (both bodies asleep, sensors)."""
        i = self._i()
        return self.world._contact_forces(np.array([i]))[0]

    @property
    def mass(self) -> float:
        """Mass (kg): from the shapes' densities, or the value set here (Box2D's ``b2Body_SetMassData``).

        Setting it (dynamic bodies only; finite, within the solver's single precision) overrides what the
        shapes give until :meth:`reset_mass`: shapes added or removed later no longer change it. The inertia
        and the centre of mass are overridden apart (:attr:`inertia`, :attr:`local_center`); each value not
        set still comes from the shapes."""
        i = self._i()
        w = self.world
        im = w._inv_mass[i]
        if w._mass_override[i] & MASS_SET:
            return float(w._mass[i])
        return float(1.0 / im) if im > 0 else (float(w._mass[i]))

    @mass.setter
    def mass(self, value: "Any"):
        i = self._i()
        w = self.world
        w._check_unlocked()
        m = _number(value, "mass", 1.0 / FLOAT32_LIMIT, FLOAT32_LIMIT)
        w._check_mass_data(i, "mass")
        # (written directly, not through _update_mass, which would move the centre by rounding)
        w._mass_override[i] |= MASS_SET
        w._mass[i] = m
        w._inv_mass[i] = 1.0 / m
        w._set_inv_inertia(i)
        w._wake(i)

    @property
    def inertia(self) -> float:
        """Rotational inertia (kg·m²) about the centre of mass: from the shapes, or the value set here (dynamic
        bodies only, > 0 and within the solver's single precision), kept until :meth:`reset_mass`. With
        :attr:`fixed_rotation` the solver treats it as infinite, but this still reads the body's own."""
        i = self._i()
        w = self.world
        ii = w._inv_inertia[i]
        if w._mass_override[i] & INERTIA_SET:
            return float(w._inertia[i])
        return float(1.0 / ii) if ii > 0 else float(w._inertia[i])

    @inertia.setter
    def inertia(self, value: "Any"):
        i = self._i()
        w = self.world
        w._check_unlocked()
        j = _number(value, "inertia", 1.0 / FLOAT32_LIMIT, FLOAT32_LIMIT)
        w._check_mass_data(i, "inertia")
        w._mass_override[i] |= INERTIA_SET
        w._inertia[i] = j
        w._set_inv_inertia(i)
        w._wake(i)

    @local_center.setter  # type: ignore[no-redef, attr-defined]  # its getter is above, with the other state
    def local_center(self, value: "Any"):
        i = self._i()
        w = self.world
        w._check_unlocked()
        c = _vector(value, "local_center", WORLD_LIMIT)
        w._check_mass_data(i, "local_center")
        w._mass_override[i] |= CENTER_SET
        w._update_mass(i, center=c)
        w._wake(i, partners=True)

    def reset_mass(self) -> None:
        """Drop the mass, inertia and centre set through :attr:`mass`, :attr:`inertia` and
        :attr:`local_center`: all three come from the shapes again (the origin stays where it is)."""
        i = self._i()
        w = self.world
        w._check_unlocked()
        w._mass_override[i] = 0
        w._update_mass(i)
        w._wake(i, partners=True)

    @property
    def fixed_rotation(self) -> bool:
        """True: the body does not rotate (Box2D's ``fixedRotation``). The solver sees an infinite inertia (its
        inverse is 0) while it is set, and the angular velocity is zeroed when it is set and kept at 0;
        mass updates (shapes added or removed, :meth:`reset_mass`) keep it. Turning it off gives back the
        inertia from the shapes (or the one set through :attr:`inertia`)."""
        return bool(self.world._fixed_rotation[self._i()])

    @fixed_rotation.setter
    def fixed_rotation(self, value: "Any"):
        i = self._i()
        w = self.world
        w._check_unlocked()
        f = _flag(value, "fixed_rotation")
        w._fixed_rotation[i] = f
        if f:
            w._angvel[i] = 0.0
        w._set_inv_inertia(i)
        w._wake(i)

    @property
    def sleep_enabled(self) -> bool:
        """False keeps this body, and so every island it joins, awake (Box2D's ``enableSleep``); turning it
        off wakes the body. ``World.sleep_enabled`` is the switch for the whole world."""
        return bool(self.world._can_sleep[self._i()])

    @sleep_enabled.setter
    def sleep_enabled(self, value: "Any"):
        i = self._i()
        w = self.world
        w._check_unlocked()
        f = _flag(value, "sleep_enabled")
        w._can_sleep[i] = f
        if not f:
            w._wake(i)

    @property
    def sleep_threshold(self) -> float:
        """The speed (m/s) below which the body counts as resting for sleep (Box2D's ``sleepThreshold``):
        |v| + |ω|·reach, reach the body's farthest shape point from its centre. 0.05 by default; raise it for
        a large, slow body that should still sleep, lower it for one that must not fall asleep while moving
        slowly (at 0 only a body with no speed at all rests)."""
        return float(self.world._sleep_threshold[self._i()])

    @sleep_threshold.setter
    def sleep_threshold(self, value: "Any"):
        i = self._i()
        w = self.world
        w._check_unlocked()
        w._sleep_threshold[i] = _number(value, "sleep_threshold", 0.0, FLOAT32_LIMIT)
        w._wake(i)

    @property
    def lock_x(self) -> bool:
        """True: the body does not move along the world's x axis (Box2D v3.1's motion lock ``linearX``). Its
        x velocity is held at 0: zeroed when set, after every impulse the solver applies within a substep
        (before the body moves) and when the step ends, so the centre's x never changes in a step. Contacts
        and joints see the body as free along x while they solve, and the lock then removes what they gave
        it along x (an approximation, Box2D's too). ``fixed_rotation`` is the angular lock."""
        return bool(self.world._locks[self._i()] & _solver.LOCK_X)

    @lock_x.setter
    def lock_x(self, value: "Any"):
        self._set_lock(value, "lock_x", _solver.LOCK_X)

    @property
    def lock_y(self) -> bool:
        """True: the body does not move along the world's y axis (as :attr:`lock_x` for x)."""
        return bool(self.world._locks[self._i()] & _solver.LOCK_Y)

    @lock_y.setter
    def lock_y(self, value: "Any"):
        self._set_lock(value, "lock_y", _solver.LOCK_Y)

    def _set_lock(self, value, name, bit):
        i = self._i()
        w = self.world
        w._check_unlocked()
        f = _flag(value, name)
        w._locks[i] = (w._locks[i] | bit) if f else (w._locks[i] & ~bit)
        w._vel[i] *= _unlocked(w._locks[i])
        w._wake(i)

    @property
    def data(self) -> "Any":
        """Any Python object of the user's (None by default). ``pickle``, ``copy`` and ``deepcopy`` of the
        world carry it (pickled along with the world, so it must be picklable there); ``World.snapshot()``
        and ``World.restore`` do not: a snapshot is data only and restoring it never runs code."""
        return self.world._body_data.get(self._i())

    @data.setter
    def data(self, value: "Any"):
        i = self._i()
        if value is None:
            self.world._body_data.pop(i, None)
        else:
            self.world._body_data[i] = value

    @property
    def bullet(self) -> bool:
        """A bullet is swept against dynamic bodies as well as static ones (continuous collision), so a fast small body
        cannot pass through a thin moving one in a step."""
        return bool(self.world._bullet[self._i()])

    @bullet.setter
    def bullet(self, value: "Any"):
        i = self._i()
        self.world._bullet[i] = _flag(value, "bullet")

    @property
    def linear_damping(self) -> float:
        """Linear damping (1/s, ≥ 0): each substep divides the velocity by 1 + h·damping, a drag that slows the body
        the same whatever its mass."""
        return float(self.world._lin_damping[self._i()])

    @linear_damping.setter
    def linear_damping(self, value: "Any"):
        i = self._i()
        self.world._lin_damping[i] = _number(value, "linear_damping", 0.0)

    @property
    def angular_damping(self) -> float:
        """Angular damping (1/s, ≥ 0): each substep divides the angular velocity by 1 + h·damping."""
        return float(self.world._ang_damping[self._i()])

    @angular_damping.setter
    def angular_damping(self, value: "Any"):
        i = self._i()
        self.world._ang_damping[i] = _number(value, "angular_damping", 0.0)

    @property
    def gravity_scale(self) -> float:
        """Multiplies the world's gravity for this body (0: it floats, −1: it falls up)."""
        return float(self.world._gravity_scale[self._i()])

    @gravity_scale.setter
    def gravity_scale(self, value: "Any"):
        i = self._i()
        self.world._gravity_scale[i] = _number(value, "gravity_scale", magnitude=FLOAT32_LIMIT)

    @property
    def shapes(self) -> list:
        """Handles of the body's shapes, in the order they were added."""
        self._i()
        return list(self.world._body_shapes[self.index])

    @property
    def alive(self) -> bool:
        """False once the body has been removed."""
        return bool(self.world._gen[self.index] == self.generation and self.world._alive[self.index])

    # --- sleep -----------------------------------------------------------------------------------------
    @property
    def sleeping(self) -> bool:
        """True while the body's island sleeps (it is then not simulated until something wakes it)."""
        return bool(self.world._asleep[self._i()])

    def wake(self) -> None:
        """Wake the body and the island it sleeps in."""
        self.world._wake(self._i())

    def sleep(self) -> None:
        """Put this dynamic body to sleep now (it wakes when touched, pushed or changed)."""
        i = self._i()
        w = self.world
        w._check_unlocked()
        if w._kind[i] == _step.DYNAMIC:
            w._asleep[i] = True
            w._island[i] = i
            w._vel[i] = 0.0
            w._angvel[i] = 0.0
            # it joins the sleeping islands it touches: the step wakes an island when an awake body touches it,
            # in one pass over the contacts, so a sleeping body touching another island under a label of its
            # own could stay asleep while that island woke and was solved against it
            n = w._n_bodies
            partners = w._touching(i)
            labels = w._island[partners[w._asleep[partners] & (w._kind[partners] == _step.DYNAMIC)]]
            if labels.size:
                w._island[:n][w._asleep[:n] & np.isin(w._island[:n], labels)] = i

    # --- forces ----------------------------------------------------------------------------------------
    def apply_force(self, force: "Vec2", point: "Optional[Vec2]" = None) -> None:
        """Add a force (N) for the next step, at ``point`` (world) or at the centre of mass."""
        i = self._i()
        w = self.world
        f = _vector(force, "force")
        torque = w._torque[i]
        if point is not None:
            r = _vector(point, "point", WORLD_LIMIT) - w._com[i]
            torque = torque + (r[0] * f[1] - r[1] * f[0])
        total = w._force[i] + f
        w._check_load(i, "force", force, total, torque)
        w._force[i] = total
        w._torque[i] = torque
        w._wake(i)

    def apply_torque(self, torque: "float") -> None:
        """Add a torque (N·m) for the next step."""
        i = self._i()
        w = self.world
        total = w._torque[i] + _number(torque, "torque")
        w._check_load(i, "torque", torque, w._force[i], total)
        w._torque[i] = total
        w._wake(i)

    def apply_impulse(self, impulse: "Vec2", point: "Optional[Vec2]" = None) -> None:
        """Change the momentum at once by ``impulse`` (N·s), at ``point`` (world) or the centre of mass."""
        i = self._i()
        w = self.world
        w._check_unlocked()
        j = _vector(impulse, "impulse")
        p = None if point is None else _vector(point, "point", WORLD_LIMIT)
        if w._kind[i] != _step.DYNAMIC:
            return
        v = w._vel[i] + w._inv_mass[i] * j
        av = w._angvel[i]
        if p is not None:
            r = p - w._com[i]
            av = av + w._inv_inertia[i] * (r[0] * j[1] - r[1] * j[0])
        if not (np.abs(v).max() <= FLOAT32_LIMIT and abs(av) <= FLOAT32_LIMIT):
            raise SimulationError(f"impulse = {impulse!r} would give body {i} the velocity {tuple(v.tolist())} and "
                                  f"angular velocity {float(av)}, beyond the solver's limit {FLOAT32_LIMIT:g}")
        w._vel[i] = v
        w._angvel[i] = av
        w._wake(i)

    # --- shapes ----------------------------------------------------------------------------------------
    def add_shape(self, shape: "Any", density: "float" = 1.0, friction: "float" = 0.6, restitution: "float" = 0.0,
                  sensor: "bool" = False, category: "Bits" = 1,
                  mask: "Bits" = ALL_CATEGORIES, group: "int" = 0, tangent_speed: "float" = 0.0,
                  rolling_resistance: "float" = 0.0, one_way: "Any" = None) -> "ShapeHandle":
        """Attach a copy of ``shape`` (in the body frame); several shapes make a compound body.

        ``tangent_speed`` (m/s) makes the surface move along itself, as a conveyor belt: friction drives what
        touches it towards that speed relative to the body (positive: counter-clockwise around the shape).
        ``rolling_resistance`` (Box2D v3.1) brakes rolling: a torque of up to the coefficient × the larger
        shape radius × the normal force opposes the relative spin of the two bodies.
        ``one_way=(x, y)`` makes a one-way shape (a platform): solid only for shapes meeting it from the side
        (x, y) points to, in the body's frame (``(0, 1)``: stand on it from above, jump through from below).

        ``sensor=True`` makes a shape that reports overlaps (begin/end events) and never pushes. Two shapes
        collide when each one's ``category`` bits meet the other's ``mask``, unless they share a nonzero
        ``group``: a positive group always collides, a negative one never (Box2D's filter rule).

        ``density`` (kg/m²) gives the body its mass and inertia (a segment has no area and adds none); ``friction``
        (≥ 0) and ``restitution`` (0 to 1) are the shape's material.
        """
        i = self._i()
        return self.world._add_shape(i, shape, density, friction, restitution, sensor, category, mask, group,
                                     tangent_speed, rolling_resistance, one_way)

    def add_chain(self, points: "ArrayLike", loop: "bool" = False, friction: "float" = 0.6,
                  restitution: "float" = 0.0, category: "Bits" = 1, mask: "Bits" = ALL_CATEGORIES,
                  group: "int" = 0) -> list:
        """Attach a chain: the polyline through ``points`` (n, 2) in the body frame, one segment shape per pair of
        consecutive points, closed back to the first point when ``loop`` (Box2D's b2CreateChain, pymunk's
        segments along a terrain). Returns the segments' handles, in order.

        Chain segments are smooth where they join: a box sliding or a ball rolling across a joint of a flat
        chain meets one surface, as on a single long segment (ghost vertices, as Box2D's chain segments:
        ``carom.rigid._step.chain_manifold``), where separate segments trip it on their ends.

        Each segment is one-sided: it collides only with shapes on its LEFT, seen walking from point i to point
        i + 1 (its free side's normal is (−d_y, d_x)/|d|, d = p[i+1] − p[i]). So a floor listed left to right
        holds bodies above it; a counter-clockwise loop holds bodies inside it (a container) and a clockwise
        loop holds them outside (solid ground, an island). (Box2D v3 chains collide on the right, the other
        way round.) A body coming from the back side passes through, as through a one-way shape (the segments'
        ``one_way`` reads their free side's normal; it cannot be set). An open chain's two ends are rounded
        on the free side.

        ``friction`` and ``restitution`` are one number for all segments or one per segment (n − 1 of them,
        n for a loop). Chains go on static and kinematic bodies only: a segment has no area and so no mass,
        and Box2D's chains are static geometry (a dynamic body is refused). At least 2 points (3 for a loop);
        consecutive points must differ (within the welding tolerance), and a loop's last point must not repeat
        its first. Each segment is an ordinary shape afterwards: removing one handle removes that segment only
        (its neighbours keep their ghost vertices, so their ends at the gap stay smooth as if it were there).
        A refused call changes nothing.

        ``category``, ``mask`` and ``group`` filter collisions as in :meth:`add_shape`.
        """
        i = self._i()
        return self.world._add_chain(i, points, loop, friction, restitution, category, mask, group)


class ShapeHandle:
    """Handle to a shape attached to a body: material can change at any time.

    Made by :meth:`Body.add_shape` (and :attr:`Body.shapes`, :meth:`World.shape_handle`), not by hand: ``world``,
    the shape's row ``index``, the row's ``generation`` and the shape's ``geometry`` (the :mod:`carom.geometry`
    shape it was made from, in the body frame).
    """

    __slots__ = ("world", "index", "generation", "geometry")

    def __init__(self, world: "Any", index: "int", generation: "int", geometry: "Any"):
        self.world = world
        self.index = index
        self.generation = generation
        self.geometry = geometry

    def _i(self):
        w = self.world
        if w._s_gen[self.index] != self.generation or not w._s_alive[self.index]:
            raise StaleHandleError(f"shape {self.index} (generation {self.generation}) has been removed")
        return self.index

    def __eq__(self, other):
        return (isinstance(other, ShapeHandle) and other.world is self.world and other.index == self.index
                and other.generation == self.generation)

    def __hash__(self):
        return hash((id(self.world), self.index, self.generation, "shape"))

    @property
    def alive(self) -> bool:
        """False once the shape (or its body) has been removed."""
        return bool(self.world._s_gen[self.index] == self.generation and self.world._s_alive[self.index])

    @property
    def body(self) -> Body:
        """The body the shape is attached to."""
        b = int(self.world._s_body[self._i()])
        return Body(self.world, b, int(self.world._gen[b]))

    @property
    def friction(self) -> float:
        """Friction coefficient (≥ 0), combined with the other shape's by :attr:`World.friction_mixing`."""
        return float(self.world._s_friction[self._i()])

    @friction.setter
    def friction(self, value: "Any"):
        self.world._s_friction[self._i()] = _number(value, "friction", 0.0, FLOAT32_LIMIT)

    @property
    def tangent_speed(self) -> float:
        """Speed of the surface along itself (m/s, a conveyor belt; ``Body.add_shape``)."""
        return float(self.world._s_tangent_speed[self._i()])

    @tangent_speed.setter
    def tangent_speed(self, value: "Any"):
        self.world._s_tangent_speed[self._i()] = _number(value, "tangent_speed", magnitude=MAX_TRANSLATION_SPEED)

    @property
    def one_way(self) -> "Any":
        """The way out of a one-way shape's solid side, a unit vector in the body's frame, or None
        (``Body.add_shape``)."""
        d = self.world._s_one_way[self._i()]
        return None if d[0] == 0.0 and d[1] == 0.0 else (float(d[0]), float(d[1]))

    @one_way.setter
    def one_way(self, value: "Any"):
        i = self._i()
        self.world._check_unlocked()
        if self.world._s_chain[i]:
            raise CaromError(f"shape {i} is a chain segment: its one-sidedness follows its direction "
                             "(Body.add_chain), it cannot be set")
        self.world._s_one_way[i] = _one_way(value)

    @property
    def rolling_resistance(self) -> float:
        """Rolling resistance coefficient (``Body.add_shape``)."""
        return float(self.world._s_rolling[self._i()])

    @rolling_resistance.setter
    def rolling_resistance(self, value: "Any"):
        self.world._s_rolling[self._i()] = _number(value, "rolling_resistance", 0.0, FLOAT32_LIMIT)

    @property
    def restitution(self) -> float:
        """Restitution (0 to 1: the share of the approach speed a contact gives back), combined with the other shape's
        by :attr:`World.restitution_mixing`."""
        return float(self.world._s_restitution[self._i()])

    @restitution.setter
    def restitution(self, value: "Any"):
        self.world._s_restitution[self._i()] = _number(value, "restitution", 0.0, 1.0)

    @property
    def density(self) -> float:
        """Density (kg/m²) the body's mass was computed with (read-only: add the shape again to change it, or set
        :attr:`Body.mass`)."""
        return float(self.world._s_density[self._i()])

    @property
    def sensor(self) -> bool:
        """True for a sensor: it reports overlaps as begin/end events and never pushes."""
        return bool(self.world._s_sensor[self._i()])

    @property
    def category(self) -> int:
        """The 64 category bits of the shape (what it is). Two shapes collide when each one's category meets the
        other's :attr:`mask`."""
        return int(self.world._s_category[self._i()])

    @category.setter
    def category(self, value: "Any"):
        self.world._s_category[self._i()] = _bits(value, "category")

    @property
    def mask(self) -> int:
        """The 64 mask bits of the shape (the categories it collides with)."""
        return int(self.world._s_mask[self._i()])

    @mask.setter
    def mask(self, value: "Any"):
        self.world._s_mask[self._i()] = _bits(value, "mask")

    @property
    def group(self) -> int:
        """The collision group: shapes sharing a positive group always collide, a negative one never; 0 leaves it to
        category and mask (Box2D's filter rule)."""
        return int(self.world._s_group[self._i()])

    @group.setter
    def group(self, value: "Any"):
        self.world._s_group[self._i()] = _group(value)

    @property
    def data(self) -> "Any":
        """Any Python object of the user's (None by default); like ``Body.data``, kept by pickle and copy of
        the world but not by ``World.snapshot()``/``restore``."""
        return self.world._shape_data.get(self._i())

    @data.setter
    def data(self, value: "Any"):
        s = self._i()
        if value is None:
            self.world._shape_data.pop(s, None)
        else:
            self.world._shape_data[s] = value

    def __repr__(self):
        return f"<ShapeHandle {self.index} {self.geometry!r}>"


class World:
    """An impulse-based rigid-body world (y up, metres, kilograms, seconds).

    ``gravity`` (m/s²), ``substeps`` ≥ 1 per step; friction is mixed by ``friction_mixing`` ("sqrt" by
    default: √(μa·μb)) and restitution by ``restitution_mixing`` ("max" by default).

    Contact control: :attr:`pre_solve` takes a function compiled with Numba that the step calls, inside its one
    compiled call, for every contact it is about to solve, and that may disable the contact or change its
    friction, restitution and tangent speed for that step (``carom.pre_solve_function``,
    ``carom.PRE_SOLVE_SIGNATURE``; not carried by snapshots, pickles or copies). After the step,
    :meth:`contact_data` gives the contacts as arrays, one row per point (impulses over the whole step,
    approach speeds), and ``on("post_solve", fn)`` hands the same arrays to ``fn`` after each step.
    """

    #: the shapes' tight boxes (lower, upper) as the queries last brought the broad phase up to date with them
    #: (``carom.rigid.queries``), or None when a shape may have moved since: set to None by the step and by
    #: everything that moves, adds or removes a shape; not pickled
    _query_boxes = None

    def __init__(self, gravity: "Vec2" = (0.0, -10.0), substeps: int = 4, friction_mixing: str = "sqrt",
                 restitution_mixing: str = "max") -> None:
        announce_compile()
        self.gravity = gravity
        self.substeps = substeps
        self.friction_mixing = friction_mixing
        self.restitution_mixing = restitution_mixing
        self._locked = False
        cap = 16
        self._com = np.zeros((cap, 2))
        self._angle = np.zeros(cap)
        self._vel = np.zeros((cap, 2))
        self._angvel = np.zeros(cap)
        self._inv_mass = np.zeros(cap)
        self._inv_inertia = np.zeros(cap)
        self._mass = np.zeros(cap)
        self._inertia = np.zeros(cap)
        self._local_center = np.zeros((cap, 2))
        self._kind = np.zeros(cap, np.int64)
        self._bullet = np.zeros(cap, np.bool_)
        self._alive = np.zeros(cap, np.bool_)
        self._gen = np.zeros(cap, np.int64)
        self._force = np.zeros((cap, 2))
        self._torque = np.zeros(cap)
        self._lin_damping = np.zeros(cap)
        self._ang_damping = np.zeros(cap)
        self._gravity_scale = np.ones(cap)
        self._min_extent = np.zeros(cap)
        self._asleep = np.zeros(cap, np.bool_)       # the body's island is asleep
        self._sleep_time = np.zeros(cap)             # seconds the body has been slow
        self._island = np.zeros(cap, np.int64)       # label of the island a sleeping body fell asleep with
        self._can_sleep = np.ones(cap, np.bool_)     # Body.sleep_enabled
        self._fixed_rotation = np.zeros(cap, np.bool_)
        self._sleep_threshold = np.full(cap, SLEEP_LINEAR_TOLERANCE)   # Body.sleep_threshold (m/s)
        self._locks = np.zeros(cap, np.int8)        # Body.lock_x (LOCK_X) and Body.lock_y (LOCK_Y)
        self._mass_override = np.zeros(cap, np.int64)   # MASS_SET | INERTIA_SET | CENTER_SET
        self._body_arrays = ("_com", "_angle", "_vel", "_angvel", "_inv_mass", "_inv_inertia", "_mass",
                             "_inertia", "_local_center", "_kind", "_bullet", "_alive", "_gen", "_force",
                             "_torque", "_lin_damping", "_ang_damping", "_gravity_scale", "_min_extent",
                             "_asleep", "_sleep_time", "_island", "_can_sleep", "_fixed_rotation",
                             "_mass_override", "_sleep_threshold", "_locks")
        #: Body.data and ShapeHandle.data by row: Python objects, kept by pickle and copy, not by snapshots
        self._body_data: dict = {}
        self._shape_data: dict = {}
        self._n_bodies = 0
        self._free_bodies: list = []
        self._body_shapes: list = [[] for _ in range(cap)]
        scap = 16
        self._s_body = np.zeros(scap, np.int64)
        self._s_alive = np.zeros(scap, np.bool_)
        self._s_gen = np.zeros(scap, np.int64)
        self._s_offset = np.zeros(scap, np.int64)
        self._s_count = np.zeros(scap, np.int64)
        self._s_radius = np.zeros(scap)
        self._s_friction = np.zeros(scap)
        self._s_restitution = np.zeros(scap)
        self._s_density = np.zeros(scap)
        self._s_reach = np.zeros(scap)
        self._s_sensor = np.zeros(scap, np.bool_)
        self._s_category = np.ones(scap, np.uint64)
        self._s_mask = np.full(scap, ALL_CATEGORIES, np.uint64)
        self._s_group = np.zeros(scap, np.int64)
        self._s_tangent_speed = np.zeros(scap)
        self._s_rolling = np.zeros(scap)
        self._s_one_way = np.zeros((scap, 2))
        # chain segments (Body.add_chain): the bits _step.CHAIN | CHAIN_PREV | CHAIN_NEXT, and the ghost
        # vertices (the previous segment's first vertex, the next segment's second vertex; body frame)
        self._s_chain = np.zeros(scap, np.int64)
        self._s_ghost = np.zeros((scap, 4))
        self._shape_arrays: "Tuple[str, ...]" = ("_s_body", "_s_alive", "_s_gen", "_s_offset", "_s_count", "_s_radius",
                              "_s_friction", "_s_restitution", "_s_density", "_s_reach", "_s_sensor",
                              "_s_category", "_s_mask", "_s_group", "_s_tangent_speed", "_s_rolling",
                              "_s_one_way", "_s_chain", "_s_ghost")
        self._n_shapes = 0
        self._free_shapes: list = []
        self._s_geometry: list = []
        self._verts = np.zeros((64, 2))
        self._normals = np.zeros((64, 2))
        self._n_verts = 0
        self._contacts = self._empty_contacts()
        #: separated pairs skip their collision test while provably still apart (``_step._still_apart``); False
        #: runs every test (for tests that compare the two; costs a pass over the contact table per step)
        self._skip_apart = True
        # fat boxes are stretched by one displacement, not Box2D v2's four: a fast body's long box meets many
        # shapes it never touches (smash: 32 → 21 ms per step), and its speculative margin covers the motion
        # (deferred insertion: the step gives new shapes their leaves, ``DynamicTree``)
        self._bp = DynamicTree(multiplier=1.0, deferred=True)
        self._s_proxy = np.zeros(scap, np.int64)
        self._arg_views = None          # (_kernel_args)
        self._shape_arrays += ("_s_proxy",)
        self._proxy_shape = np.zeros(16, np.int64)
        self.step_count = 0
        self._governor = ThreadGovernor()     # the step's thread count: the threads, or one if faster
        self._last_dt = 0.0         # (the last step's dt: contact forces are its impulses over it)
        self.sleep_enabled = True
        self.hit_event_threshold = HIT_EVENT_THRESHOLD
        #: time each stage of the step (``profile_times``, ms); costs nothing measurable
        self.profile = False
        self.profile_times: dict = {}
        self._events = self._empty_events()
        #: the last step's raw events until someone asks for them (``_settle_events``)
        self._raw_events: "Optional[tuple]" = None
        self._pending_end: list = []
        self._handlers: list = []
        #: the pre-solve hook (``pre_solve``: the numba cfunc, kept alive here, and its address for the step)
        self._pre_solve = None
        self._pre_solve_address = 0
        #: each contact point's approach speed in the last step (rows of the contact table; empty when the step
        #: solved nothing, None when unknown: no step since the world was made or restored)
        self._approach = None
        #: the world bounds (xmin, ymin, xmax, ymax), or None; the bodies (rows, generations) that left them in
        #: the last step; whether those are removed (``bounds``)
        self._bounds: "Optional[np.ndarray]" = None
        self._left = np.zeros(0, np.int64)
        self._left_gen = np.zeros(0, np.int64)
        self._remove_outside = False
        # the joint table (carom.rigid.joints): kind, alive, generation, enabled, the two bodies, anchors and axis
        # in the bodies' frames, settings, accumulated impulses (warm starting), the last step's reaction (force,
        # torque), collide_connected, the force and torque thresholds and whether crossing one only reports
        jcap = 16
        self._j_kind = np.zeros(jcap, np.int64)
        self._j_alive = np.zeros(jcap, np.bool_)
        self._j_gen = np.zeros(jcap, np.int64)
        self._j_enabled = np.zeros(jcap, np.bool_)
        self._j_body = np.zeros((jcap, 2), np.int64)
        self._j_local = np.zeros((jcap, _joints.LOCAL_WIDTH))
        self._j_param = np.zeros((jcap, _joints.PARAM_WIDTH))
        self._j_impulse = np.zeros((jcap, _joints.IMPULSE_WIDTH))
        self._j_reaction = np.zeros((jcap, 3))
        self._j_collide = np.zeros(jcap, np.bool_)
        self._j_threshold = np.full((jcap, 2), np.inf)
        self._j_report = np.zeros(jcap, np.bool_)
        self._joint_arrays = ("_j_kind", "_j_alive", "_j_gen", "_j_enabled", "_j_body", "_j_local", "_j_param",
                              "_j_impulse", "_j_reaction", "_j_collide", "_j_threshold", "_j_report")
        self._n_joints = 0
        self._free_joints: list = []
        #: Joint.data by row (like _body_data)
        self._joint_data: dict = {}
        #: the body pairs joints keep from colliding, sorted (``_joined_keys``), or None when to be rebuilt
        self._joined = None
        #: the last step's joint events (JointEvent), delivered to "joint" handlers
        self._joint_events: list = []
        self._static_body = self.add_body(kind="static")
        global _step_helper_asked
        if not _step_helper_asked:
            # the first world of the process: with nothing cached, the step's compile helper starts now, on the
            # other core, while the program builds its world (``carom._jit.start_compile_helper``)
            _step_helper_asked = True
            start_compile_helper(_step.step_kernel, self._step_args(1 / 60, 1, np.zeros(len(_step.STAGES) + 1,
                                                                                             np.int64)),
                                 STEP_HELPER_JOB, _step.LATE_STAGES)

    # --- settings with validation ----------------------------------------------------------------------
    @property
    def gravity(self) -> np.ndarray:
        """Gravity (m/s², a NumPy (2,) copy); set it with any (x, y) pair of finite numbers."""
        return self._gravity.copy()

    @gravity.setter
    def gravity(self, value: "Any"):
        self._gravity = _vector(value, "gravity", FLOAT32_LIMIT)

    @property
    def substeps(self) -> int:
        """Substeps per step (an integer from 1 to ``MAX_SUBSTEPS``, 4 by default): each integrates velocities, warm
        starts, solves with a soft bias and relaxes (Box2D v3's soft step). More substeps make stiff stacks and long
        chains stiffer, at a proportional cost of the solve."""
        return self._substeps

    @substeps.setter
    def substeps(self, value: "Any"):
        self._substeps = _validate.integer(value, "substeps", 1, MAX_SUBSTEPS)

    @property
    def sleep_enabled(self) -> bool:
        """Sleeping on/off for the whole world."""
        return self._sleep_enabled

    @sleep_enabled.setter
    def sleep_enabled(self, value: "Any"):
        """Turning it off wakes every body: with sleeping off the step never wakes an island again."""
        on = _flag(value, "sleep_enabled")
        self._check_unlocked()
        self._sleep_enabled = on
        if not on:
            n = self._n_bodies
            self._asleep[:n] = False
            self._sleep_time[:n] = 0.0

    @property
    def pre_solve(self) -> "Any":
        """The pre-solve hook, or None: a function compiled with Numba that the step calls, from inside its one
        compiled call, for every contact it is about to solve, and that may disable the contact or change its
        friction, restitution and tangent speed for this step.

        Give it a ``numba.cfunc`` of :data:`carom.PRE_SOLVE_SIGNATURE` (``carom.pre_solve_function`` makes one,
        also as a decorator) or an ``@numba.njit`` function, which is compiled into one here::

            keep = hook(shape_a, shape_b, body_a, body_b, normal_x, normal_y, point_count, points, material)

        shape and body rows (``ShapeHandle.index``, ``Body.index``; shape_a < shape_b), the normal from shape_a
        to shape_b, ``points[0:3]`` (and ``points[3:6]`` for a second point) the (x, y, separation) of each
        point, and ``material[0:3]`` the contact's friction, restitution and tangent speed as the shapes and the
        mixing rules give them, which the hook may overwrite for this step (friction and restitution below 0
        and NaN are taken as 0, the tangent speed is capped at ±MAX_TRANSLATION_SPEED). Returning 0 disables
        the contact for this step: it is dropped as a passing one-way shape drops it (no points, not touching,
        so an end event if it touched, nothing to warm start next step). The hook is called for the non-sensor
        contacts with points (touching or speculative) of pairs with an awake body, every step, in the contact
        table's order and from one thread, so results do not depend on the thread count. It must not touch the
        world (it cannot: it only gets numbers). Without a hook the step only checks for one.

        The hook is not state: snapshots, pickles and copies of the world do not carry it (set it again, as
        handlers are registered again). Anything else than None or such a function raises CaromError naming it,
        and the world keeps its hook."""
        return self._pre_solve

    @pre_solve.setter
    def pre_solve(self, fn: "Any"):
        self._check_unlocked()
        self._pre_solve, self._pre_solve_address = _presolve.as_hook(fn)

    @property
    def hit_event_threshold(self) -> float:
        """Approach speed (m/s) above which a contact reports a hit event."""
        return self._hit_event_threshold

    @hit_event_threshold.setter
    def hit_event_threshold(self, value: "Any"):
        self._hit_event_threshold = _number(value, "hit_event_threshold", 0.0)

    @property
    def bounds(self) -> "Any":
        """The world bounds, ``((xmin, ymin), (xmax, ymax))``, or None (the default: no bounds).

        A body whose centre of mass is inside the bounds before a step and outside after it has left them: it
        is listed by :meth:`left_bounds` and reported to "leave" handlers (:meth:`on`), and removed after them
        when :attr:`remove_outside` is set (a body falling forever, a bullet gone off screen). Nothing else
        changes: the bounds do not push or stop anything."""
        if self._bounds is None:
            return None
        b = self._bounds
        return (float(b[0]), float(b[1])), (float(b[2]), float(b[3]))

    @bounds.setter
    def bounds(self, value: "Optional[Tuple[Vec2, Vec2]]") -> None:
        self._check_unlocked()
        if value is None:
            self._bounds = None
            return
        if not isinstance(value, (tuple, list)) or len(value) != 2:
            raise SimulationError(f"bounds must be ((xmin, ymin), (xmax, ymax)) or None, got {value!r}")
        lo = _vector(value[0], "bounds lower corner", WORLD_LIMIT)
        hi = _vector(value[1], "bounds upper corner", WORLD_LIMIT)
        if not (lo[0] < hi[0] and lo[1] < hi[1]):
            raise SimulationError(f"bounds = {value!r}: the lower corner must be below and left of the upper one")
        self._bounds = np.array([lo[0], lo[1], hi[0], hi[1]])

    @property
    def remove_outside(self) -> bool:
        """Remove the bodies that leave the :attr:`bounds` after the step that took them out (default False)."""
        return self._remove_outside

    @remove_outside.setter
    def remove_outside(self, value: "Any"):
        self._remove_outside = _flag(value, "remove_outside")

    def left_bounds(self) -> list:
        """The bodies that left the :attr:`bounds` in the last step (handles; removed ones are stale)."""
        return [Body(self, int(i), int(g)) for i, g in zip(self._left, self._left_gen)]

    def _inside_bounds(self, n):
        """Per body row: alive, not static, and its centre of mass inside the bounds."""
        lo_x, lo_y, hi_x, hi_y = self._bounds
        c = self._com[:n]
        return (self._alive[:n] & (self._kind[:n] != _step.STATIC) & (c[:, 0] >= lo_x) & (c[:, 0] <= hi_x)
                & (c[:, 1] >= lo_y) & (c[:, 1] <= hi_y))

    @property
    def friction_mixing(self) -> str:
        """How two shapes' friction coefficients combine: "sqrt" (√(μa·μb), the default, as Box2D), "min", "max",
        "mean" or "multiply"."""
        return self._friction_mixing

    @friction_mixing.setter
    def friction_mixing(self, value: "Any"):
        if not isinstance(value, str) or value not in MIX_RULES:
            raise SimulationError(f"friction_mixing must be one of {sorted(MIX_RULES)}, got {value!r}")
        self._friction_mixing = value

    @property
    def restitution_mixing(self) -> str:
        """How two shapes' restitutions combine: "max" (the default, as Box2D), "min", "sqrt", "mean" or
        "multiply"."""
        return self._restitution_mixing

    @restitution_mixing.setter
    def restitution_mixing(self, value: "Any"):
        if not isinstance(value, str) or value not in MIX_RULES:
            raise SimulationError(f"restitution_mixing must be one of {sorted(MIX_RULES)}, got {value!r}")
        self._restitution_mixing = value

    def _check_load(self, i, name, value, force, torque):
        """Refuse ``value`` (a force or torque) if it would leave body i with a total force or torque, or the
        acceleration they give it, beyond what the solver's single precision holds (or not finite)."""
        f = float(np.abs(force).max())
        t = abs(float(torque))
        if not (f <= FLOAT32_LIMIT and t <= FLOAT32_LIMIT and self._inv_mass[i] * f <= FLOAT32_LIMIT
                and self._inv_inertia[i] * t <= FLOAT32_LIMIT):
            raise SimulationError(f"{name} = {value!r} would give body {i} the force {tuple(force.tolist())} and "
                                  f"torque {float(torque)}, beyond the solver's limit {FLOAT32_LIMIT:g} (or its "
                                  "accelerations would be)")

    def _check_unlocked(self):
        if self._locked:
            raise WorldLockedError("the world is stepping: bodies and shapes can change only between steps")

    @staticmethod
    def _empty_contacts():
        return (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, 2), np.int64), np.zeros((0, 2)),
                np.zeros((0, 2)), np.zeros((0, 2)), np.zeros((0, 2, 2)), np.zeros((0, 2)), np.zeros(0, np.bool_),
                np.zeros(0, np.bool_), np.zeros((0, _step.CACHE_WIDTH)), np.zeros((0, 2, 2))) + World._no_colouring()

    @staticmethod
    def _no_colouring():
        """The colouring members of a contact table that has none (the next step colours afresh)."""
        return (np.zeros(0, np.int64), np.zeros((0, 2), np.int64), np.zeros(_solver.OVERFLOW + 2, np.int64),
                np.zeros(1, np.bool_), np.zeros(0, np.int8))

    @staticmethod
    def _empty_events():
        return ContactEvents(np.zeros(0, BEGIN_DTYPE), np.zeros(0, END_DTYPE), np.zeros(0, HIT_DTYPE))

    # --- bodies ----------------------------------------------------------------------------------------
    @property
    def static_body(self) -> Body:
        """A ready static body at the origin (like pymunk's ``space.static_body``)."""
        return self._static_body

    def add_body(self, position: "Vec2" = (0.0, 0.0), angle: "float" = 0.0, velocity: "Vec2" = (0.0, 0.0),
                 angular_velocity: "float" = 0.0,
                 kind: "str" = "dynamic", bullet: "bool" = False, linear_damping: "float" = 0.0,
                 angular_damping: "float" = 0.0,
                 gravity_scale: "float" = 1.0) -> Body:
        """Create a body. It has no mass until shapes with density are added.

        ``position`` is the body origin (m) and ``angle`` its rotation (radians); ``velocity`` (m/s) and
        ``angular_velocity`` (rad/s) its initial motion; ``kind`` "dynamic" (moved by forces and contacts),
        "kinematic" (moves at its velocity whatever hits it) or "static" (never moves); ``bullet`` sweeps it against
        dynamic bodies too; ``linear_damping`` and ``angular_damping`` (1/s) slow it; ``gravity_scale`` multiplies
        gravity for it. Each is checked first; a refused call changes nothing.
        """
        self._check_unlocked()
        if not isinstance(kind, str) or kind not in KINDS:
            raise SimulationError(f"kind must be 'dynamic', 'static' or 'kinematic', got {kind!r}")
        p = _vector(position, "position", WORLD_LIMIT)
        a = _number(angle, "angle", magnitude=ANGLE_LIMIT)
        v = _vector(velocity, "velocity", FLOAT32_LIMIT)
        w = _number(angular_velocity, "angular_velocity", magnitude=FLOAT32_LIMIT)
        fast = _flag(bullet, "bullet")
        ld = _number(linear_damping, "linear_damping", 0.0)
        ad = _number(angular_damping, "angular_damping", 0.0)
        gs = _number(gravity_scale, "gravity_scale", magnitude=FLOAT32_LIMIT)
        if self._free_bodies:
            i = self._free_bodies.pop()
        else:
            i = self._n_bodies
            if i == self._com.shape[0]:
                cap = 2 * i
                for name in self._body_arrays:
                    setattr(self, name, _grow(getattr(self, name), cap))
                self._gravity_scale[i:] = 1.0
                self._body_shapes.extend([] for _ in range(cap - i))
            self._n_bodies += 1
        k = KINDS[kind]
        self._com[i] = p
        self._angle[i] = a
        self._vel[i] = v if k != _step.STATIC else 0.0
        self._angvel[i] = w if k != _step.STATIC else 0.0
        self._inv_mass[i] = 0.0
        self._inv_inertia[i] = 0.0
        self._mass[i] = 0.0
        self._inertia[i] = 0.0
        self._local_center[i] = 0.0
        self._kind[i] = k
        self._bullet[i] = fast
        self._alive[i] = True
        self._force[i] = 0.0
        self._torque[i] = 0.0
        self._lin_damping[i] = ld
        self._ang_damping[i] = ad
        self._gravity_scale[i] = gs
        self._min_extent[i] = 0.0
        self._can_sleep[i] = True
        self._fixed_rotation[i] = False
        self._sleep_threshold[i] = SLEEP_LINEAR_TOLERANCE
        self._locks[i] = 0
        self._mass_override[i] = 0
        self._body_shapes[i] = []
        return Body(self, i, int(self._gen[i]))

    def remove(self, body: "Any") -> None:
        """Remove a body (with its shapes and joints), a shape or a joint. The handle goes stale."""
        self._check_unlocked()
        if isinstance(body, Joint):
            if body.world is not self:
                raise CaromError(f"{body!r} is a joint of another world")
            return self._remove_joint(body._j())
        if isinstance(body, ShapeHandle):
            if body.world is not self:
                raise CaromError(f"{body!r} is a shape of another world")
            return self._remove_shape(body)
        if not isinstance(body, Body) or body.world is not self:
            raise CaromError(f"expected a Body or ShapeHandle of this world, got {body!r}")
        i = body._i()
        if body == self._static_body:
            raise CaromError("the world's static_body cannot be removed")
        self._wake(i, partners=True)
        n = self._n_joints
        for j in np.flatnonzero(self._j_alive[:n] & ((self._j_body[:n, 0] == i) | (self._j_body[:n, 1] == i))):
            self._remove_joint(int(j))
        for sh in list(self._body_shapes[i]):
            self._remove_shape(sh, update_mass=False)
        self._alive[i] = False
        self._asleep[i] = False
        self._gen[i] += 1
        self._free_bodies.append(i)
        self._mass_override[i] = 0
        self._body_data.pop(i, None)

    # --- joints (carom.rigid.joints) ------------------------------------------------------------------------
    def add_joint(self, definition: "Any") -> Joint:
        """Add a joint from its definition (``carom.joints.Revolute(...)``, ...) and return its handle.

        Every value is checked first; a bad one raises a carom error naming it and the world is unchanged. The
        bodies must be live bodies of this world (``None`` is the world's static body), two different bodies,
        at least one of them dynamic (a mouse joint's body dynamic). Adding a joint wakes its bodies."""
        self._check_unlocked()
        if not isinstance(definition, _joints._Definition):
            raise CaromError(f"add_joint takes a joint definition (carom.joints.Revolute(...), ...), got "
                             f"{definition!r}")
        d = definition
        rows = []
        for name, body in (("body_a", d.body_a), ("body_b", d.body_b)):
            if body is None:
                rows.append(self._static_body.index)
                continue
            if not isinstance(body, Body):
                raise CaromError(f"{name} must be a Body of this world or None (the static body), got {body!r}")
            if body.world is not self:
                raise CaromError(f"{name} {body!r} is a body of another world")
            rows.append(body._i())
        a, b = rows
        if a == b:
            raise SimulationError(f"a joint needs two different bodies, got body {a} twice")
        if d.kind == _joints.MOUSE and self._kind[b] != _step.DYNAMIC:
            raise SimulationError(f"a mouse joint's body must be dynamic; body {b} is "
                                  f"{KIND_NAMES[int(self._kind[b])]}")
        if self._kind[a] != _step.DYNAMIC and self._kind[b] != _step.DYNAMIC:
            raise SimulationError(f"a joint needs a dynamic body; bodies {a} and {b} are "
                                  f"{KIND_NAMES[int(self._kind[a])]} and {KIND_NAMES[int(self._kind[b])]}")
        collide = _flag(d.collide_connected, "collide_connected")
        enabled = _flag(d.enabled, "enabled")
        thresholds = [self._threshold(d.force_threshold, "force_threshold"),
                      self._threshold(d.torque_threshold, "torque_threshold")]
        if d.on_threshold not in ("break", "report"):
            raise SimulationError(f"on_threshold must be 'break' or 'report', got {d.on_threshold!r}")
        local, param = d.frames(self, a, b)
        # all checked: store the row
        if self._free_joints:
            i = self._free_joints.pop()
        else:
            i = self._n_joints
            if i == self._j_kind.shape[0]:
                for attr in self._joint_arrays:
                    setattr(self, attr, _grow(getattr(self, attr), 2 * i))
                self._j_threshold[i:] = np.inf
            self._n_joints += 1
        self._j_kind[i] = d.kind
        self._j_alive[i] = True
        self._j_enabled[i] = enabled
        self._j_body[i] = (a, b)
        self._j_local[i] = local
        self._j_param[i] = param
        self._j_impulse[i] = 0.0
        self._j_reaction[i] = 0.0
        # (a mouse joint never filters: its other body is the world's static body, which holds the ground)
        self._j_collide[i] = collide or d.kind == _joints.MOUSE
        self._j_threshold[i] = thresholds
        self._j_report[i] = d.on_threshold == "report"
        if d.data is not None:
            self._joint_data[i] = d.data
        self._joined = None
        self._wake_joint(i)
        return Joint(self, i, int(self._j_gen[i]))

    @staticmethod
    def _threshold(value, name):
        if type(value) is float and value == np.inf:
            return value
        return _number(value, name, 0.0, FLOAT32_LIMIT)

    def _remove_joint(self, i):
        """Remove joint row i: its bodies wake, its handle goes stale, its row is free for the next joint."""
        self._wake_joint(i)
        self._j_alive[i] = False
        self._j_enabled[i] = False
        self._j_gen[i] += 1
        self._j_impulse[i] = 0.0
        self._j_reaction[i] = 0.0
        self._joint_data.pop(i, None)
        self._free_joints.append(i)
        self._joined = None

    def _wake_joint(self, i):
        for e in range(2):
            b = int(self._j_body[i, e])
            if self._alive[b]:
                self._wake(b)

    @property
    def joints(self) -> list:
        """Handles of all joints, in row order."""
        n = self._n_joints
        return [Joint(self, int(i), int(self._j_gen[i])) for i in np.flatnonzero(self._j_alive[:n])]

    @property
    def joint_count(self) -> int:
        """Number of joints in the world."""
        return int(self._j_alive[:self._n_joints].sum())

    def joint_events(self) -> list:
        """The joints whose reaction force or torque exceeded their threshold in the last step, as
        ``JointEvent(joint, force, torque, broke)`` (``broke``: the joint was removed)."""
        return list(self._joint_events)

    def _origin_frame(self, b):
        """(origin, cos θ, sin θ) of body b."""
        c, s = math.cos(self._angle[b]), math.sin(self._angle[b])
        lc = self._local_center[b]
        o = self._com[b] - np.array((c * lc[0] - s * lc[1], s * lc[0] + c * lc[1]))
        return o, c, s

    def _joint_table(self):
        """The joint table as the step sees it (``joints.JointTable``: views of the live rows)."""
        n = self._n_joints
        return _joints.JointTable(self._j_kind[:n], self._j_alive[:n] & self._j_enabled[:n], self._j_body[:n],
                                  self._j_local[:n], self._j_param[:n], self._j_impulse[:n], self._j_reaction[:n])

    def _joined_keys(self):
        """The body pairs the joints keep from colliding, as sorted keys min << 32 | max: the pairs of live joints
        without collide_connected, except joints to the world's static body (it holds the ground)."""
        if self._joined is None:
            n = self._n_joints
            sb = self._static_body.index
            pick = self._j_alive[:n] & ~self._j_collide[:n] & (self._j_body[:n, 0] != sb) & (self._j_body[:n, 1] != sb)
            ab = self._j_body[:n][pick]
            keys = (np.minimum(ab[:, 0], ab[:, 1]) << _step.KEY_SHIFT) | np.maximum(ab[:, 0], ab[:, 1])
            self._joined = np.unique(keys).astype(np.int64)
        return self._joined

    def _check_joint_thresholds(self):
        """After a step: the joints whose reaction crossed a threshold, reported and, unless they only report,
        removed (``joint_events``)."""
        n = self._n_joints
        if n == 0:
            if self._joint_events:
                self._joint_events = []
            return
        th = self._j_threshold[:n]
        watch = self._j_alive[:n] & self._j_enabled[:n] & ((th[:, 0] < np.inf) | (th[:, 1] < np.inf))
        events = []
        if watch.any():
            r = self._j_reaction[:n]
            force = np.hypot(r[:, 0], r[:, 1])
            over = watch & ((force > th[:, 0]) | (np.abs(r[:, 2]) > th[:, 1]))
            for i in np.flatnonzero(over).tolist():
                handle = Joint(self, i, int(self._j_gen[i]))
                broke = not self._j_report[i]
                events.append(JointEvent(handle, r[i, 0:2].copy(), float(r[i, 2]), broke))
                if broke:
                    self._remove_joint(i)
        self._joint_events = events

    @property
    def bodies(self) -> list:
        """Handles of all bodies, in the order of the rows of ``positions`` (static body excluded)."""
        idx = self._body_rows()
        return [Body(self, int(i), int(self._gen[i])) for i in idx]

    def _body_rows(self):
        n = self._n_bodies
        idx = np.flatnonzero(self._alive[:n])
        return idx[idx != self._static_body.index]

    @property
    def body_count(self) -> int:
        """Number of bodies in the world, the static body excluded (the rows of :attr:`positions`)."""
        return int(len(self._body_rows()))

    @property
    def positions(self) -> np.ndarray:
        """Body origins, one row per body (order of ``bodies``)."""
        idx = self._body_rows()
        c = np.cos(self._angle[idx])
        s = np.sin(self._angle[idx])
        lc = self._local_center[idx]
        return self._com[idx] - np.stack([c * lc[:, 0] - s * lc[:, 1], s * lc[:, 0] + c * lc[:, 1]], axis=1)

    @property
    def angles(self) -> np.ndarray:
        """Body angles (radians), one per body in the order of :attr:`bodies` (a copy)."""
        return self._angle[self._body_rows()].copy()

    @property
    def velocities(self) -> np.ndarray:
        """Velocities of the bodies' centres of mass (m/s), shape (n, 2), in the order of :attr:`bodies` (a copy; write
        with :meth:`set_state`)."""
        return self._vel[self._body_rows()].copy()

    @property
    def angular_velocities(self) -> np.ndarray:
        """Angular velocities (rad/s, counter-clockwise positive), one per body in the order of :attr:`bodies` (a
        copy)."""
        return self._angvel[self._body_rows()].copy()

    # --- bulk writes (validated as a whole first: a refused call changes nothing) ---------------------------
    def _rows_of(self, bodies, unique=False):
        """Body rows from ``bodies``: a list or tuple of :class:`Body` handles of this world or body indices
        (ints, not bools), or a 1-d integer array of indices; each a live body (a handle of the same
        generation), and with ``unique`` none twice."""
        if isinstance(bodies, np.ndarray):
            if bodies.ndim != 1 or (bodies.size and bodies.dtype.kind not in "iu"):
                raise SimulationError(f"bodies must be Body handles or a 1-d array of body indices, got {bodies!r}")
            rows = bodies.astype(np.int64)
            gens = None
        elif isinstance(bodies, (list, tuple)):
            rows = np.empty(len(bodies), np.int64)
            gens = np.full(len(bodies), -1, np.int64)
            for k, b in enumerate(bodies):
                if isinstance(b, Body):
                    if b.world is not self:
                        raise CaromError(f"bodies[{k}] is a body of another world")
                    rows[k] = b.index
                    gens[k] = b.generation
                else:
                    rows[k] = _validate.integer(b, f"bodies[{k}]", -2 ** 63, 2 ** 63 - 1)
        else:
            raise SimulationError(f"bodies must be a list of Body handles or an array of body indices, got "
                                  f"{bodies!r}")
        bad = (rows < 0) | (rows >= self._n_bodies)
        bad[~bad] = ~self._alive[rows[~bad]]
        if gens is not None:
            bad[~bad] = (gens[~bad] >= 0) & (self._gen[rows[~bad]] != gens[~bad])
        if bad.any():
            k = int(np.argmax(bad))
            raise StaleHandleError(f"bodies[{k}] (body {int(rows[k])}) is not a live body of this world (removed "
                                   "or never created)")
        if unique and rows.size:
            order = np.sort(rows)
            twice = order[1:][order[1:] == order[:-1]]
            if twice.size:
                raise SimulationError(f"bodies names body {int(twice[0])} more than once")
        return rows

    @staticmethod
    def _per_body(arr, name, m):
        """``arr`` (already checked) must have one row per body written."""
        if arr.shape[0] != m:
            raise SimulationError(f"{name} has {arr.shape[0]} rows for {m} bodies")
        return arr

    def _wake_rows(self, rows, partners=False):
        """:meth:`_wake` for the bodies of ``rows`` at once, with the same outcome as one by one: the sleeping
        islands of those bodies (and with ``partners`` of the bodies they touch) wake."""
        n = self._n_bodies
        asleep = self._asleep[:n]
        if rows.size and asleep.any():
            woken = rows
            if partners and self._contacts[0].size:
                keys, count = self._contacts[0], self._contacts[1]
                ba = self._s_body[keys >> _step.KEY_SHIFT]
                bb = self._s_body[keys & _step.KEY_MASK]
                mine = np.zeros(n, np.bool_)
                mine[rows] = True
                touching = count > 0
                woken = np.concatenate([rows, bb[touching & mine[ba]], ba[touching & mine[bb]]])
            hit = woken[asleep[woken]]
            if hit.size:
                group = asleep & np.isin(self._island[:n], self._island[hit])
                asleep[group] = False
                self._sleep_time[:n][group] = 0.0
        self._sleep_time[rows] = 0.0

    def set_state(self, bodies: "Any", positions: "Optional[ArrayLike]" = None, angles: "Optional[ArrayLike]" = None,
                  velocities: "Optional[ArrayLike]" = None, angular_velocities: "Optional[ArrayLike]" = None) -> None:
        """Write the state of many bodies at once: ``bodies`` (Body handles or body indices, each once) and
        for each given argument one row per body: ``positions`` (n, 2) body origins, ``angles`` (n,),
        ``velocities`` (n, 2) of the centres of mass, ``angular_velocities`` (n,). The same as setting, body
        by body, ``angle``, then ``position``, then ``velocity``, then ``angular_velocity`` through the Body
        properties (bitwise, with the same bodies woken), without a Python loop over the bodies. Every value
        is checked first (finite, within the limits of those properties, one row per body, live bodies of this
        world); a refused call changes nothing."""
        self._check_unlocked()
        rows = self._rows_of(bodies, unique=True)
        m = rows.shape[0]
        p = None if positions is None else self._per_body(
            _validate.points(positions, "positions", WORLD_LIMIT), "positions", m)
        a = None if angles is None else self._per_body(
            _validate.values(angles, "angles", magnitude=ANGLE_LIMIT), "angles", m)
        v = None if velocities is None else self._per_body(
            _validate.points(velocities, "velocities", FLOAT32_LIMIT), "velocities", m)
        w = None if angular_velocities is None else self._per_body(
            _validate.values(angular_velocities, "angular_velocities", magnitude=FLOAT32_LIMIT),
            "angular_velocities", m)
        moved = p is not None or a is not None
        if moved:
            lc = self._local_center[rows]
            if p is None:         # (angles alone: the origins stay, as Body.angle keeps Body.position)
                c, s = np.cos(self._angle[rows]), np.sin(self._angle[rows])
                p = self._com[rows] - np.stack([c * lc[:, 0] - s * lc[:, 1], s * lc[:, 0] + c * lc[:, 1]], axis=1)
            if a is not None:
                self._angle[rows] = a
            c, s = np.cos(self._angle[rows]), np.sin(self._angle[rows])
            self._com[rows] = p + np.stack([c * lc[:, 0] - s * lc[:, 1], s * lc[:, 0] + c * lc[:, 1]], axis=1)
            self._query_boxes = None
        if v is not None:
            self._vel[rows] = v
            self._vel[rows] *= _unlocked(self._locks[rows])
        if w is not None:
            self._angvel[rows] = np.where(self._fixed_rotation[rows], 0.0, w)
        self._wake_rows(rows, partners=moved)

    def apply_impulses(self, bodies: "Any", impulses: "ArrayLike", points: "Optional[ArrayLike]" = None) -> None:
        """:meth:`Body.apply_impulse` for many bodies at once: ``impulses`` (n, 2) N·s, at ``points`` (n, 2,
        world) or at the centres of mass. A body may appear more than once (its impulses add up in order, as
        one call after another would). Static and kinematic bodies are left as they are. Everything is checked
        first, including the velocities the impulses give (within the solver's limit); a refused call
        changes nothing."""
        self._check_unlocked()
        rows = self._rows_of(bodies)
        m = rows.shape[0]
        j = self._per_body(_validate.points(impulses, "impulses"), "impulses", m)
        p = None if points is None else self._per_body(_validate.points(points, "points", WORLD_LIMIT), "points", m)
        dynamic = np.flatnonzero(self._kind[rows] == _step.DYNAMIC)
        r, jd = rows[dynamic], j[dynamic]
        n = self._n_bodies
        vel = self._vel[:n].copy()
        angvel = self._angvel[:n].copy()
        np.add.at(vel, r, self._inv_mass[r][:, None] * jd)
        if p is not None:
            arm = p[dynamic] - self._com[r]
            np.add.at(angvel, r, self._inv_inertia[r] * (arm[:, 0] * jd[:, 1] - arm[:, 1] * jd[:, 0]))
        bad = ~((np.abs(vel[r]) <= FLOAT32_LIMIT).all(axis=1) & (np.abs(angvel[r]) <= FLOAT32_LIMIT))
        if bad.any():
            k = int(dynamic[np.argmax(bad)])
            b = int(rows[k])
            raise SimulationError(f"impulses[{k}] = {tuple(j[k].tolist())} would give body {b} the velocity "
                                  f"{tuple(vel[b].tolist())} and angular velocity {float(angvel[b])}, beyond the "
                                  f"solver's limit {FLOAT32_LIMIT:g}")
        self._vel[:n] = vel
        self._angvel[:n] = angvel
        self._wake_rows(r)

    def apply_forces(self, bodies: "Any", forces: "ArrayLike", points: "Optional[ArrayLike]" = None) -> None:
        """:meth:`Body.apply_force` for many bodies at once: ``forces`` (n, 2) N for the next step, at ``points``
        (n, 2, world) or at the centres of mass. A body may appear more than once (its forces add up in
        order). Everything is checked first, including each body's total force and torque and the
        accelerations they give (within the solver's limit); a refused call changes nothing."""
        self._check_unlocked()
        rows = self._rows_of(bodies)
        m = rows.shape[0]
        f = self._per_body(_validate.points(forces, "forces"), "forces", m)
        p = None if points is None else self._per_body(_validate.points(points, "points", WORLD_LIMIT), "points", m)
        n = self._n_bodies
        force = self._force[:n].copy()
        torque = self._torque[:n].copy()
        if p is not None:
            arm = p - self._com[rows]
            np.add.at(torque, rows, arm[:, 0] * f[:, 1] - arm[:, 1] * f[:, 0])
        np.add.at(force, rows, f)
        big = np.abs(force[rows]).max(axis=1) if m else np.zeros(0)
        turn = np.abs(torque[rows])
        bad = ~((big <= FLOAT32_LIMIT) & (turn <= FLOAT32_LIMIT) & (self._inv_mass[rows] * big <= FLOAT32_LIMIT)
                & (self._inv_inertia[rows] * turn <= FLOAT32_LIMIT))
        if bad.any():
            k = int(np.argmax(bad))
            b = int(rows[k])
            raise SimulationError(f"forces[{k}] = {tuple(f[k].tolist())} would give body {b} the force "
                                  f"{tuple(force[b].tolist())} and torque {float(torque[b])}, beyond the solver's "
                                  f"limit {FLOAT32_LIMIT:g} (or its accelerations would be)")
        self._force[:n] = force
        self._torque[:n] = torque
        self._wake_rows(rows)

    def add_bodies(self, positions: "ArrayLike", angles: "Optional[ArrayLike]" = None,
                   velocities: "Optional[ArrayLike]" = None, angular_velocities: "Optional[ArrayLike]" = None, *,
                   shape: "Any",
                   density: "float" = 1.0, friction: "float" = 0.6, restitution: "float" = 0.0,
                   sensor: "bool" = False, category: "Bits" = 1, mask: "Bits" = ALL_CATEGORIES,
                   group: "int" = 0, tangent_speed: "float" = 0.0, rolling_resistance: "float" = 0.0,
                   one_way: "Any" = None, bullet: "bool" = False,
                   linear_damping: "float" = 0.0, angular_damping: "float" = 0.0, gravity_scale: "float" = 1.0) -> list:
        """Add n dynamic bodies with one shape each, the same ``shape`` and material for all, at ``positions``
        (n, 2) with ``angles`` (n,), ``velocities`` (n, 2) and ``angular_velocities`` (n,) (zeros if not
        given); returns their handles. The world is the one ``add_body`` then ``add_shape`` body after body
        would give (the same rows, masses, proxies and state; the vertex table takes the n shapes' rows in one
        piece), but the mass is computed once and the rows are written as arrays. Every argument is checked
        first; a refused call changes nothing.

        Shape and material arguments as in :meth:`Body.add_shape` (``density``, ``friction``, ``restitution``,
        ``sensor``, ``category``, ``mask``, ``group``, ``tangent_speed``, ``rolling_resistance``, ``one_way``), body
        settings as in :meth:`add_body` (``bullet``, ``linear_damping``, ``angular_damping``, ``gravity_scale``).
        """
        self._check_unlocked()
        p = _validate.points(positions, "positions", WORLD_LIMIT)
        k = p.shape[0]
        a = np.zeros(k) if angles is None else self._per_body(
            _validate.values(angles, "angles", magnitude=ANGLE_LIMIT), "angles", k)
        v = np.zeros((k, 2)) if velocities is None else self._per_body(
            _validate.points(velocities, "velocities", FLOAT32_LIMIT), "velocities", k)
        w = np.zeros(k) if angular_velocities is None else self._per_body(
            _validate.values(angular_velocities, "angular_velocities", magnitude=FLOAT32_LIMIT),
            "angular_velocities", k)
        fast = _flag(bullet, "bullet")
        ld = _number(linear_damping, "linear_damping", 0.0)
        ad = _number(angular_damping, "angular_damping", 0.0)
        gs = _number(gravity_scale, "gravity_scale", magnitude=FLOAT32_LIMIT)
        d, f, e, is_sensor, cat, msk, grp, ts, rr, ow = self._shape_settings(
            shape, density, friction, restitution, sensor, category, mask, group, tangent_speed, rolling_resistance,
            one_way)
        mass = self._parts_mass(((shape, d),))
        self._check_shape_mass(mass, d, "each body")
        if k == 0:
            return []
        # each placed shape within the world limit (as ``add_shape`` checks it)
        cs, sn = np.cos(a)[:, None], np.sin(a)[:, None]
        vx, vy = shape.vertices[:, 0], shape.vertices[:, 1]
        reach = np.maximum(np.abs(p[:, :1] + cs * vx - sn * vy).max(axis=1),
                           np.abs(p[:, 1:] + sn * vx + cs * vy).max(axis=1)) + shape.radius
        if (reach > WORLD_LIMIT).any():
            i = int(np.flatnonzero(reach > WORLD_LIMIT)[0])
            raise GeometryError(f"{shape!r} at positions[{i}] = ({p[i, 0]:g}, {p[i, 1]:g}) reaches beyond the "
                                f"world limit {WORLD_LIMIT:g} m")
        self._settle_events()     # (shape slots may be reused)
        # body rows: from the free list (last freed first), then new ones, the arrays doubling as add_body does
        free = self._free_bodies
        reused = [free.pop() for _ in range(min(k, len(free)))]
        first = self._n_bodies
        cap = self._com.shape[0]
        while first + k - len(reused) > cap:
            for name in self._body_arrays:
                setattr(self, name, _grow(getattr(self, name), 2 * cap))
            self._gravity_scale[cap:] = 1.0
            self._body_shapes.extend([] for _ in range(cap))
            cap *= 2
        rows = np.array(reused + list(range(first, first + k - len(reused))), np.int64)
        self._n_bodies = first + k - len(reused)
        # shape rows likewise
        sfree = self._free_shapes
        sreused = [sfree.pop() for _ in range(min(k, len(sfree)))]
        sfirst = self._n_shapes
        scap = self._s_body.shape[0]
        while sfirst + k - len(sreused) > scap:
            for name in self._shape_arrays:
                setattr(self, name, _grow(getattr(self, name), 2 * scap))
            scap *= 2
        srows = np.array(sreused + list(range(sfirst, sfirst + k - len(sreused))), np.int64)
        self._n_shapes = sfirst + k - len(sreused)
        self._s_geometry.extend([None] * (k - len(sreused)))
        nv = shape.vertices.shape[0]
        o = self._vertex_rows(nv * k)
        # the bodies as add_body leaves them
        self._com[rows] = p
        self._angle[rows] = a
        self._vel[rows] = v
        self._angvel[rows] = w
        self._kind[rows] = _step.DYNAMIC
        self._bullet[rows] = fast
        self._alive[rows] = True
        self._force[rows] = 0.0
        self._torque[rows] = 0.0
        self._lin_damping[rows] = ld
        self._ang_damping[rows] = ad
        self._gravity_scale[rows] = gs
        self._can_sleep[rows] = True
        self._fixed_rotation[rows] = False
        self._sleep_threshold[rows] = SLEEP_LINEAR_TOLERANCE
        self._locks[rows] = 0
        self._mass_override[rows] = 0
        # the shapes as _add_shape writes them
        self._verts[o:o + nv * k] = np.tile(shape.vertices, (k, 1))
        self._normals[o:o + nv * k] = np.tile(shape.normals, (k, 1))
        self._s_body[srows] = rows
        self._s_alive[srows] = True
        self._s_offset[srows] = o + nv * np.arange(k)
        self._s_count[srows] = nv
        self._s_radius[srows] = shape.radius
        self._s_friction[srows] = f
        self._s_restitution[srows] = e
        self._s_density[srows] = d
        self._s_sensor[srows] = is_sensor
        self._s_category[srows] = cat
        self._s_mask[srows] = msk
        self._s_group[srows] = grp
        self._s_tangent_speed[srows] = ts
        self._s_rolling[srows] = rr
        self._s_one_way[srows] = ow
        self._s_chain[srows] = 0
        self._s_ghost[srows] = 0.0
        # each shape's box at its body's origin (the transform _origin_transform gives a body without mass yet)
        # and its proxy: one compiled call each
        c, s = np.cos(a), np.sin(a)
        x = p[:, 0] - (c * 0.0 - s * 0.0)
        y = p[:, 1] - (s * 0.0 + c * 0.0)
        boxes = np.empty((k, 4))
        pids = np.empty(k, np.int64)
        verts, radius = shape._kernel_vertices, shape.radius
        xs, ys, cs, ss, slots = x.tolist(), y.tolist(), c.tolist(), s.tolist(), srows.tolist()
        for j in range(k):
            lx, ly, ux, uy = core_aabb(verts, radius, xs[j], ys[j], cs[j], ss[j])
            boxes[j] = (lx, ly, ux, uy)
            pid = self._bp.insert((lx, ly), (ux, uy), static=False)
            if pid >= self._proxy_shape.shape[0]:
                self._proxy_shape = _grow(self._proxy_shape, 2 * pid + 2)
            self._proxy_shape[pid] = slots[j]
            pids[j] = pid
        self._s_proxy[srows] = pids
        gen = self._s_gen
        for b, sl in zip(rows.tolist(), slots):
            self._s_geometry[sl] = shape
            self._body_shapes[b] = [ShapeHandle(self, sl, int(gen[sl]), shape)]
        # the mass as _update_mass sets it, the same for every body
        area_m, cx, cy, inertia, min_extent = mass
        self._mass[rows] = area_m
        self._inertia[rows] = inertia
        self._inv_mass[rows] = 1.0 / area_m if area_m > 0.0 else 0.0
        self._inv_inertia[rows] = 1.0 / inertia if area_m > 0.0 and inertia > 0.0 else 0.0
        self._local_center[rows] = (cx, cy)
        self._com[rows, 0] = x + (c * cx - s * cy)
        self._com[rows, 1] = y + (s * cx + c * cy)
        self._min_extent[rows] = min_extent if math.isfinite(min_extent) else 0.0
        self._s_reach[srows] = float(np.max(np.hypot(*(shape.vertices - (cx, cy)).T))) + shape.radius
        self._query_boxes = None
        self._sleep_time[rows] = 0.0
        if self._asleep[:self._n_bodies].any():
            for lx, ly, ux, uy in boxes.tolist():
                self._wake_touching(lx, ly, ux, uy)
        return [Body(self, b, int(self._gen[b])) for b in rows.tolist()]

    # --- shapes ----------------------------------------------------------------------------------------
    @staticmethod
    def _shape_settings(shape, density, friction, restitution, sensor, category, mask, group, tangent_speed=0.0,
                        rolling_resistance=0.0, one_way=None):
        """The checked arguments of :meth:`Body.add_shape` (``add_bodies`` takes the same)."""
        if isinstance(shape, ShapeHandle):
            raise CaromError(f"{shape!r} is already attached to a body; add its geometry to attach a copy")
        if not isinstance(shape, Shape):
            raise GeometryError(f"expected a carom shape (Circle, Capsule, Segment, Polygon), got {shape!r}")
        d = _number(density, "density", 0.0, FLOAT32_LIMIT)
        if 0.0 < d < 1.0 / FLOAT32_LIMIT:
            raise SimulationError(f"density = {d!r} is below {1.0 / FLOAT32_LIMIT:g} (the solver's single precision "
                                  "would make the mass zero); use 0 for a massless shape")
        f = _number(friction, "friction", 0.0, FLOAT32_LIMIT)
        e = _number(restitution, "restitution", 0.0, 1.0)
        ts = _number(tangent_speed, "tangent_speed", magnitude=MAX_TRANSLATION_SPEED)
        rr = _number(rolling_resistance, "rolling_resistance", 0.0, FLOAT32_LIMIT)
        ow = _one_way(one_way)
        is_sensor = _flag(sensor, "sensor")
        cat = _bits(category, "category")
        msk = _bits(mask, "mask")
        grp = _group(group)
        if np.abs(shape.vertices).max() + shape.radius > WORLD_LIMIT:
            raise GeometryError(f"{shape!r} reaches beyond the world limit {WORLD_LIMIT:g} m")
        return d, f, e, is_sensor, cat, msk, grp, ts, rr, ow

    @staticmethod
    def _check_shape_mass(mass, d, who):
        """A dynamic body's mass and inertia from shapes (:meth:`_body_mass`) must fit single precision."""
        if mass[0] > 0.0 and not (1.0 / FLOAT32_LIMIT <= mass[0] <= FLOAT32_LIMIT
                                  and 1.0 / FLOAT32_LIMIT <= mass[3] <= FLOAT32_LIMIT):
            raise SimulationError(f"density = {d!r} would give {who} the mass {mass[0]:g} kg and inertia "
                                  f"{mass[3]:g} kg·m², beyond the solver's single precision (both must be within "
                                  f"[{1.0 / FLOAT32_LIMIT:g}, {FLOAT32_LIMIT:g}])")

    def _add_shape(self, b, shape, density, friction, restitution, sensor, category, mask, group, tangent_speed=0.0,
                   rolling_resistance=0.0, one_way=None):
        self._check_unlocked()
        d, f, e, is_sensor, cat, msk, grp, ts, rr, ow = self._shape_settings(
            shape, density, friction, restitution, sensor, category, mask, group, tangent_speed, rolling_resistance,
            one_way)
        mass = self._body_mass(b, ((shape, d),))
        if self._kind[b] == _step.DYNAMIC:
            self._check_shape_mass(mass, d, f"body {b}")
        x, y, c, sn = self._origin_transform(b)
        lx, ly, ux, uy = core_aabb(shape._kernel_vertices, shape.radius, x, y, c, sn)
        if max(-lx, -ly, ux, uy) > WORLD_LIMIT:
            # (the shape alone is checked against the limit in its body's frame: placed on the body it can
            # still reach beyond it, where positions lose their precision and the broad phase's boxes overflow)
            raise GeometryError(f"{shape!r} on body {b} at ({x:g}, {y:g}) reaches beyond the world limit "
                                f"{WORLD_LIMIT:g} m (its box spans ({lx:g}, {ly:g}) to ({ux:g}, {uy:g}))")
        n = shape.vertices.shape[0]
        self._settle_events()     # the last step's events name shapes by slot, and this may reuse one
        if self._free_shapes:
            s = self._free_shapes.pop()
        else:
            s = self._n_shapes
            if s == self._s_body.shape[0]:
                for name in self._shape_arrays:
                    setattr(self, name, _grow(getattr(self, name), 2 * s))
            self._n_shapes += 1
            self._s_geometry.append(None)
        o = self._vertex_rows(n)
        self._verts[o:o + n] = shape.vertices
        self._normals[o:o + n] = shape.normals
        self._s_body[s] = b
        self._s_alive[s] = True
        self._s_offset[s] = o
        self._s_count[s] = n
        self._s_radius[s] = shape.radius
        self._s_friction[s] = f
        self._s_restitution[s] = e
        self._s_tangent_speed[s] = ts
        self._s_rolling[s] = rr
        self._s_one_way[s] = ow
        self._s_chain[s] = 0
        self._s_ghost[s] = 0.0
        self._s_density[s] = d
        self._s_sensor[s] = is_sensor
        self._s_category[s] = cat
        self._s_mask[s] = msk
        self._s_group[s] = grp
        self._s_geometry[s] = shape
        pid = self._bp.insert((lx, ly), (ux, uy), static=bool(self._kind[b] == _step.STATIC))
        if pid >= self._proxy_shape.shape[0]:
            self._proxy_shape = _grow(self._proxy_shape, 2 * pid + 2)
        self._proxy_shape[pid] = s
        self._s_proxy[s] = pid
        self._query_boxes = None
        handle = ShapeHandle(self, s, int(self._s_gen[s]), shape)
        self._body_shapes[b].append(handle)
        self._update_mass(b, mass)
        self._wake(b)
        if self._asleep[:self._n_bodies].any():
            self._wake_touching(lx, ly, ux, uy)
        return handle

    def _add_chain(self, b, points, loop, friction, restitution, category, mask, group):
        """:meth:`Body.add_chain`: everything checked, then the segments added in order."""
        self._check_unlocked()
        if self._kind[b] == _step.DYNAMIC:
            raise SimulationError(f"body {b} is dynamic: chains go on static or kinematic bodies (a segment has no "
                                  "mass; Box2D's chains are static geometry)")
        closed = _flag(loop, "loop")
        p = _validate.points(points, "chain points", WORLD_LIMIT, error=GeometryError)
        n = p.shape[0]
        if n < (3 if closed else 2):
            raise GeometryError(f"a {'loop' if closed else 'chain'} needs at least {3 if closed else 2} points, "
                                f"got {n}: {p.tolist()}")
        ends = np.roll(p, -1, axis=0)
        step_len = np.hypot(*(ends - p).T)
        short = step_len <= WELDING_TOLERANCE
        if not closed:
            short[-1] = False
        if short.any():
            k = int(np.argmax(short))
            what = (f"the loop's last point {p[k].tolist()} repeats its first (a loop closes itself)"
                    if k == n - 1 else f"chain points[{k}] = {p[k].tolist()} and points[{k + 1}] = "
                    f"{p[k + 1].tolist()} are within {WELDING_TOLERANCE:g} m of each other")
            raise GeometryError(what)
        m = n if closed else n - 1
        fr = self._per_segment(friction, "friction", m, 0.0, FLOAT32_LIMIT)
        rs = self._per_segment(restitution, "restitution", m, 0.0, 1.0)
        segments = [Segment(p[k], p[(k + 1) % n]) for k in range(m)]
        for k in range(m):      # (the checks add_shape makes, before anything is added)
            self._shape_settings(segments[k], 0.0, fr[k], rs[k], False, category, mask, group)
        rows = []
        for k in range(m):
            a, c = p[k], p[(k + 1) % n]
            d = c - a
            nrm = np.array([-d[1], d[0]]) / math.hypot(d[0], d[1])
            flags = _step.CHAIN
            ghost = np.zeros(4)
            if closed or k > 0:
                flags |= _step.CHAIN_PREV
                ghost[:2] = p[(k - 1) % n]
            if closed or k < m - 1:
                flags |= _step.CHAIN_NEXT
                ghost[2:] = p[(k + 2) % n]
            rows.append((flags, ghost, nrm))
        handles = []
        for k in range(m):
            h = self._add_shape(b, segments[k], 0.0, fr[k], rs[k], False, category, mask, group,
                                one_way=tuple(rows[k][2].tolist()))
            self._s_chain[h.index] = rows[k][0]
            self._s_ghost[h.index] = rows[k][1]
            handles.append(h)
        return handles

    @staticmethod
    def _per_segment(value, name, m, low, high):
        """A chain's material: one number for every segment, or a sequence of exactly m (one per segment)."""
        if isinstance(value, (list, tuple, np.ndarray)):
            arr = _validate.values(value, name, low, high)
            if arr.shape[0] != m:
                raise SimulationError(f"{name} has {arr.shape[0]} values; the chain has {m} segments (give one "
                                      "number, or one per segment)")
            return arr.tolist()
        return [_number(value, name, low, high)] * m

    def _wake_touching(self, lx, ly, ux, uy):
        """Wake the sleeping bodies with a shape within the speculative distance of the box [lx, ux] × [ly, uy]
        (a new shape's): a shape added onto a sleeping body, or to the static body, would otherwise push into
        it unseen, as a sleeping body's contacts are not tested until something wakes it."""
        m = SPECULATIVE_DISTANCE
        lower = (max(lx - m, -WORLD_LIMIT), max(ly - m, -WORLD_LIMIT))
        upper = (min(ux + m, WORLD_LIMIT), min(uy + m, WORLD_LIMIT))
        for h in queries.query_aabb(self, lower, upper, ALL_CATEGORIES, None):
            o = int(self._s_body[h.index])
            if self._asleep[o]:
                self._wake(o)

    def _vertex_rows(self, n):
        """The offset of n free rows at the end of the vertex table (``_verts``, ``_normals``).

        Removed shapes leave their rows behind. When the table is full and at least half of it would be free
        without them, the live rows are first moved down over the dead ones (:meth:`_compact_vertex_rows`);
        otherwise it doubles. So adding and removing shapes forever keeps it under four times the live rows."""
        if self._n_verts + n > self._verts.shape[0]:
            live = np.flatnonzero(self._s_alive[:self._n_shapes])
            used = int(self._s_count[live].sum())
            if 2 * (used + n) <= self._verts.shape[0]:
                self._compact_vertex_rows(live)
            else:
                cap = max(2 * self._verts.shape[0], self._n_verts + n)
                self._verts = _grow(self._verts, cap)
                self._normals = _grow(self._normals, cap)
        o = self._n_verts
        self._n_verts += n
        return o

    def _compact_vertex_rows(self, live):
        """Move the rows of the live shapes down over the dead ones, in order, and point their offsets there.
        In place: the step's kept views of the table and of the offsets (``_kernel_args``) stay valid. The
        freed rows are zeroed, as rows never written are."""
        order = live[np.argsort(self._s_offset[live], kind="stable")]
        counts = self._s_count[order]
        offsets = np.cumsum(counts) - counts
        total = int(counts.sum())
        rows = np.repeat(self._s_offset[order] - offsets, counts) + np.arange(total)
        for table in (self._verts, self._normals):
            table[:total] = table[rows]
            table[total:self._n_verts] = 0.0
        self._s_offset[order] = offsets
        self._n_verts = total

    def _remove_shape(self, handle, update_mass=True):
        s = handle._i()
        b = int(self._s_body[s])
        self._wake(b, partners=True)
        self._purge_contacts(s)
        self._s_alive[s] = False
        self._s_gen[s] += 1
        self._bp.remove(int(self._s_proxy[s]))
        self._query_boxes = None
        self._free_shapes.append(s)
        self._shape_data.pop(s, None)
        self._body_shapes[b] = [h for h in self._body_shapes[b] if h.index != s]
        if update_mass:
            self._update_mass(b)

    def _origin_transform(self, b):
        c, s = math.cos(self._angle[b]), math.sin(self._angle[b])
        lc = self._local_center[b]
        return (float(self._com[b, 0] - (c * lc[0] - s * lc[1])), float(self._com[b, 1] - (s * lc[0] + c * lc[1])),
                c, s)

    def _body_mass(self, b, extra=()):
        """(mass, cx, cy, inertia, min_extent) of body b's shapes and the (geometry, density) pairs ``extra``:
        the centroid in the body frame, the inertia about it. Each shape's area, centroid and inertia are
        about its own centroid (``shape_moments``) and combine with the parallel-axis theorem on c_shape −
        c_body, so nothing cancels for shapes far from the body's origin (J − m|c|² about the origin gave a
        10 cm box at (1000, 1000) a negative inertia)."""
        parts = [(self._s_geometry[h.index], float(self._s_density[h.index])) for h in self._body_shapes[b]]
        parts.extend(extra)
        return self._parts_mass(parts)

    @staticmethod
    def _parts_mass(parts):
        """:meth:`_body_mass` of the (geometry, density) pairs ``parts``."""
        pieces = []
        mass = 0.0
        min_extent = math.inf
        for geom, d in parts:
            a, cx, cy, jc = shape_moments(geom._kernel_vertices, geom._kernel_normals, geom.radius)
            if d * a > 0.0:
                pieces.append((d * a, cx, cy, d * jc))
                mass += d * a
            lo, hi = geom.vertices.min(axis=0) - geom.radius, geom.vertices.max(axis=0) + geom.radius
            ext = 0.5 * min(hi - lo)
            if geom.vertices.shape[0] == 2 and geom.radius > 0:
                ext = geom.radius
            min_extent = min(min_extent, max(ext, geom.radius))
        if mass <= 0.0:
            return 0.0, 0.0, 0.0, 0.0, min_extent
        # the centroid relative to the first piece's: exactly that one's for a single shape
        x0, y0 = pieces[0][1], pieces[0][2]
        cx = x0 + sum(m * (x - x0) for m, x, _, _ in pieces) / mass
        cy = y0 + sum(m * (y - y0) for m, _, y, _ in pieces) / mass
        inertia = sum(j + m * ((x - cx) ** 2 + (y - cy) ** 2) for m, x, y, j in pieces)
        return mass, cx, cy, inertia, min_extent

    def _update_mass(self, b, mass=None, center=None):
        """Set body b's mass, centroid and inertia from its shapes (``mass``: :meth:`_body_mass`'s answer, if
        already known), except those the user set (``_mass_override``; ``center``: a centre being set now);
        the body's origin stays where it is."""
        x, y, c, s_ = self._origin_transform(b)
        area_m, cx, cy, inertia, min_extent = self._body_mass(b) if mass is None else mass
        kind = self._kind[b]
        override = self._mass_override[b]
        if override & MASS_SET:
            area_m = float(self._mass[b])
        if override & INERTIA_SET:
            inertia = float(self._inertia[b])
        if center is not None:
            cx, cy = float(center[0]), float(center[1])
        elif override & CENTER_SET:
            cx, cy = float(self._local_center[b, 0]), float(self._local_center[b, 1])
        self._mass[b] = area_m
        self._inertia[b] = inertia
        self._inv_mass[b] = 1.0 / area_m if kind == _step.DYNAMIC and area_m > 0.0 else 0.0
        self._set_inv_inertia(b)
        self._local_center[b] = (cx, cy)
        self._com[b] = (x + (c * cx - s_ * cy), y + (s_ * cx + c * cy))
        self._query_boxes = None
        self._min_extent[b] = min_extent if math.isfinite(min_extent) else 0.0
        for h in self._body_shapes[b]:
            geom = self._s_geometry[h.index]
            self._s_reach[h.index] = float(np.max(np.hypot(*(geom.vertices - (cx, cy)).T))) + geom.radius

    def _set_inv_inertia(self, b):
        """The solver's inverse inertia of body b from its inertia: 0 for a body that does not turn (not dynamic,
        no mass, no inertia, or ``fixed_rotation``)."""
        inertia = self._inertia[b]
        turns = (self._kind[b] == _step.DYNAMIC and self._inv_mass[b] > 0.0 and inertia > 0.0
                 and not self._fixed_rotation[b])
        self._inv_inertia[b] = 1.0 / inertia if turns else 0.0

    def _check_mass_data(self, b, name):
        """Mass data can be set on dynamic bodies only (static and kinematic ones have infinite mass)."""
        if self._kind[b] != _step.DYNAMIC:
            raise SimulationError(f"{name} can be set on a dynamic body only; body {b} is "
                                  f"{KIND_NAMES[int(self._kind[b])]}")

    # --- stepping --------------------------------------------------------------------------------------
    def _step_args(self, dt, threads, clock):
        """``_step.step_kernel``'s arguments for a step of ``dt`` with ``threads`` threads, its stage times to
        ``clock``."""
        bodies, shapes, tree, proxy, proxy_shape = self._kernel_args()
        return (dt, self._substeps, float(self._gravity[0]), float(self._gravity[1]),
                MIX_RULES[self._friction_mixing], MIX_RULES[self._restitution_mixing], self.sleep_enabled, bodies,
                shapes, tree, proxy, proxy_shape, self._contacts, self._joint_table(), self._joined_keys(), threads,
                self._pre_solve_address, clock)

    def _kernel_args(self):
        """The step kernel's arrays: views of the live rows of the body and shape arrays, and the broad phase's.

        The views are kept between calls while the counts and the arrays are the same objects (the body
        arrays grow together, as do the shape arrays and the vertex pair): building ~35 views a step and
        dropping them again cost 20-30 µs of a 3 ms step, with the processor's caches cold from the step."""
        n = self._n_bodies
        ns = self._n_shapes
        kept = self._arg_views
        if (kept is not None and kept[0] == n and kept[1] == ns and kept[2] is self._com and kept[3] is self._s_body
                and kept[4] is self._verts):
            bodies, shapes, proxy = kept[5:]
        else:
            bodies, shapes, proxy = self._live_views(n, ns)
            self._arg_views = (n, ns, self._com, self._s_body, self._verts, bodies, shapes, proxy)
        bp = self._bp
        bp.reserve()          # (room for the leaves the step gives shapes added since the last one)
        tree = (bp._trees[0], bp._trees[1], bp._lower, bp._upper, bp._flags, bp._leaf, bp._moved,
                bp._moved_flag, bp._moved_meta, bp._cand, bp.margin, bp.multiplier)
        return bodies, shapes, tree, proxy, self._proxy_shape

    def _live_views(self, n, ns):
        bodies = (self._com[:n], self._angle[:n], self._vel[:n], self._angvel[:n], self._inv_mass[:n],
                  self._inv_inertia[:n], self._local_center[:n], self._kind[:n], self._bullet[:n],
                  self._alive[:n], self._force[:n], self._torque[:n], self._lin_damping[:n],
                  self._ang_damping[:n], self._gravity_scale[:n], self._min_extent[:n], self._asleep[:n],
                  self._sleep_time[:n], self._island[:n], self._can_sleep[:n],
                  self._sleep_threshold[:n], self._locks[:n])
        shapes = (self._s_body[:ns], self._s_alive[:ns], self._s_offset[:ns], self._s_count[:ns],
                  self._s_radius[:ns], self._s_friction[:ns], self._s_restitution[:ns], self._s_reach[:ns],
                  self._s_sensor[:ns], self._s_category[:ns], self._s_mask[:ns], self._s_group[:ns],
                  self._verts, self._normals, self._s_tangent_speed[:ns], self._s_rolling[:ns],
                  self._s_one_way[:ns], self._s_ghost[:ns], self._s_chain[:ns])
        return bodies, shapes, self._s_proxy[:ns]

    def step(self, dt: float) -> None:
        """Advance the world by ``dt`` seconds in one compiled call, then deliver events to the handlers.

        With ``world.profile = True`` the last step's time in each stage (ms, read from the processor's cycle
        counter inside the compiled step, so the figures include no call overhead) is in
        ``world.profile_times``: bounds, broad, narrow, prepare, solve, continuous, sleep and total. Contact
        events are found only when asked for (:meth:`contact_events`, or handlers registered with :meth:`on`).
        """
        self._check_unlocked()
        dt = _number(dt, "dt", 0.0, MAX_TIME_STEP, low_open=True)
        # a dynamic body without mass and non-finite velocities, forces or torques are found by the compiled
        # step before it changes anything (_step.first_bad_body); the error is raised below
        inside = None if self._bounds is None else self._inside_bounds(self._n_bodies)
        self._locked = True
        self._query_boxes = None
        try:
            old = self._contacts
            if not self._skip_apart:
                old[_step.CACHE][:, _step.CSEP] = -np.inf
            clock = np.zeros(len(_step.STAGES) + 1, np.int64)
            args = self._step_args(dt, self._governor.threads(step_threads()), clock)
            if getattr(_step.step_kernel, "overloads", True):     # (a plain function without the JIT)
                contacts, cand, approach, (bad, body) = _step.step_kernel(*args)
            else:                                  # the first step of the process: compile or load the step
                with compile_helper(_step.step_kernel, args, STEP_HELPER_JOB, _step.LATE_STAGES):
                    contacts, cand, approach, (bad, body) = _step.step_kernel(*args)
            if bad != _step.BODY_OK:
                raise self._refused_step(int(bad), int(body))
            self._governor.record(int(clock[-1] - clock[0]))
            if self.profile:
                self._record_profile(clock)
            self._contacts = contacts
            self._approach = approach
            self._bp._cand = cand
            # events are computed and built when asked for (contact_events, handlers): finding them cost ~0.2
            # ms a step and the record arrays as much again. Of last step's table only the keys, touch and
            # sensor flags are kept (holding the whole table grew the heap by several tables)
            pending, self._pending_end = self._pending_end, []
            self._events = None
            self._raw_events = (old[0], old[8], old[9], contacts, approach, self.hit_event_threshold, pending)
            self.step_count += 1
            self._last_dt = dt
            if inside is not None:
                gone = np.flatnonzero(inside & ~self._inside_bounds(inside.shape[0]))
                self._left, self._left_gen = gone, self._gen[gone].copy()
            elif self._left.size:
                self._left, self._left_gen = np.zeros(0, np.int64), np.zeros(0, np.int64)
        finally:
            self._locked = False
        self._check_joint_thresholds()
        self._deliver_events()
        if self._remove_outside:
            for body in self.left_bounds():
                if body.alive:
                    self.remove(body)

    def _refused_step(self, bad, i):
        """The SimulationError for what ``_step.first_bad_body`` found at body i (the step changed nothing)."""
        if bad == _step.BODY_MASSLESS:
            return SimulationError(f"dynamic body {i} has no mass: give it a shape with density > 0 (or make it "
                                   "static/kinematic)")
        name, arr = {_step.BODY_VELOCITY: ("velocity", self._vel), _step.BODY_ANGULAR_VELOCITY:
                     ("angular_velocity", self._angvel), _step.BODY_FORCE: ("force", self._force),
                     _step.BODY_TORQUE: ("torque", self._torque)}[bad]
        return SimulationError(f"body {i} has a non-finite {name}: {arr[i]}")

    def _record_profile(self, clock):
        """``profile_times`` from the step's stage clocks: ms per stage (``_step.STAGES``) and the total."""
        rate = cycles_per_second()
        if rate <= 0.0:
            self.profile_times = {}
            return
        ms = 1000.0 * np.diff(clock) / rate
        self.profile_times = {name: float(t) for name, t in zip(_step.STAGES, ms)}
        self.profile_times["total"] = float(1000.0 * (clock[-1] - clock[0]) / rate)

    # --- contacts (read-only views for tests, drawing and events) ------------------------------------------
    def contacts(self) -> list:
        """Contacts of the last step that have points (touching or speculative), sensors excluded: list of
        dicts (shape_a, shape_b, normal, points, separations, normal_impulses, tangent_impulses, touching).

        The impulses are each point's over the whole step (N·s): the sum of what every substep and the
        restitution applied, so a box resting on the ground shows m·g·dt whatever the substep count. The
        normal points from shape_a to shape_b; the tangent is (normal.y, −normal.x); the impulse acts on
        shape_b's body and its opposite on shape_a's. :meth:`contact_data` gives the same numbers (and the approach
        speeds) as arrays, one row per point, without a Python loop."""
        keys, count, ids, _, _, normal, points, sep, touch, sensor = self._contacts[:10]
        step = self._contacts[11]
        nimp = step[:, :, 0]
        timp = step[:, :, 1]
        out = []
        for k in np.flatnonzero((count > 0) & ~sensor):
            c = int(count[k])
            out.append(dict(shape_a=int(keys[k] >> _step.KEY_SHIFT), shape_b=int(keys[k] & _step.KEY_MASK),
                            normal=normal[k].copy(), points=points[k, :c].copy(), separations=sep[k, :c].copy(),
                            normal_impulses=nimp[k, :c].copy(), tangent_impulses=timp[k, :c].copy(),
                            touching=bool(touch[k])))
        return out

    def contact_data(self) -> ContactData:
        """The contacts of the last step that have points (touching or speculative), sensors excluded, as
        arrays with one row per contact point (:data:`ContactData`): ``shape_a``, ``shape_b``, ``body_a``,
        ``body_b`` (rows; :meth:`shape_handle`, :meth:`body_handle`), ``point`` and ``normal`` (n, 2),
        ``separation``, ``normal_impulse`` and ``tangent_impulse`` (each point's over the whole step, N·s: a box
        resting on the ground shows m·g·dt whatever the substep count), ``approach_speed`` (−v_n before the
        solve, m/s, positive when approaching; with gravity's share up to the meeting for a point not yet
        touching; 0 for contacts whose bodies slept; NaN when unknown: no step since the world was made or
        restored) and ``touching``. The rows of one contact are adjacent, in the contact table's order.

        The same numbers as :meth:`contacts` (a list of dicts, one per contact), without a Python loop; the
        impulse P = λn·n + λt·t acts on shape_b's body and −P on shape_a's. Handlers registered with
        ``on("post_solve", fn)`` receive these arrays after each step."""
        keys, count, normal, points, sep, touch, sensor, step = (
            self._contacts[0], self._contacts[1], self._contacts[5], self._contacts[6], self._contacts[7],
            self._contacts[8], self._contacts[9], self._contacts[11])
        k = np.flatnonzero((count > 0) & ~sensor)
        c = count[k]
        row = np.repeat(k, c)
        # each row's point index within its contact: 0, 1 for a two-point contact
        p = np.arange(row.size) - np.repeat(np.cumsum(c) - c, c)
        sa = (keys[row] >> _step.KEY_SHIFT).astype(np.int64)
        sb = (keys[row] & _step.KEY_MASK).astype(np.int64)
        approach = self._approach
        if approach is None:
            speed = np.full(row.size, np.nan)
        elif approach.shape[0] != keys.shape[0]:        # (a step in which every body slept: nothing moved)
            speed = np.zeros(row.size)
        else:
            speed = approach[row, p] + 0.0       # (+ 0: a missing point's −0 reads 0)
        return ContactData(sa, sb, self._s_body[sa], self._s_body[sb], points[row, p], normal[row],
                           sep[row, p], step[row, p, 0], step[row, p, 1], speed, touch[row])

    def contact_forces(self) -> np.ndarray:
        """Every body's total contact force over the last step, (n, 2) by body row (``Body.contact_force``
        for all bodies at once)."""
        return self._contact_forces(np.arange(self._n_bodies))

    def _contact_forces(self, which):
        """The contact force of the last step on the bodies of rows ``which``: the step impulses of the
        contact table, P = λn·n + λt·t on shape_b's body and −P on shape_a's, summed and divided by dt."""
        keys, count, normal, sensor, step = (self._contacts[0], self._contacts[1], self._contacts[5],
                                             self._contacts[9], self._contacts[11])
        out = np.zeros((len(which), 2))
        if self._last_dt == 0.0 or keys.size == 0:
            return out
        k = np.flatnonzero((count > 0) & ~sensor)
        sn = step[k, :, 0].sum(axis=1)
        st = step[k, :, 1].sum(axis=1)
        n = normal[k]
        p = np.stack((sn * n[:, 0] + st * n[:, 1], sn * n[:, 1] - st * n[:, 0]), axis=1)
        total = np.zeros((self._n_bodies, 2))
        np.add.at(total, self._s_body[keys[k] & _step.KEY_MASK], p)
        np.subtract.at(total, self._s_body[keys[k] >> _step.KEY_SHIFT], p)
        return total[which] / self._last_dt

    # --- queries (carom.rigid.queries: one compiled kernel each, through the broad phase) ------------------
    def raycast(self, p1: "Vec2", p2: "Vec2", mask: "Bits" = ALL_CATEGORIES, category: "Optional[Bits]" = None) -> list:
        """Every non-sensor shape the segment p1 → p2 enters, as ``WorldRayHit(shape, body, point, normal,
        fraction)`` sorted by fraction; only shapes with ``category & mask != 0``.

        ``mask`` selects the shapes by their category bits; with ``category`` given, a shape's mask must also meet
        it (the ray then filters as a shape of that category would).
        """
        self._check_unlocked()
        return queries.raycast(self, p1, p2, mask, category)

    def raycast_first(self, p1: "Vec2", p2: "Vec2", mask: "Bits" = ALL_CATEGORIES, category: "Optional[Bits]" = None) -> "Any":
        """The closest hit of :meth:`raycast`, or None.

        ``p1``, ``p2``, ``mask`` and ``category`` as in :meth:`raycast`.
        """
        self._check_unlocked()
        return queries.raycast_first(self, p1, p2, mask, category)

    def query_point(self, point: "Vec2", mask: "Bits" = ALL_CATEGORIES, category: "Optional[Bits]" = None) -> list:
        """Shapes containing the point (sensors included).

        ``mask`` and ``category`` filter the shapes as in :meth:`raycast`.
        """
        self._check_unlocked()
        return queries.query_point(self, point, mask, category)

    def query_aabb(self, lower: "Vec2", upper: "Vec2", mask: "Bits" = ALL_CATEGORIES,
                   category: "Optional[Bits]" = None) -> list:
        """Shapes whose bounding box overlaps [lower, upper] (sensors included).

        ``mask`` and ``category`` filter the shapes as in :meth:`raycast`.
        """
        self._check_unlocked()
        return queries.query_aabb(self, lower, upper, mask, category)

    def query_shape(self, shape: "Any", transform: "TransformLike", mask: "Bits" = ALL_CATEGORIES,
                    category: "Optional[Bits]" = None) -> list:
        """Shapes overlapping ``shape`` placed at ``transform`` (separation < 0; sensors included).

        ``mask`` and ``category`` filter the shapes as in :meth:`raycast`.
        """
        self._check_unlocked()
        return queries.query_shape(self, shape, transform, mask, category)

    def query_nearest(self, point: "Vec2", max_distance: "float", mask: "Bits" = ALL_CATEGORIES,
                      category: "Optional[Bits]" = None) -> "Any":
        """The shape whose surface is nearest to ``point`` within ``max_distance``, as ``NearestShape(shape,
        body, point, distance)`` (distance negative inside), or None; pymunk's point_query_nearest.

        ``mask`` and ``category`` filter the shapes as in :meth:`raycast`.
        """
        self._check_unlocked()
        return queries.query_nearest(self, point, max_distance, mask, category)

    def cast_shape(self, shape: "Any", transform: "TransformLike", translation: "Vec2", mask: "Bits" = ALL_CATEGORIES,
                   category: "Optional[Bits]" = None) -> "Any":
        """The first non-sensor shape met by ``shape`` at ``transform`` moved by ``translation``, as
        ``WorldCastHit(shape, body, point, normal, fraction)``, or None; Box2D's b2World_CastShape.

        ``mask`` and ``category`` filter the shapes as in :meth:`raycast`.
        """
        self._check_unlocked()
        return queries.cast_shape(self, shape, transform, translation, mask, category)

    def explode(self, center: "Vec2", radius: "float", impulse_per_length: "float", falloff: "float" = 0.0,
                mask: "Bits" = ALL_CATEGORIES) -> list:
        """Push the dynamic bodies' shapes near ``center`` away from it with ``impulse_per_length`` times their
        projected perimeter (full within ``radius``, fading to 0 over ``falloff``); Box2D's b2World_Explode.
        Returns the bodies pushed (woken).

        ``mask`` selects the shapes pushed by their category bits.
        """
        self._check_unlocked()
        return queries.explode(self, center, radius, impulse_per_length, falloff, mask)

    # --- sleep -------------------------------------------------------------------------------------------
    def _wake(self, b, partners=False):
        """Wake body b's sleeping island (every body sharing its island label); with ``partners`` also the
        islands of the bodies it touches (it is being removed or moved away: they may rest on it). Touching
        a sleeping body otherwise wakes it in the next step's narrow phase."""
        n = self._n_bodies
        if self._asleep[b]:
            group = self._asleep[:n] & (self._island[:n] == self._island[b])
            self._asleep[:n][group] = False
            self._sleep_time[:n][group] = 0.0
        self._sleep_time[b] = 0.0
        if partners and self._contacts[0].size and self._asleep[:n].any():
            for o in self._touching(b):
                if self._asleep[o]:
                    self._wake(int(o))

    def _touching(self, b):
        """The bodies with which body b has contacts with points in the last step's table (sorted, unique)."""
        keys, count = self._contacts[0], self._contacts[1]
        ba = self._s_body[keys >> _step.KEY_SHIFT]
        bb = self._s_body[keys & _step.KEY_MASK]
        touching = count > 0
        return np.unique(np.concatenate([bb[touching & (ba == b)], ba[touching & (bb == b)]]))

    @property
    def awake_count(self) -> int:
        """Number of dynamic and kinematic bodies that are awake (simulated this step)."""
        n = self._n_bodies
        return int((self._alive[:n] & (self._kind[:n] != _step.STATIC) & ~self._asleep[:n]).sum())

    # --- events ------------------------------------------------------------------------------------------
    def contact_events(self) -> ContactEvents:
        """Begin, end and hit events of the last step as NumPy record arrays (shape and body rows; turn them
        into handles with :meth:`shape_handle` / :meth:`body_handle`). Contacts ended by removing a shape
        appear among the end events of the next step."""
        self._settle_events()
        return self._events

    def _settle_events(self):
        """Build the last step's event records, if not yet done (before anything changes the shape slots
        they are read from)."""
        if self._raw_events is not None:
            self._events = self._build_events(*self._raw_events)
            self._raw_events = None

    def shape_handle(self, index: "int") -> "ShapeHandle":
        """The handle of the living shape in row ``index`` (as event and contact arrays give them); StaleHandleError if
        there is none.

        ``index`` is a shape row (an int).
        """
        s = _validate.integer(index, "index")
        if not 0 <= s < self._n_shapes or not self._s_alive[s]:
            raise StaleHandleError(f"shape {s} does not exist (removed or never created)")
        return ShapeHandle(self, s, int(self._s_gen[s]), self._s_geometry[s])

    def body_handle(self, index: "int") -> Body:
        """The handle of the living body in row ``index`` (as event and contact arrays give them); StaleHandleError if
        there is none.

        ``index`` is a body row (an int).
        """
        b = _validate.integer(index, "index")
        if not 0 <= b < self._n_bodies or not self._alive[b]:
            raise StaleHandleError(f"body {b} does not exist (removed or never created)")
        return Body(self, b, int(self._gen[b]))

    def on(self, kind: "str", handler: "Any", categories: "Any" = None) -> "Any":
        """Call ``handler(event)`` after each step for every ``kind`` event ("begin", "end" or "hit"), or
        ``handler(body)`` for every body that left the world :attr:`bounds` ("leave"; before it is removed when
        :attr:`remove_outside` is set), or ``handler(joint_event)`` for every joint whose reaction crossed its
        force or torque threshold ("joint": a :class:`~carom.rigid.joints.JointEvent`), or ``handler(data)``
        once per step with the step's contacts as arrays ("post_solve": :meth:`contact_data`, read-only; before
        the other handlers; ``categories`` must be None).

        ``categories=(cat_a, cat_b)`` limits it to pairs where one shape's category meets ``cat_a`` and the
        other's meets ``cat_b``; the event is then oriented so that ``event.shape_a`` is the ``cat_a`` one.
        Handlers run after the step, never during it, and may add or remove bodies. Begin and hit events
        whose shapes an earlier handler removed are skipped; end events are always delivered (check
        ``event.shape_a.alive``). Returns the handler, for :meth:`off`.
        """
        if kind not in EVENT_KINDS:
            raise CaromError(f"event kind must be one of {EVENT_KINDS}, got {kind!r}")
        if not callable(handler):
            raise CaromError(f"handler must be callable, got {handler!r}")
        if categories is not None:
            if kind == "post_solve":
                raise CaromError(f"categories are not taken for post_solve handlers (they get every contact), "
                                 f"got {categories!r}")
            if isinstance(categories, (str, bytes)) or not hasattr(categories, "__len__") or len(categories) != 2:
                raise CaromError(f"categories must be a pair (cat_a, cat_b), got {categories!r}")
            categories = (_bits(categories[0], "categories[0]"), _bits(categories[1], "categories[1]"))
        self._handlers.append((kind, handler, categories))
        return handler

    def off(self, handler: "Any") -> None:
        """Unregister a handler (every kind it was registered for)."""
        self._handlers = [h for h in self._handlers if h[1] is not handler]

    def _pair_rows(self, dtype, keys, rows, sensor):
        out = np.zeros(len(rows), dtype)
        sa = keys[rows] >> _step.KEY_SHIFT
        sb = keys[rows] & _step.KEY_MASK
        # a sensor event names the sensor as shape A
        swap = sensor[rows] & ~self._s_sensor[sa]
        out["shape_a"] = np.where(swap, sb, sa)
        out["shape_b"] = np.where(swap, sa, sb)
        out["body_a"] = self._s_body[out["shape_a"]]
        out["body_b"] = self._s_body[out["shape_b"]]
        return out, swap

    def _build_events(self, old_keys, old_touch, old_sensor, contacts, approach, hit_threshold, pending):
        """Event records of a step from last step's keys, touch and sensor flags, this step's contact table and
        the solver's approach speeds (``_step.event_rows``), and the end events of removed shapes (``pending``)."""
        begin_k, end_j, hit_k, hit_p, hit_v = _step.event_rows(old_keys, old_touch, contacts[0], contacts[8],
                                                               contacts[1], contacts[11], approach, hit_threshold)
        ended_keys = old_keys[end_j]
        ended_sensor = old_sensor[end_j]
        if begin_k.size == 0 and end_j.size == 0 and hit_k.size == 0 and not pending:
            return self._empty_events()
        keys, count, normal, points, sep, sensor = (contacts[0], contacts[1], contacts[5], contacts[6],
                                                    contacts[7], contacts[9])
        begin, swap = self._pair_rows(BEGIN_DTYPE, keys, begin_k, sensor)
        deepest = (count[begin_k] == 2) & (sep[begin_k, 1] < sep[begin_k, 0])
        begin["point"] = points[begin_k, deepest.astype(np.int64)]
        begin["normal"] = np.where(swap[:, None], -normal[begin_k], normal[begin_k])
        begin["sensor"] = sensor[begin_k]
        every = np.arange(ended_keys.shape[0])
        end, _ = self._pair_rows(END_DTYPE, ended_keys, every, ended_sensor)
        end["sensor"] = ended_sensor
        if pending:
            end = np.concatenate(pending + [end])
        hit, _ = self._pair_rows(HIT_DTYPE, keys, hit_k, sensor)
        hit["point"] = points[hit_k, hit_p]
        hit["normal"] = normal[hit_k]
        hit["speed"] = hit_v
        return ContactEvents(begin, end, hit)

    def _purge_contacts(self, s):
        """Drop the contacts of shape s (about to be removed); touching ones become pending end events."""
        self._settle_events()
        c = self._contacts
        keys = c[0]
        mine = ((keys >> _step.KEY_SHIFT) == s) | ((keys & _step.KEY_MASK) == s)
        if not mine.any():
            return
        ended = np.flatnonzero(mine & c[8])
        if ended.size:
            rows, _ = self._pair_rows(END_DTYPE, keys, ended, c[9])
            rows["sensor"] = c[9][ended]
            self._pending_end.append(rows)
        # (the colouring goes: the next step colours the remaining contacts afresh)
        self._contacts = tuple(a[~mine] for a in c[:_solver.COLOURING]) + self._no_colouring()
        if self._approach is not None and self._approach.shape[0] == keys.shape[0]:
            self._approach = self._approach[~mine]

    def _deliver_events(self):
        if not self._handlers:
            return
        post = [h for h in self._handlers if h[0] == "post_solve"]
        if post:
            data = self.contact_data()
            for a in data:
                a.flags.writeable = False
            for _kind, fn, _cats in post:
                fn(data)
        for _kind, fn, _cats in [h for h in self._handlers if h[0] == "joint"]:
            for event in self._joint_events:
                fn(event)
        leave = [h for h in self._handlers if h[0] == "leave"]
        for body in (self.left_bounds() if leave else ()):
            for _kind, fn, _cats in leave:
                if body.alive:
                    fn(body)
        self._settle_events()
        ev = self._events
        for kind, records in (("begin", ev.begin), ("end", ev.end), ("hit", ev.hit)):
            handlers = [h for h in self._handlers if h[0] == kind]
            if not handlers or records.size == 0:
                continue
            for rec in records:
                sa, sb = int(rec["shape_a"]), int(rec["shape_b"])
                gen_a, gen_b = int(self._s_gen[sa]), int(self._s_gen[sb])
                if kind != "end" and not (self._s_alive[sa] and self._s_alive[sb]):
                    continue
                for _kind, fn, cats in handlers:
                    swap = False
                    if cats is not None:
                        ca, cb = self._s_category[sa], self._s_category[sb]
                        zero = np.uint64(0)
                        if (ca & cats[0]) != zero and (cb & cats[1]) != zero:
                            swap = False
                        elif (cb & cats[0]) != zero and (ca & cats[1]) != zero:
                            swap = True
                        else:
                            continue
                    if kind != "end" and not (self._s_alive[sa] and self._s_alive[sb]):
                        break
                    fn(self._event(kind, rec, sa, sb, gen_a, gen_b, swap))

    def _event(self, kind, rec, sa, sb, gen_a, gen_b, swap):
        ha = ShapeHandle(self, sa, gen_a, self._s_geometry[sa])
        hb = ShapeHandle(self, sb, gen_b, self._s_geometry[sb])
        ba, bb = int(rec["body_a"]), int(rec["body_b"])
        body_a = Body(self, ba, int(self._gen[ba]))
        body_b = Body(self, bb, int(self._gen[bb]))
        point = rec["point"].copy() if kind != "end" else None
        normal = rec["normal"].copy() if kind != "end" else None
        if swap:
            ha, hb, body_a, body_b = hb, ha, body_b, body_a
            if normal is not None:
                normal = -normal
        return ContactEvent(kind, ha, hb, body_a, body_b, point, normal,
                            float(rec["speed"]) if kind == "hit" else None, bool(rec["sensor"]) if kind != "hit"
                            else False)

    # --- snapshots -----------------------------------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        """The whole state (bodies, shapes, broad phase, contacts with their warm-start impulses, events,
        settings) as a :class:`Snapshot`: data only, in the layout of :mod:`carom.rigid.snapshot`.
        :meth:`restore` continues from it bitwise identically. Handlers are not part of the state (they are
        often closures over this world) and must be registered again; nor is ``profile_times``; nor are the
        bodies' and shapes' ``.data`` (Python objects: a snapshot is data only, and restoring one never runs
        code; ``pickle`` and ``copy`` of the world carry them)."""
        self._check_unlocked()
        return Snapshot(_snapshot.encode(self))

    @classmethod
    def restore(cls, snapshot: "Any") -> "World":
        """The world a :class:`Snapshot` (or its ``.data`` bytes) holds. The bytes are parsed as data and the
        whole state is checked before the world is built (nothing is unpickled, no code runs); anything that
        is not a valid snapshot raises :class:`~carom.errors.SnapshotError` naming the problem."""
        return _snapshot.decode(snapshot)

    @classmethod
    def _from_snapshot_bytes(cls, data):
        """Unpickling a world (``__reduce__``): the snapshot decoder, never ``__setstate__`` with a dict."""
        return _snapshot.decode(data)

    def __reduce__(self):
        # a pickle of a world is its snapshot bytes and this decoder, so unpickling one runs no code of the
        # pickle's choosing beyond the decoder (and a damaged one is refused, not restored and then stepped).
        # The user's .data objects, if any, follow as the state, given to _set_user_data rather than
        # __setstate__ (after the world exists, so data that refers to the world or its bodies is pickled too)
        reduced = (World._from_snapshot_bytes, (_snapshot.encode(self),))
        if self._body_data or self._shape_data or self._joint_data:
            reduced += ((dict(self._body_data), dict(self._shape_data), dict(self._joint_data)), None, None,
                        World._set_user_data)
        return reduced

    @staticmethod
    def _set_user_data(world, state):
        """Give an unpickled world its bodies', shapes' and joints' ``.data`` (``__reduce__``): three dicts by
        row, every row one of a live body, shape or joint, or SnapshotError."""
        if not (isinstance(state, tuple) and len(state) == 3 and all(type(d) is dict for d in state)):
            raise SnapshotError("invalid pickle of a World: its user data is not three dicts")
        for what, table, alive, count in (("body", state[0], world._alive, world._n_bodies),
                                          ("shape", state[1], world._s_alive, world._n_shapes),
                                          ("joint", state[2], world._j_alive, world._n_joints)):
            for k in table:
                if type(k) is not int or not 0 <= k < count or not alive[k]:
                    raise SnapshotError(f"invalid pickle of a World: user data for {what} {k!r}, which does not "
                                        "exist")
        world._body_data = state[0]
        world._shape_data = state[1]
        world._joint_data = state[2]

    def _contacts_to_save(self):
        """The contact table with the cache rows the narrow phase left unwritten zeroed: those of two-circle
        pairs, and those marked as holding no manifold (cos and sin 0: ``_step.CACHE``). In memory they hold
        whatever the allocation held, which must not leave the process in a snapshot or a pickle (and would
        make two snapshots of one state differ). A zeroed marked row is still marked."""
        c = self._contacts
        keys = c[0]
        cache = c[_step.CACHE]
        unwritten = ((self._s_count[keys >> _solver.KEY_SHIFT] == 1) & (self._s_count[keys & _solver.KEY_MASK] == 1)
                     | (cache[:, _step.CTC] == 0.0) & (cache[:, _step.CTS] == 0.0))
        if not unwritten.any():
            return c
        cache = cache.copy()
        cache[unwritten] = 0.0
        return c[:_step.CACHE] + (cache,) + c[_step.CACHE + 1:]

    def __setstate__(self, state):
        # (only a pickle made before snapshots were data, which restored whatever attributes it held, calls
        # this; __reduce__ never does)
        raise SnapshotError("this pickle of a World predates carom's data-only snapshots and is not restored: "
                            "unpickle it with the carom that made it and take a new snapshot")

    def __copy__(self):
        """A world in the same state, its bodies' and shapes' ``.data`` the same objects."""
        w = World.restore(self.snapshot())
        w._body_data = dict(self._body_data)
        w._shape_data = dict(self._shape_data)
        w._joint_data = dict(self._joint_data)
        return w

    def __deepcopy__(self, memo):
        """A world in the same state with deep copies of the ``.data`` objects (the world itself goes in the
        memo first: data that refers to this world or its bodies refers to the copy)."""
        w = World.restore(self.snapshot())
        memo[id(self)] = w
        if self._body_data or self._shape_data or self._joint_data:
            w._body_data, w._shape_data, w._joint_data = copy.deepcopy(
                (self._body_data, self._shape_data, self._joint_data), memo)
        return w
