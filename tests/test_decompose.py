"""Convex decomposition against shapely: convex pieces, exact union, no overlap, bad outlines rejected."""

import numpy as np
import pytest
import shapely
from hypothesis import given, settings, strategies as st

from carom.constants import COLLINEAR_TOLERANCE
from carom.errors import GeometryError
from carom.geometry.decompose import decompose, triangulate
from carom.geometry.shapes import Polygon


def _chord_heights(pts):
    """Distance of each vertex to the line through its two neighbours."""
    p0 = np.roll(pts, 1, axis=0)
    p2 = np.roll(pts, -1, axis=0)
    e = p2 - p0
    w = pts - p0
    return np.abs(e[:, 0] * w[:, 1] - e[:, 1] * w[:, 0]) / np.hypot(e[:, 0], e[:, 1])


def _clean(pts):
    """No vertex within 10 collinear tolerances of its neighbours' line: cleaning then drops nothing."""
    return _chord_heights(np.asarray(pts)).min() > 10 * COLLINEAR_TOLERANCE


def _check(points, pieces=None):
    pts = np.asarray(points, dtype=float)
    ref = shapely.Polygon(pts)
    assert ref.is_valid
    if pieces is None:
        pieces = decompose(pts)
    area = ref.area
    geoms = []
    vertex_set = {tuple(p) for p in pts}
    for piece in pieces:
        assert isinstance(piece, Polygon)
        v = piece.vertices
        assert v.shape[0] >= 3
        # strictly convex, counter-clockwise: every corner turns left
        a = v - np.roll(v, 1, axis=0)
        b = np.roll(v, -1, axis=0) - v
        assert (a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0] > 0).all()
        for p in v:
            assert tuple(p) in vertex_set          # pieces use input vertices only
        g = shapely.Polygon(v)
        assert g.is_valid and g.exterior.is_ccw
        assert g.convex_hull.symmetric_difference(g).area <= 1e-12 * area
        geoms.append(g)
    assert abs(sum(g.area for g in geoms) - area) <= 1e-9 * area
    union = shapely.unary_union(geoms)
    assert union.symmetric_difference(ref).area <= 1e-9 * area
    for i in range(len(geoms)):
        for j in range(i + 1, len(geoms)):
            assert geoms[i].intersection(geoms[j]).area <= 1e-12 * area
    return pieces


def _star(rng, n, rmin=0.2, rmax=3.0):
    while True:
        ang = np.sort(rng.uniform(0, 2 * np.pi, n))
        gaps = np.diff(np.r_[ang, ang[0] + 2 * np.pi])
        if gaps.max() >= 0.9 * np.pi:
            continue
        rad = rng.uniform(rmin, rmax, n)
        pts = np.c_[rad * np.cos(ang), rad * np.sin(ang)] + rng.uniform(-50, 50, 2)
        if _clean(pts):
            return pts


def _comb(rng, teeth):
    """A comb: a bar with `teeth` rectangular-ish teeth of random widths, gaps and heights."""
    xs = np.cumsum(rng.uniform(0.1, 1.0, 2 * teeth))
    top = []
    for k in range(teeth):
        h = rng.uniform(0.3, 4.0)
        x0, x1 = xs[2 * k], xs[2 * k + 1]
        top += [(x0, 0.5), (x0 + rng.uniform(-0.04, 0.04), h), (x1 + rng.uniform(-0.04, 0.04), h), (x1, 0.5)]
    end = xs[-1] + rng.uniform(0.1, 1.0)
    return np.array([(0.0, -rng.uniform(0.2, 1.0)), (end, -rng.uniform(0.2, 1.0))] + top[::-1])


def _spiral(rng):
    """A thick Archimedean spiral band (very concave, many reflex vertices)."""
    turns = rng.uniform(1.0, 2.5)
    width = rng.uniform(0.2, 0.5)
    pitch = width + rng.uniform(0.2, 0.6)
    k = int(turns * 24)
    th = np.linspace(0.0, turns * 2 * np.pi, k)
    r_in = 1.0 + pitch * th / (2 * np.pi)
    r_out = r_in + width
    outer = np.c_[r_out * np.cos(th), r_out * np.sin(th)]
    inner = np.c_[r_in * np.cos(th), r_in * np.sin(th)]
    return np.concatenate([outer, inner[::-1]])


def test_random_star_polygons():
    rng = np.random.default_rng(11)
    for _ in range(300):
        n = int(rng.integers(3, 50))
        _check(_star(rng, n))


def test_random_combs():
    rng = np.random.default_rng(12)
    for _ in range(60):
        pts = _comb(rng, int(rng.integers(1, 12)))
        assert shapely.LinearRing(pts).is_simple
        if not _clean(pts):
            continue
        pieces = _check(pts)
        assert len(pieces) >= 1


def test_random_spirals():
    rng = np.random.default_rng(13)
    for _ in range(20):
        pts = _spiral(rng)
        assert shapely.LinearRing(pts).is_simple
        _check(pts)


def test_convex_input_is_one_piece_and_winding_does_not_matter():
    rng = np.random.default_rng(14)
    for _ in range(100):
        ang = np.sort(rng.uniform(0, 2 * np.pi, int(rng.integers(3, 30))))
        pts = np.c_[np.cos(ang), np.sin(ang)] * rng.uniform(0.5, 5) + rng.uniform(-10, 10, 2)
        if not _clean(pts) or np.diff(np.r_[ang, ang[0] + 2 * np.pi]).max() >= np.pi:
            continue
        pieces = decompose(pts)
        assert len(pieces) == 1
        _check(pts, pieces)
        back = decompose(pts[::-1])
        assert len(back) == 1
        assert shapely.Polygon(back[0].vertices).equals(shapely.Polygon(pts))


def test_reversed_winding_gives_valid_pieces():
    rng = np.random.default_rng(15)
    for _ in range(60):
        pts = _star(rng, int(rng.integers(4, 30)))
        _check(pts[::-1].copy())


def test_collinear_and_duplicate_points_are_cleaned():
    rng = np.random.default_rng(16)
    for _ in range(100):
        pts = _star(rng, int(rng.integers(3, 25)))
        noisy = []
        for i, p in enumerate(pts):
            q = pts[(i + 1) % len(pts)]
            noisy.append(p)
            if rng.random() < 0.4:
                noisy.append(p.copy())                       # exact duplicate
            if rng.random() < 0.4:
                for t in np.sort(rng.uniform(0.1, 0.9, int(rng.integers(1, 4)))):
                    noisy.append(p + t * (q - p))            # on the edge (within round-off)
        if rng.random() < 0.5:
            noisy.append(pts[0].copy())                      # explicitly closed ring
        noisy = np.array(noisy)
        pieces = decompose(noisy)
        # the pieces tile the clean polygon; their vertices are the clean corners
        _check(pts, pieces)


def test_square_with_edge_points_and_closing_point():
    pts = [(0, 0), (1, 0), (2, 0), (2, 0), (2, 1), (2, 2), (1, 2), (0, 2), (0, 1), (0, 0)]
    pieces = decompose(pts)
    assert len(pieces) == 1
    assert {tuple(p) for p in pieces[0].vertices} == {(0, 0), (2, 0), (2, 2), (0, 2)}


def test_l_shape_needs_two_pieces():
    pts = [(0, 0), (2, 0), (2, 1), (1, 1), (1, 2), (0, 2)]
    pieces = _check(pts)
    assert len(pieces) == 2


def test_triangulate_returns_input_indices():
    rng = np.random.default_rng(17)
    for _ in range(50):
        pts = _star(rng, int(rng.integers(3, 40)))
        tris = triangulate(pts)
        assert tris.shape == (len(pts) - 2, 3)
        geoms = [shapely.Polygon(pts[t]) for t in tris]
        assert all(g.exterior.is_ccw and g.area > 0 for g in geoms)
        ref = shapely.Polygon(pts)
        assert abs(sum(g.area for g in geoms) - ref.area) <= 1e-9 * ref.area
        assert shapely.unary_union(geoms).symmetric_difference(ref).area <= 1e-9 * ref.area


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 12), min_size=3, max_size=24), st.integers(0, 10 ** 6))
def test_hypothesis_lattice_stars(radii, seed):
    """Star polygons with integer radii at evenly spaced angles (many exact near-collinear configurations)."""
    n = len(radii)
    ang = 2 * np.pi * np.arange(n) / n + (seed % 1000) * 1e-3
    pts = np.c_[np.array(radii) * np.cos(ang), np.array(radii) * np.sin(ang)]
    if not _clean(pts):
        # some vertices are straight: the decomposition still tiles the cleaned polygon
        pieces = decompose(pts)
        covered = shapely.unary_union([shapely.Polygon(p.vertices) for p in pieces])
        ref = shapely.Polygon(pts)
        assert covered.symmetric_difference(ref).area <= 10 * COLLINEAR_TOLERANCE * ref.length
        return
    _check(pts)


# ---------------------------------------------------------------------------------------------- bad input

def test_bow_tie_names_the_crossing_edges():
    with pytest.raises(GeometryError, match=r"self-intersecting: edge 0-1 .* crosses edge 2-3") as info:
        decompose([(0, 0), (1, 1), (1, 0), (0, 1)])
    assert isinstance(info.value, ValueError)


def test_random_self_crossing_outlines_raise():
    rng = np.random.default_rng(18)
    raised = 0
    for _ in range(200):
        pts = _star(rng, int(rng.integers(4, 30)))
        i, j = sorted(rng.choice(len(pts), 2, replace=False))
        pts[[i, j]] = pts[[j, i]]
        ring = shapely.LinearRing(pts)
        if ring.is_simple:
            if _clean(pts):
                _check(pts)
            continue
        with pytest.raises(GeometryError, match=r"self-intersecting|touches itself"):
            decompose(pts)
        raised += 1
    assert raised > 100


def test_error_names_the_two_crossing_edges_of_a_random_outline():
    rng = np.random.default_rng(19)
    for _ in range(50):
        pts = _star(rng, int(rng.integers(5, 20)))
        pts[[0, 2]] = pts[[2, 0]]
        if shapely.LinearRing(pts).is_simple:
            continue
        with pytest.raises(GeometryError) as info:
            decompose(pts)
        msg = str(info.value)
        import re
        m = re.search(r"edge (\d+)-(\d+) .* crosses edge (\d+)-(\d+)", msg)
        assert m, msg
        a0, a1, b0, b1 = map(int, m.groups())
        e1 = shapely.LineString([pts[a0], pts[a1]])
        e2 = shapely.LineString([pts[b0], pts[b1]])
        assert e1.intersects(e2)


def test_fold_back_spike_is_rejected():
    # a zero-width spike out to (4, 1) and back
    with pytest.raises(GeometryError, match=r"edge 2-3 .* and edge 3-4 .* overlap .*folds back at point 3"):
        decompose([(0, 0), (2, 0), (2, 1), (4, 1), (2, 1), (0, 1)])
    # the outline runs to (4, 0) and back along the same line
    with pytest.raises(GeometryError, match=r"folds back at point 2 = \(4, 0\)"):
        decompose([(0, 0), (2, 0), (4, 0), (1, 0), (1, 1)])


def test_pinched_outline_is_rejected():
    # two squares sharing a corner point (1, 1): the outline touches itself
    pts = [(0, 0), (1, 0), (1, 1), (2, 1), (2, 2), (1, 2), (1, 1), (0, 1)]
    with pytest.raises(GeometryError, match=r"self-intersecting|touches itself"):
        decompose(pts)


@pytest.mark.parametrize("pts, pattern", [
    ([(0, 0), (1, 0)], r"at least 3 points, got 2"),
    ([], r"at least 3 points, got 0"),
    ([(0, 0), (0, 0), (1e-9, 0)], r"fewer than 3 distinct"),
    ([(0, 0), (1, 1), (2, 2), (3, 3)], r"collinear"),
    ([(0, 0), (1, 0), (float("nan"), 1)], r"\[2\] = \(nan, 1\.0\) is not finite"),
    ([(0, 0), (1, 0), (1, float("inf"))], r"\[2\] = \(1\.0, inf\) is not finite"),
    ([(0, 0), (1, 0), (0, 1e9)], r"world limit"),
    ("abc", r"must be an \(n, 2\) array"),
])
def test_bad_input_names_the_value(pts, pattern):
    with pytest.raises(GeometryError, match=pattern):
        decompose(pts)


def test_piece_count_is_reasonable():
    """Hertel–Mehlhorn is within 4x of optimal; the optimum is at least (reflex vertices)/2 + 1... so
    the piece count stays below 2·(reflex) + 1 and is never more than the triangle count."""
    rng = np.random.default_rng(20)
    for _ in range(100):
        pts = _star(rng, int(rng.integers(4, 40)))
        a = pts - np.roll(pts, 1, axis=0)
        b = np.roll(pts, -1, axis=0) - pts
        reflex = int((a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0] < 0).sum())
        pieces = decompose(pts)
        assert len(pieces) <= 2 * reflex + 1
        assert len(pieces) <= len(pts) - 2
