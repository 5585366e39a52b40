"""World queries: ray casts and overlap tests against every shape of a rigid world.

Each query is one compiled call, after one more for the first query of a world state:

1. the first query after a step, or after anything that moved, added or removed a shape
   (``body.position = ...``), brings the broad phase up to date (:func:`_refresh`): the step leaves boxes
   that enclose its motion, not the shapes where they came to rest. Every live shape's box is recomputed
   from the current body transforms and handed to ``tree_update``, which gives new fat boxes only to the
   proxies that left theirs (the rest cost a containment test). Moved proxies go on the tree's move buffer, so
   the next step finds their new candidate pairs as usual; the step rewrites every box anyway, so a query
   never changes what a step computes. The tight boxes are kept (``WorldTables.query_boxes``) until the world
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

**World services** on the same path (one compiled call after the refresh):

- nearest (pymunk's point_query_nearest): the candidates are the proxies meeting the point's box grown by the
  maximum distance; per shape the signed distance d_core − radius (:func:`_closest_on_core`: negative inside
  the core polygon, by the edge of largest separation) and the closest surface point. Sensors included.
- shape cast (Box2D's b2World_CastShape): the candidates meet the box swept by the cast shape; per shape the
  time of impact of a pure translation by conservative advancement (:func:`_cast_kernel`). Sensors skipped,
  as by rays.
- explosion (Box2D's b2World_Explode): the nearest query's candidates within radius + falloff, each with the
  point where the blast acts and the shape's projected perimeter across the blast (:func:`_near_kernel`);
  Python sums the impulses per body, checks every resulting velocity and only then writes them.
"""
import math
import numbers
from collections import namedtuple

import numpy as np

from .. import _validate
from .._jit import njit, entry_njit
from ._step import body_origin, DYNAMIC
from ._layout import TreeTable
from ..constants import WORLD_LIMIT, FLOAT32_LIMIT, ANGLE_LIMIT, TOI_TARGET, TOI_MAX_ITERATIONS
from ..errors import SimulationError, WorldLockedError
from ..geometry.aabb import core_aabb
from ..geometry.gjk import gjk_core
from ..geometry.toi import conservative_advancement
from ..geometry.raycast import raycast_world_kernel
from ..geometry.shapes import Shape, Transform
from ..geometry._math import relative_transform, closest_on_segment, normalize
from ..geometry._pairs import ray_box_fraction, order_by_key_then_id
from ..geometry._tree import tree_update
from ..geometry._tree_query import tree_query, tree_raycast

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


@njit
def _closest_on_core(v, n, qx, qy):
    """(d, cx, cy, ux, uy): the signed distance d from q to the convex core (negative inside a core polygon),
    the closest point c of the core's boundary and the unit direction u in which the rounded surface lies
    from c (its point nearest q is c + radius·u, and the signed distance to it is d − radius); body frame.

    Outside the core u = (q − c)/|q − c|. Inside a core polygon c is q's projection on the edge i of largest
    separation s_i = n_i·(q − v_i) ≤ 0, d = s_i and u = n_i: the projection lies on that edge (were it beyond
    the edge, the segment from q to it would leave the polygon through another edge j at a distance
    < −s_i, so s_j > s_i). A point on a segment core takes the segment's normal, one on a point core +x.
    """
    count = v.shape[0]
    if count == 1:
        ux, uy, d = normalize(qx - v[0, 0], qy - v[0, 1])
        if d == 0.0:
            ux = 1.0
        return d, v[0, 0], v[0, 1], ux, uy
    if count >= 3:
        worst = 0
        sep = -np.inf
        for i in range(count):
            si = n[i, 0] * (qx - v[i, 0]) + n[i, 1] * (qy - v[i, 1])
            if si > sep:
                sep = si
                worst = i
        if sep <= 0.0:
            return sep, qx - sep * n[worst, 0], qy - sep * n[worst, 1], n[worst, 0], n[worst, 1]
    best = np.inf
    bx = 0.0
    by = 0.0
    edges = 1 if count == 2 else count
    for i in range(edges):
        j = i + 1 if i + 1 < count else 0
        cx, cy = closest_on_segment(v[i, 0], v[i, 1], v[j, 0], v[j, 1], qx, qy)[:2]
        d = math.sqrt((qx - cx) ** 2 + (qy - cy) ** 2)
        if d < best:
            best = d
            bx = cx
            by = cy
    ux, uy, d = normalize(qx - bx, qy - by)
    if d == 0.0:
        ux = n[0, 0]
        uy = n[0, 1]
    return best, bx, by, ux, uy


@njit
def _core_centroid(v):
    """The core's centroid (body frame): the area centroid of a core polygon (triangle fan), the midpoint of
    a segment core, the point core itself (Box2D's b2GetShapeCentroid)."""
    count = v.shape[0]
    if count < 3:
        sx = 0.0
        sy = 0.0
        for i in range(count):
            sx += v[i, 0]
            sy += v[i, 1]
        return sx / count, sy / count
    area = 0.0
    cx = 0.0
    cy = 0.0
    ox = v[0, 0]
    oy = v[0, 1]
    for i in range(1, count - 1):
        ax = v[i, 0] - ox
        ay = v[i, 1] - oy
        bx = v[i + 1, 0] - ox
        by = v[i + 1, 1] - oy
        a = 0.5 * (ax * by - ay * bx)
        area += a
        cx += a * (ax + bx) / 3.0
        cy += a * (ay + by) / 3.0
    return ox + cx / area, oy + cy / area


@entry_njit
def _near_kernel(com, angle, local_center, s_body, s_alive, s_offset, s_count, s_radius, verts, normals,
                 s_category, s_mask, proxy_shape, moving, static, bp_lower, bp_upper,
                 qx, qy, max_distance, mask, category, use_category):
    """Every shape whose signed distance to q is ≤ max_distance, by ascending index: (shapes, distances,
    points, pushes).

    ``distances`` are signed (negative inside; :func:`_closest_on_core` minus the radius) and ``points`` the
    closest points of the shapes' surfaces (world). ``pushes`` (k, 5) are what an explosion at q does to the
    shape (Box2D's b2World_Explode): the point p where the impulse acts, the closest surface point or, when q
    is inside the shape (distance ≤ 0), the core's centroid; the unit direction u from q to p (+x when p = q);
    and the shape's projected perimeter across u, the width of the shape seen from q,

        w = max_j v_j·t − min_j v_j·t + 2·radius,     t = u rotated by +90° (in the body frame),

    which is 2r for a circle and the core's extent across u plus 2r for the other kinds.

    Candidates are the proxies whose box meets q ± max_distance: a shape within max_distance of q has its
    tight box within max_distance of q along each axis.
    """
    pad = _BOX_PAD_RELATIVE * (1.0 + max(abs(qx), abs(qy)) + max_distance)
    proxies = tree_query(moving, static, bp_lower, bp_upper, qx - max_distance - pad, qy - max_distance - pad,
                         qx + max_distance + pad, qy + max_distance + pad)
    m = proxies.shape[0]
    out = np.empty(m, np.int64)
    dist = np.empty(m)
    points = np.empty((m, 2))
    pushes = np.empty((m, 5))
    k = 0
    for a in range(m):
        s = proxy_shape[proxies[a]]
        if not _passes(s, s_alive, s_category, s_mask, mask, category, use_category):
            continue
        x, y, c, sn = body_origin(com, angle, local_center, s_body[s])
        lx = c * (qx - x) + sn * (qy - y)
        ly = -sn * (qx - x) + c * (qy - y)
        o = s_offset[s]
        e = o + s_count[s]
        r = s_radius[s]
        d, cx, cy, ux, uy = _closest_on_core(verts[o:e], normals[o:e], lx, ly)
        d -= r
        if not d <= max_distance:
            continue
        # surface point, then the push point, both in the body frame
        sx = cx + r * ux
        sy = cy + r * uy
        px, py = sx, sy
        if d <= 0.0:
            px, py = _core_centroid(verts[o:e])
        tx, ty, length = normalize(px - lx, py - ly)
        if length == 0.0:
            # +x in the world, in the body frame
            tx = c
            ty = -sn
        lo = np.inf
        hi = -np.inf
        for j in range(o, e):
            proj = -ty * verts[j, 0] + tx * verts[j, 1]
            lo = min(lo, proj)
            hi = max(hi, proj)
        out[k] = s
        dist[k] = d
        points[k, 0] = c * sx - sn * sy + x
        points[k, 1] = sn * sx + c * sy + y
        pushes[k, 0] = c * px - sn * py + x
        pushes[k, 1] = sn * px + c * py + y
        pushes[k, 2] = c * tx - sn * ty
        pushes[k, 3] = sn * tx + c * ty
        pushes[k, 4] = hi - lo + 2.0 * r
        k += 1
    order = np.argsort(out[:k], kind="mergesort")
    return out[:k][order], dist[:k][order], points[:k][order], pushes[:k][order]


@entry_njit
def _cast_kernel(com, angle, local_center, s_body, s_alive, s_offset, s_count, s_radius, verts, s_sensor,
                 s_category, s_mask, proxy_shape, moving, static, bp_lower, bp_upper,
                 qv, qr, qx, qy, qc, qs, dx, dy, mask, category, use_category):
    """The first shape the query shape (core qv, radius qr) meets when its frame moves from (qx, qy, qc, qs)
    by (dx, dy) without turning: (shape or −1, fraction, point x, y, normal x, y).

    Candidates are the proxies whose box meets the box swept by the query shape (the union of its boxes at
    the start and at the end: a translated convex set stays inside the hull of the two). Each non-sensor
    candidate that passes the filter gets a time of impact by conservative advancement
    (:func:`carom.geometry.toi.conservative_advancement`): with no rotation its bound is exact along the
    closest-point direction n, t += (d − target/2)/(−n·Δ), so it stops at a fraction where the gap is
    ≤ TOI_TARGET and never beyond the first contact. The smallest fraction wins, the lower shape index on a
    tie. At the winning fraction GJK gives the closest core points; the normal is the hit shape's outward
    unit normal there (from its core point towards the cast shape's) and the point lies on its surface
    (core point + radius·normal). When the cores overlap (a cast that starts inside a shape) there is no
    closest-point direction: the point is GJK's point in the overlap and the normal is −Δ/|Δ| (zero for a
    zero translation).
    """
    lx, ly, ux, uy = core_aabb(qv, qr, qx, qy, qc, qs)
    lx = min(lx, lx + dx)
    ly = min(ly, ly + dy)
    ux = max(ux, ux + dx)
    uy = max(uy, uy + dy)
    pad = _BOX_PAD_RELATIVE * (1.0 + max(max(abs(lx), abs(ly)), max(abs(ux), abs(uy))))
    proxies = tree_query(moving, static, bp_lower, bp_upper, lx - pad, ly - pad, ux + pad, uy + pad)
    qa = math.atan2(qs, qc)
    best_s = -1
    best_t = np.inf
    for a in range(proxies.shape[0]):
        s = proxy_shape[proxies[a]]
        if s_sensor[s] or not _passes(s, s_alive, s_category, s_mask, mask, category, use_category):
            continue
        b = s_body[s]
        o = s_offset[s]
        e = o + s_count[s]
        t = conservative_advancement(qv, qr, 0.0, 0.0, qx, qy, qa, qx + dx, qy + dy, qa,
                                     verts[o:e], s_radius[s], local_center[b, 0], local_center[b, 1],
                                     com[b, 0], com[b, 1], angle[b], com[b, 0], com[b, 1], angle[b],
                                     TOI_TARGET, TOI_MAX_ITERATIONS, -np.inf)[0]
        if t < 0.0:
            continue
        if t < best_t or (t == best_t and s < best_s):
            best_t = t
            best_s = s
    if best_s < 0:
        return -1, 0.0, 0.0, 0.0, 0.0, 0.0
    s = best_s
    x, y, c, sn = body_origin(com, angle, local_center, s_body[s])
    fx = qx + best_t * dx
    fy = qy + best_t * dy
    tx, ty, tc, ts = relative_transform(fx, fy, qc, qs, x, y, c, sn)
    o = s_offset[s]
    res = gjk_core(qv, verts[o:o + s_count[s]], tx, ty, tc, ts)
    d = res[0]
    if d > 0.0:
        # A's frame: from the cast shape's core point to the hit shape's, turned to the world
        lnx = (res[3] - res[1]) / d
        lny = (res[4] - res[2]) / d
        nx = -(qc * lnx - qs * lny)
        ny = -(qs * lnx + qc * lny)
        bx = qc * res[3] - qs * res[4] + fx
        by = qs * res[3] + qc * res[4] + fy
        r = s_radius[s]
        return s, best_t, bx + r * nx, by + r * ny, nx, ny
    nx, ny, length = normalize(-dx, -dy)
    px = qc * res[1] - qs * res[2] + fx
    py = qs * res[1] + qc * res[2] + fy
    return s, best_t, px, py, nx, ny


# --------------------------------------------------------------------------------------------------------
# Python wrappers: validation, the world's arrays in, handles out
# --------------------------------------------------------------------------------------------------------

def _point(value, name):
    """A finite point inside the world limit, as floats (the world's own vector check)."""
    arr = _validate.vector(value, name, WORLD_LIMIT)
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
    a = _validate.number(angle, "transform angle", magnitude=ANGLE_LIMIT)      # (refuses bools, NaN, inf)
    return x, y, math.cos(a), math.sin(a)


def _prepare(world):
    """The body and shape counts and the broad phase's (trees, real boxes), brought up to date with the
    shapes (:func:`_refresh`) unless they are already (``WorldTables.query_boxes``). Refuses to run while the
    world is stepping (the refresh rewrites the tree the step is using)."""
    if world.tables.locked:
        raise WorldLockedError("the world is stepping: query it between steps")
    w = world
    t = w.tables
    nb = t.n_bodies
    ns = t.n_shapes
    bp = t.bp
    if t.query_boxes is None:
        bp.flush()
        tree = TreeTable(*bp.step_table())
        t.query_boxes = _refresh(t.com[:nb], t.angle[:nb], t.local_center[:nb], t.s_body[:ns], t.s_alive[:ns],
                                 t.s_offset[:ns], t.s_count[:ns], t.s_radius[:ns], t.verts, t.s_proxy[:ns],
                                 tree.moving, tree.static, tree.lower, tree.upper, tree.flags, tree.leaf, tree.margin,
                                 tree.multiplier, tree.moved, tree.moved_flag, tree.moved_meta)
    tree = TreeTable(*bp.step_table())
    return nb, ns, (tree.moving, tree.static, tree.lower, tree.upper)


def _shape_handles(world, indices):
    # (handles through the world's public calls: this module sits below the handles' own, which use it)
    return [world.shape_handle(s) for s in indices.tolist()]


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
    t = w.tables
    return _raycast_kernel(t.com[:nb], t.angle[:nb], t.local_center[:nb], t.s_body[:ns], t.s_alive[:ns],
                           t.s_offset[:ns], t.s_count[:ns], t.s_radius[:ns], t.verts, t.normals,
                           t.s_sensor[:ns], t.s_category[:ns], t.s_mask[:ns], t.proxy_shape, *broad,
                           ox, oy, dx, dy, m, cat, use_cat, first_only)


def _hits(world, result):
    shapes, fractions, points, normals = result
    out = []
    for k, s in enumerate(shapes.tolist()):
        b = int(world.tables.s_body[s])
        out.append(WorldRayHit(world.shape_handle(s),
                               world.body_handle(b), points[k].copy(), normals[k].copy(),
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
    t = w.tables
    idx = _point_kernel(t.com[:nb], t.angle[:nb], t.local_center[:nb], t.s_body[:ns], t.s_alive[:ns],
                        t.s_offset[:ns], t.s_count[:ns], t.s_radius[:ns], t.verts, t.normals,
                        t.s_category[:ns], t.s_mask[:ns], t.proxy_shape, *broad, qx, qy, m, cat, use_cat)
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
    t = w.tables
    lower, upper = t.query_boxes
    idx = _aabb_kernel(lower, upper, t.s_alive[:ns], t.s_category[:ns], t.s_mask[:ns], t.proxy_shape, *broad,
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
    t = w.tables
    idx = _shape_kernel(t.com[:nb], t.angle[:nb], t.local_center[:nb], t.s_body[:ns], t.s_alive[:ns],
                        t.s_offset[:ns], t.s_count[:ns], t.s_radius[:ns], t.verts, t.normals,
                        t.s_category[:ns], t.s_mask[:ns], t.proxy_shape, *broad, shape._kernel_vertices,
                        shape._kernel_normals, float(shape.radius), qx, qy, qc, qs, m, cat, use_cat)
    return _shape_handles(world, idx)


NearestShape = namedtuple("NearestShape", ["shape", "body", "point", "distance"])
NearestShape.__doc__ = """The shape nearest to a point (:func:`query_nearest`, pymunk's point_query_nearest): the
``shape`` (ShapeHandle) and its ``body`` (Body), the closest ``point`` of its surface (world) and the signed
``distance`` from the query point to that surface (negative inside the shape)."""

WorldCastHit = namedtuple("WorldCastHit", ["shape", "body", "point", "normal", "fraction"])
WorldCastHit.__doc__ = """The first shape a swept shape meets (:func:`cast_shape`, Box2D's b2World_CastShape): the
``shape`` (ShapeHandle) and its ``body`` (Body), the ``point`` of its surface where the swept shape touches it,
its outward unit surface ``normal`` there and the ``fraction`` of the translation travelled (in [0, 1])."""


def _near(world, qx, qy, max_distance, m, cat, use_cat):
    nb, ns, broad = _prepare(world)
    w = world
    t = w.tables
    return _near_kernel(t.com[:nb], t.angle[:nb], t.local_center[:nb], t.s_body[:ns], t.s_alive[:ns],
                        t.s_offset[:ns], t.s_count[:ns], t.s_radius[:ns], t.verts, t.normals,
                        t.s_category[:ns], t.s_mask[:ns], t.proxy_shape, *broad, qx, qy, max_distance,
                        m, cat, use_cat)


def query_nearest(world, point, max_distance, mask=ALL, category=None):
    """The shape whose surface is nearest to ``point``, within ``max_distance`` (≥ 0), as
    :class:`NearestShape` (shape, body, point, distance), or None. Sensors included.

    The distance is signed: d_core − radius, with d_core the distance from the point to the shape's convex
    core, negative inside a core polygon (see :func:`_closest_on_core`); so a point inside a shape gets the
    negative depth to its surface, and the nearest shape of a point inside several is the one it is deepest
    in. The lowest shape index wins a tie.
    """
    qx, qy = _point(point, "point")
    dmax = _validate.number(max_distance, "max_distance", low=0.0)
    m, cat, use_cat = _filter(mask, category)
    shapes, dist, points, _ = _near(world, qx, qy, dmax, m, cat, use_cat)
    if shapes.shape[0] == 0:
        return None
    k = int(np.argmin(dist))                 # the first of equal distances: the lowest index
    s = int(shapes[k])
    b = int(world.tables.s_body[s])
    return NearestShape(world.shape_handle(s),
                        world.body_handle(b), points[k].copy(), float(dist[k]))


def cast_shape(world, shape, transform, translation, mask=ALL, category=None):
    """The first non-sensor shape that ``shape`` (a carom geometry shape) placed at ``transform`` (as in
    :func:`query_shape`) meets when moved by ``translation`` without turning, as :class:`WorldCastHit` (shape,
    body, point, normal, fraction), or None.

    The fraction is where the gap first closes to within TOI_TARGET (a quarter of the linear slop): never
    after the true first contact and at most TOI_TARGET/|translation| before it, so that the shape moved there
    does not overlap what it hit (Box2D's shape cast also stops short by a target gap). A shape already within
    TOI_TARGET at the start is hit at fraction 0. See :func:`_cast_kernel` for the point and the normal.
    """
    if not isinstance(shape, Shape):
        raise SimulationError(f"shape must be a carom shape (Circle, Capsule, Segment, Polygon), got {shape!r}")
    qx, qy, qc, qs = _transform(transform)
    dx, dy = (float(v) for v in _validate.vector(translation, "translation", 2.0 * WORLD_LIMIT))
    if not (abs(qx + dx) <= WORLD_LIMIT and abs(qy + dy) <= WORLD_LIMIT):
        raise SimulationError(f"translation = ({dx}, {dy}) takes the shape from ({qx}, {qy}) beyond the world "
                              f"limit {WORLD_LIMIT:g} m")
    m, cat, use_cat = _filter(mask, category)
    nb, ns, broad = _prepare(world)
    w = world
    t = w.tables
    s, fraction, px, py, nx, ny = _cast_kernel(
        t.com[:nb], t.angle[:nb], t.local_center[:nb], t.s_body[:ns], t.s_alive[:ns], t.s_offset[:ns],
        t.s_count[:ns], t.s_radius[:ns], t.verts, t.s_sensor[:ns], t.s_category[:ns], t.s_mask[:ns],
        t.proxy_shape, *broad, shape._kernel_vertices, float(shape.radius), qx, qy, qc, qs, dx, dy, m, cat,
        use_cat)
    if s < 0:
        return None
    s = int(s)
    b = int(t.s_body[s])
    return WorldCastHit(w.shape_handle(s),
                        w.body_handle(b), np.array((px, py)), np.array((nx, ny)), float(fraction))


def explode(world, center, radius, impulse_per_length, falloff=0.0, mask=ALL):
    """Push every non-sensor shape of an awake-able dynamic body near ``center`` away from it (Box2D's
    b2World_Explode); returns the bodies pushed, by index.

    A shape whose surface is within ``radius + falloff`` of the center (distance max(d, 0), d as in
    :func:`query_nearest`; nothing blocks the blast) gets the impulse

        J = impulse_per_length · w · scale · u,   scale = 1 for distance ≤ radius, else
                                                   (radius + falloff − distance)/falloff,

    at the point p, with u the unit direction from the center to p and w the shape's projected perimeter
    across u (:func:`_near_kernel`): the blast pushes on the shape's silhouette, so a circle of radius r takes
    impulse_per_length · 2r whatever its distance within ``radius``, and a box its face width. p is the closest
    surface point, or the core's centroid when the center is inside the shape. A negative
    ``impulse_per_length`` pulls (an implosion). Each body's velocity changes by Σ J / m and its angular
    velocity by Σ (p − c) × J / I over its shapes, summed in shape order; the bodies pushed are woken.

    Everything is checked before any body changes: a sum that would take a body beyond the solver's speed
    limit refuses the whole explosion. Like every query, the first one after the world changed brings the
    broad phase up to date first (module docstring), which changes nothing a step computes.
    """
    cx, cy = _point(center, "center")
    r = _validate.number(radius, "radius", low=0.0, magnitude=WORLD_LIMIT)
    f = _validate.number(falloff, "falloff", low=0.0, magnitude=WORLD_LIMIT)
    ipl = _validate.number(impulse_per_length, "impulse_per_length", magnitude=FLOAT32_LIMIT)
    m = _bits(mask, "mask")
    w = world
    t = w.tables
    shapes, dist, _, pushes = _near(world, cx, cy, r + f, m, np.uint64(0), False)
    bodies = t.s_body[shapes]
    keep = (t.kind[bodies] == DYNAMIC) & ~t.s_sensor[shapes]
    shapes, dist, pushes, bodies = shapes[keep], np.maximum(dist[keep], 0.0), pushes[keep], bodies[keep]
    scale = np.ones(shapes.shape[0])
    if f > 0.0:
        beyond = dist > r
        scale[beyond] = np.clip((r + f - dist[beyond]) / f, 0.0, 1.0)
    magnitude = ipl * pushes[:, 4] * scale
    impulse = magnitude[:, None] * pushes[:, 2:4]
    arm = pushes[:, 0:2] - t.com[bodies]
    n = t.n_bodies
    linear = np.zeros((n, 2))
    angular = np.zeros(n)
    np.add.at(linear, bodies, impulse)
    np.add.at(angular, bodies, arm[:, 0] * impulse[:, 1] - arm[:, 1] * impulse[:, 0])
    pushed = np.unique(bodies)
    vel = t.vel[pushed] + t.inv_mass[pushed, None] * linear[pushed]
    angvel = t.angvel[pushed] + t.inv_inertia[pushed] * angular[pushed]
    ok = (np.abs(vel) <= FLOAT32_LIMIT).all(axis=1) & (np.abs(angvel) <= FLOAT32_LIMIT)
    if not ok.all():
        i = int(pushed[np.argmin(ok)])
        raise SimulationError(f"impulse_per_length = {ipl!r} would give body {i} a velocity beyond the solver's "
                              f"limit {FLOAT32_LIMIT:g}")
    t.vel[pushed] = vel
    t.angvel[pushed] = angvel
    for b in pushed.tolist():
        t.wake(b)
    return [w.body_handle(b) for b in pushed.tolist()]
