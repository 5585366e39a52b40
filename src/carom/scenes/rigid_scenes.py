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


def smash(columns=120, rows=80, size=0.4, projectile_x=-20.0, speed=40.0):
    """Box2D v3's smash: a heavy 8 × 8 m box (density 8) at ``speed`` m/s hits a block of small boxes (g = 0).

    The block is ``columns`` × ``rows`` boxes of side ``size`` (Box2D: 120 × 80 of 0.4 m) packed edge to edge,
    its left face at x = 30 − size/2 and centred on y = 0. The projectile's centre starts at ``projectile_x``
    (Box2D: −20, i.e. a 45.8 m run-up, 69 steps at 1/60 s before the hit); a benchmark with few steps may move
    it closer so that the timed steps are spent smashing rather than waiting. Momentum is the check on the
    result: the projectile carries 512 kg × 40 m/s, and with no gravity nothing else adds or removes it.
    """
    w = World(gravity=(0, 0))
    projectile = w.add_body(position=(projectile_x, 0.0), velocity=(speed, 0.0))
    projectile.add_shape(box(4.0, 4.0), density=8.0, friction=0.6)
    shape = box(0.5 * size, 0.5 * size)
    for i in range(columns):
        for j in range(rows):
            b = w.add_body(position=(30.0 + i * size, (j - 0.5 * rows) * size))
            b.add_shape(shape, density=1.0, friction=0.6)
    return w


def tumbler(grid=45, angular_speed_deg=25.0):
    """Box2D v3's tumbler: ``grid`` × ``grid`` boxes of 0.25 m inside a 20 m hollow square that turns.

    The container is a kinematic body at (0, 10) made of four 1 m thick walls (inner half width 9.5 m),
    turning at ``angular_speed_deg`` °/s (Box2D drives a dynamic body with a motor at 25°/s; a kinematic
    body turns at exactly that rate whatever the load, the same motion without the joint). The boxes
    start on a 0.4 m grid from (−0.2·grid, 10 − 0.2·grid), which for 45 fills the container; gravity (0, −10).
    """
    w = World(gravity=(0, -10))
    drum = w.add_body(position=(0.0, 10.0), kind="kinematic", angular_velocity=math.radians(angular_speed_deg))
    for center, half in (((10.0, 0.0), (0.5, 10.0)), ((-10.0, 0.0), (0.5, 10.0)),
                         ((0.0, 10.0), (10.0, 0.5)), ((0.0, -10.0), (10.0, 0.5))):
        drum.add_shape(box(half[0], half[1], center=center), density=1.0, friction=0.6)
    shape = box(0.125, 0.125)
    start = -0.2 * grid
    for i in range(grid):
        for j in range(grid):
            b = w.add_body(position=(start + 0.4 * j, start + 10.0 + 0.4 * i))
            b.add_shape(shape, density=1.0, friction=0.6)
    return w


SCENES = {
    "balls": (balls, "15 balls of random radius and restitution bouncing in a box (the seed article)"),
    "pyramid": (pyramid, "a pyramid of 210 boxes (base 20) standing on the ground"),
    "pile": (pile, "circles, capsules, boxes, rounded polygons and a concave body falling into a box"),
    "bullets": (bullets, "small circles at 200 m/s against 0.1 m walls: continuous collision"),
    "smash": (smash, "a heavy box at 40 m/s into a block of 9,600 small boxes, no gravity (Box2D's smash)"),
    "tumbler": (tumbler, "2,025 small boxes in a hollow square turning at 25°/s (Box2D's tumbler)"),
}
