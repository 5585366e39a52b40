"""Sort and sweep (sweep and prune) along the axis of largest spread: an insertion sort keeps the order from
frame to frame.

Part of the broad phases' compiled kernels (the layout of the shared proxy storage: ``_pairs``; the
classes over them: :mod:`carom.geometry.broadphase`). Plain ``njit`` functions over arrays and scalars, so a
compiled world step can call them directly; nothing recurses (trees are walked with explicit stacks).
"""
import numpy as np

from .._jit import njit
from ._pairs import STATIC, _push, finish_pairs, order_by_key_then_id


#: SweepAndPrune keeps its axis until the other axis' variance of box centres is this many times larger,
#: so a scene whose spread is about equal along x and y does not re-sort from scratch every frame.
SAP_AXIS_HYSTERESIS = 1.25

#: Insertion sort gives up (and a merge sort takes over) after this many shifts per element: it is the
#: right tool for an almost sorted list, the wrong one after a burst of inserts or an axis change.
SAP_SHIFT_BUDGET = 8


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
