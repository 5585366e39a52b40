"""The sine and cosine of body angles (carom.geometry._math): against math.sin and math.cos, which are glibc's
(within half a unit in the last place)."""
import math

import numpy as np
from hypothesis import given, settings, strategies as st

from carom._jit import njit
from carom.geometry._math import REDUCTION_LIMIT, angle_sin_cos, sin_cos_rows


@njit
def _one_at_a_time(x, out):
    for i in range(x.shape[0]):
        out[0, i], out[1, i] = angle_sin_cos(x[i])


def _ulps(got, exact):
    """|got − exact| in units of the last place of exact."""
    return np.abs(got - exact) / np.spacing(np.abs(exact))


def _rows(x, lo=0, hi=None):
    hi = x.shape[0] if hi is None else hi
    out = np.full((2, hi - lo), 7.0)
    sin_cos_rows(x, lo, hi, out)
    return out


def test_rows_are_within_two_ulps_and_one_below_a_hundred_radians():
    rng = np.random.default_rng(11)
    for limit, bound in ((1e-6, 0), (1.0, 1), (100.0, 1), (REDUCTION_LIMIT, 2)):
        x = rng.uniform(-limit, limit, 40000)
        out = _rows(x)
        exact = np.array([[math.sin(v) for v in x], [math.cos(v) for v in x]])
        assert _ulps(out, exact).max() <= bound, limit


def test_quadrant_edges_and_signs():
    # multiples of π/4 and their neighbours: where the reduction changes quadrant and the sines change sign
    x = np.array([k * math.pi / 4 + d for k in range(-16, 17) for d in (-1e-12, 0.0, 1e-12)])
    out = _rows(x)
    exact = np.array([[math.sin(v) for v in x], [math.cos(v) for v in x]])
    close = np.abs(out - exact) <= 2.0 * np.spacing(np.abs(exact)) + 1e-300
    assert close.all()
    assert (np.sign(out[:, np.abs(exact).min(axis=0) > 1e-9]) ==
            np.sign(exact[:, np.abs(exact).min(axis=0) > 1e-9])).all()


def test_beyond_the_limit_and_not_finite_it_is_glibc_bitwise():
    x = np.array([REDUCTION_LIMIT * 1.0000001, -3e7, 1e300, -1e18, np.inf, -np.inf, np.nan])
    out = _rows(x)
    with np.errstate(invalid="ignore"):
        exact = np.array([[math.sin(v) if math.isfinite(v) else math.nan for v in x],
                          [math.cos(v) if math.isfinite(v) else math.nan for v in x]])
    assert np.array_equal(out[:, :4], exact[:, :4])
    assert np.isnan(out[:, 4:]).all()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-2.0 * REDUCTION_LIMIT, 2.0 * REDUCTION_LIMIT, allow_nan=False), min_size=1,
                max_size=40), st.integers(0, 5))
def test_the_vector_loop_is_bitwise_the_scalar_function(values, skip):
    # the step takes a body's rotation from the loop, the queries from the scalar function: they must agree
    x = np.array(values)
    lo = min(skip, x.shape[0] - 1)
    out = _rows(x, lo)
    one = np.empty((2, x.shape[0]))
    _one_at_a_time(x, one)
    assert np.array_equal(out.view(np.int64), one[:, lo:].view(np.int64))
