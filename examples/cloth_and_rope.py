"""Cloth and rope in the Verlet world: particles joined by sticks, relaxed a few times a step.

The rope is pinned at one end; the cloth hangs from its top row and tears where a stick is stretched past its
``break_length`` (a gust of wind, the world's gravity turned sideways, pulls it). Verlet bodies are positions
and previous positions: no velocities are stored, so the picture is exactly what the solver works on.
"""
import math

from carom import verlet
from carom.render import play


def build():
    """A rope of 30 sticks and a 24 × 16 cloth that tears."""
    world = verlet.World(gravity=(0.0, -10.0), iterations=12)
    world.add_rope((-9.0, 10.0), (-1.0, 10.0), segments=30, pin_start=True)
    world.add_cloth((1.0, 10.0), 8.0, 5.0, 24, 16, pinned="top", break_length=0.6)   # rest length 0.33-0.35
    world.add_box(center=(0.0, -0.5), width=20.0, height=1.0, static=True)
    return world


def wind(app):
    """Blow in gusts: the horizontal gravity swings, strongest after three seconds."""
    t = app.steps * app.dt
    gust = 12.0 * max(0.0, math.sin(0.8 * t)) * min(1.0, t / 3.0)
    app.world.gravity = (gust, -10.0)


def main(argv=None):
    """Run the example (window, or out/cloth_and_rope.gif headless)."""
    return play(build, name="cloth_and_rope", argv=argv, lower=(-10, -1), upper=(12, 12), on_step=wind,
                default_frames=300)


if __name__ == "__main__":
    main()
