"""Newton's cradle: five elastic balls on distance joints; the first one, let go, sends the last one out.

Balls of restitution 1 and no friction, each hanging on a rigid distance joint (a string) from the world's
static body. They hang 3 cm apart: each impact is then a collision of two equal balls, which swaps their
velocities, and the swing walks through the row (see ``carom.scenes.rigid_scenes.cradle``).
"""
import math

import numpy as np

import carom
from carom import joints
from carom.geometry import Circle, box
from carom.render import play

BALLS, RADIUS, STRING, GAP = 5, 0.25, 2.0, 0.03


def build():
    """Five balls on strings, the first pulled 45 degrees aside."""
    world = carom.World(gravity=(0, -10))
    top = STRING + 1.0
    pitch = 2 * RADIUS + GAP
    x0 = -0.5 * (BALLS - 1) * pitch
    world.static_body.add_shape(box(0.5 * BALLS * pitch + 0.5, 0.1, center=(0, top + 0.1)))   # the bar
    pull = math.radians(45)
    for k in range(BALLS):
        pin = np.array((x0 + pitch * k, top))
        offset = (-math.sin(pull) * STRING, -math.cos(pull) * STRING) if k == 0 else (0.0, -STRING)
        ball = world.add_body(position=pin + offset)
        ball.add_shape(Circle(RADIUS), density=1.0, friction=0.0, restitution=1.0)
        world.add_joint(joints.Distance(None, ball, anchor_a=pin, anchor_b=ball.position))   # None: the ground
    return world


def main(argv=None):
    """Run the example (window, or out/newtons_cradle.gif headless)."""
    return play(build, name="newtons_cradle", argv=argv, lower=(-3.5, 0), upper=(3.5, 4))


if __name__ == "__main__":
    main()
