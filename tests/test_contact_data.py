"""Contact data after the step: each point's impulses over the whole step, and each body's contact force.

Checked against closed forms (a resting box carries m·g·dt a step whatever the substep count; a stack's
ground carries the whole stack's weight) and against the momentum each body gains (the impulse of a bounce,
of a sliding box's friction), which the solver does not compute from the contact table."""
import pickle

import numpy as np
import pytest

import carom
from carom.geometry import box, Circle

DT = 1.0 / 60.0
G = 10.0


def _ground(w):
    g = w.add_body(kind="static", position=(0.0, -0.5))
    g.add_shape(box(20.0, 0.5), friction=0.6)
    return g


def _step_impulse(w, body):
    """The sum over the contacts of ``body`` of the step's impulse vectors acting on it."""
    total = np.zeros(2)
    for c in w.contacts():
        n = c["normal"]
        t = np.array([n[1], -n[0]])
        p = c["normal_impulses"].sum() * n + c["tangent_impulses"].sum() * t
        if w.shape_handle(c["shape_b"]).body.index == body.index:
            total += p
        if w.shape_handle(c["shape_a"]).body.index == body.index:
            total -= p
    return total


@pytest.mark.parametrize("substeps", [1, 4, 8])
def test_a_resting_box_carries_m_g_dt_a_step(substeps):
    w = carom.World(gravity=(0.0, -G), substeps=substeps)
    w.sleep_enabled = False
    _ground(w)
    b = w.add_body(position=(0.0, 0.5))
    b.add_shape(box(0.5, 0.5), density=2.0)
    for _ in range(119):
        w.step(DT)
    v0 = np.array(b.velocity, float)
    w.step(DT)
    weight = b.mass * G
    normal = sum(c["normal_impulses"].sum() for c in w.contacts())
    assert normal == pytest.approx(weight * DT, rel=0.01)
    np.testing.assert_allclose(b.contact_force, (0.0, weight), rtol=0.01, atol=1e-5 * weight)
    # the force is the one that acted: with gravity, the box's change of momentum in the step
    np.testing.assert_allclose(b.contact_force + (0.0, -weight), b.mass * (np.array(b.velocity, float) - v0) / DT,
                               rtol=0, atol=1e-6 * weight)


def test_a_stack_rests_its_whole_weight_on_the_ground():
    w = carom.World(gravity=(0.0, -G), substeps=4)
    w.sleep_enabled = False
    ground = _ground(w)
    boxes = []
    for i in range(5):
        b = w.add_body(position=(0.0, 0.5 + i))
        b.add_shape(box(0.5, 0.5), friction=0.6)
        boxes.append(b)
    for _ in range(180):
        w.step(DT)
    weight = sum(b.mass for b in boxes) * G
    np.testing.assert_allclose(ground.contact_force, (0.0, -weight), rtol=0.01, atol=0.01 * weight)
    # each box is at rest: its contacts carry its own weight, whatever rests on it
    for b in boxes:
        np.testing.assert_allclose(b.contact_force, (0.0, b.mass * G), rtol=0.01, atol=0.01 * b.mass * G)
    forces = w.contact_forces()
    np.testing.assert_allclose(forces[ground.index], ground.contact_force)
    np.testing.assert_allclose(forces[boxes[0].index], boxes[0].contact_force)


def test_the_step_impulse_of_a_bounce_is_the_momentum_it_gives():
    """A ball with restitution falling on the ground: in the step of the bounce the contacts' impulse is the
    ball's change of momentum less what gravity gave it (Δp = J + m·g·dt), restitution included."""
    w = carom.World(gravity=(0.0, -G), substeps=4)
    _ground(w)
    ball = w.add_body(position=(0.0, 2.0))
    ball.add_shape(Circle(0.25), restitution=0.8, friction=0.0)
    bounced = False
    for _ in range(120):
        v0 = ball.velocity
        w.step(DT)
        v1 = ball.velocity
        j = _step_impulse(w, ball)
        np.testing.assert_allclose(j, ball.mass * (v1 - v0) - ball.mass * DT * np.array([0.0, -G]),
                                   atol=1e-4 * ball.mass)
        bounced = bounced or (v0[1] < -3.0 and v1[1] > 3.0)
    assert bounced


def test_the_step_impulses_of_a_group_bounce_are_the_momenta_they_give():
    """A ball striking a row of two touching balls, elastic, in one step: the restitution sweeps share the
    collision out among the three points again and again, and the impulses the contact table keeps are those of
    the last sweep, the ones that acted: each ball's change of momentum is the sum of its contacts' impulses (no
    gravity). (A table written after an earlier sweep holds impulses the later sweeps changed.)"""
    w = carom.World(gravity=(0.0, 0.0), substeps=4)
    balls = []
    for x, vx in ((-1.2, 6.0), (0.0, 0.0), (1.0, 0.0)):
        b = w.add_body(position=(x, 0.0), velocity=(vx, 0.0))
        b.add_shape(Circle(0.5), restitution=1.0, friction=0.0)
        balls.append(b)
    met = False
    for _ in range(30):
        v0 = [b.velocity for b in balls]
        w.step(DT)
        for b, before in zip(balls, v0):
            np.testing.assert_allclose(_step_impulse(w, b), b.mass * (b.velocity - before), atol=1e-4 * b.mass)
        met = met or (v0[0][0] > 5.0 and balls[0].velocity[0] < 1.0)
    assert met
    # the strike went down the row: the last ball leaves with most of the speed
    assert balls[2].velocity[0] > 3.0


def test_the_step_impulse_of_friction_is_the_momentum_it_takes():
    w = carom.World(gravity=(0.0, -G), substeps=4)
    _ground(w)
    b = w.add_body(position=(0.0, 0.25), velocity=(3.0, 0.0))
    b.add_shape(box(0.25, 0.25), friction=0.5)
    w.step(DT)
    slid = 0
    for _ in range(20):
        v0 = b.velocity
        w.step(DT)
        v1 = b.velocity
        if v1[0] > 0.1:
            slid += 1
            fx = b.contact_force[0]
            assert fx < 0.0
            assert fx == pytest.approx(b.mass * (v1[0] - v0[0]) / DT, rel=1e-3)
    assert slid > 10


def test_contact_data_survives_pickle_and_is_zero_before_a_step():
    w = carom.World(gravity=(0.0, -G))
    ground = _ground(w)
    b = w.add_body(position=(0.0, 0.5))
    b.add_shape(box(0.5, 0.5))
    np.testing.assert_array_equal(b.contact_force, (0.0, 0.0))
    for _ in range(30):
        w.step(DT)
    w2 = pickle.loads(pickle.dumps(w))
    np.testing.assert_array_equal(w2.contact_forces(), w.contact_forces())
    np.testing.assert_array_equal(w2.body_handle(b.index).contact_force, b.contact_force)
    assert [c["normal_impulses"].tolist() for c in w2.contacts()] == [c["normal_impulses"].tolist()
                                                                       for c in w.contacts()]
    assert ground.contact_force[1] < 0.0
