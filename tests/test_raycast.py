"""Ray casts: every shape's edge cases, and random rays against independent oracles.

Oracles: for r = 0 shapes, shapely's intersection of the ray segment with the polygon / segment (the first
hit is the intersection point nearest the origin). For rounded shapes (circle, capsule, rounded polygon),
f(t) = dist(o + t·d, core) − r computed by shapely: f is convex in t (distance to a convex set along a line),
so golden-section search finds its minimum and bisection on [0, t_min] the first root, the entry fraction.
"""
import math

import numpy as np
import pytest
import shapely
from hypothesis import given, settings, strategies as st

from carom.errors import GeometryError
from carom.geometry.shapes import Circle, Capsule, Segment, Polygon, box, Transform
from carom.geometry.raycast import (raycast, raycast_shape, raycast_many, raycast_many_kernel, pack_shapes,
                                    raycast_closest_kernel, RayHit)


def _local(shape, o, d):
    return raycast_shape(shape.vertices, shape.normals, shape.radius, float(o[0]), float(o[1]),
                         float(d[0]), float(d[1]))


def _unit_against(hit, d, strict=True):
    n = hit.normal
    assert abs(math.hypot(n[0], n[1]) - 1.0) < 1e-12
    dot = n[0] * d[0] + n[1] * d[1]
    assert dot < 0.0 if strict else dot <= 1e-12 * math.hypot(*d)


# ------------------------------------------------------------------------------------------ edge cases

def test_circle_head_on_and_tangent():
    c = Circle(1.0)
    h = raycast(c, None, (-3, 0), (4, 0))
    assert h.fraction == 0.5 and tuple(h.point) == (-1.0, 0.0) and tuple(h.normal) == (-1.0, 0.0)
    # grazing tangent: hits at the tangent point, normal perpendicular to the ray
    h = raycast(c, None, (-2, 1), (4, 0))
    assert h.fraction == 0.5 and np.allclose(h.point, (0, 1), atol=1e-15) and np.allclose(h.normal, (0, 1))
    _unit_against(h, (4, 0), strict=False)
    # just outside the tangent: miss
    assert raycast(c, None, (-2, 1 + 1e-12), (4, 0)) is None
    # just inside: a hit very near the top
    h = raycast(c, None, (-2, 1 - 1e-12), (4, 0))
    assert h is not None and abs(h.point[1] - 1.0) < 1e-11


def test_circle_inside_surface_and_short_rays():
    c = Circle(1.0, center=(2, 3))
    assert raycast(c, None, (2.5, 3), (4, 0)) is None                 # starts inside: no hit
    assert raycast(c, None, (2, 3), (0, 1)) is None                   # starts at the centre
    h = raycast(c, None, (1, 3), (4, 0))                              # on the surface, pointing in
    assert h.fraction == 0.0 and tuple(h.normal) == (-1.0, 0.0)
    assert raycast(c, None, (1, 3), (-4, 0)) is None                  # on the surface, pointing out
    assert raycast(c, None, (1, 3), (0, 4)) is None                   # on the surface, tangent
    assert raycast(c, None, (-2, 3), (2.9, 0)) is None                # ends before the circle
    h = raycast(c, None, (-2, 3), (3, 0))                             # ends exactly on it
    assert h.fraction == 1.0 and tuple(h.point) == (1.0, 3.0)
    assert raycast(c, None, (4, 3), (4, 0)) is None                   # circle behind the origin


def test_capsule_sides_caps_and_tangents():
    cap = Capsule((-1, 0), (1, 0), 0.5)
    h = raycast(cap, None, (0, 2), (0, -4))                           # flat side
    assert h.fraction == 0.375 and np.allclose(h.point, (0, 0.5)) and np.allclose(h.normal, (0, 1))
    h = raycast(cap, None, (-3, 0), (4, 0))                           # cap, head on
    assert h.fraction == 0.375 and np.allclose(h.point, (-1.5, 0)) and np.allclose(h.normal, (-1, 0))
    # grazing along the flat side: first touch at the start of the flat part, normal (0, 1)
    h = raycast(cap, None, (-3, 0.5), (6, 0))
    assert h is not None and np.allclose(h.point, (-1, 0.5)) and np.allclose(h.normal, (0, 1))
    _unit_against(h, (6, 0), strict=False)
    assert raycast(cap, None, (-3, 0.5 + 1e-12), (6, 0)) is None
    # tangent to a cap only
    h = raycast(cap, None, (-1.5, -2), (0, 4))
    assert h is not None and np.allclose(h.point, (-1.5, 0)) and np.allclose(h.normal, (-1, 0))
    assert raycast(cap, None, (-1.5 - 1e-12, -2), (0, 4)) is None
    # inside (core, band, cap), on the surface, short
    for o in [(0, 0), (0.3, 0.4), (-1.2, 0.1), (1, 0)]:
        assert raycast(cap, None, o, (0, 5)) is None
    h = raycast(cap, None, (0, 0.5), (0, -1))
    assert h.fraction == 0.0 and np.allclose(h.normal, (0, 1))
    assert raycast(cap, None, (0, 0.5), (0, 1)) is None
    assert raycast(cap, None, (0, 2), (0, -1.4)) is None


def test_segment_both_sides_and_collinear():
    seg = Segment((-1, 0), (1, 0))
    h = raycast(seg, None, (0, -2), (0, 4))
    assert h.fraction == 0.5 and tuple(h.normal) == (0.0, -1.0)
    h = raycast(seg, None, (0, 2), (0, -4))
    assert h.fraction == 0.5 and tuple(h.normal) == (0.0, 1.0)
    h = raycast(seg, None, (1, -1), (0, 2))                          # exactly through an end point
    assert h.fraction == 0.5 and tuple(h.point) == (1.0, 0.0)
    assert raycast(seg, None, (1 + 1e-12, -1), (0, 2)) is None
    assert raycast(seg, None, (-3, 0), (6, 0)) is None                # collinear: no hit (documented)
    assert raycast(seg, None, (-3, 1e-9), (6, 0)) is None             # parallel
    h = raycast(seg, None, (0.5, 0), (0, 1))                          # starts on it
    assert h.fraction == 0.0 and tuple(h.normal) == (0.0, -1.0)
    assert raycast(seg, None, (0, -2), (0, 1.9)) is None              # ends before


def test_polygon_faces_vertices_parallel_rays():
    b = box(1, 1)
    h = raycast(b, None, (-3, 0.25), (4, 0))
    assert h.fraction == 0.5 and tuple(h.point) == (-1.0, 0.25) and tuple(h.normal) == (-1.0, 0.0)
    # exactly at a vertex, from the diagonal: point is the vertex, normal one of its two edges
    h = raycast(b, None, (-2, -2), (2, 2))
    assert h.fraction == 0.5 and tuple(h.point) == (-1.0, -1.0)
    assert tuple(h.normal) in {(-1.0, 0.0), (0.0, -1.0)}
    # parallel to an edge along its line: touches the first vertex (as shapely does)
    h = raycast(b, None, (-3, -1), (4, 0))
    assert h.fraction == 0.5 and tuple(h.point) == (-1.0, -1.0) and tuple(h.normal) == (-1.0, 0.0)
    assert raycast(b, None, (-3, -1 - 1e-12), (4, 0)) is None        # parallel, just outside
    # inside, on the surface, short
    assert raycast(b, None, (0.2, 0.3), (5, 1)) is None
    h = raycast(b, None, (-1, 0), (1, 0))
    assert h.fraction == 0.0 and tuple(h.normal) == (-1.0, 0.0)
    assert raycast(b, None, (-1, 0), (-1, 0)) is None                 # on the surface, leaving
    assert raycast(b, None, (-1, 0), (0, 1)) is None                  # on the surface, sliding
    assert raycast(b, None, (-3, 0), (1.9, 0)) is None


def test_rays_aimed_at_random_polygon_vertices():
    rng = np.random.default_rng(3)
    for _ in range(200):
        poly = Polygon(rng.normal(size=(int(rng.integers(3, 12)), 2)))
        v, n = poly.vertices, poly.normals
        i = int(rng.integers(len(v)))
        # from a point on the line through the centroid and vertex i, beyond the vertex (outside, since a
        # vertex of a convex polygon is never strictly between two of its points), towards the centroid
        c = v.mean(axis=0)
        o = v[i] + rng.uniform(0.1, 3.0) * (v[i] - c)
        h = raycast(poly, None, o, 2.0 * (c - o))
        assert h is not None
        assert np.allclose(h.point, v[i], atol=1e-12)
        assert abs(h.fraction - 0.5 * np.linalg.norm(v[i] - o) / np.linalg.norm(c - o)) < 1e-12
        assert any(np.allclose(h.normal, m) for m in (n[i], n[i - 1]))


def test_rounded_polygon_face_and_corner():
    rb = box(1, 1, radius=0.5)
    h = raycast(rb, None, (-3, 0.3), (4, 0))
    assert abs(h.fraction - 0.375) < 1e-15 and np.allclose(h.normal, (-1, 0))
    h = raycast(rb, None, (-3, -3), (4, 4))                           # into the rounded corner
    corner = np.array([-1, -1]) - 0.5 * np.array([1, 1]) / math.sqrt(2)
    assert np.allclose(h.point, corner) and np.allclose(h.normal, -np.array([1, 1]) / math.sqrt(2))
    assert raycast(rb, None, (-1.2, 0), (5, 0)) is None               # in the rounding band
    assert raycast(rb, None, (-1.3, -1.3), (5, 0)) is None            # in a corner disk
    # tangent to the rounded side at y = 1.5
    h = raycast(rb, None, (-3, 1.5), (6, 0))
    assert h is not None and np.allclose(h.point, (-1, 1.5)) and np.allclose(h.normal, (0, 1))


def test_zero_translation_and_bad_values():
    c = Circle(1.0)
    with pytest.raises(GeometryError, match=r"translation = \(0\.0, 0\.0\) is zero"):
        raycast(c, None, (3, 0), (0, 0))
    assert _local(c, (3, 0), (0, 0))[0] is False                       # the kernel: no hit
    with pytest.raises(GeometryError, match=r"origin = \(nan, 0\.0\) is not finite"):
        raycast(c, None, (float("nan"), 0), (1, 0))
    with pytest.raises(GeometryError, match=r"translation = \(inf, 0\.0\) is not finite"):
        raycast(c, None, (0, 0), (float("inf"), 0))
    with pytest.raises(GeometryError, match=r"angle = nan"):
        raycast(c, (0, 0, float("nan")), (3, 0), (-1, 0))
    with pytest.raises(GeometryError, match="carom shape"):
        raycast("circle", None, (3, 0), (-1, 0))
    with pytest.raises(ValueError):
        raycast(c, None, (3, 0, 1), (-1, 0))


# ----------------------------------------------------------------------------------- random vs oracles

def _rays(rng, k, scale=3.0):
    o = rng.uniform(-scale, scale, (k, 2))
    d = rng.normal(size=(k, 2)) * rng.uniform(0.2, 2.5 * scale, (k, 1))
    return o, d


def _first_hit_shapely(geom, o, d):
    """Nearest point of (segment o→o+d) ∩ geom to o, as a fraction, or None."""
    inter = shapely.LineString([o, o + d]).intersection(geom)
    if inter.is_empty:
        return None
    pts = shapely.get_coordinates(inter)
    dist = np.hypot(*(pts - o).T)
    k = int(np.argmin(dist))
    return dist[k] / math.hypot(*d), pts[k]


def test_random_rays_polygons_vs_shapely():
    rng = np.random.default_rng(4)
    checked = 0
    for _ in range(60):
        poly = Polygon(rng.normal(size=(int(rng.integers(3, 10)), 2)) * 1.5)
        geom = shapely.Polygon(poly.vertices)
        o, d = _rays(rng, 40)
        for k in range(len(o)):
            hit, t, px, py, nx, ny = _local(poly, o[k], d[k])
            if geom.covers(shapely.Point(o[k])):
                assert not hit                              # origin inside (or on the surface): no hit
                continue
            ref = _first_hit_shapely(geom, o[k], d[k])
            if ref is None:
                assert not hit
                continue
            assert hit
            assert abs(t - ref[0]) < 1e-9
            assert np.allclose((px, py), ref[1], atol=1e-9)
            # the normal is the outward normal of an edge through the point, facing the ray
            on = [i for i in range(len(poly.vertices))
                  if abs(np.dot(poly.normals[i], np.array([px, py]) - poly.vertices[i])) < 1e-9]
            assert any(np.allclose((nx, ny), poly.normals[i]) for i in on)
            assert nx * d[k][0] + ny * d[k][1] < 0
            checked += 1
    assert checked > 400


def test_random_rays_segments_vs_shapely():
    rng = np.random.default_rng(5)
    checked = 0
    for _ in range(50):
        a, b = rng.normal(size=(2, 2)) * 2
        seg = Segment(a, b)
        geom = shapely.LineString([a, b])
        o, d = _rays(rng, 40)
        for k in range(len(o)):
            hit, t, px, py, nx, ny = _local(seg, o[k], d[k])
            ref = _first_hit_shapely(geom, o[k], d[k])
            if ref is None:
                assert not hit
                continue
            assert hit
            assert abs(t - ref[0]) < 1e-9 and np.allclose((px, py), ref[1], atol=1e-9)
            e = (b - a) / np.linalg.norm(b - a)
            assert abs(nx * e[0] + ny * e[1]) < 1e-12 and abs(math.hypot(nx, ny) - 1) < 1e-12
            assert nx * d[k][0] + ny * d[k][1] < 0
            checked += 1
    assert checked > 150


def _rounded_oracle(core, r, o, d):
    """Vectorised first-entry fraction into core ⊕ disk(r) for many rays; nan where ambiguous,
    -1 where the origin is inside, inf for a miss."""
    k = len(o)

    def f(t):
        return shapely.distance(core, shapely.points(o + t[:, None] * d)) - r

    f0 = f(np.zeros(k))
    lo = np.zeros(k)
    hi = np.ones(k)
    g = (math.sqrt(5) - 1) / 2
    for _ in range(90):                                       # golden section for the minimum of f
        x1 = hi - g * (hi - lo)
        x2 = lo + g * (hi - lo)
        left = f(x1) < f(x2)
        hi = np.where(left, x2, hi)
        lo = np.where(left, lo, x1)
    tmin = 0.5 * (lo + hi)
    fmin = np.minimum(f(tmin), f(np.ones(k)))
    tmin = np.where(f(np.ones(k)) <= f(tmin), 1.0, tmin)
    a = np.zeros(k)
    b = tmin.copy()
    for _ in range(80):                                       # bisection for the first root on [0, tmin]
        m = 0.5 * (a + b)
        neg = f(m) <= 0
        b = np.where(neg, m, b)
        a = np.where(neg, a, m)
    out = np.where(fmin > 0, np.inf, b)
    out = np.where(f0 < 0, -1.0, out)
    ambiguous = (np.abs(f0) < 1e-9) | (np.abs(fmin) < 1e-7)
    return np.where(ambiguous, np.nan, out)


@pytest.mark.parametrize("kind", ["circle", "capsule", "rounded"])
def test_random_rays_rounded_shapes_vs_distance_oracle(kind):
    rng = np.random.default_rng({"circle": 6, "capsule": 7, "rounded": 8}[kind])
    checked = 0
    for _ in range(40):
        r = rng.uniform(0.05, 1.2)
        if kind == "circle":
            shape = Circle(r, center=rng.normal(size=2))
            core = shapely.Point(shape.vertices[0])
        elif kind == "capsule":
            shape = Capsule(*(rng.normal(size=(2, 2)) * 1.5), r)
            core = shapely.LineString(shape.vertices)
        else:
            shape = Polygon(rng.normal(size=(int(rng.integers(3, 9)), 2)), radius=r)
            core = shapely.Polygon(shape.vertices)
        o, d = _rays(rng, 100, scale=4.0)
        ref = _rounded_oracle(core, r, o, d)
        for k in range(len(o)):
            if np.isnan(ref[k]):
                continue
            hit, t, px, py, nx, ny = _local(shape, o[k], d[k])
            if ref[k] < 0 or np.isinf(ref[k]):
                assert not hit, (k, ref[k], t)
                continue
            assert hit
            assert abs(t - ref[k]) < 1e-8
            p = np.array([px, py])
            q = np.array(shapely.get_coordinates(shapely.shortest_line(core, shapely.Point(p)))[0])
            assert abs(np.linalg.norm(p - q) - r) < 1e-8
            assert np.allclose((nx, ny), (p - q) / r, atol=1e-6)
            assert nx * d[k][0] + ny * d[k][1] < 0
            checked += 1
    assert checked > 150, checked


def _shape_zoo(rng):
    return [Circle(rng.uniform(0.1, 1)), Capsule((-1, 0), (rng.uniform(0, 2), 0.5), rng.uniform(0.1, 0.5)),
            Segment((-1, -1), (1, rng.uniform(-1, 1))), Polygon(rng.normal(size=(6, 2))),
            Polygon(rng.normal(size=(5, 2)), radius=rng.uniform(0.05, 0.5)), box(0.5, 1.5)]


def test_world_transform_matches_local_cast():
    rng = np.random.default_rng(9)
    for _ in range(40):
        for shape in _shape_zoo(rng):
            xf = Transform(rng.uniform(-1e3, 1e3, 2), rng.uniform(-4, 4))
            o, d = _rays(rng, 10)
            for k in range(len(o)):
                local = _local(shape, o[k], d[k])
                h = raycast(shape, xf, xf.apply(o[k]), xf.apply(d[k]) - xf.position)
                if not local[0]:
                    continue                                  # may differ only at round-off grazing
                assert isinstance(h, RayHit)
                assert abs(h.fraction - local[1]) < 1e-9
                assert np.allclose(h.point, xf.apply(np.array(local[2:4])), atol=1e-9)
                assert np.allclose(h.normal, xf.apply(np.array(local[4:6])) - xf.position, atol=1e-9)


def test_bulk_kernel_matches_single_casts():
    rng = np.random.default_rng(10)
    shapes = [s for _ in range(5) for s in _shape_zoo(rng)]
    xfs = [Transform(rng.uniform(-5, 5, 2), rng.uniform(-3, 3)) for _ in shapes]
    packed = pack_shapes(shapes, xfs)
    for _ in range(50):
        o = rng.uniform(-8, 8, 2)
        d = rng.normal(size=2) * 10
        hit, frac, pts, nrm = raycast_many(shapes, xfs, o, d)
        hit2 = raycast_many_kernel(*packed, o[0], o[1], d[0], d[1])[0]
        assert np.array_equal(hit, hit2)
        best_t = 2.0
        best_k = -1
        for k, (s, xf) in enumerate(zip(shapes, xfs)):
            h = raycast(s, xf, o, d)
            assert hit[k] == (h is not None)
            if h is not None:
                assert frac[k] == h.fraction
                assert np.array_equal(pts[k], h.point) and np.array_equal(nrm[k], h.normal)
                if h.fraction < best_t:
                    best_t, best_k = h.fraction, k
            else:
                assert frac[k] == 1.0 and not pts[k].any() and not nrm[k].any()
        ck = raycast_closest_kernel(*packed, o[0], o[1], d[0], d[1])
        assert ck[0] == best_k
        if best_k >= 0:
            assert ck[1] == best_t


def test_pack_shapes_layout():
    shapes = [Circle(1.0), box(1, 2), Capsule((0, 0), (1, 0), 0.2)]
    v, n, off, cnt, rad, xs, ys, cs, ss = pack_shapes(shapes, [None, (1, 2), (3, 4, 0.5)])
    assert off.tolist() == [0, 1, 5] and cnt.tolist() == [1, 4, 2] and v.shape == (7, 2)
    assert np.array_equal(v[1:5], shapes[1].vertices) and rad.tolist() == [1.0, 0.0, 0.2]
    assert xs.tolist() == [0, 1, 3] and ys.tolist() == [0, 2, 4]
    assert cs[2] == math.cos(0.5) and ss[2] == math.sin(0.5)
    with pytest.raises(GeometryError, match="2 shapes but 1 transforms"):
        pack_shapes(shapes[:2], [None])


@settings(max_examples=80, deadline=None)
@given(st.floats(0.05, 2.0), st.floats(-math.pi, math.pi), st.floats(-3, 3), st.floats(0.1, 10.0))
def test_hypothesis_ray_normal_faces_ray_and_point_on_surface(r, ang, off, length):
    """Rays from outside at any angle: the hit lies on the rounded surface and the normal faces the ray."""
    shape = Polygon([(0, 0), (2, 0), (1.5, 1.5), (0, 1)], radius=r)
    core = shapely.Polygon(shape.vertices)
    o = np.array([math.cos(ang), math.sin(ang)]) * 8 + np.array([-math.sin(ang), math.cos(ang)]) * off
    d = -np.array([math.cos(ang), math.sin(ang)]) * length
    h = raycast(shape, None, o, d)
    ref = _rounded_oracle(core, r, o[None], d[None])[0]
    if np.isnan(ref):
        return
    if np.isinf(ref):
        assert h is None
        return
    assert h is not None and abs(h.fraction - ref) < 1e-8
    assert abs(shapely.distance(core, shapely.Point(h.point)) - r) < 1e-9
    _unit_against(h, d)
