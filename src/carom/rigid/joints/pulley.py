"""Pulley (pybox2d's pulley joint): two bodies hung from two fixed ground points by one rope over them, so that
|pA − gA| + ratio·|pB − gB| = constant. With uA, uB the unit vectors from the ground points to the anchors,
C = constant − |pA − gA| − ratio·|pB − gB| and Ċ = −uA·(vA + ωA × rA) − ratio·uB·(vB + ωB × rB): one rigid
row with jA = uA, jaw = rA × uA, jB = −ratio·uB, jbw = −ratio·(rB × uB)."""
import math

from ..._jit import njit
from ._common import (INF, G_RAX, G_RAY, G_RBX, G_RBY, G_CAX, G_CAY, G_CBX, G_CBY, K0, rigid_bias, solve_row,
                      apply_row, cross)

REF, GROUND_AX, GROUND_AY, GROUND_BX, GROUND_BY, RATIO, CONSTANT = range(7)
ROPE = 0
# the ground points from the centres of mass at the start of the step (``prepare``), and the last rope
# direction of B (for the reaction)
GAX, GAY, GBX, GBY, UBX, UBY = K0, K0 + 1, K0 + 2, K0 + 3, K0 + 4, K0 + 5


@njit
def prepare(j, param, imp, rows, h, ca, cb):
    rows[j, GAX] = param[j, GROUND_AX] - ca[0]
    rows[j, GAY] = param[j, GROUND_AY] - ca[1]
    rows[j, GBX] = param[j, GROUND_BX] - cb[0]
    rows[j, GBY] = param[j, GROUND_BY] - cb[1]


@njit
def solve(j, rows, param, imp, v, g, mode, jsoft, h, inv_h):
    # each anchor from its ground point: (c − g) at the start of the step, plus the centre's change and the
    # anchor's about the centre now
    ax = g[G_RAX] + g[G_CAX] - rows[j, GAX]
    ay = g[G_RAY] + g[G_CAY] - rows[j, GAY]
    bx = g[G_RBX] + g[G_CBX] - rows[j, GBX]
    by = g[G_RBY] + g[G_CBY] - rows[j, GBY]
    la = math.sqrt(ax * ax + ay * ay)
    lb = math.sqrt(bx * bx + by * by)
    uax, uay = (ax / la, ay / la) if la > 1e-12 else (0.0, 0.0)
    ubx, uby = (bx / lb, by / lb) if lb > 1e-12 else (0.0, 0.0)
    rows[j, UBX] = ubx
    rows[j, UBY] = uby
    ratio = param[j, RATIO]
    jaw = cross(g[G_RAX], g[G_RAY], uax, uay)
    jbw = -ratio * cross(g[G_RBX], g[G_RBY], ubx, uby)
    if mode == 0:
        apply_row(v, rows, j, uax, uay, jaw, -ratio * ubx, -ratio * uby, jbw, imp[j, ROPE])
        return
    bias, ms, isc = rigid_bias(param[j, CONSTANT] - la - ratio * lb, mode == 1, jsoft)
    imp[j, ROPE] = solve_row(v, rows, j, uax, uay, jaw, -ratio * ubx, -ratio * uby, jbw, imp[j, ROPE], bias, ms, isc,
                          -INF, INF)


@njit
def reaction(j, rows, param, imp, g):
    r = param[j, RATIO]
    return -r * imp[j, ROPE] * rows[j, UBX], -r * imp[j, ROPE] * rows[j, UBY], 0.0
