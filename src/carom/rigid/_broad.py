"""The broad stage (``broad_stage``): the moved proxies' boxes into the dynamic trees, then the candidate pairs
as sorted keys ``a << 32 | b`` (a < b), filtered by the shapes' category, mask and group and by the body pairs
joints keep apart, and the pair cache for the next step.
"""
import numpy as np

from numba import prange

from .._jit import njit, pnjit, deref, index_range
from ..geometry._tree import tree_insert_pending
from ..geometry._tree_pairs import tree_pairs_cached, tree_update_threads, joined_parts, _sorted_keys
from ._contact_rows import chunk_count
from ._layout import DYNAMIC, KEY_SHIFT, KEY_MASK


@njit
def should_collide(cat_a, mask_a, group_a, cat_b, mask_b, group_b):
    """Box2D's filter rule: a shared nonzero group decides (positive: always, negative: never); otherwise
    each shape's category bits must meet the other's mask."""
    if group_a == group_b and group_a != 0:
        return group_a > 0
    zero = np.uint64(0)
    return (cat_a & mask_b) != zero and (cat_b & mask_a) != zero


@njit
def live_proxy_boxes(shape_alive, shape_proxy, lower, upper, shape_sensor, shape_category, shape_mask,
                     shape_group):
    """The broad-phase proxy of every live shape with its box this step: (ids, lowers, uppers), the input
    of ``tree_update``, and ``plain``: True when no live shape is a sensor or has a collision filter other
    than the default (group 0, all mask bits, some category bit), so that should_collide holds for every
    pair and sensor–sensor pairs cannot occur (read here, in order, instead of per pair in random order).
    When every shape is alive (no shape removed since its slot was last filled: the usual case) these are
    the step's own arrays, not copies (the copy was 25 µs a step for 5,000 shapes)."""
    S = shape_alive.shape[0]
    all_bits = ~np.uint64(0)
    zero = np.uint64(0)
    plain = True
    n = 0
    # (without branches, so that the compiler vectorizes the pass)
    for s in index_range(0, S):
        alive = shape_alive[s]
        n += np.int64(alive)
        plain &= (not alive) | ((not shape_sensor[s]) & (shape_group[s] == 0) & (shape_mask[s] == all_bits)
                                & (shape_category[s] != zero))
    if n == S:
        return shape_proxy, lower, upper, plain
    ids = np.empty(n, np.int64)
    lowers = np.empty((n, 2))
    uppers = np.empty((n, 2))
    n = 0
    for s in range(S):
        if shape_alive[s]:
            ids[n] = shape_proxy[s]
            lowers[n, 0] = lower[s, 0]
            lowers[n, 1] = lower[s, 1]
            uppers[n, 0] = upper[s, 0]
            uppers[n, 1] = upper[s, 1]
            n += 1
    return ids, lowers, uppers, plain


@njit
def broad_stage(bodies, shapes, tree, shape_proxy, proxy_shape, lower, upper, threads, joined):
    """Candidate shape pairs, sorted by key ``a << 32 | b`` (a < b), that pass the filter.

    The dynamic tree (carom.geometry.broadphase) keeps fat boxes: a shape that stays inside its fat box
    costs nothing, and candidate pairs are cached between steps (only leaves given new fat boxes are queried).
    Pairs of one body, pairs without a dynamic body and sensor–sensor pairs are dropped, and so are pairs of two
    bodies a joint joins without ``collide_connected`` (``joined``: their body keys, sorted).
    """
    bodies = deref(bodies)
    shapes = deref(shapes)
    kind = bodies.kind
    shape_body, shape_alive = shapes.body, shapes.alive
    shape_sensor, shape_category, shape_mask, shape_group = shapes.sensor, shapes.category, shapes.mask, shapes.group
    (bp_moving, bp_static, bp_lower, bp_upper, bp_flags, bp_leaf, bp_moved, bp_moved_flag, bp_moved_meta,
     bp_cand, bp_margin, bp_multiplier) = tree
    # the leaves of shapes added since the last step (the tree's deferred insertion)
    tree_insert_pending(bp_moving, bp_static, bp_lower, bp_upper, bp_flags, bp_leaf, bp_flags.shape[0], bp_margin,
                        bp_moved, bp_moved_flag, bp_moved_meta)
    ids, lowers, uppers, plain = live_proxy_boxes(shape_alive, shape_proxy, lower, upper, shape_sensor,
                                                  shape_category, shape_mask, shape_group)
    tree_update_threads(bp_moving, bp_static, bp_lower, bp_upper, bp_flags, bp_leaf, ids, lowers, uppers, bp_margin,
                        bp_multiplier, bp_moved, bp_moved_flag, bp_moved_meta, threads)
    proxy_keys, new_cand = tree_pairs_cached(bp_moving, bp_static, bp_lower, bp_upper, bp_flags, bp_leaf,
                                             bp_moved, bp_moved_flag, bp_moved_meta, bp_cand, threads)
    P = proxy_keys.shape[0]
    keys = np.empty(P, np.int64)
    jfirst = _joined_first(joined)
    chunks = chunk_count(P, threads)
    if chunks == 1:
        K, ordered, _, _ = _shape_pairs_run(np.int64(0), P, proxy_keys, proxy_shape, shape_body, kind, plain,
                                            shape_sensor, shape_category, shape_mask, shape_group, joined, jfirst,
                                            keys, np.int64(0))
    else:
        # in parts, each writing its pairs from its own first proxy pair on, then moved down after the one before
        # (a part has at most as many pairs as proxy pairs): the same keys in the same order
        part = np.empty((chunks, 4), np.int64)
        _shape_pairs_parts(chunks, proxy_keys, proxy_shape, shape_body, kind, plain, shape_sensor, shape_category,
                           shape_mask, shape_group, joined, jfirst, keys, part)
        K, _ = joined_parts(keys, part, P, chunks)
        ordered = True
        last = np.int64(-1)
        for ch in range(chunks):
            if part[ch, 0] != 0:
                ordered = ordered and part[ch, 1] != 0 and part[ch, 2] > last
                last = part[ch, 3]
    # proxies are usually numbered like their shapes, and then the pairs come out already in key order
    if not ordered:
        return _sorted_keys(keys, K), new_cand        # (Numba's np.sort: a second of cold compile)
    return keys[:K], new_cand


@pnjit
def _shape_pairs_parts(chunks, proxy_keys, proxy_shape, shape_body, kind, plain, shape_sensor, shape_category,
                       shape_mask, shape_group, joined, jfirst, keys, part):
    """:func:`_shape_pairs_run` in ``chunks`` parallel parts of the proxy pairs, part ch writing its pairs to keys
    from its first proxy pair's index on; ``part[ch]``: how many, whether in order, the first and the last."""
    P = proxy_keys.shape[0]
    for ch in prange(chunks):
        q0 = ch * P // chunks
        got, ordered, first, last = _shape_pairs_run(q0, (ch + 1) * P // chunks, proxy_keys, proxy_shape, shape_body,
                                                     kind, plain, shape_sensor, shape_category, shape_mask,
                                                     shape_group, joined, jfirst, keys, q0)
        part[ch, 0] = got
        part[ch, 1] = np.int64(ordered)
        part[ch, 2] = first
        part[ch, 3] = last


@njit
def _shape_pairs_run(q0, q1, proxy_keys, proxy_shape, shape_body, kind, plain, shape_sensor, shape_category,
                     shape_mask, shape_group, joined, jfirst, keys, at):
    """The shape pairs of proxy pairs q0 … q1 − 1 (``broad_stage``) that pass the filter, as keys written to
    ``keys`` from index ``at`` on: (how many, whether in ascending order, the first, the last). Dropped: pairs of one body,
    without a dynamic body, of two sensors, that the filter rule refuses, or of two bodies a joint keeps apart."""
    K = np.int64(0)          # (not a literal 0: _sorted_keys would be compiled for Literal[int](0) too)
    ordered = True
    first = np.int64(-1)
    last = np.int64(-1)
    for q in range(q0, q1):
        # (indices as unsigned: no check for negative ones, ``index_range``)
        sa = proxy_shape[np.uint64(proxy_keys[q] >> KEY_SHIFT)]
        sb = proxy_shape[np.uint64(proxy_keys[q] & KEY_MASK)]
        ba = shape_body[np.uint64(sa)]
        bb = shape_body[np.uint64(sb)]
        if ba == bb or (kind[np.uint64(ba)] != DYNAMIC and kind[np.uint64(bb)] != DYNAMIC):
            continue
        # (with no sensors and the default filter everywhere, ``plain``, nothing more is read)
        if not plain and ((shape_sensor[sa] and shape_sensor[sb]) or not should_collide(
                shape_category[sa], shape_mask[sa], shape_group[sa], shape_category[sb], shape_mask[sb],
                shape_group[sb])):
            continue
        if joined.shape[0] > 0 and _joined_has(joined, jfirst, min(ba, bb), max(ba, bb)):
            continue
        key = (min(sa, sb) << KEY_SHIFT) | max(sa, sb)
        keys[at + K] = key
        if K == 0:
            first = key
        K += 1
        ordered = ordered and key > last
        last = key
    return K, ordered, first, last


@njit
def _joined_first(joined):
    """Where each body's keys begin in ``joined`` (the sorted keys ``a << 32 | b``, a < b, of the body pairs joints
    keep apart): entry a for each a up to the largest first body of a key, and one more, the end. Built each step
    (one pass over the keys): the candidate pairs then look up only their own body's few keys, where a binary search
    of all of them (ten steps and more for a crowd of ragdolls) was 0.17 ms of rain's broad stage."""
    J = joined.shape[0]
    if J == 0:
        return np.zeros(1, np.int64)
    top = (joined[J - 1] >> KEY_SHIFT) + 1
    first = np.zeros(top + 1, np.int64)
    for k in range(J):
        first[(joined[k] >> KEY_SHIFT) + 1] += 1
    for a in range(top):
        first[a + 1] += first[a]
    return first


@njit
def _joined_has(joined, first, a, b):
    """Whether the key ``a << 32 | b`` (a < b) is in ``joined``, whose keys of first body a are
    ``joined[first[a]:first[a + 1]]`` (``_joined_first``)."""
    if a >= first.shape[0] - 1:
        return False
    key = (a << KEY_SHIFT) | b
    for k in range(first[a], first[a + 1]):
        if joined[k] >= key:
            return joined[k] == key
    return False
