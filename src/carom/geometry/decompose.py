"""Convex decomposition of a simple polygon: validate, triangulate by ear clipping, merge by Hertel–Mehlhorn.

Input is the outline of a simple polygon (concave allowed, no holes, either winding). The output is a list
of strictly convex :class:`~carom.geometry.shapes.Polygon` pieces whose vertices are input vertices, whose
interiors are disjoint and whose union is the input polygon exactly (no vertex is moved or dropped beyond
the cleaning described below).

Cleaning (the same tolerances as the hull, so a decomposed outline and a ``Polygon`` agree on what a point
is): consecutive points closer than ``WELDING_TOLERANCE`` are welded (the first is kept, the closing point
of an explicitly closed ring is welded to the first), then a vertex closer than ``COLLINEAR_TOLERANCE`` to
the line through its two neighbours is dropped when it lies *between* them (a straight vertex: dropping it
changes the area by at most tolerance × edge length). When it lies outside them the outline turns back on
itself along one line (a zero-width spike), which is reported as two overlapping edges.

Simplicity is checked in O(n²): every pair of non-adjacent edges is tested with orientation predicates
(touching counts as crossing: a pinched outline is not simple), and non-adjacent vertices must be at least
``WELDING_TOLERANCE`` apart. The latter guarantees that every diagonal, hence every piece edge, is longer
than the welding tolerance.

Ear clipping: vertex i (neighbours a, c on the remaining ring) is an *ear* when it is a strictly convex
corner, orient(a, i, c) > 0, and no other ring vertex lies in the closed triangle (a, i, c); then (a, i, c)
is inside the polygon and cutting it leaves a simple polygon. Every simple polygon with more than three
vertices has two non-overlapping ears (Meisters), so the loop always progresses. Among the ears, the one
whose triangle has the largest *smallest height* (2·area / longest side) is cut first, which keeps sliver
triangles out when the outline allows it. Ear status is cached and only the two neighbours of a cut vertex
are re-evaluated, so the whole triangulation is O(n²).

Hertel–Mehlhorn: a diagonal shared by pieces P and Q is removed when the merged polygon is still convex at
both ends of the diagonal (the only vertices whose angle changes). The merged angle must be a corner by
more than ``COLLINEAR_TOLERANCE`` (the vertex is that far outside the chord joining its neighbours), so
merged pieces stay strictly convex in the sense ``Polygon`` validation uses. The result has at most four
times the minimum number of convex pieces (Hertel & Mehlhorn 1983).

Known limit: every piece corner turns strictly left, but a corner that comes from a sliver ear (one the
outline forces, or the greedy ear order picks) can lie closer than ``COLLINEAR_TOLERANCE`` to the chord of
its neighbours; about 0.4 % of pieces on random star polygons. Such a piece is kept as it is (dropping the
corner would open a gap between pieces), so ``Polygon(piece.vertices)`` could re-weld it.
"""
from typing import TYPE_CHECKING
if TYPE_CHECKING:  # (annotations only)
    from typing import Tuple
    from .._types import Any, ArrayLike, Bits, Optional, Points, TransformLike, Vec2
import numpy as np

from .._jit import njit
from ..constants import WELDING_TOLERANCE, COLLINEAR_TOLERANCE, WORLD_LIMIT
from ..errors import GeometryError
from .hull import quickhull_kernel
from .shapes import Polygon


@njit
def _orient(ax, ay, bx, by, cx, cy):
    """Twice the signed area of triangle abc (> 0 when counter-clockwise)."""
    return (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)


@njit
def clean_outline_kernel(points, weld_tol, linear_tol):
    """Indices of the input points kept after welding and dropping straight vertices.

    Returns ``(keep, status, where)``: status 0 = fine; 1 = the outline folds back on itself at input point
    ``where`` (it is within ``linear_tol`` of the line through its neighbours but not between them).
    """
    n = points.shape[0]
    keep = np.empty(n, np.int64)
    m = 0
    w2 = weld_tol * weld_tol
    for i in range(n):
        if m > 0:
            k = keep[m - 1]
            dx = points[i, 0] - points[k, 0]
            dy = points[i, 1] - points[k, 1]
            if dx * dx + dy * dy < w2:
                continue
        keep[m] = i
        m += 1
    while m > 1:
        a = keep[0]
        b = keep[m - 1]
        dx = points[a, 0] - points[b, 0]
        dy = points[a, 1] - points[b, 1]
        if dx * dx + dy * dy < w2:
            m -= 1
        else:
            break
    changed = True
    while changed and m >= 3:
        changed = False
        for k in range(m):
            u = keep[(k - 1) % m]
            p = keep[k]
            v = keep[(k + 1) % m]
            ex = points[v, 0] - points[u, 0]
            ey = points[v, 1] - points[u, 1]
            wx = points[p, 0] - points[u, 0]
            wy = points[p, 1] - points[u, 1]
            ee = ex * ex + ey * ey
            if ee < w2:
                # both neighbours are (nearly) the same point: p is the tip of a zero-width spike
                return keep[:m].copy(), 1, p
            dist = abs(ex * wy - ey * wx) / np.sqrt(ee)
            if dist < linear_tol:
                t = (ex * wx + ey * wy) / ee
                if t < 0.0 or t > 1.0:
                    return keep[:m].copy(), 1, p
                for j in range(k, m - 1):
                    keep[j] = keep[j + 1]
                m -= 1
                changed = True
                break
    return keep[:m].copy(), 0, -1


@njit
def _on_segment(ax, ay, bx, by, px, py):
    """p (already known collinear with ab) lies within the closed segment ab."""
    return min(ax, bx) <= px <= max(ax, bx) and min(ay, by) <= py <= max(ay, by)


@njit
def segments_intersect(ax, ay, bx, by, cx, cy, dx, dy):
    """Closed segments ab and cd share at least one point (crossing, touching or overlapping)."""
    o1 = _orient(ax, ay, bx, by, cx, cy)
    o2 = _orient(ax, ay, bx, by, dx, dy)
    o3 = _orient(cx, cy, dx, dy, ax, ay)
    o4 = _orient(cx, cy, dx, dy, bx, by)
    if ((o1 > 0.0 and o2 < 0.0) or (o1 < 0.0 and o2 > 0.0)) and \
            ((o3 > 0.0 and o4 < 0.0) or (o3 < 0.0 and o4 > 0.0)):
        return True
    if o1 == 0.0 and _on_segment(ax, ay, bx, by, cx, cy):
        return True
    if o2 == 0.0 and _on_segment(ax, ay, bx, by, dx, dy):
        return True
    if o3 == 0.0 and _on_segment(cx, cy, dx, dy, ax, ay):
        return True
    if o4 == 0.0 and _on_segment(cx, cy, dx, dy, bx, by):
        return True
    return False


@njit
def self_intersection_kernel(ring, weld_tol):
    """First defect of a closed ring (edge k runs from vertex k to k+1 mod m), O(m²).

    Returns ``(status, i, j)``: 0 = simple; 1 = edges i and j (non-adjacent) cross or touch; 2 = non-adjacent
    vertices i and j are closer than ``weld_tol`` (the outline pinches).
    """
    m = ring.shape[0]
    for i in range(m):
        ax = ring[i, 0]
        ay = ring[i, 1]
        bx = ring[(i + 1) % m, 0]
        by = ring[(i + 1) % m, 1]
        for j in range(i + 2, m):
            if i == 0 and j == m - 1:
                continue
            if segments_intersect(ax, ay, bx, by, ring[j, 0], ring[j, 1],
                                  ring[(j + 1) % m, 0], ring[(j + 1) % m, 1]):
                return 1, i, j
    w2 = weld_tol * weld_tol
    for i in range(m):
        for j in range(i + 2, m):
            if i == 0 and j == m - 1:
                continue
            dx = ring[i, 0] - ring[j, 0]
            dy = ring[i, 1] - ring[j, 1]
            if dx * dx + dy * dy < w2:
                return 2, i, j
    return 0, -1, -1


@njit
def _in_closed_triangle(ax, ay, bx, by, cx, cy, px, py):
    """p inside or on the boundary of the counter-clockwise triangle abc."""
    return (_orient(ax, ay, bx, by, px, py) >= 0.0 and _orient(bx, by, cx, cy, px, py) >= 0.0
            and _orient(cx, cy, ax, ay, px, py) >= 0.0)


@njit
def _ear_quality(ring, prev, nxt, i):
    """Smallest height of the ear triangle (prev, i, next), or -1 when i is not an ear."""
    a = prev[i]
    c = nxt[i]
    ax = ring[a, 0]
    ay = ring[a, 1]
    bx = ring[i, 0]
    by = ring[i, 1]
    cx = ring[c, 0]
    cy = ring[c, 1]
    o = _orient(ax, ay, bx, by, cx, cy)
    if not o > 0.0:
        return -1.0
    j = nxt[c]
    while j != a:
        if _in_closed_triangle(ax, ay, bx, by, cx, cy, ring[j, 0], ring[j, 1]):
            return -1.0
        j = nxt[j]
    l1 = (bx - ax) ** 2 + (by - ay) ** 2
    l2 = (cx - bx) ** 2 + (cy - by) ** 2
    l3 = (ax - cx) ** 2 + (ay - cy) ** 2
    return o / np.sqrt(max(l1, max(l2, l3)))


@njit
def ear_clip_kernel(ring):
    """Triangulate a simple counter-clockwise ring (m ≥ 3) into ``(k, 3)`` ring indices, CCW triangles.

    Returns ``(triangles, ok)``; ``ok`` is False only if no ear is found, which exact arithmetic rules out
    for a simple ring (kept as a guard against round-off on nearly degenerate outlines). A vertex that
    becomes exactly straight while clipping is removed without emitting a zero-area triangle.
    """
    m = ring.shape[0]
    prev = np.empty(m, np.int64)
    nxt = np.empty(m, np.int64)
    for i in range(m):
        prev[i] = (i - 1) % m
        nxt[i] = (i + 1) % m
    quality = np.empty(m)
    for i in range(m):
        quality[i] = _ear_quality(ring, prev, nxt, i)
    tris = np.empty((max(m - 2, 1), 3), np.int64)
    nt = 0
    remaining = m
    start = 0
    while remaining > 3:
        best = -1
        bq = -1.0
        i = start
        for _ in range(remaining):
            if quality[i] > bq:
                bq = quality[i]
                best = i
            i = nxt[i]
        if best < 0:
            # no ear: drop a vertex that has become exactly straight (between its neighbours), if any
            i = start
            for _ in range(remaining):
                a = prev[i]
                c = nxt[i]
                if _orient(ring[a, 0], ring[a, 1], ring[i, 0], ring[i, 1], ring[c, 0], ring[c, 1]) == 0.0 \
                        and _on_segment(ring[a, 0], ring[a, 1], ring[c, 0], ring[c, 1], ring[i, 0], ring[i, 1]):
                    best = i
                    break
                i = nxt[i]
            if best < 0:
                return tris[:nt], False
        else:
            tris[nt, 0] = prev[best]
            tris[nt, 1] = best
            tris[nt, 2] = nxt[best]
            nt += 1
        a = prev[best]
        c = nxt[best]
        nxt[a] = c
        prev[c] = a
        quality[best] = -1.0
        remaining -= 1
        start = a
        quality[a] = _ear_quality(ring, prev, nxt, a)
        quality[c] = _ear_quality(ring, prev, nxt, c)
    a = start
    b = nxt[a]
    c = nxt[b]
    if _orient(ring[a, 0], ring[a, 1], ring[b, 0], ring[b, 1], ring[c, 0], ring[c, 1]) > 0.0:
        tris[nt, 0] = a
        tris[nt, 1] = b
        tris[nt, 2] = c
        nt += 1
    return tris[:nt], True


@njit
def _find(parent, i):
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


@njit
def _corner_height(ring, p, v, q):
    """How far v lies outside the chord p→q (positive for a convex corner of a CCW polygon)."""
    ex = ring[q, 0] - ring[p, 0]
    ey = ring[q, 1] - ring[p, 1]
    length = np.sqrt(ex * ex + ey * ey)
    if length == 0.0:
        return 0.0
    return _orient(ring[p, 0], ring[p, 1], ring[v, 0], ring[v, 1], ring[q, 0], ring[q, 1]) / length


@njit
def merge_convex_kernel(ring, tris, linear_tol):
    """Hertel–Mehlhorn: merge CCW triangles across diagonals while both diagonal ends stay convex.

    Returns ``(indices, offsets)``: piece k is ``indices[offsets[k]:offsets[k + 1]]`` (ring indices, CCW).
    Diagonals are found by matching each directed triangle edge a→b with its twin b→a (sorted keys).
    """
    m = ring.shape[0]
    nt = tris.shape[0]
    pieces = np.full((nt, m), -1, np.int64)
    plen = np.full(nt, 3, np.int64)
    parent = np.arange(nt)
    for t in range(nt):
        for k in range(3):
            pieces[t, k] = tris[t, k]
    keys = np.empty(3 * nt, np.int64)
    for t in range(nt):
        for k in range(3):
            keys[3 * t + k] = tris[t, k] * m + tris[t, (k + 1) % 3]
    order = np.argsort(keys)
    sorted_keys = keys[order]
    merged = np.empty(m, np.int64)
    for e in range(3 * nt):
        t = e // 3
        k = e % 3
        a = tris[t, k]
        b = tris[t, (k + 1) % 3]
        if a > b:
            continue
        twin = b * m + a
        pos = np.searchsorted(sorted_keys, twin)
        if pos >= 3 * nt or sorted_keys[pos] != twin:
            continue                      # a polygon edge, not a diagonal
        P = _find(parent, t)
        Q = _find(parent, order[pos] // 3)
        if P == Q:
            continue
        lp = plen[P]
        lq = plen[Q]
        ia = -1
        for x in range(lp):
            if pieces[P, x] == a and pieces[P, (x + 1) % lp] == b:
                ia = x
                break
        ib = -1
        for x in range(lq):
            if pieces[Q, x] == b and pieces[Q, (x + 1) % lq] == a:
                ib = x
                break
        if ia < 0 or ib < 0:
            continue
        # angles change only at a and b
        pa = pieces[P, (ia - 1) % lp]
        na = pieces[Q, (ib + 2) % lq]
        pb = pieces[Q, (ib - 1) % lq]
        nb = pieces[P, (ia + 2) % lp]
        if _corner_height(ring, pa, a, na) <= linear_tol or _corner_height(ring, pb, b, nb) <= linear_tol:
            continue
        # P from b round to a, then Q strictly between a and b
        cnt = 0
        for x in range(lp):
            merged[cnt] = pieces[P, (ia + 1 + x) % lp]
            cnt += 1
        for x in range(lq - 2):
            merged[cnt] = pieces[Q, (ib + 2 + x) % lq]
            cnt += 1
        for x in range(cnt):
            pieces[P, x] = merged[x]
        plen[P] = cnt
        parent[Q] = P
    total = 0
    count = 0
    for t in range(nt):
        if parent[t] == t:
            total += plen[t]
            count += 1
    indices = np.empty(total, np.int64)
    offsets = np.empty(count + 1, np.int64)
    offsets[0] = 0
    c = 0
    w = 0
    for t in range(nt):
        if parent[t] == t:
            for x in range(plen[t]):
                indices[w] = pieces[t, x]
                w += 1
            c += 1
            offsets[c] = w
    return indices, offsets


def _pt(p):
    return f"({p[0]:g}, {p[1]:g})"


def _prepare(points, name):
    """Validate and clean an outline. Returns (ring CCW (m, 2), input index of each ring vertex)."""
    try:
        arr = np.asarray(points, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise GeometryError(f"{name} must be an (n, 2) array of numbers, got {points!r}") from exc
    if arr.size == 0:
        arr = arr.reshape(0, 2)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise GeometryError(f"{name} must be an (n, 2) array of numbers, got shape {arr.shape}")
    bad = ~np.isfinite(arr).all(axis=1)
    if bad.any():
        i = int(np.argmax(bad))
        raise GeometryError(f"{name}[{i}] = ({float(arr[i, 0])}, {float(arr[i, 1])}) is not finite")
    arr = np.ascontiguousarray(arr)
    n = arr.shape[0]
    if n > 0 and np.abs(arr).max() > WORLD_LIMIT:
        i = int(np.argmax(np.abs(arr).max(axis=1)))
        raise GeometryError(f"{name}[{i}] = {_pt(arr[i])} is beyond the world limit {WORLD_LIMIT:g} m")
    if n < 3:
        raise GeometryError(f"{name}: an outline needs at least 3 points, got {n}: {arr.tolist()}")
    hull = quickhull_kernel(arr, WELDING_TOLERANCE, COLLINEAR_TOLERANCE)
    if hull.shape[0] < 3:
        what = "fewer than 3 distinct points" if hull.shape[0] < 2 else "collinear points (zero area)"
        raise GeometryError(f"{name} has {what} after welding within {WELDING_TOLERANCE:g} m and dropping "
                            f"points within {COLLINEAR_TOLERANCE:g} m of a line: {arr.tolist()}")
    keep, status, where = clean_outline_kernel(arr, WELDING_TOLERANCE, COLLINEAR_TOLERANCE)
    m = keep.shape[0]
    if status == 1:
        k = int(np.nonzero(keep == where)[0][0])
        u, v = int(keep[(k - 1) % m]), int(keep[(k + 1) % m])
        raise GeometryError(
            f"{name} is self-intersecting: edge {u}-{where} ({_pt(arr[u])} → {_pt(arr[where])}) and edge "
            f"{where}-{v} ({_pt(arr[where])} → {_pt(arr[v])}) overlap (the outline folds back at point "
            f"{where} = {_pt(arr[where])})")
    if m < 3:
        raise GeometryError(f"{name} has zero area after welding and dropping straight vertices: "
                            f"{arr.tolist()}")
    ring = np.ascontiguousarray(arr[keep])
    status, i, j = self_intersection_kernel(ring, WELDING_TOLERANCE)
    if status == 1:
        a0, a1 = int(keep[i]), int(keep[(i + 1) % m])
        b0, b1 = int(keep[j]), int(keep[(j + 1) % m])
        raise GeometryError(
            f"{name} is self-intersecting: edge {a0}-{a1} ({_pt(arr[a0])} → {_pt(arr[a1])}) crosses edge "
            f"{b0}-{b1} ({_pt(arr[b0])} → {_pt(arr[b1])})")
    if status == 2:
        a0, b0 = int(keep[i]), int(keep[j])
        raise GeometryError(
            f"{name} touches itself: points {a0} = {_pt(arr[a0])} and {b0} = {_pt(arr[b0])} are closer than "
            f"the welding tolerance {WELDING_TOLERANCE:g} m")
    x = ring[:, 0]
    y = ring[:, 1]
    area2 = float(np.dot(x, np.roll(y, -1)) - np.dot(np.roll(x, -1), y))
    if area2 == 0.0:
        raise GeometryError(f"{name} has zero area: {arr.tolist()}")
    if area2 < 0.0:
        ring = np.ascontiguousarray(ring[::-1])
        keep = np.ascontiguousarray(keep[::-1])
    return ring, keep


def _triangles(ring, name):
    tris, ok = ear_clip_kernel(ring)
    if not ok:
        raise GeometryError(f"{name}: ear clipping found no ear (the outline is numerically degenerate: "
                            f"nearly touching or nearly collinear features)")
    return tris


def triangulate(points: "ArrayLike") -> np.ndarray:
    """Triangles of a simple polygon as a ``(k, 3)`` array of indices into ``points``, each counter-clockwise.

    Validation and cleaning are those of :func:`decompose` (welded and straight vertices are not used).
    """
    ring, keep = _prepare(points, "triangulate points")
    return keep[_triangles(ring, "triangulate points")]


def decompose(points: "ArrayLike") -> list:
    """Split a simple polygon outline into strictly convex :class:`Polygon` pieces whose union is the polygon.

    ``points``: (n, 2) outline, either winding, not closed or closed (a repeated first point is welded).
    Raises :class:`GeometryError` (also a ``ValueError``) for non-finite values, fewer than 3 distinct points,
    collinear points / zero area, and self-intersecting or self-touching outlines (naming the two edges).
    A convex outline comes back as one piece.
    """
    ring, _ = _prepare(points, "decompose points")
    tris = _triangles(ring, "decompose points")
    indices, offsets = merge_convex_kernel(ring, tris, COLLINEAR_TOLERANCE)
    pieces = []
    for k in range(offsets.shape[0] - 1):
        piece = np.ascontiguousarray(ring[indices[offsets[k]:offsets[k + 1]]])
        pieces.append(Polygon._from_hull(piece))
    return pieces
