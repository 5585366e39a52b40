"""The contact sweeps: warm start, solve with and without bias, restitution, over one bundle of contacts at a time
(lanes of ``carom._simd``), and the ranges of bundles one worker sweeps.
"""
import numpy as np

from .._jit import njit, inline_njit, llvm_inline_njit, deref
from .._simd import LANES, splat, load, store, lane, gather_rows, scatter_rows, select, vmax, vmin, prefetch_bundle
from ._layout import VX, VY, W, DPX, DPY, DC, DS, MOVED
from ..constants import CONTACT_PUSH_MAX_VELOCITY, RESTITUTION_THRESHOLD
from ._contact_rows import (ADJ, BE, BRELV, IA, IB, MA, MB, MRIMP, MRR, MTS, MU, NIMP, NMASS, NX, NY, P0,
                            POINT_WIDTH, QAX, QAY, QBX, QBY, RNA, RNB, ROW_WIDTH, RTA, RTB, SOFT, SOLVE_WIDTH, STEPN,
                            STEPT, T0, TANGENT_WIDTH, TIMP, TMASS)


@inline_njit
def _bundle_frame(rows, j):
    """(inverse masses and inertias m = (1/mA, 1/IA, 1/mB, 1/IB), normal x, normal y) of bundle j's lanes."""
    m = (load(rows, j, MA), load(rows, j, IA), load(rows, j, MB), load(rows, j, IB))
    return m, load(rows, j, NX), load(rows, j, NY)


@inline_njit
def _bundle_points(extra, j):
    """How many points bundle j solves: its first lane's count, the largest (``colour_contacts``). ``extra``: the
    bundles' (bounce table, material table, point counts) (``_contact_rows``)."""
    _, _, points = extra
    return points[j]


@inline_njit
def _arms(rows, j, p, tangent):
    """The lever arms (rA × d, rB × d) of point p, for d the normal or the tangent."""
    if tangent:
        t = T0 + p * TANGENT_WIDTH
        return load(rows, j, t + RTA), load(rows, j, t + RTB)
    o = P0 + p * POINT_WIDTH
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


@llvm_inline_njit
def _gather_velocities(state, body, j):
    """The lanes' body rows (A, B) and their velocities v = (vA.x, vA.y, ωA, vB.x, vB.y, ωB)."""
    sa = gather_rows(state, body, j, 0)
    sb = gather_rows(state, body, j, 1)
    return sa, sb, (sa[VX], sa[VY], sa[W], sb[VX], sb[VY], sb[W])


@llvm_inline_njit
def _scatter_velocities(state, body, move, j, sa, sb, v):
    """Write each lane's new velocity back to its bodies, except for bodies that are only read (the first
    four columns of each row: v, ω, and DPX as it was gathered)."""
    scatter_rows(state, body, move, j, 0, (v[0], v[1], v[2], sa[DPX]))
    scatter_rows(state, body, move, j, 1, (v[3], v[4], v[5], sb[DPX]))


@inline_njit
def _warm_start(rows, j, state, body, move, extra):
    """Apply last step's impulses (an empty second point has zero impulses and changes nothing)."""
    m, nx, ny = _bundle_frame(rows, j)
    points = _bundle_points(extra, j)
    sa, sb, v = _gather_velocities(state, body, j)
    for p in range(points):
        o = P0 + p * POINT_WIDTH
        t = T0 + p * TANGENT_WIDTH
        nimp = load(rows, j, o + NIMP)
        timp = load(rows, j, t + TIMP)
        # P = nimp·n + timp·t with t = (n.y, −n.x); r × P = nimp (r × n) + timp (r × t)
        px = nimp * nx + timp * ny
        py = nimp * ny - timp * nx
        ra = nimp * load(rows, j, o + RNA) + timp * load(rows, j, t + RTA)
        rb = nimp * load(rows, j, o + RNB) + timp * load(rows, j, t + RTB)
        v = (v[0] - m[0] * px, v[1] - m[0] * py, v[2] - m[1] * ra, v[3] + m[2] * px, v[4] + m[2] * py,
             v[5] + m[3] * rb)
    _scatter_velocities(state, body, move, j, sa, sb, v)


@inline_njit
def _solve_contact(rows, j, state, body, move, use_bias, rolling, inv_h, soft, stiff, reverse, extra):
    """The contacts of bundle j: normal points (soft, biased when ``use_bias``), then in the relax sweep
    Coulomb friction and (``rolling``: a step with rolling resistance) rolling resistance; the points in reverse
    order when ``reverse`` (odd substeps: module docstring)."""
    f, sa, sb, v = _solve_setup(rows, j, state, body, soft, stiff)
    points = _bundle_points(extra, j)
    for i in range(points):
        v = _solve_normal(rows, j, _point_index(i, points, reverse), f, v, use_bias, inv_h)
    if not use_bias:
        ts = _tangent_speed(extra, j)
        for i in range(points):
            v = _solve_friction(rows, j, _point_index(i, points, reverse), f, v, ts)
    if rolling:
        v = _solve_rolling(rows, j, f, v, points, extra)
    _scatter_velocities(state, body, move, j, sa, sb, v)


@inline_njit
def _tangent_speed(extra, j):
    """Bundle j's lanes' relative tangent speed of the surfaces (0 in a step without a material table)."""
    _, material, _ = extra
    if material.shape[0] > 0:
        return load(material, j, MTS)
    return splat(0.0)


@inline_njit
def _point_index(i, points, reverse):
    """The bundle's i-th point to solve: point i, or with ``reverse`` point points − 1 − i."""
    return (points - 1 - i) if reverse else i


@llvm_inline_njit
def _solve_rolling(rows, j, f, v, points, extra):
    """Rolling resistance (Box2D v3.1), in the relax sweep: an angular impulse λ = −(ωB − ωA)/(1/IA + 1/IB)
    that stops the bodies' relative spin, clamped to ± the coefficient × the larger radius × the normal
    impulse of the contact (a torque bounded by the normal force, as friction's force is). Only in steps
    with some rolling resistance (``ROLLING_RELAX``), and there bundles in which no lane has any are skipped."""
    _, material, _ = extra
    rr = load(material, j, MRR)
    any_rr = False
    for q in range(LANES):
        any_rr = any_rr or lane(rr, q) != 0.0
    if not any_rr:
        return v
    m = f[0]
    total = load(rows, j, P0 + NIMP)
    for p in range(1, points):
        total = total + load(rows, j, P0 + p * POINT_WIDTH + NIMP)
    old = load(material, j, MRIMP)
    # the rolling mass 1/(1/IA + 1/IB), here and not in the rows: only bundles with rolling resistance use it
    k = m[1] + m[3]
    turns = k > 0.0
    lam = select(turns, (v[2] - v[5]) / select(turns, k, splat(1.0)), splat(0.0))
    limit = rr * total
    new = vmin(vmax(old + lam, -limit), limit)
    lam = new - old
    store(material, j, MRIMP, new)
    return (v[0], v[1], v[2] - m[1] * lam, v[3], v[4], v[5] + m[3] * lam)


@inline_njit
def _solve_two(rows, j, state, body, move, use_bias, rolling, inv_h, soft, stiff, reverse, extra):
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
    points = max(_bundle_points(extra, j), _bundle_points(extra, j + 1))
    for i in range(points):
        p = _point_index(i, points, reverse)
        v0 = _solve_normal(rows, j, p, f0, v0, use_bias, inv_h)
        v1 = _solve_normal(rows, j + 1, p, f1, v1, use_bias, inv_h)
    if not use_bias:
        ts0 = _tangent_speed(extra, j)
        ts1 = _tangent_speed(extra, j + 1)
        for i in range(points):
            p = _point_index(i, points, reverse)
            v0 = _solve_friction(rows, j, p, f0, v0, ts0)
            v1 = _solve_friction(rows, j + 1, p, f1, v1, ts1)
    if rolling:
        v0 = _solve_rolling(rows, j, f0, v0, points, extra)
        v1 = _solve_rolling(rows, j + 1, f1, v1, points, extra)
    _scatter_velocities(state, body, move, j, sa0, sb0, v0)
    _scatter_velocities(state, body, move, j + 1, sa1, sb1, v1)


@llvm_inline_njit
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


@llvm_inline_njit
def _solve_normal(rows, j, p, f, v, use_bias, inv_h):
    """The normal impulse of point p (soft, biased when ``use_bias``): v after it."""
    m, nx, ny, br, ms, isc, dpx, dpy, ca, sna, cb, snb = f
    o = P0 + p * POINT_WIDTH
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
    ka, kb = _arms(rows, j, p, False)
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
        t = T0 + p * TANGENT_WIDTH
        store(rows, j, t + STEPN, load(rows, j, t + STEPN) + new)
    return _push_along(v, m, lam, nx, ny, ka, kb)


@llvm_inline_njit
def _solve_friction(rows, j, p, f, v, ts):
    """The Coulomb friction impulse of point p (in the relax sweep, the only one
    that solves friction), the surfaces moving along the tangent at ``ts`` relative to each other (conveyor
    belts; x − 0 is x exactly, so without a material table the zeros change nothing): v after it; the point's
    impulse at the end is added to the step's tangent impulse, ``STEPT``."""
    m, nx, ny = f[0], f[1], f[2]
    tx = ny
    ty = -nx
    t = T0 + p * TANGENT_WIDTH
    ka, kb = _arms(rows, j, p, True)
    vt = _speed_along(v, tx, ty, ka, kb) - ts
    old = load(rows, j, t + TIMP)
    lam = -load(rows, j, t + TMASS) * vt
    limit = load(rows, j, MU) * load(rows, j, P0 + p * POINT_WIDTH + NIMP)
    new = vmin(vmax(old + lam, -limit), limit)
    lam = new - old
    store(rows, j, t + TIMP, new)
    store(rows, j, t + STEPT, load(rows, j, t + STEPT) + new)
    return _push_along(v, m, lam, tx, ty, ka, kb)


@inline_njit
def _restitute(rows, j, state, body, move, extra):
    """One restitution sweep over bundle j, in a step in which some point may bounce (``step_sweeps``).

    Every point that took an impulse in the step takes part, with a target for its normal speed from its
    normal speed v_n⁰ at the start of the step (``BRELV``; for a point closing a gap, at the meeting,
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
    points = _bundle_points(extra, j)
    bounce, _, _ = extra
    e = load(bounce, j, BE)
    zero = splat(0.0)
    one = splat(1.0)
    on = zero
    for p in range(points):
        t = T0 + p * TANGENT_WIDTH
        on = select((e != 0.0) & (load(bounce, j, BRELV + p) < 0.0) & (load(rows, j, t + STEPN) > 0.0), one, on)
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
        t = T0 + p * TANGENT_WIDTH
        relv = load(bounce, j, BRELV + p)
        ka, kb = _arms(rows, j, p, False)
        vn = _speed_along(v, nx, ny, ka, kb)
        old = load(rows, j, t + STEPN)
        lam = -load(rows, j, o + NMASS) * (vn + select(relv < zero, e * relv, relv))
        new = select(on & (old > zero), vmax(old + lam, zero), old)
        lam = new - old
        store(rows, j, t + STEPN, new)
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
#: a restitution sweep before the step's last (``_solve._solve_share``): the sweep of ``RESTITUTE`` without its
#: write-back (``_write_back``), whose stores the last sweep's replace. Why: each write-back stores eight impulses
#: and two approach speeds per contact, scattered over the contact table in colour order; written after each of
#: the 8 sweeps they cost the spinner (17,000 contacts, always some point bouncing) a seventh of its solve
BOUNCE = 6


@inline_njit
def sweep_marks(table, material, j, marks):
    """``marks`` = (bounce, rolling), one lane vector each, with bundle j's lanes added (1 where the lane has a point
    that may bounce, restitution above 0 and approaching faster than RESTITUTION_THRESHOLD; 1 where it has rolling
    resistance): what ``step_sweeps`` decides from, gathered by the prepare stage right after it writes the bundle's
    rows (``_prepare._prepare_bundles``), on the same single-precision values. ``table``, ``material``: the bounce
    and material tables (``_contact_rows``)."""
    bounce, rolling = marks
    one = splat(1.0)
    fast = splat(-RESTITUTION_THRESHOLD)
    may = (load(table, j, BE) != 0.0) & ((load(table, j, BRELV) <= fast) | (load(table, j, BRELV + 1) <= fast))
    if material.shape[0] > 0:
        rolling = select(load(material, j, MRR) != 0.0, one, rolling)
    return select(may, one, bounce), rolling


@njit
def step_sweeps(found):
    """(how many restitution sweeps the step makes, the relax sweep's task code), as an array, from what the
    prepare stage's threads found (``found[w]``: thread w's (bounce, rolling), ``sweep_marks``):
    RESTITUTION_SWEEPS if some point may bounce, else 1 (a pass that only writes the impulses back,
    ``WRITE_BACK``); and ROLLING_RELAX if some contact has rolling resistance, else RELAX. (Found as the rows are
    written: a pass of its own over the rows before the solve read four cache lines of every bundle, from
    memory, in one thread: 0.03 ms of large_pyramid's step.)

    Why more than Box2D's one: one sweep answers each point in turn, so where several bodies meet in one step
    a later point undoes an earlier one's bounce (a ball pressed against a wall by another bounced off the
    wall, then the other ball's point pushed it back into the wall); the sweeps let the points of a group
    agree (``_restitute``). 50 elastic balls in a box kept 46 % of their energy over 20 s with one sweep of
    the bouncing points only (Box2D v3 61 %), 72 % with 8, 99.9 % with 8 over the bouncing points and the
    points of the bodies they move (``_restitute``).
    """
    sweeps = np.empty(2, np.int64)
    sweeps[0] = 1
    sweeps[1] = RELAX
    for w in range(found.shape[0]):
        if found[w, 0] != 0:
            sweeps[0] = RESTITUTION_SWEEPS
        if found[w, 1] != 0:
            sweeps[1] = ROLLING_RELAX
    return sweeps


#: how many bundles ahead ``_sweep_range`` asks for the rows of the bundles it solves two at a time
SWEEP_PREFETCH = 4


@njit
def _sweep_range(task, reverse, lo, hi, bundles, inv_h, soft, stiff, paired):
    """Bundles lo … hi − 1, one after the other; with ``paired`` (a parallel colour, whose bundles share no
    body) the solves go two bundles at a time (``_solve_two``); ``reverse``: solve each contact's points in the
    reverse order (odd substeps: module docstring). ``bundles``: (rows, body, move, state, out, extra), by pointer
    (``by_ref``: ``_solve._solve_share`` hands the same to each of a step's sweeps)."""
    # (views without references, ``deref``: the per-bundle functions below take none on them)
    rows, body, move, state, out, extra = deref(bundles)
    j = lo
    if paired and (task == BIASED or task == RELAX or task == ROLLING_RELAX):
        while j + 1 < hi:
            if j + SWEEP_PREFETCH + 1 < hi:
                # (the biased sweep reads only the first SOLVE_WIDTH fields: asked for the whole bundle, it streamed
                # a third more than it read)
                fields = SOLVE_WIDTH if task == BIASED else ROW_WIDTH
                prefetch_bundle(rows, j + SWEEP_PREFETCH, fields)
                prefetch_bundle(rows, j + SWEEP_PREFETCH + 1, fields)
            _solve_two(rows, j, state, body, move, task == BIASED, task == ROLLING_RELAX, inv_h, soft, stiff,
                       reverse, extra)
            j += 2
    while j < hi:
        if task != WRITE_BACK:
            _one(task, reverse, rows, j, state, body, move, inv_h, soft, stiff, extra)
        if task == RESTITUTE or task == WRITE_BACK:
            _write_back(rows, j, out, extra)
        j += 1


@inline_njit
def _write_back(rows, j, out, extra):
    """Bundle j's impulses back to the contact table, and each point's approach speed −v_n before the solve
    (``approach``: ``World.contact_data``, and the hit events, which ``_step.event_rows`` finds from it and the
    step's impulses only when someone asks for them; a missing second point's row holds −0)."""
    perm, first, count, c_nimp, c_timp, c_step, approach = out
    bounce, _, _ = extra
    o1 = P0 + POINT_WIDTH
    t1 = T0 + TANGENT_WIDTH
    for q in range(count[j]):
        # (unsigned: no check for a negative index at each of the stores below, ``carom._jit.index_range``)
        k = np.uint64(perm[first[j] + q])
        # stored from the bundle's own fields, with no read of the contact table, whose rows this visits out of
        # order (the hits are found after the step, when asked for, from these and the table)
        c_nimp[k, 0] = rows[j, P0 + NIMP, q]
        c_timp[k, 0] = rows[j, T0 + TIMP, q]
        c_nimp[k, 1] = rows[j, o1 + NIMP, q]
        c_timp[k, 1] = rows[j, t1 + TIMP, q]
        c_step[k, 0, 0] = rows[j, T0 + STEPN, q]
        c_step[k, 0, 1] = rows[j, T0 + STEPT, q]
        c_step[k, 1, 0] = rows[j, t1 + STEPN, q]
        c_step[k, 1, 1] = rows[j, t1 + STEPT, q]
        approach[k, 0] = -np.float64(bounce[j, BRELV, q])
        approach[k, 1] = -np.float64(bounce[j, BRELV + 1, q])


@llvm_inline_njit
def _one(task, reverse, rows, j, state, body, move, inv_h, soft, stiff, extra):
    """Bundle j's part of the sweep ``task`` (one bundle at a time). Typed once and inlined by LLVM, as is
    ``_prepare_bundle``: copied into the caller's Numba IR they cost about 4.5 s of cold compile together, and
    they run as fast either way."""
    if task == WARM:
        _warm_start(rows, j, state, body, move, extra)
    elif task == RESTITUTE or task == BOUNCE:
        _restitute(rows, j, state, body, move, extra)
    else:
        _solve_contact(rows, j, state, body, move, task == BIASED, task == ROLLING_RELAX, inv_h, soft, stiff,
                       reverse, extra)
