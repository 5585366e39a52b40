"""Rotary spring (pymunk's DampedRotarySpring, as a spring of frequency and damping ratio): the relative angle
θ = θB − θA pulled towards ``rest_angle``, one angular row with the user's softness (``_common.soft``)."""
from ..._jit import njit
from ._common import INF, G_ANG0, ROW_ANGLE, BIAS_SPRING, add_row

REF, REST_ANGLE, HERTZ, DAMPING_RATIO = range(4)
SPRING = 0


@njit
def emit(j, param, imp, rows, r, h, g):
    return add_row(rows, r, ROW_ANGLE, BIAS_SPRING, imp, j, float(SPRING), -INF, INF, g[G_ANG0] - param[j,
                   REST_ANGLE], 1.0, 1.0, param[j, HERTZ], param[j, DAMPING_RATIO], h)
