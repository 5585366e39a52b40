"""Many bodies at once: the world's bulk calls (``World.add_bodies``, ``set_state``, ``apply_impulses``,
``apply_forces``) and the body rows they take. Every argument is checked as a whole first (a refused call changes
nothing), then the rows are written as arrays, with the outcome of the one-body calls made body after body.
"""
from typing import TYPE_CHECKING
if TYPE_CHECKING:  # (annotations only)
    from .._types import Any, ArrayLike, Bits, Optional

import numpy as np

from .. import _validate
from ..constants import WORLD_LIMIT, FLOAT32_LIMIT, ANGLE_LIMIT, SLEEP_LINEAR_TOLERANCE
from ..errors import CaromError, GeometryError, SimulationError, StaleHandleError
from ..geometry.aabb import core_aabbs
from ..geometry.mass import shape_reach
from . import _step
from . import events as _events
from . import mass as _mass
from . import shape as _shape
from .body import Body, unlocked as _unlocked
from .shape import ShapeHandle
from .tables import ALL_CATEGORIES, grow as _grow

_number = _validate.number
_vector = _validate.vector
_flag = _validate.flag


def rows_of(world, bodies, unique=False):
    """Body rows from ``bodies``: a list or tuple of :class:`Body` handles of this world or body indices
    (ints, not bools), or a 1-d integer array of indices; each a live body (a handle of the same
    generation), and with ``unique`` none twice."""
    t = world.tables
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
                if b.world is not world:
                    raise CaromError(f"bodies[{k}] is a body of another world")
                rows[k] = b.index
                gens[k] = b.generation
            else:
                rows[k] = _validate.integer(b, f"bodies[{k}]", -2 ** 63, 2 ** 63 - 1)
    else:
        raise SimulationError(f"bodies must be a list of Body handles or an array of body indices, got "
                              f"{bodies!r}")
    bad = (rows < 0) | (rows >= t.n_bodies)
    bad[~bad] = ~t.alive[rows[~bad]]
    if gens is not None:
        bad[~bad] = (gens[~bad] >= 0) & (t.gen[rows[~bad]] != gens[~bad])
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


def per_body(arr, name, m):
    """``arr`` (already checked) must have one row per body written."""
    if arr.shape[0] != m:
        raise SimulationError(f"{name} has {arr.shape[0]} rows for {m} bodies")
    return arr


def set_state(world, bodies: "Any", positions: "Optional[ArrayLike]" = None, angles: "Optional[ArrayLike]" = None,
              velocities: "Optional[ArrayLike]" = None, angular_velocities: "Optional[ArrayLike]" = None) -> None:
    """``World.set_state``."""
    t = world.tables
    t.check_unlocked()
    rows = rows_of(world, bodies, unique=True)
    m = rows.shape[0]
    p = None if positions is None else per_body(
        _validate.points(positions, "positions", WORLD_LIMIT), "positions", m)
    a = None if angles is None else per_body(
        _validate.values(angles, "angles", magnitude=ANGLE_LIMIT), "angles", m)
    v = None if velocities is None else per_body(
        _validate.points(velocities, "velocities", FLOAT32_LIMIT), "velocities", m)
    w = None if angular_velocities is None else per_body(
        _validate.values(angular_velocities, "angular_velocities", magnitude=FLOAT32_LIMIT),
        "angular_velocities", m)
    moved = p is not None or a is not None
    if moved:
        lc = t.local_center[rows]
        if p is None:         # (angles alone: the origins stay, as Body.angle keeps Body.position)
            c, s = np.cos(t.angle[rows]), np.sin(t.angle[rows])
            p = t.com[rows] - np.stack([c * lc[:, 0] - s * lc[:, 1], s * lc[:, 0] + c * lc[:, 1]], axis=1)
        if a is not None:
            t.angle[rows] = a
        c, s = np.cos(t.angle[rows]), np.sin(t.angle[rows])
        t.com[rows] = p + np.stack([c * lc[:, 0] - s * lc[:, 1], s * lc[:, 0] + c * lc[:, 1]], axis=1)
        t.query_boxes = None
    if v is not None:
        t.vel[rows] = v
        t.vel[rows] *= _unlocked(t.locks[rows])
    if w is not None:
        t.angvel[rows] = np.where(t.fixed_rotation[rows], 0.0, w)
    t.wake_rows(rows, partners=moved)


def _vectors_at(world, bodies, vectors, name, points):
    """What ``apply_impulses`` and ``apply_forces`` both check first: (tables, the bodies' rows, one vector per
    body, one point per body or None)."""
    t = world.tables
    t.check_unlocked()
    rows = rows_of(world, bodies)
    m = rows.shape[0]
    v = per_body(_validate.points(vectors, name), name, m)
    p = None if points is None else per_body(_validate.points(points, "points", WORLD_LIMIT), "points", m)
    return t, rows, v, p


def apply_impulses(world, bodies: "Any", impulses: "ArrayLike", points: "Optional[ArrayLike]" = None) -> None:
    """``World.apply_impulses``."""
    t, rows, j, p = _vectors_at(world, bodies, impulses, "impulses", points)
    dynamic = np.flatnonzero(t.kind[rows] == _step.DYNAMIC)
    r, jd = rows[dynamic], j[dynamic]
    n = t.n_bodies
    vel = t.vel[:n].copy()
    angvel = t.angvel[:n].copy()
    np.add.at(vel, r, t.inv_mass[r][:, None] * jd)
    if p is not None:
        arm = p[dynamic] - t.com[r]
        np.add.at(angvel, r, t.inv_inertia[r] * (arm[:, 0] * jd[:, 1] - arm[:, 1] * jd[:, 0]))
    bad = ~((np.abs(vel[r]) <= FLOAT32_LIMIT).all(axis=1) & (np.abs(angvel[r]) <= FLOAT32_LIMIT))
    if bad.any():
        k = int(dynamic[np.argmax(bad)])
        b = int(rows[k])
        raise SimulationError(f"impulses[{k}] = {tuple(j[k].tolist())} would give body {b} the velocity "
                              f"{tuple(vel[b].tolist())} and angular velocity {float(angvel[b])}, beyond the "
                              f"solver's limit {FLOAT32_LIMIT:g}")
    t.vel[:n] = vel
    t.angvel[:n] = angvel
    t.wake_rows(r)


def apply_forces(world, bodies: "Any", forces: "ArrayLike", points: "Optional[ArrayLike]" = None) -> None:
    """``World.apply_forces``."""
    t, rows, f, p = _vectors_at(world, bodies, forces, "forces", points)
    m = rows.shape[0]
    n = t.n_bodies
    force = t.force[:n].copy()
    torque = t.torque[:n].copy()
    if p is not None:
        arm = p - t.com[rows]
        np.add.at(torque, rows, arm[:, 0] * f[:, 1] - arm[:, 1] * f[:, 0])
    np.add.at(force, rows, f)
    big = np.abs(force[rows]).max(axis=1) if m else np.zeros(0)
    turn = np.abs(torque[rows])
    bad = ~((big <= FLOAT32_LIMIT) & (turn <= FLOAT32_LIMIT) & (t.inv_mass[rows] * big <= FLOAT32_LIMIT)
            & (t.inv_inertia[rows] * turn <= FLOAT32_LIMIT))
    if bad.any():
        k = int(np.argmax(bad))
        b = int(rows[k])
        raise SimulationError(f"forces[{k}] = {tuple(f[k].tolist())} would give body {b} the force "
                              f"{tuple(force[b].tolist())} and torque {float(torque[b])}, beyond the solver's "
                              f"limit {FLOAT32_LIMIT:g} (or its accelerations would be)")
    t.force[:n] = force
    t.torque[:n] = torque
    t.wake_rows(rows)


def _one_per_body(value):
    """Whether an ``add_bodies`` setting gives one value per body (a sequence or an array of one or more
    dimensions) rather than one for all (a number; a 0-d array is one number, as ``add_body`` takes it)."""
    return isinstance(value, (list, tuple)) or (isinstance(value, np.ndarray) and value.ndim > 0)


def _setting_per_body(value, name, k, **limits):
    """A body setting of ``add_bodies``: one number for every body, or one per body, each checked as ``add_body``
    checks it."""
    if _one_per_body(value):
        return per_body(_validate.values(value, name, **limits), name, k)
    return _number(value, name, **limits)


def _groups_per_body(value, k):
    """``add_bodies``'s collision group: one integer for every body, or one per body."""
    if not _one_per_body(value):
        return _shape._group(value)
    if isinstance(value, np.ndarray) and value.ndim != 1:
        raise SimulationError(f"group must be one integer or a 1-d array of them, got shape {value.shape}")
    if isinstance(value, np.ndarray) and value.dtype.kind == "i":
        return per_body(value.astype(np.int64), "group", k)     # (every signed integer fits the column)
    items = value.tolist() if isinstance(value, np.ndarray) else value
    groups = np.array([_validate.integer(g, f"group[{i}]", -2 ** 63, 2 ** 63 - 1) for i, g in enumerate(items)],
                      np.int64)
    return per_body(groups, "group", k)


def _shapes_per_body(shape, k):
    """``add_bodies``'s ``shape``: (the distinct geometries, each body's index into them). One geometry, or a
    sequence of one per body (the same object may serve many)."""
    if not isinstance(shape, (list, tuple)):
        return [shape], np.zeros(k, np.int64)
    if len(shape) != k:
        raise SimulationError(f"shape has {len(shape)} shapes for {k} bodies (give one shape, or one per body)")
    index = {}
    distinct = []
    which = np.empty(k, np.int64)
    for i, g in enumerate(shape):
        j = index.get(id(g))
        if j is None:
            j = index[id(g)] = len(distinct)
            distinct.append(g)
        which[i] = j
    return distinct, which


def add_bodies(world, positions: "ArrayLike", angles: "Optional[ArrayLike]" = None,
               velocities: "Optional[ArrayLike]" = None, angular_velocities: "Optional[ArrayLike]" = None, *,
               shape: "Any",
               density: "float" = 1.0, friction: "float" = 0.6, restitution: "float" = 0.0,
               sensor: "bool" = False, category: "Bits" = 1, mask: "Bits" = ALL_CATEGORIES,
               group: "Any" = 0, tangent_speed: "float" = 0.0, rolling_resistance: "float" = 0.0,
               one_way: "Any" = None, bullet: "bool" = False,
               linear_damping: "Any" = 0.0, angular_damping: "Any" = 0.0, gravity_scale: "Any" = 1.0,
               sleep_threshold: "Any" = SLEEP_LINEAR_TOLERANCE) -> list:
    """``World.add_bodies``."""
    t = world.tables
    t.check_unlocked()
    p = _validate.points(positions, "positions", WORLD_LIMIT)
    k = p.shape[0]
    a = np.zeros(k) if angles is None else per_body(
        _validate.values(angles, "angles", magnitude=ANGLE_LIMIT), "angles", k)
    v = np.zeros((k, 2)) if velocities is None else per_body(
        _validate.points(velocities, "velocities", FLOAT32_LIMIT), "velocities", k)
    w = np.zeros(k) if angular_velocities is None else per_body(
        _validate.values(angular_velocities, "angular_velocities", magnitude=FLOAT32_LIMIT),
        "angular_velocities", k)
    fast = _flag(bullet, "bullet")
    ld = _setting_per_body(linear_damping, "linear_damping", k, low=0.0)
    ad = _setting_per_body(angular_damping, "angular_damping", k, low=0.0)
    gs = _setting_per_body(gravity_scale, "gravity_scale", k, magnitude=FLOAT32_LIMIT)
    st = _setting_per_body(sleep_threshold, "sleep_threshold", k, low=0.0, high=FLOAT32_LIMIT)
    grp = _groups_per_body(group, k)
    shapes, which = _shapes_per_body(shape, k)
    masses = []
    for g in shapes:
        d, f, e, is_sensor, cat, msk, _, ts, rr, ow = _shape.shape_settings(
            g, density, friction, restitution, sensor, category, mask, 0, tangent_speed, rolling_resistance,
            one_way)
        masses.append(_mass.parts_mass(((g, d),)))
        _mass.check_shape_mass(masses[-1], d, "each body")
    if k == 0:
        return []
    # each shape's box at its body's origin (the transform _origin_transform gives a body without mass yet), one
    # compiled call per distinct shape; each within the world limit, as ``add_shape`` checks it
    c, s = np.cos(a), np.sin(a)
    x = p[:, 0] - (c * 0.0 - s * 0.0)
    y = p[:, 1] - (s * 0.0 + c * 0.0)
    boxes = np.empty((k, 4))
    for j, g in enumerate(shapes):
        mine = which == j
        boxes[mine] = core_aabbs(g._kernel_vertices, g.radius, x[mine], y[mine], c[mine], s[mine])
    beyond = np.maximum(np.maximum(-boxes[:, 0], -boxes[:, 1]), np.maximum(boxes[:, 2], boxes[:, 3])) > WORLD_LIMIT
    if beyond.any():
        i = int(np.argmax(beyond))
        raise GeometryError(f"{shapes[which[i]]!r} at positions[{i}] = ({p[i, 0]:g}, {p[i, 1]:g}) reaches beyond "
                            f"the world limit {WORLD_LIMIT:g} m")
    _events.settle(world.tables)     # (shape slots may be reused)
    # body rows: from the free list (last freed first), then new ones, the arrays doubling as add_body does
    free = t.free_bodies
    reused = [free.pop() for _ in range(min(k, len(free)))]
    first = t.n_bodies
    cap = t.com.shape[0]
    while first + k - len(reused) > cap:
        for name in t.body_arrays:
            setattr(world.tables, name, _grow(getattr(world.tables, name), 2 * cap))
        t.gravity_scale[cap:] = 1.0
        t.body_shapes.extend([] for _ in range(cap))
        cap *= 2
    rows = np.array(reused + list(range(first, first + k - len(reused))), np.int64)
    t.n_bodies = first + k - len(reused)
    # shape rows likewise
    sfree = t.free_shapes
    sreused = [sfree.pop() for _ in range(min(k, len(sfree)))]
    sfirst = t.n_shapes
    scap = t.s_body.shape[0]
    while sfirst + k - len(sreused) > scap:
        for name in t.shape_arrays:
            setattr(world.tables, name, _grow(getattr(world.tables, name), 2 * scap))
        scap *= 2
    srows = np.array(sreused + list(range(sfirst, sfirst + k - len(sreused))), np.int64)
    t.n_shapes = sfirst + k - len(sreused)
    t.s_geometry.extend([None] * (k - len(sreused)))
    counts = np.array([g.vertices.shape[0] for g in shapes], np.int64)[which]
    starts = np.zeros(k, np.int64)
    np.cumsum(counts[:-1], out=starts[1:])
    o = _shape.vertex_rows(world.tables, int(counts.sum()))
    # the bodies as add_body leaves them
    t.com[rows] = p
    t.angle[rows] = a
    t.vel[rows] = v
    t.angvel[rows] = w
    t.kind[rows] = _step.DYNAMIC
    t.bullet[rows] = fast
    t.alive[rows] = True
    t.force[rows] = 0.0
    t.torque[rows] = 0.0
    t.lin_damping[rows] = ld
    t.ang_damping[rows] = ad
    t.gravity_scale[rows] = gs
    t.can_sleep[rows] = True
    t.fixed_rotation[rows] = False
    t.sleep_threshold[rows] = st
    t.locks[rows] = 0
    t.mass_override[rows] = 0
    # the shapes as add_shape writes them
    if len(shapes) == 1:
        t.verts[o:o + counts[0] * k] = np.tile(shapes[0].vertices, (k, 1))
        t.normals[o:o + counts[0] * k] = np.tile(shapes[0].normals, (k, 1))
    else:
        picks = which.tolist()
        t.verts[o:o + starts[-1] + counts[-1]] = np.concatenate([shapes[j].vertices for j in picks])
        t.normals[o:o + starts[-1] + counts[-1]] = np.concatenate([shapes[j].normals for j in picks])
    radii = np.array([g.radius for g in shapes])[which]
    _shape.write_rows(t, srows, rows, o + starts, counts, radii, f, e, d, is_sensor, cat, msk, grp, ts, rr, ow)
    # each shape's proxy, from its box
    pids = t.bp.insert_many_checked(boxes, np.zeros(k, np.bool_))
    _proxy_room(t, pids)
    t.proxy_shape[pids] = srows
    t.s_proxy[srows] = pids
    slots, picks = srows.tolist(), which.tolist()
    gen = t.s_gen
    for b, sl, j in zip(rows.tolist(), slots, picks):
        t.s_geometry[sl] = shapes[j]
        t.body_shapes[b] = [ShapeHandle(world, sl, int(gen[sl]), shapes[j])]
    # the mass as update_mass sets it, per distinct shape
    area_m, cx, cy, inertia, min_extent = (np.array(column)[which] for column in zip(*masses))
    t.mass[rows] = area_m
    t.inertia[rows] = inertia
    with np.errstate(divide="ignore"):
        t.inv_mass[rows] = np.where(area_m > 0.0, 1.0 / area_m, 0.0)
        t.inv_inertia[rows] = np.where((area_m > 0.0) & (inertia > 0.0), 1.0 / inertia, 0.0)
    t.local_center[rows, 0] = cx
    t.local_center[rows, 1] = cy
    t.com[rows, 0] = x + (c * cx - s * cy)
    t.com[rows, 1] = y + (s * cx + c * cy)
    t.min_extent[rows] = np.where(np.isfinite(min_extent), min_extent, 0.0)
    t.s_reach[srows] = np.array([shape_reach(g, *m[1:3]) for g, m in zip(shapes, masses)])[which]
    t.query_boxes = None
    t.sleep_time[rows] = 0.0
    _shape.wake_touching_boxes(world, boxes)
    return [Body(world, b, int(t.gen[b])) for b in rows.tolist()]


def add_shapes(world, bodies: "Any", shape: "Any", density: "float" = 1.0, friction: "float" = 0.6,
               restitution: "float" = 0.0, sensor: "bool" = False, category: "Bits" = 1,
               mask: "Bits" = ALL_CATEGORIES, group: "Any" = 0, tangent_speed: "float" = 0.0,
               rolling_resistance: "float" = 0.0, one_way: "Any" = None) -> list:
    """``World.add_shapes``: every value checked (each body's new mass and each placed shape's box too), then the
    shapes written body after body as ``Body.add_shape`` writes them, their proxies inserted at once, the bodies
    and what sleeps near the new shapes woken in one pass. Returns the shapes' handles."""
    t = world.tables
    t.check_unlocked()
    rows = rows_of(world, bodies, unique=True)
    k = rows.size
    shapes, which = _shapes_per_body(shape, k)
    # (each distinct geometry checked; the settings are the same for all)
    for g in shapes:
        d, f, e, is_sensor, cat, msk, _, ts, rr, ow = _shape.shape_settings(
            g, density, friction, restitution, sensor, category, mask, 0, tangent_speed, rolling_resistance, one_way)
    grp = _groups_per_body(group, k)
    if k == 0:
        return []
    # each body's mass with its new shape, its origin and the shape's box there (as add_shape checks them)
    picks = which.tolist()
    masses, origins = [], []
    boxes = np.empty((k, 4))
    dynamic = t.kind[rows] == _step.DYNAMIC
    for j, b in enumerate(rows.tolist()):
        g = shapes[picks[j]]
        masses.append(_mass.body_mass(t, b, ((g, d),)))
        if dynamic[j]:
            _mass.check_shape_mass(masses[-1], d, f"body {b}")
        origins.append(t.origin_transform(b))
        boxes[j] = _shape.placed_box(g, b, origins[-1])
    _events.settle(t)     # (the last step's events name shapes by slot, and this may reuse some)
    # the slots and vertex rows, shape after shape as add_shape takes them
    slots, offsets, counts = [], [], []
    for j in range(k):
        g = shapes[picks[j]]
        s, o = _shape.new_shape_row(t, g)
        t.s_geometry[s] = g
        slots.append(s)
        offsets.append(o)
        counts.append(g.vertices.shape[0])
    srows = np.array(slots, np.int64)
    radii = np.array([g.radius for g in shapes])[which]
    _shape.write_rows(t, srows, rows, np.array(offsets, np.int64), np.array(counts, np.int64), radii, f, e, d,
                      is_sensor, cat, msk, grp, ts, rr, ow)
    pids = t.bp.insert_many_checked(boxes, t.kind[rows] == _step.STATIC)
    _proxy_room(t, pids)
    t.proxy_shape[pids] = srows
    t.s_proxy[srows] = pids
    t.query_boxes = None
    gen = t.s_gen[srows].tolist()
    handles = []
    for j, b in enumerate(rows.tolist()):
        h = ShapeHandle(world, slots[j], gen[j], shapes[picks[j]])
        t.body_shapes[b].append(h)
        handles.append(h)
        _mass.update_mass(t, b, masses[j], origin=origins[j])
    t.wake_rows(rows)
    _shape.wake_touching_boxes(world, boxes)
    return handles


def _proxy_room(t, pids):
    """Room in ``t.proxy_shape`` for the new proxies ``pids``, grown as adding their shapes one at a time grows it
    (to 2·id + 2 at each id beyond it), so the table is the same to its capacity."""
    cap = size = t.proxy_shape.shape[0]
    for pid in pids.tolist():
        if pid >= cap:
            cap = 2 * pid + 2
    if cap != size:
        t.proxy_shape = _grow(t.proxy_shape, cap)
