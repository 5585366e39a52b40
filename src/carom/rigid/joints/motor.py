"""Motor joint (Box2D's motor joint: top-down friction, moving platforms): drives body B towards a pose
relative to body A, the linear offset (anchor A, in A's frame, against B's origin) and the angular offset (the
reference angle), with the force and torque it may use capped. Each part is rigid with a correction of
``correction_factor``/h of its error per substep (Box2D's), or a spring when its hertz > 0."""
from ..._jit import njit
from ._common import (INF, G_ANGLE, K0, spring_bias, spring_point, solve_row, apply_row, solve_point,
                      apply_point, set_soft)

REF, MAX_FORCE, MAX_TORQUE, CORRECTION, LINEAR_HERTZ, LINEAR_DAMPING, ANGULAR_HERTZ, ANGULAR_DAMPING = range(8)
PX, PY, ANGULAR = range(3)
LSOFT, ASOFT = K0, K0 + 3


@njit
def prepare(j, param, imp, rows, h, ca, cb):
    set_soft(rows, j, LSOFT, 1, param[j, LINEAR_HERTZ], param[j, LINEAR_DAMPING], h)
    set_soft(rows, j, ASOFT, 0, param[j, ANGULAR_HERTZ], param[j, ANGULAR_DAMPING], h)


@njit
def solve(j, rows, param, imp, v, g, mode, jsoft, h, inv_h):
    if mode == 0:
        apply_point(v, rows, j, g, imp[j, PX], imp[j, PY])
        apply_row(v, rows, j, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, imp[j, ANGULAR])
        return
    corr = param[j, CORRECTION] * inv_h
    if param[j, ANGULAR_HERTZ] > 0.0:
        bias, ms, isc = spring_bias(g[G_ANGLE], mode, rows, j, ASOFT, 0)
    else:
        bias, ms, isc = corr * g[G_ANGLE], 1.0, 0.0
    m = param[j, MAX_TORQUE] * h
    imp[j, ANGULAR] = solve_row(v, rows, j, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, imp[j, ANGULAR], bias, ms, isc, -m, m)
    if param[j, LINEAR_HERTZ] > 0.0:
        rate, ms, isc = spring_point(mode, rows, j, g, LSOFT)
    else:
        rate, ms, isc = corr, 1.0, 0.0
    solve_point(v, rows, j, g, imp, PX, rate, ms, isc, param[j, MAX_FORCE] * h)


@njit
def reaction(j, rows, param, imp, g):
    return imp[j, PX], imp[j, PY], imp[j, ANGULAR]
