"""Many joints of one kind from columns: ``joints.Revolute.many(body_a=..., body_b=..., anchor=..., lower=...)``
(a ``joints.Many``), added by ``World.add_joints`` (:func:`add`).

A column is one value for every joint or one per joint: the bodies a sequence (``Body`` handles, ``None`` for the
world's static body, body indices) or a 1-d integer array; a point (``anchor``, ``local_anchor_a``, ...) an (n, 2)
array; a setting, a threshold or a flag a 1-d array; ``data`` a list of one object per joint. Each joint is the
one its definition with the column's entries would make (``Revolute(body_a[k], body_b[k], anchor=anchor[k],
...)``), bit for bit, and an error names the column and the entry (``lower[3] = ... is above upper[3] = ...``).

Why: a ragdoll is ten revolute joints, and Box2D's rain adds 250 every eighth step. Made one definition at a
time, a joint is a Python object and a dozen checks (about 12 µs, half of them building the definition); from
columns the checks are a few array operations for all of them. Kinds whose rows are their anchors and settings
(revolute, weld, rotary limit and spring, angular motor, ratchet, gear, filter) are written a column at a time;
the others, and anchors other than one world ``anchor`` or both local anchors, are made joint by joint from their
definitions, with the same outcome.
"""
import math

import numpy as np

from ... import _validate
from ...constants import FLOAT32_LIMIT, WORLD_LIMIT
from ...errors import CaromError, SimulationError, StaleHandleError
from .. import _step
from ..body import Body
from ..mass import KIND_NAMES
from . import (BODY_COLUMNS, SETTINGS, _BOUNDS, _COMMON, _Definition, _LIMIT, _NONZERO, _ORDERED, bookkeeping,
               _per_joint, _relative_angle, _setting)
from ._common import LOCAL_WIDTH, PARAM_WIDTH


def definitions(world, many):
    """The definitions of ``many``'s joints one by one (a body index made the handle of that body of ``world``)."""
    out = []
    for k in range(many.count):
        kw = {}
        for name, value in many.columns.items():
            if name in many.per_joint:
                value = value[k]
                if name in BODY_COLUMNS and not (value is None or isinstance(value, Body)):
                    value = _body_handle(world, value, f"{name}[{k}]")
                elif isinstance(value, np.generic):
                    value = value.item()
            kw[name] = value
        out.append(many.definition(**kw))
    return out


def _body_handle(world, value, name):
    """The handle of the live body of index ``value`` in ``world``."""
    b = _validate.integer(value, name)
    t = world.tables
    if not 0 <= b < t.n_bodies or not t.alive[b]:
        raise StaleHandleError(f"{name} (body {b}) is not a live body of this world (removed or never created)")
    return Body(world, b, int(t.gen[b]))


def _columnar(definition, many):
    """Whether ``many``'s joints can be written a column at a time: a kind whose row is its anchors and settings
    (no axis, no anchors or finish of its own, defaults that are numbers or today's relative angle), its anchors
    one world ``anchor``, both local anchors or none given (B's origin), and no column but the bodies, those
    anchors, the common options and the kind's settings."""
    if (definition.takes_axis or definition.two_anchors or definition.anchors is not _Definition.anchors
            or definition.finish is not _Definition.finish or not isinstance(definition.defaults, dict)):
        return False
    known = SETTINGS[definition.kind]
    cols = many.columns
    for name in cols:
        if name not in known and name not in _COMMON and name not in ("body_a", "body_b", "anchor", "local_anchor_a",
                                                                      "local_anchor_b"):
            return False
    if "body_a" not in cols or "body_b" not in cols:
        return False
    local = ("local_anchor_a" in cols, "local_anchor_b" in cols)
    if local[0] != local[1] or (local[0] and "anchor" in cols):
        return False
    for name in known:
        if name not in cols:
            d = definition.defaults.get(name)
            if not (type(d) is float or d is _relative_angle):
                return False
    return True


def add(world, many):
    """``World.add_joints`` of a :class:`Many`: the joints' rows, as adding their definitions one at a time gives
    them (the same slots, rows and woken bodies), and their handles."""
    t = world.tables
    t.check_unlocked()
    definition = many.definition
    if not _columnar(definition, many):
        try:
            return bookkeeping.add_many(world, definitions(world, many))
        except CaromError as exc:
            text = str(exc)
            if text.startswith("definitions["):
                text = "joint " + text[len("definitions["):].replace("]", "", 1)
            raise type(exc)(f"{definition.__name__}.many: {text}") from None
    n = many.count
    cols = many.columns
    a = _body_rows(world, cols["body_a"], "body_a", n)
    b = _body_rows(world, cols["body_b"], "body_b", n)
    same = a == b
    if same.any():
        k = int(np.argmax(same))
        raise SimulationError(f"a joint needs two different bodies, got body {int(a[k])} twice (joint {k})")
    kind = t.kind
    still = (kind[a] != _step.DYNAMIC) & (kind[b] != _step.DYNAMIC)
    if still.any():
        k = int(np.argmax(still))
        raise SimulationError(f"a joint needs a dynamic body; bodies {int(a[k])} and {int(b[k])} of joint {k} are "
                              f"{KIND_NAMES[int(kind[a[k]])]} and {KIND_NAMES[int(kind[b[k]])]}")
    collide = _flags(cols.get("collide_connected", False), "collide_connected", n)
    enabled = _flags(cols.get("enabled", True), "enabled", n)
    thresholds = np.empty((n, 2))
    thresholds[:, 0] = _thresholds(cols.get("force_threshold", math.inf), "force_threshold", n)
    thresholds[:, 1] = _thresholds(cols.get("torque_threshold", math.inf), "torque_threshold", n)
    on = cols.get("on_threshold", "break")
    if not (type(on) is str and on in ("break", "report")):
        raise SimulationError(f"on_threshold must be 'break' or 'report' (one for all the joints), got {on!r}")
    local = np.zeros((n, LOCAL_WIDTH))
    local[:, 0:4] = _anchors(t, cols, a, b, n)
    param = _settings(t, definition, cols, a, b, n)
    data = cols.get("data")
    columns = (np.full(n, definition.kind), enabled, np.stack((a, b), axis=1), local, param, collide, thresholds,
               np.full(n, on == "report"), [None] * n if data is None else list(data))
    return bookkeeping.store_many(world, columns)


def _body_rows(world, value, name, n):
    """The body rows of column ``name``: one body for every joint or one per joint (``Body`` handles of this
    world, ``None`` for its static body, or indices), each a live body."""
    t = world.tables
    static = world.static_body.index
    if not _per_joint(name, value):
        return np.full(n, _body_row(world, value, name, static), np.int64)
    if isinstance(value, np.ndarray):
        if value.ndim != 1 or (value.size and value.dtype.kind not in "iu"):
            raise SimulationError(f"{name} must be Body handles or a 1-d array of body indices, got {value!r}")
        rows = value.astype(np.int64)
        bad = (rows < 0) | (rows >= t.n_bodies)
        bad[~bad] = ~t.alive[rows[~bad]]
        if bad.any():
            k = int(np.argmax(bad))
            raise StaleHandleError(f"{name}[{k}] (body {int(rows[k])}) is not a live body of this world (removed "
                                   "or never created)")
        return rows
    return np.array([_body_row(world, v, f"{name}[{k}]", static) for k, v in enumerate(value)], np.int64)


def _body_row(world, value, name, static):
    """The row of one body entry: a ``Body`` of this world, ``None`` (the static body) or a live body's index."""
    if value is None:
        return static
    if isinstance(value, Body):
        if value.world is not world:
            raise CaromError(f"{name} {value!r} is a body of another world")
        return value._i()
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise CaromError(f"{name} must be a Body of this world, None (the static body) or a body index, got "
                         f"{value!r}")
    return _body_handle(world, value, name).index


def _flags(value, name, n):
    """A flag column: one bool for all, or a bool per joint."""
    if not _per_joint(name, value):
        return np.full(n, _validate.flag(value, name), np.bool_)
    arr = np.asarray(value)
    if arr.shape != (n,) or arr.dtype != np.bool_:
        for k, v in enumerate(value):
            _validate.flag(v, f"{name}[{k}]")
        raise SimulationError(f"{name} must be one bool or a 1-d array of {n} bools, got {value!r}")
    return arr.copy()


def _thresholds(value, name, n):
    """A threshold column (``bookkeeping.threshold``: inf, or a number in [0, FLOAT32_LIMIT])."""
    if not _per_joint(name, value):
        return bookkeeping.threshold(value, name)
    arr = _column(value, name, n)
    bad = ~(((arr >= 0.0) & (arr <= FLOAT32_LIMIT)) | (arr == math.inf))
    if bad.any():
        k = int(np.argmax(bad))
        bookkeeping.threshold(float(arr[k]), f"{name}[{k}]")
    return arr


def _column(value, name, n):
    """A per-joint column of numbers as a float64 array of ``n``."""
    arr = _validate._as_array(value, name, SimulationError)
    if arr.shape != (n,):
        raise SimulationError(f"{name} must be one number or a 1-d array of {n}, got shape {arr.shape}")
    return arr


def _points(value, name, n):
    """A point column: one (x, y) for all, or an (n, 2) array; finite, within the world limit."""
    if not _per_joint(name, value):
        return np.broadcast_to(_validate.vector(value, name, WORLD_LIMIT), (n, 2))
    arr = _validate.points(value, name, WORLD_LIMIT)
    if arr.shape[0] != n:
        raise SimulationError(f"{name} must be one point or an ({n}, 2) array, got shape {arr.shape}")
    return arr


def _anchors(t, cols, a, b, n):
    """The (n, 4) anchors in the bodies' frames: from one world ``anchor`` (``joints._to_local``, the same float
    arithmetic), both local anchors, or none (B's origin: A's anchor is where B's origin is now)."""
    if "local_anchor_a" in cols:
        return np.concatenate((_points(cols["local_anchor_a"], "local_anchor_a", n),
                               _points(cols["local_anchor_b"], "local_anchor_b", n)), axis=1)
    # each body's origin and rotation (``WorldTables.origin_transform``: math.cos and math.sin of the angle, then
    # the same products and differences as arrays)
    rows, back = np.unique(np.concatenate((a, b)), return_inverse=True)
    angle = t.angle[rows].tolist()
    c = np.array([math.cos(x) for x in angle])
    s = np.array([math.sin(x) for x in angle])
    lc = t.local_center[rows]
    ox = t.com[rows, 0] - (c * lc[:, 0] - s * lc[:, 1])
    oy = t.com[rows, 1] - (s * lc[:, 0] + c * lc[:, 1])
    if "anchor" in cols:
        p = _points(cols["anchor"], "anchor", n)
        px, py = p[:, 0], p[:, 1]
    else:
        # (B's origin as ``joints._to_world`` gives it: origin + c·0 − s·0, which turns a −0.0 into 0.0)
        ib = back[n:]
        px, py = (ox[ib] + c[ib] * 0.0) - s[ib] * 0.0, (oy[ib] + s[ib] * 0.0) + c[ib] * 0.0
    out = np.empty((n, 4))
    for e, idx in enumerate((back[:n], back[n:])):
        dx, dy = px - ox[idx], py - oy[idx]
        ce, se = c[idx], s[idx]
        out[:, 2 * e] = ce * dx + se * dy
        out[:, 2 * e + 1] = -se * dx + ce * dy
    if "anchor" not in cols:
        out[:, 2:4] = 0.0      # (B's own origin, as ``_Definition.anchors`` gives it: exactly zero)
    return out


def _settings(t, definition, cols, a, b, n):
    """The (n, PARAM_WIDTH) settings: each column checked as ``joints._setting`` checks one value, the defaults
    filled in (today's relative angle where that is the default), the kind's ordered pairs checked."""
    param = np.zeros((n, PARAM_WIDTH))
    for name, (col, check) in SETTINGS[definition.kind].items():
        value = cols[name] if name in cols else definition.defaults[name]
        if callable(value):      # (today's relative angle, ``joints._relative_angle``), checked as given ones
            value = t.angle[b] - t.angle[a]
        elif not _per_joint(name, value):
            param[:, col] = _setting(value, name, check)
            continue
        arr = _column(value, name, n)
        low, high, low_open, magnitude = _BOUNDS[check]
        ok = np.isfinite(arr) | ((check == _LIMIT) & np.isinf(arr))
        if low is not None:
            ok &= (arr > low) | ((arr == low) & (not low_open))
        if high is not None:
            ok &= arr <= high
        if magnitude is not None:
            ok &= (np.abs(arr) <= magnitude) | ((check == _LIMIT) & np.isinf(arr))
        if check == _NONZERO:
            ok &= arr != 0.0
        if not ok.all():
            k = int(np.argmax(~ok))
            _setting(float(arr[k]), f"{name}[{k}]", check)
            raise SimulationError(f"{name}[{k}] = {float(arr[k])!r} is out of range")   # (not reached)
        param[:, col] = arr
    if definition.kind in _ORDERED:
        (ln, lc), (un, uc) = _ORDERED[definition.kind]
        bad = param[:, lc] > param[:, uc]
        if bad.any():
            k = int(np.argmax(bad))
            raise SimulationError(f"{ln}[{k}] = {float(param[k, lc])!r} is above {un}[{k}] = {float(param[k, uc])!r}")
    return param
