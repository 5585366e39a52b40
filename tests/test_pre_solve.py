"""The pre-solve hook (``World.pre_solve``), contact data as arrays (``World.contact_data``) and the post-solve
handler, against closed forms and the dict form of ``World.contacts``."""
import copy
import math
import pickle

import numba
import numpy as np
import pytest

import carom
from carom.errors import CaromError
from carom.geometry import box, Circle

DT = 1.0 / 60.0
G = 10.0


@carom.pre_solve_function
def no_friction(shape_a, shape_b, body_a, body_b, nx, ny, count, points, material):
    material[0] = 0.0
    return 1


@carom.pre_solve_function
def friction_02(shape_a, shape_b, body_a, body_b, nx, ny, count, points, material):
    material[0] = 0.2
    return 1


@carom.pre_solve_function
def bouncy(shape_a, shape_b, body_a, body_b, nx, ny, count, points, material):
    material[1] = 0.8
    return 1


@carom.pre_solve_function
def odd_shapes_slippery(shape_a, shape_b, body_a, body_b, nx, ny, count, points, material):
    if (shape_a + shape_b) % 2 == 1:
        material[0] = 0.1 * material[0]
        material[1] = 0.3
    return 1


def _slope(theta, friction=0.6):
    """A box of friction 0.6 resting on a static slope of angle theta, the slope's top face through the
    origin."""
    w = carom.World(gravity=(0.0, -G), substeps=4)
    w.sleep_enabled = False
    c, s = math.cos(theta), math.sin(theta)
    ground = w.add_body(kind="static", position=(0.5 * s, -0.5 * c), angle=theta)
    ground.add_shape(box(40.0, 0.5), friction=friction)
    h = 0.25
    b = w.add_body(position=(-h * s, h * c), angle=theta)
    b.add_shape(box(h, h), friction=friction)
    return w, b, np.array([c, s])


def _slide(w, b, axis, steps):
    """Distance travelled down the slope (along −axis) after ``steps`` steps, and the time."""
    p0 = b.position.copy()
    for _ in range(steps):
        w.step(DT)
    return -float(np.dot(b.position - p0, axis)), steps * DT


@pytest.mark.parametrize("degrees", [20.0, 30.0])
def test_a_hook_that_zeroes_friction_makes_a_box_slide_that_otherwise_sticks(degrees):
    """μ = 0.6 > tan θ holds the box; with the hook's μ = 0 it slides at g·sin θ, with μ = 0.2 at
    g·(sin θ − μ cos θ) (distance ½·a·t² after 1 s, within 2 %)."""
    theta = math.radians(degrees)
    w, b, axis = _slope(theta)
    d, _ = _slide(w, b, axis, 60)
    assert abs(d) < 0.005
    assert abs(b.angle - theta) < 1e-3
    for hook, mu in ((no_friction, 0.0), (friction_02, 0.2)):
        w, b, axis = _slope(theta)
        w.pre_solve = hook
        assert w.pre_solve is hook
        d, t = _slide(w, b, axis, 60)
        a = G * (math.sin(theta) - mu * math.cos(theta))
        assert d == pytest.approx(0.5 * a * t * t, rel=0.02), (degrees, mu)
        assert abs(b.angle - theta) < 1e-3


def test_removing_the_hook_restores_the_shapes_friction():
    w, b, axis = _slope(math.radians(25.0))
    w.pre_solve = no_friction
    d, _ = _slide(w, b, axis, 10)
    assert d > 0.05
    w.pre_solve = None
    assert w.pre_solve is None
    _slide(w, b, axis, 60)           # friction stops it (from 0.7 m/s at 1.2 m/s²)
    d, _ = _slide(w, b, axis, 30)
    assert abs(d) < 0.005


def _ground(substeps=4, sleep=False, **material):
    """A world with a static ground box whose top face is y = 0: (world, the ground's shape)."""
    w = carom.World(gravity=(0.0, -G), substeps=substeps)
    w.sleep_enabled = sleep
    ground = w.add_body(kind="static", position=(0.0, -0.5)).add_shape(box(20.0, 0.5), **material)
    return w, ground


def _two_boxes():
    w, ground = _ground()
    a = w.add_body(position=(-2.0, 1.0))
    a.add_shape(box(0.5, 0.5))
    b = w.add_body(position=(2.0, 1.0))
    b.add_shape(box(0.5, 0.5))
    return w, ground, a, b


def test_a_hook_that_disables_some_contacts_lets_a_body_fall_through():
    """Contacts of body b disabled: it falls through the ground freely (y = y0 − ½·g·t²), while a lands and
    rests; b never shows in the contact data nor begins touching."""
    w, ground, a, b = _two_boxes()
    ghost = b.index

    @carom.pre_solve_function
    def pass_through(shape_a, shape_b, body_a, body_b, nx, ny, count, points, material):
        return 0 if body_a == ghost or body_b == ghost else 1

    w.pre_solve = pass_through
    began = []
    w.on("begin", lambda e: began.append({e.body_a.index, e.body_b.index}))
    steps = 60
    for _ in range(steps):
        w.step(DT)
        data = w.contact_data()
        assert not np.any((data.body_a == ghost) | (data.body_b == ghost))
    t = steps * DT
    assert a.position[1] == pytest.approx(0.5, abs=0.01)
    assert b.position[1] == pytest.approx(1.0 - 0.5 * G * t * t, rel=1e-6)
    assert began and all(ghost not in pair for pair in began)


def test_a_hook_that_changes_restitution_changes_the_bounce_as_the_closed_form_says():
    """A ball dropped from 2 m onto ground of restitution 0: it stays down without a hook; with the hook's
    e = 0.8 it leaves the ground at e times its impact speed √(2·g·h) and rises to e²·h (within 3 %)."""
    def drop(hook):
        w, _ = _ground(restitution=0.0)
        r = 0.25
        ball = w.add_body(position=(0.0, 2.0 + r))
        ball.add_shape(Circle(r), restitution=0.0)
        w.pre_solve = hook
        top = 0.0
        landed = False
        for _ in range(150):
            w.step(DT)
            if ball.velocity[1] > 0.0:
                landed = True
            if landed:
                top = max(top, ball.position[1] - r)
        return top

    assert drop(None) < 0.01
    assert drop(bouncy) == pytest.approx(0.64 * 2.0, rel=0.03)


@carom.pre_solve_function
def broken_material(shape_a, shape_b, body_a, body_b, nx, ny, count, points, material):
    material[0] = np.nan
    material[1] = -1.0
    material[2] = np.inf
    return 1


def test_materials_a_hook_leaves_out_of_range_are_taken_as_their_limits():
    """NaN friction and negative restitution are taken as 0, an infinite tangent speed as the speed cap: the box
    slides freely (g·sin θ) and drifts at most by the capped belt's pull, and nothing becomes NaN."""
    theta = math.radians(25.0)
    w, b, axis = _slope(theta)
    w.pre_solve = broken_material
    d, t = _slide(w, b, axis, 30)
    assert np.all(np.isfinite(w.positions)) and np.all(np.isfinite(w.velocities))
    assert d == pytest.approx(0.5 * G * math.sin(theta) * t * t, rel=0.02)


def _scene():
    from carom.scenes.rigid_scenes import pyramid
    return pyramid(base=30)


def test_a_hook_gives_bitwise_the_same_world_for_one_and_two_threads():
    results = []
    for threads in (1, 2):
        carom.set_num_threads(threads)
        try:
            w = _scene()
            w.pre_solve = odd_shapes_slippery
            for _ in range(90):
                w.step(DT)
            results.append(w)
        finally:
            carom.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    a, b = results
    for name in ("com", "angle", "vel", "angvel"):
        assert np.array_equal(getattr(a.tables, name), getattr(b.tables, name)), name
    # and the hook did something: without it the pyramid is elsewhere
    w = _scene()
    for _ in range(90):
        w.step(DT)
    assert not np.array_equal(w.tables.com, a.tables.com)


def test_the_hook_sees_the_contact_as_the_contact_data_shows_it():
    """What the hook is given (shapes, bodies, normal, points, the mixed material) is the contact table's:
    recorded into a global array by the hook and compared with contact_data of the same step (a hook that
    changes nothing leaves the world bitwise as without one)."""
    record = np.zeros((64, 12))
    count = np.zeros(1, np.int64)
    rec_ptr = record.ctypes.data
    cnt_ptr = count.ctypes.data

    @carom.pre_solve_function
    def spy(shape_a, shape_b, body_a, body_b, nx, ny, n, points, material):
        rec = numba.carray(_as_f64(rec_ptr), (64, 12))
        c = numba.carray(_as_i64(cnt_ptr), (1,))
        i = c[0]
        c[0] = i + 1
        if i < 64:
            rec[i, 0] = shape_a
            rec[i, 1] = shape_b
            rec[i, 2] = body_a
            rec[i, 3] = body_b
            rec[i, 4] = nx
            rec[i, 5] = ny
            rec[i, 6] = n
            rec[i, 7] = points[0]
            rec[i, 8] = points[2]
            rec[i, 9] = material[0]
            rec[i, 10] = material[1]
            rec[i, 11] = material[2]
        return 1

    w, ground, a, b = _two_boxes()
    plain, _, _, _ = _two_boxes()
    w.pre_solve = spy
    for _ in range(40):
        count[0] = 0
        w.step(DT)
        plain.step(DT)
    n = int(count[0])
    assert n == 2
    data = w.contact_data()
    first = np.flatnonzero(np.r_[True, (np.diff(data.shape_a) != 0) | (np.diff(data.shape_b) != 0)])
    assert np.array_equal(record[:n, 0], data.shape_a[first])
    assert np.array_equal(record[:n, 1], data.shape_b[first])
    assert np.array_equal(record[:n, 2], data.body_a[first])
    assert np.array_equal(record[:n, 3], data.body_b[first])
    assert np.array_equal(record[:n, 4:6], data.normal[first])
    assert np.all(record[:n, 6] == 2)
    # (the points are the narrow phase's, before the step moved the boxes: within the step's motion of these)
    assert np.allclose(record[:n, 7], data.point[first, 0], atol=1e-3)
    assert np.allclose(record[:n, 9], math.sqrt(0.6 * 0.6))
    assert np.all(record[:n, 10:12] == 0.0)
    for name in ("com", "angle", "vel", "angvel"):
        assert np.array_equal(getattr(w.tables, name), getattr(plain.tables, name)), name


@numba.extending.intrinsic
def _as_f64(typingctx, address):
    sig = numba.types.CPointer(numba.types.float64)(address)

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(signature.return_type))
    return sig, codegen


@numba.extending.intrinsic
def _as_i64(typingctx, address):
    sig = numba.types.CPointer(numba.types.int64)(address)

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(signature.return_type))
    return sig, codegen


# --- validation ------------------------------------------------------------------------------------------------

@numba.cfunc(numba.types.int64(numba.types.int64, numba.types.int64))
def _wrong_signature(a, b):
    return 1


@numba.njit
def _njit_no_friction(shape_a, shape_b, body_a, body_b, nx, ny, count, points, material):
    material[0] = 0.0
    return 1


@numba.njit
def _njit_bad(x):
    return x


@pytest.mark.parametrize("bad", [5, "hook", lambda *a: 1, _wrong_signature, _njit_bad, np.zeros(3)])
def test_pre_solve_refuses_what_is_not_a_hook_and_keeps_the_world(bad):
    w, b, axis = _slope(math.radians(25.0))
    w.pre_solve = friction_02
    before = w.snapshot().data
    with pytest.raises(CaromError) as info:
        w.pre_solve = bad
    assert "pre_solve" in str(info.value)
    assert w.pre_solve is friction_02
    assert w.snapshot().data == before


def test_an_njit_function_is_compiled_into_a_hook():
    w, b, axis = _slope(math.radians(25.0))
    w.pre_solve = _njit_no_friction
    assert isinstance(w.pre_solve, numba.core.ccallback.CFunc)
    d, t = _slide(w, b, axis, 30)
    assert d == pytest.approx(0.5 * G * math.sin(math.radians(25.0)) * t * t, rel=0.02)


def test_the_hook_is_not_carried_by_snapshots_pickles_and_copies():
    """The hook is code, not state: a restored, unpickled or copied world has none (and stepping it is stepping
    the world without one); taking a snapshot or a pickle of a world with a hook works."""
    w, b, axis = _slope(math.radians(25.0))
    w.pre_solve = no_friction
    w.step(DT)
    for other in (carom.World.restore(w.snapshot()), pickle.loads(pickle.dumps(w)), copy.copy(w),
                  copy.deepcopy(w)):
        assert other.pre_solve is None
        body = other.body_handle(b.index)
        p0 = body.position.copy()
        for _ in range(30):
            other.step(DT)
        assert np.linalg.norm(body.position - p0) < 0.005       # held by friction again


# --- contact data as arrays, post-solve handler -----------------------------------------------------------------

def _resting(substeps):
    w, _ = _ground(substeps)
    b = w.add_body(position=(0.0, 0.5))
    b.add_shape(box(0.5, 0.5), density=2.0)
    c = w.add_body(position=(3.0, 0.4))
    c.add_shape(Circle(0.4), density=1.0)
    return w, b, c


@pytest.mark.parametrize("substeps", [1, 4, 8])
def test_contact_data_of_a_resting_box_sums_to_m_g_dt(substeps):
    w, b, c = _resting(substeps)
    for _ in range(89):
        w.step(DT)
    v0 = np.array(b.velocity, float)
    w.step(DT)
    dv = np.array(b.velocity, float) - v0
    data = w.contact_data()
    mine = (data.body_a == b.index) | (data.body_b == b.index)
    assert mine.sum() == 2
    mg = b.mass * G * DT
    assert data.normal_impulse[mine].sum() == pytest.approx(mg, rel=0.01)
    # the reported impulses are the ones that acted: with gravity they are the box's change of momentum in the
    # step (on the box: the normal from the other shape to it, the tangent (n.y, −n.x))
    sign = np.where(data.body_b[mine] == b.index, 1.0, -1.0)[:, None]
    n = data.normal[mine]
    t = np.stack([n[:, 1], -n[:, 0]], axis=1)
    total = (sign * (data.normal_impulse[mine][:, None] * n + data.tangent_impulse[mine][:, None] * t)).sum(axis=0)
    assert np.abs(total + (0.0, -mg) - b.mass * dv).max() < 1e-6 * mg
    # at rest the friction nearly cancels (the two points' shares are opposite: the sum is what settles the box)
    assert abs(data.tangent_impulse[mine].sum()) < 1e-5 * mg
    assert np.all(data.touching[mine])
    # resting: no approach
    assert np.all(np.abs(data.approach_speed) < 0.05)


def test_contact_data_is_the_dict_form_as_arrays():
    w, b, c = _resting(4)
    for _ in range(10):
        w.step(DT)
    data = w.contact_data()
    rows = []
    for d in w.contacts():
        for p in range(len(d["points"])):
            rows.append((d["shape_a"], d["shape_b"], *d["points"][p], *d["normal"], d["separations"][p],
                         d["normal_impulses"][p], d["tangent_impulses"][p], d["touching"]))
    rows = np.array(rows, float)
    assert len(data.shape_a) == len(rows) == 3
    got = np.column_stack((data.shape_a, data.shape_b, data.point, data.normal, data.separation,
                           data.normal_impulse, data.tangent_impulse, data.touching)).astype(float)
    assert np.array_equal(got, rows)
    assert np.array_equal(data.body_a, w.tables.s_body[data.shape_a])
    assert np.array_equal(data.body_b, w.tables.s_body[data.shape_b])


def test_approach_speed_is_the_impact_speed_of_a_falling_ball():
    """A ball dropped from h meets the ground at √(2·g·h): the approach speed of the step in which it lands
    (gravity's share up to the meeting included) is that within 2 %; before any step the world knows none."""
    w, _ = _ground(sleep=True)
    r, h = 0.25, 1.5
    ball = w.add_body(position=(0.0, h + r))
    ball.add_shape(Circle(r))
    seen = []
    w.on("post_solve", lambda data: seen.append(data.approach_speed.max() if len(data.approach_speed) else 0.0))
    for _ in range(60):
        w.step(DT)
    assert max(seen) == pytest.approx(math.sqrt(2.0 * G * h), rel=0.02)
    restored = carom.World.restore(w.snapshot())
    assert np.all(np.isnan(restored.contact_data().approach_speed))


def test_post_solve_handlers_get_each_steps_contact_data():
    w, b, c = _resting(4)
    got = []

    def handler(data):
        got.append(data)
        with pytest.raises(ValueError):
            data.normal_impulse[...] = 0.0

    assert w.on("post_solve", handler) is handler
    for _ in range(5):
        w.step(DT)
        now = w.contact_data()
        for x, y in zip(got[-1], now):
            assert np.array_equal(x, y)
    assert len(got) == 5
    w.off(handler)
    w.step(DT)
    assert len(got) == 5
    with pytest.raises(CaromError, match="categories"):
        w.on("post_solve", handler, categories=(1, 2))


def test_contact_data_drops_the_rows_of_a_removed_shape():
    w, b, c = _resting(4)
    for _ in range(5):
        w.step(DT)
    w.remove(c)
    data = w.contact_data()
    assert len(data.shape_a) == 2
    assert not np.any(np.isnan(data.approach_speed))
