"""A small scene for the vector solver's lane test (run by tests/test_nojit.py, compiled and as plain
Python): stacked boxes with friction, bouncing balls (restitution), a kinematic paddle that is only read,
enough contacts for several colours and an overflow of shared bodies. Writes the final state to argv[1]."""
import sys

import numpy as np

import carom
from carom.geometry import Circle, box


def build():
    w = carom.World(gravity=(0, -10), substeps=4)
    w.static_body.add_shape(box(10.0, 1.0, center=(0, -1.0)), friction=0.7)
    for i in range(6):
        b = w.add_body(position=(0.05 * i, 0.5 + i * 1.0), angle=0.02 * i)
        b.add_shape(box(0.5, 0.5), density=1.0 + 0.1 * i, friction=0.5)
    for i in range(5):
        b = w.add_body(position=(2.5 + 0.6 * i, 0.3 + 0.7 * i), velocity=(-1.0, -2.0))
        b.add_shape(Circle(0.3), density=1.0, friction=0.3, restitution=0.6)
    paddle = w.add_body(position=(-3.0, 0.4), kind="kinematic", velocity=(1.0, 0.0), angular_velocity=0.3)
    paddle.add_shape(box(1.0, 0.2), friction=0.4)
    for i in range(3):
        b = w.add_body(position=(-3.0 + 0.5 * i, 1.0))
        b.add_shape(Circle(0.25), density=2.0, friction=0.9, restitution=0.2)
    return w


if __name__ == "__main__":
    w = build()
    for _ in range(int(sys.argv[2]) if len(sys.argv) > 2 else 25):
        w.step(1 / 60)
    np.savez(sys.argv[1], p=w.positions, a=w.angles, v=w.velocities, w=w.angular_velocities)
