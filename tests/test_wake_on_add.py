"""A shape added near sleeping bodies wakes the ones it may touch (``shape.wake_touching``); the query over every
shape is skipped when no sleeping body's shape can reach the new shape's box (``_sleeping_shape_near``).
Checked against the query alone, on shapes dropped at random near and far from a sleeping pile."""
import numpy as np
import pytest

from carom import World
from carom.geometry import Capsule, Circle, box
from carom.rigid import shape as _shape

DT = 1.0 / 60.0


def _sleeping_pile():
    w = World(gravity=(0, -10))
    w.static_body.add_shape(box(8.0, 0.5, center=(0.0, -0.5)))
    for i in range(12):
        b = w.add_body(position=(-4.0 + 0.7 * i, 0.3 + 0.05 * (i % 3)), angle=0.3 * i)
        b.add_shape(Capsule((-0.2, 0.0), (0.2, 0.0), 0.1) if i % 2 else box(0.25, 0.15), density=1.0)
    for _ in range(400):
        w.step(DT)
    assert w.awake_count == 0
    return w


@pytest.mark.parametrize("seed", range(3))
def test_waking_on_add_is_the_querys_waking(seed, monkeypatch):
    base = _sleeping_pile()
    rng = np.random.default_rng(seed)
    woke = []
    for trial in range(25):
        x, y = rng.uniform(-6.0, 6.0), rng.uniform(0.0, 2.5)
        size = rng.uniform(0.02, 0.6)
        worlds = []
        for skip in (True, False):
            w = World.restore(base.snapshot())
            if not skip:        # the query alone, as before the check
                monkeypatch.setattr(_shape, "_sleeping_shape_near", lambda t, lower, upper: True)
            body = w.add_body(position=(x, y), kind="kinematic" if trial % 3 == 0 else "dynamic")
            body.add_shape(Circle(size), density=1.0)
            monkeypatch.undo()
            worlds.append(w)
        fast, query = worlds
        np.testing.assert_array_equal(fast.tables.asleep, query.tables.asleep)
        woke.append(fast.awake_count > 1)
        for _ in range(20):
            fast.step(DT)
            query.step(DT)
        np.testing.assert_array_equal(fast.positions, query.positions)
        np.testing.assert_array_equal(fast.tables.asleep, query.tables.asleep)
    assert any(woke) and not all(woke)


def test_the_check_finds_every_shape_the_query_finds():
    w = _sleeping_pile()
    t = w.tables
    rng = np.random.default_rng(7)
    near = far = 0
    for _ in range(200):
        lx, ly = rng.uniform(-6.0, 6.0), rng.uniform(-0.5, 1.5)
        ux, uy = lx + rng.uniform(0.0, 0.3), ly + rng.uniform(0.0, 0.3)
        hits = w.query_aabb((lx, ly), (ux, uy))
        if any(t.asleep[h.body.index] for h in hits):
            near += 1
            assert _shape._sleeping_shape_near(t, (lx, ly), (ux, uy))
        elif not _shape._sleeping_shape_near(t, (lx, ly), (ux, uy)):
            far += 1
    assert near > 10 and far > 10
