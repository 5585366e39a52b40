"""The prepare stage (``prepare_stage``): colour the contacts and pack each bundle's rows (masses, arms, effective
masses, friction and restitution, warm-start impulses) in single precision for the sweeps.
"""
import numpy as np
from numba import prange

from .._jit import njit, pnjit, inline_njit, llvm_inline_njit, borrowed, deref
from .._simd import (LANES, LANES64, PARTS, ROW, splat, splat64, store_part, lane, load, gather_rows64, select,
                     vmin, prefetch_row)
from ._layout import KEY_SHIFT, KEY_MASK, SolverTable, TCX, TCY, TVX, TVY, TW, TM, TI, TG
from ._contact_rows import (ADJ, BE, BOUNCE_WIDTH, BRELV, IA, IB, MA, MATERIAL_WIDTH, MB, MRIMP, MRR, MTS, MU,
                            NIMP, NMASS, NX, NY, OVERFLOW, P0, POINT_WIDTH, QAX, QAY, QBX, QBY, RNA, RNB, ROW_WIDTH,
                            RTA, RTB, SOFT, STEPN, STEPT, T0, TANGENT_WIDTH, TIMP, TMASS, chunk_count, mix, PACK_NX,
                            PACK_NY, PACK_DLX, PACK_DLY, PACK_SEP0, PACK_PX0, PACK_PY0, PACK_NIMP0, PACK_TIMP0,
                            PACK_SEP1, PACK_PX1, PACK_PY1, PACK_NIMP1, PACK_TIMP1, PACK_COUNT)
from ._colouring import body_flags, colour_contacts, same_colouring
from ._sweeps import step_sweeps, sweep_marks


@njit
def prepare_stage(bodies, shapes, contacts, old, pairs_same, friction_rule, restitution_rule, threads, fall,
                  material, pack, table):
    """The contacts to solve, coloured, in bundles of ``LANES`` (the solver's layout, module docstring).

    Solved are the non-sensor contacts with points and at least one awake dynamic body. Each lane holds the
    lever arms r × n and r × t of the anchors about the centres of mass (anchors on each body's own surface:
    the manifold point is midway between the surfaces, and a speculative contact far ahead of a small body
    must not act on it through a long lever arm), the effective masses, the separation offsets the substeps
    track between the cores, the warm-start impulses and the approach speed.

    Returns the ``SolverTable`` (``_layout``: perm, colour_start, bundle_start, bundle_first, pair, rows,
    bundle_body, bundle_move, bundle_count, solved, body_flags, sweeps: ``_sweeps.step_sweeps``, and the
    bundles' bounce and material tables and point counts, ``_contact_rows``): lane q < ``bundle_count[j]`` of
    bundle j holds contact ``perm[bundle_first[j] + q]``. A parallel colour of m contacts fills ⌈m / LANES⌉ bundles;
    each overflow contact gets a bundle of its own (its contacts share bodies, so they cannot share a bundle).
    Empty lanes point at the solver's dummy body (row NB of its state: at rest, never written) and have no
    mass, so they change nothing. ``material``: each contact's (friction, restitution, tangent speed) as the
    pre-solve hook left them (``_step.pre_solve_stage``), used instead of the shapes' mixed values; empty
    without a hook. ``pack``: the narrow phase's packed rows of the contacts (``_contact_rows.PACK_WIDTH``),
    from which the rows are filled. ``table``: the bodies' data the rows need, one cache line per body (gathered
    whole by ``gather_rows64``; row NB, the dummy body, all zeros), as the bounds stage wrote it (``_layout.TCX``).
    """
    keys, c_count = contacts.keys, contacts.count
    bodies = deref(bodies)
    shapes = deref(shapes)
    flags = body_flags(bodies.kind, bodies.asleep)
    if same_colouring(pairs_same, c_count, contacts.sensor, flags, old):
        perm, pair, start, solved = old.perm, old.pair, old.colour_start, old.solved
    else:
        perm, pair, start, solved = colour_contacts(keys, c_count, contacts.sensor, shapes.body, bodies.kind,
                                                    bodies.asleep)
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
    # every lane of every bundle, empty ones included, is written by _prepare_bundle (in parallel, which also
    # spreads the first touch of fresh memory over the threads)
    rows = np.empty((nbundles, ROW_WIDTH, LANES), np.float32)
    bounce = np.empty((nbundles, BOUNCE_WIDTH, LANES), np.float32)
    points = np.empty(nbundles, np.int64)
    body = np.empty((nbundles, 2, LANES), np.int64)
    move = np.empty((nbundles, 2, LANES), np.bool_)
    # only the arrays the rows need: every array a parallel loop receives costs compile time
    # (no shape with a tangent speed or rolling resistance, the usual case: empty tables, which the rows take
    # as zeros without looking up each contact's two shapes)
    # (without a branch, so that the loop runs in vector registers)
    materials = False
    for s in range(shapes.tangent_speed.shape[0]):
        materials |= (shapes.tangent_speed[s] != 0.0) | (shapes.rolling[s] != 0.0)
    # one friction, restitution and radius for every contact, where every shape has the same (``shared_material``)
    shared = (shared_material(shapes.friction, shapes.restitution, shapes.radius, friction_rule, restitution_rule)
              if not materials and material.shape[0] == 0 else np.empty(0))
    shape_data = (shapes.radius, shapes.friction, shapes.restitution,
                  shapes.tangent_speed if materials else shapes.tangent_speed[:0],
                  shapes.rolling if materials else shapes.rolling[:0], shared)
    # the material table, where some contact may have a tangent speed or rolling resistance (a shape's, or the
    # pre-solve hook's tangent speed); else none, which the sweeps take as zeros
    material_rows = np.empty((nbundles if materials or material.shape[0] > 0 else 0, MATERIAL_WIDTH, LANES),
                             np.float32)
    # the contacts' packed rows (``_narrow._put_pack``) as rows of ROW doubles: contact k's are rows 2k and 2k + 1
    contact_data = (keys, material, pack.reshape((pack.shape[0] * 2, ROW)))
    # what each thread's bundles ask of the sweeps (``_sweeps.sweep_marks``)
    found = np.zeros((max(threads, 1), 2), np.int64)
    # each thread's scratch (``_prepare_bundles``), here so the threads see it through borrowed views: a part's
    # shape data and a bundle's packed-row indices, each padded so no two threads write one cache line
    extra = (bounce, material_rows, points, np.empty((max(threads, 1), LANE_FIELDS + 2, LANES64)),
             np.empty((max(threads, 1), 4, LANES), np.int64))
    _prepare_all_rows(bstart, bfirst, bcount, perm, pair, table, shape_data, contact_data, rows, extra, body, move,
                      friction_rule, restitution_rule, threads, fall, found)
    return SolverTable(perm, start, bstart, bfirst, pair, rows, body, move, bcount, solved, flags, step_sweeps(found),
                       bounce, material_rows, points)


@pnjit
def _prepare_all_rows(bstart, bfirst, bcount, perm, pair, table, shapes, contacts, rows, extra, body, move,
                      friction_rule, restitution_rule, threads, fall, found):
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
                         rows, extra, body, move, friction_rule, restitution_rule, fall, found)
        return
    # (w as int64 here and literals nowhere: the loop index is typed int64, then uint64 in the parallel
    # function, and each type, like each literal, compiles the callee once more)
    for w in prange(threads):
        _prepare_bundles(np.int64(w), threads, bstart, bfirst, bcount, perm, pair, table, shapes, contacts, rows,
                         extra, body, move, friction_rule, restitution_rule, fall, found)


@njit
def _prepare_bundles(w, parts, bstart, bfirst, bcount, perm, pair, table, shapes, contacts, rows, extra, body, move,
                     friction_rule, restitution_rule, fall, found):
    """Part w of ``parts`` of every colour's bundles, the overflow colour's included (one call per thread:
    kept out of the parallel loop so every name in it is private, and the tuples' arrays are unpacked once);
    ``found[w]`` gets whether any of them may bounce and whether any has rolling resistance
    (``_sweeps.sweep_marks``)."""
    # borrowed views: the per-bundle functions below take no references (``borrowed``)
    shape_radius, shape_friction, shape_restitution, shape_tangent, shape_rolling, shared = borrowed(shapes)
    keys, c_material, pack = borrowed(contacts)
    perm, pair, table, rows, body, move = borrowed((perm, pair, table, rows, body, move))
    bounce, material, points, all_lanes, all_at = borrowed(extra)
    NB = table.shape[0] - 1
    # scratch: a part's shape data, field by field, and the packed rows of a bundle's lanes (``_prepare_part``);
    # borrowed views, as the rest (allocated here, the array bound to each inlined call's argument took a
    # reference on it, an atomic increment and decrement per part: 0.3 ms of many_pyramids' step)
    lanes = all_lanes[w:w + 1]
    at = all_at[w:w + 1]
    same = shared.shape[0] > 0
    marks = (splat(0.0), splat(0.0))
    last = np.int64(-1)
    for c in range(OVERFLOW + 1):
        lo = bstart[c]
        n = bstart[c + 1] - lo
        hi = lo + (w + 1) * n // parts
        for j in range(lo + w * n // parts, hi):
            # (what the bundles a few ahead read, in colour order: each contact's packed rows, its bodies' rows and
            # its shapes' data are cache misses, which its own bundle would otherwise wait for)
            if not same and j + 2 * PREFETCH_BUNDLES < hi:
                # the keys first, so that the shapes can be found when their bundle is PREFETCH_BUNDLES ahead
                jj = j + 2 * PREFETCH_BUNDLES
                for q in range(bcount[jj]):
                    prefetch_row(keys, perm[bfirst[jj] + q])
            if j + PREFETCH_BUNDLES < hi:
                jj = j + PREFETCH_BUNDLES
                for q in range(bcount[jj]):
                    i = bfirst[jj] + q
                    k = perm[i]
                    prefetch_row(pack, 2 * k)
                    prefetch_row(pack, 2 * k + 1)
                    prefetch_row(table, pair[i, 0])
                    prefetch_row(table, pair[i, 1])
                    if not same:
                        a = keys[k] >> KEY_SHIFT
                        bsh = keys[k] & KEY_MASK
                        prefetch_row(shape_radius, a)
                        prefetch_row(shape_radius, bsh)
                        if c_material.shape[0] == 0:
                            prefetch_row(shape_friction, a)
                            prefetch_row(shape_friction, bsh)
                            prefetch_row(shape_restitution, a)
                            prefetch_row(shape_restitution, bsh)
            _prepare_bundle(j, bfirst[j], bcount[j], perm, pair, table, shape_radius, shape_friction,
                            shape_restitution, shape_tangent, shape_rolling, shared, keys, c_material, pack, rows,
                            bounce, material, points, body, move, friction_rule, restitution_rule, NB, fall, lanes, at)
            # the marks of the bundle before this one (``sweep_marks``): read right after they were written, a
            # bundle's bounce rows (two stores of half a vector each, read back as one) waited for the stores to
            # reach the cache, a sixth of the stage's time in many_pyramids
            if last >= 0:
                marks = sweep_marks(bounce, material, last, marks)
            last = j
    if last >= 0:
        marks = sweep_marks(bounce, material, last, marks)
    for q in range(LANES):
        if lane(marks[0], q) != 0.0:
            found[w, 0] = 1
        if lane(marks[1], q) != 0.0:
            found[w, 1] = 1


@llvm_inline_njit
def _prepare_bundle(j, first, m, perm, pair, table, shape_radius, shape_friction, shape_restitution, shape_tangent,
                    shape_rolling, shared, keys, c_material, pack, rows, bounce, material, points, body, move,
                    friction_rule, restitution_rule, NB, fall, lanes, at):
    """Bundle j: lane q from contact perm[first + q] for q < m; lanes m … LANES − 1 are empty (the dummy
    body, all fields zero).

    The rows are computed in double precision from the world's state, ``LANES64`` lanes at a time (a part of
    the bundle), and rounded to the solver's single precision when stored. Within a part all lanes go at once,
    as the solver does: each lane's contact data and its bodies' rows are gathered into vectors (the contact's
    packed row, ``pack``, as two rows of ``ROW`` doubles, and the bodies' rows of ``table``), and each field is
    computed and stored for the whole part. Lane arithmetic is the scalar IEEE arithmetic (``carom._simd``), so
    the rows are bitwise those of filling the lanes one by one; written lane by lane, each contact cost 40
    scattered scalar stores and its own arithmetic, about 45 ns per two-point contact."""
    K = pack.shape[0] // 2 - 1
    for q in range(LANES):
        if q >= m:
            body[j, 0, q] = NB
            body[j, 1, q] = NB
            move[j, 0, q] = False
            move[j, 1, q] = False
            # the packed rows' last row: all zeros
            at[0, 0, q] = 2 * K
            at[0, 1, q] = 2 * K + 1
            continue
        i = first + q
        ba = pair[i, 0]
        bb = pair[i, 1]
        body[j, 0, q] = ba
        body[j, 1, q] = bb
        # a static or kinematic body (no inverse mass) is only read, never written
        move[j, 0, q] = table[ba, TM] > 0.0 or table[ba, TI] > 0.0
        move[j, 1, q] = table[bb, TM] > 0.0 or table[bb, TI] > 0.0
        k = perm[i]
        at[0, 0, q] = 2 * k
        at[0, 1, q] = 2 * k + 1
    # the first lane has the most points (colour_contacts): a bundle of one-point contacts has a second point
    # of all zeros, as do its one-point lanes otherwise (the solver's lane arithmetic turns them into no
    # impulse)
    two = m > 0 and pack[2 * perm[first] + 1, PACK_COUNT - ROW] == 2.0
    points[j] = 2 if two else 1
    for h in range(PARTS):
        _prepare_part(j, h, first, m, two, perm, table, shape_radius, shape_friction, shape_restitution,
                      shape_tangent, shape_rolling, shared, keys, c_material, pack, rows, bounce, material, body,
                      friction_rule, restitution_rule, fall, lanes, at)


#: how many bundles ahead ``_prepare_bundles`` asks for the contacts' packed rows, bodies' rows and shapes' data
#: (and twice as many for the contacts' keys, which lead to the shapes)
PREFETCH_BUNDLES = 2

# what every contact takes from its shapes where every shape has the same (``shared_material``)
SHARED_FRICTION, SHARED_RESTITUTION, SHARED_RADIUS = range(3)


@njit
def shared_material(friction, restitution, radius, friction_rule, restitution_rule):
    """(friction, restitution, radius) of every contact, mixed as ``_prepare_part`` mixes a contact's two
    shapes, when every shape has bitwise the same friction, the same restitution and the same radius (a pile of
    plain boxes, a pit of equal balls: one material); else an empty array. Then the prepare stage reads no
    contact's shapes: in many_pyramids' prepare stage, the keys and six shape values of each contact, read in
    colour order, cost about as much as the rest of its per-contact work. (Compared as bits, so that the values
    are bitwise those of mixing the shapes' own: 0.0 and −0.0 are not the same here. The pass over the shapes
    runs in vector registers: about 10 µs for 22,000 shapes.)"""
    n = friction.shape[0]
    if n == 0:
        return np.empty(0)
    fb = friction.view(np.int64)
    eb = restitution.view(np.int64)
    rb = radius.view(np.int64)
    f0 = fb[0]
    e0 = eb[0]
    r0 = rb[0]
    differ = False
    for s in range(n):
        differ |= (fb[s] != f0) | (eb[s] != e0) | (rb[s] != r0)
    if differ:
        return np.empty(0)
    out = np.empty(3)
    out[SHARED_FRICTION] = mix(friction[0], friction[0], friction_rule)
    out[SHARED_RESTITUTION] = mix(restitution[0], restitution[0], restitution_rule)
    out[SHARED_RADIUS] = radius[0]
    return out


# a part's shape data, staged field by field (``_prepare_part``): friction, restitution, tangent speed, rolling
# resistance, the two radii
LMU, LE, LTS, LRR, LRA, LRB = range(6)
LANE_FIELDS = 6


@inline_njit
def _prepare_part(j, h, first, m, two, perm, table, shape_radius, shape_friction, shape_restitution, shape_tangent,
                  shape_rolling, shared, keys, c_material, pack, rows, bounce, material, body, friction_rule,
                  restitution_rule, fall, lanes, at):
    """Lanes h·LANES64 … (h + 1)·LANES64 − 1 of bundle j, in double precision (``_prepare_bundle``). The
    contacts' packed rows (``pack``: two rows of ROW doubles each, at ``at``) are loaded whole and transposed
    into one vector per field; what comes from the two shapes is staged in ``lanes`` (one row of LANES64
    doubles per field, scalar stores) and read as vectors, or, where every shape has the same (``shared``: the
    mixed friction and restitution and the radius, ``shared_material``), is those values in every lane that
    holds a contact (the others: zeros, as staged)."""
    zero = splat64(0.0)
    one = splat64(1.0)
    same = shared.shape[0] > 0
    for q in range(0 if same else LANES64):
        if h * LANES64 + q >= m:
            for f in range(LANE_FIELDS):
                lanes[0, f, q] = 0.0
            continue
        k = perm[first + h * LANES64 + q]
        a = keys[k] >> KEY_SHIFT
        bsh = keys[k] & KEY_MASK
        ts = 0.0
        rr = 0.0
        # (Box2D v3.1's rules: the belts' speeds add up; the larger resistance acts at the larger radius)
        if shape_tangent.shape[0] > 0:
            ts = shape_tangent[a] + shape_tangent[bsh]
            rr = max(shape_rolling[a], shape_rolling[bsh]) * max(shape_radius[a], shape_radius[bsh])
        if c_material.shape[0] > 0:
            # (the pre-solve hook's: the mixed values, changed for this step)
            lanes[0, LMU, q] = c_material[k, 0]
            lanes[0, LE, q] = c_material[k, 1]
            ts = c_material[k, 2]
        else:
            lanes[0, LMU, q] = mix(shape_friction[a], shape_friction[bsh], friction_rule)
            lanes[0, LE, q] = mix(shape_restitution[a], shape_restitution[bsh], restitution_rule)
        lanes[0, LTS, q] = ts
        lanes[0, LRR, q] = rr
        lanes[0, LRA, q] = shape_radius[a]
        lanes[0, LRB, q] = shape_radius[bsh]
    c0 = gather_rows64(pack, at, 0, 0, h)
    c1 = gather_rows64(pack, at, 0, 1, h)
    nx = c0[PACK_NX]
    ny = c0[PACK_NY]
    dlx = c0[PACK_DLX]
    dly = c0[PACK_DLY]
    count = c1[PACK_COUNT - ROW]
    if same:
        # (a lane holds a contact where its point count is above 0: an empty lane's packed row is all zeros)
        real = count > 0.0
        mu = select(real, splat64(shared[SHARED_FRICTION]), zero)
        e = select(real, splat64(shared[SHARED_RESTITUTION]), zero)
        ra = select(real, splat64(shared[SHARED_RADIUS]), zero)
        rb = ra
    else:
        mu = load(lanes, 0, LMU)
        e = load(lanes, 0, LE)
        ra = load(lanes, 0, LRA)
        rb = load(lanes, 0, LRB)
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
    store_part(bounce, j, BE, h, e)
    if material.shape[0] > 0:
        store_part(material, j, MTS, h, load(lanes, 0, LTS))
        store_part(material, j, MRR, h, load(lanes, 0, LRR))
        store_part(material, j, MRIMP, h, zero)
    store_part(rows, j, SOFT, h, select((count > 0.0) & ((mA == 0.0) | (mB == 0.0)), one, zero))
    _prepare_point(rows, bounce, j, h, 0, count > 0.0, c0[PACK_SEP0], c0[PACK_PX0], c0[PACK_PY0], c0[PACK_NIMP0],
                   c1[PACK_TIMP0 - ROW], nx, ny, ra, rb, sa, sb, zero, fall, dlx, dly)
    if two:
        _prepare_point(rows, bounce, j, h, 1, count > 1.0, c1[PACK_SEP1 - ROW], c1[PACK_PX1 - ROW],
                       c1[PACK_PY1 - ROW], c1[PACK_NIMP1 - ROW], c1[PACK_TIMP1 - ROW], nx, ny, ra, rb, sa, sb, zero,
                       fall, dlx, dly)
    else:
        for f in range(POINT_WIDTH):
            store_part(rows, j, P0 + POINT_WIDTH + f, h, zero)
        for f in range(TANGENT_WIDTH):
            store_part(rows, j, T0 + TANGENT_WIDTH + f, h, zero)
        store_part(bounce, j, BRELV + 1, h, zero)


@inline_njit
def _prepare_point(rows, bounce, j, h, p, has, sep, px, py, nimp, timp, nx, ny, ra, rb, sa, sb, zero, fall, dlx,
                   dly):
    """Point p (its fields from o = P0 + p·POINT_WIDTH and t = T0 + p·TANGENT_WIDTH; its normal speed in the bounce
    table), for the lanes of ``has`` (the others: all zeros). The arms: A's anchor at the point less half of
    (dlx, dly) and half the separation along the normal, B's plus those (a recycled contact's anchors, which stay on
    their bodies: ``carom.rigid._narrow._recycle``; (0, 0) for a fresh one)."""
    o = P0 + p * POINT_WIDTH
    t = T0 + p * TANGENT_WIDTH
    hs = 0.5 * sep
    rax = px - hs * nx - 0.5 * dlx - sa[TCX]
    ray = py - hs * ny - 0.5 * dly - sa[TCY]
    rbx = px + hs * nx + 0.5 * dlx - sb[TCX]
    rby = py + hs * ny + 0.5 * dly - sb[TCY]
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
    store_part(rows, j, t + RTA, h, select(has, rta, zero))
    store_part(rows, j, t + RTB, h, select(has, rtb, zero))
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
    store_part(rows, j, t + TMASS, h, select(tok, 1.0 / select(tok, kt, one), zero))
    store_part(rows, j, o + NIMP, h, select(has, nimp, zero))
    store_part(rows, j, t + TIMP, h, select(has, timp, zero))
    store_part(rows, j, t + STEPN, h, zero)
    store_part(rows, j, t + STEPT, h, zero)
    store_part(bounce, j, BRELV + p, h, select(has, _impact_speed(dvx * nx + dvy * ny, sep, sa, sb, nx, ny, fall),
                                               zero))


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
