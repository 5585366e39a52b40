"""carom.verlet: the exact vertex/edge response, rigid sticks, resting, tumbling, fast boxes, momentum,
ropes and cloth, and rejection of bad input (oracles: shapely, closed forms, conservation laws)."""
import math

import numpy as np
import pytest
import shapely
from hypothesis import given, settings, strategies as st

from carom import verlet
from carom.errors import GeometryError, SimulationError
from carom.scenes.verlet_scenes import jelly, rope_cloth, verlet_boxes

DT = 1.0 / 60.0
coord = st.floats(-10.0, 10.0, allow_nan=False)


def _angle(body):
    p = body.positions
    d = p[1] - p[0]
    return math.degrees(math.atan2(d[1], d[0]))


def _momentum(vw):
    n = vw.particle_count
    m = vw.masses
    free = np.isfinite(m)
    return (m[free, None] * (vw._pos[:n] - vw._prev[:n])[free]).sum(axis=0)


# ---------------------------------------------------------------- the response formula
@settings(max_examples=150, deadline=None, derandomize=True)
@given(coord, coord, coord, coord, coord, coord, coord, coord)
def test_response_moves_edge_point_minus_half_and_vertex_plus_half(x1, y1, x2, y2, vx, vy, dx, dy):
    e1, e2, v, d = map(np.array, ([x1, y1], [x2, y2], [vx, vy], [dx, dy]))
    if np.hypot(*(e2 - e1)) < 1e-2:
        return
    line = shapely.LineString([e1, e2])
    # oracle for t: shapely's projection of V onto the segment (clamped by construction)
    t = line.project(shapely.Point(v)) / line.length
    v2, a2, b2 = verlet.edge_vertex_response(v, e1, e2, d)
    c_before = (1 - t) * e1 + t * e2
    c_after = (1 - t) * a2 + t * b2
    scale = 1e-9 * (1 + np.abs(d).max()) * (1 + np.abs(e1).max() + np.abs(e2).max())
    np.testing.assert_allclose(c_after - c_before, -d / 2, atol=scale)
    np.testing.assert_allclose(v2 - v, d / 2, atol=1e-12)
    # the edge ends move along D only, in the ratio (1 - t) : t
    lam = 1 / (t * t + (1 - t) ** 2)
    np.testing.assert_allclose(a2 - e1, -d * (1 - t) * lam / 2, atol=scale)
    np.testing.assert_allclose(b2 - e2, -d * t * lam / 2, atol=scale)


def test_response_on_a_sloped_edge_uses_the_true_projection():
    # edge at 45 degrees: the seed's one-coordinate t (from x alone) would give 0.25, the true one 0.5
    e1, e2 = np.array([0.0, 0.0]), np.array([2.0, 2.0])
    v = np.array([0.5, 1.5])          # projects onto the middle of the edge
    d = np.array([-0.1, 0.1])
    v2, a2, b2 = verlet.edge_vertex_response(v, e1, e2, d)
    np.testing.assert_allclose(a2, e1 - d / 2, atol=1e-15)  # t = 1/2: lambda = 2, both ends move D/2
    np.testing.assert_allclose(b2, e2 - d / 2, atol=1e-15)
    np.testing.assert_allclose(v2, v + d / 2, atol=1e-15)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(coord, coord, coord, coord, coord, coord, st.floats(-1, 1), st.floats(-1, 1),
       st.floats(0.1, 10), st.floats(0.1, 10), st.floats(0.1, 10))
def test_mass_split_response_removes_overlap_and_conserves_momentum(x1, y1, x2, y2, vx, vy, dx, dy,
                                                                    mv, m1, m2):
    e1, e2, v, d = map(np.array, ([x1, y1], [x2, y2], [vx, vy], [dx, dy]))
    if np.hypot(*(e2 - e1)) < 1e-2:
        return
    line = shapely.LineString([e1, e2])
    t = line.project(shapely.Point(v)) / line.length
    v2, a2, b2 = verlet.edge_vertex_response(v, e1, e2, d, inv_masses=(1 / mv, 1 / m1, 1 / m2))
    gap = (v2 - ((1 - t) * a2 + t * b2)) - (v - ((1 - t) * e1 + t * e2))
    np.testing.assert_allclose(gap, d, atol=1e-9)
    np.testing.assert_allclose(mv * (v2 - v) + m1 * (a2 - e1) + m2 * (b2 - e2), 0.0, atol=1e-9)


# ---------------------------------------------------------------- rigid boxes
def test_rigid_box_edges_stay_within_one_percent():
    vw = verlet.World()
    vw.add_box(center=(0, -0.5), width=20, height=1, static=True)
    boxes = [vw.add_box(center=(0.3 * k - 1, 1.0 + 1.3 * k), width=1, height=0.7, angle=0.4 * k, mass=1 + k)
             for k in range(6)]
    worst = 0.0
    for _ in range(400):
        vw.step(DT)
        worst = max(worst, vw.edge_strain().max())
    assert worst < 0.01
    assert vw.contact_count > 0
    assert max(np.abs(b.velocity).max() for b in boxes) < 0.5


def test_box_rests_on_ground_not_in_it():
    vw = verlet.World()
    ground = vw.add_box(center=(0, -0.5), width=10, height=1, static=True)
    g0 = ground.positions
    box = vw.add_box(center=(0.2, 3.0), width=1, height=1, angle=0.3)
    for _ in range(300):
        vw.step(DT)
    p = box.positions
    assert -p[:, 1].min() < 0.01                     # deepest penetration below 1% of the size
    assert abs(box.center[1] - 0.5) < 0.01           # resting on a face at its half height
    assert np.abs(box.velocity).max() < 0.05
    assert not shapely.Polygon(p).intersection(shapely.Polygon(ground.positions)).area > 0.01 * 0.01
    assert np.array_equal(ground.positions, g0)      # the static ground never moves


@pytest.mark.parametrize("friction", [0.2, 1.0])
def test_box_on_tilted_ground_rotates_through_the_response(friction):
    slope = math.radians(30)
    vw = verlet.World()
    vw.add_box(center=(0, 0), width=40, height=1, angle=slope, static=True)
    box = vw.add_box(center=(0, 2.5), width=1, height=1, angle=0.0, friction=friction)
    for _ in range(200):
        vw.step(DT)
    # it landed on a corner and turned to lie flat on the slope: no angle is ever set, only vertices move
    a = _angle(box) % 90.0
    assert min(abs(a - 30.0), abs(a - 30.0 + 90.0)) < 1.0
    if friction > math.tan(slope):
        assert np.abs(box.velocity).max() < 0.1      # static friction holds it
    else:
        assert box.velocity[0] < -0.5                # it slides down the slope


@pytest.mark.parametrize("speed", [5.0, 20.0, 45.0, 59.9])   # up to one box size (1 m) per step
@pytest.mark.parametrize("offset", [0.0, 0.3, 0.7])
def test_fast_boxes_do_not_pass_through(speed, offset):
    vw = verlet.World(gravity=(0, 0))
    a = vw.add_box(center=(-4, 0), width=1, height=1, restitution=0.3)
    b = vw.add_box(center=(4.37, offset), width=1, height=1, restitution=0.3)
    a.velocity = (speed, 0)
    b.velocity = (-speed, 0)
    for _ in range(90):
        vw.step(DT)
        assert a.center[0] < b.center[0]
    pa, pb = shapely.Polygon(a.positions), shapely.Polygon(b.positions)
    assert pa.distance(pb) > 0.0                     # separated
    assert b.velocity[0] - a.velocity[0] > 0.0       # and moving apart
    assert vw.edge_strain().max() < 0.01


def test_momentum_conserved_through_collisions_without_gravity():
    rng = np.random.default_rng(3)
    vw = verlet.World(gravity=(0, 0))
    for k in range(14):
        b = vw.add_box(center=rng.uniform(-2.5, 2.5, 2), width=rng.uniform(0.4, 1.0),
                       height=rng.uniform(0.4, 1.0), angle=rng.uniform(0, 3), mass=rng.uniform(0.5, 3),
                       friction=rng.uniform(0, 1), restitution=rng.uniform(0, 1))
        b.velocity = rng.uniform(-6, 6, 2)
    r = vw.add_rope((-6, 4), (-3, 4), segments=6, pin_start=False)
    r.velocity = (1.0, -2.0)
    p0 = _momentum(vw)
    touched = 0
    for _ in range(240):
        vw.step(DT)
        touched += vw.contact_count
        scale = np.abs(p0).max()
        assert np.abs(_momentum(vw) - p0).max() <= 1e-9 * scale
    assert touched > 5


# ---------------------------------------------------------------- ropes, cloth, soft bodies
def test_rope_hangs_within_two_percent_of_rest():
    vw = verlet.World(damping=2.0)   # damped so that it comes to hang still
    rope = vw.add_rope((0, 10), (5, 10), segments=20, pin_start=True)
    for k in range(600):
        vw.step(DT)
        p = rope.positions
        length = np.hypot(*np.diff(p, axis=0).T).sum()
        assert abs(length - 5.0) < 0.05 * 5.0         # the whip at the bottom of the swing stretches it more
        if k > 300:
            assert abs(length - 5.0) < 0.02 * 5.0     # once it hangs
    np.testing.assert_array_equal(p[0], [0, 10])
    assert p[-1, 1] < 5.5 and abs(p[-1, 0]) < 0.1    # it did fall and hang below its pin


def test_cloth_stays_attached():
    vw = verlet.World()
    cloth = vw.add_cloth((0, 10), 5, 4, 20, 16, pinned="top")
    top = cloth.positions[:20].copy()
    for _ in range(300):
        vw.step(DT)
    p = cloth.positions
    np.testing.assert_array_equal(p[:20], top)
    assert np.isfinite(p).all() and p[-1, 1] < 6.5   # hanging below its pins
    assert vw.edge_strain().max() < 0.1


def test_soft_polygon_squashes_and_recovers():
    vw = verlet.World()
    vw.add_box(center=(0, -0.5), width=10, height=1, static=True)
    ang = np.linspace(0, 2 * np.pi, 11)[:-1]
    blob = vw.add_soft_polygon(np.c_[np.cos(ang), 2.0 + np.sin(ang)], stiffness=0.05)
    rest_area = shapely.Polygon(blob.positions).area
    lowest = []
    for _ in range(240):
        vw.step(DT)
        lowest.append(shapely.Polygon(blob.positions).area)
    poly = shapely.Polygon(blob.positions)
    assert poly.is_valid and poly.exterior.is_ccw     # not turned inside out
    assert min(lowest) < 0.995 * rest_area            # it gave under its own weight
    assert blob.positions[:, 1].min() > -0.02


def test_edge_breaks_beyond_its_break_length():
    vw = verlet.World(gravity=(0, -10))
    a = vw.add_particle((0, 0))
    b = vw.add_particle((1, 0), mass=50.0)
    vw.pin(a)
    vw.add_edge(a, b, break_length=1.5)
    assert vw.edge_count == 1
    vw._prev[b] = (1, 2)   # flung down at 120 m/s: 2.2 m long after integration
    vw.step(DT)
    assert vw.edge_count == 0


def test_pin_unpin_and_velocity():
    vw = verlet.World(gravity=(0, 0))
    box = vw.add_box(center=(0, 0), width=1, height=1)
    box.velocity = (3.0, -1.0)
    np.testing.assert_allclose(box.velocity, (3.0, -1.0))
    vw.step(DT)
    np.testing.assert_allclose(box.center, (3 * DT, -DT), atol=1e-12)
    i = int(box.particles[0])
    vw.pin(i, (5.0, 5.0))
    vw.step(DT)
    np.testing.assert_array_equal(vw.positions[i], (5.0, 5.0))
    vw.unpin(i)
    assert not vw.pinned[i]


def test_drawing_views():
    vw = verlet_boxes(count=8)
    for _ in range(5):
        vw.step(DT)
    assert vw.positions.shape == (vw.particle_count, 2)
    assert vw.edges.shape == (vw.edge_count, 2) and vw.edges.max() < vw.particle_count
    assert len(vw.outlines) == len(vw.static_flags) == len(vw.bodies)
    for outline in vw.outlines:
        assert shapely.Polygon(vw.positions[outline]).exterior.is_ccw


@pytest.mark.parametrize("scene", [verlet_boxes, rope_cloth, jelly])
def test_scenes_run_finite(scene):
    vw = scene()
    for _ in range(120):
        vw.step(DT)
    assert np.isfinite(vw.positions).all()


def test_deterministic():
    runs = []
    for _ in range(2):
        vw = verlet_boxes(count=16)
        for _ in range(60):
            vw.step(DT)
        runs.append(vw.positions)
    assert np.array_equal(runs[0], runs[1])


# ---------------------------------------------------------------- bad input
def _snapshot(vw):
    """Everything the world holds: each array's bytes, dtype and shape (capacity included), every other
    attribute's value, the lengths of the handle lists."""
    out = {}
    for name, value in vars(vw).items():
        if isinstance(value, np.ndarray):
            out[name] = (value.dtype.str, value.shape, value.tobytes())
        elif isinstance(value, list):
            out[name] = len(value)
        else:
            out[name] = value
    return out


def _same(a, b):
    return a == b


@pytest.mark.parametrize("call, error", [
    (lambda w: w.add_box(center=(math.nan, 0)), GeometryError),
    (lambda w: w.add_box(width=0.0), GeometryError),
    (lambda w: w.add_box(height=-1.0), GeometryError),
    (lambda w: w.add_box(mass=0.0), SimulationError),
    (lambda w: w.add_box(mass=-2.0), SimulationError),
    (lambda w: w.add_box(friction=-0.1), SimulationError),
    (lambda w: w.add_box(restitution=1.5), SimulationError),
    (lambda w: w.add_polygon([(0, 0), (1, 0)]), GeometryError),
    (lambda w: w.add_polygon([(0, 0), (2, 0), (1, 0.5), (2, 2), (0, 2)]), GeometryError),  # reflex
    (lambda w: w.add_polygon([(0, 0), (1, 0), (2, 0)]), GeometryError),                    # collinear
    (lambda w: w.add_polygon([(0, 0), (1, 0), (1, 0), (0, 1)]), GeometryError),            # duplicate
    (lambda w: w.add_polygon([(0, 0), (2, 2), (2, 0), (0, 2)]), GeometryError),            # bow tie
    (lambda w: w.add_soft_polygon([(0, 0), (1, 0), (0, 1)], stiffness=0.0), SimulationError),
    (lambda w: w.add_soft_polygon([(0, 0), (1, 0), (0, 1)], stiffness=1.5), SimulationError),
    (lambda w: w.add_rope((0, 0), (0, 0)), GeometryError),
    (lambda w: w.add_rope((0, 0), (1, 0), segments=0), GeometryError),
    (lambda w: w.add_cloth((0, 0), 1, 1, 1, 5), GeometryError),
    (lambda w: w.add_cloth((0, 0), 1, 1, 3, 3, pinned="left"), SimulationError),
    (lambda w: w.add_box(center=(True, 0)), GeometryError),
    (lambda w: w.add_box(center=("1", "2")), GeometryError),
    (lambda w: w.add_box(width=True), GeometryError),
    (lambda w: w.add_box(width="1"), GeometryError),
    (lambda w: w.add_box(width=1e300), GeometryError),                                    # beyond the world
    (lambda w: w.add_box(angle=math.inf), GeometryError),
    (lambda w: w.add_box(mass=1e-320), SimulationError),                                  # inverse mass inf
    (lambda w: w.add_box(mass=10 ** 400), SimulationError),                               # beyond the floats
    (lambda w: w.add_box(static="yes"), SimulationError),
    (lambda w: w.add_box(friction=math.nan), SimulationError),
    (lambda w: w.add_polygon([(0, 0), (1, 0), (0, True)]), GeometryError),
    (lambda w: w.add_polygon(np.array([[0, 0], [1, 0], [0, 1]], dtype=bool)), GeometryError),
    (lambda w: w.add_polygon("abc"), GeometryError),
    (lambda w: w.add_polygon([(0, 0), (1, 0), (0, 1)], static=1), SimulationError),
    (lambda w: w.add_polygon(_circle(10_000, 1e4, bump=5_000)), GeometryError),         # one reflex vertex
    (lambda w: w.add_soft_polygon([(0, 0), (1, 0), (0, 1)], mass=-1.0), SimulationError),
    (lambda w: w.add_soft_polygon([(0, 0), (1, 0), (0, 1)], edge_stiffness=0.0), SimulationError),
    (lambda w: w.add_particle((0, math.nan)), GeometryError),
    (lambda w: w.add_particle((0, 0), mass=0.0), SimulationError),
    (lambda w: w.add_particle((0, 0), mass=False), SimulationError),
    (lambda w: w.add_rope((0, 0), (1, 0), segments=10 ** 9), GeometryError),
    (lambda w: w.add_rope((0, 0), (1, 0), segments=True), GeometryError),
    (lambda w: w.add_rope((0, 0), (1, 0), segments=4.0), GeometryError),
    (lambda w: w.add_rope((0, 0), (1, 0), pin_start=1), SimulationError),
    (lambda w: w.add_rope((0, 0), (1, 0), break_length=-1.0), SimulationError),
    (lambda w: w.add_cloth((0, 0), 1, 1, 10 ** 4, 10 ** 4), GeometryError),             # 10^8 particles
    (lambda w: w.add_cloth((0, 0), 1e-6, 1, 3, 3), GeometryError),                      # sticks too short
    (lambda w: w.add_cloth((0, 0), 1, 1, 3, 3, pinned=["top"]), SimulationError),
    (lambda w: w.add_cloth((0, 0), 1, 1, 3, 3, mass=math.inf), SimulationError),
    (lambda w: w.add_edge(0, 0), SimulationError),
    (lambda w: w.add_edge(0, True), SimulationError),
    (lambda w: w.add_edge(0, 1, break_length=0.0), SimulationError),
    (lambda w: w.add_edge(0, 10 ** 6), SimulationError),
    (lambda w: w.add_edge(0, 1, stiffness=math.nan), SimulationError),
    (lambda w: w.pin(-1), SimulationError),
    (lambda w: w.pin(0, (math.inf, 0)), SimulationError),
    (lambda w: w.unpin(99999), SimulationError),
    (lambda w: w.step(0.0), SimulationError),
    (lambda w: w.step(-DT), SimulationError),
    (lambda w: w.step(math.nan), SimulationError),
    (lambda w: w.step(1e-300), SimulationError),       # the next step's dt / dt_prev would overflow
    (lambda w: w.step(10.0), SimulationError),
    (lambda w: w.step(True), SimulationError),
    (lambda w: w.step("0.01"), SimulationError),
    (lambda w: setattr(w.bodies[0], "velocity", (1.0, "2")), SimulationError),
    (lambda w: setattr(w.bodies[0], "velocity", (math.nan, 0)), SimulationError),
])
def test_bad_input_raises_and_leaves_world_unchanged(call, error):
    vw = verlet.World()
    vw.add_box(center=(0, 1), width=1, height=1)
    vw.step(DT)
    before = _snapshot(vw)
    with pytest.raises(error) as info:
        call(vw)
    assert str(info.value) and len(str(info.value)) < 600      # (a 10,000-point outline is not printed whole)
    assert _same(before, _snapshot(vw))


BAD_SETTINGS = [
    ("gravity", (0, math.nan)), ("gravity", (math.inf, 0)), ("gravity", (0, -1e8)), ("gravity", "down"),
    ("gravity", (True, False)), ("gravity", ("0", "-10")), ("gravity", (0, 0, -10)), ("gravity", None),
    ("iterations", 0), ("iterations", -3), ("iterations", 10 ** 30), ("iterations", 2.5), ("iterations", 8.0),
    ("iterations", True), ("iterations", "8"), ("iterations", None),
    ("damping", -1.0), ("damping", math.nan), ("damping", math.inf), ("damping", 1e7), ("damping", True),
    ("damping", "0.1"), ("damping", 10 ** 400), ("damping", None),
    ("shape_sweeps", -1), ("shape_sweeps", 10 ** 6), ("shape_sweeps", 1.5), ("shape_sweeps", False),
]


@pytest.mark.parametrize("name, value", BAD_SETTINGS)
def test_bad_setting_raises_naming_it_and_leaves_world_unchanged(name, value):
    vw = verlet_boxes(count=3)
    vw.step(DT)
    before = _snapshot(vw)
    old = getattr(vw, name)
    with pytest.raises(SimulationError, match=name):
        setattr(vw, name, value)
    assert _same(before, _snapshot(vw))
    assert np.array_equal(getattr(vw, name), old)


@pytest.mark.parametrize("name, value", [s for s in BAD_SETTINGS if s[0] != "shape_sweeps"])
def test_bad_world_arguments(name, value):
    with pytest.raises(SimulationError, match=name):
        verlet.World(**{name: value})


def test_settings_are_validated_properties():
    vw = verlet.World(gravity=(0, -9.81), iterations=np.int64(6), damping=0.5)
    assert vw.iterations == 6 and type(vw.iterations) is int and vw.damping == 0.5
    assert vw.shape_sweeps == 3                    # follows iterations until set
    vw.iterations = 10
    assert vw.shape_sweeps == 5
    vw.shape_sweeps = 0
    vw.iterations = 2
    assert vw.shape_sweeps == 0
    g = vw.gravity
    g[1] = math.nan                                # a copy: the world's gravity is not reached this way
    assert vw.gravity[1] == -9.81
    vw.gravity = np.array([1.0, -2.0])
    vw.damping = np.float32(0.25)
    box = vw.add_box(center=(0, 0))
    vw.step(DT)
    assert np.isfinite(box.positions).all() and box.center[0] > 0.0


# ---------------------------------------------------------------- large bodies: O(n) braces, all or nothing
def _circle(n, radius, center=(0.0, 0.0), bump=None):
    a = np.linspace(0.0, 2.0 * np.pi, n + 1)[:-1]
    p = np.c_[center[0] + radius * np.cos(a), center[1] + radius * np.sin(a)]
    if bump is not None:
        p[bump] *= 0.5                             # pulled in: a reflex vertex
    return p


def _area(p):
    return 0.5 * float(np.sum(p[:, 0] * np.roll(p[:, 1], -1) - np.roll(p[:, 0], -1) * p[:, 1]))


def test_polygon_of_ten_thousand_vertices_has_linear_braces():
    n = 10_000
    vw = verlet.World()
    body = vw.add_polygon(_circle(n, 1e4))          # (a big radius keeps its vertices strictly convex)
    assert vw.particle_count == n
    assert n < vw.edge_count <= 9 * n               # was n (n - 1) / 2: 50 million
    e = np.sort(body.edges, axis=1)
    assert len(np.unique(e, axis=0)) == len(e)      # each pair once
    assert np.all(np.abs(vw.rest_lengths[n:] - np.hypot(*(vw.positions[e[n:, 1]] - vw.positions[e[n:, 0]]).T))
                  <= 1e-9)


@pytest.mark.parametrize("n", list(range(3, 31)) + [47, 101, 200])
def test_braces_make_the_outline_infinitesimally_rigid(n):
    """The rigidity matrix (one row per stick: its direction at both ends) of the braced outline has rank
    2n - 3, the most a 2D framework of n points can have: only the three rigid motions leave every stick's
    length unchanged to first order. Up to 12 vertices the braces are all non-adjacent pairs, as before."""
    vw = verlet.World()
    body = vw.add_polygon(_circle(n, 1.0 + n / 20.0))
    e = body.edges
    p = vw.positions
    rows = np.zeros((len(e), 2 * n))
    d = p[e[:, 1]] - p[e[:, 0]]
    k = np.arange(len(e))
    rows[k, 2 * e[:, 0]], rows[k, 2 * e[:, 0] + 1] = -d[:, 0], -d[:, 1]
    rows[k, 2 * e[:, 1]], rows[k, 2 * e[:, 1] + 1] = d[:, 0], d[:, 1]
    assert np.linalg.matrix_rank(rows) == 2 * n - 3
    pairs = {tuple(sorted(x)) for x in e.tolist()}
    assert len(pairs) == len(e)
    if n <= 12:
        assert len(e) == n + n * (n - 3) // 2
    else:
        assert len(e) <= 9 * n


@pytest.mark.parametrize("n, radius", [(12, 1.0), (200, 3.0)])
def test_dropped_polygon_keeps_its_shape(n, radius):
    """A 12-gon (all pairs braced) and a 200-gon (O(n) braces) fall on the ground, a heavy box lands on top:
    every stick and the area stay within 3 % of rest throughout, and the body comes to rest on the ground."""
    vw = verlet.World()
    vw.add_box(center=(0, -0.5), width=60, height=1, static=True)
    body = vw.add_polygon(_circle(n, radius, center=(0.0, radius + 1.0)) + [0.0, 0.0], mass=2.0)
    vw.add_box(center=(0.3, 2 * radius + 3.0), width=1, height=1, mass=5.0)
    idx = body.edge_indices
    area0 = _area(body.positions)
    rest = vw._rest[idx].copy()
    worst_strain = worst_area = 0.0
    for _ in range(300):
        vw.step(DT)
        p = vw._pos
        length = np.hypot(*(p[vw._ej[idx]] - p[vw._ei[idx]]).T)
        worst_strain = max(worst_strain, float(np.max(np.abs(length / rest - 1.0))))
        worst_area = max(worst_area, abs(_area(body.positions) / area0 - 1.0))
    assert worst_strain < 0.03, worst_strain
    assert worst_area < 0.03, worst_area
    assert body.positions[:, 1].min() > -0.02
    assert abs(body.center[1] - radius) < 0.03 * radius


def test_failed_add_polygon_adds_nothing(monkeypatch):
    """All or nothing: a polygon refused by its checks, or whose storage cannot be allocated halfway through,
    leaves the world byte-for-byte as it was (no orphan particles)."""
    from carom.verlet import world as W
    vw = verlet_boxes(count=3)
    vw.step(DT)
    before = _snapshot(vw)
    with pytest.raises(SimulationError, match="mass"):
        vw.add_polygon(_circle(10_000, 1e4), mass=-1.0)
    assert _same(before, _snapshot(vw))
    calls = []
    grow = W._grow

    def failing_grow(arr, need):
        calls.append(need)
        if len(calls) == 8:                        # after the particle arrays, among the edges'
            raise MemoryError("no room")
        return grow(arr, need)

    monkeypatch.setattr(W, "_grow", failing_grow)
    with pytest.raises(MemoryError):
        vw.add_polygon(_circle(5_000, 1e4))
    assert _same(before, _snapshot(vw))
    monkeypatch.setattr(W, "_grow", grow)
    body = vw.add_polygon(_circle(5_000, 1e4, center=(0.0, 2e4)))
    assert vw.particle_count == before["_np"] + 5_000 and len(body) == 5_000


def test_clockwise_outline_is_accepted_as_counter_clockwise():
    vw = verlet.World()
    body = vw.add_polygon([(0, 0), (0, 1), (1, 1), (1, 0)])
    assert shapely.Polygon(body.positions).exterior.is_ccw
    assert len(body.edges) == 6   # 4 boundary edges + 2 braces
