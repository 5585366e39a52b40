"""Small compiled vector helpers shared by the geometry kernels.

A transform in a kernel is four floats ``(x, y, c, s)``: translation and the cosine and sine of the angle.
Pair kernels work in the frame of shape A (B is brought in by the relative transform), as Box2D v3 does,
so results keep their precision far from the origin.
"""
import math

from .._jit import njit


@njit
def cross(ax, ay, bx, by):
    return ax * by - ay * bx


@njit
def rotate(c, s, x, y):
    return c * x - s * y, s * x + c * y


@njit
def inv_rotate(c, s, x, y):
    return c * x + s * y, -s * x + c * y


@njit
def transform_point(x, y, c, s, px, py):
    return c * px - s * py + x, s * px + c * py + y


@njit
def inv_transform_point(x, y, c, s, px, py):
    dx = px - x
    dy = py - y
    return c * dx + s * dy, -s * dx + c * dy


@njit
def relative_transform(ax, ay, ac, as_, bx, by, bc, bs):
    """inv(A) * B: the transform taking B-local points into A's frame."""
    c = ac * bc + as_ * bs
    s = ac * bs - as_ * bc
    dx = bx - ax
    dy = by - ay
    return ac * dx + as_ * dy, -as_ * dx + ac * dy, c, s


@njit
def normalize(x, y):
    length = math.sqrt(x * x + y * y)
    if length < 1e-300:
        return 0.0, 0.0, 0.0
    inv = 1.0 / length
    return x * inv, y * inv, length


@njit
def transform_points(verts, x, y, c, s, out):
    for i in range(verts.shape[0]):
        px = verts[i, 0]
        py = verts[i, 1]
        out[i, 0] = c * px - s * py + x
        out[i, 1] = s * px + c * py + y


@njit
def rotate_vectors(vecs, c, s, out):
    for i in range(vecs.shape[0]):
        px = vecs[i, 0]
        py = vecs[i, 1]
        out[i, 0] = c * px - s * py
        out[i, 1] = s * px + c * py


@njit
def closest_on_segment(ax, ay, bx, by, px, py):
    """Closest point to p on segment ab, and its parameter t in [0, 1]."""
    ex = bx - ax
    ey = by - ay
    ee = ex * ex + ey * ey
    if ee <= 0.0:
        return ax, ay, 0.0
    t = ((px - ax) * ex + (py - ay) * ey) / ee
    if t < 0.0:
        t = 0.0
    elif t > 1.0:
        t = 1.0
    return ax + t * ex, ay + t * ey, t
