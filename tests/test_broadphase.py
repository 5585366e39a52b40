"""Broad phases against brute force and independent oracles.

Every structure runs the same seeded sequence of inserts, moves, bulk updates and removes; after every
operation its pairs, queries and ray casts must equal BruteForce's exactly, and BruteForce itself is
checked against a NumPy broadcast oracle (pairs, queries) and shapely (which boxes a segment crosses).
The dynamic tree's invariants are checked after every operation by walking its node pool in Python.
"""
import math

import numpy as np
import pytest
import shapely
from hypothesis import given, settings, strategies as st, HealthCheck

from carom.errors import CaromError, GeometryError
from carom.geometry import _broadphase_kernels as K, _tree_pairs
from carom.geometry.broadphase import BruteForce, SweepAndPrune, DynamicTree, UniformGrid

STRUCTURES = (SweepAndPrune, DynamicTree, UniformGrid)
KINDS = ("uniform", "clustered", "identical", "zero", "lattice", "huge")
SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------------------------------------------------
# oracles
# ---------------------------------------------------------------------------------------------------------

def oracle_pairs(bp):
    """All overlapping (closed) pairs by NumPy broadcasting, static–static dropped."""
    ids = bp.ids()
    if ids.size == 0:
        return np.zeros((0, 2), np.int64)
    lo = np.array([bp.box(int(i))[0] for i in ids])
    hi = np.array([bp.box(int(i))[1] for i in ids])
    stat = np.array([bp.is_static(int(i)) for i in ids])
    ov = ((lo[None, :, 0] <= hi[:, None, 0]) & (lo[:, None, 0] <= hi[None, :, 0])
          & (lo[None, :, 1] <= hi[:, None, 1]) & (lo[:, None, 1] <= hi[None, :, 1]))
    ov &= ~(stat[:, None] & stat[None, :])
    a, b = np.nonzero(np.triu(ov, 1))
    out = np.stack([ids[a], ids[b]], axis=1).astype(np.int64)
    return out[np.lexsort((out[:, 1], out[:, 0]))] if len(out) else out.reshape(0, 2)


def oracle_query(bp, qlo, qhi):
    return np.array([i for i in bp.ids()
                     if np.all(bp.box(int(i))[0] <= qhi) and np.all(qlo <= bp.box(int(i))[1])], np.int64)


def entry_fraction(lo, hi, o, d):
    """Independent slab test in plain Python (returns None for a miss)."""
    t0, t1 = 0.0, 1.0
    for a in range(2):
        if d[a] == 0.0:
            if not lo[a] <= o[a] <= hi[a]:
                return None
        else:
            ta, tb = sorted(((lo[a] - o[a]) / d[a], (hi[a] - o[a]) / d[a]))
            t0, t1 = max(t0, ta), min(t1, tb)
            if t0 > t1:
                return None
    return t0


def oracle_raycast(bp, o, d):
    hits = []
    for i in bp.ids():
        t = entry_fraction(*bp.box(int(i)), o, d)
        if t is not None:
            hits.append((t, int(i)))
    return np.array([i for _, i in sorted(hits)], np.int64)


def check_tree(tree):
    """Parent boxes contain children, heights are 1 + max of the children's, the height stays within
    2 log2(leaves) + 1 (an AVL tree is within 1.44 log2; rotations here are single, so allow a bit more),
    every leaf's fat box contains its proxy's real box, and live + free nodes partition the pool."""
    for static in (False, True):
        d = tree.nodes(static)
        proxies = [int(i) for i in tree.ids() if tree.is_static(int(i)) == static]
        root = d["root"]
        assert d["leaves"] == len(proxies)
        if root == -1:
            assert not proxies
            continue
        assert d["parent"][root] == -1
        seen, leaves, stack = set(), [], [root]
        while stack:
            v = stack.pop()
            assert v not in seen
            seen.add(v)
            c1, c2 = d["child1"][v], d["child2"][v]
            if c1 == -1:
                assert c2 == -1 and d["height"][v] == 0
                p = int(d["proxy"][v])
                leaves.append(p)
                assert tree.leaf_of(p) == v
                lo, hi = tree.box(p)
                assert np.all(d["lower"][v] <= lo) and np.all(hi <= d["upper"][v])
                continue
            assert d["proxy"][v] == -1
            for c in (c1, c2):
                assert d["parent"][c] == v
                assert np.all(d["lower"][v] <= d["lower"][c]) and np.all(d["upper"][c] <= d["upper"][v])
            assert d["height"][v] == 1 + max(d["height"][c1], d["height"][c2])
            stack += [c1, c2]
        assert sorted(leaves) == sorted(proxies)
        assert len(seen) == 2 * len(proxies) - 1
        n = len(proxies)
        assert d["height"][root] <= 2 * math.log2(n) + 1
        free, v = set(), d["free"]
        while v != -1:
            assert v not in free and v not in seen and d["height"][v] == -1
            free.add(v)
            v = d["parent"][v]
        assert len(free) + len(seen) == len(d["height"])


# ---------------------------------------------------------------------------------------------------------
# seeded operation sequences
# ---------------------------------------------------------------------------------------------------------

def random_box(rng, kind):
    if kind == "uniform":
        lo = rng.uniform(-20, 20, 2)
        return lo, lo + rng.uniform(0, 4, 2)
    if kind == "clustered":
        c = np.array([[0.0, 0.0], [5.0, 5.0], [-30.0, 2.0]])[rng.integers(3)]
        lo = c + rng.normal(0, 1.0, 2)
        return lo, lo + rng.uniform(0, 1.5, 2)
    if kind == "identical":
        return np.array([1.0, -2.0]), np.array([2.5, 0.5])
    if kind == "zero":
        p = rng.integers(-3, 4, 2).astype(float) * 0.5
        return p, p.copy()
    if kind == "lattice":   # integer corners: boxes touch exactly at edges and corners
        lo = rng.integers(-6, 6, 2).astype(float)
        return lo, lo + rng.integers(0, 3, 2)
    # huge: mostly small boxes, some enormous ones, some far from the origin
    r = rng.random()
    if r < 0.25:
        lo = rng.uniform(-1e5, 0, 2)
        return lo, lo + rng.uniform(1e4, 2e5, 2)
    if r < 0.4:
        lo = rng.uniform(-1e6, 1e6, 2)
        return lo, lo + rng.uniform(0, 10, 2)
    lo = rng.uniform(-20, 20, 2)
    return lo, lo + rng.uniform(0, 2, 2)


def nudge(rng, kind, lo, hi):
    """Coherent motion: a small shift (zero for the degenerate kinds, to keep them degenerate)."""
    if kind in ("identical", "zero", "lattice"):
        return lo, hi
    d = rng.normal(0, 0.05 if kind != "huge" else 5.0, 2)
    return lo + d, hi + d


def run_sequence(seed, kind, n_ops, check):
    rng = np.random.default_rng(seed)
    ref = BruteForce()
    others = [cls() for cls in STRUCTURES]
    every = [ref] + others
    for step in range(n_ops):
        ids = ref.ids()
        r = rng.random()
        if r < 0.4 or len(ids) < 2:
            lo, hi = random_box(rng, kind)
            static = bool(rng.random() < 0.25)
            got = {bp.insert(lo, hi, static=static) for bp in every}
            assert len(got) == 1
        elif r < 0.6:
            p = int(rng.choice(ids))
            lo, hi = random_box(rng, kind)
            for bp in every:
                bp.move(p, lo, hi)
        elif r < 0.85:
            sel = rng.choice(ids, size=int(rng.integers(1, len(ids) + 1)), replace=False)
            boxes = [nudge(rng, kind, *ref.box(int(p))) for p in sel]
            lows = np.array([b[0] for b in boxes])
            ups = np.array([b[1] for b in boxes])
            for bp in every:
                bp.update(sel, lows, ups)
        else:
            p = int(rng.choice(ids))
            for bp in every:
                bp.remove(p)
        check(rng, kind, ref, others)


def check_all(rng, kind, ref, others):
    expected = ref.pairs()
    assert expected.dtype == np.int64 and expected.shape[1] == 2
    np.testing.assert_array_equal(expected, oracle_pairs(ref))
    for bp in others:
        got = bp.pairs()
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, expected, err_msg=type(bp).__name__)
        if isinstance(bp, DynamicTree):
            check_tree(bp)
    lo, hi = random_box(rng, kind)
    q = ref.query(lo, hi)
    np.testing.assert_array_equal(q, oracle_query(ref, lo, hi))
    o = rng.uniform(-25, 25, 2)
    d = rng.uniform(-50, 50, 2)
    if kind in ("zero", "lattice", "identical") and rng.random() < 0.5:
        o, d = np.round(o), np.round(d) * (rng.random() < 0.7)   # axis-aligned and grid-aligned rays
    ray = ref.raycast(o, d)
    np.testing.assert_array_equal(ray, oracle_raycast(ref, o, d))
    for bp in others:
        np.testing.assert_array_equal(bp.query(lo, hi), q, err_msg=type(bp).__name__)
        np.testing.assert_array_equal(bp.raycast(o, d), ray, err_msg=type(bp).__name__)


@pytest.mark.parametrize("kind", KINDS)
@SETTINGS
@given(seed=st.integers(0, 2 ** 32 - 1))
def test_every_structure_agrees_with_brute_force(kind, seed):
    run_sequence(seed, kind, 40, check_all)


@SETTINGS
@given(seed=st.integers(0, 2 ** 32 - 1))
def test_deferred_insertion_agrees_with_brute_force_and_the_eager_tree(seed):
    """A tree with deferred insertion (the world's: a proxy gets its leaf when the tree is next read) runs the
    same inserts, removes and moves as the eager tree, with reads only now and then, so that several inserts
    wait together and some proxies are removed before they ever got a leaf: every read gives brute force's
    pairs, queries and ray casts, and the node pool holds the tree invariants."""
    rng = np.random.default_rng(seed)
    ref, eager, deferred = BruteForce(), DynamicTree(), DynamicTree(deferred=True)
    every = (ref, eager, deferred)
    # enough proxies that a read with a few new or moved ones uses the pair cache (the move buffer), not a
    # sweep of every proxy
    for _ in range(320):
        lo, hi = random_box(rng, "uniform")
        static = bool(rng.random() < 0.25)
        assert len({bp.insert(lo, hi, static=static) for bp in every}) == 1
    check_all(rng, "uniform", ref, [eager, deferred])
    pending_seen = 0
    for step in range(60):
        ids = ref.ids()
        r = rng.random()
        if r < 0.55 or len(ids) < 2:
            lo, hi = random_box(rng, "uniform")
            static = bool(rng.random() < 0.25)
            assert len({bp.insert(lo, hi, static=static) for bp in every}) == 1
        elif r < 0.75:
            p = int(rng.choice(ids))
            for bp in every:
                bp.remove(p)
        else:
            p = int(rng.choice(ids))
            lo, hi = random_box(rng, "uniform")
            for bp in every:
                bp.move(p, lo, hi)
        pending_seen = max(pending_seen, int(deferred._moved_meta[2]))
        if rng.random() < 0.3:
            check_all(rng, "uniform", ref, [eager, deferred])
            assert deferred._moved_meta[2] == 0
    check_all(rng, "uniform", ref, [eager, deferred])
    assert pending_seen >= 2


@pytest.mark.parametrize("seed", range(3))
def test_removing_many_proxies_at_once_is_removing_them_one_at_a_time(seed):
    """``remove_many_checked`` (a world's ``remove_bodies``: one compiled call for the lot) against ``remove`` one
    proxy after the other, on twin trees with deferred insertion: the same ids, free list, leaves and node pools,
    and brute force's pairs after; some of the proxies removed never had a leaf, and the ids come in no order."""
    rng = np.random.default_rng(seed)
    ref, one, many = BruteForce(), DynamicTree(deferred=True), DynamicTree(deferred=True)
    every = (ref, one, many)
    for _ in range(4):
        for _ in range(150):
            lo, hi = random_box(rng, "uniform")
            static = bool(rng.random() < 0.25)
            assert len({bp.insert(lo, hi, static=static) for bp in every}) == 1
        check_all(rng, "uniform", ref, [one, many])      # (every leaf made: the next removals find them)
        for _ in range(150):
            lo, hi = random_box(rng, "uniform")
            static = bool(rng.random() < 0.25)
            assert len({bp.insert(lo, hi, static=static) for bp in every}) == 1
        ids = ref.ids()
        gone = rng.choice(ids, size=len(ids) // 3, replace=False).tolist()
        assert any(many._leaf[p] < 0 for p in gone) and any(many._leaf[p] >= 0 for p in gone)
        for p in gone:
            ref.remove(p)
            one.remove(p)
        many.remove_many_checked(gone)
        for name in ("_leaf", "_flags", "_moved_meta"):
            assert getattr(one, name).tobytes() == getattr(many, name).tobytes()
        assert one._free == many._free and one._count == many._count
        for static in (False, True):
            a, b = one.nodes(static), many.nodes(static)
            assert a.keys() == b.keys()
            for key in a:
                np.testing.assert_array_equal(a[key], b[key], err_msg=key)
        check_all(rng, "uniform", ref, [one, many])


def test_many_proxies_agree_with_brute_force():
    """A larger coherent scene (several hundred boxes, 30 frames) including re-sorts and tree rotations."""
    rng = np.random.default_rng(7)
    n = 600
    lo = rng.uniform(0, 60, (n, 2))
    hi = lo + rng.uniform(0.2, 2.0, (n, 2))
    vel = rng.normal(0, 0.3, (n, 2))
    every = [BruteForce()] + [cls() for cls in STRUCTURES]
    for bp in every:
        for k in range(n):
            bp.insert(lo[k], hi[k], static=k % 10 == 0)
    ids = np.arange(n)
    for frame in range(30):
        moving = ids[ids % 10 != 0]
        lo[moving] += vel[moving]
        hi[moving] += vel[moving]
        if frame == 15:                      # the scene turns: the spread moves from x to y
            size = (hi - lo)[:, ::-1]
            lo = lo[:, ::-1] * np.array([0.1, 3.0])
            hi = lo + size
            moving = ids
        for bp in every:
            bp.update(moving, lo[moving], hi[moving])
        expected = every[0].pairs()
        assert len(expected) > n // 4
        np.testing.assert_array_equal(K.tree_pairs(*every[2]._trees, every[2]._lower, every[2]._upper,
                                                   every[2]._flags, every[2]._n), expected)
        for bp in every[1:]:
            np.testing.assert_array_equal(bp.pairs(), expected, err_msg=type(bp).__name__)
    check_tree(every[2])
    assert every[1].axis == 1


def test_raycast_set_matches_shapely():
    """Which boxes a segment crosses, against shapely's (closed) intersection predicate."""
    rng = np.random.default_rng(3)
    tree, brute = DynamicTree(), BruteForce()
    boxes = []
    for _ in range(200):
        lo = rng.uniform(-20, 20, 2)
        hi = lo + rng.uniform(0, 3, 2)
        boxes.append(shapely.box(lo[0], lo[1], hi[0], hi[1]))
        tree.insert(lo, hi)
        brute.insert(lo, hi)
    for _ in range(50):
        o = rng.uniform(-25, 25, 2)
        d = rng.uniform(-40, 40, 2)
        seg = shapely.LineString([o, o + d])
        want = sorted(i for i, b in enumerate(boxes) if seg.intersects(b))
        got = tree.raycast(o, d)
        assert sorted(got.tolist()) == want
        np.testing.assert_array_equal(got, brute.raycast(o, d))
        # order: along the ray, by the distance from o to where the segment first meets the box
        dist = [shapely.Point(o).distance(seg.intersection(boxes[i])) for i in got]
        assert all(a <= b + 1e-9 for a, b in zip(dist, dist[1:]))


def test_raycast_details():
    bp = DynamicTree()
    a = bp.insert((0, 0), (1, 1))
    b = bp.insert((2, -1), (3, 1))
    c = bp.insert((2, 0.5), (2.5, 2))      # entered at the same fraction as b
    bp.insert((0, 5), (1, 6))
    np.testing.assert_array_equal(bp.raycast((0.5, 0.5), (4, 0)), [a, b, c])
    np.testing.assert_array_equal(bp.raycast((5, 0.5), (-4, 0)), [b, c, a])
    np.testing.assert_array_equal(bp.raycast((-1, 0.5), (1, 0)), [a])       # ends exactly on the face
    np.testing.assert_array_equal(bp.raycast((-1, 0.5), (0.99, 0)), [])
    np.testing.assert_array_equal(bp.raycast((0.5, 0.5), (0, 0)), [a])       # a point inside a box


# ---------------------------------------------------------------------------------------------------------
# structure-specific behaviour
# ---------------------------------------------------------------------------------------------------------

def test_static_pairs_never_reported():
    for cls in (BruteForce,) + STRUCTURES:
        bp = cls()
        s1 = bp.insert((0, 0), (2, 2), static=True)
        s2 = bp.insert((1, 1), (3, 3), static=True)
        m = bp.insert((1.5, 1.5), (1.6, 1.6))
        np.testing.assert_array_equal(bp.pairs(), [[s1, m], [s2, m]], err_msg=cls.__name__)
        bp.move(s2, (0, 0), (2, 2))
        np.testing.assert_array_equal(bp.pairs(), [[s1, m], [s2, m]], err_msg=cls.__name__)


def test_ids_are_reused_last_removed_first():
    for cls in (BruteForce,) + STRUCTURES:
        bp = cls()
        ids = [bp.insert((i, 0), (i + 1, 1)) for i in range(5)]
        assert ids == [0, 1, 2, 3, 4]
        bp.remove(1)
        bp.remove(3)
        assert bp.insert((0, 0), (1, 1)) == 3
        assert bp.insert((0, 0), (1, 1)) == 1
        assert bp.insert((0, 0), (1, 1)) == 5
        assert len(bp) == 6


def test_small_moves_do_not_touch_the_tree():
    tree = DynamicTree()
    rng = np.random.default_rng(5)
    for _ in range(50):
        lo = rng.uniform(0, 20, 2)
        tree.insert(lo, lo + 1)
    before = tree.nodes()
    lo, hi = tree.box(7)
    tree.move(7, lo + 0.5 * tree.margin, hi + 0.5 * tree.margin)     # still inside the fat box
    after = tree.nodes()
    for key in ("lower", "upper", "parent", "child1", "child2", "height"):
        np.testing.assert_array_equal(before[key], after[key])
    tree.move(7, lo + 5 * tree.margin, hi + 5 * tree.margin)          # leaves it: reinserted, enlarged
    leaf = tree.leaf_of(7)
    d = tree.nodes()
    new_lo, new_hi = tree.box(7)
    # stretched ahead along the motion by multiplier × displacement, margin behind
    assert d["upper"][leaf][0] == pytest.approx(new_hi[0] + tree.margin + tree.multiplier * 4.5 * tree.margin)
    assert d["lower"][leaf][0] == pytest.approx(new_lo[0] - tree.margin)
    check_tree(tree)


def test_tree_stays_balanced_for_sorted_inserts():
    """Inserting along a line is the worst case for an unbalanced tree (it degenerates to a list)."""
    tree = DynamicTree()
    for i in range(1024):
        tree.insert((i, 0), (i + 0.5, 0.5))
        if i % 97 == 0:
            check_tree(tree)
    check_tree(tree)
    assert tree.height <= 2 * 10 + 1
    for i in range(0, 1024, 2):
        tree.remove(i)
    check_tree(tree)


def test_sweep_and_prune_follows_the_spread():
    sap = SweepAndPrune()
    ids = [sap.insert((0, 3 * k), (1, 3 * k + 1)) for k in range(20)]     # spread along y
    sap.pairs()
    assert sap.axis == 1
    sap.update(ids, [(3 * k, 0) for k in range(20)], [(3 * k + 1, 1) for k in range(20)])
    assert len(sap.pairs()) == 0
    assert sap.axis == 0


def test_grid_cell_size():
    g = UniformGrid()
    for k in range(9):
        g.insert((10 * k, 0), (10 * k + 2 + (k % 3), 1))      # sizes 2, 3, 4: median 3
    g.pairs()
    assert g.cell_size == 3.0
    pts = UniformGrid()
    for k in range(16):
        pts.insert((k, 0), (k, 0))                           # points: spread / sqrt(count) = 15 / 4
    pts.pairs()
    assert pts.cell_size == pytest.approx(15 / 4)
    assert UniformGrid(cell_size=0.5).cell_size == 0.5
    with pytest.raises(GeometryError, match="-1"):
        UniformGrid(cell_size=-1)


def test_grid_without_world_bounds():
    """Cells far apart (and beyond int32 cell coordinates) hash without aliasing into false pairs."""
    g, b = UniformGrid(cell_size=1e-3), BruteForce()
    for x in (-1e12, -5e6, 0.0, 3.0, 5e6, 1e12):
        for bp in (g, b):
            bp.insert((x, x), (x + 1e-3, x + 1e-3))
            bp.insert((x + 1e-3, x), (x + 2e-3, x + 1e-3))
    np.testing.assert_array_equal(g.pairs(), b.pairs())
    assert len(b.pairs()) == 6


def test_kernels_callable_without_python_wrappers():
    """The compiled world step calls the kernels over raw arrays."""
    lower = np.array([[0.0, 0.0], [0.5, 0.5], [5.0, 5.0]])
    upper = lower + 1.0
    flags = np.array([K.MOVING, K.MOVING, K.STATIC], np.int8)
    np.testing.assert_array_equal(K.brute_pairs(lower, upper, flags, 3), [[0, 1]])
    order = np.array([2, 1, 0], np.int64)
    meta = np.array([3, 0], np.int64)
    np.testing.assert_array_equal(K.sap_pairs(lower, upper, flags, 3, order, meta), [[0, 1]])
    assert list(order) == [0, 1, 2]
    tree = DynamicTree()
    for k in range(3):
        tree.insert(lower[k], upper[k], static=k == 2)
    np.testing.assert_array_equal(K.tree_pairs(*tree._trees, lower, upper, flags, 3), [[0, 1]])
    table = K.grid_build(lower, upper, flags, 3, K.STATIC, 1.0, 64)
    np.testing.assert_array_equal(K.grid_pairs(lower, upper, flags, 3, 1.0, 64, *table), [[0, 1]])


# ---------------------------------------------------------------------------------------------------------
# bad input: a carom error naming the value, and no change
# ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("cls", (BruteForce,) + STRUCTURES)
def test_bad_input_raises_and_changes_nothing(cls):
    bp = cls()
    a = bp.insert((0, 0), (1, 1))
    b = bp.insert((0.5, 0.5), (2, 2), static=True)
    pairs = bp.pairs()
    box = bp.box(a)

    def unchanged():
        np.testing.assert_array_equal(bp.pairs(), pairs)
        np.testing.assert_array_equal(bp.box(a)[0], box[0])
        assert len(bp) == 2

    with pytest.raises(GeometryError, match="nan"):
        bp.insert((np.nan, 0), (1, 1))
    with pytest.raises(GeometryError, match="inf"):
        bp.insert((0, 0), (np.inf, 1))
    with pytest.raises(GeometryError, match="3"):
        bp.insert((3, 0), (1, 1))
    with pytest.raises(GeometryError):
        bp.insert((0, 0, 0), (1, 1))
    unchanged()
    with pytest.raises(GeometryError, match="nan"):
        bp.move(a, (5, 5), (np.nan, 6))
    with pytest.raises(CaromError, match="17"):
        bp.move(17, (5, 5), (6, 6))
    with pytest.raises(CaromError, match="True"):
        bp.remove(True)
    with pytest.raises(GeometryError, match=r"lowers\[1\]"):
        bp.update([a, b], [(9, 9), (np.inf, 0)], [(10, 10), (1, 1)])
    with pytest.raises(GeometryError, match=r"box 0"):
        bp.update([a, b], [(9, 9), (0, 0)], [(8, 10), (1, 1)])
    with pytest.raises(CaromError, match="5"):
        bp.update([a, 5], [(9, 9), (0, 0)], [(10, 10), (1, 1)])
    with pytest.raises(GeometryError, match="shape"):
        bp.update([a, b], [(9, 9)], [(10, 10)])
    with pytest.raises(GeometryError, match="nan"):
        bp.raycast((0, 0), (np.nan, 1))
    unchanged()
    bp.remove(a)
    with pytest.raises(CaromError, match=str(a)):
        bp.move(a, (0, 0), (1, 1))
    with pytest.raises(CaromError, match=str(a)):
        bp.remove(a)
    with pytest.raises(CaromError, match=str(a)):
        bp.update([a], [(0, 0)], [(1, 1)])


# ---------------------------------------------------------------------------------------------------------
# dynamic tree: bulk updates (most proxies leave their fat boxes) — rebuild and grid pair search
# ---------------------------------------------------------------------------------------------------------

def fat_pairs_brute(tree, real=False):
    """Every pair whose *fat* leaf boxes overlap (closed, not static–static), as sorted keys i << 32 | j:
    the invariant of the dynamic tree's pair cache. With ``real``, the pairs of the real boxes instead."""
    ids = tree.ids()
    if ids.size < 2:
        return np.zeros(0, np.int64)
    nodes = [tree.nodes(False), tree.nodes(True)]
    stat = np.array([tree.is_static(int(i)) for i in ids])
    if real:
        lo, hi = tree._lower[ids], tree._upper[ids]
    else:
        lo = np.array([nodes[int(s)]["lower"][tree.leaf_of(int(i))] for i, s in zip(ids, stat)])
        hi = np.array([nodes[int(s)]["upper"][tree.leaf_of(int(i))] for i, s in zip(ids, stat)])
    ov = ((lo[None, :, 0] <= hi[:, None, 0]) & (lo[:, None, 0] <= hi[None, :, 0])
          & (lo[None, :, 1] <= hi[:, None, 1]) & (lo[:, None, 1] <= hi[None, :, 1]))
    ov &= ~(stat[:, None] & stat[None, :])
    a, b = np.nonzero(np.triu(ov, 1))
    return np.sort((ids[a].astype(np.int64) << 32) | ids[b])


def check_cache(tree, pairs):
    """The pair cache right after ``pairs = tree.pairs()``: every fat-overlapping pair, or, after a busy
    step (``_moved_meta[1]`` set: the grid ran on the real boxes), exactly the pairs just returned."""
    if tree._moved_meta[1]:
        np.testing.assert_array_equal(tree._cand, (pairs[:, 0].astype(np.int64) << 32) | pairs[:, 1])
    else:
        np.testing.assert_array_equal(tree._cand, fat_pairs_brute(tree))


def bulk_box(rng, mix):
    """A box of a mixed-size world: mostly small, some medium, a few huge (far more than 64 grid cells),
    a few points; "sparse" spreads small boxes over a region far too large for a dense grid."""
    r = rng.random()
    if mix == "sparse":
        lo = rng.uniform(-1e4, 1e4, 2)
        return lo, lo + rng.uniform(0.2, 2.0, 2)
    if r < 0.04:                                     # huge: a kinematic wall, a long platform
        lo = rng.uniform(-30, 10, 2)
        return lo, lo + rng.uniform(20, 60, 2) * (rng.random(2) < 0.7) + rng.uniform(0.1, 1, 2)
    if r < 0.08:
        p = rng.uniform(-20, 20, 2)
        return p, p.copy()
    lo = rng.uniform(-20, 20, 2) if mix == "spread" else rng.normal(0, 4, 2)
    size = rng.uniform(0.1, 1.0, 2) if r < 0.8 else rng.uniform(1.0, 4.0, 2)
    return lo, lo + size


def check_tree_against_brute(tree, ref, rng, mix):
    pairs = tree.pairs()
    np.testing.assert_array_equal(pairs, ref.pairs())
    check_cache(tree, pairs)
    check_tree(tree)
    for _ in range(3):
        lo, hi = bulk_box(rng, mix)
        np.testing.assert_array_equal(tree.query(lo, hi), ref.query(lo, hi))
        o = rng.uniform(-30, 30, 2)
        d = rng.uniform(-60, 60, 2)
        np.testing.assert_array_equal(tree.raycast(o, d), ref.raycast(o, d))


def run_bulk_sequence(seed, mix, frames=10):
    """A world where, frame after frame, most proxies move (bulk update: tree rebuilt, pairs from the grid)
    or only one does (incremental), with proxies removed and added in between; everything is compared with
    brute force after every frame. Returns how many frames took the bulk and the incremental path."""
    rng = np.random.default_rng(seed)
    tree, ref = DynamicTree(), BruteForce()
    for _ in range(int(rng.integers(70, 200))):
        lo, hi = bulk_box(rng, mix)
        static = bool(rng.random() < 0.1)
        assert tree.insert(lo, hi, static=static) == ref.insert(lo, hi, static=static)
    check_tree_against_brute(tree, ref, rng, mix)
    bulk_frames = incremental_frames = 0
    for frame in range(frames):
        ids = ref.ids()
        moving = np.array([p for p in ids if not ref.is_static(int(p))], np.int64)
        bulk = frame % 3 != 2                             # two bulk frames, then an incremental one
        if bulk:
            sel = moving[rng.random(moving.size) < rng.uniform(0.5, 1.0)]
            step = rng.normal(0, 0.6, (sel.size, 2))      # far beyond the 0.1 margin: leaves its fat box
        else:                                             # one proxy, out of its fat box: reinserted
            sel = rng.choice(moving, size=1)
            step = rng.normal(0, 2.0, (1, 2))
        if rng.random() < 0.4:                            # now and then a static proxy moves too
            sel = np.append(sel, [p for p in ids if ref.is_static(int(p))][:1]).astype(np.int64)
            step = np.vstack([step, rng.normal(0, 2.0, (sel.size - step.shape[0], 2))])
        if sel.size:
            lows = np.array([ref.box(int(p))[0] for p in sel]) + step
            ups = np.array([ref.box(int(p))[1] for p in sel]) + step
            if bulk and rng.random() < 0.3:               # resize some: grow, shrink, collapse to a point
                ups = lows + (ups - lows) * rng.choice([0.0, 0.5, 3.0], (sel.size, 1))
            before = tree.nodes()
            for bp in (tree, ref):
                bp.update(sel, lows, ups)
            if tree._moved_meta[0] <= K.SWEEP_FRACTION * len(tree):
                incremental_frames += tree._moved_meta[0] > 0
            else:
                bulk_frames += 1
                # a rebuilt tree is perfectly balanced; a refitted one keeps its shape (tree_refit_or_rebuild)
                d = tree.nodes()
                if d["leaves"] > 1 and tree._moved_meta[0] - 1 > K.SWEEP_FRACTION * d["leaves"]:
                    balanced = d["height"][d["root"]] <= math.ceil(math.log2(d["leaves"])) + 1
                    same_shape = all(np.array_equal(d[f], before[f]) for f in ("child1", "child2", "parent"))
                    assert balanced or same_shape
        # churn between updates: remove a few (now and then one just moved), add a few (ids are reused)
        gone = rng.choice(ids, size=min(ids.size, int(rng.integers(0, 4))), replace=False)
        if sel.size and rng.random() < 0.3:
            gone = np.union1d(gone, sel[:1])
        for p in gone:
            for bp in (tree, ref):
                bp.remove(int(p))
        for _ in range(int(rng.integers(0, 4))):
            lo, hi = bulk_box(rng, mix)
            static = bool(rng.random() < 0.1)
            assert tree.insert(lo, hi, static=static) == ref.insert(lo, hi, static=static)
        check_tree_against_brute(tree, ref, rng, mix)
    return bulk_frames, incremental_frames


@pytest.mark.parametrize("mix", ("clustered", "spread", "sparse"))
@SETTINGS
@given(seed=st.integers(0, 2 ** 32 - 1))
def test_bulk_updates_agree_with_brute_force(mix, seed):
    bulk_frames, incremental_frames = run_bulk_sequence(seed, mix)
    assert bulk_frames >= 1 and incremental_frames >= 1


def test_bulk_update_rebuilds_a_large_tree():
    """2,000 proxies of mixed sizes, most moving every frame: the tree is rebuilt (height ceil(log2 n)) or,
    while the old topology is still good, refitted in place (same children everywhere); the pairs come from
    the grid and equal brute force, and incremental frames in between keep working."""
    rng = np.random.default_rng(11)
    n = 2000
    tree, ref = DynamicTree(), BruteForce()
    lo = rng.uniform(0, 90, (n, 2))
    hi = lo + np.where(rng.random((n, 1)) < 0.9, rng.uniform(0.3, 1.2, (n, 2)), rng.uniform(1, 5, (n, 2)))
    hi[:3] = lo[:3] + [[80, 1], [1, 80], [70, 70]]             # huge: more than 64 cells
    static = rng.random(n) < 0.05
    for bp in (tree, ref):
        for k in range(n):
            bp.insert(lo[k], hi[k], static=bool(static[k]))
    moving = np.flatnonzero(~static)
    rebuilds = 0
    for frame in range(8):
        sel = moving if frame % 4 != 3 else moving[:20]
        if frame == 1:                       # a static one too: the static tree's few movers are reinserted
            sel = np.append(sel, np.flatnonzero(static)[:1])
        vel = rng.normal(0, 0.4, (sel.size, 2))                   # a new direction: leaves the fat box
        lo[sel] += vel
        hi[sel] += vel
        before = tree.nodes()
        for bp in (tree, ref):
            bp.update(sel, lo[sel], hi[sel])
        if frame % 4 != 3:
            assert tree._moved_meta[0] > n // 2
            d = tree.nodes()
            rebuilt = d["height"][d["root"]] == math.ceil(math.log2(d["leaves"]))
            refitted = all(np.array_equal(d[f], before[f]) for f in ("child1", "child2", "parent", "height"))
            assert rebuilt or refitted
            rebuilds += rebuilt and not refitted
        check_tree(tree)
        pairs = tree.pairs()
        np.testing.assert_array_equal(pairs, ref.pairs())
        assert len(pairs) > n // 2
        assert tree._moved_meta[1] == (frame % 4 != 3)      # busy frames leave the real pairs
        check_cache(tree, pairs)
    assert rebuilds >= 1                     # the first bulk frame rebuilds (no quality recorded yet)
    check_tree(tree)
    for _ in range(20):
        q = rng.uniform(0, 90, 2)
        np.testing.assert_array_equal(tree.query(q, q + 3), ref.query(q, q + 3))
        o, d = rng.uniform(-5, 95, 2), rng.uniform(-100, 100, 2)
        np.testing.assert_array_equal(tree.raycast(o, d), ref.raycast(o, d))


def _inner_over_leaf_perimeters(tree):
    d = tree.nodes()
    live = d["height"] >= 0
    per = (d["upper"][:, 0] - d["lower"][:, 0]) + (d["upper"][:, 1] - d["lower"][:, 1])
    return per[live & (d["height"] > 0)].sum() / per[live & (d["height"] == 0)].sum()


def test_bulk_update_refits_a_coherent_tree_and_rebuilds_a_scrambled_one():
    """A bulk move that keeps neighbours together (a whole grid of boxes drifting by the same small step)
    refits the boxes in place: the topology stays and every box still holds its children. A bulk move that
    scrambles the boxes makes the refitted tree worse than REFIT_QUALITY_FACTOR × a fresh one's inner/leaf
    perimeter ratio, so it is rebuilt (height ceil(log2 n)). Pairs equal brute force throughout."""
    from carom.geometry import _broadphase_kernels as K
    rng = np.random.default_rng(5)
    side = 40
    n = side * side
    tree, ref = DynamicTree(), BruteForce()
    gx, gy = np.meshgrid(np.arange(side) * 1.5, np.arange(side) * 1.5)
    lo = np.column_stack([gx.ravel(), gy.ravel()])
    hi = lo + 1.0
    for bp in (tree, ref):
        for k in range(n):
            bp.insert(lo[k], hi[k])
    ids = np.arange(n)
    for bp in (tree, ref):                   # first bulk move: nothing to compare with, so a rebuild
        bp.update(ids, lo + 0.5, hi + 0.5)
    lo += 0.5
    hi += 0.5
    fresh = _inner_over_leaf_perimeters(tree)
    for frame in range(3):                   # the whole grid shakes: same neighbours, refitted
        step = np.array([0.3, -0.3]) * (-1) ** frame      # a new direction every frame: leaves the fat boxes
        lo += step
        hi += step
        before = tree.nodes()
        for bp in (tree, ref):
            bp.update(ids, lo, hi)
        assert tree._moved_meta[0] == n
        d = tree.nodes()
        for f in ("child1", "child2", "parent", "height"):
            np.testing.assert_array_equal(d[f], before[f])
        assert _inner_over_leaf_perimeters(tree) <= K.REFIT_QUALITY_FACTOR * fresh
        check_tree(tree)
        np.testing.assert_array_equal(tree.pairs(), ref.pairs())
    perm = rng.permutation(n)                # every box jumps to another's place: the old tree is useless
    lo, hi = lo[perm].copy(), hi[perm].copy()
    for bp in (tree, ref):
        bp.update(ids, lo, hi)
    d = tree.nodes()
    assert d["height"][d["root"]] == math.ceil(math.log2(n))
    assert _inner_over_leaf_perimeters(tree) <= K.REFIT_QUALITY_FACTOR * fresh
    check_tree(tree)
    pairs = tree.pairs()
    np.testing.assert_array_equal(pairs, ref.pairs())
    check_cache(tree, pairs)
    np.testing.assert_array_equal(tree.pairs(), ref.pairs())     # a quiet step after a busy one rebuilds
    assert tree._moved_meta[1] == 0
    np.testing.assert_array_equal(tree._cand, fat_pairs_brute(tree))


def test_bulk_update_with_repeated_ids():
    """An id listed twice in one bulk update ends with its last box, inside its leaf's fat box."""
    tree, ref = DynamicTree(), BruteForce()
    for k in range(10):
        for bp in (tree, ref):
            bp.insert((k, 0), (k + 0.8, 0.8))
    ids = np.array([0, 1, 2, 3, 4, 5, 0, 3, 3])
    lows = np.array([[5, 5], [1, 0.5], [2, 0.5], [9, 9], [4, 0.5], [5, 0.5], [0.2, 0.1], [3, 7], [3.05, 0.6]])
    for bp in (tree, ref):
        bp.update(ids, lows, lows + 0.8)
    np.testing.assert_array_equal(tree.box(0)[0], [0.2, 0.1])
    np.testing.assert_array_equal(tree.box(3)[0], [3.05, 0.6])
    np.testing.assert_array_equal(tree.pairs(), ref.pairs())
    check_tree(tree)


def test_tree_rebuild_degenerate_leaves():
    """Rebuilding keeps every leaf (and leaf_of) and balances the tree, also when all centres coincide, lie
    on a line, or one box is a million metres away (radix sort of the centres with a huge range)."""
    cases = {
        "same": [((1.0, 1.0), (2.0, 2.0))] * 37,
        "line": [((float(i), 0.0), (i + 0.5, 0.5)) for i in range(64)],
        "far": [((float(i % 8), float(i // 8)), (i % 8 + 0.5, i // 8 + 0.5)) for i in range(40)]
               + [((1e6, -1e6), (1e6 + 1, -1e6 + 1))],
        "one": [((0.0, 0.0), (1.0, 1.0))],
        "two": [((0.0, 0.0), (1.0, 1.0)), ((5.0, 5.0), (6.0, 6.0))],
        "three": [((0.0, 0.0), (1.0, 1.0)), ((5.0, 5.0), (6.0, 6.0)), ((2.0, 9.0), (3.0, 9.0))],
    }
    for name, boxes in cases.items():
        tree = DynamicTree()
        ids = [tree.insert(lo, hi) for lo, hi in boxes]
        leaves = [tree.leaf_of(p) for p in ids]
        free_before = tree.nodes()["free"]
        K.tree_rebuild(tree._trees[0])
        check_tree(tree)
        d = tree.nodes()
        assert d["height"][d["root"]] == math.ceil(math.log2(len(boxes))), name
        assert [tree.leaf_of(p) for p in ids] == leaves and d["free"] == free_before, name
        # and it stays a working tree for incremental inserts, moves and removals
        ref = BruteForce()
        for lo, hi in boxes:
            ref.insert(lo, hi)
        for bp in (tree, ref):
            bp.insert((0.5, 0.5), (1.5, 1.5))
            bp.move(0, (3, 3), (4, 4))
            bp.remove(1)
        check_tree(tree)
        np.testing.assert_array_equal(tree.pairs(), ref.pairs())
        np.testing.assert_array_equal(tree.raycast((-1, 0.7), (80, 0.1)), ref.raycast((-1, 0.7), (80, 0.1)))


def test_radix_order_sorts():
    """Sorted up to 2**-32 of the keys' range (a tree build needs no more), ties kept in index order."""
    rng = np.random.default_rng(2)
    for key in (rng.normal(0, 1, 1000), rng.integers(-3, 3, 500).astype(float), np.array([2.5]),
                np.array([1e6, -1e6, 0.0, 1e-9, -1e-9, 3.0]), np.full(17, 4.0), np.zeros(0)):
        order = K._radix_order(key)
        assert sorted(order.tolist()) == list(range(key.size))
        if key.size:
            assert np.all(np.diff(key[order]) >= -np.ptp(key) * 2.0 ** -32)
    np.testing.assert_array_equal(K._radix_order(np.array([1e6, -1e6, 0.0, 1e-9, -1e-9, 3.0])),
                                  [1, 2, 3, 4, 5, 0])      # 0 and ±1e-9 tie at this range: index order
    ties = np.array([1.0, 0.0, 1.0, 0.0, 1.0])
    np.testing.assert_array_equal(K._radix_order(ties), [1, 3, 0, 2, 4])     # stable: ties by index


def test_grid_pairs_directions_and_huge():
    """The grid's pairs, of the fat boxes and of the real boxes: statics fewer than the moving proxies (each
    static queries the moving tree) and more numerous (each moving proxy queries the static tree); huge
    moving proxies, overlapping each other: strips (each queries the moving tree) and, in the first world,
    two boxes over everything (each tests every box in turn); cells far apart (hashed numbering)."""
    rng = np.random.default_rng(4)
    for n_static, n_moving, spread in ((3, 200, 20.0), (300, 20, 20.0), (10, 60, 1e5)):
        tree = DynamicTree()
        for k in range(n_static):
            lo = rng.uniform(-spread, spread, 2)
            tree.insert(lo, lo + rng.uniform(0.1, 3, 2), static=True)
        for k in range(n_moving):
            lo = rng.uniform(-spread, spread, 2)
            tree.insert(lo, lo + rng.uniform(0.1, 2, 2))
        for k in range(3):
            tree.insert((-spread, -1.0 + k), (spread, 1.0 + k))             # huge and overlapping
            if n_moving == 200 and k < 2:
                tree.insert((-spread - 5.0 - k, -spread - 5.0), (spread + 5.0, spread + 5.0 + k))
        args = (*tree._trees, tree._lower, tree._upper, tree._flags, tree._leaf)
        np.testing.assert_array_equal(K._pairs_by_grid(*args, False, 1), fat_pairs_brute(tree))
        real = K._pairs_by_grid(*args, True, 1)
        np.testing.assert_array_equal(real, fat_pairs_brute(tree, real=True))
        assert 0 < real.size <= fat_pairs_brute(tree).size


@pytest.mark.parametrize("walls", [2, 12])
@pytest.mark.parametrize("spread", [30.0, 1e5])
def test_grid_pairs_with_a_static_floor_of_cells_are_the_brute_force_pairs(walls, spread):
    """Static proxies of at most a grid cell (a floor of ground boxes, as rain's) find their moving partners in
    the grid's 3 × 3 cells around them (``_static_cells_run``); larger static ones (``walls``: a few, which test
    every moving box in turn while the moving tree is stale, or more, which query it, one infinite) and moving
    proxies left out of the grid (huge ones) find theirs by queries. Fat and real boxes, dense and hashed cells
    (``spread``), after a bulk move (the moving tree stale) and with 1 and 2 parts: brute force's pairs."""
    rng = np.random.default_rng(int(walls + spread) % 1000)
    tree = DynamicTree()
    # three spots, far apart with the larger spread (the occupied cells then too sparse to number densely)
    spots = np.array([(-0.5 * spread, 0.0), (0.0, 0.0), (0.5 * spread, 0.3 * spread)]) * (spread > 100.0)
    for k in range(400):                                  # floors of cells of 0.5 m, under and among the crowd
        lo = spots[k % 3] + (-25.0 + 0.5 * (k // 3 % 100), 2.0 * (k // 300) - 1.0)
        tree.insert(lo, lo + 0.5, static=True)
    for k in range(walls):
        lo = spots[k % 3] + rng.uniform(-15, 15, 2)
        tree.insert(lo, lo + (rng.uniform(5, 40), 0.5) if k % 2 else lo + (0.5, rng.uniform(5, 40)), static=True)
    tree.insert((-1e308, -3.0), (1e308, -2.0), static=True)        # (its width overflows to infinity)
    crowd = []
    for k in range(600):                                  # the crowd, binned
        lo = spots[k % 3] + rng.normal(0, 6, 2)
        crowd.append(tree.insert(lo, lo + rng.uniform(0.2, 0.6, 2)))
    for k in range(3):                                    # huge moving ones, left out of the grid
        lo = spots[k] + rng.uniform(-10, 10, 2)
        crowd.append(tree.insert(lo, lo + rng.uniform(5.0, 20.0, 2)))
    args = (*tree._trees, tree._lower, tree._upper, tree._flags, tree._leaf)
    for bulk in (False, True):
        if bulk:                                          # everything moves at once: the moving tree goes stale
            moving = np.array(crowd, np.int64)
            step = rng.normal(0, 0.3, (moving.size, 2))
            tree.update(moving, tree._lower[moving] + step, tree._upper[moving] + step)
            args = (*tree._trees, tree._lower, tree._upper, tree._flags, tree._leaf)
        for real in (False, True):
            expected = fat_pairs_brute(tree, real=real)
            assert expected.size > 0
            for threads in (1, 2):
                np.testing.assert_array_equal(K._pairs_by_grid(*args, real, threads), expected)


@pytest.mark.parametrize("crowded", [False, True])
def test_grid_pairs_in_parallel_parts_are_the_brute_force_pairs(crowded):
    """From ``GRID_PARALLEL_ENTRIES`` entries on, the grid tests its entries in one part per thread, and each part
    also looks up its share of the small static proxies in the grid's cells (``_static_cells_run``); the parts'
    pairs, sorted, are exactly the brute-force pairs for 1, 2 and 3 parts (3: parts of unequal ends), with a
    floor of small static boxes and a few larger ones. Crowded: a few hundred equal boxes on one spot, each with
    more partners than its part's buffer holds (8 per entry), and small static boxes under them with more than
    theirs (16 per static proxy), so parts stop early and their remaining entries and static proxies are tested
    afterwards."""
    rng = np.random.default_rng(12)
    tree = DynamicTree()
    n = K.GRID_PARALLEL_ENTRIES + 900
    for k in range(n):
        lo = rng.uniform(0.0, 120.0, 2)
        tree.insert(lo, lo + rng.uniform(0.2, 1.5, 2))
    if crowded:
        for k in range(300):
            tree.insert((60.0, 60.0), (60.5, 60.5))
    for k in range(20):
        lo = rng.uniform(0.0, 120.0, 2)
        tree.insert(lo, lo + 3.0, static=True)
    for k in range(600):                                  # a floor of small static boxes
        lo = (0.5 * (k % 240), 40.0 + 20.0 * (k // 240))
        tree.insert(lo, (lo[0] + 0.5, lo[1] + 0.5), static=True)
    if crowded:
        for k in range(30):                               # under the crowd
            tree.insert((59.9 + 0.01 * k, 59.9), (60.2 + 0.01 * k, 60.2), static=True)
    args = (*tree._trees, tree._lower, tree._upper, tree._flags, tree._leaf)
    for real in (False, True):
        expected = fat_pairs_brute(tree, real=real)
        for threads in (1, 2, 3):
            np.testing.assert_array_equal(K._pairs_by_grid(*args, real, threads), expected)
    smalls, _, bigs = K._static_boxes(tree._trees[1], tree._flags, tree._leaf, tree._lower, tree._upper, True,
                                      1.6, True)
    assert smalls.size >= 600 and bigs.size >= 20


def test_few_moving_proxies_pairs_are_the_brute_force_pairs():
    """Up to ``FEW_MOVING`` moving proxies (a small world) every pair is tested in turn instead of binned in the
    grid: the same sorted pairs as brute force, for 2 … FEW_MOVING + 1 moving proxies (the last through the
    grid), crowded or spread, with statics, and with an infinite box (through the grid)."""
    rng = np.random.default_rng(21)
    for m in range(2, K.FEW_MOVING + 2):
        for spread, giant in ((1.0, False), (6.0, False), (3.0, True)):
            tree = DynamicTree()
            for k in range(5):
                lo = rng.uniform(-spread, spread, 2)
                tree.insert(lo, lo + rng.uniform(0.1, 2, 2), static=True)
            for k in range(m):
                lo = rng.uniform(-spread, spread, 2)
                tree.insert(lo, lo + rng.uniform(0.1, 2, 2))
            if giant:
                tree.insert((-1e308, -1.0), (1e308, 1.0))
            args = (*tree._trees, tree._lower, tree._upper, tree._flags, tree._leaf)
            for real in (False, True):
                expected = fat_pairs_brute(tree, real=real)
                np.testing.assert_array_equal(K._pairs_by_grid(*args, real, 1), expected)


def test_grid_pairs_of_points_and_boxes_of_infinite_size():
    """Points (no margin) with boxes whose size overflows to infinity (corners ±1e308), half of them or more:
    the median size is infinite, the cell comes from the points' spread, and the infinite boxes, which fit
    in no cell, are tested on their own."""
    rng = np.random.default_rng(9)
    for n_points, n_giant in ((20, 25), (30, 3)):
        tree = DynamicTree(margin=0.0, multiplier=0.0)
        for p in rng.uniform(-10, 10, (n_points, 2)):
            tree.insert(p, p)
        for k in range(n_giant):
            tree.insert((-1e308, -1e308 + k), (1e308, 1e308 - k))
        args = (*tree._trees, tree._lower, tree._upper, tree._flags, tree._leaf)
        for real in (False, True):
            expected = fat_pairs_brute(tree, real=real)
            assert expected.size > 0
            np.testing.assert_array_equal(K._pairs_by_grid(*args, real, 1), expected)


def test_bulk_update_of_points_without_margin():
    """With no margin the fat boxes of points are points: the grid falls back to a cell from the spread of
    the boxes, and to 1 when every point is the same."""
    rng = np.random.default_rng(8)
    for spread in (10.0, 0.0):
        tree, ref = DynamicTree(margin=0.0, multiplier=0.0), BruteForce()
        pts = np.round(rng.uniform(-spread, spread, (60, 2)))
        for p in pts:
            for bp in (tree, ref):
                bp.insert(p, p)
        for frame in range(3):
            pts = np.round(pts + rng.normal(0, 2.0, pts.shape)) if spread else pts + 1.0
            for bp in (tree, ref):
                bp.update(np.arange(60), pts, pts)
            assert tree._moved_meta[0] > 30
            pairs = tree.pairs()
            np.testing.assert_array_equal(pairs, ref.pairs())
            check_cache(tree, pairs)
            check_tree(tree)


def test_pairs_with_an_empty_move_buffer():
    """With nothing on the move buffer the cache is kept (the very same array while no proxy was removed),
    removed proxies' pairs leave it, and small moves inside the fat boxes change the pairs, not the cache;
    a removed id inserted again (now static, next to static proxies) goes through the merge as usual."""
    rng = np.random.default_rng(21)
    tree, ref = DynamicTree(), BruteForce()
    for k in range(300):
        lo = rng.uniform(0, 25, 2)
        hi = lo + rng.uniform(0.2, 1.5, 2)
        for bp in (tree, ref):
            bp.insert(lo, hi, static=bool(k % 10 == 0))
    np.testing.assert_array_equal(tree.pairs(), ref.pairs())
    assert tree._moved_meta[1] == 1          # every proxy new: a busy step, which leaves the real pairs
    np.testing.assert_array_equal(tree.pairs(), ref.pairs())          # and the next rebuilds the cache
    cand = tree._cand
    assert tree._moved_meta[0] == 0 and tree._moved_meta[1] == 0 and cand.size > 0
    np.testing.assert_array_equal(cand, fat_pairs_brute(tree))
    for _ in range(2):                                   # idle: same pairs, same cache object
        np.testing.assert_array_equal(tree.pairs(), ref.pairs())
        assert tree._cand is cand
    ids = ref.ids()
    sel = ids[ids % 10 != 0][:40]                        # nudged within their fat boxes: no reinsertion
    lows = np.array([ref.box(int(p))[0] for p in sel]) + 0.3 * tree.margin
    ups = np.array([ref.box(int(p))[1] for p in sel]) + 0.3 * tree.margin
    for bp in (tree, ref):
        bp.update(sel, lows, ups)
    assert tree._moved_meta[0] == 0
    np.testing.assert_array_equal(tree.pairs(), ref.pairs())
    assert tree._cand is cand
    gone = sorted({int(p) for p in np.unique(cand >> 32)[:5]} | {0})   # proxies with cached pairs, 0 static
    for p in gone:
        for bp in (tree, ref):
            bp.remove(p)
    assert tree._moved_meta[0] == 0
    np.testing.assert_array_equal(tree.pairs(), ref.pairs())
    np.testing.assert_array_equal(tree._cand, fat_pairs_brute(tree))
    assert not np.isin(tree._cand >> 32, gone).any() and not np.isin(tree._cand & 0xFFFFFFFF, gone).any()
    lo, hi = ref.box(int(next(p for p in ref.ids() if ref.is_static(int(p)))))  # the reused id meets it
    for bp in (tree, ref):
        assert bp.insert(lo, hi, static=True) == gone[-1]
    np.testing.assert_array_equal(tree.pairs(), ref.pairs())
    np.testing.assert_array_equal(tree._cand, fat_pairs_brute(tree))
    # a moving proxy with a cached static partner, removed and inserted again as static before the next
    # pairs(): its stale pair is still cached, and dropped as static–static
    stat = {int(p) for p in ref.ids() if ref.is_static(int(p))}
    c = tree._cand
    p = next(int(i) for i, j in zip(c >> 32, c & 0xFFFFFFFF) if int(j) in stat and int(i) not in stat)
    lo, hi = ref.box(p)
    for bp in (tree, ref):
        bp.remove(p)
        assert bp.insert(lo, hi, static=True) == p
    np.testing.assert_array_equal(tree.pairs(), ref.pairs())
    np.testing.assert_array_equal(tree._cand, fat_pairs_brute(tree))
    check_tree(tree)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 2**62), max_size=300), st.integers(0, 300), st.integers(0, 5))
def test_sorted_keys_is_numpy_sort(values, cut, repeats):
    """``_sorted_keys(a, k)`` (the small quicksort the broad phase uses instead of Numba's np.sort) is
    np.sort(a[:k]) for int64 keys, duplicates and runs of equal keys included."""
    a = np.array(values + values[:repeats] * repeats, np.int64)
    k = min(cut, len(a))
    np.testing.assert_array_equal(K._sorted_keys(a, k), np.sort(a[:k]))


def test_grid_key_order_with_small_and_crowded_buckets():
    """The grid's key sort (counting sort by the smaller id, then each bucket by the larger) equals np.sort,
    for proxies with a few partners and for one with hundreds (a long wall's bucket)."""
    rng = np.random.default_rng(12)
    n = 400
    i = np.concatenate([rng.integers(0, n - 1, 1500), np.full(300, 3)])
    j = i + 1 + (rng.random(i.size) * (n - 1 - i)).astype(np.int64)
    keys = np.unique((i.astype(np.int64) << 32) | j)
    shuffled = rng.permutation(keys)
    out = K._keys_in_order(np.concatenate([shuffled, [-1, -1]]), shuffled.size, n)
    np.testing.assert_array_equal(out, keys)
    assert np.bincount((keys >> 32).astype(np.int64)).max() > 100
    # the crowded bucket's keys in order (a wall tested against every box in turn), the rest shuffled;
    # then one pair of them swapped
    crowded = keys[(keys >> 32) == 3]
    rest = rng.permutation(keys[(keys >> 32) != 3])
    for order in (crowded, crowded[[1, 0, *range(2, crowded.size)]]):
        mixed = np.concatenate([rest[:500], order, rest[500:]])
        np.testing.assert_array_equal(K._keys_in_order(mixed, mixed.size, n), keys)


def test_crowded_boxes_grow_the_buffers_and_agree_with_brute_force():
    """200 boxes piled on one spot, all moving each frame: each grid entry has far more partners than the pair
    buffer first holds, and a query finds more proxies than its first buffer holds, so the walks stop, the
    buffers grow and the walks resume (``_grid_entry_pairs``, ``_tree_collect``); nothing is lost or doubled."""
    rng = np.random.default_rng(5)
    n = 200
    tree, ref = DynamicTree(), BruteForce()
    lo = rng.uniform(0, 0.5, (n, 2))
    hi = lo + rng.uniform(0.5, 1.0, (n, 2))
    for k in range(n):
        tree.insert(lo[k], hi[k])
        ref.insert(lo[k], hi[k])
    for frame in range(3):
        lo = lo + rng.uniform(-0.3, 0.3, (n, 2))
        hi = lo + rng.uniform(0.5, 1.0, (n, 2))
        tree.update(np.arange(n), lo, hi)
        ref.update(np.arange(n), lo, hi)
        pairs = np.asarray(tree.pairs()).reshape(-1, 2)
        assert len(pairs) > 8 * n                                # more than the grid's first buffer
        expected = np.asarray(ref.pairs()).reshape(-1, 2)
        assert sorted(map(tuple, pairs.tolist())) == sorted(map(tuple, expected.tolist()))
        assert sorted(np.asarray(tree.query((-10.0, -10.0), (10.0, 10.0))).tolist()) == list(range(n))


def test_many_box_queries_at_once_agree_with_brute_force():
    """``tree_query_boxes`` (the continuous stage's one call for all its swept boxes) against brute force: 300
    query boxes over 200 crowded proxies, so the hits outgrow their first buffer and the walks resume; an empty
    tree gives no hits."""
    from carom.geometry import _broadphase_kernels as K
    rng = np.random.default_rng(6)
    n = 200
    tree = DynamicTree()
    lo = rng.uniform(0, 3, (n, 2))
    hi = lo + rng.uniform(0.1, 1.0, (n, 2))
    for k in range(n):
        tree.insert(lo[k], hi[k])
    q_lo = rng.uniform(-1, 4, (300, 2))
    boxes = np.hstack([q_lo, q_lo + rng.uniform(0.0, 2.0, (300, 2))])
    first, hits = K.tree_query_boxes(tree._trees[0], tree._lower, tree._upper, boxes, 250)
    assert first.shape == (251,) and first[-1] == len(hits) > 250         # past the first buffer (n)
    for i in range(250):
        ql, qu = boxes[i, :2], boxes[i, 2:]
        expected = np.flatnonzero(np.all(lo <= qu, axis=1) & np.all(ql <= hi, axis=1))
        assert sorted(hits[first[i]:first[i + 1]].tolist()) == expected.tolist()
    first, hits = K.tree_query_boxes(K.tree_new(), tree._lower, tree._upper, boxes, 3)
    assert first.tolist() == [0, 0, 0, 0] and len(hits) == 0


def stale(tree, static=False):
    """Whether one of a DynamicTree's trees waits for a refit (``tree_fit``)."""
    return bool(tree._trees[1 if static else 0].meta[4])


@SETTINGS
@given(seed=st.integers(0, 2 ** 32 - 1), statics=st.integers(1, 12))
def test_a_bulk_move_leaves_the_tree_stale_until_something_reads_it(seed, statics):
    """After a bulk move the moving tree's inner boxes are not refitted (``tree_update`` marks it stale). A
    busy step's pairs come from the grid, with a few static proxies (``_cross_scan``) and a few big moving
    ones left out of the grid tested against every moving box in turn, so the tree stays stale through busy
    steps; the pairs equal brute force all along.
    Whatever reads the tree next (the queries of a quiet step's movers, a query, a ray cast, an insertion) refits it
    first, and gets brute force's answer."""
    rng = np.random.default_rng(seed)
    tree, ref = DynamicTree(), BruteForce()
    for k in range(300):
        if k < statics:                                   # walls, long and thin
            lo = rng.uniform(-20, 20, 2)
            hi = lo + (rng.uniform(5, 40), 0.5) if rng.random() < 0.5 else lo + (0.5, rng.uniform(5, 40))
        elif k < statics + 2:                             # two big ones, left out of the grid
            lo = rng.normal(0, 4, 2)
            hi = lo + rng.uniform(3.0, 6.0, 2)
        else:                                             # a crowd of like sizes, binned in the grid
            lo = rng.normal(0, 4, 2)
            hi = lo + rng.uniform(0.3, 0.5, 2)
        assert tree.insert(lo, hi, static=k < statics) == ref.insert(lo, hi, static=k < statics)
    np.testing.assert_array_equal(tree.pairs(), ref.pairs())
    moving = np.array([p for p in ref.ids() if not ref.is_static(int(p))], np.int64)
    for _ in range(3):                                    # busy steps: everything moves
        step = rng.normal(0, 0.6, (moving.size, 2))
        lows = np.array([ref.box(int(p))[0] for p in moving]) + step
        ups = np.array([ref.box(int(p))[1] for p in moving]) + step
        for bp in (tree, ref):
            bp.update(moving, lows, ups)
        assert stale(tree)
        np.testing.assert_array_equal(tree.pairs(), ref.pairs())
        assert stale(tree) == (statics <= K.STALE_SCAN_LIMIT)
    if statics <= K.STALE_SCAN_LIMIT:
        reader = rng.integers(0, 4)
        if reader == 0:
            # quiet steps, one proxy moving in each: the first rebuilds the cache with the grid (it held only the
            # busy steps' real pairs) and need not read the tree, which its mover, moved in place, left stale;
            # the second's mover queries it
            for p in (moving[:1], moving[1:2]):
                for bp in (tree, ref):
                    bp.update(p, [ref.box(int(p[0]))[0] + 2.0], [ref.box(int(p[0]))[1] + 2.0])
                np.testing.assert_array_equal(tree.pairs(), ref.pairs())
        elif reader == 1:
            lo, hi = bulk_box(rng, "clustered")
            np.testing.assert_array_equal(tree.query(lo, hi), ref.query(lo, hi))
        elif reader == 2:
            o, d = rng.uniform(-30, 30, 2), rng.uniform(-60, 60, 2)
            np.testing.assert_array_equal(tree.raycast(o, d), ref.raycast(o, d))
        else:
            lo, hi = bulk_box(rng, "clustered")
            assert tree.insert(lo, hi) == ref.insert(lo, hi)
        assert not stale(tree)
    check_tree_against_brute(tree, ref, rng, "clustered")


def _copied(table):
    """A deep copy of a DynamicTree's step table (its trees' arrays too)."""
    return tuple(type(a)(*(x.copy() for x in a)) if isinstance(a, tuple) else
                 (a.copy() if isinstance(a, np.ndarray) else a) for a in table)


def _flat(table):
    return [x for a in table for x in (a if isinstance(a, tuple) else (a,)) if isinstance(x, np.ndarray)]


def test_the_broad_passes_in_two_threads_equal_one_thread():
    """The world step's broad passes split between two threads (``tree_update_threads`` and ``_unmoved_pairs``,
    run in parts by ``broad_apart`` once it is loaded) give bitwise what one thread gives: every array of the
    trees, the boxes, the move buffer, and the same sorted pairs. The parts really run (``run_parts`` answers
    True for the step's argument types), on more proxies than ``PARALLEL_ITEMS``, some of which leave their fat
    boxes (reinserted, in the order of the ids) and some of which stay."""
    rng = np.random.default_rng(7)
    n = K.PARALLEL_ITEMS + 700
    tree = DynamicTree()
    side = int(math.ceil(math.sqrt(n)))
    for k in range(n):
        lo = np.array([k % side, k // side], float) * 0.9 + rng.uniform(0, 0.05, 2)
        tree.insert(lo, lo + 1.0, static=k < 40)
    tree.pairs()                                   # (the pair cache, and an empty move buffer)
    table = tree.step_table()
    assert _tree_pairs.load_grid(table, 2)
    moving, static, lower, upper, flags, leaf, moved, moved_flag, meta, cand, margin, mult = _copied(table)
    unmoved = [K._unmoved_pairs(moving, static, lower, upper, flags, leaf, cand, t) for t in (1, 2)]
    np.testing.assert_array_equal(unmoved[0][0], unmoved[1][0])
    assert unmoved[0][0].size > 0 and unmoved[1][1] is cand
    counts = np.empty((2, 2), np.int64)
    pairs = np.empty(cand.size, np.int64)
    assert K.run_parts(np.int64(K.UNMOVED_PAIRS), moving, static, lower, upper, flags, leaf, cand, lower, upper, 0.0,
                       0.0, cand, pairs, counts, 2, flags, pairs)
    assert K.joined_parts(pairs, counts, cand.size, 2)[0] == unmoved[0][0].size
    ids = np.arange(n, dtype=np.int64)
    shift = np.where(rng.random((n, 1)) < 0.1, rng.normal(0, 0.5, (n, 2)), rng.normal(0, 0.002, (n, 2)))
    lowers = np.ascontiguousarray(table[2][:n] + shift)
    uppers = np.ascontiguousarray(table[3][:n] + shift)
    one, two, three = _copied(table), _copied(table), _copied(table)
    K.tree_update(*one[:6], ids, lowers, uppers, one[10], one[11], *one[6:9])
    K.tree_update_threads(*two[:6], ids, lowers, uppers, two[10], two[11], *two[6:9], 2)
    assert 0 < one[8][0] < n                       # some moved, not all
    for a, b in zip(_flat(one), _flat(two)):
        np.testing.assert_array_equal(a, b)
    pending = np.empty(n, np.int64)
    assert K.run_parts(np.int64(K.FAT_BOXES), *three[:6], ids, lowers, uppers, three[10], three[11], ids, pending,
                       counts, 2, three[4], pending)
    count, _ = K.joined_parts(pending, counts, n, 2)
    np.testing.assert_array_equal(pending[:count], one[6][:one[8][0]])


def test_the_merge_in_two_threads_equals_one_thread():
    """The merge of the pair cache with the moved proxies' new pairs (``tree_pairs_cached`` when fewer than
    ``SWEEP_FRACTION`` of the proxies left their fat boxes) split between two threads (``merge_run`` in parts by
    ``broad_apart``) gives bitwise the pairs and the cache of one thread, and both are those of brute force over
    the boxes: moved proxies whose new pairs are in the cache already, pairs that no longer fat-overlap, removed
    proxies' pairs, static proxies among them; and the parts really run."""
    rng = np.random.default_rng(11)
    n = K.PARALLEL_ITEMS + 900
    tree = DynamicTree()
    side = int(math.ceil(math.sqrt(n)))
    ids = []
    for k in range(n):
        lo = np.array([k % side, k // side], float) * 0.9 + rng.uniform(0, 0.05, 2)
        ids.append(tree.insert(lo, lo + 1.0, static=k % 97 == 0))
    tree.pairs()
    for p in rng.choice(n, 25, replace=False):     # (their cached pairs are dead now)
        if not tree.is_static(int(ids[p])):
            tree.remove(int(ids[p]))
    table = tree.step_table()
    assert _tree_pairs.load_grid(table, 2)
    live = np.array([p for p in range(n) if table[4][p] == K.MOVING])
    movers = rng.choice(live, int(0.02 * n), replace=False)
    lowers = np.ascontiguousarray(table[2][live])
    uppers = np.ascontiguousarray(table[3][live])
    shift = rng.normal(0, 0.6, (movers.size, 2))
    where = np.searchsorted(live, movers)
    lowers[where] += shift
    uppers[where] += shift
    got = []
    for threads in (1, 2):
        t = _copied(table)
        K.tree_update(*t[:6], live.astype(np.int64), lowers, uppers, t[10], t[11], *t[6:9])
        assert 0 < t[8][0] < K.SWEEP_FRACTION * n      # some moved, the merge's path (not the grid's)
        pairs, cand = K.tree_pairs_cached(*t[:10], threads)
        got.append((pairs.copy(), cand.copy(), t))
    np.testing.assert_array_equal(got[0][0], got[1][0])
    np.testing.assert_array_equal(got[0][1], got[1][1])
    for a, b in zip(_flat(got[0][2]), _flat(got[1][2])):
        np.testing.assert_array_equal(a, b)
    # brute force over the real boxes of the live proxies, a moving one in each pair
    t = got[0][2]
    lo, hi, flags = t[2], t[3], t[4]
    alive = np.nonzero(flags != K.FREE)[0]
    want = set()
    for x in range(alive.size):
        i = alive[x]
        j = alive[x + 1:]
        hit = j[(lo[j, 0] <= hi[i, 0]) & (lo[i, 0] <= hi[j, 0]) & (lo[j, 1] <= hi[i, 1]) & (lo[i, 1] <= hi[j, 1])
                & ((flags[j] == K.MOVING) | (flags[i] == K.MOVING))]
        want.update(int(i) << 32 | int(q) for q in hit)
    assert set(got[0][0].tolist()) == want and np.all(np.diff(got[0][0]) > 0)
    # the parts themselves, on the same cache and new keys
    t = _copied(table)
    K.tree_update(*t[:6], live.astype(np.int64), lowers, uppers, t[10], t[11], *t[6:9])
    cand = t[9]
    pick = np.sort(rng.choice(live, (400, 2)), axis=1)
    made = (pick[:, 0].astype(np.int64) << 32) | pick[:, 1]
    made = made[(pick[:, 0] != pick[:, 1]) & ~np.isin(made, cand)]
    new = np.unique(np.concatenate([rng.choice(cand, 300, replace=False), made]))   # (in the cache, and not)
    size = cand.size + new.size
    out, pairs, counts = np.empty(size, np.int64), np.empty(size, np.int64), np.empty((2, 2), np.int64)
    assert K.run_parts(np.int64(K.MERGE), *t[:6], new, t[2], t[3], 0.0, 0.0, cand, out, counts, 2, t[7], pairs)
    o0, o1, p0, p1 = K.joined_merge(out, pairs, counts, cand, new, 2)
    one_out, one_pairs = np.empty(size, np.int64), np.empty(size, np.int64)
    m, r = K.merge_run(0, cand.size, 0, new.size, 0, False, cand, new, *t[:6], t[7], one_out, one_pairs)
    np.testing.assert_array_equal(out[o0:o1], one_out[:m])
    np.testing.assert_array_equal(pairs[p0:p1], one_pairs[:r])
    assert m < size and r < m                      # (some keys dropped, some pairs without real overlap)
    # backward, ending at the array's end: the same keys
    back_out, back_pairs = np.empty(size, np.int64), np.empty(size, np.int64)
    assert K.merge_run(0, cand.size, 0, new.size, size, True, cand, new, *t[:6], t[7], back_out, back_pairs) == (m, r)
    np.testing.assert_array_equal(back_out[size - m:], one_out[:m])
    np.testing.assert_array_equal(back_pairs[size - r:], one_pairs[:r])
    # three parts: a glued pair and one alone, put together
    counts3 = np.empty((3, 2), np.int64)
    assert K.run_parts(np.int64(K.MERGE), *t[:6], new, t[2], t[3], 0.0, 0.0, cand, out, counts3, 3, t[7], pairs)
    o0, o1, p0, p1 = K.joined_merge(out, pairs, counts3, cand, new, 3)
    np.testing.assert_array_equal(out[o0:o1], one_out[:m])
    np.testing.assert_array_equal(pairs[p0:p1], one_pairs[:r])


def test_leaves_moved_in_place_keep_the_tree_whole_and_get_refitted():
    """Fewer than ``SWEEP_FRACTION`` of the proxies leaving their fat boxes keep their leaves' places, the ancestors
    grown to hold the new boxes (``_tree_enlarge_leaf``): parents still hold their children (``check_tree``), and the
    pairs, queries and ray casts stay those of brute force, also for leaves moved far from their neighbours. Once more
    than 1 / ``REFIT_AFTER`` of the leaves moved so, the tree is marked stale and its next reader refits it."""
    rng = np.random.default_rng(5)
    n = 1200
    tree, ref = DynamicTree(), BruteForce()
    for k in range(n):
        lo = rng.uniform(-40, 40, 2)
        hi = lo + rng.uniform(0.2, 2.0, 2)
        assert tree.insert(lo, hi) == ref.insert(lo, hi)
    tree.pairs()
    moving = tree._trees[0]
    loose = stale_seen = 0
    for round_ in range(30):
        ids = rng.choice(n, int(0.02 * n), replace=False).astype(np.int64)
        far = rng.random(ids.size) < 0.3
        shift = np.where(far[:, None], rng.uniform(-40, 40, (ids.size, 2)), rng.normal(0, 0.5, (ids.size, 2)))
        lo = np.array([tree.box(int(p))[0] for p in ids]) + shift
        hi = np.array([tree.box(int(p))[1] for p in ids]) + shift
        before = int(moving.meta[5])
        tree.update(ids, lo, hi)
        ref.update(ids, lo, hi)
        stale_seen += bool(moving.meta[4])
        if not moving.meta[4]:
            assert moving.meta[5] > before             # (moved in place, counted)
            d = tree.nodes(False)
            inner = np.flatnonzero(np.asarray(d["child1"]) >= 0)
            c1, c2 = np.asarray(d["child1"])[inner], np.asarray(d["child2"])[inner]
            union_lo = np.minimum(np.asarray(d["lower"])[c1], np.asarray(d["lower"])[c2])
            loose += int(np.any(np.asarray(d["lower"])[inner] < union_lo))
        check_tree_against_brute(tree, ref, rng, "uniform")
        assert not moving.meta[4] and moving.meta[5] * K.REFIT_AFTER <= moving.meta[2]
    assert loose > 0 and stale_seen > 0
