"""Weld joint (Box2D's weld): the bodies held at their relative pose, rigidly or as a soft linear and angular
spring (``linear_hertz``, ``angular_hertz`` > 0). Angular row first (Ċ = ωB − ωA, C = θ), then the point, as
Box2D solves it."""
from ..._jit import njit
from ._common import INF, G_ANGLE, K0, rigid_bias, spring_bias, solve_row, apply_row, solve_point, apply_point, soft

REF, LINEAR_HERTZ, LINEAR_DAMPING, ANGULAR_HERTZ, ANGULAR_DAMPING = range(5)
PX, PY, ANGULAR = range(3)
LSOFT, ASOFT = K0, K0 + 3


@njit
def prepare(j, param, imp, rows, h, ca, cb):
    rows[j, LSOFT], rows[j, LSOFT + 1], rows[j, LSOFT + 2] = soft(param[j, LINEAR_HERTZ], param[j, LINEAR_DAMPING], h)
    rows[j, ASOFT], rows[j, ASOFT + 1], rows[j, ASOFT + 2] = soft(param[j, ANGULAR_HERTZ], param[j, ANGULAR_DAMPING],
                                                                  h)


@njit
def solve(j, rows, param, imp, v, g, mode, jsoft, h, inv_h):
    if mode == 0:
        apply_point(v, rows, j, g, imp[j, PX], imp[j, PY])
        apply_row(v, rows, j, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, imp[j, ANGULAR])
        return
    use_bias = mode == 1
    if param[j, ANGULAR_HERTZ] > 0.0:
        bias, ms, isc = spring_bias(g[G_ANGLE], mode == 1, rows, j, ASOFT)
    else:
        bias, ms, isc = rigid_bias(g[G_ANGLE], use_bias, jsoft)
    imp[j, ANGULAR] = solve_row(v, rows, j, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, imp[j, ANGULAR], bias, ms, isc, -INF, INF)
    if param[j, LINEAR_HERTZ] > 0.0:
        rate, ms, isc = spring_bias(1.0, mode == 1, rows, j, LSOFT)
    else:
        rate, ms, isc = rigid_bias(1.0, use_bias, jsoft)
    solve_point(v, rows, j, g, imp, PX, rate, ms, isc, INF)


@njit
def reaction(j, rows, param, imp, g):
    return imp[j, PX], imp[j, PY], imp[j, ANGULAR]
