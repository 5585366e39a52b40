"""Rigid-body scene builders shared by the demo, the tests and the benchmarks.

Each builder returns a ready :class:`carom.World` (Box2D v3's benchmark scenes use dt = 1/60 and gravity
(0, −10)).
"""
import math

import numpy as np

from ..geometry import Circle, Capsule, Segment, Polygon, box
from ..rigid import World


def pyramid(base=20, size=1.0, friction=0.6, substeps=4, ground_half_width=None):
    """A pyramid of ``base`` boxes of ``size`` m on a static ground box whose top is at y = 0."""
    w = World(gravity=(0, -10), substeps=substeps)
    hw = ground_half_width or max(50.0, base * size)
    w.static_body.add_shape(box(hw, 1.0, center=(0, -1.0)), friction=friction)
    h = 0.5 * size
    shape = box(h, h)
    for row in range(base):
        y = h + row * size
        n = base - row
        x0 = -0.5 * (n - 1) * size
        for i in range(n):
            b = w.add_body(position=(x0 + i * size, y))
            b.add_shape(shape, density=1.0, friction=friction)
    return w


def large_pyramid():
    """Box2D v3's large_pyramid: 5,050 boxes of 1 m (base 100) on a 200 × 2 m ground box."""
    return pyramid(base=100, ground_half_width=100.0)


def many_pyramids(rows=20, columns=20, base=10):
    """Box2D v3's many_pyramids: rows × columns pyramids of base 10 on ground segments 11 m apart."""
    w = World(gravity=(0, -10))
    shape = box(0.5, 0.5)
    spacing = base + 1.0
    for r in range(rows):
        gy = r * (base + 2.0)
        w.static_body.add_shape(Segment((-0.5 * columns * spacing - 1, gy), (0.5 * columns * spacing + 1, gy)),
                                friction=0.6)
        for c in range(columns):
            cx = (c - 0.5 * (columns - 1)) * spacing
            for row in range(base):
                n = base - row
                for i in range(n):
                    b = w.add_body(position=(cx + (i - 0.5 * (n - 1)), gy + 0.5 + row))
                    b.add_shape(shape, density=1.0, friction=0.6)
    return w


def container(world, half_width, height, thickness=0.5):
    g = world.static_body
    g.add_shape(box(half_width + thickness, thickness, center=(0, -thickness)), friction=0.6)
    g.add_shape(box(thickness, height / 2, center=(-half_width - thickness, height / 2)), friction=0.6)
    g.add_shape(box(thickness, height / 2, center=(half_width + thickness, height / 2)), friction=0.6)


def circle_pile(count=5000, radius=0.25, seed=1):
    """``count`` circles dropped into an open box (the 5,000-circle pile of the benchmarks)."""
    w = World(gravity=(0, -10))
    cols = int(math.sqrt(count)) + 1
    half = cols * radius * 1.1
    container(w, half, 4 * half)
    rng = np.random.default_rng(seed)
    shape = Circle(radius)
    for k in range(count):
        x = -half + radius * 1.1 + (k % cols) * 2.1 * radius + rng.uniform(-0.01, 0.01)
        y = radius * 1.1 + (k // cols) * 2.1 * radius
        w.add_body(position=(x, y)).add_shape(shape, density=1.0, friction=0.6)
    return w


def balls(count=15, seed=2):
    """The seed article's scene: balls of random radius and restitution bouncing in a box, gravity on."""
    w = World(gravity=(0, -10))
    container(w, 8.0, 12.0)
    rng = np.random.default_rng(seed)
    for k in range(count):
        r = rng.uniform(0.3, 0.9)
        b = w.add_body(position=(rng.uniform(-6, 6), rng.uniform(2, 10)), velocity=rng.uniform(-5, 5, 2))
        b.add_shape(Circle(r), density=1.0, friction=0.2, restitution=rng.uniform(0.3, 0.95))
    return w


def pile(seed=3, count=60):
    """Circles, capsules, boxes, polygons and a concave body falling into a box."""
    from ..geometry.decompose import decompose
    w = World(gravity=(0, -10))
    container(w, 6.0, 14.0)
    rng = np.random.default_rng(seed)
    concave = decompose([(0, 0), (1.2, 0), (1.2, 1.2), (0.8, 1.2), (0.8, 0.4), (0, 0.4)])
    for k in range(count):
        b = w.add_body(position=(rng.uniform(-5, 5), 1 + 0.6 * k), angle=rng.uniform(0, 3))
        kind = k % 5
        if kind == 0:
            b.add_shape(Circle(rng.uniform(0.2, 0.45)))
        elif kind == 1:
            b.add_shape(Capsule((-0.3, 0), (0.3, 0), 0.18))
        elif kind == 2:
            b.add_shape(box(rng.uniform(0.2, 0.45), rng.uniform(0.2, 0.45)))
        elif kind == 3:
            n = int(rng.integers(5, 8))
            ang = np.sort(rng.uniform(0, 2 * math.pi, n))
            b.add_shape(Polygon(np.stack([0.4 * np.cos(ang), 0.4 * np.sin(ang)], 1), radius=0.03))
        else:
            for piece in concave:
                b.add_shape(piece)
    return w


def bullets(speed=200.0):
    """Fast small circles fired at thin static walls (continuous collision)."""
    w = World(gravity=(0, -10))
    w.static_body.add_shape(box(30, 0.5, center=(0, -0.5)))
    for k in range(5):
        w.static_body.add_shape(box(0.05, 3.0, center=(8.0, 3.5 + 0.0 * k)))
    for k in range(5):
        b = w.add_body(position=(-8.0, 1.0 + k), velocity=(speed, 2.0 * k), bullet=True)
        b.add_shape(Circle(0.05), density=1.0)
    return w


SCENES = {
    "balls": (balls, "15 balls of random radius and restitution bouncing in a box (the seed article)"),
    "pyramid": (pyramid, "a pyramid of 210 boxes (base 20) standing on the ground"),
    "pile": (pile, "circles, capsules, boxes, rounded polygons and a concave body falling into a box"),
    "bullets": (bullets, "small circles at 200 m/s against 0.1 m walls: continuous collision"),
}
