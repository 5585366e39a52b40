"""World bounds: bodies that leave a box are reported once, in the step they leave, and removed if asked."""
import math
import pickle

import numpy as np
import pytest

import carom
from carom.errors import CaromError
from carom.geometry import Circle

DT = 1.0 / 60.0


def _world():
    w = carom.World(gravity=(0.0, 0.0))
    w.bounds = ((-5.0, -5.0), (5.0, 5.0))
    balls = []
    for i, v in enumerate((4.0, -7.0, 0.0)):
        b = w.add_body(position=(0.0, 2.0 * i - 2.0), velocity=(v, 0.0))
        b.add_shape(Circle(0.2))
        balls.append(b)
    return w, balls


def test_a_body_is_reported_in_the_step_its_centre_leaves():
    w, balls = _world()
    seen = []
    w.on("leave", lambda body: seen.append((w.step_count, body)))
    reported = {}
    for _ in range(120):
        x0 = [b.position[0] for b in balls]
        w.step(DT)
        left = w.left_bounds()
        for b, before in zip(balls, x0):
            crossed = abs(before) <= 5.0 < abs(b.position[0])
            assert (b in left) == crossed
            if crossed:
                reported[b.index] = w.step_count
    # the fast ball leaves first, the slow one later, the resting one never; each once
    assert sorted(reported) == sorted([balls[0].index, balls[1].index])
    assert reported[balls[1].index] < reported[balls[0].index]
    assert [(s, b) for s, b in seen] == [(reported[b.index], b) for b in (balls[1], balls[0])]
    assert all(b.alive for b in balls)


def test_bodies_that_leave_are_removed_when_asked():
    w, balls = _world()
    w.remove_outside = True
    names = []
    w.on("leave", lambda body: names.append(body.alive))
    for _ in range(120):
        w.step(DT)
    assert not balls[0].alive and not balls[1].alive and balls[2].alive
    assert names == [True, True]           # handlers see the body before it goes
    assert w.body_count == 1               # the resting ball


def test_static_bodies_and_bodies_already_outside_are_not_reported():
    w = carom.World(gravity=(0.0, -10.0))
    outside = w.add_body(position=(50.0, 0.0))
    outside.add_shape(Circle(0.2))
    ground = w.add_body(kind="static", position=(0.0, -3.0))
    ground.add_shape(Circle(1.0))
    w.bounds = ((-10.0, -10.0), (10.0, 10.0))
    for _ in range(30):
        w.step(DT)
        assert w.left_bounds() == []
    w.bounds = None
    faller = w.add_body(position=(-5.0, 9.0))
    faller.add_shape(Circle(0.2))
    for _ in range(200):
        w.step(DT)
        assert w.left_bounds() == []


def test_bounds_are_validated_and_kept_in_snapshots():
    w, balls = _world()
    before = w.snapshot().data
    for bad in (((0, 0), (0, 1)), ((1, 1), (0, 2)), ((math.nan, 0), (1, 1)), ((0, 0), (1e30, 1)), "box",
                ((0, 0),), ((True, 0), (1, 1))):
        with pytest.raises(CaromError, match="bounds"):
            w.bounds = bad
    with pytest.raises(CaromError, match="remove_outside"):
        w.remove_outside = "yes"
    assert w.snapshot().data == before
    assert w.bounds == ((-5.0, -5.0), (5.0, 5.0))
    w.remove_outside = True
    for _ in range(70):
        w.step(DT)
    for clone in (pickle.loads(pickle.dumps(w)), carom.World.restore(w.snapshot())):
        assert clone.bounds == w.bounds and clone.remove_outside
        assert [b.index for b in clone.left_bounds()] == [b.index for b in w.left_bounds()]
        for _ in range(60):
            clone.step(DT)
        assert clone.body_count == 1
