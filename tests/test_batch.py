"""WorldBatch: world i of a batch is bitwise the same world stepped alone with World.step, whatever the number of
worlds, the thread count and the other worlds; through masked resets; for scenes with joints (a chain of
capsules), a chain shape (the car's bumpy ground, wheel joints) and bullets. The oracle is the single world:
its whole state after the same steps, compared as snapshot bytes (bodies, shapes, broad phase, contacts with
their warm-start impulses, events)."""
import numba
import numpy as np
import pytest

import carom
from carom.batch import WorldBatch
from carom.scenes import rigid_scenes as rs

DT = 1.0 / 60.0


def build(i):
    """World i of a mixed batch: worlds of different kinds and sizes (their body counts differ)."""
    kind = i % 3
    if kind == 0:
        return rs.chain(links=4 + i % 5)
    if kind == 1:
        return rs.car(motor_speed=-6.0 - i % 4, track_length=20.0)
    return rs.bullets(speed=150.0 + 10.0 * (i % 4))


def state(world):
    return world.snapshot().data


def alone_after(i, steps):
    w = build(i)
    for _ in range(steps):
        w.step(DT)
    return w


@pytest.fixture
def threads():
    before = numba.get_num_threads()
    yield
    numba.set_num_threads(before)


@pytest.mark.parametrize("n", [1, 7, 64])
@pytest.mark.parametrize("nthreads", [1, 2])
def test_world_i_is_the_world_stepped_alone(n, nthreads, threads):
    carom.set_num_threads(min(nthreads, numba.config.NUMBA_NUM_THREADS))
    batch = WorldBatch(build, n)
    steps = 12
    for _ in range(steps):
        batch.step(DT)
    for i in range(n):
        assert state(batch.world(i)) == state(alone_after(i, steps)), f"world {i} of {n}"


@pytest.mark.slow
def test_a_thousand_worlds(threads):
    carom.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
    n, steps = 1000, 3
    batch = WorldBatch(build, n)
    for _ in range(steps):
        batch.step(DT)
    for i in range(0, n, 37):
        assert state(batch.world(i)) == state(alone_after(i, steps)), f"world {i} of {n}"
    assert batch.world(n - 1).step_count == steps


def test_masked_reset_and_active_mask():
    n = 7
    batch = WorldBatch(build, n)
    for _ in range(5):
        batch.step(DT)
    mask = np.zeros(n, np.bool_)
    mask[[1, 4]] = True
    batch.reset(mask)
    active = np.ones(n, np.bool_)
    active[6] = False
    for _ in range(4):
        batch.step(DT, active=active)
    for i in range(n):
        steps = 4 if mask[i] else (5 if i == 6 else 9)
        assert state(batch.world(i)) == state(alone_after(i, steps)), f"world {i}"


def test_reset_to_a_snapshot_and_from_a_template():
    template = rs.chain(links=6)
    batch = WorldBatch(template, 5)
    for _ in range(10):
        batch.step(DT)
    snap = batch.world(2).snapshot()
    for _ in range(7):
        batch.step(DT)
    batch.reset(np.array([False, False, False, True, False]), snapshot=snap)
    for _ in range(3):
        batch.step(DT)
    alone = carom.World.restore(template.snapshot())
    for _ in range(13):
        alone.step(DT)
    assert state(batch.world(3)) == state(alone)
    for _ in range(7):
        alone.step(DT)
    assert state(batch.world(0)) == state(alone)


def test_per_world_gravity_is_the_world_with_that_gravity():
    batch = WorldBatch(lambda i: rs.chain(links=5), 3)
    batch.gravity[1] = (3.0, -4.0)
    batch.substeps[2] = 8
    for _ in range(6):
        batch.step(DT)
    alone = rs.chain(links=5)
    alone.gravity = (3.0, -4.0)
    other = rs.chain(links=5)
    other.substeps = 8
    for _ in range(6):
        alone.step(DT)
        other.step(DT)
    assert state(batch.world(1)) == state(alone)
    assert state(batch.world(2)) == state(other)


def test_bulk_state_matches_the_worlds_and_writes_go_through():
    n = 7
    batch = WorldBatch(build, n)
    for _ in range(3):
        batch.step(DT)
    st = batch.state()
    for i in range(n):
        w = batch.world(i)
        rows = np.flatnonzero(st.alive[i])
        bodies = [w.body_handle(int(b)) for b in rows]
        assert np.array_equal(st.positions[i, rows], np.array([b.position for b in bodies]))
        assert np.array_equal(st.angles[i, rows], np.array([b.angle for b in bodies]))
        assert np.array_equal(st.velocities[i, rows], np.array([b.velocity for b in bodies]))
        assert np.isnan(st.positions[i, st.alive.shape[1] - 1]).all() or st.alive[i, -1]
    assert st.alive.sum() == sum(len(batch.world(i).bodies) + 1 for i in range(n))     # (+ its static body)
    # writes: every chain link of a chain batch given a velocity, as World.set_state gives it
    chains = WorldBatch(lambda i: rs.chain(links=5), 4)
    alone = [rs.chain(links=5) for _ in range(4)]
    rows = np.array([2, 3])
    v = np.arange(4 * 2 * 2, dtype=np.float64).reshape(4, 2, 2)
    chains.set_state(rows, velocities=v)
    for i, w in enumerate(alone):
        w.set_state(rows, velocities=v[i])
    chains.step(DT)
    for i, w in enumerate(alone):
        w.step(DT)
        assert state(chains.world(i)) == state(w)


def test_a_world_changed_through_its_handle_is_taken_back():
    batch = WorldBatch(lambda i: rs.chain(links=5), 2)
    alone = rs.chain(links=5)
    batch.step(DT)
    alone.step(DT)
    for w in (batch.world(1), alone):
        w.add_body(position=(3.0, 5.0)).add_shape(carom.geometry.Circle(0.3))
    for _ in range(4):
        batch.step(DT)
        alone.step(DT)
    assert state(batch.world(1)) == state(alone)


def test_bad_use_raises_and_changes_nothing():
    batch = WorldBatch(lambda i: rs.chain(links=4), 3)
    batch.step(DT)
    before = [state(batch.world(i)) for i in range(3)]
    with pytest.raises(carom.CaromError, match="mask"):
        batch.reset(np.ones(4, np.bool_))
    with pytest.raises(carom.CaromError, match="active"):
        batch.step(DT, active=np.ones(2, np.bool_))
    with pytest.raises(carom.CaromError, match="active"):
        batch.step(DT, active=[1, 0, 1])
    with pytest.raises(carom.CaromError, match="dt"):
        batch.step(-1.0)
    with pytest.raises(carom.CaromError, match="velocities"):
        batch.set_state([1, 2], velocities=np.zeros((2, 2, 2)))
    with pytest.raises(carom.CaromError, match="velocities"):
        batch.set_state([1, 2], velocities=np.full((3, 2, 2), np.nan))
    with pytest.raises(carom.CaromError, match="count"):
        WorldBatch(rs.chain(links=3), 0)
    with pytest.raises(carom.CaromError, match="index"):
        batch.world(3)
    batch.gravity = np.zeros((2, 2))
    with pytest.raises(carom.CaromError, match="gravity"):
        batch.step(DT)
    batch.gravity = np.zeros((3, 2)) + (0.0, -10.0)
    assert [state(batch.world(i)) for i in range(3)] == before
    # a world the step refuses: named, the others stepped, it unchanged
    w = batch.world(1)
    body = w.body_handle(2)
    with pytest.raises(carom.SimulationError, match="world 1"):
        w.tables.vel[2] = np.nan          # (what a bug in user code could leave: the step refuses it)
        batch.step(DT)
    assert batch.world(0).step_count == 2
    assert body.alive


def test_a_replaced_world_without_its_initial_state_cannot_be_reset_to_it():
    batch = WorldBatch(lambda i: rs.chain(links=3), 2, keep_initial=False)
    with pytest.raises(carom.CaromError, match="world 0 has no initial state"):
        batch.reset()
    batch.replace(1, rs.chain(links=5))
    batch.step(DT)
    batch.reset(np.array([False, True]))
    assert state(batch.world(1)) == state(rs.chain(links=5))


def test_worlds_the_batch_cannot_run_are_refused():
    w = rs.chain(links=3)
    w.on("begin", lambda e: None)
    with pytest.raises(carom.CaromError, match="handlers"):
        WorldBatch([w])
    with pytest.raises(carom.CaromError, match="twice"):
        WorldBatch([rs.chain(links=3)] * 2)
