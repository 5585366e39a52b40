"""Mass properties: closed forms for simple shapes, shapely (finely buffered) for rounded polygons."""
import math

import numpy as np
import pytest
import shapely

from carom.geometry import Circle, Capsule, Segment, Polygon, box
from carom.errors import GeometryError
from shape_gen import random_shape


def test_box():
    m = box(1.0, 0.5).mass_properties(2.0)
    assert m.mass == pytest.approx(4.0)
    assert m.inertia == pytest.approx(4.0 * (2 ** 2 + 1 ** 2) / 12)
    np.testing.assert_allclose(m.centroid, [0, 0], atol=1e-15)


def test_offset_circle():
    m = Circle(0.5, (1, 2)).mass_properties(3.0)
    assert m.mass == pytest.approx(3 * math.pi * 0.25)
    assert m.inertia == pytest.approx(m.mass * 0.25 / 2)
    np.testing.assert_allclose(m.centroid, [1, 2])


def test_capsule_closed_form():
    r, length = 0.3, 2.0
    m = Capsule((0, 0), (length, 0), r).mass_properties(1.0)
    rect_m = 2 * r * length
    disk_m = math.pi * r * r
    # rectangle + two half disks whose centroids sit 4r/(3π) beyond the ends
    d = 4 * r / (3 * math.pi)
    half_i_own = disk_m / 2 * (r * r / 2) - disk_m / 2 * d * d
    inertia = rect_m * (length ** 2 + 4 * r * r) / 12 + 2 * (half_i_own + disk_m / 2 * (length / 2 + d) ** 2)
    assert m.mass == pytest.approx(rect_m + disk_m)
    assert m.inertia == pytest.approx(inertia, rel=1e-12)
    np.testing.assert_allclose(m.centroid, [1, 0], atol=1e-15)


def test_segment_has_no_mass():
    assert Segment((0, 0), (1, 0)).mass_properties(1.0).mass == 0.0


def test_random_shapes_against_finely_buffered_shapely():
    rng = np.random.default_rng(11)
    for _ in range(200):
        s = random_shape(rng, kinds=("circle", "capsule", "polygon", "rounded"))
        core = shapely.Polygon(s.vertices) if len(s.vertices) > 2 else (
            shapely.LineString(s.vertices) if len(s.vertices) == 2 else shapely.Point(s.vertices[0]))
        g = core.buffer(s.radius, quad_segs=2048) if s.radius > 0 else core
        m = s.mass_properties(1.0)
        assert m.mass == pytest.approx(g.area, rel=2e-6)
        np.testing.assert_allclose(m.centroid, [g.centroid.x, g.centroid.y], atol=2e-6 * (1 + s.radius))
        # polar moment about the centroid by triangulating shapely's polygon
        pts = np.asarray(g.exterior.coords)[:-1] - m.centroid
        p, q = pts, np.roll(pts, -1, axis=0)
        cr = p[:, 0] * q[:, 1] - p[:, 1] * q[:, 0]
        j = abs(np.sum(cr * ((p * p).sum(1) + (p * q).sum(1) + (q * q).sum(1))) / 12)  # either winding
        assert m.inertia == pytest.approx(j, rel=1e-5)


@pytest.mark.parametrize("density", [-1.0, float("nan"), float("inf"), "x"])
def test_bad_density(density):
    with pytest.raises(GeometryError, match="density"):
        box(1, 1).mass_properties(density)


@pytest.mark.parametrize("make, needle", [
    (lambda: Circle(0.0), "radius"), (lambda: Circle(-1), "radius"), (lambda: Circle(float("nan")), "nan"),
    (lambda: Capsule((0, 0), (0, 0), 1), "zero length"), (lambda: Capsule((0, 0), (1, 0), 0), "radius"),
    (lambda: Segment((1, 1), (1, 1)), "zero length"), (lambda: Segment((0, 0), (float("inf"), 0)), "inf"),
    (lambda: box(0, 1), "half_width"), (lambda: box(1, -1), "half_height"),
    (lambda: Polygon([(0, 0), (1, 0), (0, 1)], radius=-0.1), "radius"),
    (lambda: Circle(1, (1e9, 0)), "world limit"),
])
def test_bad_shapes_name_the_value(make, needle):
    with pytest.raises(GeometryError, match=needle):
        make()



def test_one_geometry_on_many_bodies():
    """A world derives a shape's mass terms and reach once per geometry (``geometry.mass.shape_terms``, kept on the
    shape, which cannot change: its radius is read-only like its vertices): a geometry added to several bodies
    gives each the capsule's closed-form mass and reach, and a body whose centre of mass a second shape moves
    has the first shape's reach measured from the new centre."""
    import carom
    r, length = 0.2, 1.0
    capsule = Capsule((0.0, 0.0), (length, 0.0), r)
    with pytest.raises(AttributeError):
        capsule.radius = 0.4
    w = carom.World()
    bodies = [w.add_body(position=(3.0 * k, 0.0)) for k in range(3)]
    for b in bodies:
        b.add_shape(capsule, density=2.0)
    reach = w.tables.s_reach
    for b in bodies:
        assert b.mass == pytest.approx(2.0 * (2 * r * length + math.pi * r * r), rel=1e-12)
        assert reach[b.shapes[0].index] == pytest.approx(0.5 * length + r, rel=1e-12)
    bodies[1].add_shape(Circle(0.1, (3.0, 0.0)), density=2.0)
    cx = bodies[1].local_center[0]
    assert cx > 0.5
    assert reach[bodies[1].shapes[0].index] == pytest.approx(max(cx, length - cx) + r, rel=1e-12)
    assert reach[bodies[0].shapes[0].index] == pytest.approx(0.5 * length + r, rel=1e-12)
