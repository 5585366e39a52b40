"""The solve stage (``solve_stage``): the soft step's phases for every substep (integrate velocities, warm start,
solve, integrate positions, relax; then restitution and the stored impulses), shared among worker threads
that claim chunks of each phase (``claim_chunk``, ``await_phase``).
"""
import numba
import numpy as np
from numba import prange

from .._jit import (njit, pnjit, inline_njit, llvm_inline_njit, borrowed, by_ref, atomic_add, atomic_load,
                    wait_for_change, wake_waiters, apart_njit, apart_caller)
from .._simd import LANES
from ._layout import STATE_WIDTH
from ..constants import (CONTACT_HERTZ, CONTACT_DAMPING_RATIO, STATIC_CONTACT_SCALE, JOINT_HERTZ, JOINT_DAMPING_RATIO,
                         JOINT_ITERATIONS)
from .joints._apart import call_begin, call_chunk, call_end, no_joints, with_held
from .joints._solve import (WARM_START as JOINT_WARM_START, SOLVE_FIRST as JOINT_SOLVE_FIRST, SOLVE as JOINT_SOLVE,
                            RELAX as JOINT_RELAX, pass_mode)
from ._contact_rows import OVERFLOW, PARALLEL_MIN_ITEMS, soft_params
from ._sweeps import BIASED, BOUNCE, RELAX, RESTITUTE, WARM, WRITE_BACK, _sweep_range
from ._integrate import (FIRST_PASS, FINISH_PASS, KICK_WIDTH, MOVES_ROWS, POSITION_PASS, VELOCITY_PASS,
                         _integrate_range, _load_body, max_angular_speed)


#: kernels run as plain Python (``NUMBA_DISABLE_JIT``): a parallel loop is then a plain loop, whose items run
#: one after the other (which work claiming allows: a thread waits only for chunks that another has claimed)
PLAIN_PYTHON = numba.config.DISABLE_JIT

#: the solve's counters (``sync``) sit this many int64s apart: a cache line each. Phase p of the step has
#: ``threads + 1`` lines from ``phase_base(p, threads)``: the chunks finished (with the count of threads sleeping
#: on it in the next int64), then for each thread v the chunks claimed from v's part of the phase
SYNC_STRIDE = 8
#: a phase of the threaded solve is cut into up to this many chunks per thread: few enough that claiming
#: costs little (an atomic add on the thread's own counter, one on the shared count of finished chunks), enough
#: that a thread the scheduler stops mid-chunk holds up the others for a small part of the phase only
PHASE_CHUNKS_PER_THREAD = 4
#: the fewest bodies an integration pass's chunk takes (about 1 µs of work), and the fewest bundles a colour's
#: chunk takes (about 1 µs of a sweep)
CHUNK_BODIES = 256
CHUNK_BUNDLES = 8
#: the fewest joints a chunk of a joint colour takes (a few µs of a sweep)
CHUNK_JOINTS = 64
#: where the task table (``tasks``, indexed by WARM … RESTITUTE) holds the restitution sweeps before the last
EARLY_BOUNCE = 4


@njit
def phase_count(substeps, bstart, bounces, jstart):
    """The number of phases of a solve (``_solve_share``): per substep the two integration passes and the biased
    and relax sweeps, the warm start sweep once, the restitution sweep ``bounces`` times, the last pass once
    (``step_sweeps``); a sweep has one phase per colour that has bundles (the overflow colour's
    included), and one per joint colour (``jstart``) before the contacts of the warm start, and
    ``JOINT_ITERATIONS`` per joint colour before the contacts of the biased and relax sweeps
    (``_joint_phase``)."""
    colours = 0
    joint_colours = 0
    for c in range(OVERFLOW + 1):
        if bstart[c + 1] > bstart[c]:
            colours += 1
        if jstart[c + 1] > jstart[c]:
            joint_colours += 1
    return (substeps * (2 + 2 * colours) + 1 + (1 + bounces) * colours
            + (2 * JOINT_ITERATIONS * substeps + 1) * joint_colours)


@inline_njit
def phase_base(p, threads):
    """Where phase p's counters start in ``sync`` (see ``SYNC_STRIDE``)."""
    return p * (threads + 1) * SYNC_STRIDE


@inline_njit
def phase_chunks(n, threads, least):
    """How many chunks a phase of n items (bodies or bundles) is cut into: up to ``PHASE_CHUNKS_PER_THREAD``
    per thread, none smaller than ``least`` items, and one when a single thread runs the solve."""
    if threads == 1:
        return np.int64(1)
    return max(np.int64(1), min(threads * PHASE_CHUNKS_PER_THREAD, n // least))


@inline_njit
def claim_chunk(sync, base, w, threads, chunks):
    """A chunk of the phase whose counters start at ``sync[base]`` for thread w to do, or −1 when every chunk
    has been claimed. The chunks are parted among the threads as the static shares were (thread v's part is
    chunks v·chunks//threads …): a thread claims from its own part first, so on an idle machine each thread
    works on the same bodies pass after pass (their rows stay in its core's cache), then from the others'
    parts, so that the chunks of a thread the scheduler has stopped are done by the threads that run. A
    counter is read before it is incremented: one exhausted stays in every core's cache, unwritten."""
    v = w
    for _ in range(threads):
        first = v * chunks // threads
        size = (v + 1) * chunks // threads - first
        slot = base + (v + 1) * SYNC_STRIDE
        if atomic_load(sync, slot) < size:
            k = atomic_add(sync, slot, 1)
            if k < size:
                return first + k
        v += 1
        if v == threads:
            v = 0
    return np.int64(-1)


@inline_njit
def finish_chunk(sync, base, chunks):
    """After doing a claimed chunk of the phase at ``sync[base]``: count it finished; whoever finishes the last
    wakes the threads sleeping in :func:`await_phase`. (Sequentially consistent: every write made for the chunk
    is visible to a thread that sees the count.)"""
    if atomic_add(sync, base, 1) == chunks - 1:
        wake_waiters(sync, base, base + 1)


@inline_njit
def await_phase(sync, base, chunks):
    """Wait until all ``chunks`` chunks of the phase at ``sync[base]`` are finished: spin for some microseconds,
    then sleep until the last one is (``carom._jit.wait_for_change``, a futex wait on Linux; ``sync[base + 1]``
    counts the sleepers). A thread waits only for chunks others have claimed and are doing, never for a thread
    that has not arrived: that one finds the phase's chunks taken and done when it comes, and goes on."""
    seen = atomic_load(sync, base)
    while seen < chunks:
        wait_for_change(sync, base, seen, base + 1)
        seen = atomic_load(sync, base)


@pnjit
def _solve_parallel(threads, substeps, bstart, rows, body, move, state, fstate, kick, flags, solved, motion, dangle,
                    moves, gx, gy, h, max_w, inv_h, soft, stiff, out, tasks, passes, sync, bounces, jdata, extra):
    """The substeps, the restitution pass and the last pass in one parallel loop of ``threads`` items, one per thread.

    Why: run colour by colour, each colour of each sweep was a parallel loop of its own, about 80 launches a
    step for the pyramids (13 sweeps of 6 colours and the integration passes), each costing microseconds to
    start the threads and to join them. Here the threads start once and claim the chunks of each phase
    (``_solve_share``). No item waits for another item to start, so the result is right (and the same) however
    the threading layer runs the items, at once or one after the other."""
    for w in prange(threads):
        # (np.int64: see _prepare_all_rows)
        _solve_share(np.int64(w), threads, substeps, bstart, rows, body, move, state, fstate, kick, flags, solved,
                     motion, dangle, moves, gx, gy, h, max_w, inv_h, soft, stiff, out, tasks, passes, sync, bounces,
                     jdata, extra)


@njit
def _solve_share(w, threads, substeps, bstart, rows, body, move, state, fstate, kick, flags, solved, motion, dangle,
                 moves, gx, gy, h, max_w, inv_h, soft, stiff, out, tasks, passes, sync, bounces, jdata, extra):
    """Thread w's part of the solve (of ``threads``; 1: the whole solve, in the calling thread). The step is a
    sequence of phases, each integration pass and each colour of each sweep (``phase_count``); every thread
    goes through them in order, claims chunks of the phase and does them until none is left
    (``claim_chunk``), then waits until all of them are finished (``await_phase``: the next phase reads what
    they wrote) and goes on to the next phase. The overflow colour, whose bundles share bodies, is one chunk.
    The chunks do not change any result: bodies integrate independently, and the bundles of a colour touch
    disjoint bodies.

    Why claiming and not a static share per thread with a barrier after each phase (as before): with
    another process busy on a core, a thread is often not running, and at each of the step's some 70
    barriers the others waited for it (large_pyramid: twice the one-thread time with two threads). Now the
    threads that run do the chunks of one that does not, and wait only when it stopped in the middle of a
    chunk; it finds the phases it missed done when it runs again, and catches up."""
    # every array as a view without a reference (``borrowed``): the calls below would otherwise take one on each
    # array they are handed and drop it on return, two atomics per array per call (some 1,400 a step of 4
    # substeps for a world of one body, in the phases and passes below), although solve_stage holds them all
    # until the end
    (sync, bstart, rows, body, move, state, fstate, kick, flags, solved, dangle, moves, tasks, passes) = borrowed((
        sync, bstart, rows, body, move, state, fstate, kick, flags, solved, dangle, moves, tasks, passes))
    motion, out, jdata, extra = borrowed(motion), borrowed(out), borrowed(jdata), borrowed(extra)
    nbodies = flags.shape[0]
    body_chunks = phase_chunks(nbodies, threads, CHUNK_BODIES)
    # what the integration passes and the sweeps read, by pointer (``by_ref``): passed by value, each call copied
    # some 170 and 110 words, at 21 calls a step of 4 substeps
    passes_tables = by_ref((state, fstate, kick, flags, solved, motion, dangle, moves))
    bundles = by_ref((rows, body, move, fstate, out, extra))
    p = np.int64(0)
    for sub in range(substeps):
        # odd substeps solve each contact's points in the reverse order (module docstring; a runtime value, as
        # the task: a literal would compile the sweep once per value)
        odd = (sub & 1) == 1
        p = _integrate_phase(passes[FIRST_PASS] if sub == 0 else passes[VELOCITY_PASS], p, w, threads, body_chunks,
                             nbodies, passes_tables, gx, gy, h, max_w, sync)
        if sub == 0:
            # (later substeps' warm starts are applied body by body by the velocity pass: _integrate_velocity)
            p = _joint_phase(np.int64(JOINT_WARM_START), p, w, threads, jdata, state, fstate, flags, dangle, inv_h,
                             sync)
            p = _sweep_phases(tasks[WARM], odd, p, w, threads, bstart, bundles, inv_h, soft, stiff, sync)
        p = _joint_phase(np.int64(JOINT_SOLVE_FIRST if sub == 0 else JOINT_SOLVE), p, w, threads, jdata, state,
                         fstate, flags, dangle, inv_h, sync)
        p = _sweep_phases(tasks[BIASED], odd, p, w, threads, bstart, bundles, inv_h, soft, stiff, sync)
        p = _integrate_phase(passes[POSITION_PASS], p, w, threads, body_chunks, nbodies, passes_tables, gx, gy, h,
                             max_w, sync)
        p = _joint_phase(np.int64(JOINT_RELAX), p, w, threads, jdata, state, fstate, flags, dangle, inv_h, sync)
        p = _sweep_phases(tasks[RELAX], odd, p, w, threads, bstart, bundles, inv_h, soft, stiff, sync)
    forward = bounces < 0     # (False, as a runtime value)
    for b in range(bounces):
        # (only the last sweep writes the impulses back to the contact table: ``BOUNCE``)
        p = _sweep_phases(tasks[RESTITUTE] if b == bounces - 1 else tasks[EARLY_BOUNCE], forward, p, w, threads,
                          bstart, bundles, inv_h, soft, stiff, sync)
    # the step's velocities and position changes to the bodies (``_integrate._finish``)
    _integrate_phase(passes[FINISH_PASS], p, w, threads, body_chunks, nbodies, passes_tables, gx, gy, h, max_w, sync)


#: (the three phase functions below are inlined into ``_solve_share`` by LLVM: as calls, each copied its dozens
#: of array arguments, some 200 words, at every phase of every substep, which was half of a small world's solve:
#: 9.2 -> 5.2 µs a step for one box on the ground, with one thread; the cold compile did not grow)
@llvm_inline_njit
def _integrate_phase(task, p, w, threads, chunks, n, tables, gx, gy, h, max_w, sync):
    """Thread w's part of the integration pass ``task`` over the n bodies, phase p of the solve (``_solve_share``):
    the chunks of the bodies it claims, then the wait for the others; returns the next phase. ``tables``: the
    passes' arrays, by pointer (``_integrate._integrate_range``)."""
    base = phase_base(p, threads)
    # (one thread: the whole pass, without the counters, each an atomic operation; one call site of the pass, as
    # a second would be a second copy of it in the compiled solve)
    single = threads == 1
    k = np.int64(0) if single else claim_chunk(sync, base, w, threads, chunks)
    while k >= 0:
        _integrate_range(task, k * n // chunks, (k + 1) * n // chunks, tables, gx, gy, h, max_w)
        if single:
            return p + 1
        finish_chunk(sync, base, chunks)
        k = claim_chunk(sync, base, w, threads, chunks)
    await_phase(sync, base, chunks)
    return p + 1


@llvm_inline_njit
def _joint_phase(mode, p, w, threads, jdata, state, fstate, flags, dangle, inv_h, sync):
    """Thread w's part of the joints' sweep ``mode`` (``joints._solve.solve_joints``) from phase p of the solve,
    colour by colour as ``_sweep_phases`` (the overflow colour's joints, which share bodies, in one chunk);
    returns the next phase. (``mode`` an np.int64, not a constant: a constant is typed as its value, and each
    mode compiled its own copy of this and of the sweep, 8 s of the cold compile.)

    The biased solve and the relax go over the joints ``JOINT_ITERATIONS`` times (the warm start once); a
    biased pass after the first takes no warm start back and adds to the substep's WARM_DV, as the first
    substep's biased solve does (SOLVE_FIRST). Why more than one pass: one Gauss-Seidel pass per sweep carries
    a change only a link or two along a chain, so a long chain behaves as a much softer spring than its joints
    are: a 40-link hanging chain rang at 1.7 Hz for 10 s (the joints' damping ratio hardly reached that mode: at
    a ratio of 20 it still decayed only as e^(−1.6 t)), and joints stiffer than 70 Hz made it buckle into a
    zigzag that grew 30-fold in a third of a second. With two passes the same chain is below 1 mm/s after
    1.5 s at 70 Hz (``JOINT_HERTZ``), and stays straight at 90 Hz. The contacts are swept once, as before."""
    jstart, jbody, jframe, rstart, jrows, jsoft, pcount, pstart, pb, pbody, pmove = jdata
    if jbody.shape[0] == 0:
        return p
    passes = 1 if mode == JOINT_WARM_START else JOINT_ITERATIONS
    if threads == 1:
        # one thread: every pass in one call, each colour in turn (the same order as below), and no counters
        colours = 0
        for c in range(OVERFLOW + 1):
            colours += np.int64(jstart[c + 1] > jstart[c])
        call_chunk((mode, np.int64(-passes), np.int64(0), np.int64(0), np.int64(0), jdata, state, fstate, flags,
                    dangle, inv_h))
        return p + passes * colours
    for it in range(passes):
        m = pass_mode(mode, it)
        for c in range(OVERFLOW + 1):
            n = jstart[c + 1] - jstart[c]
            if n == 0:
                continue
            # the colour's items: its bundles of plain point joints, then its other joints one by one
            nb = pstart[c + 1] - pstart[c]
            items = nb + n - pcount[c]
            chunks = (phase_chunks(items, threads, max(CHUNK_JOINTS * items // n, 1)) if c < OVERFLOW
                      else np.int64(1))
            base = phase_base(p, threads)
            k = claim_chunk(sync, base, w, threads, chunks)
            while k >= 0:
                first, last = k * items // chunks, (k + 1) * items // chunks
                lo = jstart[c] + pcount[c] - nb
                # (the joints' code is compiled apart: ``joints._apart``)
                call_chunk((m, pstart[c] + first, pstart[c] + min(last, nb), lo + max(first, nb), lo + max(last, nb),
                            jdata, state, fstate, flags, dangle, inv_h))
                finish_chunk(sync, base, chunks)
                k = claim_chunk(sync, base, w, threads, chunks)
            await_phase(sync, base, chunks)
            p += 1
    return p


@llvm_inline_njit
def _sweep_phases(task, reverse, p, w, threads, bstart, bundles, inv_h, soft, stiff, sync):
    """Thread w's part of one pass over all bundles, colour by colour from phase p of the solve
    (``_solve_share``): the chunks of each colour it claims, then the wait for the others; returns the next
    phase. The overflow colour's bundles share bodies: they are one chunk, solved one at a time. The last pass
    (restitution) also writes each bundle's results to the contact table (``_write_back``)."""
    for c in range(OVERFLOW + 1):
        lo = bstart[c]
        n = bstart[c + 1] - lo
        if n == 0:
            continue
        # (paired: a runtime value, as the task; a literal would compile _sweep_range once per value)
        paired = c < OVERFLOW
        chunks = phase_chunks(n, threads, CHUNK_BUNDLES) if paired else np.int64(1)
        base = phase_base(p, threads)
        # (one thread: the whole colour, without the counters; one call site, as in _integrate_phase)
        single = threads == 1
        k = np.int64(0) if single else claim_chunk(sync, base, w, threads, chunks)
        while k >= 0:
            _sweep_range(task, reverse, lo + k * n // chunks, lo + (k + 1) * n // chunks, bundles, inv_h, soft, stiff,
                         paired)
            if single:
                break
            finish_chunk(sync, base, chunks)
            k = claim_chunk(sync, base, w, threads, chunks)
        if not single:
            await_phase(sync, base, chunks)
        p += 1
    return p


@njit
def solve_stage(dt, substeps, gx, gy, bodies, contacts, solver, threads, joints):
    """The soft step (module docstring) over the coloured bundles and the joints (``joints._solve``): substeps of
    integrate, warm start, biased solve, integrate positions, relax; then restitution. The impulses go back to
    the contact table, the joints' reactions to the joint table.
    Returns the start-of-step positions and angles (for continuous collision) and each contact point's
    approach speed (for hit events and ``World.contact_data``; 0 for contacts not solved)."""
    perm, bstart, bfirst, rows, body, move, bcount, solved = (
        solver.perm, solver.bundle_start, solver.bundle_first, solver.rows, solver.bundle_body, solver.bundle_move,
        solver.bundle_count, solver.solved)
    com, angle, vel, angvel, force, torque = (
        bodies.com, bodies.angle, bodies.vel, bodies.angvel, bodies.force, bodies.torque)
    c_count, c_nimp, c_timp, c_step = (contacts.count, contacts.normal_impulse, contacts.tangent_impulse,
                                       contacts.step_impulse)
    NB = com.shape[0]
    inv_dt = 1.0 / dt
    h = dt / substeps
    inv_h = 1.0 / h
    max_w = max_angular_speed(dt)
    contact_hertz = min(CONTACT_HERTZ, 0.25 * substeps * inv_dt)
    soft = soft_params(contact_hertz, CONTACT_DAMPING_RATIO, h)
    # contacts with a static (or kinematic) body are stiffer: nothing on the other side gives way
    stiff = soft_params(STATIC_CONTACT_SCALE * contact_hertz, CONTACT_DAMPING_RATIO, h)
    com0 = com.copy()
    angle0 = angle.copy()
    # one row per body in double precision (the integrators'), and the solver's copy in single precision
    # (``_velocity``: what the sweeps gather and scatter); the bodies' rows and the step table are filled by
    # the first pass (``_fill_kick``), the dummy body of empty bundle lanes (row NB: at rest, unrotated, never
    # written) here
    state = np.empty((NB + 1, STATE_WIDTH))
    fstate = np.empty((NB + 1, STATE_WIDTH), np.float32)
    kick = np.empty((NB, KICK_WIDTH))
    flags = np.empty(NB, np.uint8)    # each body's MOVE_* bits (``_fill_kick``)
    _load_body(NB, state, fstate, 0.0, 0.0, 0.0)
    dangle = np.zeros(NB)
    moves = np.empty((MOVES_ROWS, NB))     # the position pass's table (``_integrate.MOVE_X``)
    # the task codes as runtime values: passed as constants, each would compile its own copy of the sweep
    tasks = np.arange(5)
    tasks[EARLY_BOUNCE] = BOUNCE
    passes = np.arange(4)
    # the integrators get only the arrays they use: every array a parallel loop receives costs compile time
    motion = (bodies.inv_mass, bodies.inv_inertia, bodies.kind, bodies.alive, force, torque, bodies.lin_damping,
              bodies.ang_damping,
              bodies.gravity_scale, bodies.asleep, vel, angvel, bodies.locks, com, angle)
    # impulses back to the table, and each solved point's approach speed (``_write_back``, in the restitution
    # pass)
    # (zeros: a contact not solved did not approach; its step impulses are 0, so it makes no hit)
    approach = np.zeros((c_count.shape[0], 2))
    out = (perm, bfirst, bcount, c_nimp, c_timp, c_step, approach)
    bounces, relax = solver.sweeps[0], solver.sweeps[1]
    tasks[RELAX] = relax
    if bounces == 1:
        tasks[RESTITUTE] = WRITE_BACK
    # the joints: those with an awake dynamic body, their rows, and the rigid joints' softness (Box2D's: a
    # joint is stiffer than a contact, its frequency capped for the substep as the contacts' is)
    # (each given only the body arrays it reads: the whole tuple of 22 in each signature cost compile time)
    # (the plain point joints in bundles of LANES: ``joints._bundles``; the joints' code is compiled apart, and
    # called only for a world with joints: ``joints._apart``)
    if joints.kind.shape[0] > 0:
        jlist, held, jstart, jbody, jframe, rstart, jrows, pcount, pstart, pb, pbody, pmove = call_begin((
            joints, bodies.kind, bodies.asleep, com, angle, bodies.inv_mass, bodies.inv_inertia, bodies.local_center,
            h, threads))
    else:
        jlist, held, jstart, jbody, jframe, rstart, jrows, pcount, pstart, pb, pbody, pmove = no_joints()
    solved = with_held(solved, jlist, held)
    jsoft = np.empty(3)
    jsoft[0], jsoft[1], jsoft[2] = soft_params(min(JOINT_HERTZ, 0.5 * substeps * inv_dt), JOINT_DAMPING_RATIO, h)
    # (a flat tuple of arrays: a parallel loop takes no named or nested tuples)
    jdata = (jstart, jbody, jframe, rstart, jrows, jsoft, pcount, pstart, pb, pbody, pmove)
    # the bundles' bounce and material tables and point counts (``_contact_rows``)
    extra = (solver.bounce, solver.material, solver.bundle_points)
    if threads > 1 and max(rows.shape[0] * LANES, NB) >= PARALLEL_MIN_ITEMS and not PLAIN_PYTHON:
        # the whole solve in one parallel loop, one item per thread, the threads claiming the chunks of each
        # phase (each colour of each sweep, each integration pass) and waiting for the phase to be done
        sync = np.zeros(phase_base(phase_count(substeps, bstart, bounces, jstart), threads), np.int64)
        _solve_parallel(threads, substeps, bstart, rows, body, move, state, fstate, kick, flags, solved, motion,
                        dangle, moves, gx, gy, h, max_w, inv_h, soft, stiff, out, tasks, passes, sync, bounces, jdata,
                        extra)
    else:
        # (one thread claims nothing and waits for nothing: no counters. They were 5 KB allocated and zeroed
        # at every step of a small world)
        sync = np.zeros(1, np.int64)
        _solve_share(np.int64(0), np.int64(1), substeps, bstart, rows, body, move, state, fstate, kick, flags,
                     solved, motion, dangle, moves, gx, gy, h, max_w, inv_h, soft, stiff, out, tasks, passes, sync,
                     bounces, jdata, extra)
    if joints.kind.shape[0] > 0:
        call_end((jlist, joints, jdata, inv_h, threads))
    return com0, angle0, approach


#: what :func:`solve_stage` returns: the start-of-step centres and angles, and the approach speeds
SOLVE_RETURNS = numba.types.Tuple((numba.types.float64[:, ::1], numba.types.float64[::1],
                                   numba.types.float64[:, ::1]))


@apart_njit(lambda arg_types: SOLVE_RETURNS)
def solve_apart(dt, substeps, gx, gy, bodies, contacts, solver, threads, joints):
    """:func:`solve_stage`, compiled apart from the step (``carom._jit.apart_njit``), which calls it through its
    address (:data:`call_solve`) once a step.

    Why: the step's cold compile ends with work that only one core can do: the step's own code, then the
    machine code of the whole step, every stage's code linked in (2.5 s). The solve is the largest stage
    (10 s of compile). Compiled apart, it is compiled, made into machine code and cached by the compile helper
    on the other core (``_step.compile_late_stages``), while the step's compile goes on without it: the step
    needs only the types it returns (:data:`SOLVE_RETURNS`). Python loads it before the first step of a
    process (``_step.load_solve``)."""
    return solve_stage(dt, substeps, gx, gy, bodies, contacts, solver, threads, joints)


#: the compiled call of :func:`solve_apart` (its arguments as one tuple)
call_solve = apart_caller(solve_apart)
