"""The bounds stage (``bounds_stage``): each awake body's motion bound for the step (``motion``, columns
``M_BOUND`` … ``M_SWEPT``), its origin transform (``xf``), and each shape's box, swept along the motion where
the bound is not capped (``lower``, ``upper``); velocities capped to what the step may carry.
"""
import math

import numpy as np
from numba import prange

from .._jit import njit, inline_njit, pnjit, borrowed, borrowed_rows, deref, index_range
from ..constants import SPECULATIVE_DISTANCE
from ..geometry._math import angle_sin_cos, sin_cos_rows
from ..geometry.aabb import core_box
from ._contact_rows import chunk_count
from ._integrate import beyond_caps, capped_velocity, max_angular_speed
from ._layout import STATIC, DYNAMIC, TCX, TCY, TVX, TVY, TW, TM, TI, TG
from .._simd import ROW


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
    ``xf[b]`` = (origin x, origin y, cos θ, sin θ) of each body, computed once for the whole step. ``table``:
    each body's row of what the prepare stage gathers (``_layout.TCX`` …; row NB, the dummy body of empty bundle
    lanes, all zeros), written here, where the body's centre and velocity are read anyway and the bodies are
    split between the threads (filled by the prepare stage, it was a serial pass over the bodies, 0.19 ms of
    many_pyramids' step). Nothing changes these values between the two stages. Bodies, then shapes, in parallel
    chunks (each item is independent of the others).
    """
    bodies = deref(bodies)
    shapes = deref(shapes)
    com, angle, vel, angvel, local_center, kind, body_alive, gravity_scale, body_min_extent, asleep = (
        bodies.com, bodies.angle, bodies.vel, bodies.angvel, bodies.local_center, bodies.kind, bodies.alive,
        bodies.gravity_scale, bodies.min_extent,
        bodies.asleep)
    # (one tuple: every array a parallel loop receives costs compile time)
    masses = (bodies.inv_mass, bodies.inv_inertia)
    shape_body, shape_alive, shape_offset, shape_count, shape_radius, shape_reach, verts = (
        shapes.body, shapes.alive, shapes.offset, shapes.vert_count, shapes.radius, shapes.reach, shapes.verts)
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
    # (not zeroed: every column of every row is written, which spares a memset of the whole table)
    table = np.empty((NB + 1, ROW))
    for f in range(ROW):
        table[NB, f] = 0.0
    _bounds_chunks(dt, gx, gy, com, angle, vel, angvel, local_center, kind, body_alive, gravity_scale,
                   body_min_extent, asleep, reach, awake, motion, xf, masses, table, shape_body, shape_alive,
                   shape_offset, shape_count, shape_radius, verts, lower, upper, threads)
    return reach, awake, motion, xf, lower, upper, table


@pnjit
def _bounds_chunks(dt, gx, gy, com, angle, vel, angvel, local_center, kind, body_alive, gravity_scale,
                   body_min_extent, asleep, reach, awake, motion, xf, masses, table, shape_body, shape_alive,
                   shape_offset, shape_count, shape_radius, verts, lower, upper, threads):
    """The two loops of :func:`bounds_stage`, in parallel chunks (a call per chunk keeps names private)."""
    NB = com.shape[0]
    S = shape_body.shape[0]
    if threads == 1 or (chunk_count(NB, threads) == 1 and chunk_count(S, threads) == 1):
        # (in this thread: launching a parallel loop for one chunk costs about 15 µs, 4 µs of a small world's
        # step with two threads even as one chunk; a literal 0 would compile each function a second time, for
        # Literal[int](0))
        zero = np.int64(0)
        _body_bounds(zero, NB, dt, gx, gy, com, angle, vel, angvel, local_center, kind, body_alive, gravity_scale,
                     body_min_extent, asleep, reach, awake, motion, xf, masses, table)
        _shape_bounds(zero, S, shape_body, shape_alive, shape_offset, shape_count, shape_radius, verts, xf, motion,
                      lower, upper)
        return
    chunks = chunk_count(NB, threads)
    for ch in prange(chunks):
        _body_bounds(ch * NB // chunks, (ch + 1) * NB // chunks, dt, gx, gy, com, angle, vel, angvel,
                     local_center, kind, body_alive, gravity_scale, body_min_extent, asleep, reach, awake,
                     motion, xf, masses, table)
    chunks = chunk_count(S, threads)
    for ch in prange(chunks):
        _shape_bounds(ch * S // chunks, (ch + 1) * S // chunks, shape_body, shape_alive, shape_offset,
                      shape_count, shape_radius, verts, xf, motion, lower, upper)


@njit
def _body_bounds(lo, hi, dt, gx, gy, com, angle, vel, angvel, local_center, kind, body_alive, gravity_scale,
                 body_min_extent, asleep, reach, awake, motion, xf, masses, table):
    """Bodies lo … hi − 1: transform, awake flag, motion bound and row of the prepare stage's table (every
    entry written)."""
    com, angle, local_center = borrowed((com, angle, local_center))  # (``borrowed``)
    inv_mass, inv_inertia = borrowed(masses)
    # every body's sine and cosine first, in one vectorized loop (``sin_cos_rows``)
    rot = np.empty((2, hi - lo))
    sin_cos_rows(angle, lo, hi, rot)
    gravity_fall = dt * dt * math.sqrt(gx * gx + gy * gy)
    max_w = max_angular_speed(dt)
    ulo = np.uint64(lo)
    for b in index_range(lo, hi):
        vx = vel[b, 0]
        vy = vel[b, 1]
        w = angvel[b]
        if body_alive[b] and beyond_caps(vx, vy, w, max_w):
            # every velocity within the caps before the step uses it (``capped_velocity``): a velocity set far
            # beyond them (1e6 m/s) otherwise reached the contacts' restitution, whose bounce answers the
            # approach speed, and left the step just as fast. Written back only when a cap bites: a store of
            # three values for every body cost about a sixth of the stage
            vx, vy, w = capped_velocity(vx, vy, w, max_w)
            vel[b, 0] = vx
            vel[b, 1] = vy
            angvel[b] = w
        table[b, TCX] = com[b, 0]
        table[b, TCY] = com[b, 1]
        table[b, TVX] = vx
        table[b, TVY] = vy
        table[b, TW] = w
        table[b, TM] = inv_mass[b]
        table[b, TI] = inv_inertia[b]
        table[b, TG] = gravity_scale[b] if kind[b] == DYNAMIC else 0.0
        moving = False
        if not body_alive[b]:
            xf[b, 0] = 0.0
            xf[b, 1] = 0.0
            xf[b, 2] = 0.0
            xf[b, 3] = 0.0
        else:
            ox, oy, c, sn = _origin(com, local_center, b, rot[1, b - ulo], rot[0, b - ulo])
            xf[b, 0] = ox
            xf[b, 1] = oy
            xf[b, 2] = c
            xf[b, 3] = sn
            if kind[b] == DYNAMIC:
                moving = not asleep[b]
            elif kind[b] != STATIC:
                moving = vx != 0.0 or vy != 0.0 or w != 0.0
        # (the flag kept in a register and the motion row written once: a tenth less time than zeroing every
        # row first and reading the flag back from the array)
        awake[b] = moving
        if not moving:
            for f in range(MOTION_WIDTH):
                motion[b, f] = 0.0
            continue
        turn = abs(w) * reach[b] * dt
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
    for s in index_range(lo, hi):
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
