"""Ratchet (pymunk's RatchetJoint): the relative angle θ = θB − θA may move freely in the direction of ``ratchet``
(its sign) but not back past the last tooth it reached. Teeth sit at phase + k·|ratchet|; the tooth reached
(the impulse table's CURSOR, kept between steps) advances once per step (``prepare``, as pymunk's pre-step),
and the row s·(θ − cursor) ≥ 0, s = sign(ratchet), is a one-sided limit."""
import math

from ..._jit import njit
from ._common import INF, G_ANGLE, ANG0, limit_bias, solve_row, apply_row

REF, PHASE, RATCHET = range(3)
LIMIT, CURSOR = range(2)


@njit
def prepare(j, param, imp, rows, h, ca, cb):
    """The cursor moved up to the last tooth the joint has passed in the ratchet's direction (θ at the start
    of the step: rows[j, ANG0])."""
    r = param[j, RATCHET]
    angle = rows[j, ANG0]
    if (angle - imp[j, CURSOR]) * r > 0.0:
        tooth = math.floor((angle - param[j, PHASE]) / r) * r + param[j, PHASE]
        if (tooth - imp[j, CURSOR]) * r > 0.0:
            imp[j, CURSOR] = tooth


@njit
def solve(j, rows, param, imp, v, g, mode, jsoft, h, inv_h):
    s = 1.0 if param[j, RATCHET] > 0.0 else -1.0
    if mode == 0:
        apply_row(v, rows, j, 0.0, 0.0, s, 0.0, 0.0, s, imp[j, LIMIT])
        return
    bias, ms, isc = limit_bias(s * (g[G_ANGLE] - imp[j, CURSOR]), mode == 1, jsoft, inv_h)
    imp[j, LIMIT] = solve_row(v, rows, j, 0.0, 0.0, s, 0.0, 0.0, s, imp[j, LIMIT], bias, ms, isc, 0.0, INF)


@njit
def reaction(j, rows, param, imp, g):
    return 0.0, 0.0, imp[j, LIMIT] * (1.0 if param[j, RATCHET] > 0.0 else -1.0)
