"""Wheel joint (Box2D's wheel): body B (the wheel) slides along an axis fixed in body A (the suspension) and turns
freely, with a suspension spring along the axis (C = u·d, the user's softness), limits on the translation, and
a rotational motor (Ċ = ωB − ωA − speed, |λ| ≤ max torque × h). The rows are a prismatic joint's
(``prismatic``) without the angular one."""
from ..._jit import njit
from ._common import (INF, G_AXX, G_AXY, ROW_AXIS, ROW_ANGLE, BIAS_RIGID, BIAS_LIMIT, BIAS_SPRING, BIAS_MOTOR, UX, UY,
                      add_row)

REF, LOWER, UPPER, MOTOR_SPEED, MAX_MOTOR_TORQUE, HERTZ, DAMPING_RATIO = range(7)
PERP, SPRING, MOTOR, LOW, HIGH = range(5)


@njit
def emit(j, param, imp, rows, r, h, g):
    """The rows, in the order solved: the motor (an angle row), the spring, lower and upper limit along the axis,
    the normal row."""
    if param[j, MAX_MOTOR_TORQUE] > 0.0:
        m = param[j, MAX_MOTOR_TORQUE] * h
        r = add_row(rows, r, ROW_ANGLE, BIAS_MOTOR, imp, j, float(MOTOR), -m, m, -param[j, MOTOR_SPEED], 1.0, 1.0,
                    0.0, 0.0, h)
    r0 = r
    if param[j, HERTZ] > 0.0:
        r = add_row(rows, r, ROW_AXIS, BIAS_SPRING, imp, j, float(SPRING), -INF, INF, 0.0, 1.0, 0.0, param[j, HERTZ],
                    param[j, DAMPING_RATIO], h)
    if param[j, LOWER] > -INF:
        r = add_row(rows, r, ROW_AXIS, BIAS_LIMIT, imp, j, float(LOW), 0.0, INF, param[j, LOWER], 1.0, 0.0, 0.0, 0.0, h)
    if param[j, UPPER] < INF:
        r = add_row(rows, r, ROW_AXIS, BIAS_LIMIT, imp, j, float(HIGH), 0.0, INF, param[j, UPPER], -1.0, 0.0, 0.0,
                    0.0, h)
    r = add_row(rows, r, ROW_AXIS, BIAS_RIGID, imp, j, float(PERP), -INF, INF, 0.0, 1.0, 1.0, 0.0, 0.0, h)
    for k in range(r0, r):
        rows[k, UX] = g[G_AXX]
        rows[k, UY] = g[G_AXY]
    return r
