"""Contact solver: graph colouring, packed constraint rows and the soft step, parallel over colours.

Solver (after Box2D v3's "soft step"), per substep of length h:

1. integrate velocities: v += h·(g·gravity_scale + f/m), ω += h·τ/I, then damping v /= 1 + h·c;
2. warm start: apply the accumulated impulses (in the first substep last step's, matched by feature id, in a
   sweep over the contacts; in the others the λ the substep before ended with, whose velocity change is that
   substep's own, applied body by body in step 1: ``_integrate_velocity``);
3. solve with a soft bias: for each contact point with current separation s (tracked from the bodies'
   position deltas, so no collision rerun is needed inside the substeps):
   s > 0 (speculative): bias = s/h (the bodies may close the gap but not more);
   s ≤ 0: bias = max(β·s, −v_push), with a soft constraint of stiffness ``CONTACT_HERTZ`` and damping ratio
   ``CONTACT_DAMPING_RATIO``: ω = 2π f, β = ω/(2ζ + hω), mass scale = hω(2ζ + hω)/(1 + hω(2ζ + hω)),
   impulse scale = 1/(1 + hω(2ζ + hω)).
   λ = −m_n·mass_scale·(v_n + bias) − impulse_scale·λ_acc, accumulated impulse clamped ≥ 0;
4. integrate positions;
5. relax: the same solve without the soft bias (bias 0 for s ≤ 0), which removes the velocity the bias added,
   then friction, λ_t = −m_t·v_t clamped to ±μ·λ_n (Coulomb).

Two choices keep a tall stack straight (a 20-box column: 21.6 mm of sideways drift before them, 0.07 mm
after; Box2D v3: 16.4 mm). A contact's two points are solved one after the other (Gauss-Seidel), so the
first takes a larger share of the impulse than the second and every sweep leaves the box a little torque
towards its first point; a column of boxes whose contacts all list their points in the same order leans
one way, more with each box. So odd substeps solve the points in the reverse order (``reverse``), and the
shares even out over two substeps. Friction is solved only in the relax sweep (as Box2D v3.2 does): there it
meets normal impulses without the bias's push, and with friction in both sweeps the reversed order let the
near-top boxes of a 20-base pyramid slide 6 cm (``tests/test_rigid.py``).

After the substeps, restitution, when some point approached faster than ``RESTITUTION_THRESHOLD`` and may
bounce: ``RESTITUTION_SWEEPS`` sweeps over every point that took an impulse in the step, each aiming at
λ = −m_n (v_n + e·v_n⁰) for v_n⁰ the point's normal speed at the start of the step (v_n⁰ when it was
separating), with the point's impulse over the step kept ≥ 0 (``_restitute``, ``step_sweeps``). For two free
bodies this is the closed form of the reference article, I = −(1 + e)·v_rel·n / (1/m1 + 1/m2 + (r1×n)²/I1 +
(r2×n)²/I2); for a group of bodies meeting in one step it keeps the kinetic energy for e = 1 and never adds
to it.

m_n = 1/(1/mA + 1/mB + (rA×n)²/IA + (rB×n)²/IB) is the effective mass along the normal (m_t along the
tangent).

Parallelism and determinism. Contacts are coloured greedily in key order so that no two contacts of one
colour share a dynamic body (static and kinematic bodies are only read). Every sweep visits the colours in
order; inside a colour the contacts touch disjoint bodies, so they can be solved in any order or at once,
with bitwise the same result: the answer does not depend on the thread count. Contacts that find no free
colour among the first ``OVERFLOW`` go to the overflow colour, solved in one thread in key order. With
several threads the whole solve is one parallel loop with one item per thread (``_solve_parallel``): the
threads claim chunks of each colour and of each integration pass, and wait for the last chunk of one before
the next (``_solve_share``; a parallel loop per colour cost microseconds of thread start-up and join, some 80
a step).

Layout and vectors. Contacts are solved ``LANES`` at a time (``carom._simd``: one contact per lane of an
LLVM vector, as Box2D v3 does with SIMD): the contacts of a colour are packed into bundles, and a bundle's
fields are stored field by field, ``rows[bundle, field, lane]`` (masses, normal, friction, restitution,
softness, then two points of ``POINT_WIDTH`` fields), so each field of a bundle is one vector load. Inside
each block of a few bundles of a colour the two-point contacts come first, so a bundle solves as many points
as its first lane has, and bundles of one-point contacts (circles) do half the work; a one-point manifold in
a two-point bundle has a second point of all zeros, which changes nothing. Each body is one row of
``fstate`` (v, ω, position delta, rotation delta); a sweep gathers the lanes' bodies into vectors, solves,
and scatters the new velocities back (static and kinematic bodies are only read). Lane arithmetic is the
scalar IEEE arithmetic in the same order, so the result is bitwise that of solving the contacts one by one,
whatever the lane count or thread count.
The scalar solve cost about 50 ns per two-point contact per sweep, bound by instruction throughput; 4 lanes
of doubles brought it to about 22 ns.

Precision. The sweeps work in single precision, as Box2D's solver does: 8 floats fill an AVX2 register where
4 doubles did, which halves the arithmetic per contact, and a body's row (8 floats) is half a cache line. The
rows are computed in double precision (``prepare_stage``, from the world's double-precision poses) and
rounded when stored; the integrators work in double precision and keep each body's position delta, and the
velocity of a body no contact acts on, in double precision (``state``), beside the single-precision row the
sweeps use (``fstate``), which holds the velocity of a body the solver holds: only a velocity the solver
changed is rounded. Momentum is then
conserved to about 1e-6 of its size over 1,000 steps (1e-9 in double precision). About 12 to 15 ns per
two-point contact per sweep on AVX2, against 22 ns for doubles (and the lever arms r × n, r × t stored per
point instead of the anchors, ``_speed_along``).
"""
import math

import numba
import numpy as np
from numba import prange

from .._jit import (njit, pnjit, inline_njit, llvm_inline_njit, trailing_zeros, sin_cos, borrowed, atomic_add,
                    atomic_load, wait_for_change, wake_waiters)
from .._simd import (LANES, LANES64, PARTS, ROW, splat, splat64, load, store, store_part, lane, insert, gather_rows,
                     gather_rows64, scatter_rows, select, vmax, vmin)
# body state fields and the integrators' flags (the joints read them too)
from ._layout import (VX, VY, W, DPX, DPY, DC, DS, MOVED, STATE_WIDTH, MOVE_VELOCITY, MOVE_POSITION, MOVE_SOLVED,
                      MOVE_LOCK_X, MOVE_LOCK_Y, LOCK_X, LOCK_Y)
from ..constants import (MAX_ROTATION, MAX_TRANSLATION_SPEED, CONTACT_HERTZ, CONTACT_DAMPING_RATIO,
                         CONTACT_PUSH_MAX_VELOCITY, RESTITUTION_THRESHOLD, JOINT_HERTZ, JOINT_DAMPING_RATIO,
                         JOINT_ITERATIONS)
from .joints._bundles import solve_point_bundles, store_bundle_reactions
from .joints._solve import (joints_to_solve, joint_solved, prepare_joints, solve_joints, store_reactions,
                            WARM_START as JOINT_WARM_START, SOLVE_FIRST as JOINT_SOLVE_FIRST,
                            SOLVE as JOINT_SOLVE, RELAX as JOINT_RELAX)

STATIC, KINEMATIC, DYNAMIC = 0, 1, 2
MIX_SQRT, MIX_MIN, MIX_MAX, MIX_MEAN, MIX_MULTIPLY = 0, 1, 2, 3, 4
KEY_SHIFT = 32
KEY_MASK = 0xFFFFFFFF

#: colours 0 … OVERFLOW − 1 are parallel; colour OVERFLOW is solved in one thread
OVERFLOW = 63

# contact row fields
MA, IA, MB, IB, NX, NY, MU, E, SOFT, COUNT = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9
# the surfaces' relative tangent speed (conveyor belts), the rolling resistance (coefficient × the larger shape
# radius) and the accumulated rolling impulse (``_solve_rolling``)
TS, RR, RIMP = 10, 11, 12
P0 = 13
POINT_WIDTH = 16
# point fields (offsets from P0 + p·POINT_WIDTH): the lever arms of the normal and the tangent about each
# centre of mass (rA × n, rB × n, rA × t, rB × t, with r the anchor from the centre of mass), anchors of the
# tracked core points (q), separation offset, normal and tangent mass, impulses, normal velocity before the
# solve, normal and tangent impulse of the whole step (``_solve_normal``; a point took an impulse in the step
# when its STEPN is above 0)
RNA, RNB, RTA, RTB, QAX, QAY, QBX, QBY, ADJ, NMASS, TMASS, NIMP, TIMP, RELV, STEPN, STEPT = range(16)
ROW_WIDTH = P0 + 2 * POINT_WIDTH



@njit
def mix(a, b, rule):
    if rule == MIX_SQRT:
        return math.sqrt(a * b)
    if rule == MIX_MIN:
        return min(a, b)
    if rule == MIX_MAX:
        return max(a, b)
    if rule == MIX_MEAN:
        return 0.5 * (a + b)
    return a * b


@njit
def soft_params(hertz, zeta, h):
    """(bias rate, mass scale, impulse scale) of a soft constraint of frequency ``hertz`` and damping ratio
    ``zeta`` over a substep h (module docstring); hertz = 0 is a rigid constraint."""
    if hertz == 0.0:
        return 0.0, 1.0, 0.0
    omega = 2.0 * math.pi * hertz
    a1 = 2.0 * zeta + h * omega
    a2 = h * omega * a1
    a3 = 1.0 / (1.0 + a2)
    return omega / a1, a2 * a3, a3


#: a parallel colour's contacts are grouped two-point first in blocks of this many (``colour_contacts``): a
#: whole number of bundles, so that every bundle's first lane has the most points of its bundle, and small
#: enough that each thread's share of a colour stays nearly a run of keys
COLOUR_BLOCK = 4 * LANES


@njit
def colour_contacts(keys, c_count, c_sensor, shape_body, kind, asleep):
    """Select the contacts to solve and colour them, in one pass in key order: a contact is solved when it is
    no sensor, has points and at least one awake dynamic body; greedily, each takes the lowest colour that
    neither of its dynamic bodies uses yet. Returns (the solved contacts sorted by colour, their body pairs
    in that order, colour start offsets, and per body whether it is a dynamic body of a solved contact: the
    bodies whose velocity the solver holds, ``_velocity``; one more entry, for the dummy body of empty
    lanes).

    Inside each parallel colour the contacts are in key order, except that within each block of
    ``COLOUR_BLOCK`` of them the two-point contacts come first, so that bundles of one-point contacts
    (circles, a polygon's corner) solve one point instead of two; the order inside a colour changes no
    result, since its contacts touch disjoint bodies. Key order keeps each thread's share of a colour (a run
    of its bundles, ``_sweep_share``) to nearby bodies, mostly the same ones from colour to colour; with
    all of a colour's two-point contacts first, one thread of two took them and the other the one-point
    contacts, each spread over the whole scene, and the bodies' rows went back and forth between the cores
    at every colour (the smash's solve took 0.66 ms with two threads against 0.53 with one; 0.47 now). The
    overflow colour, whose contacts share bodies, keeps key order.

    The lowest free colour is the lowest zero bit of ``busy``, found with one ``trailing_zeros``; no colour
    sets bit OVERFLOW, so it is at most OVERFLOW. A loop over the colours, one branch per busy colour, took
    0.22 ms for smash's 15k contacts (0.12 ms now); pyramids, whose colours the branch predictor guesses,
    took 0.13 ms either way (15k contacts). The pairs are written here in colour order, so that the rows
    read them in sequence, not contact by contact from the whole table."""
    K = keys.shape[0]
    NB = kind.shape[0]
    used = np.zeros(NB, np.uint64)
    solved = np.zeros(NB + 1, np.bool_)
    order = np.empty(K, np.int64)
    ends = np.empty((K, 2), np.int64)
    colour = np.empty(K, np.int64)
    counts = np.zeros(OVERFLOW + 2, np.int64)
    one = np.uint64(1)
    none = np.uint64(0)
    all_ones = ~none
    n = 0
    for k in range(K):
        if c_count[k] == 0 or c_sensor[k]:
            continue
        a = shape_body[keys[k] >> KEY_SHIFT]
        b = shape_body[keys[k] & KEY_MASK]
        dyn_a = kind[a] == DYNAMIC
        dyn_b = kind[b] == DYNAMIC
        if not ((dyn_a and not asleep[a]) or (dyn_b and not asleep[b])):
            continue
        # without branches: the masks are all ones for a dynamic body, zero otherwise (only dynamic bodies
        # have colours), and the overflow colour sets no bit
        mask_a = all_ones if dyn_a else none
        mask_b = all_ones if dyn_b else none
        used_a = used[a]
        busy = (used_a & mask_a) | (used[b] & mask_b)
        c = np.int64(trailing_zeros(~busy))
        bit = (one << np.uint64(c)) & ~(one << np.uint64(OVERFLOW))
        used[a] = used_a | (bit & mask_a)
        used[b] = used[b] | (bit & mask_b)
        solved[a] = solved[a] | dyn_a
        solved[b] = solved[b] | dyn_b
        counts[c + 1] += 1
        order[n] = k
        ends[n, 0] = a
        ends[n, 1] = b
        colour[n] = c
        n += 1
    # (plain loops rather than cumsum and slices: less to compile)
    start = np.zeros(OVERFLOW + 2, np.int64)
    fill = np.empty(OVERFLOW + 1, np.int64)
    for c in range(OVERFLOW + 1):
        start[c + 1] = start[c] + counts[c + 1]
        fill[c] = start[c]
    perm = np.empty(n, np.int64)
    pair = np.empty((n, 2), np.int64)
    for i in range(n):
        c = colour[i]
        r = fill[c]
        fill[c] = r + 1
        perm[r] = order[i]
        pair[r, 0] = ends[i, 0]
        pair[r, 1] = ends[i, 1]
    # each block of a parallel colour: its two-point contacts first, each group still in key order
    one_perm = np.empty(COLOUR_BLOCK, np.int64)
    one_pair = np.empty((COLOUR_BLOCK, 2), np.int64)
    for c in range(OVERFLOW):
        for lo in range(start[c], start[c + 1], COLOUR_BLOCK):
            hi = min(lo + COLOUR_BLOCK, start[c + 1])
            w = lo
            t = 0
            for i in range(lo, hi):
                if c_count[perm[i]] == 2:
                    perm[w] = perm[i]
                    pair[w, 0] = pair[i, 0]
                    pair[w, 1] = pair[i, 1]
                    w += 1
                else:
                    one_perm[t] = perm[i]
                    one_pair[t, 0] = pair[i, 0]
                    one_pair[t, 1] = pair[i, 1]
                    t += 1
            for i in range(t):
                perm[w + i] = one_perm[i]
                pair[w + i, 0] = one_pair[i, 0]
                pair[w + i, 1] = one_pair[i, 1]
    return perm, pair, start, solved


#: the contact table's members from this index on are the colouring it was solved with (``colouring_of``):
#: perm, body pairs, colour starts, solved bodies, and the body flags it depended on (``body_flags``)
COLOURING = 12
C_PERM, C_PAIR, C_START, C_SOLVED, C_FLAGS = range(COLOURING, COLOURING + 5)


@njit
def colouring_of(solver):
    """The colouring a step solved with, kept in its contact table for the next step (``prepare_stage``)."""
    return solver[0], solver[4], solver[1], solver[9], solver[10]


@njit
def body_flags(kind, asleep):
    """What the colouring reads of each body: 1 if dynamic, + 2 if asleep."""
    NB = kind.shape[0]
    flags = np.empty(NB, np.int8)
    for b in range(NB):
        flags[b] = np.int8(kind[b] == DYNAMIC) | np.int8(2 * np.int8(asleep[b]))
    return flags


@njit
def _same(a, b):
    """Whether the 1-d arrays a and b hold the same values, in the same order."""
    if a.shape[0] != b.shape[0]:
        return False
    for k in range(a.shape[0]):
        if a[k] != b[k]:
            return False
    return True


@njit
def same_pairs(keys, old_keys):
    """Whether the broad phase's candidate pairs are last step's, in the same order."""
    return _same(keys, old_keys)


@njit
def same_colouring(pairs_same, c_count, c_sensor, flags, old):
    """Whether ``colour_contacts`` would give exactly last step's colouring (kept in the old table): the same
    pairs in the same order (``pairs_same``: ``same_pairs``), each with as many points and as much a sensor as
    then, and every body as dynamic and as asleep as then (a shape's body never changes, and a removed shape's
    contacts leave the table with its colouring: ``World._purge_contacts``). A resting pile keeps its contacts
    from step to step, and the colouring, a serial pass in key order, then costs a comparison instead (0.18 ms
    in the large pyramid, whose contacts stay the same 84 steps in 100)."""
    return (pairs_same and _same(c_count, old[1]) and _same(c_sensor, old[9])
            and _same(flags, old[C_FLAGS]))


@njit
def prepare_stage(bodies, shapes, contacts, old, pairs_same, friction_rule, restitution_rule, threads, fall,
                  material):
    """The contacts to solve, coloured, in bundles of ``LANES`` (the solver's layout, module docstring).

    Solved are the non-sensor contacts with points and at least one awake dynamic body. Each lane holds the
    lever arms r × n and r × t of the anchors about the centres of mass (anchors on each body's own surface:
    the manifold point is midway between the surfaces, and a speculative contact far ahead of a small body
    must not act on it through a long lever arm), the effective masses, the separation offsets the substeps
    track between the cores, the warm-start impulses and the approach speed.

    Returns the solver tuple (perm, colour starts, bundle starts, each bundle's first contact, body pairs,
    rows, bundle bodies, bundle write flags, each bundle's contact count, solved bodies, the body flags the
    colouring read): lane q < count of bundle j holds contact ``perm[first[j] + q]``. A parallel colour of m contacts fills ⌈m / LANES⌉ bundles;
    each overflow contact gets a bundle of its own (its contacts share bodies, so they cannot share a bundle).
    Empty lanes point at the solver's dummy body (row NB of its state: at rest, never written) and have no
    mass, so they change nothing. ``material``: each contact's (friction, restitution, tangent speed) as the
    pre-solve hook left them (``_step.pre_solve_stage``), used instead of the shapes' mixed values; empty
    without a hook.
    """
    keys, c_count = contacts[0], contacts[1]
    NB = bodies[7].shape[0]
    flags = body_flags(bodies[7], bodies[16])
    if same_colouring(pairs_same, c_count, contacts[9], flags, old):
        perm, pair, start, solved = old[C_PERM], old[C_PAIR], old[C_START], old[C_SOLVED]
    else:
        perm, pair, start, solved = colour_contacts(keys, c_count, contacts[9], shapes[0], bodies[7], bodies[16])
    bstart = np.zeros(OVERFLOW + 2, np.int64)
    for c in range(OVERFLOW + 1):
        m = start[c + 1] - start[c]
        bstart[c + 1] = bstart[c] + (m if c == OVERFLOW else (m + LANES - 1) // LANES)
    nbundles = bstart[OVERFLOW + 1]
    # each bundle's first contact (in colour order) and how many lanes it fills
    bfirst = np.empty(nbundles, np.int64)
    bcount = np.empty(nbundles, np.int64)
    for c in range(OVERFLOW + 1):
        for j in range(bstart[c], bstart[c + 1]):
            r = j - bstart[c]
            if c == OVERFLOW:
                bfirst[j] = start[c] + r
                bcount[j] = 1
            else:
                bfirst[j] = start[c] + r * LANES
                bcount[j] = min(LANES, start[c + 1] - bfirst[j])
    # the bodies' data the rows need, one cache line per body (gathered whole by ``gather_rows``), and the
    # dummy body of empty lanes (row NB: all zeros)
    com, vel, angvel, inv_mass, inv_inertia = bodies[0], bodies[2], bodies[3], bodies[4], bodies[5]
    kind, gravity_scale = bodies[7], bodies[14]
    # (not zeroed: every column of every row is written here, which spares a memset of the whole table)
    table = np.empty((NB + 1, ROW))
    for b in range(NB):
        table[b, TCX] = com[b, 0]
        table[b, TCY] = com[b, 1]
        table[b, TVX] = vel[b, 0]
        table[b, TVY] = vel[b, 1]
        table[b, TW] = angvel[b]
        table[b, TM] = inv_mass[b]
        table[b, TI] = inv_inertia[b]
        table[b, TG] = gravity_scale[b] if kind[b] == DYNAMIC else 0.0
    for f in range(ROW):
        table[NB, f] = 0.0
    # every lane of every bundle, empty ones included, is written by _prepare_bundle (in parallel, which also
    # spreads the first touch of fresh memory over the threads)
    rows = np.empty((nbundles, ROW_WIDTH, LANES), np.float32)
    body = np.empty((nbundles, 2, LANES), np.int64)
    move = np.empty((nbundles, 2, LANES), np.bool_)
    # only the arrays the rows need: every array a parallel loop receives costs compile time
    # (no shape with a tangent speed or rolling resistance, the usual case: empty tables, which the rows take
    # as zeros without looking up each contact's two shapes)
    materials = False
    for s in range(shapes[14].shape[0]):
        materials = materials or shapes[14][s] != 0.0 or shapes[15][s] != 0.0
    shape_data = (shapes[4], shapes[5], shapes[6], shapes[14] if materials else shapes[14][:0],
                  shapes[15] if materials else shapes[15][:0])
    contact_data = (keys, c_count, contacts[3], contacts[4], contacts[5], contacts[6], contacts[7], material)
    _prepare_all_rows(bstart, bfirst, bcount, perm, pair, table, shape_data, contact_data, rows, body, move,
                      friction_rule, restitution_rule, threads, fall)
    return perm, start, bstart, bfirst, pair, rows, body, move, bcount, solved, flags


# columns of prepare_stage's body table
TCX, TCY, TVX, TVY, TW, TM, TI, TG = range(8)


@pnjit
def _prepare_all_rows(bstart, bfirst, bcount, perm, pair, table, shapes, contacts, rows, body, move, friction_rule,
                      restitution_rule, threads, fall):
    """Every bundle, one share per thread (the parallel loop alone in its function: Numba analyses every
    statement of a function with a parallel loop, so keeping the rest outside saves compile time).

    Thread w's share is the one the solver gives it (``_sweep_share``): the w-th part of each colour's
    bundles, so the rows a thread writes here are the rows it reads first in the solve, from its own cache.
    Within a colour the contacts are in key order (``colour_contacts``), so the w-th part of every colour
    is about the w-th part of the keys, the contacts this thread's blocks of the narrow phase just wrote
    (``_narrow_blocks``), and of the bodies, which its integration passes move. Split into equal runs of
    bundles instead, each thread read the other core's contacts and wrote the other core's rows: the
    pyramids' prepare stage took 0.39 ms a step with two threads, against 0.27 ms for the same call repeated
    alone. The bundles are independent, so no split changes a result."""
    if chunk_count(perm.shape[0], threads) == 1:
        # (in this thread: launching a parallel loop for little work costs about 15 µs)
        _prepare_bundles(np.int64(0), np.int64(1), bstart, bfirst, bcount, perm, pair, table, shapes, contacts,
                         rows, body, move, friction_rule, restitution_rule, fall)
        return
    # (w as int64 here and literals nowhere: the loop index is typed int64, then uint64 in the parallel
    # function, and each type, like each literal, compiles the callee once more)
    for w in prange(threads):
        _prepare_bundles(np.int64(w), threads, bstart, bfirst, bcount, perm, pair, table, shapes, contacts, rows,
                         body, move, friction_rule, restitution_rule, fall)


@njit
def _prepare_bundles(w, parts, bstart, bfirst, bcount, perm, pair, table, shapes, contacts, rows, body, move,
                     friction_rule, restitution_rule, fall):
    """Part w of ``parts`` of every colour's bundles, the overflow colour's included (one call per thread:
    kept out of the parallel loop so every name in it is private, and the tuples' arrays are unpacked once)."""
    # borrowed views: the per-bundle functions below take no references (``borrowed``)
    shape_radius, shape_friction, shape_restitution, shape_tangent, shape_rolling = borrowed(shapes)
    keys, c_count, c_nimp, c_timp, c_normal, c_point, c_sep, c_material = borrowed(contacts)
    perm, pair, table, rows, body, move = borrowed((perm, pair, table, rows, body, move))
    NB = table.shape[0] - 1
    for c in range(OVERFLOW + 1):
        lo = bstart[c]
        n = bstart[c + 1] - lo
        for j in range(lo + w * n // parts, lo + (w + 1) * n // parts):
            _prepare_bundle(j, bfirst[j], bcount[j], perm, pair, table, shape_radius, shape_friction,
                            shape_restitution, shape_tangent, shape_rolling, keys, c_count, c_nimp, c_timp, c_normal,
                            c_point, c_sep, c_material, rows, body, move, friction_rule, restitution_rule, NB, fall)


@llvm_inline_njit
def _prepare_bundle(j, first, m, perm, pair, table, shape_radius, shape_friction, shape_restitution, shape_tangent,
                    shape_rolling, keys, c_count,
                    c_nimp, c_timp, c_normal, c_point, c_sep, c_material, rows, body, move, friction_rule,
                    restitution_rule, NB, fall):
    """Bundle j: lane q from contact perm[first + q] for q < m; lanes m … LANES − 1 are empty (the dummy
    body, all fields zero).

    The rows are computed in double precision from the world's state, ``LANES64`` lanes at a time (a part of
    the bundle), and rounded to the solver's single precision when stored. Within a part all lanes go at once,
    as the solver does: each lane's contact data is put into vectors, the bodies' rows are gathered from
    ``table``, and each field is computed and stored for the whole part. Lane arithmetic is the scalar IEEE
    arithmetic (``carom._simd``), so the rows are bitwise those of filling the lanes one by one; written lane
    by lane, each contact cost 40 scattered scalar stores and its own arithmetic, about 45 ns per two-point
    contact."""
    for q in range(LANES):
        if q >= m:
            body[j, 0, q] = NB
            body[j, 1, q] = NB
            move[j, 0, q] = False
            move[j, 1, q] = False
            continue
        i = first + q
        ba = pair[i, 0]
        bb = pair[i, 1]
        body[j, 0, q] = ba
        body[j, 1, q] = bb
        # a static or kinematic body (no inverse mass) is only read, never written
        move[j, 0, q] = table[ba, TM] > 0.0 or table[ba, TI] > 0.0
        move[j, 1, q] = table[bb, TM] > 0.0 or table[bb, TI] > 0.0
    # the first lane has the most points (colour_contacts): a bundle of one-point contacts has a second point
    # of all zeros, as do its one-point lanes otherwise (the solver's lane arithmetic turns them into no
    # impulse)
    two = m > 0 and c_count[perm[first]] == 2
    for h in range(PARTS):
        _prepare_part(j, h, first, m, two, perm, table, shape_radius, shape_friction, shape_restitution,
                      shape_tangent, shape_rolling, keys,
                      c_count, c_nimp, c_timp, c_normal, c_point, c_sep, c_material, rows, body, friction_rule,
                      restitution_rule, fall)


@inline_njit
def _prepare_part(j, h, first, m, two, perm, table, shape_radius, shape_friction, shape_restitution, shape_tangent,
                  shape_rolling, keys, c_count,
                  c_nimp, c_timp, c_normal, c_point, c_sep, c_material, rows, body, friction_rule, restitution_rule,
                  fall):
    """Lanes h·LANES64 … (h + 1)·LANES64 − 1 of bundle j, in double precision (``_prepare_bundle``)."""
    zero = splat64(0.0)
    one = splat64(1.0)
    nx = zero
    ny = zero
    mu = zero
    e = zero
    ts = zero
    rr = zero
    count = zero
    ra = zero
    rb = zero
    sep0 = zero
    sep1 = zero
    px0 = zero
    py0 = zero
    px1 = zero
    py1 = zero
    nimp0 = zero
    nimp1 = zero
    timp0 = zero
    timp1 = zero
    for q in range(LANES64):
        if h * LANES64 + q >= m:
            break
        k = perm[first + h * LANES64 + q]
        a = keys[k] >> KEY_SHIFT
        bsh = keys[k] & KEY_MASK
        nx = insert(nx, q, c_normal[k, 0])
        ny = insert(ny, q, c_normal[k, 1])
        # (Box2D v3.1's rules: the belts' speeds add up; the larger resistance acts at the larger radius)
        if shape_tangent.shape[0] > 0:
            ts = insert(ts, q, shape_tangent[a] + shape_tangent[bsh])
            rr = insert(rr, q, max(shape_rolling[a], shape_rolling[bsh]) * max(shape_radius[a], shape_radius[bsh]))
        if c_material.shape[0] > 0:
            # (the pre-solve hook's: the mixed values, changed for this step)
            mu = insert(mu, q, c_material[k, 0])
            e = insert(e, q, c_material[k, 1])
            ts = insert(ts, q, c_material[k, 2])
        else:
            mu = insert(mu, q, mix(shape_friction[a], shape_friction[bsh], friction_rule))
            e = insert(e, q, mix(shape_restitution[a], shape_restitution[bsh], restitution_rule))
        count = insert(count, q, c_count[k])
        ra = insert(ra, q, shape_radius[a])
        rb = insert(rb, q, shape_radius[bsh])
        sep0 = insert(sep0, q, c_sep[k, 0])
        px0 = insert(px0, q, c_point[k, 0, 0])
        py0 = insert(py0, q, c_point[k, 0, 1])
        nimp0 = insert(nimp0, q, c_nimp[k, 0])
        timp0 = insert(timp0, q, c_timp[k, 0])
        if c_count[k] == 2:
            sep1 = insert(sep1, q, c_sep[k, 1])
            px1 = insert(px1, q, c_point[k, 1, 0])
            py1 = insert(py1, q, c_point[k, 1, 1])
            nimp1 = insert(nimp1, q, c_nimp[k, 1])
            timp1 = insert(timp1, q, c_timp[k, 1])
    sa = gather_rows64(table, body, j, 0, h)
    sb = gather_rows64(table, body, j, 1, h)
    mA = sa[TM]
    iA = sa[TI]
    mB = sb[TM]
    iB = sb[TI]
    store_part(rows, j, MA, h, mA)
    store_part(rows, j, IA, h, iA)
    store_part(rows, j, MB, h, mB)
    store_part(rows, j, IB, h, iB)
    store_part(rows, j, NX, h, nx)
    store_part(rows, j, NY, h, ny)
    store_part(rows, j, MU, h, mu)
    store_part(rows, j, E, h, e)
    store_part(rows, j, TS, h, ts)
    store_part(rows, j, RR, h, rr)
    store_part(rows, j, RIMP, h, zero)
    store_part(rows, j, SOFT, h, select((count > 0.0) & ((mA == 0.0) | (mB == 0.0)), one, zero))
    store_part(rows, j, COUNT, h, count)
    _prepare_point(rows, j, h, P0, count > 0.0, sep0, px0, py0, nimp0, timp0, nx, ny, ra, rb, sa, sb, zero, fall)
    if two:
        _prepare_point(rows, j, h, P0 + POINT_WIDTH, count > 1.0, sep1, px1, py1, nimp1, timp1, nx, ny, ra, rb,
                       sa, sb, zero, fall)
    else:
        for f in range(POINT_WIDTH):
            store_part(rows, j, P0 + POINT_WIDTH + f, h, zero)


@inline_njit
def _prepare_point(rows, j, h, o, has, sep, px, py, nimp, timp, nx, ny, ra, rb, sa, sb, zero, fall):
    """The point whose fields start at o, for the lanes of ``has`` (the others: all zeros)."""
    hs = 0.5 * sep
    rax = px - hs * nx - sa[TCX]
    ray = py - hs * ny - sa[TCY]
    rbx = px + hs * nx - sb[TCX]
    rby = py + hs * ny - sb[TCY]
    mA = sa[TM]
    iA = sa[TI]
    mB = sb[TM]
    iB = sb[TI]
    rna = rax * ny - ray * nx
    rnb = rbx * ny - rby * nx
    kn = mA + mB + iA * rna * rna + iB * rnb * rnb
    # tangent t = (n.y, −n.x)
    rta = rax * (-nx) - ray * ny
    rtb = rbx * (-nx) - rby * ny
    kt = mA + mB + iA * rta * rta + iB * rtb * rtb
    # separation is tracked between the cores (surface point moved in by the radius): for a circle that is
    # its centre, which spinning does not move
    qax = rax - ra * nx
    qay = ray - ra * ny
    qbx = rbx + rb * nx
    qby = rby + rb * ny
    dvx = sb[TVX] - sb[TW] * rby - sa[TVX] + sa[TW] * ray
    dvy = sb[TVY] + sb[TW] * rbx - sa[TVY] - sa[TW] * rax
    store_part(rows, j, o + RNA, h, select(has, rna, zero))
    store_part(rows, j, o + RNB, h, select(has, rnb, zero))
    store_part(rows, j, o + RTA, h, select(has, rta, zero))
    store_part(rows, j, o + RTB, h, select(has, rtb, zero))
    store_part(rows, j, o + QAX, h, select(has, qax, zero))
    store_part(rows, j, o + QAY, h, select(has, qay, zero))
    store_part(rows, j, o + QBX, h, select(has, qbx, zero))
    store_part(rows, j, o + QBY, h, select(has, qby, zero))
    store_part(rows, j, o + ADJ, h, select(has, sep - ((qbx - qax) * nx + (qby - qay) * ny), zero))
    # (the masked-out lanes divide 1 by 1: no division by zero, which NumPy warns of as plain Python)
    nok = has & (kn > 0.0)
    tok = has & (kt > 0.0)
    one = splat64(1.0)
    store_part(rows, j, o + NMASS, h, select(nok, 1.0 / select(nok, kn, one), zero))
    store_part(rows, j, o + TMASS, h, select(tok, 1.0 / select(tok, kt, one), zero))
    store_part(rows, j, o + NIMP, h, select(has, nimp, zero))
    store_part(rows, j, o + TIMP, h, select(has, timp, zero))
    store_part(rows, j, o + STEPN, h, zero)
    store_part(rows, j, o + STEPT, h, zero)
    store_part(rows, j, o + RELV, h, select(has, _impact_speed(dvx * nx + dvy * ny, sep, sa, sb, nx, ny, fall), zero))


@inline_njit
def _impact_speed(vn, sep, sa, sb, nx, ny, fall):
    """The normal speed at which a point approaching at vn across a gap sep ≥ 0 will meet, gravity acting:
    the restitution of the step answers it (``_restitute``).

    Measured at the start of the step (as Box2D does), a falling ball's approach missed what gravity adds
    before it meets the ground within the step, up to g·dt: with e = 0.8 it rebounded 4-15 % below e² of its
    height. With a = (g_B − g_A)·n the change of the normal speed under the bodies' gravity (each scaled,
    none for a static or kinematic body), the gap closes in about t = sep / −vn (at most dt), and the speed
    at the meeting is vn + a·t. (The ballistic −√(vn² − 2·a·sep) gave the same bounces to 0.1 % and cost a
    square root per point, a tenth of the prepare stage.) Points that touch already (sep ≤ 0) or do not
    approach keep vn."""
    gx, gy, dt = fall
    zero = splat64(0.0)
    a = (sb[TG] - sa[TG]) * (gx * nx + gy * ny)
    closing = (vn < zero) & (sep > zero)
    t = vmin(select(closing, sep, zero) / select(closing, -vn, splat64(1.0)), splat64(dt))
    impact = vn + vmin(a, zero) * t
    return select(closing, impact, vn)


@inline_njit
def _bundle_frame(rows, j):
    """(inverse masses and inertias m = (1/mA, 1/IA, 1/mB, 1/IB), normal x, normal y) of bundle j's lanes."""
    m = (load(rows, j, MA), load(rows, j, IA), load(rows, j, MB), load(rows, j, IB))
    return m, load(rows, j, NX), load(rows, j, NY)


@inline_njit
def _bundle_points(rows, j):
    """How many points bundle j solves: its first lane's count, the largest (``colour_contacts``)."""
    return np.int64(rows[j, COUNT, 0])


@inline_njit
def _arms(rows, j, o, tangent):
    """The lever arms (rA × d, rB × d) of the point whose fields start at o, for d the normal or the
    tangent."""
    if tangent:
        return load(rows, j, o + RTA), load(rows, j, o + RTB)
    return load(rows, j, o + RNA), load(rows, j, o + RNB)


@njit
def _speed_along(v, dx, dy, ka, kb):
    """Speed of B's anchor relative to A's along d = (dx, dy), for v = (vA, ωA, vB, ωB) and lever arms
    ka = rA × d, kb = rB × d: ((vB + ωB × rB) − (vA + ωA × rA))·d = (vB − vA)·d + ωB·kb − ωA·ka, since
    (ω × r)·d = ω (r × d). With the arms precomputed per point this is 9 operations, 4 deep from v (the
    anchor form took 11, 6 deep): the sweeps are bound by each bundle's chain of dependent operations."""
    return ((v[3] - v[0]) * dx + (v[4] - v[1]) * dy) + (v[5] * kb - v[2] * ka)


@njit
def _push_along(v, m, lam, dx, dy, ka, kb):
    """v after the impulse λ·d at the anchors: −λd on A, +λd on B (v ∓= λ d / m, ω ∓= λ (r × d) / I), for
    m = (1/mA, 1/IA, 1/mB, 1/IB). The factors in brackets do not depend on λ, so each new velocity is two
    operations after λ."""
    return (v[0] - lam * (m[0] * dx), v[1] - lam * (m[0] * dy), v[2] - lam * (m[1] * ka),
            v[3] + lam * (m[2] * dx), v[4] + lam * (m[2] * dy), v[5] + lam * (m[3] * kb))


@inline_njit
def _gather_velocities(state, body, j):
    """The lanes' body rows (A, B) and their velocities v = (vA.x, vA.y, ωA, vB.x, vB.y, ωB)."""
    sa = gather_rows(state, body, j, 0)
    sb = gather_rows(state, body, j, 1)
    return sa, sb, (sa[VX], sa[VY], sa[W], sb[VX], sb[VY], sb[W])


@inline_njit
def _scatter_velocities(state, body, move, j, sa, sb, v):
    """Write each lane's new velocity back to its bodies, except for bodies that are only read (the first
    four columns of each row: v, ω, and DPX as it was gathered)."""
    scatter_rows(state, body, move, j, 0, (v[0], v[1], v[2], sa[DPX]))
    scatter_rows(state, body, move, j, 1, (v[3], v[4], v[5], sb[DPX]))


@inline_njit
def _warm_start(rows, j, state, body, move):
    """Apply last step's impulses (an empty second point has zero impulses and changes nothing)."""
    m, nx, ny = _bundle_frame(rows, j)
    points = _bundle_points(rows, j)
    sa, sb, v = _gather_velocities(state, body, j)
    for p in range(points):
        o = P0 + p * POINT_WIDTH
        nimp = load(rows, j, o + NIMP)
        timp = load(rows, j, o + TIMP)
        # P = nimp·n + timp·t with t = (n.y, −n.x); r × P = nimp (r × n) + timp (r × t)
        px = nimp * nx + timp * ny
        py = nimp * ny - timp * nx
        ra = nimp * load(rows, j, o + RNA) + timp * load(rows, j, o + RTA)
        rb = nimp * load(rows, j, o + RNB) + timp * load(rows, j, o + RTB)
        v = (v[0] - m[0] * px, v[1] - m[0] * py, v[2] - m[1] * ra, v[3] + m[2] * px, v[4] + m[2] * py,
             v[5] + m[3] * rb)
    _scatter_velocities(state, body, move, j, sa, sb, v)


@inline_njit
def _solve_contact(rows, j, state, body, move, use_bias, rolling, inv_h, soft, stiff, reverse):
    """The contacts of bundle j: normal points (soft, biased when ``use_bias``), then in the relax sweep
    Coulomb friction and (``rolling``: a step with rolling resistance) rolling resistance; the points in reverse
    order when ``reverse`` (odd substeps: module docstring)."""
    f, sa, sb, v = _solve_setup(rows, j, state, body, soft, stiff)
    points = _bundle_points(rows, j)
    for i in range(points):
        v = _solve_normal(rows, j, _point_field(i, points, reverse), f, v, use_bias, inv_h)
    if not use_bias:
        for i in range(points):
            v = _solve_friction(rows, j, _point_field(i, points, reverse), f, v)
    if rolling:
        v = _solve_rolling(rows, j, f, v, points)
    _scatter_velocities(state, body, move, j, sa, sb, v)


@inline_njit
def _point_field(i, points, reverse):
    """Where the fields of a bundle's i-th point to solve start: point i, or with ``reverse`` point
    points − 1 − i."""
    return P0 + ((points - 1 - i) if reverse else i) * POINT_WIDTH


@inline_njit
def _solve_rolling(rows, j, f, v, points):
    """Rolling resistance (Box2D v3.1), in the relax sweep: an angular impulse λ = −(ωB − ωA)/(1/IA + 1/IB)
    that stops the bodies' relative spin, clamped to ± the coefficient × the larger radius × the normal
    impulse of the contact (a torque bounded by the normal force, as friction's force is). Only in steps
    with some rolling resistance (``ROLLING_RELAX``), and there bundles in which no lane has any are skipped."""
    rr = load(rows, j, RR)
    any_rr = False
    for q in range(LANES):
        any_rr = any_rr or lane(rr, q) != 0.0
    if not any_rr:
        return v
    m = f[0]
    total = load(rows, j, P0 + NIMP)
    for p in range(1, points):
        total = total + load(rows, j, P0 + p * POINT_WIDTH + NIMP)
    old = load(rows, j, RIMP)
    # the rolling mass 1/(1/IA + 1/IB), here and not in the rows: only bundles with rolling resistance use it
    k = m[1] + m[3]
    turns = k > 0.0
    lam = select(turns, (v[2] - v[5]) / select(turns, k, splat(1.0)), splat(0.0))
    limit = rr * total
    new = vmin(vmax(old + lam, -limit), limit)
    lam = new - old
    store(rows, j, RIMP, new)
    return (v[0], v[1], v[2] - m[1] * lam, v[3], v[4], v[5] + m[3] * lam)


@inline_njit
def _solve_two(rows, j, state, body, move, use_bias, rolling, inv_h, soft, stiff, reverse):
    """Bundles j and j + 1 of one parallel colour (disjoint bodies), their steps interleaved.

    Each point's impulse is a chain of about a dozen dependent operations from the bundle's velocities to
    its new velocities, and a bundle's points follow one another, so one bundle at a time leaves the
    processor waiting on latencies; two independent chains side by side fill those gaps. A bundle with
    fewer points solves the other's extra point as well: its fields are all zeros there (``_prepare_part``),
    which gives a zero impulse.

    Copied into the caller's Numba IR (``inline_njit``), unlike ``_one``: inlined by LLVM instead, the biased
    and relax sweeps took 3-4% longer on large_pyramid."""
    f0, sa0, sb0, v0 = _solve_setup(rows, j, state, body, soft, stiff)
    f1, sa1, sb1, v1 = _solve_setup(rows, j + 1, state, body, soft, stiff)
    points = max(_bundle_points(rows, j), _bundle_points(rows, j + 1))
    for i in range(points):
        o = _point_field(i, points, reverse)
        v0 = _solve_normal(rows, j, o, f0, v0, use_bias, inv_h)
        v1 = _solve_normal(rows, j + 1, o, f1, v1, use_bias, inv_h)
    if not use_bias:
        for i in range(points):
            o = _point_field(i, points, reverse)
            v0 = _solve_friction(rows, j, o, f0, v0)
            v1 = _solve_friction(rows, j + 1, o, f1, v1)
    if rolling:
        v0 = _solve_rolling(rows, j, f0, v0, points)
        v1 = _solve_rolling(rows, j + 1, f1, v1, points)
    _scatter_velocities(state, body, move, j, sa0, sb0, v0)
    _scatter_velocities(state, body, move, j + 1, sa1, sb1, v1)


@inline_njit
def _solve_setup(rows, j, state, body, soft, stiff):
    """Bundle j's fixed data for a solve: (masses, normal, soft constraint coefficients of each lane, the
    bodies' relative position change and rotations), the gathered body rows and the velocities."""
    m, nx, ny = _bundle_frame(rows, j)
    stiff_lane = load(rows, j, SOFT) != 0.0
    br = select(stiff_lane, splat(stiff[0]), splat(soft[0]))
    ms = select(stiff_lane, splat(stiff[1]), splat(soft[1]))
    isc = select(stiff_lane, splat(stiff[2]), splat(soft[2]))
    sa, sb, v = _gather_velocities(state, body, j)
    dpx = sb[DPX] - sa[DPX]
    dpy = sb[DPY] - sa[DPY]
    return (m, nx, ny, br, ms, isc, dpx, dpy, sa[DC], sa[DS], sb[DC], sb[DS]), sa, sb, v


@inline_njit
def _solve_normal(rows, j, o, f, v, use_bias, inv_h):
    """The normal impulse of the point whose fields start at o (soft, biased when ``use_bias``): v after it."""
    m, nx, ny, br, ms, isc, dpx, dpy, ca, sna, cb, snb = f
    zero = splat(0.0)
    one = splat(1.0)
    # current separation from the position deltas (core anchors turned by each body's rotation so far)
    qax = load(rows, j, o + QAX)
    qay = load(rows, j, o + QAY)
    qbx = load(rows, j, o + QBX)
    qby = load(rows, j, o + QBY)
    prax = ca * qax - sna * qay
    pray = sna * qax + ca * qay
    prbx = cb * qbx - snb * qby
    prby = snb * qbx + cb * qby
    s = (dpx + prbx - prax) * nx + (dpy + prby - pray) * ny + load(rows, j, o + ADJ)
    ahead = s > 0.0
    if use_bias:
        bias = select(ahead, s * splat(inv_h), vmax(br * s, splat(-CONTACT_PUSH_MAX_VELOCITY)))
        mscale = select(ahead, one, ms)
        iscale = select(ahead, zero, isc)
    else:
        bias = select(ahead, s * splat(inv_h), zero)
        mscale = one
        iscale = zero
    ka, kb = _arms(rows, j, o, False)
    vn = _speed_along(v, nx, ny, ka, kb)
    old = load(rows, j, o + NIMP)
    lam = -load(rows, j, o + NMASS) * mscale * (vn + bias) - iscale * old
    new = vmax(old + lam, zero)
    lam = new - old
    store(rows, j, o + NIMP, new)
    if not use_bias:
        # the relax sweep is the substep's last: add the impulse the point ends it with to the step's
        # (``STEPN``: the velocity change a point makes in a substep is its accumulated impulse at the end, as
        # the warm start applies the previous substep's and the sweeps add to it, so the step's impulse is
        # their sum: m·g·dt for a box at rest on the ground, whatever the substep count; the accumulated
        # impulse itself, which warm starts the next step, is one substep's)
        store(rows, j, o + STEPN, load(rows, j, o + STEPN) + new)
    return _push_along(v, m, lam, nx, ny, ka, kb)


@inline_njit
def _solve_friction(rows, j, o, f, v):
    """The Coulomb friction impulse of the point whose fields start at o (in the relax sweep, the only one
    that solves friction): v after it; the point's impulse at the end is added to the step's tangent
    impulse, ``STEPT``."""
    m, nx, ny = f[0], f[1], f[2]
    tx = ny
    ty = -nx
    ka, kb = _arms(rows, j, o, True)
    vt = _speed_along(v, tx, ty, ka, kb) - load(rows, j, TS)
    old = load(rows, j, o + TIMP)
    lam = -load(rows, j, o + TMASS) * vt
    limit = load(rows, j, MU) * load(rows, j, o + NIMP)
    new = vmin(vmax(old + lam, -limit), limit)
    lam = new - old
    store(rows, j, o + TIMP, new)
    store(rows, j, o + STEPT, load(rows, j, o + STEPT) + new)
    return _push_along(v, m, lam, tx, ty, ka, kb)


@inline_njit
def _restitute(rows, j, state, body, move):
    """One restitution sweep over bundle j, in a step in which some point may bounce (``step_sweeps``).

    Every point that took an impulse in the step takes part, with a target for its normal speed from its
    normal speed v_n⁰ at the start of the step (``RELV``; for a point closing a gap, at the meeting,
    ``_impact_speed``): a point that approached (v_n⁰ < 0) is to separate at e·|v_n⁰|,
    one that was separating may come back at no more than v_n⁰ (λ = −m_n (v_n + e·v_n⁰), or + v_n⁰ when
    v_n⁰ ≥ 0), and the point's impulse over the whole step (``STEPN``) stays ≥ 0: the sweeps share out the
    step's impulses again, on top of what the substeps gave (the inelastic answer).

    Why: this is the restitution of the step as one collision of the group of bodies that meet in it. When
    the targets are met and only points that push (impulse above 0) are at their targets, the kinetic energy
    changes by Σ λ_total·(v_n + v_n⁰)/2 over the points, which is (1 − e)·λ·v_n⁰/2 ≤ 0 at a point that
    approached and 0 at one that was separating: restitution 1 keeps the energy, less loses some, and none
    adds to it. For one pair of bodies it is the closed form (module docstring).
    - Points that do not bounce take part because they keep the bodies they hold from being pushed through
      them: a ball pressed against a wall by another has no approach at the wall; left out of the sweeps,
      the other ball's bounce pushed it into the wall at half the speed and both left at half of it (half the
      energy of that collision lost). Held by the wall, it stays and the other leaves with the whole speed,
      as a sequence of two elastic collisions gives. 50 elastic balls in a box kept 72 % of their energy
      over 20 s with only the bouncing points in the sweeps (Box2D v3's scheme: 61 %), 99.9 % now.
    - A point that was separating aims at its own speed reversed, not at 0: a ball struck while it still
      moved away from a neighbour it had just bounced off, held to that neighbour at 0, took it along as a
      block, and the struck ball's bounce off the block (its target taken from its approach to the ball, not
      to the block) added energy (0.9 % in the gas).
    - The impulse kept ≥ 0 is the step's, not the last substep's (the accumulated impulse that warm starts
      the next step, which follows it and stays ≥ 0): clamped at the last substep's, a point that took most
      of its impulse in an earlier substep could not give it back when a neighbour's bounce asked it to, and
      two balls striking a third from two sides added up to 0.3 % of the gas's energy.
    - A point that approached slower than RESTITUTION_THRESHOLD and meets the group takes part with its
      restitution as well: with a target of 0 it was an inelastic collision inside the group.
    - What it does not do: hand a strike down a row of touching bodies one by one. Their points meet in one
      step, and the group's collision is the first body's with the rest as blocks (Newton's cradle with
      touching balls: the first ball back at a third of its speed, the last two out at two thirds; pymunk
      gives the same); balls a fifth of their radius apart meet in steps of their own and pass it on.

    Which lanes take part: those with a point that may bounce (restitution, approached, took an impulse), and
    those with a body that an earlier restitution impulse of the step moved (marked in the body's ``MOVED``
    column, 0 from the start of the step, ``_load_body``): the sweeps reach out from the bouncing points
    through the bodies they move. Other lanes keep what the substeps gave, and a bundle without any is left
    alone: a pyramid (restitution 0) resting beside 40 elastic balls bouncing on the ground had its 10,000
    contacts swept 8 more times in every step with an impact (the solve took about 30 % longer), where only
    the balls' contacts can change. (With only the points faster than the threshold to start from, the
    gas's collisions slower than 1 m/s were inelastic and it kept 98.5 %.)
    """
    points = _bundle_points(rows, j)
    e = load(rows, j, E)
    zero = splat(0.0)
    one = splat(1.0)
    on = zero
    for p in range(points):
        o = P0 + p * POINT_WIDTH
        on = select((e != 0.0) & (load(rows, j, o + RELV) < 0.0) & (load(rows, j, o + STEPN) > 0.0), one, on)
    any_on = False
    for q in range(LANES):
        any_on = (any_on or lane(on, q) != 0.0 or state[body[j, 0, q], MOVED] != 0.0
                  or state[body[j, 1, q], MOVED] != 0.0)
    if not any_on:
        return
    m, nx, ny = _bundle_frame(rows, j)
    sa, sb, v = _gather_velocities(state, body, j)
    on = (on != 0.0) | (sa[MOVED] != 0.0) | (sb[MOVED] != 0.0)
    moved = zero
    for p in range(points):
        o = P0 + p * POINT_WIDTH
        relv = load(rows, j, o + RELV)
        ka, kb = _arms(rows, j, o, False)
        vn = _speed_along(v, nx, ny, ka, kb)
        old = load(rows, j, o + STEPN)
        lam = -load(rows, j, o + NMASS) * (vn + select(relv < zero, e * relv, relv))
        new = select(on & (old > zero), vmax(old + lam, zero), old)
        lam = new - old
        store(rows, j, o + STEPN, new)
        store(rows, j, o + NIMP, vmax(load(rows, j, o + NIMP) + lam, zero))
        moved = select(lam != zero, one, moved)
        v = _push_along(v, m, lam, nx, ny, ka, kb)
    _scatter_velocities(state, body, move, j, sa, sb, v)
    for q in range(LANES):
        if lane(moved, q) != 0.0:
            if move[j, 0, q]:
                state[body[j, 0, q], MOVED] = 1.0
            if move[j, 1, q]:
                state[body[j, 1, q], MOVED] = 1.0


WARM, BIASED, RELAX, RESTITUTE = 0, 1, 2, 3
#: the restitution pass of a step in which no point may bounce (``step_sweeps``): only the impulses and hits go
#: back to the contact table
WRITE_BACK = 5
#: the relax sweep of a step in which some contact has rolling resistance (``step_sweeps``): the task code of
#: the relax sweep then, so that steps without any do not look for it bundle by bundle
ROLLING_RELAX = 4

#: restitution sweeps of a step in which some point may bounce (``step_sweeps``)
RESTITUTION_SWEEPS = 8


@njit
def step_sweeps(rows):
    """(how many restitution sweeps the step makes, the relax sweep's task code), from one look at the rows:
    RESTITUTION_SWEEPS if some point may bounce (restitution above 0, approaching faster than
    RESTITUTION_THRESHOLD), else 1 (a pass that only writes the impulses back, ``WRITE_BACK``); and
    ROLLING_RELAX if some contact has rolling resistance, else RELAX.

    Why more than Box2D's one: one sweep answers each point in turn, so where several bodies meet in one step
    a later point undoes an earlier one's bounce (a ball pressed against a wall by another bounced off the
    wall, then the other ball's point pushed it back into the wall); the sweeps let the points of a group
    agree (``_restitute``). 50 elastic balls in a box kept 46 % of their energy over 20 s with one sweep of
    the bouncing points only (Box2D v3 61 %), 72 % with 8, 99.9 % with 8 over the bouncing points and the
    points of the bodies they move (``_restitute``).
    """
    bounces = 1
    relax = RELAX
    for j in range(rows.shape[0]):
        for q in range(LANES):
            if rows[j, E, q] != 0.0 and (rows[j, P0 + RELV, q] <= -RESTITUTION_THRESHOLD
                                         or rows[j, P0 + POINT_WIDTH + RELV, q] <= -RESTITUTION_THRESHOLD):
                bounces = RESTITUTION_SWEEPS
            if rows[j, RR, q] != 0.0:
                relax = ROLLING_RELAX
    return bounces, relax


#: a parallel loop hands each thread this many chunks (for balance); a chunk is one call that runs a plain
#: loop, so per-item costs (array reference counts on calls) are paid once per chunk, not per contact
CHUNKS_PER_THREAD = 4
#: below this many items a loop runs in the calling thread: launching threads costs more than it saves
PARALLEL_MIN_ITEMS = 256


@njit
def chunk_count(n, threads):
    """How many chunks a parallel loop over n independent items gets (1: run it in this thread). Any split
    gives the same result, since the items are independent; only the speed depends on it. ``threads`` is
    ``numba.get_num_threads()``, passed in from Python (reading it inside a kernel defeats the disk cache)."""
    if threads == 1 or n < PARALLEL_MIN_ITEMS:
        return 1
    return min(n, threads * CHUNKS_PER_THREAD)


@njit
def _sweep_range(task, reverse, lo, hi, rows, body, move, state, inv_h, soft, stiff, out, paired):
    """Bundles lo … hi − 1, one after the other; with ``paired`` (a parallel colour, whose bundles share no
    body) the solves go two bundles at a time (``_solve_two``); ``reverse``: solve each contact's points in the
    reverse order (odd substeps: module docstring)."""
    # borrowed views: the per-bundle functions below take no references (``borrowed``)
    rows, body, move, state = borrowed((rows, body, move, state))
    out = borrowed(out)
    j = lo
    if paired and (task == BIASED or task == RELAX or task == ROLLING_RELAX):
        while j + 1 < hi:
            _solve_two(rows, j, state, body, move, task == BIASED, task == ROLLING_RELAX, inv_h, soft, stiff,
                       reverse)
            j += 2
    while j < hi:
        if task != WRITE_BACK:
            _one(task, reverse, rows, j, state, body, move, inv_h, soft, stiff)
        if task == RESTITUTE or task == WRITE_BACK:
            _write_back(rows, j, out)
        j += 1


@inline_njit
def _write_back(rows, j, out):
    """Bundle j's impulses back to the contact table, and each point's approach speed −v_n before the solve
    (``approach``: ``World.contact_data``, and the hit events, which ``_step.event_rows`` finds from it and the
    step's impulses only when someone asks for them; a missing second point's row holds −0)."""
    perm, first, count, c_nimp, c_timp, c_step, approach = out
    p1 = P0 + POINT_WIDTH
    for q in range(count[j]):
        k = perm[first[j] + q]
        # stored from the bundle's own fields, with no read of the contact table, whose rows this visits out of
        # order (the hits are found after the step, when asked for, from these and the table)
        c_nimp[k, 0] = rows[j, P0 + NIMP, q]
        c_timp[k, 0] = rows[j, P0 + TIMP, q]
        c_nimp[k, 1] = rows[j, p1 + NIMP, q]
        c_timp[k, 1] = rows[j, p1 + TIMP, q]
        c_step[k, 0, 0] = rows[j, P0 + STEPN, q]
        c_step[k, 0, 1] = rows[j, P0 + STEPT, q]
        c_step[k, 1, 0] = rows[j, p1 + STEPN, q]
        c_step[k, 1, 1] = rows[j, p1 + STEPT, q]
        approach[k, 0] = -np.float64(rows[j, P0 + RELV, q])
        approach[k, 1] = -np.float64(rows[j, p1 + RELV, q])


@llvm_inline_njit
def _one(task, reverse, rows, j, state, body, move, inv_h, soft, stiff):
    """Bundle j's part of the sweep ``task`` (one bundle at a time). Typed once and inlined by LLVM, as is
    ``_prepare_bundle``: copied into the caller's Numba IR they cost about 4.5 s of cold compile together, and
    they run as fast either way."""
    if task == WARM:
        _warm_start(rows, j, state, body, move)
    elif task == RESTITUTE:
        _restitute(rows, j, state, body, move)
    else:
        _solve_contact(rows, j, state, body, move, task == BIASED, task == ROLLING_RELAX, inv_h, soft, stiff,
                       reverse)


# Parallel loops below only call a function per item: Numba 0.6x miscompiled an in-place update of a tuple
# member array inside a prange body (``angle[b] += …`` was applied twice), and a call keeps every name private.

#: what a body's row of the step table (``kick``, built by the first pass of the step) holds: the velocity
#: change of one substep from gravity and the applied force and torque (KDVX, KDVY, KDW), the damping divisors
#: 1 + h·c (KLDIV, KADIV: 1 when there is no damping) and, for a body the solver holds, the velocity its
#: contacts started the substep from (KV0X, KV0Y, KW0: ``_integrate_velocity``). The body's flags (the sum of
#: its MOVE_* bits) are a byte each in an array of their own, ``flags``: the position pass reads them and not
#: the step table (a cache line per body)
KDVX, KDVY, KDW, KLDIV, KADIV, KW0, KV0X, KV0Y = range(8)
KICK_WIDTH = 8      # one cache line per body

#: the integrators' passes: the first of the step (fill the rows, the step table, then integrate velocities),
#: velocities, positions
FIRST_PASS, VELOCITY_PASS, POSITION_PASS = 0, 1, 2


@njit
def _integrate_range(task, lo, hi, state, fstate, kick, flags, solved, motion, dangle, rot, gx, gy, h, max_w):
    """One pass of the integrators over bodies lo … hi − 1 (``state`` has a row more than there are bodies:
    the dummy body of empty bundle lanes).

    The first pass of the step fills each body's rows of ``state`` and ``fstate`` from the world's velocities,
    and its row of the step table ``kick`` and its ``flags`` (``_fill_kick``), which the later passes read
    instead of the body arrays: a substep's velocity pass reads one cache line per body where it read eleven
    arrays. The velocity change is precomputed as the same double-precision value the sum used, so
    the result is bitwise that of computing it every substep. With borrowed views, a velocity pass over the
    large pyramid's 5,050 boxes takes about 20 µs (180 µs before: six atomic reference counts per body)."""
    if task == FIRST_PASS:
        _fill_kick(lo, hi, state, fstate, kick, flags, solved, motion, gx, gy, h)
    # borrowed views: the per-body functions below take no references (``borrowed``)
    state, fstate, kick, flags, dangle = borrowed((state, fstate, kick, flags, dangle))
    if task == POSITION_PASS:
        for b in range(lo, hi):
            if flags[b] & MOVE_POSITION:
                _integrate_position(b, state, fstate, kick, flags, dangle, h, max_w)
        _rotations(lo, hi, dangle, fstate, rot)
    else:
        carry = task == VELOCITY_PASS
        for b in range(lo, hi):
            if flags[b] & MOVE_VELOCITY:
                _integrate_velocity(b, state, fstate, kick, flags, h, max_w, carry)


@njit
def _fill_kick(lo, hi, state, fstate, kick, flags, solved, motion, gx, gy, h):
    """Bodies lo … hi − 1: their rows of ``state`` and ``fstate`` at the start of the step (``_load_body``) and
    of the step table (``_integrate_range``)."""
    (inv_mass, inv_inertia, kind, body_alive, force, torque, lin_damping, ang_damping, gravity_scale, asleep, vel,
     angvel, locks) = motion
    for b in range(lo, hi):
        # a locked axis (``Body.lock_x``, ``lock_y``) starts at 0 and gets no gravity or force along it
        fx = 0.0 if locks[b] & LOCK_X else 1.0
        fy = 0.0 if locks[b] & LOCK_Y else 1.0
        _load_body(b, state, fstate, fx * vel[b, 0], fy * vel[b, 1], angvel[b])
        kick[b, KDVX] = fx * h * (gx * gravity_scale[b] + inv_mass[b] * force[b, 0])
        kick[b, KDVY] = fy * h * (gy * gravity_scale[b] + inv_mass[b] * force[b, 1])
        kick[b, KDW] = h * inv_inertia[b] * torque[b]
        # (x / 1.0 is x exactly: without damping the division is skipped, with the same result)
        kick[b, KLDIV] = 1.0 + h * lin_damping[b]
        kick[b, KADIV] = 1.0 + h * ang_damping[b]
        moving = body_alive[b] and not asleep[b]
        bits = 0
        if moving and kind[b] == DYNAMIC:
            bits += MOVE_VELOCITY
        if moving and kind[b] != STATIC:
            bits += MOVE_POSITION
        if solved[b]:
            bits += MOVE_SOLVED
        if locks[b] & LOCK_X:
            bits += MOVE_LOCK_X
        if locks[b] & LOCK_Y:
            bits += MOVE_LOCK_Y
        flags[b] = bits


@inline_njit
def _integrate_velocity(b, state, fstate, kick, flags, h, max_w, carry):
    """Body b's velocity integrated over a substep (gravity, force, damping, the speed limits); for a body the
    solver holds, then the warm start of the substep's contacts: with ``carry`` (every substep but the first)
    the contacts' whole velocity change over the substep before.

    Why that is the warm start: the contact impulses a substep applies to a body add up to M⁻¹Jᵀλ over its
    contacts, λ each contact's accumulated impulse at the end of the substep (the warm start applies the λ it
    started with, the solve and relax sweeps add to it). The next substep's warm start applies exactly those λ
    again through the same Jacobians (fixed for the step), so it adds the same velocity change, which is the
    body's velocity at the end of the substep less the one its contacts started from (KV0X, KV0Y, KW0, kept
    here). The difference of two single-precision velocities is exact in double precision. This replaces a
    sweep over all contacts in every substep but the first (whose λ come from the last step, matched by
    feature id) with a few operations per body."""
    vx, vy, w = _velocity(b, state, fstate, flags)
    solved = flags[b] & MOVE_SOLVED
    cvx = cvy = cw = 0.0
    if carry and solved:
        cvx = vx - kick[b, KV0X]
        cvy = vy - kick[b, KV0Y]
        cw = w - kick[b, KW0]
    vx = vx + kick[b, KDVX]
    vy = vy + kick[b, KDVY]
    w = w + kick[b, KDW]
    # the divisions and the square root only where they can change something (x / 1.0 is x exactly, and
    # √s > MAX implies s > MAX², √ being correctly rounded and monotonic): bitwise the same, at a fraction of
    # the cost (three divisions and a square root per body per substep were half of this loop)
    if kick[b, KLDIV] != 1.0:
        vx /= kick[b, KLDIV]
        vy /= kick[b, KLDIV]
    if kick[b, KADIV] != 1.0:
        w /= kick[b, KADIV]
    sp2 = vx * vx + vy * vy
    if sp2 > MAX_TRANSLATION_SPEED * MAX_TRANSLATION_SPEED:
        sp = math.sqrt(sp2)
        if sp > MAX_TRANSLATION_SPEED:
            vx *= MAX_TRANSLATION_SPEED / sp
            vy *= MAX_TRANSLATION_SPEED / sp
    # the rotation cap holds for the whole step (MAX_ROTATION per step, as Box2D's): a contact found at the
    # start of the step stays valid only while its bodies turn little, and a cap per substep let a thin box
    # spin a quarter turn per substep and cross a wall between two steps without any contact
    if abs(w) > max_w:
        w = max_w if w > 0.0 else -max_w
    # each body's velocity is written in the one row ``_velocity`` reads, so a body the solver holds (most
    # bodies of a pile) reads and writes only its ``fstate`` row and its step-table row here
    if not solved:
        state[b, VX] = vx
        state[b, VY] = vy
        state[b, W] = w
        return
    # where the substep's contacts start from: the velocity as the sweeps see it, rounded to single precision
    # here (the row is then written once, with the warm start when ``carry``)
    vx = np.float64(np.float32(vx))
    vy = np.float64(np.float32(vy))
    w = np.float64(np.float32(w))
    kick[b, KV0X] = vx
    kick[b, KV0Y] = vy
    kick[b, KW0] = w
    if carry:
        vx += cvx
        vy += cvy
        w += cw
    fstate[b, VX] = vx
    fstate[b, VY] = vy
    fstate[b, W] = w


@inline_njit
def _set_velocity(b, state, fstate, vx, vy, w):
    """Body b's velocity (v, ω) in both rows (rounded in ``fstate``)."""
    state[b, VX] = vx
    state[b, VY] = vy
    state[b, W] = w
    fstate[b, VX] = vx
    fstate[b, VY] = vy
    fstate[b, W] = w


@inline_njit
def _load_body(b, state, fstate, vx, vy, w):
    """Body b's rows at the start of the step: velocity (v, ω), no position change, no rotation (cos 1,
    sin 0); in ``fstate`` the same in single precision."""
    _set_velocity(b, state, fstate, vx, vy, w)
    for f in range(DPX, STATE_WIDTH):
        state[b, f] = 0.0
        fstate[b, f] = 0.0
    state[b, DC] = 1.0
    fstate[b, DC] = 1.0


@inline_njit
def _velocity(b, state, fstate, flags):
    """Body b's velocity (v, ω): the solver's, in single precision, when a contact acts on it (MOVE_SOLVED),
    else the double-precision one, which a body in free flight keeps."""
    if flags[b] & MOVE_SOLVED:
        return np.float64(fstate[b, VX]), np.float64(fstate[b, VY]), np.float64(fstate[b, W])
    return state[b, VX], state[b, VY], state[b, W]


@inline_njit
def _integrate_position(b, state, fstate, kick, flags, dangle, h, max_w):
    """Body b's position and angle changes so far in the step, advanced over a substep. The body's centre and
    angle themselves change once, by the sums, after the last substep (``solve_stage``): the sweeps read only
    the changes, and a pass that wrote the centre and the angle too read and wrote 24 bytes more per body.

    The speed caps apply here too, to the velocity the substep moves with, after the contacts changed it (as
    in Box2D): capped only before the solve, a thin box that hit a wall's corner at 100 m/s turned 1.3 rad in
    a step and swung through the wall. A capped velocity is written back; for a body the solver holds, the
    start of its contacts' velocity change (KV0X …) moves by the same amount, so that the cap is not taken
    for a contact impulse and applied again by the next substep's warm start (``_integrate_velocity``)."""
    vx, vy, w = _velocity(b, state, fstate, flags)
    if (abs(w) > max_w or vx * vx + vy * vy > MAX_TRANSLATION_SPEED * MAX_TRANSLATION_SPEED
            or flags[b] & (MOVE_LOCK_X | MOVE_LOCK_Y)):
        cx, cy, cw = capped_velocity(vx, vy, w, max_w)
        # a motion lock is a cap of 0 on its axis: what the contacts and joints gave the body along it is
        # dropped before the body moves
        if flags[b] & MOVE_LOCK_X:
            cx = 0.0
        if flags[b] & MOVE_LOCK_Y:
            cy = 0.0
        if flags[b] & MOVE_SOLVED:
            cx = np.float64(np.float32(cx))
            cy = np.float64(np.float32(cy))
            cw = np.float64(np.float32(cw))
            kick[b, KV0X] += cx - vx
            kick[b, KV0Y] += cy - vy
            kick[b, KW0] += cw - w
            fstate[b, VX] = cx
            fstate[b, VY] = cy
            fstate[b, W] = cw
        else:
            state[b, VX] = cx
            state[b, VY] = cy
            state[b, W] = cw
        vx, vy, w = cx, cy, cw
    dx = h * vx
    dy = h * vy
    if flags[b] & (MOVE_VELOCITY | MOVE_SOLVED) == MOVE_VELOCITY:
        # a dynamic body no contact holds: it moves on the exact arc of its constant acceleration a over the
        # substep, p += h·v − ½h·(h·a) (v the velocity at the end of the substep), where the plain
        # p += h·v of semi-implicit Euler loses ½|a|²h² of energy per unit mass every substep (a ball
        # thrown up with e·v stopped ~2 % of its height short of (e·v)²/2g, and every bounce's apex ratio
        # fell short of e²). Bodies in contact keep h·v, which is what their contacts were solved for.
        dx -= 0.5 * h * kick[b, KDVX]
        dy -= 0.5 * h * kick[b, KDVY]
    da = h * w
    state[b, DPX] = state[b, DPX] + dx
    state[b, DPY] = state[b, DPY] + dy
    dangle[b] = dangle[b] + da
    fstate[b, DPX] = state[b, DPX]
    fstate[b, DPY] = state[b, DPY]


@njit
def _rotations(lo, hi, dangle, fstate, rot):
    """The solver's rotation deltas (``fstate`` DC, DS: single precision) of bodies lo … hi − 1 from their
    angle changes so far (``dangle``; 0 for a body that does not move, whose row then keeps cos 1, sin 0).

    For |Δθ| ≤ π/4 (the usual case: a body turns little within a step) the Taylor polynomials to x¹¹ and x¹²
    in double precision (``_small_sin_cos``), whose truncation error (below 1e-11) is far under a float's
    rounding step; a call of glibc's ``sincos`` cost about 20 ns per body per substep. Three loops, so that
    the polynomials run in vector registers: the first, over contiguous arrays and without branches, is
    vectorized by LLVM (four bodies per instruction) and writes the sines and cosines to the scratch rows
    ``rot``; the second copies them into the bodies' rows; the third, only when some |Δθ| > π/4 (a body that
    turned more than an eighth of a turn so far in the step), recomputes those with ``sin_cos``. Each lane's
    operations are the scalar code's in the same order, so the values are bitwise those of one body at a
    time, in a third of the time."""
    big = 0
    for b in range(lo, hi):
        x = dangle[b]
        rot[0, b], rot[1, b] = _small_sin_cos(x)
        big += abs(x) > EIGHTH_TURN
    for b in range(lo, hi):
        fstate[b, DC] = rot[1, b]
        fstate[b, DS] = rot[0, b]
    if big > 0:
        for b in range(lo, hi):
            if abs(dangle[b]) > EIGHTH_TURN:
                sn, cs = sin_cos(dangle[b])
                fstate[b, DC] = cs
                fstate[b, DS] = sn


@inline_njit
def _small_sin_cos(x):
    """(sin x, cos x) by their Taylor polynomials to x¹¹ and x¹², for |x| ≤ π/4 (``_rotations``)."""
    x2 = x * x
    sn = x * (1.0 - x2 * _I6 * (1.0 - x2 * _I20 * (1.0 - x2 * _I42 * (1.0 - x2 * _I72 * (1.0 - x2 * _I110)))))
    cs = 1.0 - x2 * 0.5 * (1.0 - x2 * _I12 * (1.0 - x2 * _I30 * (1.0 - x2 * _I56 * (1.0 - x2 * _I90
                                                                                      * (1.0 - x2 * _I132)))))
    return sn, cs


#: the largest angle change so far in the step, |Δθ|, that ``_small_sin_cos`` is used for
EIGHTH_TURN = 0.7853981633974483


# the Taylor factors of _small_sin_cos: 1 / ((2k)(2k + 1)) for sine, 1 / ((2k − 1)(2k)) for cosine
_I6, _I20, _I42, _I72, _I110 = 1.0 / 6.0, 1.0 / 20.0, 1.0 / 42.0, 1.0 / 72.0, 1.0 / 110.0
_I12, _I30, _I56, _I90, _I132 = 1.0 / 12.0, 1.0 / 30.0, 1.0 / 56.0, 1.0 / 90.0, 1.0 / 132.0


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


@njit
def phase_count(substeps, bstart, bounces, jstart):
    """The number of phases of a solve (``_solve_share``): per substep the two integration passes and the biased
    and relax sweeps, the warm start sweep once and the restitution sweep ``bounces`` times
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
    return (substeps * (2 + 2 * colours) + (1 + bounces) * colours
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
                    rot, gx, gy, h, max_w, inv_h, soft, stiff, out, tasks, passes, sync, bounces, jdata):
    """The substeps and the restitution pass in one parallel loop of ``threads`` items, one per thread.

    Why: run colour by colour, each colour of each sweep was a parallel loop of its own, about 80 launches a
    step for the pyramids (13 sweeps of 6 colours and the integration passes), each costing microseconds to
    start the threads and to join them. Here the threads start once and claim the chunks of each phase
    (``_solve_share``). No item waits for another item to start, so the result is right (and the same) however
    the threading layer runs the items, at once or one after the other."""
    for w in prange(threads):
        # (np.int64: see _prepare_all_rows)
        _solve_share(np.int64(w), threads, substeps, bstart, rows, body, move, state, fstate, kick, flags, solved,
                     motion, dangle, rot, gx, gy, h, max_w, inv_h, soft, stiff, out, tasks, passes, sync, bounces,
                     jdata)


@njit
def _solve_share(w, threads, substeps, bstart, rows, body, move, state, fstate, kick, flags, solved, motion, dangle,
                 rot, gx, gy, h, max_w, inv_h, soft, stiff, out, tasks, passes, sync, bounces, jdata):
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
    sync = borrowed(sync)     # (``borrowed``: the calls below take no references on it)
    body_chunks = phase_chunks(flags.shape[0], threads, CHUNK_BODIES)
    p = np.int64(0)
    for sub in range(substeps):
        # odd substeps solve each contact's points in the reverse order (module docstring; a runtime value, as
        # the task: a literal would compile the sweep once per value)
        odd = (sub & 1) == 1
        p = _integrate_phase(passes[FIRST_PASS] if sub == 0 else passes[VELOCITY_PASS], p, w, threads, body_chunks,
                             state, fstate, kick, flags, solved, motion, dangle, rot, gx, gy, h, max_w, sync)
        if sub == 0:
            # (later substeps' warm starts are applied body by body by the velocity pass: _integrate_velocity)
            p = _joint_phase(np.int64(JOINT_WARM_START), p, w, threads, jdata, state, fstate, flags, dangle, inv_h,
                             sync)
            p = _sweep_phases(tasks[WARM], odd, p, w, threads, bstart, rows, body, move, fstate, inv_h, soft, stiff, out,
                              sync)
        p = _joint_phase(np.int64(JOINT_SOLVE_FIRST if sub == 0 else JOINT_SOLVE), p, w, threads, jdata, state,
                         fstate, flags, dangle, inv_h, sync)
        p = _sweep_phases(tasks[BIASED], odd, p, w, threads, bstart, rows, body, move, fstate, inv_h, soft, stiff, out,
                          sync)
        p = _integrate_phase(passes[POSITION_PASS], p, w, threads, body_chunks, state, fstate, kick, flags, solved,
                             motion, dangle, rot, gx, gy, h, max_w, sync)
        p = _joint_phase(np.int64(JOINT_RELAX), p, w, threads, jdata, state, fstate, flags, dangle, inv_h, sync)
        p = _sweep_phases(tasks[RELAX], odd, p, w, threads, bstart, rows, body, move, fstate, inv_h, soft, stiff, out,
                          sync)
    forward = bounces < 0     # (False, as a runtime value)
    for _ in range(bounces):
        p = _sweep_phases(tasks[RESTITUTE], forward, p, w, threads, bstart, rows, body, move, fstate, inv_h, soft, stiff, out,
                          sync)


@njit
def _integrate_phase(task, p, w, threads, chunks, state, fstate, kick, flags, solved, motion, dangle, rot, gx, gy,
                     h, max_w, sync):
    """Thread w's part of the integration pass ``task``, phase p of the solve (``_solve_share``): the chunks of
    the bodies it claims, then the wait for the others; returns the next phase."""
    base = phase_base(p, threads)
    n = flags.shape[0]
    k = claim_chunk(sync, base, w, threads, chunks)
    while k >= 0:
        _integrate_range(task, k * n // chunks, (k + 1) * n // chunks, state, fstate, kick, flags, solved, motion,
                         dangle, rot, gx, gy, h, max_w)
        finish_chunk(sync, base, chunks)
        k = claim_chunk(sync, base, w, threads, chunks)
    await_phase(sync, base, chunks)
    return p + 1


@njit
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
    for it in range(passes):
        m = mode if it == 0 or mode == JOINT_RELAX else np.int64(JOINT_SOLVE_FIRST)
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
                if first < nb:
                    solve_point_bundles(m, pstart[c] + first, pstart[c] + min(last, nb), pb, pbody, pmove, fstate,
                                        jsoft)
                lo = jstart[c] + pcount[c] - nb
                solve_joints(m, lo + max(first, nb), lo + max(last, nb), jbody, jframe, rstart, jrows, state,
                             fstate, flags, dangle, jsoft, inv_h)
                finish_chunk(sync, base, chunks)
                k = claim_chunk(sync, base, w, threads, chunks)
            await_phase(sync, base, chunks)
            p += 1
    return p


@njit
def _sweep_phases(task, reverse, p, w, threads, bstart, rows, body, move, state, inv_h, soft, stiff, out, sync):
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
        k = claim_chunk(sync, base, w, threads, chunks)
        while k >= 0:
            _sweep_range(task, reverse, lo + k * n // chunks, lo + (k + 1) * n // chunks, rows, body, move, state, inv_h,
                         soft, stiff, out, paired)
            finish_chunk(sync, base, chunks)
            k = claim_chunk(sync, base, w, threads, chunks)
        await_phase(sync, base, chunks)
        p += 1
    return p


@njit
def max_angular_speed(dt):
    """The largest angular speed (rad/s) a body may have over a step of dt: MAX_ROTATION per step."""
    return MAX_ROTATION / dt


#: the speed a body above the cap is brought to (``capped_velocity``)
_CAPPED_SPEED = MAX_TRANSLATION_SPEED * (1.0 - 1e-12)


@njit
def capped_velocity(vx, vy, w, max_w):
    """(v, ω) within the documented caps: |v| ≤ MAX_TRANSLATION_SPEED (direction kept), |ω| ≤ max_w."""
    sp2 = vx * vx + vy * vy
    if sp2 > _CAPPED_SPEED * _CAPPED_SPEED:
        # (to a hair below the cap, and from there: a speed whose square rounds to the cap's may still be
        # above it by an ulp, as np.hypot shows)
        f = _CAPPED_SPEED / math.sqrt(sp2)
        vx *= f
        vy *= f
    if abs(w) > max_w:
        w = max_w if w > 0.0 else -max_w
    return vx, vy, w


@njit
def solve_stage(dt, substeps, gx, gy, bodies, contacts, solver, threads, joints):
    """The soft step (module docstring) over the coloured bundles and the joints (``joints._solve``): substeps of
    integrate, warm start, biased solve, integrate positions, relax; then restitution. The impulses go back to
    the contact table, the joints' reactions to the joint table.
    Returns the start-of-step positions and angles (for continuous collision) and each contact point's
    approach speed (for hit events and ``World.contact_data``; 0 for contacts not solved)."""
    perm, bstart, bfirst, rows, body, move, bcount, solved = (solver[0], solver[2], solver[3], solver[5], solver[6],
                                                              solver[7], solver[8], solver[9])
    com, angle, vel, angvel, force, torque = bodies[0], bodies[1], bodies[2], bodies[3], bodies[10], bodies[11]
    c_count, c_nimp, c_timp, c_step = contacts[1], contacts[3], contacts[4], contacts[11]
    NB = com.shape[0]
    inv_dt = 1.0 / dt
    h = dt / substeps
    inv_h = 1.0 / h
    max_w = max_angular_speed(dt)
    contact_hertz = min(CONTACT_HERTZ, 0.25 * substeps * inv_dt)
    soft = soft_params(contact_hertz, CONTACT_DAMPING_RATIO, h)
    # contacts with a static (or kinematic) body are twice as stiff: nothing on the other side gives way
    stiff = soft_params(2.0 * contact_hertz, CONTACT_DAMPING_RATIO, h)
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
    rot = np.empty((2, NB))       # scratch of ``_rotations``
    # the task codes as runtime values: passed as constants, each would compile its own copy of the sweep
    tasks = np.arange(4)
    passes = np.arange(3)
    # the integrators get only the arrays they use: every array a parallel loop receives costs compile time
    motion = (bodies[4], bodies[5], bodies[7], bodies[9], force, torque, bodies[12], bodies[13],
              bodies[14], bodies[16], vel, angvel, bodies[21])
    # impulses back to the table, and each solved point's approach speed (``_write_back``, in the restitution
    # pass)
    # (zeros: a contact not solved did not approach; its step impulses are 0, so it makes no hit)
    approach = np.zeros((c_count.shape[0], 2))
    out = (perm, bfirst, bcount, c_nimp, c_timp, c_step, approach)
    bounces, relax = step_sweeps(rows)
    tasks[RELAX] = relax
    if bounces == 1:
        tasks[RESTITUTE] = WRITE_BACK
    # the joints: those with an awake dynamic body, their rows, and the rigid joints' softness (Box2D's: a
    # joint is stiffer than a contact, its frequency capped for the substep as the contacts' is)
    # (each given only the body arrays it reads: the whole tuple of 22 in each signature cost compile time)
    jlist, jstart, pcount = joints_to_solve(joints, bodies[7], bodies[16])
    # (the plain point joints in bundles of LANES: ``joints._bundles``)
    jbody, jframe, rstart, jrows, pstart, pb, pbody, pmove = prepare_joints(jlist, jstart, pcount, joints, com, angle,
                                                                           bodies[4], bodies[5], bodies[6],
                                                                           bodies[7], h)
    solved = joint_solved(solved, jlist, joints, bodies[7])
    jsoft = np.empty(3)
    jsoft[0], jsoft[1], jsoft[2] = soft_params(min(JOINT_HERTZ, 0.5 * substeps * inv_dt), JOINT_DAMPING_RATIO, h)
    # (a flat tuple of arrays: a parallel loop takes no named or nested tuples)
    jdata = (jstart, jbody, jframe, rstart, jrows, jsoft, pcount, pstart, pb, pbody, pmove)
    if threads > 1 and max(rows.shape[0] * LANES, NB) >= PARALLEL_MIN_ITEMS and not PLAIN_PYTHON:
        # the whole solve in one parallel loop, one item per thread, the threads claiming the chunks of each
        # phase (each colour of each sweep, each integration pass) and waiting for the phase to be done
        sync = np.zeros(phase_base(phase_count(substeps, bstart, bounces, jstart), threads), np.int64)
        _solve_parallel(threads, substeps, bstart, rows, body, move, state, fstate, kick, flags, solved, motion,
                        dangle, rot, gx, gy, h, max_w, inv_h, soft, stiff, out, tasks, passes, sync, bounces, jdata)
    else:
        sync = np.zeros(phase_base(phase_count(substeps, bstart, bounces, jstart), 1), np.int64)
        _solve_share(np.int64(0), np.int64(1), substeps, bstart, rows, body, move, state, fstate, kick, flags,
                     solved, motion, dangle, rot, gx, gy, h, max_w, inv_h, soft, stiff, out, tasks, passes, sync,
                     bounces, jdata)
    store_reactions(jlist, joints, jbody, jframe, rstart, jrows, inv_h)
    store_bundle_reactions(jlist, jstart, pcount, pstart, pb, joints.impulse, joints.reaction, inv_h)
    # the step's velocities, and its position and angle changes applied once (``_integrate_position``)
    for b in range(NB):
        vx, vy, w = _velocity(b, state, fstate, flags)
        if flags[b] & MOVE_POSITION:
            com[b, 0] = com[b, 0] + state[b, DPX]
            com[b, 1] = com[b, 1] + state[b, DPY]
            angle[b] = angle[b] + dangle[b]
        # the speed caps hold for the velocity a body leaves the step with, whatever its contacts and its
        # restitution did after the last substep's integration (a box bouncing with restitution 1 off the
        # ground at 1,000 m/s left at 882 m/s)
        vx, vy, w = capped_velocity(vx, vy, w, max_w)
        if flags[b] & MOVE_LOCK_X:
            vx = 0.0
        if flags[b] & MOVE_LOCK_Y:
            vy = 0.0
        vel[b, 0] = vx
        vel[b, 1] = vy
        angvel[b] = w
        force[b, 0] = 0.0
        force[b, 1] = 0.0
        torque[b] = 0.0
    return com0, angle0, approach
