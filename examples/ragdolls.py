"""Ragdolls tumbling down a staircase: eleven capsules each, revolute joints with angle limits and friction.

The ragdoll builder is the demo's (:func:`carom.scenes.rigid_scenes.add_ragdoll`): each ragdoll's capsules share
a negative collision group, so its own limbs pass through each other while different ragdolls collide.
"""
import carom
from carom.geometry import box
from carom.render import play
from carom.scenes.rigid_scenes import add_ragdoll

STEPS = 8


def build():
    """A staircase of 8 steps and 6 ragdolls thrown onto its top."""
    world = carom.World(gravity=(0, -10))
    ground = world.static_body
    ground.add_shape(box(12, 0.5, center=(2, -0.5)), friction=0.6)
    for k in range(STEPS):                                    # each step 1 m deep, 0.5 m high, going up left
        ground.add_shape(box(0.5, 0.25 * (k + 1), center=(-0.5 - k, 0.25 * (k + 1))), friction=0.6)
    for k in range(6):
        parts = add_ragdoll(world, (-7.0 + 0.7 * k, 4.5 + 1.8 * k), angle=0.4 * k, group=-(k + 1))
        for body in parts.values():
            body.velocity = (2.0, 0.0)                        # a push down the stairs
    return world


def main(argv=None):
    """Run the example (window, or out/ragdolls.gif headless)."""
    return play(build, name="ragdolls", argv=argv, lower=(-9, -1), upper=(9, 13), default_frames=300)


if __name__ == "__main__":
    main()
