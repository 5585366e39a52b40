"""Gear (pymunk's GearJoint): the bodies' absolute angles kept in the relation ratio·θB − θA = phase, so their
angular velocities keep ratio·ωB = ωA. One rigid angular row, Ċ = ratio·ωB − ωA."""
from ..._jit import njit
from ._common import INF, G_TA, G_TB, ROW_ANGLE, BIAS_RIGID, add_row

REF, PHASE, RATIO = range(3)
GEAR = 0


@njit
def emit(j, param, imp, rows, r, h, g):
    """One rigid angle row: C = ratio·θB − θA − phase (absolute angles), Ċ = ratio·ωB − ωA."""
    ratio = param[j, RATIO]
    return add_row(rows, r, ROW_ANGLE, BIAS_RIGID, imp, j, float(GEAR), -INF, INF,
                   ratio * g[G_TB] - g[G_TA] - param[j, PHASE], 1.0, ratio, 0.0, 0.0, h)
