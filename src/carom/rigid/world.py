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

from ..errors import SimulationError, StaleHandleError, CaromError, GeometryError, SnapshotError
from ..geometry.aabb import core_aabb
from ..geometry._tree_pairs import load_grid
from . import _step, _solver, _continuous, _pre_solve_stage, queries
from . import events as _events
from . import mass as _mass
from . import shape as _shape
from . import bulk as _bulk
from . import snapshot as _snapshot
from . import presolve as _presolve
from .body import Body, unlocked as _unlocked
from .events import (BEGIN_DTYPE, END_DTYPE, HIT_DTYPE, ContactEvents, ContactEvent, ContactData, EVENT_KINDS,
                     empty_contacts, no_colouring)
from . import joints as _joints
from .joints import Joint, JointEvent
from .joints import bookkeeping as _joint_rows
from .joints import many as _many_joints
from .joints import _apart as _joints_apart
from .mass import KINDS, KIND_NAMES, MASS_SET, INERTIA_SET, CENTER_SET
from .shape import ShapeHandle
from .snapshot import Snapshot
from ._layout import BodyTable, ShapeTable, TreeTable, narrow_part
from .tables import WorldTables, ALL_CATEGORIES, grow as _grow


MIX_RULES = {"sqrt": _solver.MIX_SQRT, "min": _solver.MIX_MIN, "max": _solver.MIX_MAX,
             "mean": _solver.MIX_MEAN, "multiply": _solver.MIX_MULTIPLY}

# every number entering the world passes carom._validate (the shapes' constructors use it too)
_number = _validate.number
_vector = _validate.vector
_bits = _validate.bits
_flag = _validate.flag


#: the step's compile helper job (``carom._jit.compile_helper``)
STEP_HELPER_JOB = "carom._warmup:late_stages_then_public_api"
#: whether a world of this process has asked for the step's compile helper (the first world does)
_step_helper_asked = False


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

    def __init__(self, gravity: "Vec2" = (0.0, -10.0), substeps: int = 4, friction_mixing: str = "sqrt",
                 restitution_mixing: str = "max") -> None:
        #: every array and count of the world (:class:`~carom.rigid.tables.WorldTables`)
        self.tables = WorldTables()
        announce_compile()
        self.gravity = gravity
        self.substeps = substeps
        self.friction_mixing = friction_mixing
        self.restitution_mixing = restitution_mixing
        self._arg_views: "Optional[tuple]" = None          # (step_tables)
        self._step_entry: "Optional[tuple]" = None         # (_call_step)
        self.step_count = 0
        self._governor = ThreadGovernor()     # the step's thread count: the threads, or one if faster
        self.sleep_enabled = True
        self.hit_event_threshold = HIT_EVENT_THRESHOLD
        #: time each stage of the step (``profile_times``, ms); costs nothing measurable
        self.profile = False
        self.profile_times: dict = {}
        self._handlers: list = []
        #: the pre-solve hook (``pre_solve``: the numba cfunc, kept alive here, and its address for the step)
        self._pre_solve = None
        self._pre_solve_address = 0
        #: the last step's joint events (JointEvent), delivered to "joint" handlers
        self._joint_events: list = []
        self.tables.static_body = self.add_body(kind="static")
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
        self.tables.check_unlocked()
        self._sleep_enabled = on
        if not on:
            n = self.tables.n_bodies
            self.tables.asleep[:n] = False
            self.tables.sleep_time[:n] = 0.0

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
        self.tables.check_unlocked()
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
        if self.tables.bounds is None:
            return None
        b = self.tables.bounds
        return (float(b[0]), float(b[1])), (float(b[2]), float(b[3]))

    @bounds.setter
    def bounds(self, value: "Optional[Tuple[Vec2, Vec2]]") -> None:
        self.tables.check_unlocked()
        if value is None:
            self.tables.bounds = None
            return
        if not isinstance(value, (tuple, list)) or len(value) != 2:
            raise SimulationError(f"bounds must be ((xmin, ymin), (xmax, ymax)) or None, got {value!r}")
        lo = _vector(value[0], "bounds lower corner", WORLD_LIMIT)
        hi = _vector(value[1], "bounds upper corner", WORLD_LIMIT)
        if not (lo[0] < hi[0] and lo[1] < hi[1]):
            raise SimulationError(f"bounds = {value!r}: the lower corner must be below and left of the upper one")
        self.tables.bounds = np.array([lo[0], lo[1], hi[0], hi[1]])

    @property
    def remove_outside(self) -> bool:
        """Remove the bodies that leave the :attr:`bounds` after the step that took them out (default False)."""
        return self.tables.remove_outside

    @remove_outside.setter
    def remove_outside(self, value: "Any"):
        self.tables.remove_outside = _flag(value, "remove_outside")

    def left_bounds(self) -> list:
        """The bodies that left the :attr:`bounds` in the last step (handles; removed ones are stale)."""
        return [Body(self, int(i), int(g)) for i, g in zip(self.tables.left, self.tables.left_gen)]

    def _inside_bounds(self, n):
        """Per body row: alive, not static, and its centre of mass inside the bounds."""
        lo_x, lo_y, hi_x, hi_y = self.tables.bounds
        c = self.tables.com[:n]
        return (self.tables.alive[:n] & (self.tables.kind[:n] != _step.STATIC) & (c[:, 0] >= lo_x) & (c[:, 0] <= hi_x)
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


    # --- bodies ----------------------------------------------------------------------------------------
    @property
    def static_body(self) -> Body:
        """A ready static body at the origin (like pymunk's ``space.static_body``)."""
        return self.tables.static_body

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
        self.tables.check_unlocked()
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
        if self.tables.free_bodies:
            i = self.tables.free_bodies.pop()
        else:
            i = self.tables.n_bodies
            if i == self.tables.com.shape[0]:
                cap = 2 * i
                for name in self.tables.body_arrays:
                    setattr(self.tables, name, _grow(getattr(self.tables, name), cap))
                self.tables.gravity_scale[i:] = 1.0
                self.tables.body_shapes.extend([] for _ in range(cap - i))
            self.tables.n_bodies += 1
        k = KINDS[kind]
        self.tables.com[i] = p
        self.tables.angle[i] = a
        self.tables.vel[i] = v if k != _step.STATIC else 0.0
        self.tables.angvel[i] = w if k != _step.STATIC else 0.0
        self.tables.inv_mass[i] = 0.0
        self.tables.inv_inertia[i] = 0.0
        self.tables.mass[i] = 0.0
        self.tables.inertia[i] = 0.0
        self.tables.local_center[i] = 0.0
        self.tables.kind[i] = k
        self.tables.bullet[i] = fast
        self.tables.alive[i] = True
        self.tables.force[i] = 0.0
        self.tables.torque[i] = 0.0
        self.tables.lin_damping[i] = ld
        self.tables.ang_damping[i] = ad
        self.tables.gravity_scale[i] = gs
        self.tables.min_extent[i] = 0.0
        self.tables.can_sleep[i] = True
        self.tables.fixed_rotation[i] = False
        self.tables.sleep_threshold[i] = SLEEP_LINEAR_TOLERANCE
        self.tables.locks[i] = 0
        self.tables.mass_override[i] = 0
        self.tables.body_shapes[i] = []
        return Body(self, i, int(self.tables.gen[i]))

    def remove(self, body: "Any") -> None:
        """Remove a body (with its shapes and joints), a shape or a joint. The handle goes stale."""
        self.tables.check_unlocked()
        if isinstance(body, Joint):
            if body.world is not self:
                raise CaromError(f"{body!r} is a joint of another world")
            return _joint_rows.remove(self.tables, body._j())
        if isinstance(body, ShapeHandle):
            if body.world is not self:
                raise CaromError(f"{body!r} is a shape of another world")
            return _shape.remove_shape(self, body)
        if not isinstance(body, Body) or body.world is not self:
            raise CaromError(f"expected a Body or ShapeHandle of this world, got {body!r}")
        i = body._i()
        if body == self.tables.static_body:
            raise CaromError("the world's static_body cannot be removed")
        self._remove_body_rows([i])

    def remove_bodies(self, bodies: "Any") -> None:
        """Remove many bodies at once, each with its shapes and joints; their handles go stale. ``bodies``: Body
        handles of this world or body indices, each once, as the bulk writes take them (:meth:`set_state`).

        The world is bit for bit the one :meth:`remove` body after body in the same order gives, but the
        contact and joint tables are gone over once for all of them, not once per shape (removing a few hundred
        bodies from a world of ten thousand contacts: milliseconds instead of most of a second). Every entry is
        checked first (a live body of this world, not the world's static body, not listed twice); a refused
        call changes nothing."""
        self.tables.check_unlocked()
        rows = _bulk.rows_of(self, bodies, unique=True)
        if (rows == self.tables.static_body.index).any():
            raise CaromError("the world's static_body cannot be removed")
        self._remove_body_rows(rows)

    def _remove_body_rows(self, rows):
        """Remove the bodies of ``rows`` (distinct live rows, not the world's static body), in that order,
        with their joints and shapes (:meth:`remove`, :meth:`remove_bodies`).

        The world is the one removing them one at a time gives, bit for bit (the same woken bodies, free lists,
        broad-phase tree, pending end events and contact table), but the contact table is purged once for all
        their shapes (``shape.purge_contacts``), and the joints are found in one pass over the joint table:
        removing one body's shapes one by one copied the whole contact table per shape, and a wave of 25
        ragdolls (275 bodies, 325 shapes) took most of a second once some ten thousand contacts were in the
        table."""
        t = self.tables
        rows = np.asarray(rows, np.int64)
        if rows.size == 0:
            return
        n = t.n_bodies
        # one at a time, each body wakes (with the bodies it touches) before anything of it goes, then each of its
        # joints wakes its other body: the woken set is the union, whatever the order
        t.wake_rows(rows, partners=True)
        rank = np.full(n, rows.size, np.int64)
        rank[rows] = np.arange(rows.size)
        nj = t.n_joints
        jb = t.j_body[:nj]
        first = np.minimum(rank[jb[:, 0]], rank[jb[:, 1]])
        gone = np.flatnonzero(t.j_alive[:nj] & (first < rows.size))
        if gone.size:
            # (in the order one at a time removes them: by the first of their bodies removed, then by row)
            gone = gone[np.argsort(first[gone], kind="stable")]
            others = jb[gone].ravel()
            others = others[t.alive[others] & (rank[others] == rows.size)]
            t.wake_rows(np.unique(others))
            _joint_rows.remove_rows(t, gone)
        shapes = [h.index for i in rows.tolist() for h in t.body_shapes[i]]
        _shape.remove_shapes(self, shapes)
        t.alive[rows] = False
        t.asleep[rows] = False
        t.gen[rows] += 1
        t.free_bodies.extend(rows.tolist())
        t.mass_override[rows] = 0
        for i in rows.tolist():
            t.body_data.pop(i, None)

    # --- joints (carom.rigid.joints) ------------------------------------------------------------------------
    def add_joint(self, definition: "Any") -> Joint:
        """Add a joint from its definition (``carom.joints.Revolute(...)``, ...) and return its handle.

        Every value is checked first; a bad one raises a carom error naming it and the world is unchanged. The
        bodies must be live bodies of this world (``None`` is the world's static body), two different bodies,
        at least one of them dynamic (a mouse joint's body dynamic). Adding a joint wakes its bodies."""
        return _joint_rows.add(self, definition)

    def add_joints(self, definitions: "Any") -> list:
        """Add a joint for each definition of the sequence ``definitions`` and return their handles, in order.

        The world is the one :meth:`add_joint` called for each in turn would give (the same rows, handles and
        woken bodies), but the rows are written at once: for many joints (ragdolls, chains, grids) it costs
        about half as much. Every definition is checked first; a bad one raises the carom error
        :meth:`add_joint` would, prefixed with its position (``definitions[3]: ...``), and the world is
        unchanged.

        ``definitions`` may also be the columns of many joints of one kind (``joints.Revolute.many(body_a=...,
        body_b=..., anchor=..., lower=...)``: one value for all the joints or one per joint), which makes no
        Python object per joint and checks each column as a whole: the same joints, for a fraction of the cost."""
        if isinstance(definitions, _joints.Many):
            return _many_joints.add(self, definitions)
        return _joint_rows.add_many(self, definitions)


    @property
    def joints(self) -> list:
        """Handles of all joints, in row order."""
        n = self.tables.n_joints
        return [Joint(self, int(i), int(self.tables.j_gen[i])) for i in np.flatnonzero(self.tables.j_alive[:n])]

    @property
    def joint_count(self) -> int:
        """Number of joints in the world."""
        return int(self.tables.j_alive[:self.tables.n_joints].sum())

    def joint_events(self) -> list:
        """The joints whose reaction force or torque exceeded their threshold in the last step, as
        ``JointEvent(joint, force, torque, broke)`` (``broke``: the joint was removed)."""
        return list(self._joint_events)





    @property
    def bodies(self) -> list:
        """Handles of all bodies, in the order of the rows of ``positions`` (static body excluded)."""
        idx = self._body_rows()
        return [Body(self, int(i), int(self.tables.gen[i])) for i in idx]

    def _body_rows(self):
        n = self.tables.n_bodies
        idx = np.flatnonzero(self.tables.alive[:n])
        return idx[idx != self.tables.static_body.index]

    @property
    def body_count(self) -> int:
        """Number of bodies in the world, the static body excluded (the rows of :attr:`positions`)."""
        return int(len(self._body_rows()))

    @property
    def positions(self) -> np.ndarray:
        """Body origins, one row per body (order of ``bodies``)."""
        idx = self._body_rows()
        c = np.cos(self.tables.angle[idx])
        s = np.sin(self.tables.angle[idx])
        lc = self.tables.local_center[idx]
        return self.tables.com[idx] - np.stack([c * lc[:, 0] - s * lc[:, 1], s * lc[:, 0] + c * lc[:, 1]], axis=1)

    @property
    def angles(self) -> np.ndarray:
        """Body angles (radians), one per body in the order of :attr:`bodies` (a copy)."""
        return self.tables.angle[self._body_rows()].copy()

    @property
    def velocities(self) -> np.ndarray:
        """Velocities of the bodies' centres of mass (m/s), shape (n, 2), in the order of :attr:`bodies` (a copy; write
        with :meth:`set_state`)."""
        return self.tables.vel[self._body_rows()].copy()

    @property
    def angular_velocities(self) -> np.ndarray:
        """Angular velocities (rad/s, counter-clockwise positive), one per body in the order of :attr:`bodies` (a
        copy)."""
        return self.tables.angvel[self._body_rows()].copy()

    # --- bulk writes (validated as a whole first: a refused call changes nothing) ---------------------------


    def set_state(self, bodies: "Any", positions: "Optional[ArrayLike]" = None, angles: "Optional[ArrayLike]" = None,
                  velocities: "Optional[ArrayLike]" = None, angular_velocities: "Optional[ArrayLike]" = None) -> None:
        """Write the state of many bodies at once: ``bodies`` (Body handles or body indices, each once) and
        for each given argument one row per body: ``positions`` (n, 2) body origins, ``angles`` (n,),
        ``velocities`` (n, 2) of the centres of mass, ``angular_velocities`` (n,). The same as setting, body
        by body, ``angle``, then ``position``, then ``velocity``, then ``angular_velocity`` through the Body
        properties (bitwise, with the same bodies woken), without a Python loop over the bodies. Every value
        is checked first (finite, within the limits of those properties, one row per body, live bodies of this
        world); a refused call changes nothing."""
        return _bulk.set_state(self, bodies=bodies, positions=positions, angles=angles, velocities=velocities,
                               angular_velocities=angular_velocities)

    def apply_impulses(self, bodies: "Any", impulses: "ArrayLike", points: "Optional[ArrayLike]" = None) -> None:
        """:meth:`Body.apply_impulse` for many bodies at once: ``impulses`` (n, 2) N·s, at ``points`` (n, 2,
        world) or at the centres of mass. A body may appear more than once (its impulses add up in order, as
        one call after another would). Static and kinematic bodies are left as they are. Everything is checked
        first, including the velocities the impulses give (within the solver's limit); a refused call
        changes nothing."""
        return _bulk.apply_impulses(self, bodies=bodies, impulses=impulses, points=points)

    def apply_forces(self, bodies: "Any", forces: "ArrayLike", points: "Optional[ArrayLike]" = None) -> None:
        """:meth:`Body.apply_force` for many bodies at once: ``forces`` (n, 2) N for the next step, at ``points``
        (n, 2, world) or at the centres of mass. A body may appear more than once (its forces add up in
        order). Everything is checked first, including each body's total force and torque and the
        accelerations they give (within the solver's limit); a refused call changes nothing."""
        return _bulk.apply_forces(self, bodies=bodies, forces=forces, points=points)

    def add_bodies(self, positions: "ArrayLike", angles: "Optional[ArrayLike]" = None,
                   velocities: "Optional[ArrayLike]" = None, angular_velocities: "Optional[ArrayLike]" = None, *,
                   shape: "Any",
                   density: "float" = 1.0, friction: "float" = 0.6, restitution: "float" = 0.0,
                   sensor: "bool" = False, category: "Bits" = 1, mask: "Bits" = ALL_CATEGORIES,
                   group: "Any" = 0, tangent_speed: "float" = 0.0, rolling_resistance: "float" = 0.0,
                   one_way: "Any" = None, bullet: "bool" = False,
                   linear_damping: "Any" = 0.0, angular_damping: "Any" = 0.0, gravity_scale: "Any" = 1.0,
                   sleep_threshold: "Any" = SLEEP_LINEAR_TOLERANCE) -> list:
        """Add n dynamic bodies with one shape each at ``positions`` (n, 2) with ``angles`` (n,), ``velocities``
        (n, 2) and ``angular_velocities`` (n,) (zeros if not given); returns their handles. ``shape`` is one
        geometry for all, or a sequence of n (one per body; a ragdoll's limbs, say). The world is the one
        ``add_body`` then ``add_shape`` body after body would give (the same rows, masses, proxies and state;
        the vertex table takes the n shapes' rows in one piece), but each distinct shape's mass is computed once
        and the rows are written as arrays. Every argument is checked first; a refused call changes nothing.

        Shape and material arguments as in :meth:`Body.add_shape` (``density``, ``friction``, ``restitution``,
        ``sensor``, ``category``, ``mask``, ``group``, ``tangent_speed``, ``rolling_resistance``, ``one_way``), body
        settings as in :meth:`add_body` (``bullet``, ``linear_damping``, ``angular_damping``, ``gravity_scale``)
        and :attr:`Body.sleep_threshold`. ``group``, ``linear_damping``, ``angular_damping``, ``gravity_scale``
        and ``sleep_threshold`` take one value for all or a sequence of one per body.
        """
        return _bulk.add_bodies(self, positions=positions, angles=angles, velocities=velocities,
                                angular_velocities=angular_velocities, shape=shape, density=density,
                                friction=friction, restitution=restitution, sensor=sensor, category=category,
                                mask=mask, group=group, tangent_speed=tangent_speed,
                                rolling_resistance=rolling_resistance, one_way=one_way, bullet=bullet,
                                linear_damping=linear_damping, angular_damping=angular_damping,
                                gravity_scale=gravity_scale, sleep_threshold=sleep_threshold)

    # --- shapes ----------------------------------------------------------------------------------------
    def add_shapes(self, bodies: "Any", shape: "Any", density: "float" = 1.0, friction: "float" = 0.6,
                   restitution: "float" = 0.0, sensor: "bool" = False, category: "Bits" = 1,
                   mask: "Bits" = ALL_CATEGORIES, group: "Any" = 0, tangent_speed: "float" = 0.0,
                   rolling_resistance: "float" = 0.0, one_way: "Any" = None) -> list:
        """:meth:`Body.add_shape` for many bodies at once: a copy of ``shape`` (one geometry for all, or a sequence
        of one per body) on each of ``bodies`` (Body handles of this world or body indices, each once); returns
        the shapes' handles, in order. ``group`` takes one value for all or one per body; ``density``,
        ``friction``, ``restitution``, ``sensor``, ``category``, ``mask``, ``tangent_speed``,
        ``rolling_resistance`` and ``one_way`` are :meth:`Body.add_shape`'s, one value for all.

        The world is the one ``add_shape`` body after body would give (the same slots, masses, proxies and woken
        bodies), but the shapes' proxies are inserted at once and the check for sleeping shapes nearby is made
        once for all of them: for a ragdoll's feet or a fleet's sensors, a fraction of the calls' cost. Every
        argument is checked first, and each body's new mass; a refused call changes nothing."""
        return _bulk.add_shapes(self, bodies, shape, density=density, friction=friction, restitution=restitution,
                                sensor=sensor, category=category, mask=mask, group=group,
                                tangent_speed=tangent_speed, rolling_resistance=rolling_resistance,
                                one_way=one_way)

    # --- stepping --------------------------------------------------------------------------------------
    def _step_args(self, dt, threads, clock):
        """``_step.step_kernel``'s arguments for a step of ``dt`` with ``threads`` threads, its stage times to
        ``clock``."""
        bodies, shapes, tree, proxy, proxy_shape = self.step_tables()
        return (dt, self._substeps, float(self._gravity[0]), float(self._gravity[1]),
                MIX_RULES[self._friction_mixing], MIX_RULES[self._restitution_mixing], self.sleep_enabled, bodies,
                shapes, tree, proxy, proxy_shape, self.tables.contacts, _joint_rows.table(self.tables), _joint_rows.joined_keys(self), threads,
                self._pre_solve_address, clock)

    def step_tables(self) -> tuple:
        """The step kernel's tables: ``(BodyTable, ShapeTable, TreeTable, shape → proxy, proxy → shape)``, views
        of the live rows of the body and shape arrays, and the broad phase's (for engines that step worlds:
        ``World.step`` and :class:`carom.WorldBatch`; not for users, who read bodies through handles and the bulk
        properties).

        The views are kept between calls while the counts and the arrays are the same objects (the body
        arrays grow together, as do the shape arrays and the vertex pair): building ~35 views a step and
        dropping them again cost 20-30 µs of a 3 ms step, with the processor's caches cold from the step."""
        n = self.tables.n_bodies
        ns = self.tables.n_shapes
        kept = self._arg_views
        if (kept is not None and kept[0] == n and kept[1] == ns and kept[2] is self.tables.com and kept[3] is self.tables.s_body
                and kept[4] is self.tables.verts):
            bodies, shapes, proxy = kept[5:]
        else:
            bodies, shapes, proxy = self._live_views(n, ns)
            self._arg_views = (n, ns, self.tables.com, self.tables.s_body, self.tables.verts, bodies, shapes, proxy)
        bp = self.tables.bp
        bp.reserve()          # (room for the leaves the step gives shapes added since the last one)
        tree = TreeTable(*bp.step_table())
        return bodies, shapes, tree, proxy, self.tables.proxy_shape

    def _live_views(self, n, ns):
        t = self.tables
        bodies = BodyTable(t.com[:n], t.angle[:n], t.vel[:n], t.angvel[:n], t.inv_mass[:n], t.inv_inertia[:n],
                           t.local_center[:n], t.kind[:n], t.bullet[:n], t.alive[:n], t.force[:n], t.torque[:n],
                           t.lin_damping[:n], t.ang_damping[:n], t.gravity_scale[:n], t.min_extent[:n],
                           t.asleep[:n], t.sleep_time[:n], t.island[:n], t.can_sleep[:n], t.sleep_threshold[:n],
                           t.locks[:n])
        shapes = ShapeTable(t.s_body[:ns], t.s_alive[:ns], t.s_offset[:ns], t.s_count[:ns], t.s_radius[:ns],
                            t.s_friction[:ns], t.s_restitution[:ns], t.s_reach[:ns], t.s_sensor[:ns],
                            t.s_category[:ns], t.s_mask[:ns], t.s_group[:ns], t.verts, t.normals,
                            t.s_tangent_speed[:ns], t.s_rolling[:ns], t.s_one_way[:ns], t.s_ghost[:ns],
                            t.s_chain[:ns])
        return bodies, shapes, t.s_proxy[:ns]

    def step(self, dt: float) -> None:
        """Advance the world by ``dt`` seconds in one compiled call, then deliver events to the handlers.

        With ``world.profile = True`` the last step's time in each stage (ms, read from the processor's cycle
        counter inside the compiled step, so the figures include no call overhead) is in
        ``world.profile_times``: bounds, broad, narrow, prepare, solve, continuous, sleep and total. Contact
        events are found only when asked for (:meth:`contact_events`, or handlers registered with :meth:`on`).
        """
        self.tables.check_unlocked()
        dt = _number(dt, "dt", 0.0, MAX_TIME_STEP, low_open=True)
        # a dynamic body without mass and non-finite velocities, forces or torques are found by the compiled
        # step before it changes anything (_step.first_bad_body); the error is raised below
        inside = None if self.tables.bounds is None else self._inside_bounds(self.tables.n_bodies)
        self.tables.locked = True
        self.tables.query_boxes = None
        try:
            old = self.tables.contacts
            if not self.tables.skip_apart:
                old.cache[:, _step.CSEP] = -np.inf
            clock = np.zeros(len(_step.STAGES) + 1, np.int64)
            args = self._step_args(dt, self._governor.threads(step_threads()), clock)
            if self.tables.n_joints:
                _joints_apart.load(args[7], args[13])    # (the joints' code, compiled apart from the step)
            if self._pre_solve_address:                  # (the hook's pass, compiled apart from the step)
                _pre_solve_stage.load(args[4], args[5], args[8], narrow_part(old))
            if getattr(_step.step_kernel, "overloads", True):     # (a plain function without the JIT)
                _step.load_solve(args)                   # (the solve, compiled apart: once a process)
                contacts, cand, approach, (bad, body), left = self._call_step(args)
            else:                                  # the first step of the process: compile or load the step
                with compile_helper(_step.step_kernel, args, STEP_HELPER_JOB, _step.LATE_STAGES):
                    # the step first, then the solve, which the compile helper compiles meanwhile
                    _step.step_kernel.compile(tuple(_step.step_kernel.typeof_pyval(a) for a in args))
                    _step.load_solve(args)
                    contacts, cand, approach, (bad, body), left = _step.step_kernel(*args)
            if bad != _step.BODY_OK:
                raise self.refused_step_error(int(bad), int(body))
            if left is not None:
                self._finish_step(args, contacts, left)
            # the broad phase's grid search, compiled apart: until it is loaded, each step asks for it (compiled
            # meanwhile in a helper process); then the call returns at once
            load_grid(args[9], args[15], wait=False)
            self._governor.record(int(clock[-1] - clock[0]))
            if self.profile:
                self._record_profile(clock)
            self.tables.contacts = contacts
            self.tables.approach = approach
            self.tables.bp.set_candidates(cand)
            # events are computed and built when asked for (contact_events, handlers): finding them cost ~0.2
            # ms a step and the record arrays as much again. Of last step's table only the keys, touch and
            # sensor flags are kept (holding the whole table grew the heap by several tables)
            pending, self.tables.pending_end = self.tables.pending_end, []
            self.tables.events = None
            self.tables.raw_events = (old.keys, old.touching, old.sensor, contacts, approach, self.hit_event_threshold,
                                      pending)
            self.step_count += 1
            self.tables.last_dt = dt
            if inside is not None:
                gone = np.flatnonzero(inside & ~self._inside_bounds(inside.shape[0]))
                self.tables.left, self.tables.left_gen = gone, self.tables.gen[gone].copy()
            elif self.tables.left.size:
                self.tables.left, self.tables.left_gen = np.zeros(0, np.int64), np.zeros(0, np.int64)
        finally:
            self.tables.locked = False
        self._joint_events = _joint_rows.check_thresholds(self)
        self._deliver_events()
        if self.tables.remove_outside:
            for body in self.left_bounds():
                if body.alive:
                    self.remove(body)

    def _call_step(self, args):
        """``_step.step_kernel(*args)``: through Numba's dispatcher the first time for this world's tables, then
        straight through the entry point of the compiled step the dispatcher chose.

        Why: on every call the dispatcher finds the overload from the types of the arguments, some 100 arrays in
        named tuples: 13 µs of the 66 µs step of a world of one box. The types of a world's tables are fixed by
        the code that makes them (dtypes, C order, writable); they are looked at again when the tables' views
        are rebuilt (``step_tables``: bodies or shapes added, arrays grown). The entry point is used only while
        the step has a single compiled overload, so arguments the dispatcher took for it are its own types (a
        call with other types would have compiled a second one, and then every call goes through the
        dispatcher again)."""
        kernel = _step.step_kernel
        overloads = getattr(kernel, "overloads", None)
        if overloads is None:                       # (a plain function without the JIT)
            return kernel(*args)
        entry = self._step_entry
        if entry is not None and entry[0] is self._arg_views and len(overloads) == 1:
            return entry[1](*args)
        out = kernel(*args)
        self._step_entry = ((self._arg_views, next(iter(overloads.values())).entry_point) if len(overloads) == 1
                            else None)
        return out

    @staticmethod
    def _finish_step(args, contacts, left):
        """Finish a step that stopped for want of code compiled apart (continuous collision, sensors:
        ``_step.step_kernel``'s ``left``): load that code (``_continuous.load``; the first time in a process, a
        compile unless cached) and run the rest of the step (``_step.step_tail``)."""
        stage, reach, awake, com0, angle0 = left
        bodies, shapes, tree, proxy_shape = args[7], args[8], args[9], args[11]
        narrow = narrow_part(contacts)
        _continuous.load(bodies, shapes, tree, proxy_shape, narrow)
        if not _step.step_tail(stage, args[0], args[6], bodies, shapes, reach, awake, com0, angle0, tree, proxy_shape,
                               narrow, contacts.pair, args[13], args[15]):
            raise RuntimeError("carom: the step's continuous or sensor stage was not loaded for this world's tables")

    def refused_step_error(self, bad: int, i: int) -> Exception:
        """The SimulationError for what ``_step.first_bad_body`` found at body ``i`` (code ``bad``; the step
        changed nothing): what ``World.step`` raises, and :class:`carom.WorldBatch` for a world of a batch."""
        if bad == _step.BODY_MASSLESS:
            return SimulationError(f"dynamic body {i} has no mass: give it a shape with density > 0 (or make it "
                                   "static/kinematic)")
        name, arr = {_step.BODY_VELOCITY: ("velocity", self.tables.vel), _step.BODY_ANGULAR_VELOCITY:
                     ("angular_velocity", self.tables.angvel), _step.BODY_FORCE: ("force", self.tables.force),
                     _step.BODY_TORQUE: ("torque", self.tables.torque)}[bad]
        return SimulationError(f"body {i} has a non-finite {name}: {arr[i]}")

    def _record_profile(self, clock):
        """``profile_times`` from the step's stage clocks: ms per stage (``_step.STAGES``) and the total."""
        rate = cycles_per_second()
        if rate <= 0.0:
            self.profile_times = {}
            return
        # (in Python floats: NumPy's diff and a float per element took 40 µs a step, more than the step of a small
        # world, and showed as time outside the step in benchmarks/box2d_profile.py)
        c = clock.tolist()
        self.profile_times = {name: 1000.0 * (c[i + 1] - c[i]) / rate for i, name in enumerate(_step.STAGES)}
        self.profile_times["total"] = 1000.0 * (c[-1] - c[0]) / rate

    # --- contacts (read-only views for tests, drawing and events) ------------------------------------------
    def contacts(self) -> list:
        """Contacts of the last step that have points (touching or speculative), sensors excluded: list of
        dicts (shape_a, shape_b, normal, points, separations, normal_impulses, tangent_impulses, touching).

        The impulses are each point's over the whole step (N·s): the sum of what every substep and the
        restitution applied, so a box resting on the ground shows m·g·dt whatever the substep count. The
        normal points from shape_a to shape_b; the tangent is (normal.y, −normal.x); the impulse acts on
        shape_b's body and its opposite on shape_a's. :meth:`contact_data` gives the same numbers (and the approach
        speeds) as arrays, one row per point, without a Python loop."""
        c = self.tables.contacts
        keys, count, normal, points, sep, touch, sensor, step = (c.keys, c.count, c.normal, c.points, c.separation,
                                                                 c.touching, c.sensor, c.step_impulse)
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
        return _events.contact_data(self.tables)

    def contact_forces(self) -> np.ndarray:
        """Every body's total contact force over the last step, (n, 2) by body row (``Body.contact_force``
        for all bodies at once)."""
        return _events.contact_forces(self.tables, np.arange(self.tables.n_bodies))


    # --- queries (carom.rigid.queries: one compiled kernel each, through the broad phase) ------------------
    def raycast(self, p1: "Vec2", p2: "Vec2", mask: "Bits" = ALL_CATEGORIES, category: "Optional[Bits]" = None) -> list:
        """Every non-sensor shape the segment p1 → p2 enters, as ``WorldRayHit(shape, body, point, normal,
        fraction)`` sorted by fraction; only shapes with ``category & mask != 0``.

        ``mask`` selects the shapes by their category bits; with ``category`` given, a shape's mask must also meet
        it (the ray then filters as a shape of that category would).
        """
        self.tables.check_unlocked()
        return queries.raycast(self, p1, p2, mask, category)

    def raycast_first(self, p1: "Vec2", p2: "Vec2", mask: "Bits" = ALL_CATEGORIES, category: "Optional[Bits]" = None) -> "Any":
        """The closest hit of :meth:`raycast`, or None.

        ``p1``, ``p2``, ``mask`` and ``category`` as in :meth:`raycast`.
        """
        self.tables.check_unlocked()
        return queries.raycast_first(self, p1, p2, mask, category)

    def query_point(self, point: "Vec2", mask: "Bits" = ALL_CATEGORIES, category: "Optional[Bits]" = None) -> list:
        """Shapes containing the point (sensors included).

        ``mask`` and ``category`` filter the shapes as in :meth:`raycast`.
        """
        self.tables.check_unlocked()
        return queries.query_point(self, point, mask, category)

    def query_aabb(self, lower: "Vec2", upper: "Vec2", mask: "Bits" = ALL_CATEGORIES,
                   category: "Optional[Bits]" = None) -> list:
        """Shapes whose bounding box overlaps [lower, upper] (sensors included).

        ``mask`` and ``category`` filter the shapes as in :meth:`raycast`.
        """
        self.tables.check_unlocked()
        return queries.query_aabb(self, lower, upper, mask, category)

    def query_shape(self, shape: "Any", transform: "TransformLike", mask: "Bits" = ALL_CATEGORIES,
                    category: "Optional[Bits]" = None) -> list:
        """Shapes overlapping ``shape`` placed at ``transform`` (separation < 0; sensors included).

        ``mask`` and ``category`` filter the shapes as in :meth:`raycast`.
        """
        self.tables.check_unlocked()
        return queries.query_shape(self, shape, transform, mask, category)

    def query_nearest(self, point: "Vec2", max_distance: "float", mask: "Bits" = ALL_CATEGORIES,
                      category: "Optional[Bits]" = None) -> "Any":
        """The shape whose surface is nearest to ``point`` within ``max_distance``, as ``NearestShape(shape,
        body, point, distance)`` (distance negative inside), or None; pymunk's point_query_nearest.

        ``mask`` and ``category`` filter the shapes as in :meth:`raycast`.
        """
        self.tables.check_unlocked()
        return queries.query_nearest(self, point, max_distance, mask, category)

    def cast_shape(self, shape: "Any", transform: "TransformLike", translation: "Vec2", mask: "Bits" = ALL_CATEGORIES,
                   category: "Optional[Bits]" = None) -> "Any":
        """The first non-sensor shape met by ``shape`` at ``transform`` moved by ``translation``, as
        ``WorldCastHit(shape, body, point, normal, fraction)``, or None; Box2D's b2World_CastShape.

        ``mask`` and ``category`` filter the shapes as in :meth:`raycast`.
        """
        self.tables.check_unlocked()
        return queries.cast_shape(self, shape, transform, translation, mask, category)

    def explode(self, center: "Vec2", radius: "float", impulse_per_length: "float", falloff: "float" = 0.0,
                mask: "Bits" = ALL_CATEGORIES) -> list:
        """Push the dynamic bodies' shapes near ``center`` away from it with ``impulse_per_length`` times their
        projected perimeter (full within ``radius``, fading to 0 over ``falloff``); Box2D's b2World_Explode.
        Returns the bodies pushed (woken).

        ``mask`` selects the shapes pushed by their category bits.
        """
        self.tables.check_unlocked()
        return queries.explode(self, center, radius, impulse_per_length, falloff, mask)

    # --- sleep -------------------------------------------------------------------------------------------


    @property
    def awake_count(self) -> int:
        """Number of dynamic and kinematic bodies that are awake (simulated this step)."""
        n = self.tables.n_bodies
        return int((self.tables.alive[:n] & (self.tables.kind[:n] != _step.STATIC) & ~self.tables.asleep[:n]).sum())

    # --- events ------------------------------------------------------------------------------------------
    def contact_events(self) -> ContactEvents:
        """Begin, end and hit events of the last step as NumPy record arrays (shape and body rows; turn them
        into handles with :meth:`shape_handle` / :meth:`body_handle`). Contacts ended by removing a shape
        appear among the end events of the next step."""
        _events.settle(self.tables)
        return self.tables.events


    def shape_handle(self, index: "int") -> "ShapeHandle":
        """The handle of the living shape in row ``index`` (as event and contact arrays give them); StaleHandleError if
        there is none.

        ``index`` is a shape row (an int).
        """
        s = _validate.integer(index, "index")
        if not 0 <= s < self.tables.n_shapes or not self.tables.s_alive[s]:
            raise StaleHandleError(f"shape {s} does not exist (removed or never created)")
        return ShapeHandle(self, s, int(self.tables.s_gen[s]), self.tables.s_geometry[s])

    def body_handle(self, index: "int") -> Body:
        """The handle of the living body in row ``index`` (as event and contact arrays give them); StaleHandleError if
        there is none.

        ``index`` is a body row (an int).
        """
        b = _validate.integer(index, "index")
        if not 0 <= b < self.tables.n_bodies or not self.tables.alive[b]:
            raise StaleHandleError(f"body {b} does not exist (removed or never created)")
        return Body(self, b, int(self.tables.gen[b]))

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

    @property
    def has_handlers(self) -> bool:
        """True when a handler is registered with :meth:`on` (handlers run in Python after each step)."""
        return bool(self._handlers)




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
        _events.settle(self.tables)
        ev = self.tables.events
        for kind, records in (("begin", ev.begin), ("end", ev.end), ("hit", ev.hit)):
            handlers = [h for h in self._handlers if h[0] == kind]
            if not handlers or records.size == 0:
                continue
            for rec in records:
                sa, sb = int(rec["shape_a"]), int(rec["shape_b"])
                gen_a, gen_b = int(self.tables.s_gen[sa]), int(self.tables.s_gen[sb])
                if kind != "end" and not (self.tables.s_alive[sa] and self.tables.s_alive[sb]):
                    continue
                for _kind, fn, cats in handlers:
                    swap = False
                    if cats is not None:
                        ca, cb = self.tables.s_category[sa], self.tables.s_category[sb]
                        zero = np.uint64(0)
                        if (ca & cats[0]) != zero and (cb & cats[1]) != zero:
                            swap = False
                        elif (cb & cats[0]) != zero and (ca & cats[1]) != zero:
                            swap = True
                        else:
                            continue
                    if kind != "end" and not (self.tables.s_alive[sa] and self.tables.s_alive[sb]):
                        break
                    fn(self._event(kind, rec, sa, sb, gen_a, gen_b, swap))

    def _event(self, kind, rec, sa, sb, gen_a, gen_b, swap):
        ha = ShapeHandle(self, sa, gen_a, self.tables.s_geometry[sa])
        hb = ShapeHandle(self, sb, gen_b, self.tables.s_geometry[sb])
        ba, bb = int(rec["body_a"]), int(rec["body_b"])
        body_a = Body(self, ba, int(self.tables.gen[ba]))
        body_b = Body(self, bb, int(self.tables.gen[bb]))
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
        self.tables.check_unlocked()
        return Snapshot(_snapshot.encode(self))

    @classmethod
    def restore(cls, snapshot: "Any") -> "World":
        """The world a :class:`Snapshot` (or its ``.data`` bytes) holds. The bytes are parsed as data and the
        whole state is checked before the world is built (nothing is unpickled, no code runs); anything that
        is not a valid snapshot raises :class:`~carom.errors.SnapshotError` naming the problem."""
        return _snapshot.decode(snapshot, cls)

    @classmethod
    def _from_snapshot_bytes(cls, data):
        """Unpickling a world (``__reduce__``): the snapshot decoder, never ``__setstate__`` with a dict."""
        return _snapshot.decode(data, cls)

    def __reduce__(self):
        # a pickle of a world is its snapshot bytes and this decoder, so unpickling one runs no code of the
        # pickle's choosing beyond the decoder (and a damaged one is refused, not restored and then stepped).
        # The user's .data objects, if any, follow as the state, given to _set_user_data rather than
        # __setstate__ (after the world exists, so data that refers to the world or its bodies is pickled too)
        reduced = (World._from_snapshot_bytes, (_snapshot.encode(self),))
        if self.tables.body_data or self.tables.shape_data or self.tables.joint_data:
            reduced += ((dict(self.tables.body_data), dict(self.tables.shape_data), dict(self.tables.joint_data)), None, None,
                        World._set_user_data)
        return reduced

    @staticmethod
    def _set_user_data(world, state):
        """Give an unpickled world its bodies', shapes' and joints' ``.data`` (``__reduce__``): three dicts by
        row, every row one of a live body, shape or joint, or SnapshotError."""
        if not (isinstance(state, tuple) and len(state) == 3 and all(type(d) is dict for d in state)):
            raise SnapshotError("invalid pickle of a World: its user data is not three dicts")
        for what, table, alive, count in (("body", state[0], world.tables.alive, world.tables.n_bodies),
                                          ("shape", state[1], world.tables.s_alive, world.tables.n_shapes),
                                          ("joint", state[2], world.tables.j_alive, world.tables.n_joints)):
            for k in table:
                if type(k) is not int or not 0 <= k < count or not alive[k]:
                    raise SnapshotError(f"invalid pickle of a World: user data for {what} {k!r}, which does not "
                                        "exist")
        world.tables.body_data = state[0]
        world.tables.shape_data = state[1]
        world.tables.joint_data = state[2]


    def __setstate__(self, state):
        # (only a pickle made before snapshots were data, which restored whatever attributes it held, calls
        # this; __reduce__ never does)
        raise SnapshotError("this pickle of a World predates carom's data-only snapshots and is not restored: "
                            "unpickle it with the carom that made it and take a new snapshot")

    def __copy__(self):
        """A world in the same state, its bodies' and shapes' ``.data`` the same objects."""
        w = World.restore(self.snapshot())
        w.tables.body_data = dict(self.tables.body_data)
        w.tables.shape_data = dict(self.tables.shape_data)
        w.tables.joint_data = dict(self.tables.joint_data)
        return w

    def __deepcopy__(self, memo):
        """A world in the same state with deep copies of the ``.data`` objects (the world itself goes in the
        memo first: data that refers to this world or its bodies refers to the copy)."""
        w = World.restore(self.snapshot())
        memo[id(self)] = w
        if self.tables.body_data or self.tables.shape_data or self.tables.joint_data:
            w.tables.body_data, w.tables.shape_data, w.tables.joint_data = copy.deepcopy(
                (self.tables.body_data, self.tables.shape_data, self.tables.joint_data), memo)
        return w
