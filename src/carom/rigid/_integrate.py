"""Integration in the solve stage: velocities (gravity, forces, damping, capped speed) and positions of the
solved bodies, one range of bodies at a time, and the rotations' sines and cosines.
"""
import math

import numpy as np

from .._jit import njit, inline_njit, sin_cos, deref, index_range
from .._simd import prefetch_row
from ._layout import (STATIC, DYNAMIC, VX, VY, W, DPX, DPY, DC, DS, STATE_WIDTH, MOVE_VELOCITY, MOVE_POSITION,
                      MOVE_SOLVED, MOVE_LOCK_X, MOVE_LOCK_Y, LOCK_X, LOCK_Y)
from ..constants import MAX_ROTATION, MAX_TRANSLATION_SPEED


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

#: the rows of ``moves`` (4, bodies), the position pass's own table: the sines and cosines ``_rotations`` computes
#: (rows 0 and 1, scratch) and each body's position change so far in the step in double precision (MOVE_X,
#: MOVE_Y), which the sweeps read rounded from ``fstate``. Kept apart from the body's double row (``state``, a cache
#: line per body): a position pass over many_pyramids' 22,000 bodies streams from the last-level cache, and
#: reads and writes 16 bytes per body here where it read and wrote the 64 of the row
MOVE_X, MOVE_Y = 2, 3
MOVES_ROWS = 4

#: how many bodies ahead a velocity pass asks for the step table's rows (``prefetch_row``): the pass waited for
#: each row's load, the first use of a line the sweeps since had evicted
KICK_AHEAD = 8

#: the integrators' passes: the first of the step (fill the rows, the step table, then integrate velocities),
#: velocities, positions, and the last of the step (``_finish``)
FIRST_PASS, VELOCITY_PASS, POSITION_PASS, FINISH_PASS = 0, 1, 2, 3


@njit
def _integrate_range(task, lo, hi, tables, gx, gy, h, max_w):
    """One pass of the integrators over bodies lo … hi − 1 (``state`` has a row more than there are bodies:
    the dummy body of empty bundle lanes). ``tables``: (state, fstate, kick, flags, solved, motion, dangle, moves),
    by pointer (``by_ref``: ``_solve._solve_share`` hands the same to each of a step's passes).

    The first pass of the step fills each body's rows of ``state`` and ``fstate`` from the world's velocities,
    and its row of the step table ``kick`` and its ``flags`` (``_fill_kick``), which the later passes read
    instead of the body arrays: a substep's velocity pass reads one cache line per body where it read eleven
    arrays. The velocity change is precomputed as the same double-precision value the sum used, so
    the result is bitwise that of computing it every substep. With borrowed views, a velocity pass over the
    large pyramid's 5,050 boxes takes about 20 µs (180 µs before: six atomic reference counts per body)."""
    # (views without references, ``deref``: the per-body functions below take none on them)
    state, fstate, kick, flags, solved, motion, dangle, moves = deref(tables)
    if task == FINISH_PASS:
        _finish(lo, hi, state, fstate, flags, motion, dangle, moves, max_w)
        return
    if task == FIRST_PASS:
        _fill_kick(lo, hi, state, fstate, kick, flags, solved, motion, moves, gx, gy, h)
    if task == POSITION_PASS:
        for b in index_range(lo, hi):
            if flags[b] & MOVE_POSITION:
                _integrate_position(b, state, fstate, kick, flags, dangle, moves, h, max_w)
        _rotations(lo, hi, dangle, fstate, moves)
    else:
        carry = task == VELOCITY_PASS
        ahead = np.uint64(KICK_AHEAD)
        for b in index_range(lo, hi):
            prefetch_row(kick, b + ahead)
            if flags[b] & MOVE_VELOCITY:
                _integrate_velocity(b, state, fstate, kick, flags, h, max_w, carry)


@njit
def _fill_kick(lo, hi, state, fstate, kick, flags, solved, motion, moves, gx, gy, h):
    """Bodies lo … hi − 1: their rows of ``state`` and ``fstate`` at the start of the step (``_load_body``), of
    the step table (``_integrate_range``) and their position change so far, none (``moves``)."""
    (inv_mass, inv_inertia, kind, body_alive, force, torque, lin_damping, ang_damping, gravity_scale, asleep, vel,
     angvel, locks, com, angle) = motion
    for b in index_range(lo, hi):
        # a locked axis (``Body.lock_x``, ``lock_y``) starts at 0 and gets no gravity or force along it
        fx = 0.0 if locks[b] & LOCK_X else 1.0
        fy = 0.0 if locks[b] & LOCK_Y else 1.0
        _load_body(b, state, fstate, fx * vel[b, 0], fy * vel[b, 1], angvel[b])
        moves[MOVE_X, b] = 0.0
        moves[MOVE_Y, b] = 0.0
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


@njit
def _finish(lo, hi, state, fstate, flags, motion, dangle, moves, max_w):
    """Bodies lo … hi − 1 at the end of the step: their velocities, and their position and angle changes applied
    once (``_integrate_position``); forces and torques cleared. The last pass of the solve, after its sweeps, in
    parallel chunks as the others (in one thread after the solve, it was 0.2 ms of many_pyramids' step, which
    two threads did not speed up)."""
    (inv_mass, inv_inertia, kind, body_alive, force, torque, lin_damping, ang_damping, gravity_scale, asleep, vel,
     angvel, locks, com, angle) = motion
    for b in index_range(lo, hi):
        vx, vy, w = _velocity(b, state, fstate, flags)
        if flags[b] & MOVE_POSITION:
            com[b, 0] = com[b, 0] + moves[MOVE_X, b]
            com[b, 1] = com[b, 1] + moves[MOVE_Y, b]
            angle[b] = angle[b] + dangle[b]
        # the speed caps hold for the velocity a body leaves the step with, whatever its contacts and its
        # restitution did after the last substep's integration (a box bouncing with restitution 1 off the
        # ground at 1,000 m/s left at 882 m/s); the square root and division only where a cap bites (LLVM
        # computed them for every body otherwise)
        if beyond_caps(vx, vy, w, max_w):
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
def _integrate_position(b, state, fstate, kick, flags, dangle, moves, h, max_w):
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
    moves[MOVE_X, b] = moves[MOVE_X, b] + dx
    moves[MOVE_Y, b] = moves[MOVE_Y, b] + dy
    dangle[b] = dangle[b] + da
    fstate[b, DPX] = moves[MOVE_X, b]
    fstate[b, DPY] = moves[MOVE_Y, b]


@njit
def _rotations(lo, hi, dangle, fstate, moves):
    """The solver's rotation deltas (``fstate`` DC, DS: single precision) of bodies lo … hi − 1 from their
    angle changes so far (``dangle``; 0 for a body that does not move, whose row then keeps cos 1, sin 0).

    For |Δθ| ≤ π/4 (the usual case: a body turns little within a step) the Taylor polynomials to x¹¹ and x¹²
    in double precision (``_small_sin_cos``), whose truncation error (below 1e-11) is far under a float's
    rounding step; a call of glibc's ``sincos`` cost about 20 ns per body per substep. Three loops, so that
    the polynomials run in vector registers: the first, over contiguous arrays and without branches, is
    vectorized by LLVM (four bodies per instruction) and writes the sines and cosines to the scratch rows 0
    and 1 of ``moves``; the second copies them into the bodies' rows; the third, only when some |Δθ| > π/4 (a
    body that turned more than an eighth of a turn so far in the step), recomputes those with ``sin_cos``. Each lane's
    operations are the scalar code's in the same order, so the values are bitwise those of one body at a
    time, in a third of the time."""
    big = 0
    for b in index_range(lo, hi):
        x = dangle[b]
        moves[0, b], moves[1, b] = _small_sin_cos(x)
        big += abs(x) > EIGHTH_TURN
    for b in index_range(lo, hi):
        fstate[b, DC] = moves[1, b]
        fstate[b, DS] = moves[0, b]
    if big > 0:
        for b in index_range(lo, hi):
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


@njit
def max_angular_speed(dt):
    """The largest angular speed (rad/s) a body may have over a step of dt: MAX_ROTATION per step."""
    return MAX_ROTATION / dt


#: the speed a body above the cap is brought to (``capped_velocity``)
_CAPPED_SPEED = MAX_TRANSLATION_SPEED * (1.0 - 1e-12)


@njit
def beyond_caps(vx, vy, w, max_w):
    """Whether (v, ω) is beyond a cap that ``capped_velocity`` would apply (the one test both use)."""
    return vx * vx + vy * vy > _CAPPED_SPEED * _CAPPED_SPEED or abs(w) > max_w


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
