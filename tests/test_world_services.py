"""World services: events, sensors, filtering, sleeping, snapshots, and a churn test of the internal arrays."""
import math
import copy
import pickle

import numpy as np
import pytest

import carom
from carom.constants import SLEEP_TIME
from carom.errors import CaromError, SimulationError, StaleHandleError
from carom.geometry import Circle, Polygon, box, Segment
from carom.rigid import _step
from carom.scenes.rigid_scenes import pyramid, pile
from tables import assert_same_contacts

DT = 1 / 60


def check_world(w):
    """Consistency of the internal arrays after a step."""
    n, ns = w.tables.n_bodies, w.tables.n_shapes
    alive = w.tables.alive[:n]
    assert np.isfinite(w.tables.com[:n][alive]).all() and np.isfinite(w.tables.vel[:n][alive]).all()
    # sleeping bodies are live dynamic bodies at rest
    asleep = w.tables.asleep[:n]
    assert not (asleep & ~alive).any()
    assert (w.tables.kind[:n][asleep] == _step.DYNAMIC).all()
    assert (w.tables.vel[:n][asleep] == 0).all() and (w.tables.angvel[:n][asleep] == 0).all()
    # shapes belong to live bodies, and the body lists agree with the shape table
    s_alive = w.tables.s_alive[:ns]
    assert alive[w.tables.s_body[:ns][s_alive]].all()
    listed = sorted(h.index for b in np.flatnonzero(alive) for h in w.tables.body_shapes[b])
    assert listed == sorted(np.flatnonzero(s_alive).tolist())
    for b in np.flatnonzero(alive):
        for h in w.tables.body_shapes[b]:
            assert w.tables.s_body[h.index] == b
    # every live shape has a proxy in the broad phase that maps back to it
    for s in np.flatnonzero(s_alive):
        p = w.tables.s_proxy[s]
        assert w.tables.proxy_shape[p] == s and w.tables.bp._flags[p] != 0
    assert len(w.tables.bp) == int(s_alive.sum())
    # the contact table is sorted, unique, between live shapes of different bodies
    keys, count = w.tables.contacts.keys, w.tables.contacts.count
    assert (np.diff(keys) > 0).all()
    sa, sb = keys >> 32, keys & 0xFFFFFFFF
    assert (sa < sb).all() and s_alive[sa].all() and s_alive[sb].all()
    assert (w.tables.s_body[sa] != w.tables.s_body[sb]).all()
    assert ((count >= 0) & (count <= 2)).all()
    # a touching contact between two dynamic bodies never joins a sleeping and an awake body
    ba, bb = w.tables.s_body[sa], w.tables.s_body[sb]
    dyn = (w.tables.kind[ba] == _step.DYNAMIC) & (w.tables.kind[bb] == _step.DYNAMIC) & (count > 0) & ~w.tables.contacts.sensor
    assert (w.tables.asleep[ba][dyn] == w.tables.asleep[bb][dyn]).all()


# --- sensors and events ------------------------------------------------------------------------------------

def sensor_world():
    w = carom.World(gravity=(0, 0))
    gate = w.add_body(position=(0, 0), kind="static")
    sensor = gate.add_shape(box(1.0, 2.0), sensor=True)
    ball = w.add_body(position=(-4, 0), velocity=(6, 0))
    ball.add_shape(Circle(0.3), density=1.0)
    return w, sensor, ball


def test_sensor_crossed_gives_one_begin_and_one_end():
    w, sensor, ball = sensor_world()
    begins, ends = [], []
    for _ in range(120):
        w.step(DT)
        ev = w.contact_events()
        begins += list(ev.begin)
        ends += list(ev.end)
        check_world(w)
    assert len(begins) == 1 and len(ends) == 1
    assert begins[0]["sensor"] and ends[0]["sensor"]
    assert begins[0]["shape_a"] == sensor.index and begins[0]["body_b"] == ball.index
    # it never pushed: the ball kept its velocity and went through
    assert np.allclose(ball.velocity, (6, 0))
    assert ball.position[0] > 3.0
    # and the sensor overlap is not a contact
    assert w.contacts() == []


def test_handler_removing_the_body_it_is_told_about():
    w, sensor, ball = sensor_world()
    other = w.add_body(position=(-6, 0.0), velocity=(6, 0))
    other.add_shape(Circle(0.3))
    seen = []

    def on_begin(event):
        seen.append(event)
        assert event.sensor and event.shape_a == sensor
        w.remove(event.body_b)

    w.on("begin", on_begin)
    for _ in range(120):
        w.step(DT)
        check_world(w)
    assert len(seen) == 2
    assert not ball.alive and not other.alive
    with pytest.raises(StaleHandleError):
        ball.position
    assert w.body_count == 1          # the gate
    # the contacts ended by the removal are reported as end events of a later step
    w2, _, ball2 = sensor_world()
    for _ in range(45):
        w2.step(DT)
    assert w2.contact_events().end.size == 0
    w2.remove(ball2)
    w2.step(DT)
    assert w2.contact_events().end.size == 1
    check_world(w2)


def test_handlers_see_events_after_the_step_and_can_add_bodies():
    w = carom.World()
    w.static_body.add_shape(Segment((-10, 0), (10, 0)))
    ball = w.add_body(position=(0, 3))
    ball.add_shape(Circle(0.5), category=0b10)
    hits = []

    def on_hit(event):
        assert not w.tables.locked
        hits.append(event)
        b = w.add_body(position=(5, 5))          # adding during delivery is allowed
        b.add_shape(Circle(0.2))

    # oriented: shape_a is the one in category 0b10
    w.on("hit", on_hit, categories=(0b10, 0b1))
    for _ in range(90):
        w.step(DT)
    assert len(hits) == 1
    ev = hits[0]
    assert ev.shape_a.body == ball and ev.body_b == w.static_body
    assert ev.speed == pytest.approx(np.sqrt(2 * 10 * 2.5), rel=0.05)
    assert ev.normal[1] == pytest.approx(-1.0)      # from the ball (A) to the ground (B)
    assert w.body_count == 2
    with pytest.raises(CaromError):
        w.on("touch", on_hit)


def test_begin_end_of_a_bouncing_box():
    w = carom.World()
    w.static_body.add_shape(box(10, 1, center=(0, -1)))
    b = w.add_body(position=(0, 2))
    b.add_shape(box(0.5, 0.5), restitution=0.8)
    events = []
    for _ in range(150):
        w.step(DT)
        ev = w.contact_events()
        events += [("b", r["body_b"]) for r in ev.begin] + [("e", r["body_b"]) for r in ev.end]
    # touches and leaves alternate, starting with a begin
    kinds = [k for k, _ in events]
    assert kinds[0] == "b" and kinds.count("b") >= 2
    assert all(kinds[i] != kinds[i + 1] for i in range(len(kinds) - 1))


# --- filtering -----------------------------------------------------------------------------------------------

def should_collide_truth(fa, fb):
    (ca, ma, ga), (cb, mb, gb) = fa, fb
    if ga == gb and ga != 0:
        return ga > 0
    return (ca & mb) != 0 and (cb & ma) != 0


def test_filter_matrix_against_truth_table():
    rng = np.random.default_rng(7)
    w = carom.World(gravity=(0, 0))
    filters = []
    handles = []
    bits = [1, 2, 4, 1 << 40, 1 << 63, (1 << 64) - 1]
    for i in range(40):
        cat = bits[rng.integers(len(bits))]
        mask = bits[rng.integers(len(bits))] | bits[rng.integers(len(bits))]
        group = int(rng.choice([0, 0, 1, -1, 2, -2]))
        body = w.add_body(position=(0.01 * i, 0.0))
        handles.append(body.add_shape(Circle(1.0), category=cat, mask=mask, group=group))
        filters.append((cat, mask, group))
    w.step(DT)
    found = {tuple(sorted((c["shape_a"], c["shape_b"]))) for c in w.contacts()}
    truth = {tuple(sorted((handles[i].index, handles[j].index))) for i in range(40) for j in range(i + 1, 40)
             if should_collide_truth(filters[i], filters[j])}
    assert found == truth
    assert 0 < len(truth) < 40 * 39 // 2
    # filters change at any time: give everybody group -3 and nothing collides any more
    for h in handles:
        h.group = -3
    w.step(DT)
    assert w.contacts() == []
    assert w.contact_events().end.size > 0
    with pytest.raises(SimulationError, match="mask"):
        handles[0].mask = 1 << 64
    with pytest.raises(SimulationError, match="category"):
        handles[0].category = -1
    assert handles[0].category == filters[0][0]


# --- sleeping ------------------------------------------------------------------------------------------------

def test_pyramid_falls_asleep_and_a_ball_wakes_it():
    w = pyramid(base=20)
    steps = 0
    while w.awake_count and steps < 300:
        w.step(DT)
        steps += 1
    assert w.awake_count == 0, "the pyramid did not fall asleep within 5 s"
    resting = w.positions.copy()
    for _ in range(30):
        w.step(DT)
    assert np.array_equal(w.positions, resting)
    assert all(b.sleeping for b in w.bodies)
    ball = w.add_body(position=(0, 22))
    ball.add_shape(Circle(0.5), density=5.0)
    woke = 0
    for _ in range(60):
        w.step(DT)
        woke = max(woke, w.awake_count)
        check_world(w)
    assert woke == 211
    assert ball.position[1] > 19.5


def test_a_resting_box_falls_asleep_in_the_step_its_slow_time_reaches_sleep_time():
    """Box2D's rule, to the step: a body slow (under its threshold) in every step since it came to rest falls asleep
    in the step whose slow time, dt added once a step, first reaches SLEEP_TIME, not one step before."""
    w = carom.World()
    w.static_body.add_shape(box(10, 1, center=(0, -1)))
    b = w.add_body(position=(0, 0.5))
    b.add_shape(box(0.5, 0.5))

    def resting():
        # (the box rests from its first step: slower than its threshold at every step)
        assert np.hypot(*b.velocity) + abs(b.angular_velocity) * 0.75 < b.sleep_threshold

    _falls_asleep_on_time(w, b, resting)


def _falls_asleep_on_time(w, body, each_step=lambda: None):
    """Step ``w`` until ``body`` sleeps, checking that it does so in the step whose slow time (dt added once a step
    from now) first reaches SLEEP_TIME; ``each_step`` checks something more after every step."""
    slow = 0.0
    for _ in range(120):
        w.step(DT)
        each_step()
        slow += DT
        assert body.sleeping == (slow >= SLEEP_TIME)
        if body.sleeping:
            return
    raise AssertionError("the body did not fall asleep within 2 s")


def test_a_box_carried_slowly_by_a_kinematic_body_never_sleeps():
    """A body touching a moving kinematic body never falls asleep, even while it is slow enough to (a platform
    carrying a box at 1 cm/s, below the 5 cm/s threshold); beside it, a box on a static floor falls asleep."""
    w = carom.World()
    platform = w.add_body(position=(0, -1), kind="kinematic", velocity=(0.01, 0.0))
    platform.add_shape(box(3, 1))
    w.static_body.add_shape(box(3, 1, center=(20, -1)))
    carried = w.add_body(position=(0, 0.5))
    carried.add_shape(box(0.5, 0.5), friction=1.0)
    resting = w.add_body(position=(20, 0.5))
    resting.add_shape(box(0.5, 0.5))
    for _ in range(180):
        w.step(DT)
        assert not carried.sleeping
    assert resting.sleeping
    assert np.hypot(*carried.velocity) < carried.sleep_threshold
    assert carried.position[0] > 0.015
    # the platform stops: the box's slow time starts then, and it sleeps in the step that time reaches SLEEP_TIME
    platform.velocity = (0.0, 0.0)
    _falls_asleep_on_time(w, carried)


def test_forces_impulses_and_velocity_wake_a_sleeper():
    w = carom.World()
    w.static_body.add_shape(box(10, 1, center=(0, -1)))
    b = w.add_body(position=(0, 0.5))
    b.add_shape(box(0.5, 0.5))
    for _ in range(120):
        w.step(DT)
    assert b.sleeping
    for poke in (lambda: b.apply_force((0, 100)), lambda: b.apply_impulse((1, 0)),
                 lambda: setattr(b, "velocity", (0, 1)), lambda: b.apply_torque(5.0)):
        b.sleep()
        assert b.sleeping
        poke()
        assert not b.sleeping
    w.sleep_enabled = False
    for _ in range(120):
        w.step(DT)
    assert not b.sleeping


def test_removing_a_support_wakes_what_rests_on_it():
    w = carom.World()
    w.static_body.add_shape(box(10, 1, center=(0, -1)))
    low = w.add_body(position=(0, 0.5))
    low.add_shape(box(0.5, 0.5))
    top = w.add_body(position=(3, 0.5))
    top.add_shape(box(0.5, 0.5))
    top2 = w.add_body(position=(3, 1.5))
    top2.add_shape(box(0.5, 0.5))
    for _ in range(120):
        w.step(DT)
    assert top2.sleeping and low.sleeping
    w.remove(top)
    assert not top2.sleeping and low.sleeping
    for _ in range(60):
        w.step(DT)
        check_world(w)
    assert top2.position[1] == pytest.approx(0.5, abs=0.02)


# --- snapshots -----------------------------------------------------------------------------------------------

STATE = ("com", "angle", "vel", "angvel", "asleep", "sleep_time")


def assert_same(a, b):
    for name in STATE:
        assert np.array_equal(getattr(a.tables, name), getattr(b.tables, name)), name
    assert_same_contacts(a, b)


@pytest.mark.parametrize("how", ["snapshot", "pickle", "copy"])
def test_snapshot_continues_bitwise(how):
    w = pile(count=40)
    for _ in range(100):
        w.step(DT)
    if how == "snapshot":
        snap = w.snapshot()
        w2 = carom.World.restore(snap)
    elif how == "pickle":
        w2 = pickle.loads(pickle.dumps(w))
    else:
        w2 = copy.copy(w)
    assert w2 is not w and w2.tables.com is not w.tables.com
    for _ in range(500):
        w.step(DT)
        w2.step(DT)
        assert_same(w, w2)
    # handles of the copy belong to the copy
    assert all(b.world is w2 for b in w2.bodies)
    with pytest.raises(CaromError):
        carom.World.restore(b"not a snapshot")


def test_kept_kernel_views_follow_slot_reuse_and_grown_arrays():
    """World keeps the step kernel's array views between steps (``step_tables``). A body and a shape that
    reuse freed slots (the counts stay the same) while the vertex array grows must still reach the
    kernel: the world must step exactly like a twin whose views are built afresh before every step."""
    def build():
        w = pile(count=30)
        while w.tables.verts.shape[0] - w.tables.n_verts >= 8:     # fill the vertex array with far-away static boxes
            w.static_body.add_shape(box(0.5, 0.5, center=(100.0 + 2 * w.tables.n_verts, 0.0)))
        for _ in range(20):
            w.step(DT)
        return w

    worlds = [build(), build()]
    for w in worlds:
        w.remove(w.bodies[-1])
        n, ns, verts = w.tables.n_bodies, w.tables.n_shapes, w.tables.verts
        ring = np.linspace(0.0, 2 * np.pi, 9, endpoint=False)
        b = w.add_body(position=(0.3, 12.0))
        b.add_shape(Polygon(np.c_[np.cos(ring), np.sin(ring)]), density=1.0)
        # the new body and shape took freed slots, and the vertex array had to grow
        assert (w.tables.n_bodies, w.tables.n_shapes) == (n, ns)
        assert w.tables.verts is not verts
        w.step(DT)
    fresh = worlds[1]
    for _ in range(120):
        worlds[0].step(DT)
        fresh._arg_views = None
        fresh.step(DT)
        assert_same(worlds[0], fresh)
    # the nonagon (radius 1) came to rest on the pile or the floor (y = 0), not through them
    polygon = worlds[0].bodies[-1]
    assert polygon.shapes[0].geometry.vertices.shape[0] == 9
    assert polygon.position[1] > 0.9


# --- churn ---------------------------------------------------------------------------------------------------

def test_seeded_churn_keeps_the_world_consistent():
    rng = np.random.default_rng(11)
    w = carom.World()
    w.static_body.add_shape(box(20, 1, center=(0, -1)))
    w.static_body.add_shape(box(1, 10, center=(-20, 9)))
    w.static_body.add_shape(box(1, 10, center=(20, 9)))
    bodies = []
    sensor_body = w.add_body(position=(0, 2), kind="static")
    sensor_body.add_shape(box(3, 1), sensor=True)
    for step in range(600):
        op = rng.integers(10)
        if op < 3 or not bodies:
            b = w.add_body(position=(rng.uniform(-15, 15), rng.uniform(1, 15)), angle=rng.uniform(0, 6))
            if rng.integers(2):
                b.add_shape(Circle(rng.uniform(0.2, 0.6)), density=1.0)
            else:
                b.add_shape(box(rng.uniform(0.2, 0.6), rng.uniform(0.2, 0.6)), density=1.0,
                            category=int(rng.choice([1, 2])), mask=int(rng.choice([1, 3])))
            bodies.append(b)
        elif op == 3:
            w.remove(bodies.pop(int(rng.integers(len(bodies)))))
        elif op == 4:
            bodies[int(rng.integers(len(bodies)))].sleep()
        elif op == 5:
            bodies[int(rng.integers(len(bodies)))].wake()
        elif op == 6:
            bodies[int(rng.integers(len(bodies)))].apply_impulse((rng.normal(), rng.normal()))
        w.step(DT)
        check_world(w)
        ev = w.contact_events()
        assert (ev.begin["shape_a"] != ev.begin["shape_b"]).all()
    assert w.body_count == len(bodies) + 1 > 20     # + the sensor body
    assert w.awake_count <= w.body_count


def test_profile_times_each_stage_and_changes_nothing():
    """world.profile: the time of every stage (clocked inside the compiled step) adds up to the total, and
    switching it on leaves the simulation bitwise the same."""
    plain = pyramid(base=8)
    timed = pyramid(base=8)
    timed.profile = True
    for _ in range(30):
        plain.step(1 / 60)
        timed.step(1 / 60)
    for name in ("com", "angle", "vel", "angvel"):
        assert np.array_equal(getattr(plain.tables, name), getattr(timed.tables, name)), name
    assert plain.profile_times == {}
    t = timed.profile_times
    assert set(t) == set(_step.STAGES) | {"total"}
    assert all(v >= 0.0 for v in t.values())
    assert t["total"] > 0.0
    assert sum(t[s] for s in _step.STAGES) == pytest.approx(t["total"], rel=1e-9)


def test_events_read_after_the_shape_slot_is_reused_name_the_old_shape():
    """Event records are built only when asked for; removing a shape and adding one that reuses its slot
    before asking must not change what the last step's events say."""
    w, sensor, ball = sensor_world()
    holder = w.add_body(position=(20, 20), kind="static")
    for _ in range(120):
        w.step(DT)
        raw = w.tables.raw_events             # (not settled: events are found only when asked for)
        if raw is not None and _step.event_rows(raw[0], raw[1], raw[3].keys, raw[3].touching, raw[3].count,
                                                raw[3].step_impulse, raw[4], raw[5])[0].size:    # this step began a contact
            break
    ball_index, ball_shape = ball.index, ball.shapes[0].index
    w.remove(ball)
    reused = holder.add_shape(Circle(0.5), density=1.0)
    assert reused.index == ball_shape            # the slot was reused, by a shape of another body
    ev = w.contact_events()
    assert ev.begin.size == 1
    assert ev.begin[0]["shape_b"] == ball_shape and ev.begin[0]["body_b"] == ball_index != holder.index


def test_a_snapshot_holds_no_unwritten_cache_rows():
    """Two circles keep no contact cache, nor does a pair moving too fast to be recycled (its row is marked:
    cos and sin 0; the contact table's ``cache``): those rows in memory hold whatever the allocation held. A
    snapshot (and a pickle) saves them as zeros, so no stray bytes leave the process and two snapshots of one
    state are the same bytes; the world itself is left as it was."""
    from carom.scenes.rigid_scenes import circle_pile
    w = circle_pile(count=200)
    for _ in range(60):
        w.step(DT)
    keys = w.tables.contacts.keys
    cache = w.tables.contacts.cache
    circles = (w.tables.s_count[keys >> 32] == 1) & (w.tables.s_count[keys & 0xFFFFFFFF] == 1)
    marked = ~circles & (cache[:, _step.CTC] == 0.0) & (cache[:, _step.CTS] == 0.0)
    assert circles.sum() > 100 and marked.sum() > 0
    unwritten = circles | marked
    cache[unwritten] = np.nan                   # stand-in for whatever the memory held
    cache[marked, _step.CTC] = cache[marked, _step.CTS] = 0.0
    live = [a.copy() for a in w.tables.contacts]
    w2 = carom.World.restore(w.snapshot())
    assert np.all(w2.tables.contacts.cache[unwritten] == 0.0)
    assert np.array_equal(w2.tables.contacts.cache[~unwritten], cache[~unwritten])
    for x, y in zip(live, w.tables.contacts):
        assert np.array_equal(x, y, equal_nan=True)
    cache[circles] = 1.0                        # other stray bytes: the saved table is the same
    cache[marked, _step.CNX:] = 1.0
    assert w.snapshot().data == w2.snapshot().data     # (the whole saved state: the same bytes)
    for _ in range(30):
        w.step(DT)
        w2.step(DT)
    assert_same(w, w2)


def test_sensor_events_come_in_the_step_the_overlap_begins_and_ends():
    """A ball crossing a sensor box: the begin event comes in the first step after which the ball overlaps
    the box, the end event in the first step after which it no longer does (checked against the positions
    the steps leave, with the exact circle-box distance). They used to come a step late."""
    w, sensor, ball = sensor_world()
    hx, hy, r = 1.0, 2.0, 0.3

    def overlaps():
        x, y = ball.position
        dx = max(abs(x) - hx, 0.0)
        dy = max(abs(y) - hy, 0.0)
        return math.hypot(dx, dy) < r

    began = ended = None
    was = overlaps()
    for step in range(120):
        w.step(DT)
        now = overlaps()
        ev = w.contact_events()
        if len(ev.begin):
            began = step
        if len(ev.end):
            ended = step
        if now and not was:
            assert len(ev.begin) == 1, step
        if was and not now:
            assert len(ev.end) == 1, step
        was = now
    assert began is not None and ended is not None and began < ended
