"""Shared pieces of the broad phases: proxy kinds, box overlap, the ray-box slab test, growing key
buffers, finishing pair keys (sort and unique) and unpacking them, ordering hits.

Part of the broad phases' compiled kernels (the layout of the shared proxy storage: ``_pairs``; the
classes over them: :mod:`carom.geometry.broadphase`). Plain ``njit`` functions over arrays and scalars, so a
compiled world step can call them directly; nothing recurses (trees are walked with explicit stacks).
"""
import numpy as np

from .._jit import njit


#: Proxy kinds in ``flags``.
FREE = 0
MOVING = 1
STATIC = 2

_KEY_SHIFT = np.int64(32)
_KEY_MASK = np.int64(0xFFFFFFFF)
#: the stride of the keys ``i << 32 | j`` (``unpack_keys``)
KEY_STRIDE = np.int64(1) << _KEY_SHIFT


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


@njit
def _grown(buf, k, need):
    """buf with its first k values kept and room for at least need values (capacity doubled at least)."""
    nb = np.empty(max(need, 2 * buf.shape[0]), buf.dtype)
    for a in range(k):         # a loop, not a slice assignment (which compiles a broadcasting kernel)
        nb[a] = buf[a]
    return nb
