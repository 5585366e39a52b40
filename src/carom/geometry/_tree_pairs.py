"""The pairs of the dynamic trees for a world step: new pairs of moved proxies found in a grid of their
boxes (large ones on their own), merged with the cached pairs of proxies that did not move (pair keys
``i << 32 | j``).

Part of the broad phases' compiled kernels (the layout of the shared proxy storage: ``_pairs``; the
classes over them: :mod:`carom.geometry.broadphase`). Plain ``njit`` functions over arrays and scalars, so a
compiled world step can call them directly; nothing recurses (trees are walked with explicit stacks).
"""
import numpy as np
from numba import prange

import numba

from .._jit import (njit, pnjit, inline_njit, llvm_inline_njit, borrowed, apart_njit, apart_caller, apart_loaded,
                   index_range)
from ._pairs import FREE, MOVING, STATIC, _KEY_MASK, _KEY_SHIFT, KEY_STRIDE, _grown, overlap, unpack_keys
from ._tree import SWEEP_FRACTION, fat_boxes_run, move_leaves, tree_fit
from ._tree_query import _tree_collect
from ._grid import _hash, cell_of




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
    fewer of them than moving proxies, each one of at most a cell looks up its partners in the 3 × 3 cells
    around it and each larger one queries the moving tree (:func:`_static_grid_pairs`), otherwise each moving
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
    statics_done = False
    if 1 < m <= FEW_MOVING and _finite_boxes(box):
        # a few moving proxies (a small world: a lander, a walker): every pair tested, in ascending id order;
        # the grid finds exactly the pairs of finite boxes that pass this test (each once), so after the sort
        # below the keys are the same, without the grid's dozen arrays and its median
        for a in range(m):
            p = ids[a]
            lx = box[a, 0]
            ly = box[a, 1]
            ux = box[a, 2]
            uy = box[a, 3]
            for b in range(a + 1, m):
                ok = (box[b, 0] <= ux) & (lx <= box[b, 2]) & (box[b, 1] <= uy) & (ly <= box[b, 3])
                keys[k] = (p << _KEY_SHIFT) | ids[b]      # (ids ascending: p < ids[b]) written always, kept if ok
                k += np.int64(ok)
    elif m > 1:
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
        # moving–static pairs from the grid when the static proxies are fewer (no query of the moving tree, which
        # would have to be refitted): those of at most a cell are looked up in the grid's cells with its entries
        # (in the same parts), the others below (:func:`_static_grid_pairs`)
        by_grid = count > 0 and 0 < static.meta[2] <= m
        smalls, sbox, bigs = _static_boxes(static, flags, leaf_of, lower, upper, real, cell, by_grid)
        keys, k = _grid_entry_pairs_split(start, cx_of, cy_of, ebox, eid, dense, gx0, gy0, gx1, gy1, mask, keys, k,
                                          threads, smalls, sbox, cell)
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
                # q's position in ids (ascending; q is a moving proxy, so it is there)
                lo = _first_at_least(ids, np.int64(0), m, q)
                if not binned[lo] and lo < a:
                    continue        # two unbinned proxies: the first one's test keeps the pair
                if k >= keys.shape[0]:
                    keys = _grown(keys, k, k + 1)
                keys[k] = (min(p, q) << _KEY_SHIFT) | max(p, q)
                k += 1
        if by_grid:
            keys, k = _static_grid_pairs(static, moving, leaf_of, lower, upper, real, cell, bigs, ids, loose[:nl], box,
                                         keys, k)
            statics_done = True
    # moving–static pairs: the fewer side queries the other side's tree; a few static proxies test the moving
    # boxes in turn rather than refit a stale moving tree (``tree_fit``) for their queries
    if m > 0 and static.meta[2] > 0 and not statics_done:
        if static.meta[2] <= STALE_SCAN_LIMIT and moving.meta[4] != 0:
            keys, k = _cross_scan(static, flags, leaf_of, lower, upper, ids, box, keys, k, real)
        elif static.meta[2] <= m:
            keys, k = _cross_pairs(static, moving, np.int64(STATIC), flags, leaf_of, lower, upper, keys, k, real)
        else:
            keys, k = _cross_pairs(moving, static, np.int64(MOVING), flags, leaf_of, lower, upper, keys, k, real)
    return _keys_in_order(keys, k, n)


#: up to this many moving proxies, their pairs are found by testing every pair (``_pairs_by_grid``): at most
#: 28 pairs, which the key array's 64 entries hold
FEW_MOVING = 8


@njit
def _static_boxes(static, flags, leaf_of, lower, upper, real, cell, by_grid):
    """For :func:`_pairs_by_grid`'s moving–static pairs from the grid (``by_grid``; else nothing): the static
    proxies whose box (fat, or with ``real`` real) is at most a cell wide and high, with those boxes (rows lx, ly,
    ux, uy), and the others (larger, or not finite), each in ascending order."""
    if not by_grid:
        return np.empty(0, np.int64), np.empty((0, 4)), np.empty(0, np.int64)
    statics = _proxies_of(flags, np.int64(STATIC), static.meta[2])
    smalls = np.empty(statics.shape[0], np.int64)
    sbox = np.empty((statics.shape[0], 4))
    bigs = np.empty(statics.shape[0], np.int64)
    ns = 0
    nb = 0
    for p in statics:
        lx, ly, ux, uy = _query_box(static, leaf_of, lower, upper, p, real)
        if ux - lx <= cell and uy - ly <= cell:        # (false for a box that is not finite)
            smalls[ns] = p
            sbox[ns, 0] = lx
            sbox[ns, 1] = ly
            sbox[ns, 2] = ux
            sbox[ns, 3] = uy
            ns += 1
        else:
            bigs[nb] = p
            nb += 1
    return smalls[:ns], sbox[:ns], bigs[:nb]


@njit
def _static_cells_run(t0, t1, smalls, sbox, cell, start, cx_of, cy_of, ebox, eid, dense, gx0, gy0, gx1, gy1, mask,
                      keys, k):
    """The moving–static pairs of the static proxies ``smalls[t0:t1]`` (boxes ``sbox``, each at most a cell wide
    and high) with the binned moving proxies of :func:`_pairs_by_grid`'s grid (entries ``ebox``, ``eid`` by
    bucket, ``start``; cells as there), appended to keys from k while keys has room for every candidate of a
    static proxy. Returns (the proxy it stopped at, k): t1 when done, else one whose candidates did not fit,
    with k as it was before that proxy.

    Such a static box meets a binned box only if their lower corners are less than a cell apart on each axis
    (both are at most a cell: the grid's own argument), so only the 3 × 3 cells around its lower corner's cell
    hold its partners: about as many box tests as a moving proxy makes, where a query of the moving tree walks
    its nodes and first needs the tree refitted after the step's bulk move (a rain of 11,000 bodies over 2,505
    ground boxes: a query and a refit were 5 % of the step)."""
    height = gy1 - gy0 + 1
    cap = keys.shape[0]
    for t in range(t0, t1):
        k_static = k
        p = smalls[t]
        lx = sbox[t, 0]
        ly = sbox[t, 1]
        ux = sbox[t, 2]
        uy = sbox[t, 3]
        cx = cell_of(lx, cell)
        cy = cell_of(ly, cell)
        for tx in range(cx - 1, cx + 2):
            for r in range(1 if dense else 3):
                if dense:
                    # the column's cells cy − 1 … cy + 1 within the occupied box: one run of buckets
                    if tx < gx0 or tx > gx1:
                        continue
                    y0 = max(cy - 1, gy0)
                    y1 = min(cy + 1, gy1)
                    if y1 < y0:
                        continue
                    b0 = (tx - gx0) * height + (y0 - gy0)
                    f0 = start[b0]
                    f1 = start[b0 + (y1 - y0) + 1]
                    ty = cy
                else:
                    ty = cy - 1 + r
                    b0 = _hash(tx, ty, mask)
                    f0 = start[b0]
                    f1 = start[b0 + 1]
                if f1 <= f0:
                    continue
                if k + (f1 - f0) > cap:
                    return t, k_static
                for f in range(f0, f1):
                    q = eid[f]
                    ok = (ebox[f, 0] <= ux) & (lx <= ebox[f, 2]) & (ebox[f, 1] <= uy) & (ly <= ebox[f, 3])
                    if not dense:       # (a bucket may hold several cells)
                        ok = ok & (cx_of[f] == tx) & (cy_of[f] == ty)
                    keys[k] = (min(p, q) << _KEY_SHIFT) | max(p, q)      # written always, kept if ok
                    k += np.int64(ok)
    return t1, k


@njit
def _static_cells_pairs(t0, t1, smalls, sbox, cell, start, cx_of, cy_of, ebox, eid, dense, gx0, gy0, gx1, gy1, mask,
                        keys, k):
    """:func:`_static_cells_run` of ``smalls[t0:t1]`` to the end, keys grown as it fills: (keys, k)."""
    t = t0
    while t < t1:
        t, k = _static_cells_run(t, t1, smalls, sbox, cell, start, cx_of, cy_of, ebox, eid, dense, gx0, gy0, gx1,
                                 gy1, mask, keys, k)
        if t < t1:
            keys = _grown(keys, k, 2 * k + 9 * (cx_of.shape[0] + 1))
    return keys, k


@njit
def _static_grid_pairs(static, moving, leaf_of, lower, upper, real, cell, bigs, ids, loose, box, keys, k):
    """The moving–static pairs of :func:`_pairs_by_grid` that its grid's cells do not give
    (:func:`_static_cells_run` gives those of the static proxies of at most a cell), appended to keys from k:
    (keys, k).

    A larger static proxy (``bigs``) queries the moving tree for all its partners (while the tree is stale and
    there are at most ``STALE_SCAN_LIMIT`` of them, it tests every moving box ``box`` in turn instead); each
    moving proxy left out of the grid (``loose``: positions in ``ids``) queries the static tree and keeps the
    static proxies of at most a cell. So every overlapping pair is found once, as the queries find it: the
    same boxes, the same inclusive test."""
    stack = np.empty(64, np.int64)
    hits = np.empty(64, np.int64)
    # (borrowed views: each call below would otherwise take and drop a reference on each array, atomics on
    # every static proxy: 2,505 of them in Box2D's rain)
    static, moving, leaf_of, lower, upper = borrowed((static, moving, leaf_of, lower, upper))
    # a few large ones test every moving box in turn rather than refit a stale moving tree (as ``_cross_scan``)
    scan = moving.meta[4] != 0 and bigs.shape[0] <= STALE_SCAN_LIMIT
    for p in bigs:
        lx, ly, ux, uy = _query_box(static, leaf_of, lower, upper, p, real)
        if scan:
            keys, k = _scan_boxes(p, lx, ly, ux, uy, ids, box, keys, k)
            continue
        hits, h, stack = _tree_collect(moving, lower, upper, lx, ly, ux, uy, stack, hits, np.int64(0), real)
        for c in range(h):
            q = hits[c]
            if k >= keys.shape[0]:
                keys = _grown(keys, k, k + 1)
            keys[k] = (min(p, q) << _KEY_SHIFT) | max(p, q)
            k += 1
    for a in loose:
        q = ids[a]
        hits, h, stack = _tree_collect(static, lower, upper, box[a, 0], box[a, 1], box[a, 2], box[a, 3], stack, hits,
                                       np.int64(0), real)
        for c in range(h):
            p = hits[c]
            lx, ly, ux, uy = _query_box(static, leaf_of, lower, upper, p, real)
            if not (ux - lx <= cell and uy - ly <= cell):
                continue                # (the static proxy's own query of the moving tree finds the pair)
            if k >= keys.shape[0]:
                keys = _grown(keys, k, k + 1)
            keys[k] = (min(p, q) << _KEY_SHIFT) | max(p, q)
            k += 1
    return keys, k


@njit
def _finite_boxes(box):
    """Whether every coordinate of the boxes (rows lx, ly, ux, uy) is finite."""
    for a in range(box.shape[0]):
        for c in range(4):
            if not np.isfinite(box[a, c]):
                return False
    return True


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
    # (borrowed views: no references taken per proxy by the calls below)
    source, target, leaf_of, lower, upper = borrowed((source, target, leaf_of, lower, upper))
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
    # (borrowed views: no references taken per proxy by the calls below)
    static, leaf_of, lower, upper, ids, box = borrowed((static, leaf_of, lower, upper, ids, box))
    for p in _proxies_of(flags, np.int64(STATIC), static.meta[2]):
        lx, ly, ux, uy = _query_box(static, leaf_of, lower, upper, p, real)
        keys, k = _scan_boxes(p, lx, ly, ux, uy, ids, box, keys, k)
    return keys, k


@njit
def _scan_boxes(p, lx, ly, ux, uy, ids, box, keys, k):
    """The pairs of proxy p, of box [lx, ux] × [ly, uy], with each of the proxies ``ids`` whose box ``box`` overlaps
    it, by a test of every box in turn, appended to keys from k: (keys, k)."""
    m = ids.shape[0]
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
def _grid_entry_pairs_split(start, cx_of, cy_of, box, ids, dense, gx0, gy0, gx1, gy1, mask, keys, k, threads, smalls,
                            sbox, cell):
    """:func:`_grid_entry_pairs` in ``threads`` parts of the entries, in parallel (:func:`_grid_entry_parts`), each
    part also with its share of the small static proxies ``smalls`` (boxes ``sbox``: :func:`_static_cells_run`),
    then the parts' pairs appended to keys in order: (keys, k). The keys are sorted afterwards, so neither
    the split nor the order of the parts changes the answer. A part whose buffer (8 keys per entry, as the
    whole grid's; 16 per static proxy) fills up stops, and its remaining entries or static proxies are tested
    here afterwards."""
    E = cx_of.shape[0]
    S = smalls.shape[0]
    if threads == 1 or E < GRID_PARALLEL_ENTRIES:
        keys, k = _grid_entry_pairs(np.int64(0), E, start, cx_of, cy_of, box, ids, dense, gx0, gy0, gx1, gy1, mask,
                                    keys, k)
        return _static_cells_pairs(np.int64(0), S, smalls, sbox, cell, start, cx_of, cy_of, box, ids, dense, gx0,
                                   gy0, gx1, gy1, mask, keys, k)
    parts = np.empty((threads, 8 * (E // threads + 1) + 64), np.int64)
    got = np.zeros(threads, np.int64)
    stop = np.zeros(threads, np.int64)
    sparts = np.empty((threads, 16 * (S // threads + 1) + 64), np.int64)
    sgot = np.zeros(threads, np.int64)
    sstop = np.zeros(threads, np.int64)
    _grid_entry_parts(start, cx_of, cy_of, box, ids, dense, gx0, gy0, gx1, gy1, mask, parts, got, stop, threads,
                      smalls, sbox, cell, sparts, sgot, sstop)
    for w in range(threads):
        if k + got[w] + sgot[w] > keys.shape[0]:
            keys = _grown(keys, k, k + got[w] + sgot[w])
        for a in range(got[w]):
            keys[k + a] = parts[w, a]
        k += got[w]
        for a in range(sgot[w]):
            keys[k + a] = sparts[w, a]
        k += sgot[w]
        keys, k = _grid_entry_pairs(stop[w], (w + 1) * E // threads, start, cx_of, cy_of, box, ids, dense, gx0,
                                    gy0, gx1, gy1, mask, keys, k)
        keys, k = _static_cells_pairs(sstop[w], (w + 1) * S // threads, smalls, sbox, cell, start, cx_of, cy_of, box,
                                      ids, dense, gx0, gy0, gx1, gy1, mask, keys, k)
    return keys, k


@pnjit
def _grid_entry_parts(start, cx_of, cy_of, box, ids, dense, gx0, gy0, gx1, gy1, mask, parts, got, stop, threads,
                      smalls, sbox, cell, sparts, sgot, sstop):
    """Part w of ``threads`` of the entries into ``parts[w]`` and of the small static proxies into ``sparts[w]``:
    ``got[w]`` and ``sgot[w]`` keys, ``stop[w]`` and ``sstop[w]`` the entry and the static proxy it stopped at (the
    part's end, unless its buffer filled up). The parallel loop alone in its function."""
    for w in prange(threads):
        _grid_entry_part(np.int64(w), threads, start, cx_of, cy_of, box, ids, dense, gx0, gy0, gx1, gy1, mask,
                         parts, got, stop, smalls, sbox, cell, sparts, sgot, sstop)


@njit
def _grid_entry_part(w, threads, start, cx_of, cy_of, box, ids, dense, gx0, gy0, gx1, gy1, mask, parts, got, stop,
                     smalls, sbox, cell, sparts, sgot, sstop):
    """One part of :func:`_grid_entry_parts` (a call, so every name in it is private to its thread)."""
    E = cx_of.shape[0]
    e, k = _grid_entry_run(w * E // threads, (w + 1) * E // threads, start, cx_of, cy_of, box, ids, dense, gx0,
                           gy0, gx1, gy1, mask, parts[w], np.int64(0))
    got[w] = k
    stop[w] = e
    S = smalls.shape[0]
    t, k = _static_cells_run(w * S // threads, (w + 1) * S // threads, smalls, sbox, cell, start, cx_of, cy_of, box,
                             ids, dense, gx0, gy0, gx1, gy1, mask, sparts[w], np.int64(0))
    sgot[w] = k
    sstop[w] = t


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
            # (unsigned indices: no check for negative ones, ``carom._jit.index_range``)
            for f in index_range(f0, f1):
                q = ids[f]
                ok = (box[f, 0] <= ux) & (lx <= box[f, 2]) & (box[f, 1] <= uy) & (ly <= box[f, 3])
                if not dense:         # (a bucket may hold several cells)
                    ok = ok & (cx_of[f] == tx) & (cy_of[f] == ty)
                keys[np.uint64(k)] = (min(p, q) << _KEY_SHIFT) | max(p, q)      # written always, kept if ok
                k += np.int64(ok)
    return e1, k


@njit
def _unmoved_pairs(moving, static, lower, upper, flags, leaf_of, cand, threads):
    """The path of :func:`tree_pairs_cached` for an empty move buffer: no fat box changed, so the cache
    stays as it is except for the pairs of proxies removed since (now ``FREE``), and no fat-box test is needed.

    No static–static pair can be in the cache: every key entered it with a ``MOVING`` proxy (queries of
    static proxies search the moving tree only, the grid pairs a moving proxy with anything live), and a
    proxy's flags change only by removal (to ``FREE``) and by a new insertion under its id, which puts it on
    the move buffer. So ``FREE`` is the only flag to test (:func:`unmoved_run`), and when no pair is dead the
    cache is returned as it came, without a copy. With ``threads`` > 1 and the code compiled apart loaded, the
    test runs in parallel parts (:func:`tree_parts`), with the same result.
    """
    nc = cand.shape[0]
    pairs = np.empty(nc, np.int64)
    counts = np.empty((max(threads, 1), 2), np.int64)
    # (the arguments the pass does not read are others of the same types: ``broad_apart``)
    if threads > 1 and nc >= PARALLEL_ITEMS and run_parts(np.int64(UNMOVED_PAIRS), moving, static, lower, upper,
                                                          flags, leaf_of, cand, lower, upper, 0.0, 0.0, cand, pairs,
                                                          counts, threads, flags, pairs):
        r, alive = joined_parts(pairs, counts, nc, threads)
    else:
        r, alive = unmoved_run(np.int64(0), nc, lower, upper, flags, cand, pairs)
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
def unmoved_run(lo, hi, lower, upper, flags, cand, pairs):
    """Cached pairs lo … hi − 1 (:func:`_unmoved_pairs`): those of two live proxies whose real boxes overlap
    written to ``pairs`` from index lo, in order. Returns (how many were written, how many have two live
    proxies). Both tests are written without branches (about half the cached pairs of a pile fail the
    real-box test, so a branch would mispredict)."""
    r = 0
    alive = 0
    for c in index_range(lo, hi):
        # (indices as unsigned: no check for negative ones, ``carom._jit.index_range``)
        i = np.uint64(cand[c] >> _KEY_SHIFT)
        j = np.uint64(cand[c] & _KEY_MASK)
        live = (flags[i] != FREE) & (flags[j] != FREE)
        ok = (live & (lower[j, 0] <= upper[i, 0]) & (lower[i, 0] <= upper[j, 0])
              & (lower[j, 1] <= upper[i, 1]) & (lower[i, 1] <= upper[j, 1]))
        pairs[np.uint64(lo + r)] = cand[c]         # lo + r <= c: always in bounds; kept when ok
        r += np.int64(ok)
        alive += np.int64(live)
    return r, alive


@njit
def tree_update_threads(moving, static, lower, upper, flags, leaf_of, ids, lowers, uppers, margin, multiplier, moved,
                        moved_flag, moved_meta, threads):
    """:func:`carom.geometry._tree.tree_update` for a world step, whose ``ids`` are distinct (one per live
    shape): with ``threads`` > 1 and the code compiled apart loaded, its first pass runs in parallel parts
    (:func:`tree_parts`), and the parts' movers are put together in order, so the move buffer is the same as
    in one thread. (The pyramids' broad stage spent half its time in this pass and a third in
    :func:`_unmoved_pairs`; with both in one thread it was the one stage of their step that two threads did
    not speed up.)"""
    m = ids.shape[0]
    pending = np.empty(m, np.int64)
    counts = np.empty((max(threads, 1), 2), np.int64)
    if threads > 1 and m >= PARALLEL_BOXES and run_parts(np.int64(FAT_BOXES), moving, static, lower, upper, flags,
                                                         leaf_of, ids, lowers, uppers, margin, multiplier, ids, pending,
                                                         counts, threads, flags, pending):
        count, count_static = joined_parts(pending, counts, m, threads)
    else:
        # (no flag per proxy against repeats: the step's ids are distinct)
        count, count_static = fat_boxes_run(np.int64(0), m, moving, static, lower, upper, flags, leaf_of, ids,
                                            lowers, uppers, margin, multiplier, pending, np.zeros(0, np.int8))
    move_leaves(moving, static, flags, leaf_of, moved, moved_flag, moved_meta, pending, count, count_static)


#: the fewest items (proxies, cached pairs) :func:`tree_update_threads`, :func:`_unmoved_pairs` and the merge of
#: :func:`tree_pairs_cached` split between threads (below, waking the other thread costs about what it saves)
PARALLEL_ITEMS = 8192

#: the fewest proxies the first pass of :func:`tree_update_threads` splits between threads: each costs about three
#: times a cached pair, and the tall pyramid's 5,050 gained a tenth of its broad stage
PARALLEL_BOXES = 4096

#: the tasks of :func:`broad_apart`: the grid search, the first pass of :func:`tree_update_threads`, the
#: cached pairs of :func:`_unmoved_pairs`, the merge of the cache with the moved proxies' new pairs
#: (:func:`merge_run`)
GRID, FAT_BOXES, UNMOVED_PAIRS, MERGE = 0, 1, 2, 3


@njit
def run_parts(task, moving, static, lower, upper, flags, leaf_of, ids, lowers, uppers, margin, multiplier, cand, out,
              counts, threads, marks, out2):
    """:func:`tree_parts` through :func:`broad_apart`, if that is loaded for these argument types; returns whether
    it ran (False: nothing was done, and the caller runs the pass in one thread)."""
    args = apart_args(task, moving, static, lower, upper, flags, leaf_of, ids, lowers, uppers, margin, multiplier, cand,
                      out, counts, False, threads, marks, out2)
    if not _apart_loaded(args):
        return False
    _apart(args)
    return True


@njit
def apart_args(task, moving, static, lower, upper, flags, leaf_of, ids, lowers, uppers, margin, multiplier, cand, out,
               counts, real, threads, marks, out2):
    """:func:`broad_apart`'s arguments as the one tuple its callers pass, each number of the type
    :func:`apart_types` gives. The function is found by its argument types, so a caller whose tuple differed
    (a literal ``False`` is typed as its value) would find nothing loaded and run its pass in one thread:
    every caller builds the tuple here."""
    return (np.int64(task), moving, static, lower, upper, flags, leaf_of, ids, lowers, uppers, np.float64(margin),
            np.float64(multiplier), cand, out, counts, np.bool_(real), np.int64(threads), marks, out2)


@pnjit
def tree_parts(task, moving, static, lower, upper, flags, leaf_of, ids, lowers, uppers, margin, multiplier, cand,
               out, counts, threads, marks, out2):
    """Part w of ``threads`` of a pass by thread w: ``task`` FAT_BOXES (``fat_boxes_run`` over part w of
    ``ids``), UNMOVED_PAIRS (:func:`unmoved_run` over part w of ``cand``) or MERGE (:func:`merge_run` over part w
    of ``cand`` and the new keys ``ids`` of its key range, the proxies' move marks ``marks``, the cache to ``out``
    and the pairs to ``out2``), each writing its items from the part's start and its two counts to ``counts[w]``
    (:func:`joined_parts`, :func:`joined_merge` put them together). One parallel loop for the three passes, alone
    in its function."""
    for w in prange(threads):
        _tree_part(np.int64(w), task, moving, static, lower, upper, flags, leaf_of, ids, lowers, uppers, margin,
                   multiplier, cand, out, counts, threads, marks, out2)


@njit
def _tree_part(w, task, moving, static, lower, upper, flags, leaf_of, ids, lowers, uppers, margin, multiplier, cand,
               out, counts, threads, marks, out2):
    """One part of :func:`tree_parts` (a call, so every name in it is private to its thread)."""
    if task == FAT_BOXES:
        m = ids.shape[0]
        # (no proxy is seen twice: the step's ids are distinct)
        a, b = fat_boxes_run(w * m // threads, (w + 1) * m // threads, moving, static, lower, upper, flags,
                             leaf_of, ids, lowers, uppers, margin, multiplier, out, np.zeros(0, np.int8))
    elif task == MERGE:
        c0, c1, n0, n1 = merge_part(w, threads, cand, ids)
        backward = merge_glued(w, threads)
        a, b = merge_run(c0, c1, n0, n1, c1 + n1 if backward else c0 + n0, backward, cand, ids, moving, static, lower,
                         upper, flags, leaf_of, marks, out, out2)
    else:
        nc = cand.shape[0]
        a, b = unmoved_run(w * nc // threads, (w + 1) * nc // threads, lower, upper, flags, cand, out)
    counts[w, 0] = a
    counts[w, 1] = b


@njit
def joined_parts(out, counts, size, threads):
    """Put together the parts :func:`tree_parts` (or the broad stage's filter, ``carom.rigid._broad``) wrote: part
    w's ``counts[w, 0]`` items, written from w·size // threads, moved in order to follow the parts before it (not
    moved where the parts before kept all their items, as the cached pairs of a resting pile do). Returns the
    totals of both counts."""
    a = counts[0, 0]
    b = counts[0, 1]
    for w in range(1, threads):
        lo = w * size // threads
        if lo != a:
            for c in range(counts[w, 0]):
                out[a + c] = out[lo + c]
        a += counts[w, 0]
        b += counts[w, 1]
    return a, b


@njit
def _first_at_least(keys, lo, hi, key):
    """The first index i in lo … hi with keys[i] >= key (hi if none), keys sorted."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if keys[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit
def merge_part(w, threads, cand, new):
    """Part w of ``threads`` of the merge (:func:`merge_run`): (c0, c1, n0, n1), the cached keys ``cand[c0:c1]``
    (an even share) and the new keys ``new[n0:n1]`` of the same key range, from ``cand[c0]`` up to ``cand[c1]``.
    The parts' key ranges do not overlap, so a key in both lists falls in one part, where it is kept once."""
    nc = cand.shape[0]
    k = new.shape[0]
    c0 = w * nc // threads
    c1 = (w + 1) * nc // threads
    n0 = np.int64(0) if w == 0 else _first_at_least(new, np.int64(0), k, cand[c0])
    n1 = k if w == threads - 1 else _first_at_least(new, n0, k, cand[c1])
    return c0, c1, n0, n1


@njit
def merge_run(c0, c1, n0, n1, at, backward, cand, new, moving, static, lower, upper, flags, leaf_of, moved_flag, out,
              pairs):
    """The merge of :func:`tree_pairs_cached` for the cached keys ``cand[c0:c1]`` and the new ones ``new[n0:n1]``
    (both sorted, without repeats): a key in both kept once, dead pairs dropped, and the pairs with a moved proxy
    (``moved_flag``) kept only while their fat boxes still overlap; the kept keys (the new cache) written to ``out``
    and those whose real boxes overlap to ``pairs``, in key order. Forward, from index ``at`` on; ``backward``, the
    keys taken from the largest down and written to end just before index ``at`` (:func:`joined_merge`). The
    arrays have room for every key either way. Returns (how many kept, how many overlap).

    The new keys are few (the pairs of the proxies that left their fat boxes), so the cached keys are taken in
    runs, those below (above, backward) the next new key, in a loop that compares each with one bound
    (:func:`_merge_key`); a comparison of the two lists at every key took a fifth longer."""
    # a proxy's fat box is read from its tree's arrays (a tree picked by a conditional expression, or a helper
    # taking both trees, makes these loops markedly slower)
    mlo, mhi, slo, shi = moving.lo, moving.hi, static.lo, static.hi
    # as views without references (``borrowed``): each inlined :func:`_merge_key` would otherwise take and drop one
    # on each of its arrays, two atomics per array per key (100 ns a key, against 3)
    cand, new, flags, leaf_of, moved_flag, mlo, mhi, slo, shi, lower, upper, out, pairs = borrowed((
        cand, new, flags, leaf_of, moved_flag, mlo, mhi, slo, shi, lower, upper, out, pairs))
    m = at
    r = at
    if not backward:
        a = c0
        for b in range(n0, n1 + 1):
            bound = new[b] if b < n1 else _NO_KEY
            while a < c1 and cand[a] < bound:
                m, r = _merge_key(cand[a], flags, leaf_of, moved_flag, mlo, mhi, slo, shi, lower, upper, out, pairs,
                                  m, r, _FORWARD)
                a += 1
            if b < n1:
                if a < c1 and cand[a] == bound:
                    a += 1                              # (in both lists: kept once)
                m, r = _merge_key(bound, flags, leaf_of, moved_flag, mlo, mhi, slo, shi, lower, upper, out, pairs,
                                  m, r, _FORWARD)
        return m - at, r - at
    a = c1 - 1
    for b in range(n1 - 1, n0 - 2, -1):
        bound = new[b] if b >= n0 else np.int64(-1)
        while a >= c0 and cand[a] > bound:
            m, r = _merge_key(cand[a], flags, leaf_of, moved_flag, mlo, mhi, slo, shi, lower, upper, out, pairs, m,
                              r, _BACKWARD)
            a -= 1
        if b >= n0:
            if a >= c0 and cand[a] == bound:
                a -= 1
            m, r = _merge_key(bound, flags, leaf_of, moved_flag, mlo, mhi, slo, shi, lower, upper, out, pairs, m, r,
                              _BACKWARD)
    return at - m, at - r


#: above every pair key (``i << 32 | j`` of proxy ids, which are below 2**31)
_NO_KEY = np.int64(np.iinfo(np.int64).max)

#: :func:`_merge_key`'s directions (int64 values: literals would type it once for each)
_FORWARD, _BACKWARD = np.int64(1), np.int64(-1)


@llvm_inline_njit
def _merge_key(key, flags, leaf_of, moved_flag, mlo, mhi, slo, shi, lower, upper, out, pairs, m, r, d):
    """One key of :func:`merge_run`: dropped if a proxy is gone (or both are static), or if a proxy moved and the
    fat boxes no longer overlap; else written to ``out``, and to ``pairs`` where the real boxes overlap, at m and r
    going forward (``d`` = 1), just below them going backward (``d`` = −1). Returns the new (m, r). (Typed once and
    inlined by LLVM, :func:`carom._jit.llvm_inline_njit`: inlined by Numba at its four call sites, it was typed and
    lowered four times, a second of the step's cold compile; the arrays are borrowed views, without reference
    counts to take at a call.)"""
    i = key >> _KEY_SHIFT
    j = key & _KEY_MASK
    if flags[i] == FREE or flags[j] == FREE or (flags[i] == STATIC and flags[j] == STATIC):
        return m, r
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
            return m, r
    back = (d - 1) >> 1                # (0 forward, -1 backward)
    out[m + back] = key
    # the real-box test without branches, as in :func:`_unmoved_pairs`: the key is written to the next place and
    # that place kept when the boxes overlap (going backward the next place, r - 1, is never below the part's
    # start: it has as many places as keys)
    ok = ((lower[j, 0] <= upper[i, 0]) & (lower[i, 0] <= upper[j, 0])
          & (lower[j, 1] <= upper[i, 1]) & (lower[i, 1] <= upper[j, 1]))
    pairs[r + back] = key
    return m + d, r + d * np.int64(ok)


@njit
def merge_glued(w, threads):
    """Whether part w of the merge runs backward (:func:`merge_run`): the even parts that have a next part, so that
    each such pair of parts writes one unbroken run of keys, meeting at the second one's start."""
    return (w & 1) == 0 and w + 1 < threads


@njit
def joined_merge(out, pairs, counts, cand, new, threads):
    """Put together the parts of the merge (:func:`tree_parts` with MERGE), part w's counts in ``counts[w]``: each
    pair of parts (:func:`merge_glued`) wrote one run of keys, and the runs after the first are moved to follow it.
    With two threads there is one run and nothing moves (moving the second part's keys to follow the first's, they
    were read from the other core's cache: half the time the parts saved). Returns where the kept keys and the
    overlapping pairs are: (first, end) in ``out`` and (first, end) in ``pairs``."""
    o0 = o1 = p0 = p1 = np.int64(0)
    for w in range(0, threads, 2):
        c0, c1, n0, n1 = merge_part(np.int64(w), threads, cand, new)
        if merge_glued(w, threads):
            # from the end of part w, its keys below and the next part's above
            lo_o, hi_o = c1 + n1 - counts[w, 0], c1 + n1 + counts[w + 1, 0]
            lo_p, hi_p = c1 + n1 - counts[w, 1], c1 + n1 + counts[w + 1, 1]
        else:
            lo_o, hi_o = c0 + n0, c0 + n0 + counts[w, 0]
            lo_p, hi_p = c0 + n0, c0 + n0 + counts[w, 1]
        if w == 0:
            o0, o1, p0, p1 = lo_o, hi_o, lo_p, hi_p
            continue
        # (lo_o > o1: moved down, in order)
        for c in range(hi_o - lo_o):
            out[o1 + c] = out[lo_o + c]
        for c in range(hi_p - lo_p):
            pairs[p1 + c] = pairs[lo_p + c]
        o1 += hi_o - lo_o
        p1 += hi_p - lo_p
    return o0, o1, p0, p1


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


@apart_njit(lambda arg_types: numba.types.Array(numba.types.int64, 1, "C"))
def broad_apart(task, moving, static, lower, upper, flags, leaf_of, ids, lowers, uppers, margin, multiplier, cand,
                out, counts, real, threads, marks, out2):
    """The broad phase's code compiled apart (``carom._jit.apart_njit``): ``task`` GRID, :func:`_pairs_by_grid`
    (of ``real`` boxes or fat ones; returns its pairs), or FAT_BOXES, UNMOVED_PAIRS and MERGE, a pass in parallel
    parts (:func:`tree_parts`; returns an empty array). Each caller passes every argument, those its task does not
    read as arrays of the same types, so that one function, loaded once for one set of types, serves all four
    (:func:`apart_types`).

    Why: the grid search is a fifth of the step's cold compile (about 5 s), and the trees' queries find the
    same pairs (:func:`tree_pairs_cached`): the step needs it only to be fast; likewise the parallel passes
    (about 2 s of cold compile as parallel loops in the step), which have the same passes in one thread. So a
    world's first step does not wait for them: ``World.step`` has this compiled in a helper process meanwhile
    and loads it when that is done (``ApartDispatcher.load_soon``); the structures that call it from Python
    load it first (``load_grid``)."""
    if task == GRID:
        return _pairs_by_grid(moving, static, lower, upper, flags, leaf_of, real, threads)
    tree_parts(task, moving, static, lower, upper, flags, leaf_of, ids, lowers, uppers, margin, multiplier, cand, out,
               counts, threads, marks, out2)
    return cand[:0]


_apart = apart_caller(broad_apart)
_apart_loaded = apart_loaded(broad_apart)


def apart_types(tree, threads):
    """The argument types of :func:`broad_apart` as the step calls it, for the broad-phase arrays ``tree`` (a tree
    table's order: moving tree, static tree, lower, upper, flags, leaf_of, ...) and ``threads``."""
    ints = numba.types.Array(numba.types.int64, 1, "C")
    lower = numba.typeof(tree[2])
    return ((numba.types.int64,) + tuple(numba.typeof(a) for a in tuple(tree[:6]))
            + (ints, lower, lower, numba.types.float64, numba.types.float64, ints, ints,
               numba.types.Array(numba.types.int64, 2, "C"), numba.types.boolean, numba.typeof(threads),
               numba.typeof(tree[4]), ints))


#: :func:`broad_apart` is loaded in this process (:func:`load_grid`)
grid_ready = False
#: the argument types a helper process is compiling :func:`broad_apart` for (``load_grid(..., wait=False)``)
_grid_pending = None


def load_grid(tree, threads, wait=True):
    """Load :func:`broad_apart` for :func:`tree_pairs_cached`'s calls with the broad-phase arrays ``tree`` (a
    tree table's order: moving tree, static tree, lower, upper, flags, leaf_of, ...) and ``threads``: compiled
    here unless cached; with ``wait=False`` as ``ApartDispatcher.load_soon`` (compiled in a helper process, and
    False until it is loaded). Returns whether it is loaded; True without the JIT. Once loaded, a call returns at
    once; while a helper compiles it, a call reuses the types it asked for (typing the arrays again took 150 µs,
    at every step of the world that asks)."""
    global grid_ready, _grid_pending
    if grid_ready or numba.config.DISABLE_JIT:
        return True
    types = _grid_pending or apart_types(tree, threads)
    if wait:
        broad_apart.load(types)
        grid_ready = True
    else:
        grid_ready = broad_apart.load_soon(types)
    _grid_pending = None if grid_ready else types
    return grid_ready


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

    ``threads``: the parts the grid's pair tests (:func:`_pairs_by_grid`) and the cache's test
    (:func:`_unmoved_pairs`) run in; no result depends on it.

    The grid is compiled apart (:func:`broad_apart`) and may not be loaded yet in this process (a world's first
    steps, while a helper compiles it): then a busy step queries the trees like any other, and a marked cache
    (from a snapshot) is rebuilt by queries of every live proxy. The pairs are the same sorted keys either way;
    only the cache differs, holding the fat pairs, unmarked.

    Every path writes the keys of ``pairs`` as it goes, into an array allocated at its largest size (every
    candidate kept) and returned as a view of its first entries: no growing, no second pass. The pairs stay
    keys (the caller maps them to shape pairs, :func:`carom.rigid._step.broad_stage`): unpacked into rows of
    (i, j), a busy step of the 5,000-circle pile wrote and read 13,000 rows more.
    """
    live = moving.meta[2] + static.meta[2]
    busy = moved_meta[0] > SWEEP_FRACTION * live
    # (the arguments the grid does not read are others of the same types)
    grid = apart_args(np.int64(GRID), moving, static, lower, upper, flags, leaf_of, cand, lower, upper, 0.0, 0.0, cand,
                      cand, np.empty((1, 2), np.int64), busy, threads, flags, cand)
    if (busy or moved_meta[1] != 0) and _apart_loaded(grid):
        # a grid: the pairs afresh (busy, real boxes), or the cache rebuilt and the pairs taken from it
        out = _apart(grid)
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
    if moved_meta[1] != 0:
        # the cache holds only the real pairs of a busy step, and the grid that rebuilds it is not loaded in this
        # process (a world restored from another's snapshot): every live proxy queries the trees instead
        cand = np.empty(0, np.int64)
        moved_meta[1] = 0
        for p in range(flags.shape[0]):
            if flags[p] != FREE and moved_flag[p] == 0:
                moved_flag[p] = 1
                moved[moved_meta[0]] = p
                moved_meta[0] += 1
    if moved_meta[0] == 0:
        return _unmoved_pairs(moving, static, lower, upper, flags, leaf_of, cand, threads)
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
    # merge the sorted cache and the sorted new keys (:func:`merge_run`), in parallel parts of the cache for a large
    # one (the tall pyramid's cache of 15,000 pairs is merged at most steps, where a few dozen of its proxies leave
    # their fat boxes: half its broad stage, in one thread). Both outputs are allocated at their largest size (every
    # key kept), so the loop never checks for room, and they are returned as views of these buffers (a copy would
    # cost about as much as the merge of an idle cache).
    nc = cand.shape[0]
    out = np.empty(nc + k, np.int64)
    pairs = np.empty(nc + k, np.int64)
    counts = np.empty((max(threads, 1), 2), np.int64)
    if threads > 1 and nc >= PARALLEL_ITEMS and run_parts(np.int64(MERGE), moving, static, lower, upper, flags,
                                                          leaf_of, new, lower, upper, 0.0, 0.0, cand, out, counts,
                                                          threads, moved_flag, pairs):
        o0, o1, p0, p1 = joined_merge(out, pairs, counts, cand, new, threads)
    else:
        o0 = p0 = np.int64(0)
        o1, p1 = merge_run(np.int64(0), nc, np.int64(0), k, np.int64(0), False, cand, new, moving, static, lower, upper,
                           flags, leaf_of, moved_flag, out, pairs)
    for a in range(moved_meta[0]):
        moved_flag[moved[a]] = 0
    moved_meta[0] = 0
    return pairs[p0:p1], out[o0:o1]
