"""carom._jit's compiled helpers, checked against NumPy."""
import math

import numpy as np

from carom._jit import borrowed_rows, njit, sin_cos


@njit
def _sum_and_mark(a, start, count):
    v = borrowed_rows(a, start, count)
    total = 0.0
    for i in range(v.shape[0]):
        for j in range(v.shape[1]):
            total += v[i, j]
    if v.shape[0] > 0:
        v[0, 0] = -1.0
    return total, v.shape[0], v.shape[1]


def test_borrowed_rows_is_the_slice_and_writes_through():
    a = np.arange(24.0).reshape(8, 3)
    for start, count in [(0, 8), (2, 3), (7, 1), (5, 0)]:
        b = a.copy()
        total, rows, cols = _sum_and_mark(b, start, count)
        assert total == a[start:start + count].sum()
        assert (rows, cols) == (count, 3)
        expected = a.copy()
        if count:
            expected[start, 0] = -1.0
        assert np.array_equal(b, expected)



@njit
def _sin_cos_all(x, out):
    for i in range(x.shape[0]):
        s, c = sin_cos(x[i])
        out[i, 0] = s
        out[i, 1] = c


def test_sin_cos_is_bitwise_math_sin_and_cos():
    """The solver and the bounds stage take sin and cos from one call (libm's sincos where it exists); the
    values must be exactly those of math.sin and math.cos, so that trajectories do not depend on it."""
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.uniform(-1e-3, 1e-3, 20000), rng.uniform(-7.0, 7.0, 20000), rng.uniform(-1e5, 1e5, 5000),
                        rng.normal(0.0, 1e-9, 5000), [0.0, -0.0, math.pi, -math.pi / 2, 1e300, 5e-324]])
    out = np.empty((x.shape[0], 2))
    _sin_cos_all(x, out)
    expected = np.array([[math.sin(v), math.cos(v)] for v in x])
    assert np.array_equal(out.view(np.int64), expected.view(np.int64))
