"""Distance joint (Box2D's distance joint and rope, pymunk's PinJoint, SlideJoint and DampedSpring): the
distance between the anchors, along u = d/|d|, with the row Jacobian jA = u, jaw = rA × u, jB = u, jbw = rB × u.

- rigid (no spring, min = max): C = |d| − length, two-sided;
- spring (hertz > 0): C = |d| − length with the user's softness, λ within [lower force, upper force] × h;
- limits (min < max): C = |d| − min ≥ 0 and C = max − |d| ≥ 0 (a rope is min 0);
- motor: Ċ − speed with |λ| ≤ max force × h."""
import math

from ..._jit import njit
from ._common import (INF, G_DX, G_DY, G_RAX, G_RAY, G_RBX, G_RBY, K0, rigid_bias, limit_bias, spring_bias,
                      solve_row, apply_row, set_soft, cross)

REF, LENGTH, MIN_LENGTH, MAX_LENGTH, HERTZ, DAMPING_RATIO, LOWER_FORCE, UPPER_FORCE, MOTOR_SPEED, MAX_MOTOR_FORCE = \
    range(10)
AXIAL, LOW, HIGH, MOTOR = range(4)
SOFT = K0
# the last axis solved with (for the reaction)
UX, UY = K0 + 3, K0 + 4


@njit
def prepare(j, param, imp, rows, h, ca, cb):
    set_soft(rows, j, SOFT, 0, param[j, HERTZ], param[j, DAMPING_RATIO], h)


@njit
def solve(j, rows, param, imp, v, g, mode, jsoft, h, inv_h):
    dx, dy = g[G_DX], g[G_DY]
    length = math.sqrt(dx * dx + dy * dy)
    if length > 1e-12:
        ux, uy = dx / length, dy / length
    else:
        ux, uy = 1.0, 0.0
    rows[j, UX] = ux
    rows[j, UY] = uy
    aw = cross(g[G_RAX], g[G_RAY], ux, uy)
    bw = cross(g[G_RBX], g[G_RBY], ux, uy)
    if mode == 0:
        apply_row(v, rows, j, ux, uy, aw, ux, uy, bw, imp[j, AXIAL] + imp[j, LOW] - imp[j, HIGH] + imp[j, MOTOR])
        return
    use_bias = mode == 1
    lo_len, hi_len = param[j, MIN_LENGTH], param[j, MAX_LENGTH]
    spring = param[j, HERTZ] > 0.0
    if not spring and lo_len == hi_len:
        bias, ms, isc = rigid_bias(length - param[j, LENGTH], use_bias, jsoft)
        imp[j, AXIAL] = solve_row(v, rows, j, ux, uy, aw, ux, uy, bw, imp[j, AXIAL], bias, ms, isc, -INF, INF)
        return
    if spring:
        bias, ms, isc = spring_bias(length - param[j, LENGTH], mode, rows, j, SOFT, 0)
        imp[j, AXIAL] = solve_row(v, rows, j, ux, uy, aw, ux, uy, bw, imp[j, AXIAL], bias, ms, isc,
                               param[j, LOWER_FORCE] * h, param[j, UPPER_FORCE] * h)
    if param[j, MAX_MOTOR_FORCE] > 0.0:
        m = param[j, MAX_MOTOR_FORCE] * h
        imp[j, MOTOR] = solve_row(v, rows, j, ux, uy, aw, ux, uy, bw, imp[j, MOTOR], -param[j, MOTOR_SPEED], 1.0, 0.0, -m, m)
    if lo_len > 0.0:
        bias, ms, isc = limit_bias(length - lo_len, use_bias, jsoft, inv_h)
        imp[j, LOW] = solve_row(v, rows, j, ux, uy, aw, ux, uy, bw, imp[j, LOW], bias, ms, isc, 0.0, INF)
    if hi_len < INF:
        bias, ms, isc = limit_bias(hi_len - length, use_bias, jsoft, inv_h)
        imp[j, HIGH] = solve_row(v, rows, j, -ux, -uy, -aw, -ux, -uy, -bw, imp[j, HIGH], bias, ms, isc, 0.0, INF)


@njit
def reaction(j, rows, param, imp, g):
    lam = imp[j, AXIAL] + imp[j, LOW] - imp[j, HIGH] + imp[j, MOTOR]
    return lam * rows[j, UX], lam * rows[j, UY], 0.0
