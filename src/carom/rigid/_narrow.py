"""The narrow stage (``narrow_stage``): every candidate pair's manifold with a speculative margin, in blocks over
the sorted keys; last step's contact carried over by merge (warm starting by feature id), the manifold reused
from the contact cache (the ``cache`` field, columns ``CTX`` … ``CSEP``) when the pair barely moved, a pair
provably still apart skipped; chain segments' ghost-vertex rule (``chain_manifold``). Writes the new contact
table (``NarrowTable``).
"""
import math

import numpy as np
from numba import prange

from .._jit import (njit, inline_njit, llvm_inline_njit, pnjit_kernel_launcher, borrowed, borrowed_rows, deref,
                   index_range)
from ..constants import (SPECULATIVE_DISTANCE, LINEAR_SLOP, RECYCLE_DISTANCE, RECYCLE_COS, APART_ROUNDING,
                         UNCACHED_MOTION)
from ..geometry._math import relative_transform
from ..geometry.manifold import (collide_sat, collide_circles_local, collide_quadrilaterals, _swap_manifold,
                                 _to_frame, _incident_edge, _clip, _point_result)
from ._layout import DYNAMIC, KEY_SHIFT, KEY_MASK, NarrowTable, aligned_rows
from ._bounds import pair_motion
from ._contact_rows import (PACK_NX, PACK_NY, PACK_DLX, PACK_DLY, PACK_SEP0, PACK_PX0, PACK_PY0, PACK_NIMP0,
                            PACK_TIMP0, PACK_SEP1, PACK_PX1, PACK_PY1, PACK_NIMP1, PACK_TIMP1, PACK_COUNT, PACK_WIDTH)


# Contact cache (the table's field ``cache``, one row per contact): the manifold as it was computed, in body A's
# frame: the relative pose (t, cos, sin) of B's frame in A's, the normal, and per point the anchor on A's
# surface (A frame) and the anchor on B's surface (B frame). A recycled manifold is rebuilt from it. For a
# manifold without points, CSEP holds collide_sat's lower bound of the pair's separation at that pose (−inf
# when there is none: rows with points, sensors), with which a pair that stays apart skips the test. Pairs of
# two circles are always tested afresh, so their rows are neither read nor written: they hold whatever the
# memory held (writing them was a fifth of the narrow phase of the 5,000-circle pile, 0.15 ms a step), and a
# snapshot or pickle saves them as zeros (``events.contacts_to_save``). Nor is the manifold of a pair moving
# too fast to be recycled next step (UNCACHED_MOTION): its row's (cos, sin) is set to (0, 0), which no rotation
# has and ``_recycle`` always refuses, and the rest is left as it was (``_mark_uncached``;
# writing the 15 values was 60 µs a step, a fourteenth of the narrow phase, in a smash).
CTX, CTY, CTC, CTS, CNX, CNY = 0, 1, 2, 3, 4, 5
CQ0 = 6
CSEP = CQ0 + 2 * 4
CACHE_WIDTH = CSEP + 1


def invalid_cache_rows(cache, never_touch):
    """The contact cache rows the step can never have written: the one definition of a valid cache, which the
    snapshot check applies (``carom.rigid.snapshot``) and the churn fuzzer holds every step to.

    Every field is finite but the separation bound CSEP, which may legitimately be infinite:
    −inf in a row with points or of a sensor (no bound: ``_store_cache``), and +inf for a pair that can never
    touch (two segments: ``collide_sat`` has no manifold for them, and the bound lets ``_still_apart`` skip the
    pair for good). ``never_touch`` flags the rows of such pairs; +inf anywhere else would silence a pair that
    can collide, so it is refused. NaN is refused everywhere. Returns a flag per row."""
    sep = cache[:, CSEP]
    bad = ~np.isfinite(np.delete(cache, CSEP, axis=1)).all(axis=1)
    return bad | np.isnan(sep) | ((sep == np.inf) & ~never_touch)


@llvm_inline_njit
def _recycle(cache, k, cnt, tx, ty, tc, ts, reach, nwx, nwy, ac, as_, lax, lay, lbx, lby):
    """Rebuild contact k's manifold (A frame) from its cache for B now at pose (tx, ty, tc, ts) in A's frame,
    if the pose moved less than RECYCLE_DISTANCE since the manifold was computed.

    Box2D v3's recycling (``carom.constants.RECYCLE_DISTANCE``): the normal stays fixed in the world (nw, the
    world normal of last step's manifold; A's turn since is read from it and the cached normal in A's frame),
    each point's separation is tracked from the anchors turned with their bodies (A's anchor a in A's frame;
    B's u, in B's frame, now at T·u), and the solver's arms are the anchors kept at their body's centre of mass
    in the world's orientation of then: the point returned is their midpoint and (dlx, dly) B's anchor less
    A's (A frame), which the prepare stage splits back. (ac, as_) is A's rotation now, la and lb the bodies'
    centres of mass in their frames. The move is
    measured where it matters: the largest displacement of B's anchors plus the change of relative angle
    times the smaller shape's diameter (``reach``), which bounds how far any other feature of the contact
    region moved. Returns (ok, manifold tuple as collide_sat's, dlx, dly).
    """
    ctc = cache[k, CTC]
    cts = cache[k, CTS]
    # relative rotation since the manifold was computed: sin and cos of the angle change
    dsin = ts * ctc - tc * cts
    dcos = tc * ctc + ts * cts
    # the anchors' move d plus the rotation term may not exceed RECYCLE_DISTANCE; compared as d² ≤ room² with
    # no square root (the root's latency was a sixth of a recycled pair's time). Each test is made as soon as
    # its terms are known: in a tumbling crowd most pairs fail on the rotation alone, before any point
    room = RECYCLE_DISTANCE - abs(dsin) * 2.0 * reach
    fail = (False, (0, 0.0, 0.0, 0.0, 0.0, 0.0, 0, 0.0, 0.0, 0.0, 0), 0.0, 0.0)
    if dcos <= 0.0 or room < 0.0:
        return fail
    n0x = cache[k, CNX]
    n0y = cache[k, CNY]
    # A's rotation when the manifold was computed, from its normal then (A frame) and in the world (nw)
    cn0 = n0x * nwx + n0y * nwy
    sn0 = n0x * nwy - n0y * nwx
    # A's and B's turns since
    cA = ac * cn0 + as_ * sn0
    sA = as_ * cn0 - ac * sn0
    cB = cA * dcos - sA * dsin
    if min(cA, cB) <= RECYCLE_COS:
        return fail
    # the normal held fixed in the world, in A's frame now
    nx = ac * nwx + as_ * nwy
    ny = -as_ * nwx + ac * nwy
    # B's anchor less A's (the same for every point, A frame now): both anchors met when the manifold was
    # computed, and each has moved with its body's centre of mass since, unturned: (T·lb − la) − R(−Δθ_A)·(T0·lb − la)
    ex = cache[k, CTC] * lbx - cache[k, CTS] * lby + cache[k, CTX] - lax
    ey = cache[k, CTS] * lbx + cache[k, CTC] * lby + cache[k, CTY] - lay
    dlx = tc * lbx - ts * lby + tx - lax - (cA * ex + sA * ey)
    dly = ts * lbx + tc * lby + ty - lay - (cA * ey - sA * ex)
    # point indices as int64, not literals (a literal argument compiles the function once per value)
    p0x, p0y, sep0, d0 = _recycle_point(cache, k, np.int64(0), nx, ny, tx, ty, tc, ts, cA, sA, lax, lay, dlx, dly)
    if d0 > room * room:
        return fail
    p1x = p1y = sep1 = 0.0
    if cnt == 2:
        p1x, p1y, sep1, d1 = _recycle_point(cache, k, np.int64(1), nx, ny, tx, ty, tc, ts, cA, sA, lax, lay, dlx, dly)
        if d1 > room * room:
            return fail
    return True, (cnt, nx, ny, p0x, p0y, sep0, 0, p1x, p1y, sep1, 0), dlx, dly


@inline_njit
def _recycle_point(cache, k, p, nx, ny, tx, ty, tc, ts, cA, sA, lax, lay, dlx, dly):
    """Point p of contact k's cached manifold with B at pose (tx, ty, tc, ts) in A's frame, A turned by (cA, sA)
    since: (x, y, separation, the square of how far B's anchor moved since the manifold was computed). The
    separation is that of the anchors turned with their bodies (A's a, B's u now at T·u) along the normal; the
    point is the midpoint of the anchors kept unturned on their centres of mass: A's at
    la + R(−Δθ_A)(m − la), for m the point as computed (midway between a and T0·u), and B's at A's plus
    (dlx, dly) (``_recycle``)."""
    o = CQ0 + 4 * p
    ux = cache[k, o + 2]
    uy = cache[k, o + 3]
    bx = tc * ux - ts * uy + tx
    by = ts * ux + tc * uy + ty
    ox = cache[k, CTC] * ux - cache[k, CTS] * uy + cache[k, CTX]
    oy = cache[k, CTS] * ux + cache[k, CTC] * uy + cache[k, CTY]
    ax = cache[k, o]
    ay = cache[k, o + 1]
    mx = bx - ox
    my = by - oy
    qx = 0.5 * (ax + ox) - lax
    qy = 0.5 * (ay + oy) - lay
    px = lax + cA * qx + sA * qy + 0.5 * dlx
    py = lay + cA * qy - sA * qx + 0.5 * dly
    return px, py, (bx - ax) * nx + (by - ay) * ny, mx * mx + my * my


@llvm_inline_njit
def _still_apart(cache, j, tx, ty, tc, ts, lax, lay, reach_a, lbx, lby, reach_b, spec):
    """Whether contact j, which had no points when computed at the cached pose T0 = (t0, R0) of B in A's frame,
    provably still has none with B now at T = (t, R): then collide_sat at T returns count 0, and the narrow
    phase skips it. ``la``/``lb`` are the bodies' centres of mass (body frames) and ``reach_a``/``reach_b``
    the shapes' ``shape_reach``: no point of the shape is farther than that from its body's centre of mass.

    Let σ(T) = dist(core A, T·core B) − rA − rB (0 distance when the cores overlap).

    1. The row holds L ≤ σ(T0): collide_sat's separation field for count 0 (carom.geometry.manifold).
    2. σ moves no faster than the shapes move relative to each other. In A's frame, B's point u (B frame)
       moves from T0·u to T·u, and T·u − T0·u = (R − R0)·u + t − t0. R − R0 is a rotation scaled by
       ω = |R − R0| = √((c − c0)² + (s − s0)²) = 2|sin(Δθ/2)| ≤ |Δθ|, so writing u = lb + w with
       |w| ≤ reach_b, every point of B moves at most δ_B = |T·lb − T0·lb| + ω·reach_b, and the distance from
       A to B changes by at most that. In B's frame likewise A's point p moves from T0⁻¹·p to T⁻¹·p, at most
       δ_A = |T⁻¹·la − T0⁻¹·la| + ω·reach_a (Rᵀ − R0ᵀ has the same norm ω); distances do not depend on the
       frame. So σ(T) ≥ L − min(δ_A, δ_B): the smaller shape's term counts, so a small box beside a long
       wall is judged by its own size. The bound is taken from T0 itself, not from last step's pose: the row
       (T0, L) is kept while the pair is skipped, so no drift piles up.
       (The SAT separation along B's own face normals is not Lipschitz in B's displacement: those normals
       turn with B and A's points can be far from B's frame. The distance σ has no such problem, and every
       SAT separation is ≤ σ, so whichever normals gave L, it bounds σ.)
    3. σ(T) > spec ⇒ collide_sat at T has no points, for spec ≥ 0.1·LINEAR_SLOP (sensors, with spec 0, are
       never skipped). Every point it can return has σ ≤ spec:
       - circles: a point iff dist − rA − rB = σ ≤ spec.
       - polygon–circle: the point's separation is d − r with d = the centre's distance to the core
         (= σ + r) or, with the centre inside the core, d ≤ 0 and σ = −r ≤ 0 ≤ spec. (A segment core has no
         inside.)
       - polygon–polygon, vertex–vertex point: s = |c2 − c1| − r with c1, c2 on the cores, so σ ≤ s ≤ spec.
       - a clipped point w on the incident core at signed distance c from the reference face line, its foot
         within the reference edge (the side planes): σ + r ≤ dist(w, reference core) ≤ |c|. For c ≥ 0,
         σ ≤ c − r = s ≤ spec. For c < 0: c ≥ sep_ref ≥ max(sep_a, sep_b) − 0.1·LINEAR_SLOP (A's face stays
         the reference unless B's is better by that). Disjoint cores have a tested normal with separation
         ≥ 0 (2D SAT for polygons; a segment's normals ±n suffice against a polygon, and two disjoint
         segments cannot each straddle the other's line), so σ ≤ |c| − r ≤ 0.1·LINEAR_SLOP ≤ spec;
         overlapping cores have σ = −r ≤ spec.
       - two segments (no radius): never a point.
    Hence L − min(δ_A, δ_B) > spec ⇒ σ(T) > spec ⇒ a fresh collide_sat gives count 0, which is exactly the
    skipped row (count 0: no points, ids, impulses or touch). APART_ROUNDING·(1 + reach_a + reach_b) on top
    absorbs rounding.
    """
    ctx = cache[j, CTX]
    cty = cache[j, CTY]
    ctc = cache[j, CTC]
    cts = cache[j, CTS]
    dc = tc - ctc
    ds = ts - cts
    omega = math.sqrt(dc * dc + ds * ds)
    # B's centre of mass in A's frame: T·lb − T0·lb = (R − R0)·lb + t − t0
    dbx = dc * lbx - ds * lby + tx - ctx
    dby = ds * lbx + dc * lby + ty - cty
    move_b = math.sqrt(dbx * dbx + dby * dby) + omega * reach_b
    # A's centre of mass in B's frame: T⁻¹·la − T0⁻¹·la = Rᵀ(la − t) − R0ᵀ(la − t0)
    px = lax - tx
    py = lay - ty
    qx = lax - ctx
    qy = lay - cty
    dax = (tc * px + ts * py) - (ctc * qx + cts * qy)
    day = (-ts * px + tc * py) - (-cts * qx + ctc * qy)
    move_a = math.sqrt(dax * dax + day * day) + omega * reach_a
    return cache[j, CSEP] - min(move_a, move_b) > spec + APART_ROUNDING * (1.0 + reach_a + reach_b)


@llvm_inline_njit
def _store_cache(cache, k, m, tx, ty, tc, ts):
    """Cache a freshly computed manifold m (A frame) of contact k with the pose it was computed at (for one
    without points, its separation bound)."""
    cache[k, CTX] = tx
    cache[k, CTY] = ty
    cache[k, CTC] = tc
    cache[k, CTS] = ts
    cache[k, CSEP] = m[5] if m[0] == 0 else -np.inf
    nx = m[1]
    ny = m[2]
    cache[k, CNX] = nx
    cache[k, CNY] = ny
    for p in range(m[0]):
        px = m[3] if p == 0 else m[7]
        py = m[4] if p == 0 else m[8]
        hs = 0.5 * (m[5] if p == 0 else m[9])
        o = CQ0 + 4 * p
        cache[k, o] = px - hs * nx
        cache[k, o + 1] = py - hs * ny
        # B's anchor px + hs·n taken into B's frame: u = Rᵀ(q − t)
        qx = px + hs * nx - tx
        qy = py + hs * ny - ty
        cache[k, o + 2] = tc * qx + ts * qy
        cache[k, o + 3] = -ts * qx + tc * qy
    for q in range(CQ0 + 4 * m[0], CSEP):     # the table is not zeroed when allocated: no point, zeros
        cache[k, q] = 0.0


@inline_njit
def _mark_uncached(cache, k):
    """Mark contact k's cache row as holding no manifold: (cos, sin) = (0, 0), which no rotation has, so that
    ``_recycle``'s cosine of the rotation since is 0 and it refuses the row (the other fields are not written).
    A row with no points is never marked: ``_still_apart`` reads its bound."""
    cache[k, CTC] = 0.0
    cache[k, CTS] = 0.0


@inline_njit
def _put_step(c_step, k, dx, dy):
    """Row k of the step's impulses (``narrow_stage``): (dx, dy), a recycled contact's anchor offset, where the
    solver's write-back later puts the first point's normal and tangent impulses; zeros in the rest."""
    c_step[k, 0, 0] = dx
    c_step[k, 0, 1] = dy
    c_step[k, 1, 0] = 0.0
    c_step[k, 1, 1] = 0.0


@inline_njit
def _put_pack(pack, k, cnt, c_normal, c_point, c_sep, c_nimp, c_timp, c_step):
    """Row k of the prepare stage's packed rows (``_contact_rows.PACK_WIDTH``) from row k of the contact table, just
    written (cnt points; a second point's fields zeros without one)."""
    pack[k, PACK_NX] = c_normal[k, 0]
    pack[k, PACK_NY] = c_normal[k, 1]
    pack[k, PACK_DLX] = c_step[k, 0, 0]
    pack[k, PACK_DLY] = c_step[k, 0, 1]
    pack[k, PACK_SEP0] = c_sep[k, 0]
    pack[k, PACK_PX0] = c_point[k, 0, 0]
    pack[k, PACK_PY0] = c_point[k, 0, 1]
    pack[k, PACK_NIMP0] = c_nimp[k, 0]
    pack[k, PACK_TIMP0] = c_timp[k, 0]
    two = cnt == 2
    pack[k, PACK_SEP1] = c_sep[k, 1] if two else 0.0
    pack[k, PACK_PX1] = c_point[k, 1, 0] if two else 0.0
    pack[k, PACK_PY1] = c_point[k, 1, 1] if two else 0.0
    pack[k, PACK_NIMP1] = c_nimp[k, 1] if two else 0.0
    pack[k, PACK_TIMP1] = c_timp[k, 1] if two else 0.0
    pack[k, PACK_COUNT] = cnt
    pack[k, PACK_WIDTH - 1] = 0.0


@inline_njit
def _centre(local_center, b):
    """Body b's centre of mass in its frame; (0, 0) from an empty table (``narrow_stage``: every body's is at
    its origin, and the random reads are spared)."""
    if local_center.shape[0] == 0:
        return 0.0, 0.0
    return local_center[b, 0], local_center[b, 1]


@inline_njit
def _put_manifold(k, m, ax, ay, ac, as_, c_normal, c_point, c_sep):
    """Row k of the contact table from the manifold m (collide_sat's tuple, in body A's frame) with A's body at
    (ax, ay, ac, as_): the normal, the points and separations in the world; returns the deepest separation."""
    c_normal[k, 0] = ac * m[1] - as_ * m[2]
    c_normal[k, 1] = as_ * m[1] + ac * m[2]
    c_point[k, 0, 0] = ac * m[3] - as_ * m[4] + ax
    c_point[k, 0, 1] = as_ * m[3] + ac * m[4] + ay
    c_sep[k, 0] = m[5]
    c_point[k, 1, 0] = ac * m[7] - as_ * m[8] + ax
    c_point[k, 1, 1] = as_ * m[7] + ac * m[8] + ay
    c_sep[k, 1] = m[9]
    return c_sep[k, 0] if m[0] == 1 else min(c_sep[k, 0], c_sep[k, 1])


@inline_njit
def _clear_manifold(k, c_touch, c_normal, c_point, c_sep):
    """Row k of the contact table without points: not touching, normal, points and separations zero."""
    c_touch[k] = False
    c_normal[k, 0] = 0.0
    c_normal[k, 1] = 0.0
    for p in range(2):
        c_sep[k, p] = 0.0
        c_point[k, p, 0] = 0.0
        c_point[k, p, 1] = 0.0


@inline_njit
def _empty_row(k, c_count, c_ids, c_nimp, c_timp, c_touch, c_normal, c_point, c_sep, c_step):
    """Row k of the contact table as a pair without points: no count, ids or impulses, the manifold cleared
    (``_clear_manifold``) and the step's impulses zero (``_put_step``: no recycled anchor offset either)."""
    c_count[k] = 0
    for p in range(2):
        c_ids[k, p] = 0
        c_nimp[k, p] = 0.0
        c_timp[k, p] = 0.0
    _clear_manifold(k, c_touch, c_normal, c_point, c_sep)
    _put_step(c_step, k, 0.0, 0.0)


@inline_njit
def _collide_pair(a, b, tx, ty, tc, ts, spec, shape_offset, shape_count, shape_radius, verts, normals, sv, snm):
    """The manifold of shapes a and b (collide_sat's tuple, in a's body frame) with b's body at (tx, ty, tc, ts)
    relative to a's, points kept within ``spec``. Two circles take collide_sat's first case directly, without
    the four core slices it is handed (each costs reference counts, a third of a circle pair's time); two
    quadrilaterals (boxes) take their own SAT."""
    oa = shape_offset[a]
    ob = shape_offset[b]
    if shape_count[a] == 1 and shape_count[b] == 1:
        cx = tc * verts[ob, 0] - ts * verts[ob, 1] + tx
        cy = ts * verts[ob, 0] + tc * verts[ob, 1] + ty
        return collide_circles_local(verts[oa, 0], verts[oa, 1], shape_radius[a], cx, cy, shape_radius[b], spec)
    if shape_count[a] == 4 and shape_count[b] == 4:
        return collide_quadrilaterals(borrowed_rows(verts, oa, 4), borrowed_rows(normals, oa, 4), shape_radius[a],
                                      borrowed_rows(verts, ob, 4), borrowed_rows(normals, ob, 4), shape_radius[b],
                                      tx, ty, tc, ts, spec, sv, snm)
    return collide_sat(borrowed_rows(verts, oa, shape_count[a]), borrowed_rows(normals, oa, shape_count[a]),
                       shape_radius[a], borrowed_rows(verts, ob, shape_count[b]), borrowed_rows(normals, ob, shape_count[b]),
                       shape_radius[b], tx, ty, tc, ts, spec, sv, snm)


@njit
def _recycled_run(lo, hi, shape_body, shape_count, shape_reach, shape_sensor, local_center, awake, motion, xf,
                  keys, count, cache, c_count, c_ids, c_nimp, c_timp, c_normal, c_point, c_sep, c_touch, c_sensor,
                  c_step, pack):
    """Pairs lo, lo + 1, … of a table updated in place (the same pairs as last step: row k is last step's row k),
    as long as each is a pair the general loop of ``_narrow_block`` would reuse: not a sensor, not two circles,
    with an awake body, and either recycled (``_recycle``) or provably still apart (``_still_apart``). Returns
    the first pair it did not take (hi when it took them all), which the general loop then handles. The world
    has no one-way shape (the caller's condition): nothing else can change a reused manifold.

    Each pair's row ends bitwise as the general loop leaves it. What that loop writes and this one does not is
    what it would write over itself in place: the feature ids and the impulses of the points kept (the same
    points, in the same order), the cache row.

    Why a loop of its own: in a resting pile nearly every pair is one of these (the large pyramid: all 14,950 in
    each step whose pairs are last step's, most steps once it has settled). In the general loop each paid for
    the whole loop's state: some 35 arrays' pointers and strides, spilled to the stack and read back (about a
    third of the instructions of its hot path), the merge with last step's keys, and writes of values the row
    already holds. On its own it takes about 0.7 of the time (large_pyramid, many_pyramids)."""
    # borrowed views: the functions inlined below take no references (``borrowed``)
    shape_body, shape_count, shape_reach, shape_sensor, local_center, awake, motion, xf, keys, count, cache = \
        borrowed((shape_body, shape_count, shape_reach, shape_sensor, local_center, awake, motion, xf, keys, count,
                  cache))
    c_count, c_ids, c_nimp, c_timp, c_normal, c_point, c_sep, c_touch, c_sensor, c_step, pack = borrowed(
        (c_count, c_ids, c_nimp, c_timp, c_normal, c_point, c_sep, c_touch, c_sensor, c_step, pack))
    for k in index_range(lo, hi):
        # (unsigned, as the loop's index: no check for negative indices, ``index_range``)
        a = np.uint64(keys[k] >> KEY_SHIFT)
        bsh = np.uint64(keys[k] & KEY_MASK)
        ba = np.uint64(shape_body[a])
        bb = np.uint64(shape_body[bsh])
        if shape_sensor[a] or shape_sensor[bsh] or not (awake[ba] or awake[bb]) or (
                shape_count[a] == 1 and shape_count[bsh] == 1):
            return np.int64(k)
        ax = xf[ba, 0]
        ay = xf[ba, 1]
        ac = xf[ba, 2]
        as_ = xf[ba, 3]
        tx, ty, tc, ts = relative_transform(ax, ay, ac, as_, xf[bb, 0], xf[bb, 1], xf[bb, 2], xf[bb, 3])
        lax, lay = _centre(local_center, ba)
        lbx, lby = _centre(local_center, bb)
        cnt = count[k]
        if cnt > 0:
            reused, m, dlx, dly = _recycle(cache, np.int64(k), cnt, tx, ty, tc, ts,
                                           min(shape_reach[a], shape_reach[bsh]), c_normal[k, 0], c_normal[k, 1], ac,
                                           as_, lax, lay, lbx, lby)
            if not reused:
                return np.int64(k)
        else:
            spec = SPECULATIVE_DISTANCE + pair_motion(motion, np.int64(ba), np.int64(bb))
            if not _still_apart(cache, np.int64(k), tx, ty, tc, ts, lax, lay, shape_reach[a], lbx, lby,
                                shape_reach[bsh], spec):
                return np.int64(k)
            c_sensor[k] = False
            _empty_row(k, c_count, c_ids, c_nimp, c_timp, c_touch, c_normal, c_point, c_sep, c_step)
            continue
        c_sensor[k] = False
        c_count[k] = cnt
        if cnt == 1:
            c_nimp[k, 1] = 0.0
            c_timp[k, 1] = 0.0
        deepest = _put_manifold(k, m, ax, ay, ac, as_, c_normal, c_point, c_sep)
        c_touch[k] = deepest < LINEAR_SLOP
        _put_step(c_step, k, ac * dlx - as_ * dly, as_ * dlx + ac * dly)
        _put_pack(pack, k, cnt, c_normal, c_point, c_sep, c_nimp, c_timp, c_step)
    return hi


@njit
def _narrow_block(lo, hi, maxc, shapes, local_center, awake, motion, xf, keys, old, table, in_place):
    """Contacts lo … hi − 1 of the narrow phase (one parallel block; every name in here is private)."""
    if lo >= hi:
        return
    # borrowed views: the per-pair functions below take no references (``borrowed``)
    (shape_body, shape_offset, shape_count, shape_radius, shape_reach, shape_sensor, verts, normals, one_way, ghost,
     chain) = borrowed(shapes)
    old_keys, old_count, old_ids, old_nimp, old_timp, old_normal, old_point, old_sep, old_touch, old_cache = \
        borrowed(old)
    c_count, c_ids, c_normal, c_point, c_sep, c_nimp, c_timp, c_touch, c_sensor, c_cache, c_step, pack = \
        borrowed(table)
    local_center, awake, motion, xf, keys = borrowed((local_center, awake, motion, xf, keys))
    n_old = old_keys.shape[0]
    sv = np.empty((maxc, 2))
    snm = np.empty((maxc, 2))
    j_old = np.searchsorted(old_keys, keys[lo])
    # in place, with no one-way shape: runs of reused pairs take a loop of their own (``_recycled_run``)
    runs = in_place and one_way.shape[0] == 0
    after = lo
    for k in range(lo, hi):
        if k < after:
            continue
        a = keys[k] >> KEY_SHIFT
        bsh = keys[k] & KEY_MASK
        ua = np.uint64(a)
        ubsh = np.uint64(bsh)
        # (not for two circles, which the run never takes: a call per pair of a pile of circles)
        if runs and (shape_count[a] != 1 or shape_count[bsh] != 1):
            after = _recycled_run(k, hi, shape_body, shape_count, shape_reach, shape_sensor, local_center, awake,
                                  motion, xf, keys, old_count, old_cache, c_count, c_ids, c_nimp, c_timp, c_normal,
                                  c_point, c_sep, c_touch, c_sensor, c_step, pack)
            if after > k:
                continue
        ku = np.uint64(k)       # (unsigned indices: no check for negative ones, ``carom._jit.index_range``)
        ba = shape_body[ua]
        bb = shape_body[ubsh]
        uba = np.uint64(ba)
        ubb = np.uint64(bb)
        sensor = shape_sensor[ua] or shape_sensor[ubsh]
        c_sensor[ku] = sensor
        while j_old < n_old and old_keys[j_old] < keys[ku]:
            j_old += 1
        matched = j_old < n_old and old_keys[j_old] == keys[ku]
        if matched and not awake[uba] and not awake[ubb]:
            c_count[ku] = old_count[j_old]
            c_touch[ku] = old_touch[j_old]
            # (in place, the row is already last step's)
            for p in range(0 if in_place else 2):
                c_ids[ku, p] = old_ids[j_old, p]
                c_nimp[ku, p] = old_nimp[j_old, p]
                c_timp[ku, p] = old_timp[j_old, p]
                c_sep[ku, p] = old_sep[j_old, p]
                c_point[ku, p, 0] = old_point[j_old, p, 0]
                c_point[ku, p, 1] = old_point[j_old, p, 1]
            if not in_place:
                c_normal[ku, 0] = old_normal[j_old, 0]
                c_normal[ku, 1] = old_normal[j_old, 1]
            for q in range(0 if in_place else CACHE_WIDTH):   # (a plain loop compiles faster than a slice)
                c_cache[ku, q] = old_cache[j_old, q]
            _put_step(c_step, ku, 0.0, 0.0)
            # (solved after all if the pair's island wakes: ``narrow_stage``)
            if c_count[ku] > 0 and not sensor:
                _put_pack(pack, ku, c_count[ku], c_normal, c_point, c_sep, c_nimp, c_timp, c_step)
            continue
        # last step's ids and impulses of the pair, read before the row is written (in place, it is the same row)
        old_n = 0
        id0 = id1 = 0
        n0 = n1 = t0 = t1 = 0.0
        if matched:
            old_n = old_count[j_old]
            id0 = old_ids[j_old, 0]
            id1 = old_ids[j_old, 1]
            n0 = old_nimp[j_old, 0]
            n1 = old_nimp[j_old, 1]
            t0 = old_timp[j_old, 0]
            t1 = old_timp[j_old, 1]
        ax = xf[uba, 0]
        ay = xf[uba, 1]
        ac = xf[uba, 2]
        as_ = xf[uba, 3]
        tx, ty, tc, ts = relative_transform(ax, ay, ac, as_, xf[ubb, 0], xf[ubb, 1], xf[ubb, 2], xf[ubb, 3])
        oa = shape_offset[ua]
        ob = shape_offset[ubsh]
        # the speculative margin, read only by the paths that test or bound the pair (not by a recycled one:
        # its two random reads of ``motion`` were a tenth of a recycled pair's time)
        spec = 0.0
        # reused: the old cache row stays, with a recycled manifold or, for a pair provably still apart, none
        # (count, ids, impulses and touch stay 0) and the pose its separation bound was computed at
        # two circles are always tested afresh: their test costs less than trying to recycle (43 against
        # 55 ns a pair in a pile, where few pairs pass)
        circles = shape_count[ua] == 1 and shape_count[ubsh] == 1
        reused = False
        dlx = dly = 0.0
        if matched and not sensor and not circles:
            lax, lay = _centre(local_center, ba)
            lbx, lby = _centre(local_center, bb)
            if old_count[j_old] > 0:
                reused, m, dlx, dly = _recycle(old_cache, j_old, old_count[j_old], tx, ty, tc, ts,
                                               min(shape_reach[ua], shape_reach[ubsh]), old_normal[j_old, 0],
                                               old_normal[j_old, 1], ac, as_, lax, lay, lbx, lby)
            else:
                spec = SPECULATIVE_DISTANCE + pair_motion(motion, ba, bb)
                reused = _still_apart(old_cache, j_old, tx, ty, tc, ts, lax, lay, shape_reach[ua], lbx, lby,
                                      shape_reach[ubsh], spec)
                m = (0, 0.0, 0.0, 0.0, 0.0, 0.0, 0, 0.0, 0.0, 0.0, 0)
        if reused:
            for q in range(0 if in_place else CACHE_WIDTH):
                c_cache[ku, q] = old_cache[j_old, q]
        else:
            spec = 0.0 if sensor else SPECULATIVE_DISTANCE + pair_motion(motion, ba, bb)
            m = _collide_pair(a, bsh, tx, ty, tc, ts, spec, shape_offset, shape_count, shape_radius, verts, normals,
                              sv, snm)
            if m[0] > 0 and not sensor and one_way.shape[0] > 0 and (chain[ua] != 0 or chain[ubsh] != 0):
                # a chain segment: one-sided, and smooth across its joints (``chain_manifold``); the manifold is
                # corrected before it is cached, so a recycled one is the corrected one (chain segments are
                # one-way shapes: with none, the empty direction table spares each pair the look)
                m = chain_manifold(m, a, bsh, tx, ty, tc, ts, spec, shape_offset, shape_count, shape_radius, verts,
                                   normals, ghost, chain, sv, snm)
            # (two circles keep no cache, nor does a pair moving too fast to be recycled next step: the ``cache`` field)
            if not circles:
                if m[0] > 0 and spec > SPECULATIVE_DISTANCE + UNCACHED_MOTION:
                    _mark_uncached(c_cache, ku)
                else:
                    _store_cache(c_cache, k, m, tx, ty, tc, ts)
        cnt = m[0]
        if cnt > 0 and not sensor and one_way.shape[0] > 0 and (_is_one_way(one_way, a) or _is_one_way(one_way, bsh)) \
                and chain[ua] == 0 and chain[ubsh] == 0:
            # the normal in the world, from A to B: a one-way shape acts only when it points out of its solid
            # side (``one_way_passes``)
            nwx = ac * m[1] - as_ * m[2]
            nwy = as_ * m[1] + ac * m[2]
            if (one_way_passes(one_way, a, xf[uba, 2], xf[uba, 3], nwx, nwy)
                    or one_way_passes(one_way, bsh, xf[ubb, 2], xf[ubb, 3], -nwx, -nwy)):
                cnt = 0
                if not circles:
                    # tested afresh next step (a recycled or "still apart" row would keep it passing)
                    _mark_uncached(c_cache, ku)
                    c_cache[ku, CSEP] = -np.inf
        # (the table is allocated without zeroing, so every field of the row is written on every path)
        if cnt == 0:
            _empty_row(ku, c_count, c_ids, c_nimp, c_timp, c_touch, c_normal, c_point, c_sep, c_step)
            continue
        c_count[ku] = cnt
        c_nimp[ku, 0] = 0.0
        c_nimp[ku, 1] = 0.0
        c_timp[ku, 0] = 0.0
        c_timp[ku, 1] = 0.0
        deepest = _put_manifold(ku, m, ax, ay, ac, as_, c_normal, c_point, c_sep)
        c_touch[ku] = deepest < 0.0 if sensor else deepest < LINEAR_SLOP
        # a recycled contact's B anchors less A's (the same for both points), in the world; 0 for a fresh one
        _put_step(c_step, ku, ac * dlx - as_ * dly, as_ * dlx + ac * dly)
        if reused:
            # the same points with the same ids, in the same order: their impulses carry over as they are
            c_ids[ku, 0] = id0
            c_ids[ku, 1] = id1
            c_nimp[ku, 0] = n0
            c_timp[ku, 0] = t0
            if cnt == 2:
                c_nimp[ku, 1] = n1
                c_timp[ku, 1] = t1
            if not sensor:
                _put_pack(pack, ku, cnt, c_normal, c_point, c_sep, c_nimp, c_timp, c_step)
            continue
        c_ids[ku, 0] = m[6]
        c_ids[ku, 1] = m[10]
        if matched and not sensor:
            for p in range(cnt):
                new_id = m[6] if p == 0 else m[10]
                for q in range(old_n):
                    if (id0 if q == 0 else id1) == new_id:
                        c_nimp[ku, p] = n0 if q == 0 else n1
                        c_timp[ku, p] = t0 if q == 0 else t1
        if not sensor:
            _put_pack(pack, ku, cnt, c_normal, c_point, c_sep, c_nimp, c_timp, c_step)


#: a one-way shape acts on a contact whose normal (from it to the other shape) is within 60° of its solid
#: side's direction
ONE_WAY_COS = 0.5


@inline_njit
def _is_one_way(one_way, s):
    """Whether shape s is one-way (a direction, not (0, 0)). Inlined: the narrow stage asks it of every shape
    of the world to learn whether any is (as a call, 1 % of the large pyramid's step)."""
    return one_way[s, 0] != 0.0 or one_way[s, 1] != 0.0


@njit
def one_way_passes(one_way, s, c, sn, nx, ny):
    """Whether shape s lets the other shape of a contact pass: s is one-way (a unit direction d in its body's
    frame, the way out of its solid side; (0, 0) for an ordinary shape), and the contact normal n, pointing
    from s to the other shape, is more than 60° from d turned by the body's rotation (c, sn). A body coming
    from behind (n against d) or from the side passes; one resting on or falling onto the solid side (n along
    d) is held. Stateless, as Box2D v3's one-way platform (its pre-solve test on the manifold normal): a body
    that jumps up into the platform passes while the normal points down, and is pushed out upwards once it
    is more than half through."""
    if not _is_one_way(one_way, s):
        return False
    dx = c * one_way[s, 0] - sn * one_way[s, 1]
    dy = sn * one_way[s, 0] + c * one_way[s, 1]
    # (n need not be a unit vector: the continuous stage passes the body's way back)
    return nx * dx + ny * dy < ONE_WAY_COS * math.sqrt(nx * nx + ny * ny)


#: ``chain`` bits of a shape (``World._s_chain``): a chain segment (``Body.add_chain``), which has a segment
#: before it (its first vertex is a joint) and one after it (its second vertex is a joint). The ghost row
#: (``World._s_ghost``) holds the previous segment's first vertex and the next segment's second vertex
CHAIN, CHAIN_PREV, CHAIN_NEXT = 1, 2, 4
#: a joint counts as convex (a bump seen from the free side) when the sine of its turn exceeds this; flatter
#: joints, and concave ones, snap normals to the segment's own (Box2D's convexTol)
CHAIN_CONVEX = 0.01
#: a normal is beyond a convex neighbour's when it is turned past it by more than this sine (Box2D's sinTol)
CHAIN_SIN_TOL = 0.01


@njit
def chain_manifold(m, a, b, tx, ty, tc, ts, spec, shape_offset, shape_count, shape_radius, verts, normals, ghost,
                   chain, sv, snm):
    """The manifold m of shapes a and b (collide_sat's, (a, b) in a's body frame, b's body at (tx, ty, tc, ts) in
    a's), of which one is a chain segment, made one-sided and smooth across the chain's joints
    (``_chain_rule``, in the chain segment's frame: a chain segment in b is handled in b's frame and the result
    swapped back). One compiled function for both orders; the rule is inlined into it."""
    if m[0] == 0:
        return m
    swap = chain[a] == 0
    c, o = (b, a) if swap else (a, b)
    if swap:
        px, py, pc, ps = relative_transform(tx, ty, tc, ts, 0.0, 0.0, 1.0, 0.0)
        mc = _swap_manifold(m, px, py, pc, ps)
    else:
        px, py, pc, ps = tx, ty, tc, ts
        mc = m
    # (one call: the rule is inlined, and each call site would be a copy of it)
    r = _chain_rule(mc, c, o, px, py, pc, ps, spec, shape_offset, shape_count, shape_radius, verts, normals, ghost,
                    chain, sv, snm)
    return _swap_manifold(r, tx, ty, tc, ts) if swap else r


@llvm_inline_njit
def _chain_rule(m, c, o, tx, ty, tc, ts, spec, shape_offset, shape_count, shape_radius, verts, normals, ghost, chain,
                sv, snm):
    """The manifold m of chain segment c and shape o (collide_sat's, (c, o) in c's frame, o's body at (tx, ty,
    tc, ts) in c's) made one-sided and smooth across the chain's joints, as Box2D's chain segments are
    (b2CollideChainSegmentAndPolygon: ghost vertices and the Gauss map of the joints).

    The segment runs from v1 to v2, e = (v2 − v1)/|v2 − v1|, and its free side is on the left: N1 = (−e_y, e_x)
    (``Body.add_chain``). Its neighbours, when it has them, run from the ghost g0 to v1 (e0, N0) and from v2 to
    the ghost g3 (e2, N2). Seen from the free side, the joint at v1 is convex (a bump) when the path turns
    right there, e0 × e < −CHAIN_CONVEX; flat and concave joints are not. At a convex joint the normals a
    contact there may have fill the cone from N1 to N0; at a flat or concave one only N1 belongs to this
    segment. An open end (no neighbour) counts as convex with N0 = −e (at v2, N2 = e): the end is rounded on
    the free side only.

    1. One-sided: o's centroid (of its core vertices) behind the line of N1, and behind N0 and N2 where those
       joints are convex → no contact. (Its centroid, not the normal: a body on the free side stays held however
       deep it sinks, and one from the back passes whatever SAT finds.)
    2. The neighbour's face separates more: with w over o's core, min N0·(w − v1) > min N1·(w − v1) at a
       convex joint (likewise N2 at v2) → no contact: the neighbour owns it (Box2D: "neighbouring segment is the
       separating axis").
    3. The normal n (from c to o) is classified on the side of N1 it leans to (n·e ≤ 0: the v1 side): at a
       convex joint it is admitted inside the cone and skipped beyond it (N0 × n > CHAIN_SIN_TOL: turned
       further than N0); at a flat or concave joint it is snapped to N1. A skipped normal of a pair apart
       (by more than 0.1·LINEAR_SLOP) gives no contact (the neighbour's vertex region); of a pair in contact
       it is snapped (SAT would have chosen N1 had the other axes not been excluded).
    4. Snapped: the face manifold with the segment as reference face (normal N1) and o's edge most against
       N1 clipped to it (``_clip``, as collide_sat); a circle's point is its centre's along N1.

    Why: on a flat chain a box sliding across a joint met the next segment's end with its leading face — SAT
    found its side face the least penetrating axis, pushing it backwards — and a circle rolling over a joint
    got the joint's vertex normal, tilted towards it: both tripped or bounced where a single long segment is
    smooth. With the rule every contact on a flat chain has the normal N1, as on one segment.

    A dropped contact returns an empty manifold whose separation bound is −inf, so it is tested afresh next
    step (``_still_apart`` never skips it)."""
    if m[0] == 0:
        return m
    oc = shape_offset[c]
    v1x = verts[oc, 0]
    v1y = verts[oc, 1]
    v2x = verts[oc + 1, 0]
    v2y = verts[oc + 1, 1]
    # the free side's normal is the stored normal of the edge v2 → v1 (edge_normals: right of travel)
    n1x = normals[oc + 1, 0]
    n1y = normals[oc + 1, 1]
    ex = n1y
    ey = -n1x
    flags = chain[c]
    prev = (flags & CHAIN_PREV) != 0
    nxt = (flags & CHAIN_NEXT) != 0
    if prev:
        dx = v1x - ghost[c, 0]
        dy = v1y - ghost[c, 1]
        d = math.sqrt(dx * dx + dy * dy)
        e0x = dx / d
        e0y = dy / d
        convex1 = e0x * ey - e0y * ex < -CHAIN_CONVEX
        n0x = -e0y
        n0y = e0x
    else:
        convex1 = True
        n0x = -ex
        n0y = -ey
    if nxt:
        dx = ghost[c, 2] - v2x
        dy = ghost[c, 3] - v2y
        d = math.sqrt(dx * dx + dy * dy)
        e2x = dx / d
        e2y = dy / d
        convex2 = ex * e2y - ey * e2x < -CHAIN_CONVEX
        n2x = -e2y
        n2y = e2x
    else:
        convex2 = True
        n2x = ex
        n2y = ey
    # o's core in c's frame: its centroid and its separations along N1, N0 and N2
    count = shape_count[o]
    oo = shape_offset[o]
    w = borrowed_rows(sv, 0, count)
    wn = borrowed_rows(snm, 0, count)
    _to_frame(borrowed_rows(verts, oo, count), borrowed_rows(normals, oo, count), tx, ty, tc, ts, w, wn, count)
    cx = 0.0
    cy = 0.0
    s0 = np.inf
    s1 = np.inf
    s2 = np.inf
    for i in range(count):
        cx += w[i, 0]
        cy += w[i, 1]
        s1 = min(s1, n1x * (w[i, 0] - v1x) + n1y * (w[i, 1] - v1y))
        s0 = min(s0, n0x * (w[i, 0] - v1x) + n0y * (w[i, 1] - v1y))
        s2 = min(s2, n2x * (w[i, 0] - v2x) + n2y * (w[i, 1] - v2y))
    cx /= count
    cy /= count
    dropped = (0, 0.0, 0.0, 0.0, 0.0, -np.inf, 0, 0.0, 0.0, 0.0, 0)
    # 1. one-sided
    behind = n1x * (cx - v1x) + n1y * (cy - v1y) < 0.0
    if prev and convex1:
        behind = behind and n0x * (cx - v1x) + n0y * (cy - v1y) < 0.0
    if nxt and convex2:
        behind = behind and n2x * (cx - v2x) + n2y * (cy - v2y) < 0.0
    if behind:
        return dropped
    # 2. a convex neighbour's face separates more
    if (prev and convex1 and s0 > s1) or (nxt and convex2 and s2 > s1):
        return dropped
    nx = m[1]
    ny = m[2]
    if nx == n1x and ny == n1y:
        return m
    # 3. the normal on the Gauss map of the joints
    if nx * ex + ny * ey <= 0.0:
        convex = convex1
        beyond = n0x * ny - n0y * nx > CHAIN_SIN_TOL
    else:
        convex = convex2
        beyond = nx * n2y - ny * n2x > CHAIN_SIN_TOL
    if convex and not beyond:
        return m
    if convex:
        least = m[5] if m[0] == 1 else min(m[5], m[9])
        if least > 0.1 * LINEAR_SLOP:
            return dropped
    # 4. snapped to N1
    ra = shape_radius[c]
    rb = shape_radius[o]
    if count == 1:
        return _point_result(n1x, n1y, w[0, 0] - s1 * n1x, w[0, 1] - s1 * n1y, w[0, 0], w[0, 1], ra, rb, s1,
                             np.int64(0), spec)
    inc = _incident_edge(n1x, n1y, wn, count)
    flip = nx != nx       # (False, not a literal: as in _face_manifold)
    r = _clip(borrowed_rows(verts, oc, 2), borrowed_rows(normals, oc, 2), ra, np.int64(1), w, wn, rb, inc, spec,
              flip)
    return r if r[0] > 0 else dropped


#: the narrow phase splits the pairs into this many blocks (a fixed number, so results do not depend on the
#: thread count); each block has its own scratch space
NARROW_BLOCKS = 64
#: below this many candidate pairs the narrow phase runs in the calling thread (a pair takes 0.1-0.4 µs; the
#: parallel loop's launch about 5 µs)
NARROW_PARALLEL_MIN_PAIRS = 32


@pnjit_kernel_launcher
def _narrow_blocks(maxc, shapes, local_center, awake, motion, xf, keys, old, table, in_place, threads):
    """The pairs in NARROW_BLOCKS blocks, in parallel (only the parallel loop lives in this parallel
    function: Numba analyses every statement of a function with a parallel loop, so the rest of the stage
    stays outside, which saves seconds of compile time)."""
    K = keys.shape[0]
    if threads == 1 or K < NARROW_PARALLEL_MIN_PAIRS:
        # in this thread, all pairs in one call (the pairs are independent, so the blocks make no difference
        # to any result): launching the parallel loop costs about 15 µs (5 µs of a small world's step with two
        # threads, for one pair), and each call takes and drops a reference on its 33 arrays, about 0.5 µs
        _narrow_block(np.int64(0), K, maxc, shapes, local_center, awake, motion, xf, keys, old, table, in_place)
        return
    block = (K + NARROW_BLOCKS - 1) // NARROW_BLOCKS
    for blk in prange(NARROW_BLOCKS):
        lo = blk * block
        _narrow_block(lo, min(K, lo + block), maxc, shapes, local_center, awake, motion, xf, keys, old, table,
                      in_place)


@njit
def narrow_stage(bodies, shapes, awake, motion, xf, keys, old, in_place, threads):
    """Manifolds of the candidate pairs, matched to last step's contacts by feature id (warm starting).

    A pair of which neither body is awake (both asleep or static) keeps last step's manifold unchanged.
    Sensor pairs are tested for overlap only (no speculative margin) and are never solved. A touching contact
    between an awake body and a sleeping one wakes the sleeping body's island (``awake`` is updated). Pairs
    are independent, so blocks of them run in parallel. ``in_place``: the pairs are last step's
    (``same_pairs``). Returns the contact table (``NarrowTable``: keys, count, feature ids, normal and tangent
    impulses, normal, points, separations, touching, sensor, cache, the step's impulses) and the prepare stage's
    packed rows of the same contacts (``_contact_rows.PACK_WIDTH``: ``_put_pack``).

    Contact recycling: a pair whose bodies barely moved relative to each other since its manifold was
    computed reuses that manifold (``_recycle``), so resting stacks skip most collision tests (two circles
    are always tested afresh: their test is cheaper than the attempt). A pair that had
    no points and provably still has none (``_still_apart``: the separation bound cached with its last test,
    less how far the shapes can have moved relative to each other since, exceeds the margin) skips the test
    too, with exactly the result the test would give. (World._skip_apart = False turns this off from Python,
    by clearing the bounds of last step's table; for tests.)
    """
    bodies = deref(bodies)
    shapes = deref(shapes)
    kind, body_alive, asleep, sleep_time, island = (
        bodies.kind, bodies.alive, bodies.asleep, bodies.sleep_time, bodies.island)
    (shape_body, shape_alive, shape_offset, shape_count, shape_radius, shape_friction, shape_restitution,
     shape_reach, shape_sensor, shape_category, shape_mask, shape_group, verts, normals) = (
        shapes.body, shapes.alive, shapes.offset, shapes.vert_count, shapes.radius, shapes.friction,
        shapes.restitution, shapes.reach, shapes.sensor, shapes.category, shapes.mask, shapes.group, shapes.verts,
        shapes.normals)
    NB = kind.shape[0]
    S = shape_body.shape[0]
    K = keys.shape[0]
    # not zeroed: the blocks write every field of every row (zeroing the table cost a serial memset of
    # about 240 bytes per pair, 3.6 MB a step in the large pyramid)
    # with the same pairs as last step (``in_place``: ``same_pairs``) the table's rows are updated in place: the
    # cache (a recycled pair's row, the manifold it keeps, is not copied), the feature ids, the points and their
    # impulses, the normal and the step's impulses. Each pair reads and writes only its own row, and reads what
    # it needs of last step's before it writes. In the large pyramid (the same pairs 84 steps in 100), copying
    # those rows into new arrays was two streams of about 200 bytes per pair, read and written. Made afresh:
    # the point counts, touch and sensor flags, which the colouring (``same_colouring``) and the events
    # (``World.step``: last step's keys, touch and sensor flags) compare with last step's
    c_count = np.empty(K, np.int64)
    c_touch = np.empty(K, np.bool_)
    c_sensor = np.empty(K, np.bool_)
    if in_place:
        c_ids, c_normal, c_point, c_sep, c_nimp, c_timp, c_cache, c_step = (
            old.ids, old.normal, old.points, old.separation, old.normal_impulse, old.tangent_impulse, old.cache,
            old.step_impulse)
    else:
        c_ids = np.empty((K, 2), np.int64)
        c_normal = np.empty((K, 2))
        c_point = np.empty((K, 2, 2))
        c_sep = np.empty((K, 2))
        c_nimp = np.empty((K, 2))
        c_timp = np.empty((K, 2))
        c_cache = np.empty((K, CACHE_WIDTH))
        c_step = np.empty((K, 2, 2))
    # each point's normal and tangent impulse over the whole step: zeros, written by the solver for the contacts
    # it solves (``_solver._write_back``). Until the solver writes them, row k's first entry carries a recycled
    # contact's anchor offset instead: B's anchor less A's in the world (``_recycle``), 0 for a fresh manifold,
    # whose anchors meet; the prepare stage reads it (``_prepare_point``), and the solver's write-back then
    # overwrites it for every contact it solves (a recycled contact always has an awake dynamic body, so it is
    # solved; one the pre-solve hook disables is cleared there). The blocks write every row (``_put_step``):
    # they write the offset of most rows anyway, and a memset of the table before them cost more
    # one-way shapes are looked for per pair only when there are any (``one_way_passes``), and the most vertices of
    # a shape; one pass without branches, which the compiler vectorizes (two passes that stopped at nothing were
    # 20 µs a step for 22,000 shapes, in one thread)
    any_one_way = False
    maxc = np.int64(1)   # not a literal: a literal argument would compile the block kernel twice
    one_way = shapes.one_way
    for s in index_range(0, S):
        any_one_way |= shape_alive[s] & ((one_way[s, 0] != 0.0) | (one_way[s, 1] != 0.0))
        maxc = max(maxc, shape_count[s])
    # the prepare stage's packed rows of the contacts with points (``_put_pack``; the rows of the others are not
    # written, as the prepare stage never reads them) and a last row of zeros, for its empty lanes
    pack = aligned_rows(K + 1, PACK_WIDTH)
    for f in range(PACK_WIDTH):
        pack[K, f] = 0.0
    table = (c_count, c_ids, c_normal, c_point, c_sep, c_nimp, c_timp, c_touch, c_sensor, c_cache, c_step, pack)
    # only the arrays the blocks use: every array a parallel loop receives costs compile time
    # (no one-way shape: an empty table of directions, which the blocks take as "none")
    shape_data = (shape_body, shape_offset, shape_count, shape_radius, shape_reach, shape_sensor, verts, normals,
                  shapes.one_way if any_one_way else shapes.one_way[:0], shapes.ghost, shapes.chain)
    old_data = (old.keys, old.count, old.ids, old.normal_impulse, old.tangent_impulse, old.normal, old.points,
                old.separation, old.touching, old.cache)
    # bodies whose centre of mass is at their origin (boxes, circles, most scenes' every body): an empty table of
    # centres, which the blocks take as zeros without two random reads per pair (``_centre``)
    local_center = bodies.local_center
    off_centre = False
    for b in index_range(0, NB):
        off_centre |= (local_center[b, 0] != 0.0) | (local_center[b, 1] != 0.0)
    centred = not off_centre
    _narrow_blocks(maxc, shape_data, local_center[:0] if centred else local_center, awake, motion, xf, keys, old_data,
                   table, in_place, threads)
    # wake the islands of sleeping bodies that an awake body reaches (sensors never wake anything); with no
    # body asleep (sleeping off, or a busy scene) there is nothing to wake and the pass over the pairs is
    # skipped (a serial 0.05-0.1 ms for 15,000 pairs)
    wake = np.zeros(NB, np.bool_)
    any_wake = False
    any_asleep = False
    for b in index_range(0, NB):
        any_asleep |= asleep[b]
    for k in range(K if any_asleep else 0):
        if c_count[k] == 0 or c_sensor[k]:
            continue
        ba = shape_body[keys[k] >> KEY_SHIFT]
        bb = shape_body[keys[k] & KEY_MASK]
        if asleep[ba] and kind[ba] == DYNAMIC and awake[bb]:
            wake[island[ba]] = True
            any_wake = True
        if asleep[bb] and kind[bb] == DYNAMIC and awake[ba]:
            wake[island[bb]] = True
            any_wake = True
    if any_wake:
        for b in range(NB):
            if body_alive[b] and asleep[b] and wake[island[b]]:
                asleep[b] = False
                sleep_time[b] = 0.0
                awake[b] = True
    return NarrowTable(keys, c_count, c_ids, c_nimp, c_timp, c_normal, c_point, c_sep, c_touch, c_sensor, c_cache,
                       c_step), pack
