"""Mouse (target) joint (Box2D's mouse joint): a point of a body pulled towards a target by a spring of the
user's frequency and damping ratio, with the force capped (|λ| ≤ max force × h), so a dragged body swings about
where it was grabbed and cannot be forced through walls. Body A is the world's static body; anchor A is the
target."""
from ..._jit import njit
from ._common import K0, spring_point, solve_point, apply_point, set_soft

REF, HERTZ, DAMPING_RATIO, MAX_FORCE = range(4)
PX, PY = range(2)
SOFT = K0


@njit
def prepare(j, param, imp, rows, h, ca, cb):
    set_soft(rows, j, SOFT, 1, param[j, HERTZ], param[j, DAMPING_RATIO], h)


@njit
def solve(j, rows, param, imp, v, g, mode, jsoft, h, inv_h):
    if mode == 0:
        apply_point(v, rows, j, g, imp[j, PX], imp[j, PY])
        return
    rate, ms, isc = spring_point(mode, rows, j, g, SOFT)
    solve_point(v, rows, j, g, imp, PX, rate, ms, isc, param[j, MAX_FORCE] * h)


@njit
def reaction(j, rows, param, imp, g):
    return imp[j, PX], imp[j, PY], 0.0
