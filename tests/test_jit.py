"""carom._jit's compiled helpers, checked against NumPy."""
import numpy as np

from carom._jit import borrowed_rows, njit


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

