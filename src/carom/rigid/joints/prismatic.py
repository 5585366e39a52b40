"""Prismatic joint (Box2D's prismatic, pymunk's GrooveJoint with ``free_rotation``): body B slides along an
axis fixed in body A. With u the axis now and p its left normal, the rows are (solved in this order)

- spring: C = u·d − target, Jacobian jA = u, jaw = (d + rA) × u, jB = u, jbw = rB × u;
- motor: Ċ − speed along u, |λ| ≤ max force × h;
- limits: u·d − lower ≥ 0, upper − u·d ≥ 0;
- the axis: C = p·d = 0 (jA = p, jaw = (d + rA) × p, jB = p, jbw = rB × p), and unless the rotation is free
  C = θ = 0, these two as one 2-d block (as Box2D solves them: ``solve_axis``; the PRISM row of ``_rows``)."""
from ..._jit import njit, llvm_inline_njit
from ._common import (INF, G_ANG0, G_TURN, G_AXX, G_AXY, ROW_AXIS, ROW_ANGLE, ROW_PRISM, BIAS_RIGID, BIAS_LIMIT,
                      BIAS_SPRING, BIAS_MOTOR, L0, L1, FX, FY, UX, UY, add_row)

REF, LOWER, UPPER, MOTOR_SPEED, MAX_MOTOR_FORCE, HERTZ, DAMPING_RATIO, TARGET, FREE_ROTATION = range(9)
PERP, ANGULAR, SPRING, MOTOR, LOW, HIGH = range(6)


@njit
def emit(j, param, imp, rows, r, h, g):
    """The rows, in the order solved: spring, motor, lower and upper limit along the axis, then the normal row
    and the angle as one block (or the normal row alone with a free rotation, or when neither body can turn)."""
    r0 = r
    if param[j, HERTZ] > 0.0:
        r = add_row(rows, r, ROW_AXIS, BIAS_SPRING, imp, j, float(SPRING), -INF, INF, param[j, TARGET], 1.0, 0.0,
                    param[j, HERTZ], param[j, DAMPING_RATIO], h)
    if param[j, MAX_MOTOR_FORCE] > 0.0:
        m = param[j, MAX_MOTOR_FORCE] * h
        r = add_row(rows, r, ROW_AXIS, BIAS_MOTOR, imp, j, float(MOTOR), -m, m, -param[j, MOTOR_SPEED], 1.0, 0.0, 0.0,
                    0.0, h)
    if param[j, LOWER] > -INF:
        r = add_row(rows, r, ROW_AXIS, BIAS_LIMIT, imp, j, float(LOW), 0.0, INF, param[j, LOWER], 1.0, 0.0, 0.0, 0.0, h)
    if param[j, UPPER] < INF:
        r = add_row(rows, r, ROW_AXIS, BIAS_LIMIT, imp, j, float(HIGH), 0.0, INF, param[j, UPPER], -1.0, 0.0, 0.0,
                    0.0, h)
    if param[j, FREE_ROTATION] == 0.0 and g[G_TURN] > 0.0:
        r = add_row(rows, r, ROW_PRISM, BIAS_RIGID, imp, j, float(PERP), -INF, INF, g[G_ANG0], 0.0, 0.0, 0.0, 0.0, h)
    else:
        r = add_row(rows, r, ROW_AXIS, BIAS_RIGID, imp, j, float(PERP), -INF, INF, 0.0, 1.0, 1.0, 0.0, 0.0, h)
    for k in range(r0, r):
        rows[k, UX] = g[G_AXX]
        rows[k, UY] = g[G_AXY]
    return r


@llvm_inline_njit
def solve_axis(rows, r, warm, rate, ms, isc, vax, vay, vaw, vbx, vby, vbw, ma, ia, mb, ib, ux, uy, ax, ay, rbx, rby,
               dx, dy, angle):
    """The normal row (p, s1; p, s2) and the angular row as one block, K = | mA + mB + IA·s1² + IB·s2²  IA·s1 + IB·s2 |
    over | · IA + IB |, with p the axis' left normal, s1 = (d + rA) × p, s2 = rB × p ((ax, ay) = d + rA): one solve
    meets both, where one row after the other the perpendicular impulse (whose lever turns the bodies) undid the
    angular row's work whenever the anchor was off a centre of mass. The biases are ``rate`` (the joint softness's
    or 0) times p·d and the angle. Returns the velocities; a K too near singular (IA + IB ≈ 0 relative to the
    rest, which ``emit`` rules out) leaves them as they are."""
    px, py = -uy, ux
    s1 = ax * py - ay * px
    s2 = rbx * py - rby * px
    rows[r, FX] = px
    rows[r, FY] = py
    l1, l2 = rows[r, L0], rows[r, L1]
    if warm:
        d1, d2 = l1, l2
    else:
        k11 = ma + mb + ia * s1 * s1 + ib * s2 * s2
        k12 = ia * s1 + ib * s2
        k22 = ia + ib
        det = k11 * k22 - k12 * k12
        if not det > 1e-12 * k11 * k22:
            return vax, vay, vaw, vbx, vby, vbw
        c1 = px * (vbx - vax) + py * (vby - vay) + s2 * vbw - s1 * vaw + rate * (px * dx + py * dy)
        c2 = vbw - vaw + rate * angle
        b1 = (k22 * c1 - k12 * c2) / det
        b2 = (k11 * c2 - k12 * c1) / det
        d1 = -ms * b1 - isc * l1
        d2 = -ms * b2 - isc * l2
        rows[r, L0] = l1 + d1
        rows[r, L1] = l2 + d2
    return (vax - ma * d1 * px, vay - ma * d1 * py, vaw - ia * (d1 * s1 + d2), vbx + mb * d1 * px,
            vby + mb * d1 * py, vbw + ib * (d1 * s2 + d2))
