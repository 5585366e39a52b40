"""The rigid step: broad phase, narrow phase, soft-step solver and continuous collision in ONE compiled call.

Bodies are stored by their centre of mass ``com`` and ``angle``; shapes by their core in the body frame
(relative to the body origin, which sits at ``com − R·local_center``).

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
"""
import math

import numpy as np

from .._jit import njit
from ..constants import (SPECULATIVE_DISTANCE, LINEAR_SLOP, MAX_ROTATION, MAX_TRANSLATION_SPEED,
                         CONTACT_HERTZ, CONTACT_DAMPING_RATIO, CONTACT_PUSH_MAX_VELOCITY,
                         RESTITUTION_THRESHOLD, TOI_TARGET, TOI_MAX_ITERATIONS, SLEEP_LINEAR_TOLERANCE,
                         SLEEP_TIME)
from ..geometry._math import relative_transform
from ..geometry.aabb import core_aabb
from ..geometry.manifold import collide_sat
from ..geometry.gjk import shape_distance
from ..geometry._broadphase_kernels import tree_update, tree_pairs_cached

STATIC, KINEMATIC, DYNAMIC = 0, 1, 2

# mixing rules
MIX_SQRT, MIX_MIN, MIX_MAX, MIX_MEAN, MIX_MULTIPLY = 0, 1, 2, 3, 4


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
    if hertz == 0.0:
        return 0.0, 1.0, 0.0
    omega = 2.0 * math.pi * hertz
    a1 = 2.0 * zeta + h * omega
    a2 = h * omega * a1
    a3 = 1.0 / (1.0 + a2)
    return omega / a1, a2 * a3, a3


@njit
def body_origin(com, angle, local_center, b):
    c = math.cos(angle[b])
    s = math.sin(angle[b])
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


@njit
def bounds_stage(dt, gx, gy, bodies, shapes):
    """Which bodies move this step, how far (the speculative margin), and every shape's box.

    ``awake`` marks the bodies whose contacts are recomputed and solved: awake dynamic bodies and moving
    kinematic ones. ``motion`` bounds how far any point of a body can travel in the step:
    (|v| + |ω|·reach + dt·|g|)·dt, where reach is the farthest shape point from the centre of mass.
    """
    (com, angle, vel, angvel, inv_mass, inv_inertia, local_center, kind, bullet, body_alive, force, torque,
     lin_damping, ang_damping, gravity_scale, body_min_extent, asleep, sleep_time, island) = bodies
    (shape_body, shape_alive, shape_offset, shape_count, shape_radius, shape_friction, shape_restitution,
     shape_reach, shape_sensor, shape_category, shape_mask, shape_group, verts, normals) = shapes
    NB = com.shape[0]
    S = shape_body.shape[0]
    reach = np.zeros(NB)
    for s in range(S):
        if shape_alive[s]:
            b = shape_body[s]
            if shape_reach[s] > reach[b]:
                reach[b] = shape_reach[s]
    awake = np.zeros(NB, np.bool_)
    motion = np.zeros(NB)
    for b in range(NB):
        if not body_alive[b] or kind[b] == STATIC:
            continue
        if kind[b] == DYNAMIC:
            awake[b] = not asleep[b]
        else:
            awake[b] = vel[b, 0] != 0.0 or vel[b, 1] != 0.0 or angvel[b] != 0.0
        if awake[b]:
            sp = math.sqrt(vel[b, 0] ** 2 + vel[b, 1] ** 2) + abs(angvel[b]) * reach[b]
            if kind[b] == DYNAMIC:
                sp += dt * math.sqrt(gx * gx + gy * gy) * abs(gravity_scale[b])
            motion[b] = sp * dt
    lower = np.zeros((S, 2))
    upper = np.zeros((S, 2))
    for s in range(S):
        if not shape_alive[s]:
            continue
        b = shape_body[s]
        ox, oy, c, sn = body_origin(com, angle, local_center, b)
        o = shape_offset[s]
        lx, ly, ux, uy = core_aabb(verts[o:o + shape_count[s]], shape_radius[s], ox, oy, c, sn)
        m = SPECULATIVE_DISTANCE + motion[b]
        lower[s, 0] = lx - m
        lower[s, 1] = ly - m
        upper[s, 0] = ux + m
        upper[s, 1] = uy + m
    return reach, awake, motion, lower, upper


@njit
def broad_stage(bodies, shapes, tree, shape_proxy, proxy_shape, lower, upper):
    """Candidate shape pairs, sorted by key ``a << 32 | b`` (a < b), that pass the filter.

    The dynamic tree (carom.geometry.broadphase) keeps fat boxes: a shape that stays inside its fat box
    costs nothing, and candidate pairs are cached between steps (only re-inserted leaves are queried).
    Pairs of one body, pairs without a dynamic body and sensor–sensor pairs are dropped.
    """
    kind = bodies[7]
    shape_body, shape_alive = shapes[0], shapes[1]
    shape_sensor, shape_category, shape_mask, shape_group = shapes[8], shapes[9], shapes[10], shapes[11]
    (bp_moving, bp_static, bp_lower, bp_upper, bp_flags, bp_leaf, bp_moved, bp_moved_flag, bp_moved_meta,
     bp_cand, bp_margin, bp_multiplier) = tree
    S = shape_body.shape[0]
    n_alive = 0
    for s in range(S):
        if shape_alive[s]:
            n_alive += 1
    ids = np.empty(n_alive, np.int64)
    lowers = np.empty((n_alive, 2))
    uppers = np.empty((n_alive, 2))
    n_alive = 0
    for s in range(S):
        if shape_alive[s]:
            ids[n_alive] = shape_proxy[s]
            lowers[n_alive, 0] = lower[s, 0]
            lowers[n_alive, 1] = lower[s, 1]
            uppers[n_alive, 0] = upper[s, 0]
            uppers[n_alive, 1] = upper[s, 1]
            n_alive += 1
    tree_update(bp_moving, bp_static, bp_lower, bp_upper, bp_flags, bp_leaf, ids, lowers, uppers, bp_margin,
                bp_multiplier, bp_moved, bp_moved_flag, bp_moved_meta)
    proxy_pairs, new_cand = tree_pairs_cached(bp_moving, bp_static, bp_lower, bp_upper, bp_flags, bp_leaf,
                                              bp_moved, bp_moved_flag, bp_moved_meta, bp_cand)
    keys = np.empty(proxy_pairs.shape[0], np.int64)
    K = 0
    for q in range(proxy_pairs.shape[0]):
        sa = proxy_shape[proxy_pairs[q, 0]]
        sb = proxy_shape[proxy_pairs[q, 1]]
        ba = shape_body[sa]
        bb = shape_body[sb]
        if ba == bb or (kind[ba] != DYNAMIC and kind[bb] != DYNAMIC):
            continue
        if shape_sensor[sa] and shape_sensor[sb]:
            continue
        if not should_collide(shape_category[sa], shape_mask[sa], shape_group[sa],
                              shape_category[sb], shape_mask[sb], shape_group[sb]):
            continue
        keys[K] = (min(sa, sb) << KEY_SHIFT) | max(sa, sb)
        K += 1
    return np.sort(keys[:K]), new_cand


@njit
def narrow_stage(bodies, shapes, awake, motion, keys, old):
    """Manifolds of the candidate pairs, matched to last step's contacts by feature id (warm starting).

    A pair of which neither body is awake (both asleep or static) keeps last step's manifold unchanged.
    Sensor pairs are tested for overlap only (no speculative margin) and are never solved. A touching contact
    between an awake body and a sleeping one wakes the sleeping body's island (``awake`` is updated).
    Returns the contact table (keys, count, feature ids, normal and tangent impulses, normal, points,
    separations, touching, sensor).
    """
    (com, angle, vel, angvel, inv_mass, inv_inertia, local_center, kind, bullet, body_alive, force, torque,
     lin_damping, ang_damping, gravity_scale, body_min_extent, asleep, sleep_time, island) = bodies
    (shape_body, shape_alive, shape_offset, shape_count, shape_radius, shape_friction, shape_restitution,
     shape_reach, shape_sensor, shape_category, shape_mask, shape_group, verts, normals) = shapes
    old_keys, old_count, old_ids, old_nimp, old_timp, old_normal, old_point, old_sep, old_touch = old[:9]
    NB = com.shape[0]
    S = shape_body.shape[0]
    K = keys.shape[0]
    c_count = np.zeros(K, np.int64)
    c_ids = np.zeros((K, 2), np.int64)
    c_normal = np.zeros((K, 2))
    c_point = np.zeros((K, 2, 2))
    c_sep = np.zeros((K, 2))
    c_nimp = np.zeros((K, 2))
    c_timp = np.zeros((K, 2))
    c_touch = np.zeros(K, np.bool_)
    c_sensor = np.zeros(K, np.bool_)
    maxc = 1
    for s in range(S):
        if shape_count[s] > maxc:
            maxc = shape_count[s]
    sv = np.empty((maxc, 2))
    snm = np.empty((maxc, 2))
    j_old = 0
    n_old = old_keys.shape[0]
    for k in range(K):
        a = keys[k] >> KEY_SHIFT
        bsh = keys[k] & KEY_MASK
        ba = shape_body[a]
        bb = shape_body[bsh]
        sensor = shape_sensor[a] or shape_sensor[bsh]
        c_sensor[k] = sensor
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
            continue
        ax, ay, ac, as_ = body_origin(com, angle, local_center, ba)
        bx, by, bc, bs = body_origin(com, angle, local_center, bb)
        tx, ty, tc, ts = relative_transform(ax, ay, ac, as_, bx, by, bc, bs)
        oa = shape_offset[a]
        ob = shape_offset[bsh]
        spec = 0.0 if sensor else SPECULATIVE_DISTANCE + motion[ba] + motion[bb]
        m = collide_sat(verts[oa:oa + shape_count[a]], normals[oa:oa + shape_count[a]], shape_radius[a],
                        verts[ob:ob + shape_count[bsh]], normals[ob:ob + shape_count[bsh]], shape_radius[bsh],
                        tx, ty, tc, ts, spec, sv, snm)
        cnt = m[0]
        c_count[k] = cnt
        if cnt == 0:
            continue
        c_normal[k, 0] = ac * m[1] - as_ * m[2]
        c_normal[k, 1] = as_ * m[1] + ac * m[2]
        c_point[k, 0, 0] = ac * m[3] - as_ * m[4] + ax
        c_point[k, 0, 1] = as_ * m[3] + ac * m[4] + ay
        c_sep[k, 0] = m[5]
        c_ids[k, 0] = m[6]
        c_point[k, 1, 0] = ac * m[7] - as_ * m[8] + ax
        c_point[k, 1, 1] = as_ * m[7] + ac * m[8] + ay
        c_sep[k, 1] = m[9]
        c_ids[k, 1] = m[10]
        deepest = m[5] if cnt == 1 else min(m[5], m[9])
        c_touch[k] = deepest < 0.0 if sensor else deepest < LINEAR_SLOP
        if matched and not sensor:
            for p in range(cnt):
                for q in range(old_count[j_old]):
                    if old_ids[j_old, q] == c_ids[k, p]:
                        c_nimp[k, p] = old_nimp[j_old, q]
                        c_timp[k, p] = old_timp[j_old, q]
    # wake the islands of sleeping bodies that an awake body reaches (sensors never wake anything)
    wake = np.zeros(NB, np.bool_)
    any_wake = False
    for k in range(K):
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
    return (keys, c_count, c_ids, c_nimp, c_timp, c_normal, c_point, c_sep, c_touch, c_sensor)


@njit
def prepare_stage(bodies, shapes, contacts, friction_rule, restitution_rule):
    """Solver rows of the contacts to solve: anchors relative to the centres of mass, effective masses, the
    separation offsets the substeps track, and the approach speed (for restitution and hit events).

    Solved are the non-sensor contacts with points and at least one awake dynamic body; ``order`` lists
    them in key order (the fixed order the Gauss–Seidel sweeps visit them in)."""
    (com, angle, vel, angvel, inv_mass, inv_inertia, local_center, kind, bullet, body_alive, force, torque,
     lin_damping, ang_damping, gravity_scale, body_min_extent, asleep, sleep_time, island) = bodies
    shape_body, shape_radius, shape_friction, shape_restitution = shapes[0], shapes[4], shapes[5], shapes[6]
    keys, c_count, c_ids, c_nimp, c_timp, c_normal, c_point, c_sep, c_touch, c_sensor = contacts
    K = keys.shape[0]
    order = np.empty(K, np.int64)
    n = 0
    for k in range(K):
        if c_count[k] == 0 or c_sensor[k]:
            continue
        ba = shape_body[keys[k] >> KEY_SHIFT]
        bb = shape_body[keys[k] & KEY_MASK]
        if (kind[ba] == DYNAMIC and not asleep[ba]) or (kind[bb] == DYNAMIC and not asleep[bb]):
            order[n] = k
            n += 1
    order = order[:n]
    c_ba = np.zeros(K, np.int64)
    c_bb = np.zeros(K, np.int64)
    c_mu = np.zeros(K)
    c_e = np.zeros(K)
    c_static = np.zeros(K, np.bool_)
    rA = np.zeros((K, 2, 2))
    rB = np.zeros((K, 2, 2))
    nmass = np.zeros((K, 2))
    tmass = np.zeros((K, 2))
    adj_sep = np.zeros((K, 2))
    qA = np.zeros((K, 2, 2))
    qB = np.zeros((K, 2, 2))
    rel_vel = np.zeros((K, 2))
    for i in range(n):
        k = order[i]
        a = keys[k] >> KEY_SHIFT
        bsh = keys[k] & KEY_MASK
        ba = shape_body[a]
        bb = shape_body[bsh]
        c_ba[k] = ba
        c_bb[k] = bb
        c_mu[k] = mix(shape_friction[a], shape_friction[bsh], friction_rule)
        c_e[k] = mix(shape_restitution[a], shape_restitution[bsh], restitution_rule)
        c_static[k] = inv_mass[ba] == 0.0 or inv_mass[bb] == 0.0
        mA = inv_mass[ba]
        mB = inv_mass[bb]
        iA = inv_inertia[ba]
        iB = inv_inertia[bb]
        nx = c_normal[k, 0]
        ny = c_normal[k, 1]
        for p in range(c_count[k]):
            # anchors on each body's own surface (the manifold point is midway between the surfaces): a
            # speculative contact far ahead of a small body must not act on it through a long lever arm
            hs = 0.5 * c_sep[k, p]
            rax = c_point[k, p, 0] - hs * nx - com[ba, 0]
            ray = c_point[k, p, 1] - hs * ny - com[ba, 1]
            rbx = c_point[k, p, 0] + hs * nx - com[bb, 0]
            rby = c_point[k, p, 1] + hs * ny - com[bb, 1]
            rA[k, p, 0] = rax
            rA[k, p, 1] = ray
            rB[k, p, 0] = rbx
            rB[k, p, 1] = rby
            rna = rax * ny - ray * nx
            rnb = rbx * ny - rby * nx
            kn = mA + mB + iA * rna * rna + iB * rnb * rnb
            nmass[k, p] = 1.0 / kn if kn > 0.0 else 0.0
            # tangent t = (n.y, −n.x)
            rta = rax * (-nx) - ray * ny
            rtb = rbx * (-nx) - rby * ny
            kt = mA + mB + iA * rta * rta + iB * rtb * rtb
            tmass[k, p] = 1.0 / kt if kt > 0.0 else 0.0
            # separation is tracked between the cores (surface point moved in by the radius): for a
            # circle that is its centre, which spinning does not move
            qax = rax - shape_radius[a] * nx
            qay = ray - shape_radius[a] * ny
            qbx = rbx + shape_radius[bsh] * nx
            qby = rby + shape_radius[bsh] * ny
            qA[k, p, 0] = qax
            qA[k, p, 1] = qay
            qB[k, p, 0] = qbx
            qB[k, p, 1] = qby
            adj_sep[k, p] = c_sep[k, p] - ((qbx - qax) * nx + (qby - qay) * ny)
            dvx = vel[bb, 0] - angvel[bb] * rby - vel[ba, 0] + angvel[ba] * ray
            dvy = vel[bb, 1] + angvel[bb] * rbx - vel[ba, 1] - angvel[ba] * rax
            rel_vel[k, p] = dvx * nx + dvy * ny
    return order, (c_ba, c_bb, c_mu, c_e, c_static, rA, rB, nmass, tmass, adj_sep, qA, qB, rel_vel)


@njit
def solve_stage(dt, substeps, gx, gy, bodies, contacts, order, rows):
    """The soft step (module docstring): substeps of integrate, warm start, biased solve, integrate
    positions, relax; then restitution. Returns the start-of-step positions (for continuous collision) and
    the largest impulse each point received (restitution and hit events use it)."""
    (com, angle, vel, angvel, inv_mass, inv_inertia, local_center, kind, bullet, body_alive, force, torque,
     lin_damping, ang_damping, gravity_scale, body_min_extent, asleep, sleep_time, island) = bodies
    c_count, c_nimp, c_timp, c_normal = contacts[1], contacts[3], contacts[4], contacts[5]
    c_ba, c_bb, c_mu, c_e, c_static, rA, rB, nmass, tmass, adj_sep, qA, qB, rel_vel = rows
    NB = com.shape[0]
    K = c_count.shape[0]
    inv_dt = 1.0 / dt
    h = dt / substeps
    inv_h = 1.0 / h
    contact_hertz = min(CONTACT_HERTZ, 0.25 * substeps * inv_dt)
    bias_rate, mass_scale, impulse_scale = soft_params(contact_hertz, CONTACT_DAMPING_RATIO, h)
    s_bias_rate, s_mass_scale, s_impulse_scale = soft_params(2.0 * contact_hertz, CONTACT_DAMPING_RATIO, h)
    max_nimp = np.zeros((K, 2))
    # start-of-step state for continuous collision and the position deltas the solver tracks
    com0 = com.copy()
    angle0 = angle.copy()
    dcos = np.ones(NB)
    dsin = np.zeros(NB)
    for sub in range(substeps):
        for b in range(NB):
            if not body_alive[b] or kind[b] != DYNAMIC or asleep[b]:
                continue
            vx = vel[b, 0] + h * (gx * gravity_scale[b] + inv_mass[b] * force[b, 0])
            vy = vel[b, 1] + h * (gy * gravity_scale[b] + inv_mass[b] * force[b, 1])
            w = angvel[b] + h * inv_inertia[b] * torque[b]
            vx /= 1.0 + h * lin_damping[b]
            vy /= 1.0 + h * lin_damping[b]
            w /= 1.0 + h * ang_damping[b]
            sp = math.sqrt(vx * vx + vy * vy)
            if sp > MAX_TRANSLATION_SPEED:
                vx *= MAX_TRANSLATION_SPEED / sp
                vy *= MAX_TRANSLATION_SPEED / sp
            if abs(w) * h > MAX_ROTATION:
                w *= MAX_ROTATION / (abs(w) * h)
            vel[b, 0] = vx
            vel[b, 1] = vy
            angvel[b] = w
        for i in range(order.shape[0]):
            k = order[i]
            ba = c_ba[k]
            bb = c_bb[k]
            nx = c_normal[k, 0]
            ny = c_normal[k, 1]
            for p in range(c_count[k]):
                px = c_nimp[k, p] * nx + c_timp[k, p] * ny
                py = c_nimp[k, p] * ny - c_timp[k, p] * nx
                (vel[ba, 0], vel[ba, 1], angvel[ba], vel[bb, 0], vel[bb, 1], angvel[bb]) = _exchange(
                    vel[ba, 0], vel[ba, 1], angvel[ba], vel[bb, 0], vel[bb, 1], angvel[bb], inv_mass[ba],
                    inv_inertia[ba], inv_mass[bb], inv_inertia[bb], rA[k, p, 0], rA[k, p, 1], rB[k, p, 0],
                    rB[k, p, 1], px, py)
        for phase in range(2):
            use_bias = phase == 0
            _solve_contacts(order, c_count, c_ba, c_bb, c_normal, c_mu, c_static, rA, rB, nmass, tmass, adj_sep,
                            c_nimp, c_timp, max_nimp, vel, angvel, inv_mass, inv_inertia, com, com0, dcos, dsin,
                            qA, qB, use_bias, inv_h, bias_rate, mass_scale, impulse_scale,
                            s_bias_rate, s_mass_scale, s_impulse_scale)
            if phase == 0:
                for b in range(NB):
                    if not body_alive[b] or kind[b] == STATIC or asleep[b]:
                        continue
                    com[b, 0] += h * vel[b, 0]
                    com[b, 1] += h * vel[b, 1]
                    angle[b] += h * angvel[b]
                    da = angle[b] - angle0[b]
                    dcos[b] = math.cos(da)
                    dsin[b] = math.sin(da)
    # restitution
    for i in range(order.shape[0]):
        k = order[i]
        if c_e[k] == 0.0:
            continue
        ba = c_ba[k]
        bb = c_bb[k]
        nx = c_normal[k, 0]
        ny = c_normal[k, 1]
        for p in range(c_count[k]):
            if rel_vel[k, p] > -RESTITUTION_THRESHOLD or max_nimp[k, p] == 0.0:
                continue
            rax = rA[k, p, 0]
            ray = rA[k, p, 1]
            rbx = rB[k, p, 0]
            rby = rB[k, p, 1]
            dvx = vel[bb, 0] - angvel[bb] * rby - vel[ba, 0] + angvel[ba] * ray
            dvy = vel[bb, 1] + angvel[bb] * rbx - vel[ba, 1] - angvel[ba] * rax
            vn = dvx * nx + dvy * ny
            lam = -nmass[k, p] * (vn + c_e[k] * rel_vel[k, p])
            new = max(c_nimp[k, p] + lam, 0.0)
            lam = new - c_nimp[k, p]
            c_nimp[k, p] = new
            (vel[ba, 0], vel[ba, 1], angvel[ba], vel[bb, 0], vel[bb, 1], angvel[bb]) = _exchange(
                vel[ba, 0], vel[ba, 1], angvel[ba], vel[bb, 0], vel[bb, 1], angvel[bb], inv_mass[ba],
                inv_inertia[ba], inv_mass[bb], inv_inertia[bb], rax, ray, rbx, rby, lam * nx, lam * ny)
    for b in range(NB):
        force[b, 0] = 0.0
        force[b, 1] = 0.0
        torque[b] = 0.0
    return com0, angle0, max_nimp


@njit
def _find(parent, i):
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


@njit
def sleep_stage(dt, sleep_enabled, bodies, shapes, reach, awake, contacts, order, rows):
    """Islands and sleep (Box2D's rule): a body is slow while |v| + |ω|·reach < SLEEP_LINEAR_TOLERANCE; an
    island (bodies joined by solved contacts; static bodies do not join) whose slowest-to-settle body has
    been slow for SLEEP_TIME falls asleep as a whole: velocities zeroed, labelled by its smallest body index.
    A body touching a moving kinematic body never sleeps."""
    (com, angle, vel, angvel, inv_mass, inv_inertia, local_center, kind, bullet, body_alive, force, torque,
     lin_damping, ang_damping, gravity_scale, body_min_extent, asleep, sleep_time, island) = bodies
    c_ba, c_bb = rows[0], rows[1]
    NB = com.shape[0]
    if not sleep_enabled:
        for b in range(NB):
            sleep_time[b] = 0.0
        return
    for b in range(NB):
        if body_alive[b] and kind[b] == DYNAMIC and not asleep[b]:
            sp = math.sqrt(vel[b, 0] ** 2 + vel[b, 1] ** 2) + abs(angvel[b]) * reach[b]
            if sp > SLEEP_LINEAR_TOLERANCE:
                sleep_time[b] = 0.0
            else:
                sleep_time[b] += dt
    parent = np.arange(NB)
    for i in range(order.shape[0]):
        k = order[i]
        ba = c_ba[k]
        bb = c_bb[k]
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


@njit
def event_stage(old, contacts, order, rows, max_nimp, hit_threshold):
    """Begin/end touch events by merging last step's and this step's sorted contact keys, and hit events:
    solved contacts whose approach speed −v_n (before the solve, at a point that received an impulse)
    exceeds ``hit_threshold``. Returns (begin rows of the new table, end rows of the old table,
    hit rows, hit point index, hit speed)."""
    old_keys, old_touch = old[0], old[8]
    keys, c_count, c_touch = contacts[0], contacts[1], contacts[8]
    rel_vel = rows[12]
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
    hit_k = np.empty(order.shape[0], np.int64)
    hit_p = np.empty(order.shape[0], np.int64)
    hit_v = np.empty(order.shape[0])
    nh = 0
    for q in range(order.shape[0]):
        k = order[q]
        best = hit_threshold
        bp = -1
        for p in range(c_count[k]):
            if max_nimp[k, p] > 0.0 and -rel_vel[k, p] > best:
                best = -rel_vel[k, p]
                bp = p
        if bp >= 0:
            hit_k[nh] = k
            hit_p[nh] = bp
            hit_v[nh] = best
            nh += 1
    return begin[:nb], end[:ne], hit_k[:nh], hit_p[:nh], hit_v[:nh]


@njit
def step_kernel(dt, substeps, gx, gy, friction_rule, restitution_rule, sleep_enabled, hit_threshold,
                bodies, shapes, tree, shape_proxy, proxy_shape, old):
    """Advance the world by dt: the stages above in order, in one compiled call (World.step with
    ``profile`` on calls the same stages one by one from Python to time them).

    Returns (contact table, new broad-phase candidate cache, events)."""
    reach, awake, motion, lower, upper = bounds_stage(dt, gx, gy, bodies, shapes)
    keys, new_cand = broad_stage(bodies, shapes, tree, shape_proxy, proxy_shape, lower, upper)
    contacts = narrow_stage(bodies, shapes, awake, motion, keys, old)
    order, rows = prepare_stage(bodies, shapes, contacts, friction_rule, restitution_rule)
    com0, angle0, max_nimp = solve_stage(dt, substeps, gx, gy, bodies, contacts, order, rows)
    continuous_stage(bodies, shapes, awake, com0, angle0, lower, upper)
    sleep_stage(dt, sleep_enabled, bodies, shapes, reach, awake, contacts, order, rows)
    events = event_stage(old, contacts, order, rows, max_nimp, hit_threshold)
    return contacts, new_cand, events


@njit
def _exchange(vax, vay, wa, vbx, vby, wb, mA, iA, mB, iB, rax, ray, rbx, rby, px, py):
    """Apply the impulse P = (px, py) to B at rB and −P to A at rA: Δv = ±P/m, Δω = ±(r × P)/I."""
    return (vax - mA * px, vay - mA * py, wa - iA * (rax * py - ray * px),
            vbx + mB * px, vby + mB * py, wb + iB * (rbx * py - rby * px))


@njit
def _solve_contacts(order, c_count, c_ba, c_bb, c_normal, c_mu, c_static, rA, rB, nmass, tmass, adj_sep,
                    c_nimp, c_timp, max_nimp, vel, angvel, inv_mass, inv_inertia, com, com0, dcos, dsin, qA, qB,
                    use_bias, inv_h, bias_rate, mass_scale, impulse_scale, s_bias_rate, s_mass_scale,
                    s_impulse_scale):
    for i in range(order.shape[0]):
        k = order[i]
        cnt = c_count[k]
        ba = c_ba[k]
        bb = c_bb[k]
        mA = inv_mass[ba]
        mB = inv_mass[bb]
        iA = inv_inertia[ba]
        iB = inv_inertia[bb]
        nx = c_normal[k, 0]
        ny = c_normal[k, 1]
        br = s_bias_rate if c_static[k] else bias_rate
        ms = s_mass_scale if c_static[k] else mass_scale
        isc = s_impulse_scale if c_static[k] else impulse_scale
        dpx = (com[bb, 0] - com0[bb, 0]) - (com[ba, 0] - com0[ba, 0])
        dpy = (com[bb, 1] - com0[bb, 1]) - (com[ba, 1] - com0[ba, 1])
        vax = vel[ba, 0]
        vay = vel[ba, 1]
        wa = angvel[ba]
        vbx = vel[bb, 0]
        vby = vel[bb, 1]
        wb = angvel[bb]
        total = 0.0
        for p in range(cnt):
            rax = rA[k, p, 0]
            ray = rA[k, p, 1]
            rbx = rB[k, p, 0]
            rby = rB[k, p, 1]
            # current separation from the position deltas (anchors rotated by the bodies' rotation so far)
            qax = qA[k, p, 0]
            qay = qA[k, p, 1]
            qbx = qB[k, p, 0]
            qby = qB[k, p, 1]
            prax = dcos[ba] * qax - dsin[ba] * qay
            pray = dsin[ba] * qax + dcos[ba] * qay
            prbx = dcos[bb] * qbx - dsin[bb] * qby
            prby = dsin[bb] * qbx + dcos[bb] * qby
            s = (dpx + prbx - prax) * nx + (dpy + prby - pray) * ny + adj_sep[k, p]
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
            lam = -nmass[k, p] * mscale * (vn + bias) - iscale * c_nimp[k, p]
            new = max(c_nimp[k, p] + lam, 0.0)
            lam = new - c_nimp[k, p]
            c_nimp[k, p] = new
            if lam > max_nimp[k, p]:
                max_nimp[k, p] = lam
            total += new
            vax, vay, wa, vbx, vby, wb = _exchange(vax, vay, wa, vbx, vby, wb, mA, iA, mB, iB,
                                                   rax, ray, rbx, rby, lam * nx, lam * ny)
        mu = c_mu[k]
        tx = ny
        ty = -nx
        for p in range(cnt):
            rax = rA[k, p, 0]
            ray = rA[k, p, 1]
            rbx = rB[k, p, 0]
            rby = rB[k, p, 1]
            dvx = vbx - wb * rby - vax + wa * ray
            dvy = vby + wb * rbx - vay - wa * rax
            vt = dvx * tx + dvy * ty
            lam = -tmass[k, p] * vt
            limit = mu * c_nimp[k, p]
            new = min(max(c_timp[k, p] + lam, -limit), limit)
            lam = new - c_timp[k, p]
            c_timp[k, p] = new
            vax, vay, wa, vbx, vby, wb = _exchange(vax, vay, wa, vbx, vby, wb, mA, iA, mB, iB,
                                                   rax, ray, rbx, rby, lam * tx, lam * ty)
        if mA > 0.0 or iA > 0.0:
            vel[ba, 0] = vax
            vel[ba, 1] = vay
            angvel[ba] = wa
        if mB > 0.0 or iB > 0.0:
            vel[bb, 0] = vbx
            vel[bb, 1] = vby
            angvel[bb] = wb


@njit
def continuous_stage(bodies, shapes, awake, com0, angle0, lower, upper):
    """Conservative advancement of fast bodies against static shapes; stop them at the first contact.

    A body is fast when it is a bullet or moved more than half its smallest extent this step. Its swept
    motion is interpolated linearly in position and angle; for each static shape whose box meets the
    swept box, t advances by (d − target)/bound where bound = |Δc| + |Δθ|·reach bounds how fast any point
    of the shape can approach, so t never passes the first contact. The body is put back at the earliest t.
    """
    com, angle, local_center, kind, bullet, body_alive, body_min_extent = (
        bodies[0], bodies[1], bodies[6], bodies[7], bodies[8], bodies[9], bodies[15])
    shape_body, shape_alive, shape_offset, shape_count, shape_radius, verts = (
        shapes[0], shapes[1], shapes[2], shapes[3], shapes[4], shapes[12])
    NB = com.shape[0]
    S = shape_body.shape[0]
    for b in range(NB):
        if not awake[b] or kind[b] != DYNAMIC:
            continue
        dx = com[b, 0] - com0[b, 0]
        dy = com[b, 1] - com0[b, 1]
        dth = angle[b] - angle0[b]
        dist = math.sqrt(dx * dx + dy * dy)
        if not bullet[b] and dist < 0.5 * body_min_extent[b]:
            continue
        t_min = 1.0
        for s in range(S):
            if not shape_alive[s] or shape_body[s] != b:
                continue
            o = shape_offset[s]
            vs = verts[o:o + shape_count[s]]
            # swept box of this shape and its reach from the centre of mass
            reach = 0.0
            for i in range(vs.shape[0]):
                rx = vs[i, 0] - local_center[b, 0]
                ry = vs[i, 1] - local_center[b, 1]
                rr = math.sqrt(rx * rx + ry * ry)
                if rr > reach:
                    reach = rr
            reach += shape_radius[s]
            bound = dist + abs(dth) * reach
            if bound <= 0.0:
                continue
            slx = min(com0[b, 0], com[b, 0]) - reach
            sly = min(com0[b, 1], com[b, 1]) - reach
            sux = max(com0[b, 0], com[b, 0]) + reach
            suy = max(com0[b, 1], com[b, 1]) + reach
            for q in range(S):
                if not shape_alive[q] or kind[shape_body[q]] != 0:
                    continue
                if lower[q, 0] > sux or upper[q, 0] < slx or lower[q, 1] > suy or upper[q, 1] < sly:
                    continue
                bq = shape_body[q]
                oq = shape_offset[q]
                vq = verts[oq:oq + shape_count[q]]
                qx, qy, qc, qs = body_origin(com, angle, local_center, bq)
                t = 0.0
                first = True
                hit = False
                for it in range(TOI_MAX_ITERATIONS):
                    cx = com0[b, 0] + t * dx
                    cy = com0[b, 1] + t * dy
                    th = angle0[b] + t * dth
                    c = math.cos(th)
                    sn = math.sin(th)
                    ox = cx - (c * local_center[b, 0] - sn * local_center[b, 1])
                    oy = cy - (sn * local_center[b, 0] + c * local_center[b, 1])
                    tx, ty, tc, ts = relative_transform(ox, oy, c, sn, qx, qy, qc, qs)
                    d = shape_distance(vs, shape_radius[s], vq, shape_radius[q], tx, ty, tc, ts)[0]
                    if first:
                        first = False
                        if d < LINEAR_SLOP:
                            break          # already touching: the contact solver owns this pair
                    if d <= TOI_TARGET:
                        hit = True
                        break
                    t += (d - TOI_TARGET) / bound
                    if t >= t_min:
                        break
                if hit and t < t_min:
                    t_min = t
        if t_min < 1.0:
            com[b, 0] = com0[b, 0] + t_min * dx
            com[b, 1] = com0[b, 1] + t_min * dy
            angle[b] = angle0[b] + t_min * dth
