"""Broad phases: candidate pairs among many axis-aligned boxes without testing every pair.

Four structures share one interface (:class:`BroadPhase`):

* :class:`BruteForce` — every pair, O(n²): the oracle the others are tested against.
* :class:`SweepAndPrune` — boxes sorted by their lower bound on the axis along which box centres spread
  most (largest variance). Between calls the order is kept and repaired by insertion sort, which is
  O(n + swaps) for coherent motion; the axis switches (with a full merge sort) when the other axis'
  variance becomes clearly larger. The sweep meets, for each box, only the boxes that start before it
  ends on that axis. Static proxies share the sorted list; static–static pairs are skipped in the sweep.
* :class:`DynamicTree` — a binary tree of fattened boxes (Box2D's dynamic tree): each leaf holds the real
  box plus a margin, stretched in the direction of motion by a multiple of the last displacement, so a
  proxy moving a little stays inside its leaf and the tree is not touched. Leaves are inserted where the
  perimeter (the 2D surface area) of the tree grows least, rebalanced by AVL rotations, and stored in a
  node pool with a free list. Static and moving proxies live in two trees, so static–static pairs cost
  nothing. A proxy that leaves its fat box gets a new one and keeps its leaf's place, the leaf's ancestors
  grown to hold the new box (Box2D's ``EnlargeProxy``); the tree is refitted, or rebuilt where it grew
  markedly worse, once an eighth of its leaves moved so. ``pairs()`` is incremental (Box2D's pair buffer): a
  sorted cache holds every pair whose fat boxes overlap; only proxies whose leaf got a new fat box since the
  last call query the trees for new candidates, and each call filters the cache by the real boxes —
  O(candidates + moved · log n).
  When many proxies move (more than ``SWEEP_FRACTION``, a 32nd, left their fat boxes), one-by-one work
  costs more than starting over: ``update`` rebuilds the tree from all its leaves (median split on the
  longer axis of the leaf centres, O(n log n), leaves keep their nodes) and the next ``pairs()`` finds every
  fat-overlapping pair with one uniform grid (cell = median fat box, counting sort into cells, each pair
  reported in one cell only), O(n + pairs).
* :class:`UniformGrid` — square cells of side ``cell_size`` (given, or the median box size), hashed by
  integer cell coordinates so the world needs no bounds. Moving proxies are hashed every call, static
  proxies into a table rebuilt only when a static proxy changes. A pair is reported only in the cell that
  holds the lower corner of the two boxes' intersection, so it comes out once. Boxes covering more than
  ``max_cells`` cells are "oversize" and tested against everything.

Semantics (identical for all four): a pair ``(i, j)``, ``i < j``, is reported when the *real* boxes given
to ``insert``/``move``/``update`` overlap as closed intervals (touching counts) and not both proxies are
static. Fat boxes are only an internal filter. ``pairs()`` is a ``(K, 2)`` int64 array, rows sorted.
``query`` returns the ids whose box overlaps the query box, ascending. ``raycast(origin, translation)``
returns the ids whose box the closed segment ``origin → origin + translation`` crosses, ordered by the
entry fraction (0 for a box containing the origin), equal fractions by id. Proxy ids are small ints,
reused last-removed-first after ``remove``. Bad input raises :class:`~carom.errors.GeometryError`
(NaN/inf, ``lower > upper``, wrong shape) or :class:`~carom.errors.CaromError` (unknown id), naming the
value, before anything changes.

Kernels (``carom.geometry._broadphase_kernels``, all plain ``njit``, for a compiled world step). Proxy
storage is ``lower, upper: float64 (cap, 2)``, ``flags: int8 (cap,)`` with ``FREE = 0``, ``MOVING = 1``,
``STATIC = 2``, and ``n`` the high-water mark of ids. Every ``*_pairs`` returns a sorted ``(K, 2)`` int64.

* ``set_boxes(lower, upper, ids, lowers, uppers)`` — bulk update for BruteForce, SAP and grid.
* ``brute_pairs(lower, upper, flags, n)``; ``brute_query(lower, upper, flags, n, qlx, qly, qux, quy)``;
  ``brute_raycast(lower, upper, flags, n, ox, oy, dx, dy)``.
* ``sap_pairs(lower, upper, flags, n, order, meta)`` — ``order: int64 (cap,)`` proxy ids of the sorted
  list, ``meta: int64 [count, axis]``; sorts in place, then sweeps.
* ``Tree`` — namedtuple ``(lo, hi, parent, child1, child2, height, proxy, meta)`` of one node pool,
  ``meta = [root, free_head, leaf_count, quality, stale, enlarged]`` (quality: see ``tree_refit_or_rebuild``;
  stale: inner boxes not yet refitted after a bulk move, see ``tree_fit``; enlarged: leaves moved in place since
  the last refit, see ``move_leaves``).
  ``tree_update(moving, static, lower, upper, flags, leaf_of,
  ids, lowers, uppers, margin, multiplier, moved, moved_flag, moved_meta)`` (proxies given new fat boxes are
  appended to the move buffer ``moved[:moved_meta[0]]``, ``moved_flag`` int8 per proxy, ``moved_meta[1]``
  set while the cache holds only the last real pairs, see ``tree_pairs_cached``; ``mark_moved(moved,
  moved_flag, moved_meta, p)`` after creating a leaf); ``tree_pairs_cached(moving, static, lower, upper,
  flags, leaf_of, moved, moved_flag, moved_meta, cand, threads) -> (keys, cand)``, both sorted int64 pair keys
  ``i << 32 | j`` (``unpack_keys(keys, KEY_STRIDE)``: the (n, 2) rows), with ``cand`` the one of the previous call
  (start empty); ``tree_pairs(moving, static, lower, upper,
  flags, n)`` is the stateless version (every moving proxy queries both trees);
  ``tree_query(moving, static, lower, upper, qlx, qly, qux, quy)``; ``tree_raycast(moving, static, lower,
  upper, ox, oy, dx, dy)``; ``tree_create_leaf(t, proxy, lx, ly, ux, uy, margin) -> leaf``;
  ``tree_destroy_leaf(t, leaf)`` (the pool must have 2 free nodes before creating a leaf: ``tree_grow``);
  ``tree_insert_pending(moving, static, lower, upper, flags, leaf_of, n, margin, moved, moved_flag,
  moved_meta)`` gives the proxies a deferred insertion left without a leaf (``leaf_of`` −1, counted in
  ``moved_meta[2]``) their leaves;
  ``tree_rebuild(t)`` rebuilds a tree in place from its leaves; ``tree_fit(t)`` refits (or rebuilds) a tree
  that ``tree_update`` left stale after a bulk move (every kernel that reads a tree calls it first).
* ``grid_choose_cell(lower, upper, flags, n) -> cell``; ``grid_build(lower, upper, flags, n, want, cell,
  max_cells) -> (kx, ky, used, start, items)``; ``grid_pairs(lower, upper, flags, n, cell, max_cells,
  *static_table)`` with ``static_table = grid_build(..., STATIC, ...)``.
"""
from typing import TYPE_CHECKING
if TYPE_CHECKING:  # (annotations only)
    from typing import Tuple
    from .._types import Any, ArrayLike, Bits, Optional, Points, TransformLike, Vec2
import numbers

import numpy as np

from .._jit import step_threads
from ..constants import AABB_MARGIN, AABB_DISPLACEMENT_MULTIPLIER
from ..errors import CaromError, GeometryError
from . import _broadphase_kernels as K
from ._tree_pairs import load_grid

__all__ = ["BroadPhase", "BruteForce", "SweepAndPrune", "DynamicTree", "UniformGrid"]


def _point(value, what):
    try:
        a = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise GeometryError(f"{what} must be a pair of numbers, got {value!r}") from None
    if a.shape != (2,):
        raise GeometryError(f"{what} must be a pair of numbers, got {value!r}")
    if not np.all(np.isfinite(a)):
        raise GeometryError(f"{what} must be finite, got {value!r}")
    return a


def _box(lower, upper):
    lo = _point(lower, "box lower corner")
    hi = _point(upper, "box upper corner")
    if lo[0] > hi[0] or lo[1] > hi[1]:
        raise GeometryError(f"box lower corner {lower!r} exceeds upper corner {upper!r}")
    return lo, hi


def _boxes(lowers, uppers, m):
    out = []
    for name, value in (("lowers", lowers), ("uppers", uppers)):
        try:
            a = np.ascontiguousarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise GeometryError(f"{name} must be an (m, 2) array of numbers, got {value!r}") from None
        if a.shape != (m, 2):
            raise GeometryError(f"{name} must have shape ({m}, 2) to match the ids, got shape {a.shape}")
        bad = ~np.isfinite(a)
        if bad.any():
            r = int(np.argwhere(bad)[0][0])
            raise GeometryError(f"{name}[{r}] must be finite, got {a[r].tolist()}")
        out.append(a)
    lo, hi = out
    bad = (lo > hi).any(axis=1)
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        raise GeometryError(f"box {r}: lower corner {lo[r].tolist()} exceeds upper corner {hi[r].tolist()}")
    return lo, hi


class BroadPhase:
    """Proxy storage and validation shared by every broad phase (see the module docstring)."""

    def __init__(self):
        cap = 16
        self._lower = np.zeros((cap, 2))
        self._upper = np.zeros((cap, 2))
        self._flags = np.zeros(cap, np.int8)
        self._n = 0          # high-water mark of ids
        self._free = []      # removed ids, reused last-removed-first
        self._count = 0

    # -- bookkeeping ------------------------------------------------------------------------------------
    def __len__(self):
        return self._count

    def _grow(self, cap):
        for name in ("_lower", "_upper", "_flags"):
            a = getattr(self, name)
            b = np.zeros((cap,) + a.shape[1:], a.dtype)
            b[:a.shape[0]] = a
            setattr(self, name, b)

    def _check_id(self, proxy):
        if isinstance(proxy, (bool, np.bool_)) or not isinstance(proxy, numbers.Integral):
            raise CaromError(f"proxy id must be an int, got {proxy!r}")
        p = int(proxy)
        if not (0 <= p < self._n) or self._flags[p] == K.FREE:
            raise CaromError(f"proxy id {proxy!r} is not in this broad phase (never inserted or removed)")
        return p

    def ids(self) -> "np.ndarray":
        """Ids of all proxies, ascending."""
        return np.flatnonzero(self._flags[:self._n] != K.FREE).astype(np.int64)

    def box(self, proxy: "int") -> "Tuple[np.ndarray, np.ndarray]":
        """The real box ``(lower, upper)`` of a proxy (copies)."""
        p = self._check_id(proxy)
        return self._lower[p].copy(), self._upper[p].copy()

    def is_static(self, proxy: "int") -> bool:
        """True if ``proxy`` (an id from :meth:`insert`) was inserted as static."""
        return bool(self._flags[self._check_id(proxy)] == K.STATIC)

    # -- interface --------------------------------------------------------------------------------------
    def insert(self, lower: "Vec2", upper: "Vec2", static: "bool" = False) -> int:
        """Add a box; returns its proxy id. Static proxies are never paired with each other.

        ``lower`` and ``upper`` are the box's corners (x, y); ``static`` marks a box that never moves.
        """
        lo, hi = _box(lower, upper)
        return self.insert_checked(lo[0], lo[1], hi[0], hi[1], static)

    def insert_checked(self, lx: "float", ly: "float", ux: "float", uy: "float", static: "bool") -> int:
        """:meth:`insert` of a box known to be finite with lower ≤ upper, its lower corner (``lx``, ``ly``) and upper
        corner (``ux``, ``uy``), ``static`` as there: for a world's own shape boxes, which checking again was a
        sixth of adding a shape. Returns the proxy id."""
        if self._free:
            p = self._free.pop()
        else:
            p = self._n
            if p >= self._flags.shape[0]:
                self._grow(2 * self._flags.shape[0])
            self._n += 1
        self._lower[p, 0] = lx
        self._lower[p, 1] = ly
        self._upper[p, 0] = ux
        self._upper[p, 1] = uy
        self._flags[p] = K.STATIC if static else K.MOVING
        self._count += 1
        self._inserted(p)
        return p

    def insert_many_checked(self, boxes: "np.ndarray", static: "np.ndarray") -> "np.ndarray":
        """:meth:`insert_checked` of each row (lx, ly, ux, uy) of ``boxes`` in turn, ``static`` a bool per box: the
        same ids, in one pass of array writes. Returns the ids."""
        k = boxes.shape[0]
        reused = [self._free.pop() for _ in range(min(k, len(self._free)))]
        first = self._n
        fresh = k - len(reused)
        while first + fresh > self._flags.shape[0]:
            self._grow(2 * self._flags.shape[0])
        self._n = first + fresh
        ps = np.array(reused + list(range(first, first + fresh)), np.int64)
        self._lower[ps] = boxes[:, 0:2]
        self._upper[ps] = boxes[:, 2:4]
        self._flags[ps] = np.where(static, K.STATIC, K.MOVING)
        self._count += k
        self._inserted_many(ps)
        return ps

    def remove(self, proxy: "int") -> None:
        """Remove ``proxy`` (an id from :meth:`insert`); its id may be reused by a later insert."""
        self.remove_checked(self._check_id(proxy))

    def remove_checked(self, p: "int") -> None:
        """:meth:`remove` of ``p``, a proxy id known to be in the broad phase (a world's own shape's)."""
        self._removing(p)
        self._flags[p] = K.FREE
        self._free.append(p)
        self._count -= 1

    def remove_many_checked(self, ps: "list") -> None:
        """:meth:`remove_checked` of each proxy id of the list ``ps`` (distinct, each in the broad phase), in that
        order."""
        self._removing_many(ps)
        self._flags[ps] = K.FREE
        self._free.extend(ps)
        self._count -= len(ps)

    def move(self, proxy: "int", lower: "Vec2", upper: "Vec2") -> None:
        """Give a proxy a new box.

        ``proxy`` is an id from :meth:`insert`; ``lower`` and ``upper`` the new corners.
        """
        p = self._check_id(proxy)
        lo, hi = _box(lower, upper)
        self._update(np.array([p], np.int64), lo.reshape(1, 2), hi.reshape(1, 2))

    def update(self, ids: "ArrayLike", lowers: "ArrayLike", uppers: "ArrayLike") -> None:
        """Bulk move: ``ids`` (m,) ints, ``lowers``/``uppers`` (m, 2). All are checked before any moves."""
        try:
            a = np.asarray(ids)
        except (TypeError, ValueError):
            raise CaromError(f"ids must be an array of proxy ids, got {ids!r}") from None
        if a.ndim != 1 or (a.size and a.dtype.kind not in "iu"):
            raise CaromError(f"ids must be a 1-d array of ints, got {ids!r}")
        a = a.astype(np.int64)
        if a.size:
            bad = (a < 0) | (a >= self._n)
            bad[~bad] = self._flags[a[~bad]] == K.FREE
            if bad.any():
                r = int(np.flatnonzero(bad)[0])
                raise CaromError(f"ids[{r}] = {int(a[r])} is not a proxy id of this broad phase")
        lo, hi = _boxes(lowers, uppers, a.shape[0])
        self._update(a, lo, hi)

    def pairs(self):
        """(K, 2) int64 array of proxy ids whose boxes overlap, each pair once as (i < j), rows sorted."""
        raise NotImplementedError

    def query(self, lower: "Vec2", upper: "Vec2") -> "np.ndarray":
        """Ids (ascending) of the proxies whose box overlaps the closed box [lower, upper]."""
        lo, hi = _box(lower, upper)
        return self._query(lo, hi)

    def raycast(self, origin: "Vec2", translation: "Vec2") -> "np.ndarray":
        """Ids of the boxes the segment origin → origin + translation crosses, in order along it."""
        o = _point(origin, "ray origin")
        d = _point(translation, "ray translation")
        return self._raycast(o, d)

    # -- hooks (default: brute force scans) -------------------------------------------------------------
    def _inserted(self, p):
        pass

    def _removing(self, p):
        pass

    def _inserted_many(self, ps):
        for p in ps.tolist():
            self._inserted(p)

    def _removing_many(self, ps):
        for p in ps:
            self._removing(p)

    def _update(self, ids, lowers, uppers):
        K.set_boxes(self._lower, self._upper, ids, lowers, uppers)

    def _query(self, lo, hi):
        return K.brute_query(self._lower, self._upper, self._flags, self._n, lo[0], lo[1], hi[0], hi[1])

    def _raycast(self, o, d):
        return K.brute_raycast(self._lower, self._upper, self._flags, self._n, o[0], o[1], d[0], d[1])


class BruteForce(BroadPhase):
    """Every pair tested: O(n²) per call. The reference the other structures must agree with exactly."""

    def pairs(self) -> "np.ndarray":
        """(K, 2) int64 array of proxy ids whose boxes overlap, each pair once as (i < j), rows sorted: every pair of
        boxes tested, O(n²) (the oracle the others are tested against)."""
        return K.brute_pairs(self._lower, self._upper, self._flags, self._n)


class SweepAndPrune(BroadPhase):
    """Sort and sweep along the axis of largest variance of box centres, re-sorted by insertion sort.

    ``query`` and ``raycast`` are linear scans (a single sorted axis does not bound them better).
    """

    def __init__(self):
        super().__init__()
        self._order = np.zeros(16, np.int64)
        self._meta = np.array([0, 0], np.int64)   # [count in order, axis]

    def _grow(self, cap):
        super()._grow(cap)
        o = np.zeros(cap, np.int64)
        o[:self._order.shape[0]] = self._order
        self._order = o

    def _inserted(self, p):
        m = self._meta[0]
        self._order[m] = p      # appended; the next sort moves it into place
        self._meta[0] = m + 1

    def _removing(self, p):
        m = int(self._meta[0])
        pos = int(np.flatnonzero(self._order[:m] == p)[0])
        self._order[pos:m - 1] = self._order[pos + 1:m].copy()
        self._meta[0] = m - 1

    @property
    def axis(self) -> int:
        """The current sweep axis (0 = x, 1 = y)."""
        return int(self._meta[1])

    def pairs(self) -> "np.ndarray":
        """(K, 2) int64 array of proxy ids whose boxes overlap, each pair once as (i < j), rows sorted: boxes sorted
        along x, then swept."""
        return K.sap_pairs(self._lower, self._upper, self._flags, self._n, self._order, self._meta)


class DynamicTree(BroadPhase):
    """Dynamic AABB tree (two node pools: moving and static proxies).

    ``margin`` fattens every leaf box; ``multiplier`` stretches it along the last displacement. With
    ``deferred=True`` an inserted proxy gets its leaf only when the tree is next used (every method here, and
    the world's compiled step: ``tree_insert_pending``), the leaves of all pending proxies at once, in id order.
    """

    def __init__(self, margin: "float" = AABB_MARGIN, multiplier: "float" = AABB_DISPLACEMENT_MULTIPLIER,
                 deferred: "bool" = False):
        super().__init__()
        for name, v in (("margin", margin), ("multiplier", multiplier)):
            if not (isinstance(v, numbers.Real) and np.isfinite(v) and v >= 0):
                raise GeometryError(f"{name} must be a finite number >= 0, got {v!r}")
        self.margin = float(margin)
        self.multiplier = float(multiplier)
        self._leaf = np.full(16, -1, np.int64)
        self._trees = [K.tree_new(), K.tree_new()]   # [moving, static]
        self._moved = np.zeros(16, np.int64)         # move buffer: proxies whose leaf was (re)inserted
        self._moved_flag = np.zeros(16, np.int8)
        # [move buffer length, cache holds real pairs only, proxies waiting for a leaf (deferred insertion)]
        self._moved_meta = np.zeros(3, np.int64)
        self._cand = np.zeros(0, np.int64)           # cached fat-overlapping pairs (i << 32 | j)
        self._deferred = bool(deferred)

    def _grow(self, cap):
        super()._grow(cap)
        for name, fill in (("_leaf", -1), ("_moved", 0), ("_moved_flag", 0)):
            a = getattr(self, name)
            b = np.full(cap, fill, a.dtype)
            b[:a.shape[0]] = a
            setattr(self, name, b)

    def _tree(self, p):
        return 1 if self._flags[p] == K.STATIC else 0

    def _inserted(self, p):
        if self._deferred:
            self._leaf[p] = -1
            self._moved_meta[2] += 1
            return
        w = self._tree(p)
        self._room(w, 1)
        lo, hi = self._lower[p], self._upper[p]
        self._leaf[p] = K.tree_create_leaf(self._trees[w], p, lo[0], lo[1], hi[0], hi[1], self.margin)
        K.mark_moved(self._moved, self._moved_flag, self._moved_meta, p)

    def _inserted_many(self, ps):
        if self._deferred:
            self._leaf[ps] = -1
            self._moved_meta[2] += ps.size
            return
        super()._inserted_many(ps)

    def _room(self, w, leaves):
        """Room in tree w's node pool for ``leaves`` more leaves (two nodes each)."""
        t = self._trees[w]
        need = 2 * (int(t.meta[2]) + leaves)
        if t.lo.shape[0] < need:
            self._trees[w] = K.tree_grow(t, max(need, 2 * t.lo.shape[0]))

    def reserve(self) -> None:
        """Room in the node pools for the leaves of the pending proxies (deferred insertion), for
        ``tree_insert_pending``."""
        if self._moved_meta[2]:
            n = self._n
            pending = (self._flags[:n] != K.FREE) & (self._leaf[:n] < 0)
            static = int((pending & (self._flags[:n] == K.STATIC)).sum())
            self._room(0, int(pending.sum()) - static)
            self._room(1, static)

    def flush(self) -> None:
        """Give the pending proxies (deferred insertion) their leaves now."""
        if self._moved_meta[2]:
            self.reserve()
            K.tree_insert_pending(self._trees[0], self._trees[1], self._lower, self._upper, self._flags,
                                  self._leaf, self._n, self.margin, self._moved, self._moved_flag, self._moved_meta)

    def step_table(self) -> tuple:
        """The tree's arrays as a compiled world step reads and writes them, in place: (moving tree, static tree,
        lower, upper, flags, leaf, moved, moved_flag, moved_meta, cand, margin, multiplier); the trees are ``Tree``
        node pools (``geometry/_tree.py``), ``cand`` the cached pairs (keys ``i << 32 | j``). A world names them
        (``carom.rigid._layout.TreeTable``) and gives back the new pair cache with :meth:`set_candidates`."""
        return (self._trees[0], self._trees[1], self._lower, self._upper, self._flags, self._leaf, self._moved,
                self._moved_flag, self._moved_meta, self._cand, self.margin, self.multiplier)

    def set_candidates(self, cand: "np.ndarray") -> None:
        """Keep ``cand`` (sorted keys ``i << 32 | j`` of the pairs whose fat boxes overlap, as a step found them)
        as the pair cache the next pair search starts from."""
        self._cand = cand

    def _removing(self, p):
        self._removing_many((p,))

    def _removing_many(self, ps):
        # (one compiled call for them all; a proxy still pending has no leaf yet)
        K.tree_destroy_leaves(self._trees[0], self._trees[1], self._flags, self._leaf, np.array(ps, np.int64),
                              self._moved_meta)

    def _update(self, ids, lowers, uppers):
        self.flush()
        K.tree_update(self._trees[0], self._trees[1], self._lower, self._upper, self._flags, self._leaf,
                      ids, lowers, uppers, self.margin, self.multiplier,
                      self._moved, self._moved_flag, self._moved_meta)

    def pairs(self) -> "np.ndarray":
        """(K, 2) int64 array of proxy ids whose boxes overlap, each pair once as (i < j), rows sorted: moved proxies
        queried against the trees (pending insertions flushed first)."""
        self.flush()
        load_grid(self.step_table(), step_threads())     # (the grid search of busy calls, compiled apart)
        keys, self._cand = K.tree_pairs_cached(self._trees[0], self._trees[1], self._lower, self._upper,
                                               self._flags, self._leaf, self._moved, self._moved_flag,
                                               self._moved_meta, self._cand, step_threads())
        return K.unpack_keys(keys, K.KEY_STRIDE)

    def _query(self, lo, hi):
        self.flush()
        return K.tree_query(self._trees[0], self._trees[1], self._lower, self._upper,
                            lo[0], lo[1], hi[0], hi[1])

    def _raycast(self, o, d):
        self.flush()
        return K.tree_raycast(self._trees[0], self._trees[1], self._lower, self._upper,
                              o[0], o[1], d[0], d[1])

    def nodes(self, static: "bool" = False) -> dict:
        """A copy of one tree's node pool as a dict of arrays (for inspection and invariant checks):
        ``lower, upper, parent, child1, child2, height, proxy`` per node and ``root``, ``free``, ``leaves``.
        A tree left stale by a bulk move is refitted first (``tree_fit``).

        ``static`` picks the tree of static proxies (True) or of moving ones (False).
        """
        self.flush()
        t = self._trees[1 if static else 0]
        K.tree_fit(t)
        return {"lower": t.lo.copy(), "upper": t.hi.copy(), "parent": t.parent.copy(),
                "child1": t.child1.copy(), "child2": t.child2.copy(), "height": t.height.copy(),
                "proxy": t.proxy.copy(), "root": int(t.meta[0]), "free": int(t.meta[1]),
                "leaves": int(t.meta[2])}

    def leaf_of(self, proxy: "int") -> int:
        """The leaf node index of a proxy in its tree."""
        p = self._check_id(proxy)
        self.flush()
        return int(self._leaf[p])

    @property
    def height(self) -> int:
        """Height of the taller of the two trees (0 for a single leaf, -1 when empty)."""
        self.flush()
        hs = [int(t.height[t.meta[0]]) if t.meta[0] >= 0 else -1 for t in self._trees]
        return max(hs)


class UniformGrid(BroadPhase):
    """Hashed uniform grid. ``cell_size=None`` chooses it from the boxes (median box size) at the first
    ``pairs()`` and again whenever the proxy count has doubled or halved since; ``max_cells`` is the
    number of cells above which a box is oversize and tested against every box instead.

    ``query`` and ``raycast`` are linear scans.
    """

    def __init__(self, cell_size: "Optional[float]" = None, max_cells: "int" = 64):
        super().__init__()
        if cell_size is not None and not (isinstance(cell_size, numbers.Real) and np.isfinite(cell_size)
                                          and cell_size > 0):
            raise GeometryError(f"cell_size must be a finite number > 0 or None, got {cell_size!r}")
        if not (isinstance(max_cells, numbers.Integral) and max_cells >= 1):
            raise GeometryError(f"max_cells must be an int >= 1, got {max_cells!r}")
        self._fixed: bool = cell_size is not None
        self._cell: float = float(cell_size) if cell_size is not None else 0.0
        self._chosen_at: int = 0
        self.max_cells: int = int(max_cells)
        self._static_table: "Any" = None

    @property
    def cell_size(self) -> float:
        """Current cell side (0 before an automatic choice has been made)."""
        return self._cell

    def _inserted(self, p):
        if self._flags[p] == K.STATIC:
            self._static_table = None

    def _removing(self, p):
        if self._flags[p] == K.STATIC:
            self._static_table = None

    def _update(self, ids, lowers, uppers):
        if self._static_table is not None and (self._flags[ids] == K.STATIC).any():
            self._static_table = None
        K.set_boxes(self._lower, self._upper, ids, lowers, uppers)

    def pairs(self) -> "np.ndarray":
        """(K, 2) int64 array of proxy ids whose boxes overlap, each pair once as (i < j), rows sorted: boxes binned
        into square cells (the cell size chosen from the boxes unless fixed)."""
        if not self._fixed and (self._cell == 0.0 or not
                                (self._chosen_at // 2 < self._count <= 2 * self._chosen_at)):
            self._cell = float(K.grid_choose_cell(self._lower, self._upper, self._flags, self._n))
            self._chosen_at = self._count
            self._static_table = None
        if self._static_table is None:
            self._static_table = K.grid_build(self._lower, self._upper, self._flags, self._n, K.STATIC,
                                              self._cell, self.max_cells)
        return K.grid_pairs(self._lower, self._upper, self._flags, self._n, self._cell, self.max_cells,
                            *self._static_table)
