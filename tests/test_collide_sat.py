"""SAT manifolds checked against shapely (an independent oracle) and by symmetry properties."""
import math

import numpy as np
import pytest

from carom.constants import LINEAR_SLOP

from carom.geometry import Circle, Segment, box, Transform
from carom.geometry.collide import collide
from carom.geometry.manifold import collide_many
from shape_gen import random_shape, random_transform, core_geometry, true_distance


def _moved(xf, d):
    return Transform(xf.position + d, xf.angle)


def _pairs(seed, count):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        a, b = random_shape(rng), random_shape(rng)
        yield a, random_transform(rng, 1.0), b, random_transform(rng, 1.0)


def test_depth_is_the_minimum_translation_along_the_normal():
    """Moving B by the reported depth along the normal just separates the shapes (shapely decides)."""
    checked = 0
    for a, xa, b, xb in _pairs(1, 2500):
        m = collide(a, xa, b, xb)
        d = true_distance(a, xa, b, xb)
        if m is None:
            if not (a.vertices.shape[0] == 2 and b.vertices.shape[0] == 2 and a.radius == b.radius == 0):
                assert d > -1e-9
            continue
        assert abs(np.linalg.norm(m.normal) - 1) < 1e-12
        depth = m.depth
        if depth <= 0:
            continue
        checked += 1
        eps = 1e-6 * (1 + depth)
        assert true_distance(a, xa, b, _moved(xb, (depth + eps) * m.normal)) > 0, (a, xa, b, xb, m)
        assert true_distance(a, xa, b, _moved(xb, (depth - eps) * m.normal)) <= 0, (a, xa, b, xb, m)
    assert checked > 300


def test_overlap_agrees_with_shapely():
    for a, xa, b, xb in _pairs(2, 2500):
        if a.vertices.shape[0] == 2 and b.vertices.shape[0] == 2 and a.radius == b.radius == 0:
            continue
        d = true_distance(a, xa, b, xb)
        if abs(d) < 1e-9:
            continue
        m = collide(a, xa, b, xb)
        assert (m is not None and m.depth >= 0) == (d < 0), (a, xa, b, xb, d, m)


def test_speculative_separation_never_exceeds_true_distance():
    for a, xa, b, xb in _pairs(3, 2000):
        m = collide(a, xa, b, xb, speculative=0.5)
        if m is None:
            continue
        d = true_distance(a, xa, b, xb)
        assert m.separations.min() <= max(d, 0) + 1e-9
        assert m.separations.max() <= 0.5 + 1e-12


def test_points_lie_between_the_surfaces():
    """Each contact point is midway between the surfaces: within |s|/2 of both shapes."""
    for a, xa, b, xb in _pairs(4, 1500):
        m = collide(a, xa, b, xb)
        if m is None:
            continue
        ga, gb = core_geometry(a, xa), core_geometry(b, xb)
        import shapely
        for p, s in zip(m.points, m.separations):
            pt = shapely.Point(p)
            tol = abs(s) / 2 + 1e-7
            assert pt.distance(ga) - a.radius <= tol
            assert pt.distance(gb) - b.radius <= tol


def test_swapping_flips_normal_and_keeps_depths():
    flipped = 0
    for a, xa, b, xb in _pairs(5, 1500):
        m1 = collide(a, xa, b, xb)
        m2 = collide(b, xb, a, xa)
        assert (m1 is None) == (m2 is None)
        if m1 is None:
            continue
        if m1.depth > 1e-6 and m2.depth > 1e-6:
            # A's face is preferred unless B's is better by 0.1 slop (no flicker between steps), so the
            # depths agree within that, and exactly when both pick the same axis
            assert abs(m1.depth - m2.depth) <= 0.1 * LINEAR_SLOP + 1e-12
            if abs(np.dot(m1.normal, -m2.normal) - 1) < 1e-9:
                assert abs(m1.depth - m2.depth) < 1e-9
                flipped += 1
    assert flipped > 200


def test_rigid_motion_of_both_moves_the_manifold():
    rng = np.random.default_rng(6)
    for a, xa, b, xb in _pairs(6, 1000):
        m1 = collide(a, xa, b, xb)
        ang = rng.uniform(-math.pi, math.pi)
        shift = rng.uniform(-100, 100, 2)
        c, s = math.cos(ang), math.sin(ang)
        rot = np.array([[c, -s], [s, c]])
        xa2 = Transform(rot @ xa.position + shift, xa.angle + ang)
        xb2 = Transform(rot @ xb.position + shift, xb.angle + ang)
        m2 = collide(a, xa2, b, xb2)
        assert (m1 is None) == (m2 is None) or min(abs(true_distance(a, xa, b, xb)), 1) < 1e-9
        if m1 is None or m2 is None:
            continue
        assert m1.count == m2.count
        np.testing.assert_allclose(m2.normal, rot @ m1.normal, atol=1e-9)
        np.testing.assert_allclose(m2.points, m1.points @ rot.T + shift, atol=1e-8)
        np.testing.assert_allclose(m2.separations, m1.separations, atol=1e-9)
        np.testing.assert_array_equal(m2.ids, m1.ids)


def test_box_on_box_gives_two_points_with_stable_ids():
    m = collide(box(1, 1), (0, 0), box(0.5, 0.5), (0.2, 1.45))
    assert m.count == 2
    np.testing.assert_allclose(m.normal, [0, 1])
    np.testing.assert_allclose(m.separations, [-0.05, -0.05])
    np.testing.assert_allclose(sorted(m.points[:, 0]), [-0.3, 0.7])
    np.testing.assert_allclose(m.points[:, 1], [0.975, 0.975])
    m2 = collide(box(1, 1), (0, 0), box(0.5, 0.5), (0.25, 1.46))
    np.testing.assert_array_equal(m.ids, m2.ids)


def test_circle_closed_form():
    m = collide(Circle(1.0), (0, 0), Circle(0.5), (1.2, 0.9))
    np.testing.assert_allclose(m.normal, [0.8, 0.6])
    np.testing.assert_allclose(m.separations, [1.5 - 1.5])
    np.testing.assert_allclose(m.points[0], [0.8, 0.6])


def test_segment_segment_reports_no_contact():
    assert collide(Segment((0, 0), (1, 1)), (0, 0), Segment((0, 1), (1, 0)), (0, 0)) is None


def test_bulk_collide_equals_single_calls():
    rng = np.random.default_rng(9)
    shapes = [random_shape(rng) for _ in range(60)]
    xfs = [random_transform(rng, 2.0) for _ in shapes]
    counts = np.array([s.vertices.shape[0] for s in shapes])
    offsets = np.concatenate([[0], np.cumsum(counts)[:-1]])
    verts = np.concatenate([s.vertices for s in shapes])
    normals = np.concatenate([s.normals for s in shapes])
    radii = np.array([s.radius for s in shapes])
    xforms = np.array([x.as_tuple() for x in xfs])
    pairs = np.array([(i, j) for i in range(60) for j in range(i + 1, 60)])
    out_f = np.zeros((len(pairs), 8))
    out_i = np.zeros((len(pairs), 3), np.int64)
    collide_many(verts, normals, offsets, counts, radii, xforms, pairs, 0.1, out_f, out_i)
    for p, (i, j) in enumerate(pairs):
        m = collide(shapes[i], xfs[i], shapes[j], xfs[j], speculative=0.1)
        assert out_i[p, 0] == (0 if m is None else m.count)
        if m is not None:
            np.testing.assert_allclose(out_f[p, :2], m.normal, atol=1e-12)
            np.testing.assert_allclose(out_f[p, 2:4], m.points[0], atol=1e-12)
            assert out_f[p, 4] == pytest.approx(m.separations[0], abs=1e-12)


def test_gjk_method_agrees_with_sat_on_overlapping_polygons():
    """collide(..., method="gjk") (GJK/EPA direction + farthest features) gives SAT's normal and depth."""
    rng = np.random.default_rng(21)
    agreed = 0
    for _ in range(600):
        a = random_shape(rng, kinds=("polygon",))
        b = random_shape(rng, kinds=("polygon",))
        xa, xb = random_transform(rng, 0.6), random_transform(rng, 0.6)
        m_sat = collide(a, xa, b, xb)
        m_gjk = collide(a, xa, b, xb, method="gjk")
        if m_sat is None or m_sat.depth <= 1e-6:
            continue
        assert m_gjk is not None
        assert m_gjk.depth == pytest.approx(m_sat.depth, abs=0.1 * LINEAR_SLOP + 1e-12)
        if abs(m_gjk.depth - m_sat.depth) < 1e-9:
            np.testing.assert_allclose(m_gjk.normal, m_sat.normal, atol=1e-9)
            agreed += 1
    assert agreed > 100


def test_quadrilateral_path_is_collide_sat():
    """The narrow phase's unrolled test for two 4-vertex cores (collide_quadrilaterals) returns collide_sat's
    manifold: exactly for irregular quadrilaterals, and up to rounding for two boxes, whose face separations
    it takes in closed form (the same points, ids and count); touching, apart within the margin
    (vertex–vertex and face cases) and beyond it."""
    from carom.geometry import Polygon
    from carom.geometry.manifold import collide_sat, collide_quadrilaterals
    rng = np.random.default_rng(17)

    def quad():
        if rng.random() < 0.5:
            return box(*rng.uniform(0.1, 1.0, 2), radius=float(rng.choice([0.0, 0.05])))
        while True:
            ang = np.sort(rng.uniform(0, 2 * math.pi, 4))
            pts = np.stack([np.cos(ang), np.sin(ang)], axis=1) * rng.uniform(0.3, 1.0, (4, 1))
            try:
                return Polygon(pts, radius=float(rng.choice([0.0, 0.1])))
            except ValueError:
                continue

    def parallelogram(shape):
        n = shape.normals
        return np.array_equal(n[2], -n[0]) and np.array_equal(n[3], -n[1])

    sv = np.empty((8, 2))
    sn = np.empty((8, 2))
    counts = np.zeros(3, int)
    boxes = 0
    for _ in range(3000):
        a, b = quad(), quad()
        if a.vertices.shape[0] != 4 or b.vertices.shape[0] != 4:
            continue
        t = rng.uniform(-2.0, 2.0, 2)
        ang = rng.uniform(-math.pi, math.pi)
        args = (a.vertices, a.normals, a.radius, b.vertices, b.normals, b.radius, t[0], t[1], math.cos(ang),
                math.sin(ang), float(rng.choice([0.0, 0.1, 0.5])), sv, sn)
        expected = collide_sat(*args)
        got = collide_quadrilaterals(*args)
        if parallelogram(a) and parallelogram(b):
            boxes += 1
            assert got[0] == expected[0] and (got[6], got[10]) == (expected[6], expected[10]), (got, expected)
            np.testing.assert_allclose(np.array(got, float), np.array(expected, float), rtol=0, atol=1e-12)
        else:
            assert np.array_equal(np.array(got, float), np.array(expected, float)), (got, expected)
        counts[min(expected[0], 2)] += 1
    assert counts.min() > 100 and boxes > 500, (counts, boxes)
