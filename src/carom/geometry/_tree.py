"""The dynamic AABB tree's storage and upkeep: the node pool (:data:`Tree`), inserting, removing and moving
leaves with fat boxes, rotations that keep it balanced, refitting or rebuilding it, pending insertions.

Part of the broad phases' compiled kernels (the layout of the shared proxy storage: ``_pairs``; the
classes over them: :mod:`carom.geometry.broadphase`). Plain ``njit`` functions over arrays and scalars, so a
compiled world step can call them directly; nothing recurses (trees are walked with explicit stacks).
"""
from collections import namedtuple
import numpy as np

from .._jit import njit, inline_njit, index_range
from ._pairs import FREE, STATIC, overlap


#: Node pool of one tree. ``lo``/``hi`` (cap, 2) fat boxes; ``parent``, ``child1``, ``child2`` node
#: indices (-1 for none; a free node's ``parent`` links the free list); ``height`` (leaf 0, free -1);
#: ``proxy`` the proxy id of a leaf (-1 otherwise); ``meta = [root, free_head, leaf_count, quality, stale,
#: enlarged]``: quality as in :func:`tree_refit_or_rebuild`, stale 1 while the inner nodes' boxes wait for a refit
#: (:func:`tree_fit`), enlarged the leaves moved in place since the last refit (:func:`move_leaves`).
Tree = namedtuple("Tree", ["lo", "hi", "parent", "child1", "child2", "height", "proxy", "meta"])


def tree_new(capacity=16):
    t = Tree(np.zeros((capacity, 2)), np.zeros((capacity, 2)), np.empty(capacity, np.int64),
             np.full(capacity, -1, np.int64), np.full(capacity, -1, np.int64),
             np.full(capacity, -1, np.int64), np.full(capacity, -1, np.int64),
             np.array([-1, 0, 0, 0, 0, 0], np.int64))
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
def tree_destroy_leaves(moving, static, flags, leaf_of, pids, moved_meta):
    """The leaves of the proxies ``pids`` destroyed one after the other, each in its tree (``flags``: static or
    moving), and their ``leaf_of`` entries −1; a proxy still waiting for its leaf (deferred insertion) is only
    taken off the count of those, ``moved_meta[2]``. One compiled call for many removals (a world's
    ``remove_bodies``), where a call per proxy cost about 5 µs of Python each."""
    for p in pids:
        leaf = leaf_of[p]
        if leaf < 0:
            moved_meta[2] -= 1
            continue
        t = static if flags[p] == STATIC else moving
        tree_destroy_leaf(t, leaf)
        leaf_of[p] = -1


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
    most ``SWEEP_FRACTION`` of the live proxies must move, their leaves keep their places, the ancestors grown
    to hold the new boxes (:func:`move_leaves`). If more did, a tree in which more than that fraction of
    the leaves moved is marked stale: its inner boxes are refitted, or the tree rebuilt
    (:func:`tree_refit_or_rebuild`), by the first reader that needs them (:func:`tree_fit`), and the other
    tree's few movers keep their places likewise. The move buffer gets the moved proxies in the order of
    ``ids`` either way.

    Why stale: in a busy step (a falling pile, a smash) the pairs come from a grid over the boxes
    (:func:`tree_pairs_cached`), and with static proxies of at most a grid cell (a floor of tiles: looked up in
    the grid) or few larger ones, and few moving ones left out of the grid (walls, a projectile:
    ``STALE_SCAN_LIMIT``) nothing reads the moving tree until the crowd calms down, so a refit
    each step (50 µs for 5,000 leaves, and a rebuild of 0.4 ms whenever the refitted tree grew too loose)
    is paid once at the end instead.

    A world step runs the first pass in parallel parts (``carom.geometry._tree_pairs.tree_update_threads``).
    """
    m = ids.shape[0]
    pending = np.empty(m, np.int64)
    count, count_static = fat_boxes_run(np.int64(0), m, moving, static, lower, upper, flags, leaf_of, ids, lowers,
                                        uppers, margin, multiplier, pending, np.zeros(flags.shape[0], np.int8))
    move_leaves(moving, static, flags, leaf_of, moved, moved_flag, moved_meta, pending, count, count_static)


@njit
def fat_boxes_run(lo, hi, moving, static, lower, upper, flags, leaf_of, ids, lowers, uppers, margin, multiplier,
                  pending, seen):
    """The first pass of :func:`tree_update` over ``ids[lo:hi]``: each proxy's real box written, and its leaf's
    fat box where the leaf must move; those proxies written to ``pending`` from index lo, each once (``seen``:
    a flag per proxy; empty where the ids are known to be distinct, as in parts of the pass run in parallel,
    ``carom.geometry._tree_pairs.tree_update_threads``). Returns (how many, how many of them static)."""
    mlo, mhi, slo, shi = moving.lo, moving.hi, static.lo, static.hi
    count = 0
    count_static = 0
    for k in index_range(lo, hi):
        # (indices as unsigned: no check for negative ones, ``carom._jit.index_range``)
        p = np.uint64(ids[k])
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
        leaf = np.uint64(leaf_of[p])
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
        if seen.shape[0] == 0 or seen[p] == 0:
            if seen.shape[0] > 0:
                seen[p] = 1
            pending[lo + count] = p
            count += 1
            if flags[p] == STATIC:
                count_static += 1
    return count, count_static


@njit
def move_leaves(moving, static, flags, leaf_of, moved, moved_flag, moved_meta, pending, count, count_static):
    """The second pass of :func:`tree_update`: the ``count`` proxies ``pending[:count]`` (``count_static`` of
    them static) whose leaves got new fat boxes moved in place one by one (:func:`_tree_enlarge_leaf`), or their
    trees marked stale, and put on the move buffer in that order. A tree with more than 1 / ``REFIT_AFTER`` of its
    leaves moved in place since its last refit is marked stale too."""
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
            _tree_enlarge_leaf(static, leaf_of[p])
        elif not is_static and not rebuild_moving:
            _tree_enlarge_leaf(moving, leaf_of[p])
        if moved_flag[p] == 0:            # mark_moved, written out (a call per proxy costs more)
            moved_flag[p] = 1
            moved[moved_meta[0]] = p
            moved_meta[0] += 1
    # a tree whose leaves moved in place for long enough is refitted, or rebuilt (``tree_refit_or_rebuild``), by
    # the next reader
    if rebuild_moving or moving.meta[5] * REFIT_AFTER > moving.meta[2]:
        moving.meta[4] = 1
    if rebuild_static or static.meta[5] * REFIT_AFTER > static.meta[2]:
        static.meta[4] = 1


#: a tree is refitted once more than 1 / REFIT_AFTER of its leaves were moved in place (:func:`_tree_enlarge_leaf`)
#: since its last refit: often enough that the boxes its inner nodes kept from before stay few, and seldom enough
#: that the refit, a pass over the whole tree, costs a fraction of what the reinsertions did
REFIT_AFTER = 8


@njit
def _tree_enlarge_leaf(t, leaf):
    """A leaf whose fat box was set anew, kept in its place in the tree: its ancestors grown to hold the new box,
    up to the first that holds it already (after Box2D v3's ``b2DynamicTree_EnlargeProxy``), and the count of such
    leaves since the last refit (``meta[5]``) raised.

    Why not removed and inserted again by the perimeter descent (as before): that refits and rebalances every
    ancestor twice, 0.8 µs a leaf, and the tall pyramid, swaying, moves some 50 leaves a step: a quarter of its broad
    stage. In place it is a few box unions. The ancestors' boxes then still hold the leaf's old box too (they only
    grow), and a leaf that went far keeps its old neighbours, so queries visit more nodes; the refit after
    ``REFIT_AFTER`` (:func:`move_leaves`) shrinks the boxes back, and rebuilds the tree when its shape has grown
    markedly worse (:func:`tree_refit_or_rebuild`). A stale tree's inner boxes are all refitted by its next reader,
    so they need not be grown here."""
    t.meta[5] += 1
    if t.meta[4] != 0:
        return
    lx = t.lo[leaf, 0]
    ly = t.lo[leaf, 1]
    ux = t.hi[leaf, 0]
    uy = t.hi[leaf, 1]
    node = t.parent[leaf]
    while node != -1:
        if t.lo[node, 0] <= lx and t.lo[node, 1] <= ly and ux <= t.hi[node, 0] and uy <= t.hi[node, 1]:
            return             # (and so do its ancestors)
        t.lo[node, 0] = min(t.lo[node, 0], lx)
        t.lo[node, 1] = min(t.lo[node, 1], ly)
        t.hi[node, 0] = max(t.hi[node, 0], ux)
        t.hi[node, 1] = max(t.hi[node, 1], uy)
        node = t.parent[node]


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
    t.meta[5] = 0
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
    t.meta[5] = 0
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
