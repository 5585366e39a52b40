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
from numba import prange

from .._jit import (njit, entry_njit, inline_njit, linking_entry_njit, llvm_inline_njit, pnjit, cycle_counter,
                    borrowed, borrowed_rows)
from ..constants import (SPECULATIVE_DISTANCE, LINEAR_SLOP, TOI_TARGET, TOI_MAX_ITERATIONS,
                         SLEEP_TIME, RECYCLE_DISTANCE, APART_ROUNDING,
                         UNCACHED_MOTION, FLOAT32_LIMIT, MAX_TRANSLATION_SPEED)
from ..geometry._math import relative_transform, angle_sin_cos, sin_cos_rows
from ..geometry.aabb import core_box
from ..geometry.manifold import (collide_sat, collide_circles_local, collide_quadrilaterals, _swap_manifold, _to_frame,
                                 _incident_edge, _clip, _point_result)
from ..geometry.toi import conservative_advancement
from ..geometry._tree import tree_update, tree_insert_pending
from ..geometry._tree_pairs import tree_pairs_cached, _sorted_keys
from ..geometry._tree_query import tree_query_boxes
from .joints._common import FILTER
from ._solver import (prepare_stage, solve_stage, chunk_count, colouring_of, same_pairs, COLOURING, capped_velocity,
                      max_angular_speed, mix)
from .presolve import call_pre_solve

STATIC, KINEMATIC, DYNAMIC = 0, 1, 2


@njit
def body_origin(com, angle, local_center, b):
    """Body b's transform (origin x, origin y, cos θ, sin θ); bitwise the one the step uses (``_body_bounds``)."""
    s, c = angle_sin_cos(angle[b])
    return _origin(com, local_center, b, c, s)


@inline_njit
def _origin(com, local_center, b, c, s):
    """Body b's transform from the cosine and sine of its angle: the origin sits at com − R·local_center."""
    lx = local_center[b, 0]
    ly = local_center[b, 1]
    return com[b, 0] - (c * lx - s * ly), com[b, 1] - (s * lx + c * ly), c, s


KEY_SHIFT = 32
KEY_MASK = 0xFFFFFFFF


@njit
def should_collide(cat_a, mask_a, group_a, cat_b, mask_b, group_b):
    """Box2D's filter rule: a shared nonzero group decides (positive: always, negative: never); otherwise
    each shape's category bits must meet the other's mask."""
    if group_a == group_b and group_a != 0:
        return group_a > 0
    zero = np.uint64(0)
    return (cat_a & mask_b) != zero and (cat_b & mask_a) != zero


# a body's row of ``motion`` (``bounds_stage``): the bound of how far any of its points can travel in the step
# (capped at half its smallest extent), its displacement v·dt, the rotation sweep |ω|·reach·dt, the gravity
# drop dt²·|g|·scale (signed by the scale; 0 for bodies gravity does not move), and 1 when the bound is not
# capped (the broad phase then sweeps the body's boxes along the displacement: ``_shape_bounds``)
M_BOUND, M_DX, M_DY, M_TURN, M_FALL, M_SWEPT = 0, 1, 2, 3, 4, 5
MOTION_WIDTH = 6


@njit
def pair_motion(motion, a, b):
    """How much the gap between bodies a and b can close in the step: their speculative margin beyond
    SPECULATIVE_DISTANCE.

    The gap closes at the relative speed of the closest points, (vB + ωB × rB) − (vA + ωA × rA) with |r| at most
    each body's reach, plus what gravity adds: at most |ΔV|·dt + (|ωA| reachA + |ωB| reachB)·dt + dt²·|g|·
    |scaleA − scaleB|. By the triangle inequality that is at most the sum of the two bodies' own bounds (the
    margin used before), which still caps it. Bodies that fly together (a scattered block, a falling crowd)
    then get the slop-sized margin of bodies at rest, where the sum of their speeds gave each such pair a
    margin of up to a body's size: the narrow phase built, and the solver solved, a speculative manifold for
    every neighbour in reach (after the smash, 2,500 to 12,000 pairs a step, of which a fifth touched).

    What it gives up: a body that the step's contacts stop (the first of a falling column to land) has no
    speculative contact with the one following it, which then overlaps it for a step before the contact
    pushes them apart (a 5,000-circle pile at steps 40 to 100: deepest overlap 77-128 mm where the sum gave
    41-119; pymunk 64-205). Box2D v3 gives every pair the slop-sized margin alone."""
    dx = motion[b, M_DX] - motion[a, M_DX]
    dy = motion[b, M_DY] - motion[a, M_DY]
    rel = math.sqrt(dx * dx + dy * dy) + motion[a, M_TURN] + motion[b, M_TURN] + abs(motion[b, M_FALL]
                                                                                       - motion[a, M_FALL])
    return min(rel, motion[a, M_BOUND] + motion[b, M_BOUND])


@njit
def bounds_stage(dt, gx, gy, bodies, shapes, threads):
    """Which bodies move this step, how far (the speculative margin), their transforms and every shape's box.

    ``awake`` marks the bodies whose contacts are recomputed and solved: awake dynamic bodies and moving
    kinematic ones. ``motion[b]`` holds the body's motion in the step (``pair_motion``): a bound of how far
    any of its points can travel, (|v| + |ω|·reach + dt·|g|)·dt with reach the farthest shape point from the
    centre of mass, and the parts of it a pair compares.
    ``xf[b]`` = (origin x, origin y, cos θ, sin θ) of each body, computed once for the whole step. Bodies, then
    shapes, in parallel chunks (each item is independent of the others).
    """
    com, angle, vel, angvel, local_center, kind, body_alive, gravity_scale, body_min_extent, asleep = (
        bodies[0], bodies[1], bodies[2], bodies[3], bodies[6], bodies[7], bodies[9], bodies[14], bodies[15],
        bodies[16])
    shape_body, shape_alive, shape_offset, shape_count, shape_radius, shape_reach, verts = (
        shapes[0], shapes[1], shapes[2], shapes[3], shapes[4], shapes[7], shapes[12])
    NB = com.shape[0]
    S = shape_body.shape[0]
    reach = np.zeros(NB)
    for s in range(S):
        if shape_alive[s]:
            b = shape_body[s]
            if shape_reach[s] > reach[b]:
                reach[b] = shape_reach[s]
    awake = np.empty(NB, np.bool_)
    motion = np.empty((NB, MOTION_WIDTH))
    xf = np.empty((NB, 4))
    lower = np.empty((S, 2))
    upper = np.empty((S, 2))
    _bounds_chunks(dt, gx, gy, com, angle, vel, angvel, local_center, kind, body_alive, gravity_scale,
                   body_min_extent, asleep, reach, awake, motion, xf, shape_body, shape_alive, shape_offset,
                   shape_count, shape_radius, verts, lower, upper, threads)
    return reach, awake, motion, xf, lower, upper


@pnjit
def _bounds_chunks(dt, gx, gy, com, angle, vel, angvel, local_center, kind, body_alive, gravity_scale,
                   body_min_extent, asleep, reach, awake, motion, xf, shape_body, shape_alive, shape_offset,
                   shape_count, shape_radius, verts, lower, upper, threads):
    """The two loops of :func:`bounds_stage`, in parallel chunks (a call per chunk keeps names private)."""
    NB = com.shape[0]
    S = shape_body.shape[0]
    if threads == 1:
        # (in this thread: launching a parallel loop for one chunk costs about 15 µs; a literal 0 would
        # compile each function a second time, for Literal[int](0))
        zero = np.int64(0)
        _body_bounds(zero, NB, dt, gx, gy, com, angle, vel, angvel, local_center, kind, body_alive, gravity_scale,
                     body_min_extent, asleep, reach, awake, motion, xf)
        _shape_bounds(zero, S, shape_body, shape_alive, shape_offset, shape_count, shape_radius, verts, xf, motion,
                      lower, upper)
        return
    chunks = chunk_count(NB, threads)
    for ch in prange(chunks):
        _body_bounds(ch * NB // chunks, (ch + 1) * NB // chunks, dt, gx, gy, com, angle, vel, angvel,
                     local_center, kind, body_alive, gravity_scale, body_min_extent, asleep, reach, awake,
                     motion, xf)
    chunks = chunk_count(S, threads)
    for ch in prange(chunks):
        _shape_bounds(ch * S // chunks, (ch + 1) * S // chunks, shape_body, shape_alive, shape_offset,
                      shape_count, shape_radius, verts, xf, motion, lower, upper)


@njit
def _body_bounds(lo, hi, dt, gx, gy, com, angle, vel, angvel, local_center, kind, body_alive, gravity_scale,
                 body_min_extent, asleep, reach, awake, motion, xf):
    """Bodies lo … hi − 1: transform, awake flag and motion bound (every entry written)."""
    com, angle, local_center = borrowed((com, angle, local_center))  # (``borrowed``)
    # every body's sine and cosine first, in one vectorized loop (``sin_cos_rows``)
    rot = np.empty((2, hi - lo))
    sin_cos_rows(angle, lo, hi, rot)
    gravity_fall = dt * dt * math.sqrt(gx * gx + gy * gy)
    max_w = max_angular_speed(dt)
    for b in range(lo, hi):
        if body_alive[b]:
            # every velocity within the caps before the step uses it (``capped_velocity``): a velocity set far
            # beyond them (1e6 m/s) otherwise reached the contacts' restitution, whose bounce answers the
            # approach speed, and left the step just as fast
            vel[b, 0], vel[b, 1], angvel[b] = capped_velocity(vel[b, 0], vel[b, 1], angvel[b], max_w)
        moving = False
        if not body_alive[b]:
            xf[b, 0] = 0.0
            xf[b, 1] = 0.0
            xf[b, 2] = 0.0
            xf[b, 3] = 0.0
        else:
            ox, oy, c, sn = _origin(com, local_center, b, rot[1, b - lo], rot[0, b - lo])
            xf[b, 0] = ox
            xf[b, 1] = oy
            xf[b, 2] = c
            xf[b, 3] = sn
            if kind[b] == DYNAMIC:
                moving = not asleep[b]
            elif kind[b] != STATIC:
                moving = vel[b, 0] != 0.0 or vel[b, 1] != 0.0 or angvel[b] != 0.0
        # (the flag kept in a register and the motion row written once: a tenth less time than zeroing every
        # row first and reading the flag back from the array)
        awake[b] = moving
        if not moving:
            for f in range(MOTION_WIDTH):
                motion[b, f] = 0.0
            continue
        vx = vel[b, 0]
        vy = vel[b, 1]
        turn = abs(angvel[b]) * reach[b] * dt
        fall = gravity_fall * gravity_scale[b] if kind[b] == DYNAMIC else 0.0
        sp = math.sqrt(vx * vx + vy * vy) * dt + turn + abs(fall)
        # capped at the body's half extent: beyond that, continuous collision (against static shapes)
        # takes over, and an uncapped margin would give fast bodies fat boxes full of useless pairs
        half = 0.5 * body_min_extent[b]
        motion[b, M_BOUND] = min(sp, half)
        motion[b, M_SWEPT] = 1.0 if sp <= half else 0.0
        motion[b, M_DX] = vx * dt
        motion[b, M_DY] = vy * dt
        motion[b, M_TURN] = turn
        motion[b, M_FALL] = fall


@njit
def _shape_bounds(lo, hi, shape_body, shape_alive, shape_offset, shape_count, shape_radius, verts, xf, motion,
                  lower, upper):
    """Shapes lo … hi − 1: the box of the core, swept along the body's displacement in the step and grown by
    half the speculative distance and what rotation and gravity add; the box of a body whose motion bound is
    capped (a fast one, left to continuous collision) is grown by its bound on every side instead.

    Two swept boxes overlap whenever the bodies, each moved along its displacement by any fraction of it, come
    within the speculative distance of each other: the pairs their relative motion can bring together
    (``pair_motion``). Grown by the whole bound on every side, as before, each box also reached across the
    paths of its neighbours in a crowd moving together (the tumbler: 9,050 pairs a step against 5,410, the
    extra ones narrow-phase tests that found nothing)."""
    for s in range(lo, hi):
        if not shape_alive[s]:
            lower[s, 0] = 0.0
            lower[s, 1] = 0.0
            upper[s, 0] = 0.0
            upper[s, 1] = 0.0
            continue
        b = shape_body[s]
        o = shape_offset[s]
        lx, ly, ux, uy = core_box(borrowed_rows(verts, o, shape_count[s]), shape_radius[s], xf[b, 0], xf[b, 1],
                                  xf[b, 2], xf[b, 3])
        # half the slop-sized margin on each shape: two boxes meet within the whole of it
        if motion[b, M_SWEPT] != 0.0:
            # the box swept along the displacement, grown by what rotation and gravity add
            dx = motion[b, M_DX]
            dy = motion[b, M_DY]
            m = 0.5 * SPECULATIVE_DISTANCE + motion[b, M_TURN] + abs(motion[b, M_FALL])
            lower[s, 0] = lx + min(dx, 0.0) - m
            lower[s, 1] = ly + min(dy, 0.0) - m
            upper[s, 0] = ux + max(dx, 0.0) + m
            upper[s, 1] = uy + max(dy, 0.0) + m
        else:
            m = 0.5 * SPECULATIVE_DISTANCE + motion[b, M_BOUND]
            lower[s, 0] = lx - m
            lower[s, 1] = ly - m
            upper[s, 0] = ux + m
            upper[s, 1] = uy + m


@njit
def live_proxy_boxes(shape_alive, shape_proxy, lower, upper, shape_sensor, shape_category, shape_mask,
                     shape_group):
    """The broad-phase proxy of every live shape with its box this step: (ids, lowers, uppers), the input
    of ``tree_update``, and ``plain``: True when no live shape is a sensor or has a collision filter other
    than the default (group 0, all mask bits, some category bit), so that should_collide holds for every
    pair and sensor–sensor pairs cannot occur (read here, in order, instead of per pair in random order).
    When every shape is alive (no shape removed since its slot was last filled: the usual case) these are
    the step's own arrays, not copies (the copy was 25 µs a step for 5,000 shapes)."""
    S = shape_alive.shape[0]
    all_bits = ~np.uint64(0)
    zero = np.uint64(0)
    plain = True
    n = 0
    for s in range(S):
        if shape_alive[s]:
            n += 1
            plain = plain & (not shape_sensor[s]) & (shape_group[s] == 0) & (shape_mask[s] == all_bits) \
                & (shape_category[s] != zero)
    if n == S:
        return shape_proxy, lower, upper, plain
    ids = np.empty(n, np.int64)
    lowers = np.empty((n, 2))
    uppers = np.empty((n, 2))
    n = 0
    for s in range(S):
        if shape_alive[s]:
            ids[n] = shape_proxy[s]
            lowers[n, 0] = lower[s, 0]
            lowers[n, 1] = lower[s, 1]
            uppers[n, 0] = upper[s, 0]
            uppers[n, 1] = upper[s, 1]
            n += 1
    return ids, lowers, uppers, plain


@njit
def broad_stage(bodies, shapes, tree, shape_proxy, proxy_shape, lower, upper, threads, joined):
    """Candidate shape pairs, sorted by key ``a << 32 | b`` (a < b), that pass the filter.

    The dynamic tree (carom.geometry.broadphase) keeps fat boxes: a shape that stays inside its fat box
    costs nothing, and candidate pairs are cached between steps (only re-inserted leaves are queried).
    Pairs of one body, pairs without a dynamic body and sensor–sensor pairs are dropped, and so are pairs of two
    bodies a joint joins without ``collide_connected`` (``joined``: their body keys, sorted).
    """
    kind = bodies[7]
    shape_body, shape_alive = shapes[0], shapes[1]
    shape_sensor, shape_category, shape_mask, shape_group = shapes[8], shapes[9], shapes[10], shapes[11]
    (bp_moving, bp_static, bp_lower, bp_upper, bp_flags, bp_leaf, bp_moved, bp_moved_flag, bp_moved_meta,
     bp_cand, bp_margin, bp_multiplier) = tree
    # the leaves of shapes added since the last step (the tree's deferred insertion)
    tree_insert_pending(bp_moving, bp_static, bp_lower, bp_upper, bp_flags, bp_leaf, bp_flags.shape[0], bp_margin,
                        bp_moved, bp_moved_flag, bp_moved_meta)
    ids, lowers, uppers, plain = live_proxy_boxes(shape_alive, shape_proxy, lower, upper, shape_sensor,
                                                  shape_category, shape_mask, shape_group)
    tree_update(bp_moving, bp_static, bp_lower, bp_upper, bp_flags, bp_leaf, ids, lowers, uppers, bp_margin,
                bp_multiplier, bp_moved, bp_moved_flag, bp_moved_meta)
    proxy_keys, new_cand = tree_pairs_cached(bp_moving, bp_static, bp_lower, bp_upper, bp_flags, bp_leaf,
                                             bp_moved, bp_moved_flag, bp_moved_meta, bp_cand, threads)
    keys = np.empty(proxy_keys.shape[0], np.int64)
    K = np.int64(0)          # (not a literal 0: _sorted_keys would be compiled for Literal[int](0) too)
    ordered = True
    last = np.int64(-1)
    for q in range(proxy_keys.shape[0]):
        sa = proxy_shape[proxy_keys[q] >> KEY_SHIFT]
        sb = proxy_shape[proxy_keys[q] & KEY_MASK]
        ba = shape_body[sa]
        bb = shape_body[sb]
        if ba == bb or (kind[ba] != DYNAMIC and kind[bb] != DYNAMIC):
            continue
        # (with no sensors and the default filter everywhere, ``plain``, nothing more is read)
        if not plain and ((shape_sensor[sa] and shape_sensor[sb]) or not should_collide(
                shape_category[sa], shape_mask[sa], shape_group[sa], shape_category[sb], shape_mask[sb],
                shape_group[sb])):
            continue
        if joined.shape[0] > 0 and _sorted_has(joined, (min(ba, bb) << KEY_SHIFT) | max(ba, bb)):
            continue
        key = (min(sa, sb) << KEY_SHIFT) | max(sa, sb)
        keys[K] = key
        K += 1
        ordered = ordered and key > last
        last = key
    # proxies are usually numbered like their shapes, and then the pairs come out already in key order
    if not ordered:
        return _sorted_keys(keys, K), new_cand        # (Numba's np.sort: a second of cold compile)
    return keys[:K], new_cand


@njit
def _sorted_has(keys, key):
    """Whether the sorted array ``keys`` holds ``key`` (binary search)."""
    lo = 0
    hi = keys.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if keys[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    return lo < keys.shape[0] and keys[lo] == key


# Contact cache (the table's member CACHE, one row per contact): the manifold as it was computed, in body A's
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
CACHE = 10
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
def _recycle(cache, k, cnt, tx, ty, tc, ts, reach):
    """Rebuild contact k's manifold (A frame) from its cache for B now at pose (tx, ty, tc, ts) in A's frame,
    if the pose moved less than RECYCLE_DISTANCE since the manifold was computed.

    Each point's anchor u on B's surface (B frame) is now at T·u; the point is midway between it and the
    anchor on A's surface, the separation their distance along the normal (fixed in A's frame). The move is
    measured where it matters: the largest displacement of B's anchors plus the change of relative angle
    times the smaller shape's diameter (``reach``), which bounds how far any other feature of the contact
    region moved. Returns (ok, manifold tuple as collide_sat's).
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
    fail = (False, (0, 0.0, 0.0, 0.0, 0.0, 0.0, 0, 0.0, 0.0, 0.0, 0))
    if dcos <= 0.0 or room < 0.0:
        return fail
    nx = cache[k, CNX]
    ny = cache[k, CNY]
    # point indices as int64, not literals (a literal argument compiles the function once per value)
    p0x, p0y, s0, d0 = _recycle_point(cache, k, np.int64(0), nx, ny, tx, ty, tc, ts)
    if d0 > room * room:
        return fail
    p1x = p1y = s1 = 0.0
    if cnt == 2:
        p1x, p1y, s1, d1 = _recycle_point(cache, k, np.int64(1), nx, ny, tx, ty, tc, ts)
        if d1 > room * room:
            return fail
    return True, (cnt, nx, ny, p0x, p0y, s0, 0, p1x, p1y, s1, 0)


@inline_njit
def _recycle_point(cache, k, p, nx, ny, tx, ty, tc, ts):
    """Point p of contact k's cached manifold with B at pose (tx, ty, tc, ts): (x, y, separation, the square
    of how far B's anchor moved since the manifold was computed)."""
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
    return 0.5 * (ax + bx), 0.5 * (ay + by), (bx - ax) * nx + (by - ay) * ny, mx * mx + my * my


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
def _narrow_block(lo, hi, maxc, shapes, local_center, awake, motion, xf, keys, old, table, in_place):
    """Contacts lo … hi − 1 of the narrow phase (one parallel block; every name in here is private)."""
    if lo >= hi:
        return
    # borrowed views: the per-pair functions below take no references (``borrowed``)
    (shape_body, shape_offset, shape_count, shape_radius, shape_reach, shape_sensor, verts, normals, one_way, ghost,
     chain) = borrowed(shapes)
    old_keys, old_count, old_ids, old_nimp, old_timp, old_normal, old_point, old_sep, old_touch, old_cache = \
        borrowed(old)
    c_count, c_ids, c_normal, c_point, c_sep, c_nimp, c_timp, c_touch, c_sensor, c_cache, c_step = borrowed(table)
    local_center, awake, motion, xf, keys = borrowed((local_center, awake, motion, xf, keys))
    n_old = old_keys.shape[0]
    sv = np.empty((maxc, 2))
    snm = np.empty((maxc, 2))
    j_old = np.searchsorted(old_keys, keys[lo])
    for k in range(lo, hi):
        a = keys[k] >> KEY_SHIFT
        bsh = keys[k] & KEY_MASK
        ba = shape_body[a]
        bb = shape_body[bsh]
        sensor = shape_sensor[a] or shape_sensor[bsh]
        c_sensor[k] = sensor
        for p in range(2):
            c_step[k, p, 0] = 0.0
            c_step[k, p, 1] = 0.0
        while j_old < n_old and old_keys[j_old] < keys[k]:
            j_old += 1
        matched = j_old < n_old and old_keys[j_old] == keys[k]
        if matched and not awake[ba] and not awake[bb]:
            c_count[k] = old_count[j_old]
            c_touch[k] = old_touch[j_old]
            for p in range(2):
                c_ids[k, p] = old_ids[j_old, p]
                c_nimp[k, p] = old_nimp[j_old, p]
                c_timp[k, p] = old_timp[j_old, p]
                c_sep[k, p] = old_sep[j_old, p]
                c_point[k, p, 0] = old_point[j_old, p, 0]
                c_point[k, p, 1] = old_point[j_old, p, 1]
            c_normal[k, 0] = old_normal[j_old, 0]
            c_normal[k, 1] = old_normal[j_old, 1]
            for q in range(0 if in_place else CACHE_WIDTH):   # (a plain loop compiles faster than a slice)
                c_cache[k, q] = old_cache[j_old, q]
            continue
        ax = xf[ba, 0]
        ay = xf[ba, 1]
        ac = xf[ba, 2]
        as_ = xf[ba, 3]
        tx, ty, tc, ts = relative_transform(ax, ay, ac, as_, xf[bb, 0], xf[bb, 1], xf[bb, 2], xf[bb, 3])
        oa = shape_offset[a]
        ob = shape_offset[bsh]
        spec = 0.0 if sensor else SPECULATIVE_DISTANCE + pair_motion(motion, ba, bb)
        # reused: the old cache row stays, with a recycled manifold or, for a pair provably still apart, none
        # (count, ids, impulses and touch stay 0) and the pose its separation bound was computed at
        # two circles are always tested afresh: their test costs less than trying to recycle (43 against
        # 55 ns a pair in a pile, where few pairs pass)
        circles = shape_count[a] == 1 and shape_count[bsh] == 1
        reused = False
        if matched and not sensor and not circles:
            if old_count[j_old] > 0:
                reused, m = _recycle(old_cache, j_old, old_count[j_old], tx, ty, tc, ts,
                                     min(shape_reach[a], shape_reach[bsh]))
            else:
                reused = _still_apart(old_cache, j_old, tx, ty, tc, ts, local_center[ba, 0], local_center[ba, 1],
                                      shape_reach[a], local_center[bb, 0], local_center[bb, 1], shape_reach[bsh],
                                      spec)
                m = (0, 0.0, 0.0, 0.0, 0.0, 0.0, 0, 0.0, 0.0, 0.0, 0)
        if reused:
            for q in range(0 if in_place else CACHE_WIDTH):
                c_cache[k, q] = old_cache[j_old, q]
        else:
            m = _collide_pair(a, bsh, tx, ty, tc, ts, spec, shape_offset, shape_count, shape_radius, verts, normals,
                              sv, snm)
            if m[0] > 0 and not sensor and one_way.shape[0] > 0 and (chain[a] != 0 or chain[bsh] != 0):
                # a chain segment: one-sided, and smooth across its joints (``chain_manifold``); the manifold is
                # corrected before it is cached, so a recycled one is the corrected one (chain segments are
                # one-way shapes: with none, the empty direction table spares each pair the look)
                m = chain_manifold(m, a, bsh, tx, ty, tc, ts, spec, shape_offset, shape_count, shape_radius, verts,
                                   normals, ghost, chain, sv, snm)
            # (two circles keep no cache, nor does a pair moving too fast to be recycled next step: CACHE)
            if not circles:
                if m[0] > 0 and spec > SPECULATIVE_DISTANCE + UNCACHED_MOTION:
                    _mark_uncached(c_cache, k)
                else:
                    _store_cache(c_cache, k, m, tx, ty, tc, ts)
        cnt = m[0]
        if cnt > 0 and not sensor and one_way.shape[0] > 0 and (_is_one_way(one_way, a) or _is_one_way(one_way, bsh)) \
                and chain[a] == 0 and chain[bsh] == 0:
            # the normal in the world, from A to B: a one-way shape acts only when it points out of its solid
            # side (``one_way_passes``)
            nwx = ac * m[1] - as_ * m[2]
            nwy = as_ * m[1] + ac * m[2]
            if (one_way_passes(one_way, a, xf[ba, 2], xf[ba, 3], nwx, nwy)
                    or one_way_passes(one_way, bsh, xf[bb, 2], xf[bb, 3], -nwx, -nwy)):
                cnt = 0
                if not circles:
                    # tested afresh next step (a recycled or "still apart" row would keep it passing)
                    _mark_uncached(c_cache, k)
                    c_cache[k, CSEP] = -np.inf
        c_count[k] = cnt
        # (the table is allocated without zeroing, so every field of the row is written on every path)
        c_nimp[k, 0] = 0.0
        c_nimp[k, 1] = 0.0
        c_timp[k, 0] = 0.0
        c_timp[k, 1] = 0.0
        if cnt == 0:
            c_ids[k, 0] = 0
            c_ids[k, 1] = 0
            _clear_manifold(k, c_touch, c_normal, c_point, c_sep)
            continue
        deepest = _put_manifold(k, m, ax, ay, ac, as_, c_normal, c_point, c_sep)
        c_touch[k] = deepest < 0.0 if sensor else deepest < LINEAR_SLOP
        if reused:
            # the same points with the same ids, in the same order: their impulses carry over as they are
            c_ids[k, 0] = old_ids[j_old, 0]
            c_ids[k, 1] = old_ids[j_old, 1]
            for p in range(cnt):
                c_nimp[k, p] = old_nimp[j_old, p]
                c_timp[k, p] = old_timp[j_old, p]
            continue
        c_ids[k, 0] = m[6]
        c_ids[k, 1] = m[10]
        if matched and not sensor:
            for p in range(cnt):
                for q in range(old_count[j_old]):
                    if old_ids[j_old, q] == c_ids[k, p]:
                        c_nimp[k, p] = old_nimp[j_old, q]
                        c_timp[k, p] = old_timp[j_old, q]


#: a one-way shape acts on a contact whose normal (from it to the other shape) is within 60° of its solid
#: side's direction
ONE_WAY_COS = 0.5


@njit
def _is_one_way(one_way, s):
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
    (shape_body, shape_count, shape_friction, shape_restitution, shape_tangent) = (shapes[0], shapes[3], shapes[5],
                                                                                  shapes[6], shapes[14])
    keys, c_count, c_ids, c_nimp, c_timp, c_normal, c_point, c_sep, c_touch, c_sensor, c_cache = contacts[:11]
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
            c_count[k] = 0
            c_ids[k, 0] = 0
            c_ids[k, 1] = 0
            for p in range(2):
                c_nimp[k, p] = 0.0
                c_timp[k, p] = 0.0
            _clear_manifold(k, c_touch, c_normal, c_point, c_sep)
            if not (shape_count[a] == 1 and shape_count[b] == 1):
                _mark_uncached(c_cache, k)
                c_cache[k, CSEP] = -np.inf
            continue
        # (NaN fails every comparison: taken as 0)
        material[k, 0] = min(out[0], FLOAT32_LIMIT) if out[0] > 0.0 else 0.0
        material[k, 1] = min(out[1], FLOAT32_LIMIT) if out[1] > 0.0 else 0.0
        material[k, 2] = max(-MAX_TRANSLATION_SPEED, min(out[2], MAX_TRANSLATION_SPEED)) if out[2] == out[2] else 0.0
    return material


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


@inline_njit
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


@pnjit
def _narrow_blocks(maxc, shapes, local_center, awake, motion, xf, keys, old, table, in_place, threads):
    """The pairs in NARROW_BLOCKS blocks, in parallel (only the parallel loop lives in this parallel
    function: Numba analyses every statement of a function with a parallel loop, so the rest of the stage
    stays outside, which saves seconds of compile time)."""
    K = keys.shape[0]
    if threads == 1:
        # in this thread, all pairs in one call (the pairs are independent, so the blocks make no difference
        # to any result): launching the parallel loop costs about 15 µs, and each call takes and drops a
        # reference on its 33 arrays, about 0.5 µs
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
    (``same_pairs``). Returns the contact table (keys, count, feature ids, normal and tangent impulses,
    normal, points, separations, touching, sensor, cache, the step's impulses).

    Contact recycling: a pair whose bodies barely moved relative to each other since its manifold was
    computed reuses that manifold (``_recycle``), so resting stacks skip most collision tests (two circles
    are always tested afresh: their test is cheaper than the attempt). A pair that had
    no points and provably still has none (``_still_apart``: the separation bound cached with its last test,
    less how far the shapes can have moved relative to each other since, exceeds the margin) skips the test
    too, with exactly the result the test would give. (World._skip_apart = False turns this off from Python,
    by clearing the bounds of last step's table; for tests.)
    """
    kind, body_alive, asleep, sleep_time, island = bodies[7], bodies[9], bodies[16], bodies[17], bodies[18]
    (shape_body, shape_alive, shape_offset, shape_count, shape_radius, shape_friction, shape_restitution,
     shape_reach, shape_sensor, shape_category, shape_mask, shape_group, verts, normals) = shapes[:14]
    NB = kind.shape[0]
    S = shape_body.shape[0]
    K = keys.shape[0]
    # not zeroed: the blocks write every field of every row (zeroing the table cost a serial memset of
    # about 240 bytes per pair, 3.6 MB a step in the large pyramid)
    c_count = np.empty(K, np.int64)
    c_ids = np.empty((K, 2), np.int64)
    c_normal = np.empty((K, 2))
    c_point = np.empty((K, 2, 2))
    c_sep = np.empty((K, 2))
    c_nimp = np.empty((K, 2))
    c_timp = np.empty((K, 2))
    c_touch = np.empty(K, np.bool_)
    c_sensor = np.empty(K, np.bool_)
    # with the same pairs as last step (``in_place``: ``same_pairs``) the cache is updated in place, so a
    # recycled pair's row (the manifold it keeps) is not copied; each pair reads and writes only its own row
    c_cache = old[CACHE] if in_place else np.empty((K, CACHE_WIDTH))
    # each point's normal and tangent impulse over the whole step: zeroed by the blocks with the rest of each
    # row, written by the solver for the contacts it solves (``_solver._write_back``)
    c_step = np.empty((K, 2, 2))
    # one-way shapes are looked for per pair only when there are any (``one_way_passes``)
    any_one_way = False
    for s in range(S):
        any_one_way = any_one_way or (shape_alive[s] and _is_one_way(shapes[16], s))
    maxc = np.int64(1)   # not a literal: a literal argument would compile the block kernel twice
    for s in range(S):
        if shape_count[s] > maxc:
            maxc = shape_count[s]
    table = (c_count, c_ids, c_normal, c_point, c_sep, c_nimp, c_timp, c_touch, c_sensor, c_cache, c_step)
    # only the arrays the blocks use: every array a parallel loop receives costs compile time
    # (no one-way shape: an empty table of directions, which the blocks take as "none")
    shape_data = (shape_body, shape_offset, shape_count, shape_radius, shape_reach, shape_sensor, verts, normals,
                  shapes[16] if any_one_way else shapes[16][:0], shapes[17], shapes[18])
    old_data = old[:9] + (old[CACHE],)
    _narrow_blocks(maxc, shape_data, bodies[6], awake, motion, xf, keys, old_data, table, in_place, threads)
    # wake the islands of sleeping bodies that an awake body reaches (sensors never wake anything); with no
    # body asleep (sleeping off, or a busy scene) there is nothing to wake and the pass over the pairs is
    # skipped (a serial 0.05-0.1 ms for 15,000 pairs)
    wake = np.zeros(NB, np.bool_)
    any_wake = False
    any_asleep = False
    for b in range(NB):
        any_asleep = any_asleep or asleep[b]
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
    return (keys, c_count, c_ids, c_nimp, c_timp, c_normal, c_point, c_sep, c_touch, c_sensor, c_cache, c_step)


@njit
def _find(parent, i):
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


@njit
def sleep_stage(dt, sleep_enabled, bodies, reach, awake, pair, joints):
    """Islands and sleep (Box2D's rule): a body is slow while |v| + |ω|·reach < its ``Body.sleep_threshold``
    (SLEEP_LINEAR_TOLERANCE unless set); an
    island (bodies joined by solved contacts and by joints; static bodies do not join) whose slowest-to-settle
    body has
    been slow for SLEEP_TIME falls asleep as a whole: velocities zeroed, labelled by its smallest body index.
    A body touching a moving kinematic body never sleeps, nor does one whose ``Body.sleep_enabled`` is off
    (``can_sleep``: its time stays 0, which keeps its whole island awake)."""
    vel, angvel, kind, body_alive, asleep, sleep_time, island = (bodies[2], bodies[3], bodies[7], bodies[9],
                                                                 bodies[16], bodies[17], bodies[18])
    can_sleep, sleep_threshold = bodies[19], bodies[20]
    NB = vel.shape[0]
    if not sleep_enabled:
        for b in range(NB):
            sleep_time[b] = 0.0
        return
    for b in range(NB):
        if body_alive[b] and kind[b] == DYNAMIC and not asleep[b]:
            sp = math.sqrt(vel[b, 0] ** 2 + vel[b, 1] ** 2) + abs(angvel[b]) * reach[b]
            if sp > sleep_threshold[b] or not can_sleep[b]:
                sleep_time[b] = 0.0
            else:
                sleep_time[b] += dt
    parent = np.arange(NB)
    P = pair.shape[0]
    jkind, jactive, jbody = joints.kind, joints.active, joints.body
    for i in range(P + jkind.shape[0]):
        if i < P:
            ba = pair[i, 0]
            bb = pair[i, 1]
        else:
            j = i - P
            if not jactive[j] or jkind[j] == FILTER:
                continue
            ba = jbody[j, 0]
            bb = jbody[j, 1]
        if kind[ba] == KINEMATIC and awake[ba]:
            sleep_time[bb] = 0.0
        if kind[bb] == KINEMATIC and awake[bb]:
            sleep_time[ba] = 0.0
        if kind[ba] != DYNAMIC or kind[bb] != DYNAMIC:
            continue
        ra = _find(parent, ba)
        rb = _find(parent, bb)
        if ra < rb:
            parent[rb] = ra
        elif rb < ra:
            parent[ra] = rb
    island_time = np.full(NB, np.inf)
    for b in range(NB):
        if body_alive[b] and kind[b] == DYNAMIC and not asleep[b]:
            r = _find(parent, b)
            if sleep_time[b] < island_time[r]:
                island_time[r] = sleep_time[b]
    for b in range(NB):
        if body_alive[b] and kind[b] == DYNAMIC and not asleep[b]:
            r = _find(parent, b)
            if island_time[r] >= SLEEP_TIME:
                asleep[b] = True
                island[b] = r
                vel[b, 0] = 0.0
                vel[b, 1] = 0.0
                angvel[b] = 0.0


@entry_njit
def event_rows(old_keys, old_touch, keys, c_touch, c_count, c_step, approach, hit_threshold):
    """A step's events, computed after the step when someone asks for them (World.contact_events, handlers),
    not inside it: begin/end touch events by merging last step's and this step's sorted contact keys and
    touch flags, and hit events: solved contacts whose fastest approach speed −v_n (before the solve,
    ``approach`` from the solver) at a point that received an impulse in the step (``c_step``) exceeds
    ``hit_threshold`` (point 1 is the hit's only if strictly faster than point 0).
    Returns (begin rows of the new table, end rows of the old table, hit rows, hit point index, hit speed);
    hits are in key order. An empty ``approach`` means nothing was solved."""
    K = keys.shape[0]
    n_old = old_keys.shape[0]
    begin = np.empty(K, np.int64)
    end = np.empty(n_old, np.int64)
    nb = 0
    ne = 0
    i = 0
    j = 0
    while i < K or j < n_old:
        if j >= n_old or (i < K and keys[i] < old_keys[j]):
            if c_touch[i]:
                begin[nb] = i
                nb += 1
            i += 1
        elif i >= K or old_keys[j] < keys[i]:
            if old_touch[j]:
                end[ne] = j
                ne += 1
            j += 1
        else:
            if c_touch[i] and not old_touch[j]:
                begin[nb] = i
                nb += 1
            elif old_touch[j] and not c_touch[i]:
                end[ne] = j
                ne += 1
            i += 1
            j += 1
    H = approach.shape[0]
    hit_k = np.empty(H, np.int64)
    hit_p = np.empty(H, np.int64)
    hit_v = np.empty(H)
    nh = 0
    for k in range(H):
        speed = -np.inf
        point = -1
        if c_count[k] > 0 and c_step[k, 0, 0] > 0.0:
            speed = approach[k, 0]
            point = 0
        if c_count[k] > 1 and c_step[k, 1, 0] > 0.0 and approach[k, 1] > speed:
            speed = approach[k, 1]
            point = 1
        if speed > hit_threshold:
            hit_k[nh] = k
            hit_p[nh] = point
            hit_v[nh] = speed
            nh += 1
    return begin[:nb], end[:ne], hit_k[:nh], hit_p[:nh], hit_v[:nh]


@njit
def no_hits():
    """The approach speeds of a step that solved nothing."""
    return np.empty((0, 2))


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
    vel, angvel, inv_mass, kind, body_alive, force, torque = (bodies[2], bodies[3], bodies[4], bodies[7],
                                                              bodies[9], bodies[10], bodies[11])
    NB = kind.shape[0]
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
def wake_jointed(bodies, joints):
    """Wake the sleeping islands a joint ties to a moving body (an awake dynamic body, or a kinematic body with a
    velocity), before anything else: a joint's bodies sleep and wake together. Repeated until nothing changes
    (an island woken here may be tied to another)."""
    vel, angvel, kind, body_alive, asleep, sleep_time, island = (bodies[2], bodies[3], bodies[7], bodies[9],
                                                                 bodies[16], bodies[17], bodies[18])
    jkind, jactive, jbody = joints.kind, joints.active, joints.body
    NB = kind.shape[0]
    changed = True
    while changed:
        changed = False
        for j in range(jkind.shape[0]):
            if not jactive[j] or jkind[j] == FILTER:
                continue
            for e in range(2):
                a = jbody[j, e]
                b = jbody[j, 1 - e]
                if not (asleep[a] and kind[a] == DYNAMIC):
                    continue
                moving = body_alive[b] and not asleep[b] and (kind[b] == DYNAMIC or (
                    kind[b] == KINEMATIC and (vel[b, 0] != 0.0 or vel[b, 1] != 0.0 or angvel[b] != 0.0)))
                if moving:
                    label = island[a]
                    for q in range(NB):
                        if body_alive[q] and asleep[q] and island[q] == label:
                            asleep[q] = False
                            sleep_time[q] = 0.0
                    changed = True


@linking_entry_njit
def step_kernel(dt, substeps, gx, gy, friction_rule, restitution_rule, sleep_enabled,
                bodies, shapes, tree, shape_proxy, proxy_shape, old, joints, joined, threads, pre_solve, clock):
    """Advance the world by dt: the stages in order, in one compiled call.

    ``pre_solve`` is the address of the user's pre-solve hook (``carom.rigid.presolve``), 0 for none.

    ``clock[0]`` receives the cycle counter at the start and ``clock[1 + i]`` at the end of stage
    ``STAGES[i]`` (a few cycles per reading; World turns them into ``profile_times``). Returns (contact
    table, new broad-phase candidate cache, each point's approach speed for ``event_rows`` and
    ``World.contact_data`` (empty when nothing was solved), (code, body) of ``first_bad_body``). A step refused
    by ``first_bad_body`` returns at once, before anything is changed."""
    clock[0] = cycle_counter()
    bad = first_bad_body(bodies)
    if bad[0] != BODY_OK:
        for i in range(1, clock.shape[0]):
            clock[i] = clock[0]
        return old, tree[9], no_hits(), bad
    if joints.kind.shape[0] > 0:
        wake_jointed(bodies, joints)
    reach, awake, motion, xf, lower, upper = bounds_stage(dt, gx, gy, bodies, shapes, threads)
    clock[1] = cycle_counter()
    if not awake.any():
        for i in range(2, clock.shape[0]):   # (a loop: a slice assignment costs compile time)
            clock[i] = clock[1]
        return old, tree[9], no_hits(), bad
    keys, new_cand = broad_stage(bodies, shapes, tree, shape_proxy, proxy_shape, lower, upper, threads, joined)
    clock[2] = cycle_counter()
    # the same pairs as last step (a resting pile, most steps): the narrow phase updates the cache in place and
    # the colouring may be kept
    same = same_pairs(keys, old[0])
    contacts = narrow_stage(bodies, shapes, awake, motion, xf, keys, old, same, threads)
    clock[3] = cycle_counter()
    # the user's pre-solve hook: contacts disabled, materials changed for this step (with none, an empty table)
    material = pre_solve_stage(pre_solve, friction_rule, restitution_rule, shapes, awake, contacts)
    solver = prepare_stage(bodies, shapes, contacts, old, same, friction_rule, restitution_rule, threads,
                           (gx, gy, dt), material)
    clock[4] = cycle_counter()
    com0, angle0, approach = solve_stage(dt, substeps, gx, gy, bodies, contacts, solver, threads, joints)
    clock[5] = cycle_counter()
    continuous_stage(bodies, shapes, awake, reach, com0, angle0, tree, proxy_shape)
    sensor_stage(bodies, shapes, awake, contacts)
    clock[6] = cycle_counter()
    sleep_stage(dt, sleep_enabled, bodies, reach, awake, solver[4], joints)
    clock[7] = cycle_counter()
    # the table keeps the step's colouring, which the next step reuses when nothing it depends on changed
    return contacts + colouring_of(solver), new_cand, approach, bad


@njit
def sensor_stage(bodies, shapes, awake, contacts):
    """Sensor overlaps at the end of the step (as Box2D v3 finds them): each sensor pair with an awake body is
    tested again at the bodies' final poses, so its touch flag (and so its begin and end events) belongs to
    the step in which the overlap began or ended. Tested with the narrow phase's poses, from the start of the
    step, an overlap was reported one step late. The broad phase's boxes cover the whole motion of the step,
    so every pair that overlaps at the end is among the candidates. Scenes without sensors skip the pass
    after one look at the shapes."""
    com, angle, local_center = bodies[0], bodies[1], bodies[6]
    (shape_body, shape_alive, shape_offset, shape_count, shape_radius, shape_sensor, verts,
     normals) = (shapes[0], shapes[1], shapes[2], shapes[3], shapes[4], shapes[8], shapes[12], shapes[13])
    keys, c_count, c_normal, c_point, c_sep, c_touch, c_sensor = (contacts[0], contacts[1], contacts[5],
                                                                 contacts[6], contacts[7], contacts[8], contacts[9])
    any_sensor = False
    for s in range(shape_sensor.shape[0]):
        any_sensor = any_sensor or (shape_sensor[s] and shape_alive[s])
    if not any_sensor:
        return
    maxc = np.int64(1)
    for s in range(shape_count.shape[0]):
        maxc = max(maxc, shape_count[s])
    sv = np.empty((maxc, 2))
    snm = np.empty((maxc, 2))
    for k in range(keys.shape[0]):
        if not c_sensor[k]:
            continue
        a = keys[k] >> KEY_SHIFT
        b = keys[k] & KEY_MASK
        ba = shape_body[a]
        bb = shape_body[b]
        if not awake[ba] and not awake[bb]:
            continue
        ax, ay, ac, as_ = body_origin(com, angle, local_center, ba)
        bx, by, bc, bs = body_origin(com, angle, local_center, bb)
        tx, ty, tc, ts = relative_transform(ax, ay, ac, as_, bx, by, bc, bs)
        m = _collide_pair(a, b, tx, ty, tc, ts, 0.0, shape_offset, shape_count, shape_radius, verts, normals, sv,
                          snm)
        c_count[k] = m[0]
        if m[0] > 0:
            c_touch[k] = _put_manifold(k, m, ax, ay, ac, as_, c_normal, c_point, c_sep) < 0.0
        else:
            _clear_manifold(k, c_touch, c_normal, c_point, c_sep)


@njit
def continuous_stage(bodies, shapes, awake, reach, com0, angle0, tree, proxy_shape):
    """Continuous collision (after Box2D v3's): fast bodies are put back at their first time of impact in the
    step, so that no contact the step could not see is crossed.

    A body is fast when it is a bullet, or when any of its points may have moved more than half its smallest
    extent this step: |Δc| + |Δθ|·reach ≥ min_extent / 2, with reach the farthest point of its shapes from the
    centre of mass. (The rotation term is new: a thin box set spinning by a corner hit crossed a wall in the
    next step without a contact, as only its centre's travel was looked at.) The motion is interpolated
    linearly in centre and angle; ``carom.geometry.toi.conservative_advancement`` finds the first contact of
    each shape with each shape its swept box meets, and the body is put at the earliest, its velocity kept.

    Fast bodies that are not bullets meet static shapes; bullets then meet static shapes and the shapes of
    every other body that is not a bullet, at their final poses (a bullet stopped a 0.1 m dynamic plate no
    better than any body before). Sensors and filtered pairs are skipped.

    A pair that already touches at the start (within LINEAR_SLOP: a body resting against the wall it is
    pushed into, or a thin shape that has just hit a corner) would have time of impact 0 and is left to the
    contact solver; but a thin shape that already touches a wall can still cross it in the step. For such a
    pair the sweep is tried again with the shape's inner core (``inner_core``: a quarter of its thickness,
    its length kept), which stops the body before that core reaches the other shape (after Box2D's fallback
    to a small circle at the centroid): it can then slide along the wall but not pass through it.
    """
    com, angle, kind, bullet, body_min_extent = bodies[0], bodies[1], bodies[7], bodies[8], bodies[15]
    shape_body, shape_alive = shapes[0], shapes[1]
    if tree[1].meta[2] == 0 and tree[0].meta[2] == 0:
        return
    NB = com.shape[0]
    S = shape_body.shape[0]
    fast = np.empty(NB, np.int64)
    # (np.int64, not 0: the constant 0 is typed as its value first, and _continuous_pass was compiled once more
    # for it, 5 s of the cold compile)
    n_fast = np.int64(0)
    any_bullet = False
    for b in range(NB):
        if not awake[b] or kind[b] != DYNAMIC:
            continue
        dx = com[b, 0] - com0[b, 0]
        dy = com[b, 1] - com0[b, 1]
        travel = math.sqrt(dx * dx + dy * dy) + abs(angle[b] - angle0[b]) * reach[b]
        if bullet[b] or travel >= 0.5 * body_min_extent[b]:
            fast[n_fast] = b
            n_fast += 1
            any_bullet = any_bullet or bullet[b]
    if n_fast == 0:
        return
    # each body's shapes as a linked list (so a fast body visits its own shapes, not the whole table)
    first_shape = np.full(NB, -1, np.int64)
    next_shape = np.full(S, -1, np.int64)
    for s in range(S - 1, -1, -1):
        if shape_alive[s]:
            next_shape[s] = first_shape[shape_body[s]]
            first_shape[shape_body[s]] = s
    lists = (first_shape, next_shape)
    # non-bullets first, against static shapes; then bullets, which also meet the others at their final poses
    if tree[1].meta[2] > 0:
        _continuous_pass(np.bool_(False), fast, n_fast, lists, bodies, shapes, reach, com0, angle0, tree,
                         proxy_shape)
    if any_bullet:
        _continuous_pass(np.bool_(True), fast, n_fast, lists, bodies, shapes, reach, com0, angle0, tree,
                         proxy_shape)


#: The continuous stage stops a body when it is within CCD_TARGET of the other shape (somewhere between half
#: that and all of it), and leaves to the contact solver a pair closer than CCD_TOUCHING at the start. The
#: gap left is as large as the one Box2D leaves (a linear slop), so that the next step does not start with
#: the pair touching: a thin box stopped at a wall 1.25 mm short of it (TOI_TARGET) was then "touching" and
#: only its core was swept in the next step, in which its spin swung its far end through the wall.
CCD_TARGET = LINEAR_SLOP
CCD_TOUCHING = 0.5 * LINEAR_SLOP

#: The fallback sweep of ``continuous_stage`` keeps this fraction of a shape's thickness (``inner_core``; Box2D's
#: core fraction)
CORE_FRACTION = 0.25


@njit
def _continuous_pass(bullets, fast, n_fast, lists, bodies, shapes, body_reach, com0, angle0, tree, proxy_shape):
    """The fast bodies that are bullets (``bullets``) or not, swept and put back at their first contact
    (``continuous_stage``).

    Bullets meet the other bodies along those bodies' own motion in the step, both swept: a plate spinning at
    30 rad/s or coming at 20 m/s crossed a bullet's path between its start and end poses, and a bullet swept
    against its final pose only (Box2D v3's way) passed through it one shot in four. The tree holds the moving
    shapes' boxes at the step's start, so a bullet's query box is widened by the farthest any moving body
    travelled (``_moving_reach``), and each candidate's own swept box is checked before its time of impact.
    A bullet stopped by a moving body is then carried with it for the rest of the step (``_carry``): it ends
    where it touched, in that body's frame, instead of where the body has since moved through."""
    com, angle, local_center, kind, bullet = bodies[0], bodies[1], bodies[6], bodies[7], bodies[8]
    (shape_body, shape_offset, shape_count, shape_radius, shape_reach, shape_sensor, shape_category, shape_mask,
     shape_group, verts, normals) = (shapes[0], shapes[2], shapes[3], shapes[4], shapes[7], shapes[8], shapes[9],
                                     shapes[10], shapes[11], shapes[12], shapes[13])
    one_way = shapes[16]
    first_shape, next_shape = lists
    S = shape_body.shape[0]
    # the swept box of each shape of a fast body (which fast body, which shape), all queried at once
    item_fast = np.empty(S, np.int64)
    item_shape = np.empty(S, np.int64)
    boxes = np.empty((S, 4))
    n = 0
    for i in range(n_fast):
        b = fast[i]
        if bullet[b] != bullets:
            continue
        s = first_shape[b]
        while s != -1:
            # the shape swept by the body's motion: no point of it is farther than its reach from the centre
            reach = shape_reach[s]
            item_fast[n] = i
            item_shape[n] = s
            boxes[n, 0] = min(com0[b, 0], com[b, 0]) - reach
            boxes[n, 1] = min(com0[b, 1], com[b, 1]) - reach
            boxes[n, 2] = max(com0[b, 0], com[b, 0]) + reach
            boxes[n, 3] = max(com0[b, 1], com[b, 1]) + reach
            n += 1
            s = next_shape[s]
    if n == 0:
        return
    t_min = np.ones(n_fast)
    maxc = np.int64(1)
    for it in range(n):
        maxc = max(maxc, shape_count[item_shape[it]])
    inner = np.empty((maxc, 2))
    hit_body = np.full(n_fast, -1, np.int64)
    widen = _moving_reach(bodies, body_reach, com0, angle0) if bullets else 0.0
    # the static tree, then (bullets) the tree of the moving shapes
    for which in range(2 if bullets else 1):
        # (two calls, not one on a conditional expression of the two trees: with that, queries of other worlds
        # went wrong after a step, as if the chosen tree's arrays had lost a reference and been freed)
        if which == 0:
            first, hits = tree_query_boxes(tree[1], tree[2], tree[3], boxes, np.int64(n))
        else:
            wide = boxes[:n].copy()       # (the swept boxes themselves are kept for _swept_boxes_meet)
            wide[:, :2] -= widen
            wide[:, 2:] += widen
            first, hits = tree_query_boxes(tree[0], tree[2], tree[3], wide, np.int64(n))
        for it in range(n):
            i = item_fast[it]
            b = fast[i]
            s = item_shape[it]
            for hq in range(first[it], first[it + 1]):
                q = proxy_shape[hits[hq]]
                bq = shape_body[q]
                if bq == b or shape_sensor[s] or shape_sensor[q] or (kind[bq] == DYNAMIC and bullet[bq]):
                    continue
                if (shape_count[s] == 2 and shape_count[q] == 2 and shape_radius[s] == 0.0
                        and shape_radius[q] == 0.0):
                    # two segments never touch (``collide_sat``): sweeping them stopped a body with a segment
                    # in mid-air above a segment of the ground, for good
                    continue
                if not should_collide(shape_category[s], shape_mask[s], shape_group[s], shape_category[q],
                                      shape_mask[q], shape_group[q]):
                    continue
                if which == 1 and not _swept_boxes_meet(boxes, it, com0, com, bq, shape_reach[q]):
                    continue
                if _is_one_way(one_way, q) and one_way_passes(one_way, q, math.cos(angle[bq]), math.sin(angle[bq]),
                                                              com0[b, 0] - com[b, 0], com0[b, 1] - com[b, 1]):
                    # a one-way shape lets through what moves out of its solid side, or along it: this body
                    # does, if it came more than 60° off the way in
                    continue
                t = _shape_toi(borrowed_rows(verts, shape_offset[s], shape_count[s]), shape_radius[s], b,
                               borrowed_rows(verts, shape_offset[q], shape_count[q]), shape_radius[q], bq,
                               com, angle, local_center, com0, angle0, which == 1)
                if t == -2.0 or t == 0.0:
                    # touching at the start, or closer than the target distance (a time of impact of 0, which
                    # put a fast body back where it started every step, frozen in the air while its speed grew):
                    # sweep the shape's inner core instead (``inner_core``)
                    count = shape_count[s]
                    r_inner = inner_core(borrowed_rows(verts, shape_offset[s], count),
                                         borrowed_rows(normals, shape_offset[s], count), shape_radius[s], inner)
                    t = _shape_toi(borrowed_rows(inner, 0, count), r_inner, b,
                                   borrowed_rows(verts, shape_offset[q], shape_count[q]), shape_radius[q], bq,
                                   com, angle, local_center, com0, angle0, which == 1)
                if 0.0 <= t < t_min[i]:
                    t_min[i] = t
                    hit_body[i] = bq if which == 1 else -1
    for i in range(n_fast):
        if t_min[i] < 1.0:
            b = fast[i]
            com[b, 0] = com0[b, 0] + t_min[i] * (com[b, 0] - com0[b, 0])
            com[b, 1] = com0[b, 1] + t_min[i] * (com[b, 1] - com0[b, 1])
            angle[b] = angle0[b] + t_min[i] * (angle[b] - angle0[b])
            if hit_body[i] >= 0:
                _carry(com, angle, com0, angle0, b, hit_body[i], t_min[i])


@njit
def _moving_reach(bodies, reach, com0, angle0):
    """The farthest any point of a moving body that is not a bullet travelled in the step: a bound of
    |Δc| + |Δθ|·reach over them (0 when nothing moved)."""
    com, angle, kind, bullet = bodies[0], bodies[1], bodies[7], bodies[8]
    widest = 0.0
    for b in range(com.shape[0]):
        if kind[b] == STATIC or (kind[b] == DYNAMIC and bullet[b]):
            continue
        dx = com[b, 0] - com0[b, 0]
        dy = com[b, 1] - com0[b, 1]
        widest = max(widest, math.sqrt(dx * dx + dy * dy) + abs(angle[b] - angle0[b]) * reach[b])
    return widest


@inline_njit
def _swept_boxes_meet(boxes, it, com0, com, bq, shape_reach):
    """Whether the box of bullet item ``it`` meets the box swept by a shape of body bq (no point of which is
    farther than ``shape_reach`` from the body's centre) over the step."""
    return (min(com0[bq, 0], com[bq, 0]) - shape_reach <= boxes[it, 2]
            and max(com0[bq, 0], com[bq, 0]) + shape_reach >= boxes[it, 0]
            and min(com0[bq, 1], com[bq, 1]) - shape_reach <= boxes[it, 3]
            and max(com0[bq, 1], com[bq, 1]) + shape_reach >= boxes[it, 1])


@njit
def _carry(com, angle, com0, angle0, b, bq, t):
    """Body b, just put at its pose of time t of the step where it touches body bq (at its own pose of time
    t, interpolated like the sweep), moved on rigidly with bq to the step's end: b's centre keeps its place
    in bq's frame, p₁ = c_q(1) + R(θ_q(1) − θ_q(t))·(p(t) − c_q(t)), and its angle turns as bq's does."""
    qx = com0[bq, 0] + t * (com[bq, 0] - com0[bq, 0])
    qy = com0[bq, 1] + t * (com[bq, 1] - com0[bq, 1])
    turn = (1.0 - t) * (angle[bq] - angle0[bq])
    c = math.cos(turn)
    s = math.sin(turn)
    dx = com[b, 0] - qx
    dy = com[b, 1] - qy
    com[b, 0] = com[bq, 0] + c * dx - s * dy
    com[b, 1] = com[bq, 1] + s * dx + c * dy
    angle[b] += turn


@njit
def _shape_toi(vs, rs, b, vq, rq, bq, com, angle, local_center, com0, angle0, both_move):
    """First time of impact of a core (vs, rs) of fast body b, swept from its start to its end pose, against
    a core (vq, rq) of body bq, swept too when ``both_move`` and otherwise at its final pose: t in [0, 1), −1
    for none, −2 when the two already touch (within LINEAR_SLOP) at the start."""
    q0x = com0[bq, 0] if both_move else com[bq, 0]
    q0y = com0[bq, 1] if both_move else com[bq, 1]
    q0a = angle0[bq] if both_move else angle[bq]
    t, iterations = conservative_advancement(vs, rs, local_center[b, 0], local_center[b, 1], com0[b, 0], com0[b, 1],
                                             angle0[b], com[b, 0], com[b, 1], angle[b], vq, rq,
                                             local_center[bq, 0], local_center[bq, 1], q0x, q0y, q0a,
                                             com[bq, 0], com[bq, 1], angle[bq], CCD_TARGET,
                                             TOI_MAX_ITERATIONS, CCD_TOUCHING)
    if t < 0.0 and iterations == 0:
        return -2.0
    return t


@njit
def inner_core(v, n, radius, out):
    """The core of a shape (vertices v, edge normals n, rounding radius) shrunk to a quarter of its thickness,
    into out[:len(v)]; returns its rounding radius. The continuous stage sweeps it for a pair that already
    touches at the start of the step (``continuous_stage``).

    Its thickness is e = the distance from the centroid c of the core's vertices to the nearest face of the
    shape: r for a circle or a capsule, min_i n_i·(v_i − c) + r for a polygon. A circle or a capsule keeps
    its core with radius e/4. A polygon's edges move inward by δ = 3e/4 − r (when positive; the rounding
    radius already gives part of it): each vertex moves to where its two shifted edges meet,
    v_i − δ (n_{i−1} + n_i) / (1 + n_{i−1}·n_i), which for δ below the inradius keeps the polygon convex and
    its edges parallel to the shape's; the radius is then min(r, e/4). Box2D sweeps a circle of radius e/4
    about the centroid instead, which lets a long thin box swing its ends through a wall while its centre is
    stopped; the inner core keeps the shape's length."""
    count = v.shape[0]
    cx = 0.0
    cy = 0.0
    for i in range(count):
        cx += v[i, 0]
        cy += v[i, 1]
    cx /= count
    cy /= count
    if count <= 2:
        for i in range(count):
            out[i, 0] = v[i, 0]
            out[i, 1] = v[i, 1]
        return CORE_FRACTION * radius
    inradius = math.inf
    for i in range(count):
        inradius = min(inradius, n[i, 0] * (v[i, 0] - cx) + n[i, 1] * (v[i, 1] - cy))
    e = inradius + radius
    delta = max(0.0, (1.0 - CORE_FRACTION) * e - radius)
    for i in range(count):
        k = i - 1 if i > 0 else count - 1
        sx = n[k, 0] + n[i, 0]
        sy = n[k, 1] + n[i, 1]
        f = delta / (1.0 + n[k, 0] * n[i, 0] + n[k, 1] * n[i, 1])
        out[i, 0] = v[i, 0] - f * sx
        out[i, 1] = v[i, 1] - f * sy
    return min(radius, CORE_FRACTION * e)


#: the stages ``compile_late_stages`` compiles, which the step's compile and its helper share (the first to reach
#: one compiles it: ``carom._jit.compile_helper``)
LATE_STAGES = (prepare_stage, solve_stage, continuous_stage, sleep_stage, sensor_stage)


def compile_late_stages(step_types):
    """Compile, into the on-disk cache, the stages ``step_kernel`` reaches last (prepare, solve, continuous,
    sleep, sensors) for its argument types ``step_types``: the first part of the job of the helper process of a cold
    compile (``carom._jit.compile_helper``, ``carom._warmup.late_stages_then_public_api``).

    Why: Numba compiles the step's call tree depth first in one thread. The stages' types follow from the
    step's: the contact table the narrow phase returns has the type of last step's table (``old``), the
    bounds stage's arrays are fresh NumPy arrays, and the rest are the return types of stages compiled
    here. Each call below is the one ``step_kernel`` makes, so the step finds them in the cache when its
    compile reaches them, while the bounds, broad and narrow phases are compiled on the other core
    (``tests/test_jit.py`` checks that the types are the step's own)."""
    (dt, substeps, gx, gy, friction_rule, restitution_rule, sleep_enabled, bodies, shapes, tree, shape_proxy,
     proxy_shape, old, joints, joined, threads, pre_solve, clock) = step_types

    def returned(kernel, arg_types):
        kernel.compile(arg_types)
        return kernel.overloads[arg_types].signature.return_type

    # the narrow phase's table: last step's without the colouring (``colouring_of``)
    contacts = numba.types.Tuple(old.types[:COLOURING])
    solver = returned(prepare_stage, (bodies, shapes, contacts, old, numba.types.boolean, friction_rule,
                                      restitution_rule, threads, numba.types.UniTuple(dt, 3),
                                      numba.typeof(np.zeros((1, 3)))))
    solved = returned(solve_stage, (dt, substeps, gx, gy, bodies, contacts, solver, threads, joints))
    # bounds_stage's reach and awake: fresh 1-d arrays of floats and of flags
    reach, awake = numba.typeof(np.zeros(1)), numba.typeof(np.zeros(1, np.bool_))
    com0, angle0 = solved[0], solved[1]
    returned(continuous_stage, (bodies, shapes, awake, reach, com0, angle0, tree, proxy_shape))
    returned(sleep_stage, (dt, sleep_enabled, bodies, reach, awake, solver[4], joints))
    returned(sensor_stage, (bodies, shapes, awake, contacts))
