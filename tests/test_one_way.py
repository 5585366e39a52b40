"""One-way shapes (platforms): solid from the side their direction points to, passable from the others."""
import math
import pickle

import numpy as np
import pytest

import carom
from carom.errors import CaromError
from carom.geometry import box, Circle

DT = 1.0 / 60.0
G = 10.0
PLATFORM_Y = 3.0


def _world(one_way=(0.0, 1.0), angle=0.0):
    w = carom.World(gravity=(0.0, -G), substeps=4)
    w.sleep_enabled = False
    ground = w.add_body(kind="static", position=(0.0, -0.5))
    ground.add_shape(box(20.0, 0.5))
    platform = w.add_body(kind="static", position=(0.0, PLATFORM_Y), angle=angle)
    shape = platform.add_shape(box(2.0, 0.1), one_way=one_way)
    return w, shape


def _jumper(w, vy, x=0.0, shape=None):
    b = w.add_body(position=(x, 0.25), velocity=(0.0, vy))
    b.add_shape(shape if shape is not None else box(0.25, 0.25))
    return b


@pytest.mark.parametrize("geometry", [box(0.25, 0.25), Circle(0.25)])
def test_a_body_jumps_up_through_a_one_way_platform_and_lands_on_it(geometry):
    """Thrown up at 10 m/s it reaches the ballistic height v²/2g = 5 m above its start (the platform at 3 m
    does not stop it), then falls back onto the platform's top and rests there."""
    w, _ = _world()
    b = _jumper(w, 10.0, shape=geometry)
    top = 0.0
    for _ in range(240):
        w.step(DT)
        top = max(top, b.position[1])
    assert top == pytest.approx(0.25 + 10.0 ** 2 / (2 * G), abs=0.1)
    assert b.position[1] == pytest.approx(PLATFORM_Y + 0.1 + 0.25, abs=0.02)
    assert abs(b.velocity[1]) < 0.05


def test_without_one_way_the_platform_stops_the_jump():
    w, _ = _world(one_way=None)
    b = _jumper(w, 10.0)
    top = 0.0
    for _ in range(120):
        w.step(DT)
        top = max(top, b.position[1])
    assert top < PLATFORM_Y - 0.1 - 0.25 + 0.01
    assert b.position[1] < 1.0


def test_a_fast_body_passes_up_and_is_held_coming_down():
    """At 40 m/s (24 times its half size a step: the continuous stage sweeps it) a box passes up through the
    platform; thrown down onto it from above at 40 m/s it is held."""
    w, _ = _world()
    up = _jumper(w, 40.0)
    up.gravity_scale = 0.0
    for _ in range(10):
        w.step(DT)
    assert up.position[1] > PLATFORM_Y + 2.0
    w, _ = _world()
    down = w.add_body(position=(0.0, PLATFORM_Y + 8.0), velocity=(0.0, -40.0))
    down.add_shape(box(0.25, 0.25))
    for _ in range(60):
        w.step(DT)
    assert down.position[1] == pytest.approx(PLATFORM_Y + 0.1 + 0.25, abs=0.02)


def test_the_direction_turns_with_the_platform():
    """A platform turned upside down (its direction (0, 1) in its own frame points down) stops a jump from
    below and lets a body fall through from above."""
    w, _ = _world(angle=math.pi)
    b = _jumper(w, 10.0)
    top = 0.0
    for _ in range(120):
        w.step(DT)
        top = max(top, b.position[1])
    assert top < PLATFORM_Y - 0.1 - 0.25 + 0.01
    w, _ = _world(angle=math.pi)
    c = w.add_body(position=(0.0, PLATFORM_Y + 2.0))
    c.add_shape(box(0.25, 0.25))
    for _ in range(120):
        w.step(DT)
    assert c.position[1] == pytest.approx(0.25, abs=0.02)


def test_one_way_is_validated_kept_and_can_be_turned_off():
    w, shape = _world()
    assert shape.one_way == (0.0, 1.0)
    body = w.add_body(position=(5.0, 5.0), kind="kinematic")
    before = w.snapshot().data
    for bad in ((0.0, 0.0), (math.nan, 1.0), "up", (True, 1.0), (1.0, 2.0, 3.0)):
        with pytest.raises(CaromError, match="one_way"):
            body.add_shape(Circle(0.1), one_way=bad)
        with pytest.raises(CaromError, match="one_way"):
            shape.one_way = bad
    assert w.snapshot().data == before
    shape.one_way = (0.0, 2.0)
    assert shape.one_way == (0.0, 1.0)
    clone = pickle.loads(pickle.dumps(w))
    assert clone.shape_handle(shape.index).one_way == (0.0, 1.0)
    assert carom.World.restore(w.snapshot()).shape_handle(shape.index).one_way == (0.0, 1.0)
    shape.one_way = None
    assert shape.one_way is None
    b = _jumper(w, 10.0)
    for _ in range(60):
        w.step(DT)
    assert b.position[1] < PLATFORM_Y
