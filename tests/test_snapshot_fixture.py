"""Snapshots and pickles saved by an older carom still load: ``tests/data/snapshot-4df69e4.npz`` holds a snapshot
and a pickle of a busy world (bodies of every kind, compound shapes, a chain, a sensor, joints, free rows, user
data) saved by carom at commit 4df69e4, before issue 48 rearranged rigid/ into rooms, with the state that world had
and the state it reached after 60 more steps (``tests/data/make_snapshot_fixture.py`` made it). Today's carom
must restore both to that state and continue from it bitwise. (The continued state is today's physics: it was
taken again when contacts moved to Box2D's 30 Hz with recycled anchors kept on their bodies, issue 49; the saved
state and the saved bytes are 4df69e4's.)"""
import pathlib
import pickle

import numpy as np
import pytest

import carom

DT = 1 / 60
FIXTURE = np.load(pathlib.Path(__file__).parent / "data" / "snapshot-4df69e4.npz")


def state(w):
    return np.concatenate([w.positions.ravel(), w.angles, w.velocities.ravel(), w.angular_velocities])


def restored(how):
    if how == "snapshot":
        return carom.World.restore(FIXTURE["snapshot"].tobytes())
    return pickle.loads(FIXTURE["pickle"].tobytes())


@pytest.mark.parametrize("how", ["snapshot", "pickle"])
def test_an_old_save_loads_to_the_state_it_held(how):
    w = restored(how)
    np.testing.assert_array_equal(state(w), FIXTURE["saved"])
    assert w.joint_count == 2 and w.body_count == 23
    if how == "pickle":
        assert [b.data for b in w.bodies if b.data is not None] == [{"name": "three"}]


@pytest.mark.parametrize("how", ["snapshot", "pickle"])
def test_an_old_save_continues_bitwise(how):
    w = restored(how)
    for _ in range(int(FIXTURE["steps"])):
        w.step(DT)
    np.testing.assert_array_equal(state(w), FIXTURE["continued"])


def test_an_old_save_saves_again_the_same():
    """Restored and saved again, the snapshot is the one it was made from (the format did not move)."""
    data = FIXTURE["snapshot"].tobytes()
    assert carom.World.restore(data).snapshot().data == data
