"""Rotary limit (pymunk's RotaryLimitJoint): the relative angle θ = θB − θA kept within [lower, upper] by two
one-sided angular rows (``_common.limit_bias``), the bodies otherwise free."""
from ..._jit import njit
from ._common import INF, G_ANGLE, limit_bias, solve_row, apply_row

REF, LOWER, UPPER = range(3)
LOW, HIGH = range(2)


@njit
def prepare(j, param, imp, rows, h, ca, cb):
    pass


@njit
def solve(j, rows, param, imp, v, g, mode, jsoft, h, inv_h):
    if mode == 0:
        apply_row(v, rows, j, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, imp[j, LOW] - imp[j, HIGH])
        return
    use_bias = mode == 1
    angle = g[G_ANGLE]
    bias, ms, isc = limit_bias(angle - param[j, LOWER], use_bias, jsoft, inv_h)
    imp[j, LOW] = solve_row(v, rows, j, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, imp[j, LOW], bias, ms, isc, 0.0, INF)
    bias, ms, isc = limit_bias(param[j, UPPER] - angle, use_bias, jsoft, inv_h)
    imp[j, HIGH] = solve_row(v, rows, j, 0.0, 0.0, -1.0, 0.0, 0.0, -1.0, imp[j, HIGH], bias, ms, isc, 0.0, INF)


@njit
def reaction(j, rows, param, imp, g):
    return 0.0, 0.0, imp[j, LOW] - imp[j, HIGH]
