"""Axis-aligned bounding boxes of placed shapes: the core's extreme vertices, grown by the radius."""
import numpy as np

from .._jit import njit, inline_njit


@njit
def core_aabb(verts, radius, x, y, c, s):
    """(lower_x, lower_y, upper_x, upper_y) of a core placed at (x, y, c, s), expanded by ``radius``."""
    return core_box(verts, radius, x, y, c, s)


@njit
def core_aabbs(verts, radius, x, y, c, s):
    """:func:`core_aabb` of one core at each of the placements (``x``, ``y``, ``c``, ``s``: arrays), as rows
    (lower_x, lower_y, upper_x, upper_y): one compiled call for a world's ``add_bodies``, where a call per body
    cost a few microseconds each."""
    out = np.empty((x.shape[0], 4))
    for k in range(x.shape[0]):
        out[k, 0], out[k, 1], out[k, 2], out[k, 3] = core_box(verts, radius, x[k], y[k], c[k], s[k])
    return out


@inline_njit
def core_box(verts, radius, x, y, c, s):
    """:func:`core_aabb` copied into its caller (the bounds stage calls it once per shape, and the call cost
    as much as a circle's box)."""
    lx = np.inf
    ly = np.inf
    ux = -np.inf
    uy = -np.inf
    for i in range(verts.shape[0]):
        px = c * verts[i, 0] - s * verts[i, 1] + x
        py = s * verts[i, 0] + c * verts[i, 1] + y
        lx = min(lx, px)
        ly = min(ly, py)
        ux = max(ux, px)
        uy = max(uy, py)
    return lx - radius, ly - radius, ux + radius, uy + radius


def shape_aabb(shape, transform):
    x, y, c, s = transform.as_tuple()
    lx, ly, ux, uy = core_aabb(shape._kernel_vertices, shape.radius, x, y, c, s)
    return np.array([lx, ly]), np.array([ux, uy])
