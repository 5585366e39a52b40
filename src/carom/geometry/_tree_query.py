"""Walking the dynamic trees: all overlapping pairs by descending both trees, box queries and ray casts.

Part of the broad phases' compiled kernels (the layout of the shared proxy storage: ``_pairs``; the
classes over them: :mod:`carom.geometry.broadphase`). Plain ``njit`` functions over arrays and scalars, so a
compiled world step can call them directly; nothing recurses (trees are walked with explicit stacks).
"""
import numpy as np

from .._jit import njit, borrowed
from ._pairs import MOVING, _grown, _push, finish_pairs, order_hits, ray_box_fraction
from ._tree import tree_fit


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
