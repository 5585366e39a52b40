"""Motor joint (Box2D's motor joint: top-down friction, moving platforms): drives body B towards a pose
relative to body A, the linear offset (anchor A, in A's frame, against B's origin) and the angular offset (the
reference angle), with the force and torque it may use capped. Each part is rigid with a correction of
``correction_factor``/h of its error per substep (Box2D's), or a spring when its hertz > 0."""
from ..._jit import njit
from ._common import (G_ANG0, ROW_ANGLE, ROW_POINT, BIAS_SPRING, BIAS_CORRECT, BETA, add_row)

REF, MAX_FORCE, MAX_TORQUE, CORRECTION, LINEAR_HERTZ, LINEAR_DAMPING, ANGULAR_HERTZ, ANGULAR_DAMPING = range(8)
PX, PY, ANGULAR = range(3)


@njit
def emit(j, param, imp, rows, r, h, g):
    """The angle row (within ± max torque × h), then the point (|λ| ≤ max force × h), each a spring or corrected
    at ``correction_factor``/h (the row's BETA)."""
    corr = param[j, CORRECTION] / h
    m = param[j, MAX_TORQUE] * h
    ah, lh = param[j, ANGULAR_HERTZ], param[j, LINEAR_HERTZ]
    r = add_row(rows, r, ROW_ANGLE, BIAS_SPRING if ah > 0.0 else BIAS_CORRECT, imp, j, float(ANGULAR), -m, m,
                g[G_ANG0], 1.0, 1.0, ah, param[j, ANGULAR_DAMPING], h)
    if ah == 0.0:
        rows[r - 1, BETA] = corr
    r = add_row(rows, r, ROW_POINT, BIAS_SPRING if lh > 0.0 else BIAS_CORRECT, imp, j, float(PX), 0.0, param[j,
                MAX_FORCE] * h, 0.0, 0.0, 0.0, lh, param[j, LINEAR_DAMPING], h)
    if lh == 0.0:
        rows[r - 1, BETA] = corr
    return r
