"""Exact mass properties of every shape, rounded polygons and capsules included.

A shape is its core polygon ⊕ a disk of radius r. That set splits exactly into pieces that do not overlap:

- the core polygon itself (n ≥ 3),
- one rectangle of length |e_i| and width r on the outside of each core edge,
- one circular sector of radius r at each core vertex, spanning the angle between the normals of the two
  edges that meet there (the sectors' angles add up to 2π, so together they make one full disk).

A circle is the 1-vertex case (one sector of angle 2π), a capsule the 2-vertex case (two rectangles on the
two sides of its segment, two half disks). Area, first moment and polar second moment about the origin
are summed over the pieces, then moved to the centroid by the parallel-axis theorem:

- polygon (triangle fan from the origin, triangles (0, p, q)): A = ½ p×q, S = A (p + q)/3,
  J = (p×q)/12 · (p·p + p·q + q·q);
- sector at apex v spanning angles α1..α2 = α1 + θ: A = θ r²/2, first moment about the apex
  r³/3 · (sin α2 − sin α1, cos α1 − cos α2), polar moment about the apex θ r⁴/4, and about the origin
  J_o = J_v + 2 v·S_v + A |v|².

Mass = density · A, inertia about the centroid = density · (J_o − A |c|²).
"""
import math
from collections import namedtuple

import numpy as np

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


@njit
def shape_moments(verts, normals, radius):
    """(area, Sx, Sy, J): area, first moment and polar second moment about the local origin."""
    n = verts.shape[0]
    area = 0.0
    sx = 0.0
    sy = 0.0
    j = 0.0
    if n >= 3:
        a, x, y, jj = _polygon_moments(verts[:, 0].copy(), verts[:, 1].copy(), n)
        area += a
        sx += x
        sy += y
        j += jj
    if radius <= 0.0:
        return area, sx, sy, j
    r = radius
    px = np.empty(4)
    py = np.empty(4)
    if n >= 2:
        for i in range(n):
            k = (i + 1) % n
            nx = normals[i, 0]
            ny = normals[i, 1]
            # counter-clockwise: the outward normal is on the right of the edge direction
            px[0] = verts[i, 0]
            py[0] = verts[i, 1]
            px[1] = verts[i, 0] + r * nx
            py[1] = verts[i, 1] + r * ny
            px[2] = verts[k, 0] + r * nx
            py[2] = verts[k, 1] + r * ny
            px[3] = verts[k, 0]
            py[3] = verts[k, 1]
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
        vx = verts[i, 0]
        vy = verts[i, 1]
        a = 0.5 * theta * r * r
        svx = r * r * r / 3.0 * (math.sin(a2) - math.sin(a1))
        svy = r * r * r / 3.0 * (math.cos(a1) - math.cos(a2))
        jv = 0.25 * theta * r * r * r * r
        area += a
        sx += svx + a * vx
        sy += svy + a * vy
        j += jv + 2.0 * (vx * svx + vy * svy) + a * (vx * vx + vy * vy)
    return area, sx, sy, j


@njit
def mass_from_moments(area, sx, sy, j, density):
    """(mass, cx, cy, inertia about the centroid) from the moments about the origin."""
    if area <= 0.0:
        return 0.0, 0.0, 0.0, 0.0
    cx = sx / area
    cy = sy / area
    return density * area, cx, cy, density * (j - area * (cx * cx + cy * cy))


def mass_properties(shape, density=1.0) -> MassProperties:
    """Mass (kg), centroid (local, m) and rotational inertia about the centroid (kg·m²).

    ``density`` is per unit area (kg/m²). A segment has no area, hence zero mass.
    """
    try:
        d = float(density)
    except (TypeError, ValueError) as exc:
        raise GeometryError(f"density must be a number, got {density!r}") from exc
    if not math.isfinite(d) or d < 0.0:
        raise GeometryError(f"density must be finite and >= 0, got {density!r}")
    area, sx, sy, j = shape_moments(shape._kernel_vertices, shape._kernel_normals, shape.radius)
    m, cx, cy, inertia = mass_from_moments(area, sx, sy, j, d)
    if area <= 0.0:
        cx, cy = (float(v) for v in shape.vertices.mean(axis=0))
    return MassProperties(float(m), np.array([cx, cy]), float(inertia))
