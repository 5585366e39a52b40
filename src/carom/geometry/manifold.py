"""Contact manifolds by the separating axis theorem, with reference/incident edge clipping.

Every pair kernel follows the convention of :mod:`manifold_types`. Inside this module both cores are
first brought into one frame (A's), so the kernels named ``*_local`` take B's vertices and normals already
transformed; the wrappers do that into scratch arrays.

Cases, by core vertex count (1 = circle, 2 = capsule/segment, n ≥ 3 = polygon, all with a radius):

- circle–circle: closed form along the centre line.
- polygon–circle (any core with ≥ 2 vertices against a 1-vertex core): if the centre is inside the core, the
  face of least penetration; otherwise the closest point of the core boundary. One point.
- polygon–polygon (capsules and segments are 2-vertex polygons whose two edges are p1→p2 and p2→p1): SAT over
  the edge normals of both cores; the edge of greatest separation is the reference face (A's is preferred
  unless B's is better by ``0.1 · LINEAR_SLOP``, so the choice does not flicker between steps). The incident
  edge is the edge of the other core whose normal is most anti-parallel to the reference normal; it is clipped
  to the reference edge's side planes and each clipped point below ``speculative`` is kept (≤ 2 points).
  When the cores are apart by more than ``0.1 · LINEAR_SLOP`` and the closest features of the two edges are
  two vertices, the face normal is not the true direction (corner against corner, rounded corners): the
  manifold is then the single vertex–vertex point along the line joining them, as in Box2D v3.
- segment–segment: no contact (segments have no area; like Box2D).

Separations include the radii: s = (distance between cores along n) − rA − rB.

Empty manifolds carry a separation bound. When a kernel here returns count 0, its separation field ``m[5]``
holds a lower bound ``L`` of σ = dist(core A, core B) − rA − rB (the Euclidean distance of the cores, 0 when
they overlap; +inf for two segments, which never touch): L ≤ σ at the pose of the call. Each kernel returns
the best bound it has at hand when it stops: the greatest SAT separation of the face normals tested so far
(a gap along one direction is never more than the distance), or the exact centre-to-core distance for
circles. The narrow phase of the rigid world uses it to skip pairs that provably stay apart
(``carom.rigid._step._still_apart``), which relies on one more fact about these kernels, proved there:
for ``speculative ≥ 0.1 · LINEAR_SLOP``, σ > speculative implies count 0.
"""
import math

import numpy as np

from .._jit import njit, inline_njit, llvm_inline_njit, borrowed_rows
from ..constants import LINEAR_SLOP
from ._math import relative_transform, closest_on_segment
from .manifold_types import EMPTY_MANIFOLD

_FLIP_TOL = 0.1 * LINEAR_SLOP


@njit
def _apart(bound):
    """An empty manifold whose separation field holds ``bound`` ≤ dist(cores) − rA − rB (see the module doc)."""
    # (the last id an np.int64: a constant 0 is typed as its value, and a manifold of that type compiled
    # _swap_manifold once more)
    return (0, 0.0, 0.0, 0.0, 0.0, bound, 0, 0.0, 0.0, 0.0, np.int64(0))


@njit
def _point_result(nx, ny, ax, ay, bx, by, rA, rB, sep, ident, speculative):
    """One-point manifold from core points a (on A) and b (on B) with core separation along n; when empty,
    its separation field is sep − rA − rB (a bound only when sep is at most the core distance)."""
    s = sep - rA - rB
    if s > speculative:
        return _apart(s)
    pax = ax + rA * nx
    pay = ay + rA * ny
    pbx = bx - rB * nx
    pby = by - rB * ny
    return (1, nx, ny, 0.5 * (pax + pbx), 0.5 * (pay + pby), s, ident, 0.0, 0.0, 0.0, np.int64(0))


@njit
def collide_circles_local(ax, ay, rA, bx, by, rB, speculative):
    """Two circles (cores are their centres); an empty manifold's separation field is the exact
    dist − rA − rB."""
    dx = bx - ax
    dy = by - ay
    dist = math.sqrt(dx * dx + dy * dy)
    if dist - rA - rB > speculative:
        return _apart(dist - rA - rB)
    if dist > 1e-12:
        nx = dx / dist
        ny = dy / dist
    else:
        nx = 0.0
        ny = 1.0
    return _point_result(nx, ny, ax, ay, bx, by, rA, rB, dist, np.int64(0), speculative)


@njit
def collide_polygon_circle_local(vA, nA, rA, cx, cy, rB, speculative):
    """Core polygon A (n ≥ 2) against a circle centred at c (A's frame).

    An empty manifold's separation field is the greatest face separation of c minus the radii, or the exact
    distance from c to the core minus the radii when that was computed (both ≤ dist(core, c) − rA − rB).
    A 2-vertex core (segment) has no inside: a centre on its line, even beyond its ends, has both face
    separations 0, so it takes the closest-point branch.
    """
    n = vA.shape[0]
    best = 0
    best_sep = -np.inf
    for i in range(n):
        sep = nA[i, 0] * (cx - vA[i, 0]) + nA[i, 1] * (cy - vA[i, 1])
        if sep > best_sep:
            best_sep = sep
            best = i
    if best_sep - rA - rB > speculative:
        return _apart(best_sep - rA - rB)
    if best_sep <= 0.0 and n > 2:
        # centre inside the core: push out through the face of least penetration
        nx = nA[best, 0]
        ny = nA[best, 1]
        return _point_result(nx, ny, cx - best_sep * nx, cy - best_sep * ny, cx, cy, rA, rB, best_sep,
                             256 * best, speculative)
    # centre outside: closest point on the core boundary
    qx = 0.0
    qy = 0.0
    best_d2 = np.inf
    feature = 0
    # a 2-vertex core's two edges are one segment: test it once
    for i in range(n if n > 2 else 1):
        k = i + 1 if i + 1 < n else 0
        px, py, t = closest_on_segment(vA[i, 0], vA[i, 1], vA[k, 0], vA[k, 1], cx, cy)
        d2 = (cx - px) ** 2 + (cy - py) ** 2
        if d2 < best_d2:
            best_d2 = d2
            qx = px
            qy = py
            # an edge interior, or a vertex (128 + index) so that a corner has one id from both edges
            feature = i if 0.0 < t < 1.0 else (128 + (i if t == 0.0 else k))
    dist = math.sqrt(best_d2)
    if dist - rA - rB > speculative:
        return _apart(dist - rA - rB)
    if dist > 1e-12:
        nx = (cx - qx) / dist
        ny = (cy - qy) / dist
    else:
        nx = nA[best, 0]
        ny = nA[best, 1]
    if n == 2 and feature < 128 and nx * nA[0, 0] + ny * nA[0, 1] < 0.0:
        feature = 1
    return _point_result(nx, ny, qx, qy, cx, cy, rA, rB, dist, 256 * feature, speculative)


@inline_njit
def _max_separation(v1, n1, v2, count1, count2):
    """Edge of core 1 (``count1`` vertices) with the greatest separation from core 2 (``count2``), both in
    one frame: (edge, separation).

    Minimum and maximum are kept by selects, not branches: which vertex is deepest is a coin toss per pair,
    and mispredicted branches were most of a box pair's test. Inlined, so a caller passing the counts as
    constants (:func:`collide_quadrilaterals`) gets both loops unrolled. The first edge of greatest
    separation wins, and the minimum is the same value whichever order it is taken in.
    """
    best = np.int64(0)      # (not a literal: a returned literal edge compiles _face_manifold once more)
    best_sep = -np.inf
    for i in range(count1):
        nx = n1[i, 0]
        ny = n1[i, 1]
        si = np.inf
        for j in range(count2):
            d = nx * (v2[j, 0] - v1[i, 0]) + ny * (v2[j, 1] - v1[i, 1])
            si = d if d < si else si
        better = si > best_sep
        best = i if better else best
        best_sep = si if better else best_sep
    return best, best_sep


@inline_njit
def _incident_edge(n_ref_x, n_ref_y, n2, count2):
    """Edge of core 2 whose normal is most anti-parallel to the reference normal (the first such)."""
    # (np.int64, not the literal 0: inlined into a caller, a literal start let Numba's typing compile the
    # caller's callees once for the literal type too, _clip among them: 0.5 s of the cold compile)
    best = np.int64(0)
    best_dot = np.inf
    for j in range(count2):
        d = n_ref_x * n2[j, 0] + n_ref_y * n2[j, 1]
        better = d < best_dot
        best = j if better else best
        best_dot = d if better else best_dot
    return best


@njit
def _segment_closest(p1x, p1y, q1x, q1y, p2x, p2y, q2x, q2y):
    """Closest points of segments p1q1 and p2q2: (f1, f2, c1x, c1y, c2x, c2y)."""
    d1x = q1x - p1x
    d1y = q1y - p1y
    d2x = q2x - p2x
    d2y = q2y - p2y
    rx = p1x - p2x
    ry = p1y - p2y
    a = d1x * d1x + d1y * d1y
    e = d2x * d2x + d2y * d2y
    f = d2x * rx + d2y * ry
    c = d1x * rx + d1y * ry
    b = d1x * d2x + d1y * d2y
    den = a * e - b * b
    if a <= 0.0 and e <= 0.0:
        return 0.0, 0.0, p1x, p1y, p2x, p2y
    if a <= 0.0:
        s = 0.0
        t = min(max(f / e, 0.0), 1.0)
    elif e <= 0.0:
        t = 0.0
        s = min(max(-c / a, 0.0), 1.0)
    else:
        s = min(max((b * f - c * e) / den, 0.0), 1.0) if den > 0.0 else 0.0
        t = (b * s + f) / e
        if t < 0.0:
            t = 0.0
            s = min(max(-c / a, 0.0), 1.0)
        elif t > 1.0:
            t = 1.0
            s = min(max((b - c) / a, 0.0), 1.0)
    return s, t, p1x + s * d1x, p1y + s * d1y, p2x + t * d2x, p2y + t * d2y


@llvm_inline_njit
def _clip(vR, nR, rR, i1, vI, nI, rI, j1, speculative, flip):
    """Clip incident edge j1 of core I against reference edge i1 of core R; ids/normal oriented A→B."""
    nr = vR.shape[0]
    ni = vI.shape[0]
    i2 = i1 + 1 if i1 + 1 < nr else 0
    j2 = j1 + 1 if j1 + 1 < ni else 0
    v1x = vR[i1, 0]
    v1y = vR[i1, 1]
    v2x = vR[i2, 0]
    v2y = vR[i2, 1]
    nx = nR[i1, 0]
    ny = nR[i1, 1]
    # the edge's unit direction is its outward normal turned a quarter turn back (n = (e.y, −e.x)/|e| on a
    # counter-clockwise core, carom.geometry.shapes.edge_normals): no square root and no division, which
    # were the longest chain of a box pair's test
    tx = -ny
    ty = nx
    length = tx * (v2x - v1x) + ty * (v2y - v1y)
    w1x = vI[j1, 0]
    w1y = vI[j1, 1]
    w2x = vI[j2, 0]
    w2y = vI[j2, 1]
    # positions of the incident ends along the reference edge
    a1 = tx * (w1x - v1x) + ty * (w1y - v1y)
    a2 = tx * (w2x - v1x) + ty * (w2y - v1y)
    # feature ids: (the reference vertex at the point's end of the reference edge, the incident vertex the
    # point comes from), whether or not the clipping moved it. An id that changed when a point was clipped
    # (a box resting flush on another has its incident vertices exactly on the side planes, so rounding
    # clips them in one step and not the next) dropped that point's warm start, and the impulse lost on one
    # side tipped a tall stack a little more every few steps until it fell (Box2D's ids do not depend on
    # the clipping either)
    end1 = i2 if a1 >= a2 else i1
    end2 = i1 if a1 >= a2 else i2
    f1a = 256 * end1 + j1
    f2a = 256 * end2 + j2
    # clip against the plane a >= 0
    if a1 < 0.0 and a2 < 0.0:
        return EMPTY_MANIFOLD
    if a1 < 0.0:
        u = a1 / (a1 - a2)
        w1x += u * (w2x - w1x)
        w1y += u * (w2y - w1y)
        a1 = 0.0
    elif a2 < 0.0:
        u = a2 / (a2 - a1)
        w2x += u * (w1x - w2x)
        w2y += u * (w1y - w2y)
        a2 = 0.0
    # clip against the plane a <= length
    if a1 > length and a2 > length:
        return EMPTY_MANIFOLD
    if a1 > length:
        u = (a1 - length) / (a1 - a2)
        w1x += u * (w2x - w1x)
        w1y += u * (w2y - w1y)
    elif a2 > length:
        u = (a2 - length) / (a2 - a1)
        w2x += u * (w1x - w2x)
        w2y += u * (w1y - w2y)
    sgn = -1.0 if flip else 1.0
    if flip:
        # A is the incident core: A's feature first
        f1a = 256 * (f1a % 256) + f1a // 256
        f2a = 256 * (f2a % 256) + f2a // 256
    c1 = nx * (w1x - v1x) + ny * (w1y - v1y)
    c2 = nx * (w2x - v1x) + ny * (w2y - v1y)
    s1 = c1 - rR - rI
    s2 = c2 - rR - rI
    # midway between the reference surface (w − c·n + rR·n) and the incident surface (w − rI·n)
    p1x = w1x + 0.5 * (rR - rI - c1) * nx
    p1y = w1y + 0.5 * (rR - rI - c1) * ny
    p2x = w2x + 0.5 * (rR - rI - c2) * nx
    p2y = w2y + 0.5 * (rR - rI - c2) * ny
    keep1 = s1 <= speculative
    keep2 = s2 <= speculative
    if keep1 and keep2:
        return (2, sgn * nx, sgn * ny, p1x, p1y, s1, f1a, p2x, p2y, s2, f2a)
    if keep1:
        return (1, sgn * nx, sgn * ny, p1x, p1y, s1, f1a, 0.0, 0.0, 0.0, np.int64(0))
    if keep2:
        return (1, sgn * nx, sgn * ny, p2x, p2y, s2, f2a, 0.0, 0.0, 0.0, np.int64(0))
    return EMPTY_MANIFOLD


@njit
def collide_polygons_local(vA, nA, rA, vB, nB, rB, speculative):
    """SAT manifold of two cores with ≥ 2 vertices each, both in A's frame.

    An empty manifold's separation field is max(sep_a, sep_b) − rA − rB over the face normals tested (a gap
    along a direction never exceeds the distance; the vertex–vertex distance is not used, as the two
    vertices it joins need not be the closest points of the cores).
    """
    na = vA.shape[0]
    nb = vB.shape[0]
    radius = rA + rB
    edge_a, sep_a = _max_separation(vA, nA, vB, na, nb)
    if sep_a - radius > speculative:
        return _apart(sep_a - radius)
    edge_b, sep_b = _max_separation(vB, nB, vA, nb, na)
    if sep_b - radius > speculative:
        return _apart(sep_b - radius)
    return _face_manifold(vA, nA, rA, vB, nB, rB, speculative, edge_a, sep_a, edge_b, sep_b, na, nb)


@llvm_inline_njit
def _face_manifold(vA, nA, rA, vB, nB, rB, speculative, edge_a, sep_a, edge_b, sep_b, na, nb):
    """The manifold of two cores that the face normals do not separate by more than ``speculative``, from the
    deepest edge of each (:func:`_max_separation`): the reference face, then the vertex–vertex point or the
    clipped incident edge (the module doc). Typed once and inlined by LLVM into its two callers: copied into
    each caller's Numba IR (``inline_njit``), it cost about 3 s of cold compile per copy; box pairs take about
    as long either way."""
    radius = rA + rB
    apart = _apart(max(sep_a, sep_b) - radius)
    flip = sep_b > sep_a + _FLIP_TOL
    if flip:
        sep = sep_b
        ref_edge = edge_b
        inc_edge = _incident_edge(nB[edge_b, 0], nB[edge_b, 1], nA, na)
    else:
        sep = sep_a
        ref_edge = edge_a
        inc_edge = _incident_edge(nA[edge_a, 0], nA[edge_a, 1], nB, nb)
    if sep > _FLIP_TOL:
        # apart: find the closest features of the reference and incident edges
        if flip:
            vR, vI = vB, vA
        else:
            vR, vI = vA, vB
        nr = nb if flip else na
        ni = na if flip else nb
        i1 = ref_edge
        i2 = i1 + 1 if i1 + 1 < nr else 0
        j1 = inc_edge
        j2 = j1 + 1 if j1 + 1 < ni else 0
        f1, f2, c1x, c1y, c2x, c2y = _segment_closest(vR[i1, 0], vR[i1, 1], vR[i2, 0], vR[i2, 1],
                                                      vI[j1, 0], vI[j1, 1], vI[j2, 0], vI[j2, 1])
        dx = c2x - c1x
        dy = c2y - c1y
        dist = math.sqrt(dx * dx + dy * dy)
        nref_x = vR[i2, 1] - vR[i1, 1]
        nref_y = vR[i1, 0] - vR[i2, 0]
        aligned = nref_x * dx + nref_y * dy >= (1.0 - 1e-9) * dist * math.sqrt(nref_x ** 2 + nref_y ** 2)
        # parallel overlapping edges also give end fractions, but their contact is the face (clip it)
        if (not aligned) and (f1 == 0.0 or f1 == 1.0) and (f2 == 0.0 or f2 == 1.0):
            # vertex against vertex: the normal joins the two closest vertices
            if dist - radius > speculative:
                return apart
            fr = i1 if f1 == 0.0 else i2
            fi = j1 if f2 == 0.0 else j2
            nx = dx / dist
            ny = dy / dist
            if flip:
                m = _point_result(-nx, -ny, c2x, c2y, c1x, c1y, rA, rB, dist, 256 * fi + fr, speculative)
            else:
                m = _point_result(nx, ny, c1x, c1y, c2x, c2y, rA, rB, dist, 256 * fr + fi, speculative)
            return m if m[0] > 0 else apart
    if flip:
        # ``flip`` rather than a literal True/False: a literal argument compiles _clip once per value
        m = _clip(vB, nB, rB, ref_edge, vA, nA, rA, inc_edge, speculative, flip)
    else:
        m = _clip(vA, nA, rA, ref_edge, vB, nB, rB, inc_edge, speculative, flip)
    return m if m[0] > 0 else apart


@njit
def _swap_manifold(m, tx, ty, tc, ts):
    """A manifold computed as (B, A) in B's frame → as (A, B) in A's frame (B placed at t in A); an empty one
    keeps its separation bound (the distance is symmetric)."""
    count = m[0]
    if count == 0:
        return _apart(m[5])
    nx = -(tc * m[1] - ts * m[2])
    ny = -(ts * m[1] + tc * m[2])
    p0x = tc * m[3] - ts * m[4] + tx
    p0y = ts * m[3] + tc * m[4] + ty
    p1x = tc * m[7] - ts * m[8] + tx
    p1y = ts * m[7] + tc * m[8] + ty
    id0 = 256 * (m[6] % 256) + m[6] // 256
    id1 = 256 * (m[10] % 256) + m[10] // 256
    return (count, nx, ny, p0x, p0y, m[5], id0, p1x, p1y, m[9], id1)


@inline_njit
def _to_frame(v, n, tx, ty, tc, ts, vout, nout, count):
    for i in range(count):
        x = v[i, 0]
        y = v[i, 1]
        vout[i, 0] = tc * x - ts * y + tx
        vout[i, 1] = ts * x + tc * y + ty
        x = n[i, 0]
        y = n[i, 1]
        nout[i, 0] = tc * x - ts * y
        nout[i, 1] = ts * x + tc * y


@llvm_inline_njit
def collide_sat(vA, nA, rA, vB, nB, rB, tx, ty, tc, ts, speculative, scratch_v, scratch_n):
    """Any pair of cores (B placed at t in A's frame) → manifold tuple in A's frame.

    ``scratch_v``/``scratch_n`` hold at least max(len(vA), len(vB)) rows; they receive the moved core.
    For count 0 the separation field ``m[5]`` is a lower bound of dist(core A, core B) − rA − rB at this
    pose (+inf for two segments, which never touch); see the module doc.

    Inlined by LLVM into its callers (:func:`carom._jit.llvm_inline_njit`): the narrow phase's pair loop
    would otherwise hand over six array views and the manifold tuple per call.
    """
    na = vA.shape[0]
    nb = vB.shape[0]
    if na == 1 and nb == 1:
        cx = tc * vB[0, 0] - ts * vB[0, 1] + tx
        cy = ts * vB[0, 0] + tc * vB[0, 1] + ty
        return collide_circles_local(vA[0, 0], vA[0, 1], rA, cx, cy, rB, speculative)
    if nb == 1:
        cx = tc * vB[0, 0] - ts * vB[0, 1] + tx
        cy = ts * vB[0, 0] + tc * vB[0, 1] + ty
        return collide_polygon_circle_local(vA, nA, rA, cx, cy, rB, speculative)
    if na == 1:
        # collide B against A in B's frame, then swap back
        ix, iy, ic, is_ = relative_transform(tx, ty, tc, ts, 0.0, 0.0, 1.0, 0.0)
        cx = ic * vA[0, 0] - is_ * vA[0, 1] + ix
        cy = is_ * vA[0, 0] + ic * vA[0, 1] + iy
        m = collide_polygon_circle_local(vB, nB, rB, cx, cy, rA, speculative)
        return _swap_manifold(m, tx, ty, tc, ts)
    if na == 2 and nb == 2 and rA == 0.0 and rB == 0.0:
        return _apart(np.inf)
    vb = borrowed_rows(scratch_v, 0, nb)      # (views without reference counts: carom._jit.borrowed_rows)
    nbv = borrowed_rows(scratch_n, 0, nb)
    _to_frame(vB, nB, tx, ty, tc, ts, vb, nbv, nb)
    return collide_polygons_local(vA, nA, rA, vb, nbv, rB, speculative)


@llvm_inline_njit
def collide_quadrilaterals(vA, nA, rA, vB, nB, rB, tx, ty, tc, ts, speculative, scratch_v, scratch_n):
    """:func:`collide_sat` for two cores of four vertices each (boxes, rounded boxes): the same steps with
    every count a constant, so the vertex loops unroll and the separation search runs without a branch (a
    box pair of the narrow phase: about 135 → 105 ns). Inlined (by LLVM) into the narrow phase's pair loop,
    which picks it by the counts.

    When both cores are parallelograms (boxes: :func:`_is_parallelogram`), the separations of the faces come
    from :func:`_parallelogram_separation`, in closed form, instead of the 16 vertex tests of each side: the
    same values up to rounding (the exact minimum over the vertices), so the manifold is collide_sat's but
    for the last bits, and for the choice between two faces whose separations tie to within rounding. Any
    other quadrilateral gets exactly collide_sat's manifold."""
    vb = borrowed_rows(scratch_v, 0, 4)
    nbv = borrowed_rows(scratch_n, 0, 4)
    _to_frame(vB, nB, tx, ty, tc, ts, vb, nbv, 4)
    radius = rA + rB
    boxes = _is_parallelogram(nA) and _is_parallelogram(nB)
    edge_a, sep_a = _quad_separation(boxes, vA, nA, vb)
    if sep_a - radius > speculative:
        return _apart(sep_a - radius)
    edge_b, sep_b = _quad_separation(boxes, vb, nbv, vA)
    if sep_b - radius > speculative:
        return _apart(sep_b - radius)
    four = np.int64(4)       # (not a literal: _face_manifold is compiled once, for any count; LLVM inlines it here
    #                          with the constant, so its loops unroll)
    return _face_manifold(vA, nA, rA, vb, nbv, rB, speculative, edge_a, sep_a, edge_b, sep_b, four, four)


@inline_njit
def _quad_separation(boxes, v1, n1, v2):
    """The face of 4-vertex core 1 with the greatest separation from 4-vertex core 2: in closed form when both
    are parallelograms, else by the vertex tests."""
    if boxes:
        return _parallelogram_separation(v1, n1, v2)
    return _max_separation(v1, n1, v2, 4, 4)


@inline_njit
def _is_parallelogram(n):
    """Whether a 4-vertex core is a parallelogram: its opposite edges' normals are exactly opposite (true of
    every box of :func:`carom.geometry.shapes.box` that is not turned in its body frame; a turned one may
    miss by rounding and then takes the general test)."""
    return (n[2, 0] == -n[0, 0]) & (n[2, 1] == -n[0, 1]) & (n[3, 0] == -n[1, 0]) & (n[3, 1] == -n[1, 1])


@inline_njit
def _parallelogram_separation(v1, n1, v2):
    """:func:`_max_separation` of parallelogram core 1 against parallelogram core 2 (both in one frame), in
    closed form: (edge, separation).

    Core 2's vertices are c ± a ± b, with c its centre (the middle of a diagonal) and a, b half its edges;
    so along any direction n the least of n·w over them is n·c − |n·a| − |n·b|, and face i of core 1 (normal
    n_i through vertex v_i) is separated from core 2 by n_i·(c − v_i) − |n_i·a| − |n_i·b|. Opposite faces
    have opposite normals, so the two absolute values are shared by faces i and i + 2: 8 products where the
    vertex tests take 32. The first face of greatest separation wins, as in :func:`_max_separation`."""
    cx = 0.5 * (v2[0, 0] + v2[2, 0])
    cy = 0.5 * (v2[0, 1] + v2[2, 1])
    ax = 0.5 * (v2[1, 0] - v2[0, 0])
    ay = 0.5 * (v2[1, 1] - v2[0, 1])
    bx = 0.5 * (v2[2, 0] - v2[1, 0])
    by = 0.5 * (v2[2, 1] - v2[1, 1])
    ext0 = abs(n1[0, 0] * ax + n1[0, 1] * ay) + abs(n1[0, 0] * bx + n1[0, 1] * by)
    ext1 = abs(n1[1, 0] * ax + n1[1, 1] * ay) + abs(n1[1, 0] * bx + n1[1, 1] * by)
    best = np.int64(0)      # (not a literal: as in _max_separation)
    best_sep = -np.inf
    for i in range(4):
        si = n1[i, 0] * (cx - v1[i, 0]) + n1[i, 1] * (cy - v1[i, 1]) - (ext0 if i % 2 == 0 else ext1)
        better = si > best_sep
        best = i if better else best
        best_sep = si if better else best_sep
    return best, best_sep


@njit
def manifold_to_world(m, x, y, c, s):
    """Rotate/translate a manifold tuple from A's frame into the world."""
    if m[0] == 0:
        return m
    return (m[0], c * m[1] - s * m[2], s * m[1] + c * m[2],
            c * m[3] - s * m[4] + x, s * m[3] + c * m[4] + y, m[5], m[6],
            c * m[7] - s * m[8] + x, s * m[7] + c * m[8] + y, m[9], m[10])


@njit
def collide_many(verts, normals, offsets, counts, radii, xforms, pairs, speculative, out_f, out_i):
    """Bulk narrow phase: manifolds of many shape pairs in one call, in world space.

    Shapes are rows of a table: core k occupies ``verts[offsets[k]:offsets[k]+counts[k]]`` (local frame) with
    ``normals`` alongside, radius ``radii[k]``, placement ``xforms[k] = (x, y, cos, sin)``. For pair row p =
    (a, b): ``out_i[p] = (count, id0, id1)``, ``out_f[p] = (nx, ny, p0x, p0y, s0, p1x, p1y, s1)``; for count 0,
    ``s0`` is collide_sat's lower bound of the separation and the rest is 0.
    """
    maxc = 1
    for k in range(counts.shape[0]):
        if counts[k] > maxc:
            maxc = counts[k]
    sv = np.empty((maxc, 2))
    sn = np.empty((maxc, 2))
    for p in range(pairs.shape[0]):
        a = pairs[p, 0]
        b = pairs[p, 1]
        oa = offsets[a]
        ob = offsets[b]
        vA = verts[oa:oa + counts[a]]
        nA = normals[oa:oa + counts[a]]
        vB = verts[ob:ob + counts[b]]
        nB = normals[ob:ob + counts[b]]
        ax, ay, ac, as_ = xforms[a, 0], xforms[a, 1], xforms[a, 2], xforms[a, 3]
        tx, ty, tc, ts = relative_transform(ax, ay, ac, as_, xforms[b, 0], xforms[b, 1], xforms[b, 2],
                                            xforms[b, 3])
        m = collide_sat(vA, nA, radii[a], vB, nB, radii[b], tx, ty, tc, ts, speculative, sv, sn)
        m = manifold_to_world(m, ax, ay, ac, as_)
        out_i[p, 0] = m[0]
        out_i[p, 1] = m[6]
        out_i[p, 2] = m[10]
        out_f[p, 0] = m[1]
        out_f[p, 1] = m[2]
        out_f[p, 2] = m[3]
        out_f[p, 3] = m[4]
        out_f[p, 4] = m[5]
        out_f[p, 5] = m[7]
        out_f[p, 6] = m[8]
        out_f[p, 7] = m[9]
