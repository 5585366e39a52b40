"""The joint scenes (pendulum, chain, bridge, ragdolls, car, cradle, joint_grid), the joints in the pictures and the
demo window's mouse joint, and the joint_grid benchmark's translation to pymunk and pybox2d. No timing is
asserted."""
import math
import os

import numpy as np
import pytest

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

from PIL import Image  # noqa: E402

import carom  # noqa: E402
from carom import bench, joints  # noqa: E402
from carom.geometry import Circle, box  # noqa: E402
from carom.render import catalog, render  # noqa: E402
from carom.render.draw import JOINT, JOINT_AXIS, Dot, Lines, View, describe, describe_joints  # noqa: E402
from carom.scenes import rigid_scenes as R  # noqa: E402

DT = 1.0 / 60.0
#: each scene small enough for a quick test
SMALL = {"pendulum": {}, "chain": dict(links=12), "bridge": dict(planks=16, drops=4), "ragdolls": dict(count=4),
         "car": {}, "cradle": {}, "joint_grid": dict(n=10)}


def _steps(world, n):
    for _ in range(n):
        world.step(DT)


@pytest.mark.parametrize("name", list(SMALL))
def test_joint_scene_is_registered_builds_and_steps(name):
    assert name in R.SCENES and name in catalog.scenes()
    world = getattr(R, name)(**SMALL[name])
    assert world.joint_count > 0
    _steps(world, 45)
    assert np.isfinite(world.positions).all() and np.isfinite(world.velocities).all()
    assert np.hypot(*world.velocities.T).max() < 50.0
    gap = max(np.hypot(*(j.anchor_a - j.anchor_b)) for j in world.joints if j.kind == "revolute") \
        if any(j.kind == "revolute" for j in world.joints) else 0.0
    assert gap < 0.25                                              # the revolute joints still hold


def test_joint_grid_is_box2ds_layout():
    """n × n circles 1 m apart, the top row's seven middle bodies static, every body pinned to its left and upper
    neighbours except static to static, and the circles never collide with each other."""
    n = 10
    world = R.joint_grid(n=n)
    bodies = world.bodies
    assert len(bodies) == n * n
    static = sorted(tuple(b.position) for b in bodies if b.kind == "static")
    assert static == [(float(i), 0.0) for i in range(2, 9)]
    assert world.joint_count == 2 * n * (n - 1) - 6
    assert {j.kind for j in world.joints} == {"revolute"}
    for j in world.joints:
        assert np.hypot(*(j.anchor_a - j.anchor_b)) < 1e-12
        d = j.body_b.position - j.body_a.position
        assert np.hypot(*d) == pytest.approx(1.0)
        np.testing.assert_allclose(j.anchor_a, j.body_a.position + 0.5 * d, atol=1e-12)
    _steps(world, 30)
    assert len(world.contacts()) == 0


def test_pendulum_swings_through_the_bottom():
    world = R.pendulum()
    bob = world.bodies[0]
    pin = np.array((-2.5, 3.0))
    assert np.hypot(*(bob.position - pin)) == pytest.approx(1.0)
    xs = []
    for _ in range(70):
        world.step(DT)
        xs.append(bob.position[0] - pin[0])
        assert np.hypot(*(bob.position - pin)) == pytest.approx(1.0, abs=0.01)
    # released 60° to the right, it crosses under the pin within a quarter period (≈ 0.55 s) and swings left
    assert xs[0] > 0.8 and min(xs) < -0.5


#: the joints' warm start in the substeps after the first (``_solver._integrate_velocity``'s carried velocity
#: change) reapplies the impulses of the substep before along that substep's directions, while a joint's turn
#: with its bodies: each substep pushes a swinging body a little along its motion, and swinging scenes gain
#: energy (a pendulum doubles its energy in 10 s with 4 substeps; with 1 substep it keeps it within 5 %)


def test_pendulum_keeps_its_energy():
    """A 1 m pendulum released 60° aside: over 10 s its energy stays within 5 % (a soft step loses a little)."""
    world = R.pendulum()
    bob = world.bodies[0]

    def energy():
        v = bob.velocity
        return 0.5 * (v @ v) + 0.5 * bob.inertia / bob.mass * bob.angular_velocity ** 2 + 10.0 * bob.position[1]

    e0 = energy() - 10.0 * 2.0                                     # from the bottom of the swing (y = 2)
    for _ in range(10):
        _steps(world, 60)
        assert abs(energy() - 10.0 * 2.0 - e0) < 0.05 * e0


def test_chain_swings_down_and_hangs_below_its_anchor():
    world = R.chain()
    links = [b for b in world.bodies if b.shapes[0].geometry.kind == carom.geometry.CAPSULE]
    assert len(links) == 40
    top = np.array((0.0, 21.0))
    _steps(world, 150)
    centres = np.array([b.world_center for b in links])
    assert (centres[:, 1] < top[1]).all()
    assert centres[-1, 1] < top[1] - 5.0                           # the free end fell
    reach = np.hypot(*(centres - top).T)
    assert reach.max() < 40 * 0.5 * 1.05                          # no link is further than the chain is long


def test_car_drives_forward():
    world = R.car()
    chassis = world.bodies[0]
    x0 = chassis.position[0]
    _steps(world, 180)
    assert chassis.position[0] > x0 + 3.0
    assert -0.6 < chassis.angle < 0.6                              # upright
    wheels = [j for j in world.joints if j.kind == "wheel"]
    assert len(wheels) == 2 and wheels[0].max_motor_torque > 0.0 and wheels[1].max_motor_torque == 0.0


def test_cradle_passes_the_swing_to_the_last_ball():
    """Newton's cradle (the scene's balls hang 3 cm apart, see ``carom.scenes.rigid_scenes.cradle``): after the
    first ball strikes, the last leaves with at least 90 % of its speed and the middle three stay below 10 %
    (measured 0.999 and 0.010)."""
    world = R.cradle()
    balls = world.bodies
    first, last = balls[0], balls[-1]
    rest = last.position.copy()
    hit = None
    speeds = []
    for k in range(60):
        world.step(DT)
        speeds.append(world.velocities[:, 0].copy())
        if hit is None and np.hypot(*world.velocities[1:].T).max() > 0.01:
            hit = k
        if hit is None:
            assert np.hypot(*(last.position - rest)) < 1e-4        # still until the first ball arrives
    # the first ball reaches the row after about a quarter period, π/2·√(2 m / 10 m/s²) ≈ 0.7 s
    assert hit is not None and 30 < hit < 55
    speeds = np.array(speeds)
    v0 = speeds[:, 0].max()
    assert speeds[hit:, -1].max() >= 0.9 * v0                      # the swing went to the last ball
    assert np.abs(speeds[-1, 1:-1]).max() < 0.1 * v0 and abs(speeds[-1, 0]) < 0.1 * v0
    assert last.position[0] > rest[0] + 0.1


def test_ragdolls_are_eleven_bones_and_ten_limited_joints():
    world = R.ragdolls(count=3)
    assert world.body_count == 33 and world.joint_count == 30
    for j in world.joints:
        assert j.kind == "revolute" and j.lower < j.upper and j.max_motor_torque > 0.0
    groups = {b.shapes[0].group for b in world.bodies}
    assert groups == {-1, -2, -3}                                  # a ragdoll's limbs never collide


# --------------------------------------------------------------------------------------------------- drawing
def test_joints_are_drawn_from_the_public_handles():
    w = carom.World(gravity=(0, -10))
    a = w.add_body(position=(0, 2))
    a.add_shape(box(0.5, 0.2))
    b = w.add_body(position=(2, 2))
    b.add_shape(Circle(0.3))
    c = w.add_body(position=(4, 2))
    c.add_shape(Circle(0.3))
    w.add_joint(joints.Revolute(None, a, anchor=(0, 3)))
    w.add_joint(joints.Distance(a, b, anchor_a=(0.5, 2), anchor_b=(2, 2)))
    w.add_joint(joints.Wheel(b, c, anchor=(4, 2), axis=(0, 1)))
    w.add_joint(joints.Gear(b, c))
    w.add_joint(joints.Filter(a, c))
    prims = describe_joints(w)
    lines = [p for p in prims if isinstance(p, Lines)]
    dots = [p for p in prims if isinstance(p, Dot)]
    as_set = {tuple(map(tuple, np.round(p.points, 9))) for p in lines}
    assert ((0.0, 2.0), (0.0, 3.0)) in as_set                      # A's centre to the pin (not the static body)
    assert ((0.5, 2.0), (2.0, 2.0)) in as_set                      # the distance joint's rod
    assert ((2.0, 2.0), (4.0, 2.0)) in as_set                      # the gear between the centres
    axis = [p for p in lines if p.colour == JOINT_AXIS]
    assert len(axis) == 1 and np.allclose(axis[0].points, [(4, 1.5), (4, 2.5)])
    assert {tuple(np.round(d.center, 9)) for d in dots} >= {(0.0, 3.0), (0.5, 2.0), (2.0, 2.0), (4.0, 2.0)}
    assert all(p.colour in (JOINT, JOINT_AXIS) for p in prims)
    assert sum(isinstance(p, Lines) and p.colour == JOINT for p in describe(w)) == \
        sum(p.colour == JOINT for p in lines)
    assert not any(getattr(p, "colour", None) == JOINT for p in describe(w, joints=False))


def test_headless_picture_shows_the_pendulum_rod(tmp_path):
    world = R.pendulum()
    lower, upper = catalog.FRAMES["pendulum"]
    out = render(world, tmp_path / "pendulum.png", frames=2, lower=lower, upper=upper, size=(320, 240),
                 progress=False)
    image = np.asarray(Image.open(out).convert("RGB"), int)
    bob, pin = world.bodies[0].world_center, np.array((-2.5, 3.0))
    view = View(lower, upper, 320, 240)
    x, y = np.rint(view.px(0.5 * (bob + pin))).astype(int)        # halfway along the rod: the joint's colour
    patch = image[y - 1:y + 2, x - 1:x + 2].reshape(-1, 3)
    assert np.abs(patch - np.array(JOINT)).max(axis=1).min() < 40
    render(R.pendulum(), tmp_path / "plain.png", frames=2, lower=lower, upper=upper, size=(320, 240),
           progress=False, joints=False)
    plain = np.asarray(Image.open(tmp_path / "plain.png").convert("RGB"), int)
    assert np.abs(plain[y - 1:y + 2, x - 1:x + 2].reshape(-1, 3) - np.array(JOINT)).max(axis=1).min() >= 40


def test_demo_command_draws_joints_unless_told_not_to(tmp_path):
    from carom.cli import main

    def joint_pixels(*flags):
        out = tmp_path / f"pendulum{len(flags)}.png"
        assert main(["demo", "pendulum", "--out", str(out), "--frames", "3", "--size", "320x240", "--quiet",
                     *flags]) == 0
        image = np.asarray(Image.open(out).convert("RGB"), int)
        return int((np.abs(image - np.array(JOINT)).max(axis=2) < 30).sum())

    assert joint_pixels() > 20 and joint_pixels("--no-joints") == 0


# ---------------------------------------------------------------------------------------------------- window
@pytest.fixture
def app():
    from carom.render.window import DemoApp
    a = DemoApp("pendulum", size=(320, 240), headless=True)
    yield a
    a.close()


def _mouse(app, kind, world_point):
    import pygame
    pos = tuple(int(round(v)) for v in app.view.px(world_point))
    types = dict(down=pygame.MOUSEBUTTONDOWN, up=pygame.MOUSEBUTTONUP)
    if kind in types:
        app.handle_event(pygame.event.Event(types[kind], pos=pos, button=1))
    else:
        app.handle_event(pygame.event.Event(pygame.MOUSEMOTION, pos=pos, rel=(0, 0), buttons=(1, 0, 0)))


def test_j_toggles_the_joints_and_big_grids_start_without_them(app):
    import pygame
    assert app.show_joints
    pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=pygame.K_j, mod=0, unicode="j"))
    app.pump()
    assert not app.show_joints
    app.frame()
    from carom.render.window import DemoApp, JOINTS_DRAW_LIMIT
    table = {"grid": catalog.SceneInfo("grid", lambda: R.joint_grid(n=25), "grid", (-2, -30), (30, 2))}
    big = DemoApp("grid", size=(160, 120), headless=True, scenes=table)
    try:
        assert big.world.joint_count > JOINTS_DRAW_LIMIT and not big.show_joints
    finally:
        big.close()


def test_dragging_a_body_is_a_mouse_joint_removed_on_release(app):
    bob = app.world.bodies[0]
    count = app.world.joint_count
    _mouse(app, "down", bob.world_center)
    kind, index, pull = app.grabbed
    assert kind == "body" and index == bob.index and pull.kind == "mouse"
    assert app.world.joint_count == count + 1
    assert pull.max_force == pytest.approx(1000.0 * bob.mass)
    target = np.array((-2.5, 4.5))                                 # above the pin: the rod lifts
    _mouse(app, "move", target)
    for _ in range(60):
        app.frame()
    np.testing.assert_allclose(pull.target, app.mouse)
    assert bob.world_center[1] > 3.5
    assert bob.angular_damping > 0.0                               # its turning is damped while held
    _mouse(app, "up", target)
    assert app.grabbed is None and not pull.alive and app.world.joint_count == count
    assert bob.angular_damping == 0.0                              # and put back on release


def test_a_grabbed_body_that_is_removed_is_let_go(app):
    bob = app.world.bodies[0]
    _mouse(app, "down", bob.world_center)
    pull = app.grabbed[2]
    app.world.remove(bob)
    assert not pull.alive
    _mouse(app, "move", np.array((0.0, 2.0)))
    app.frame()
    assert app.grabbed is None


# ----------------------------------------------------------------------------------------------------- bench
def _grid_spec(n):
    spec = dict(bench.scene_spec("joint_grid"))
    spec["kwargs"] = dict(n=n)
    return spec


def test_description_carries_joints_and_filters():
    desc = bench.describe(R.joint_grid(n=4))
    assert len(desc["joints"]) == 2 * 4 * 3 - 3                    # the top row is all static for n = 4
    assert {f[0] for f in desc["filters"]} == {2} and all(f[1] & 2 == 0 for f in desc["filters"])
    j = desc["joints"][0]
    assert j["kind"] == "revolute" and j["settings"]["lower"] == -math.inf
    np.testing.assert_allclose([np.hypot(*j["anchor_a"]), np.hypot(*j["anchor_b"])], [0.5, 0.5])
    state = (desc["position"], desc["angle"], desc["velocity"], desc["angular_velocity"])
    assert bench.joint_error(desc, *state[:2]) == pytest.approx(0.0, abs=1e-12)
    moved = desc["position"].copy()
    moved[desc["kind"].index("dynamic")] += (0.0, 0.05)
    assert bench.joint_error(desc, moved, desc["angle"]) == pytest.approx(0.05)
    # circles pushed into each other do not count as overlapping: their filters keep them apart
    moved[:] = desc["position"] * 0.5
    assert bench.deepest_overlap(desc, moved, desc["angle"]) == 0.0


@pytest.mark.parametrize("engine", ["carom", "pymunk", "box2d"])
def test_joint_grid_bench_runs(engine):
    pytest.importorskip({"carom": "carom", "pymunk": "pymunk", "box2d": "Box2D"}[engine])
    spec = _grid_spec(6)
    desc = bench.describe(bench.build_carom(spec))
    res = bench.run_engine(engine, spec, desc, steps=20, runs=1)
    assert "error" not in res, res
    q = res["quality"]
    assert q["escaped"] == 0 and q["overlap_mm"] == 0.0
    assert 0.0 <= q["joint_mm"] < 100.0 and q["kinetic_J"] > 0.0
    assert "joint error (mm)" in bench.TABLE_HEADER


def test_pymunk_and_box2d_get_the_same_joints():
    pymunk = pytest.importorskip("pymunk")
    pytest.importorskip("Box2D")
    world = R.bridge(planks=6, drops=0)
    desc = bench.describe(world)
    space, _ = bench.build_pymunk(desc)
    pivots = [c for c in space.constraints if isinstance(c, pymunk.PivotJoint)]
    motors = [c for c in space.constraints if isinstance(c, pymunk.SimpleMotor)]
    assert len(pivots) == len(motors) == 7 and not any(c.collide_bodies for c in space.constraints)
    assert motors[0].max_force == pytest.approx(20.0)
    b2world, _ = bench.build_box2d(desc)
    assert len(b2world.joints) == 7
    wheel = bench.describe(R.car())
    with pytest.raises(bench.NotExpressible):
        bench.build_pymunk(wheel)
