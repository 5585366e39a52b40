"""Exact mass properties of every shape, rounded polygons and capsules included.

A shape is its core polygon ⊕ a disk of radius r. That set splits exactly into pieces that do not overlap:

- the core polygon itself (n ≥ 3),
- one rectangle of length |e_i| and width r on the outside of each core edge,
- one circular sector of radius r at each core vertex, spanning the angle between the normals of the two
  edges that meet there (the sectors' angles add up to 2π, so together they make one full disk).

A circle is the 1-vertex case (one sector of angle 2π), a capsule the 2-vertex case (two rectangles on the
two sides of its segment, two half disks). Area, first moment and polar second moment about the shape's
first core vertex (its reference point o) are summed over the pieces, then moved to the centroid by the
parallel-axis theorem. Relative to o every term is of the shape's own size, so nothing cancels however far
the shape is from its body's origin (about the origin, J − A|c|² lost every digit for a small shape far away):

- polygon (triangle fan from o, triangles (o, p, q) with p, q relative to o): A = ½ p×q, S = A (p + q)/3,
  J = (p×q)/12 · (p·p + p·q + q·q);
- sector at apex v spanning angles α1..α2 = α1 + θ: A = θ r²/2, first moment about the apex
  r³/3 · (sin α2 − sin α1, cos α1 − cos α2), polar moment about the apex θ r⁴/4, and about o
  J_o = J_v + 2 v·S_v + A |v|².

Mass = density · A, centroid o + c, inertia about it = density · (J_o − A |c|²). A body combines its shapes
about their own centroids with the parallel-axis theorem on the differences c_shape − c_body.
"""
from typing import TYPE_CHECKING
if TYPE_CHECKING:  # (annotations only)
    from typing import Tuple
    from .._types import Any, ArrayLike, Bits, Optional, Points, TransformLike, Vec2
import math
from collections import namedtuple

import numpy as np

from .. import _validate
from .._jit import njit
from ..errors import GeometryError

MassProperties = namedtuple("MassProperties", "mass centroid inertia")


@njit
def _polygon_moments(px, py, count):
    """Area, first moments (Sx, Sy) and polar moment J about the origin of a simple CCW polygon."""
    area = 0.0
    sx = 0.0
    sy = 0.0
    j = 0.0
    for i in range(count):
        ax = px[i]
        ay = py[i]
        bx = px[(i + 1) % count]
        by = py[(i + 1) % count]
        d = ax * by - ay * bx
        area += 0.5 * d
        sx += d * (ax + bx) / 6.0
        sy += d * (ay + by) / 6.0
        j += d * (ax * ax + ax * bx + bx * bx + ay * ay + ay * by + by * by) / 12.0
    return area, sx, sy, j


#: how many centres of mass :func:`shape_reach` remembers per shape
REACH_MEMO = 8

#: what a world derives from a shape each time a body takes it (:func:`shape_terms`)
ShapeTerms = namedtuple("ShapeTerms", "area cx cy inertia half_extent extent")


def _memo(shape):
    """The shape's memo (its :class:`ShapeTerms`, its reaches by centre), made on first use. A shape cannot change,
    so it is never stale."""
    memo = shape._memo
    if memo is None:
        r = shape.radius
        verts = shape.vertices
        a, cx, cy, jc = shape_moments(shape._kernel_vertices, shape._kernel_normals, r)
        lo, hi = verts.min(axis=0) - r, verts.max(axis=0) + r
        half = 0.5 * min(hi - lo)
        if verts.shape[0] == 2 and r > 0:
            half = r
        memo = shape._memo = (ShapeTerms(a, cx, cy, jc, max(half, r), float(np.abs(verts).max()) + r), {})
    return memo


def shape_terms(shape):
    """The :class:`ShapeTerms` of ``shape``: :func:`shape_moments` (area, centroid, J about it), half its bounding
    box's smaller side (a capsule's radius; never below the radius) and how far the shape reaches from its
    frame's origin along x or y. Computed once per shape and kept on it: a scene adds one geometry to many
    bodies (a ragdoll's limbs, a pyramid's box), and deriving these anew was a third of adding a shape."""
    return _memo(shape)[0]


def shape_reach(shape, cx, cy):
    """How far the shape reaches from the point (cx, cy) of its frame (a body's centre of mass): its farthest
    core vertex plus its radius. Remembered per shape for the last few points (the bodies that take one
    geometry usually share their centre of mass in its frame)."""
    reach = _memo(shape)[1]
    key = (cx, cy)
    value = reach.get(key)
    if value is None:
        if len(reach) >= REACH_MEMO:
            reach.clear()
        value = reach[key] = float(np.max(np.hypot(*(shape.vertices - (cx, cy)).T))) + shape.radius
    return value


@njit
def shape_moments(verts, normals, radius):
    """(area, cx, cy, J): area, centroid and polar second moment about that centroid (local frame).

    Every piece is summed relative to the first core vertex, not the local origin: about the origin the polar
    moment of a small shape far away is A|c|² plus a tiny remainder, and moving it to the centroid
    cancelled almost every digit (a 10 cm box at (1000, 1000) came out with a negative inertia)."""
    n = verts.shape[0]
    ox = verts[0, 0]
    oy = verts[0, 1]
    rx = np.empty(n)
    ry = np.empty(n)
    for i in range(n):
        rx[i] = verts[i, 0] - ox
        ry[i] = verts[i, 1] - oy
    area = 0.0
    sx = 0.0
    sy = 0.0
    j = 0.0
    if n >= 3:
        a, x, y, jj = _polygon_moments(rx, ry, n)
        area += a
        sx += x
        sy += y
        j += jj
    if radius > 0.0:
        r = radius
        px = np.empty(4)
        py = np.empty(4)
        if n >= 2:
            for i in range(n):
                k = (i + 1) % n
                nx = normals[i, 0]
                ny = normals[i, 1]
                # counter-clockwise: the outward normal is on the right of the edge direction
                px[0] = rx[i]
                py[0] = ry[i]
                px[1] = rx[i] + r * nx
                py[1] = ry[i] + r * ny
                px[2] = rx[k] + r * nx
                py[2] = ry[k] + r * ny
                px[3] = rx[k]
                py[3] = ry[k]
                a, x, y, jj = _polygon_moments(px, py, np.int64(4))   # not a literal: one compile
                area += a
                sx += x
                sy += y
                j += jj
        for i in range(n):
            if n == 1:
                a1 = 0.0
                theta = 2.0 * math.pi
            else:
                prev = (i - 1) % n
                a1 = math.atan2(normals[prev, 1], normals[prev, 0])
                a2 = math.atan2(normals[i, 1], normals[i, 0])
                theta = a2 - a1
                while theta <= 0.0:
                    theta += 2.0 * math.pi
                while theta > 2.0 * math.pi:
                    theta -= 2.0 * math.pi
            a2 = a1 + theta
            vx = rx[i]
            vy = ry[i]
            a = 0.5 * theta * r * r
            svx = r * r * r / 3.0 * (math.sin(a2) - math.sin(a1))
            svy = r * r * r / 3.0 * (math.cos(a1) - math.cos(a2))
            jv = 0.25 * theta * r * r * r * r
            area += a
            sx += svx + a * vx
            sy += svy + a * vy
            j += jv + 2.0 * (vx * svx + vy * svy) + a * (vx * vx + vy * vy)
    if area <= 0.0:
        return 0.0, ox, oy, 0.0
    cx = sx / area
    cy = sy / area
    return area, ox + cx, oy + cy, j - area * (cx * cx + cy * cy)


def mass_properties(shape: "Any", density: "float" = 1.0) -> MassProperties:
    """Mass (kg), centroid (local, m) and rotational inertia about the centroid (kg·m²).

    ``density`` is per unit area (kg/m²). A segment has no area, hence zero mass.

    ``shape`` is any :mod:`carom.geometry` shape.
    """
    d = _validate.number(density, "density", low=0.0, error=GeometryError)
    area, cx, cy, inertia = shape_moments(shape._kernel_vertices, shape._kernel_normals, shape.radius)
    if area <= 0.0:
        cx, cy = (float(v) for v in shape.vertices.mean(axis=0))
    return MassProperties(float(d * area), np.array([cx, cy]), float(d * inertia))
