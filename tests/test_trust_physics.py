"""Physics you can trust: stacks stand, walls hold, bounces keep their energy, speeds stay capped.

Every scene here was also run in Box2D v3 (3.2, same dt 1/60, 4 substeps, sleep off); its figures are quoted
beside each bound. The bounds are the issue's: no larger than Box2D's where Box2D is the yardstick, closed
forms (e², energy) elsewhere.
"""
import math

import numpy as np
import pytest

import carom
from carom.constants import MAX_TRANSLATION_SPEED, MAX_ROTATION
from carom.geometry import Capsule, Circle, box

DT = 1.0 / 60.0


def _stack(n, seconds, substeps=4):
    """n boxes of 1 m stacked on the ground, friction 0.6, sleep off: (largest sideways drift of any box over
    the run, top box's final height)."""
    w = carom.World(gravity=(0, -10), substeps=substeps)
    w.sleep_enabled = False
    g = w.add_body(kind="static", position=(0, -1))
    g.add_shape(box(20, 1), friction=0.6)
    for i in range(n):
        b = w.add_body(position=(0, 0.5 + i))
        b.add_shape(box(0.5, 0.5), density=1.0, friction=0.6)
    drift = 0.0
    for _ in range(int(round(seconds / DT))):
        w.step(DT)
        drift = max(drift, float(np.abs(w.positions[1:, 0]).max()))
    return drift, float(w.positions[-1, 1])


def test_twenty_box_stack_stands_for_a_minute():
    """Box2D v3: 16.4 mm of drift over 60 s, top box at 19.36 m. carom: fell over within 10 s (16 m of drift)
    before this test; 21.6 mm, taken while the stack settled in its first two seconds, with each contact's
    points solved in one order; 0.07 mm since odd substeps solve them in the reverse order and friction is
    solved in the relax sweep only (``carom.rigid._solver``'s docstring). Asserted: the issue's 2 cm."""
    drift, top = _stack(20, 60.0)
    assert drift < 0.02
    assert top > 19.0


def test_ten_box_stack_drifts_no_more_than_box2d():
    # Box2D v3: 6.3 mm over 10 s (the issue quotes 0.6 cm); carom: 4.5 mm with one point order, 0.05 mm now
    drift, top = _stack(10, 10.0)
    assert drift <= 0.006
    assert top > 9.3


def _shots(make_shape, speed, bullet, shots=40, seconds=1.0, seed=7):
    """``shots`` projectiles at random angles and heights fired in +x at a static wall 0.1 m thick at x = 0,
    gravity off; the projectiles never meet each other (a shared negative group). Returns how many end up
    beyond the wall."""
    rng = np.random.default_rng(seed)
    w = carom.World(gravity=(0, 0), substeps=4)
    wall = w.add_body(kind="static")
    wall.add_shape(box(0.05, 60.0), friction=0.6)
    bodies = []
    for k in range(shots):
        b = w.add_body(position=(-2.0, 2.5 * (k - shots / 2) + 1.25), angle=float(rng.uniform(0, 2 * math.pi)),
                       velocity=(speed, 0.0), bullet=bullet)
        b.add_shape(make_shape(), density=1.0, friction=0.6, group=-1)
        bodies.append(b)
    for _ in range(int(round(seconds / DT))):
        w.step(DT)
    return sum(1 for b in bodies if b.world_center[0] > 0.0)


SHAPES = {
    "thin box": lambda: box(0.01, 0.1),
    "capsule": lambda: Capsule((-0.2, 0.0), (0.2, 0.0), 0.02),
    "0.5 m box": lambda: box(0.25, 0.25),
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_nothing_passes_a_thin_static_wall(shape):
    # Box2D v3: 0 of 40 at every speed; carom before: up to 37 of 40
    for speed in (10.0, 20.0, 50.0, 100.0):
        assert _shots(SHAPES[shape], speed, bullet=False) == 0, speed
    for speed in (200.0, 400.0):
        assert _shots(SHAPES[shape], speed, bullet=True) == 0, speed


def test_the_wall_test_can_fail():
    """The same scene with the wall made a sensor (nothing stops the shots): every shot passes, so the
    counts above are not zero by construction."""
    w = carom.World(gravity=(0, 0))
    wall = w.add_body(kind="static")
    wall.add_shape(box(0.05, 50.0), sensor=True)
    b = w.add_body(position=(-2.0, 0.0), velocity=(50.0, 0.0))
    b.add_shape(box(0.01, 0.1))
    for _ in range(60):
        w.step(DT)
    assert b.world_center[0] > 0.0


@pytest.mark.parametrize("projectile", ["circle", "thin box"])
def test_a_bullet_does_not_pass_a_dynamic_plate(projectile):
    """A bullet at 390 m/s against a free plate 0.1 × 4 m: it must hit it (the plate takes momentum) and
    never be found beyond the plate's far face within its length. (A shot may glance off an end of a plate
    that a hit set turning: counted as passing only if it crossed the plate's body.) Box2D v3: 0 of 40."""
    rng = np.random.default_rng(3)
    passed = 0
    for k in range(20):
        w = carom.World(gravity=(0, 0), substeps=4)
        plate = w.add_body()
        plate.add_shape(box(0.05, 2.0), density=1.0)
        shot = w.add_body(position=(-3.0, float(rng.uniform(-1, 1))), angle=float(rng.uniform(0, 2 * math.pi)),
                          velocity=(390.0, 0.0), bullet=True)
        shot.add_shape(Circle(0.05) if projectile == "circle" else box(0.01, 0.1), density=1.0)
        crossed = False
        for _ in range(30):
            w.step(DT)
            c, s = math.cos(plate.angle), math.sin(plate.angle)
            d = shot.world_center - plate.world_center
            lx, ly = c * d[0] + s * d[1], -s * d[0] + c * d[1]
            crossed = crossed or (lx > 0.05 and abs(ly) < 2.0)
        passed += crossed
        assert abs(plate.velocity[0]) > 0.5        # it was hit
    assert passed == 0


def test_a_plain_body_does_pass_a_dynamic_plate():
    """Without bullet=True a thin fast body crosses a thin dynamic plate (only bullets sweep against dynamic
    bodies, as in Box2D): the bullet test above can fail."""
    w = carom.World(gravity=(0, 0), substeps=4)
    plate = w.add_body()
    plate.add_shape(box(0.05, 2.0), density=1.0)
    shot = w.add_body(position=(-3.0, 0.3), velocity=(390.0, 0.0))
    shot.add_shape(Circle(0.05), density=1.0)
    for _ in range(30):
        w.step(DT)
    assert shot.world_center[0] > plate.world_center[0] + 0.05


@pytest.mark.parametrize("speed", [1e3, 1e6, 1e12])
def test_no_body_leaves_a_step_faster_than_the_cap(speed):
    w = carom.World(gravity=(0, -10))
    g = w.add_body(kind="static")
    g.add_shape(box(50, 1), restitution=1.0)
    b = w.add_body(position=(0.3, 3.0), angle=0.2, velocity=(0.0, -speed), angular_velocity=speed)
    b.add_shape(box(0.5, 0.5), restitution=1.0)
    max_w = MAX_ROTATION / DT
    for _ in range(30):
        w.step(DT)
        assert np.hypot(*b.velocity) <= MAX_TRANSLATION_SPEED
        assert abs(b.angular_velocity) <= max_w
        assert np.all(np.isfinite(b.position))
        assert b.world_center[1] > 1.0        # and it never went through the ground


def _apexes(e, bounces):
    w = carom.World(gravity=(0, -10), substeps=4)
    w.sleep_enabled = False
    g = w.add_body(kind="static", position=(0, -1))
    g.add_shape(box(20, 1), friction=0.0, restitution=e)
    ball = w.add_body(position=(0, 1.5))
    ball.add_shape(Circle(0.5), friction=0.0, restitution=e)
    apexes, rising, peak = [], False, 0.0
    for _ in range(60 * 12):
        w.step(DT)
        y, vy = ball.position[1] - 0.5, ball.velocity[1]
        if vy > 0:
            rising, peak = True, max(peak, y)
        elif rising:
            apexes.append(max(peak, y))
            rising, peak = False, 0.0
            if len(apexes) == bounces:
                break
    return [1.0] + apexes


def test_bounce_apex_ratios_are_e_squared():
    """Apex ratios within 3 % of e² = 0.64 (Box2D v3: 0.623, 0.619, 0.613; carom before: 6-15 % low)."""
    apexes = _apexes(0.8, 3)
    ratios = [b / a for a, b in zip(apexes, apexes[1:])]
    assert len(ratios) == 3
    for r in ratios:
        assert abs(r / 0.64 - 1.0) < 0.03, ratios


def test_elastic_gas_keeps_its_energy_and_never_gains_any():
    """50 frictionless balls with restitution 1 in a closed box, gravity off: the kinetic energy never rises
    (restitution answers each contact's approach speed, and must not add to it), and after 20 s it is within
    2 % of the start. Measured: 99.9 % left, never more than 1 + 4e-7 of it (pymunk 7.3: 100.0 %; Box2D v3
    61 %; carom kept 72 % when only the bouncing points took part in the restitution sweeps, and gained up to
    0.9 % on the way when the others held with a target of 0 and clamped at the last substep's impulse; see
    ``carom.rigid._solver._restitute``)."""
    rng = np.random.default_rng(5)
    w = carom.World(gravity=(0, 0), substeps=4)
    walls = w.add_body(kind="static")
    for cx, cy, hx, hy in ((0, -5.5, 6, 0.5), (0, 5.5, 6, 0.5), (-5.5, 0, 0.5, 6), (5.5, 0, 0.5, 6)):
        walls.add_shape(box(hx, hy, center=(cx, cy)), friction=0.0, restitution=1.0)
    placed = []
    while len(placed) < 50:
        p = rng.uniform(-4.6, 4.6, 2)
        if all(np.hypot(*(p - q)) > 0.6 for q in placed):
            placed.append(p)
    balls = []
    for p in placed:
        a = rng.uniform(0, 2 * math.pi)
        b = w.add_body(position=tuple(p), velocity=(5 * math.cos(a), 5 * math.sin(a)))
        b.add_shape(Circle(0.25), friction=0.0, restitution=1.0)
        balls.append(b)
    mass = balls[0].mass

    def energy():
        return 0.5 * mass * float((w.velocities ** 2).sum())

    e0 = energy()
    for _ in range(20 * 60):
        w.step(DT)
        assert energy() <= 1.001 * e0
    assert energy() > 0.98 * e0


def test_seeded_churn_with_bounces_snapshots_and_sleep():
    """Add, remove, impulses (some enormous), bouncy shapes, sleep and wake, snapshots restored in place of
    the world: after every step every body is finite, within the speed caps and inside the world, and the
    counts add up."""
    rng = np.random.default_rng(23)
    w = carom.World(gravity=(0, -10))
    w.static_body.add_shape(box(20, 1, center=(0, -1)), restitution=0.5)
    w.static_body.add_shape(box(1, 10, center=(-20, 9)))
    w.static_body.add_shape(box(1, 10, center=(20, 9)))
    w.static_body.add_shape(box(0.05, 4, center=(8, 4)))          # a thin wall
    live = 0
    max_w = MAX_ROTATION / DT
    for step in range(500):
        op = int(rng.integers(12))
        bodies = [b for b in w.bodies if b.kind == "dynamic"]
        if op < 3 or not bodies:
            b = w.add_body(position=(rng.uniform(-15, 15), rng.uniform(1, 15)), angle=rng.uniform(0, 6),
                           bullet=bool(rng.integers(2)))
            e = float(rng.choice([0.0, 0.5, 1.0]))
            if rng.integers(2):
                b.add_shape(Circle(rng.uniform(0.1, 0.5)), restitution=e)
            else:
                b.add_shape(box(rng.uniform(0.02, 0.5), rng.uniform(0.1, 0.5)), restitution=e)
            live += 1
        elif op == 3:
            w.remove(bodies[int(rng.integers(len(bodies)))])
            live -= 1
        elif op == 4:
            bodies[int(rng.integers(len(bodies)))].sleep()
        elif op == 5:
            bodies[int(rng.integers(len(bodies)))].wake()
        elif op == 6:
            b = bodies[int(rng.integers(len(bodies)))]
            b.apply_impulse((rng.normal() * 10.0 ** rng.uniform(0, 6), rng.normal() * 1e3), point=tuple(b.position))
        elif op == 7:
            w = carom.World.restore(w.snapshot())
        w.step(DT)
        speeds = np.hypot(*w.velocities.T)
        assert np.all(np.isfinite(w.positions)) and np.all(np.isfinite(w.velocities))
        assert np.all(np.isfinite(w.angular_velocities))
        assert np.all(speeds <= MAX_TRANSLATION_SPEED)
        assert np.all(np.abs(w.angular_velocities) <= max_w)
        assert w.body_count == live              # (the world's own static body is not counted)
        assert w.awake_count <= w.body_count
