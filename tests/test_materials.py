"""Surface materials: tangent speed (conveyor belts) and rolling resistance, against closed forms."""
import copy
import math
import pickle

import numpy as np
import pytest

import carom
from carom.errors import CaromError
from carom.geometry import box, Circle

DT = 1.0 / 60.0
G = 10.0


def _belt_world(speed, belt_first):
    w = carom.World(gravity=(0.0, -G), substeps=4)
    w.sleep_enabled = False

    def belt():
        g = w.add_body(kind="static", position=(0.0, -0.1))
        return g.add_shape(box(30.0, 0.1), friction=0.8, tangent_speed=speed)

    def load():
        b = w.add_body(position=(0.0, 0.25))
        b.add_shape(box(0.25, 0.25), friction=0.8)
        return b

    if belt_first:
        s = belt()
        b = load()
    else:
        b = load()
        s = belt()
    return w, s, b


@pytest.mark.parametrize("belt_first", [True, False])
@pytest.mark.parametrize("speed", [2.0, -1.5])
def test_a_conveyor_belt_carries_a_box_at_its_tangent_speed(speed, belt_first):
    """Whichever shape comes first in the contact (the normal's direction flips with it), a box on a belt's top
    face is carried at the belt's tangent speed within 2 % (positive: clockwise around the belt, so towards +x
    on its top face)."""
    w, _, b = _belt_world(speed, belt_first)
    for _ in range(120):
        w.step(DT)
    assert b.velocity[0] == pytest.approx(speed, rel=0.02)
    assert abs(b.velocity[1]) < 0.01
    assert abs(b.angle) < 0.01


def test_a_belt_without_tangent_speed_holds_the_box_still():
    w, _, b = _belt_world(0.0, True)
    for _ in range(60):
        w.step(DT)
    assert abs(b.velocity[0]) < 1e-3


def _rolling_ball(resistance, v0=3.0, r=0.5):
    w = carom.World(gravity=(0.0, -G), substeps=4)
    w.sleep_enabled = False
    g = w.add_body(kind="static", position=(0.0, -0.5))
    g.add_shape(box(200.0, 0.5), friction=0.8)
    ball = w.add_body(position=(-50.0, r), velocity=(v0, 0.0), angular_velocity=-v0 / r)
    ball.add_shape(Circle(r), friction=0.8, rolling_resistance=resistance)
    return w, ball


def test_rolling_resistance_stops_a_ball_where_the_closed_form_says():
    """A disc rolling without slipping under a resisting torque c·r·m·g decelerates at (2/3)·c·g (the torque
    acts on I + m·r² = 1.5·m·r²): from 3 m/s with c = 0.1 it stops after v²/(2a) = 6.75 m."""
    c, v0 = 0.1, 3.0
    w, ball = _rolling_ball(c, v0)
    x0 = ball.position[0]
    for _ in range(int(8.0 / DT)):
        w.step(DT)
    a = 2.0 / 3.0 * c * G
    assert abs(ball.velocity[0]) < 0.01
    assert ball.position[0] - x0 == pytest.approx(v0 * v0 / (2.0 * a), rel=0.05)


def test_a_ball_without_rolling_resistance_keeps_rolling():
    w, ball = _rolling_ball(0.0)
    for _ in range(int(5.0 / DT)):
        w.step(DT)
    assert ball.velocity[0] > 2.95


def test_materials_are_validated_and_the_world_stays_unchanged():
    w, belt, b = _belt_world(1.0, True)
    w.step(DT)
    before = w.snapshot().data
    for kwargs in ({"tangent_speed": math.nan}, {"tangent_speed": 1e9}, {"tangent_speed": True},
                   {"tangent_speed": "1"}, {"rolling_resistance": -0.1}, {"rolling_resistance": math.inf},
                   {"rolling_resistance": None}):
        with pytest.raises(CaromError, match=next(iter(kwargs))):
            b.add_shape(Circle(0.1), **kwargs)
        name, value = next(iter(kwargs.items()))
        with pytest.raises(CaromError, match=name):
            setattr(belt, name, value)
    assert w.snapshot().data == before
    belt.tangent_speed = -2.0
    belt.rolling_resistance = 0.3
    assert (belt.tangent_speed, belt.rolling_resistance) == (-2.0, 0.3)


def test_materials_survive_snapshots_and_continue_bitwise():
    w, ball = _rolling_ball(0.05)
    for _ in range(30):
        w.step(DT)
    for clone in (pickle.loads(pickle.dumps(w)), copy.deepcopy(w), carom.World.restore(w.snapshot())):
        assert clone.shape_handle(ball.shapes[0].index).rolling_resistance == 0.05
        for _ in range(30):
            clone.step(DT)
        ref = copy.deepcopy(w)
        for _ in range(30):
            ref.step(DT)
        np.testing.assert_array_equal(clone.positions, ref.positions)
        np.testing.assert_array_equal(clone.velocities, ref.velocities)


def _one_material_world(kind, rules, odd_shape):
    """A pile on a floor, every shape of one material (friction 0.4, restitution 0.3) and one radius (boxes: 0;
    balls: 0.25, the floor a capsule of that radius); with ``odd_shape``, one more static shape far away, touching
    nothing, of another friction."""
    from carom.geometry import Capsule
    w = carom.World(gravity=(0.0, -G), friction_mixing=rules[0], restitution_mixing=rules[1])
    w.sleep_enabled = False
    floor = w.add_body(kind="static")
    radius = 0.0 if kind == "boxes" else 0.25
    if kind == "boxes":
        floor.add_shape(box(8.0, 0.5), friction=0.4, restitution=0.3)
    else:
        floor.add_shape(Capsule((-8.0, -0.25), (8.0, -0.25), radius), friction=0.4, restitution=0.3)
    for i in range(24):
        b = w.add_body(position=(-2.0 + 0.55 * (i % 8) + 0.1 * (i // 8), 1.0 + 0.6 * (i // 8)), angle=0.1 * i)
        b.add_shape(box(0.25, 0.25) if kind == "boxes" else Circle(radius), density=1.0, friction=0.4,
                    restitution=0.3)
    if odd_shape:
        w.add_body(kind="static", position=(500.0, 500.0)).add_shape(box(1.0, 1.0), friction=0.9)
    return w


@pytest.mark.parametrize("rules", [("sqrt", "max"), ("min", "mean"), ("multiply", "min"), ("max", "multiply")])
@pytest.mark.parametrize("kind", ["boxes", "balls"])
def test_a_world_of_one_material_steps_bitwise_as_the_per_contact_path(kind, rules):
    """Where every shape has bitwise the same friction, restitution and radius, the prepare stage takes them once
    for every contact (``_prepare.shared_material``) instead of reading each contact's two shapes. One far shape
    of another friction, touching nothing, sends the same scene down the per-contact path: every body moves
    bitwise the same, bounces included, for each mixing rule."""
    from carom.rigid._prepare import shared_material
    from carom.rigid._contact_rows import MIX_SQRT

    def shared(w):
        t = w.tables
        n = t.n_shapes
        return shared_material(t.s_friction[:n], t.s_restitution[:n], t.s_radius[:n], MIX_SQRT, MIX_SQRT)

    one, two = _one_material_world(kind, rules, False), _one_material_world(kind, rules, True)
    # (each world takes the path the test means: else it would compare a path with itself)
    assert shared(one).shape == (3,) and shared(two).shape == (0,)
    touched = 0
    for _ in range(90):
        one.step(DT)
        two.step(DT)
        touched = max(touched, len(one.contact_data().body_a))
    assert touched > 20
    n = one.tables.n_bodies
    for name in ("com", "angle", "vel", "angvel"):
        a, b = getattr(one.tables, name)[:n], getattr(two.tables, name)[:n]
        assert a.tobytes() == b.tobytes(), name


def test_shared_material_compares_bits():
    """0.0 and −0.0 are not one material (mixing them gives −0.0 or 0.0 by which comes first), and any other
    difference in any of the three values ends the shared path; an equal set gives the mixed values."""
    from carom.rigid._prepare import shared_material
    from carom.rigid._contact_rows import MIX_SQRT, MIX_MAX, MIX_MEAN
    f = np.full(5, 0.6)
    e = np.full(5, 0.2)
    r = np.zeros(5)
    got = shared_material(f, e, r, MIX_SQRT, MIX_MAX)
    assert got.tolist() == [math.sqrt(0.6 * 0.6), 0.2, 0.0]
    assert shared_material(f, e, r, MIX_MEAN, MIX_MEAN).tolist() == [0.5 * (0.6 + 0.6), 0.5 * (0.2 + 0.2), 0.0]
    for arrays in range(3):
        for value in (-0.0, 0.6000000000000001, 0.0):
            changed = [f.copy(), e.copy(), r.copy()]
            if changed[arrays][3] == value:
                continue
            changed[arrays][3] = value
            assert shared_material(*changed, MIX_SQRT, MIX_MAX).shape == (0,)
    assert shared_material(f[:0], e[:0], r[:0], MIX_SQRT, MIX_MAX).shape == (0,)
