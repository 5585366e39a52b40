"""Write ``snapshot-4df69e4.npz``: a snapshot and a pickle of a busy world saved by carom at commit 4df69e4 (before
issue 48 rearranged rigid/), and the state that world reached, so that tests/test_snapshot_fixture.py can check
that today's carom still loads them and continues from them bitwise.

Run with the carom to save from on the path, e.g. ``PYTHONPATH=<tree at 4df69e4>/src python
tests/data/make_snapshot_fixture.py``. Uses only the public API.
"""
import pathlib
import pickle
import subprocess
import sys

import numpy as np

import carom
from carom import joints
from carom.geometry import Capsule, Circle, Polygon, Segment, box

DT = 1 / 60
CONTINUE = 60


def world():
    """A world with bodies of every kind, compound shapes, a sensor, filters, a chain, joints (one reports a
    threshold), a removed body and shape (free rows), user data on a body (carried by the pickle), contacts."""
    w = carom.World(gravity=(0, -10), substeps=4)
    w.static_body.add_shape(Segment((-20, 0), (20, 0)), friction=0.6)
    w.static_body.add_chain([(-20, 6), (-14, 2), (-10, 2)], friction=0.5)
    rng = np.random.default_rng(48)
    bodies = []
    for i in range(20):
        b = w.add_body(position=(float(rng.uniform(-4, 4)), 1 + 0.7 * i), angle=float(rng.uniform(0, 3)))
        k = i % 4
        if k == 0:
            b.add_shape(Circle(0.3), density=1.0, restitution=0.3)
        elif k == 1:
            b.add_shape(Capsule((-0.3, 0), (0.3, 0), 0.2), density=1.0, friction=0.4)
        elif k == 2:
            b.add_shape(Polygon([(0, 0), (0.8, 0), (0.3, 0.6)]), density=2.0, group=-1)
        else:
            b.add_shape(box(0.3, 0.2), density=1.0)
            b.add_shape(Circle(0.15, center=(0.3, 0.2)), density=1.0, category=0b10)
        bodies.append(b)
    gate = w.add_body(position=(7, 1), kind="static")
    gate.add_shape(box(1.0, 1.0), sensor=True)
    kin = w.add_body(position=(-3, 4), kind="kinematic", velocity=(0.5, 0), angular_velocity=0.4)
    kin.add_shape(box(1.0, 0.1))
    pend = w.add_body(position=(12, 5))
    pend.add_shape(box(0.2, 0.2), density=1.0)
    w.add_joint(joints.Revolute(None, pend, (12, 7)))
    a = w.add_body(position=(14, 3))
    a.add_shape(Circle(0.3), density=1.0)
    w.add_joint(joints.Distance(pend, a, (12, 5), (14, 3), force_threshold=1e6, on_threshold="report"))
    for _ in range(90):
        w.step(DT)
    w.remove(bodies[5])
    bodies[6].shapes[0].friction = 0.2
    w.remove(bodies[7].shapes[0])
    bodies[7].add_shape(Circle(0.25), density=1.0)
    bodies[3].data = {"name": "three"}
    for _ in range(30):
        w.step(DT)
    return w


def state(w):
    return np.concatenate([w.positions.ravel(), w.angles, w.velocities.ravel(), w.angular_velocities])


def main():
    w = world()
    snap = w.snapshot().data
    pick = pickle.dumps(w)
    saved = state(w)
    for _ in range(CONTINUE):
        w.step(DT)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=pathlib.Path(carom.__file__).parent).stdout.strip()
    out = pathlib.Path(__file__).with_name(f"snapshot-{commit or 'unknown'}.npz")
    np.savez_compressed(out, snapshot=np.frombuffer(snap, np.uint8), pickle=np.frombuffer(pick, np.uint8),
                        saved=saved, continued=state(w), steps=np.int64(CONTINUE))
    print(out, len(snap), len(pick), file=sys.stderr)


if __name__ == "__main__":
    main()
