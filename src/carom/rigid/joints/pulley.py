"""Pulley (pybox2d's pulley joint): two bodies hung from two fixed ground points by one rope over them, so that
|pA − gA| + ratio·|pB − gB| = constant. With uA, uB the unit vectors from the ground points to the anchors,
C = constant − |pA − gA| − ratio·|pB − gB| and Ċ = −uA·(vA + ωA × rA) − ratio·uB·(vB + ωB × rB): one rigid
row with jA = uA, jaw = rA × uA, jB = −ratio·uB, jbw = −ratio·(rB × uB)."""
from ..._jit import njit
from ._common import INF, G_CAX, G_CAY, G_CBX, G_CBY, ROW_PULLEY, BIAS_RIGID, UX, UY, P0, P1, add_row

REF, GROUND_AX, GROUND_AY, GROUND_BX, GROUND_BY, RATIO, CONSTANT = range(7)
ROPE = 0


@njit
def emit(j, param, imp, rows, r, h, g):
    """One rigid PULLEY row: ratio (SB), constant (C0), and the ground points from the centres of mass at the
    start of the step (UX, UY for A, P0, P1 for B)."""
    r = add_row(rows, r, ROW_PULLEY, BIAS_RIGID, imp, j, float(ROPE), -INF, INF, param[j, CONSTANT], 1.0, param[j,
                RATIO], 0.0, 0.0, h)
    rows[r - 1, UX] = param[j, GROUND_AX] - g[G_CAX]
    rows[r - 1, UY] = param[j, GROUND_AY] - g[G_CAY]
    rows[r - 1, P0] = param[j, GROUND_BX] - g[G_CBX]
    rows[r - 1, P1] = param[j, GROUND_BY] - g[G_CBY]
    return r
