"""A simple pendulum, a double pendulum and a hanging chain: revolute joints to the ground and between bodies.

The simple pendulum's period is close to 2π√(L/g) for small swings; the double pendulum is chaotic; the chain
of 30 capsules (neighbours pinned at their shared ends) swings down and folds on itself.
"""
import math

import carom
from carom import joints
from carom.geometry import Capsule, Circle, box
from carom.render import play


def build():
    """Three hanging systems side by side."""
    world = carom.World(gravity=(0, -10))
    world.static_body.add_shape(box(20, 0.5, center=(0, -0.5)))
    # a simple pendulum: a ball 2 m below its pin, released 60 degrees from the vertical
    pin = (-9.0, 8.0)
    a = math.radians(60)
    bob = world.add_body(position=(pin[0] + 2 * math.sin(a), pin[1] - 2 * math.cos(a)))
    bob.add_shape(Circle(0.25), density=2.0)
    world.add_joint(joints.Distance(None, bob, anchor_a=pin, anchor_b=bob.position))
    # a double pendulum: two rods, the first pinned to the ground, the second to the first's end
    top = (-4.0, 8.0)
    upper = world.add_body(position=(top[0] + 1.0, top[1]))
    upper.add_shape(Capsule((-1.0, 0), (1.0, 0), 0.1), density=1.0)
    lower = world.add_body(position=(top[0] + 3.0, top[1]))
    lower.add_shape(Capsule((-1.0, 0), (1.0, 0), 0.1), density=1.0)
    world.add_joint(joints.Revolute(None, upper, anchor=top))
    world.add_joint(joints.Revolute(upper, lower, anchor=(top[0] + 2.0, top[1])))
    # a chain of 30 links, pinned at its left end, starting straight out to the right
    start = (1.0, 9.0)
    previous = None
    for k in range(30):
        link = world.add_body(position=(start[0] + 0.3 * k + 0.15, start[1]))
        link.add_shape(Capsule((-0.15, 0), (0.15, 0), 0.05), density=1.0, friction=0.4)
        world.add_joint(joints.Revolute(previous, link, anchor=(start[0] + 0.3 * k, start[1])))
        previous = link
    return world


def main(argv=None):
    """Run the example (window, or out/chain_and_pendulums.gif headless)."""
    return play(build, name="chain_and_pendulums", argv=argv, lower=(-12, -1), upper=(12, 10), joints=True)


if __name__ == "__main__":
    main()
