"""Bullets stop at moving bodies: a bullet is swept against the other bodies along their own motion in the
step, and carried with the body it hits (``carom.rigid._step._continuous_pass``).

The setup (``tests/plate_shots.py``): a free plate 0.1 × 1 m of density 50, no gravity, shot at by four kinds of
bullet (a circle of radius 0.05 m, a thin box 0.02 × 0.2 m, a box 0.5 m square, a capsule 0.44 × 0.04 m) at
10-400 m/s, aimed within the plate's span; a shot passes when the bullet's centre goes through the plate.
Swept against the plate's final pose only (Box2D v3's way, and carom's before), the bullets passed a plate
spinning at up to 30 rad/s and coming at them at up to 20 m/s in 5-27 of 40 shots at every speed.
"""
import pytest

import plate_shots

KINDS = list(plate_shots.BULLETS)


@pytest.mark.parametrize("kind", KINDS)
def test_no_bullet_passes_a_moving_plate(kind):
    passed = {v: plate_shots.passes(kind, v, shots=40, moving=True) for v in plate_shots.SPEEDS}
    assert passed == {v: 0 for v in plate_shots.SPEEDS}


@pytest.mark.parametrize("kind", KINDS)
def test_no_bullet_passes_a_plate_at_rest(kind):
    passed = {v: plate_shots.passes(kind, v, shots=10, seed=1) for v in (100.0, 400.0)}
    assert passed == {100.0: 0, 400.0: 0}


def test_a_shot_through_the_plate_counts_as_a_pass():
    """The pass criterion can fail: the same shots by bodies that are not bullets (swept against static shapes
    only) go through the plate at 400 m/s, and a slow one does not."""
    assert plate_shots.shot("circle", 400.0, 0.1, bullet=False)
    assert plate_shots.shot("box", 400.0, -0.2, 0.3, bullet=False)
    assert not plate_shots.shot("circle", 5.0, 0.1, bullet=False)


def test_a_rain_of_fast_bodies_is_swept_in_parts_as_in_one():
    """The continuous stage sweeps its items (each fast body's shapes) in parts of whole bodies
    (``_continuous._continuous_parts``): 400 fast bodies (small circles, boxes and two-shape bodies) and 40 bullets
    falling onto a thin static floor and a few moving plates, with one and two threads: the same world bit for
    bit, and none of the 400 through the floor. (A bullet overtaken by a faster body is carried with it, and
    can be carried into the floor that stopped that body: a known limit, not tested here.)"""
    import numpy as np
    import carom
    from carom.geometry import Circle, box

    def run(threads):
        carom.set_num_threads(threads, adaptive=False)
        w = carom.World(gravity=(0.0, -10.0))
        w.static_body.add_shape(box(30.0, 0.02))
        rng = np.random.default_rng(4)
        for k in range(440):
            b = w.add_body(position=(rng.uniform(-28.0, 28.0), rng.uniform(0.5, 2.0)),
                           velocity=(rng.uniform(-2.0, 2.0), -rng.uniform(25.0, 40.0)), bullet=k >= 400)
            b.add_shape(Circle(0.04) if k % 3 else box(0.05, 0.03))
            if k % 7 == 0:
                b.add_shape(Circle(0.03, center=(0.06, 0.0)))
        for k in range(4):
            plate = w.add_body(position=(-20.0 + 12.0 * k, 0.3), angular_velocity=3.0)
            plate.add_shape(box(1.0, 0.05), density=5.0)
        for _ in range(12):
            w.step(1.0 / 60.0)
        t = w.tables
        return t.com[:t.n_bodies].copy(), t.angle[:t.n_bodies].copy(), t.vel[:t.n_bodies].copy()

    before = carom.get_num_threads()
    try:
        one, two = run(1), run(2)
    finally:
        carom.set_num_threads(before)
    for a, b in zip(one, two):
        assert a.tobytes() == b.tobytes()
    assert (one[0][1:401, 1] > 0.0).all()                 # (none through the floor, 0.02 m thick)
