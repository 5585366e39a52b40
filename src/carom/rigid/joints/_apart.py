"""The joints' part of the step, compiled apart from it (``carom._jit.apart_njit``): the solve stage calls these
three functions through their addresses, and only for a world with joints.

Why: the joints' code (their colouring and rows, the sweeps of every kind, the reactions) was compiled into the
step, about 9 of the 63 s of CPU time of the step's cold compile, although a world without joints never runs
it. Apart, it is compiled (or loaded from the cache) the first time a world with joints steps
(:func:`load`), and the step of every world, with joints or without, is the same compiled code. The calls are
few: one at the start of the solve (:func:`begin`), one per chunk of joints of a sweep (:func:`chunk`: up to a
few per thread and colour), one at the end (:func:`end`).

The step reads what these functions return by types it declares (``BEGIN_TYPES``, ``JOINT_DATA``): they are
checked against the compiled functions' when they are loaded.
"""
import numba
import numpy as np
from numba import types

from ..._jit import apart_njit, apart_caller, njit
from ..._simd import LANES
from .._layout import BodyTable
from ._common import FRAME_WIDTH, ROW_WIDTH
from ._bundles import PB_WIDTH, solve_point_bundles, store_bundle_reactions
from ._solve import (OVERFLOW, joint_solved, joints_to_solve, pass_mode, prepare_joints, record_lanes, solve_joints,
                     store_reactions)

_I1, _I2, _I3 = types.int64[::1], types.int64[:, ::1], types.int64[:, :, ::1]
_F1, _F2 = types.float64[::1], types.float64[:, ::1]

#: the joints' data of a step's sweeps, as the solve stage passes it on (``_solve.solve_stage``'s ``jdata``):
#: colour starts, bodies, frames, row starts, rows, softness (jsoft), plain point joints per colour, their
#: bundles' starts, table, bodies and written flags
JOINT_DATA = types.Tuple((_I1, _I2, _F2, _I1, _F2, _F1, _I1, _I1, types.float32[:, :, ::1], _I3,
                          types.boolean[:, :, ::1]))
#: what :func:`begin` returns: the solved joints in solve order, the dynamic bodies they hold, then
#: the joints' data of ``JOINT_DATA`` but jsoft
BEGIN_TYPES = types.Tuple((_I1, types.boolean[::1]) + tuple(t for k, t in enumerate(JOINT_DATA.types) if k != 5))


@apart_njit(lambda arg_types: BEGIN_TYPES)
def begin(joints, kind, asleep, com, angle, inv_mass, inv_inertia, local_center, h, threads):
    """The joints solved this step, coloured (``_solve.joints_to_solve``), their rows and bundles
    (``_solve.prepare_joints``, with the records' lane blocks), and the dynamic bodies they hold (which the solver
    then holds: ``held``)."""
    jlist, jstart, pcount = joints_to_solve(joints, kind, asleep)
    jbody, jframe, rstart, jrows, pstart, pb, pbody, pmove = prepare_joints(jlist, jstart, pcount, joints, com, angle,
                                                                           inv_mass, inv_inertia, local_center, kind, h,
                                                                           threads)
    held = joint_solved(np.zeros(kind.shape[0], np.bool_), jlist, joints, kind)
    return jlist, held, jstart, jbody, jframe, rstart, jrows, pcount, pstart, pb, pbody, pmove


@apart_njit(lambda arg_types: types.none)
def chunk(mode, bundle_lo, bundle_hi, lo, hi, jdata, state, fstate, flags, dangle, inv_h):
    """One chunk of a joint sweep (``mode``, ``_solve.solve_joints``): the bundles of plain point joints
    ``bundle_lo`` … ``bundle_hi`` − 1 (``_bundles.solve_point_bundles``), then the joints ``lo`` … ``hi`` − 1 of
    the solve order, one by one or, a lane block at a time, side by side (``solve_joints`` moves the two edges off
    the inside of a block, as the next and the last chunk do: ``_solve.block_edge``).

    ``bundle_lo`` < 0: −``bundle_lo`` whole passes of the sweep (each in its ``_solve.pass_mode``), each colour
    after colour (its bundles, then its other joints), as the threads' chunks of every colour in turn would do
    them, for a solve on one thread: one call where there were one per pass and colour, each handing over some
    20 arrays (a small world's joints, the lander's two legs, were called 34 times a step)."""
    jstart, jbody, jframe, rstart, jrows, jsoft, pcount, pstart, pb, pbody, pmove = jdata
    if bundle_lo < 0:
        for it in range(-bundle_lo):
            m = pass_mode(mode, it)
            # the joints solved one by one, colour after colour, are one run of the solve order until a colour
            # has bundles of point joints (solved before its other joints): one call per run, not per colour
            # (the same joints in the same order)
            lo = np.int64(-1)
            hi = np.int64(0)
            for c in range(OVERFLOW + 1):
                if jstart[c + 1] == jstart[c]:
                    continue
                if pstart[c] < pstart[c + 1]:
                    if lo >= 0:
                        solve_joints(m, lo, jstart[c], jbody, jframe, rstart, jrows, state, fstate, flags, dangle,
                                     jsoft, inv_h)
                    solve_point_bundles(m, pstart[c], pstart[c + 1], pb, pbody, pmove, fstate, jsoft)
                    lo = jstart[c] + pcount[c]
                elif lo < 0:
                    lo = jstart[c]
                hi = jstart[c + 1]
            if lo >= 0:
                solve_joints(m, lo, hi, jbody, jframe, rstart, jrows, state, fstate, flags, dangle, jsoft, inv_h)
        return
    if bundle_lo < bundle_hi:
        solve_point_bundles(mode, bundle_lo, bundle_hi, pb, pbody, pmove, fstate, jsoft)
    solve_joints(mode, lo, hi, jbody, jframe, rstart, jrows, state, fstate, flags, dangle, jsoft, inv_h)


@apart_njit(lambda arg_types: types.none)
def end(jlist, joints, jdata, inv_h, threads):
    """The joints' impulses and reactions back to the joint table (``_solve.store_reactions``,
    ``_bundles.store_bundle_reactions``)."""
    jstart, jbody, jframe, rstart, jrows, jsoft, pcount, pstart, pb, pbody, pmove = jdata
    store_reactions(jlist, joints, jbody, jframe, rstart, jrows, inv_h, threads)
    store_bundle_reactions(jlist, jstart, pcount, pstart, pb, joints.impulse, joints.reaction, inv_h)


#: the compiled calls of the three (``carom._jit.apart_caller``): each takes its arguments as one tuple
call_begin = apart_caller(begin)
call_chunk = apart_caller(chunk)
call_end = apart_caller(end)


@njit
def no_joints():
    """What :func:`begin` returns for a world without joints: nothing to solve."""
    return (np.empty(0, np.int64), np.zeros(0, np.bool_), np.zeros(OVERFLOW + 2, np.int64),
            np.empty((0, 2), np.int64), np.empty((0, FRAME_WIDTH)), np.zeros(1, np.int64), np.empty((0, ROW_WIDTH)),
            np.zeros(OVERFLOW + 1, np.int64), np.zeros(OVERFLOW + 2, np.int64),
            np.empty((0, PB_WIDTH, LANES), np.float32), np.empty((0, 2, LANES), np.int64),
            np.empty((0, 2, LANES), np.bool_))


@njit
def with_held(solved, jlist, held):
    """The bodies the solver holds in single precision: those of solved contacts (``solved``) and the dynamic
    bodies of the solved joints (``held``)."""
    if jlist.shape[0] == 0:
        return solved
    out = solved.copy()
    for b in range(held.shape[0]):
        if held[b]:
            out[b] = True
    return out


#: :func:`load` was called (every world's tables have the same types)
loaded = False


def load(bodies, joints):
    """Compile (or load) the three for the step's tables ``bodies`` (``BodyTable``) and ``joints``
    (``JointTable``), so that the step of a world with joints finds them (``World.step`` calls it at every step of a
    world with joints: the first call loads them, and every call asks for the vector lanes until they are loaded,
    :func:`load_lanes`). Without the JIT, nothing to do."""
    global loaded
    if loaded or numba.config.DISABLE_JIT:
        loaded = True
        load_lanes(wait=False)
        return
    body = numba.typeof(bodies).types
    field = BodyTable._fields.index
    joint_table = numba.typeof(joints)
    f64, i64 = types.float64, types.int64
    begin.load((joint_table,) + tuple(body[field(name)] for name in (
        "kind", "asleep", "com", "angle", "inv_mass", "inv_inertia", "local_center")) + (f64, i64))
    chunk.load((i64, i64, i64, i64, i64, JOINT_DATA, _F2, types.float32[:, ::1], types.uint8[::1], _F1, f64))
    end.load((_I1, joint_table, JOINT_DATA, f64, i64))
    loaded = True
    load_lanes(wait=False)


#: the argument types of ``_solve.record_lanes`` (as ``solve_joints`` calls it)
LANES_TYPES = (types.int64, types.int64, types.int64, _I2, _F2, _I1, _F2, _F2, types.float32[:, ::1], types.uint8[::1],
               _F1, _F1, types.float64)
#: ``_solve.record_lanes`` is loaded in this process (:func:`load_lanes`)
lanes_ready = False


def load_lanes(wait=True):
    """Load the joints' vector lanes (``_solve.record_lanes``): compiled here unless cached; with ``wait=False`` as
    ``ApartDispatcher.load_soon`` (compiled in a helper process, and False until it is loaded: :func:`load` asks
    at every step of a world with joints until then). Returns whether they are loaded; True without the JIT."""
    global lanes_ready
    if lanes_ready or numba.config.DISABLE_JIT:
        return True
    if wait:
        record_lanes.load(LANES_TYPES)
        lanes_ready = True
    else:
        lanes_ready = record_lanes.load_soon(LANES_TYPES)
    return lanes_ready
