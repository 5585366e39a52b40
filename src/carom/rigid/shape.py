"""Shapes on bodies: the :class:`ShapeHandle`, and adding, chaining and removing shapes.

A shape is a row of the world's shape table (``WorldTables.s_*``) and ``count`` rows of the shared vertex table
from ``offset``; its geometry object (:mod:`carom.geometry`) is kept beside it (``s_geometry``). Adding one checks
every argument first (a refused call changes nothing), takes a free row, writes the rows, inserts a broad-phase
proxy, and updates the body's mass (:mod:`carom.rigid.mass`).
"""
from typing import TYPE_CHECKING
if TYPE_CHECKING:  # (annotations only)
    from .._types import Any
import math

import numpy as np

from .. import _validate
from .._jit import entry_njit
from ..constants import FLOAT32_LIMIT, WORLD_LIMIT, MAX_TRANSLATION_SPEED, SPECULATIVE_DISTANCE, WELDING_TOLERANCE
from ..errors import CaromError, GeometryError, SimulationError, StaleHandleError
from ..geometry.aabb import core_aabb
from ..geometry.mass import shape_terms
from ..geometry.shapes import Shape, Segment
from . import _step, queries
from . import events as _events
from . import mass as _mass
from .tables import ALL_CATEGORIES, grow

_number = _validate.number
_vector = _validate.vector
_bits = _validate.bits
_flag = _validate.flag


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
        if w.tables.s_gen[self.index] != self.generation or not w.tables.s_alive[self.index]:
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
        return bool(self.world.tables.s_gen[self.index] == self.generation and self.world.tables.s_alive[self.index])

    @property
    def body(self) -> "Any":
        """The body the shape is attached to."""
        return self.world.body_handle(int(self.world.tables.s_body[self._i()]))

    @property
    def friction(self) -> float:
        """Friction coefficient (≥ 0), combined with the other shape's by :attr:`World.friction_mixing`."""
        return float(self.world.tables.s_friction[self._i()])

    @friction.setter
    def friction(self, value: "Any"):
        self.world.tables.s_friction[self._i()] = _number(value, "friction", 0.0, FLOAT32_LIMIT)

    @property
    def tangent_speed(self) -> float:
        """Speed of the surface along itself (m/s, a conveyor belt; ``Body.add_shape``)."""
        return float(self.world.tables.s_tangent_speed[self._i()])

    @tangent_speed.setter
    def tangent_speed(self, value: "Any"):
        self.world.tables.s_tangent_speed[self._i()] = _number(value, "tangent_speed", magnitude=MAX_TRANSLATION_SPEED)

    @property
    def one_way(self) -> "Any":
        """The way out of a one-way shape's solid side, a unit vector in the body's frame, or None
        (``Body.add_shape``)."""
        d = self.world.tables.s_one_way[self._i()]
        return None if d[0] == 0.0 and d[1] == 0.0 else (float(d[0]), float(d[1]))

    @one_way.setter
    def one_way(self, value: "Any"):
        i = self._i()
        self.world.tables.check_unlocked()
        if self.world.tables.s_chain[i]:
            raise CaromError(f"shape {i} is a chain segment: its one-sidedness follows its direction "
                             "(Body.add_chain), it cannot be set")
        self.world.tables.s_one_way[i] = _one_way(value)

    @property
    def rolling_resistance(self) -> float:
        """Rolling resistance coefficient (``Body.add_shape``)."""
        return float(self.world.tables.s_rolling[self._i()])

    @rolling_resistance.setter
    def rolling_resistance(self, value: "Any"):
        self.world.tables.s_rolling[self._i()] = _number(value, "rolling_resistance", 0.0, FLOAT32_LIMIT)

    @property
    def restitution(self) -> float:
        """Restitution (0 to 1: the share of the approach speed a contact gives back), combined with the other shape's
        by :attr:`World.restitution_mixing`."""
        return float(self.world.tables.s_restitution[self._i()])

    @restitution.setter
    def restitution(self, value: "Any"):
        self.world.tables.s_restitution[self._i()] = _number(value, "restitution", 0.0, 1.0)

    @property
    def density(self) -> float:
        """Density (kg/m²) the body's mass was computed with (read-only: add the shape again to change it, or set
        :attr:`Body.mass`)."""
        return float(self.world.tables.s_density[self._i()])

    @property
    def sensor(self) -> bool:
        """True for a sensor: it reports overlaps as begin/end events and never pushes."""
        return bool(self.world.tables.s_sensor[self._i()])

    @property
    def category(self) -> int:
        """The 64 category bits of the shape (what it is). Two shapes collide when each one's category meets the
        other's :attr:`mask`."""
        return int(self.world.tables.s_category[self._i()])

    @category.setter
    def category(self, value: "Any"):
        self.world.tables.s_category[self._i()] = _bits(value, "category")

    @property
    def mask(self) -> int:
        """The 64 mask bits of the shape (the categories it collides with)."""
        return int(self.world.tables.s_mask[self._i()])

    @mask.setter
    def mask(self, value: "Any"):
        self.world.tables.s_mask[self._i()] = _bits(value, "mask")

    @property
    def group(self) -> int:
        """The collision group: shapes sharing a positive group always collide, a negative one never; 0 leaves it to
        category and mask (Box2D's filter rule)."""
        return int(self.world.tables.s_group[self._i()])

    @group.setter
    def group(self, value: "Any"):
        self.world.tables.s_group[self._i()] = _group(value)

    @property
    def data(self) -> "Any":
        """Any Python object of the user's (None by default); like ``Body.data``, kept by pickle and copy of
        the world but not by ``World.snapshot()``/``restore``."""
        return self.world.tables.shape_data.get(self._i())

    @data.setter
    def data(self, value: "Any"):
        s = self._i()
        if value is None:
            self.world.tables.shape_data.pop(s, None)
        else:
            self.world.tables.shape_data[s] = value

    def __repr__(self):
        return f"<ShapeHandle {self.index} {self.geometry!r}>"


def shape_settings(shape, density, friction, restitution, sensor, category, mask, group, tangent_speed=0.0,
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
    if shape_terms(shape).extent > WORLD_LIMIT:
        raise GeometryError(f"{shape!r} reaches beyond the world limit {WORLD_LIMIT:g} m")
    return d, f, e, is_sensor, cat, msk, grp, ts, rr, ow


def write_rows(t, s, b, o, count, radius, f, e, d, is_sensor, cat, msk, grp, ts, rr, ow):
    """The shape table's rows ``s`` (one slot, or an array of them with ``b``, ``o`` and any setting alike) for a
    shape of ``count`` core vertices and ``radius`` on body ``b`` with its vertices at row ``o``: the one
    definition of a plain (not chain) shape's row, for ``add_shape`` and ``World.add_bodies``. The vertices
    themselves are the caller's to write."""
    t.s_body[s] = b
    t.s_alive[s] = True
    t.s_offset[s] = o
    t.s_count[s] = count
    t.s_radius[s] = radius
    t.s_friction[s] = f
    t.s_restitution[s] = e
    t.s_density[s] = d
    t.s_sensor[s] = is_sensor
    t.s_category[s] = cat
    t.s_mask[s] = msk
    t.s_group[s] = grp
    t.s_tangent_speed[s] = ts
    t.s_rolling[s] = rr
    t.s_one_way[s] = ow
    t.s_chain[s] = 0
    t.s_ghost[s] = 0.0


def placed_box(shape, b, origin):
    """The box (lx, ly, ux, uy) of ``shape`` on body b at its origin ``origin`` (``WorldTables.origin_transform``),
    which must lie within the world limit. (The shape alone is checked against the limit in its body's frame:
    placed on the body it can still reach beyond it, where positions lose their precision and the broad phase's
    boxes overflow.)"""
    x, y, c, s = origin
    lx, ly, ux, uy = core_aabb(shape._kernel_vertices, shape.radius, x, y, c, s)
    if max(-lx, -ly, ux, uy) > WORLD_LIMIT:
        raise GeometryError(f"{shape!r} on body {b} at ({x:g}, {y:g}) reaches beyond the world limit "
                            f"{WORLD_LIMIT:g} m (its box spans ({lx:g}, {ly:g}) to ({ux:g}, {uy:g}))")
    return lx, ly, ux, uy


def new_shape_row(t, shape):
    """(slot, vertex row) for a new shape of geometry ``shape``: the free list's last slot, else a new one (the
    table doubled when full), and its vertices and normals written at the end of the vertex table. The rest of
    the row is the caller's (:func:`write_rows`)."""
    if t.free_shapes:
        s = t.free_shapes.pop()
    else:
        s = t.n_shapes
        if s == t.s_body.shape[0]:
            for name in t.shape_arrays:
                setattr(t, name, grow(getattr(t, name), 2 * s))
        t.n_shapes += 1
        t.s_geometry.append(None)
    n = shape.vertices.shape[0]
    o = vertex_rows(t, n)
    t.verts[o:o + n] = shape.vertices
    t.normals[o:o + n] = shape.normals
    return s, o


def add_shape(world, b, shape, density, friction, restitution, sensor, category, mask, group, tangent_speed=0.0,
               rolling_resistance=0.0, one_way=None):
    t = world.tables
    t.check_unlocked()
    d, f, e, is_sensor, cat, msk, grp, ts, rr, ow = shape_settings(
        shape, density, friction, restitution, sensor, category, mask, group, tangent_speed, rolling_resistance,
        one_way)
    mass = _mass.body_mass(t, b, ((shape, d),))
    kind = int(t.kind[b])
    if kind == _step.DYNAMIC:
        _mass.check_shape_mass(mass, d, f"body {b}")
    origin = t.origin_transform(b)
    lx, ly, ux, uy = placed_box(shape, b, origin)
    n = shape.vertices.shape[0]
    _events.settle(t)     # the last step's events name shapes by slot, and this may reuse one
    s, o = new_shape_row(t, shape)
    write_rows(t, s, b, o, n, shape.radius, f, e, d, is_sensor, cat, msk, grp, ts, rr, ow)
    t.s_geometry[s] = shape
    pid = t.bp.insert_checked(lx, ly, ux, uy, kind == _step.STATIC)
    if pid >= t.proxy_shape.shape[0]:
        t.proxy_shape = grow(t.proxy_shape, 2 * pid + 2)
    t.proxy_shape[pid] = s
    t.s_proxy[s] = pid
    t.query_boxes = None
    handle = ShapeHandle(world, s, int(t.s_gen[s]), shape)
    t.body_shapes[b].append(handle)
    _mass.update_mass(t, b, mass, origin=origin)
    t.wake(b)
    asleep = t.asleep[:t.n_bodies]
    if asleep[asleep.argmax()]:      # (any body asleep: argmax stops at the first, a third of ``any()``'s time)
        wake_touching(world, lx, ly, ux, uy)
    return handle


def add_chain(world, b, points, loop, friction, restitution, category, mask, group):
    """:meth:`Body.add_chain`: everything checked, then the segments added in order."""
    t = world.tables
    t.check_unlocked()
    if t.kind[b] == _step.DYNAMIC:
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
    fr = per_segment(friction, "friction", m, 0.0, FLOAT32_LIMIT)
    rs = per_segment(restitution, "restitution", m, 0.0, 1.0)
    segments = [Segment(p[k], p[(k + 1) % n]) for k in range(m)]
    for k in range(m):      # (the checks add_shape makes, before anything is added)
        shape_settings(segments[k], 0.0, fr[k], rs[k], False, category, mask, group)
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
        h = add_shape(world, b, segments[k], 0.0, fr[k], rs[k], False, category, mask, group,
                            one_way=tuple(rows[k][2].tolist()))
        t.s_chain[h.index] = rows[k][0]
        t.s_ghost[h.index] = rows[k][1]
        handles.append(h)
    return handles


def per_segment(value, name, m, low, high):
    """A chain's material: one number for every segment, or a sequence of exactly m (one per segment)."""
    if isinstance(value, (list, tuple, np.ndarray)):
        arr = _validate.values(value, name, low, high)
        if arr.shape[0] != m:
            raise SimulationError(f"{name} has {arr.shape[0]} values; the chain has {m} segments (give one "
                                  "number, or one per segment)")
        return arr.tolist()
    return [_number(value, name, low, high)] * m


def remove_shape(world, handle, update_mass=True):
    t = world.tables
    s = handle._i()
    b = int(t.s_body[s])
    t.wake(b, partners=True)
    remove_shapes(world, [s])
    if update_mass:
        _mass.update_mass(t, b)


def remove_shapes(world, rows):
    """Remove the shapes of ``rows`` (distinct live shape rows), in that order, their bodies' masses left as they
    are and nothing woken: what removing them one at a time does (the same free lists, broad-phase tree, pending
    end events and contact table), with one pass over the contact table (:func:`purge_contacts`) instead of one
    per shape, which copied the whole table each time."""
    t = world.tables
    purge_contacts(t, rows)
    rows = np.asarray(rows, np.int64)
    # (as arrays: the rows are distinct)
    t.s_alive[rows] = False
    t.s_gen[rows] += 1
    slots = rows.tolist()
    t.free_shapes.extend(slots)
    if t.shape_data:
        for s in slots:
            t.shape_data.pop(s, None)
    t.bp.remove_many_checked(t.s_proxy[rows].tolist())
    t.query_boxes = None
    alive = t.s_alive
    for b in set(t.s_body[rows].tolist()):
        t.body_shapes[b] = [h for h in t.body_shapes[b] if alive[h.index]]


def purge_contacts(t, rows):
    """Drop the contacts of the shapes of ``rows`` (about to be removed, in that order) from the contact table in
    one pass; the touching ones become pending end events, in the order removing the shapes one at a time gives
    them: grouped by the first of the pair's shapes in ``rows``, in table order within a group."""
    _events.settle(t)       # (the last step's events are read from the shape slots these free)
    c = t.contacts
    keys = c.keys
    if keys.size == 0 or not len(rows):
        return
    rank = np.full(t.n_shapes, len(rows), np.int64)
    rank[np.asarray(rows, np.int64)] = np.arange(len(rows))
    first = np.minimum(rank[keys >> _step.KEY_SHIFT], rank[keys & _step.KEY_MASK])
    mine = first < len(rows)
    if not mine.any():
        return
    ended = np.flatnonzero(mine & c.touching)
    if ended.size:
        ended = ended[np.argsort(first[ended], kind="stable")]
        records, _ = _events.pair_rows(t, _events.END_DTYPE, keys, ended, c.sensor)
        records["sensor"] = c.sensor[ended]
        t.pending_end.append(records)
    _events.drop_contacts(t, mine)


def wake_touching(world, lx, ly, ux, uy):
    """Wake the sleeping bodies with a shape within the speculative distance of the box [lx, ux] × [ly, uy]
    (a new shape's): a shape added onto a sleeping body, or to the static body, would otherwise push into
    it unseen, as a sleeping body's contacts are not tested until something wakes it."""
    t = world.tables
    lower, upper = _near_box(lx, ly, ux, uy)
    if not _sleeping_shape_near(t, lower, upper):
        return
    for h in queries.query_aabb(world, lower, upper, ALL_CATEGORIES, None):
        o = int(t.s_body[h.index])
        if t.asleep[o]:
            t.wake(o)


def wake_touching_boxes(world, boxes):
    """:func:`wake_touching` for each of ``boxes`` (rows lx, ly, ux, uy: many new shapes'), after one check over
    the box that holds them all: when no sleeping shape is near that one, none is near any of them, and the
    check of each box (a pass over every shape of the world) is skipped."""
    t = world.tables
    asleep = t.asleep[:t.n_bodies]
    if not asleep[asleep.argmax()]:
        return
    lower, upper = _near_box(float(boxes[:, 0].min()), float(boxes[:, 1].min()), float(boxes[:, 2].max()),
                             float(boxes[:, 3].max()))
    if not _sleeping_shape_near(t, lower, upper):
        return
    for lx, ly, ux, uy in boxes.tolist():
        wake_touching(world, lx, ly, ux, uy)


def _near_box(lx, ly, ux, uy):
    """The box whose shapes a new shape of box [lx, ux] × [ly, uy] may touch: grown by the speculative distance,
    within the world limit."""
    m = SPECULATIVE_DISTANCE
    return ((max(lx - m, -WORLD_LIMIT), max(ly - m, -WORLD_LIMIT)),
            (min(ux + m, WORLD_LIMIT), min(uy + m, WORLD_LIMIT)))


def _sleeping_shape_near(t, lower, upper):
    """Whether a live shape of a sleeping body may reach the box [lower, upper]: its disc about its body's centre
    of mass (radius ``s_reach``, which holds the shape) meets the box, with a relative margin of 1e-9 for
    rounding. When none does, :func:`wake_touching` has nothing to wake, and skips the query, whose refresh
    of every shape's box cost about 1 ms per added shape in a world of 15,000 shapes (most of adding rain's
    ragdolls while others slept)."""
    ns = t.n_shapes
    return bool(_disc_meets_box(t.s_alive[:ns], t.s_body[:ns], t.s_reach[:ns], t.asleep, t.com, float(lower[0]),
                                float(lower[1]), float(upper[0]), float(upper[1])))


@entry_njit
def _disc_meets_box(s_alive, s_body, s_reach, asleep, com, lx, ly, ux, uy):
    """:func:`_sleeping_shape_near`'s loop over the shapes, stopping at the first that may reach the box."""
    for s in range(s_alive.shape[0]):
        if not s_alive[s]:
            continue
        b = s_body[s]
        if not asleep[b]:
            continue
        cx = com[b, 0]
        cy = com[b, 1]
        r = s_reach[s] * (1.0 + 1e-9) + 1e-9 * (1.0 + max(abs(cx), abs(cy)))
        if cx + r >= lx and cx - r <= ux and cy + r >= ly and cy - r <= uy:
            return True
    return False


def vertex_rows(t, n):
    """The offset of n free rows at the end of the vertex table (``t.verts``, ``t.normals``).

    Removed shapes leave their rows behind. When the table is full and at least half of it would be free
    without them, the live rows are first moved down over the dead ones (:meth:`_compact_vertex_rows`);
    otherwise it doubles. So adding and removing shapes forever keeps it under four times the live rows."""
    if t.n_verts + n > t.verts.shape[0]:
        live = np.flatnonzero(t.s_alive[:t.n_shapes])
        used = int(t.s_count[live].sum())
        if 2 * (used + n) <= t.verts.shape[0]:
            compact_vertex_rows(t, live)
        else:
            cap = max(2 * t.verts.shape[0], t.n_verts + n)
            t.verts = grow(t.verts, cap)
            t.normals = grow(t.normals, cap)
    o = t.n_verts
    t.n_verts += n
    return o


def compact_vertex_rows(t, live):
    """Move the rows of the live shapes down over the dead ones, in order, and point their offsets there.
    In place: the step's kept views of the table and of the offsets (``step_tables``) stay valid. The
    freed rows are zeroed, as rows never written are."""
    order = live[np.argsort(t.s_offset[live], kind="stable")]
    counts = t.s_count[order]
    offsets = np.cumsum(counts) - counts
    total = int(counts.sum())
    rows = np.repeat(t.s_offset[order] - offsets, counts) + np.arange(total)
    for table in (t.verts, t.normals):
        table[:total] = table[rows]
        table[total:t.n_verts] = 0.0
    t.s_offset[order] = offsets
    t.n_verts = total
