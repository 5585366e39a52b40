"""Mouse (target) joint (Box2D's mouse joint): a point of a body pulled towards a target by a spring of the
user's frequency and damping ratio, with the force capped (|λ| ≤ max force × h), so a dragged body swings about
where it was grabbed and cannot be forced through walls. Body A is the world's static body; anchor A is the
target."""
from ..._jit import njit
from ._common import ROW_POINT, BIAS_SPRING, add_row

REF, HERTZ, DAMPING_RATIO, MAX_FORCE = range(4)
PX, PY = range(2)


@njit
def emit(j, param, imp, rows, r, h, g):
    """One point row, a spring with |λ| ≤ max force × h."""
    return add_row(rows, r, ROW_POINT, BIAS_SPRING, imp, j, float(PX), 0.0, param[j, MAX_FORCE] * h, 0.0, 0.0, 0.0,
                   param[j, HERTZ], param[j, DAMPING_RATIO], h)
