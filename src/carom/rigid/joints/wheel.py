"""Wheel joint (Box2D's wheel): body B (the wheel) slides along an axis fixed in body A (the suspension) and turns
freely, with a suspension spring along the axis (C = u·d, the user's softness), limits on the translation, and
a rotational motor (Ċ = ωB − ωA − speed, |λ| ≤ max torque × h). The rows are a prismatic joint's
(``prismatic``) without the angular one."""
from ..._jit import njit
from ._common import (INF, G_DX, G_DY, K0, rigid_bias, limit_bias, spring_bias, solve_row, apply_row, set_soft,
                      axis_now, axis_frame)

REF, LOWER, UPPER, MOTOR_SPEED, MAX_MOTOR_TORQUE, HERTZ, DAMPING_RATIO = range(7)
PERP, SPRING, MOTOR, LOW, HIGH = range(5)
SOFT = K0


@njit
def prepare(j, param, imp, rows, h, ca, cb):
    set_soft(rows, j, SOFT, 0, param[j, HERTZ], param[j, DAMPING_RATIO], h)


@njit
def solve(j, rows, param, imp, v, g, mode, jsoft, h, inv_h):
    ux, uy, px, py, a1, a2, s1, s2 = axis_frame(rows, j, g)
    dx, dy = g[G_DX], g[G_DY]
    if mode == 0:
        apply_row(v, rows, j, ux, uy, a1, ux, uy, a2, imp[j, SPRING] + imp[j, LOW] - imp[j, HIGH])
        apply_row(v, rows, j, px, py, s1, px, py, s2, imp[j, PERP])
        apply_row(v, rows, j, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, imp[j, MOTOR])
        return
    use_bias = mode == 1
    translation = ux * dx + uy * dy
    if param[j, MAX_MOTOR_TORQUE] > 0.0:
        m = param[j, MAX_MOTOR_TORQUE] * h
        imp[j, MOTOR] = solve_row(v, rows, j, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, imp[j, MOTOR], -param[j, MOTOR_SPEED], 1.0,
                               0.0, -m, m)
    if param[j, HERTZ] > 0.0:
        bias, ms, isc = spring_bias(translation, mode, rows, j, SOFT, 0)
        imp[j, SPRING] = solve_row(v, rows, j, ux, uy, a1, ux, uy, a2, imp[j, SPRING], bias, ms, isc, -INF, INF)
    if param[j, LOWER] > -INF:
        bias, ms, isc = limit_bias(translation - param[j, LOWER], use_bias, jsoft, inv_h)
        imp[j, LOW] = solve_row(v, rows, j, ux, uy, a1, ux, uy, a2, imp[j, LOW], bias, ms, isc, 0.0, INF)
    if param[j, UPPER] < INF:
        bias, ms, isc = limit_bias(param[j, UPPER] - translation, use_bias, jsoft, inv_h)
        imp[j, HIGH] = solve_row(v, rows, j, -ux, -uy, -a1, -ux, -uy, -a2, imp[j, HIGH], bias, ms, isc, 0.0, INF)
    bias, ms, isc = rigid_bias(px * dx + py * dy, use_bias, jsoft)
    imp[j, PERP] = solve_row(v, rows, j, px, py, s1, px, py, s2, imp[j, PERP], bias, ms, isc, -INF, INF)


@njit
def reaction(j, rows, param, imp, g):
    ux, uy = axis_now(rows, j, g)
    axial = imp[j, SPRING] + imp[j, LOW] - imp[j, HIGH]
    return axial * ux - imp[j, PERP] * uy, axial * uy + imp[j, PERP] * ux, imp[j, MOTOR]
