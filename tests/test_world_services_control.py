"""World services of the "Control" issue: query_nearest (pymunk's point_query_nearest), cast_shape (Box2D's
b2World_CastShape) and explode (Box2D's b2World_Explode).

Oracles: brute force over every shape with shapely distances (nearest), the cast shape stepped along its
translation and measured with shapely (cast), closed forms (circle and box cases of all three).
"""
import math

import numpy as np
import pytest
import shapely

import carom
from carom.constants import TOI_TARGET
from carom.errors import SimulationError
from carom.geometry import Circle, Capsule, Segment, Polygon, Transform, box
from carom.rigid import queries as Q
from shape_gen import random_shape, core_geometry, true_distance
from test_queries import _all_shapes, _passes

HALF_WIDTH = 10.0
EPS = 1e-9


def _random_world(seed, target_shapes=150):
    """Shapes of every kind on static, kinematic and dynamic bodies, random categories and sensors, a removed
    body, stepped, then a quarter of the bodies teleported (stale broad phase)."""
    rng = np.random.default_rng(seed)
    w = carom.World()
    bodies = []
    count = 0
    while count < target_shapes:
        kind = ("static", "dynamic", "dynamic", "kinematic")[int(rng.integers(4))]
        b = w.add_body(position=rng.uniform(-HALF_WIDTH, HALF_WIDTH, 2), angle=rng.uniform(-math.pi, math.pi),
                       kind=kind)
        for j in range(int(rng.integers(1, 3))):
            kinds = ("circle", "capsule", "polygon", "rounded")
            if not (kind == "dynamic" and j == 0):
                kinds += ("segment",)
            b.add_shape(random_shape(rng, kinds), sensor=bool(rng.random() < 0.15),
                        category=1 << int(rng.integers(4)), mask=int(rng.integers(1, 16)))
            count += 1
        bodies.append(b)
    for _ in range(3):
        w.step(1 / 60)
    w.remove(bodies[0])
    for b in bodies[1:]:
        if rng.random() < 0.25:
            b.position = rng.uniform(-HALF_WIDTH, HALF_WIDTH, 2)
            b.angle = rng.uniform(-math.pi, math.pi)
    return w, rng




def _signed_distance(g, core, p):
    """Signed distance from p to the rounded shape by shapely (negative inside)."""
    point = shapely.Point(p)
    if isinstance(core, shapely.Polygon) and core.covers(point):
        return -core.exterior.distance(point) - g.radius
    return core.distance(point) - g.radius


def _state(w):
    """Every array a call could change: bodies, shapes, broad phase."""
    bp = w.tables.bp
    arrays = [w.tables.com, w.tables.angle, w.tables.vel, w.tables.angvel, w.tables.asleep, w.tables.sleep_time, w.tables.island, w.tables.force, w.tables.torque,
              w.tables.s_alive, bp._lower, bp._upper, bp._leaf, bp._moved_meta] + list(bp._trees[0]) + list(bp._trees[1])
    return [np.array(a, copy=True) for a in arrays]


def _assert_same_state(before, after):
    for x, y in zip(before, after):
        assert x.dtype == y.dtype and x.tobytes() == y.tobytes()


# ----------------------------------------------------------------------------------------------------------
# query_nearest
# ----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", (1, 2))
def test_query_nearest_matches_brute_force_with_shapely(seed):
    w, rng = _random_world(seed)
    shapes = _all_shapes(w)
    checked_inside = checked_none = 0
    for _ in range(150):
        if rng.random() < 0.5:
            _, g, xf, _ = shapes[int(rng.integers(len(shapes)))]
            p = xf.apply(g.vertices).mean(axis=0) + rng.normal(0, 0.5, 2)       # often inside a shape
        else:
            p = rng.uniform(-HALF_WIDTH - 3, HALF_WIDTH + 3, 2)
        max_distance = float(rng.choice([0.0, 0.3, 1.5, 50.0]))
        mask = (Q.ALL, 1, 2 | 4, 8)[int(rng.integers(4))]
        category = None if rng.random() < 0.5 else int(rng.integers(1, 16))
        brute = sorted((_signed_distance(g, core, p), h.index, g, core) for h, g, xf, core in shapes
                       if _passes(h, mask, category))
        got = w.query_nearest(p, max_distance, mask=mask, category=category)
        if not brute or brute[0][0] > max_distance + EPS:
            assert got is None
            checked_none += 1
            continue
        if brute[0][0] > max_distance - EPS:
            continue                                          # too close to the limit to call
        assert got is not None
        d, index, g, core = brute[0]
        assert got.distance == pytest.approx(d, abs=1e-9)
        if len(brute) < 2 or brute[1][0] - d > EPS:
            assert got.shape.index == index
            assert got.body == got.shape.body
        else:                                                 # a tie: any of the tied shapes
            g, core = next((b[2], b[3]) for b in brute if b[1] == got.shape.index)
        # the point is on the shape's surface, |distance| away from the query point
        assert core.distance(shapely.Point(got.point)) == pytest.approx(g.radius, abs=1e-9)
        if isinstance(core, shapely.Polygon) and g.radius == 0.0:
            assert core.exterior.distance(shapely.Point(got.point)) == pytest.approx(0.0, abs=1e-9)
        assert math.dist(got.point, p) == pytest.approx(abs(got.distance), abs=1e-9)
        checked_inside += got.distance < 0
    assert checked_inside >= 10 and checked_none >= 5


def test_query_nearest_closed_forms():
    w = carom.World(gravity=(0.0, 0.0))
    b = w.add_body(position=(0.0, 0.0), kind="static")
    crate = b.add_shape(box(2.0, 1.0))
    c = w.add_body(position=(10.0, 0.0), kind="static")
    ball = c.add_shape(Circle(1.0))
    hit = w.query_nearest((0.5, 0.25), 1.0)                   # inside the box: nearest face y = 1
    assert hit.shape == crate and hit.distance == pytest.approx(-0.75)
    np.testing.assert_allclose(hit.point, [0.5, 1.0])
    hit = w.query_nearest((13.0, 4.0), 5.0)                   # outside the circle: 5 − 1
    assert hit.shape == ball and hit.distance == pytest.approx(4.0)
    np.testing.assert_allclose(hit.point, [10.6, 0.8])
    assert w.query_nearest((13.0, 4.0), 3.9) is None          # just out of range
    hit = w.query_nearest((10.0, 0.5), 0.0)                   # inside the circle
    assert hit.shape == ball and hit.distance == pytest.approx(-0.5)
    np.testing.assert_allclose(hit.point, [10.0, 1.0])
    assert w.query_nearest((6.0, 0.0), 3.5).shape == ball     # 4 from the box, 3 from the circle
    assert w.query_nearest((6.0, 0.0), 2.9) is None
    assert w.query_nearest((5.0, 0.0), 3.0).shape == crate    # 3 from both: the lower index
    assert w.query_nearest((7.0, 0.0), 10.0).shape == ball    # 5 from the box, 2 from the circle
    assert w.query_nearest((7.0, 0.0), 10.0, mask=0) is None


def test_query_nearest_sees_sensors_and_moved_bodies():
    w = carom.World(gravity=(0.0, 0.0))
    b = w.add_body(position=(0.0, 0.0), kind="static")
    sensor = b.add_shape(Circle(1.0), sensor=True)
    assert w.query_nearest((2.0, 0.0), 1.5).shape == sensor
    b.position = (20.0, 0.0)
    assert w.query_nearest((2.0, 0.0), 1.5) is None
    assert w.query_nearest((22.0, 0.0), 1.5).distance == pytest.approx(1.0)


# ----------------------------------------------------------------------------------------------------------
# cast_shape
# ----------------------------------------------------------------------------------------------------------

STEPS = 400


@pytest.mark.parametrize("seed", (3, 4))
def test_cast_shape_matches_stepping_with_shapely(seed):
    """The fraction is where a shape is first met: no shape is overlapped at it, the hit one is within
    TOI_TARGET, and stepping the shape along the translation (400 steps, shapely distances) finds no contact
    before it and finds one within a step after it."""
    w, rng = _random_world(seed)
    shapes = _all_shapes(w)
    hits = misses = starts = 0
    for _ in range(12):
        query = random_shape(rng)
        start = rng.uniform(-HALF_WIDTH - 2, HALF_WIDTH + 2, 2)
        angle = float(rng.uniform(-math.pi, math.pi))
        translation = rng.normal(0, 6.0, 2)
        mask = (Q.ALL, 1 | 2, 4 | 8)[int(rng.integers(3))]
        got = w.cast_shape(query, (start[0], start[1], angle), translation, mask=mask)
        cands = [(h, g, xf, core) for h, g, xf, core in shapes if not h.sensor and _passes(h, mask)]
        local = query.vertices
        fractions = np.linspace(0.0, 1.0, STEPS + 1)
        placed = [core_geometry(query, Transform(start + f * translation, angle)) for f in fractions]
        gaps = np.full(STEPS + 1, np.inf)
        for h, g, xf, core in cands:
            gaps = np.minimum(gaps, shapely.distance(placed, core) - query.radius - g.radius)
        first = np.flatnonzero(gaps <= 0.0)
        if got is None:
            assert first.size == 0
            misses += 1
            continue
        hits += 1
        f = got.fraction
        assert 0.0 <= f <= 1.0
        if gaps[0] <= TOI_TARGET:                                     # starts touching or overlapping
            assert f == 0.0
            starts += 1
            continue
        at = Transform(start + f * translation, angle)
        for h, g, xf, core in cands:
            assert true_distance(query, at, g, xf) >= -1e-9, h        # nothing overlapped at the fraction
        hit_gap = true_distance(query, at, got.shape.geometry, Transform(got.body.position, got.body.angle))
        assert hit_gap <= TOI_TARGET + 1e-9
        if f > 0.0:
            assert np.all(gaps[fractions < f - 1e-9] > -1e-9)         # no earlier contact
        if first.size:
            assert f <= fractions[first[0]] + 1e-9
        assert got.shape.sensor is False and _passes(got.shape, mask)
        assert np.linalg.norm(got.normal) == pytest.approx(1.0)
        # the point is on the hit shape's surface, and the normal points out of it towards the cast shape
        hit_core = core_geometry(got.shape.geometry, Transform(got.body.position, got.body.angle))
        assert hit_core.distance(shapely.Point(got.point)) == pytest.approx(got.shape.geometry.radius, abs=1e-6)
        assert core_geometry(query, at).distance(shapely.Point(got.point)) <= query.radius + TOI_TARGET + 1e-6
    assert hits - starts >= 4 and misses >= 1


def test_cast_circle_at_box_face_closed_form():
    w = carom.World(gravity=(0.0, 0.0))
    b = w.add_body(position=(0.0, 0.0), kind="static")
    crate = b.add_shape(box(1.0, 2.0))
    hit = w.cast_shape(Circle(0.5), (-10.0, 0.3), (20.0, 0.0))
    # centre meets x = −1.5 after 8.5 of 20; the cast stops short by at most TOI_TARGET
    assert hit.shape == crate and hit.body == crate.body
    assert 8.5 / 20 - TOI_TARGET / 20 - 1e-12 <= hit.fraction <= 8.5 / 20
    np.testing.assert_allclose(hit.normal, [-1.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(hit.point, [-1.0, 0.3], atol=1e-12)
    # from above, onto the rotated body: the normal turns with it
    b.angle = math.pi / 2                                     # now 4 wide, 2 tall
    hit = w.cast_shape(Circle(0.5), (1.0, 6.0), (0.0, -10.0))
    assert 4.5 / 10 - TOI_TARGET / 10 - 1e-12 <= hit.fraction <= 4.5 / 10
    np.testing.assert_allclose(hit.normal, [0.0, 1.0], atol=1e-12)
    np.testing.assert_allclose(hit.point, [1.0, 1.0], atol=1e-12)


def test_cast_circle_at_circle_closed_form():
    w = carom.World(gravity=(0.0, 0.0))
    ball = w.add_body(position=(0.0, 0.0), kind="static").add_shape(Circle(1.0))
    # centre path y = 1: contact when |c| = 1.5, at x = −√(1.5² − 1)
    hit = w.cast_shape(Circle(0.5), (-5.0, 1.0), (10.0, 0.0))
    x = -math.sqrt(1.5 ** 2 - 1.0)
    assert hit.shape == ball
    assert (x + 5.0) / 10 - 1e-3 <= hit.fraction <= (x + 5.0) / 10
    expected_normal = np.array([x, 1.0]) / 1.5
    np.testing.assert_allclose(hit.normal, expected_normal, atol=1e-3)
    np.testing.assert_allclose(hit.point, expected_normal, atol=1e-3)


def test_cast_shape_skips_sensors_filters_and_starts():
    w = carom.World(gravity=(0.0, 0.0))
    s = w.add_body(position=(0.0, 0.0), kind="static")
    sensor = s.add_shape(Circle(1.0), sensor=True)
    wall = w.add_body(position=(5.0, 0.0), kind="static").add_shape(box(0.5, 3.0), category=2)
    hit = w.cast_shape(box(0.5, 0.5), (-5.0, 0.0, 0.3), (20.0, 0.0))
    assert hit.shape == wall                                  # through the sensor
    assert w.cast_shape(box(0.5, 0.5), (-5.0, 0.0), (20.0, 0.0), mask=1) is None
    assert w.cast_shape(box(0.5, 0.5), (-5.0, 0.0), (20.0, 0.0), category=0) is None     # wall.mask & 0
    assert w.cast_shape(box(0.5, 0.5), (-5.0, 0.0), (5.0, 0.0)) is None                 # stops short
    start = w.cast_shape(Circle(0.2), (5.0, 1.0), (3.0, 0.0))                           # starts inside
    assert start.shape == wall and start.fraction == 0.0
    np.testing.assert_allclose(start.normal, [-1.0, 0.0])
    assert w.cast_shape(Circle(0.2), (5.0, 1.0), (0.0, 0.0)).fraction == 0.0
    assert w.cast_shape(Circle(0.2), (0.0, 5.0), (0.0, 0.0)) is None
    # the hit point and normal of a capsule onto the wall's face
    hit = w.cast_shape(Capsule((0.0, -1.0), (0.0, 1.0), 0.25), (0.0, 0.0), (10.0, 0.0))
    assert hit.shape == wall and hit.fraction == pytest.approx(4.25 / 10, abs=TOI_TARGET / 10)
    np.testing.assert_allclose(hit.normal, [-1.0, 0.0], atol=1e-12)
    assert hit.point[0] == pytest.approx(4.5) and -1.0 <= hit.point[1] <= 1.0


# ----------------------------------------------------------------------------------------------------------
# explode
# ----------------------------------------------------------------------------------------------------------

def _ball(w, position, radius=0.5, density=1.0, kind="dynamic"):
    b = w.add_body(position=position, kind=kind)
    b.add_shape(Circle(radius), density=density)
    return b


@pytest.mark.parametrize("d, scale", [(0.0, 1.0), (1.2, 1.0), (3.0, 1.0), (4.0, 0.5), (4.5, 0.25), (5.0, 0.0),
                                      (6.0, 0.0)])
def test_explode_circle_gets_impulse_per_length_times_diameter(d, scale):
    """A ball of radius 0.5 whose surface is d from the center: Δv = 3 · 2r · scale / m, radially."""
    w = carom.World(gravity=(0.0, 0.0))
    direction = np.array([math.cos(0.7), math.sin(0.7)])
    b = _ball(w, tuple(direction * (d + 0.5)))
    pushed = w.explode((0.0, 0.0), 3.0, 3.0, falloff=2.0)
    expect = 3.0 * 1.0 * scale / b.mass
    if scale == 0.0 and d > 5.0:
        assert pushed == []
    np.testing.assert_allclose(b.velocity, expect * direction, atol=1e-12)
    assert b.angular_velocity == pytest.approx(0.0, abs=1e-12)


def test_explode_box_face_and_inside():
    w = carom.World(gravity=(0.0, 0.0))
    b = w.add_body(position=(0.0, 2.0))
    b.add_shape(box(1.5, 0.5))                                # 3 wide: the face seen from below
    w.explode((0.0, 0.0), 2.0, 2.0)
    np.testing.assert_allclose(b.velocity, [0.0, 2.0 * 3.0 / b.mass], atol=1e-12)
    assert b.angular_velocity == pytest.approx(0.0, abs=1e-12)
    # off centre: pushed at the closest point, it turns; seen from (3, 0) the box's width is its diagonal's
    # projection across the direction to (1.5, 1.5)
    c = w.add_body(position=(10.0, 2.0))
    c.add_shape(box(1.5, 0.5))
    w.explode((13.0, 0.0), 5.0, 1.0)
    u = np.array([-1.5, 1.5]) / math.hypot(1.5, 1.5)
    t = np.array([-u[1], u[0]])
    corners = np.array([[-1.5, -0.5], [1.5, -0.5], [1.5, 0.5], [-1.5, 0.5]])
    width = (corners @ t).max() - (corners @ t).min()
    np.testing.assert_allclose(c.velocity, width * u / c.mass, atol=1e-12)
    arm = np.array([1.5, -0.5])
    assert c.angular_velocity == pytest.approx(width * (arm[0] * u[1] - arm[1] * u[0]) / c.inertia)
    # the center inside the box: pushed at its centroid (no turn), away from the center, with the box's width
    d = w.add_body(position=(30.0, 0.0))
    d.add_shape(box(1.0, 1.0))
    w.explode((30.0, 0.5), 1.0, 1.0)
    np.testing.assert_allclose(d.velocity, [0.0, -2.0 / d.mass], atol=1e-12)
    assert d.angular_velocity == pytest.approx(0.0, abs=1e-12)


def test_explode_ring_is_symmetric():
    w = carom.World(gravity=(0.0, 0.0))
    n = 12
    bodies = []
    for k in range(n):
        a = 2 * math.pi * k / n
        b = w.add_body(position=(4.0 * math.cos(a), 4.0 * math.sin(a)), angle=a)
        b.add_shape(box(0.3, 0.6))                           # long side facing the center
        bodies.append(b)
    w.explode((0.0, 0.0), 3.0, 1.5, falloff=2.0)
    speeds = []
    for k, b in enumerate(bodies):
        a = 2 * math.pi * k / n
        radial = np.array([math.cos(a), math.sin(a)])
        v = b.velocity
        assert abs(v[0] * radial[1] - v[1] * radial[0]) < 1e-12          # radial
        assert v @ radial > 0.0
        assert b.angular_velocity == pytest.approx(0.0, abs=1e-12)
        speeds.append(v @ radial)
    # distance 3.7: scale (5 − 3.7)/2 = 0.65, width 1.2
    np.testing.assert_allclose(speeds, 1.5 * 1.2 * 0.65 / bodies[0].mass, rtol=1e-12)
    assert np.abs(w.velocities.sum(axis=0)).max() < 1e-12


def test_explode_leaves_static_kinematic_far_masked_and_sensors_alone():
    w = carom.World(gravity=(0.0, 0.0))
    static = _ball(w, (1.0, 0.0), kind="static")
    kinematic = _ball(w, (-1.0, 0.0), kind="kinematic")
    far = _ball(w, (0.0, 5.6))                                # surface 5.1 > 3 + 2
    masked = w.add_body(position=(0.0, -1.0))
    masked.add_shape(Circle(0.5), category=4)
    sensor_only = w.add_body(position=(2.0, 2.0))
    sensor_only.add_shape(Circle(0.5), sensor=True)
    sensor_only.add_shape(Circle(0.1, center=(0.0, 10.0)))     # (its mass; far away)
    near = _ball(w, (0.0, 2.0))
    pushed = w.explode((0.0, 0.0), 3.0, 1.0, falloff=2.0, mask=1 | 2)
    assert pushed == [near]
    assert near.velocity[1] > 0.0
    for b in (static, kinematic, far, masked, sensor_only):
        assert b.velocity.tolist() == [0.0, 0.0] and b.angular_velocity == 0.0


def test_explode_total_independent_of_shape_order():
    rng = np.random.default_rng(5)
    specs = [(rng.uniform(-3, 3, 2), float(rng.uniform(-3, 3)), random_shape(rng, ("circle", "capsule",
                                                                                  "polygon", "rounded")))
             for _ in range(20)]
    results = []
    for order in (np.arange(20), rng.permutation(20)):
        w = carom.World(gravity=(0.0, 0.0))
        handles = {}
        for k in order:
            p, a, g = specs[k]
            b = w.add_body(position=p, angle=a)
            b.add_shape(g)
            b.add_shape(Circle(0.2, center=(0.3, 0.1)))          # two shapes per body, summed
            handles[k] = b
        w.explode((0.2, -0.1), 2.0, 1.0, falloff=1.5)
        results.append((np.array([handles[k].velocity for k in range(20)]),
                        np.array([handles[k].angular_velocity for k in range(20)])))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12, atol=1e-14)
    assert np.abs(results[0][0]).max() > 0.1


def test_explode_wakes_sleeping_bodies():
    w = carom.World(gravity=(0.0, 0.0))
    b = _ball(w, (0.0, 2.0))
    b.sleep()
    assert b.sleeping
    w.explode((0.0, 0.0), 3.0, 1.0)
    assert not b.sleeping and b.velocity[1] > 0.0
    w.step(1 / 60)
    assert b.position[1] > 2.0


# ----------------------------------------------------------------------------------------------------------
# bad input: a specific error naming the value, and the world byte-for-byte unchanged
# ----------------------------------------------------------------------------------------------------------

def _small_world():
    w = carom.World()
    w.static_body.add_shape(Segment((-10, 0), (10, 0)))
    b = w.add_body(position=(0.0, 2.0))
    b.add_shape(box(0.5, 0.5))
    light = w.add_body(position=(2.0, 2.0))
    light.add_shape(Circle(0.5), density=1e-3)
    heavy = w.add_body(position=(-2.0, 2.0))
    heavy.add_shape(Circle(0.5), density=1e3)
    w.step(1 / 60)
    return w, heavy


@pytest.mark.parametrize("call, name", [
    (lambda w: w.query_nearest((math.nan, 0.0), 1.0), "point"),
    (lambda w: w.query_nearest((0.0, 0.0, 0.0), 1.0), "point"),
    (lambda w: w.query_nearest((1e9, 0.0), 1.0), "point"),
    (lambda w: w.query_nearest((0.0, 0.0), -1.0), "max_distance"),
    (lambda w: w.query_nearest((0.0, 0.0), math.inf), "max_distance"),
    (lambda w: w.query_nearest((0.0, 0.0), math.nan), "max_distance"),
    (lambda w: w.query_nearest((0.0, 0.0), True), "max_distance"),
    (lambda w: w.query_nearest((0.0, 0.0), "1"), "max_distance"),
    (lambda w: w.query_nearest((0.0, 0.0), 1.0, mask=-1), "mask"),
    (lambda w: w.query_nearest((0.0, 0.0), 1.0, mask=True), "mask"),
    (lambda w: w.query_nearest((0.0, 0.0), 1.0, category=1.0), "category"),
    (lambda w: w.cast_shape("circle", (0.0, 0.0), (1.0, 0.0)), "shape"),
    (lambda w: w.cast_shape(Circle(1.0), (0.0, math.nan), (1.0, 0.0)), "transform"),
    (lambda w: w.cast_shape(Circle(1.0), (0.0, 0.0, math.inf), (1.0, 0.0)), "angle"),
    (lambda w: w.cast_shape(Circle(1.0), (0.0, 0.0, True), (1.0, 0.0)), "angle"),
    (lambda w: w.cast_shape(Circle(1.0), (0.0, 0.0, 0.0, 0.0), (1.0, 0.0)), "transform"),
    (lambda w: w.cast_shape(Circle(1.0), (0.0, 0.0), (math.nan, 0.0)), "translation"),
    (lambda w: w.cast_shape(Circle(1.0), (0.0, 0.0), (True, 0.0)), "translation"),
    (lambda w: w.cast_shape(Circle(1.0), (0.0, 0.0), (1.0,)), "translation"),
    (lambda w: w.cast_shape(Circle(1.0), (9e6, 0.0), (2e6, 0.0)), "translation"),
    (lambda w: w.cast_shape(Circle(1.0), (0.0, 0.0), (1.0, 0.0), mask=2 ** 64), "mask"),
    (lambda w: w.explode((math.inf, 0.0), 1.0, 1.0), "center"),
    (lambda w: w.explode((0.0, 0.0), -1.0, 1.0), "radius"),
    (lambda w: w.explode((0.0, 0.0), math.nan, 1.0), "radius"),
    (lambda w: w.explode((0.0, 0.0), False, 1.0), "radius"),
    (lambda w: w.explode((0.0, 0.0), 1.0, math.inf), "impulse_per_length"),
    (lambda w: w.explode((0.0, 0.0), 1.0, True), "impulse_per_length"),
    (lambda w: w.explode((0.0, 0.0), 1.0, 1.0, falloff=-0.5), "falloff"),
    (lambda w: w.explode((0.0, 0.0), 1.0, 1.0, falloff=math.inf), "falloff"),
    (lambda w: w.explode((0.0, 0.0), 1.0, 1.0, mask=1.5), "mask"),
    (lambda w: w.explode((0.0, 2.0), 3.0, 1e29), "impulse_per_length"),     # the light ball: beyond the limit
])
def test_bad_input_raises_and_leaves_world_unchanged(call, name):
    w, _ = _small_world()
    w.query_point((0.0, 0.0))                 # the broad phase up to date (any query would do that first)
    before = _state(w)
    with pytest.raises(SimulationError, match=name):
        call(w)
    _assert_same_state(before, _state(w))


def test_refused_explosion_applies_none_of_its_impulses():
    """The heavy ball alone could take the explosion; with the light one in range nothing changes."""
    w, heavy = _small_world()
    assert w.explode((-2.0, 1.2), 0.5, 1e29) == [heavy]      # only the heavy ball: accepted
    assert heavy.velocity[1] > 1e25
    before = _state(w)
    with pytest.raises(SimulationError, match="velocity"):
        w.explode((0.0, 2.0), 3.0, 1e29)
    _assert_same_state(before, _state(w))


def test_queries_refused_while_stepping():
    w, _ = _small_world()
    w.tables.locked = True
    for call in (lambda: w.query_nearest((0.0, 0.0), 1.0), lambda: w.cast_shape(Circle(1.0), (0.0, 0.0), (1, 0)),
                 lambda: w.explode((0.0, 0.0), 1.0, 1.0)):
        with pytest.raises(carom.errors.WorldLockedError):
            call()
