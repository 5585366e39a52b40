"""The tumbler: a hollow square turning at a steady rate, 600 small boxes tumbling inside it.

The container is a kinematic body: it moves at the velocity you give it, whatever hits it, and pushes what it
touches (Box2D's tumbler benchmark, here smaller).
"""
import math

import numpy as np

import carom
from carom.geometry import box
from carom.render import play


def build():
    """A 12 m hollow square of four walls on one kinematic body, turning at 30 degrees a second."""
    world = carom.World(gravity=(0, -10))
    drum = world.add_body(position=(0, 0), kind="kinematic", angular_velocity=math.radians(30))
    for center, half in (((0, 6), (6, 0.25)), ((0, -6), (6, 0.25)), ((6, 0), (0.25, 6)), ((-6, 0), (0.25, 6))):
        drum.add_shape(box(*half, center=center), friction=0.6)
    xs, ys = np.meshgrid(np.linspace(-4.5, 4.5, 30), np.linspace(-4.5, 1.5, 20))
    world.add_bodies(np.stack([xs.ravel(), ys.ravel()], axis=1), shape=box(0.125, 0.125), density=1.0,
                     friction=0.6)                           # 600 boxes in one call, no Python loop
    return world


def main(argv=None):
    """Run the example (window, or out/tumbler.gif headless)."""
    return play(build, name="tumbler", argv=argv, lower=(-9, -9), upper=(9, 9))


if __name__ == "__main__":
    main()
