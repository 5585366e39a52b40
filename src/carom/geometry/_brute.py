"""Brute force: every pair of boxes, the oracle of the other broad phases, and the linear-scan query and ray
cast other structures may reuse.

Part of the broad phases' compiled kernels (the layout of the shared proxy storage: ``_pairs``; the
classes over them: :mod:`carom.geometry.broadphase`). Plain ``njit`` functions over arrays and scalars, so a
compiled world step can call them directly; nothing recurses (trees are walked with explicit stacks).
"""
import numpy as np

from .._jit import njit
from ._pairs import FREE, STATIC, _push, finish_pairs, order_hits, overlap, ray_box_fraction


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
