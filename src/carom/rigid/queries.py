"""World queries: ray casts and overlap tests against every shape of a rigid world.

Each query is one compiled call, after one more for the first query of a world state:

1. the first query after a step, or after anything that moved, added or removed a shape
   (``body.position = ...``), brings the broad phase up to date (:func:`_refresh`): the step leaves boxes
   that enclose its motion, not the shapes where they came to rest. Every live shape's box is recomputed
   from the current body transforms and handed to ``tree_update``, which re-inserts only the proxies that
   left their fat box (the rest cost a containment test). Moved proxies go on the tree's move buffer, so
   the next step finds their new candidate pairs as usual; the step rewrites every box anyway, so a query
   never changes what a step computes. The tight boxes are kept (``World._query_boxes``) until the world
   changes again, so the queries that follow skip this: it is O(shapes), about 0.15 ms for 2,000 shapes,
   where a query alone costs microseconds;
2. collects candidates from the tree (``tree_raycast`` or ``tree_query``);
3. runs the exact test on each candidate that passes the filter;
4. sorts the results so they do not depend on the tree's shape: ray hits by fraction then shape index,
   everything else by shape index.

Python validates the arguments and turns the shape indices the kernel returns into handles.

**Boxes stored in the tree.** They are the tight boxes (the core's extreme vertices grown by the radius,
:func:`carom.geometry.aabb.core_aabb`) padded by ``_BOX_PAD_RELATIVE · (1 + max |coordinate|)``. The pad
(a few thousand ulps) covers the rounding difference between the box (vertices taken to the world frame)
and the exact tests (which take the query into the body frame), so a shape touched only at its extreme
point is never lost by the broad phase. :func:`query_aabb` filters the candidates against the unpadded
tight boxes, so its answer is exactly "tight AABB overlaps the box".

**Filter.** A shape is considered when ``shape.category & mask != 0`` (Box2D's query filter mask). With
``category`` given as well, the shape must also accept the query: ``shape.mask & category != 0``. Sensor
shapes are skipped by ray casts and returned by the overlap queries (Box2D v3).

**Exact tests** (in the shape's body frame):

- ray: :func:`carom.geometry.raycast.raycast_shape` conventions: one hit per shape at its entry point, a ray
  starting inside a shape does not hit it, segments are hit from either side.
- point: the distance ``d`` from the point to the convex core, ``d ≤ radius`` (closed: the surface
  counts). For a core polygon the point is inside when ``n_i·(q − v_i) ≤ 0`` for every edge i; outside,
  ``d`` is the least distance to an edge (the closest point of a convex set to an outside point lies on
  its boundary).
- shape: signed separation ``σ < 0`` (strictly: touching shapes do not overlap). With GJK's core
  distance ``d``: if ``d > 0``, ``σ = d − rA − rB``. If ``d = 0`` the cores touch or intersect; then
  ``σ ≤ −(rA + rB)``, which settles it when a radius is positive. With both radii 0 (polygons and thin
  segments) ``σ`` is the SAT separation: the largest over the edge normals ``n`` of both cores of
  ``min_j n·(w_j − v)`` (``v`` the edge's vertex, ``w_j`` the other core's vertices); for convex
  polygons (a segment is the 2-gon with normals ±n) the edge normals of both are the only candidate
  separating axes, so ``σ < 0`` exactly when the interiors (a segment's relative interior) cross.
"""
import math
import numbers
from collections import namedtuple

import numpy as np

from .._jit import njit, entry_njit
from ._step import body_origin
from ..constants import WORLD_LIMIT
from ..errors import SimulationError, WorldLockedError
from ..geometry.aabb import core_aabb
from ..geometry.gjk import gjk_core
from ..geometry.raycast import raycast_world_kernel
from ..geometry.shapes import Shape, Transform
from ..geometry._math import relative_transform, closest_on_segment
from ..geometry._broadphase_kernels import (tree_update, tree_query, tree_raycast, ray_box_fraction,
                                              order_by_key_then_id)
# the module, not its names: world.py may import this module while it is itself being imported
from . import world as _world

#: Every category bit: the default query mask (every shape is considered).
ALL = (1 << 64) - 1

#: Relative pad of the boxes stored in the tree (see the module docstring): about 4500 ulps of the
#: largest coordinate, far below anything visible, far above the rounding of a transform.
_BOX_PAD_RELATIVE = 1e-12

WorldRayHit = namedtuple("WorldRayHit", ["shape", "body", "point", "normal", "fraction"])
WorldRayHit.__doc__ = """A ray hit on a world shape: the ``shape`` (ShapeHandle) and its ``body`` (Body), the
world ``point`` where the ray enters it, the unit outward surface ``normal`` there and the ``fraction`` of the
way from p1 to p2 (in [0, 1])."""


# --------------------------------------------------------------------------------------------------------
# kernels
# --------------------------------------------------------------------------------------------------------

@entry_njit
def _refresh(com, angle, local_center, s_body, s_alive, s_offset, s_count, s_radius, verts, s_proxy,
             moving, static, bp_lower, bp_upper, bp_flags, bp_leaf, margin, multiplier, moved, moved_flag,
             moved_meta):
    """Tight boxes (S, 2) lower/upper of every live shape; the tree gets them (padded) via tree_update."""
    S = s_body.shape[0]
    lower = np.zeros((S, 2))
    upper = np.zeros((S, 2))
    n_alive = 0
    for s in range(S):
        if s_alive[s]:
            n_alive += 1
    ids = np.empty(n_alive, np.int64)
    lowers = np.empty((n_alive, 2))
    uppers = np.empty((n_alive, 2))
    # one cos/sin per body, not per shape
    xform = np.empty((com.shape[0], 4))
    done = np.zeros(com.shape[0], np.bool_)
    k = 0
    for s in range(S):
        if not s_alive[s]:
            continue
        b = s_body[s]
        if not done[b]:
            xform[b, 0], xform[b, 1], xform[b, 2], xform[b, 3] = body_origin(com, angle, local_center, b)
            done[b] = True
        x = xform[b, 0]
        y = xform[b, 1]
        c = xform[b, 2]
        sn = xform[b, 3]
        o = s_offset[s]
        lx, ly, ux, uy = core_aabb(verts[o:o + s_count[s]], s_radius[s], x, y, c, sn)
        lower[s, 0] = lx
        lower[s, 1] = ly
        upper[s, 0] = ux
        upper[s, 1] = uy
        pad = _BOX_PAD_RELATIVE * (1.0 + max(max(abs(lx), abs(ly)), max(abs(ux), abs(uy))))
        ids[k] = s_proxy[s]
        lowers[k, 0] = lx - pad
        lowers[k, 1] = ly - pad
        uppers[k, 0] = ux + pad
        uppers[k, 1] = uy + pad
        k += 1
    tree_update(moving, static, bp_lower, bp_upper, bp_flags, bp_leaf, ids, lowers, uppers, margin,
                multiplier, moved, moved_flag, moved_meta)
    return lower, upper


@njit
def _passes(s, s_alive, s_category, s_mask, mask, category, use_category):
    if not s_alive[s]:
        return False
    if (s_category[s] & mask) == 0:
        return False
    if use_category and (s_mask[s] & category) == 0:
        return False
    return True


@entry_njit
def _raycast_kernel(com, angle, local_center, s_body, s_alive, s_offset, s_count, s_radius, verts, normals,
                    s_sensor, s_category, s_mask, proxy_shape, moving, static, bp_lower, bp_upper,
                    ox, oy, dx, dy, mask, category, use_category, first_only):
    """Hits of the segment o → o + d: (shapes, fractions, points, normals) ordered by fraction, then shape.

    The tree returns the proxies whose box the segment crosses ordered by box entry fraction; a shape is
    inside its box, so it is entered no earlier than its box. With ``first_only`` the walk stops at the
    first box entered after the best hit so far, and only the closest hit (lowest shape index on a tie)
    is returned.
    """
    proxies = tree_raycast(moving, static, bp_lower, bp_upper, ox, oy, dx, dy)
    m = proxies.shape[0]
    hit_shape = np.empty(m, np.int64)
    hit_t = np.empty(m)
    hit_p = np.empty((m, 2))
    hit_n = np.empty((m, 2))
    k = np.int64(0)
    best_t = np.inf
    for a in range(m):
        p = proxies[a]
        if first_only and k > 0:
            tb = ray_box_fraction(ox, oy, dx, dy, bp_lower[p, 0], bp_lower[p, 1], bp_upper[p, 0],
                                  bp_upper[p, 1])
            if tb > best_t:
                break
        s = proxy_shape[p]
        if s_sensor[s] or not _passes(s, s_alive, s_category, s_mask, mask, category, use_category):
            continue
        x, y, c, sn = body_origin(com, angle, local_center, s_body[s])
        o = s_offset[s]
        e = o + s_count[s]
        h, t, px, py, nx, ny = raycast_world_kernel(verts[o:e], normals[o:e], s_radius[s], x, y, c, sn,
                                                    ox, oy, dx, dy)
        if not h:
            continue
        if first_only and k > 0:
            if t > hit_t[0] or (t == hit_t[0] and s > hit_shape[0]):
                continue
            k = np.int64(0)
        hit_shape[k] = s
        hit_t[k] = t
        hit_p[k, 0] = px
        hit_p[k, 1] = py
        hit_n[k, 0] = nx
        hit_n[k, 1] = ny
        k += 1
        if t < best_t:
            best_t = t
    # fraction first, ties by shape index
    order = order_by_key_then_id(hit_t, hit_shape, k)
    return hit_shape[order], hit_t[order], hit_p[order], hit_n[order]


@njit
def _point_core_distance(v, n, qx, qy):
    """Distance from the point q to the convex core (0 inside a core polygon); all in the body frame."""
    count = v.shape[0]
    if count == 1:
        return math.sqrt((qx - v[0, 0]) ** 2 + (qy - v[0, 1]) ** 2)
    if count >= 3:
        inside = True
        for i in range(count):
            if n[i, 0] * (qx - v[i, 0]) + n[i, 1] * (qy - v[i, 1]) > 0.0:
                inside = False
                break
        if inside:
            return 0.0
    best = np.inf
    edges = 1 if count == 2 else count
    for i in range(edges):
        j = i + 1 if i + 1 < count else 0
        cx, cy = closest_on_segment(v[i, 0], v[i, 1], v[j, 0], v[j, 1], qx, qy)[:2]
        d = math.sqrt((qx - cx) ** 2 + (qy - cy) ** 2)
        if d < best:
            best = d
    return best


@entry_njit
def _point_kernel(com, angle, local_center, s_body, s_alive, s_offset, s_count, s_radius, verts, normals,
                  s_category, s_mask, proxy_shape, moving, static, bp_lower, bp_upper,
                  qx, qy, mask, category, use_category):
    """Ascending indices of the shapes containing the point (distance to the core ≤ radius)."""
    proxies = tree_query(moving, static, bp_lower, bp_upper, qx, qy, qx, qy)
    out = np.empty(proxies.shape[0], np.int64)
    k = 0
    for a in range(proxies.shape[0]):
        s = proxy_shape[proxies[a]]
        if not _passes(s, s_alive, s_category, s_mask, mask, category, use_category):
            continue
        x, y, c, sn = body_origin(com, angle, local_center, s_body[s])
        # q in the body frame: R^T (p − origin)
        lx = c * (qx - x) + sn * (qy - y)
        ly = -sn * (qx - x) + c * (qy - y)
        o = s_offset[s]
        e = o + s_count[s]
        if _point_core_distance(verts[o:e], normals[o:e], lx, ly) <= s_radius[s]:
            out[k] = s
            k += 1
    return np.sort(out[:k])


@entry_njit
def _aabb_kernel(lower, upper, s_alive, s_category, s_mask, proxy_shape, moving, static, bp_lower, bp_upper,
                 qlx, qly, qux, quy, mask, category, use_category):
    """Ascending indices of the shapes whose tight box (``lower``, ``upper``: :func:`_refresh`'s) overlaps
    the closed query box."""
    proxies = tree_query(moving, static, bp_lower, bp_upper, qlx, qly, qux, quy)
    out = np.empty(proxies.shape[0], np.int64)
    k = 0
    for a in range(proxies.shape[0]):
        s = proxy_shape[proxies[a]]
        if not _passes(s, s_alive, s_category, s_mask, mask, category, use_category):
            continue
        if lower[s, 0] <= qux and qlx <= upper[s, 0] and lower[s, 1] <= quy and qly <= upper[s, 1]:
            out[k] = s
            k += 1
    return np.sort(out[:k])


@njit
def _sat_separation(vA, nA, vB, nB, tx, ty, tc, ts):
    """Largest edge-normal separation of two cores with ≥ 2 vertices each (B placed at t in A's frame)."""
    best = -np.inf
    # A's edges against B's vertices (taken to A's frame)
    for i in range(vA.shape[0]):
        lo = np.inf
        for j in range(vB.shape[0]):
            wx = tc * vB[j, 0] - ts * vB[j, 1] + tx
            wy = ts * vB[j, 0] + tc * vB[j, 1] + ty
            d = nA[i, 0] * (wx - vA[i, 0]) + nA[i, 1] * (wy - vA[i, 1])
            if d < lo:
                lo = d
        if lo > best:
            best = lo
    # B's edges (taken to A's frame) against A's vertices
    for i in range(vB.shape[0]):
        bx = tc * vB[i, 0] - ts * vB[i, 1] + tx
        by = ts * vB[i, 0] + tc * vB[i, 1] + ty
        nx = tc * nB[i, 0] - ts * nB[i, 1]
        ny = ts * nB[i, 0] + tc * nB[i, 1]
        lo = np.inf
        for j in range(vA.shape[0]):
            d = nx * (vA[j, 0] - bx) + ny * (vA[j, 1] - by)
            if d < lo:
                lo = d
        if lo > best:
            best = lo
    return best


@njit
def shapes_penetrate(vA, nA, rA, vB, nB, rB, tx, ty, tc, ts):
    """True when the rounded shapes overlap with separation < 0 (touching is not overlapping); B is placed
    at t in A's frame. See the module docstring for the cases."""
    d = gjk_core(vA, vB, tx, ty, tc, ts)[0]
    rsum = rA + rB
    if d > 0.0:
        return d < rsum
    if rsum > 0.0:
        return True
    if vA.shape[0] < 2 or vB.shape[0] < 2:
        return False                       # a point core of radius 0 has no interior
    return _sat_separation(vA, nA, vB, nB, tx, ty, tc, ts) < 0.0


@entry_njit
def _shape_kernel(com, angle, local_center, s_body, s_alive, s_offset, s_count, s_radius, verts, normals,
                  s_category, s_mask, proxy_shape, moving, static, bp_lower, bp_upper,
                  qv, qn, qr, qx, qy, qc, qs, mask, category, use_category):
    """Ascending indices of the shapes overlapping the query shape (core qv, normals qn, radius qr) placed
    at (qx, qy, qc, qs)."""
    lx, ly, ux, uy = core_aabb(qv, qr, qx, qy, qc, qs)
    pad = _BOX_PAD_RELATIVE * (1.0 + max(max(abs(lx), abs(ly)), max(abs(ux), abs(uy))))
    proxies = tree_query(moving, static, bp_lower, bp_upper, lx - pad, ly - pad, ux + pad, uy + pad)
    out = np.empty(proxies.shape[0], np.int64)
    k = 0
    for a in range(proxies.shape[0]):
        s = proxy_shape[proxies[a]]
        if not _passes(s, s_alive, s_category, s_mask, mask, category, use_category):
            continue
        x, y, c, sn = body_origin(com, angle, local_center, s_body[s])
        tx, ty, tc, ts = relative_transform(qx, qy, qc, qs, x, y, c, sn)
        o = s_offset[s]
        e = o + s_count[s]
        if shapes_penetrate(qv, qn, qr, verts[o:e], normals[o:e], s_radius[s], tx, ty, tc, ts):
            out[k] = s
            k += 1
    return np.sort(out[:k])


# --------------------------------------------------------------------------------------------------------
# Python wrappers: validation, the world's arrays in, handles out
# --------------------------------------------------------------------------------------------------------

def _point(value, name):
    """A finite point inside the world limit, as floats (the world's own vector check)."""
    arr = _world._vector(value, name, WORLD_LIMIT)
    return float(arr[0]), float(arr[1])


def _bits(value, name):
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)):
        raise SimulationError(f"{name} must be an integer bit set, got {value!r}")
    v = int(value)
    if not 0 <= v <= ALL:
        raise SimulationError(f"{name} = {v} is not a 64-bit bit set (0 <= {name} < 2**64)")
    return np.uint64(v)


_EVERY_CATEGORY = (np.uint64(ALL), np.uint64(0), False)


def _filter(mask, category):
    if mask is ALL and category is None:
        return _EVERY_CATEGORY                  # the defaults, as the kernels take them
    m = _bits(mask, "mask")
    if category is None:
        return m, np.uint64(0), False
    return m, _bits(category, "category"), True


def _transform(value):
    """A Transform, (position, angle), (x, y) or (x, y, angle) → (x, y, cos, sin)."""
    if isinstance(value, Transform):
        return value.as_tuple()
    try:
        seq = tuple(value)
    except TypeError as exc:
        raise SimulationError(f"transform must be a Transform, (position, angle), (x, y) or (x, y, angle), "
                              f"got {value!r}") from exc
    if len(seq) == 2 and np.ndim(seq[0]) == 1:
        position, angle = seq
    elif len(seq) == 2:
        position, angle = seq, 0.0
    elif len(seq) == 3:
        position, angle = seq[:2], seq[2]
    else:
        raise SimulationError(f"transform must be a Transform, (position, angle), (x, y) or (x, y, angle), "
                              f"got {value!r}")
    x, y = _point(position, "transform position")
    try:
        a = float(angle)
    except (TypeError, ValueError) as exc:
        raise SimulationError(f"transform angle must be a number, got {angle!r}") from exc
    if not math.isfinite(a):
        raise SimulationError(f"transform angle = {a} is not finite")
    return x, y, math.cos(a), math.sin(a)


def _prepare(world):
    """The body and shape counts and the broad phase's (trees, real boxes), brought up to date with the
    shapes (:func:`_refresh`) unless they are already (``World._query_boxes``). Refuses to run while the
    world is stepping (the refresh rewrites the tree the step is using)."""
    if world._locked:
        raise WorldLockedError("the world is stepping: query it between steps")
    w = world
    nb = w._n_bodies
    ns = w._n_shapes
    bp = w._bp
    if w._query_boxes is None:
        w._query_boxes = _refresh(w._com[:nb], w._angle[:nb], w._local_center[:nb], w._s_body[:ns],
                                  w._s_alive[:ns], w._s_offset[:ns], w._s_count[:ns], w._s_radius[:ns], w._verts,
                                  w._s_proxy[:ns], bp._trees[0], bp._trees[1], bp._lower, bp._upper, bp._flags,
                                  bp._leaf, bp.margin, bp.multiplier, bp._moved, bp._moved_flag, bp._moved_meta)
    return nb, ns, (bp._trees[0], bp._trees[1], bp._lower, bp._upper)


def _shape_handles(world, indices):
    gen = world._s_gen
    geom = world._s_geometry
    return [_world.ShapeHandle(world, s, int(gen[s]), geom[s]) for s in indices.tolist()]


def _ray(world, p1, p2, mask, category, first_only):
    ox, oy = _point(p1, "p1")
    ex, ey = _point(p2, "p2")
    m, cat, use_cat = _filter(mask, category)
    dx = ex - ox
    dy = ey - oy
    if dx == 0.0 and dy == 0.0:
        return None
    nb, ns, broad = _prepare(world)
    w = world
    return _raycast_kernel(w._com[:nb], w._angle[:nb], w._local_center[:nb], w._s_body[:ns], w._s_alive[:ns],
                           w._s_offset[:ns], w._s_count[:ns], w._s_radius[:ns], w._verts, w._normals,
                           w._s_sensor[:ns], w._s_category[:ns], w._s_mask[:ns], w._proxy_shape, *broad,
                           ox, oy, dx, dy, m, cat, use_cat, first_only)


def _hits(world, result):
    shapes, fractions, points, normals = result
    out = []
    for k, s in enumerate(shapes.tolist()):
        b = int(world._s_body[s])
        out.append(WorldRayHit(_world.ShapeHandle(world, s, int(world._s_gen[s]), world._s_geometry[s]),
                               _world.Body(world, b, int(world._gen[b])), points[k].copy(), normals[k].copy(),
                               float(fractions[k])))
    return out


def raycast(world, p1, p2, mask=ALL, category=None):
    """Every non-sensor shape the segment p1 → p2 enters: a list of :class:`WorldRayHit` (shape, body, point,
    normal, fraction), ordered by fraction, then by shape index.

    One hit per shape, at its entry point; a shape containing p1 is not hit (there is no entry). A shape is
    considered when ``shape.category & mask != 0`` (and, with ``category`` given, ``shape.mask & category
    != 0``). p1 == p2 gives no hits.
    """
    res = _ray(world, p1, p2, mask, category, False)
    return [] if res is None else _hits(world, res)


def raycast_first(world, p1, p2, mask=ALL, category=None):
    """The closest hit of :func:`raycast` (lowest shape index on a tie), or None."""
    res = _ray(world, p1, p2, mask, category, True)
    if res is None or res[0].shape[0] == 0:
        return None
    return _hits(world, res)[0]


def query_point(world, point, mask=ALL, category=None):
    """Handles of the shapes containing the point, by shape index (rounded shapes count their radius; the
    surface counts). Sensors included."""
    qx, qy = _point(point, "point")
    m, cat, use_cat = _filter(mask, category)
    nb, ns, broad = _prepare(world)
    w = world
    idx = _point_kernel(w._com[:nb], w._angle[:nb], w._local_center[:nb], w._s_body[:ns], w._s_alive[:ns],
                        w._s_offset[:ns], w._s_count[:ns], w._s_radius[:ns], w._verts, w._normals,
                        w._s_category[:ns], w._s_mask[:ns], w._proxy_shape, *broad, qx, qy, m, cat, use_cat)
    return _shape_handles(world, idx)


def query_aabb(world, lower, upper, mask=ALL, category=None):
    """Handles of the shapes whose tight AABB overlaps the box [lower, upper] (touching counts), by shape
    index. Box2D's semantics: box overlap, not shape overlap. Sensors included."""
    lx, ly = _point(lower, "lower")
    ux, uy = _point(upper, "upper")
    if lx > ux or ly > uy:
        raise SimulationError(f"lower = ({lx}, {ly}) must not exceed upper = ({ux}, {uy})")
    m, cat, use_cat = _filter(mask, category)
    nb, ns, broad = _prepare(world)
    w = world
    lower, upper = w._query_boxes
    idx = _aabb_kernel(lower, upper, w._s_alive[:ns], w._s_category[:ns], w._s_mask[:ns], w._proxy_shape, *broad,
                       lx, ly, ux, uy, m, cat, use_cat)
    return _shape_handles(world, idx)


def query_shape(world, shape, transform, mask=ALL, category=None):
    """Handles of the shapes overlapping ``shape`` (a carom geometry shape) placed at ``transform`` (a
    Transform, (position, angle), (x, y) or (x, y, angle)), by shape index. Overlap is exact and strict:
    separation < 0, so shapes that only touch are left out. Sensors included."""
    if not isinstance(shape, Shape):
        raise SimulationError(f"shape must be a carom shape (Circle, Capsule, Segment, Polygon), got {shape!r}")
    qx, qy, qc, qs = _transform(transform)
    m, cat, use_cat = _filter(mask, category)
    nb, ns, broad = _prepare(world)
    w = world
    idx = _shape_kernel(w._com[:nb], w._angle[:nb], w._local_center[:nb], w._s_body[:ns], w._s_alive[:ns],
                        w._s_offset[:ns], w._s_count[:ns], w._s_radius[:ns], w._verts, w._normals,
                        w._s_category[:ns], w._s_mask[:ns], w._proxy_shape, *broad, shape._kernel_vertices,
                        shape._kernel_normals, float(shape.radius), qx, qy, qc, qs, m, cat, use_cat)
    return _shape_handles(world, idx)
