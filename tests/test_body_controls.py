"""Body controls and bulk writes: fixed rotation, mass data set by the user, user data, per-body sleep, and the
world's bulk writes (set_state, apply_impulses, apply_forces, add_bodies, add_shapes) against the same writes done one body
at a time."""
import copy
import math
import pickle

import numpy as np
import pytest

import carom
from carom.constants import FLOAT32_LIMIT, WORLD_LIMIT
from carom.errors import CaromError, GeometryError, SimulationError, SnapshotError, StaleHandleError
from carom.geometry import Circle, box
from carom.rigid.mass import body_mass

DT = 1.0 / 60.0


def state(w):
    return w.snapshot().data


def ground_world(gravity=(0.0, -10.0)):
    w = carom.World(gravity=gravity)
    w.static_body.add_shape(box(20, 1, center=(0, -1)))
    return w


def row_of_boxes(w, n=6, y=0.5, spacing=2.0):
    out = []
    for i in range(n):
        b = w.add_body(position=(spacing * i - 5.0, y), angle=0.1 * i)
        b.add_shape(box(0.5, 0.4), density=1.0 + 0.25 * i)
        out.append(b)
    return out


# --- fixed rotation ------------------------------------------------------------------------------------------

def _ball_at_box(ball_y, ball_velocity, **target_settings):
    """A ball fired from (−3, ball_y) at a 1 m box at the origin in empty space, the box's attributes set from
    ``target_settings``: (world, box, ball)."""
    w = carom.World(gravity=(0.0, 0.0))
    target = w.add_body(position=(0.0, 0.0))
    target.add_shape(box(0.5, 0.5))
    for name, value in target_settings.items():
        setattr(target, name, value)
    ball = w.add_body(position=(-3.0, ball_y), velocity=ball_velocity)
    ball.add_shape(Circle(0.2), density=4.0)
    return w, target, ball


def _hit_off_centre(fixed):
    """A ball flying at a box in empty space, 0.4 m off the box's centre line."""
    w, target, ball = _ball_at_box(0.4, (10.0, 0.0), fixed_rotation=fixed)
    for _ in range(60):
        w.step(DT)
    return target, ball


def test_fixed_rotation_box_hit_off_centre_does_not_turn_while_a_free_one_does():
    free, ball = _hit_off_centre(False)
    assert ball.velocity[0] < 10.0 and free.velocity[0] > 0.5      # (the hit happened)
    assert abs(free.angular_velocity) > 0.1 and abs(free.angle) > 0.05
    fixed, ball = _hit_off_centre(True)
    assert fixed.velocity[0] > 0.5
    assert fixed.angle == 0.0 and fixed.angular_velocity == 0.0


def test_fixed_rotation_impulse_torque_and_setters():
    w = carom.World(gravity=(0.0, 0.0))
    b = w.add_body()
    b.add_shape(box(0.5, 0.25), density=2.0)
    inertia = b.inertia
    b.angular_velocity = 3.0
    b.fixed_rotation = True
    assert b.fixed_rotation and b.angular_velocity == 0.0       # zeroed when set
    b.apply_impulse((0.0, 1.0), point=(0.5, 0.0))
    b.apply_torque(10.0)
    b.angular_velocity = 2.0                                    # kept at 0, as Box2D does
    w.step(DT)
    assert b.angular_velocity == 0.0 and b.angle == 0.0
    assert b.velocity[1] == pytest.approx(1.0 / b.mass)
    assert b.inertia == inertia                                 # the body's own inertia still reads
    # a shape added to a fixed-rotation body keeps it fixed; turning it off gives the shapes' inertia back
    b.add_shape(Circle(0.3, (1.0, 0.0)))
    assert b.fixed_rotation and w.tables.inv_inertia[b.index] == 0.0
    b.fixed_rotation = False
    expected = 1.0 / body_mass(w.tables, b.index)[3]
    assert w.tables.inv_inertia[b.index] == expected
    b.apply_impulse((0.0, 1.0), point=tuple(b.world_center + (1.0, 0.0)))
    assert b.angular_velocity == pytest.approx(expected, rel=1e-12)
    with pytest.raises(CaromError):
        b.fixed_rotation = 1
    with pytest.raises(CaromError):
        b.fixed_rotation = "yes"


# --- mass data ---------------------------------------------------------------------------------------------

def test_overridden_mass_gives_dv_j_over_m_and_inertia_dw_r_cross_j_over_i():
    w = carom.World(gravity=(0.0, 0.0))
    b = w.add_body(position=(1.0, 2.0))
    b.add_shape(box(0.5, 0.5), density=1.0)                     # shapes say 1 kg, I = 1/6
    b.mass = 2.0
    b.inertia = 0.5
    assert b.mass == 2.0 and b.inertia == 0.5
    b.apply_impulse((3.0, 4.0))
    np.testing.assert_array_equal(b.velocity, [1.5, 2.0])       # J / m
    r, j = np.array([0.3, -0.2]), np.array([1.0, 2.0])
    b.apply_impulse(tuple(j), point=tuple(b.world_center + r))
    assert b.angular_velocity == pytest.approx((r[0] * j[1] - r[1] * j[0]) / 0.5, rel=1e-15)
    # kept through shapes added and removed, until reset_mass
    s = b.add_shape(Circle(0.5, (2.0, 0.0)), density=3.0)
    w.remove(s)
    b.add_shape(Circle(0.25), density=3.0)
    assert b.mass == 2.0 and b.inertia == 0.5
    b.reset_mass()
    assert b.mass == pytest.approx(1.0 + 3.0 * math.pi / 16) and b.inertia != 0.5


def test_local_center_moves_the_centre_and_keeps_the_origin():
    w = carom.World(gravity=(0.0, 0.0))
    b = w.add_body(position=(1.0, 2.0), angle=0.5)
    b.add_shape(box(1.0, 0.5))
    origin = b.position
    b.local_center = (0.5, 0.25)
    np.testing.assert_allclose(b.position, origin, atol=1e-14)
    c, s = math.cos(0.5), math.sin(0.5)
    np.testing.assert_allclose(b.world_center, origin + (c * 0.5 - s * 0.25, s * 0.5 + c * 0.25), atol=1e-14)
    np.testing.assert_array_equal(b.local_center, [0.5, 0.25])
    b.add_shape(Circle(0.5, (3.0, 0.0)))                        # the set centre stays
    np.testing.assert_array_equal(b.local_center, [0.5, 0.25])
    # an impulse at the set centre does not turn the body
    b.apply_impulse((0.0, 5.0), point=tuple(b.world_center))
    assert b.angular_velocity == 0.0
    b.reset_mass()
    np.testing.assert_allclose(b.position, origin, atol=1e-14)
    assert b.local_center[0] > 0.5


@pytest.mark.parametrize("name, bad", [("mass", 0.0), ("mass", -1.0), ("mass", float("nan")),
                                       ("mass", float("inf")), ("mass", 1e40), ("mass", True), ("mass", "2"),
                                       ("inertia", 0.0), ("inertia", float("nan")), ("inertia", 1e-40),
                                       ("inertia", False), ("local_center", (float("nan"), 0.0)),
                                       ("local_center", (1e12, 0.0)), ("local_center", "ab")])
def test_bad_mass_data_is_refused_and_changes_nothing(name, bad):
    w = ground_world()
    b, _ = row_of_boxes(w, 2)
    w.step(DT)
    before = state(w)
    with pytest.raises(CaromError):
        setattr(b, name, bad)
    assert state(w) == before


@pytest.mark.parametrize("kind", ["static", "kinematic"])
def test_mass_data_only_on_dynamic_bodies(kind):
    w = carom.World()
    b = w.add_body(kind=kind)
    b.add_shape(box(1, 1))
    before = state(w)
    for name, value in (("mass", 2.0), ("inertia", 1.0), ("local_center", (0.1, 0.0))):
        with pytest.raises(CaromError):
            setattr(b, name, value)
    assert state(w) == before


# --- user data ---------------------------------------------------------------------------------------------

def test_user_data_through_pickle_and_copy_not_snapshots():
    w = ground_world()
    a, b = row_of_boxes(w, 2)
    assert a.data is None and a.shapes[0].data is None
    a.data = {"name": "a", "hp": [3]}
    b.shapes[0].data = ("tag", 7)
    b.data = b                                   # data that refers back to the world
    w.step(DT)
    for w2 in (pickle.loads(pickle.dumps(w)), copy.deepcopy(w)):
        a2, b2 = w2.bodies
        assert a2.data == {"name": "a", "hp": [3]} and a2.data is not a.data
        assert b2.shapes[0].data == ("tag", 7)
        assert b2.data == b2 and b2.data.world is w2
        assert state(w2) == state(w)
    w3 = copy.copy(w)
    assert w3.bodies[0].data is a.data
    w4 = carom.World.restore(w.snapshot())       # snapshots are data only: no .data
    assert all(x.data is None for x in w4.bodies) and w4.bodies[1].shapes[0].data is None
    # a removed body's data goes with it, and its slot does not hand it on
    w.remove(a)
    c = w.add_body()
    assert c.index == a.index and c.data is None
    b.data = None
    assert b.data is None


def test_a_damaged_user_data_pickle_is_refused():
    w = ground_world()
    a, = row_of_boxes(w, 1)
    with pytest.raises(SnapshotError):
        carom.World._set_user_data(w, ({99: "x"}, {}))
    with pytest.raises(SnapshotError):
        carom.World._set_user_data(w, ({a.index: "x"}, {"0": 1}))
    with pytest.raises(SnapshotError):
        carom.World._set_user_data(w, ["not", "dicts"])


# --- sleep -------------------------------------------------------------------------------------------------

def test_per_body_sleep_flag_keeps_a_resting_box_awake_while_its_neighbour_sleeps():
    w = ground_world()
    a, b = row_of_boxes(w, 2, spacing=4.0)
    a.sleep_enabled = False
    for _ in range(180):
        w.step(DT)
    assert b.sleeping and not a.sleeping
    assert np.hypot(*a.velocity) < 0.05                       # (at rest, and still not asleep)
    assert not a.sleep_enabled and b.sleep_enabled
    a.sleep_enabled = True
    for _ in range(60):
        w.step(DT)
    assert a.sleeping


def test_a_body_that_may_not_sleep_keeps_its_island_awake():
    w = ground_world()
    bottom = w.add_body(position=(0.0, 0.5))
    bottom.add_shape(box(0.5, 0.5))
    top = w.add_body(position=(0.0, 1.5))
    top.add_shape(box(0.5, 0.5))
    top.sleep_enabled = False
    for _ in range(240):
        w.step(DT)
    assert not bottom.sleeping and not top.sleeping


def test_turning_world_sleep_off_wakes_every_body():
    w = ground_world()
    row_of_boxes(w, 4, spacing=3.0)
    for _ in range(180):
        w.step(DT)
    assert w.awake_count == 0
    w.sleep_enabled = False
    assert w.awake_count == 4 and not any(b.sleeping for b in w.bodies)


# --- set_state ---------------------------------------------------------------------------------------------

def _sleepy_world():
    """Boxes resting on the ground, asleep, and two dynamic ones stacked (one island)."""
    w = ground_world()
    row_of_boxes(w, 6)
    top = w.add_body(position=(-5.0, 1.3))
    top.add_shape(box(0.4, 0.4))
    for _ in range(150):
        w.step(DT)
    return w


@pytest.mark.parametrize("which", ["all", "angles", "positions", "velocities"])
def test_set_state_equals_the_body_setters_one_by_one(which):
    w1, w2 = _sleepy_world(), _sleepy_world()
    assert state(w1) == state(w2) and w1.awake_count < 7
    rows = np.array([3, 1, 5, 7])
    rng = np.random.default_rng(1)
    p = rng.uniform(-4, 4, (4, 2)) + (0, 3)
    a = rng.uniform(-3, 3, 4)
    v = rng.normal(size=(4, 2))
    av = rng.normal(size=4)
    kw = {"all": dict(positions=p, angles=a, velocities=v, angular_velocities=av), "angles": dict(angles=a),
          "positions": dict(positions=p), "velocities": dict(velocities=v, angular_velocities=av)}[which]
    w1.set_state(rows, **kw)
    for k, i in enumerate(rows.tolist()):
        b = w2.body_handle(i)
        if "angles" in kw:
            b.angle = a[k]
        if "positions" in kw:
            b.position = p[k]
        if "velocities" in kw:
            b.velocity = v[k]
        if "angular_velocities" in kw:
            b.angular_velocity = av[k]
    assert state(w1) == state(w2)
    for _ in range(5):
        w1.step(DT)
        w2.step(DT)
    assert state(w1) == state(w2)
    assert w1.awake_count > 0


def test_set_state_takes_handles_and_respects_fixed_rotation():
    w = carom.World(gravity=(0.0, 0.0))
    a, b = row_of_boxes(w, 2)
    b.fixed_rotation = True
    w.set_state([a, b], angular_velocities=[1.0, 2.0], positions=[(0, 0), (3, 3)])
    assert a.angular_velocity == 1.0 and b.angular_velocity == 0.0
    np.testing.assert_allclose(b.position, [3, 3], atol=1e-15)


# --- apply_impulses / apply_forces -------------------------------------------------------------------------

@pytest.mark.parametrize("at_points", [False, True])
def test_bulk_impulses_and_forces_equal_one_by_one(at_points):
    w1, w2 = _sleepy_world(), _sleepy_world()
    rows = np.array([2, 4, 2, 0, 6])                 # body 2 twice; body 0 is the static body
    rng = np.random.default_rng(2)
    j = rng.normal(size=(5, 2))
    f = rng.normal(size=(5, 2)) * 30
    pts = rng.uniform(-5, 5, (5, 2)) if at_points else None
    w1.apply_impulses(rows, j, pts)
    w1.apply_forces(list(rows), f, pts)
    for k, i in enumerate(rows.tolist()):
        w2.body_handle(i).apply_impulse(j[k], None if pts is None else pts[k])
    for k, i in enumerate(rows.tolist()):
        w2.body_handle(i).apply_force(f[k], None if pts is None else pts[k])
    assert state(w1) == state(w2)
    for _ in range(5):
        w1.step(DT)
        w2.step(DT)
    assert state(w1) == state(w2)


def test_bulk_impulse_closed_form_with_overridden_mass():
    w = carom.World(gravity=(0.0, 0.0))
    a, b = row_of_boxes(w, 2)
    a.mass, a.inertia = 4.0, 2.0
    w.set_state([a, b], angular_velocities=[0.0, 0.0])
    r = np.array([0.25, 0.5])
    w.apply_impulses([a, a], [(2.0, 0.0), (0.0, 2.0)], [a.world_center + r, a.world_center])
    np.testing.assert_array_equal(a.velocity, [0.5, 0.5])
    assert a.angular_velocity == pytest.approx((r[0] * 0.0 - r[1] * 2.0) / 2.0, rel=1e-15)


# --- add_bodies --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("reuse", [False, True])
def test_add_bodies_equals_add_body_and_add_shape_in_a_loop(reuse):
    def base():
        w = ground_world()
        row_of_boxes(w, 3)
        if reuse:                                    # free body and shape slots to be taken first
            for b in w.bodies[:2]:
                w.remove(b)
        w.step(DT)
        return w

    n = 40
    rng = np.random.default_rng(3)
    p = np.stack([rng.uniform(-8, 8, n), rng.uniform(2, 12, n)], axis=1)
    a = rng.uniform(-3, 3, n)
    v = rng.normal(size=(n, 2))
    av = rng.normal(size=n)
    shape = box(0.3, 0.2, center=(0.1, 0.05))
    material = dict(density=2.5, friction=0.4, restitution=0.2, category=2, group=-1)
    w1, w2 = base(), base()
    handles = w1.add_bodies(p, a, v, av, shape=shape, linear_damping=0.1, **material)
    loop = []
    for k in range(n):
        b = w2.add_body(position=p[k], angle=a[k], velocity=v[k], angular_velocity=av[k], linear_damping=0.1)
        b.add_shape(shape, **material)
        loop.append(b)
    assert [h.index for h in handles] == [h.index for h in loop]
    assert state(w1) == state(w2)
    for _ in range(20):
        w1.step(DT)
        w2.step(DT)
    assert state(w1) == state(w2)
    assert handles[0].shapes[0].friction == 0.4


@pytest.mark.parametrize("reuse", [False, True])
def test_add_bodies_with_a_shape_and_settings_per_body_equals_the_loop(reuse):
    # a shape per body (the same object for several, as a ragdoll's limbs), and a group, damping, gravity scale
    # and sleep threshold per body; some bodies land on the sleeping boxes (they wake), the rest far from them
    def base():
        w = _sleepy_world()
        if reuse:
            for b in w.bodies[1:3]:
                w.remove(b)
        assert w.awake_count < w.body_count
        return w

    n = 30
    rng = np.random.default_rng(5)
    near = rng.random(n) < 0.3
    p = np.stack([np.where(near, rng.uniform(-5.0, 5.0, n), rng.uniform(30.0, 60.0, n)),
                  np.where(near, rng.uniform(0.9, 1.3, n), rng.uniform(5.0, 9.0, n))], axis=1)
    a = rng.uniform(-3, 3, n)
    kinds = [box(0.3, 0.2, center=(0.1, 0.05)), carom.geometry.Capsule((0.0, -0.2), (0.0, 0.25), 0.08),
             Circle(0.15)]
    shapes = [kinds[k] for k in rng.integers(0, 3, n)]
    group = rng.integers(-3, 4, n)
    damping = rng.uniform(0.0, 0.5, n)
    scale = rng.uniform(-1.0, 2.0, n).tolist()
    threshold = rng.uniform(0.0, 0.3, n)
    w1, w2 = base(), base()
    slept = w1.tables.asleep[:w1.tables.n_bodies].copy()
    handles = w1.add_bodies(p, a, shape=shapes, group=group, linear_damping=damping, angular_damping=0.2,
                            gravity_scale=scale, sleep_threshold=threshold, density=1.5, friction=0.3)
    loop = []
    for k in range(n):
        b = w2.add_body(position=p[k], angle=a[k], linear_damping=damping[k], angular_damping=0.2,
                        gravity_scale=scale[k])
        b.sleep_threshold = threshold[k]
        b.add_shape(shapes[k], group=int(group[k]), density=1.5, friction=0.3)
        loop.append(b)
    assert [h.index for h in handles] == [h.index for h in loop]
    assert state(w1) == state(w2)
    np.testing.assert_array_equal(w1.tables.asleep, w2.tables.asleep)
    after = w1.tables.asleep[:slept.size]
    assert (slept & ~after).any() and (slept & after).any()       # some sleeping boxes woke, some slept on
    for _ in range(20):
        w1.step(DT)
        w2.step(DT)
    assert state(w1) == state(w2)
    assert [h.shapes[0].group for h in handles] == group.tolist()


# --- add_shapes --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("reuse", [False, True])
def test_add_shapes_equals_add_shape_body_after_body(reuse):
    """``World.add_shapes`` against ``Body.add_shape`` in turn on a twin world: a shape per body (the same object
    for several), a group per body, on dynamic, kinematic and static bodies (some asleep, some shapes landing by
    sleeping boxes, which wake), with free shape slots taken first: the same slots, masses, proxies, woken
    bodies and motion."""
    def base():
        w = _sleepy_world()
        if reuse:
            for b in w.bodies[1:3]:
                w.remove(b)
        w.add_body(position=(20.0, 3.0), kind="kinematic")
        w.add_body(position=(-20.0, 3.0), kind="static")
        return w

    w1, w2 = base(), base()
    rows = [b.index for b in w1.bodies if b.index != w1.static_body.index][::-1]
    rng = np.random.default_rng(7)
    kinds = [box(0.2, 0.1, center=(0.3, 0.0)), Circle(0.1, center=(-0.2, 0.1)),
             carom.geometry.Capsule((0.0, -0.1), (0.0, 0.2), 0.05)]
    shapes = [kinds[k] for k in rng.integers(0, 3, len(rows))]
    group = rng.integers(-3, 4, len(rows))
    slept = w1.tables.asleep[:w1.tables.n_bodies].copy()
    handles = w1.add_shapes(np.array(rows), shapes, density=2.0, friction=0.3, category=2, mask=5, group=group)
    loop = [w2.body_handle(b).add_shape(g, density=2.0, friction=0.3, category=2, mask=5, group=int(k))
            for b, g, k in zip(rows, shapes, group)]
    assert [(h.index, h.body.index) for h in handles] == [(h.index, h.body.index) for h in loop]
    assert state(w1) == state(w2)
    np.testing.assert_array_equal(w1.tables.asleep, w2.tables.asleep)
    assert slept.any() and not w1.tables.asleep.any()
    assert [h.group for h in handles] == group.tolist() and handles[0].friction == 0.3
    for _ in range(20):
        w1.step(DT)
        w2.step(DT)
    assert state(w1) == state(w2)


def test_add_shapes_refuses_bad_input_and_changes_nothing():
    w = _sleepy_world()
    bodies = w.bodies[1:4]
    before = state(w)
    with pytest.raises(SimulationError, match="more than once"):
        w.add_shapes([bodies[0], bodies[1], bodies[0]], box(0.1, 0.1))
    with pytest.raises(CaromError, match="density"):
        w.add_shapes(bodies, box(0.1, 0.1), density=-1.0)
    with pytest.raises(SimulationError, match="2 shapes for 3 bodies"):
        w.add_shapes(bodies, [box(0.1, 0.1)] * 2)
    with pytest.raises(GeometryError, match="reaches beyond the world limit"):
        w.add_shapes(bodies, box(0.1, 0.1, center=(0.0, WORLD_LIMIT - 0.1)))
    with pytest.raises(StaleHandleError):
        w.add_shapes(np.array([bodies[0].index, 999]), box(0.1, 0.1))
    assert state(w) == before
    assert w.add_shapes([], box(0.1, 0.1)) == []


# --- bad input ---------------------------------------------------------------------------------------------

def _bad_calls(w, other):
    a = w.bodies[0]
    removed = w.bodies[-1]
    w.remove(removed)
    nan2 = [(0.0, 0.0), (float("nan"), 1.0)]
    return [
        lambda: w.set_state([1, 2], positions=nan2),
        lambda: w.set_state([1, 2], angles=[0.0]),                       # wrong length
        lambda: w.set_state([1, 2], angles=[0.0, 2e9]),                  # beyond the angle limit
        lambda: w.set_state([1, 2], velocities=[(0, 0), (1e39, 0)]),
        lambda: w.set_state([1, 1], angles=[0.0, 1.0]),                  # a body twice
        lambda: w.set_state([a, removed], angles=[0.0, 1.0]),            # stale handle
        lambda: w.set_state([a, other.bodies[0]], angles=[0.0, 1.0]),    # another world's body
        lambda: w.set_state([1, 99], angles=[0.0, 1.0]),                 # no such body
        lambda: w.set_state([1, -1], angles=[0.0, 1.0]),
        lambda: w.set_state([True, 2], angles=[0.0, 1.0]),               # bools are not indices
        lambda: w.set_state(np.array([True, False]), angles=[0.0, 1.0]),
        lambda: w.set_state(["1", "2"], angles=[0.0, 1.0]),
        lambda: w.set_state("12", angles=[0.0, 1.0]),
        lambda: w.set_state([1, 2], angles=[True, 1.0]),
        lambda: w.set_state([1, 2], angles=["0", 1.0]),
        lambda: w.set_state([1, 2], positions=np.array([[0.0, 1.0, 2.0], [0.0, 1.0, 2.0]])),
        lambda: w.apply_impulses([1, 2], [(1, 0), (float("inf"), 0)]),
        lambda: w.apply_impulses([1, 2], [(1, 0)]),
        lambda: w.apply_impulses([1, 2], [(1, 0), (1e31, 0)]),           # a velocity beyond the limit
        lambda: w.apply_impulses([1, 2], [(1, 0), (1, 0)], points=[(0, 0), (0, float("nan"))]),
        lambda: w.apply_impulses([removed], [(1, 0)]),
        lambda: w.apply_forces([2, 1], [(1, 0), (FLOAT32_LIMIT, 0)]),    # an acceleration beyond the limit
        lambda: w.apply_forces([1, 2, 1], [(1, 0), (1, 0)]),
        lambda: w.apply_forces([other.bodies[0]], [(1, 0)]),
        lambda: w.apply_forces([1], [(True, 0)]),
        lambda: w.add_bodies([(0, 5), (1, float("nan"))], shape=box(0.5, 0.5)),
        lambda: w.add_bodies([(0, 5), (1, 5)], angles=[0.0], shape=box(0.5, 0.5)),
        lambda: w.add_bodies([(0, 5), (1, 5)], shape=box(0.5, 0.5), density=-1.0),
        lambda: w.add_bodies([(0, 5), (1, 5)], shape=box(5, 5), density=1e30),
        lambda: w.add_bodies([(0, 5), (1, 5)], shape=box(0.5, 0.5), friction="a"),
        lambda: w.add_bodies([(0, 5), (1, 5)], shape="box"),
        lambda: w.add_bodies([(0, 5), (1e12, 5)], shape=box(0.5, 0.5)),
        lambda: w.add_bodies([(0, 5), (1, 5)], velocities=[(0, 0), (True, 0)], shape=box(0.5, 0.5)),
        lambda: w.add_bodies([(0, 5), (1, 5)], shape=box(0.5, 0.5), bullet=1),
        lambda: w.add_bodies([(0, 5), (1, 5)], shape=[box(0.5, 0.5)]),              # one shape for two bodies
        lambda: w.add_bodies([(0, 5), (1, 5)], shape=[box(0.5, 0.5), "box"]),
        lambda: w.add_bodies([(0, 5), (1, 5)], shape=box(0.5, 0.5), group=[1, True]),
        lambda: w.add_bodies([(0, 5), (1, 5)], shape=box(0.5, 0.5), group=np.array([1.0, 2.0])),
        lambda: w.add_bodies([(0, 5), (1, 5)], shape=box(0.5, 0.5), group=[1, 2, 3]),
        lambda: w.add_bodies([(0, 5), (1, 5)], shape=box(0.5, 0.5), linear_damping=[0.1, -0.1]),
        lambda: w.add_bodies([(0, 5), (1, 5)], shape=box(0.5, 0.5), gravity_scale=[1.0]),
        lambda: w.add_bodies([(0, 5), (1, 5)], shape=box(0.5, 0.5), sleep_threshold=[0.1, float("nan")]),
        lambda: w.add_bodies([(0, 5), (1, 5)], shape=box(0.5, 0.5), sleep_threshold=-1.0),
    ]


def test_bad_bulk_input_raises_and_changes_nothing():
    w = _sleepy_world()
    other = _sleepy_world()
    calls = _bad_calls(w, other)
    before = state(w)
    count = w.body_count
    for k, call in enumerate(calls):
        with pytest.raises(CaromError):
            call()
        assert state(w) == before, f"bad call {k} changed the world"
    assert w.body_count == count
    with pytest.raises(StaleHandleError):
        w.set_state([w.bodies[0], 42], angles=[0.0, 1.0])


# --- snapshots ---------------------------------------------------------------------------------------------

def test_snapshot_and_pickle_keep_every_new_property():
    w = ground_world()
    a, b, c = row_of_boxes(w, 3)
    a.fixed_rotation = True
    b.mass, b.inertia, b.local_center = 3.0, 0.7, (0.1, -0.05)
    c.sleep_enabled = False
    c.mass = 5.0
    for _ in range(10):
        w.step(DT)
    for w2 in (carom.World.restore(w.snapshot()), pickle.loads(pickle.dumps(w)), copy.copy(w)):
        a2, b2, c2 = w2.bodies
        assert a2.fixed_rotation and not b2.fixed_rotation
        assert (b2.mass, b2.inertia, tuple(b2.local_center)) == (3.0, 0.7, (0.1, -0.05))
        assert not c2.sleep_enabled and c2.mass == 5.0 and a2.sleep_enabled
        assert state(w2) == state(w)
        # and the overrides stay overrides: a shape added later does not change them
        b2.add_shape(Circle(0.3))
        assert (b2.mass, b2.inertia) == (3.0, 0.7)
        w2.step(DT)
    w1 = carom.World.restore(w.snapshot())
    for _ in range(30):
        w.step(DT)
        w1.step(DT)
    assert state(w1) == state(w)


def test_restore_refuses_a_fixed_rotation_body_that_turns_and_stray_mass_bits():
    w = ground_world()
    a, b = row_of_boxes(w, 2)
    a.fixed_rotation = True
    w.tables.inv_inertia[a.index] = 1.0
    with pytest.raises(SnapshotError, match="fixed rotation"):
        carom.World.restore(w.snapshot())
    w.tables.inv_inertia[a.index] = 0.0
    w.tables.mass_override[b.index] = 9
    with pytest.raises(SnapshotError, match="mass_override"):
        carom.World.restore(w.snapshot())
    w.tables.mass_override[b.index] = 0
    w.tables.mass_override[w.static_body.index] = 1
    with pytest.raises(SnapshotError, match="mass data set"):
        carom.World.restore(w.snapshot())


# --- motion locks and per-body sleep thresholds --------------------------------------------------------------

def test_lock_x_keeps_a_box_on_a_frictionless_slope_where_a_free_one_slides():
    """A box dropped onto a frictionless 30° slope slides down it; locked along x it stays at its x and comes
    to rest on the slope at the height the slope has there (the contact's push along x is dropped)."""
    ends = {}
    for locked in (False, True):
        w = carom.World(gravity=(0.0, -10.0))
        w.static_body.add_shape(box(10, 0.5), friction=0.0)
        w.static_body.angle = math.radians(30)
        b = w.add_body(position=(1.0, 2.0))
        b.add_shape(box(0.25, 0.25), friction=0.0)
        b.lock_x = locked
        for _ in range(180):
            w.step(DT)
            if locked:
                assert b.position[0] == 1.0 and b.velocity[0] == 0.0
        ends[locked] = b
    assert ends[False].position[0] < 0.0                       # the free box slid off to the left
    locked = ends[True]
    # resting: the box's lowest corner on the slope's surface line y = x·tan 30° + 0.5 / cos 30°
    corners = locked.position + np.array([[c * sx - s * sy, s * sx + c * sy] for sx in (-0.25, 0.25)
                                          for sy in (-0.25, 0.25) for c, s in [(math.cos(locked.angle),
                                                                               math.sin(locked.angle))]])
    surface = corners[:, 0] * math.tan(math.radians(30)) + 0.5 / math.cos(math.radians(30))
    assert abs(float((corners[:, 1] - surface).min())) < 0.02
    assert abs(locked.velocity[1]) < 0.05


def test_lock_y_floats_against_gravity_and_moves_freely_along_x():
    w = carom.World(gravity=(0.0, -10.0))
    b = w.add_body(position=(0.0, 3.0), velocity=(2.0, 5.0))
    b.add_shape(Circle(0.5))
    b.lock_y = True
    assert tuple(b.velocity) == (2.0, 0.0)                    # zeroed when set
    b.apply_impulse((0.0, 100.0))
    for _ in range(60):
        w.step(DT)
    assert b.position[1] == 3.0 and b.velocity[1] == 0.0
    assert b.position[0] == pytest.approx(2.0, rel=1e-6)      # 2 m/s for 1 s
    b.velocity = (1.0, 1.0)
    assert tuple(b.velocity) == (1.0, 0.0)
    b.lock_y = False
    w.step(DT)
    assert b.velocity[1] == pytest.approx(-10.0 * DT)


def test_a_locked_body_hit_by_a_ball_never_moves_along_its_locked_axis():
    w, target, ball = _ball_at_box(0.3, (10.0, 1.0), lock_x=True)
    for _ in range(90):
        w.step(DT)
        assert target.position[0] == 0.0 and target.velocity[0] == 0.0
        if ball.position[0] > -0.5:                             # past the box's face: it went over, not through
            assert ball.position[1] > target.position[1] + 0.5
    assert ball.velocity[0] < 5.0                               # the hit took most of its speed along x,
    assert abs(target.angular_velocity) > 0.1                   # and the box still turns and moves along y
    assert target.velocity[1] != 0.0


def test_locks_and_sleep_threshold_survive_snapshot_pickle_copy_and_are_checked():
    w = ground_world()
    a, b = row_of_boxes(w, 2)
    a.lock_x = True
    b.lock_y = True
    b.sleep_threshold = 0.2
    for _ in range(5):
        w.step(DT)
    for w2 in (carom.World.restore(w.snapshot()), pickle.loads(pickle.dumps(w)), copy.copy(w)):
        a2, b2 = w2.bodies
        assert a2.lock_x and not a2.lock_y and b2.lock_y and not b2.lock_x
        assert b2.sleep_threshold == 0.2 and a2.sleep_threshold == 0.05
        assert state(w2) == state(w)
    w1 = carom.World.restore(w.snapshot())
    for _ in range(20):
        w.step(DT)
        w1.step(DT)
    assert state(w1) == state(w)
    w.tables.locks[a.index] = 4
    with pytest.raises(SnapshotError, match="locks"):
        carom.World.restore(w.snapshot())
    w.tables.locks[a.index] = 1
    w.tables.sleep_threshold[b.index] = -1.0
    with pytest.raises(SnapshotError, match="sleep_threshold"):
        carom.World.restore(w.snapshot())


@pytest.mark.parametrize("name, bad", [("lock_x", "yes"), ("lock_y", 1), ("lock_x", None),
                                       ("sleep_threshold", -0.1), ("sleep_threshold", float("nan")),
                                       ("sleep_threshold", True), ("sleep_threshold", "0.1")])
def test_bad_locks_and_thresholds_are_refused_and_change_nothing(name, bad):
    w = ground_world()
    (a,) = row_of_boxes(w, 1)
    w.step(DT)
    before = state(w)
    with pytest.raises(CaromError, match=name):
        setattr(a, name, bad)
    assert state(w) == before


def _drifting_box(threshold, speed):
    """A box gliding at ``speed`` in empty space (no gravity, no contacts): (asleep after 2 s, distance gone)."""
    w = carom.World(gravity=(0.0, 0.0))
    b = w.add_body(position=(0.0, 0.0), velocity=(speed, 0.0))
    b.add_shape(box(0.5, 0.5))
    if threshold is not None:
        b.sleep_threshold = threshold
    for _ in range(120):
        w.step(DT)
    return b.sleeping, float(b.position[0])


def test_sleep_threshold_decides_what_counts_as_resting():
    # the default 0.05 m/s: a box at 0.03 m/s falls asleep (after SLEEP_TIME, 0.5 s) and stops there
    asleep, x = _drifting_box(None, 0.03)
    assert asleep and x == pytest.approx(0.03 * 0.5, abs=0.03 * DT * 2)
    # a threshold below its speed keeps it gliding the whole 2 s
    asleep, x = _drifting_box(0.01, 0.03)
    assert not asleep and x == pytest.approx(0.06, rel=1e-6)
    # a threshold above a faster box's speed lets that one sleep; with 0 only a body at exactly no speed does
    assert _drifting_box(0.5, 0.3)[0]
    assert not _drifting_box(0.0, 1e-4)[0] and _drifting_box(0.0, 0.0)[0]
