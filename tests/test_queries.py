"""World queries (carom.rigid.queries) against brute force over every shape and against shapely.

Random worlds (seeded): a few hundred shapes of every kind on static, kinematic and dynamic bodies, random
category bits and sensors, a few removed bodies and shapes, stepped, then some bodies teleported by
``body.position = ...`` so the broad phase's boxes are stale when the queries run.
"""
import math

import numpy as np
import pytest
import shapely

import carom
from carom.errors import SimulationError
from carom.geometry import Circle, Segment, Transform, box, raycast as shape_raycast
from carom.rigid import queries as Q
from shape_gen import random_shape, core_geometry, true_distance

SEEDS = (1, 2, 3)
HALF_WIDTH = 12.0            # shapes are scattered over [-HALF_WIDTH, HALF_WIDTH]²
MASKS = (Q.ALL, 1, 2, 4 | 8, 1 | 8, 0)
EPS = 1e-9                   # oracle cases closer than this to a boundary are ambiguous and skipped


def _random_world(seed, target_shapes=300):
    rng = np.random.default_rng(seed)
    w = carom.World(gravity=(0.0, -10.0))
    bodies = []
    count = 0
    while count < target_shapes:
        kind = ("static", "dynamic", "dynamic", "kinematic")[int(rng.integers(4))]
        b = w.add_body(position=rng.uniform(-HALF_WIDTH, HALF_WIDTH, 2), angle=rng.uniform(-math.pi, math.pi),
                       kind=kind, velocity=rng.normal(0, 1, 2) if kind == "kinematic" else (0, 0))
        for j in range(int(rng.integers(1, 4))):
            kinds = ("circle", "capsule", "polygon", "rounded")           # a dynamic body needs area
            if not (kind == "dynamic" and j == 0):
                kinds += ("segment",)
            b.add_shape(random_shape(rng, kinds), density=1.0, sensor=bool(rng.random() < 0.15),
                        category=1 << int(rng.integers(4)), mask=int(rng.integers(1, 16)))
            count += 1
        bodies.append(b)
    for _ in range(5):
        w.step(1 / 60)
    # remove a few bodies and single shapes: their indices must never come back
    for k in rng.choice(len(bodies), 6, replace=False):
        w.remove(bodies[k])
    bodies = [b for k, b in enumerate(bodies) if w.tables.alive[b.index] and w.tables.gen[b.index] == b.generation]
    removed = 0
    for b in bodies:
        if len(b.shapes) > 1 and removed < 6:
            w.remove(b.shapes[-1])
            removed += 1
    # teleport a quarter of the bodies (far outside their fat boxes) without stepping
    for b in bodies:
        if rng.random() < 0.25:
            b.position = rng.uniform(-HALF_WIDTH, HALF_WIDTH, 2)
            b.angle = rng.uniform(-math.pi, math.pi)
    return w, rng


def _all_shapes(w):
    """(handle, geometry, world Transform, shapely core) of every live shape, by shape index."""
    out = []
    for b in [w.static_body] + w.bodies:
        xf = Transform(b.position, b.angle)
        for h in b.shapes:
            out.append((h, h.geometry, xf, core_geometry(h.geometry, xf)))
    out.sort(key=lambda row: row[0].index)
    return out


def _passes(h, mask, category=None):
    return (h.category & mask) != 0 and (category is None or (h.mask & category) != 0)


@pytest.fixture(scope="module", params=SEEDS)
def world(request):
    w, rng = _random_world(request.param)
    return w, _all_shapes(w), np.random.default_rng(request.param + 100)


def _random_point(rng, shapes):
    """A quarter of the points uniform over the world, the rest near a random shape (so that containment
    happens)."""
    if rng.random() < 0.25:
        return rng.uniform(-HALF_WIDTH - 2, HALF_WIDTH + 2, 2)
    _, g, xf, _ = shapes[int(rng.integers(len(shapes)))]
    return xf.apply(g.vertices).mean(axis=0) + rng.normal(0, 0.4, 2)


# ----------------------------------------------------------------------------------------------------------
# ray casts
# ----------------------------------------------------------------------------------------------------------

def _brute_raycast(shapes, p1, p2, mask, category=None):
    hits = []
    for h, g, xf, _ in shapes:
        if h.sensor or not _passes(h, mask, category):
            continue
        r = shape_raycast(g, xf, p1, p2 - p1)
        if r is not None:
            hits.append((r.fraction, h.index, r.point, r.normal))
    hits.sort(key=lambda t: (t[0], t[1]))
    return hits


def _shapely_expects_hit(g, core, p1, p2):
    """Whether the segment p1→p2 enters the shape, by shapely; None when the case is too close to call."""
    ray = shapely.LineString([p1, p2])
    r = g.radius
    start = core.distance(shapely.Point(p1)) - r
    if g.vertices.shape[0] >= 3 and r == 0.0:
        if core.covers(shapely.Point(p1)):
            return False if core.exterior.distance(shapely.Point(p1)) > EPS else None
        inside_length = ray.intersection(core).length
        if 0 < inside_length < EPS or (inside_length == 0 and ray.distance(core) < EPS):
            return None
        return inside_length > 0
    if g.vertices.shape[0] == 2 and r == 0.0:
        if ray.distance(core) < EPS and not ray.crosses(core):
            return None                       # grazing an end point
        return ray.crosses(core)
    if abs(start) < EPS:
        return None
    if start < 0:
        return False                          # starts inside: no entry, no hit
    gap = ray.distance(core) - r
    return None if abs(gap) < EPS else gap < 0


def test_raycast_matches_brute_force_and_shapely(world):
    w, shapes, rng = world
    checked_hits = 0
    for q in range(40):
        p1 = rng.uniform(-HALF_WIDTH - 3, HALF_WIDTH + 3, 2)
        p2 = p1 + rng.normal(0, 12, 2) if q % 4 else p1 + rng.normal(0, 1, 2)
        mask = MASKS[q % len(MASKS)]
        got = Q.raycast(w, p1, p2, mask=mask)
        want = _brute_raycast(shapes, p1, p2, mask)
        assert [hit.shape.index for hit in got] == [t[1] for t in want]
        for hit, (frac, s, point, normal) in zip(got, want):
            assert hit.fraction == pytest.approx(frac, abs=1e-12)
            np.testing.assert_allclose(hit.point, point, atol=1e-9)
            np.testing.assert_allclose(hit.normal, normal, atol=1e-9)
            assert hit.body == hit.shape.body
            assert 0.0 <= hit.fraction <= 1.0
        fractions = [hit.fraction for hit in got]
        assert fractions == sorted(fractions)
        # independent check: shapely decides which shapes the segment enters, and the hit point is on the
        # surface with nothing of the shape before it
        by_index = {hit.shape.index: hit for hit in got}
        for h, g, xf, core in shapes:
            if h.sensor or not _passes(h, mask):
                assert h.index not in by_index
                continue
            expect = _shapely_expects_hit(g, core, p1, p2)
            if expect is not None:
                assert (h.index in by_index) == expect, (h, p1, p2)
            if h.index in by_index:
                hit = by_index[h.index]
                np.testing.assert_allclose(hit.point, p1 + hit.fraction * (p2 - p1), atol=1e-9)
                assert core.distance(shapely.Point(hit.point)) == pytest.approx(g.radius, abs=1e-7)
                before = p1 + (hit.fraction - 1e-7) * (p2 - p1)
                if hit.fraction > 1e-6:
                    prefix = shapely.LineString([p1, before])
                    if g.radius > 0:
                        assert core.distance(prefix) >= g.radius - 1e-9
                    elif g.vertices.shape[0] >= 3:
                        assert prefix.intersection(core).length < 1e-9
                checked_hits += 1
        first = Q.raycast_first(w, p1, p2, mask=mask)
        if want:
            assert first is not None and first.shape.index == want[0][1]
            assert first.fraction == pytest.approx(want[0][0], abs=1e-12)
        else:
            assert first is None
    assert checked_hits > 20


def test_raycast_category_filter_and_degenerate_ray(world):
    w, shapes, rng = world
    for q in range(10):
        p1 = rng.uniform(-HALF_WIDTH, HALF_WIDTH, 2)
        p2 = rng.uniform(-HALF_WIDTH, HALF_WIDTH, 2)
        category = int(rng.integers(1, 16))
        got = Q.raycast(w, p1, p2, mask=Q.ALL, category=category)
        want = _brute_raycast(shapes, p1, p2, Q.ALL, category)
        assert [hit.shape.index for hit in got] == [t[1] for t in want]
    assert Q.raycast(w, (1.0, 2.0), (1.0, 2.0)) == []
    assert Q.raycast_first(w, (1.0, 2.0), (1.0, 2.0)) is None


# ----------------------------------------------------------------------------------------------------------
# overlap queries
# ----------------------------------------------------------------------------------------------------------

def test_query_point_matches_shapely(world):
    w, shapes, rng = world
    found = 0
    for q in range(150):
        p = _random_point(rng, shapes)
        mask = MASKS[q % len(MASKS)]
        got = [h.index for h in Q.query_point(w, p, mask=mask)]
        assert got == sorted(got)
        point = shapely.Point(p)
        for h, g, xf, core in shapes:
            gap = core.distance(point) - g.radius
            if g.radius == 0.0 and g.vertices.shape[0] >= 3:
                gap = -core.exterior.distance(point) if core.covers(point) else gap
            if abs(gap) < EPS:
                continue
            assert (h.index in got) == (gap < 0 and _passes(h, mask)), (h, p, gap)
        found += len(got)
    assert found > 30


def test_query_aabb_matches_shapely_bounds(world):
    w, shapes, rng = world
    found = 0
    for q in range(60):
        c = rng.uniform(-HALF_WIDTH, HALF_WIDTH, 2)
        half = rng.uniform(0.0, 4.0, 2) if q % 5 else np.zeros(2)        # some boxes are points
        lower, upper = c - half, c + half
        mask = MASKS[q % len(MASKS)]
        got = [h.index for h in Q.query_aabb(w, lower, upper, mask=mask)]
        want = []
        for h, g, xf, core in shapes:
            lx, ly, ux, uy = core.bounds
            r = g.radius
            if (lx - r <= upper[0] and lower[0] <= ux + r and ly - r <= upper[1] and lower[1] <= uy + r
                    and _passes(h, mask)):
                want.append(h.index)
        assert got == want
        found += len(got)
    assert found > 30


def _shapely_overlaps(qg, qxf, qcore, g, xf, core):
    """Separation < 0 by shapely; None when too close to call."""
    if qg.radius + g.radius > 0.0:
        d = true_distance(qg, qxf, g, xf)
        return None if abs(d) < EPS else d < 0
    if 0.0 < qcore.distance(core) < EPS:
        return None
    return bool(shapely.relate_pattern(qcore, core, "T********"))


def test_query_shape_matches_shapely(world):
    w, shapes, rng = world
    found = 0
    for q in range(60):
        qg = random_shape(rng)
        qpos = _random_point(rng, shapes)
        qangle = float(rng.uniform(-math.pi, math.pi))
        qxf = Transform(qpos, qangle)
        qcore = core_geometry(qg, qxf)
        mask = MASKS[q % len(MASKS)]
        transform = qxf if q % 2 else (qpos, qangle)
        got = [h.index for h in Q.query_shape(w, qg, transform, mask=mask)]
        assert got == sorted(got)
        for h, g, xf, core in shapes:
            expect = _shapely_overlaps(qg, qxf, qcore, g, xf, core)
            if expect is None:
                continue
            assert (h.index in got) == (expect and _passes(h, mask)), (h, qg, qxf)
        found += len(got)
    assert found > 30


# ----------------------------------------------------------------------------------------------------------
# behaviour in small scenes
# ----------------------------------------------------------------------------------------------------------

def _small_world():
    w = carom.World(gravity=(0.0, -10.0))
    ground = w.static_body.add_shape(Segment((-10, 0), (10, 0)))
    b = w.add_body(position=(0.0, 2.0))
    crate = b.add_shape(box(0.5, 0.5), category=2)
    s = w.add_body(position=(3.0, 2.0), kind="static")
    sensor = s.add_shape(Circle(0.5), sensor=True)
    return w, ground, b, crate, sensor


def test_sensor_seen_by_overlap_queries_not_by_rays():
    w, ground, b, crate, sensor = _small_world()
    assert [h.index for h in Q.query_point(w, (3.1, 2.0))] == [sensor.index]
    assert [h.index for h in Q.query_shape(w, Circle(0.2), ((3.0, 2.6), 0.0))] == [sensor.index]
    assert [h.index for h in Q.query_aabb(w, (2.0, 1.0), (4.0, 3.0))] == [sensor.index]
    hits = Q.raycast(w, (-5.0, 2.0), (5.0, 2.0))
    assert [h.shape.index for h in hits] == [crate.index]
    assert hits[0].fraction == pytest.approx(0.45)
    np.testing.assert_allclose(hits[0].normal, [-1.0, 0.0])
    assert Q.raycast(w, (-5.0, 2.0), (5.0, 2.0), mask=1) == []


def test_touching_is_not_overlapping():
    w, ground, b, crate, sensor = _small_world()
    assert Q.query_shape(w, Circle(1.0), ((5.0, 1.0), 0.0)) == []          # rests on the ground
    assert [h.index for h in Q.query_shape(w, Circle(1.0), ((5.0, 0.999), 0.0))] == [ground.index]
    assert Q.query_shape(w, box(1.0, 0.5), ((0.0, 3.0), 0.0)) == []          # face to face on the crate
    assert [h.index for h in Q.query_shape(w, box(1.0, 0.5), ((0.0, 2.999), 0.0))] == [crate.index]


def test_teleported_body_found_where_it_is_now():
    w, ground, b, crate, sensor = _small_world()
    for _ in range(3):
        w.step(1 / 60)
    b.position = (40.0, 30.0)
    b.angle = 0.25 * math.pi
    assert Q.query_point(w, (0.0, 2.0)) == []
    assert [h.index for h in Q.query_point(w, (40.0, 30.6))] == [crate.index]
    assert [h.index for h in Q.query_aabb(w, (40.6, 29.0), (41.0, 29.5))] == [crate.index]
    assert Q.query_aabb(w, (40.75, 29.0), (41.0, 29.5)) == []               # corner at x = 40 + √0.5
    hit = Q.raycast_first(w, (30.0, 30.0), (50.0, 30.0))
    assert hit.shape.index == crate.index and hit.body == b
    assert hit.point[0] == pytest.approx(40.0 - math.sqrt(0.5))
    assert Q.raycast(w, (-5.0, 2.0), (5.0, 2.0)) == []


def test_each_change_between_two_queries_is_seen_by_the_second():
    """The queries keep the boxes they brought the broad phase up to date with (``WorldTables.query_boxes``) until
    the world changes: every change that moves, adds or removes a shape, made between two queries, must be
    seen by the second one (a query that kept stale boxes would miss the shape where it is now)."""
    w, ground, b, crate, sensor = _small_world()

    def at(p):
        return [h.index for h in Q.query_point(w, p)]

    def in_box(lo, hi):
        return [h.index for h in Q.query_aabb(w, lo, hi)]

    assert at((0.0, 2.0)) == [crate.index]
    b.position = (6.0, 2.0)
    assert at((6.0, 2.0)) == [crate.index] and at((0.0, 2.0)) == []
    assert in_box((6.6, 1.9), (6.8, 2.1)) == []
    b.angle = 0.25 * math.pi                                  # a corner now reaches x = 6 + √0.5
    assert in_box((6.6, 1.9), (6.8, 2.1)) == [crate.index]
    r = math.sqrt(2.0)                                         # (2, 0) in the body's frame, turned by π/4
    extra = b.add_shape(Circle(0.3, center=(2.0, 0.0)))
    assert at((6.0 + r, 2.0 + r)) == [extra.index]
    assert in_box((6.0 + r - 0.1, 2.0 + r - 0.1), (6.0 + r + 0.1, 2.0 + r + 0.1)) == [extra.index]
    w.remove(extra)
    assert at((6.0 + r, 2.0 + r)) == [] and in_box((7.2, 3.2), (7.6, 3.6)) == []
    for _ in range(30):
        w.step(1 / 60)                                         # it falls more than a metre onto the ground
    assert at((6.0, 2.0)) == [] and at(tuple(b.world_center)) == [crate.index]
    hit = Q.raycast_first(w, (6.0, 10.0), (6.0, -10.0))
    assert hit.shape.index == crate.index and hit.point[1] < 1.5


def test_removed_shapes_never_returned():
    w, ground, b, crate, sensor = _small_world()
    w.remove(b)
    assert Q.query_point(w, (0.0, 2.0)) == []
    assert Q.raycast(w, (-5.0, 2.0), (5.0, 2.0)) == []
    w.remove(sensor)
    assert [h.index for h in Q.query_aabb(w, (-20.0, -20.0), (20.0, 20.0))] == [ground.index]


def test_queries_between_steps_change_nothing_the_step_computes():
    """Two identical worlds, one queried (and teleported bodies refreshed) between steps: bitwise equal."""
    results = []
    for query in (False, True):
        w, rng = _random_world(7, target_shapes=120)
        for k in range(20):
            if query:
                Q.raycast(w, (-20.0, k - 10.0), (20.0, 10.0 - k))
                Q.query_point(w, (k - 10.0, 0.0))
                Q.query_aabb(w, (-5.0, -5.0), (5.0, 5.0))
                Q.query_shape(w, Circle(2.0), (k - 10.0, 1.0))
            w.step(1 / 60)
        results.append((w.positions.copy(), w.angles.copy(), w.velocities.copy()))
    for a, b in zip(*results):
        assert np.array_equal(a, b)


# ----------------------------------------------------------------------------------------------------------
# bad input
# ----------------------------------------------------------------------------------------------------------

def _snapshot(w):
    bp = w.tables.bp
    arrays = [w.tables.com, w.tables.angle, w.tables.vel, bp._lower, bp._upper, bp._leaf, bp._moved_meta] + list(bp._trees[0])
    return [a.copy() for a in arrays]


@pytest.mark.parametrize("call, name", [
    (lambda w: Q.raycast(w, (math.nan, 0.0), (1.0, 0.0)), "p1"),
    (lambda w: Q.raycast(w, (0.0, 0.0), (math.inf, 0.0)), "p2"),
    (lambda w: Q.raycast_first(w, (0.0, 0.0, 1.0), (1.0, 0.0)), "p1"),
    (lambda w: Q.raycast(w, (0.0, 0.0), (1.0, 0.0), mask=-1), "mask"),
    (lambda w: Q.raycast(w, (0.0, 0.0), (1.0, 0.0), mask=2 ** 64), "mask"),
    (lambda w: Q.query_point(w, (0.0, 0.0), mask=1.5), "mask"),
    (lambda w: Q.query_point(w, (0.0, 0.0), mask=True), "mask"),
    (lambda w: Q.query_point(w, (0.0, 0.0), category="all"), "category"),
    (lambda w: Q.query_point(w, "origin"), "point"),
    (lambda w: Q.query_point(w, (1e9, 0.0)), "point"),
    (lambda w: Q.query_point(w, (10 ** 400, 0.0)), "point"),
    (lambda w: Q.query_aabb(w, (0.0, 0.0), [1, -10 ** 400]), "upper"),
    (lambda w: Q.query_aabb(w, (1.0, 0.0), (0.0, 1.0)), "lower"),
    (lambda w: Q.query_aabb(w, (0.0, math.nan), (1.0, 1.0)), "lower"),
    (lambda w: Q.query_shape(w, "circle", (0.0, 0.0)), "shape"),
    (lambda w: Q.query_shape(w, Circle(1.0), (0.0, math.nan)), "transform"),
    (lambda w: Q.query_shape(w, Circle(1.0), ((0.0, 0.0), math.inf)), "angle"),
    (lambda w: Q.query_shape(w, Circle(1.0), (0.0, 0.0, 0.0, 0.0)), "transform"),
])
def test_bad_input_raises_and_leaves_world_unchanged(call, name):
    w, ground, b, crate, sensor = _small_world()
    w.step(1 / 60)
    b.position = (5.0, 5.0)                  # a stale tree: an accepted query would refresh it
    before = _snapshot(w)
    with pytest.raises(SimulationError, match=name):
        call(w)
    for x, y in zip(before, _snapshot(w)):
        assert np.array_equal(x, y)


def test_queries_find_shapes_added_since_the_last_step():
    """The world's broad phase gives a new shape its tree leaf only at the next step (deferred insertion); a
    query before that step finds it all the same, and so do the step's contacts."""
    w = carom.World()
    ground = w.add_body(kind="static")
    ground.add_shape(box(10.0, 0.5, center=(0.0, -0.5)))
    w.add_body(position=(0.0, 0.5)).add_shape(box(0.5, 0.5), density=1.0)
    w.step(1 / 60)
    assert w.tables.bp._moved_meta[2] == 0
    ball = w.add_body(position=(3.0, 0.2))
    shape = ball.add_shape(Circle(0.25), density=1.0)
    assert w.tables.bp._moved_meta[2] == 1                      # waiting for its leaf
    assert [h.index for h in w.query_aabb((2.9, 0.1), (3.1, 0.3))] == [shape.index]
    assert [h.index for h in w.query_point((3.0, 0.2))] == [shape.index]
    hit = w.raycast_first((3.0, 5.0), (3.0, -5.0))
    assert hit is not None and hit.shape.index == shape.index
    later = w.add_body(position=(-3.0, 0.2)).add_shape(Circle(0.25), density=1.0)
    w.step(1 / 60)
    assert w.tables.bp._moved_meta[2] == 0
    touching = {(c["shape_a"], c["shape_b"]) for c in w.contacts() if c["touching"]}
    assert any(later.index in pair for pair in touching)
