"""Conveyor belts: static boxes whose surface moves (``tangent_speed``), carrying crates down a zigzag.

Friction drives whatever touches a belt towards its surface speed; a positive speed runs counter-clockwise
around the shape (on its top face: to the left). Crates are added every half second at the top and removed
once they fall off the bottom (``world.remove``).
"""
import numpy as np

import carom
from carom.geometry import box
from carom.render import play


def build():
    """Four belts in a zigzag, alternately running right and left."""
    world = carom.World(gravity=(0, -10))
    for k in range(4):
        x = -2.0 if k % 2 == 0 else 2.0
        speed = -3.0 if k % 2 == 0 else 3.0                  # negative: the top face runs to the right
        world.static_body.add_shape(box(4.0, 0.15, center=(x, 9.0 - 2.5 * k)), friction=0.8,
                                    tangent_speed=speed)
    return world


def feed(app):
    """Add a crate every 30 steps; remove those that fell below the last belt."""
    world = app.world
    if app.steps % 30 == 0:
        rng = np.random.default_rng(app.steps)
        crate = world.add_body(position=(-5.5, 10.0), angle=rng.uniform(-0.3, 0.3))
        crate.add_shape(box(*rng.uniform(0.2, 0.4, 2)), density=1.0, friction=0.8)
    fallen = [b for b, y in zip(world.bodies, world.positions[:, 1]) if y < -2.0]
    for body in fallen:
        world.remove(body)
    app.caption = f"{world.body_count} crates on the belts"


def main(argv=None):
    """Run the example (window, or out/conveyor_belts.gif headless)."""
    return play(build, name="conveyor_belts", argv=argv, lower=(-7, -2), upper=(7, 11), on_step=feed,
                default_frames=360)


if __name__ == "__main__":
    main()
