"""Sensors and collision filters: two teams of balls that pass through each other, and a sensor zone that
counts who is inside.

Filtering: a shape has ``category`` bits (what it is) and ``mask`` bits (what it collides with); two shapes
collide when each one's category meets the other's mask. Red balls (category 2) and blue balls (category 4) both
collide with the ground (category 1) and with their own team, not with the other team.

A sensor shape never pushes; it reports begin and end events, delivered after the step to handlers
registered with ``world.on``. The dots mark the balls inside the zone.
"""
import numpy as np

import carom
from carom.geometry import Circle, box
from carom.render import play
from carom.render.draw import Dot

GROUND, RED, BLUE = 0b001, 0b010, 0b100
inside = set()


def build():
    """A box with a sensor zone in its lower middle, 40 red and 40 blue balls."""
    world = carom.World(gravity=(0, -10))
    ground = world.static_body
    ground.add_shape(box(6, 0.25, center=(0, -0.25)), category=GROUND)
    ground.add_shape(box(0.25, 5, center=(-6.25, 5)), category=GROUND)
    ground.add_shape(box(0.25, 5, center=(6.25, 5)), category=GROUND)
    ground.add_shape(box(2.0, 1.5, center=(0, 1.5)), sensor=True)      # the zone: reports, never pushes
    rng = np.random.default_rng(7)
    for k in range(80):
        team = RED if k % 2 == 0 else BLUE
        ball = world.add_body(position=(rng.uniform(-5.5, 5.5), 2 + 0.3 * k))
        ball.add_shape(Circle(0.3), density=1.0, restitution=0.3, category=team, mask=GROUND | team)
    inside.clear()
    world.on("begin", lambda e: inside.add(e.body_b if e.shape_a.sensor else e.body_a) if e.sensor else None)
    world.on("end", lambda e: inside.discard(e.body_b if e.shape_a.sensor else e.body_a) if e.sensor else None)
    return world


def caption(app):
    """Count the balls in the zone by team."""
    teams = [b.shapes[0].category for b in inside if b.alive]
    app.caption = f"in the zone: {teams.count(RED)} red, {teams.count(BLUE)} blue"


def mark(app):
    """A dot on every ball inside the zone."""
    return [Dot(b.position, 3, (20, 20, 20)) for b in inside if b.alive]


def main(argv=None):
    """Run the example (window, or out/sensors_and_filters.gif headless)."""
    return play(build, name="sensors_and_filters", argv=argv, lower=(-7, -1), upper=(7, 10), on_step=caption,
                overlay=mark, default_frames=300)


if __name__ == "__main__":
    main()
