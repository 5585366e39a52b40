"""Revolute joint (Box2D's revolute, pymunk's PivotJoint): anchor B held on anchor A, the bodies free to turn
about it, with an optional limit on the relative angle, a motor and a rotational spring.

Solved, as Box2D does, spring first, then motor, then limits, then the point (so the point constraint has the
last word): spring Ċ = ωB − ωA with bias β·(θ − target); motor Ċ − speed with |λ| ≤ max torque × h; lower limit
C = θ − lower ≥ 0, upper C = upper − θ ≥ 0; point d = 0 (``_common.solve_point``)."""
from ..._jit import njit
from ._common import (INF, G_ANGLE, K0, rigid_bias, limit_bias, spring_bias, solve_row, apply_row,
                      solve_point, apply_point, set_soft)

REF, LOWER, UPPER, MOTOR_SPEED, MAX_MOTOR_TORQUE, HERTZ, DAMPING_RATIO, TARGET = range(8)
# impulses: the point (x, y), spring, motor, lower, upper
PX, PY, SPRING, MOTOR, LOW, HIGH = range(6)
SOFT = K0


@njit
def prepare(j, param, imp, rows, h, ca, cb):
    set_soft(rows, j, SOFT, 0, param[j, HERTZ], param[j, DAMPING_RATIO], h)


@njit
def solve(j, rows, param, imp, v, g, mode, jsoft, h, inv_h):
    if mode == 0:
        apply_point(v, rows, j, g, imp[j, PX], imp[j, PY])
        apply_row(v, rows, j, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, imp[j, SPRING] + imp[j, MOTOR] + imp[j, LOW] - imp[j, HIGH])
        return
    use_bias = mode == 1
    angle = g[G_ANGLE]
    if param[j, HERTZ] > 0.0:
        bias, ms, isc = spring_bias(angle - param[j, TARGET], mode, rows, j, SOFT, 0)
        imp[j, SPRING] = solve_row(v, rows, j, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, imp[j, SPRING], bias, ms, isc, -INF, INF)
    if param[j, MAX_MOTOR_TORQUE] > 0.0:
        m = param[j, MAX_MOTOR_TORQUE] * h
        imp[j, MOTOR] = solve_row(v, rows, j, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, imp[j, MOTOR], -param[j, MOTOR_SPEED], 1.0,
                               0.0, -m, m)
    if param[j, LOWER] > -INF:
        bias, ms, isc = limit_bias(angle - param[j, LOWER], use_bias, jsoft, inv_h)
        imp[j, LOW] = solve_row(v, rows, j, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, imp[j, LOW], bias, ms, isc, 0.0, INF)
    if param[j, UPPER] < INF:
        bias, ms, isc = limit_bias(param[j, UPPER] - angle, use_bias, jsoft, inv_h)
        imp[j, HIGH] = solve_row(v, rows, j, 0.0, 0.0, -1.0, 0.0, 0.0, -1.0, imp[j, HIGH], bias, ms, isc, 0.0, INF)
    rate, ms, isc = rigid_bias(1.0, use_bias, jsoft)
    solve_point(v, rows, j, g, imp, PX, rate, ms, isc, INF)


@njit
def reaction(j, rows, param, imp, g):
    return imp[j, PX], imp[j, PY], imp[j, SPRING] + imp[j, MOTOR] + imp[j, LOW] - imp[j, HIGH]
