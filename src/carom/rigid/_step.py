"""The rigid step in ONE compiled call: bounds, broad phase, narrow phase, solver (``_solver``), continuous
collision and sleep, each a stage function here; contact events are found after the step, only when asked
for (``event_rows``).

Bodies are stored by their centre of mass ``com`` and ``angle``; shapes by their core in the body frame
(relative to the body origin, which sits at ``com − R·local_center``). Contacts are keyed by their shape pair
``a << 32 | b`` (a < b) and kept sorted by key, so last step's contacts are found by a merge.
"""
import math
import numba
import numpy as np
from .._jit import njit, linking_entry_njit, cycle_counter, borrowed, by_ref, deref, index_range
from ._colouring import with_colouring, same_pairs
from ._prepare import prepare_stage
from ._solve import SOLVE_RETURNS, solve_apart, solve_stage, call_solve  # noqa: F401 (solve_stage: its name)
from ._layout import STATIC, KINEMATIC, DYNAMIC, KEY_SHIFT, KEY_MASK, NarrowTable, ShapeTable
from ..geometry.manifold import collide_quadrilaterals, collide_sat
from ..geometry._tree import _tree_insert_leaf
from ._bounds import (  # noqa: F401
    MOTION_WIDTH, M_BOUND, M_DX, M_DY, M_FALL, M_SWEPT, M_TURN, _body_bounds, _bounds_chunks, _origin, _shape_bounds,
    body_origin, bounds_stage, pair_motion)
from ._broad import (  # noqa: F401
    broad_stage, live_proxy_boxes, should_collide)
from ._narrow import (  # noqa: F401
    CACHE_WIDTH, CHAIN, CHAIN_CONVEX, CHAIN_NEXT, CHAIN_PREV, CHAIN_SIN_TOL, CNX, CNY, CQ0, CSEP, CTC, CTS,
    CTX, CTY, NARROW_BLOCKS, ONE_WAY_COS, _chain_rule, _clear_manifold, _collide_pair, _is_one_way, _mark_uncached,
    _narrow_block, _narrow_blocks, _put_manifold, _recycle, _recycle_point, _still_apart, _store_cache,
    chain_manifold, invalid_cache_rows, narrow_stage, one_way_passes)
from ._pre_solve_stage import (  # noqa: F401
    pre_solve_stage)
from ._continuous import (  # noqa: F401
    CCD_TARGET, CCD_TOUCHING, CORE_FRACTION, _carry, _continuous_pass, _moving_reach, _shape_toi, _swept_boxes_meet,
    continuous_stage, inner_core, sensor_stage)
from ._sleep import (  # noqa: F401
    _find, sleep_stage, wake_jointed)
from ._event_rows import (  # noqa: F401
    event_rows, no_hits)

#: the stages of the step, in order, as ``step_kernel`` clocks them
STAGES = ("bounds", "broad", "narrow", "prepare", "solve", "continuous", "sleep")

#: what ``first_bad_body`` found (checked in this order; World.step turns a code into its error)
BODY_OK, BODY_MASSLESS, BODY_VELOCITY, BODY_ANGULAR_VELOCITY, BODY_FORCE, BODY_TORQUE = 0, 1, 2, 3, 4, 5


@njit
def first_bad_body(bodies):
    """(code, body) of the first problem that stops a step, or (BODY_OK, −1): a live dynamic body without
    mass, then a live body with a non-finite velocity, angular velocity, force or torque (each the lowest
    such body). One compiled pass before anything moves, so a refused step leaves the world as it was; as
    NumPy passes in Python these checks cost about 0.1 ms a step."""
    bodies = deref(bodies)
    vel, angvel, inv_mass, kind, body_alive, force, torque = (bodies.vel, bodies.angvel, bodies.inv_mass, bodies.kind,
                                                              bodies.alive, bodies.force, bodies.torque)
    NB = kind.shape[0]
    if not _any_bad_body(vel, angvel, inv_mass, kind, body_alive, force, torque):
        return BODY_OK, np.int64(-1)
    first = np.full(6, NB, np.int64)
    for b in range(NB - 1, -1, -1):
        if not body_alive[b]:
            continue
        if kind[b] == DYNAMIC and inv_mass[b] == 0.0:
            first[BODY_MASSLESS] = b
        if not (math.isfinite(vel[b, 0]) and math.isfinite(vel[b, 1])):
            first[BODY_VELOCITY] = b
        if not math.isfinite(angvel[b]):
            first[BODY_ANGULAR_VELOCITY] = b
        if not (math.isfinite(force[b, 0]) and math.isfinite(force[b, 1])):
            first[BODY_FORCE] = b
        if not math.isfinite(torque[b]):
            first[BODY_TORQUE] = b
    for code in range(1, 6):
        if first[code] < NB:
            return code, first[code]
    return BODY_OK, np.int64(-1)


@njit
def _any_bad_body(vel, angvel, inv_mass, kind, body_alive, force, torque):
    """Whether any live body would stop the step (``first_bad_body``), in a loop the compiler vectorizes: a value
    is not finite when its exponent bits are all set, and the tests of a body are or-ed together without branches.
    With none (the usual step) the search for the first such body is skipped: 22,000 bodies in 20 µs, against
    50 for that search, in one thread before anything else of the step."""
    v, w, f, t = vel.view(np.int64), angvel.view(np.int64), force.view(np.int64), torque.view(np.int64)
    e = np.int64(_EXPONENT)
    bad = False
    # (from the last body down, as the search: the bounds stage, next, then finds the first bodies' rows in the cache)
    for b in range(kind.shape[0] - 1, -1, -1):
        wrong = (((v[b, 0] & e) == e) | ((v[b, 1] & e) == e) | ((w[b] & e) == e) | ((f[b, 0] & e) == e)
                 | ((f[b, 1] & e) == e) | ((t[b] & e) == e) | ((kind[b] == DYNAMIC) & (inv_mass[b] == 0.0)))
        bad |= body_alive[b] & wrong
    return bad


#: the exponent bits of a float64: all set for ±inf and NaN
_EXPONENT = 0x7FF0000000000000


@linking_entry_njit
def step_kernel(dt, substeps, gx, gy, friction_rule, restitution_rule, sleep_enabled,
                bodies, shapes, tree, shape_proxy, proxy_shape, old, joints, joined, threads, pre_solve, clock):
    """Advance the world by dt: the stages in order, in one compiled call.

    ``pre_solve`` is the address of the user's pre-solve hook (``carom.rigid.presolve``), 0 for none.

    ``clock[0]`` receives the cycle counter at the start and ``clock[1 + i]`` at the end of stage
    ``STAGES[i]`` (a few cycles per reading; World turns them into ``profile_times``). Returns (contact
    table, new broad-phase candidate cache, each point's approach speed for ``event_rows`` and
    ``World.contact_data`` (empty when nothing was solved), (code, body) of ``first_bad_body``, what is left
    of the step). A step refused by ``first_bad_body`` returns at once, before anything is changed.

    What is left is None for a finished step, or ``(stage, reach, awake, com0, angle0)`` when the step stopped
    before ``stage`` (``RESUME_CONTINUOUS`` or ``RESUME_SENSORS``) because the code it needs, compiled apart
    (``_continuous``), is not loaded; then ``step_tail`` finishes the step from there with the arrays given (the
    bounds stage's reach and awake flags, the poses at the start). (None, not empty arrays: each array handed
    back to Python costs about a microsecond, 5 µs of a 60 µs step of a small world.)"""
    clock[0] = cycle_counter()
    # the tables the caller holds for the whole call, as views without a reference (``borrowed``): each stage
    # and each function under it would otherwise take a reference on every array of them it is handed and drop
    # it on return, an atomic increment and decrement per array per call (the step of a world of one body made
    # some 3,700 such reference counts, a quarter of its time). None of them is returned or kept: the step hands
    # back only arrays it made, last step's table (``old``) and the broad phase's cache (``tree``), which keep
    # their references.
    bodies, shapes, joints, joined, shape_proxy, proxy_shape = borrowed((bodies, shapes, joints, joined,
                                                                         shape_proxy, proxy_shape))
    # the two largest tables handed to the stages by pointer (``by_ref``): each stage takes them back with
    # ``deref``, where passed by value every call copied every field of every array
    bodies_ref, shapes_ref = by_ref(bodies), by_ref(shapes)
    bad = first_bad_body(bodies_ref)
    if bad[0] != BODY_OK:
        for i in range(1, clock.shape[0]):
            clock[i] = clock[0]
        return old, tree.cand, no_hits(), bad, None
    if joints.kind.shape[0] > 0:
        wake_jointed(bodies_ref, joints)
    reach, awake, motion, xf, lower, upper, body_rows = bounds_stage(dt, gx, gy, bodies_ref, shapes_ref, threads)
    clock[1] = cycle_counter()
    if not awake.any():
        for i in range(2, clock.shape[0]):   # (a loop: a slice assignment costs compile time)
            clock[i] = clock[1]
        return old, tree.cand, no_hits(), bad, None
    keys, new_cand = broad_stage(bodies_ref, shapes_ref, tree, shape_proxy, proxy_shape, lower, upper, threads, joined)
    clock[2] = cycle_counter()
    # the same pairs as last step (a resting pile, most steps): the narrow phase updates the cache in place and
    # the colouring may be kept
    same = same_pairs(keys, old.keys)
    contacts, pack = narrow_stage(bodies_ref, shapes_ref, awake, motion, xf, keys, old, same, threads)
    clock[3] = cycle_counter()
    # the user's pre-solve hook: contacts disabled, materials changed for this step (with none, an empty table)
    material = pre_solve_stage(pre_solve, friction_rule, restitution_rule, shapes_ref, awake, contacts)
    solver = prepare_stage(bodies_ref, shapes_ref, contacts, old, same, friction_rule, restitution_rule, threads,
                           (gx, gy, dt), material, pack, body_rows)
    clock[4] = cycle_counter()
    # (the solve is compiled apart from the step: ``_solve.solve_apart``)
    com0, angle0, approach = call_solve((dt, substeps, gx, gy, bodies, contacts, solver, threads, joints))
    clock[5] = cycle_counter()
    # the table keeps the step's colouring, which the next step reuses when nothing it depends on changed
    table = with_colouring(contacts, solver)
    left = RESUME_CONTINUOUS
    if continuous_stage(bodies_ref, shapes_ref, awake, reach, com0, angle0, tree, proxy_shape, threads):
        left = RESUME_SENSORS
        if sensor_stage(bodies_ref, shapes_ref, awake, contacts):
            left = 0
    clock[6] = cycle_counter()
    if left != 0:
        clock[7] = clock[6]
        return table, new_cand, approach, bad, (left, reach, awake, com0, angle0)
    sleep_stage(dt, sleep_enabled, bodies_ref, reach, awake, solver.pair, joints)
    clock[7] = cycle_counter()
    return table, new_cand, approach, bad, None


#: where ``step_kernel`` stopped, for want of code compiled apart: before the continuous stage, before the sensors
RESUME_CONTINUOUS, RESUME_SENSORS = 1, 2


@njit
def step_tail(left, dt, sleep_enabled, bodies, shapes, reach, awake, com0, angle0, tree, proxy_shape, contacts, pair,
              joints, threads):
    """The rest of a step that ``step_kernel`` left at stage ``left`` (``RESUME_CONTINUOUS``, ``RESUME_SENSORS``)
    for want of code compiled apart, once that code is loaded (``_continuous.load``): the same stages, in the same
    order, on the same arrays, as the step would have run them. ``contacts`` is the narrow phase's table (the
    first fields of the step's ``ContactTable``) and ``pair`` the prepare stage's pairs. Returns False when
    the code is still missing (nothing more is done then)."""
    if left == RESUME_CONTINUOUS:
        if not continuous_stage(bodies, shapes, awake, reach, com0, angle0, tree, proxy_shape, threads):
            return False
    if not sensor_stage(bodies, shapes, awake, contacts):
        return False
    sleep_stage(dt, sleep_enabled, bodies, reach, awake, pair, joints)
    return True


#: the stages ``compile_late_stages`` compiles, which the step's compile and its helper share (the first to reach
#: one compiles it: ``carom._jit.compile_helper``)
LATE_STAGES = (_tree_insert_leaf, collide_quadrilaterals, collide_sat, prepare_stage, pre_solve_stage, continuous_stage,
               sensor_stage, sleep_stage, solve_apart)


def _solve_types(step_types):
    """(the narrow phase's table type, the prepare stage's, ``solve_apart``'s argument types) for a step of
    argument types ``step_types``; compiles (or loads) the prepare stage for them, whose return type is the
    solver's table."""
    (dt, substeps, gx, gy, friction_rule, restitution_rule, sleep_enabled, bodies, shapes, tree, shape_proxy,
     proxy_shape, old, joints, joined, threads, pre_solve, clock) = step_types
    # the narrow phase's table (``NarrowTable``): last step's fields without the colouring (``with_colouring``)
    contacts = numba.types.NamedTuple(old.types[:len(NarrowTable._fields)], NarrowTable)
    # (the bodies and shapes tables by pointer, as the step hands them: ``by_ref``)
    prepare_types = (numba.types.CPointer(bodies), numba.types.CPointer(shapes), contacts, old, numba.types.boolean,
                     friction_rule, restitution_rule, threads, numba.types.UniTuple(dt, 3),
                     numba.typeof(np.zeros((1, 3))), numba.typeof(np.zeros((1, 3))), numba.typeof(np.zeros((1, 3))))
    prepare_stage.compile(prepare_types)
    solver = prepare_stage.overloads[prepare_types].signature.return_type
    return contacts, solver, (dt, substeps, gx, gy, bodies, contacts, solver, threads, joints)


#: :func:`load_solve` was called (every world's step has the same types)
solve_loaded = False


def load_solve(step_args):
    """Compile (or load) the solve (``_solve.solve_apart``, compiled apart) for a step of arguments ``step_args``
    and make it known to the step: before the first step of a process (``World.step``, ``carom.WorldBatch``); a
    second call does nothing. Without the JIT, nothing to do."""
    global solve_loaded
    if solve_loaded:
        return
    if not numba.config.DISABLE_JIT:
        types = tuple(step_kernel.typeof_pyval(a) for a in step_args)
        solve_apart.load(_solve_types(types)[2])
    solve_loaded = True


def compile_late_stages(step_types):
    """Compile, into the on-disk cache, part of what ``step_kernel`` calls, for its argument types ``step_types``:
    the first part of the job of the helper process of a cold compile (``carom._jit.compile_helper``,
    ``carom._warmup.late_stages_then_public_api``), while the step's own compile goes on. First a leaf's
    insertion into a dynamic tree (``geometry._tree._tree_insert_leaf``: 0.8 s of the broad stage's 7), then the
    narrow phase's two polygon tests (``_narrow._collide_pair``: ``collide_quadrilaterals``, ``collide_sat``, 3 s of
    the narrow phase's 10), which the step's compile reaches in the middle of its work; then everything the
    step's compile reaches after the narrow phase (prepare, pre-solve, continuous, sensors, sleep), and last
    the solve, compiled apart, which the step's compile does not wait for (``load_solve`` loads it afterwards).
    The step's compile takes the bounds, broad and narrow stages and the step's own code.

    Why this split: Numba compiles the step's call tree depth first in one thread, and a process that reaches
    a kernel the other is compiling waits for it (``carom._jit._Claims``). The bounds stage, first in the step,
    was the helper's first job, but the helper (a new interpreter) starts it barely before the step's compile
    reaches it: the step's compile waited for it, 2.4 s with a core idle. The small late stages (2 s), once
    the step's, are now the helper's, so both processes end within a second of each other (a 15-box pyramid's
    first step: 22.5 s, from 24).

    The stages' types follow from the step's: the contact table the narrow phase returns has the type of last
    step's table (``old``), the bounds stage's arrays are fresh NumPy arrays, the solve's returns are
    declared (``_solve.SOLVE_RETURNS``), and the rest are the return types of stages compiled here. Each call
    below is the one ``step_kernel`` makes, so the step finds them in the cache when its compile reaches them
    (``tests/test_jit.py`` checks that the types are the step's own)."""
    (dt, substeps, gx, gy, friction_rule, restitution_rule, sleep_enabled, bodies, shapes, tree, shape_proxy,
     proxy_shape, old, joints, joined, threads, pre_solve, clock) = step_types
    # a shape's vertex and normal rows (C-ordered float64 rows of the shape table's), its radius, the pose,
    # the speculative distance and the scratch rows
    rows, f64 = shapes.types[ShapeTable._fields.index("verts")], numba.types.float64
    polygons = (rows, rows, f64, rows, rows, f64, f64, f64, f64, f64, f64, rows, rows)
    # a leaf's insertion into a dynamic tree (each tree of the broad phase's table has the same type), which the
    # broad stage's deferred insertion calls
    _tree_insert_leaf.compile((tree.types[0], numba.types.int64))
    collide_quadrilaterals.compile(polygons)
    collide_sat.compile(polygons)
    contacts, solver, solve_types = _solve_types(step_types)
    # the bounds stage's reach and awake flags (``_bounds.bounds_stage``), the solve's start-of-step poses
    bodies_ref, shapes_ref = numba.types.CPointer(bodies), numba.types.CPointer(shapes)
    reach, awake = numba.typeof(np.zeros(1)), numba.typeof(np.zeros(1, np.bool_))
    com0, angle0 = SOLVE_RETURNS.types[:2]
    pre_solve_stage.compile((pre_solve, friction_rule, restitution_rule, shapes_ref, awake, contacts))
    continuous_stage.compile((bodies_ref, shapes_ref, awake, reach, com0, angle0, tree, proxy_shape, threads))
    sensor_stage.compile((bodies_ref, shapes_ref, awake, contacts))
    sleep_stage.compile((dt, sleep_enabled, bodies_ref, reach, awake, solver.types[solver.fields.index("pair")],
                         joints))

    # the solve, which the step's compile does not wait for (compiled apart: ``load_solve`` loads it once the step
    # is compiled)
    solve_apart.compile(solve_types)
