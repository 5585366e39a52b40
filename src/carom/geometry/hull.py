"""Convex hull by Quickhull (the second reference article), robust to duplicate and collinear points.

Quickhull: the leftmost and rightmost points split the set into two chains. For a hull edge u→v (the hull is
kept counter-clockwise, so "outside" is to the right of u→v) the point farthest outside becomes a hull
vertex f; every point inside triangle (u, f, v) can never be on the hull and is dropped; the edges u→f and
f→v are then treated the same way with the points outside each. The hull is stored as a linked list
``next[i]`` so the edges can be processed in any order with an explicit stack (no recursion in kernels).

Robustness: points closer than ``WELDING_TOLERANCE`` are welded first, a point counts as outside an edge
only if it is more than ``COLLINEAR_TOLERANCE`` away from its line, and a final pass removes hull vertices
that are within that tolerance of the line through their neighbours. Fewer than 3 points come back when
the input is degenerate (all welded: 1 point; all collinear: the 2 extreme points).
"""
from typing import TYPE_CHECKING
if TYPE_CHECKING:  # (annotations only)
    from typing import Tuple
    from .._types import Any, ArrayLike, Bits, Optional, Points, TransformLike, Vec2
import numpy as np

from .._jit import njit
from ..constants import WELDING_TOLERANCE, COLLINEAR_TOLERANCE
from ..errors import GeometryError


@njit
def _weld(points, tol):
    n = points.shape[0]
    keep = np.empty(n, np.int64)
    count = 0
    tol2 = tol * tol
    for i in range(n):
        px = points[i, 0]
        py = points[i, 1]
        unique = True
        for j in range(count):
            k = keep[j]
            dx = points[k, 0] - px
            dy = points[k, 1] - py
            if dx * dx + dy * dy < tol2:
                unique = False
                break
        if unique:
            keep[count] = i
            count += 1
    out = np.empty((count, 2))
    for j in range(count):
        out[j, 0] = points[keep[j], 0]
        out[j, 1] = points[keep[j], 1]
    return out


@njit
def _outside_distance(pts, u, v, p):
    """Signed distance of p to the right of the directed line u→v (positive = outside a CCW hull)."""
    ex = pts[v, 0] - pts[u, 0]
    ey = pts[v, 1] - pts[u, 1]
    length = np.sqrt(ex * ex + ey * ey)
    if length == 0.0:
        return 0.0
    return -(ex * (pts[p, 1] - pts[u, 1]) - ey * (pts[p, 0] - pts[u, 0])) / length


@njit
def quickhull_kernel(points, weld_tol, linear_tol):
    """Counter-clockwise hull vertices of ``points`` (m × 2), m ≤ 2 when the input is degenerate."""
    pts = _weld(points, weld_tol)
    n = pts.shape[0]
    if n < 3:
        return pts
    a = 0
    b = 0
    for i in range(1, n):
        x = pts[i, 0]
        y = pts[i, 1]
        if x < pts[a, 0] or (x == pts[a, 0] and y < pts[a, 1]):
            a = i
        if x > pts[b, 0] or (x == pts[b, 0] and y > pts[b, 1]):
            b = i
    nxt = np.full(n, -1, np.int64)
    nxt[a] = b
    nxt[b] = a
    # stack of tasks: (u, v, candidate array)
    stack_u = [a, b]
    stack_v = [b, a]
    all_idx = np.arange(n)
    stack_c = [all_idx, all_idx]
    while len(stack_u) > 0:
        u = stack_u.pop()
        v = stack_v.pop()
        cand = stack_c.pop()
        far = -1
        far_d = linear_tol
        m = 0
        outside = np.empty(cand.shape[0], np.int64)
        for k in range(cand.shape[0]):
            p = cand[k]
            if p == u or p == v:
                continue
            d = _outside_distance(pts, u, v, p)
            if d > linear_tol:
                outside[m] = p
                m += 1
                if d > far_d:
                    far_d = d
                    far = p
        if far < 0:
            continue
        nxt[u] = far
        nxt[far] = v
        outside = outside[:m].copy()
        stack_u.append(u)
        stack_v.append(far)
        stack_c.append(outside)
        stack_u.append(far)
        stack_v.append(v)
        stack_c.append(outside)
    # walk the list from the lowest-leftmost point, counter-clockwise
    order = np.empty(n, np.int64)
    count = 0
    i = a
    while True:
        order[count] = i
        count += 1
        i = nxt[i]
        if i == a or count >= n:
            break
    # remove vertices (nearly) on the line through their neighbours
    changed = True
    while changed and count > 2:
        changed = False
        for k in range(count):
            u = order[(k - 1) % count]
            p = order[k]
            v = order[(k + 1) % count]
            if _outside_distance(pts, u, v, p) < linear_tol:
                for j in range(k, count - 1):
                    order[j] = order[j + 1]
                count -= 1
                changed = True
                break
    out = np.empty((count, 2))
    for k in range(count):
        out[k, 0] = pts[order[k], 0]
        out[k, 1] = pts[order[k], 1]
    return out


def as_points(points, name="points") -> np.ndarray:
    """Validate an (n, 2) array of finite floats, naming the bad value in the error."""
    try:
        arr = np.asarray(points, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise GeometryError(f"{name} must be an (n, 2) array of numbers, got {points!r}") from exc
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise GeometryError(f"{name} must be an (n, 2) array of numbers, got shape {arr.shape}")
    bad = ~np.isfinite(arr).all(axis=1)
    if bad.any():
        i = int(np.argmax(bad))
        raise GeometryError(f"{name}[{i}] = {tuple(float(v) for v in arr[i])} is not finite")
    return np.ascontiguousarray(arr)


def convex_hull(points: "ArrayLike") -> np.ndarray:
    """Counter-clockwise convex hull of a point cloud as an (m, 2) array.

    Duplicate points (closer than ``WELDING_TOLERANCE``) are welded and collinear points dropped, so every
    returned vertex is a strict corner. Degenerate input returns fewer than 3 points rather than raising;
    :class:`carom.geometry.Polygon` is what rejects it.
    """
    arr = as_points(points)
    if arr.shape[0] == 0:
        return np.empty((0, 2))
    return quickhull_kernel(arr, WELDING_TOLERANCE, COLLINEAR_TOLERANCE)
