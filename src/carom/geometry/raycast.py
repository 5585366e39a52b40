"""Ray casts against every shape kind: a compiled kernel in the shape's frame, a bulk kernel, thin wrappers.

A ray is the segment ``o + t·d`` for ``t`` in [0, 1] (origin ``o``, translation ``d``); a hit reports the
first ``t`` (the *fraction*), the point ``o + t·d`` and the outward unit surface normal there. Fractions are
the same in local and world frames (a rigid transform keeps ratios of lengths).

Conventions (Box2D's):

- A ray whose origin is inside a shape reports **no hit**: there is no entry, and a hit at fraction 0 with
  a made-up normal would push a query result the wrong way.
- A ray that starts on the surface and points into the shape hits at fraction 0; one that points out of it
  or slides along a flat face does not hit.
- A segment (zero thickness) is hit from either side, with the normal facing the side the ray comes from
  (``dot(normal, d) < 0``). A ray collinear with a segment does not hit it (no normal faces such a ray).
- A grazing ray (tangent to a circle or capsule cap) hits at the tangent point with a normal perpendicular
  to the ray; every other hit has ``dot(normal, d) < 0``. A ray sliding along a polygon edge from outside
  enters at the edge's first vertex, with the normal of the other edge there.
- The kernel returns no hit for a zero translation; :func:`raycast` rejects it with ``GeometryError``.

Per kind, with core vertices ``v``, outward edge normals ``n`` and radius ``r``:

- **circle** (1 vertex): the entry root of ``|s + t·d|² = r²`` with ``s = o − c``. Writing
  ``a = d·d``, ``b = s·d``, ``k = s·s − r²``, the half discriminant is ``a·r² − cross(s, d)²`` (Lagrange's
  identity ``a·(s·s) = b² + cross²``), which stays accurate for grazing rays where ``b² − a·k`` cancels;
  the entry root ``(−b − h)/a`` is evaluated as ``k / (−b + h)`` so it never subtracts close numbers.
- **polygon** (n ≥ 3, r = 0): Cyrus–Beck clipping. Each edge is the half-plane ``n_i·x ≤ n_i·v_i``; along
  the ray ``t·(n_i·d) ≤ n_i·(v_i − o)``. Edges with ``n_i·d < 0`` raise the entry bound, the others lower
  the exit bound; the ray hits at the largest entry bound if it stays below the smallest exit bound and
  some edge was entered at ``t ≥ 0``. No entering edge means the origin is in the closed polygon.
- **segment** (2 vertices, r = 0): intersection with the line ``n_0·(x − v_0) = 0``, then a range check of
  the point along the segment.
- **capsule / rounded polygon** (r > 0): the shape ``core ⊕ disk(r)`` is the union of the core polygon (for
  n ≥ 3), one rectangle per core edge (the edge swept outwards by ``r``: half-planes ``n_i`` at offset
  ``r``, ``−n_i`` through the edge, and the two end lines) and one disk per vertex. For a ray starting
  outside the union, the smallest entry fraction over the pieces is the entry into the union: before it
  the ray is in no piece, at it the ray is in one. If the origin is in the closed piece and the ray does
  not enter it (a piece reports "inside") the origin is in the shape and there is no hit. A capsule is the
  2-vertex case: its two opposite edges give the two halves of the rectangle. Cost O(n).

Bulk layout (:func:`raycast_many_kernel`, one ray against K shapes): ``vertices`` and ``normals`` are
``(V, 2)`` float64 arrays holding every shape's core one after another; shape k uses rows
``offsets[k] : offsets[k] + counts[k]`` (counts 1 = circle, 2 = segment or capsule, ≥ 3 = polygon);
``radii[k]`` is its radius; its world placement is ``(xs[k], ys[k])`` with rotation cosine ``cs[k]`` and
sine ``ss[k]``. Outputs are ``hit`` (K,) bool, ``fraction`` (K,) and world ``point`` and ``normal`` (K, 2);
rows without a hit hold fraction 1.0 and zeros. :func:`pack_shapes` builds the layout from shape objects.
"""
from typing import TYPE_CHECKING
if TYPE_CHECKING:  # (annotations only)
    from typing import Tuple
    from .._types import Any, ArrayLike, Bits, Optional, Points, TransformLike, Vec2
import math
from collections import namedtuple

import numpy as np

from .._jit import njit
from ..errors import GeometryError
from ..constants import WORLD_LIMIT
from .shapes import Shape, as_transform
from ._math import rotate, inv_rotate, transform_point, inv_transform_point

RayHit = namedtuple("RayHit", ["fraction", "point", "normal"])
RayHit.__doc__ = """A ray hit in world space: ``fraction`` of the translation, ``point`` (x, y) and the
unit outward ``normal`` (x, y) of the surface at the point."""

_MISS, _HIT, _INSIDE = 0, 1, 2
_NO_HIT = (False, 1.0, 0.0, 0.0, 0.0, 0.0)


@njit
def _clip(num, den, nx, ny, lower, upper, bnx, bny, entered):
    """Apply the half-plane ``t·den ≤ num`` to the interval [lower, upper]. Returns the new state and
    whether the interval became empty. Entering ties (``>=``) make an origin on a face, moving in, enter
    at t = 0."""
    if den == 0.0:
        return lower, upper, bnx, bny, entered, num < 0.0
    t = num / den
    if den < 0.0:
        if t >= lower:
            lower = t
            bnx = nx
            bny = ny
            entered = True
    elif t < upper:
        upper = t
    return lower, upper, bnx, bny, entered, upper < lower


@njit
def _cast_core_polygon(v, n, ox, oy, dx, dy):
    """Cyrus–Beck against the core polygon. Returns (status, t, nx, ny)."""
    lower = 0.0
    upper = 1.0
    bnx = 0.0
    bny = 0.0
    entered = np.bool_(False)
    for i in range(v.shape[0]):
        nx = n[i, 0]
        ny = n[i, 1]
        num = nx * (v[i, 0] - ox) + ny * (v[i, 1] - oy)
        den = nx * dx + ny * dy
        lower, upper, bnx, bny, entered, empty = _clip(num, den, nx, ny, lower, upper, bnx, bny, entered)
        if empty:
            return _MISS, 0.0, 0.0, 0.0
    if not entered:
        return _INSIDE, 0.0, 0.0, 0.0
    return _HIT, lower, bnx, bny


@njit
def _cast_edge_rect(ax, ay, bx, by, nx, ny, r, ox, oy, dx, dy):
    """Cyrus–Beck against the rectangle swept by edge a→b (outward normal n) outwards by r."""
    ex = -ny                      # edge direction: n = (e.y, -e.x)  =>  e = (-n.y, n.x)
    ey = nx
    lower = 0.0
    upper = 1.0
    bnx = 0.0
    bny = 0.0
    entered = np.bool_(False)
    # outer face: n·x ≤ n·a + r
    num = nx * (ax - ox) + ny * (ay - oy) + r
    lower, upper, bnx, bny, entered, empty = _clip(num, nx * dx + ny * dy, nx, ny, lower, upper, bnx, bny,
                                                   entered)
    if empty:
        return _MISS, 0.0, 0.0, 0.0
    # inner face (the core edge): −n·x ≤ −n·a
    num = -(nx * (ax - ox) + ny * (ay - oy))
    lower, upper, bnx, bny, entered, empty = _clip(num, -(nx * dx + ny * dy), -nx, -ny, lower, upper, bnx,
                                                   bny, entered)
    if empty:
        return _MISS, 0.0, 0.0, 0.0
    # end at b: e·x ≤ e·b
    num = ex * (bx - ox) + ey * (by - oy)
    lower, upper, bnx, bny, entered, empty = _clip(num, ex * dx + ey * dy, ex, ey, lower, upper, bnx, bny,
                                                   entered)
    if empty:
        return _MISS, 0.0, 0.0, 0.0
    # end at a: −e·x ≤ −e·a
    num = -(ex * (ax - ox) + ey * (ay - oy))
    lower, upper, bnx, bny, entered, empty = _clip(num, -(ex * dx + ey * dy), -ex, -ey, lower, upper, bnx,
                                                   bny, entered)
    if empty:
        return _MISS, 0.0, 0.0, 0.0
    if not entered:
        return _INSIDE, 0.0, 0.0, 0.0
    # Entry through an end face lies in the closed vertex disk, so it can be the first entry into the shape
    # only at the outer corner a + r·n (or b + r·n), where the surface normal is n; entry through the inner
    # face comes from the core and is never first. Either way the surface normal is the outer one.
    return _HIT, lower, nx, ny


@njit
def _cast_disk(cx, cy, r, ox, oy, dx, dy):
    """Entry into the disk of radius r at c. Returns (status, t, nx, ny)."""
    sx = ox - cx
    sy = oy - cy
    k = sx * sx + sy * sy - r * r
    if k < 0.0:
        return _INSIDE, 0.0, 0.0, 0.0
    b = sx * dx + sy * dy
    if b >= 0.0:
        return _MISS, 0.0, 0.0, 0.0          # moving away (or tangentially from the surface)
    a = dx * dx + dy * dy
    cr = sx * dy - sy * dx
    ra = math.sqrt(a) * r
    acr = abs(cr)
    if acr > ra:
        return _MISS, 0.0, 0.0, 0.0
    h = math.sqrt((ra - acr) * (ra + acr))
    t = k / (h - b)
    if t > 1.0:
        return _MISS, 0.0, 0.0, 0.0
    px = sx + t * dx
    py = sy + t * dy
    length = math.sqrt(px * px + py * py)
    if length == 0.0:
        return _MISS, 0.0, 0.0, 0.0
    return _HIT, t, px / length, py / length


@njit
def _cast_segment(v, n, ox, oy, dx, dy):
    """Two-sided thin segment. Returns (status, t, nx, ny); collinear rays miss."""
    nx = n[0, 0]
    ny = n[0, 1]
    den = nx * dx + ny * dy
    if den == 0.0:
        return _MISS, 0.0, 0.0, 0.0
    num = nx * (v[0, 0] - ox) + ny * (v[0, 1] - oy)
    t = num / den
    if t < 0.0 or t > 1.0:
        return _MISS, 0.0, 0.0, 0.0
    px = ox + t * dx
    py = oy + t * dy
    ex = v[1, 0] - v[0, 0]
    ey = v[1, 1] - v[0, 1]
    along = ex * (px - v[0, 0]) + ey * (py - v[0, 1])
    if along < 0.0 or along > ex * ex + ey * ey:
        return _MISS, 0.0, 0.0, 0.0
    if den > 0.0:
        nx = -nx
        ny = -ny
    return _HIT, t, nx, ny


@njit
def raycast_shape(v, n, r, ox, oy, dx, dy):
    """Ray o → o + d against the shape (core ``v``, normals ``n``, radius ``r``) in its own frame.

    Returns ``(hit, fraction, px, py, nx, ny)``; see the module docstring for the conventions.
    """
    if dx == 0.0 and dy == 0.0:
        return _NO_HIT
    count = v.shape[0]
    if count == 1:
        status, t, nx, ny = _cast_disk(v[0, 0], v[0, 1], r, ox, oy, dx, dy)
    elif r == 0.0:
        if count == 2:
            status, t, nx, ny = _cast_segment(v, n, ox, oy, dx, dy)
        else:
            status, t, nx, ny = _cast_core_polygon(v, n, ox, oy, dx, dy)
    else:
        status = _MISS
        t = 2.0
        nx = 0.0
        ny = 0.0
        if count >= 3:
            s, tt, mx, my = _cast_core_polygon(v, n, ox, oy, dx, dy)
            if s == _INSIDE:
                return _NO_HIT
            if s == _HIT and tt < t:
                status, t, nx, ny = s, tt, mx, my
        for i in range(count):
            j = i + 1 if i + 1 < count else 0
            s, tt, mx, my = _cast_edge_rect(v[i, 0], v[i, 1], v[j, 0], v[j, 1], n[i, 0], n[i, 1], r,
                                            ox, oy, dx, dy)
            if s == _INSIDE:
                return _NO_HIT
            if s == _HIT and tt < t:
                status, t, nx, ny = s, tt, mx, my
            s, tt, mx, my = _cast_disk(v[i, 0], v[i, 1], r, ox, oy, dx, dy)
            if s == _INSIDE:
                return _NO_HIT
            if s == _HIT and tt < t:
                status, t, nx, ny = s, tt, mx, my
    if status != _HIT:
        return _NO_HIT
    return True, t, ox + t * dx, oy + t * dy, nx, ny


@njit
def raycast_world_kernel(v, n, r, x, y, c, s, ox, oy, dx, dy):
    """:func:`raycast_shape` for a shape placed at (x, y, c, s); ray and results in world space."""
    lox, loy = inv_transform_point(x, y, c, s, ox, oy)
    ldx, ldy = inv_rotate(c, s, dx, dy)
    hit, t, px, py, nx, ny = raycast_shape(v, n, r, lox, loy, ldx, ldy)
    if not hit:
        return _NO_HIT
    wx, wy = transform_point(x, y, c, s, px, py)
    wnx, wny = rotate(c, s, nx, ny)
    return True, t, wx, wy, wnx, wny


@njit
def raycast_many_kernel(vertices, normals, offsets, counts, radii, xs, ys, cs, ss, ox, oy, dx, dy):
    """One world-space ray against K packed shapes (layout in the module docstring).

    Returns ``(hit, fraction, point, normal)`` arrays of shapes (K,), (K,), (K, 2), (K, 2).
    """
    k_count = offsets.shape[0]
    hit = np.zeros(k_count, np.bool_)
    fraction = np.ones(k_count)
    point = np.zeros((k_count, 2))
    normal = np.zeros((k_count, 2))
    for k in range(k_count):
        a = offsets[k]
        b = a + counts[k]
        h, t, px, py, nx, ny = raycast_world_kernel(vertices[a:b], normals[a:b], radii[k], xs[k], ys[k],
                                                    cs[k], ss[k], ox, oy, dx, dy)
        if h:
            hit[k] = True
            fraction[k] = t
            point[k, 0] = px
            point[k, 1] = py
            normal[k, 0] = nx
            normal[k, 1] = ny
    return hit, fraction, point, normal


@njit
def raycast_closest_kernel(vertices, normals, offsets, counts, radii, xs, ys, cs, ss, ox, oy, dx, dy):
    """Index of the shape hit first by the ray (−1 if none) and its ``(fraction, px, py, nx, ny)``.

    Ties keep the lowest index, so the answer does not depend on anything but the order of the shapes.
    """
    best = -1
    bt = 2.0
    bpx = 0.0
    bpy = 0.0
    bnx = 0.0
    bny = 0.0
    for k in range(offsets.shape[0]):
        a = offsets[k]
        b = a + counts[k]
        h, t, px, py, nx, ny = raycast_world_kernel(vertices[a:b], normals[a:b], radii[k], xs[k], ys[k],
                                                    cs[k], ss[k], ox, oy, dx, dy)
        if h and t < bt:
            best = k
            bt = t
            bpx = px
            bpy = py
            bnx = nx
            bny = ny
    return best, bt, bpx, bpy, bnx, bny


def _vec(value, name):
    try:
        arr = np.asarray(value, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError) as exc:
        raise GeometryError(f"{name} must be a point (x, y), got {value!r}") from exc
    if arr.shape != (2,):
        raise GeometryError(f"{name} must be a point (x, y), got {value!r}")
    x, y = float(arr[0]), float(arr[1])
    if not (math.isfinite(x) and math.isfinite(y)):
        raise GeometryError(f"{name} = ({x}, {y}) is not finite")
    if max(abs(x), abs(y)) > WORLD_LIMIT:
        raise GeometryError(f"{name} = ({x}, {y}) is beyond the world limit {WORLD_LIMIT:g} m")
    return arr


def _ray(origin, translation):
    o = _vec(origin, "ray origin")
    d = _vec(translation, "ray translation")
    if d[0] == 0.0 and d[1] == 0.0:
        raise GeometryError(f"ray translation = ({float(d[0])}, {float(d[1])}) is zero: a ray needs a "
                            f"direction and a length")
    return o, d


def raycast(shape: "Any", transform: "TransformLike", origin: "Vec2", translation: "Vec2") -> "Any":
    """Cast the ray ``origin → origin + translation`` (world space) against ``shape`` placed by
    ``transform`` (a Transform, None, (x, y) or (x, y, angle)).

    Returns a :class:`RayHit` ``(fraction, point, normal)`` or None. A ray starting inside the shape does not
    hit it. Non-finite values and a zero translation raise :class:`GeometryError`.
    """
    if not isinstance(shape, Shape):
        raise GeometryError(f"raycast needs a carom shape, got {shape!r}")
    xf = as_transform(transform)
    o, d = _ray(origin, translation)
    x, y, c, s = xf.as_tuple()
    hit, t, px, py, nx, ny = raycast_world_kernel(shape._kernel_vertices, shape._kernel_normals, shape.radius,
                                                  x, y, c, s, float(o[0]), float(o[1]), float(d[0]), float(d[1]))
    if not hit:
        return None
    return RayHit(float(t), np.array([px, py]), np.array([nx, ny]))


def pack_shapes(shapes, transforms):
    """Pack shapes and their placements into the bulk layout of :func:`raycast_many_kernel`.

    Returns ``(vertices, normals, offsets, counts, radii, xs, ys, cs, ss)``.
    """
    shapes = list(shapes)
    transforms = list(transforms)
    if len(shapes) != len(transforms):
        raise GeometryError(f"got {len(shapes)} shapes but {len(transforms)} transforms")
    for i, sh in enumerate(shapes):
        if not isinstance(sh, Shape):
            raise GeometryError(f"shapes[{i}] is not a carom shape: {sh!r}")
    counts = np.array([sh.vertices.shape[0] for sh in shapes], np.int64)
    offsets = np.zeros(len(shapes), np.int64)
    if len(shapes) > 1:
        offsets[1:] = np.cumsum(counts)[:-1]
    if shapes:
        vertices = np.ascontiguousarray(np.concatenate([sh.vertices for sh in shapes]))
        normals = np.ascontiguousarray(np.concatenate([sh.normals for sh in shapes]))
    else:
        vertices = np.zeros((0, 2))
        normals = np.zeros((0, 2))
    radii = np.array([sh.radius for sh in shapes], np.float64)
    tuples = np.array([as_transform(xf).as_tuple() for xf in transforms], np.float64).reshape(-1, 4)
    xs, ys, cs, ss = (np.ascontiguousarray(tuples[:, i]) for i in range(4))
    return vertices, normals, offsets, counts, radii, xs, ys, cs, ss


def raycast_many(shapes, transforms, origin, translation):
    """Cast one ray against many shapes: returns ``(hit, fraction, point, normal)`` arrays (see
    :func:`raycast_many_kernel`)."""
    o, d = _ray(origin, translation)
    packed = pack_shapes(shapes, transforms)
    return raycast_many_kernel(*packed, float(o[0]), float(o[1]), float(d[0]), float(d[1]))
