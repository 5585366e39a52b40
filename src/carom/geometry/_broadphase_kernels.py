"""Compiled kernels of the broad phases (see :mod:`carom.geometry.broadphase` for the signatures and the
array layout). Everything here is a plain ``njit`` function over NumPy arrays and scalars, so a compiled
world step can call it directly; nothing recurses (trees are walked with explicit stacks).

Shared proxy storage (``n`` = high-water mark of ids ever used):

* ``lower``, ``upper`` — ``float64 (cap, 2)``: the real box of every proxy (closed intervals).
* ``flags`` — ``int8 (cap,)``: ``FREE`` (0), ``MOVING`` (1) or ``STATIC`` (2).

A pair is reported once as ``(i, j)``, ``i < j``, when the real boxes overlap with touching counting and
not both proxies are static. Pairs are collected as the single integer ``i * n + j`` (``n`` > every id),
so sorting the integers sorts the rows lexicographically.
"""
from collections import namedtuple

import numpy as np

from numba import prange

from .._jit import njit, pnjit, inline_njit, borrowed

FREE = 0
MOVING = 1
STATIC = 2

#: SweepAndPrune keeps its axis until the other axis' variance of box centres is this many times larger,
#: so a scene whose spread is about equal along x and y does not re-sort from scratch every frame.
SAP_AXIS_HYSTERESIS = 1.25

#: Insertion sort gives up (and a merge sort takes over) after this many shifts per element: it is the
#: right tool for an almost sorted list, the wrong one after a burst of inserts or an axis change.
SAP_SHIFT_BUDGET = 8

#: Cells of the uniform grid are hashed into a table at most this full (open addressing, linear probing).
_GRID_HASH_LOAD = 0.5


# --------------------------------------------------------------------------------------------------------
# shared helpers
# --------------------------------------------------------------------------------------------------------

@njit
def overlap(lower, upper, i, j):
    """Closed overlap of the real boxes of proxies i and j (touching counts)."""
    return (lower[j, 0] <= upper[i, 0] and lower[i, 0] <= upper[j, 0]
            and lower[j, 1] <= upper[i, 1] and lower[i, 1] <= upper[j, 1])


@njit
def ray_box_fraction(ox, oy, dx, dy, lx, ly, ux, uy):
    """Entry fraction ``t`` in [0, 1] of the segment ``o + t d`` into the closed box, or -1 for a miss.

    Slab test: on each axis the segment is inside the slab for ``t`` between ``(l - o)/d`` and
    ``(u - o)/d``; the box is crossed when the intersection of both intervals and [0, 1] is non-empty.
    An axis with ``d = 0`` is all-or-nothing. Both quotients are monotonic in ``l`` and ``u`` under
    rounding, so a ray that hits a box also hits every box containing it (the tree relies on this).
    """
    tmin, tmax = _slab(ox, dx, lx, ux, 0.0, 1.0)
    if tmin > tmax:
        return -1.0
    tmin, tmax = _slab(oy, dy, ly, uy, tmin, tmax)
    if tmin > tmax:
        return -1.0
    return tmin


@njit
def _slab(o, d, lo, hi, tmin, tmax):
    """Clip [tmin, tmax] to the part of the segment o + t·d inside the slab lo ≤ x ≤ hi (empty: tmin > tmax)."""
    if d == 0.0:
        if o < lo or o > hi:
            return 1.0, 0.0
        return tmin, tmax
    t1 = (lo - o) / d
    t2 = (hi - o) / d
    if t1 > t2:
        t1, t2 = t2, t1
    return max(tmin, t1), min(tmax, t2)


@njit
def _push(buf, k, value):
    """Store value at buf[k], doubling buf when full; returns the (possibly new) buffer."""
    if k >= buf.shape[0]:
        nb = np.empty(max(64, 2 * buf.shape[0]), buf.dtype)
        for a in range(k):         # a loop, not a slice assignment (which compiles a broadcasting kernel)
            nb[a] = buf[a]
        buf = nb
    buf[k] = value
    return buf


@njit
def finish_pairs(keys, k, stride):
    """Sort the first k pair keys ``i * stride + j`` and unpack them into a (k, 2) int64 array."""
    return unpack_keys(np.sort(keys[:k]), stride)


@njit
def unpack_keys(keys, stride):
    """Pair keys ``i * stride + j`` as a (n, 2) int64 array of rows (i, j), in the same order (the tree's keys
    ``i << 32 | j`` have stride ``KEY_STRIDE``)."""
    out = np.empty((keys.shape[0], 2), np.int64)
    for r in range(keys.shape[0]):
        out[r, 0] = keys[r] // stride
        out[r, 1] = keys[r] % stride
    return out


@njit
def order_by_key_then_id(ts, ids, k):
    """The positions 0..k-1 ordered by key ``ts`` (a ray's fractions, a sweep's lower bounds), equal keys by
    ``ids`` (a stable merge sort, bottom up, on the positions).

    Written out rather than two stable ``np.argsort`` passes (by id, then by key): Numba compiles its merge
    sort once per dtype and per caller, about a second of cold compile each."""
    order = np.arange(k)
    spare = np.empty(k, np.int64)
    width = 1
    while width < k:
        lo = 0
        while lo < k:
            mid = min(lo + width, k)
            hi = min(lo + 2 * width, k)
            a = lo
            b = mid
            for o in range(lo, hi):
                if b >= hi:
                    take_b = False
                elif a >= mid:
                    take_b = True
                else:
                    ia = order[a]
                    ib = order[b]
                    take_b = ts[ib] < ts[ia] or (ts[ib] == ts[ia] and ids[ib] < ids[ia])
                if take_b:
                    spare[o] = order[b]
                    b += 1
                else:
                    spare[o] = order[a]
                    a += 1
            lo = hi
        order, spare = spare, order
        width *= 2
    return order


@njit
def order_hits(ids, ts, k):
    """Ids of ray hits ordered by entry fraction, equal fractions by id."""
    return ids[order_by_key_then_id(ts, ids, k)]


@njit
def set_boxes(lower, upper, ids, lowers, uppers):
    """Bulk update of real boxes (BruteForce, SweepAndPrune and UniformGrid need nothing else)."""
    for k in range(ids.shape[0]):
        p = ids[k]
        lower[p, 0] = lowers[k, 0]
        lower[p, 1] = lowers[k, 1]
        upper[p, 0] = uppers[k, 0]
        upper[p, 1] = uppers[k, 1]


# --------------------------------------------------------------------------------------------------------
# brute force: the oracle, and the linear-scan query / ray cast other structures may reuse
# --------------------------------------------------------------------------------------------------------

@njit
def brute_pairs(lower, upper, flags, n):
    stride = max(n, 1)
    buf = np.empty(64, np.int64)
    k = np.int64(0)
    for i in range(n):
        if flags[i] == FREE:
            continue
        for j in range(i + 1, n):
            if flags[j] == FREE or (flags[i] == STATIC and flags[j] == STATIC):
                continue
            if overlap(lower, upper, i, j):
                buf = _push(buf, k, i * stride + j)
                k += 1
    return finish_pairs(buf, k, stride)


@njit
def brute_query(lower, upper, flags, n, qlx, qly, qux, quy):
    out = np.empty(n, np.int64)
    k = np.int64(0)
    for i in range(n):
        if flags[i] != FREE and lower[i, 0] <= qux and qlx <= upper[i, 0] \
                and lower[i, 1] <= quy and qly <= upper[i, 1]:
            out[k] = i
            k += 1
    return out[:k].copy()


@njit
def brute_raycast(lower, upper, flags, n, ox, oy, dx, dy):
    ids = np.empty(n, np.int64)
    ts = np.empty(n, np.float64)
    k = np.int64(0)
    for i in range(n):
        if flags[i] == FREE:
            continue
        t = ray_box_fraction(ox, oy, dx, dy, lower[i, 0], lower[i, 1], upper[i, 0], upper[i, 1])
        if t >= 0.0:
            ids[k] = i
            ts[k] = t
            k += 1
    return order_hits(ids, ts, k)


# --------------------------------------------------------------------------------------------------------
# sweep and prune
# --------------------------------------------------------------------------------------------------------

@njit
def sap_sort(lower, upper, order, meta):
    """Choose the sweep axis and sort ``order[:meta[0]]`` by the lower bound on it.

    ``meta = [count, axis]``. The axis is the one with the larger variance of box centres (with
    hysteresis); when it is unchanged the order of the last call is repaired by insertion sort, which
    costs O(n + swaps) for coherent motion, with a merge sort as fallback past the shift budget.
    """
    m = meta[0]
    axis = meta[1]
    if m == 0:
        return
    sx = 0.0
    sy = 0.0
    for a in range(m):
        p = order[a]
        sx += lower[p, 0] + upper[p, 0]
        sy += lower[p, 1] + upper[p, 1]
    mx = 0.5 * sx / m
    my = 0.5 * sy / m
    vx = 0.0
    vy = 0.0
    for a in range(m):
        p = order[a]
        cx = 0.5 * (lower[p, 0] + upper[p, 0]) - mx
        cy = 0.5 * (lower[p, 1] + upper[p, 1]) - my
        vx += cx * cx
        vy += cy * cy
    var_axis = vx if axis == 0 else vy
    var_other = vy if axis == 0 else vx
    full = False
    if var_other > SAP_AXIS_HYSTERESIS * var_axis:
        axis = 1 - axis
        meta[1] = axis
        full = True
    if not full:
        shifts = 0
        budget = SAP_SHIFT_BUDGET * m + 64
        for a in range(1, m):
            p = order[a]
            key = lower[p, axis]
            b = a - 1
            while b >= 0 and lower[order[b], axis] > key:
                order[b + 1] = order[b]
                b -= 1
                shifts += 1
            order[b + 1] = p
            if shifts > budget:
                full = True
                break
    if full:
        keys = np.empty(m, np.float64)
        for a in range(m):
            keys[a] = lower[order[a], axis]
        # (ties by id: any order of equal keys sweeps the same pairs)
        perm = order_by_key_then_id(keys, order, np.int64(m))
        sorted_ids = order[:m][perm]
        order[:m] = sorted_ids


@njit
def sap_pairs(lower, upper, flags, n, order, meta):
    """Sort (see :func:`sap_sort`) then sweep: each proxy meets only the proxies that start before it ends."""
    sap_sort(lower, upper, order, meta)
    m = meta[0]
    axis = meta[1]
    o = 1 - axis
    stride = max(n, 1)
    buf = np.empty(64, np.int64)
    k = np.int64(0)
    for a in range(m):
        i = order[a]
        end = upper[i, axis]
        si = flags[i] == STATIC
        for b in range(a + 1, m):
            j = order[b]
            if lower[j, axis] > end:
                break
            if si and flags[j] == STATIC:
                continue
            if lower[j, o] <= upper[i, o] and lower[i, o] <= upper[j, o]:
                if i < j:
                    buf = _push(buf, k, i * stride + j)
                else:
                    buf = _push(buf, k, j * stride + i)
                k += 1
    return finish_pairs(buf, k, stride)


# --------------------------------------------------------------------------------------------------------
# dynamic AABB tree
# --------------------------------------------------------------------------------------------------------

#: Node pool of one tree. ``lo``/``hi`` (cap, 2) fat boxes; ``parent``, ``child1``, ``child2`` node
#: indices (-1 for none; a free node's ``parent`` links the free list); ``height`` (leaf 0, free -1);
#: ``proxy`` the proxy id of a leaf (-1 otherwise); ``meta = [root, free_head, leaf_count, quality, stale]``:
#: quality as in :func:`tree_refit_or_rebuild`, stale 1 while the inner nodes' boxes wait for a refit
#: (:func:`tree_fit`).
Tree = namedtuple("Tree", ["lo", "hi", "parent", "child1", "child2", "height", "proxy", "meta"])


def tree_new(capacity=16):
    t = Tree(np.zeros((capacity, 2)), np.zeros((capacity, 2)), np.empty(capacity, np.int64),
             np.full(capacity, -1, np.int64), np.full(capacity, -1, np.int64),
             np.full(capacity, -1, np.int64), np.full(capacity, -1, np.int64),
             np.array([-1, 0, 0, 0, 0], np.int64))
    t.parent[:-1] = np.arange(1, capacity)
    t.parent[-1] = -1
    return t


def tree_grow(t, capacity):
    """A copy of tree t with a node pool of the given capacity; the new nodes go on the free list."""
    old = t.lo.shape[0]
    if capacity <= old:
        return t
    g = Tree(np.zeros((capacity, 2)), np.zeros((capacity, 2)), np.empty(capacity, np.int64),
             np.full(capacity, -1, np.int64), np.full(capacity, -1, np.int64),
             np.full(capacity, -1, np.int64), np.full(capacity, -1, np.int64), t.meta.copy())
    for a, b in zip(t, g[:-1]):
        b[:old] = a
    g.parent[old:-1] = np.arange(old + 1, capacity)
    g.parent[-1] = t.meta[1]
    g.meta[1] = old
    return g


@njit
def _tree_alloc(t):
    node = t.meta[1]
    if node < 0:
        raise RuntimeError("dynamic tree node pool exhausted (grow it before inserting)")
    t.meta[1] = t.parent[node]
    t.parent[node] = -1
    t.child1[node] = -1
    t.child2[node] = -1
    t.height[node] = 0
    t.proxy[node] = -1
    return node


@njit
def _tree_free(t, node):
    t.parent[node] = t.meta[1]
    t.child1[node] = -1
    t.child2[node] = -1
    t.height[node] = -1
    t.proxy[node] = -1
    t.meta[1] = node


@inline_njit
def _fit(t, node):
    """Box and height of an internal node from its children (inlined: a call per node with the tree's
    arrays costs more than the work)."""
    c1 = t.child1[node]
    c2 = t.child2[node]
    t.lo[node, 0] = min(t.lo[c1, 0], t.lo[c2, 0])
    t.lo[node, 1] = min(t.lo[c1, 1], t.lo[c2, 1])
    t.hi[node, 0] = max(t.hi[c1, 0], t.hi[c2, 0])
    t.hi[node, 1] = max(t.hi[c1, 1], t.hi[c2, 1])
    t.height[node] = 1 + max(t.height[c1], t.height[c2])


@njit
def _replace_child(t, parent, old, new):
    if parent == -1:
        t.meta[0] = new
    elif t.child1[parent] == old:
        t.child1[parent] = new
    else:
        t.child2[parent] = new


@njit
def _tree_balance(t, a):
    """One AVL-style rotation at node a if its subtrees' heights differ by more than one.

    The taller child c (children f, g) takes a's place; a keeps its other child and adopts the shorter
    of f and g, c keeps the taller one. Boxes and heights of a and c are refitted. Returns the node now
    at a's position.
    """
    if t.child1[a] == -1 or t.height[a] < 2:
        return a
    b = t.child1[a]
    c = t.child2[a]
    balance = t.height[c] - t.height[b]
    if -1 <= balance <= 1:
        return a
    up_is_c = balance > 1
    up = c if up_is_c else b
    f = t.child1[up]
    g = t.child2[up]
    # up replaces a under a's parent; a becomes up's first child
    t.parent[up] = t.parent[a]
    _replace_child(t, t.parent[a], a, up)
    t.parent[a] = up
    t.child1[up] = a
    if t.height[f] > t.height[g]:
        keep, give = f, g
    else:
        keep, give = g, f
    t.child2[up] = keep
    if up_is_c:
        t.child2[a] = give
    else:
        t.child1[a] = give
    t.parent[give] = a
    _fit(t, a)
    _fit(t, up)
    return up


@njit
def _perimeter(lx, ly, ux, uy):
    return 2.0 * ((ux - lx) + (uy - ly))


@njit
def _tree_insert_leaf(t, leaf):
    """Insert a leaf whose box is set: descend by the perimeter (2D surface-area) cost, then refit.

    At node N the choice is: make the leaf N's sibling (cost 2 P(N ∪ L)), or push it into a child C,
    paying P(C ∪ L) (minus P(C) when C is internal, since C's box only grows) plus the growth every
    ancestor suffers, 2 (P(N ∪ L) - P(N)). Descend while a child is cheaper.
    The tree must not be stale (:func:`tree_fit`): its callers create the leaf after a fit, or remove it
    first, which fits the tree.
    """
    t.meta[2] += 1
    root = t.meta[0]
    if root == -1:
        t.meta[0] = leaf
        t.parent[leaf] = -1
        return
    lx = t.lo[leaf, 0]
    ly = t.lo[leaf, 1]
    ux = t.hi[leaf, 0]
    uy = t.hi[leaf, 1]
    index = root
    while t.child1[index] != -1:
        area = _perimeter(t.lo[index, 0], t.lo[index, 1], t.hi[index, 0], t.hi[index, 1])
        combined = _perimeter(min(lx, t.lo[index, 0]), min(ly, t.lo[index, 1]),
                              max(ux, t.hi[index, 0]), max(uy, t.hi[index, 1]))
        cost = 2.0 * combined
        inherit = 2.0 * (combined - area)
        best = -1
        best_cost = 0.0
        for which in range(2):
            c = t.child1[index] if which == 0 else t.child2[index]
            cc = _perimeter(min(lx, t.lo[c, 0]), min(ly, t.lo[c, 1]),
                            max(ux, t.hi[c, 0]), max(uy, t.hi[c, 1])) + inherit
            if t.child1[c] != -1:
                cc -= _perimeter(t.lo[c, 0], t.lo[c, 1], t.hi[c, 0], t.hi[c, 1])
            if best == -1 or cc < best_cost:
                best = c
                best_cost = cc
        if cost < best_cost:
            break
        index = best
    sibling = index
    old_parent = t.parent[sibling]
    new_parent = _tree_alloc(t)
    t.parent[new_parent] = old_parent
    _replace_child(t, old_parent, sibling, new_parent)
    t.child1[new_parent] = sibling
    t.child2[new_parent] = leaf
    t.parent[sibling] = new_parent
    t.parent[leaf] = new_parent
    index = new_parent
    while index != -1:
        _fit(t, index)
        index = _tree_balance(t, index)
        index = t.parent[index]


@njit
def _tree_remove_leaf(t, leaf):
    tree_fit(t)
    t.meta[2] -= 1
    if leaf == t.meta[0]:
        t.meta[0] = -1
        return
    p = t.parent[leaf]
    gp = t.parent[p]
    sibling = t.child1[p] if t.child2[p] == leaf else t.child2[p]
    _replace_child(t, gp, p, sibling)
    t.parent[sibling] = gp
    t.parent[leaf] = -1
    _tree_free(t, p)
    index = gp
    while index != -1:
        _fit(t, index)
        index = _tree_balance(t, index)
        index = t.parent[index]


@njit
def tree_create_leaf(t, proxy, lx, ly, ux, uy, margin):
    """New leaf for a proxy, its box fattened by margin on every side; returns the leaf node. A stale tree is
    fitted before the leaf is allocated (a rebuild takes every allocated leaf for one of the tree's)."""
    tree_fit(t)
    leaf = _tree_alloc(t)
    t.lo[leaf, 0] = lx - margin
    t.lo[leaf, 1] = ly - margin
    t.hi[leaf, 0] = ux + margin
    t.hi[leaf, 1] = uy + margin
    t.proxy[leaf] = proxy
    _tree_insert_leaf(t, leaf)
    return leaf


@njit
def tree_destroy_leaf(t, leaf):
    _tree_remove_leaf(t, leaf)
    _tree_free(t, leaf)


@njit
def _fat_box(lx, ly, ux, uy, dx, dy, margin, multiplier):
    """The fat box of a real box (lx, ly, ux, uy) that moved by (dx, dy): margin on every side, stretched by
    multiplier × displacement in the direction of motion (a proxy moving steadily stays inside it for several
    steps)."""
    flx = lx - margin
    fly = ly - margin
    fux = ux + margin
    fuy = uy + margin
    ddx = multiplier * dx
    ddy = multiplier * dy
    if ddx < 0.0:
        flx += ddx
    else:
        fux += ddx
    if ddy < 0.0:
        fly += ddy
    else:
        fuy += ddy
    return flx, fly, fux, fuy


@njit
def _fat_box_keeps(tlx, tly, tux, tuy, lx, ly, ux, uy, flx, fly, fux, fuy, margin):
    """True when a leaf with fat box (tlx, tly, tux, tuy) may stay: it contains the real box (lx, ly, ux, uy)
    and is not grossly larger (more than 4 margins on some side) than the freshly fattened box (flx, fly,
    fux, fuy) would be."""
    if tlx <= lx and tly <= ly and ux <= tux and uy <= tuy:
        big = 4.0 * margin
        if flx - big <= tlx and fly - big <= tly and tux <= fux + big and tuy <= fuy + big:
            return True
    return False


@njit
def tree_move_leaf(t, leaf, lx, ly, ux, uy, dx, dy, margin, multiplier):
    """Move a leaf to the real box (lx, ly, ux, uy) that moved by (dx, dy); True if the tree changed.

    The fat box is the real box plus margin, stretched by multiplier × displacement in the direction of
    motion (:func:`_fat_box`). Nothing happens while the real box stays inside the leaf's fat box and the
    fat box is not grossly larger (more than 4 margins) than a freshly fattened one would be
    (:func:`_fat_box_keeps`); otherwise the leaf is removed and reinserted with the new fat box.
    """
    flx, fly, fux, fuy = _fat_box(lx, ly, ux, uy, dx, dy, margin, multiplier)
    if _fat_box_keeps(t.lo[leaf, 0], t.lo[leaf, 1], t.hi[leaf, 0], t.hi[leaf, 1], lx, ly, ux, uy,
                      flx, fly, fux, fuy, margin):
        return False
    _tree_remove_leaf(t, leaf)
    t.lo[leaf, 0] = flx
    t.lo[leaf, 1] = fly
    t.hi[leaf, 0] = fux
    t.hi[leaf, 1] = fuy
    _tree_insert_leaf(t, leaf)
    return True


#: When more than this fraction of the live proxies left their fat boxes in one update, the tree holding
#: them is rebuilt from all its leaves (:func:`tree_rebuild`) instead of reinserting them one by one, and
#: the next ``tree_pairs_cached`` finds every pair with one uniform grid (:func:`_pairs_by_grid`) instead
#: of one tree query per moved proxy. Measured (5,000 proxies, one thread): a reinsertion costs about
#: 2 µs and the query and cache merge for a moved proxy 4 to 6 µs more, on top of a pass over the whole
#: cache; the bulk paths cost about 0.2 µs per live proxy (rebuild 0.3 ms, grid 0.5 ms), so they win from
#: about a fiftieth to a thirtieth of the proxies on. At an eighth, the 5,000-circle pile's quieter steps
#: (about 600 movers) took 3.6 ms instead of 1 ms.
SWEEP_FRACTION = 1.0 / 32.0


@njit
def tree_update(moving, static, lower, upper, flags, leaf_of, ids, lowers, uppers, margin, multiplier,
                moved, moved_flag, moved_meta):
    """Bulk move: write the new real boxes and bring each proxy's leaf up to date in its own tree. Proxies
    whose leaf got a new fat box go on the move buffer ``moved[:moved_meta[0]]`` (``moved_flag`` marks them).

    First pass, O(m) and no change to the tree's shape: each proxy's displacement (of its box centre), its
    fresh fat box (:func:`_fat_box`) and whether the leaf must move (:func:`_fat_box_keeps`, the rule of
    :func:`tree_move_leaf`); a leaf that must move gets its new fat box written at once, so a proxy listed
    twice is judged against the box its first entry gave it, as a sequence of moves would be. Then, if at
    most ``SWEEP_FRACTION`` of the live proxies must move, they are removed and reinserted one by one
    (their ancestors' boxes, stale meanwhile, are refitted by the removal, which walks to the root and
    first fits a tree left stale: :func:`tree_fit`). If
    more did, a tree in which more than that fraction of the leaves moved is marked stale: its inner boxes
    are refitted, or the tree rebuilt (:func:`tree_refit_or_rebuild`), by the first reader that needs them
    (:func:`tree_fit`), and the other tree's few movers are reinserted. The move buffer gets the moved
    proxies in the order of ``ids`` either way.

    Why stale: in a busy step (a falling pile, a smash) the pairs come from a grid over the boxes
    (:func:`tree_pairs_cached`), and with few static proxies and few left out of the grid (walls, a
    projectile: ``STALE_SCAN_LIMIT``) nothing reads the moving tree until the crowd calms down, so a refit
    each step (50 µs for 5,000 leaves, and a rebuild of 0.4 ms whenever the refitted tree grew too loose)
    is paid once at the end instead.
    """
    n = flags.shape[0]
    pending = np.empty(ids.shape[0], np.int64)
    seen = np.zeros(n, np.int8)
    mlo, mhi, slo, shi = moving.lo, moving.hi, static.lo, static.hi
    count = 0
    count_static = 0
    for k in range(ids.shape[0]):
        p = ids[k]
        dx = 0.5 * ((lowers[k, 0] + uppers[k, 0]) - (lower[p, 0] + upper[p, 0]))
        dy = 0.5 * ((lowers[k, 1] + uppers[k, 1]) - (lower[p, 1] + upper[p, 1]))
        lx = lowers[k, 0]
        ly = lowers[k, 1]
        ux = uppers[k, 0]
        uy = uppers[k, 1]
        lower[p, 0] = lx
        lower[p, 1] = ly
        upper[p, 0] = ux
        upper[p, 1] = uy
        flx, fly, fux, fuy = _fat_box(lx, ly, ux, uy, dx, dy, margin, multiplier)
        # the leaf's arrays are picked in two branches and nothing taking arrays is called: a tree chosen
        # by a conditional expression, or a call with the tree per proxy, makes the loop several times slower
        leaf = leaf_of[p]
        is_static = flags[p] == STATIC
        if is_static:
            tlx, tly, tux, tuy = slo[leaf, 0], slo[leaf, 1], shi[leaf, 0], shi[leaf, 1]
        else:
            tlx, tly, tux, tuy = mlo[leaf, 0], mlo[leaf, 1], mhi[leaf, 0], mhi[leaf, 1]
        if _fat_box_keeps(tlx, tly, tux, tuy, lx, ly, ux, uy, flx, fly, fux, fuy, margin):
            continue
        if is_static:
            slo[leaf, 0], slo[leaf, 1], shi[leaf, 0], shi[leaf, 1] = flx, fly, fux, fuy
        else:
            mlo[leaf, 0], mlo[leaf, 1], mhi[leaf, 0], mhi[leaf, 1] = flx, fly, fux, fuy
        if seen[p] == 0:
            seen[p] = 1
            pending[count] = p
            count += 1
            if flags[p] == STATIC:
                count_static += 1
    if count == 0:
        return
    live = moving.meta[2] + static.meta[2]
    bulk = count > SWEEP_FRACTION * live
    rebuild_moving = bulk and count - count_static > SWEEP_FRACTION * moving.meta[2]
    rebuild_static = bulk and count_static > SWEEP_FRACTION * static.meta[2]
    for a in range(count):
        p = pending[a]
        is_static = flags[p] == STATIC
        if is_static and not rebuild_static:
            _tree_remove_leaf(static, leaf_of[p])
            _tree_insert_leaf(static, leaf_of[p])
        elif not is_static and not rebuild_moving:
            _tree_remove_leaf(moving, leaf_of[p])
            _tree_insert_leaf(moving, leaf_of[p])
        if moved_flag[p] == 0:            # mark_moved, written out (a call per proxy costs more)
            moved_flag[p] = 1
            moved[moved_meta[0]] = p
            moved_meta[0] += 1
    if rebuild_moving:
        moving.meta[4] = 1
    if rebuild_static:
        static.meta[4] = 1


#: a bulk move refits the tree's boxes in place while the tree stays this good: the perimeters of its inner
#: nodes, per unit of its leaves' perimeters, at most this factor above the same ratio right after its last
#: rebuild (``meta[3]``, in units of 2**-16); past it, the tree is rebuilt
REFIT_QUALITY_FACTOR = 1.25
_QUALITY_UNIT = 65536.0


@njit
def _refit_inner(t, inner, n):
    """Box and height of the inner nodes ``inner[:n]``, listed parents before children, set from their
    children in reverse order (:func:`_fit`). Returns the sum of their perimeters (half-perimeters: width +
    height)."""
    total = 0.0
    for a in range(n - 1, -1, -1):
        node = inner[a]
        _fit(t, node)
        total += (t.hi[node, 0] - t.lo[node, 0]) + (t.hi[node, 1] - t.lo[node, 1])
    return total


@njit
def tree_refit_or_rebuild(t):
    """After many leaves got new fat boxes: refit every inner node's box to its children, O(n), and rebuild
    the whole tree (:func:`tree_rebuild`, O(n log n), about 8 times the cost) only when the refitted tree
    has become markedly worse than a fresh one.

    Why: in a pile or a settling stack many bodies leave their fat boxes every step but keep their
    neighbours, so the old topology, refitted, is nearly as good as a new one; in a tumbling container it
    degrades and gets rebuilt every few steps. The measure is the sum of the inner nodes' perimeters over
    the sum of the leaves' (what a query pays, per unit of leaf size), against the same ratio right after
    the last rebuild (``REFIT_QUALITY_FACTOR``). Which pairs overlap does not depend on the tree's shape,
    so neither choice changes any result of the broad phase, only its speed.
    """
    t.meta[4] = 0
    count = t.meta[2]
    if count < 2 or t.meta[3] <= 0:
        tree_rebuild(t)
        return
    # inner nodes in pre-order (a parent before its children), then refitted in reverse
    inner = np.empty(count - 1, np.int64)
    stack = np.empty(130, np.int64)
    stack[0] = t.meta[0]
    top = 1
    b = 0
    leaf_sum = 0.0
    while top > 0:
        top -= 1
        node = stack[top]
        if t.height[node] == 0:
            leaf_sum += (t.hi[node, 0] - t.lo[node, 0]) + (t.hi[node, 1] - t.lo[node, 1])
            continue
        inner[b] = node
        b += 1
        stack[top] = t.child1[node]
        stack[top + 1] = t.child2[node]
        top += 2
    inner_sum = _refit_inner(t, inner, b)
    if not (inner_sum <= REFIT_QUALITY_FACTOR * (t.meta[3] / _QUALITY_UNIT) * leaf_sum):
        tree_rebuild(t)


@inline_njit
def tree_fit(t):
    """Refit (or rebuild) tree t if it is stale (``meta[4]``: a bulk move in :func:`tree_update` left its
    inner nodes' boxes as they were). Every reader of inner boxes calls this first: the walks of queries,
    ray casts and pair searches, and leaf insertion and removal. Copied into its callers, so that a tree that
    is not stale costs one test (a call takes and drops a reference on each of the tree's eight arrays)."""
    if t.meta[4] != 0:
        tree_refit_or_rebuild(t)


@njit
def _radix_order(key):
    """Indices that sort ``key`` (float64, finite) ascending, up to 2**-32 of its range, in O(n).

    The keys are mapped linearly onto 32-bit integers (min → 0, max → 2**32 - 1; order is kept except
    among values closer than 2**-32 of the range, which a tree build does not care about) and sorted by
    a least-significant-digit radix sort, three stable counting-sort passes of 11 bits; a pass whose digit
    is the same for every key is skipped. Equal keys keep their index order, so the result is a function
    of the input alone.
    """
    n = key.shape[0]
    lo = np.inf
    hi = -np.inf
    for a in range(n):
        lo = min(lo, key[a])
        hi = max(hi, key[a])
    span = hi - lo
    scale = 4294967295.0 / span if span > 0.0 and np.isfinite(span) else 0.0
    q = np.empty(n, np.int64)
    hist = np.zeros((3, 2048), np.int64)
    for a in range(n):
        v = (key[a] - lo) * scale
        x = np.int64(v) if v > 0.0 else np.int64(0)
        if x > 4294967295:
            x = np.int64(4294967295)
        q[a] = x
        hist[0, x & 2047] += 1
        hist[1, (x >> 11) & 2047] += 1
        hist[2, (x >> 22) & 2047] += 1
    order = np.arange(n)
    q2 = np.empty(n, np.int64)
    o2 = np.empty(n, np.int64)
    for d in range(3):
        shift = 11 * d
        skip = False
        total = 0
        for b in range(2048):
            c = hist[d, b]
            if c == n:
                skip = True
                break
            hist[d, b] = total
            total += c
        if skip:
            continue
        for a in range(n):
            x = q[a]
            b = (x >> shift) & 2047
            f = hist[d, b]
            hist[d, b] = f + 1
            q2[f] = x
            o2[f] = order[a]
        q, q2 = q2, q
        order, o2 = o2, order
    return order


@njit
def tree_rebuild(t):
    """Rebuild the tree from its leaves' fat boxes, top down: O(n log n), no rotations, no perimeter search.

    Each node takes a run of leaves and splits it in two halves of equal size (± 1) at the median of the
    leaves' centres along the longer side of the box of those centres, so the height is ceil(log2 n) (below
    the bound the AVL rotations keep) and children are compact and little overlapping, which is what
    queries pay for. The leaves are sorted by centre x and by centre y once (:func:`_radix_order`, O(n)),
    and every run keeps its leaves in both orders over the same positions, so the box of the centres is
    read off the ends of the two lists in O(1) and the median split is the middle of one list. The other
    list is split by a stable partition: a leaf goes right when its rank in the global order of the split
    axis is at least the middle leaf's, so no marks are needed. O(run) per node, O(n) per level, and no
    selection (whose unpredictable branches made a quickselect build three times slower).

    The node pool is reused in place: every leaf keeps its node index (so each proxy's ``leaf_of`` entry
    and the leaf's proxy, box and height stay as they were) and the n - 1 internal nodes of the old tree
    are reused for the new internal ones, so the free list is untouched and the pool needs no growth.
    Internal nodes are handed out in pre-order (a parent before its children), so refitting them in
    reverse order sets every box and height from children that are already final. Incremental inserts
    and removals afterwards work on the rebuilt tree as on any other.
    """
    t.meta[4] = 0
    count = t.meta[2]
    if count < 2:
        return
    cap = t.height.shape[0]
    items = np.empty(count, np.int64)
    inner = np.empty(count - 1, np.int64)
    a = 0
    b = 0
    for v in range(cap):
        h = t.height[v]
        if h == 0:
            items[a] = v
            a += 1
        elif h > 0:
            inner[b] = v
            b += 1
    cx = np.empty(count)
    cy = np.empty(count)
    for a in range(count):
        v = items[a]
        cx[a] = t.lo[v, 0] + t.hi[v, 0]      # twice the centre: the factor does not change any split
        cy[a] = t.lo[v, 1] + t.hi[v, 1]
    # order[0] lists the leaves by centre x, order[1] by centre y; rank[axis, leaf] is the leaf's position
    # in that global order. Each list has a second buffer: a run's stable partition is written to the other
    # buffer over the same positions (runs never share positions), and the stack says which buffer holds
    # each run's current list.
    order = np.empty((2, 2, count), np.int64)
    rank = np.empty((2, count), np.int64)
    by_x = _radix_order(cx)
    by_y = _radix_order(cy)
    for a in range(count):          # element by element: a slice assignment compiles Numba's shape-error text
        order[0, 0, a] = by_x[a]
        order[1, 0, a] = by_y[a]
    for axis in range(2):
        for a in range(count):
            rank[axis, order[axis, 0, a]] = a
    # explicit stack of runs [begin, end) with the node they hang from (side 1: child1, 2: child2) and the
    # buffers of their two lists; it never holds more than height + 1 runs, and the height is below 64
    stack = np.empty((130, 6), np.int64)
    stack[0, 0] = 0
    stack[0, 1] = count
    stack[0, 2] = -1
    stack[0, 3] = 0
    stack[0, 4] = 0
    stack[0, 5] = 0
    top = 1
    used = 0
    while top > 0:
        top -= 1
        begin = stack[top, 0]
        end = stack[top, 1]
        parent = stack[top, 2]
        side = stack[top, 3]
        bx = stack[top, 4]
        by = stack[top, 5]
        if end - begin == 1:
            node = items[order[0, bx, begin]]
        else:
            node = inner[used]
            used += 1
        t.parent[node] = parent
        if parent == -1:
            t.meta[0] = node
        elif side == 1:
            t.child1[parent] = node
        else:
            t.child2[parent] = node
        if end - begin == 1:
            continue
        if end - begin == 2:               # two leaves: no split to compute
            c1 = items[order[0, bx, begin]]
            c2 = items[order[0, bx, begin + 1]]
            t.child1[node] = c1
            t.child2[node] = c2
            t.parent[c1] = node
            t.parent[c2] = node
            continue
        mid = begin + (end - begin) // 2
        # split the longer side of the centres' box, read off the ends of the two lists
        width = cx[order[0, bx, end - 1]] - cx[order[0, bx, begin]]
        height = cy[order[1, by, end - 1]] - cy[order[1, by, begin]]
        axis = 0 if width >= height else 1
        other = 1 - axis
        src = by if axis == 0 else bx
        dst = 1 - src
        threshold = rank[axis, order[axis, bx if axis == 0 else by, mid]]
        lo_fill = begin
        hi_fill = mid
        for a in range(begin, end):
            v = order[other, src, a]
            r = np.int64(rank[axis, v] >= threshold)
            order[other, dst, lo_fill + r * (hi_fill - lo_fill)] = v
            lo_fill += 1 - r
            hi_fill += r
        nbx = bx if axis == 0 else dst
        nby = dst if axis == 0 else by
        stack[top, 0] = mid
        stack[top, 1] = end
        stack[top, 2] = node
        stack[top, 3] = 2
        stack[top, 4] = nbx
        stack[top, 5] = nby
        stack[top + 1, 0] = begin
        stack[top + 1, 1] = mid
        stack[top + 1, 2] = node
        stack[top + 1, 3] = 1
        stack[top + 1, 4] = nbx
        stack[top + 1, 5] = nby
        top += 2
    inner_sum = _refit_inner(t, inner, count - 1)
    # the quality a refit is judged against (:func:`tree_refit_or_rebuild`)
    leaf_sum = 0.0
    for a in range(count):
        v = items[a]
        leaf_sum += (t.hi[v, 0] - t.lo[v, 0]) + (t.hi[v, 1] - t.lo[v, 1])
    ratio = inner_sum / leaf_sum if leaf_sum > 0.0 else 0.0
    t.meta[3] = np.int64(min(ratio, 1e9) * _QUALITY_UNIT) if ratio > 0.0 else np.int64(0)


@njit
def mark_moved(moved, moved_flag, moved_meta, p):
    if moved_flag[p] == 0:
        moved_flag[p] = 1
        moved[moved_meta[0]] = p
        moved_meta[0] += 1


@njit
def tree_insert_pending(moving, static, lower, upper, flags, leaf_of, n, margin, moved, moved_flag, moved_meta):
    """The leaves of the proxies inserted since the last call (``moved_meta[2]`` of them: a ``DynamicTree`` with
    deferred insertion gives an inserted proxy no leaf, ``leaf_of`` −1, until this is called), in id order,
    each put on the move buffer; the pools must have room for them (``DynamicTree.reserve``).

    Why deferred: the world's step calls this inside its compiled call, so a program that builds its world
    and steps never calls the tree's kernels from Python, whose compile (with Python wrappers, beside the
    step's own) took about 8 s of a cold start, on the path to the first step."""
    if moved_meta[2] == 0:
        return
    for p in range(n):
        if flags[p] != FREE and leaf_of[p] < 0:
            t = static if flags[p] == STATIC else moving
            leaf_of[p] = tree_create_leaf(t, p, lower[p, 0], lower[p, 1], upper[p, 0], upper[p, 1], margin)
            mark_moved(moved, moved_flag, moved_meta, p)
    moved_meta[2] = 0


@njit
def _tree_collect(t, lower, upper, qlx, qly, qux, quy, stack, out, k, real):
    """Append to out (from k) the proxies of t whose real box (with real=False: fat leaf box) overlaps the
    query box; returns (out, k, stack).

    The walk (:func:`_tree_walk`) runs on views that hold no reference and stops when out or the stack is
    full; the full one grows here and the walk resumes. A walk that may rebind them takes and drops a
    reference on both at every node it visits (four atomic operations a node)."""
    tree_fit(t)
    root = t.meta[0]
    if root == -1:
        return out, k, stack
    stack[0] = root
    top = np.int64(1)
    while True:
        top, k = _tree_walk(t.lo, t.hi, t.child1, t.child2, t.proxy, lower, upper, qlx, qly, qux, quy, stack, top,
                            out, k, real)
        if top == 0:
            return out, k, stack
        out, stack = _walk_room(out, k, stack, top)


@njit
def _walk_room(out, k, stack, top):
    """A stopped walk's buffers (``_tree_walk``) with room for its next step: the full one grown."""
    if k >= out.shape[0]:
        out = _grown(out, k, k + 1)
    if top + 2 > stack.shape[0]:
        stack = _grown(stack, top, top + 2)
    return out, stack


@njit
def _tree_walk(lo, hi, child1, child2, proxy, lower, upper, qlx, qly, qux, quy, stack, top, out, k, real):
    """:func:`_tree_collect`'s depth-first walk from the nodes stack[:top]. Returns (top, k): top 0 when the
    walk is done; else it stopped at a node for which out or the stack had no room, and that node is back on
    the stack."""
    lo, hi, child1, child2, proxy, lower, upper, stack, out = borrowed((lo, hi, child1, child2, proxy, lower,
                                                                         upper, stack, out))
    while top > 0:
        top -= 1
        node = stack[top]
        if lo[node, 0] > qux or qlx > hi[node, 0] or lo[node, 1] > quy or qly > hi[node, 1]:
            continue
        if child1[node] == -1:
            p = proxy[node]
            if not real or (lower[p, 0] <= qux and qlx <= upper[p, 0] and lower[p, 1] <= quy
                            and qly <= upper[p, 1]):
                if k >= out.shape[0]:
                    stack[top] = node
                    return top + 1, k
                out[k] = p
                k += 1
        else:
            if top + 2 > stack.shape[0]:
                stack[top] = node
                return top + 1, k
            stack[top] = child1[node]
            stack[top + 1] = child2[node]
            top += 2
    return top, k


@njit
def tree_pairs(moving, static, lower, upper, flags, n):
    """Every moving proxy queries the moving tree (keeping partners with a larger id) and the static tree
    with its real box; partners are filtered by their real boxes. Static proxies never query."""
    stride = max(n, 1)
    buf = np.empty(64, np.int64)
    k = np.int64(0)
    stack = np.empty(64, np.int64)
    hits = np.empty(64, np.int64)
    for i in range(n):
        if flags[i] != MOVING:
            continue
        lx = lower[i, 0]
        ly = lower[i, 1]
        ux = upper[i, 0]
        uy = upper[i, 1]
        hits, h, stack = _tree_collect(moving, lower, upper, lx, ly, ux, uy, stack, hits, np.int64(0), np.bool_(True))
        for a in range(h):
            j = hits[a]
            if j > i:
                buf = _push(buf, k, i * stride + j)
                k += 1
        hits, h, stack = _tree_collect(static, lower, upper, lx, ly, ux, uy, stack, hits, np.int64(0), np.bool_(True))
        for a in range(h):
            j = hits[a]
            if i < j:
                buf = _push(buf, k, i * stride + j)
            else:
                buf = _push(buf, k, j * stride + i)
            k += 1
    return finish_pairs(buf, k, stride)


_KEY_SHIFT = np.int64(32)
_KEY_MASK = np.int64(0xFFFFFFFF)
#: the stride of the keys ``i << 32 | j`` (``unpack_keys``)
KEY_STRIDE = np.int64(1) << _KEY_SHIFT


#: A moving proxy more than this many times the median size of the moving proxies (a long kinematic wall, a
#: proxy far larger than the typical one) is not binned in the bulk grid: it is tested on its own.
GRID_BIN_LIMIT = 2.0

#: A proxy that is not binned tests every moving proxy's box directly when its box covers at least this
#: fraction of the box of all binned proxies (a rotating wall's box covers most of its container: a tree
#: query would visit nearly every node, at several times the cost of a plain test per box); a smaller one
#: queries the moving tree.
GRID_SCAN_COVER = 1.0 / 8.0

#: The typical box size is the median of at most this many fat boxes, evenly spaced in id order (the median
#: of all 5,000 boxes of a pile costs more than the rest of the grid's set-up).
GRID_SIZE_SAMPLES = 255


@njit
def _pairs_by_grid(moving, static, lower, upper, flags, leaf_of, real, threads):
    """Every pair of live proxies whose fat leaf boxes overlap (not static–static), as sorted keys i << 32 | j;
    with ``real``, every pair whose real boxes overlap instead (the same steps on the real boxes).

    Moving–moving pairs come from a uniform grid whose cell side is the largest size, max(width, height),
    of the *binned* proxies: those at most ``GRID_BIN_LIMIT`` × the median size (of ``GRID_SIZE_SAMPLES``
    boxes, evenly spaced). Each binned proxy is entered once, in the cell of its box's lower corner. If two
    boxes overlap, each one's lower corner lies within the other's width (x_j ≤ x_i + w_i and x_i ≤ x_j +
    w_j), so the corners are less than a cell apart on each axis and their cells are the same or adjacent.
    Each cell is therefore tested against itself and four of its eight neighbours, (+1, −1), (+1, 0),
    (+1, +1) and (0, +1): the other four see it from their side, so every overlapping pair is found exactly
    once. One entry per proxy, where binning every cell a box covers (a cell of the median size) makes about
    four, with the pairs seen in several cells to be weeded out; the entries are grouped by cell with a
    counting sort (count, prefix sum, fill), in ascending id order within a cell. Cells are numbered densely
    over the box of the occupied cells when it has at most about twice as many cells as there are entries,
    else hashed (no world bounds needed; a bucket may then hold several cells, so entries compare their
    cells too). The overlap test is written without branches (about a third of the tested pairs overlap,
    so branches would mostly mispredict), on the boxes copied in entry order, so that a cell's entries are
    read from consecutive memory.

    A proxy that is not binned is tested on its own against the moving proxies: when its box covers at
    least ``GRID_SCAN_COVER`` of the binned proxies' box, against every box in turn, else by a query of the
    moving tree (a pair of two such proxies is kept once). Static proxies are never binned: if there are
    fewer of them than moving proxies, each queries the moving tree with its fat box, otherwise each moving
    proxy queries the static tree.

    The pairs come out unordered; a radix sort (counting sorts by the larger id, then by the smaller one:
    O(n + pairs)) gives the keys in ascending order. So the binned entries can be tested in ``threads``
    parts at once (:func:`_grid_entry_pairs_split`; ``threads`` as ``carom._jit.step_threads`` gives it)
    with the same answer for any count.
    """
    n = flags.shape[0]
    m = moving.meta[2]
    ids = np.empty(m, np.int64)
    box = np.empty((m, 4))       # fat box per moving proxy: lx, ly, ux, uy
    sizes = np.empty(m)
    a = 0
    for p in range(n):
        if flags[p] != MOVING:
            continue
        leaf = leaf_of[p]
        ids[a] = p
        if real:
            box[a, 0] = lower[p, 0]
            box[a, 1] = lower[p, 1]
            box[a, 2] = upper[p, 0]
            box[a, 3] = upper[p, 1]
        else:
            box[a, 0] = moving.lo[leaf, 0]
            box[a, 1] = moving.lo[leaf, 1]
            box[a, 2] = moving.hi[leaf, 0]
            box[a, 3] = moving.hi[leaf, 1]
        sizes[a] = max(box[a, 2] - box[a, 0], box[a, 3] - box[a, 1])
        a += 1
    keys = np.empty(max(64, 8 * m), np.int64)
    k = np.int64(0)
    stack = np.empty(64, np.int64)
    hits = np.empty(64, np.int64)
    if m > 1:
        limit = GRID_BIN_LIMIT * _sample_median(sizes, (m + GRID_SIZE_SAMPLES - 1) // GRID_SIZE_SAMPLES)
        # binned: size <= limit (false for NaN); the cell is the largest binned size
        binned = np.empty(m, np.bool_)
        cell = 0.0
        count = 0
        for a in range(m):
            binned[a] = sizes[a] <= limit
            if binned[a]:
                cell = max(cell, sizes[a])
                count += 1
        if count > 0 and not (cell > 0.0 and np.isfinite(cell)):
            # points (no margin): max(x spread, y spread) of the binned lower corners / sqrt(count), or 1
            lo0 = np.inf
            hi0 = -np.inf
            lo1 = np.inf
            hi1 = -np.inf
            for a in range(m):
                if binned[a]:
                    lo0 = min(lo0, box[a, 0])
                    hi0 = max(hi0, box[a, 0])
                    lo1 = min(lo1, box[a, 1])
                    hi1 = max(hi1, box[a, 1])
            cell = max(hi0 - lo0, hi1 - lo1) / np.sqrt(count)
            if not (cell > 0.0 and np.isfinite(cell)):
                cell = 1.0
            # only boxes within a cell stay binned (all but those of infinite size, when the median is too)
            count = 0
            for a in range(m):
                binned[a] = binned[a] and sizes[a] <= cell
                count += np.int64(binned[a])
        # each binned proxy's cell; the box of the occupied cells
        e_cx = np.empty(m, np.int64)        # by proxy position first, then (below) by entry
        e_cy = np.empty(m, np.int64)
        gx0 = _CELL_LIMIT
        gy0 = _CELL_LIMIT
        gx1 = -_CELL_LIMIT
        gy1 = -_CELL_LIMIT
        for a in range(m):
            if binned[a]:
                e_cx[a] = cell_of(box[a, 0], cell)
                e_cy[a] = cell_of(box[a, 1], cell)
                gx0 = min(gx0, e_cx[a])
                gy0 = min(gy0, e_cy[a])
                gx1 = max(gx1, e_cx[a])
                gy1 = max(gy1, e_cy[a])
        width = gx1 - gx0 + 1
        dense = count > 0 and (float(width) * float(gy1 - gy0 + 1) <= 2.0 * count + 64.0)
        if dense:
            cells = width * (gy1 - gy0 + 1)
        else:
            cells = 16
            while cells < count:
                cells *= 2
        mask = np.int64(cells - 1)
        start = np.zeros(cells + 1, np.int64)
        bucket = np.empty(m, np.int64)
        for a in range(m):
            if binned[a]:
                if dense:
                    s = (e_cx[a] - gx0) * (gy1 - gy0 + 1) + (e_cy[a] - gy0)
                else:
                    s = _hash(e_cx[a], e_cy[a], mask)
                bucket[a] = s
                start[s + 1] += 1
        for s in range(cells):
            start[s + 1] += start[s]
        fill = np.empty(cells, np.int64)
        for s in range(cells):
            fill[s] = start[s]
        # the entries in bucket order: cell, box and id
        cx_of = np.empty(count, np.int64)
        cy_of = np.empty(count, np.int64)
        ebox = np.empty((count, 4))
        eid = np.empty(count, np.int64)
        for a in range(m):
            if binned[a]:
                f = fill[bucket[a]]
                fill[bucket[a]] = f + 1
                cx_of[f] = e_cx[a]
                cy_of[f] = e_cy[a]
                ebox[f, 0] = box[a, 0]
                ebox[f, 1] = box[a, 1]
                ebox[f, 2] = box[a, 2]
                ebox[f, 3] = box[a, 3]
                eid[f] = ids[a]
        keys, k = _grid_entry_pairs_split(start, cx_of, cy_of, ebox, eid, dense, gx0, gy0, gx1, gy1, mask, keys, k,
                                          threads)
        # the proxies not binned (listed first: a loop over every proxy that may rebind keys would take and drop
        # a reference on keys at each one)
        cover = float(width) * float(gy1 - gy0 + 1) * cell * cell * GRID_SCAN_COVER
        loose = np.empty(m - count, np.int64)
        nl = 0
        for a in range(m):
            if not binned[a]:
                loose[nl] = a
                nl += 1
        # a few of them test every box in turn rather than refit a stale moving tree for their queries
        scan_stale = moving.meta[4] != 0 and nl <= STALE_SCAN_LIMIT
        for a in loose:
            p = ids[a]
            lx = box[a, 0]
            ly = box[a, 1]
            ux = box[a, 2]
            uy = box[a, 3]
            if scan_stale or (ux - lx) * (uy - ly) >= cover:
                # every moving proxy's box in turn (a pair of two unbinned ones is kept by the first)
                if k + m > keys.shape[0]:
                    keys = _grown(keys, k, k + m)
                for b in range(m):
                    q = ids[b]
                    ok = ((box[b, 0] <= ux) & (lx <= box[b, 2]) & (box[b, 1] <= uy) & (ly <= box[b, 3])
                          & (b != a) & (binned[b] | (b > a)))
                    keys[k] = (min(p, q) << _KEY_SHIFT) | max(p, q)      # written always, kept if ok
                    k += np.int64(ok)
                continue
            hits, h, stack = _tree_collect(moving, lower, upper, lx, ly, ux, uy, stack, hits, np.int64(0), real)
            for c in range(h):
                q = hits[c]
                if q == p:
                    continue
                # q's position in ids (ascending; q is a moving proxy, so it is there): binary search
                lo = 0
                hi = m
                while lo < hi:
                    mid = (lo + hi) >> 1
                    if ids[mid] < q:
                        lo = mid + 1
                    else:
                        hi = mid
                if not binned[lo] and lo < a:
                    continue        # two unbinned proxies: the first one's test keeps the pair
                if k >= keys.shape[0]:
                    keys = _grown(keys, k, k + 1)
                keys[k] = (min(p, q) << _KEY_SHIFT) | max(p, q)
                k += 1
    # moving–static pairs: the fewer side queries the other side's tree; a few static proxies test the moving
    # boxes in turn rather than refit a stale moving tree (``tree_fit``) for their queries
    if m > 0 and static.meta[2] > 0:
        if static.meta[2] <= STALE_SCAN_LIMIT and moving.meta[4] != 0:
            keys, k = _cross_scan(static, flags, leaf_of, lower, upper, ids, box, keys, k, real)
        elif static.meta[2] <= m:
            keys, k = _cross_pairs(static, moving, np.int64(STATIC), flags, leaf_of, lower, upper, keys, k, real)
        else:
            keys, k = _cross_pairs(moving, static, np.int64(MOVING), flags, leaf_of, lower, upper, keys, k, real)
    return _keys_in_order(keys, k, n)


@njit
def _keys_in_order(keys, k, n):
    """``keys[:k]`` (i << 32 | j, i < j < n, no two equal) in ascending order: an LSD radix sort with radix n,
    a stable counting sort by j, then one by i. Four passes over the keys with no data-dependent branch;
    a counting sort by i followed by an insertion sort of each proxy's few partners by j did one scatter
    pass fewer but mispredicted its way through 5,000 short buckets (a 5,000-circle pile's 15,700 keys: 105
    µs against 72)."""
    return _counting_sort(_counting_sort(keys, k, n, np.int64(0)), k, n, _KEY_SHIFT)


@njit
def _counting_sort(keys, k, n, shift):
    """``keys[:k]`` stably sorted by the digit ``(key >> shift) & _KEY_MASK`` (< n): one pass of
    :func:`_keys_in_order`."""
    start = np.zeros(n + 1, np.int64)
    for c in range(k):
        start[((keys[c] >> shift) & _KEY_MASK) + 1] += 1
    for p in range(n):
        start[p + 1] += start[p]
    out = np.empty(k, np.int64)
    for c in range(k):
        d = (keys[c] >> shift) & _KEY_MASK
        f = start[d]
        start[d] = f + 1
        out[f] = keys[c]
    return out


@njit
def _partition(A, low, high):
    """Partition ``A[low:high + 1]`` around the median of its first, middle and last values (compared by
    ``<``, as Numba's sort and median do); returns the pivot's final index i: ``A[low:i]`` holds no value
    above it and ``A[i + 1:high + 1]`` none below. The one step of :func:`_sample_median` and
    :func:`_sorted_keys`."""
    mid = (low + high) >> 1
    if A[mid] < A[low]:
        A[low], A[mid] = A[mid], A[low]
    if A[high] < A[mid]:
        A[high], A[mid] = A[mid], A[high]
    if A[mid] < A[low]:
        A[low], A[mid] = A[mid], A[low]
    pivot = A[mid]
    A[high], A[mid] = A[mid], A[high]
    i = low
    j = high - 1
    while True:
        while i < high and A[i] < pivot:
            i += 1
        while j >= low and pivot < A[j]:
            j -= 1
        if i >= j:
            break
        A[i], A[j] = A[j], A[i]
        i += 1
        j -= 1
    A[i], A[high] = A[high], A[i]
    return i


@njit
def _sample_median(values, step):
    """``np.median(values[::step])`` (values float64, not empty), bitwise: a quickselect with the same
    choices as Numba's ``np.median`` (median-of-three pivot compared by ``<``; for an even count, a split at
    k or k + 1 first), so the same elements are picked whatever the values (NaN included), in one small
    function: the generic version cost seconds of cold compile in every kernel linking it.

    The partitions come from one loop: ``phase`` 0 is ``_select_two`` looking for a split at k or k + 1,
    phase 1 a ``_select`` of element ``target`` in ``A[low:high + 1]``.
    """
    n = (values.shape[0] + step - 1) // step
    A = np.empty(n, np.float64)
    for a in range(n):
        A[a] = values[a * step]
    low = np.int64(0)
    high = np.int64(n - 1)
    half = np.int64(n >> 1)
    k = half - 1
    even = n & 1 == 0
    phase = 0 if even else 1
    target = half
    while True:
        i = _partition(A, low, high)
        if phase == 0:             # _select_two(A, k, low, high)
            if i < k:
                low = i + 1
            elif i > k + 1:
                high = i - 1
            elif i == k:           # then _select(A, k + 1, i + 1, high)
                phase = 1
                target = k + 1
                low = i + 1
            else:                  # then _select(A, k, low, i - 1)
                phase = 1
                target = k
                high = i - 1
        elif i == target:
            break
        elif i < target:           # _select(A, target, low, high)
            low = i + 1
        else:
            high = i - 1
    if even:
        return (A[k] + A[k + 1]) / 2
    return A[half]


#: Bounds for the box of occupied grid cells (cell coordinates are clamped to ±2**60 by :func:`cell_of`).
_CELL_LIMIT = np.int64(2 ** 62)


@njit
def _query_box(source, leaf_of, lower, upper, p, real):
    """Proxy p's box for finding its partners: its real box with ``real``, else its fat box (its leaf's box
    in the tree source)."""
    if real:
        return lower[p, 0], lower[p, 1], upper[p, 0], upper[p, 1]
    leaf = leaf_of[p]
    return source.lo[leaf, 0], source.lo[leaf, 1], source.hi[leaf, 0], source.hi[leaf, 1]


@njit
def _proxies_of(flags, kind, count):
    """The ``count`` proxies with flags == kind, in ascending order. (The pair loops go over these rather than
    over every proxy skipping the others: a loop that may rebind its keys array takes and drops a reference on
    it at every turn, 16,000 atomic counts a step, 0.05 ms, in the 5,000-circle pile with its three walls.)"""
    out = np.empty(count, np.int64)
    c = 0
    for p in range(flags.shape[0]):
        if flags[p] == kind and c < count:
            out[c] = p
            c += 1
    return out[:c]


@njit
def _cross_pairs(source, target, kind, flags, leaf_of, lower, upper, keys, k, real):
    """Each proxy with flags == kind (a leaf of the tree source) queries the tree target with its fat box,
    or with ``real`` its real box for the real boxes of the target's proxies; the pairs' keys are appended
    to keys from k. Returns (keys, k)."""
    stack = np.empty(64, np.int64)
    hits = np.empty(64, np.int64)
    for p in _proxies_of(flags, kind, source.meta[2]):
        qlx, qly, qux, quy = _query_box(source, leaf_of, lower, upper, p, real)
        hits, h, stack = _tree_collect(target, lower, upper, qlx, qly, qux, quy, stack, hits, np.int64(0), real)
        if k + h > keys.shape[0]:
            keys = _grown(keys, k, k + h)
        for c in range(h):
            q = hits[c]
            keys[k] = (min(p, q) << _KEY_SHIFT) | max(p, q)
            k += 1
    return keys, k


#: In a busy step, with the moving tree stale (``tree_fit``), up to this many static proxies (``_cross_scan``)
#: and up to this many moving proxies left out of the grid test every moving proxy's box in turn, about 1 ns
#: a box, instead of querying the tree, which would have to be refitted first (about 10 ns per leaf, and
#: now and then a rebuild at ten times that).
STALE_SCAN_LIMIT = 8


@njit
def _cross_scan(static, flags, leaf_of, lower, upper, ids, box, keys, k, real):
    """The pairs of each static proxy with the moving proxies ``ids`` whose boxes ``box`` (their fat boxes, or
    with ``real`` their real boxes) overlap its fat box (with ``real``: its real box): the pairs
    :func:`_cross_pairs` finds by a query of the moving tree, from a test of every box in turn. Keys are
    appended to keys from k; returns (keys, k)."""
    m = ids.shape[0]
    for p in _proxies_of(flags, np.int64(STATIC), static.meta[2]):
        lx, ly, ux, uy = _query_box(static, leaf_of, lower, upper, p, real)
        if k + m > keys.shape[0]:
            keys = _grown(keys, k, k + m)
        for b in range(m):
            q = ids[b]
            ok = (box[b, 0] <= ux) & (lx <= box[b, 2]) & (box[b, 1] <= uy) & (ly <= box[b, 3])
            keys[k] = (min(p, q) << _KEY_SHIFT) | max(p, q)      # written always, kept if ok
            k += np.int64(ok)
    return keys, k


@njit
def _grid_entry_pairs(e, e1, start, cx_of, cy_of, box, ids, dense, gx0, gy0, gx1, gy1, mask, keys, k):
    """The overlapping pairs of the bulk grid's entries e … e1 − 1 (see :func:`_pairs_by_grid`) appended to
    keys from k.

    Entry e (in bucket order) is the proxy ``ids[e]`` with box ``box[e]`` in cell (cx_of[e], cy_of[e]).
    Each entry is tested against the later entries of its own cell and every entry of the cells (0, +1),
    (+1, −1), (+1, 0) and (+1, +1) from it. Numbered densely, column by column (cell (x, y) is bucket
    (x − gx0)·height + y − gy0), these are two runs of consecutive buckets: its own cell and the one above
    it, and the three cells of the next column; cells outside the occupied box are empty. Hashed, each of
    the five cells is looked up and its bucket's entries must match its cell. Returns (keys, k).

    The entries run in :func:`_grid_entry_run`, on views that hold no reference, until keys is short of
    room; keys then grows here and the run resumes. A loop that may rebind keys takes and drops a reference
    on it at every entry (two atomic operations each time: about 20k a step in a 5,000-circle pile).
    """
    while e < e1:
        e, k = _grid_entry_run(e, e1, start, cx_of, cy_of, box, ids, dense, gx0, gy0, gx1, gy1, mask, keys, k)
        if e < e1:
            keys = _grown(keys, k, 2 * keys.shape[0])
    return keys, k


#: the bulk grid tests its entries in parallel parts from this many entries on (fewer: in the calling thread,
#: where a parallel loop's start would cost more than it saves)
GRID_PARALLEL_ENTRIES = 2048


@njit
def _grid_entry_pairs_split(start, cx_of, cy_of, box, ids, dense, gx0, gy0, gx1, gy1, mask, keys, k, threads):
    """:func:`_grid_entry_pairs` in ``threads`` parts of the entries, in parallel (:func:`_grid_entry_parts`),
    then the parts' pairs appended to keys in order: (keys, k). The keys are sorted afterwards, so neither
    the split nor the order of the parts changes the answer. A part whose buffer (8 keys per entry, as the
    whole grid's) fills up stops, and its remaining entries are tested here afterwards."""
    E = cx_of.shape[0]
    if threads == 1 or E < GRID_PARALLEL_ENTRIES:
        return _grid_entry_pairs(np.int64(0), E, start, cx_of, cy_of, box, ids, dense, gx0, gy0, gx1, gy1, mask,
                                 keys, k)
    parts = np.empty((threads, 8 * (E // threads + 1) + 64), np.int64)
    got = np.zeros(threads, np.int64)
    stop = np.zeros(threads, np.int64)
    _grid_entry_parts(start, cx_of, cy_of, box, ids, dense, gx0, gy0, gx1, gy1, mask, parts, got, stop, threads)
    for w in range(threads):
        if k + got[w] > keys.shape[0]:
            keys = _grown(keys, k, k + got[w])
        for a in range(got[w]):
            keys[k + a] = parts[w, a]
        k += got[w]
        keys, k = _grid_entry_pairs(stop[w], (w + 1) * E // threads, start, cx_of, cy_of, box, ids, dense, gx0,
                                    gy0, gx1, gy1, mask, keys, k)
    return keys, k


@pnjit
def _grid_entry_parts(start, cx_of, cy_of, box, ids, dense, gx0, gy0, gx1, gy1, mask, parts, got, stop, threads):
    """Part w of ``threads`` of the entries into ``parts[w]``: ``got[w]`` keys, and ``stop[w]`` the entry
    it stopped at (the part's end, unless its buffer filled up). The parallel loop alone in its function."""
    for w in prange(threads):
        _grid_entry_part(np.int64(w), threads, start, cx_of, cy_of, box, ids, dense, gx0, gy0, gx1, gy1, mask,
                         parts, got, stop)


@njit
def _grid_entry_part(w, threads, start, cx_of, cy_of, box, ids, dense, gx0, gy0, gx1, gy1, mask, parts, got, stop):
    """One part of :func:`_grid_entry_parts` (a call, so every name in it is private to its thread)."""
    E = cx_of.shape[0]
    e, k = _grid_entry_run(w * E // threads, (w + 1) * E // threads, start, cx_of, cy_of, box, ids, dense, gx0,
                           gy0, gx1, gy1, mask, parts[w], np.int64(0))
    got[w] = k
    stop[w] = e


@njit
def _grid_entry_run(e0, e1, start, cx_of, cy_of, box, ids, dense, gx0, gy0, gx1, gy1, mask, keys, k):
    """:func:`_grid_entry_pairs` for entries e0 … e1 − 1, while keys has room for every candidate of an
    entry. Returns (the entry it stopped at, k): e1 when done, else an entry whose candidates did not fit,
    with k as it was before that entry (what the entry wrote is written again)."""
    start, cx_of, cy_of, box, ids, keys = borrowed((start, cx_of, cy_of, box, ids, keys))
    height = gy1 - gy0 + 1
    cap = keys.shape[0]
    for e in range(e0, e1):
        k_entry = k
        cx = cx_of[e]
        cy = cy_of[e]
        lx = box[e, 0]
        ly = box[e, 1]
        ux = box[e, 2]
        uy = box[e, 3]
        p = ids[e]
        s = (cx - gx0) * height + (cy - gy0)      # (dense numbering)
        for r in range(2 if dense else 5):
            tx = cx
            ty = cy
            if dense:
                if r == 0:            # this cell from the next entry, and the cell above
                    f0 = e + 1
                    f1 = start[s + 2] if cy < gy1 else start[s + 1]
                else:                 # the next column's cells from y − 1 to y + 1
                    if cx >= gx1:
                        continue
                    t = s + height
                    f0 = start[t - 1] if cy > gy0 else start[t]
                    f1 = start[t + 2] if cy < gy1 else start[t + 1]
            else:
                # r = 0: this cell, from the next entry; 1 … 4: (0, +1), (+1, −1), (+1, 0), (+1, +1)
                tx = cx + np.int64(r >= 2)
                ty = cy + (np.int64(r) - 3 if r >= 2 else np.int64(r))
                s = _hash(tx, ty, mask)
                f0 = e + 1 if r == 0 else start[s]
                f1 = start[s + 1]
            if f1 <= f0:
                continue
            if k + (f1 - f0) > cap:
                return e, k_entry
            for f in range(f0, f1):
                q = ids[f]
                ok = (box[f, 0] <= ux) & (lx <= box[f, 2]) & (box[f, 1] <= uy) & (ly <= box[f, 3])
                if not dense:         # (a bucket may hold several cells)
                    ok = ok & (cx_of[f] == tx) & (cy_of[f] == ty)
                keys[k] = (min(p, q) << _KEY_SHIFT) | max(p, q)      # written always, kept if ok
                k += np.int64(ok)
    return e1, k


@njit
def _grown(buf, k, need):
    """buf with its first k values kept and room for at least need values (capacity doubled at least)."""
    nb = np.empty(max(need, 2 * buf.shape[0]), buf.dtype)
    for a in range(k):         # a loop, not a slice assignment (which compiles a broadcasting kernel)
        nb[a] = buf[a]
    return nb


@njit
def _unmoved_pairs(lower, upper, flags, cand):
    """The path of :func:`tree_pairs_cached` for an empty move buffer: no fat box changed, so the cache
    stays as it is except for the pairs of proxies removed since (now ``FREE``), and no fat-box test is needed.

    No static–static pair can be in the cache: every key entered it with a ``MOVING`` proxy (queries of
    static proxies search the moving tree only, the grid pairs a moving proxy with anything live), and a
    proxy's flags change only by removal (to ``FREE``) and by a new insertion under its id, which puts it on
    the move buffer. So ``FREE`` is the only flag to test. Both tests are written without branches (about
    half the cached pairs of a pile fail the real-box test, so a branch would mispredict), and when no pair
    is dead the cache is returned as it came, without a copy.
    """
    nc = cand.shape[0]
    pairs = np.empty(nc, np.int64)
    r = 0
    alive = 0
    for c in range(nc):
        i = cand[c] >> _KEY_SHIFT
        j = cand[c] & _KEY_MASK
        live = (flags[i] != FREE) & (flags[j] != FREE)
        ok = (live & (lower[j, 0] <= upper[i, 0]) & (lower[i, 0] <= upper[j, 0])
              & (lower[j, 1] <= upper[i, 1]) & (lower[i, 1] <= upper[j, 1]))
        pairs[r] = cand[c]         # r <= c: always in bounds; kept when ok
        r += np.int64(ok)
        alive += np.int64(live)
    if alive == nc:
        return pairs[:r], cand
    out = np.empty(alive, np.int64)
    m = 0
    for c in range(nc):
        key = cand[c]
        if flags[key >> _KEY_SHIFT] != FREE and flags[key & _KEY_MASK] != FREE:
            out[m] = key
            m += 1
    return pairs[:r], out


@njit
def _sorted_keys(a, k):
    """``np.sort(a[:k])`` for int64 keys (any correct sort of integers gives the same array), by the steps of
    Numba's quicksort: median-of-three partitions, the larger part pushed on a stack and the smaller one
    split further, runs under 16 insertion-sorted. A few lines instead of Numba's generic sort, which cost
    about a second of cold compile in every function linking it."""
    A = np.empty(k, np.int64)
    for c in range(k):
        A[c] = a[c]
    _sort_range(A, np.int64(0), k - 1)
    return A


@njit
def _sort_range(A, low, high):
    """Sort ``A[low:high + 1]`` in place (the quicksort of :func:`_sorted_keys`)."""
    stack = np.empty(128, np.int64)       # (low, high) pairs; the depth stays below log2(k) + 1
    stack[0] = low
    stack[1] = high
    n = 1 if high > low else 0
    while n > 0:
        n -= 1
        low = stack[2 * n]
        high = stack[2 * n + 1]
        while high - low >= 15:
            i = _partition(A, low, high)
            if high - i > i - low:
                if high > i:
                    stack[2 * n] = i + 1
                    stack[2 * n + 1] = high
                    n += 1
                high = i - 1
            else:
                if i > low:
                    stack[2 * n] = low
                    stack[2 * n + 1] = i - 1
                    n += 1
                low = i + 1
        _insertion_sort(A, low, high)


@inline_njit
def _insertion_sort(A, low, high):
    """Sort ``A[low:high + 1]`` in place by insertion: the short runs of :func:`_sort_range`."""
    for c in range(low + 1, high + 1):
        v = A[c]
        d = c - 1
        while d >= low and A[d] > v:
            A[d + 1] = A[d]
            d -= 1
        A[d + 1] = v


@njit
def tree_pairs_cached(moving, static, lower, upper, flags, leaf_of, moved, moved_flag, moved_meta, cand, threads):
    """Pairs from a cache of candidate pairs (Box2D's pair buffer), O(candidates + moved log n).

    Invariant, while ``moved_meta[1]`` is 0: ``cand`` (sorted keys ``i << 32 | j``, i < j) holds every pair
    of proxies whose *fat* leaf boxes overlap. Fat boxes change only when a leaf is (re)inserted, and such
    proxies are on the move buffer, so querying the trees with the fat box of each buffered proxy finds
    every new fat overlap. Merged with the old cache, pairs that no longer fat-overlap (or whose proxy is
    gone) are dropped; of the rest, those whose real boxes overlap are the answer, already in sorted order.
    When the buffer is empty, there is nothing to query or merge (:func:`_unmoved_pairs`).

    When more than ``SWEEP_FRACTION`` of the live proxies are on the move buffer, the queries would cost
    more than finding every pair afresh with one uniform grid (:func:`_pairs_by_grid`). Such a busy step
    (a tumbling or falling crowd) is usually followed by another, which would replace the cache again, so
    the grid is run on the real boxes: it finds the answer directly, with about half the entries and
    pairs of the fat boxes, and ``cand`` then holds just those pairs, marked by ``moved_meta[1]`` = 1. The
    next step that is not busy runs the grid on the fat boxes once to rebuild the cache (and clears the
    mark). Returns ``(pairs, new_cand)``, both sorted keys, and empties the move buffer; ``new_cand`` may be
    ``cand`` itself, and in a busy step ``pairs`` is ``new_cand`` (none is ever written in place).

    ``threads``: the parts the grid's pair tests run in (:func:`_pairs_by_grid`); no result depends on it.

    Every path writes the keys of ``pairs`` as it goes, into an array allocated at its largest size (every
    candidate kept) and returned as a view of its first entries: no growing, no second pass. The pairs stay
    keys (the caller maps them to shape pairs, :func:`carom.rigid._step.broad_stage`): unpacked into rows of
    (i, j), a busy step of the 5,000-circle pile wrote and read 13,000 rows more.
    """
    live = moving.meta[2] + static.meta[2]
    busy = moved_meta[0] > SWEEP_FRACTION * live
    if busy or moved_meta[1] != 0:
        # a grid: the pairs afresh (busy, real boxes), or the cache rebuilt and the pairs taken from it
        # (written here, not in a helper: every compiled caller optimises its callees' code again, so each
        # level of calls above the grid costs about a second of cold compile)
        out = _pairs_by_grid(moving, static, lower, upper, flags, leaf_of, busy, threads)
        if busy:
            # the real grid's pairs are the answer (and the cache): no box to read again, nothing to copy
            pairs = out
            r = out.shape[0]
        else:
            pairs = np.empty(out.shape[0], np.int64)
            r = 0
            for c in range(out.shape[0]):
                i = out[c] >> _KEY_SHIFT
                j = out[c] & _KEY_MASK
                # the real-box test of :func:`overlap`, written out and without branches (a call per pair,
                # with its array arguments, costs more than the test; about half the fat pairs overlap, so
                # branches would mispredict)
                ok = ((lower[j, 0] <= upper[i, 0]) & (lower[i, 0] <= upper[j, 0])
                      & (lower[j, 1] <= upper[i, 1]) & (lower[i, 1] <= upper[j, 1]))
                pairs[r] = out[c]          # r <= c: always in bounds; kept when ok
                r += np.int64(ok)
        for a in range(moved_meta[0]):
            moved_flag[moved[a]] = 0
        moved_meta[0] = 0
        moved_meta[1] = np.int64(busy)
        return pairs[:r], out
    if moved_meta[0] == 0:
        return _unmoved_pairs(lower, upper, flags, cand)
    # a proxy's fat box is read from its tree's arrays, picked in two branches (a tree picked by a
    # conditional expression, or a helper taking both trees, makes these loops markedly slower)
    mlo, mhi, slo, shi = moving.lo, moving.hi, static.lo, static.hi
    stack = np.empty(64, np.int64)
    hits = np.empty(64, np.int64)
    new = np.empty(64, np.int64)
    k = np.int64(0)
    for a in range(moved_meta[0]):
        p = moved[a]
        if flags[p] == FREE:
            continue
        leaf = leaf_of[p]
        if flags[p] == STATIC:
            lx, ly, ux, uy = slo[leaf, 0], slo[leaf, 1], shi[leaf, 0], shi[leaf, 1]
        else:
            lx, ly, ux, uy = mlo[leaf, 0], mlo[leaf, 1], mhi[leaf, 0], mhi[leaf, 1]
        hits, h, stack = _tree_collect(moving, lower, upper, lx, ly, ux, uy, stack, hits, np.int64(0), np.bool_(False))
        if flags[p] == MOVING:
            hits, h, stack = _tree_collect(static, lower, upper, lx, ly, ux, uy, stack, hits, h, np.bool_(False))
        for b in range(h):
            q = hits[b]
            if q == p or (moved_flag[q] and q < p and flags[q] != FREE):
                continue           # the pair of two moved proxies is added once, by the smaller one's query
            if k >= new.shape[0]:
                new = _grown(new, k, k + 1)
            new[k] = (min(p, q) << _KEY_SHIFT) | max(p, q)
            k += 1
    new = _sorted_keys(new, k)
    # merge the sorted cache and the sorted new keys, dropping duplicates and dead pairs. Both outputs are
    # allocated at their largest size (every key kept), so the loop never checks for room, and they are
    # returned as views of these buffers (a copy would cost about as much as the merge of an idle cache).
    nc = cand.shape[0]
    out = np.empty(nc + k, np.int64)
    pairs = np.empty(nc + k, np.int64)
    m = 0
    r = 0
    a = 0
    b = 0
    last = np.int64(-1)
    while a < nc or b < k:
        if b >= k or (a < nc and cand[a] <= new[b]):
            key = cand[a]
            a += 1
        else:
            key = new[b]
            b += 1
        if key == last:
            continue
        last = key
        i = key >> _KEY_SHIFT
        j = key & _KEY_MASK
        if flags[i] == FREE or flags[j] == FREE or (flags[i] == STATIC and flags[j] == STATIC):
            continue
        if moved_flag[i] or moved_flag[j]:
            # a fat box changed: check that the pair still fat-overlaps (unmoved pairs still do)
            li = leaf_of[i]
            lj = leaf_of[j]
            if flags[i] == STATIC:
                ilx, ily, iux, iuy = slo[li, 0], slo[li, 1], shi[li, 0], shi[li, 1]
            else:
                ilx, ily, iux, iuy = mlo[li, 0], mlo[li, 1], mhi[li, 0], mhi[li, 1]
            if flags[j] == STATIC:
                jlx, jly, jux, juy = slo[lj, 0], slo[lj, 1], shi[lj, 0], shi[lj, 1]
            else:
                jlx, jly, jux, juy = mlo[lj, 0], mlo[lj, 1], mhi[lj, 0], mhi[lj, 1]
            if jlx > iux or ilx > jux or jly > iuy or ily > juy:
                continue
        out[m] = key
        m += 1
        # the real-box test without branches, as in :func:`_unmoved_pairs`
        ok = ((lower[j, 0] <= upper[i, 0]) & (lower[i, 0] <= upper[j, 0])
              & (lower[j, 1] <= upper[i, 1]) & (lower[i, 1] <= upper[j, 1]))
        pairs[r] = key
        r += np.int64(ok)
    for a in range(moved_meta[0]):
        moved_flag[moved[a]] = 0
    moved_meta[0] = 0
    return pairs[:r], out[:m]


@njit
def tree_query(moving, static, lower, upper, qlx, qly, qux, quy):
    stack = np.empty(64, np.int64)
    out = np.empty(64, np.int64)
    out, k, stack = _tree_collect(moving, lower, upper, qlx, qly, qux, quy, stack, out, np.int64(0), np.bool_(True))
    out, k, stack = _tree_collect(static, lower, upper, qlx, qly, qux, quy, stack, out, k, np.bool_(True))
    return np.sort(out[:k])


@njit
def tree_query_boxes(t, lower, upper, boxes, n):
    """The proxies of tree t whose real box overlaps each of the query boxes boxes[:n] (rows lx, ly, ux, uy):
    (first, hits), box i's proxies being hits[first[i]:first[i + 1]].

    One call for many boxes: a loop that calls a query per box takes and drops references on the tree's arrays
    and the buffers it returns at every box (the continuous stage's 2,000 fast circles a step, 0.2 µs each);
    here the walks run on borrowed views (``_boxes_walk``), which stop when the hits or the stack are full,
    and resume at the same node once the full one has grown."""
    tree_fit(t)
    first = np.zeros(n + 1, np.int64)
    hits = np.empty(max(n, 16), np.int64)
    stack = np.empty(64, np.int64)
    if t.meta[0] == -1:
        return first, hits[:0]
    i = np.int64(0)
    top = np.int64(0)
    k = np.int64(0)
    while True:
        i, top, k = _boxes_walk(t.lo, t.hi, t.child1, t.child2, t.proxy, t.meta[0], lower, upper, boxes, n, first,
                                i, top, stack, hits, k)
        if i >= n:
            return first, hits[:k]
        hits, stack = _walk_room(hits, k, stack, top)


@njit
def _boxes_walk(lo, hi, child1, child2, proxy, root, lower, upper, boxes, n, first, i, top, stack, hits, k):
    """:func:`tree_query_boxes`' walks from box i on (top > 0: box i's walk resumes from stack[:top]). Returns
    (i, top, k): i = n when all are done, else the walk of box i stopped for want of room."""
    lo, hi, child1, child2, proxy, lower, upper, boxes, first, stack, hits = borrowed((
        lo, hi, child1, child2, proxy, lower, upper, boxes, first, stack, hits))
    while i < n:
        if top == 0:
            first[i] = k
            stack[0] = root
            top = 1
        top, k = _tree_walk(lo, hi, child1, child2, proxy, lower, upper, boxes[i, 0], boxes[i, 1], boxes[i, 2],
                            boxes[i, 3], stack, top, hits, k, np.bool_(True))
        if top > 0:
            return i, top, k
        i += 1
        first[i] = k
    return i, top, k


@njit
def _tree_ray(t, lower, upper, ox, oy, dx, dy, stack, ids, ts, k):
    tree_fit(t)
    root = t.meta[0]
    if root == -1:
        return ids, ts, k, stack
    top = 1
    stack[0] = root
    while top > 0:
        top -= 1
        node = stack[top]
        if ray_box_fraction(ox, oy, dx, dy, t.lo[node, 0], t.lo[node, 1], t.hi[node, 0], t.hi[node, 1]) < 0.0:
            continue
        if t.child1[node] == -1:
            p = t.proxy[node]
            f = ray_box_fraction(ox, oy, dx, dy, lower[p, 0], lower[p, 1], upper[p, 0], upper[p, 1])
            if f >= 0.0:
                ids = _push(ids, k, p)
                ts = _push(ts, k, f)
                k += 1
        else:
            if top + 2 > stack.shape[0]:
                ns = np.empty(2 * stack.shape[0], np.int64)
                for c in range(top):
                    ns[c] = stack[c]
                stack = ns
            stack[top] = t.child1[node]
            stack[top + 1] = t.child2[node]
            top += 2
    return ids, ts, k, stack


@njit
def tree_raycast(moving, static, lower, upper, ox, oy, dx, dy):
    stack = np.empty(64, np.int64)
    ids = np.empty(64, np.int64)
    ts = np.empty(64, np.float64)
    ids, ts, k, stack = _tree_ray(moving, lower, upper, ox, oy, dx, dy, stack, ids, ts, np.int64(0))
    ids, ts, k, stack = _tree_ray(static, lower, upper, ox, oy, dx, dy, stack, ids, ts, k)
    return order_hits(ids, ts, k)


# --------------------------------------------------------------------------------------------------------
# uniform grid (hashed cells)
# --------------------------------------------------------------------------------------------------------

#: Cell coordinates are clamped to ±2**60 so float → int conversion never overflows. Clamping is
#: monotonic, so two overlapping boxes still share the cell of their intersection's lower corner.
_CELL_CLAMP = float(2 ** 60)


@njit
def cell_of(x, cell):
    f = np.floor(x / cell)
    if f > _CELL_CLAMP:
        f = _CELL_CLAMP
    elif f < -_CELL_CLAMP:
        f = -_CELL_CLAMP
    return np.int64(f)


@njit
def _cell_range(lower, upper, p, cell):
    return (cell_of(lower[p, 0], cell), cell_of(lower[p, 1], cell),
            cell_of(upper[p, 0], cell), cell_of(upper[p, 1], cell))


@njit
def _is_oversize(x0, y0, x1, y1, max_cells):
    return (float(x1 - x0) + 1.0) * (float(y1 - y0) + 1.0) > max_cells


@njit
def _hash(cx, cy, mask):
    h = cx * np.int64(-7046029254386353131) + cy * np.int64(0x27D4EB2F165667C5)
    h = h ^ (h >> np.int64(29))
    return h & mask


@njit
def _slot(kx, ky, used, cx, cy):
    mask = kx.shape[0] - 1
    s = _hash(cx, cy, mask)
    while used[s] and not (kx[s] == cx and ky[s] == cy):
        s = (s + 1) & mask
    return s


@njit
def grid_choose_cell(lower, upper, flags, n):
    """Cell size from the boxes: the median of max(width, height), so a typical box covers 1 to 4 cells.

    If most boxes are points, the spread of the centres divided by sqrt(count) (about one box per cell)
    is used instead, and 1 if even that is zero.
    """
    sizes = np.empty(n, np.float64)
    m = 0
    lo0 = np.inf
    lo1 = np.inf
    hi0 = -np.inf
    hi1 = -np.inf
    for p in range(n):
        if flags[p] == FREE:
            continue
        sizes[m] = max(upper[p, 0] - lower[p, 0], upper[p, 1] - lower[p, 1])
        m += 1
        lo0 = min(lo0, lower[p, 0])
        lo1 = min(lo1, lower[p, 1])
        hi0 = max(hi0, upper[p, 0])
        hi1 = max(hi1, upper[p, 1])
    if m == 0:
        return 1.0
    c = np.median(sizes[:m])
    if not (c > 0.0 and np.isfinite(c)):
        c = max(hi0 - lo0, hi1 - lo1) / np.sqrt(m)
    if not (c > 0.0 and np.isfinite(c)):
        c = 1.0
    return c


@njit
def grid_build(lower, upper, flags, n, want, cell, max_cells):
    """Hash table of the cells covered by proxies with flags == want (oversize proxies left out).

    Returns ``(kx, ky, used, start, items)``: slot s holds cell (kx[s], ky[s]) when used[s], and its
    proxies, ascending, are ``items[start[s]:start[s + 1]]``. Built in O(entries) by count, prefix sum
    and fill, so there is no world bound and no sort.
    """
    total = 0
    for p in range(n):
        if flags[p] != want:
            continue
        x0, y0, x1, y1 = _cell_range(lower, upper, p, cell)
        if not _is_oversize(x0, y0, x1, y1, max_cells):
            total += (x1 - x0 + 1) * (y1 - y0 + 1)
    size = 16
    while size * _GRID_HASH_LOAD < total:
        size *= 2
    kx = np.zeros(size, np.int64)
    ky = np.zeros(size, np.int64)
    used = np.zeros(size, np.bool_)
    count = np.zeros(size + 1, np.int64)
    for p in range(n):
        if flags[p] != want:
            continue
        x0, y0, x1, y1 = _cell_range(lower, upper, p, cell)
        if _is_oversize(x0, y0, x1, y1, max_cells):
            continue
        for cx in range(x0, x1 + 1):
            for cy in range(y0, y1 + 1):
                s = _slot(kx, ky, used, cx, cy)
                if not used[s]:
                    used[s] = True
                    kx[s] = cx
                    ky[s] = cy
                count[s + 1] += 1
    start = np.cumsum(count)
    fill = start.copy()
    items = np.empty(total, np.int64)
    for p in range(n):
        if flags[p] != want:
            continue
        x0, y0, x1, y1 = _cell_range(lower, upper, p, cell)
        if _is_oversize(x0, y0, x1, y1, max_cells):
            continue
        for cx in range(x0, x1 + 1):
            for cy in range(y0, y1 + 1):
                s = _slot(kx, ky, used, cx, cy)
                items[fill[s]] = p
                fill[s] += 1
    return kx, ky, used, start, items


@njit
def _owner_cell(lower, i, j, cell):
    """The cell holding the lower corner of the intersection of boxes i and j: the one cell (of all the
    cells both share) where the pair is reported, so no pair comes out twice."""
    return (cell_of(max(lower[i, 0], lower[j, 0]), cell), cell_of(max(lower[i, 1], lower[j, 1]), cell))


@njit
def grid_pairs(lower, upper, flags, n, cell, max_cells, st_kx, st_ky, st_used, st_start, st_items):
    """Pairs using a fresh table of moving proxies and the given (cached) table of static proxies.

    moving–moving: all pairs within each occupied cell; moving–static: each moving proxy looks up its
    cells in the static table; in both a pair counts only in its owner cell. Oversize proxies (more than
    max_cells cells) are tested against every proxy.
    """
    stride = max(n, 1)
    buf = np.empty(64, np.int64)
    k = np.int64(0)
    kx, ky, used, start, items = grid_build(lower, upper, flags, n, MOVING, cell, max_cells)
    for s in range(kx.shape[0]):
        if not used[s]:
            continue
        for a in range(start[s], start[s + 1]):
            i = items[a]
            for b in range(a + 1, start[s + 1]):
                j = items[b]
                if overlap(lower, upper, i, j):
                    ox, oy = _owner_cell(lower, i, j, cell)
                    if ox == kx[s] and oy == ky[s]:
                        buf = _push(buf, k, i * stride + j)
                        k += 1
    over = np.empty(16, np.int64)
    no = np.int64(0)
    is_over = np.zeros(n, np.bool_)
    for i in range(n):
        if flags[i] == FREE:
            continue
        x0, y0, x1, y1 = _cell_range(lower, upper, i, cell)
        if _is_oversize(x0, y0, x1, y1, max_cells):
            over = _push(over, no, i)
            no += 1
            is_over[i] = True
            continue
        if flags[i] != MOVING:
            continue
        for cx in range(x0, x1 + 1):
            for cy in range(y0, y1 + 1):
                s = _slot(st_kx, st_ky, st_used, cx, cy)
                if not st_used[s]:
                    continue
                for a in range(st_start[s], st_start[s + 1]):
                    j = st_items[a]
                    if overlap(lower, upper, i, j):
                        ox, oy = _owner_cell(lower, i, j, cell)
                        if ox == cx and oy == cy:
                            if i < j:
                                buf = _push(buf, k, i * stride + j)
                            else:
                                buf = _push(buf, k, j * stride + i)
                            k += 1
    for a in range(no):
        o = over[a]
        so = flags[o] == STATIC
        for j in range(n):
            if j == o or flags[j] == FREE or (so and flags[j] == STATIC) or (is_over[j] and j < o):
                continue
            if overlap(lower, upper, o, j):
                if o < j:
                    buf = _push(buf, k, o * stride + j)
                else:
                    buf = _push(buf, k, j * stride + o)
                k += 1
    return finish_pairs(buf, k, stride)
