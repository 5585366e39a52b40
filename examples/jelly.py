"""Jelly: soft Verlet polygons whose braces give under load and spring back (``add_soft_polygon``).

Each jelly is a ring of particles; its outline edges are stiff and its inner braces have a stiffness below 1,
the fraction of their error corrected per relaxation, so it squashes when it lands and recovers.
"""
import math

import numpy as np

from carom import verlet
from carom.render import play


def build():
    """Soft octagons and circles of three stiffnesses dropped onto a floor and a step."""
    world = verlet.World(gravity=(0.0, -10.0), iterations=10)
    world.add_box(center=(0.0, -0.5), width=20.0, height=1.0, static=True)
    world.add_box(center=(-10.5, 5.0), width=1.0, height=12.0, static=True)
    world.add_box(center=(10.5, 5.0), width=1.0, height=12.0, static=True)
    world.add_box(center=(3.0, 0.75), width=4.0, height=1.5, static=True, angle=0.2)
    for k in range(8):
        sides = 8 if k % 2 == 0 else 12
        ang = np.linspace(0.0, 2.0 * math.pi, sides + 1)[:-1]
        ring = np.stack([np.cos(ang), np.sin(ang)], axis=1)
        stiffness = (0.02, 0.08, 0.3)[k % 3]
        centre = np.array([-7.5 + 2.1 * k, 4.5 + 2.0 * (k % 3)])
        world.add_soft_polygon(centre + 0.9 * ring, stiffness=stiffness, mass=1.0, friction=0.6)
    return world


def main(argv=None):
    """Run the example (window, or out/jelly.gif headless)."""
    return play(build, name="jelly", argv=argv, lower=(-11.5, -1.5), upper=(11.5, 12), default_frames=240)


if __name__ == "__main__":
    main()
