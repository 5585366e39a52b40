"""Contact manifolds from the GJK/EPA direction (the method of the third reference article).

1. Direction n (from A to B): the GJK closest-point direction when the cores are apart, EPA's normal when
   they overlap (or are closer than GJK_TOUCH_DISTANCE, where the closest-point direction is noise).
2. The feature of each shape facing the other: of A along n, of B along −n. For a core of ≥ 2 vertices that
   is the farthest vertex and, of its two adjacent edges, the one whose outward normal is closest to the
   direction (most perpendicular to n); a circle's core gives a zero-length edge (its centre). A 2-vertex
   core has the two opposite edges p1→p2 and p2→p1, so the same rule picks its side facing the other shape.
3. Three cases:

   - point–point: one contact along n at the core separation minus the radii;
   - point–segment: the closest point of the segment to the point. Strictly inside the segment it is a
     projection, so the normal is the segment's face normal exactly; at an end the normal is n;
   - segment–segment: when GJK's closest features are two vertices (cores apart, final simplex of one
     point) it is one contact at the GJK closest points along n. Otherwise n is a face normal of M = an edge
     normal of A or B: the reference edge is the one whose normal is closest to ±n (smallest sine), the
     other edge is incident; the incident edge is clipped to the slab between the reference edge's side
     planes, and each clipped point below speculative distance from the reference face is a contact. The
     manifold normal is then the reference face normal itself (exact, which is what a resting stack needs,
     and the same as SAT's normal for overlapping polygons). Should clipping leave nothing (rounding at a
     slab boundary), the single GJK contact is used.

Separations are measured between the rounded surfaces (core separation − rA − rB); a point lies midway
between the surfaces along the normal. Feature ids are 256·(feature on A) + (feature on B): the reference
edge index on one side and the incident vertex the point came from on the other; the vertex indices for
vertex contacts. Everything happens in A's frame (B placed by the relative transform).
"""
import math

import numpy as np

from .._jit import njit
from ..constants import GJK_TOUCH_DISTANCE, GJK_FACE_TOLERANCE
from ..errors import GeometryError
from .gjk import gjk_core, support_index, _b_point, prepare_pair
from .epa import epa_penetration
from .manifold_types import Manifold

_EMPTY = (0, 0.0, 0.0, 0.0, 0.0, 0.0, 0, 0.0, 0.0, 0.0, 0)


@njit
def _one_point(nx, ny, ax, ay, bx, by, rA, rB, sep, fid, speculative):
    """Single contact from core points a (on A) and b (on B) and the surface separation ``sep``."""
    if sep > speculative:
        return _EMPTY
    px = 0.5 * (ax + rA * nx + bx - rB * nx)
    py = 0.5 * (ay + rA * ny + by - rB * ny)
    return (1, nx, ny, px, py, sep, fid, 0.0, 0.0, 0.0, 0)


@njit
def _facing_edge(v, nrm, dx, dy):
    """Feature of a core facing (dx, dy): (i1, i2, edge index, farthest vertex), i1 == i2 for a point."""
    n = v.shape[0]
    i = support_index(v, dx, dy)
    if n == 1:
        return 0, 0, 0, 0
    prev = i - 1 if i > 0 else n - 1
    if nrm[prev, 0] * dx + nrm[prev, 1] * dy > nrm[i, 0] * dx + nrm[i, 1] * dy:
        e = prev
    else:
        e = i
    return e, (e + 1) % n, e, i


@njit
def _clip(ax, ay, bx, by, fa, fb):
    """Keep the part of segment ab where the linear function f ≥ 0 (f(a) = fa, f(b) = fb).

    Returns (count, ax, ay, bx, by, cut_a, cut_b): count 0 when all is cut, else the kept segment (which may
    have a == b) and whether each end was moved."""
    if fa >= 0.0 and fb >= 0.0:
        return 2, ax, ay, bx, by, False, False
    if fa < 0.0 and fb < 0.0:
        return 0, ax, ay, bx, by, False, False
    t = fa / (fa - fb)
    qx = ax + t * (bx - ax)
    qy = ay + t * (by - ay)
    if fa < 0.0:
        return 2, qx, qy, bx, by, True, False
    return 2, ax, ay, qx, qy, False, True


@njit
def _segment_contacts(r1x, r1y, r2x, r2y, mx, my, q1x, q1y, q2x, q2y,
                      r_ref, r_inc, speculative):
    """Clip incident q1q2 against the slab of reference r1r2 (outward normal m) and measure separations.

    Returns (k, p0x, p0y, s0, p1x, p1y, s1) with the two clipped points in the incident edge's order,
    each point midway between the surfaces, and k = -1 when clipping removed everything. A point whose
    separation exceeds ``speculative`` gets separation +inf (the caller drops it)."""
    tx = r2x - r1x
    ty = r2y - r1y
    # side planes: t·(q − r1) ≥ 0 and t·(r2 − q) ≥ 0
    f1 = tx * (q1x - r1x) + ty * (q1y - r1y)
    f2 = tx * (q2x - r1x) + ty * (q2y - r1y)
    c, q1x, q1y, q2x, q2y, _, _ = _clip(q1x, q1y, q2x, q2y, f1, f2)
    if c == 0:
        return -1, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    g1 = tx * (r2x - q1x) + ty * (r2y - q1y)
    g2 = tx * (r2x - q2x) + ty * (r2y - q2y)
    c, q1x, q1y, q2x, q2y, _, _ = _clip(q1x, q1y, q2x, q2y, g1, g2)
    if c == 0:
        return -1, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    rsum = r_ref + r_inc
    s0 = mx * (q1x - r1x) + my * (q1y - r1y) - rsum
    s1 = mx * (q2x - r1x) + my * (q2y - r1y) - rsum
    # midway between the surfaces: incident core point moved back by its radius and half the separation
    p0x = q1x - mx * (0.5 * s0 + r_inc)
    p0y = q1y - my * (0.5 * s0 + r_inc)
    p1x = q2x - mx * (0.5 * s1 + r_inc)
    p1y = q2y - my * (0.5 * s1 + r_inc)
    if s0 > speculative:
        s0 = math.inf
    if s1 > speculative:
        s1 = math.inf
    return 2, p0x, p0y, s0, p1x, p1y, s1


@njit
def collide_gjk(vA, nA, rA, vB, nB, rB, tx, ty, tc, ts, speculative):
    """Contact manifold of two rounded convex cores by GJK/EPA and feature clipping (module docstring).

    Returns the 11-tuple of manifold_types in A's frame."""
    res = gjk_core(vA, vB, tx, ty, tc, ts)
    dc = res[0]
    rsum = rA + rB
    if dc - rsum > speculative:
        return _EMPTY
    cax = res[1]
    cay = res[2]
    cbx = res[3]
    cby = res[4]
    simplex = res[6]
    if dc > GJK_TOUCH_DISTANCE:
        nx = (cbx - cax) / dc
        ny = (cby - cay) / dc
        core_sep = dc
    else:
        depth, nx, ny = epa_penetration(vA, vB, tx, ty, tc, ts)
        core_sep = -depth
        simplex = 3
    # facing features
    a1, a2, eA, fA = _facing_edge(vA, nA, nx, ny)
    dbx = tc * (-nx) + ts * (-ny)          # −n in B's frame
    dby = -ts * (-nx) + tc * (-ny)
    b1, b2, eB, fB = _facing_edge(vB, nB, dbx, dby)
    a1x = vA[a1, 0]
    a1y = vA[a1, 1]
    a2x = vA[a2, 0]
    a2y = vA[a2, 1]
    b1x, b1y = _b_point(vB, b1, tx, ty, tc, ts)
    b2x, b2y = _b_point(vB, b2, tx, ty, tc, ts)
    pointA = vA.shape[0] == 1
    pointB = vB.shape[0] == 1

    if pointA and pointB:
        return _one_point(nx, ny, a1x, a1y, b1x, b1y, rA, rB, core_sep - rsum, np.int64(0), speculative)

    if pointA or pointB:
        if pointA:
            px, py = a1x, a1y
            sx1, sy1, sx2, sy2 = b1x, b1y, b2x, b2y
            mx = tc * nB[eB, 0] - ts * nB[eB, 1]      # B's face normal in A's frame (points towards A)
            my = ts * nB[eB, 0] + tc * nB[eB, 1]
            mx = -mx
            my = -my
        else:
            px, py = b1x, b1y
            sx1, sy1, sx2, sy2 = a1x, a1y, a2x, a2y
            mx = nA[eA, 0]
            my = nA[eA, 1]
        ex = sx2 - sx1
        ey = sy2 - sy1
        t = ((px - sx1) * ex + (py - sy1) * ey) / (ex * ex + ey * ey)
        if t > 0.0 and t < 1.0:
            qx = sx1 + t * ex
            qy = sy1 + t * ey
            nnx, nny = mx, my                              # projection: the face normal, exactly
            feat = eB if pointA else eA
        else:
            if t <= 0.0:
                qx, qy = sx1, sy1
                feat = b1 if pointA else a1
            else:
                qx, qy = sx2, sy2
                feat = b2 if pointA else a2
            nnx, nny = nx, ny
        if pointA:
            sep = nnx * (qx - px) + nny * (qy - py) - rsum
            return _one_point(nnx, nny, px, py, qx, qy, rA, rB, sep, feat, speculative)
        sep = nnx * (px - qx) + nny * (py - qy) - rsum
        return _one_point(nnx, nny, qx, qy, px, py, rA, rB, sep, 256 * feat, speculative)

    # segment–segment
    if simplex == 1:
        return _one_point(nx, ny, cax, cay, cbx, cby, rA, rB, dc - rsum, 256 * fA + fB, speculative)
    mAx = nA[eA, 0]
    mAy = nA[eA, 1]
    mBx = tc * nB[eB, 0] - ts * nB[eB, 1]
    mBy = ts * nB[eB, 0] + tc * nB[eB, 1]
    sinA = abs(mAx * ny - mAy * nx)
    sinB = abs(mBx * ny - mBy * nx)
    if sinB + GJK_FACE_TOLERANCE < sinA:
        # reference on B: clip A's edge; normal from A to B is −m_B
        k, p0x, p0y, s0, p1x, p1y, s1 = _segment_contacts(b1x, b1y, b2x, b2y, mBx, mBy,
                                                          a1x, a1y, a2x, a2y, rB, rA, speculative)
        mnx = -mBx
        mny = -mBy
        id0 = 256 * a1 + eB
        id1 = 256 * a2 + eB
    else:
        k, p0x, p0y, s0, p1x, p1y, s1 = _segment_contacts(a1x, a1y, a2x, a2y, mAx, mAy,
                                                          b1x, b1y, b2x, b2y, rA, rB, speculative)
        mnx = mAx
        mny = mAy
        id0 = 256 * eA + b1
        id1 = 256 * eA + b2
    if k < 0:
        if simplex == 3:
            # overlapping cores: deepest vertex of the incident side along n
            # (n·(b − a) over the two farthest vertices is −h_M(n) = −depth = core_sep)
            fbx, fby = _b_point(vB, fB, tx, ty, tc, ts)
            return _one_point(nx, ny, fbx - core_sep * nx, fby - core_sep * ny, fbx, fby, rA, rB,
                              core_sep - rsum, 256 * fA + fB, speculative)
        return _one_point(nx, ny, cax, cay, cbx, cby, rA, rB, core_sep - rsum, 256 * fA + fB, speculative)
    keep0 = s0 <= speculative
    keep1 = s1 <= speculative
    if keep0 and keep1:
        return (2, mnx, mny, p0x, p0y, s0, id0, p1x, p1y, s1, id1)
    if keep0:
        return (1, mnx, mny, p0x, p0y, s0, id0, 0.0, 0.0, 0.0, 0)
    if keep1:
        return (1, mnx, mny, p1x, p1y, s1, id1, 0.0, 0.0, 0.0, 0)
    return _EMPTY


def collide_gjk_shapes(a, xf_a, b, xf_b, speculative=0.0):
    """Contact manifold (world :class:`Manifold`) of two placed shapes by GJK/EPA, or None when apart.

    ``speculative`` ≥ 0 keeps contacts whose surfaces are up to that far apart (negative separation means
    penetration)."""
    try:
        spec = float(speculative)
    except (TypeError, ValueError) as exc:
        raise GeometryError(f"speculative must be a number, got {speculative!r}") from exc
    if not math.isfinite(spec) or spec < 0.0:
        raise GeometryError(f"speculative must be finite and >= 0, got {speculative!r}")
    ta, rel = prepare_pair(a, xf_a, b, xf_b)
    m = collide_gjk(a._kernel_vertices, a._kernel_normals, a.radius, b._kernel_vertices, b._kernel_normals, b.radius,
                    *rel, spec)
    if m[0] == 0:
        return None
    return Manifold.from_tuple(m, *ta)
