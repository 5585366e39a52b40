"""GJK distance between two convex shapes (a core point set plus a rounding radius).

The distance between convex sets A and B is the distance from the origin to their Minkowski difference
M = B ⊖ A = {b − a}. GJK never builds M: it only needs M's support function

    s_M(d) = s_B(d) − s_A(−d),        s_X(d) = argmax_{x ∈ X} x·d,

and keeps a simplex W ⊂ M of 1–3 points. Each iteration replaces W by the smallest face of W whose Voronoi
region contains the origin (barycentric coordinates, below), takes the direction d from that face towards the
origin and adds s_M(d). It stops when

- W is a triangle containing the origin (the cores overlap: distance exactly 0),
- the origin lies on W (touching cores: distance 0),
- the new support point is already in W, or does not get further along d than W does (no progress: W's
  closest point is M's closest point; for polytopes this is exact, not a tolerance).

Barycentric solving in 2D. For an edge w1w2 (e = w2 − w1) the closest point to the origin is
λ1·w1 + λ2·w2 with unnormalised weights λ1 ∝ w2·e and λ2 ∝ −w1·e; a non-positive weight means a vertex
region. For a triangle, the weight of w_k in the interior is the signed area of the triangle the origin makes
with the opposite edge, cross(w_i, w_j) (times the orientation of the triangle, so all are positive inside).

The search direction for an edge is the edge's perpendicular on the origin's side (exact), not −(closest
point) (which suffers cancellation near contact), as in Box2D.

Radii are handled after GJK, on the closest core points: the shapes' distance is max(d_core − rA − rB, 0),
and the witness points move by rA (rB) along the unit vector from A's to B's core point.

Pair kernels work in A's frame: B's vertices are brought in by the relative transform (tx, ty, tc, ts) =
inv(xf_A)·xf_B. B's support is taken in B's frame (d rotated back) so no transformed copy is allocated.
"""
from typing import TYPE_CHECKING
if TYPE_CHECKING:  # (annotations only)
    from typing import Tuple
    from .._types import Any, ArrayLike, Bits, Optional, Points, TransformLike, Vec2
import math
from collections import namedtuple

import numpy as np

from .._jit import njit
from ..constants import GJK_MAX_ITERATIONS
from ..errors import GeometryError
from . import shapes as _shapes
from ._math import relative_transform

DistanceResult = namedtuple("DistanceResult", ("distance", "point_a", "point_b"))


# ----------------------------------------------------------------------------------------------------------
# kernels


@njit
def support_index(v, dx, dy):
    """Index of the vertex of ``v`` farthest along (dx, dy) (the first one on ties: deterministic)."""
    best = 0
    best_p = v[0, 0] * dx + v[0, 1] * dy
    for i in range(1, v.shape[0]):
        p = v[i, 0] * dx + v[i, 1] * dy
        if p > best_p:
            best = i
            best_p = p
    return best


@njit
def support_index_b(vB, tc, ts, dx, dy):
    """Support index of B (local vertices ``vB``, rotation (tc, ts) into A's frame) along A-frame (dx, dy)."""
    return support_index(vB, tc * dx + ts * dy, -ts * dx + tc * dy)


@njit
def _b_point(vB, i, tx, ty, tc, ts):
    x = vB[i, 0]
    y = vB[i, 1]
    return tc * x - ts * y + tx, ts * x + tc * y + ty


@njit
def _set_vertex(W, I, k, vA, vB, iA, iB, tx, ty, tc, ts):
    """Simplex row k: [pA.x, pA.y, pB.x, pB.y, w.x, w.y] with w = pB − pA (all in A's frame)."""
    ax = vA[iA, 0]
    ay = vA[iA, 1]
    bx, by = _b_point(vB, iB, tx, ty, tc, ts)
    W[k, 0] = ax
    W[k, 1] = ay
    W[k, 2] = bx
    W[k, 3] = by
    W[k, 4] = bx - ax
    W[k, 5] = by - ay
    I[k, 0] = iA
    I[k, 1] = iB


@njit
def _copy_row(W, I, src, dst):
    """Row src of the simplex into row dst (callers pass int64 row numbers, not literals: each literal
    value would compile this function again)."""
    for c in range(6):
        W[dst, c] = W[src, c]
    I[dst, 0] = I[src, 0]
    I[dst, 1] = I[src, 1]


@njit
def _solve2(W, I):
    """Reduce the segment W0W1 to the feature closest to the origin; returns the new count."""
    w1x = W[0, 4]
    w1y = W[0, 5]
    w2x = W[1, 4]
    w2y = W[1, 5]
    ex = w2x - w1x
    ey = w2y - w1y
    l2 = -(w1x * ex + w1y * ey)     # weight of w2
    if l2 <= 0.0:
        W[0, 6] = 1.0
        return 1
    l1 = w2x * ex + w2y * ey        # weight of w1
    if l1 <= 0.0:
        _copy_row(W, I, np.int64(1), np.int64(0))
        W[0, 6] = 1.0
        return 1
    inv = 1.0 / (l1 + l2)
    W[0, 6] = l1 * inv
    W[1, 6] = l2 * inv
    return 2


@njit
def _solve3(W, I):
    """Reduce the triangle W0W1W2 to the feature whose Voronoi region holds the origin; returns the count."""
    w1x = W[0, 4]
    w1y = W[0, 5]
    w2x = W[1, 4]
    w2y = W[1, 5]
    w3x = W[2, 4]
    w3y = W[2, 5]
    # edge 12
    e12x = w2x - w1x
    e12y = w2y - w1y
    d12_1 = w2x * e12x + w2y * e12y
    d12_2 = -(w1x * e12x + w1y * e12y)
    # edge 13
    e13x = w3x - w1x
    e13y = w3y - w1y
    d13_1 = w3x * e13x + w3y * e13y
    d13_2 = -(w1x * e13x + w1y * e13y)
    # edge 23
    e23x = w3x - w2x
    e23y = w3y - w2y
    d23_1 = w3x * e23x + w3y * e23y
    d23_2 = -(w2x * e23x + w2y * e23y)
    # triangle (signed areas times orientation)
    n123 = e12x * e13y - e12y * e13x
    d123_1 = n123 * (w2x * w3y - w2y * w3x)
    d123_2 = n123 * (w3x * w1y - w3y * w1x)
    d123_3 = n123 * (w1x * w2y - w1y * w2x)

    if d12_2 <= 0.0 and d13_2 <= 0.0:           # vertex 1
        W[0, 6] = 1.0
        return 1
    if d12_1 > 0.0 and d12_2 > 0.0 and d123_3 <= 0.0:   # edge 12
        inv = 1.0 / (d12_1 + d12_2)
        W[0, 6] = d12_1 * inv
        W[1, 6] = d12_2 * inv
        return 2
    if d13_1 > 0.0 and d13_2 > 0.0 and d123_2 <= 0.0:   # edge 13
        inv = 1.0 / (d13_1 + d13_2)
        W[0, 6] = d13_1 * inv
        W[1, 6] = d13_2 * inv
        _copy_row(W, I, np.int64(2), np.int64(1))
        return 2
    if d12_1 <= 0.0 and d23_2 <= 0.0:           # vertex 2
        _copy_row(W, I, np.int64(1), np.int64(0))
        W[0, 6] = 1.0
        return 1
    if d13_1 <= 0.0 and d23_1 <= 0.0:           # vertex 3
        _copy_row(W, I, np.int64(2), np.int64(0))
        W[0, 6] = 1.0
        return 1
    if d23_1 > 0.0 and d23_2 > 0.0 and d123_1 <= 0.0:   # edge 23
        inv = 1.0 / (d23_1 + d23_2)
        _copy_row(W, I, np.int64(1), np.int64(0))
        _copy_row(W, I, np.int64(2), np.int64(1))
        W[0, 6] = d23_1 * inv
        W[1, 6] = d23_2 * inv
        return 2
    s = d123_1 + d123_2 + d123_3
    if not s > 0.0:
        # Degenerate (collinear) triangle not caught above: fall back to the segment solver on w1w2.
        return _solve2(W, I)
    inv = 1.0 / s
    W[0, 6] = d123_1 * inv
    W[1, 6] = d123_2 * inv
    W[2, 6] = d123_3 * inv
    return 3


@njit
def gjk_core(vA, vB, tx, ty, tc, ts):
    """GJK between the cores. Returns (distance, pAx, pAy, pBx, pBy, iterations, count, iA, iB, jA, jB).

    ``count`` is the final simplex size: 1 = the closest features are a vertex of A and a vertex of B
    (indices iA, iB); 2 = a vertex against an edge (the edge's ends are the two rows: A vertices iA, jA and
    B vertices iB, jB, one pair equal); 3 = the cores overlap. Distance is exactly 0 on overlap or touching.
    """
    # rows: [pA.x, pA.y, pB.x, pB.y, w.x, w.y, barycentric weight]; I: [iA, iB, saved iA, saved iB]
    W = np.zeros((3, 7))
    I = np.zeros((3, 4), dtype=np.int64)
    zero = np.int64(0)   # not literals: each literal argument value would compile _set_vertex again
    _set_vertex(W, I, zero, vA, vB, zero, zero, tx, ty, tc, ts)
    W[0, 6] = 1.0
    count = 1
    it = 0
    while it < GJK_MAX_ITERATIONS:
        it += 1
        nsave = count
        for k in range(count):
            I[k, 2] = I[k, 0]
            I[k, 3] = I[k, 1]
        if count == 2:
            count = _solve2(W, I)
        elif count == 3:
            count = _solve3(W, I)
        if count == 3:
            break
        # direction from the simplex towards the origin
        if count == 1:
            dx = -W[0, 4]
            dy = -W[0, 5]
            if dx == 0.0 and dy == 0.0:
                break
            vd = -(dx * dx + dy * dy)
        else:
            ex = W[1, 4] - W[0, 4]
            ey = W[1, 5] - W[0, 5]
            sgn = ex * (-W[0, 5]) - ey * (-W[0, 4])
            if sgn > 0.0:
                dx = -ey
                dy = ex
            elif sgn < 0.0:
                dx = ey
                dy = -ex
            else:
                break                                     # origin on the segment
            vd = W[0, 4] * dx + W[0, 5] * dy
        iA = support_index(vA, -dx, -dy)
        iB = support_index_b(vB, tc, ts, dx, dy)
        dup = False
        for k in range(nsave):
            if I[k, 2] == iA and I[k, 3] == iB:
                dup = True
        if dup:
            break
        _set_vertex(W, I, count, vA, vB, iA, iB, tx, ty, tc, ts)
        if W[count, 4] * dx + W[count, 5] * dy <= vd:
            break                                         # no progress along d: converged
        count += 1

    if count == 3:
        px = W[0, 6] * W[0, 0] + W[1, 6] * W[1, 0] + W[2, 6] * W[2, 0]
        py = W[0, 6] * W[0, 1] + W[1, 6] * W[1, 1] + W[2, 6] * W[2, 1]
        return 0.0, px, py, px, py, it, 3, I[0, 0], I[0, 1], I[1, 0], I[1, 1]
    if count == 1:
        ax = W[0, 0]
        ay = W[0, 1]
        bx = W[0, 2]
        by = W[0, 3]
        d = math.sqrt(W[0, 4] * W[0, 4] + W[0, 5] * W[0, 5])
        return d, ax, ay, bx, by, it, 1, I[0, 0], I[0, 1], I[0, 0], I[0, 1]
    ax = W[0, 6] * W[0, 0] + W[1, 6] * W[1, 0]
    ay = W[0, 6] * W[0, 1] + W[1, 6] * W[1, 1]
    bx = W[0, 6] * W[0, 2] + W[1, 6] * W[1, 2]
    by = W[0, 6] * W[0, 3] + W[1, 6] * W[1, 3]
    # distance from the origin to the line w1w2: |cross(w1, w2)| / |w2 − w1| (exact 0 when touching)
    ex = W[1, 4] - W[0, 4]
    ey = W[1, 5] - W[0, 5]
    el = math.sqrt(ex * ex + ey * ey)
    if el > 0.0:
        d = abs(W[0, 4] * W[1, 5] - W[0, 5] * W[1, 4]) / el
    else:
        d = math.sqrt(W[0, 4] * W[0, 4] + W[0, 5] * W[0, 5])
    return d, ax, ay, bx, by, it, 2, I[0, 0], I[0, 1], I[1, 0], I[1, 1]


@njit
def shape_distance(vA, rA, vB, rB, tx, ty, tc, ts):
    """Distance between rounded shapes, in A's frame: (distance, pAx, pAy, pBx, pBy, iterations).

    distance = max(d_core − rA − rB, 0). When apart, pA/pB are the closest points on the rounded surfaces;
    when the rounded shapes overlap both are the point midway between the surfaces along the core
    direction (or the common core point when the cores overlap).
    """
    res = gjk_core(vA, vB, tx, ty, tc, ts)
    d = res[0]
    ax = res[1]
    ay = res[2]
    bx = res[3]
    by = res[4]
    it = res[5]
    rsum = rA + rB
    if d > 0.0:
        inv = 1.0 / d
        nx = (bx - ax) * inv
        ny = (by - ay) * inv
        if d > rsum:
            return d - rsum, ax + rA * nx, ay + rA * ny, bx - rB * nx, by - rB * ny, it
        sax = ax + rA * nx
        say = ay + rA * ny
        sbx = bx - rB * nx
        sby = by - rB * ny
        mx = 0.5 * (sax + sbx)
        my = 0.5 * (say + sby)
        return 0.0, mx, my, mx, my, it
    mx = 0.5 * (ax + bx)
    my = 0.5 * (ay + by)
    return 0.0, mx, my, mx, my, it


@njit
def shapes_overlap(vA, rA, vB, rB, tx, ty, tc, ts):
    """True when the rounded shapes overlap or touch: d_core ≤ rA + rB."""
    return gjk_core(vA, vB, tx, ty, tc, ts)[0] <= rA + rB


# ----------------------------------------------------------------------------------------------------------
# Python wrappers


def _check_shape(s, name):
    if not isinstance(s, _shapes.Shape):
        raise GeometryError(f"{name} must be a carom shape (Circle, Capsule, Segment, Polygon), got {s!r}")
    return s


def prepare_pair(a, xf_a, b, xf_b):
    """Validate a shape pair and return (a, b, A's kernel transform, B-in-A relative transform)."""
    _check_shape(a, "shape a")
    _check_shape(b, "shape b")
    ta = _shapes.as_transform(xf_a).as_tuple()
    tb = _shapes.as_transform(xf_b).as_tuple()
    rel = relative_transform(ta[0], ta[1], ta[2], ta[3], tb[0], tb[1], tb[2], tb[3])
    return ta, rel


def _to_world(ta, x, y):
    return np.array([ta[2] * x - ta[3] * y + ta[0], ta[3] * x + ta[2] * y + ta[1]])


def distance(a: "Any", xf_a: "TransformLike", b: "Any", xf_b: "TransformLike") -> DistanceResult:
    """Distance between two placed shapes and the closest points (world).

    ``xf_a``/``xf_b`` are Transforms, (x, y) or (x, y, angle). The distance is 0 when the shapes overlap or
    touch; then both points are the same point inside the overlap.

    ``a`` and ``b`` are shapes, placed by ``xf_a`` and ``xf_b``.
    """
    ta, rel = prepare_pair(a, xf_a, b, xf_b)
    d, ax, ay, bx, by, _ = shape_distance(a._kernel_vertices, a.radius, b._kernel_vertices, b.radius, *rel)
    return DistanceResult(float(d), _to_world(ta, ax, ay), _to_world(ta, bx, by))


def overlap(a: "Any", xf_a: "TransformLike", b: "Any", xf_b: "TransformLike") -> bool:
    """True when the placed shapes overlap or touch.

    ``a`` and ``b`` are shapes, placed by ``xf_a`` and ``xf_b`` (Transforms, (x, y) or (x, y, angle)).
    """
    _, rel = prepare_pair(a, xf_a, b, xf_b)
    return bool(shapes_overlap(a._kernel_vertices, a.radius, b._kernel_vertices, b.radius, *rel))
