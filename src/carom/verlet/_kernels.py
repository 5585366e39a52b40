"""Compiled kernels of the Verlet world: the whole step is one call to :func:`step_kernel`.

Storage (structure of arrays, owned by :class:`carom.verlet.World`):

particles  ``pos[P,2]``, ``prev[P,2]`` (position one step ago: velocity is implicit, ``(pos - prev) / dt``),
           ``inv_mass[P]`` (0 for the vertices of static bodies), ``pinned[P]`` (held at ``pin_pos``),
           ``vel0[P,2]`` scratch (the per-step velocity right after integration, used by restitution and
           friction).
edges      ``e_i[E]``, ``e_j[E]`` particle indices, ``rest[E]``, ``stiff[E]`` in (0, 1] (fraction of the length
           error removed per *step*), ``brk[E]`` break length (``inf`` = never), ``alive[E]``.
bodies     ``b_v0[B]``, ``b_n[B]``: a contiguous run of vertices in counter-clockwise outline order; the
           boundary edge k joins vertex k and vertex k+1 (mod n) and is edge ``b_e0 + k``; ``b_static``,
           ``b_fric``, ``b_rest``; scratch ``b_box[B,4]`` (AABB) and ``order[B]`` (sort-and-sweep order,
           kept between steps so the insertion sort is nearly linear).

Effective inverse mass ``w`` of a particle is 0 when it is pinned or static; nothing moves it then.
"""
import math

import numpy as np

from .._jit import njit, entry_njit


@njit
def particle_w(inv_mass, pinned, i):
    if pinned[i]:
        return 0.0
    return inv_mass[i]


@njit
def response_coefficients(t, w_v, w_1, w_2, equal_split):
    """Coefficients of the vertex/edge response for a contact at parameter ``t`` on edge (E1, E2).

    With ``D`` the depth vector (pointing from the edge's body towards the vertex's body) the moves are
    ``V += c_v D``, ``E1 -= c_1 D``, ``E2 -= c_2 D``.  The edge point ``C = (1-t) E1 + t E2`` moves by
    ``-(1 - c_v) D``, so ``V - C`` gains exactly ``D``: the whole overlap is removed.

    The edge's share is spread over its ends as the minimum-norm (inverse-mass weighted) solution:
    ``dE1 = (1-t) w1 / wE * dC`` and ``dE2 = t w2 / wE * dC`` with the edge point's effective inverse mass
    ``wE = (1-t)^2 w1 + t^2 w2``.  For equal end masses this is ``(1-t) * lambda`` and ``t * lambda`` with
    ``lambda = 1 / (t^2 + (1-t)^2)``, the form in NOTES.md.

    ``equal_split`` True: the vertex and the edge point each take half (NOTES.md exactly; the end masses
    still decide how the edge point's half is shared).  False: the split is by inverse mass,
    ``c_v = wV / (wV + wE)``, which is the only split that conserves momentum
    (``mV dV + m1 dE1 + m2 dE2 = 0``); it equals one half whenever ``wV = wE``.
    Returns (c_v, c_1, c_2); all zero when nothing can move.
    """
    w_e = (1.0 - t) * (1.0 - t) * w_1 + t * t * w_2
    if equal_split:
        if w_e <= 0.0:
            return 0.5, 0.0, 0.0
        return 0.5, 0.5 * (1.0 - t) * w_1 / w_e, 0.5 * t * w_2 / w_e
    total = w_v + w_e
    if total <= 0.0:
        return 0.0, 0.0, 0.0
    return w_v / total, (1.0 - t) * w_1 / total, t * w_2 / total


@njit
def edge_parameter(vx, vy, ax, ay, bx, by):
    """t of the point of segment AB closest to V: ((V - A)·(B - A)) / |B - A|^2, clamped to [0, 1]."""
    ex = bx - ax
    ey = by - ay
    ll = ex * ex + ey * ey
    if ll <= 0.0:
        return 0.0
    t = ((vx - ax) * ex + (vy - ay) * ey) / ll
    if t < 0.0:
        return 0.0
    if t > 1.0:
        return 1.0
    return t


@njit
def integrate(pos, prev, vel0, inv_mass, pinned, pin_pos, n_p, gx, gy, dt, ratio, keep):
    """Time-corrected position Verlet: x' = x + (x - x_prev) * ratio * keep + g dt^2.

    ``ratio = dt / dt_prev`` keeps the velocity right when dt changes, ``keep`` is the damping factor.
    Pinned particles are put on their pin, static ones (inverse mass 0) stay.
    """
    g2x = gx * dt * dt
    g2y = gy * dt * dt
    for i in range(n_p):
        if pinned[i]:
            pos[i, 0] = pin_pos[i, 0]
            pos[i, 1] = pin_pos[i, 1]
            prev[i, 0] = pin_pos[i, 0]
            prev[i, 1] = pin_pos[i, 1]
            vel0[i, 0] = 0.0
            vel0[i, 1] = 0.0
            continue
        if inv_mass[i] == 0.0:
            prev[i, 0] = pos[i, 0]
            prev[i, 1] = pos[i, 1]
            vel0[i, 0] = 0.0
            vel0[i, 1] = 0.0
            continue
        vx = (pos[i, 0] - prev[i, 0]) * ratio * keep + g2x
        vy = (pos[i, 1] - prev[i, 1]) * ratio * keep + g2y
        prev[i, 0] = pos[i, 0]
        prev[i, 1] = pos[i, 1]
        pos[i, 0] += vx
        pos[i, 1] += vy
        vel0[i, 0] = vx
        vel0[i, 1] = vy


@njit
def solve_edges(pos, inv_mass, pinned, e_i, e_j, rest, k_iter, brk, alive, n_e):
    """One Gauss-Seidel sweep of the stick constraints |x_j - x_i| = rest.

    The length error is removed (times the per-iteration stiffness) by moving the ends along the stick,
    split by inverse mass so the sweep conserves momentum.  An edge longer than its break length dies.
    """
    for e in range(n_e):
        if not alive[e]:
            continue
        i = e_i[e]
        j = e_j[e]
        dx = pos[j, 0] - pos[i, 0]
        dy = pos[j, 1] - pos[i, 1]
        length = math.sqrt(dx * dx + dy * dy)
        if length > brk[e]:
            alive[e] = False
            continue
        wi = particle_w(inv_mass, pinned, i)
        wj = particle_w(inv_mass, pinned, j)
        w = wi + wj
        if w <= 0.0 or length <= 0.0:
            continue
        s = k_iter[e] * (length - rest[e]) / (length * w)
        pos[i, 0] += wi * s * dx
        pos[i, 1] += wi * s * dy
        pos[j, 0] -= wj * s * dx
        pos[j, 1] -= wj * s * dy


@njit
def update_boxes(pos, b_v0, b_n, b_box, n_b, margin):
    for b in range(n_b):
        v0 = b_v0[b]
        x0 = pos[v0, 0]
        x1 = x0
        y0 = pos[v0, 1]
        y1 = y0
        for k in range(1, b_n[b]):
            x = pos[v0 + k, 0]
            y = pos[v0 + k, 1]
            x0 = min(x0, x)
            x1 = max(x1, x)
            y0 = min(y0, y)
            y1 = max(y1, y)
        b_box[b, 0] = x0 - margin
        b_box[b, 1] = y0 - margin
        b_box[b, 2] = x1 + margin
        b_box[b, 3] = y1 + margin


@njit
def sort_order(order, b_box, n_b):
    """Insertion sort of body indices by AABB min x (nearly sorted from the last step: ~linear)."""
    for a in range(1, n_b):
        cur = order[a]
        key = b_box[cur, 0]
        k = a - 1
        while k >= 0 and (b_box[order[k], 0] > key or (b_box[order[k], 0] == key and order[k] > cur)):
            order[k + 1] = order[k]
            k -= 1
        order[k + 1] = cur


@njit
def max_separation(pts, v0a, na, v0b, nb):
    """Largest signed distance of body B from the outward edge lines of body A (SAT over A's edges).

    For the CCW outline the outward normal of edge (a, a') is (dy, -dx) / |d|; the separation along it is
    min over B's vertices of n·(v - a).  Returns (separation, edge index k in A)."""
    best = -np.inf
    best_k = -1
    for k in range(na):
        ia = v0a + k
        ib = v0a + (k + 1) % na
        ax = pts[ia, 0]
        ay = pts[ia, 1]
        ex = pts[ib, 0] - ax
        ey = pts[ib, 1] - ay
        ll = math.sqrt(ex * ex + ey * ey)
        if ll <= 0.0:
            continue
        nx = ey / ll
        ny = -ex / ll
        s = np.inf
        for m in range(nb):
            j = v0b + m
            d = nx * (pts[j, 0] - ax) + ny * (pts[j, 1] - ay)
            if d < s:
                s = d
        if s > best:
            best = s
            best_k = k
    return best, best_k


@njit
def deepest_vertex(pos, v0e, ne, k, v0v, nv):
    """Deepest vertex of body V behind edge k of body E: prefers vertices whose projection falls within
    the edge (0 <= t <= 1); returns (particle index, signed distance, whether it is within the span)."""
    i1 = v0e + k
    i2 = v0e + (k + 1) % ne
    ax = pos[i1, 0]
    ay = pos[i1, 1]
    ex = pos[i2, 0] - ax
    ey = pos[i2, 1] - ay
    ll2 = ex * ex + ey * ey
    ll = math.sqrt(ll2)
    best_in = -1
    d_in = np.inf
    best_any = -1
    d_any = np.inf
    if ll <= 0.0:
        return v0v, np.inf, False
    nx = ey / ll
    ny = -ex / ll
    for m in range(nv):
        j = v0v + m
        rx = pos[j, 0] - ax
        ry = pos[j, 1] - ay
        d = nx * rx + ny * ry
        if d < d_any:
            d_any = d
            best_any = j
        t = (rx * ex + ry * ey) / ll2
        if 0.0 <= t <= 1.0 and d < d_in:
            d_in = d
            best_in = j
    if best_in >= 0 and (d_in < 0.0 or d_any >= 0.0):
        return best_in, d_in, True
    return best_any, d_any, False


@njit
def move_by_response(arr, iv, i1, i2, t, w_v, w_1, w_2, dx, dy, sign):
    """Apply the mass-split response to ``arr`` (positions, or ``prev`` with sign -1 for velocity edits)."""
    cv, c1, c2 = response_coefficients(t, w_v, w_1, w_2, False)
    arr[iv, 0] += sign * cv * dx
    arr[iv, 1] += sign * cv * dy
    arr[i1, 0] -= sign * c1 * dx
    arr[i1, 1] -= sign * c1 * dy
    arr[i2, 0] -= sign * c2 * dx
    arr[i2, 1] -= sign * c2 * dy


@njit
def collide_pair(pos, prev, vel0, inv_mass, pinned, b_v0, b_n, b_fric, b_rest, a, b,
                 slop, last, dt, restitution_threshold):
    """SAT between bodies a and b over their boundary edges, then the vertex/edge response.

    Axis choice: if the bodies were apart at the start of the step (their ``prev`` outlines separated),
    the axis is the one that separated them then, so a fast body is pushed back the way it came instead
    of through; otherwise the axis of least penetration now (the seed's rule).  The deepest vertex of
    the other body is pushed out of the collision edge by the exact response.  In the last iteration
    friction and restitution edit the previous positions of every vertex touching the edge.
    Returns 1 if the bodies touch.
    """
    sa, ka = max_separation(pos, b_v0[a], b_n[a], b_v0[b], b_n[b])
    if sa > slop:
        return 0
    sb, kb = max_separation(pos, b_v0[b], b_n[b], b_v0[a], b_n[a])
    if sb > slop:
        return 0
    if ka < 0 or kb < 0:
        return 0
    pa, pka = max_separation(prev, b_v0[a], b_n[a], b_v0[b], b_n[b])
    pb, pkb = max_separation(prev, b_v0[b], b_n[b], b_v0[a], b_n[a])
    if max(pa, pb) > 0.0 and pka >= 0 and pkb >= 0:
        score_a = pa
        score_b = pb
        ka = pka
        kb = pkb
    else:
        score_a = sa
        score_b = sb
    # near ties (parallel faces) go to the edge whose deepest vertex lies within its span: a vertex
    # far beyond the edge's ends would turn a tiny tilt of the edge into a large depth
    if abs(score_a - score_b) <= 0.1 * slop:
        iva, da, in_a = deepest_vertex(pos, b_v0[a], b_n[a], ka, b_v0[b], b_n[b])
        ivb, db, in_b = deepest_vertex(pos, b_v0[b], b_n[b], kb, b_v0[a], b_n[a])
        if in_a != in_b:
            use_a = in_a
        else:
            use_a = score_a >= score_b
    else:
        use_a = score_a > score_b
    if use_a:
        eb = a
        ke = ka
        vb = b
    else:
        eb = b
        ke = kb
        vb = a
    n_e = b_n[eb]
    i1 = b_v0[eb] + ke
    i2 = b_v0[eb] + (ke + 1) % n_e
    ax = pos[i1, 0]
    ay = pos[i1, 1]
    ex = pos[i2, 0] - ax
    ey = pos[i2, 1] - ay
    ll = math.sqrt(ex * ex + ey * ey)
    if ll <= 0.0:
        return 0
    nx = ey / ll
    ny = -ex / ll
    iv, dmin, inside = deepest_vertex(pos, b_v0[eb], n_e, ke, b_v0[vb], b_n[vb])
    if dmin > slop:
        return 0
    w1 = particle_w(inv_mass, pinned, i1)
    w2 = particle_w(inv_mass, pinned, i2)
    if dmin < 0.0:
        # the deepest vertex first (the seed's contact), then every other vertex still behind the edge
        # line, each with its own exact response: separation along N needs all of them out
        for m in range(-1, b_n[vb]):
            j = iv if m < 0 else b_v0[vb] + m
            if m >= 0 and j == iv:
                continue
            ex = pos[i2, 0] - pos[i1, 0]
            ey = pos[i2, 1] - pos[i1, 1]
            ll = math.sqrt(ex * ex + ey * ey)
            if ll <= 0.0:
                break
            nx = ey / ll
            ny = -ex / ll
            d = nx * (pos[j, 0] - pos[i1, 0]) + ny * (pos[j, 1] - pos[i1, 1])
            if d >= 0.0:
                continue
            if m >= 0:
                traw = ((pos[j, 0] - pos[i1, 0]) * ex + (pos[j, 1] - pos[i1, 1]) * ey) / (ll * ll)
                if traw < 0.0 or traw > 1.0:
                    continue
            t = edge_parameter(pos[j, 0], pos[j, 1], pos[i1, 0], pos[i1, 1], pos[i2, 0], pos[i2, 1])
            wv = particle_w(inv_mass, pinned, j)
            move_by_response(pos, j, i1, i2, t, wv, w1, w2, -d * nx, -d * ny, 1.0)
    if not last:
        return 1
    # Velocity edits on the previous positions, in the last iteration only.  The relative velocity
    # (per step) of the vertex body against the edge body is averaged over the vertices touching the
    # edge; restitution raises its normal part to -e times the approach speed after integration (0 below
    # the threshold), Coulomb friction removes its tangential part up to mu times that approach speed.
    # The change is shared by the two bodies as a whole, split by their inverse masses: a vertex alone
    # weighs a fraction of its rigid body, so editing single vertices would give a fraction of the bounce.
    ax = pos[i1, 0]
    ay = pos[i1, 1]
    ex = pos[i2, 0] - ax
    ey = pos[i2, 1] - ay
    ll2 = ex * ex + ey * ey
    if ll2 <= 0.0:
        return 1
    count = 0
    rvx = 0.0
    rvy = 0.0
    r0x = 0.0
    r0y = 0.0
    for m in range(b_n[vb]):
        j = b_v0[vb] + m
        d = nx * (pos[j, 0] - ax) + ny * (pos[j, 1] - ay)
        if d > slop:
            continue
        traw = ((pos[j, 0] - ax) * ex + (pos[j, 1] - ay) * ey) / ll2
        if j != iv and (traw < 0.0 or traw > 1.0):
            continue
        t = min(1.0, max(0.0, traw))
        rvx += (pos[j, 0] - prev[j, 0]) - (1.0 - t) * (pos[i1, 0] - prev[i1, 0]) - t * (pos[i2, 0] - prev[i2, 0])
        rvy += (pos[j, 1] - prev[j, 1]) - (1.0 - t) * (pos[i1, 1] - prev[i1, 1]) - t * (pos[i2, 1] - prev[i2, 1])
        r0x += vel0[j, 0] - (1.0 - t) * vel0[i1, 0] - t * vel0[i2, 0]
        r0y += vel0[j, 1] - (1.0 - t) * vel0[i1, 1] - t * vel0[i2, 1]
        count += 1
    if count == 0:
        return 1
    rvx /= count
    rvy /= count
    r0x /= count
    r0y /= count
    w_body_v = body_free_inv_mass(inv_mass, pinned, b_v0[vb], b_n[vb])
    w_body_e = body_free_inv_mass(inv_mass, pinned, b_v0[eb], b_n[eb])
    w_total = w_body_v + w_body_e
    if w_total <= 0.0:
        return 1
    mu = math.sqrt(b_fric[a] * b_fric[b])
    e_rest = max(b_rest[a], b_rest[b])
    vn = rvx * nx + rvy * ny
    vn0 = r0x * nx + r0y * ny
    target = 0.0
    if -vn0 > restitution_threshold * dt:
        target = -e_rest * vn0
    dn = max(0.0, target - vn)
    vtx = rvx - vn * nx
    vty = rvy - vn * ny
    vt = math.sqrt(vtx * vtx + vty * vty)
    dvx = dn * nx
    dvy = dn * ny
    if vt > 0.0:
        jt = min(vt, mu * max(0.0, -vn0))
        dvx -= jt * vtx / vt
        dvy -= jt * vty / vt
    sv = w_body_v / w_total
    se = w_body_e / w_total
    shift_free(prev, inv_mass, pinned, b_v0[vb], b_n[vb], -sv * dvx, -sv * dvy)
    shift_free(prev, inv_mass, pinned, b_v0[eb], b_n[eb], se * dvx, se * dvy)
    return 1


@njit
def body_free_inv_mass(inv_mass, pinned, v0, n):
    """1 / (mass of the body's free vertices), 0 when none is free (static or fully pinned)."""
    m = 0.0
    for k in range(n):
        w = particle_w(inv_mass, pinned, v0 + k)
        if w > 0.0:
            m += 1.0 / w
    if m <= 0.0:
        return 0.0
    return 1.0 / m


@njit
def shift_free(arr, inv_mass, pinned, v0, n, dx, dy):
    for k in range(n):
        if particle_w(inv_mass, pinned, v0 + k) > 0.0:
            arr[v0 + k, 0] += dx
            arr[v0 + k, 1] += dy


@njit
def collide_all(pos, prev, vel0, inv_mass, pinned, b_v0, b_n, b_static, b_fric, b_rest, b_box,
                order, n_b, slop, last, dt, restitution_threshold):
    """Sort-and-sweep on x over the body AABBs, then SAT and response for every overlapping pair."""
    sort_order(order, b_box, n_b)
    contacts = 0
    for oa in range(n_b):
        a = order[oa]
        xmax = b_box[a, 2]
        for ob in range(oa + 1, n_b):
            b = order[ob]
            if b_box[b, 0] > xmax:
                break
            if b_static[a] and b_static[b]:
                continue
            if b_box[b, 1] > b_box[a, 3] or b_box[a, 1] > b_box[b, 3]:
                continue
            lo = min(a, b)
            hi = max(a, b)
            contacts += collide_pair(pos, prev, vel0, inv_mass, pinned, b_v0, b_n, b_fric, b_rest,
                                     lo, hi, slop, last, dt, restitution_threshold)
    return contacts


@entry_njit
def step_kernel(pos, prev, vel0, inv_mass, pinned, pin_pos, n_p,
                e_i, e_j, rest, stiff, brk, alive, k_iter, n_e,
                b_v0, b_n, b_static, b_fric, b_rest, b_box, order, n_b,
                gx, gy, dt, dt_prev, damping, iterations, slop, restitution_threshold, shape_sweeps):
    """One whole step: integrate, then ``iterations`` x (edges, AABBs, broad phase, SAT, response).

    Edge stiffness k is the fraction of the length error removed per step whatever the iteration count:
    the per-iteration factor is 1 - (1 - k)^(1 / iterations).  Returns the contact count of the last
    iteration.
    """
    keep = max(0.0, 1.0 - damping * dt)
    integrate(pos, prev, vel0, inv_mass, pinned, pin_pos, n_p, gx, gy, dt, dt / dt_prev, keep)
    for e in range(n_e):
        if stiff[e] >= 1.0:
            k_iter[e] = 1.0
        else:
            k_iter[e] = 1.0 - (1.0 - stiff[e]) ** (1.0 / iterations)
    contacts = 0
    for it in range(iterations):
        solve_edges(pos, inv_mass, pinned, e_i, e_j, rest, k_iter, brk, alive, n_e)
        if n_b > 1:
            update_boxes(pos, b_v0, b_n, b_box, n_b, slop)
            contacts = collide_all(pos, prev, vel0, inv_mass, pinned, b_v0, b_n, b_static, b_fric,
                                   b_rest, b_box, order, n_b, slop, it == iterations - 1, dt,
                                   restitution_threshold)
    # shape recovery: collisions act last in every sweep, so after a hard impact the bodies leave the
    # loop bent; a few stick-only sweeps restore their shape (at rest they change nothing measurable)
    if n_b > 1:
        for it in range(shape_sweeps):
            solve_edges(pos, inv_mass, pinned, e_i, e_j, rest, k_iter, brk, alive, n_e)
    return contacts


@njit
def edge_strain(pos, e_i, e_j, rest, alive, n_e, out):
    """|length - rest| / rest of every edge (0 for dead edges)."""
    for e in range(n_e):
        if not alive[e]:
            out[e] = 0.0
            continue
        dx = pos[e_j[e], 0] - pos[e_i[e], 0]
        dy = pos[e_j[e], 1] - pos[e_i[e], 1]
        out[e] = abs(math.sqrt(dx * dx + dy * dy) - rest[e]) / rest[e]
