"""Rotary limit (pymunk's RotaryLimitJoint): the relative angle θ = θB − θA kept within [lower, upper] by two
one-sided angle rows (LIMIT rows, ``_rows.bias_of``), the bodies otherwise free."""
from ..._jit import njit
from ._common import INF, G_ANG0, ROW_ANGLE, BIAS_LIMIT, add_row

REF, LOWER, UPPER = range(3)
LOW, HIGH = range(2)


@njit
def emit(j, param, imp, rows, r, h, g):
    r = add_row(rows, r, ROW_ANGLE, BIAS_LIMIT, imp, j, float(LOW), 0.0, INF, g[G_ANG0] - param[j, LOWER], 1.0, 1.0,
                0.0, 0.0, h)
    return add_row(rows, r, ROW_ANGLE, BIAS_LIMIT, imp, j, float(HIGH), 0.0, INF, param[j, UPPER] - g[G_ANG0], -1.0,
                   -1.0, 0.0, 0.0, h)
