"""Weld joint (Box2D's weld): the bodies held at their relative pose, rigidly or as a soft linear and angular
spring (``linear_hertz``, ``angular_hertz`` > 0).

Rigid (both hertz 0), the point and the angle are one 3-d block (``solve_block``, as Box2D v2 solves a rigid
weld): Ċ = (vB + ωB × rB − vA − ωA × rA, ωB − ωA), C = (d, θ), with the joint softness in the biased solve.
Solved as two rows one after the other (Box2D v3's way: the angle, then the point), the two fight whenever the
anchor is away from a centre of mass, since the point's impulse turns the body that the angular row has just
stopped: a bar welded level by one end reported 1.36 times its weight's torque in its first step (a torque
threshold 5 % above its load broke it at once), and as a block 1.0000. With a spring in either part, its row has
its own softness: the angular row first, then the point."""
from ..._jit import njit
from ._common import (INF, G_ANGLE, G_DX, G_DY, G_RAX, G_RAY, G_RBX, G_RBY, K0, MA, IA, MB, IB, VAX, VAY, VAW, VBX,
                      VBY, VBW, rigid_bias, spring_bias, spring_point, solve_row, apply_row, solve_point, apply_point,
                      set_soft)

REF, LINEAR_HERTZ, LINEAR_DAMPING, ANGULAR_HERTZ, ANGULAR_DAMPING = range(5)
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
    use_bias = mode == 1
    if param[j, ANGULAR_HERTZ] == 0.0 and param[j, LINEAR_HERTZ] == 0.0:
        rate, ms, isc = rigid_bias(1.0, use_bias, jsoft)
        if solve_block(v, rows, j, g, imp, rate, ms, isc):
            return
    if param[j, ANGULAR_HERTZ] > 0.0:
        bias, ms, isc = spring_bias(g[G_ANGLE], mode, rows, j, ASOFT, 0)
    else:
        bias, ms, isc = rigid_bias(g[G_ANGLE], use_bias, jsoft)
    imp[j, ANGULAR] = solve_row(v, rows, j, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, imp[j, ANGULAR], bias, ms, isc, -INF, INF)
    if param[j, LINEAR_HERTZ] > 0.0:
        rate, ms, isc = spring_point(mode, rows, j, g, LSOFT)
    else:
        rate, ms, isc = rigid_bias(1.0, use_bias, jsoft)
    solve_point(v, rows, j, g, imp, PX, rate, ms, isc, INF)


@njit
def solve_block(v, rows, j, g, imp, rate, mass_scale, impulse_scale):
    """The rigid weld's point and angle as one block: with λ = (Px, Py, L) (P on B at rB and −P on A at rA, L on
    B and −L on A), K = J·M⁻¹·Jᵀ =

        | mA + mB + IA·rAy² + IB·rBy²    −IA·rAy·rAx − IB·rBy·rBx      −IA·rAy − IB·rBy |
        |            ·                   mA + mB + IA·rAx² + IB·rBx²    IA·rAx + IB·rBx |
        |            ·                              ·                       IA + IB     |

    and Δλ = −mass_scale·K⁻¹·(Ċ + rate·C) − impulse_scale·λ. Returns False, solving nothing, when K is singular
    (neither body can turn: then the rows are solved one by one)."""
    ma, ia, mb, ib = rows[j, MA], rows[j, IA], rows[j, MB], rows[j, IB]
    rax, ray, rbx, rby = g[G_RAX], g[G_RAY], g[G_RBX], g[G_RBY]
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
        return False
    c22 = k11 * k33 - k13 * k13
    c23 = k12 * k13 - k11 * k23
    c33 = k11 * k22 - k12 * k12
    cx = v[VBX] - v[VBW] * rby - v[VAX] + v[VAW] * ray + rate * g[G_DX]
    cy = v[VBY] + v[VBW] * rbx - v[VAY] - v[VAW] * rax + rate * g[G_DY]
    cw = v[VBW] - v[VAW] + rate * g[G_ANGLE]
    inv = 1.0 / det
    bx = (c11 * cx + c12 * cy + c13 * cw) * inv
    by = (c12 * cx + c22 * cy + c23 * cw) * inv
    bw = (c13 * cx + c23 * cy + c33 * cw) * inv
    px, py, lw = imp[j, PX], imp[j, PY], imp[j, ANGULAR]
    dpx = -mass_scale * bx - impulse_scale * px
    dpy = -mass_scale * by - impulse_scale * py
    dlw = -mass_scale * bw - impulse_scale * lw
    imp[j, PX] = px + dpx
    imp[j, PY] = py + dpy
    imp[j, ANGULAR] = lw + dlw
    apply_point(v, rows, j, g, dpx, dpy)
    apply_row(v, rows, j, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, dlw)
    return True


@njit
def reaction(j, rows, param, imp, g):
    return imp[j, PX], imp[j, PY], imp[j, ANGULAR]
