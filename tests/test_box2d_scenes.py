"""Box2D v3's seven benchmark scenes (carom.scenes.box2d_scenes) hold what Box2D's benchmark app builds.

The numbers below are read from Box2D v3's source, commit 617d32ab (github.com/erincatto/box2d):
``shared/benchmarks.c`` (CreateJointGrid, CreateLargePyramid, CreateManyPyramids, CreateRain, CreateSpinner,
CreateSmash, CreateTumbler), ``shared/human.c`` (CreateHuman, the ragdolls of rain) and ``benchmark/main.c``
(the step counts, dt = 1/60, 4 substeps). Box2D's defaults (``b2DefaultShapeDef``, ``b2DefaultBodyDef``): density
1, friction 0.6, restitution 0, sleeping on. The body, shape and joint counts are also those Box2D's benchmark
app prints for each scene ("body 5051 / shape 5051 / contact … / joint 0"), static ground bodies included.
"""
import math

import numpy as np
import pytest

from carom.scenes import box2d_scenes as B
from carom import CaromError
from carom.rigid.world import ALL_CATEGORIES

DT = 1.0 / 60.0


def counts(w):
    """(bodies, shapes, joints) as Box2D counts them: every body but carom's built-in static body (which these
    scenes leave empty), every shape, every joint."""
    bodies = w.bodies
    assert w.static_body.shapes == []
    return len(bodies), sum(len(b.shapes) for b in bodies), w.joint_count


def test_step_counts_are_box2ds():
    # benchmark/main.c: { "joint_grid", …, 500 }, large_pyramid 500, many_pyramids 200, rain 1000, smash 300,
    # spinner 500, tumbler 750
    assert B.STEPS == {"joint_grid": 500, "large_pyramid": 500, "many_pyramids": 200, "rain": 1000, "smash": 300,
                       "spinner": 500, "tumbler": 750}
    assert B.TIME_STEP == 1.0 / 60.0
    assert B.large_pyramid(base=3).substeps == 4 and B.tumbler(grid=2).substeps == 4
    with pytest.raises(CaromError, match="'washer'"):
        B.build("washer")


def test_large_pyramid():
    # CreateLargePyramid: sleeping off; ground box 100 × 1 (half extents) at (0, −1); baseCount 100, square 0.5,
    # density 1; row i at y = (2i + 1)·0.5, x = (i + 1)·0.5 + 2·(j − i)·0.5 − 0.5·100
    w = B.large_pyramid()
    assert counts(w) == (5051, 5051, 0)
    assert not w.sleep_enabled and tuple(w.gravity) == (0.0, -10.0)
    ground, boxes = w.bodies[0], w.bodies[1:]
    assert ground.kind == "static" and tuple(ground.position) == (0.0, -1.0)
    np.testing.assert_allclose(np.ptp(ground.shapes[0].geometry.vertices, axis=0), [200.0, 2.0])
    p = w.positions[1:]
    np.testing.assert_allclose(p[0], [-49.5, 0.5])
    np.testing.assert_allclose(p[99], [49.5, 0.5])
    np.testing.assert_allclose(p[-1], [0.0, 99.5])          # the top box
    assert all(b.mass == pytest.approx(1.0) for b in boxes[::500])
    assert {b.shapes[0].friction for b in boxes} == {0.6}


def test_many_pyramids():
    # CreateManyPyramids: sleeping off; 20 × 20 pyramids of baseCount 10, extent 0.5; one ground body with 20
    # segments from −0.5·groundWidth to 0.5·groundWidth (groundWidth = 2·0.5·20·11 = 220) at y = 11·i;
    # CreateSmallPyramid: x = (i + 1)·e + 2·(j − i)·e + centerX − 0.5, centerX = −110 + 11·column + 1
    w = B.many_pyramids()
    assert counts(w) == (22001, 22020, 0)
    assert not w.sleep_enabled
    ground = w.bodies[0]
    ys = sorted(float(s.geometry.vertices[0, 1]) for s in ground.shapes)
    np.testing.assert_allclose(ys, 11.0 * np.arange(20))
    np.testing.assert_allclose(np.abs(ground.shapes[0].geometry.vertices[:, 0]), [110.0, 110.0])
    p = w.positions[1:]
    np.testing.assert_allclose(p[0], [-109.0, 0.5])           # first pyramid, bottom left
    np.testing.assert_allclose(p[54], [-109.0 + 4.5, 9.5])    # its top box (55 boxes a pyramid)
    np.testing.assert_allclose(p[55], [-98.0, 0.5])           # the next pyramid, 11 m to the right
    np.testing.assert_allclose(p[-1], [-109.0 + 19 * 11 + 4.5, 19 * 11 + 9.5])


def test_joint_grid():
    # CreateJointGrid: sleeping off; N = 100; circle radius 0.4, density 1, category 2, mask ~2; body (k, i) at
    # (k, −i), static when N/2 − 3 ≤ k ≤ N/2 + 3 and i = 0; revolute joints to (k, i − 1) (local anchors
    # (0, −0.5), (0, 0.5)) and to (k − 1, i) ((0.5, 0), (−0.5, 0)): 2·N·(N − 1) = 19,800, of which carom refuses
    # the six between two static bodies
    w = B.joint_grid()
    assert counts(w) == (10000, 10000, 19800 - 6)
    assert not w.sleep_enabled
    kinds = np.array([b.kind for b in w.bodies])
    static = np.flatnonzero(kinds == "static")
    np.testing.assert_allclose(w.positions[static], [(k, 0.0) for k in range(47, 54)])
    shape = w.bodies[1].shapes[0]
    assert shape.geometry.radius == 0.4 and shape.category == 2 and shape.mask == ALL_CATEGORIES ^ np.uint64(2)
    assert w.bodies[1].mass == pytest.approx(math.pi * 0.16)
    j = w.joints[0]                             # (0, 0)–(0, 1): anchor halfway
    assert j.kind == "revolute"
    np.testing.assert_allclose([j.anchor_a, j.anchor_b], [[0.0, -0.5], [0.0, -0.5]])


def test_smash():
    # CreateSmash: gravity 0; a dynamic box 4 × 4 (half extents), density 8, at (−20, 0), velocity (40, 0);
    # 120 × 80 squares of side d = 0.4 at (30 + 0.4·i, 0.4·(j − 40)), created asleep (isAwake = false)
    w = B.smash()
    assert counts(w) == (9601, 9601, 0)
    assert tuple(w.gravity) == (0.0, 0.0) and w.sleep_enabled
    projectile, block = w.bodies[0], w.bodies[1:]
    assert projectile.mass == pytest.approx(8 * 64.0)
    np.testing.assert_allclose(projectile.velocity, [40.0, 0.0])
    np.testing.assert_allclose(projectile.position, [-20.0, 0.0])
    p = w.positions[1:]
    np.testing.assert_allclose(p[0], [30.0, -16.0])
    np.testing.assert_allclose(p[-1], [30.0 + 119 * 0.4, 0.4 * 39])
    assert all(b.sleeping for b in block)
    for _ in range(3):
        w.step(DT)
    assert w.awake_count == 1             # the block sleeps until the box arrives (45.8 m away)


def test_tumbler():
    # CreateTumbler: a static ground body; a dynamic body at (0, 10) with four boxes of density 50: (0.5, 10) at
    # (±10, 0), (10, 0.5) at (0, ±10); revolute joint ground → body at (0, 10), motor 25°/s, max torque 1e8;
    # gridCount 45, boxes 0.125 (half extents) from (−0.2·45, −0.2·45 + 10), 0.4 apart; sleeping on
    w = B.tumbler()
    assert counts(w) == (2027, 2029, 1)
    assert w.sleep_enabled
    ground, drum = w.bodies[:2]
    assert ground.kind == "static" and drum.kind == "dynamic"
    assert drum.mass == pytest.approx(50.0 * 4 * 20.0)
    j = w.joints[0]
    assert j.kind == "revolute" and j.motor_speed == pytest.approx(math.radians(25.0))
    assert j.max_motor_torque == 1e8
    np.testing.assert_allclose(j.anchor_a, [0.0, 10.0])
    p = w.positions[2:]
    np.testing.assert_allclose(p[0], [-9.0, 1.0])
    np.testing.assert_allclose(p[-1], [-9.0 + 44 * 0.4, 1.0 + 44 * 0.4])
    for _ in range(60):
        w.step(DT)
    # the motor turns the heavy drum at close to its speed (a rigid motor with a 1e8 N·m limit)
    assert drum.angular_velocity == pytest.approx(math.radians(25.0), rel=0.05)


def test_spinner():
    # CreateSpinner: a loop chain of 360 points on a circle of radius 40 around (0, 32), friction 0.1; a dynamic
    # body at (0, 12), sleep off, rounded box 0.4 × 20 (half extents) with radius 0.2, friction 0, density 1,
    # revolute motor at 5 rad/s with max torque FLT_MAX; 2·3038 bodies, density 0.25, friction 0.1,
    # restitution 0.1, in turn a capsule (−0.25, 0)–(0.25, 0) r 0.25, a circle r 0.35, a square 0.35; from
    # (−23, 2), x += 0.5, a new row 0.5 up when x ≥ 23
    w = B.spinner()
    assert counts(w) == (6078, 360 + 1 + 6076, 1)
    ground, arm = w.bodies[:2]
    assert len(ground.shapes) == 360
    ends = np.array([s.geometry.vertices for s in ground.shapes])
    np.testing.assert_allclose(np.hypot(ends[..., 0], ends[..., 1] - 32.0), 40.0)
    assert not arm.sleep_enabled and arm.shapes[0].friction == 0.0 and arm.shapes[0].geometry.radius == 0.2
    np.testing.assert_allclose(np.ptp(arm.shapes[0].geometry.vertices, axis=0) + 0.4, [0.8, 40.0])
    j = w.joints[0]
    assert j.motor_speed == 5.0 and j.max_motor_torque >= 1e30
    rest = w.bodies[2:]
    kinds = [(len(b.shapes[0].geometry.vertices), b.shapes[0].geometry.radius) for b in rest[:3]]
    assert kinds == [(2, 0.25), (1, 0.35), (4, 0.0)]
    s = rest[1].shapes[0]
    assert (s.friction, s.restitution, s.density) == (0.1, 0.1, 0.25)
    assert rest[1].mass == pytest.approx(0.25 * math.pi * 0.35 ** 2)
    p = w.positions[2:]
    np.testing.assert_allclose(p[0], [-23.0, 2.0])
    np.testing.assert_allclose(p[92], [-23.0, 2.5])            # 92 bodies a row
    np.testing.assert_allclose(p[-1], [-23.0 + 0.5 * (6075 % 92), 2.0 + 0.5 * (6075 // 92)])
    # the loop, listed so that its solid side faces in, holds the bodies (listed the other way round, every one
    # would fall out); a few are squeezed out where the bar's rounded tip (20.2 m from the pin) passes the
    # bottom of the loop (20 m from it), as the bar sweeps past
    for _ in range(20):
        w.step(DT)
    assert (np.hypot(w.positions[2:, 0], w.positions[2:, 1] - 32.0) < 40.0).mean() > 0.99


def test_rain():
    # CreateRain: 5 rows (y = 45·r) of 501 boxes of 0.5 m from x = −125; StepRain: every 8 steps, while fewer
    # than 40 columns, a group per row at (−125 + 6.25·(column + 0.5), 40 + 45·row) of 5 humans 0.5 m apart
    # (group indices 1 … 5), then the oldest column is destroyed and made again; CreateHuman: scale 1, joint
    # friction 0.05, hertz 5, damping 0.5, sleep threshold 0.1, friction 0.2 (feet 0.05, mask 1), category 2,
    # mask 1|2, linear damping 0.1 on head and lower arms, limits and pins as in human.c
    scene = B.build("rain")
    w = scene.world
    assert len(w.bodies) == 5 * 501               # (one static body per box here, one for all in Box2D)
    for i in range(8 * 41):
        scene.before_step(i)
    assert scene.column_count == 40 and scene.column_index == 1
    bodies, shapes, n_joints = counts(w)
    # Box2D: body 11001 / shape 15505 / joint 10000, its 2,505 ground boxes on one body
    assert (bodies - 5 * 501 + 1, shapes, n_joints) == (11001, 15505, 10000)
    # row 0, column 1 (body indices): the first human's 11 bodies in bone order
    humans = [w.body_handle(i) for i in scene.groups[0, 1].tolist()]
    hip, torso, head = humans[:3]
    np.testing.assert_allclose(hip.position, [-125.0 + 6.25 * 1.5, 40.0 + 0.95])
    assert hip.sleep_threshold == 0.1 and head.linear_damping == 0.1 and torso.linear_damping == 0.0
    s = hip.shapes[0]
    assert (s.friction, s.category, s.mask, s.group) == (0.2, 2, 3, -1)
    foot = humans[4].shapes[1]
    assert (foot.friction, foot.category, foot.mask) == (0.05, 2, 1) and foot.geometry.radius == 0.015
    j = next(j for j in w.joints if j.body_b == torso)
    assert (j.hertz, j.damping_ratio, j.max_motor_torque) == (5.0, 0.5, pytest.approx(0.025))
    assert (j.lower, j.upper) == (pytest.approx(-0.25 * math.pi), 0.0)
    forearm = next(j for j in w.joints if j.body_b == humans[8])
    assert forearm.reference_angle == pytest.approx(0.25 * math.pi)
    assert forearm.max_motor_torque == pytest.approx(0.005)


def test_carom_bench_runs_box2ds_scenes_under_their_names():
    from carom import bench
    for name in B.STEPS:
        spec = bench.scene_spec(name)
        assert (spec["module"], spec["builder"]) == ("box2d_scenes", name)
        assert name in bench.DEFAULT_SCENES
    w = bench.build_carom(bench.scene_spec("tumbler"))
    assert not w.sleep_enabled                    # (carom bench: sleeping off for every engine)
    assert [b.kind for b in w.bodies[:2]] == ["static", "dynamic"] and w.joint_count == 1
    # the earlier variants, under names of their own
    assert bench.scene_spec("tumbler_kinematic")["builder"] == "tumbler"
    assert bench.scene_spec("many_pyramids_10x10")["kwargs"] == dict(rows=10, columns=10)
    assert "smash_close" not in bench.DEFAULT_SCENES
