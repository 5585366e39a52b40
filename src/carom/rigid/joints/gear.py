"""Gear (pymunk's GearJoint): the bodies' absolute angles kept in the relation ratio·θB − θA = phase, so their
angular velocities keep ratio·ωB = ωA. One rigid angular row, Ċ = ratio·ωB − ωA."""
from ..._jit import njit
from ._common import INF, G_TA, G_TB, rigid_bias, solve_row, apply_row

REF, PHASE, RATIO = range(3)
GEAR = 0


@njit
def prepare(j, param, imp, rows, h, ca, cb):
    pass


@njit
def solve(j, rows, param, imp, v, g, mode, jsoft, h, inv_h):
    ratio = param[j, RATIO]
    if mode == 0:
        apply_row(v, rows, j, 0.0, 0.0, 1.0, 0.0, 0.0, ratio, imp[j, GEAR])
        return
    bias, ms, isc = rigid_bias(ratio * g[G_TB] - g[G_TA] - param[j, PHASE], mode == 1, jsoft)
    imp[j, GEAR] = solve_row(v, rows, j, 0.0, 0.0, 1.0, 0.0, 0.0, ratio, imp[j, GEAR], bias, ms, isc, -INF, INF)


@njit
def reaction(j, rows, param, imp, g):
    return 0.0, 0.0, imp[j, GEAR] * param[j, RATIO]
