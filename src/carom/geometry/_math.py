"""Small compiled vector helpers shared by the geometry kernels.

A transform in a kernel is four floats ``(x, y, c, s)``: translation and the cosine and sine of the angle.
Pair kernels work in the frame of shape A (B is brought in by the relative transform), as Box2D v3 does,
so results keep their precision far from the origin.
"""
import math
from decimal import Decimal
from fractions import Fraction

import numpy as np

from .._jit import njit, inline_njit, sin_cos, index_range


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


# --- sine and cosine of body angles -------------------------------------------------------------------------
# π/2 split for Cody and Waite's range reduction: P1 and P2 hold 33 significant bits each, P3 the rest, so
# q·P1 and q·P2 are exact for |q| < 2²⁰ and x − q·π/2 loses nothing to cancellation (the parts are derived
# here from a 60-digit π rather than written out)
_PI = Fraction(Decimal("3.14159265358979323846264338327950288419716939937510582097494459"))


def _leading_bits(value, bits):
    """``value`` (a Fraction) rounded to a float of ``bits`` significant bits."""
    scale = Fraction(2) ** (bits - math.frexp(float(value))[1])
    return float(Fraction(round(value * scale)) / scale)


_P1 = _leading_bits(_PI / 2, 33)
_P2 = _leading_bits(_PI / 2 - Fraction(_P1), 33)
_P3 = float(_PI / 2 - Fraction(_P1) - Fraction(_P2))
_TWO_OVER_PI = float(2 / _PI)
# Taylor coefficients: (−1)ᵏ/(2k + 1)! for r³ … r¹⁷ (sine), (−1)ᵏ/(2k)! for r⁴ … r¹⁸ (cosine); on |r| ≤ π/4
# the first omitted terms, r¹⁹/19! and r²⁰/20!, are below 1e-19
_S3, _S5, _S7, _S9, _S11, _S13, _S15, _S17 = [float(Fraction((-1) ** k, math.factorial(2 * k + 1)))
                                              for k in range(1, 9)]
_C4, _C6, _C8, _C10, _C12, _C14, _C16, _C18 = [float(Fraction((-1) ** k, math.factorial(2 * k)))
                                               for k in range(2, 10)]
#: |θ| up to which :func:`reduced_sin_cos` is used (within 2 ulp of the true values there); beyond it glibc's
#: ``sincos``
REDUCTION_LIMIT = 1.0e4


@inline_njit
def reduced_sin_cos(x):
    """(sin x, cos x) for |x| ≤ REDUCTION_LIMIT, within two units in the last place of the true values (one
    for |x| ≤ 100), in straight-line code that LLVM runs four angles at a time (``sin_cos_rows``): glibc's
    ``sincos`` is a call per angle, about 12 ns a body each step (5,000 bodies: 25 µs against 65).

    x = q·π/2 + r with q the nearest integer to x·2/π and |r| ≤ π/4 (r by Cody and Waite: x − q·P1 − q·P2 −
    q·P3, exact but for the last subtraction). sin r and cos r by their Taylor polynomials (Horner); cos r as
    w + ((1 − w) − r²/2 + r⁴·p) with w = 1 − r²/2, which keeps the rounding error of 1 − r²/2 (fdlibm's
    device). The quadrant q mod 4 then swaps and negates: (sin, cos) of x = (s, c), (c, −s), (−s, −c),
    (−c, s). The choices are selects, not branches, so the loop over many angles stays vectorized."""
    q = math.floor(x * _TWO_OVER_PI + 0.5)
    r = ((x - q * _P1) - q * _P2) - q * _P3
    r2 = r * r
    s = r + r * r2 * (_S3 + r2 * (_S5 + r2 * (_S7 + r2 * (_S9 + r2 * (_S11 + r2 * (_S13 + r2 * (_S15
                                                                                                 + r2 * _S17)))))))
    hz = 0.5 * r2
    w = 1.0 - hz
    c = w + (((1.0 - w) - hz) + r2 * r2 * (_C4 + r2 * (_C6 + r2 * (_C8 + r2 * (_C10 + r2 * (_C12 + r2 * (
        _C14 + r2 * (_C16 + r2 * _C18))))))))
    n = q - 4.0 * math.floor(0.25 * q)
    swap = (n == 1.0) | (n == 3.0)
    sn = c if swap else s
    cs = s if swap else c
    sn = -sn if n >= 2.0 else sn
    cs = -cs if (n == 1.0) | (n == 2.0) else cs
    return sn, cs


@inline_njit
def angle_sin_cos(x):
    """(sin x, cos x) of a body angle: :func:`reduced_sin_cos` up to REDUCTION_LIMIT (and bitwise what
    ``sin_cos_rows`` gives), glibc's ``sincos`` beyond it and for NaN or infinity."""
    if abs(x) <= REDUCTION_LIMIT:
        return reduced_sin_cos(x)
    return sin_cos(x)


@njit
def sin_cos_rows(x, lo, hi, out):
    """``out[0, i − lo], out[1, i − lo]`` = :func:`angle_sin_cos` of ``x[i]`` for i in lo … hi − 1: a branch-free
    vectorized loop over all of them, then a second one, only when some |x| exceeds REDUCTION_LIMIT (or is
    not finite), that redoes those with ``sincos``."""
    far = 0
    ulo = np.uint64(lo)
    for i in index_range(lo, hi):
        out[0, i - ulo], out[1, i - ulo] = reduced_sin_cos(x[i])
        far += not (abs(x[i]) <= REDUCTION_LIMIT)
    if far > 0:
        for i in index_range(lo, hi):
            if not (abs(x[i]) <= REDUCTION_LIMIT):
                out[0, i - ulo], out[1, i - ulo] = sin_cos(x[i])
