"""The pre-solve stage (``pre_solve_stage``): the user's hook (``carom.rigid.presolve``) and the one-way shapes
may disable a contact or change its friction, restitution and tangent speed for the step (``material``).

The hook's pass (:func:`pre_solve_pass`) is compiled apart from the step (``carom._jit.apart_njit``) and loaded
when a world with a hook first steps (:func:`load`): a world without one never runs it, and it was 0.8 s of
the step's cold compile, at its end, where nothing else was compiled beside it.
"""
import numba
import numpy as np
from numba import types

from .._jit import njit, apart_njit, apart_caller, deref
from ..constants import FLOAT32_LIMIT, MAX_TRANSLATION_SPEED
from ._contact_rows import mix
from .presolve import call_pre_solve
from ._layout import KEY_SHIFT, KEY_MASK
from ._narrow import CSEP, _empty_row, _mark_uncached


@njit
def pre_solve_stage(hook, friction_rule, restitution_rule, shapes, awake, contacts):
    """The user's pre-solve hook (``carom.rigid.presolve``) on every contact about to be solved, in key order,
    in this thread: the non-sensor contacts with points of a pair with an awake body. Returns the contacts'
    (friction, restitution, tangent speed) for this step, one row per contact (the shapes' mixed values, as the
    hook left them: friction and restitution at least 0, the tangent speed within ±MAX_TRANSLATION_SPEED, NaN
    taken as 0), which ``prepare_stage`` uses instead of the shapes'; a contact the hook disables is dropped as a
    passing one-way shape drops it in the narrow phase (no points, not touching, no impulse to warm start,
    tested afresh next step). With no hook (``hook`` 0) an empty table, and nothing else is done."""
    if hook == 0:
        return np.empty((0, 3))
    shapes = deref(shapes)
    return _call_pre_solve_pass((hook, friction_rule, restitution_rule, shapes, awake, contacts))


@apart_njit(lambda arg_types: types.float64[:, ::1])
def pre_solve_pass(hook, friction_rule, restitution_rule, shapes, awake, contacts):
    """The hook on every contact about to be solved, and the table of materials (``pre_solve_stage``)."""
    (shape_body, shape_count, shape_friction, shape_restitution, shape_tangent) = (shapes.body, shapes.vert_count,
     shapes.friction,
                                                                                  shapes.restitution, shapes.tangent_speed)
    keys, c_count, c_ids, c_nimp, c_timp, c_normal, c_point, c_sep, c_touch, c_sensor, c_cache = (
        contacts.keys, contacts.count, contacts.ids, contacts.normal_impulse, contacts.tangent_impulse,
        contacts.normal, contacts.points, contacts.separation, contacts.touching, contacts.sensor, contacts.cache)
    K = keys.shape[0]
    material = np.empty((K, 3))
    points = np.zeros(6)
    out = np.empty(3)
    for k in range(K):
        a = keys[k] >> KEY_SHIFT
        b = keys[k] & KEY_MASK
        material[k, 0] = mix(shape_friction[a], shape_friction[b], friction_rule)
        material[k, 1] = mix(shape_restitution[a], shape_restitution[b], restitution_rule)
        material[k, 2] = shape_tangent[a] + shape_tangent[b]
        ba = shape_body[a]
        bb = shape_body[b]
        if c_count[k] == 0 or c_sensor[k] or not (awake[ba] or awake[bb]):
            continue
        for p in range(2):
            has = p < c_count[k]
            points[3 * p] = c_point[k, p, 0] if has else 0.0
            points[3 * p + 1] = c_point[k, p, 1] if has else 0.0
            points[3 * p + 2] = c_sep[k, p] if has else 0.0
        for f in range(3):
            out[f] = material[k, f]
        keep = call_pre_solve(np.int64(hook), np.int64(a), np.int64(b), np.int64(ba), np.int64(bb),
                              np.float64(c_normal[k, 0]), np.float64(c_normal[k, 1]), np.int64(c_count[k]), points,
                              out)
        if keep == 0:
            # (the step's impulses too: a recycled contact's anchor offset, which the solver would have overwritten,
            # ``narrow_stage``)
            _empty_row(k, c_count, c_ids, c_nimp, c_timp, c_touch, c_normal, c_point, c_sep, contacts.step_impulse)
            if not (shape_count[a] == 1 and shape_count[b] == 1):
                _mark_uncached(c_cache, k)
                c_cache[k, CSEP] = -np.inf
            continue
        # (NaN fails every comparison: taken as 0)
        material[k, 0] = min(out[0], FLOAT32_LIMIT) if out[0] > 0.0 else 0.0
        material[k, 1] = min(out[1], FLOAT32_LIMIT) if out[1] > 0.0 else 0.0
        material[k, 2] = max(-MAX_TRANSLATION_SPEED, min(out[2], MAX_TRANSLATION_SPEED)) if out[2] == out[2] else 0.0
    return material


#: the compiled call of :func:`pre_solve_pass` (``carom._jit.apart_caller``), its arguments as one tuple
_call_pre_solve_pass = apart_caller(pre_solve_pass)


#: :func:`load` was called (every world's step has the same types)
loaded = False


def load(friction_rule, restitution_rule, shapes, contacts):
    """Compile (or load from the cache) :func:`pre_solve_pass` for the step's mixing rules, shapes and contact
    table (the narrow phase's ``NarrowTable``), so that the step of a world with a pre-solve hook finds it
    (``World.step`` calls it before each such step: a call after the first returns at once, without typing the
    tables, 20-odd µs a step). The awake flags are a fresh C-ordered array of flags."""
    global loaded
    if loaded:
        return
    if not numba.config.DISABLE_JIT:
        pre_solve_pass.load((types.int64, numba.typeof(friction_rule), numba.typeof(restitution_rule),
                             numba.typeof(shapes), numba.typeof(np.zeros(1, np.bool_)), numba.typeof(contacts)))
    loaded = True
