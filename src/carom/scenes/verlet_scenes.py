"""Ready-made Verlet worlds (carom.verlet) shared by the demo, tests and benchmarks."""
import math

import numpy as np

from .. import verlet


def verlet_boxes(count=40, seed=0):
    """Boxes of mixed sizes dropped onto two opposite slopes above a floor between walls: they tumble."""
    vw = verlet.World(gravity=(0.0, -10.0), iterations=8)
    vw.add_box(center=(0.0, -0.5), width=24.0, height=1.0, static=True)
    vw.add_box(center=(-12.5, 6.0), width=1.0, height=14.0, static=True)
    vw.add_box(center=(12.5, 6.0), width=1.0, height=14.0, static=True)
    vw.add_box(center=(-5.0, 7.0), width=10.0, height=0.5, angle=-math.radians(20), static=True)
    vw.add_box(center=(5.0, 3.5), width=10.0, height=0.5, angle=math.radians(20), static=True)
    rng = np.random.default_rng(seed)
    for k in range(count):
        w, h = rng.uniform(0.4, 1.0, 2)
        x = -9.0 + (k % 8) * 1.2
        y = 10.0 + (k // 8) * 1.3
        vw.add_box(center=(x, y), width=w, height=h, angle=rng.uniform(0, math.pi), friction=0.4)
    return vw


def rope_cloth():
    """A rope pinned at one end swinging beside a 24 x 16 cloth pinned along its top edge."""
    vw = verlet.World(gravity=(0.0, -10.0), iterations=12)
    vw.add_rope((-8.0, 10.0), (0.0, 10.0), segments=30, pin_start=True)
    vw.add_cloth((1.0, 10.0), 8.0, 5.0, 24, 16, pinned="top")
    return vw


def jelly(count=6):
    """Soft octagons (braces of stiffness 0.05) dropped onto a floor and a rigid box: they squash."""
    vw = verlet.World(gravity=(0.0, -10.0), iterations=10)
    vw.add_box(center=(0.0, -0.5), width=20.0, height=1.0, static=True)
    vw.add_box(center=(-10.5, 5.0), width=1.0, height=12.0, static=True)
    vw.add_box(center=(10.5, 5.0), width=1.0, height=12.0, static=True)
    vw.add_box(center=(2.0, 1.0), width=2.0, height=2.0, mass=4.0)
    ang = np.linspace(0.0, 2.0 * math.pi, 9)[:-1]
    ring = np.stack([np.cos(ang), np.sin(ang)], axis=1)
    for k in range(count):
        c = np.array([-6.0 + 2.6 * k, 5.0 + 1.5 * (k % 2)])
        vw.add_soft_polygon(c + 1.0 * ring, stiffness=0.05, mass=1.0)
    return vw
