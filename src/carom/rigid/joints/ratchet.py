"""Ratchet (pymunk's RatchetJoint): the relative angle θ = θB − θA may move freely in the direction of ``ratchet``
(its sign) but not back past the last tooth it reached. Teeth sit at phase + k·|ratchet|; the tooth reached
(the impulse table's CURSOR, kept between steps) advances once per step (``emit``, as pymunk's pre-step),
and the row s·(θ − cursor) ≥ 0, s = sign(ratchet), is a one-sided limit."""
import math

from ..._jit import njit
from ._common import INF, G_ANG0, ROW_ANGLE, BIAS_LIMIT, add_row

REF, PHASE, RATCHET = range(3)
LIMIT, CURSOR = range(2)


@njit
def emit(j, param, imp, rows, r, h, g):
    """The cursor moved up to the last tooth the joint has passed in the ratchet's direction (θ at the start
    of the step), then the limit row s·(θ − cursor) ≥ 0."""
    ratchet = param[j, RATCHET]
    angle = g[G_ANG0]
    if (angle - imp[j, CURSOR]) * ratchet > 0.0:
        tooth = math.floor((angle - param[j, PHASE]) / ratchet) * ratchet + param[j, PHASE]
        if (tooth - imp[j, CURSOR]) * ratchet > 0.0:
            imp[j, CURSOR] = tooth
    s = 1.0 if ratchet > 0.0 else -1.0
    return add_row(rows, r, ROW_ANGLE, BIAS_LIMIT, imp, j, float(LIMIT), 0.0, INF, s * (angle - imp[j, CURSOR]), s, s,
                   0.0, 0.0, h)
