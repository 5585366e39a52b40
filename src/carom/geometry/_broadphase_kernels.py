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

from .._jit import njit

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
        nb[:k] = buf[:k]
        buf = nb
    buf[k] = value
    return buf


@njit
def finish_pairs(keys, k, stride):
    """Sort the first k pair keys ``i * stride + j`` and unpack them into a (k, 2) int64 array."""
    s = np.sort(keys[:k])
    out = np.empty((k, 2), np.int64)
    for r in range(k):
        out[r, 0] = s[r] // stride
        out[r, 1] = s[r] % stride
    return out


@njit
def order_hits(ids, ts, k):
    """Ids of ray hits ordered by entry fraction, equal fractions by id."""
    ids = ids[:k]
    ts = ts[:k]
    by_id = np.argsort(ids, kind="mergesort")
    ids = ids[by_id]
    ts = ts[by_id]
    by_t = np.argsort(ts, kind="mergesort")
    return ids[by_t].copy()


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
    k = 0
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
    k = 0
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
    k = 0
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
        perm = np.argsort(keys, kind="mergesort")
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
    k = 0
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
#: ``proxy`` the proxy id of a leaf (-1 otherwise); ``meta = [root, free_head, leaf_count]``.
Tree = namedtuple("Tree", ["lo", "hi", "parent", "child1", "child2", "height", "proxy", "meta"])


def tree_new(capacity=16):
    t = Tree(np.zeros((capacity, 2)), np.zeros((capacity, 2)), np.empty(capacity, np.int64),
             np.full(capacity, -1, np.int64), np.full(capacity, -1, np.int64),
             np.full(capacity, -1, np.int64), np.full(capacity, -1, np.int64),
             np.array([-1, 0, 0], np.int64))
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


@njit
def _fit(t, node):
    """Box and height of an internal node from its children."""
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
    """New leaf for a proxy, its box fattened by margin on every side; returns the leaf node."""
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
def tree_move_leaf(t, leaf, lx, ly, ux, uy, dx, dy, margin, multiplier):
    """Move a leaf to the real box (lx, ly, ux, uy) that moved by (dx, dy); True if the tree changed.

    The fat box is the real box plus margin, stretched by multiplier × displacement in the direction of
    motion (a proxy moving steadily stays inside it for several steps). Nothing happens while the real
    box stays inside the leaf's fat box and the fat box is not grossly larger (more than 4 margins) than
    a freshly fattened one would be; otherwise the leaf is removed and reinserted with the new fat box.
    """
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
    tlx = t.lo[leaf, 0]
    tly = t.lo[leaf, 1]
    tux = t.hi[leaf, 0]
    tuy = t.hi[leaf, 1]
    if tlx <= lx and tly <= ly and ux <= tux and uy <= tuy:
        big = 4.0 * margin
        if flx - big <= tlx and fly - big <= tly and tux <= fux + big and tuy <= fuy + big:
            return False
    _tree_remove_leaf(t, leaf)
    t.lo[leaf, 0] = flx
    t.lo[leaf, 1] = fly
    t.hi[leaf, 0] = fux
    t.hi[leaf, 1] = fuy
    _tree_insert_leaf(t, leaf)
    return True


@njit
def tree_update(moving, static, lower, upper, flags, leaf_of, ids, lowers, uppers, margin, multiplier,
                moved, moved_flag, moved_meta):
    """Bulk move: write the new real boxes and move each proxy's leaf in its own tree. Proxies whose
    leaf was reinserted go on the move buffer ``moved[:moved_meta[0]]`` (``moved_flag`` marks them)."""
    for k in range(ids.shape[0]):
        p = ids[k]
        dx = 0.5 * ((lowers[k, 0] + uppers[k, 0]) - (lower[p, 0] + upper[p, 0]))
        dy = 0.5 * ((lowers[k, 1] + uppers[k, 1]) - (lower[p, 1] + upper[p, 1]))
        lower[p, 0] = lowers[k, 0]
        lower[p, 1] = lowers[k, 1]
        upper[p, 0] = uppers[k, 0]
        upper[p, 1] = uppers[k, 1]
        t = static if flags[p] == STATIC else moving
        if tree_move_leaf(t, leaf_of[p], lower[p, 0], lower[p, 1], upper[p, 0], upper[p, 1], dx, dy,
                          margin, multiplier):
            mark_moved(moved, moved_flag, moved_meta, p)


@njit
def mark_moved(moved, moved_flag, moved_meta, p):
    if moved_flag[p] == 0:
        moved_flag[p] = 1
        moved[moved_meta[0]] = p
        moved_meta[0] += 1


@njit
def _tree_collect(t, lower, upper, qlx, qly, qux, quy, stack, out, k, real=True):
    """Append to out (from k) the proxies of t whose real box (with real=False: fat leaf box) overlaps the
    query box; returns (out, k, stack)."""
    root = t.meta[0]
    if root == -1:
        return out, k, stack
    top = 0
    stack[top] = root
    top += 1
    while top > 0:
        top -= 1
        node = stack[top]
        if t.lo[node, 0] > qux or qlx > t.hi[node, 0] or t.lo[node, 1] > quy or qly > t.hi[node, 1]:
            continue
        if t.child1[node] == -1:
            p = t.proxy[node]
            if not real or (lower[p, 0] <= qux and qlx <= upper[p, 0] and lower[p, 1] <= quy
                            and qly <= upper[p, 1]):
                out = _push(out, k, p)
                k += 1
        else:
            if top + 2 > stack.shape[0]:
                ns = np.empty(2 * stack.shape[0], np.int64)
                ns[:top] = stack[:top]
                stack = ns
            stack[top] = t.child1[node]
            stack[top + 1] = t.child2[node]
            top += 2
    return out, k, stack


@njit
def tree_pairs(moving, static, lower, upper, flags, n):
    """Every moving proxy queries the moving tree (keeping partners with a larger id) and the static tree
    with its real box; partners are filtered by their real boxes. Static proxies never query."""
    stride = max(n, 1)
    buf = np.empty(64, np.int64)
    k = 0
    stack = np.empty(64, np.int64)
    hits = np.empty(64, np.int64)
    for i in range(n):
        if flags[i] != MOVING:
            continue
        lx = lower[i, 0]
        ly = lower[i, 1]
        ux = upper[i, 0]
        uy = upper[i, 1]
        hits, h, stack = _tree_collect(moving, lower, upper, lx, ly, ux, uy, stack, hits, 0)
        for a in range(h):
            j = hits[a]
            if j > i:
                buf = _push(buf, k, i * stride + j)
                k += 1
        hits, h, stack = _tree_collect(static, lower, upper, lx, ly, ux, uy, stack, hits, 0)
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


#: when more than this fraction of the proxies moved, one sweep over every fat box finds the candidate pairs
#: faster than a tree query per moved proxy (a pile of 5,000 falling circles: 9 ms of queries)
SWEEP_FRACTION = 0.125


@njit
def _fat_pairs_by_sweep(moving, static, flags, leaf_of):
    """Every pair of live proxies whose fat leaf boxes overlap (not static–static), as sorted keys i << 32 | j.

    Sort and sweep along the axis on which the box centres spread most: after sorting by the lower bound,
    each box is compared with the following ones until their lower bound passes its upper bound."""
    n = flags.shape[0]
    live = 0
    for p in range(n):
        if flags[p] != FREE:
            live += 1
    ids = np.empty(live, np.int64)
    lo = np.empty((live, 2))
    hi = np.empty((live, 2))
    m = 0
    for p in range(n):
        if flags[p] == FREE:
            continue
        t = static if flags[p] == STATIC else moving
        leaf = leaf_of[p]
        ids[m] = p
        lo[m, 0] = t.lo[leaf, 0]
        lo[m, 1] = t.lo[leaf, 1]
        hi[m, 0] = t.hi[leaf, 0]
        hi[m, 1] = t.hi[leaf, 1]
        m += 1
    axis = 0
    if live > 1:
        cx = 0.5 * (lo[:, 0] + hi[:, 0])
        cy = 0.5 * (lo[:, 1] + hi[:, 1])
        if cy.var() > cx.var():
            axis = 1
    other = 1 - axis
    order = np.argsort(lo[:, axis], kind="mergesort")
    keys = np.empty(64, np.int64)
    k = 0
    for a in range(live):
        i = order[a]
        upper_i = hi[i, axis]
        for b in range(a + 1, live):
            j = order[b]
            if lo[j, axis] > upper_i:
                break
            if lo[j, other] > hi[i, other] or lo[i, other] > hi[j, other]:
                continue
            pi = ids[i]
            pj = ids[j]
            if flags[pi] == STATIC and flags[pj] == STATIC:
                continue
            keys = _push(keys, k, (min(pi, pj) << _KEY_SHIFT) | max(pi, pj))
            k += 1
    return np.sort(keys[:k])


@njit
def tree_pairs_cached(moving, static, lower, upper, flags, leaf_of, moved, moved_flag, moved_meta, cand):
    """Pairs from a cache of candidate pairs (Box2D's pair buffer), O(candidates + moved log n).

    Invariant: ``cand`` (sorted keys ``i << 32 | j``, i < j) holds every pair of proxies whose *fat*
    leaf boxes overlap. Fat boxes change only when a leaf is (re)inserted, and such proxies are on the
    move buffer, so querying the trees with the fat box of each buffered proxy finds every new fat
    overlap. Merged with the old cache, pairs that no longer fat-overlap (or whose proxy is gone) are
    dropped; of the rest, those whose real boxes overlap are the answer, already in sorted order.
    Returns ``(pairs, new_cand)`` and empties the move buffer.
    """
    live = 0
    for p in range(flags.shape[0]):
        if flags[p] != FREE:
            live += 1
    if moved_meta[0] > SWEEP_FRACTION * live:
        out = _fat_pairs_by_sweep(moving, static, flags, leaf_of)
        res = np.empty(out.shape[0], np.int64)
        r = 0
        for c in range(out.shape[0]):
            if overlap(lower, upper, out[c] >> _KEY_SHIFT, out[c] & _KEY_MASK):
                res[r] = out[c]
                r += 1
        for a in range(moved_meta[0]):
            moved_flag[moved[a]] = 0
        moved_meta[0] = 0
        pairs = np.empty((r, 2), np.int64)
        for c in range(r):
            pairs[c, 0] = res[c] >> _KEY_SHIFT
            pairs[c, 1] = res[c] & _KEY_MASK
        return pairs, out
    stack = np.empty(64, np.int64)
    hits = np.empty(64, np.int64)
    new = np.empty(64, np.int64)
    k = 0
    for a in range(moved_meta[0]):
        p = moved[a]
        if flags[p] == FREE:
            continue
        t = static if flags[p] == STATIC else moving
        leaf = leaf_of[p]
        lx = t.lo[leaf, 0]
        ly = t.lo[leaf, 1]
        ux = t.hi[leaf, 0]
        uy = t.hi[leaf, 1]
        hits, h, stack = _tree_collect(moving, lower, upper, lx, ly, ux, uy, stack, hits, 0, False)
        if flags[p] == MOVING:
            hits, h, stack = _tree_collect(static, lower, upper, lx, ly, ux, uy, stack, hits, h, False)
        for b in range(h):
            q = hits[b]
            if q == p or (moved_flag[q] and q < p and flags[q] != FREE):
                continue           # the pair of two moved proxies is added once, by the smaller one's query
            if p < q:
                new = _push(new, k, (p << _KEY_SHIFT) | q)
            else:
                new = _push(new, k, (q << _KEY_SHIFT) | p)
            k += 1
    new = np.sort(new[:k])
    # merge the sorted cache and the sorted new keys, dropping duplicates and dead pairs
    out = np.empty(cand.shape[0] + k, np.int64)
    res = np.empty(64, np.int64)
    m = 0
    r = 0
    a = 0
    b = 0
    last = np.int64(-1)
    while a < cand.shape[0] or b < k:
        if b >= k or (a < cand.shape[0] and cand[a] <= new[b]):
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
            ti = static if flags[i] == STATIC else moving
            tj = static if flags[j] == STATIC else moving
            li = leaf_of[i]
            lj = leaf_of[j]
            if (tj.lo[lj, 0] > ti.hi[li, 0] or ti.lo[li, 0] > tj.hi[lj, 0]
                    or tj.lo[lj, 1] > ti.hi[li, 1] or ti.lo[li, 1] > tj.hi[lj, 1]):
                continue
        out[m] = key
        m += 1
        if overlap(lower, upper, i, j):
            res = _push(res, r, key)
            r += 1
    for a in range(moved_meta[0]):
        moved_flag[moved[a]] = 0
    moved_meta[0] = 0
    pairs = np.empty((r, 2), np.int64)
    for c in range(r):
        pairs[c, 0] = res[c] >> _KEY_SHIFT
        pairs[c, 1] = res[c] & _KEY_MASK
    return pairs, out[:m].copy()


@njit
def tree_query(moving, static, lower, upper, qlx, qly, qux, quy):
    stack = np.empty(64, np.int64)
    out = np.empty(64, np.int64)
    out, k, stack = _tree_collect(moving, lower, upper, qlx, qly, qux, quy, stack, out, 0)
    out, k, stack = _tree_collect(static, lower, upper, qlx, qly, qux, quy, stack, out, k)
    return np.sort(out[:k])


@njit
def _tree_ray(t, lower, upper, ox, oy, dx, dy, stack, ids, ts, k):
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
                ns[:top] = stack[:top]
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
    ids, ts, k, stack = _tree_ray(moving, lower, upper, ox, oy, dx, dy, stack, ids, ts, 0)
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
    k = 0
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
    no = 0
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
