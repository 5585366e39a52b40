"""The joints' part of the step: which joints are solved (``joints_to_solve``), their rows (``prepare_joints``:
each kind emits generic rows, ``_common``), the sweeps over them (``solve_joints``: one loop over the rows, by
row type, ``_rows``) and their reactions (``store_reactions``).

The joints are solved before the contacts of each sweep (as Box2D solves a colour's joints before its
contacts). They are coloured as the contacts are (``joints_to_solve``): the joints of one colour touch disjoint
dynamic bodies, so the threads share a colour's joints and the result does not depend on how; the overflow
colour is one chunk, in one thread, in a fixed order: the result is bitwise the same for any thread count.

A colour's plain point joints (a revolute joint with no limit, motor or spring between two dynamic bodies, the
common case) are solved ``LANES`` at a time in vectors (``_bundles``), its other joints here: one by one, but
runs of ``LANES64`` revolute records (a joint with a limit, motor or spring: a ragdoll's) of one colour side by
side in double-precision vectors (``_solve_record_lanes``), from lane blocks laid out column by column
(``lane_blocks``), with the bits of one by one.

The step's joint data is laid out in solve order (colour by colour), for sweeps that stream through it: per
joint its bodies, a frame (masses, anchors, cB − cA: ``_common``) and the start of its rows; the rows of all
joints one after the other; after them, the lane blocks, which hold the frames and records of the joints solved
side by side (``lane_blocks``).

Warm starting: in the first substep a sweep of its own applies each row's accumulated impulse of the last step
through the row's Jacobian now, before any joint or contact is solved. A later substep's warm start is the
body's velocity change over the substep before (``_solver._integrate_velocity``), which holds the joints'
impulses as well as the contacts', since every dynamic body of a solved joint is one the solver holds
(``joint_solved``): so at the start of its biased solve every joint and contact has its warm start applied (one
joint warm started just before its own solve, the others not yet, made a hanging chain stretch 5 times as
much). A contact's Jacobian is fixed for the step; a joint's is not (its anchors turn with the bodies, a
distance joint's axis follows the anchors), and the stale one is not harmless: a pendulum's rope pull,
repeated along where the rope pointed a substep ago, has a component along the motion, and the swing gained
8 % of its energy per period (60 Hz, 4 substeps). So each joint records the velocity change it applied in the
substep (its frame's WARM_DV), and at the start of the next substep's biased solve takes that carried part back
and warm starts afresh with its accumulated impulses and today's Jacobians, as Box2D warm starts its joints in
every substep."""
import numpy as np

import numba
from numba import prange

from ..._jit import (njit, pnjit, inline_njit, llvm_inline_njit, borrowed, apart_njit, apart_caller,
                     apart_loaded)
from ..._simd import (LANES64, splat64, insert, lane, load, store, vfloor, joint_rows64, put_joint_velocities64)
from .._contact_rows import chunk_count
from .._layout import VX, VY, W, DPX, DPY, DC, DS, MOVE_SOLVED, aligned_rows
from ._common import (MA, IA, MB, IB, RAX, RAY, RBX, RBY, DCX, DCY, WARM_DV, FRAME_WIDTH, ROW_WIDTH, MAX_ROWS,
                      G_WIDTH, G_ANG0, G_TA, G_TB, G_CAX, G_CAY, G_CBX, G_CBY, G_TURN, G_AXX, G_AXY, TYPE, SLOT, L0, L1,
                      L2, FX, FY, SB, ROW_POINT, ROW_ANGLE, ROW_WELD, ROW_PRISM, FILTER, DISTANCE, REVOLUTE, PRISMATIC,
                      WHEEL, WELD, MOTOR, MOUSE, ROTARY_LIMIT, ROTARY_SPRING, ANGULAR_MOTOR, RATCHET, GEAR)
from ._rows import solve_row, solve_point
from ._bundles import (carried_back, keep_change, LANES, PB_MA, PB_IA, PB_MB, PB_IB, PB_RAX, PB_RAY, PB_RBX, PB_RBY,
                       PB_DCX, PB_DCY, PB_LX, PB_LY, empty_bundles)
from . import (distance, revolute, prismatic, wheel, weld, motor, mouse, rotary_limit, rotary_spring, angular_motor,
               ratchet, gear, pulley)

DYNAMIC = 2
#: colours 0 … OVERFLOW − 1 are solved in parallel, OVERFLOW in one thread (as the contacts': ``_solver``)
OVERFLOW = 63
#: the modes of a joint sweep: the first substep's warm start, a later substep's biased solve (after replacing the
#: carried warm start, module docstring), relax, the first substep's biased solve
WARM_START, SOLVE, RELAX, SOLVE_FIRST = 0, 1, 2, 3


@inline_njit
def pass_mode(mode, it):
    """The mode of pass ``it`` of a sweep in ``mode`` (``_solve._joint_phase``): the first pass in ``mode``; later
    passes of a relax relax again, those of a biased solve add to the substep's WARM_DV (SOLVE_FIRST)."""
    return mode if it == 0 or mode == RELAX else np.int64(SOLVE_FIRST)



@njit
def joints_to_solve(joints, bkind, asleep):
    """The joints solved this step (active, not a filter, with at least one awake dynamic body), coloured: each
    takes, in joint order, the lowest colour that neither of its dynamic bodies uses yet, those that find none
    below OVERFLOW go to the overflow colour (solved in one thread). Returns (the joints sorted by colour,
    within a colour below OVERFLOW the plain point joints first (``_bundles``), each part in joint order; the
    colour start offsets; the number of plain point joints of each colour)."""
    kind, active, body, param = joints.kind, joints.active, joints.body, joints.param
    J = kind.shape[0]
    NB = bkind.shape[0]
    used = np.zeros(NB, np.uint64)
    picked = np.empty(J, np.int64)
    colour = np.empty(J, np.int64)
    plain = np.empty(J, np.bool_)
    counts = np.zeros(OVERFLOW + 2, np.int64)
    pcount = np.zeros(OVERFLOW + 1, np.int64)
    n = 0
    for j in range(J):
        if not active[j] or kind[j] == FILTER:
            continue
        a = body[j, 0]
        b = body[j, 1]
        dyn_a = bkind[a] == DYNAMIC
        dyn_b = bkind[b] == DYNAMIC
        if not ((dyn_a and not asleep[a]) or (dyn_b and not asleep[b])):
            continue
        busy = (used[a] if dyn_a else np.uint64(0)) | (used[b] if dyn_b else np.uint64(0))
        c = 0
        while c < OVERFLOW and busy & (np.uint64(1) << np.uint64(c)):
            c += 1
        if c < OVERFLOW:
            bit = np.uint64(1) << np.uint64(c)
            if dyn_a:
                used[a] |= bit
            if dyn_b:
                used[b] |= bit
        picked[n] = j
        colour[n] = c
        plain[n] = c < OVERFLOW and dyn_a and dyn_b and kind[j] == REVOLUTE and revolute.is_plain(param, j)
        if plain[n]:
            pcount[c] += 1
        counts[c + 1] += 1
        n += 1
    start = np.zeros(OVERFLOW + 2, np.int64)
    for c in range(OVERFLOW + 1):
        start[c + 1] = start[c] + counts[c + 1]
    fill = start[:OVERFLOW + 1].copy()
    rest = fill + pcount
    out = np.empty(n, np.int64)
    for i in range(n):
        c = colour[i]
        if plain[i]:
            out[fill[c]] = picked[i]
            fill[c] += 1
        else:
            out[rest[c]] = picked[i]
            rest[c] += 1
    return out, start, pcount


@njit
def joint_solved(solved, jlist, joints, bkind):
    """The bodies the solver holds in single precision: those of solved contacts (``solved``) and the dynamic
    bodies of the solved joints."""
    if jlist.shape[0] == 0:
        return solved
    out = solved.copy()
    body = joints.body
    for j in jlist:
        for e in range(2):
            b = body[j, e]
            if bkind[b] == DYNAMIC:
                out[b] = True
    return out




#: how ``prepare_joints``' second pass (``_prepare_run``) fills a joint of the solve order: its lane of its colour's
#: bundles (plain point joints), its record in a lane block, its record in its row, or nothing (done in the first)
PREP_BUNDLE, PREP_BLOCK, PREP_ROW, PREP_DONE = 0, 1, 2, 3


@njit
def prepare_joints(jlist, jstart, pcount, joints, com, angle, inv_mass, inv_inertia, local_center, bkind, h, threads):
    """The step's data of the joints in ``jlist`` (module docstring): (bodies, frames, row starts, rows) of the
    joints solved one by one, and the bundles of the plain point joints (the first ``pcount[c]`` of each colour
    c: ``_bundles.empty_bundles``, whose lanes are filled here; such a joint has no rows and no frame). The
    frame holds the anchors about the centres of mass rA = R(θA)·(anchor − local centre), the inverse masses (0
    for a body that is not dynamic), cB − cA; each kind emits its rows (``<kind>.emit``) with what it needs of
    the joint (``_common``'s G_*). When the vector lanes are loaded (``record_lanes``), each colour's runs of
    LANES64 revolute records (below the overflow colour) also go to the lane blocks (``lane_blocks``), as they
    are written: asked once, here, at the step's start, so lanes loaded in the middle of a step wait for the next.
    (``_lanes_loaded`` looks only at the types of the tuple it is given: ``lanes_probe``.)

    Two passes. The first, in order, decides where each joint goes (its bundle lane, lane block or row: the
    blocks and row starts depend on the joints before it) and writes the rows of the kinds emitted in general
    (``_emit``). The second fills the frames, bundle lanes and revolute records, each joint's own places, in
    ``threads`` parts at once (``_prepare_parts``). Why: Box2D's rain prepares 10,000 ragdoll joints a step, a
    tenth of its solve, and in one thread the other waited for it."""
    kind, body, local, param, imp = joints.kind, joints.body, joints.local, joints.param, joints.impulse
    n = jlist.shape[0]
    NB = com.shape[0]
    jbody = np.empty((n, 2), np.int64)
    # (and below the joints' frames and rows, room for the vector lanes' blocks: ``lane_blocks``)
    frame = aligned_rows(n + lane_rows(n), FRAME_WIDTH)
    rstart = np.empty(n + 1, np.int64)
    pstart, pb, pbody, pmove = empty_bundles(pcount, NB)
    most = 0
    for c in range(OVERFLOW + 1):
        for i in range(jstart[c] + pcount[c], jstart[c + 1]):
            most += MAX_ROWS[kind[jlist[i]]]
    rows = aligned_rows(most + lane_rows(n), ROW_WIDTH)
    g = np.empty(G_WIDTH)
    work = np.empty(n, np.int64)
    where = np.empty(n, np.int64)
    # borrowed views (``carom._jit.borrowed``) for the emitters: calls that take no references on the arrays
    # (four atomic increments and decrements per call were most of the preparation's time)
    eparam, eimp, erows, eg = borrowed((param, imp, rows, g))
    # (np.int64, not 0: the constant 0 is typed as its value first, and _emit and every kind's emitter were
    # compiled once more for it, 3 s of the cold compile)
    r = np.int64(0)
    # the lane blocks (``lane_blocks``), when the lanes are loaded: each colour's joints solved alone are walked
    # from the colour's first (as a sweep walks them), and LANES64 records in a row make the next block, which
    # the walk then steps over; a block's frames and records are written there, not in the rows
    lanes = _lanes_loaded(lanes_probe(jbody, frame, rstart, rows))
    # (the frame table as blocks of one lane, for ``_frame_lane``)
    frame_rows = borrowed(frame.reshape((frame.shape[0], FRAME_WIDTH, 1)))
    blocks = np.int64(0)
    head = np.int64(-1)
    for c in range(OVERFLOW + 1):
        for i in range(jstart[c], jstart[c + 1]):
            j = jlist[i]
            # (the joint's row unsigned: no check for negative indices, ``carom._jit.index_range``)
            ju = np.uint64(j)
            jbody[i, 0] = body[ju, 0]
            jbody[i, 1] = body[ju, 1]
            if (lanes and c < OVERFLOW and i - jstart[c] >= pcount[c] and (head < 0 or i >= head + LANES64)
                    and _records_ahead(i, jstart[c + 1], jlist, kind, param)):
                head = i
                blocks += 1
            rstart[i] = r
            k = i - jstart[c]
            if k < pcount[c]:
                # a plain point joint (both bodies dynamic): its lane of the colour's bundles
                work[i] = PREP_BUNDLE
                where[i] = (pstart[c] + k // LANES) * LANES + k % LANES
                continue
            if kind[ju] == REVOLUTE and param[ju, revolute.GENERIC_ROWS] == 0.0:
                # (the common kind's record, written in the second pass: through ``_emit``'s dispatch, a call per
                # joint that hands over four arrays, it took a third of the preparation of a ragdoll scene)
                if head >= 0 and i < head + LANES64:
                    # the record in its block (column q); its row keeps only the type and the block mark
                    # (R_BUNDLE: u + 1 on a block's first record, −1 on the others)
                    work[i] = PREP_BLOCK
                    where[i] = (blocks - 1) * LANES64 + (i - head)
                    rows[r, TYPE] = revolute.ROW_REVOLUTE
                    rows[r, revolute.R_BUNDLE] = np.float64(blocks) if i == head else -1.0
                else:
                    work[i] = PREP_ROW
                    where[i] = r
                r += 1          # (``revolute.emit_record`` writes one row)
                continue
            work[i] = PREP_DONE
            ma, ia, mb, ib, rax, ray, rbx, rby, dcx, dcy, ca, sa = _joint_frame(
                j, jbody[i, 0], jbody[i, 1], local, com, angle, inv_mass, inv_inertia, local_center, bkind)
            _frame_lane(frame_rows, i, 0, ma, ia, mb, ib, rax, ray, rbx, rby, dcx, dcy)
            _joint_g(eg, j, jbody[i, 0], jbody[i, 1], param, local, com, angle, ia, ib, ca, sa)
            r = _emit(kind[ju], j, eparam, eimp, erows, r, h, eg)
    rstart[n] = r
    lf, lr = lane_blocks(jbody, frame, rstart, rows)
    _prepare_parts(n, threads, work, where, jlist, jbody, param, imp, local, com, angle, inv_mass, inv_inertia,
                   local_center, bkind, h, pb, pbody, pmove, lf, lr, frame_rows, rows)
    return jbody, frame, rstart, rows, pstart, pb, pbody, pmove


@inline_njit
def _joint_frame(j, a, b, local, com, angle, inv_mass, inv_inertia, local_center, bkind):
    """Joint j's frame on bodies a and b (``prepare_joints``): the inverse masses (0 for a body that is not
    dynamic), the anchors about the centres of mass, cB − cA; and A's cos and sin."""
    ju, au, bu = np.uint64(j), np.uint64(a), np.uint64(b)
    ca, sa = np.cos(angle[au]), np.sin(angle[au])
    cb, sb = np.cos(angle[bu]), np.sin(angle[bu])
    lax = local[ju, 0] - local_center[au, 0]
    lay = local[ju, 1] - local_center[au, 1]
    lbx = local[ju, 2] - local_center[bu, 0]
    lby = local[ju, 3] - local_center[bu, 1]
    rax, ray = ca * lax - sa * lay, sa * lax + ca * lay
    rbx, rby = cb * lbx - sb * lby, sb * lbx + cb * lby
    dcx, dcy = com[bu, 0] - com[au, 0], com[bu, 1] - com[au, 1]
    ma = inv_mass[au] if bkind[au] == DYNAMIC else 0.0
    ia = inv_inertia[au] if bkind[au] == DYNAMIC else 0.0
    mb = inv_mass[bu] if bkind[bu] == DYNAMIC else 0.0
    ib = inv_inertia[bu] if bkind[bu] == DYNAMIC else 0.0
    return ma, ia, mb, ib, rax, ray, rbx, rby, dcx, dcy, ca, sa


@inline_njit
def _joint_g(g, j, a, b, param, local, com, angle, ia, ib, ca, sa):
    """What a kind's emitter reads of joint j on bodies a and b (``_common``'s G_*)."""
    ju, au, bu = np.uint64(j), np.uint64(a), np.uint64(b)
    g[G_ANG0] = angle[bu] - angle[au] - param[ju, 0]
    g[G_TA] = angle[au]
    g[G_TB] = angle[bu]
    g[G_CAX] = com[au, 0]
    g[G_CAY] = com[au, 1]
    g[G_CBX] = com[bu, 0]
    g[G_CBY] = com[bu, 1]
    g[G_TURN] = ia + ib
    g[G_AXX] = ca * local[ju, 4] - sa * local[ju, 5]
    g[G_AXY] = sa * local[ju, 4] + ca * local[ju, 5]


@pnjit
def _prepare_parts(n, threads, work, where, jlist, jbody, param, imp, local, com, angle, inv_mass, inv_inertia,
                   local_center, bkind, h, pb, pbody, pmove, lf, lr, frame_rows, rows):
    """``prepare_joints``' second pass over the n joints, in parallel chunks (``chunk_count``); each joint writes
    only its own bundle lane, block lane or row, so any split gives the same tables."""
    chunks = chunk_count(n, threads)
    if chunks == 1:
        _prepare_run(np.int64(0), n, work, where, jlist, jbody, param, imp, local, com, angle, inv_mass, inv_inertia,
                     local_center, bkind, h, pb, pbody, pmove, lf, lr, frame_rows, rows)
        return
    for ch in prange(chunks):
        _prepare_run(ch * n // chunks, (ch + 1) * n // chunks, work, where, jlist, jbody, param, imp, local, com,
                     angle, inv_mass, inv_inertia, local_center, bkind, h, pb, pbody, pmove, lf, lr, frame_rows, rows)


@njit
def _prepare_run(lo, hi, work, where, jlist, jbody, param, imp, local, com, angle, inv_mass, inv_inertia,
                 local_center, bkind, h, pb, pbody, pmove, lf, lr, frame_rows, rows):
    """Joints lo … hi − 1 of ``prepare_joints``' second pass: each one's frame and bundle lane or record where
    the first pass put it (``work``, ``where``)."""
    g = np.empty(G_WIDTH)
    eparam, eimp, erows, eg = borrowed((param, imp, rows, g))
    for i in range(lo, hi):
        w = work[i]
        if w == PREP_DONE:
            continue
        j = jlist[i]
        ju = np.uint64(j)
        a = jbody[i, 0]
        b = jbody[i, 1]
        ma, ia, mb, ib, rax, ray, rbx, rby, dcx, dcy, ca, sa = _joint_frame(
            j, a, b, local, com, angle, inv_mass, inv_inertia, local_center, bkind)
        if w == PREP_BUNDLE:
            au, bu = np.uint64(a), np.uint64(b)
            u = where[i] // LANES
            q = where[i] % LANES
            _frame_lane(pb, u, q, inv_mass[au], inv_inertia[au], inv_mass[bu], inv_inertia[bu], rax, ray, rbx, rby,
                        dcx, dcy)
            pb[u, PB_LX, q] = imp[ju, revolute.PX]
            pb[u, PB_LY, q] = imp[ju, revolute.PY]
            pbody[u, 0, q] = a
            pbody[u, 1, q] = b
            pmove[u, 0, q] = True
            pmove[u, 1, q] = True
            continue
        _joint_g(eg, j, a, b, param, local, com, angle, ia, ib, ca, sa)
        if w == PREP_BLOCK:
            u = where[i] // LANES64
            q = where[i] % LANES64
            _frame_lane(lf, u, q, ma, ia, mb, ib, rax, ray, rbx, rby, dcx, dcy)
            revolute.emit_record(j, eparam, eimp, lr[u].T, q, h, eg)
        else:
            _frame_lane(frame_rows, i, 0, ma, ia, mb, ib, rax, ray, rbx, rby, dcx, dcy)
            revolute.emit_record(j, eparam, eimp, erows, where[i], h, eg)


@njit
def _emit(k, j, param, imp, rows, r, h, g):
    if k == REVOLUTE:
        if param[j, revolute.GENERIC_ROWS] != 0.0:
            return revolute.emit(j, param, imp, rows, r, h, g)
        return revolute.emit_record(j, param, imp, rows, r, h, g)
    if k == DISTANCE:
        return distance.emit(j, param, imp, rows, r, h, g)
    if k == PRISMATIC:
        return prismatic.emit(j, param, imp, rows, r, h, g)
    if k == WHEEL:
        return wheel.emit(j, param, imp, rows, r, h, g)
    if k == WELD:
        return weld.emit(j, param, imp, rows, r, h, g)
    if k == MOTOR:
        return motor.emit(j, param, imp, rows, r, h, g)
    if k == MOUSE:
        return mouse.emit(j, param, imp, rows, r, h, g)
    if k == ROTARY_LIMIT:
        return rotary_limit.emit(j, param, imp, rows, r, h, g)
    if k == ROTARY_SPRING:
        return rotary_spring.emit(j, param, imp, rows, r, h, g)
    if k == ANGULAR_MOTOR:
        return angular_motor.emit(j, param, imp, rows, r, h, g)
    if k == RATCHET:
        return ratchet.emit(j, param, imp, rows, r, h, g)
    if k == GEAR:
        return gear.emit(j, param, imp, rows, r, h, g)
    return pulley.emit(j, param, imp, rows, r, h, g)


@njit
def solve_joints(mode, lo, hi, jbody, frame, rstart, rows, state, fstate, flags, dangle, jsoft, inv_h):
    """One sweep (``mode``: WARM_START, SOLVE_FIRST, SOLVE or RELAX) over the joints lo … hi − 1 of the solve
    order: each joint's bodies' velocities are read, its geometry now computed (anchors turned by the bodies'
    rotations so far, d), its rows solved one after the other (``_rows.solve_row``) and the velocities written
    back; the change is kept in WARM_DV (module docstring: SOLVE first takes the last substep's back and warm
    starts afresh). Runs of revolute records that touch no body another of them writes go ``LANES64`` at a
    time (``_solve_record_lanes``; the lane blocks ``prepare_joints`` made for the step), with the same results."""
    # borrowed views (``carom._jit.borrowed``): the calls per joint below then take no references on the arrays
    jbody, frame, rstart, rows, state, fstate = borrowed((jbody, frame, rstart, rows, state, fstate))
    flags, dangle, jsoft = borrowed((flags, dangle, jsoft))
    # (a chunk starts and ends between lane blocks, ``block_edge``: the threads' chunks of a colour, cut anywhere,
    # move their edges alike, so each block is solved whole, and in its block, in one of them)
    hi = block_edge(hi, jbody, rstart, rows)
    i = block_edge(lo, jbody, rstart, rows)
    while i < hi:
        if i + LANES64 <= hi and _block_at(i, rstart, rows):
            # the run of lane blocks that starts here, in one call
            k = i + LANES64
            while k + LANES64 <= hi and _block_at(k, rstart, rows):
                k += LANES64
            _lanes((mode, i, k, jbody, frame, rstart, rows, state, fstate, flags, dangle, jsoft, inv_h))
            i = k
        else:
            _solve_joint(mode, i, jbody, frame, rstart, rows, state, fstate, flags, dangle, jsoft, inv_h)
            i += 1


@llvm_inline_njit
def _solve_joint(mode, i, jbody, frame, rstart, rows, state, fstate, flags, dangle, jsoft, inv_h):
    """Joint i of ``solve_joints``' sweep, alone."""
    carried = mode == SOLVE
    use_bias = mode == SOLVE or mode == SOLVE_FIRST
    # the passes over a joint's rows: warm start only, warm start then solve, or solve only
    first = 0 if mode == WARM_START or carried else 1
    last = 1 if mode == WARM_START else 2
    a = jbody[i, 0]
    b = jbody[i, 1]
    held_a = flags[a] & MOVE_SOLVED
    held_b = flags[b] & MOVE_SOLVED
    if held_a:
        vax, vay, vaw = np.float64(fstate[a, VX]), np.float64(fstate[a, VY]), np.float64(fstate[a, W])
    else:
        vax, vay, vaw = state[a, VX], state[a, VY], state[a, W]
    if held_b:
        vbx, vby, vbw = np.float64(fstate[b, VX]), np.float64(fstate[b, VY]), np.float64(fstate[b, W])
    else:
        vbx, vby, vbw = state[b, VX], state[b, VY], state[b, W]
    if carried:
        # a later substep: the carried warm start taken back (module docstring)
        vax -= frame[i, WARM_DV]
        vay -= frame[i, WARM_DV + 1]
        vaw -= frame[i, WARM_DV + 2]
        vbx -= frame[i, WARM_DV + 3]
        vby -= frame[i, WARM_DV + 4]
        vbw -= frame[i, WARM_DV + 5]
    vax0, vay0, vaw0, vbx0, vby0, vbw0 = vax, vay, vaw, vbx, vby, vbw
    ma, ia, mb, ib = frame[i, MA], frame[i, IA], frame[i, MB], frame[i, IB]
    qac, qas = np.float64(fstate[a, DC]), np.float64(fstate[a, DS])
    qbc, qbs = np.float64(fstate[b, DC]), np.float64(fstate[b, DS])
    rax = qac * frame[i, RAX] - qas * frame[i, RAY]
    ray = qas * frame[i, RAX] + qac * frame[i, RAY]
    rbx = qbc * frame[i, RBX] - qbs * frame[i, RBY]
    rby = qbs * frame[i, RBX] + qbc * frame[i, RBY]
    dx = frame[i, DCX] + (np.float64(fstate[b, DPX]) - np.float64(fstate[a, DPX])) + rbx - rax
    dy = frame[i, DCY] + (np.float64(fstate[b, DPY]) - np.float64(fstate[a, DPY])) + rby - ray
    r0 = rstart[i]
    record = rstart[i + 1] > r0 and rows[r0, TYPE] == revolute.ROW_REVOLUTE
    if record:
        da, db = dangle[a], dangle[b]
    else:
        da = db = 0.0
    for p in range(first, last):
        warm = p == 0
        if record:
            # a revolute joint's one row (``revolute.solve_record``)
            vax, vay, vaw, vbx, vby, vbw = revolute.solve_record(rows, r0, warm, use_bias, jsoft, inv_h, vax, vay,
                                                                 vaw, vbx, vby, vbw, ma, ia, mb, ib, rax, ray, rbx,
                                                                 rby, dx, dy, da, db)
            continue
        for r in range(rstart[i], rstart[i + 1]):
            if rows[r, TYPE] == ROW_POINT:
                vax, vay, vaw, vbx, vby, vbw = solve_point(rows, r, warm, use_bias, jsoft, vax, vay, vaw, vbx, vby,
                                                           vbw, ma, ia, mb, ib, rax, ray, rbx, rby, dx, dy)
            else:
                vax, vay, vaw, vbx, vby, vbw = solve_row(rows, r, warm, use_bias, jsoft, inv_h, vax, vay, vaw,
                                                         vbx, vby, vbw, ma, ia, mb, ib, rax, ray, rbx, rby, dx,
                                                         dy, qac, qas, a, b, dangle, fstate)
    if mode == RELAX or mode == SOLVE_FIRST:
        frame[i, WARM_DV] += vax - vax0
        frame[i, WARM_DV + 1] += vay - vay0
        frame[i, WARM_DV + 2] += vaw - vaw0
        frame[i, WARM_DV + 3] += vbx - vbx0
        frame[i, WARM_DV + 4] += vby - vby0
        frame[i, WARM_DV + 5] += vbw - vbw0
    else:
        frame[i, WARM_DV] = vax - vax0
        frame[i, WARM_DV + 1] = vay - vay0
        frame[i, WARM_DV + 2] = vaw - vaw0
        frame[i, WARM_DV + 3] = vbx - vbx0
        frame[i, WARM_DV + 4] = vby - vby0
        frame[i, WARM_DV + 5] = vbw - vbw0
    # only the bodies the solver holds are written: a static or kinematic body is only read
    if held_a and ma + ia > 0.0:
        fstate[a, VX] = vax
        fstate[a, VY] = vay
        fstate[a, W] = vaw
    if held_b and mb + ib > 0.0:
        fstate[b, VX] = vbx
        fstate[b, VY] = vby
        fstate[b, W] = vbw



@llvm_inline_njit
def _is_record(i, rstart, rows):
    """Whether joint i of the solve order is a revolute record (one row: ``revolute.emit_record``)."""
    return rstart[i + 1] == rstart[i] + 1 and rows[rstart[i], TYPE] == revolute.ROW_REVOLUTE


@llvm_inline_njit
def _block_at(i, rstart, rows):
    """Whether joint i of the solve order is the first of a lane block (``prepare_joints``)."""
    return _is_record(i, rstart, rows) and rows[rstart[i], revolute.R_BUNDLE] > 0.0


@llvm_inline_njit
def lane_rows(n):
    """The rows below n joints' frames (and below their rows) that hold the lane blocks (``lane_blocks``): room
    for n // LANES64 blocks of LANES64 rows, as many as n joints can fill."""
    return (n // LANES64) * LANES64


@inline_njit
def lane_blocks(jbody, frame, rstart, rows):
    """The lane blocks of a step's joints (``prepare_joints``) as two (blocks, columns, LANES64) views: block u's
    column c, lane q is column c of the frame (of the record) of joint q of the block. They are the last
    ``lane_rows(n)`` rows of ``frame`` (below the n joints' frames) and of ``rows`` (below room for the joints'
    rows), which ``prepare_joints`` makes, so they travel with the step's joint data and need no arrays of their
    own.

    Why blocks: the lanes read each of a block's columns as one vector, where they gathered the LANES64 rows and
    transposed them in registers at every sweep (seventeen a step): the transposes and the registers they
    spilled were two fifths of a ragdoll scene's joint solve. A sweep's chunk starts and ends between blocks
    (``block_edge``), so every joint of a block is always solved in its block, from the block, and
    ``store_reactions`` reads the records' impulses from the blocks."""
    n = jbody.shape[0]
    m = n // LANES64
    return frame[n:n + m * LANES64].reshape((m, FRAME_WIDTH, LANES64)), _record_blocks(jbody, rstart, rows)


@llvm_inline_njit
def _records_ahead(i, end, jlist, kind, param):
    """Whether joints i … i + LANES64 − 1 of the solve order are all before ``end`` (their colour's end) and
    all revolute records (``prepare_joints`` writes a record for a revolute joint without GENERIC_ROWS)."""
    if i + LANES64 > end:
        return False
    for q in range(LANES64):
        j = jlist[i + q]
        if kind[j] != REVOLUTE or param[j, revolute.GENERIC_ROWS] != 0.0:
            return False
    return True


@llvm_inline_njit
def _frame_lane(dst, u, q, ma, ia, mb, ib, rax, ray, rbx, rby, dcx, dcy):
    """A joint's frame (``prepare_joints``) written to lane q of block u of ``dst``: the lane blocks' frames, the
    frame table seen as blocks of one lane, or the plain point joints' bundles, whose first fields are a frame's
    (``_bundles.PB_MA`` …)."""
    dst[u, MA, q] = ma
    dst[u, IA, q] = ia
    dst[u, MB, q] = mb
    dst[u, IB, q] = ib
    dst[u, RAX, q] = rax
    dst[u, RAY, q] = ray
    dst[u, RBX, q] = rbx
    dst[u, RBY, q] = rby
    dst[u, DCX, q] = dcx
    dst[u, DCY, q] = dcy


assert (PB_MA, PB_IA, PB_MB, PB_IB, PB_RAX, PB_RAY, PB_RBX, PB_RBY, PB_DCX, PB_DCY) == (MA, IA, MB, IB, RAX, RAY, RBX,
                                                                                          RBY, DCX, DCY)


@inline_njit
def _record_blocks(jbody, rstart, rows):
    """The records' half of ``lane_blocks``: the last ``lane_rows(n)`` rows of ``rows``."""
    m = jbody.shape[0] // LANES64
    r = rows.shape[0] - m * LANES64
    return rows[r:r + m * LANES64].reshape((m, ROW_WIDTH, LANES64))


@njit
def block_edge(x, jbody, rstart, rows):
    """The first joint at or after x of the solve order that is not inside a lane block (a chunk of a sweep
    that would start or end at x starts or ends there instead: both chunks move the same way)."""
    n = jbody.shape[0]
    while x < n and _is_record(x, rstart, rows) and rows[rstart[x], revolute.R_BUNDLE] < 0.0:
        x += 1
    return x


@llvm_inline_njit
def _velocity_lanes(i, side, jbody, state, held, rows):
    """The velocities (vx, vy, w) of the lanes' bodies on ``side`` (0: A, 1: B) of joints i …, as ``solve_joints``
    reads them: a body the solver holds (bit q of ``held``) from its single-precision row (``rows``, as
    ``joint_rows64`` gives them), another from the world's state."""
    vx, vy, w = rows[VX], rows[VY], rows[W]
    if held == _ALL_LANES:
        return vx, vy, w
    for q in range(LANES64):
        if not held >> q & 1:
            b = jbody[i + q, side]
            vx = insert(vx, q, state[b, VX])
            vy = insert(vy, q, state[b, VY])
            w = insert(w, q, state[b, W])
    return vx, vy, w


#: the bits of all LANES64 lanes (``_held_lanes``)
_ALL_LANES = (1 << LANES64) - 1


@llvm_inline_njit
def _held_lanes(i, side, jbody, flags):
    """The lanes q (bit q) of joints i … whose body on ``side`` the solver holds (``MOVE_SOLVED``)."""
    bits = 0
    for q in range(LANES64):
        if flags[jbody[i + q, side]] & MOVE_SOLVED:
            bits |= 1 << q
    return bits


@llvm_inline_njit
def _lanes_with_mass(m, inv_i):
    """The lanes q (bit q) where m + inv_i > 0 (a body with mass or inertia: one the joint moves)."""
    bits = 0
    for q in range(LANES64):
        if lane(m, q) + lane(inv_i, q) > 0.0:
            bits |= 1 << q
    return bits


@llvm_inline_njit
def _has_row(feat, bit):
    """The lanes whose record has the row ``bit`` (``revolute.SPRING_ON`` …), from the records' FEATURES column (the
    sum of their bits, a whole number below 16 held as a double: the test is exact)."""
    # bit b of f: floor(f / b) is odd, i.e. f mod 2b ≥ b, computed as f − 2b·floor(f / 2b) in whole numbers
    return feat - 2.0 * bit * vfloor(feat * (0.5 / bit)) >= bit


@llvm_inline_njit
def _solve_record_lanes(mode, i, u, jbody, lf, lr, state, fstate, flags, dangle, jsoft, inv_h):
    """Joints i … i + LANES64 − 1 of ``solve_joints``' sweep, the lane block u (``prepare_joints``: revolute records
    that touch no body another of them writes), side by side in double-precision vectors
    (``revolute.solve_record_lanes``): each lane does what ``solve_joints`` does for its joint alone, operation for
    operation. A column of the block's frames (``lf``) or records (``lr``) is one vector, read where it is used;
    the changing ones (the impulses, WARM_DV) are written back."""
    carried = mode == SOLVE
    use_bias = mode == SOLVE or mode == SOLVE_FIRST
    first = 0 if mode == WARM_START or carried else 1
    last = 1 if mode == WARM_START else 2
    side_a, side_b = np.int64(0), np.int64(1)
    # the bodies' solver rows, each read whole (``joint_rows64``); the velocities of a body the solver does not
    # hold from the world's state (``_velocity_lanes``: as ``solve_joints`` reads them)
    sa = joint_rows64(fstate, jbody, i, side_a)
    sb = joint_rows64(fstate, jbody, i, side_b)
    held_a, held_b = _held_lanes(i, side_a, jbody, flags), _held_lanes(i, side_b, jbody, flags)
    vax, vay, vaw = _velocity_lanes(i, side_a, jbody, state, held_a, sa)
    vbx, vby, vbw = _velocity_lanes(i, side_b, jbody, state, held_b, sb)
    if carried:
        vax, vay, vaw, vbx, vby, vbw = carried_back(lf, u, WARM_DV, vax, vay, vaw, vbx, vby, vbw)
    vax0, vay0, vaw0, vbx0, vby0, vbw0 = vax, vay, vaw, vbx, vby, vbw
    ma, ia, mb, ib = load(lf, u, MA), load(lf, u, IA), load(lf, u, MB), load(lf, u, IB)
    qac, qas = sa[DC], sa[DS]
    qbc, qbs = sb[DC], sb[DS]
    fax, fay, fbx, fby = load(lf, u, RAX), load(lf, u, RAY), load(lf, u, RBX), load(lf, u, RBY)
    rax = qac * fax - qas * fay
    ray = qas * fax + qac * fay
    rbx = qbc * fbx - qbs * fby
    rby = qbs * fbx + qbc * fby
    dx = load(lf, u, DCX) + (sb[DPX] - sa[DPX]) + rbx - rax
    dy = load(lf, u, DCY) + (sb[DPY] - sa[DPY]) + rby - ray
    da = db = splat64(0.0)
    for q in range(LANES64):
        da = insert(da, q, dangle[jbody[i + q, 0]])
        db = insert(db, q, dangle[jbody[i + q, 1]])
    feat = load(lr, u, revolute.R_FEATURES)
    spring = _has_row(feat, revolute.SPRING_ON)
    motor = _has_row(feat, revolute.MOTOR_ON)
    lower = _has_row(feat, revolute.LOWER_ON)
    upper = _has_row(feat, revolute.UPPER_ON)
    sl, ml, ll, ul = (load(lr, u, revolute.R_SL), load(lr, u, revolute.R_ML), load(lr, u, revolute.R_LL),
                      load(lr, u, revolute.R_UL))
    lx, ly, scs0 = load(lr, u, revolute.R_PX), load(lr, u, revolute.R_PY), load(lr, u, revolute.R_SCS0)
    sc0, sbeta, sms, sisc, salpha = (load(lr, u, revolute.R_SC0), load(lr, u, revolute.R_SBETA),
                                     load(lr, u, revolute.R_SMS), load(lr, u, revolute.R_SISC),
                                     load(lr, u, revolute.R_SALPHA))
    mlo, mhi, mc0, lc0, uc0 = (load(lr, u, revolute.R_MLO), load(lr, u, revolute.R_MHI), load(lr, u, revolute.R_MC0),
                               load(lr, u, revolute.R_LC0), load(lr, u, revolute.R_UC0))
    for p in range(first, last):
        sl, ml, ll, ul, lx, ly, scs0, vax, vay, vaw, vbx, vby, vbw = revolute.solve_record_lanes(
            p == 0, use_bias, jsoft, inv_h, spring, motor, lower, upper, sl, sc0, sbeta, sms, sisc, salpha, scs0, ml,
            mlo, mhi, mc0, ll, lc0, ul, uc0, lx, ly, vax, vay, vaw, vbx, vby, vbw, ma, ia, mb, ib, rax, ray, rbx, rby,
            dx, dy, da, db)
    # the records' impulses and the frames' velocity changes back
    store(lr, u, revolute.R_SL, sl)
    store(lr, u, revolute.R_ML, ml)
    store(lr, u, revolute.R_LL, ll)
    store(lr, u, revolute.R_UL, ul)
    store(lr, u, revolute.R_PX, lx)
    store(lr, u, revolute.R_PY, ly)
    store(lr, u, revolute.R_SCS0, scs0)
    # (a + b is b + a, bitwise: the scalar path adds the change to the kept one)
    keep_change(lf, u, WARM_DV, mode == RELAX or mode == SOLVE_FIRST, vax - vax0, vay - vay0, vaw - vaw0,
                vbx - vbx0, vby - vby0, vbw - vbw0)
    # only the bodies the solver holds are written: a static or kinematic body is only read
    put_joint_velocities64(fstate, jbody, i, side_a, vax, vay, vaw, held_a & _lanes_with_mass(ma, ia))
    put_joint_velocities64(fstate, jbody, i, side_b, vbx, vby, vbw, held_b & _lanes_with_mass(mb, ib))


@apart_njit(lambda arg_types: numba.types.none)
def record_lanes(mode, lo, hi, jbody, frame, rstart, rows, state, fstate, flags, dangle, jsoft, inv_h):
    """``_solve_record_lanes`` for the lane blocks of joints lo … hi − 1 (``lane_blocks``), compiled apart
    (``carom._jit.apart_njit``), as ``solve_joints`` calls it: one call per run of blocks, not per block (a call
    hands over some 80 words).

    Why: the vector code is a quarter of the joints' cold compile (about 4 s), and the joints solved one by one
    give the same results, only slower. So the first step of a world with joints does not wait for it: it is
    compiled in a helper process meanwhile (``_apart.load_lanes``), and the steps make lane blocks once it is
    loaded (``_apart.begin``)."""
    # (borrowed views: the call below would otherwise take and drop a reference on each array, ten atomic
    # operations per four joints)
    jbody, frame, rstart, rows, state, fstate = borrowed((jbody, frame, rstart, rows, state, fstate))
    flags, dangle, jsoft = borrowed((flags, dangle, jsoft))
    lf, lr = borrowed(lane_blocks(jbody, frame, rstart, rows))
    for i in range(lo, hi, LANES64):
        u = np.int64(rows[rstart[i], revolute.R_BUNDLE]) - 1
        _solve_record_lanes(mode, i, u, jbody, lf, lr, state, fstate, flags, dangle, jsoft, inv_h)


_lanes = apart_caller(record_lanes)
_lanes_loaded = apart_loaded(record_lanes)


@njit
def lanes_probe(jbody, frame, rstart, rows):
    """A tuple of the types ``solve_joints`` hands ``record_lanes`` (``_apart.LANES_TYPES``: the step's joint data,
    then the solver's tables), for ``_lanes_loaded``, which reads only the types of what it is given."""
    return (np.int64(0), np.int64(0), np.int64(0), jbody, frame, rstart, rows, np.empty((0, 8)),
            np.empty((0, 8), np.float32), np.empty(0, np.uint8), np.empty(0), np.empty(0), 0.0)


@njit
def store_reactions(jlist, joints, jbody, frame, rstart, rows, inv_h, threads):
    """Each solved joint's accumulated impulses back to the joint table (its warm start next step), and its
    reaction of the step: the force (on body B, at its anchor) and the torque its rows' impulses stand for,
    λ/h (the impulse of the last substep over its length): a row's impulse times its linear Jacobian of B for
    the force (a point's, a weld block's: the impulse itself), an angle row's times its factor of B for the
    torque; zero for joints not solved (a sleeping pair, a disabled joint). The records of a lane block are read
    from the block (``lane_blocks``), where the sweeps left them. In ``threads`` parts at once
    (``_store_parts``): each joint writes only its own rows of the table."""
    imp, reaction = joints.impulse, joints.reaction
    for j in range(reaction.shape[0]):
        reaction[j, 0] = 0.0
        reaction[j, 1] = 0.0
        reaction[j, 2] = 0.0
    _store_parts(jlist.shape[0], threads, jlist, imp, reaction, jbody, rstart, rows, inv_h)


@pnjit
def _store_parts(n, threads, jlist, imp, reaction, jbody, rstart, rows, inv_h):
    """``store_reactions`` of the n solved joints in parallel chunks (``chunk_count``)."""
    chunks = chunk_count(n, threads)
    if chunks == 1:
        _store_run(np.int64(0), n, jlist, imp, reaction, jbody, rstart, rows, inv_h)
        return
    for ch in prange(chunks):
        _store_run(ch * n // chunks, (ch + 1) * n // chunks, jlist, imp, reaction, jbody, rstart, rows, inv_h)


@njit
def _store_run(lo, hi, jlist, imp, reaction, jbody, rstart, rows, inv_h):
    """Joints lo … hi − 1 of ``store_reactions``."""
    # (borrowed views: each record's view below then takes no reference on the array)
    lr = borrowed(_record_blocks(jbody, rstart, rows))
    rows = borrowed(rows)
    # when the first joint's record is one of a lane block's later ones (mark −1), its block and the block's first
    # joint are those of the last first record (mark u + 1) before it
    block = np.int64(-1)
    first = np.int64(0)
    i = lo
    while i > 0 and _record_mark(i, rstart, rows) < 0.0:
        i -= 1
    if i < lo and _record_mark(i, rstart, rows) > 0.0:
        block = np.int64(_record_mark(i, rstart, rows)) - 1
        first = i
    for i in range(lo, hi):
        j = jlist[i]
        if rstart[i + 1] > rstart[i] and rows[rstart[i], TYPE] == revolute.ROW_REVOLUTE:
            mark = rows[rstart[i], revolute.R_BUNDLE]
            if mark > 0.0:
                block = np.int64(mark) - 1
                first = i
            if mark != 0.0:
                # (a record of lane block ``block``, whose first joint is ``first``: its column of the block)
                revolute.store_record(lr[block][:, i - first], j, imp, reaction, inv_h)
            else:
                revolute.store_record(rows[rstart[i]], j, imp, reaction, inv_h)
            continue
        fx = fy = t = 0.0
        for r in range(rstart[i], rstart[i + 1]):
            typ = np.int64(rows[r, TYPE])
            slot = np.int64(rows[r, SLOT])
            lam = rows[r, L0]
            imp[j, slot] = lam
            if typ == ROW_POINT or typ == ROW_WELD:
                imp[j, slot + 1] = rows[r, L1]
                fx += lam
                fy += rows[r, L1]
                if typ == ROW_WELD:
                    imp[j, slot + 2] = rows[r, L2]
                    t += rows[r, L2]
            elif typ == ROW_PRISM:
                imp[j, slot + 1] = rows[r, L1]
                fx += lam * rows[r, FX]
                fy += lam * rows[r, FY]
                t += rows[r, L1]
            elif typ == ROW_ANGLE:
                t += lam * rows[r, SB]
            else:
                fx += lam * rows[r, FX]
                fy += lam * rows[r, FY]
        reaction[j, 0] = fx * inv_h
        reaction[j, 1] = fy * inv_h
        reaction[j, 2] = t * inv_h


@inline_njit
def _record_mark(i, rstart, rows):
    """Joint i's lane-block mark (``revolute.R_BUNDLE``: u + 1 on block u's first record, −1 on its others), or 0
    when its row is not a revolute record in a block."""
    if rstart[i + 1] > rstart[i] and rows[rstart[i], TYPE] == revolute.ROW_REVOLUTE:
        return rows[rstart[i], revolute.R_BUNDLE]
    return 0.0
