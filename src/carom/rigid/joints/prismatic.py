"""Prismatic joint (Box2D's prismatic, pymunk's GrooveJoint with ``free_rotation``): body B slides along an
axis fixed in body A. With u the axis now and p its left normal, the rows are (solved in this order)

- spring: C = u·d − target, Jacobian jA = u, jaw = (d + rA) × u, jB = u, jbw = rB × u;
- motor: Ċ − speed along u, |λ| ≤ max force × h;
- limits: u·d − lower ≥ 0, upper − u·d ≥ 0;
- the axis: C = p·d = 0 (jA = p, jaw = (d + rA) × p, jB = p, jbw = rB × p), and unless the rotation is free
  C = θ = 0, these two as one 2-d block (as Box2D solves them: ``solve_axis``)."""
from ..._jit import njit
from ._common import (INF, G_DX, G_DY, G_ANGLE, K0, MA, IA, MB, IB, VAX, VAY, VAW, VBX, VBY, VBW, rigid_bias,
                      limit_bias, spring_bias, solve_row, apply_row, set_soft, axis_now, axis_frame)

REF, LOWER, UPPER, MOTOR_SPEED, MAX_MOTOR_FORCE, HERTZ, DAMPING_RATIO, TARGET, FREE_ROTATION = range(9)
PERP, ANGULAR, SPRING, MOTOR, LOW, HIGH = range(6)
SOFT = K0


@njit
def prepare(j, param, imp, rows, h, ca, cb):
    set_soft(rows, j, SOFT, 0, param[j, HERTZ], param[j, DAMPING_RATIO], h)


@njit
def solve(j, rows, param, imp, v, g, mode, jsoft, h, inv_h):
    ux, uy, px, py, a1, a2, s1, s2 = axis_frame(rows, j, g)
    dx, dy = g[G_DX], g[G_DY]
    if mode == 0:
        axial = imp[j, SPRING] + imp[j, MOTOR] + imp[j, LOW] - imp[j, HIGH]
        apply_row(v, rows, j, ux, uy, a1, ux, uy, a2, axial)
        apply_row(v, rows, j, px, py, s1, px, py, s2, imp[j, PERP])
        apply_row(v, rows, j, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, imp[j, ANGULAR])
        return
    use_bias = mode == 1
    translation = ux * dx + uy * dy
    if param[j, HERTZ] > 0.0:
        bias, ms, isc = spring_bias(translation - param[j, TARGET], mode, rows, j, SOFT, 0)
        imp[j, SPRING] = solve_row(v, rows, j, ux, uy, a1, ux, uy, a2, imp[j, SPRING], bias, ms, isc, -INF, INF)
    if param[j, MAX_MOTOR_FORCE] > 0.0:
        m = param[j, MAX_MOTOR_FORCE] * h
        imp[j, MOTOR] = solve_row(v, rows, j, ux, uy, a1, ux, uy, a2, imp[j, MOTOR], -param[j, MOTOR_SPEED], 1.0, 0.0,
                               -m, m)
    if param[j, LOWER] > -INF:
        bias, ms, isc = limit_bias(translation - param[j, LOWER], use_bias, jsoft, inv_h)
        imp[j, LOW] = solve_row(v, rows, j, ux, uy, a1, ux, uy, a2, imp[j, LOW], bias, ms, isc, 0.0, INF)
    if param[j, UPPER] < INF:
        bias, ms, isc = limit_bias(param[j, UPPER] - translation, use_bias, jsoft, inv_h)
        imp[j, HIGH] = solve_row(v, rows, j, -ux, -uy, -a1, -ux, -uy, -a2, imp[j, HIGH], bias, ms, isc, 0.0, INF)
    bias, ms, isc = rigid_bias(px * dx + py * dy, use_bias, jsoft)
    if param[j, FREE_ROTATION] == 0.0:
        angle_bias = rigid_bias(g[G_ANGLE], use_bias, jsoft)[0]
        if solve_axis(v, rows, j, imp, px, py, s1, s2, bias, angle_bias, ms, isc):
            return
        imp[j, PERP] = solve_row(v, rows, j, px, py, s1, px, py, s2, imp[j, PERP], bias, ms, isc, -INF, INF)
        imp[j, ANGULAR] = solve_row(v, rows, j, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, imp[j, ANGULAR], angle_bias, ms, isc,
                                    -INF, INF)
        return
    imp[j, PERP] = solve_row(v, rows, j, px, py, s1, px, py, s2, imp[j, PERP], bias, ms, isc, -INF, INF)


@njit
def solve_axis(v, rows, j, imp, px, py, s1, s2, bias, angle_bias, mass_scale, impulse_scale):
    """The axis row (p, s1; p, s2) and the angular row as one block, K = | mA + mB + IA·s1² + IB·s2²  IA·s1 + IB·s2 |
    over | · IA + IB |: one solve meets both, where one row after the other the perpendicular impulse (whose
    lever turns the bodies) undid the angular row's work whenever the anchor was off a centre of mass. Returns
    False when neither body can turn (IA + IB = 0), solving nothing."""
    ma, ia, mb, ib = rows[j, MA], rows[j, IA], rows[j, MB], rows[j, IB]
    k11 = ma + mb + ia * s1 * s1 + ib * s2 * s2
    k12 = ia * s1 + ib * s2
    k22 = ia + ib
    det = k11 * k22 - k12 * k12
    if not det > 1e-12 * k11 * k22:
        return False
    c1 = px * (v[VBX] - v[VAX]) + py * (v[VBY] - v[VAY]) + s2 * v[VBW] - s1 * v[VAW] + bias
    c2 = v[VBW] - v[VAW] + angle_bias
    b1 = (k22 * c1 - k12 * c2) / det
    b2 = (k11 * c2 - k12 * c1) / det
    l1, l2 = imp[j, PERP], imp[j, ANGULAR]
    d1 = -mass_scale * b1 - impulse_scale * l1
    d2 = -mass_scale * b2 - impulse_scale * l2
    imp[j, PERP] = l1 + d1
    imp[j, ANGULAR] = l2 + d2
    apply_row(v, rows, j, px, py, s1, px, py, s2, d1)
    apply_row(v, rows, j, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, d2)
    return True


@njit
def reaction(j, rows, param, imp, g):
    ux, uy = axis_now(rows, j, g)
    axial = imp[j, SPRING] + imp[j, MOTOR] + imp[j, LOW] - imp[j, HIGH]
    return axial * ux - imp[j, PERP] * uy, axial * uy + imp[j, PERP] * ux, imp[j, ANGULAR]
