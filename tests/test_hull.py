"""Convex hull against shapely's, with duplicated and collinear points (a hull fuzzer)."""
import numpy as np
import pytest
import shapely
from hypothesis import given, settings, strategies as st

from carom.constants import COLLINEAR_TOLERANCE
from carom.geometry import convex_hull, Polygon
from carom.errors import GeometryError


def _check(points):
    hull = convex_hull(points)
    ref = shapely.MultiPoint(points).convex_hull
    if hull.shape[0] < 3:
        # degenerate: every point lies within tolerance of the returned segment/point
        assert ref.area <= 2 * COLLINEAR_TOLERANCE * max(ref.length, 1.0)
        return
    poly = shapely.Polygon(hull)
    assert poly.is_valid and poly.exterior.is_ccw
    # dropping near-collinear vertices moves the boundary by at most the tolerance
    assert poly.hausdorff_distance(ref) <= COLLINEAR_TOLERANCE * 1.01
    # every hull vertex is an input point
    for v in hull:
        assert np.min(np.hypot(*(np.asarray(points) - v).T)) == 0.0


def test_hull_random_fuzz():
    rng = np.random.default_rng(7)
    for i in range(1500):
        n = int(rng.integers(3, 80))
        pts = rng.random((n, 2)) * rng.uniform(0.1, 30)
        if i % 3 == 0:                       # a lattice: many collinear points
            pts = np.round(pts * 2) / 2
        if i % 5 == 0:                       # duplicates
            pts = np.concatenate([pts, pts[: n // 2]])
        _check(pts)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(-5, 5), st.integers(-5, 5)), min_size=1, max_size=40))
def test_hull_integer_lattice(pts):
    _check(np.array(pts, dtype=float))


def test_hull_of_square_with_edge_points_is_four_corners():
    pts = [(0, 0), (1, 0), (2, 0), (2, 1), (2, 2), (1, 2), (0, 2), (0, 1), (1, 1), (0, 0)]
    hull = convex_hull(pts)
    assert hull.shape == (4, 2)
    assert {tuple(p) for p in hull} == {(0, 0), (2, 0), (2, 2), (0, 2)}


@pytest.mark.parametrize("pts, needle", [
    ([(0, 0), (1, 0)], "at least 3"),
    ([(0, 0), (0, 0), (0, 0.001)], "fewer than 3 distinct"),
    ([(0, 0), (1, 1), (2, 2), (3, 3)], "collinear"),
    ([(0, 0), (1, 0), (float("nan"), 1)], "nan"),
    ([(0, 0), (1, 0), (0, float("inf"))], "inf"),
])
def test_bad_polygons_raise_geometry_error_naming_the_value(pts, needle):
    with pytest.raises(GeometryError, match=needle):
        Polygon(pts)
    with pytest.raises(ValueError):
        Polygon(pts)
