"""Joints of the rigid world: the public definitions (``Revolute``, ``Distance``, ...), the :class:`Joint` handle and
the world's joint table.

A definition names two bodies (``None`` is the world's static body) and the joint's settings; anchors are
given as world points (``anchor``, or ``anchor_a`` and ``anchor_b``) or in the bodies' frames (``local_anchor_a``,
``local_anchor_b``, from the body origin). ``world.add_joint(definition)`` checks every value, stores the joint
as a row of the joint table and returns a handle. Every kind takes the common options:

- ``collide_connected`` (False): whether the two bodies' shapes still collide with each other;
- ``enabled`` (True): a disabled joint is not solved (its bodies still do not collide unless
  ``collide_connected``);
- ``force_threshold``, ``torque_threshold`` (inf) and ``on_threshold`` ("break" or "report"): once the joint's
  reaction force or torque of a step exceeds its threshold, the joint breaks (is removed) or is reported, and
  either way a :class:`JointEvent` is delivered (``World.joint_events``, handlers ``world.on("joint", fn)``);
- ``data``: any Python object (kept by pickle and copy, not by snapshots).

The settings of a joint can be read and changed through its handle (``pivot.motor_speed = 2.0``), with the
same checks. The solver is in ``_solve`` and ``_rows`` (generic rows), which one module per kind (``revolute``,
``distance``, ...) emits."""
from typing import TYPE_CHECKING
if TYPE_CHECKING:  # (annotations only)
    from typing import Tuple
    from ..._types import Any, ArrayLike, Bits, Optional, Points, TransformLike, Vec2
import math
from collections import namedtuple

import numpy as np

from ... import _validate
from ...constants import FLOAT32_LIMIT, ANGLE_LIMIT, WORLD_LIMIT
from ...errors import CaromError, SimulationError, StaleHandleError
from ._common import (FILTER, DISTANCE, REVOLUTE, PRISMATIC, WHEEL, WELD, MOTOR, MOUSE, ROTARY_LIMIT, ROTARY_SPRING,
                      ANGULAR_MOTOR, RATCHET, GEAR, PULLEY, KIND_COUNT, LOCAL_WIDTH, PARAM_WIDTH, IMPULSE_WIDTH,
                      JointTable)
from . import (distance, revolute, prismatic, wheel, weld, motor, mouse, rotary_limit, rotary_spring, angular_motor,
               ratchet, gear, pulley)

__all__ = ["Joint", "JointEvent", "Many", "Distance", "Revolute", "Prismatic", "Wheel", "Weld", "Motor", "Mouse",
           "RotaryLimit", "RotarySpring", "AngularMotor", "Ratchet", "Gear", "Pulley", "Filter"]

INF = math.inf
KIND_NAMES = ("filter", "distance", "revolute", "prismatic", "wheel", "weld", "motor", "mouse", "rotary_limit",
              "rotary_spring", "angular_motor", "ratchet", "gear", "pulley")

#: a joint event: the joint's handle (stale once it broke), its reaction force (a vector) and torque of the step,
#: and whether it broke
JointEvent = namedtuple("JointEvent", "joint force torque broke")

# a setting: its column in the joint table's ``param`` and how it is checked: "any" a finite number within the
# single-precision range, "angle" within ANGLE_LIMIT, "length" within the world limit, ">=0" a non-negative one,
# ">0" a positive one, "limit" a number or ±inf (no NaN), "upper" (as limit), "ratio" a non-zero number
_ANY, _ANGLE, _LENGTH, _NONNEG, _POS, _LIMIT, _NONZERO = "any", "angle", "length", ">=0", ">0", "limit", "nonzero"

#: each kind's settings: name -> (column, check); the column order is the kind module's
SETTINGS = {
    DISTANCE: dict(length=(distance.LENGTH, _LENGTH), min_length=(distance.MIN_LENGTH, _LIMIT),
                   max_length=(distance.MAX_LENGTH, _LIMIT), hertz=(distance.HERTZ, _NONNEG),
                   damping_ratio=(distance.DAMPING_RATIO, _NONNEG), lower_force=(distance.LOWER_FORCE, _LIMIT),
                   upper_force=(distance.UPPER_FORCE, _LIMIT), motor_speed=(distance.MOTOR_SPEED, _ANY),
                   max_motor_force=(distance.MAX_MOTOR_FORCE, _NONNEG)),
    REVOLUTE: dict(reference_angle=(revolute.REF, _ANGLE), lower=(revolute.LOWER, _LIMIT),
                   upper=(revolute.UPPER, _LIMIT), motor_speed=(revolute.MOTOR_SPEED, _ANY),
                   max_motor_torque=(revolute.MAX_MOTOR_TORQUE, _NONNEG), hertz=(revolute.HERTZ, _NONNEG),
                   damping_ratio=(revolute.DAMPING_RATIO, _NONNEG), target_angle=(revolute.TARGET, _ANGLE)),
    PRISMATIC: dict(reference_angle=(prismatic.REF, _ANGLE), lower=(prismatic.LOWER, _LIMIT),
                    upper=(prismatic.UPPER, _LIMIT), motor_speed=(prismatic.MOTOR_SPEED, _ANY),
                    max_motor_force=(prismatic.MAX_MOTOR_FORCE, _NONNEG), hertz=(prismatic.HERTZ, _NONNEG),
                    damping_ratio=(prismatic.DAMPING_RATIO, _NONNEG), target_translation=(prismatic.TARGET, _LENGTH)),
    WHEEL: dict(reference_angle=(wheel.REF, _ANGLE), lower=(wheel.LOWER, _LIMIT), upper=(wheel.UPPER, _LIMIT),
                motor_speed=(wheel.MOTOR_SPEED, _ANY), max_motor_torque=(wheel.MAX_MOTOR_TORQUE, _NONNEG),
                hertz=(wheel.HERTZ, _NONNEG), damping_ratio=(wheel.DAMPING_RATIO, _NONNEG)),
    WELD: dict(reference_angle=(weld.REF, _ANGLE), linear_hertz=(weld.LINEAR_HERTZ, _NONNEG),
               linear_damping_ratio=(weld.LINEAR_DAMPING, _NONNEG), angular_hertz=(weld.ANGULAR_HERTZ, _NONNEG),
               angular_damping_ratio=(weld.ANGULAR_DAMPING, _NONNEG)),
    MOTOR: dict(angular_offset=(motor.REF, _ANGLE), max_force=(motor.MAX_FORCE, _NONNEG),
                max_torque=(motor.MAX_TORQUE, _NONNEG), correction_factor=(motor.CORRECTION, _NONNEG),
                linear_hertz=(motor.LINEAR_HERTZ, _NONNEG), linear_damping_ratio=(motor.LINEAR_DAMPING, _NONNEG),
                angular_hertz=(motor.ANGULAR_HERTZ, _NONNEG),
                angular_damping_ratio=(motor.ANGULAR_DAMPING, _NONNEG)),
    MOUSE: dict(hertz=(mouse.HERTZ, _POS), damping_ratio=(mouse.DAMPING_RATIO, _NONNEG),
                max_force=(mouse.MAX_FORCE, _NONNEG)),
    ROTARY_LIMIT: dict(reference_angle=(rotary_limit.REF, _ANGLE), lower=(rotary_limit.LOWER, _ANGLE), upper=(rotary_limit.UPPER, _ANGLE)),
    ROTARY_SPRING: dict(reference_angle=(rotary_spring.REF, _ANGLE), rest_angle=(rotary_spring.REST_ANGLE, _ANGLE), hertz=(rotary_spring.HERTZ, _POS),
                        damping_ratio=(rotary_spring.DAMPING_RATIO, _NONNEG)),
    ANGULAR_MOTOR: dict(reference_angle=(angular_motor.REF, _ANGLE), speed=(angular_motor.SPEED, _ANY), max_torque=(angular_motor.MAX_TORQUE, _NONNEG)),
    RATCHET: dict(reference_angle=(ratchet.REF, _ANGLE), phase=(ratchet.PHASE, _ANGLE), ratchet=(ratchet.RATCHET, _NONZERO)),
    GEAR: dict(reference_angle=(gear.REF, _ANGLE), phase=(gear.PHASE, _ANGLE), ratio=(gear.RATIO, _NONZERO)),
    PULLEY: dict(reference_angle=(pulley.REF, _ANGLE), ratio=(pulley.RATIO, _POS), length=(pulley.CONSTANT, _LENGTH)),
    FILTER: dict(),
}


#: each check's bounds, as ``_validate.number`` takes them: (low, high, low_open, magnitude); a limit also takes ±inf,
#: and a nonzero setting refuses 0
_BOUNDS = {_ANY: (None, None, False, FLOAT32_LIMIT), _ANGLE: (None, None, False, ANGLE_LIMIT),
           _LENGTH: (None, None, False, WORLD_LIMIT), _NONNEG: (0.0, FLOAT32_LIMIT, False, None),
           _POS: (0.0, FLOAT32_LIMIT, True, None), _LIMIT: (None, None, False, FLOAT32_LIMIT),
           _NONZERO: (None, None, False, FLOAT32_LIMIT)}
#: the same as closed or half-open intervals [low, high] of the finite floats that pass, for ``_setting``'s short
#: path (a nonzero setting takes the general one)
_FLOAT_BOUNDS = {check: (low, high, low_open) if magnitude is None else (-magnitude, magnitude, low_open)
                 for check, (low, high, low_open, magnitude) in _BOUNDS.items() if check != _NONZERO}


def _setting(value, name, check):
    """A joint setting checked as ``check`` says (SETTINGS, ``_BOUNDS``), as a float."""
    if type(value) is float and value == value and check in _FLOAT_BOUNDS:
        # (a Python float within its bounds, as the general check below takes it: most settings are; a joint has
        # about eight, and the general path was a fifth of adding one)
        low, high, low_open = _FLOAT_BOUNDS[check]
        if (low < value or (value == low and not low_open)) and value <= high:
            return value
    if check == _LIMIT:
        if type(value) is float and math.isinf(value):
            return value
        if isinstance(value, (np.floating,)) and np.isinf(value):
            return float(value)
    low, high, low_open, magnitude = _BOUNDS[check]
    v = _validate.number(value, name, low, high, low_open=low_open, magnitude=magnitude)
    if check == _NONZERO and v == 0.0:
        raise SimulationError(f"{name} must not be 0")
    return v


#: the kinds' pairs of settings that must be in order (lower ≤ upper), for ``_consistent``
_ORDERED = {DISTANCE: (("min_length", distance.MIN_LENGTH), ("max_length", distance.MAX_LENGTH)),
            REVOLUTE: (("lower", revolute.LOWER), ("upper", revolute.UPPER)),
            PRISMATIC: (("lower", prismatic.LOWER), ("upper", prismatic.UPPER)),
            WHEEL: (("lower", wheel.LOWER), ("upper", wheel.UPPER)),
            ROTARY_LIMIT: (("lower", rotary_limit.LOWER), ("upper", rotary_limit.UPPER))}


def _consistent(kind, p, where=""):
    """Cross-checks of a kind's settings (``p``: the param row): lower ≤ upper and the like."""
    if kind in _ORDERED:
        (ln, lc), (un, uc) = _ORDERED[kind]
        if p[lc] > p[uc]:
            raise SimulationError(f"{where}{ln} = {p[lc]!r} is above {un} = {p[uc]!r}")
    if kind == DISTANCE:
        if p[distance.MIN_LENGTH] < 0.0:
            raise SimulationError(f"{where}min_length = {p[distance.MIN_LENGTH]!r} must be >= 0")
        if p[distance.LENGTH] < 0.0:
            raise SimulationError(f"{where}length = {p[distance.LENGTH]!r} must be >= 0")
        if p[distance.LOWER_FORCE] > p[distance.UPPER_FORCE]:
            raise SimulationError(f"{where}lower_force = {p[distance.LOWER_FORCE]!r} is above upper_force = "
                                  f"{p[distance.UPPER_FORCE]!r}")
    if kind == PULLEY and p[pulley.CONSTANT] < 0.0:
        raise SimulationError(f"{where}length = {p[pulley.CONSTANT]!r} must be >= 0")


def _point(value, name):
    return _validate.vector(value, name, WORLD_LIMIT)


def _to_local(world, b, p):
    """World point p in body b's frame (from its origin), as a pair of floats (``frames`` stores it in the row:
    an array per anchor was a tenth of adding a joint)."""
    x, y, c, s = world.tables.origin_transform(b)
    dx, dy = float(p[0]) - x, float(p[1]) - y
    return c * dx + s * dy, -s * dx + c * dy


def _to_world(world, b, q):
    """Point q of body b's frame in world coordinates."""
    o, c, s = world.tables.origin_frame(b)
    return np.array((o[0] + c * q[0] - s * q[1], o[1] + s * q[0] + c * q[1]))


_COMMON = ("collide_connected", "enabled", "force_threshold", "torque_threshold", "on_threshold", "data")


class _Definition:
    """What every joint definition holds: the bodies, the common options (module docstring), the anchors and the
    kind's settings (``SETTINGS``); ``frames`` turns them into a row of the joint table."""
    kind = FILTER
    #: the settings' defaults: a value, or a function (world, a, b, local, param) of the joint's pose
    defaults: dict = {}
    #: by default each body's anchor is its origin (two-anchor joints), or both are B's origin
    two_anchors = False
    takes_axis = False
    default_axis = (1.0, 0.0)

    def __init__(self, body_a, body_b, anchor=None, *, anchor_a=None, anchor_b=None, local_anchor_a=None,
                 local_anchor_b=None, axis=None, local_axis_a=None, collide_connected=False, enabled=True,
                 force_threshold=INF, torque_threshold=INF, on_threshold="break", data=None, **settings):
        self.body_a = body_a
        self.body_b = body_b
        self.anchor, self.anchor_a, self.anchor_b = anchor, anchor_a, anchor_b
        self.local_anchor_a, self.local_anchor_b = local_anchor_a, local_anchor_b
        self.axis, self.local_axis_a = axis, local_axis_a
        self.collide_connected = collide_connected
        self.enabled = enabled
        self.force_threshold = force_threshold
        self.torque_threshold = torque_threshold
        self.on_threshold = on_threshold
        self.data = data
        self.settings = settings

    def __repr__(self):
        return f"joints.{type(self).__name__}({self.body_a!r}, {self.body_b!r}, {self.settings})"

    @classmethod
    def many(cls, **columns: "Any") -> "Any":
        """Many joints of this kind, for ``World.add_joints``: the constructor's arguments by name, each one value
        for every joint or one per joint (bodies as a sequence or an integer array of body indices, points as
        (n, 2) arrays, settings as 1-d arrays, ``data`` as a list), as ``joints.many`` describes. For a ragdoll's or
        a chain's joints it costs a fraction of one definition per joint::

            pins = joints.Revolute.many(body_a=parents, body_b=children, anchor=points, lower=-0.5, upper=0.5)
            handles = world.add_joints(pins)
        """
        return Many(cls, columns)

    def anchors(self, world: "Any", a: "int", b: "int") -> "Tuple[np.ndarray, np.ndarray]":
        """The anchors in the bodies' frames (from ``anchor``, ``anchor_a``/``anchor_b`` or the local ones).

        ``world`` is the world the joint is added to, ``a`` and ``b`` the two bodies' rows (called by
        ``World.add_joint``).
        """
        if self.anchor is not None:
            if self.anchor_a is not None or self.anchor_b is not None or self.local_anchor_a is not None \
                    or self.local_anchor_b is not None:
                raise SimulationError("give either anchor or the anchors of each body, not both")
            p = _point(self.anchor, "anchor")
            return _to_local(world, a, p), _to_local(world, b, p)
        ends = []
        for body, name, world_p, local_p in ((a, "a", self.anchor_a, self.local_anchor_a),
                                             (b, "b", self.anchor_b, self.local_anchor_b)):
            if world_p is not None and local_p is not None:
                raise SimulationError(f"give either anchor_{name} or local_anchor_{name}, not both")
            if local_p is not None:
                ends.append(_point(local_p, f"local_anchor_{name}"))
            elif world_p is not None:
                ends.append(_to_local(world, body, _point(world_p, f"anchor_{name}")))
            elif self.two_anchors or body == b:
                ends.append(np.zeros(2))
            else:
                ends.append(_to_local(world, a, _to_world(world, b, np.zeros(2))))
        return ends[0], ends[1]

    def axis_in_a(self, world: "Any", a: "int") -> "np.ndarray":
        """The unit axis in A's frame, from ``axis`` (a world direction) or ``local_axis_a``."""
        if self.axis is not None and self.local_axis_a is not None:
            raise SimulationError("give either axis or local_axis_a, not both")
        if self.local_axis_a is not None:
            u = _validate.vector(self.local_axis_a, "local_axis_a", FLOAT32_LIMIT)
        else:
            u = _validate.vector(self.default_axis if self.axis is None else self.axis, "axis", FLOAT32_LIMIT)
            _, c, s = world.tables.origin_frame(a)
            u = np.array((c * u[0] + s * u[1], -s * u[0] + c * u[1]))
        n = math.hypot(u[0], u[1])
        if not n > 1e-12:
            raise SimulationError(f"axis must not be zero, got {tuple(float(x) for x in u)}")
        return u / n

    def frames(self, world: "Any", a: "int", b: "int") -> "Tuple[np.ndarray, np.ndarray]":
        """(local, param): the table row's anchors and axis, and the settings checked (``_setting``) with the
        defaults filled in; raises SimulationError naming a bad value.

        ``world`` is the world the joint is added to, ``a`` and ``b`` the two bodies' rows.
        """
        local = np.zeros(LOCAL_WIDTH)
        param = np.zeros(PARAM_WIDTH)
        anchor_a, anchor_b = self.anchors(world, a, b)
        local[0:4] = (anchor_a[0], anchor_a[1], anchor_b[0], anchor_b[1])
        if self.takes_axis:
            local[4:6] = self.axis_in_a(world, a)
        known = SETTINGS[self.kind]
        settings = self.settings
        for name in settings:
            if name not in known:
                raise SimulationError(f"{type(self).__name__} has no setting {name!r} (it has {sorted(known)})")
        defaults = self.defaults
        for name, (col, check) in known.items():
            value = settings[name] if name in settings else defaults.get(name)
            if callable(value):
                value = value(world, a, b, local, param)
            param[col] = _setting(value, name, check)
        self.finish(world, a, b, local, param)
        _consistent(self.kind, param)
        return local, param

    def finish(self, world: "Any", a: "int", b: "int", local: "Any", param: "Any") -> None:
        """What a kind adds after its settings (nothing by default): ``world`` is the world, ``a`` and ``b`` the
        bodies' rows, ``local`` and ``param`` the row's frame and settings, written in place."""


def _relative_angle(world, a, b, local, param):
    return float(world.tables.angle[b] - world.tables.angle[a])


def _current_length(world, a, b, local, param):
    pa = _to_world(world, a, local[0:2])
    pb = _to_world(world, b, local[2:4])
    return float(math.hypot(pb[0] - pa[0], pb[1] - pa[1]))


class Revolute(_Definition):
    """Revolute(body_a, body_b, anchor=(x, y), *, lower=-inf, upper=inf, motor_speed=0, max_motor_torque=0,
    hertz=0, damping_ratio=0, target_angle=0, reference_angle=<today's>, ...): the bodies pinned together at
    ``anchor`` (a world point; or ``local_anchor_a``/``local_anchor_b``; by default B's origin). Limits on the
    relative angle θB − θA − reference angle (radians; ±inf for none), a motor (on when max_motor_torque > 0)
    and a rotational spring (on when hertz > 0) pulling towards ``target_angle``. Box2D's revolute joint,
    pymunk's PivotJoint."""
    kind = REVOLUTE
    defaults = dict(reference_angle=_relative_angle, lower=-INF, upper=INF, motor_speed=0.0, max_motor_torque=0.0,
                    hertz=0.0, damping_ratio=0.0, target_angle=0.0)


class Weld(_Definition):
    """Weld(body_a, body_b, anchor, *, linear_hertz=0, angular_hertz=0, linear_damping_ratio=0,
    angular_damping_ratio=0, ...): the bodies held at today's relative pose; rigid, or a soft spring in position
    (linear_hertz > 0) and in angle (angular_hertz > 0). Box2D's weld joint."""
    kind = WELD
    defaults = dict(reference_angle=_relative_angle, linear_hertz=0.0, linear_damping_ratio=0.0, angular_hertz=0.0,
                    angular_damping_ratio=0.0)


class Distance(_Definition):
    """Distance(body_a, body_b, anchor_a, anchor_b, *, length=<today's>, min_length, max_length, hertz=0,
    damping_ratio=0, lower_force=-inf, upper_force=inf, motor_speed=0, max_motor_force=0, ...): the distance
    between two anchors (world points; or ``local_anchor_a``/``local_anchor_b``; by default the bodies' origins).

    Rigid at ``length`` by default (pymunk's PinJoint); with ``min_length`` < ``max_length`` free between them (a
    rope is ``min_length=0``; pymunk's SlideJoint); with ``hertz`` > 0 a spring of that frequency and damping
    ratio towards ``length`` (pymunk's DampedSpring), its force within [lower_force, upper_force] and its length
    within min/max_length when given. A motor drives the length's rate of change (on when max_motor_force > 0).
    Box2D's distance joint."""
    kind = DISTANCE
    two_anchors = True

    def __init__(self, body_a: "Any", body_b: "Any", anchor_a: "Optional[Vec2]" = None,
                 anchor_b: "Optional[Vec2]" = None, **kw):
        super().__init__(body_a, body_b, anchor_a=anchor_a, anchor_b=anchor_b, **kw)

    @property
    def defaults(self) -> dict:  # type: ignore[override]  # (a class attribute in the other kinds)
        """The settings' defaults: rigid at today's length, or with ``hertz`` > 0 a spring free between 0 and infinity.
        The settings' defaults: rigid at today's length, or with ``hertz`` > 0 a spring free between 0 and infinity."""
        spring = self.settings.get("hertz", 0.0)
        spring = _validate._is_real(spring) and spring > 0.0
        same = lambda w, a, b, local, param: param[distance.LENGTH]  # noqa: E731  (rigid: min = max = length)
        return dict(length=_current_length, min_length=0.0 if spring else same, max_length=INF if spring else same,
                    hertz=0.0, damping_ratio=0.0, lower_force=-INF, upper_force=INF, motor_speed=0.0,
                    max_motor_force=0.0)


class Prismatic(_Definition):
    """Prismatic(body_a, body_b, anchor, axis=(1, 0), *, lower=-inf, upper=inf, motor_speed=0, max_motor_force=0,
    hertz=0, damping_ratio=0, target_translation=0, free_rotation=False, ...): body B slides along ``axis`` (a
    world direction, fixed in A; or ``local_axis_a``) through ``anchor``; the relative angle is held unless
    ``free_rotation`` (pymunk's GrooveJoint). Limits on the translation, a motor (on when max_motor_force > 0), a
    spring towards ``target_translation`` (on when hertz > 0). Box2D's prismatic joint."""
    kind = PRISMATIC
    takes_axis = True
    defaults = dict(reference_angle=_relative_angle, lower=-INF, upper=INF, motor_speed=0.0, max_motor_force=0.0,
                    hertz=0.0, damping_ratio=0.0, target_translation=0.0)

    def __init__(self, body_a: "Any", body_b: "Any", anchor: "Optional[Vec2]" = None, axis: "Optional[Vec2]" = None,
                 *, free_rotation: "bool" = False, **kw):
        super().__init__(body_a, body_b, anchor, axis=axis, **kw)
        self.free_rotation = free_rotation

    def finish(self, world: "Any", a: "int", b: "int", local: "Any", param: "Any") -> None:
        """Store ``free_rotation`` in the row's ``param`` (given ``world``, the body rows ``a``, ``b`` and the
        ``local`` frame, unused)."""
        param[prismatic.FREE_ROTATION] = float(_validate.flag(self.free_rotation, "free_rotation"))


class Wheel(_Definition):
    """Wheel(body_a, body_b, anchor, axis=(0, 1), *, hertz=0, damping_ratio=0, lower=-inf, upper=inf,
    motor_speed=0, max_motor_torque=0, ...): body B (a wheel, turning freely) on a suspension along ``axis``
    (fixed in A) through ``anchor`` (usually the wheel's centre): a spring of ``hertz`` and ``damping_ratio``
    along the axis, limits on the travel, and a motor turning the wheel (on when max_motor_torque > 0). Box2D's
    wheel joint."""
    kind = WHEEL
    takes_axis = True
    default_axis = (0.0, 1.0)
    defaults = dict(reference_angle=_relative_angle, lower=-INF, upper=INF, motor_speed=0.0, max_motor_torque=0.0,
                    hertz=0.0, damping_ratio=0.0)

    def __init__(self, body_a: "Any", body_b: "Any", anchor: "Optional[Vec2]" = None, axis: "Optional[Vec2]" = None,
                 **kw):
        super().__init__(body_a, body_b, anchor, axis=axis, **kw)


class Motor(_Definition):
    """Motor(body_a, body_b, *, linear_offset=<today's>, angular_offset=<today's>, max_force=1, max_torque=1,
    correction_factor=0.3, linear_hertz=0, angular_hertz=0, ...): drives body B's origin towards
    ``linear_offset`` (a point in A's frame) and its angle towards A's plus ``angular_offset``, with at most
    ``max_force`` and ``max_torque``: top-down friction (A the ground, offsets 0) and moving platforms. Box2D's
    motor joint."""
    kind = MOTOR
    defaults = dict(angular_offset=_relative_angle, max_force=1.0, max_torque=1.0, correction_factor=0.3,
                    linear_hertz=0.0, linear_damping_ratio=0.0, angular_hertz=0.0, angular_damping_ratio=0.0)

    def __init__(self, body_a: "Any", body_b: "Any", *, linear_offset: "Optional[Vec2]" = None, **kw):
        super().__init__(body_a, body_b, **kw)
        self.linear_offset = linear_offset

    def anchors(self, world: "Any", a: "int", b: "int") -> "Tuple[np.ndarray, np.ndarray]":
        """A's anchor is the linear offset (by default where B's origin is now, in A's frame) and B's its origin;
        ``world``, ``a`` and ``b`` as for every definition."""
        if self.linear_offset is None:
            return _to_local(world, a, _to_world(world, b, np.zeros(2))), np.zeros(2)
        return _point(self.linear_offset, "linear_offset"), np.zeros(2)


class Mouse(_Definition):
    """Mouse(body, target, *, max_force=1000·mass, hertz=5, damping_ratio=0.7, local_anchor=<at target>, ...):
    pulls the body's point that is at ``target`` now (or ``local_anchor``) towards ``target``, which the handle's
    ``target`` moves, with a spring of ``hertz`` and ``damping_ratio`` and at most ``max_force``. Box2D's mouse
    joint; its other body is the world's static body."""
    kind = MOUSE

    def __init__(self, body: "Any", target: "Vec2", *, local_anchor: "Optional[Vec2]" = None, **kw):
        super().__init__(None, body, **kw)
        self.target = target
        self.local_anchor = local_anchor

    @property
    def defaults(self) -> dict:  # type: ignore[override]  # (a class attribute in the other kinds)
        """The settings' defaults: 5 Hz, damping ratio 0.7, at most 1000 × the body's mass in newtons (Box2D's
        samples)."""
        return dict(hertz=5.0, damping_ratio=0.7,
                    max_force=lambda w, a, b, local, param: 1000.0 * float(w.tables.mass[b]))

    def anchors(self, world: "Any", a: "int", b: "int") -> "Tuple[np.ndarray, np.ndarray]":
        """The target as anchor A (in the world frame: the static body's) and the grabbed point on body B; ``world``,
        ``a`` and ``b`` as for every definition."""
        # (the static body sits at the origin, unrotated: its frame is the world's)
        t = _point(self.target, "target")
        return t, (_point(self.local_anchor, "local_anchor") if self.local_anchor is not None
                   else _to_local(world, b, t))


def _positional(names, defaults=None):
    """An ``__init__`` taking the settings ``names`` positionally after the two bodies."""
    def __init__(self, body_a: "Any", body_b: "Any", *args, **kw):
        if len(args) > len(names):
            raise TypeError(f"{type(self).__name__} takes at most {len(names)} settings after the bodies")
        for name, value in zip(names, args):
            if name in kw:
                raise TypeError(f"{type(self).__name__} got {name} twice")
            kw[name] = value
        _Definition.__init__(self, body_a, body_b, **kw)
    return __init__


class RotaryLimit(_Definition):
    """RotaryLimit(body_a, body_b, lower, upper): the relative angle θB − θA kept within [lower, upper].
    pymunk's RotaryLimitJoint."""
    kind = ROTARY_LIMIT
    defaults = dict(reference_angle=0.0, lower=0.0, upper=0.0)
    __init__ = _positional(("lower", "upper"))


class RotarySpring(_Definition):
    """RotarySpring(body_a, body_b, rest_angle, hertz, damping_ratio=0): a spring pulling the relative angle
    θB − θA towards ``rest_angle`` with the frequency ``hertz`` and the damping ratio. pymunk's DampedRotarySpring,
    given as a frequency and a damping ratio instead of a stiffness and a damping."""
    kind = ROTARY_SPRING
    defaults = dict(reference_angle=0.0, rest_angle=0.0, hertz=1.0, damping_ratio=0.0)
    __init__ = _positional(("rest_angle", "hertz", "damping_ratio"))


class AngularMotor(_Definition):
    """AngularMotor(body_a, body_b, speed, max_torque=inf): keeps ωB − ωA at ``speed`` with at most
    ``max_torque``. pymunk's SimpleMotor."""
    kind = ANGULAR_MOTOR
    defaults = dict(reference_angle=0.0, speed=0.0, max_torque=FLOAT32_LIMIT)
    __init__ = _positional(("speed", "max_torque"))


class Ratchet(_Definition):
    """Ratchet(body_a, body_b, phase, ratchet): the relative angle θB − θA turns freely in the direction of
    ``ratchet``'s sign and not back past the last tooth it reached (teeth at phase + k·|ratchet|). pymunk's
    RatchetJoint."""
    kind = RATCHET
    defaults = dict(reference_angle=0.0, phase=0.0, ratchet=None)
    __init__ = _positional(("phase", "ratchet"))


class Gear(_Definition):
    """Gear(body_a, body_b, phase=0, ratio=1): keeps ratio·θB − θA = phase, so that ratio·ωB = ωA. pymunk's
    GearJoint."""
    kind = GEAR
    defaults = dict(reference_angle=0.0, phase=0.0, ratio=1.0)
    __init__ = _positional(("phase", "ratio"))


class Pulley(_Definition):
    """Pulley(body_a, body_b, ground_a, ground_b, anchor_a=<A's origin>, anchor_b=<B's origin>, ratio=1,
    length=<today's>): a rope from ``anchor_a`` on A up to the fixed point ``ground_a``, over to ``ground_b`` and
    down to ``anchor_b`` on B: |pA − gA| + ratio·|pB − gB| stays ``length``. pybox2d's pulley joint."""
    kind = PULLEY
    two_anchors = True

    def __init__(self, body_a: "Any", body_b: "Any", ground_a: "Vec2", ground_b: "Vec2",
                 anchor_a: "Optional[Vec2]" = None, anchor_b: "Optional[Vec2]" = None, ratio: "float" = 1.0, **kw):
        super().__init__(body_a, body_b, anchor_a=anchor_a, anchor_b=anchor_b, ratio=ratio, **kw)
        self.ground_a = ground_a
        self.ground_b = ground_b

    @property
    def defaults(self) -> dict:  # type: ignore[override]  # (a class attribute in the other kinds)
        """The settings' defaults: ratio 1, and the rope's length today's: |A − ground A| + ratio·|B − ground B|."""
        def today(w, a, b, local, param):
            ga = _point(self.ground_a, "ground_a")
            gb = _point(self.ground_b, "ground_b")
            ratio = _setting(self.settings.get("ratio", 1.0), "ratio", _POS)
            return float(np.hypot(*(_to_world(w, a, local[0:2]) - ga))
                         + ratio * np.hypot(*(_to_world(w, b, local[2:4]) - gb)))
        return dict(reference_angle=0.0, ratio=1.0, length=today)

    def finish(self, world: "Any", a: "int", b: "int", local: "Any", param: "Any") -> None:
        """Store the two ground points in the row's ``param`` (given ``world``, the body rows ``a``, ``b`` and the
        ``local`` frame)."""
        param[pulley.GROUND_AX:pulley.GROUND_AX + 2] = _point(self.ground_a, "ground_a")
        param[pulley.GROUND_BX:pulley.GROUND_BX + 2] = _point(self.ground_b, "ground_b")


class Filter(_Definition):
    """Filter(body_a, body_b): only stops the two bodies colliding with each other. Box2D's filter joint."""
    kind = FILTER

    def __init__(self, body_a: "Any", body_b: "Any", **kw):
        super().__init__(body_a, body_b, **kw)


_KIND_CLASS = {cls.kind: cls for cls in (Revolute, Weld, Distance, Prismatic, Wheel, Motor, Mouse, RotaryLimit,
                                          RotarySpring, AngularMotor, Ratchet, Gear, Pulley, Filter)}


#: columns that hold a point: one (x, y) for every joint, or an (n, 2) array
POINT_COLUMNS = frozenset(("anchor", "anchor_a", "anchor_b", "local_anchor_a", "local_anchor_b", "axis",
                           "local_axis_a", "target", "local_anchor", "linear_offset", "ground_a", "ground_b"))
#: columns that hold a body
BODY_COLUMNS = frozenset(("body_a", "body_b", "body"))


def _per_joint(name, value):
    """Whether column ``name`` gives one value per joint (else one for all)."""
    if name == "data":
        return value is not None
    if name in BODY_COLUMNS:
        return isinstance(value, (list, tuple, np.ndarray))
    if isinstance(value, np.ndarray):
        return value.ndim >= (2 if name in POINT_COLUMNS else 1)
    if isinstance(value, (list, tuple)):
        if name in POINT_COLUMNS:
            return len(value) > 0 and isinstance(value[0], (list, tuple, np.ndarray))
        return True
    return False


class Many:
    """``count`` joints of the kind ``definition`` (a definition class such as ``joints.Revolute``) from
    ``columns``: its constructor's arguments, each one value for every joint or one per joint (``joints.many``).
    Made by the kinds' ``many``; ``World.add_joints`` takes it and returns a handle per joint, in order. Only the
    columns' lengths are checked here; the values when it is added, as a definition's are."""

    def __init__(self, definition: "Any", columns: dict):
        if "data" in columns and columns["data"] is not None and not isinstance(columns["data"], (list, tuple)):
            raise CaromError(f"data must be a list of one object per joint (or None), got {columns['data']!r}")
        lengths = {name: len(value) for name, value in columns.items() if _per_joint(name, value)}
        if not lengths:
            raise CaromError(f"{definition.__name__}.many needs one column with a value per joint (bodies, anchors "
                             "or settings), got one value for all in each")
        if len(set(lengths.values())) > 1:
            raise CaromError(f"{definition.__name__}.many: the columns differ in length: "
                             + ", ".join(f"{name} {n}" for name, n in lengths.items()))
        self.definition = definition
        self.columns = dict(columns)
        self.count = next(iter(lengths.values()))
        self.per_joint = frozenset(lengths)

    def __len__(self) -> int:
        return self.count

    def __repr__(self) -> str:
        return f"<{self.definition.__name__}.many: {self.count} joints>"


class Joint:
    """A handle to a joint of a world (like a body handle: a removed joint's handle raises StaleHandleError).

    Read: ``kind``, ``body_a``, ``body_b``, ``anchor_a`` and ``anchor_b`` (world points now), ``reaction_force``
    (the force on body B at its anchor over the last step, a vector) and ``reaction_torque``, ``angle`` (the
    relative angle θB − θA less the reference angle), ``speed`` (ωB − ωA), ``length`` (the distance between the
    anchors), ``translation`` (along the axis: prismatic and wheel joints). Read and written: ``enabled``,
    ``collide_connected``, ``data``, every setting of the joint's kind (``pivot.motor_speed = 3.0``), a mouse
    joint's ``target`` and a motor joint's ``linear_offset``.

    Made by :meth:`carom.World.add_joint` (and :attr:`carom.World.joints`), not by hand: ``world``, the joint's row
    ``index`` and the row's ``generation``.
    """

    __slots__ = ("world", "index", "generation")

    def __init__(self, world: "Any", index: "int", generation: "int"):
        object.__setattr__(self, "world", world)
        object.__setattr__(self, "index", index)
        object.__setattr__(self, "generation", generation)

    def _j(self):
        w = self.world
        i = self.index
        if not (i < w.tables.n_joints and w.tables.j_alive[i] and w.tables.j_gen[i] == self.generation):
            raise StaleHandleError(f"joint {i} (generation {self.generation}) has been removed")
        return i

    def __eq__(self, other):
        return (isinstance(other, Joint) and other.world is self.world and other.index == self.index
                and other.generation == self.generation)

    def __hash__(self):
        return hash((id(self.world), self.index, self.generation))

    def __repr__(self):
        w = self.world
        alive = self.index < w.tables.n_joints and w.tables.j_alive[self.index] and w.tables.j_gen[self.index] == self.generation
        kind = KIND_NAMES[int(w.tables.j_kind[self.index])] if alive else "removed"
        return f"Joint({kind}, index={self.index}, generation={self.generation})"

    @property
    def alive(self) -> bool:
        """False once the joint was removed (by ``World.remove``, by breaking, or with a body)."""
        w = self.world
        return bool(self.index < w.tables.n_joints and w.tables.j_alive[self.index] and w.tables.j_gen[self.index] == self.generation)

    @property
    def kind(self) -> str:
        """The joint's kind as a word: "revolute", "distance", "wheel", ..."""
        return KIND_NAMES[int(self.world.tables.j_kind[self._j()])]

    def _body(self, e):
        w = self.world
        return w.body_handle(int(w.tables.j_body[self._j(), e]))

    @property
    def body_a(self) -> "Any":
        """The first body (the world's static body when the definition said None)."""
        return self._body(0)

    @property
    def body_b(self) -> "Any":
        """The second body."""
        return self._body(1)

    @property
    def anchor_a(self) -> np.ndarray:
        """Body A's anchor as a world point, now."""
        i = self._j()
        return _to_world(self.world, int(self.world.tables.j_body[i, 0]), self.world.tables.j_local[i, 0:2])

    @property
    def anchor_b(self) -> np.ndarray:
        """Body B's anchor as a world point, now."""
        i = self._j()
        return _to_world(self.world, int(self.world.tables.j_body[i, 1]), self.world.tables.j_local[i, 2:4])

    @property
    def axis(self) -> np.ndarray:
        """The joint's axis in world coordinates (prismatic and wheel joints)."""
        i = self._j()
        _, c, s = self.world.tables.origin_frame(int(self.world.tables.j_body[i, 0]))
        u = self.world.tables.j_local[i, 4:6]
        return np.array((c * u[0] - s * u[1], s * u[0] + c * u[1]))

    @property
    def reaction_force(self) -> np.ndarray:
        """The force (N, a vector) the joint put on body B at its anchor in the last step: its impulses over the step
        divided by dt."""
        return self.world.tables.j_reaction[self._j(), 0:2].copy()

    @property
    def reaction_torque(self) -> float:
        """The torque (N·m) the joint put on body B in the last step."""
        return float(self.world.tables.j_reaction[self._j(), 2])

    @property
    def angle(self) -> float:
        """The relative angle θB − θA less the reference angle (radians)."""
        i = self._j()
        w = self.world
        a, b = w.tables.j_body[i]
        return float(w.tables.angle[b] - w.tables.angle[a] - w.tables.j_param[i, 0])

    @property
    def speed(self) -> float:
        """The relative angular speed ωB − ωA (rad/s)."""
        i = self._j()
        w = self.world
        a, b = w.tables.j_body[i]
        return float(w.tables.angvel[b] - w.tables.angvel[a])

    @property
    def length(self) -> float:
        """The distance between the two anchors now (m)."""
        d = self.anchor_b - self.anchor_a
        return float(math.hypot(d[0], d[1]))

    @property
    def translation(self) -> float:
        """How far anchor B is from anchor A along the joint's axis (m; prismatic and wheel joints)."""
        return float(np.dot(self.anchor_b - self.anchor_a, self.axis))

    @property
    def enabled(self) -> bool:
        """Whether the joint is solved; a disabled joint still keeps its bodies from colliding unless
        ``collide_connected``."""
        return bool(self.world.tables.j_enabled[self._j()])

    @enabled.setter
    def enabled(self, value: "Any"):
        i = self._j()
        on = _validate.flag(value, "enabled")
        self.world.tables.check_unlocked()
        self.world.tables.j_enabled[i] = on
        self.world.tables.wake_joint(i)

    @property
    def collide_connected(self) -> bool:
        """Whether the two bodies' shapes collide with each other."""
        return bool(self.world.tables.j_collide[self._j()])

    @collide_connected.setter
    def collide_connected(self, value: "Any"):
        i = self._j()
        on = _validate.flag(value, "collide_connected")
        self.world.tables.check_unlocked()
        self.world.tables.j_collide[i] = on
        self.world.tables.joined = None
        self.world.tables.wake_joint(i)

    @property
    def data(self) -> object:
        """Any Python object of the user's (None by default; kept by pickle and copy, not by snapshots)."""
        i = self._j()
        return self.world.tables.joint_data.get(i)

    @data.setter
    def data(self, value: "Any"):
        i = self._j()
        if value is None:
            self.world.tables.joint_data.pop(i, None)
        else:
            self.world.tables.joint_data[i] = value

    @property
    def target(self) -> np.ndarray:
        """A mouse joint's target (world point)."""
        i = self._kind_only(MOUSE, "target")
        return self.world.tables.j_local[i, 0:2].copy()

    @target.setter
    def target(self, value: "Any"):
        i = self._kind_only(MOUSE, "target")
        p = _point(value, "target")
        self.world.tables.check_unlocked()
        self.world.tables.j_local[i, 0:2] = p
        self.world.tables.wake_joint(i)

    @property
    def linear_offset(self) -> np.ndarray:
        """A motor joint's linear offset (B's origin's target, in A's frame)."""
        i = self._kind_only(MOTOR, "linear_offset")
        return self.world.tables.j_local[i, 0:2].copy()

    @linear_offset.setter
    def linear_offset(self, value: "Any"):
        i = self._kind_only(MOTOR, "linear_offset")
        p = _point(value, "linear_offset")
        self.world.tables.check_unlocked()
        self.world.tables.j_local[i, 0:2] = p
        self.world.tables.wake_joint(i)

    def _kind_only(self, kind, name):
        i = self._j()
        if self.world.tables.j_kind[i] != kind:
            raise AttributeError(f"a {KIND_NAMES[int(self.world.tables.j_kind[i])]} joint has no {name}")
        return i

    def __getattr__(self, name):
        # the kind's settings (SETTINGS), read from the table
        if name.startswith("_"):
            raise AttributeError(name)
        i = self._j()
        known = SETTINGS[int(self.world.tables.j_kind[i])]
        if name not in known:
            raise AttributeError(f"a {KIND_NAMES[int(self.world.tables.j_kind[i])]} joint has no {name!r}")
        return float(self.world.tables.j_param[i, known[name][0]])

    def __setattr__(self, name, value):
        if name in Joint.__dict__ or name in Joint.__slots__:
            object.__setattr__(self, name, value)
            return
        i = self._j()
        w = self.world
        kind = int(w.tables.j_kind[i])
        known = SETTINGS[kind]
        if name not in known:
            raise AttributeError(f"a {KIND_NAMES[kind]} joint has no setting {name!r} (it has {sorted(known)})")
        col, check = known[name]
        v = _setting(value, name, check)
        row = w.tables.j_param[i].copy()
        row[col] = v
        _consistent(kind, row)
        w.tables.check_unlocked()
        w.tables.j_param[i] = row
        w.tables.wake_joint(i)
