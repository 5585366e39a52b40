"""Rotary spring (pymunk's DampedRotarySpring, as a spring of frequency and damping ratio): the relative angle
θ = θB − θA pulled towards ``rest_angle``, one angular row with the user's softness (``_common.soft``)."""
from ..._jit import njit
from ._common import INF, G_ANGLE, K0, spring_bias, solve_row, apply_row, set_soft

REF, REST_ANGLE, HERTZ, DAMPING_RATIO = range(4)
SPRING = 0
SOFT = K0


@njit
def prepare(j, param, imp, rows, h, ca, cb):
    set_soft(rows, j, SOFT, 0, param[j, HERTZ], param[j, DAMPING_RATIO], h)


@njit
def solve(j, rows, param, imp, v, g, mode, jsoft, h, inv_h):
    if mode == 0:
        apply_row(v, rows, j, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, imp[j, SPRING])
        return
    bias, ms, isc = spring_bias(g[G_ANGLE] - param[j, REST_ANGLE], mode, rows, j, SOFT, 0)
    imp[j, SPRING] = solve_row(v, rows, j, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, imp[j, SPRING], bias, ms, isc, -INF, INF)


@njit
def reaction(j, rows, param, imp, g):
    return 0.0, 0.0, imp[j, SPRING]
