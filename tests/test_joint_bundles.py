"""Plain point joints solved in vectors (``carom.rigid.joints._bundles``): the same motion as the one-by-one solve
in double precision, and bitwise the same for one and two threads when a colour's bundles are shared between
the threads."""
import numpy as np
import pytest

import carom
from carom import joints
from carom.geometry import Circle
from carom.rigid.joints._solve import joints_to_solve
from carom.rigid.joints import bookkeeping as joint_rows

BIG = 1e6   # a limit this far never acts, but makes the joint one of limit rows, solved one by one


def _net(n, limited=False, anchored=True):
    """An n × n net of circles 1 m apart joined to their neighbours by revolute joints, hung from a static
    body at its top left corner, its first column pushed sideways so that it swings; ``limited``: every joint
    given a limit too far to act."""
    w = carom.World(gravity=(0.0, -10.0), substeps=4)
    w.sleep_enabled = False
    extra = dict(lower=-BIG, upper=BIG) if limited else {}
    grid = {}
    for i in range(n):
        for j in range(n):
            b = w.add_body(position=(float(i), float(-j)), velocity=(3.0 if i == 0 else 0.0, 0.0))
            b.add_shape(Circle(0.3), density=1.0, group=-1)
            grid[i, j] = b
    for i in range(n):
        for j in range(n):
            if i + 1 < n:
                w.add_joint(joints.Revolute(grid[i, j], grid[i + 1, j], anchor=(i + 0.5, -j), **extra))
            if j + 1 < n:
                w.add_joint(joints.Revolute(grid[i, j], grid[i, j + 1], anchor=(i, -j - 0.5), **extra))
    if anchored:
        w.add_joint(joints.Revolute(None, grid[0, 0], anchor=(0.0, 0.0)))
    return w


def _plain_count(w):
    bodies = w.step_tables()[0]
    _, _, pcount = joints_to_solve(joint_rows.table(w.tables), bodies[7], bodies[16])
    return int(pcount.sum())


def test_bundled_joints_move_as_the_one_by_one_solve():
    """The net's 2·n·(n − 1) joints between dynamic bodies are bundled (the one to a static body is not), and
    over 2 s of swinging (by up to 14 m) it moves as the same net whose joints are solved one by one in double
    precision (measured: 2e-6 m apart, reactions within 1e-6 of each other)."""
    n = 11
    plain, limited = _net(n), _net(n, limited=True)
    assert _plain_count(plain) == 2 * n * (n - 1)
    assert _plain_count(limited) == 0
    start = plain.positions.copy()
    for step in range(120):
        plain.step(1 / 60)
        limited.step(1 / 60)
    # it did swing: its pushed side moved by metres
    moved = np.hypot(*(plain.positions - start).T).max()
    assert moved > 1.0, moved
    diff = np.abs(plain.positions - limited.positions).max()
    assert diff < 1e-4, (diff, moved)
    assert np.abs(plain.velocities - limited.velocities).max() < 1e-3
    # each joint's reaction (the bundles' impulses written back) as the one-by-one solve's
    react_p = np.array([j.reaction_force for j in plain.joints])
    react_l = np.array([j.reaction_force for j in limited.joints])
    assert np.abs(react_p - react_l).max() < 1e-4 * np.abs(react_l).max()


def test_bundles_shared_by_two_threads_give_bitwise_the_same_world():
    """A 30 × 30 net: each colour has about 100 bundles, which two threads share in chunks."""
    before = carom.get_num_threads()
    try:
        results = []
        for threads in (1, 2):
            carom.set_num_threads(threads)
            w = _net(30)
            for _ in range(30):
                w.step(1 / 60)
            results.append((w.positions.copy(), w.velocities.copy(),
                            np.array([j.reaction_force for j in w.joints])))
        for a, b in zip(*results):
            assert np.array_equal(a, b)
    finally:
        carom.set_num_threads(before)


@pytest.mark.parametrize("count", [1, 7, 8, 9, 17])
def test_partly_filled_bundles_hold_their_chain(count):
    """Chains of ``count`` plain joints (bundles with empty lanes, one full bundle, one lane over) falling
    freely keep their anchors together, and the empty lanes move no body."""
    w = carom.World(gravity=(0.0, -10.0), substeps=4)
    prev = None
    for i in range(count + 1):
        b = w.add_body(position=(float(i), 5.0), angular_velocity=0.5 * (-1) ** i)
        b.add_shape(Circle(0.3), density=1.0, group=-1)
        if prev is not None:
            w.add_joint(joints.Revolute(prev, b, anchor=(i - 0.5, 5.0)))
        prev = b
    lone = w.add_body(position=(-10.0, 5.0))
    lone.add_shape(Circle(0.3), density=1.0)
    assert _plain_count(w) == count
    for _ in range(60):
        w.step(1 / 60)
    # the anchors stay together while the links turn (each by more than 0.1 rad, one way or the other)
    assert max(j.length for j in w.joints) < 1e-3
    assert np.abs(w.angles[:count + 1]).min() > 0.1
    # the free body fell freely: 1 s of g, nothing pulled it (an empty lane's writes would)
    assert lone.velocity == pytest.approx((0.0, -10.0), abs=1e-9)
