"""Weld joint (Box2D's weld): the bodies held at their relative pose, rigidly or as a soft linear and angular
spring (``linear_hertz``, ``angular_hertz`` > 0).

Rigid (both hertz 0), the point and the angle are one 3-d block (``solve_block``, as Box2D v2 solves a rigid
weld): Ċ = (vB + ωB × rB − vA − ωA × rA, ωB − ωA), C = (d, θ), with the joint softness in the biased solve.
Solved as two rows one after the other (Box2D v3's way: the angle, then the point), the two fight whenever the
anchor is away from a centre of mass, since the point's impulse turns the body that the angular row has just
stopped: a bar welded level by one end reported 1.36 times its weight's torque in its first step (a torque
threshold 5 % above its load broke it at once), and as a block 1.0000. With a spring in either part, its row has
its own softness: the angular row first, then the point."""
from ..._jit import njit, llvm_inline_njit
from ._common import (INF, G_ANG0, G_TURN, ROW_WELD, ROW_ANGLE, ROW_POINT, BIAS_RIGID, BIAS_SPRING, L0, L1, L2,
                      add_row)

REF, LINEAR_HERTZ, LINEAR_DAMPING, ANGULAR_HERTZ, ANGULAR_DAMPING = range(5)
PX, PY, ANGULAR = range(3)


@njit
def emit(j, param, imp, rows, r, h, g):
    """Rigid (and some body can turn): the block. Else the angle row (a spring or rigid), then the point (a
    spring or rigid)."""
    lh, ah = param[j, LINEAR_HERTZ], param[j, ANGULAR_HERTZ]
    if lh == 0.0 and ah == 0.0 and g[G_TURN] > 0.0:
        return add_row(rows, r, ROW_WELD, BIAS_RIGID, imp, j, float(PX), -INF, INF, g[G_ANG0], 1.0, 1.0, 0.0, 0.0, h)
    r = add_row(rows, r, ROW_ANGLE, BIAS_SPRING if ah > 0.0 else BIAS_RIGID, imp, j, float(ANGULAR), -INF, INF,
                g[G_ANG0], 1.0, 1.0, ah, param[j, ANGULAR_DAMPING], h)
    return add_row(rows, r, ROW_POINT, BIAS_SPRING if lh > 0.0 else BIAS_RIGID, imp, j, float(PX), 0.0, INF, 0.0, 0.0,
                   0.0, lh, param[j, LINEAR_DAMPING], h)


@llvm_inline_njit
def solve_block(rows, r, warm, rate, mass_scale, impulse_scale, vax, vay, vaw, vbx, vby, vbw, ma, ia, mb, ib, rax,
                ray, rbx, rby, dx, dy, angle):
    """The rigid weld's point and angle as one block: with λ = (Px, Py, L) (P on B at rB and −P on A at rA, L on
    B and −L on A), K = J·M⁻¹·Jᵀ =

        | mA + mB + IA·rAy² + IB·rBy²    −IA·rAy·rAx − IB·rBy·rBx      −IA·rAy − IB·rBy |
        |            ·                   mA + mB + IA·rAx² + IB·rBx²    IA·rAx + IB·rBx |
        |            ·                              ·                       IA + IB     |

    and Δλ = −mass_scale·K⁻¹·(Ċ + rate·C) − impulse_scale·λ (C = (d, θ)). Returns the velocities; a K too near
    singular leaves them as they are (``emit`` gives a weld whose bodies cannot turn, K singular, the rows one
    by one instead)."""
    px, py, lw = rows[r, L0], rows[r, L1], rows[r, L2]
    if warm:
        dpx, dpy, dlw = px, py, lw
    else:
        k11 = ma + mb + ia * ray * ray + ib * rby * rby
        k12 = -ia * ray * rax - ib * rby * rbx
        k13 = -ia * ray - ib * rby
        k22 = ma + mb + ia * rax * rax + ib * rbx * rbx
        k23 = ia * rax + ib * rbx
        k33 = ia + ib
        # the inverse by cofactors (K is symmetric)
        c11 = k22 * k33 - k23 * k23
        c12 = k13 * k23 - k12 * k33
        c13 = k12 * k23 - k13 * k22
        det = k11 * c11 + k12 * c12 + k13 * c13
        if not abs(det) > 1e-12 * (k11 * k22 * k33 + 1e-300):
            return vax, vay, vaw, vbx, vby, vbw
        c22 = k11 * k33 - k13 * k13
        c23 = k12 * k13 - k11 * k23
        c33 = k11 * k22 - k12 * k12
        cx = vbx - vbw * rby - vax + vaw * ray + rate * dx
        cy = vby + vbw * rbx - vay - vaw * rax + rate * dy
        cw = vbw - vaw + rate * angle
        inv = 1.0 / det
        bx = (c11 * cx + c12 * cy + c13 * cw) * inv
        by = (c12 * cx + c22 * cy + c23 * cw) * inv
        bw = (c13 * cx + c23 * cy + c33 * cw) * inv
        dpx = -mass_scale * bx - impulse_scale * px
        dpy = -mass_scale * by - impulse_scale * py
        dlw = -mass_scale * bw - impulse_scale * lw
        rows[r, L0] = px + dpx
        rows[r, L1] = py + dpy
        rows[r, L2] = lw + dlw
    return (vax - ma * dpx, vay - ma * dpy, vaw - ia * (rax * dpy - ray * dpx + dlw), vbx + mb * dpx, vby + mb * dpy,
            vbw + ib * (rbx * dpy - rby * dpx + dlw))
