"""Bodies: the :class:`Body` handle over a row of the world's body table (``WorldTables``: ``com``, ``angle``,
``vel`` …). Properties read and write the row; setters check the value first, refuse while the world steps, and
wake what they disturb. Mass data comes from the shapes (:mod:`carom.rigid.mass`) unless set here.
"""
from typing import TYPE_CHECKING
if TYPE_CHECKING:  # (annotations only)
    from .._types import Any, ArrayLike, Bits, Optional, Points, Vec2
    from .shape import ShapeHandle
import math

import numpy as np

from .. import _validate
from ..constants import WORLD_LIMIT, FLOAT32_LIMIT, ANGLE_LIMIT
from ..errors import SimulationError, StaleHandleError
from . import _solver, _step
from . import events as _events
from . import mass as _mass
from . import shape as _shape
from .mass import KIND_NAMES, MASS_SET, INERTIA_SET, CENTER_SET
from .tables import ALL_CATEGORIES

_number = _validate.number
_vector = _validate.vector
_flag = _validate.flag


def unlocked(locks):
    """(1 or 0, 1 or 0) per body of ``locks`` (``WorldTables.locks``): the factors that keep a locked axis's
    velocity 0."""
    locks = np.asarray(locks)
    return np.stack([(locks & _solver.LOCK_X) == 0, (locks & _solver.LOCK_Y) == 0], axis=-1).astype(np.float64)


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
        if w.tables.gen[self.index] != self.generation or not w.tables.alive[self.index]:
            raise StaleHandleError(f"body {self.index} (generation {self.generation}) has been removed")
        return self.index

    def __eq__(self, other):
        return (isinstance(other, Body) and other.world is self.world and other.index == self.index
                and other.generation == self.generation)

    def __hash__(self):
        return hash((id(self.world), self.index, self.generation))

    def __repr__(self):
        alive = self.world.tables.gen[self.index] == self.generation and self.world.tables.alive[self.index]
        if not alive:
            return f"<Body {self.index} removed>"
        return f"<Body {self.index} {self.kind} at ({self.position[0]:.4g}, {self.position[1]:.4g})>"

    # --- kinematic state -------------------------------------------------------------------------------
    @property
    def kind(self) -> str:
        """``"dynamic"``, ``"kinematic"`` or ``"static"`` (fixed when the body is made)."""
        return KIND_NAMES[int(self.world.tables.kind[self._i()])]

    @property
    def position(self) -> np.ndarray:
        """Body origin in world coordinates (the frame its shapes are defined in)."""
        return self.world.tables.origin_frame(self._i())[0]

    @position.setter
    def position(self, value: "Any"):
        i = self._i()
        self.world.tables.check_unlocked()
        p = _vector(value, "position", WORLD_LIMIT)
        w = self.world
        c, s = math.cos(w.tables.angle[i]), math.sin(w.tables.angle[i])
        lc = w.tables.local_center[i]
        w.tables.com[i] = p + np.array([c * lc[0] - s * lc[1], s * lc[0] + c * lc[1]])
        w.tables.query_boxes = None
        w.tables.wake(i, partners=True)

    @property
    def world_center(self) -> np.ndarray:
        """Centre of mass in world coordinates."""
        return self.world.tables.com[self._i()].copy()

    @property
    def local_center(self) -> np.ndarray:
        """The centre of mass in the body frame: the shapes' centroid, or the point set here (dynamic bodies
        only), kept until :meth:`reset_mass`. Setting it keeps the body's origin where it is, so the centre
        of mass moves in the world; the velocity (the centre's) is kept as it is."""
        return self.world.tables.local_center[self._i()].copy()

    @property
    def angle(self) -> float:
        """Rotation (radians, counter-clockwise) about the body origin; setting it turns the body about its origin,
        keeps its position and wakes it and what touches it."""
        return float(self.world.tables.angle[self._i()])

    @angle.setter
    def angle(self, value: "Any"):
        i = self._i()
        w = self.world
        w.tables.check_unlocked()
        a = _number(value, "angle", magnitude=ANGLE_LIMIT)
        p = self.position
        c, s = math.cos(a), math.sin(a)
        lc = w.tables.local_center[i]
        w.tables.angle[i] = a
        w.tables.com[i] = p + np.array([c * lc[0] - s * lc[1], s * lc[0] + c * lc[1]])
        w.tables.query_boxes = None
        w.tables.wake(i, partners=True)

    @property
    def velocity(self) -> np.ndarray:
        """Velocity of the centre of mass."""
        return self.world.tables.vel[self._i()].copy()

    @velocity.setter
    def velocity(self, value: "Any"):
        i = self._i()
        self.world.tables.check_unlocked()
        # (a locked axis keeps 0, as the angle of a body with fixed_rotation does)
        self.world.tables.vel[i] = _vector(value, "velocity", FLOAT32_LIMIT) * unlocked(self.world.tables.locks[i])
        self.world.tables.wake(i)

    @property
    def angular_velocity(self) -> float:
        """Angular velocity (rad/s, counter-clockwise positive); a body with :attr:`fixed_rotation` keeps 0."""
        return float(self.world.tables.angvel[self._i()])

    @angular_velocity.setter
    def angular_velocity(self, value: "Any"):
        # (a body with fixed_rotation keeps 0, as in Box2D: it does not turn)
        i = self._i()
        w = self.world
        w.tables.check_unlocked()
        av = _number(value, "angular_velocity", magnitude=FLOAT32_LIMIT)
        w.tables.angvel[i] = 0.0 if w.tables.fixed_rotation[i] else av
        w.tables.wake(i)

    @property
    def contact_force(self) -> np.ndarray:
        """The total force (N) the body's contacts put on it over the last step: the normal and tangent
        impulses of the whole step (every substep's, and the restitution's) summed over its contact points,
        divided by the step's dt. For a box at rest on the ground it is its weight, for the bottom box of a
        stack the weight of the whole stack. Zero before the first step, and for contacts the step did not
        solve (both bodies asleep, sensors)."""
        i = self._i()
        return _events.contact_forces(self.world.tables, np.array([i]))[0]

    @property
    def mass(self) -> float:
        """Mass (kg): from the shapes' densities, or the value set here (Box2D's ``b2Body_SetMassData``).

        Setting it (dynamic bodies only; finite, within the solver's single precision) overrides what the
        shapes give until :meth:`reset_mass`: shapes added or removed later no longer change it. The inertia
        and the centre of mass are overridden apart (:attr:`inertia`, :attr:`local_center`); each value not
        set still comes from the shapes."""
        i = self._i()
        w = self.world
        im = w.tables.inv_mass[i]
        if w.tables.mass_override[i] & MASS_SET:
            return float(w.tables.mass[i])
        return float(1.0 / im) if im > 0 else (float(w.tables.mass[i]))

    @mass.setter
    def mass(self, value: "Any"):
        i = self._i()
        w = self.world
        w.tables.check_unlocked()
        m = _number(value, "mass", 1.0 / FLOAT32_LIMIT, FLOAT32_LIMIT)
        _mass.check_mass_data(w.tables, i, "mass")
        # (written directly, not through _update_mass, which would move the centre by rounding)
        w.tables.mass_override[i] |= MASS_SET
        w.tables.mass[i] = m
        w.tables.inv_mass[i] = 1.0 / m
        _mass.set_inv_inertia(w.tables, i)
        w.tables.wake(i)

    @property
    def inertia(self) -> float:
        """Rotational inertia (kg·m²) about the centre of mass: from the shapes, or the value set here (dynamic
        bodies only, > 0 and within the solver's single precision), kept until :meth:`reset_mass`. With
        :attr:`fixed_rotation` the solver treats it as infinite, but this still reads the body's own."""
        i = self._i()
        w = self.world
        ii = w.tables.inv_inertia[i]
        if w.tables.mass_override[i] & INERTIA_SET:
            return float(w.tables.inertia[i])
        return float(1.0 / ii) if ii > 0 else float(w.tables.inertia[i])

    @inertia.setter
    def inertia(self, value: "Any"):
        i = self._i()
        w = self.world
        w.tables.check_unlocked()
        j = _number(value, "inertia", 1.0 / FLOAT32_LIMIT, FLOAT32_LIMIT)
        _mass.check_mass_data(w.tables, i, "inertia")
        w.tables.mass_override[i] |= INERTIA_SET
        w.tables.inertia[i] = j
        _mass.set_inv_inertia(w.tables, i)
        w.tables.wake(i)

    @local_center.setter  # type: ignore[no-redef, attr-defined]  # its getter is above, with the other state
    def local_center(self, value: "Any"):
        i = self._i()
        w = self.world
        w.tables.check_unlocked()
        c = _vector(value, "local_center", WORLD_LIMIT)
        _mass.check_mass_data(w.tables, i, "local_center")
        w.tables.mass_override[i] |= CENTER_SET
        _mass.update_mass(w.tables, i, center=c)
        w.tables.wake(i, partners=True)

    def reset_mass(self) -> None:
        """Drop the mass, inertia and centre set through :attr:`mass`, :attr:`inertia` and
        :attr:`local_center`: all three come from the shapes again (the origin stays where it is)."""
        i = self._i()
        w = self.world
        w.tables.check_unlocked()
        w.tables.mass_override[i] = 0
        _mass.update_mass(w.tables, i)
        w.tables.wake(i, partners=True)

    @property
    def fixed_rotation(self) -> bool:
        """True: the body does not rotate (Box2D's ``fixedRotation``). The solver sees an infinite inertia (its
        inverse is 0) while it is set, and the angular velocity is zeroed when it is set and kept at 0;
        mass updates (shapes added or removed, :meth:`reset_mass`) keep it. Turning it off gives back the
        inertia from the shapes (or the one set through :attr:`inertia`)."""
        return bool(self.world.tables.fixed_rotation[self._i()])

    @fixed_rotation.setter
    def fixed_rotation(self, value: "Any"):
        i = self._i()
        w = self.world
        w.tables.check_unlocked()
        f = _flag(value, "fixed_rotation")
        w.tables.fixed_rotation[i] = f
        if f:
            w.tables.angvel[i] = 0.0
        _mass.set_inv_inertia(w.tables, i)
        w.tables.wake(i)

    @property
    def sleep_enabled(self) -> bool:
        """False keeps this body, and so every island it joins, awake (Box2D's ``enableSleep``); turning it
        off wakes the body. ``World.sleep_enabled`` is the switch for the whole world."""
        return bool(self.world.tables.can_sleep[self._i()])

    @sleep_enabled.setter
    def sleep_enabled(self, value: "Any"):
        i = self._i()
        w = self.world
        w.tables.check_unlocked()
        f = _flag(value, "sleep_enabled")
        w.tables.can_sleep[i] = f
        if not f:
            w.tables.wake(i)

    @property
    def sleep_threshold(self) -> float:
        """The speed (m/s) below which the body counts as resting for sleep (Box2D's ``sleepThreshold``):
        |v| + |ω|·reach, reach the body's farthest shape point from its centre. 0.05 by default; raise it for
        a large, slow body that should still sleep, lower it for one that must not fall asleep while moving
        slowly (at 0 only a body with no speed at all rests)."""
        return float(self.world.tables.sleep_threshold[self._i()])

    @sleep_threshold.setter
    def sleep_threshold(self, value: "Any"):
        i = self._i()
        w = self.world
        w.tables.check_unlocked()
        w.tables.sleep_threshold[i] = _number(value, "sleep_threshold", 0.0, FLOAT32_LIMIT)
        w.tables.wake(i)

    @property
    def lock_x(self) -> bool:
        """True: the body does not move along the world's x axis (Box2D v3.1's motion lock ``linearX``). Its
        x velocity is held at 0: zeroed when set, after every impulse the solver applies within a substep
        (before the body moves) and when the step ends, so the centre's x never changes in a step. Contacts
        and joints see the body as free along x while they solve, and the lock then removes what they gave
        it along x (an approximation, Box2D's too). ``fixed_rotation`` is the angular lock."""
        return bool(self.world.tables.locks[self._i()] & _solver.LOCK_X)

    @lock_x.setter
    def lock_x(self, value: "Any"):
        self._set_lock(value, "lock_x", _solver.LOCK_X)

    @property
    def lock_y(self) -> bool:
        """True: the body does not move along the world's y axis (as :attr:`lock_x` for x)."""
        return bool(self.world.tables.locks[self._i()] & _solver.LOCK_Y)

    @lock_y.setter
    def lock_y(self, value: "Any"):
        self._set_lock(value, "lock_y", _solver.LOCK_Y)

    def _set_lock(self, value, name, bit):
        i = self._i()
        w = self.world
        w.tables.check_unlocked()
        f = _flag(value, name)
        w.tables.locks[i] = (w.tables.locks[i] | bit) if f else (w.tables.locks[i] & ~bit)
        w.tables.vel[i] *= unlocked(w.tables.locks[i])
        w.tables.wake(i)

    @property
    def data(self) -> "Any":
        """Any Python object of the user's (None by default). ``pickle``, ``copy`` and ``deepcopy`` of the
        world carry it (pickled along with the world, so it must be picklable there); ``World.snapshot()``
        and ``World.restore`` do not: a snapshot is data only and restoring it never runs code."""
        return self.world.tables.body_data.get(self._i())

    @data.setter
    def data(self, value: "Any"):
        i = self._i()
        if value is None:
            self.world.tables.body_data.pop(i, None)
        else:
            self.world.tables.body_data[i] = value

    @property
    def bullet(self) -> bool:
        """A bullet is swept against dynamic bodies as well as static ones (continuous collision), so a fast small body
        cannot pass through a thin moving one in a step."""
        return bool(self.world.tables.bullet[self._i()])

    @bullet.setter
    def bullet(self, value: "Any"):
        i = self._i()
        self.world.tables.bullet[i] = _flag(value, "bullet")

    @property
    def linear_damping(self) -> float:
        """Linear damping (1/s, ≥ 0): each substep divides the velocity by 1 + h·damping, a drag that slows the body
        the same whatever its mass."""
        return float(self.world.tables.lin_damping[self._i()])

    @linear_damping.setter
    def linear_damping(self, value: "Any"):
        i = self._i()
        self.world.tables.lin_damping[i] = _number(value, "linear_damping", 0.0)

    @property
    def angular_damping(self) -> float:
        """Angular damping (1/s, ≥ 0): each substep divides the angular velocity by 1 + h·damping."""
        return float(self.world.tables.ang_damping[self._i()])

    @angular_damping.setter
    def angular_damping(self, value: "Any"):
        i = self._i()
        self.world.tables.ang_damping[i] = _number(value, "angular_damping", 0.0)

    @property
    def gravity_scale(self) -> float:
        """Multiplies the world's gravity for this body (0: it floats, −1: it falls up)."""
        return float(self.world.tables.gravity_scale[self._i()])

    @gravity_scale.setter
    def gravity_scale(self, value: "Any"):
        i = self._i()
        self.world.tables.gravity_scale[i] = _number(value, "gravity_scale", magnitude=FLOAT32_LIMIT)

    @property
    def shapes(self) -> list:
        """Handles of the body's shapes, in the order they were added."""
        self._i()
        return list(self.world.tables.body_shapes[self.index])

    @property
    def alive(self) -> bool:
        """False once the body has been removed."""
        return bool(self.world.tables.gen[self.index] == self.generation and self.world.tables.alive[self.index])

    # --- sleep -----------------------------------------------------------------------------------------
    @property
    def sleeping(self) -> bool:
        """True while the body's island sleeps (it is then not simulated until something wakes it)."""
        return bool(self.world.tables.asleep[self._i()])

    def wake(self) -> None:
        """Wake the body and the island it sleeps in."""
        self.world.tables.wake(self._i())

    def sleep(self) -> None:
        """Put this dynamic body to sleep now (it wakes when touched, pushed or changed)."""
        i = self._i()
        w = self.world
        w.tables.check_unlocked()
        if w.tables.kind[i] == _step.DYNAMIC:
            w.tables.asleep[i] = True
            w.tables.island[i] = i
            w.tables.vel[i] = 0.0
            w.tables.angvel[i] = 0.0
            # it joins the sleeping islands it touches: the step wakes an island when an awake body touches it,
            # in one pass over the contacts, so a sleeping body touching another island under a label of its
            # own could stay asleep while that island woke and was solved against it
            n = w.tables.n_bodies
            partners = w.tables.touching(i)
            labels = w.tables.island[partners[w.tables.asleep[partners] & (w.tables.kind[partners] == _step.DYNAMIC)]]
            if labels.size:
                w.tables.island[:n][w.tables.asleep[:n] & np.isin(w.tables.island[:n], labels)] = i

    # --- forces ----------------------------------------------------------------------------------------
    def apply_force(self, force: "Vec2", point: "Optional[Vec2]" = None) -> None:
        """Add a force (N) for the next step, at ``point`` (world) or at the centre of mass."""
        i = self._i()
        w = self.world
        f = _vector(force, "force")
        torque = w.tables.torque[i]
        if point is not None:
            r = _vector(point, "point", WORLD_LIMIT) - w.tables.com[i]
            torque = torque + (r[0] * f[1] - r[1] * f[0])
        total = w.tables.force[i] + f
        _mass.check_load(w.tables, i, "force", force, total, torque)
        w.tables.force[i] = total
        w.tables.torque[i] = torque
        w.tables.wake(i)

    def apply_torque(self, torque: "float") -> None:
        """Add a torque (N·m) for the next step."""
        i = self._i()
        w = self.world
        total = w.tables.torque[i] + _number(torque, "torque")
        _mass.check_load(w.tables, i, "torque", torque, w.tables.force[i], total)
        w.tables.torque[i] = total
        w.tables.wake(i)

    def apply_impulse(self, impulse: "Vec2", point: "Optional[Vec2]" = None) -> None:
        """Change the momentum at once by ``impulse`` (N·s), at ``point`` (world) or the centre of mass."""
        i = self._i()
        w = self.world
        w.tables.check_unlocked()
        j = _vector(impulse, "impulse")
        p = None if point is None else _vector(point, "point", WORLD_LIMIT)
        if w.tables.kind[i] != _step.DYNAMIC:
            return
        v = w.tables.vel[i] + w.tables.inv_mass[i] * j
        av = w.tables.angvel[i]
        if p is not None:
            r = p - w.tables.com[i]
            av = av + w.tables.inv_inertia[i] * (r[0] * j[1] - r[1] * j[0])
        if not (np.abs(v).max() <= FLOAT32_LIMIT and abs(av) <= FLOAT32_LIMIT):
            raise SimulationError(f"impulse = {impulse!r} would give body {i} the velocity {tuple(v.tolist())} and "
                                  f"angular velocity {float(av)}, beyond the solver's limit {FLOAT32_LIMIT:g}")
        w.tables.vel[i] = v
        w.tables.angvel[i] = av
        w.tables.wake(i)

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
        return _shape.add_shape(self.world, i, shape, density, friction, restitution, sensor, category, mask, group,
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
        return _shape.add_chain(self.world, i, points, loop, friction, restitution, category, mask, group)

