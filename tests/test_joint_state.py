"""Joints in the world's state: snapshots, pickle and copy continue bitwise identically with joints, results are
bitwise the same for one and two threads, and a damaged joint table in a snapshot is refused."""
import copy
import pickle

import numpy as np
import pytest

import carom
from carom import joints
from carom.errors import SnapshotError
from carom.geometry import Circle, box
from carom.rigid import snapshot as snap


def _jointed_world(links=120, boxes=150):
    """A hanging chain of revolute links, a spring, a prismatic slider, a wheel and boxes falling on the chain:
    enough bodies that two threads run the solve in parallel (``_solver.PARALLEL_MIN_ITEMS``)."""
    w = carom.World(gravity=(0.0, -10.0), substeps=4)
    prev = None
    for i in range(links):
        b = w.add_body(position=(0.3 * i, 20.0))
        b.add_shape(box(0.15, 0.04), density=1.0)
        w.add_joint(joints.Revolute(prev, b, anchor=(0.3 * i - 0.15, 20.0)))
        prev = b
    w.add_joint(joints.Revolute(None, prev, anchor=(0.3 * links - 0.15, 20.0)))
    rng = np.random.default_rng(4)
    for k in range(boxes):
        b = w.add_body(position=(rng.uniform(2, 30), rng.uniform(22, 40)))
        b.add_shape(Circle(0.2), density=1.0, restitution=0.3)
    s1 = w.add_body(position=(-5.0, 5.0))
    s1.add_shape(Circle(0.3), density=1.0)
    w.add_joint(joints.Distance(None, s1, (-5.0, 8.0), (-5.0, 5.0), hertz=2.0, damping_ratio=0.1))
    s2 = w.add_body(position=(-8.0, 5.0))
    s2.add_shape(Circle(0.3), density=1.0)
    w.add_joint(joints.Prismatic(None, s2, (-8.0, 5.0), (1.0, 1.0), lower=-1.0, upper=1.0, motor_speed=1.0,
                                 max_motor_force=50.0))
    return w


def test_snapshot_pickle_and_copy_continue_bitwise_with_joints():
    w = _jointed_world(links=20, boxes=20)
    for _ in range(40):
        w.step(1 / 60)
    w.joints[3].data = {"name": "link 3"}
    restored = carom.World.restore(w.snapshot())
    pickled = pickle.loads(pickle.dumps(w))
    copied = copy.deepcopy(w)
    for _ in range(60):
        for world in (w, restored, pickled, copied):
            world.step(1 / 60)
    for other in (restored, pickled, copied):
        assert np.array_equal(w.positions, other.positions)
        assert np.array_equal(w.velocities, other.velocities)
        assert np.array_equal(w.tables.j_impulse[:w.tables.n_joints], other.tables.j_impulse[:other.tables.n_joints])
    assert pickled.joints[3].data == {"name": "link 3"}
    assert copied.joints[3].data == {"name": "link 3"}
    assert restored.joints[3].data is None          # a snapshot is data only


def test_one_and_two_threads_give_bitwise_the_same_world_with_joints():
    before = carom.get_num_threads()
    try:
        results = []
        for threads in (1, 2):
            carom.set_num_threads(threads)
            w = _jointed_world()
            for _ in range(90):
                w.step(1 / 60)
            results.append((w.positions, w.velocities, w.tables.j_reaction[:w.tables.n_joints].copy()))
        for a, b in zip(*results):
            assert np.array_equal(a, b)
    finally:
        carom.set_num_threads(before)


@pytest.mark.parametrize("field, value, words", [
    ("joint.body", 10 ** 6, "is not a body"),
    ("joint.kind", 99, "joint kind"),
    ("joint.local", np.nan, "not finite"),
    ("joint.param", np.nan, "NaN"),
])
def test_a_damaged_joint_table_is_refused(field, value, words):
    w = _jointed_world(links=3, boxes=0)
    w.step(1 / 60)
    d = snap._parse(w.snapshot().data)
    arr = d[field].copy()
    arr.reshape(-1)[0] = value
    d[field] = arr
    with pytest.raises(SnapshotError, match=words):
        snap._check_joints(d)


def test_a_snapshot_joint_between_dead_or_static_bodies_is_refused():
    w = _jointed_world(links=3, boxes=0)
    d = snap._parse(w.snapshot().data)
    body = d["joint.body"].copy()
    body[0] = (w.static_body.index, w.static_body.index)
    d["joint.body"] = body
    with pytest.raises(SnapshotError, match="not two different live bodies"):
        snap._check_joints(d)
