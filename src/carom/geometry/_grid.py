"""The uniform grid: boxes binned in hashed cells, pairs found within each cell and reported by the cell that
owns their overlap's lower corner.

Part of the broad phases' compiled kernels (the layout of the shared proxy storage: ``_pairs``; the
classes over them: :mod:`carom.geometry.broadphase`). Plain ``njit`` functions over arrays and scalars, so a
compiled world step can call them directly; nothing recurses (trees are walked with explicit stacks).
"""
import numpy as np

from .._jit import njit
from ._pairs import FREE, MOVING, STATIC, _push, finish_pairs, overlap


#: Cells of the uniform grid are hashed into a table at most this full (open addressing, linear probing).
_GRID_HASH_LOAD = 0.5


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
