"""GJK distance, EPA penetration and the GJK/EPA contact manifold, against shapely and brute-force SAT."""
import math

import numpy as np
import pytest
import shapely
from shape_gen import core_geometry
from hypothesis import given, settings, strategies as st

from carom.errors import GeometryError
from carom.geometry.shapes import Circle, Capsule, Segment, Polygon, Transform, box
from carom.geometry.gjk import distance, overlap, shape_distance
from carom.geometry.epa import penetration, epa_penetration
from carom.geometry.contact_gjk import collide_gjk_shapes, collide_gjk
from carom.geometry._math import relative_transform

KINDS = ("circle", "capsule", "segment", "polygon", "rounded")


# ---------------------------------------------------------------------------------------------------------
# seeded shape generators and shapely oracles

def random_polygon(rng, scale, radius=0.0):
    while True:
        n = int(rng.integers(3, 10))
        if rng.random() < 0.3:                       # slivers and near-degenerate outlines too
            pts = rng.normal(0, scale, (n, 2)) * np.array([1.0, rng.uniform(0.02, 0.2)])
        else:
            ang = np.sort(rng.uniform(0, 2 * math.pi, n))
            rad = scale * rng.uniform(0.4, 1.0, n)
            pts = np.stack([rad * np.cos(ang), rad * np.sin(ang)], axis=1)
        pts = pts + rng.normal(0, 0.3 * scale, 2)    # the body origin is not the centroid
        try:
            return Polygon(pts, radius)
        except GeometryError:
            continue


def random_shape(rng, kinds=KINDS):
    kind = kinds[int(rng.integers(len(kinds)))]
    scale = float(rng.uniform(0.2, 2.0))
    if kind == "circle":
        return Circle(scale * rng.uniform(0.2, 1.0), rng.normal(0, 0.3 * scale, 2))
    if kind in ("capsule", "segment"):
        p1 = rng.normal(0, scale, 2)
        p2 = p1 + rng.normal(0, scale, 2)
        if np.hypot(*(p2 - p1)) < 0.05:
            p2 = p1 + 0.1
        if kind == "segment":
            return Segment(p1, p2)
        return Capsule(p1, p2, scale * rng.uniform(0.05, 0.5))
    return random_polygon(rng, scale, scale * rng.uniform(0.02, 0.3) if kind == "rounded" else 0.0)


def random_transform(rng, spread=2.5):
    return Transform(rng.uniform(-spread, spread, 2), rng.uniform(-math.pi, math.pi))


def core_distance(a, xa, b, xb):
    return core_geometry(a, xa).distance(core_geometry(b, xb))


def signed_gap(a, xa, b, xb):
    """Distance between the rounded surfaces when the cores are apart (negative when shells overlap)."""
    return core_distance(a, xa, b, xb) - a.radius - b.radius


def random_pairs(seed, count, kinds=KINDS, spread=0.8):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        yield (random_shape(rng, kinds), random_transform(rng, spread),
               random_shape(rng, kinds), random_transform(rng, spread))


def sat_polygons(a, xa, b, xb):
    """Brute-force SAT for polygon cores: (largest separation over all edge normals, its normal A→B,
    the gap to the second-best axis with a different normal)."""
    A, B = xa.apply(a.vertices), xb.apply(b.vertices)
    cands = []
    for P, Q, sign in ((A, B, 1.0), (B, A, -1.0)):
        for i in range(len(P)):
            e = P[(i + 1) % len(P)] - P[i]
            n = np.array([e[1], -e[0]]) / np.hypot(*e)
            cands.append((float(np.min((Q - P[i]) @ n)), sign * n))
    cands.sort(key=lambda c: -c[0])
    best_s, best_n = cands[0]
    gap = min((best_s - s for s, n in cands[1:] if np.abs(n - best_n).max() > 1e-9), default=np.inf)
    return best_s, best_n, gap


# ---------------------------------------------------------------------------------------------------------
# GJK distance and overlap

def test_distance_matches_shapely_on_thousands_of_random_pairs():
    checked_apart = checked_overlap = 0
    for a, xa, b, xb in random_pairs(101, 3000):
        res = distance(a, xa, b, xb)
        want = max(signed_gap(a, xa, b, xb), 0.0)
        if want > 0.0:
            checked_apart += 1
            assert res.distance == pytest.approx(want, rel=1e-9, abs=1e-12), (a, xa, b, xb)
            # witness points: on the rounded surfaces, |pB − pA| = distance
            assert np.hypot(*(res.point_b - res.point_a)) == pytest.approx(want, rel=1e-9, abs=1e-12)
            assert core_geometry(a, xa).distance(shapely.Point(res.point_a)) == pytest.approx(a.radius, abs=1e-9)
            assert core_geometry(b, xb).distance(shapely.Point(res.point_b)) == pytest.approx(b.radius, abs=1e-9)
        else:
            checked_overlap += 1
            assert res.distance == 0.0
            np.testing.assert_array_equal(res.point_a, res.point_b)
    assert checked_apart > 800 and checked_overlap > 600


def test_overlap_matches_shapely():
    agree = 0
    for a, xa, b, xb in random_pairs(202, 3000):
        want = core_distance(a, xa, b, xb) <= a.radius + b.radius
        assert overlap(a, xa, b, xb) == want, (a, xa, b, xb)
        agree += 1
    assert agree == 3000


def test_far_apart_and_large_coordinates():
    """Relative precision holds when the pair is far from the origin (the kernels work in A's frame)."""
    rng = np.random.default_rng(3)
    for _ in range(300):
        a, b = random_shape(rng), random_shape(rng)
        off = rng.uniform(-1e5, 1e5, 2)
        xa = Transform(off + rng.uniform(-2, 2, 2), rng.uniform(-3, 3))
        xb = Transform(off + rng.uniform(-2, 2, 2), rng.uniform(-3, 3))
        want = max(signed_gap(a, xa, b, xb), 0.0)
        assert distance(a, xa, b, xb).distance == pytest.approx(want, rel=1e-7, abs=1e-8)


def test_touching_counts_as_overlap():
    # exact touching: edge–edge, vertex–edge, circle on a segment, capsule end to end
    assert overlap(box(1, 1), (0, 0), box(1, 1), (2, 0.5))
    assert distance(box(1, 1), (0, 0), box(1, 1), (2, 0.5)).distance == 0.0
    assert overlap(box(1, 1), (0, 0), Polygon([(1, 0), (2, -1), (2, 1)]), (0, 0))
    assert overlap(Segment((-1, 0), (1, 0)), (0, 0), Circle(0.5), (0.25, 0.5))
    assert overlap(Capsule((0, 0), (1, 0), 0.5), (0, 0), Capsule((0, 0), (1, 0), 0.5), (2, 0))
    assert not overlap(Capsule((0, 0), (1, 0), 0.5), (0, 0), Capsule((0, 0), (1, 0), 0.5), (2.001, 0))
    assert distance(Circle(1), (0, 0), Circle(2), (4, 0)).distance == pytest.approx(1.0, rel=1e-15)


def test_distance_kernel_iterations_are_few():
    its = []
    for a, xa, b, xb in random_pairs(7, 500):
        ta, tb = xa.as_tuple(), xb.as_tuple()
        rel = relative_transform(*ta, *tb)
        its.append(shape_distance(a.vertices, a.radius, b.vertices, b.radius, *rel)[5])
    assert max(its) < 20


def test_bad_input_raises():
    with pytest.raises(GeometryError, match="shape a"):
        distance("circle", (0, 0), Circle(1), (0, 0))
    with pytest.raises(GeometryError, match="shape b"):
        overlap(Circle(1), (0, 0), None, (0, 0))
    with pytest.raises(GeometryError, match="nan"):
        penetration(Circle(1), (float("nan"), 0), Circle(1), (0, 0))
    with pytest.raises(GeometryError, match="speculative"):
        collide_gjk_shapes(Circle(1), (0, 0), Circle(1), (0, 0), speculative=-1.0)
    with pytest.raises(GeometryError, match="speculative"):
        collide_gjk_shapes(Circle(1), (0, 0), Circle(1), (0, 0), speculative=float("inf"))


# ---------------------------------------------------------------------------------------------------------
# EPA penetration

def test_epa_depth_equals_brute_force_sat_for_polygons():
    n_checked = n_normal = 0
    for a, xa, b, xb in random_pairs(303, 3000, kinds=("polygon", "rounded"), spread=0.5):
        s, n, gap = sat_polygons(a, xa, b, xb)
        rel = relative_transform(*xa.as_tuple(), *xb.as_tuple())
        if s > 0.0:
            continue
        n_checked += 1
        depth, nx, ny = epa_penetration(a.vertices, b.vertices, *rel)
        assert depth == pytest.approx(-s, abs=1e-9)
        # rounded shapes: the public depth adds both radii, the normal is the same
        pen = penetration(a, xa, b, xb)
        assert pen is not None
        assert pen[0] == pytest.approx(-s + a.radius + b.radius, abs=1e-9)
        if gap > 1e-7:                       # unique deepest axis: the normal is determined
            n_normal += 1
            np.testing.assert_allclose(pen[1], n, atol=1e-9)
    assert n_checked > 1500 and n_normal > 1400


def test_penetration_of_shells_only_and_none_when_apart():
    hits = shells = 0
    for a, xa, b, xb in random_pairs(404, 3000):
        gap = signed_gap(a, xa, b, xb)
        pen = penetration(a, xa, b, xb)
        if gap > 0.0:
            assert pen is None
            continue
        hits += 1
        assert pen is not None
        depth, normal = pen
        assert np.hypot(*normal) == pytest.approx(1.0, abs=1e-12)
        dcore = core_distance(a, xa, b, xb)
        if dcore > 1e-6:
            shells += 1
            assert depth == pytest.approx(-gap, abs=1e-9)
        # moving B by depth along the normal makes the shapes touch (distance 0 up to rounding), and
        # a little more separates them
        xb2 = Transform(xb.position + (depth + 1e-6) * normal, xb.angle)
        assert signed_gap(a, xa, b, xb2) == pytest.approx(1e-6, abs=1e-8)
    assert hits > 800 and shells > 200


def test_penetration_degenerate_cores():
    # concentric circles: M is one point, depth = rA + rB
    d, n = penetration(Circle(1), (0, 0), Circle(0.5), (0, 0))
    assert d == pytest.approx(1.5) and np.hypot(*n) == pytest.approx(1.0)
    # circle centre on a capsule's core segment: depth rA + rB, normal perpendicular to the segment
    d, n = penetration(Capsule((-1, 0), (1, 0), 0.25), (0, 0), Circle(0.5), (0.3, 0))
    assert d == pytest.approx(0.75) and abs(n[0]) < 1e-12
    # parallel overlapping segments (M is a segment): depth 0 + radii, perpendicular normal oriented A→B
    d, n = penetration(Capsule((-1, 0), (1, 0), 0.5), (0, 0), Capsule((-1, 0), (1, 0), 0.5), (0.5, 1e-12))
    assert d == pytest.approx(1.0) and n == pytest.approx([0.0, 1.0])
    # crossing segments (zero radius): the smallest push that separates them
    d, n = penetration(Segment((-1, 0), (1, 0)), (0, 0), Segment((0, -1), (0, 1)), (0, 0))
    assert d == pytest.approx(1.0) and abs(abs(n[0]) + abs(n[1]) - 1.0) < 1e-12
    # point core inside a polygon core
    d, n = penetration(box(1, 2), (0, 0), Circle(0.1), (0.7, 0))
    assert d == pytest.approx(0.4) and n == pytest.approx([1.0, 0.0])


def test_swapping_flips_the_penetration_normal():
    checked = 0
    for a, xa, b, xb in random_pairs(505, 2000):
        p1 = penetration(a, xa, b, xb)
        p2 = penetration(b, xb, a, xa)
        assert (p1 is None) == (p2 is None)
        if p1 is None:
            continue
        assert p1[0] == pytest.approx(p2[0], abs=1e-9)
        if a.vertices.shape[0] >= 3 and b.vertices.shape[0] >= 3:
            s, n, gap = sat_polygons(a, xa, b, xb)
            if s < 0 and gap < 1e-7:
                continue                                  # tie between axes: either normal is right
        if core_distance(a, xa, b, xb) == 0.0 and min(a.vertices.shape[0], b.vertices.shape[0]) < 3:
            continue                                      # degenerate M: the side may be a tie
        checked += 1
        np.testing.assert_allclose(p1[1], -p2[1], atol=1e-7)
    assert checked > 500


# ---------------------------------------------------------------------------------------------------------
# contact manifold

def _collide(a, xa, b, xb, spec):
    return collide_gjk_shapes(a, xa, b, xb, spec)


def test_manifold_against_shapely_all_kinds():
    spec = 0.3
    counts = {"none": 0, "touch": 0, "spec": 0}
    for a, xa, b, xb in random_pairs(606, 3000):
        gap = signed_gap(a, xa, b, xb)
        m = _collide(a, xa, b, xb, spec)
        if gap > spec + 1e-9:
            assert m is None
            counts["none"] += 1
            continue
        if gap > spec - 1e-9:
            continue
        assert m is not None and 1 <= m.count <= 2
        assert np.hypot(*m.normal) == pytest.approx(1.0, abs=1e-12)
        assert np.all(m.separations <= spec)
        assert len(set(m.ids.tolist())) == m.count
        if gap > 0.0:
            # apart: the deepest point's separation is the true distance between the surfaces
            counts["spec"] += 1
            assert m.separations.min() == pytest.approx(gap, abs=1e-9)
        else:
            counts["touch"] += 1
            assert m.separations.min() <= 1e-12
            if core_distance(a, xa, b, xb) > 1e-6:
                # only the rounded shells overlap: depth is exactly rA + rB − core distance
                assert m.separations.min() == pytest.approx(gap, abs=1e-9)
        # every point lies between the surfaces: no farther than |s|/2 from either rounded shape
        for p, sep in zip(m.points, m.separations):
            pt = shapely.Point(p)
            assert core_geometry(a, xa).distance(pt) - a.radius <= 0.5 * abs(sep) + 1e-9
            assert core_geometry(b, xb).distance(pt) - b.radius <= 0.5 * abs(sep) + 1e-9
    assert counts["none"] > 500 and counts["touch"] > 500 and counts["spec"] > 200


def test_manifold_matches_sat_for_overlapping_polygons():
    checked = deepest_equal = 0
    for a, xa, b, xb in random_pairs(707, 3000, kinds=("polygon", "rounded"), spread=0.5):
        s, n, gap = sat_polygons(a, xa, b, xb)
        if s > 0.0 or gap < 1e-7:
            continue
        m = _collide(a, xa, b, xb, 0.0)
        assert m is not None
        checked += 1
        np.testing.assert_allclose(m.normal, n, atol=1e-9)
        r = a.radius + b.radius
        # no point is deeper than SAT's depth; clipping to the reference slab could in principle remove the
        # deepest incident vertex (as in any SAT + clipping manifold), but on this sample it never does
        assert m.separations.min() >= s - r - 1e-9
        if m.separations.min() == pytest.approx(s - r, abs=1e-9):
            deepest_equal += 1
    assert checked > 1500
    assert deepest_equal == checked


def test_swapping_shapes_flips_the_manifold():
    checked = 0
    for a, xa, b, xb in random_pairs(808, 2000):
        m1 = _collide(a, xa, b, xb, 0.1)
        m2 = _collide(b, xb, a, xa, 0.1)
        assert (m1 is None) == (m2 is None)
        if m1 is None:
            continue
        assert m1.separations.min() == pytest.approx(m2.separations.min(), abs=1e-9)
        if a.vertices.shape[0] >= 3 and b.vertices.shape[0] >= 3:
            s, n, gap = sat_polygons(a, xa, b, xb)
            if gap < 1e-7:
                continue
        if core_distance(a, xa, b, xb) < 1e-6:
            continue                                     # degenerate-M or tie cases: side is arbitrary
        checked += 1
        np.testing.assert_allclose(m1.normal, -m2.normal, atol=1e-7)
    assert checked > 400


def test_manifold_moves_with_a_rigid_motion_of_both_shapes():
    rng = np.random.default_rng(909)
    checked = 0
    for a, xa, b, xb in random_pairs(909, 1500):
        m1 = _collide(a, xa, b, xb, 0.1)
        ang = rng.uniform(-math.pi, math.pi)
        shift = rng.uniform(-50, 50, 2)
        c, s = math.cos(ang), math.sin(ang)
        R = np.array([[c, -s], [s, c]])
        ya = Transform(R @ xa.position + shift, xa.angle + ang)
        yb = Transform(R @ xb.position + shift, xb.angle + ang)
        m2 = _collide(a, ya, b, yb, 0.1)
        assert (m1 is None) == (m2 is None)
        if m1 is None:
            continue
        checked += 1
        assert m1.count == m2.count
        np.testing.assert_allclose(m2.normal, R @ m1.normal, atol=1e-9)
        np.testing.assert_allclose(m2.points, m1.points @ R.T + shift, atol=1e-8)
        np.testing.assert_allclose(m2.separations, m1.separations, atol=1e-9)
        np.testing.assert_array_equal(m2.ids, m1.ids)
    assert checked > 400


def test_manifold_known_cases():
    # box resting on a box: two points, face normal, ids from the top edge of A and B's bottom vertices
    m = _collide(box(1, 1), (0, 0), box(1, 1), (1.5, 1.9), 0.0)
    assert m.count == 2 and m.normal == pytest.approx([0, 1])
    np.testing.assert_allclose(m.separations, [-0.1, -0.1])
    np.testing.assert_allclose(sorted(m.points[:, 0]), [0.5, 1.0])
    np.testing.assert_allclose(m.points[:, 1], [0.95, 0.95])
    # speculative: apart by 0.01, kept with 0.02, dropped with 0.005
    assert _collide(box(1, 1), (0, 0), box(1, 1), (0.3, 2.01), 0.02).separations == pytest.approx([0.01, 0.01])
    assert _collide(box(1, 1), (0, 0), box(1, 1), (0.3, 2.01), 0.005) is None
    # circle against a box corner: one point on the diagonal
    m = _collide(box(1, 1), (0, 0), Circle(0.5), (1.3, 1.3), 0.0)
    assert m.count == 1 and m.normal == pytest.approx([2 ** -0.5, 2 ** -0.5])
    assert m.separations[0] == pytest.approx(0.3 * 2 ** 0.5 - 0.5)
    # rounded boxes corner to corner, apart cores: vertex–vertex, one point
    m = _collide(box(1, 1, radius=0.1), (0, 0), box(1, 1, radius=0.1), (2.1, 2.1), 0.2)
    assert m.count == 1 and m.separations[0] == pytest.approx(0.1 * 2 ** 0.5 - 0.2)
    # capsule lying on a segment (ground): two points
    m = _collide(Segment((-5, 0), (5, 0)), (0, 0), Capsule((-1, 0), (1, 0), 0.2), (0.5, 0.19), 0.0)
    assert m.count == 2 and m.normal == pytest.approx([0, 1])
    np.testing.assert_allclose(m.separations, [-0.01, -0.01])
    np.testing.assert_allclose(m.points[:, 1], [-0.005, -0.005])
    # circle against circle
    m = _collide(Circle(1), (0, 0), Circle(1), (1.5, 0), 0.0)
    assert m.count == 1 and m.normal == pytest.approx([1, 0])
    assert m.points[0] == pytest.approx([0.75, 0.0]) and m.separations[0] == pytest.approx(-0.5)


def test_kernel_returns_the_manifold_tuple_convention():
    a, b = box(1, 1), Circle(0.5)
    rel = relative_transform(0.0, 0.0, 1.0, 0.0, 0.0, 1.4, 1.0, 0.0)
    t = collide_gjk(a.vertices, a.normals, a.radius, b.vertices, b.normals, b.radius, *rel, 0.0)
    assert len(t) == 11 and t[0] == 1
    assert (t[1], t[2]) == pytest.approx((0.0, 1.0))
    assert t[5] == pytest.approx(-0.1)
    empty = collide_gjk(a.vertices, a.normals, a.radius, b.vertices, b.normals, b.radius,
                        0.0, 3.0, 1.0, 0.0, 0.0)
    assert empty[0] == 0


@settings(max_examples=60, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2 ** 32 - 1), angle=st.floats(-math.pi, math.pi), dx=st.floats(-3, 3),
       dy=st.floats(-3, 3))
def test_hypothesis_distance_and_manifold_consistent(seed, angle, dx, dy):
    rng = np.random.default_rng(seed)
    a, b = random_shape(rng), random_shape(rng)
    xa, xb = Transform((0.0, 0.0), 0.0), Transform((dx, dy), angle)
    gap = signed_gap(a, xa, b, xb)
    d = distance(a, xa, b, xb).distance
    assert d == pytest.approx(max(gap, 0.0), rel=1e-9, abs=1e-12)
    m = _collide(a, xa, b, xb, 0.5)
    if gap < 0.5 - 1e-9:
        assert m is not None
        if gap > 0:
            assert m.separations.min() == pytest.approx(gap, abs=1e-9)
    elif gap > 0.5 + 1e-9:
        assert m is None
