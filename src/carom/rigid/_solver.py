"""Contact solver: graph colouring, packed constraint rows and the soft step, parallel over colours.

Solver (after Box2D v3's "soft step"), per substep of length h:

1. integrate velocities: v += h·(g·gravity_scale + f/m), ω += h·τ/I, then damping v /= 1 + h·c;
2. warm start: apply last step's impulses (matched by feature id);
3. solve with a soft bias: for each contact point with current separation s (tracked from the bodies'
   position deltas, so no collision rerun is needed inside the substeps):
   s > 0 (speculative): bias = s/h (the bodies may close the gap but not more);
   s ≤ 0: bias = max(β·s, −v_push), with a soft constraint of stiffness ``CONTACT_HERTZ`` and damping ratio
   ``CONTACT_DAMPING_RATIO``: ω = 2π f, β = ω/(2ζ + hω), mass scale = hω(2ζ + hω)/(1 + hω(2ζ + hω)),
   impulse scale = 1/(1 + hω(2ζ + hω)).
   λ = −m_n·mass_scale·(v_n + bias) − impulse_scale·λ_acc, accumulated impulse clamped ≥ 0; friction
   λ_t = −m_t·v_t clamped to ±μ·λ_n (Coulomb);
4. integrate positions;
5. relax: the same solve without the soft bias (bias 0 for s ≤ 0), which removes the velocity the bias added.

After the substeps, restitution: for points that approached faster than ``RESTITUTION_THRESHOLD``,
λ = −m_n (v_n + e·v_n⁰), clamped so the accumulated impulse stays ≥ 0. For two free bodies this is the
closed form of the reference article, I = −(1 + e)·v_rel·n / (1/m1 + 1/m2 + (r1×n)²/I1 + (r2×n)²/I2).

m_n = 1/(1/mA + 1/mB + (rA×n)²/IA + (rB×n)²/IB) is the effective mass along the normal (m_t along the
tangent).

Parallelism and determinism. Contacts are coloured greedily in key order so that no two contacts of one
colour share a dynamic body (static and kinematic bodies are only read). Every sweep visits the colours in
order; inside a colour the contacts touch disjoint bodies, so they can be solved in any order or at once,
with bitwise the same result: the answer does not depend on the thread count. Contacts that find no free
colour among the first ``OVERFLOW`` go to the overflow colour, solved in one thread in key order.

Layout. Each solved contact is one row of ``rows`` (``ROW_WIDTH`` floats: masses, normal, friction,
restitution, softness, then two points of ``POINT_WIDTH`` floats), stored in solve order, so a sweep reads
memory front to back; each body is one row of ``state`` (v, ω, position delta, rotation delta).
"""
import math

import numpy as np
from numba import prange

from .._jit import njit, pnjit, inline_njit
from ..constants import (MAX_ROTATION, MAX_TRANSLATION_SPEED, CONTACT_HERTZ, CONTACT_DAMPING_RATIO,
                         CONTACT_PUSH_MAX_VELOCITY, RESTITUTION_THRESHOLD)

STATIC, KINEMATIC, DYNAMIC = 0, 1, 2
MIX_SQRT, MIX_MIN, MIX_MAX, MIX_MEAN, MIX_MULTIPLY = 0, 1, 2, 3, 4
KEY_SHIFT = 32
KEY_MASK = 0xFFFFFFFF

#: colours 0 … OVERFLOW − 1 are parallel; colour OVERFLOW is solved in one thread
OVERFLOW = 63

# contact row fields
MA, IA, MB, IB, NX, NY, MU, E, SOFT, COUNT = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9
P0 = 10
POINT_WIDTH = 15
# point fields (offsets from P0 + p·POINT_WIDTH): anchors from the centres of mass (r), anchors of the
# tracked core points (q), separation offset, normal and tangent mass, impulses, largest impulse of the
# step, normal velocity before the solve
RAX, RAY, RBX, RBY, QAX, QAY, QBX, QBY, ADJ, NMASS, TMASS, NIMP, TIMP, MAXIMP, RELV = range(15)
ROW_WIDTH = P0 + 2 * POINT_WIDTH

# body state fields
VX, VY, W, DPX, DPY, DC, DS = 0, 1, 2, 3, 4, 5, 6
STATE_WIDTH = 8


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


@njit
def colour_contacts(order, c_ba, c_bb, kind, NB):
    """Greedy colouring in the given order: each contact takes the lowest colour that neither of its
    dynamic bodies uses yet. Returns (permutation of ``order`` sorted by colour, colour start offsets)."""
    n = order.shape[0]
    used = np.zeros(NB, np.uint64)
    colour = np.empty(n, np.int64)
    counts = np.zeros(OVERFLOW + 2, np.int64)
    one = np.uint64(1)
    for i in range(n):
        k = order[i]
        a = c_ba[k]
        b = c_bb[k]
        busy = np.uint64(0)
        if kind[a] == DYNAMIC:
            busy |= used[a]
        if kind[b] == DYNAMIC:
            busy |= used[b]
        c = 0
        while c < OVERFLOW and (busy >> np.uint64(c)) & one:
            c += 1
        colour[i] = c
        counts[c + 1] += 1
        if c < OVERFLOW:
            bit = one << np.uint64(c)
            if kind[a] == DYNAMIC:
                used[a] |= bit
            if kind[b] == DYNAMIC:
                used[b] |= bit
    start = np.cumsum(counts)
    fill = start[:-1].copy()
    perm = np.empty(n, np.int64)
    for i in range(n):
        c = colour[i]
        perm[fill[c]] = order[i]
        fill[c] += 1
    return perm, start


@njit
def prepare_stage(bodies, shapes, contacts, friction_rule, restitution_rule, threads):
    """Rows of the contacts to solve, coloured, in solve order.

    Solved are the non-sensor contacts with points and at least one awake dynamic body. Each row holds the
    anchors relative to the centres of mass (on each body's own surface: the manifold point is midway
    between the surfaces, and a speculative contact far ahead of a small body must not act on it through a
    long lever arm), the effective masses, the separation offsets the substeps track between the cores, the
    warm-start impulses and the approach speed. Returns (perm, colour starts, body pairs, rows).
    """
    kind, asleep = bodies[7], bodies[16]
    shape_body = shapes[0]
    keys, c_count, c_sensor = contacts[0], contacts[1], contacts[9]
    K = keys.shape[0]
    NB = kind.shape[0]
    c_ba = np.empty(K, np.int64)
    c_bb = np.empty(K, np.int64)
    order = np.empty(K, np.int64)
    n = 0
    for k in range(K):
        ba = shape_body[keys[k] >> KEY_SHIFT]
        bb = shape_body[keys[k] & KEY_MASK]
        c_ba[k] = ba
        c_bb[k] = bb
        if c_count[k] == 0 or c_sensor[k]:
            continue
        if (kind[ba] == DYNAMIC and not asleep[ba]) or (kind[bb] == DYNAMIC and not asleep[bb]):
            order[n] = k
            n += 1
    perm, start = colour_contacts(order[:n], c_ba, c_bb, kind, NB)
    pair = np.empty((n, 2), np.int64)
    rows = np.zeros((n, ROW_WIDTH))
    _prepare_all_rows(perm, bodies, shapes, contacts, c_ba, c_bb, pair, rows, friction_rule, restitution_rule,
                      threads)
    return perm, start, pair, rows


@pnjit
def _prepare_all_rows(perm, bodies, shapes, contacts, c_ba, c_bb, pair, rows, friction_rule, restitution_rule,
                      threads):
    """Every row, in parallel chunks (the parallel loop alone in its function: Numba analyses every statement
    of a function with a parallel loop, so keeping the rest outside saves compile time)."""
    n = perm.shape[0]
    chunks = chunk_count(n, threads)
    for ch in prange(chunks):
        _prepare_rows(ch * n // chunks, (ch + 1) * n // chunks, perm, bodies, shapes, contacts, c_ba, c_bb,
                      pair, rows, friction_rule, restitution_rule)


@njit
def _prepare_rows(lo, hi, perm, bodies, shapes, contacts, c_ba, c_bb, pair, rows, friction_rule,
                  restitution_rule):
    """Rows lo … hi − 1 of the solver, row i from contact perm[i] (one call per chunk: kept out of the
    parallel loop so every name in it is private, and the tuples' arrays are unpacked once per chunk)."""
    com, vel, angvel, inv_mass, inv_inertia = bodies[0], bodies[2], bodies[3], bodies[4], bodies[5]
    shape_radius, shape_friction, shape_restitution = shapes[4], shapes[5], shapes[6]
    keys, c_count, c_nimp, c_timp, c_normal, c_point, c_sep = (
        contacts[0], contacts[1], contacts[3], contacts[4], contacts[5], contacts[6], contacts[7])
    for i in range(lo, hi):
        _prepare_row(i, perm[i], com, vel, angvel, inv_mass, inv_inertia, shape_radius, shape_friction,
                     shape_restitution, keys, c_count, c_nimp, c_timp, c_normal, c_point, c_sep, c_ba, c_bb,
                     pair, rows, friction_rule, restitution_rule)


@inline_njit
def _prepare_row(i, k, com, vel, angvel, inv_mass, inv_inertia, shape_radius, shape_friction,
                 shape_restitution, keys, c_count, c_nimp, c_timp, c_normal, c_point, c_sep, c_ba, c_bb, pair,
                 rows, friction_rule, restitution_rule):
    """Row i of the solver from contact k."""
    a = keys[k] >> KEY_SHIFT
    bsh = keys[k] & KEY_MASK
    ba = c_ba[k]
    bb = c_bb[k]
    pair[i, 0] = ba
    pair[i, 1] = bb
    mA = inv_mass[ba]
    mB = inv_mass[bb]
    iA = inv_inertia[ba]
    iB = inv_inertia[bb]
    nx = c_normal[k, 0]
    ny = c_normal[k, 1]
    rows[i, MA] = mA
    rows[i, IA] = iA
    rows[i, MB] = mB
    rows[i, IB] = iB
    rows[i, NX] = nx
    rows[i, NY] = ny
    rows[i, MU] = mix(shape_friction[a], shape_friction[bsh], friction_rule)
    rows[i, E] = mix(shape_restitution[a], shape_restitution[bsh], restitution_rule)
    rows[i, SOFT] = 1.0 if (mA == 0.0 or mB == 0.0) else 0.0
    rows[i, COUNT] = c_count[k]
    for p in range(c_count[k]):
        o = P0 + p * POINT_WIDTH
        hs = 0.5 * c_sep[k, p]
        rax = c_point[k, p, 0] - hs * nx - com[ba, 0]
        ray = c_point[k, p, 1] - hs * ny - com[ba, 1]
        rbx = c_point[k, p, 0] + hs * nx - com[bb, 0]
        rby = c_point[k, p, 1] + hs * ny - com[bb, 1]
        rows[i, o + RAX] = rax
        rows[i, o + RAY] = ray
        rows[i, o + RBX] = rbx
        rows[i, o + RBY] = rby
        rna = rax * ny - ray * nx
        rnb = rbx * ny - rby * nx
        kn = mA + mB + iA * rna * rna + iB * rnb * rnb
        rows[i, o + NMASS] = 1.0 / kn if kn > 0.0 else 0.0
        # tangent t = (n.y, −n.x)
        rta = rax * (-nx) - ray * ny
        rtb = rbx * (-nx) - rby * ny
        kt = mA + mB + iA * rta * rta + iB * rtb * rtb
        rows[i, o + TMASS] = 1.0 / kt if kt > 0.0 else 0.0
        # separation is tracked between the cores (surface point moved in by the radius): for a
        # circle that is its centre, which spinning does not move
        qax = rax - shape_radius[a] * nx
        qay = ray - shape_radius[a] * ny
        qbx = rbx + shape_radius[bsh] * nx
        qby = rby + shape_radius[bsh] * ny
        rows[i, o + QAX] = qax
        rows[i, o + QAY] = qay
        rows[i, o + QBX] = qbx
        rows[i, o + QBY] = qby
        rows[i, o + ADJ] = c_sep[k, p] - ((qbx - qax) * nx + (qby - qay) * ny)
        rows[i, o + NIMP] = c_nimp[k, p]
        rows[i, o + TIMP] = c_timp[k, p]
        dvx = vel[bb, 0] - angvel[bb] * rby - vel[ba, 0] + angvel[ba] * ray
        dvy = vel[bb, 1] + angvel[bb] * rbx - vel[ba, 1] - angvel[ba] * rax
        rows[i, o + RELV] = dvx * nx + dvy * ny


@inline_njit
def _warm_start(rows, i, state, ia, ib):
    """Apply last step's impulses; a static or kinematic body (no inverse mass) is only read, never written."""
    move_a = rows[i, MA] > 0.0 or rows[i, IA] > 0.0
    move_b = rows[i, MB] > 0.0 or rows[i, IB] > 0.0
    nx = rows[i, NX]
    ny = rows[i, NY]
    for p in range(int(rows[i, COUNT])):
        o = P0 + p * POINT_WIDTH
        px = rows[i, o + NIMP] * nx + rows[i, o + TIMP] * ny
        py = rows[i, o + NIMP] * ny - rows[i, o + TIMP] * nx
        if move_a:
            state[ia, VX] -= rows[i, MA] * px
            state[ia, VY] -= rows[i, MA] * py
            state[ia, W] -= rows[i, IA] * (rows[i, o + RAX] * py - rows[i, o + RAY] * px)
        if move_b:
            state[ib, VX] += rows[i, MB] * px
            state[ib, VY] += rows[i, MB] * py
            state[ib, W] += rows[i, IB] * (rows[i, o + RBX] * py - rows[i, o + RBY] * px)


@inline_njit
def _solve_contact(rows, i, state, ia, ib, use_bias, inv_h, soft, stiff):
    """One contact: normal points (soft, biased when ``use_bias``), then Coulomb friction."""
    mA = rows[i, MA]
    iA = rows[i, IA]
    mB = rows[i, MB]
    iB = rows[i, IB]
    nx = rows[i, NX]
    ny = rows[i, NY]
    cnt = int(rows[i, COUNT])
    br, ms, isc = stiff if rows[i, SOFT] != 0.0 else soft
    dpx = state[ib, DPX] - state[ia, DPX]
    dpy = state[ib, DPY] - state[ia, DPY]
    ca = state[ia, DC]
    sna = state[ia, DS]
    cb = state[ib, DC]
    snb = state[ib, DS]
    vax = state[ia, VX]
    vay = state[ia, VY]
    wa = state[ia, W]
    vbx = state[ib, VX]
    vby = state[ib, VY]
    wb = state[ib, W]
    for p in range(cnt):
        o = P0 + p * POINT_WIDTH
        rax = rows[i, o + RAX]
        ray = rows[i, o + RAY]
        rbx = rows[i, o + RBX]
        rby = rows[i, o + RBY]
        # current separation from the position deltas (core anchors turned by each body's rotation so far)
        qax = rows[i, o + QAX]
        qay = rows[i, o + QAY]
        qbx = rows[i, o + QBX]
        qby = rows[i, o + QBY]
        prax = ca * qax - sna * qay
        pray = sna * qax + ca * qay
        prbx = cb * qbx - snb * qby
        prby = snb * qbx + cb * qby
        s = (dpx + prbx - prax) * nx + (dpy + prby - pray) * ny + rows[i, o + ADJ]
        bias = 0.0
        mscale = 1.0
        iscale = 0.0
        if s > 0.0:
            bias = s * inv_h
        elif use_bias:
            bias = max(br * s, -CONTACT_PUSH_MAX_VELOCITY)
            mscale = ms
            iscale = isc
        dvx = vbx - wb * rby - vax + wa * ray
        dvy = vby + wb * rbx - vay - wa * rax
        vn = dvx * nx + dvy * ny
        old = rows[i, o + NIMP]
        lam = -rows[i, o + NMASS] * mscale * (vn + bias) - iscale * old
        new = max(old + lam, 0.0)
        lam = new - old
        rows[i, o + NIMP] = new
        if lam > rows[i, o + MAXIMP]:
            rows[i, o + MAXIMP] = lam
        px = lam * nx
        py = lam * ny
        vax -= mA * px
        vay -= mA * py
        wa -= iA * (rax * py - ray * px)
        vbx += mB * px
        vby += mB * py
        wb += iB * (rbx * py - rby * px)
    mu = rows[i, MU]
    tx = ny
    ty = -nx
    for p in range(cnt):
        o = P0 + p * POINT_WIDTH
        rax = rows[i, o + RAX]
        ray = rows[i, o + RAY]
        rbx = rows[i, o + RBX]
        rby = rows[i, o + RBY]
        dvx = vbx - wb * rby - vax + wa * ray
        dvy = vby + wb * rbx - vay - wa * rax
        vt = dvx * tx + dvy * ty
        old = rows[i, o + TIMP]
        lam = -rows[i, o + TMASS] * vt
        limit = mu * rows[i, o + NIMP]
        new = min(max(old + lam, -limit), limit)
        lam = new - old
        rows[i, o + TIMP] = new
        px = lam * tx
        py = lam * ty
        vax -= mA * px
        vay -= mA * py
        wa -= iA * (rax * py - ray * px)
        vbx += mB * px
        vby += mB * py
        wb += iB * (rbx * py - rby * px)
    if mA > 0.0 or iA > 0.0:
        state[ia, VX] = vax
        state[ia, VY] = vay
        state[ia, W] = wa
    if mB > 0.0 or iB > 0.0:
        state[ib, VX] = vbx
        state[ib, VY] = vby
        state[ib, W] = wb


@inline_njit
def _restitute(rows, i, state, ia, ib):
    e = rows[i, E]
    if e == 0.0:
        return
    nx = rows[i, NX]
    ny = rows[i, NY]
    for p in range(int(rows[i, COUNT])):
        o = P0 + p * POINT_WIDTH
        relv = rows[i, o + RELV]
        if relv > -RESTITUTION_THRESHOLD or rows[i, o + MAXIMP] == 0.0:
            continue
        rax = rows[i, o + RAX]
        ray = rows[i, o + RAY]
        rbx = rows[i, o + RBX]
        rby = rows[i, o + RBY]
        dvx = state[ib, VX] - state[ib, W] * rby - state[ia, VX] + state[ia, W] * ray
        dvy = state[ib, VY] + state[ib, W] * rbx - state[ia, VY] - state[ia, W] * rax
        vn = dvx * nx + dvy * ny
        old = rows[i, o + NIMP]
        lam = -rows[i, o + NMASS] * (vn + e * relv)
        new = max(old + lam, 0.0)
        lam = new - old
        rows[i, o + NIMP] = new
        px = lam * nx
        py = lam * ny
        if rows[i, MA] > 0.0 or rows[i, IA] > 0.0:
            state[ia, VX] -= rows[i, MA] * px
            state[ia, VY] -= rows[i, MA] * py
            state[ia, W] -= rows[i, IA] * (rax * py - ray * px)
        if rows[i, MB] > 0.0 or rows[i, IB] > 0.0:
            state[ib, VX] += rows[i, MB] * px
            state[ib, VY] += rows[i, MB] * py
            state[ib, W] += rows[i, IB] * (rbx * py - rby * px)


WARM, BIASED, RELAX, RESTITUTE = 0, 1, 2, 3


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


@pnjit
def _sweep(task, start, pair, rows, state, inv_h, soft, stiff, threads):
    """One pass over all contacts, colour by colour; the contacts of a parallel colour in parallel chunks."""
    for c in range(OVERFLOW):
        lo = start[c]
        n = start[c + 1] - lo
        if n == 0:
            continue
        chunks = chunk_count(n, threads)
        if chunks == 1:
            _sweep_range(task, lo, lo + n, pair, rows, state, inv_h, soft, stiff)
            continue
        for ch in prange(chunks):
            _sweep_range(task, lo + ch * n // chunks, lo + (ch + 1) * n // chunks, pair, rows, state, inv_h,
                         soft, stiff)
    _sweep_range(task, start[OVERFLOW], start[OVERFLOW + 1], pair, rows, state, inv_h, soft, stiff)


@njit
def _sweep_range(task, lo, hi, pair, rows, state, inv_h, soft, stiff):
    for i in range(lo, hi):
        _one(task, rows, i, state, pair[i, 0], pair[i, 1], inv_h, soft, stiff)


@inline_njit
def _one(task, rows, i, state, ia, ib, inv_h, soft, stiff):
    if task == WARM:
        _warm_start(rows, i, state, ia, ib)
    elif task == RESTITUTE:
        _restitute(rows, i, state, ia, ib)
    else:
        _solve_contact(rows, i, state, ia, ib, task == BIASED, inv_h, soft, stiff)


# Parallel loops below only call a function per item: Numba 0.6x miscompiled an in-place update of a tuple
# member array inside a prange body (``angle[b] += …`` was applied twice), and a call keeps every name private.

@pnjit
def _integrate(positions, state, bodies, dangle, gx, gy, h, threads):
    """Integrate every body's velocity (``positions`` false) or position (true), in parallel chunks: one
    parallel function for both, since each parallel loop costs seconds of compile time."""
    n = state.shape[0]
    chunks = chunk_count(n, threads)
    for ch in prange(chunks):
        _integrate_range(positions, ch * n // chunks, (ch + 1) * n // chunks, state, bodies, dangle, gx, gy, h)


@njit
def _integrate_range(positions, lo, hi, state, bodies, dangle, gx, gy, h):
    if positions:
        _integrate_position_range(lo, hi, state, bodies, dangle, h)
    else:
        _integrate_velocity_range(lo, hi, state, bodies, gx, gy, h)


@njit
def _integrate_velocity_range(lo, hi, state, bodies, gx, gy, h):
    inv_mass, inv_inertia, kind, body_alive, force, torque = (
        bodies[4], bodies[5], bodies[7], bodies[9], bodies[10], bodies[11])
    lin_damping, ang_damping, gravity_scale, asleep = bodies[12], bodies[13], bodies[14], bodies[16]
    for b in range(lo, hi):
        if body_alive[b] and kind[b] == DYNAMIC and not asleep[b]:
            _integrate_velocity(b, state, inv_mass, inv_inertia, force, torque, lin_damping, ang_damping,
                                gravity_scale, gx, gy, h)


@inline_njit
def _integrate_velocity(b, state, inv_mass, inv_inertia, force, torque, lin_damping, ang_damping,
                        gravity_scale, gx, gy, h):
    vx = state[b, VX] + h * (gx * gravity_scale[b] + inv_mass[b] * force[b, 0])
    vy = state[b, VY] + h * (gy * gravity_scale[b] + inv_mass[b] * force[b, 1])
    w = state[b, W] + h * inv_inertia[b] * torque[b]
    vx /= 1.0 + h * lin_damping[b]
    vy /= 1.0 + h * lin_damping[b]
    w /= 1.0 + h * ang_damping[b]
    sp = math.sqrt(vx * vx + vy * vy)
    if sp > MAX_TRANSLATION_SPEED:
        vx *= MAX_TRANSLATION_SPEED / sp
        vy *= MAX_TRANSLATION_SPEED / sp
    if abs(w) * h > MAX_ROTATION:
        w *= MAX_ROTATION / (abs(w) * h)
    state[b, VX] = vx
    state[b, VY] = vy
    state[b, W] = w


@njit
def _integrate_position_range(lo, hi, state, bodies, dangle, h):
    com, angle, kind, body_alive, asleep = bodies[0], bodies[1], bodies[7], bodies[9], bodies[16]
    for b in range(lo, hi):
        if body_alive[b] and kind[b] != STATIC and not asleep[b]:
            _integrate_position(b, state, com, angle, dangle, h)


@inline_njit
def _integrate_position(b, state, com, angle, dangle, h):
    dx = h * state[b, VX]
    dy = h * state[b, VY]
    da = h * state[b, W]
    com[b, 0] = com[b, 0] + dx
    com[b, 1] = com[b, 1] + dy
    state[b, DPX] = state[b, DPX] + dx
    state[b, DPY] = state[b, DPY] + dy
    angle[b] = angle[b] + da
    dangle[b] = dangle[b] + da
    state[b, DC] = math.cos(dangle[b])
    state[b, DS] = math.sin(dangle[b])


@njit
def solve_stage(dt, substeps, gx, gy, bodies, contacts, perm, start, pair, rows, threads):
    """The soft step (module docstring) over the coloured rows: substeps of integrate, warm start, biased
    solve, integrate positions, relax; then restitution. The impulses go back to the contact table.
    Returns the start-of-step positions and angles (for continuous collision)."""
    com, angle, vel, angvel, force, torque = bodies[0], bodies[1], bodies[2], bodies[3], bodies[10], bodies[11]
    c_nimp, c_timp = contacts[3], contacts[4]
    NB = com.shape[0]
    inv_dt = 1.0 / dt
    h = dt / substeps
    inv_h = 1.0 / h
    contact_hertz = min(CONTACT_HERTZ, 0.25 * substeps * inv_dt)
    soft = soft_params(contact_hertz, CONTACT_DAMPING_RATIO, h)
    # contacts with a static (or kinematic) body are twice as stiff: nothing on the other side gives way
    stiff = soft_params(2.0 * contact_hertz, CONTACT_DAMPING_RATIO, h)
    com0 = com.copy()
    angle0 = angle.copy()
    state = np.zeros((NB, STATE_WIDTH))
    dangle = np.zeros(NB)
    for b in range(NB):
        state[b, VX] = vel[b, 0]
        state[b, VY] = vel[b, 1]
        state[b, W] = angvel[b]
        state[b, DC] = 1.0
    # the task codes as runtime values: passed as constants, each would compile its own copy of the sweep
    tasks = np.arange(4)
    velocities = np.bool_(False)
    positions = np.bool_(True)
    for sub in range(substeps):
        _integrate(velocities, state, bodies, dangle, gx, gy, h, threads)
        _sweep(tasks[WARM], start, pair, rows, state, inv_h, soft, stiff, threads)
        _sweep(tasks[BIASED], start, pair, rows, state, inv_h, soft, stiff, threads)
        _integrate(positions, state, bodies, dangle, gx, gy, h, threads)
        _sweep(tasks[RELAX], start, pair, rows, state, inv_h, soft, stiff, threads)
    _sweep(tasks[RESTITUTE], start, pair, rows, state, inv_h, soft, stiff, threads)
    for b in range(NB):
        vel[b, 0] = state[b, VX]
        vel[b, 1] = state[b, VY]
        angvel[b] = state[b, W]
        force[b, 0] = 0.0
        force[b, 1] = 0.0
        torque[b] = 0.0
    for i in range(perm.shape[0]):
        k = perm[i]
        for p in range(2):
            c_nimp[k, p] = rows[i, P0 + p * POINT_WIDTH + NIMP]
            c_timp[k, p] = rows[i, P0 + p * POINT_WIDTH + TIMP]
    return com0, angle0
