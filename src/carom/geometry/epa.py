"""EPA: penetration depth and direction of two overlapping convex cores.

When the cores overlap, the origin lies in the Minkowski difference M = A ⊖ B = {a − b}, and the smallest
translation of B that separates the shapes is the origin's distance to M's boundary:

    depth = min over unit n of h_M(n),      h_M(n) = max_{w ∈ M} w·n = h_A(n) + h_B(−n),

attained at an outward normal of one of M's edges; that n points from A to B. (For polygons h_M(n) on an edge
normal of A is minus SAT's separation on that axis, so EPA's depth is SAT's deepest separation, negated.)

EPA grows a polygon P ⊂ M whose vertices are support points of M, kept in counter-clockwise order. Every
edge of P with outward normal n and offset d_e = n·p satisfies d_e ≤ h_M(n). Repeatedly take the edge of
smallest offset and the support point s = s_M(n): if s does not push that edge out (n·s − d_e below
EPA_TOLERANCE relative to the size of s), the edge lies on M's boundary, so d_e = h_M(n) ≥ depth ≥ min_e d_e
= d_e: it is the answer. Otherwise s is inserted between the edge's ends. Support points lie on ∂M in the
angular order of their directions, so P stays convex. M of two polygons is a polygon, so EPA ends after
finitely many insertions with the exact edge (to rounding, ~1e-16 relative).

Initial polygon: the supports in the four axis directions, deduplicated (consecutive repeats). It need not
contain the origin: an edge that has the origin outside has a negative offset, is the smallest, and is pushed
out (h_M(n) ≥ 0 > d_e while the origin is in M). It may also be flat, which is exactly what a point or segment
core against a point or segment core gives:

- M a single point (two point cores at one place): depth 0, normal along the centre offset, else +x;
- M a segment (point against segment, or parallel segments): depth 0, normal perpendicular to M, signed
  along the offset of B's core centroid from A's (else the first edge's side).

A 2-point P is treated as the degenerate polygon with the two opposite edges p0→p1 and p1→p0, like the
2-vertex cores of shapes.
"""
from typing import TYPE_CHECKING
if TYPE_CHECKING:  # (annotations only)
    from typing import Tuple
    from .._types import Any, ArrayLike, Bits, Optional, Points, TransformLike, Vec2
import math

import numpy as np

from .._jit import njit
from ..constants import EPA_MAX_ITERATIONS, EPA_TOLERANCE, GJK_TOUCH_DISTANCE
from .gjk import support_index, support_index_b, _b_point, prepare_pair, gjk_core


@njit
def _support_w(vA, vB, tx, ty, tc, ts, dx, dy):
    """Support point of A ⊖ B along (dx, dy), A's frame."""
    iA = support_index(vA, dx, dy)
    iB = support_index_b(vB, tc, ts, -dx, -dy)
    bx, by = _b_point(vB, iB, tx, ty, tc, ts)
    return vA[iA, 0] - bx, vA[iA, 1] - by


@njit
def _centroid_offset(vA, vB, tx, ty, tc, ts):
    """Mean of B's core vertices minus mean of A's, in A's frame (orients normals of flat cases)."""
    ax = 0.0
    ay = 0.0
    for i in range(vA.shape[0]):
        ax += vA[i, 0]
        ay += vA[i, 1]
    ax /= vA.shape[0]
    ay /= vA.shape[0]
    bx = 0.0
    by = 0.0
    for i in range(vB.shape[0]):
        px, py = _b_point(vB, i, tx, ty, tc, ts)
        bx += px
        by += py
    bx /= vB.shape[0]
    by /= vB.shape[0]
    return bx - ax, by - ay


@njit
def epa_penetration(vA, vB, tx, ty, tc, ts):
    """Penetration of overlapping cores: (depth, nx, ny), normal from A to B in A's frame.

    Moving B by depth·n makes the cores touch. Called on cores that are apart by a rounding error it returns
    a depth ≤ 0 of that size (the origin is then just outside M).
    """
    cap = EPA_MAX_ITERATIONS + 4
    P = np.empty((cap, 2))
    k = 0
    for q in range(4):
        if q == 0:
            dx, dy = 1.0, 0.0
        elif q == 1:
            dx, dy = 0.0, 1.0
        elif q == 2:
            dx, dy = -1.0, 0.0
        else:
            dx, dy = 0.0, -1.0
        wx, wy = _support_w(vA, vB, tx, ty, tc, ts, dx, dy)
        if k == 0 or wx != P[k - 1, 0] or wy != P[k - 1, 1]:
            P[k, 0] = wx
            P[k, 1] = wy
            k += 1
    if k > 1 and P[k - 1, 0] == P[0, 0] and P[k - 1, 1] == P[0, 1]:
        k -= 1
    if k == 1:
        ox, oy = _centroid_offset(vA, vB, tx, ty, tc, ts)
        nx, ny, ln = _unit_or_x(ox, oy)
        return 0.0, nx, ny

    best_d = 0.0
    best_nx = 1.0
    best_ny = 0.0
    for _ in range(EPA_MAX_ITERATIONS + 1):
        # closest edge of P
        best_i = -1
        best_d = math.inf
        for i in range(k):
            j = i + 1 if i + 1 < k else 0
            ex = P[j, 0] - P[i, 0]
            ey = P[j, 1] - P[i, 1]
            el = math.sqrt(ex * ex + ey * ey)
            if el == 0.0:
                continue
            nx = ey / el
            ny = -ex / el
            d = nx * P[i, 0] + ny * P[i, 1]
            if d < best_d:
                best_d = d
                best_i = i
                best_nx = nx
                best_ny = ny
        if best_i < 0:
            break
        sx, sy = _support_w(vA, vB, tx, ty, tc, ts, best_nx, best_ny)
        ext = best_nx * sx + best_ny * sy - best_d
        scale = max(1.0, abs(sx) + abs(sy))
        if ext <= EPA_TOLERANCE * scale or k == cap:
            break
        j = best_i + 1 if best_i + 1 < k else 0
        if (sx == P[best_i, 0] and sy == P[best_i, 1]) or (sx == P[j, 0] and sy == P[j, 1]):
            break
        # insert s after best_i
        for m in range(k, best_i + 1, -1):
            P[m, 0] = P[m - 1, 0]
            P[m, 1] = P[m - 1, 1]
        P[best_i + 1, 0] = sx
        P[best_i + 1, 1] = sy
        k += 1

    # Flat M (width ~0 across the normal): the side is arbitrary, orient it from A's core towards B's.
    ox_, oy_ = _support_w(vA, vB, tx, ty, tc, ts, -best_nx, -best_ny)
    width = best_d - (best_nx * ox_ + best_ny * oy_)
    scale = max(1.0, abs(ox_) + abs(oy_))
    if width <= EPA_TOLERANCE * scale:
        ox, oy = _centroid_offset(vA, vB, tx, ty, tc, ts)
        if best_nx * ox + best_ny * oy < 0.0:
            best_nx = -best_nx
            best_ny = -best_ny
    return best_d, best_nx, best_ny


@njit
def _unit_or_x(x, y):
    ln = math.sqrt(x * x + y * y)
    if ln > 0.0:
        return x / ln, y / ln, ln
    return 1.0, 0.0, 0.0


@njit
def rounded_penetration(vA, rA, vB, rB, tx, ty, tc, ts):
    """Penetration of the rounded shapes: (hit, depth, nx, ny) in A's frame, normal from A to B.

    Cores apart by d (above GJK_TOUCH_DISTANCE): depth = rA + rB − d along the closest-point direction, a hit
    when d ≤ rA + rB. Cores overlapping or touching: depth = EPA depth + rA + rB.
    """
    res = gjk_core(vA, vB, tx, ty, tc, ts)
    d = res[0]
    rsum = rA + rB
    if d > rsum:
        return False, 0.0, 0.0, 0.0
    if d > GJK_TOUCH_DISTANCE:
        nx = (res[3] - res[1]) / d
        ny = (res[4] - res[2]) / d
        return True, rsum - d, nx, ny
    depth, nx, ny = epa_penetration(vA, vB, tx, ty, tc, ts)
    if depth < 0.0:
        depth = 0.0
    return True, depth + rsum, nx, ny


def penetration(a: "Any", xf_a: "TransformLike", b: "Any", xf_b: "TransformLike") -> "Any":
    """Penetration ``(depth, normal)`` of two placed shapes (world normal, unit, from A to B), or None.

    Translating B by depth·normal makes the shapes touch. Touching shapes give depth 0; separated ones None.

    ``a`` and ``b`` are shapes, placed by ``xf_a`` and ``xf_b`` (Transforms, (x, y) or (x, y, angle)).
    """
    ta, rel = prepare_pair(a, xf_a, b, xf_b)
    hit, depth, nx, ny = rounded_penetration(a._kernel_vertices, a.radius, b._kernel_vertices, b.radius, *rel)
    if not hit:
        return None
    c, s = ta[2], ta[3]
    return float(depth), np.array([c * nx - s * ny, s * nx + c * ny])
