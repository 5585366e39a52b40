"""The joints' bookkeeping: adding and removing rows of the world's joint table (``WorldTables.j_*``), the table
the step sees (:class:`JointTable`), the body pairs joints keep apart, and the thresholds checked after a step.

The joint kinds' compiled rows are in the modules beside this one; the public definitions and the ``Joint``
handle in the package's ``__init__``.
"""
import numpy as np

from ..._validate import flag as _flag, number as _number
from ...constants import FLOAT32_LIMIT
from ...errors import CaromError, SimulationError
from .. import _step
from ..body import Body
from ..mass import KIND_NAMES
from ..tables import grow
from . import (Joint, JointEvent, _Definition, MOUSE, REVOLUTE, Revolute, SETTINGS, _FLOAT_BOUNDS, _LIMIT, _point,
               revolute)
from ._common import JointTable, LOCAL_WIDTH, PARAM_WIDTH


def add(world, definition):
    """``World.add_joint``: every value checked, then the row stored; the joint's handle."""
    t = world.tables
    t.check_unlocked()
    row = _checked(world, definition)
    i = _slots(t, 1)[0]
    _store(t, i, *row[:-1])
    if row[-1] is not None:
        t.joint_data[i] = row[-1]
    t.wake_joint(i)
    return Joint(world, i, int(t.j_gen[i]))


def add_many(world, definitions):
    """``World.add_joints``: every definition checked as :func:`add` checks it (an error names the definition by
    its position), then the rows stored at once, in the slots and order adding them one at a time gives; the
    joints' handles. The world is the one :func:`add` after :func:`add` would give, but the rows are written as
    arrays and the bodies woken in one pass (``WorldTables.wake_rows``): a joint added alone costs some 20 µs of
    Python beyond its checks, the most of adding a ragdoll. A batch of plain revolute joints (a ragdoll's, a
    chain's) is checked a column at a time (:func:`_plain_revolute_rows`), with the same rows."""
    t = world.tables
    t.check_unlocked()
    if isinstance(definitions, _Definition) or not hasattr(definitions, "__iter__"):
        raise CaromError(f"add_joints takes a sequence of joint definitions, got {definitions!r}")
    definitions = list(definitions)
    columns = _plain_revolute_rows(world, definitions)
    if columns is None:
        rows = []
        for k, d in enumerate(definitions):
            try:
                rows.append(_checked(world, d))
            except CaromError as exc:
                raise type(exc)(f"definitions[{k}]: {exc}") from None
        if not rows:
            return []
        kind, enabled, body, local, param, collide, thresholds, report, data = zip(*rows)
        columns = (np.array(kind), np.array(enabled), np.array(body, np.int64), np.array(local), np.array(param),
                   np.array(collide), np.array(thresholds), np.array(report), data)
    return store_many(world, columns)


def store_many(world, columns):
    """Store joint rows from ``columns`` (kind, enabled, body pairs, local, param, collide, thresholds, report, as
    arrays of one row per joint, and the joints' data as a list), all checked, in the slots adding them one at a
    time takes; wake their bodies and return their handles (:func:`add_many`, ``many.add``)."""
    t = world.tables
    slots = np.array(_slots(t, len(columns[0])), np.int64)
    _store(t, slots, *columns[:-1])
    data = columns[-1]
    for i, value in zip(slots.tolist(), data):
        if value is not None:
            t.joint_data[i] = value
    bodies = t.j_body[slots].reshape(-1)
    t.wake_rows(np.unique(bodies[t.alive[bodies]]))
    return [Joint(world, i, g) for i, g in zip(slots.tolist(), t.j_gen[slots].tolist())]


#: the fewest definitions ``add_joints`` takes through :func:`_plain_revolute_rows`
PLAIN_REVOLUTE_BATCH = 8


def _plain_revolute_rows(world, definitions):
    """``add_many``'s rows, as columns, when every definition is a plain revolute joint (``Revolute`` with one
    world ``anchor``, bodies of this world or None, the options as :func:`_checked` checks them, each setting a
    Python float that its check takes as it is, lower ≤ upper), for ``PLAIN_REVOLUTE_BATCH`` or more; else None,
    and each definition is checked alone (:func:`_checked`, which also words any error). The values are bitwise those :func:`_checked`
    gives: the same Python float arithmetic for the anchors in each body's frame (``joints._to_local``), the
    same NumPy subtraction for the default reference angle, the settings stored as given.

    Why: a ragdoll's joints added one definition at a time through the general checks cost about 12 µs each
    (Box2D's rain adds 250 every eighth step); here the per-definition work is a few attribute reads, and the
    settings are checked a column at a time."""
    n = len(definitions)
    if n < PLAIN_REVOLUTE_BATCH:
        return None
    t = world.tables
    static = world.static_body.index
    # (Python lists, made arrays at the end: a NumPy item written or read costs about what a definition's checks do)
    pairs, frames, flags, thresholds, data = [], [], [], [], []
    origins = {}
    try:
        for d in definitions:
            if (type(d) is not Revolute or d.anchor_a is not None or d.anchor_b is not None
                    or d.local_anchor_a is not None or d.local_anchor_b is not None):
                return None
            a, b = _plain_row(d.body_a, world, static), _plain_row(d.body_b, world, static)
            if a < 0 or b < 0:
                return None
            # (the checks ``_checked`` makes, each refusing with a CaromError: the general path then words it)
            p = _point(d.anchor, "anchor")
            px, py = float(p[0]), float(p[1])
            # (joints._to_local, in the same Python float arithmetic)
            oa = origins.get(a)
            if oa is None:
                oa = origins[a] = t.origin_transform(a)
            ob = origins.get(b)
            if ob is None:
                ob = origins[b] = t.origin_transform(b)
            xa, ya, ca, sa = oa
            xb, yb, cb, sb = ob
            dxa, dya, dxb, dyb = px - xa, py - ya, px - xb, py - yb
            collide, enabled = _flag(d.collide_connected, "collide_connected"), _flag(d.enabled, "enabled")
            force, torque = threshold(d.force_threshold, "force_threshold"), threshold(d.torque_threshold,
                                                                                       "torque_threshold")
            on = d.on_threshold
            if type(on) is not str or (on != "break" and on != "report"):
                return None
            pairs.append((a, b))
            frames.append((ca * dxa + sa * dya, -sa * dxa + ca * dya, cb * dxb + sb * dyb, -sb * dxb + cb * dyb))
            flags.append((enabled, collide, on == "report"))
            thresholds.append((force, torque))
            data.append(d.data)
    except CaromError:
        return None          # (a bad value or a removed body: the general path words the error)
    body = np.array(pairs, np.int64)
    kind = t.kind
    if (body[:, 0] == body[:, 1]).any() or ((kind[body[:, 0]] != _step.DYNAMIC)
                                             & (kind[body[:, 1]] != _step.DYNAMIC)).any():
        return None
    anchors = np.zeros((n, LOCAL_WIDTH))
    anchors[:, :4] = frames
    flags = np.array(flags, np.bool_)
    known = SETTINGS[REVOLUTE]
    for d in definitions:
        for name in d.settings:
            if name not in known:
                return None
    param = np.zeros((n, PARAM_WIDTH))
    for name, (col, check) in known.items():
        if name == "reference_angle":
            # (``joints._relative_angle``: today's relative angle, where none is given)
            today = (t.angle[body[:, 1]] - t.angle[body[:, 0]]).tolist()
            values = [d.settings[name] if name in d.settings else today[k] for k, d in enumerate(definitions)]
        else:
            default = Revolute.defaults[name]
            values = [d.settings.get(name, default) for d in definitions]
        if set(map(type, values)) != {float}:
            return None
        column = np.array(values)
        # (joints._setting's test for a Python float, or an infinite limit)
        low, high, low_open = _FLOAT_BOUNDS[check]
        ok = (column <= high) & ((column > low) | ((column == low) & (not low_open)))
        if check == _LIMIT:
            ok |= np.isinf(column)
        if not ok.all():
            return None
        param[:, col] = column
    if (param[:, revolute.LOWER] > param[:, revolute.UPPER]).any():
        return None
    return (np.full(n, REVOLUTE), flags[:, 0], body, anchors, param, flags[:, 1], np.array(thresholds), flags[:, 2],
            data)


def _plain_row(handle, world, static):
    """A joint's body as :func:`_plain_revolute_rows` takes it: the row of a live body of ``world`` (a ``Body``
    handle, not a subclass's), ``static`` for None, −1 for anything else."""
    if handle is None:
        return static
    if type(handle) is Body and handle.world is world:
        return handle._i()
    return -1


def _checked(world, d):
    """The row of the joint table that definition ``d`` makes in ``world``, every value checked (nothing
    stored): kind, enabled, the body pair, the frames (``local``, ``param``), collide, the two thresholds,
    report, and the joint's data."""
    t = world.tables
    if not isinstance(d, _Definition):
        raise CaromError(f"add_joint takes a joint definition (carom.joints.Revolute(...), ...), got {d!r}")
    rows = []
    for name, body in (("body_a", d.body_a), ("body_b", d.body_b)):
        if body is None:
            rows.append(world.static_body.index)
            continue
        if not isinstance(body, Body):
            raise CaromError(f"{name} must be a Body of this world or None (the static body), got {body!r}")
        if body.world is not world:
            raise CaromError(f"{name} {body!r} is a body of another world")
        rows.append(body._i())
    a, b = rows
    if a == b:
        raise SimulationError(f"a joint needs two different bodies, got body {a} twice")
    if d.kind == MOUSE and t.kind[b] != _step.DYNAMIC:
        raise SimulationError(f"a mouse joint's body must be dynamic; body {b} is "
                              f"{KIND_NAMES[int(t.kind[b])]}")
    if t.kind[a] != _step.DYNAMIC and t.kind[b] != _step.DYNAMIC:
        raise SimulationError(f"a joint needs a dynamic body; bodies {a} and {b} are "
                              f"{KIND_NAMES[int(t.kind[a])]} and {KIND_NAMES[int(t.kind[b])]}")
    collide = _flag(d.collide_connected, "collide_connected")
    enabled = _flag(d.enabled, "enabled")
    thresholds = (threshold(d.force_threshold, "force_threshold"), threshold(d.torque_threshold, "torque_threshold"))
    if d.on_threshold not in ("break", "report"):
        raise SimulationError(f"on_threshold must be 'break' or 'report', got {d.on_threshold!r}")
    local, param = d.frames(world, a, b)
    # (a mouse joint never filters: its other body is the world's static body, which holds the ground)
    return (d.kind, enabled, (a, b), local, param, collide or d.kind == MOUSE, thresholds,
            d.on_threshold == "report", d.data)


def _slots(t, count):
    """The rows the next ``count`` joints take, as adding them one at a time takes them: the free list's last
    first, then new rows at the end (the table doubled as it fills)."""
    slots = []
    while len(slots) < count and t.free_joints:
        slots.append(t.free_joints.pop())
    while len(slots) < count:
        i = t.n_joints
        if i == t.j_kind.shape[0]:
            for attr in t.joint_arrays:
                setattr(t, attr, grow(getattr(t, attr), 2 * i))
            t.j_threshold[i:] = np.inf
        t.n_joints += 1
        slots.append(i)
    return slots


def _store(t, i, kind, enabled, body, local, param, collide, thresholds, report):
    """Joint row ``i`` (one slot, or an array of them with every value alike): the one definition of a new
    joint's row, for :func:`add` and :func:`add_many`. The caller keeps the joints' data and wakes the bodies."""
    t.j_kind[i] = kind
    t.j_alive[i] = True
    t.j_enabled[i] = enabled
    t.j_body[i] = body
    t.j_local[i] = local
    t.j_param[i] = param
    t.j_impulse[i] = 0.0
    t.j_reaction[i] = 0.0
    t.j_collide[i] = collide
    t.j_threshold[i] = thresholds
    t.j_report[i] = report
    t.thresholds_set = None
    t.joined = None


def threshold(value, name):
    """A force or torque threshold as stored: inf (none), or a checked number ≥ 0."""
    if type(value) is float and value == np.inf:
        return value
    return _number(value, name, 0.0, FLOAT32_LIMIT)


def remove(t, i):
    """Remove joint row i: its bodies wake, its handle goes stale, its row is free for the next joint."""
    t.wake_joint(i)
    t.j_alive[i] = False
    t.j_enabled[i] = False
    t.j_gen[i] += 1
    t.j_impulse[i] = 0.0
    t.j_reaction[i] = 0.0
    t.joint_data.pop(i, None)
    t.free_joints.append(i)
    t.joined = None


def remove_rows(t, rows):
    """Remove the joint rows ``rows`` (distinct live rows), in that order, their bodies already woken: what
    :func:`remove` one after the other does to the table and the free list."""
    t.j_alive[rows] = False
    t.j_enabled[rows] = False
    t.j_gen[rows] += 1
    t.j_impulse[rows] = 0.0
    t.j_reaction[rows] = 0.0
    for i in rows.tolist():
        t.joint_data.pop(i, None)
    t.free_joints.extend(rows.tolist())
    t.joined = None


def table(t):
    """The joint table as the step sees it (``joints.JointTable``: views of the live rows)."""
    n = t.n_joints
    return JointTable(t.j_kind[:n], t.j_alive[:n] & t.j_enabled[:n], t.j_body[:n],
                              t.j_local[:n], t.j_param[:n], t.j_impulse[:n], t.j_reaction[:n])


def joined_keys(world):
    """The body pairs the joints keep from colliding, as sorted keys min << 32 | max: the pairs of live joints
    without collide_connected, except joints to the world's static body (it holds the ground)."""
    t = world.tables
    if t.joined is None:
        n = t.n_joints
        sb = world.static_body.index
        pick = t.j_alive[:n] & ~t.j_collide[:n] & (t.j_body[:n, 0] != sb) & (t.j_body[:n, 1] != sb)
        ab = t.j_body[:n][pick]
        keys = np.sort((np.minimum(ab[:, 0], ab[:, 1]) << _step.KEY_SHIFT) | np.maximum(ab[:, 0], ab[:, 1]))
        # (sorted, then each key that differs from the one before: np.unique hashes integer arrays, 0.9 ms for
        # rain's 10,000 joints against 0.05 ms for the sort, after every wave of ragdolls)
        fresh = np.ones(keys.shape[0], np.bool_)
        np.not_equal(keys[1:], keys[:-1], out=fresh[1:])
        t.joined = keys[fresh].astype(np.int64)
    return t.joined


def check_thresholds(world):
    """After a step: the joints whose reaction crossed a threshold, reported and, unless they only report,
    removed: the ``JointEvent`` list (``World.joint_events``)."""
    t = world.tables
    n = t.n_joints
    if n == 0:
        return []
    th = t.j_threshold[:n]
    # (whether any row has a finite threshold, found once after thresholds are written: most worlds have none,
    # and the masks below cost 7 µs a step)
    if t.thresholds_set is None:
        t.thresholds_set = bool((th < np.inf).any())
    if not t.thresholds_set:
        return []
    watch = t.j_alive[:n] & t.j_enabled[:n] & ((th[:, 0] < np.inf) | (th[:, 1] < np.inf))
    events = []
    if watch.any():
        r = t.j_reaction[:n]
        force = np.hypot(r[:, 0], r[:, 1])
        over = watch & ((force > th[:, 0]) | (np.abs(r[:, 2]) > th[:, 1]))
        for i in np.flatnonzero(over).tolist():
            handle = Joint(world, i, int(t.j_gen[i]))
            broke = not t.j_report[i]
            events.append(JointEvent(handle, r[i, 0:2].copy(), float(r[i, 2]), broke))
            if broke:
                remove(t, i)
    return events
