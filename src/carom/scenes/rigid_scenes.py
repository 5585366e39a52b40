"""Rigid-body scene builders shared by the demo, the tests and the benchmarks.

Each builder returns a ready :class:`carom.World` (Box2D v3's benchmark scenes use dt = 1/60 and gravity
(0, −10)).
"""
import math

import numpy as np

from ..geometry import Circle, Capsule, Segment, Polygon, box
from ..rigid import World, joints
from ..rigid.world import ALL_CATEGORIES


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


# ------------------------------------------------------------------------------------------------- joints
def pendulum(release_deg=60.0):
    """A simple pendulum (a 0.1 m ball 1 m below its pin, released ``release_deg`` from the vertical) beside a
    double pendulum (two such balls one below the other, released from the horizontal), above a floor that
    neither reaches.

    The simple pendulum's period is near 2π·√(1 m / 10 m/s²) ≈ 2.0 s, a bit longer at a large release angle;
    the double pendulum is chaotic: two runs that start a hair apart soon differ.
    """
    w = World(gravity=(0, -10))
    w.static_body.add_shape(box(5.0, 0.25, center=(0, -0.25)))
    ball = Circle(0.1)
    pin = np.array((-2.5, 3.0))
    a = math.radians(release_deg)
    bob = w.add_body(position=pin + (math.sin(a), -math.cos(a)))
    bob.add_shape(ball, density=1.0)
    w.add_joint(joints.Revolute(None, bob, anchor=pin))
    pin = np.array((1.0, 3.0))
    upper = w.add_body(position=pin + (1.0, 0.0))
    upper.add_shape(ball, density=1.0)
    lower = w.add_body(position=pin + (1.0 + math.cos(0.3), -math.sin(0.3)))
    lower.add_shape(ball, density=1.0)
    w.add_joint(joints.Revolute(None, upper, anchor=pin))
    w.add_joint(joints.Revolute(upper, lower, anchor=upper.position))
    return w


def chain(links=40, link_length=0.5, top=(0.0, 21.0)):
    """A chain of ``links`` capsules (``link_length`` m each, 0.1 m thick) pinned to the static body at ``top``
    and let go from the horizontal: it swings down and hangs, over a ground box and a few balls.

    Each link is pinned to the next at their shared end (neighbours do not collide; links further apart do, so
    the swinging chain folds on itself rather than through itself).
    """
    w = World(gravity=(0, -10))
    w.static_body.add_shape(box(30.0, 0.5, center=(0, -0.5)), friction=0.6)
    top = np.asarray(top, float)
    half = 0.5 * link_length
    shape = Capsule((-half, 0.0), (half, 0.0), 0.05)
    previous = None
    for k in range(links):
        link = w.add_body(position=top + ((k + 0.5) * link_length, 0.0))
        link.add_shape(shape, density=1.0, friction=0.4)
        w.add_joint(joints.Revolute(previous, link, anchor=top + (k * link_length, 0.0)))
        previous = link
    for k, x in enumerate((-4.0, -2.5, 3.0)):
        w.add_body(position=(x, 0.6 + 0.3 * k)).add_shape(Circle(0.6 + 0.3 * k), density=1.0)
    return w


def bridge(planks=80, plank_length=0.5, friction_torque=20.0, drops=12, seed=4):
    """Box2D's bridge: ``planks`` boards (``plank_length`` × 0.125 m) pinned end to end between two static
    posts, at y = 10, with ``drops`` boxes, circles and capsules dropped on it (Box2D: 160 boards of 1 m).

    The boards span exactly from pin to pin, so the bridge sags only as far as its joints give; each joint has a
    little friction (a motor of speed 0 and at most ``friction_torque`` N·m), as Box2D's, which calms the
    swaying.
    """
    w = World(gravity=(0, -10))
    span = planks * plank_length
    x0, y = -0.5 * span, 10.0
    for x in (x0, -x0):      # (the posts' tops 0.5 m below the pins: the end boards turn without touching them)
        w.static_body.add_shape(box(0.5, 4.75, center=(x + math.copysign(0.5, x), y - 5.25)), friction=0.6)
    w.static_body.add_shape(box(0.5 * span + 10.0, 0.5, center=(0, -0.5)), friction=0.6)
    shape = box(0.5 * plank_length, 0.0625)
    previous = None
    for k in range(planks):
        plank = w.add_body(position=(x0 + (k + 0.5) * plank_length, y))
        plank.add_shape(shape, density=20.0, friction=0.6)
        w.add_joint(joints.Revolute(previous, plank, anchor=(x0 + k * plank_length, y),
                                    max_motor_torque=friction_torque))
        previous = plank
    w.add_joint(joints.Revolute(previous, None, anchor=(-x0, y), max_motor_torque=friction_torque))
    rng = np.random.default_rng(seed)
    for k in range(drops):
        b = w.add_body(position=(rng.uniform(0.8 * x0, -0.8 * x0), y + 2.0 + 1.2 * k), angle=rng.uniform(0, 3))
        b.add_shape(random_shape(rng, k % 3), density=1.0)
    return w


def random_shape(rng, kind):
    """A shape to drop into a scene, drawn with ``rng``: kind 0 a box of half-extents 0.25-0.6 m, 1 a circle of
    radius 0.25-0.6 m, 2 a capsule 0.8 m long between its centres with a radius of 0.15-0.3 m (the bridge's
    drops, and the demo window's spawner)."""
    if kind == 0:
        return box(*rng.uniform(0.25, 0.6, 2))
    if kind == 1:
        return Circle(rng.uniform(0.25, 0.6))
    return Capsule((-0.4, 0), (0.4, 0), rng.uniform(0.15, 0.3))


#: The bones of a ragdoll (after Box2D's "human" sample, 1.55 m tall): name, parent, the body origin's height,
#: the capsule (bottom and top of its core along the body's y axis, radius), the pin's height, the limits on
#: the angle to the parent (in half turns, π), the joint friction (a fraction of the ragdoll's) and, for the
#: forearms, a reference angle (π) that keeps the elbows a little bent.
HUMAN_BONES = (
    ("hip", None, 0.95, (-0.02, 0.02, 0.095), None, None, 1.0, 0.0),
    ("torso", "hip", 1.2, (-0.135, 0.135, 0.09), 1.0, (-0.25, 0.0), 0.5, 0.0),
    ("head", "torso", 1.475, (-0.038, 0.039, 0.075), 1.4, (-0.3, 0.1), 0.25, 0.0),
    ("upper_left_leg", "hip", 0.775, (-0.125, 0.125, 0.06), 0.9, (-0.05, 0.4), 1.0, 0.0),
    ("lower_left_leg", "upper_left_leg", 0.475, (-0.155, 0.125, 0.045), 0.625, (-0.5, -0.02), 0.5, 0.0),
    ("upper_right_leg", "hip", 0.775, (-0.125, 0.125, 0.06), 0.9, (-0.05, 0.4), 1.0, 0.0),
    ("lower_right_leg", "upper_right_leg", 0.475, (-0.155, 0.125, 0.045), 0.625, (-0.5, -0.02), 0.5, 0.0),
    ("upper_left_arm", "torso", 1.225, (-0.125, 0.125, 0.035), 1.35, (-0.1, 0.8), 0.5, 0.0),
    ("lower_left_arm", "upper_left_arm", 0.975, (-0.125, 0.125, 0.03), 1.1, (-0.2, 0.3), 0.1, 0.25),
    ("upper_right_arm", "torso", 1.225, (-0.125, 0.125, 0.035), 1.35, (-0.1, 0.8), 0.5, 0.0),
    ("lower_right_arm", "upper_right_arm", 0.975, (-0.125, 0.125, 0.03), 1.1, (-0.2, 0.3), 0.1, 0.25),
)


def add_ragdoll(world, position, angle=0.0, group=-1, friction_torque=0.05):
    """A ragdoll of :data:`HUMAN_BONES` standing on ``position`` (its feet's height), turned by ``angle`` about
    that point: eleven capsule bodies, ten revolute joints with angle limits and joint friction (a motor of
    speed 0 and at most its share of ``friction_torque`` N·m). Its shapes share the negative ``group``, so
    its own limbs never collide with each other (Box2D's ragdolls do the same). Returns ``{name: body}``."""
    p0 = np.asarray(position, float)
    c, s = math.cos(angle), math.sin(angle)

    def placed(height):
        return p0 + (-s * height, c * height)

    bodies = {}
    for name, parent, height, (y0, y1, radius), pin, limits, friction, reference in HUMAN_BONES:
        body = world.add_body(position=placed(height), angle=angle)
        body.add_shape(Capsule((0.0, y0), (0.0, y1), radius), density=1.0, friction=0.2, group=group)
        bodies[name] = body
        if parent is not None:
            world.add_joint(joints.Revolute(bodies[parent], body, anchor=placed(pin), lower=limits[0] * math.pi,
                                            upper=limits[1] * math.pi, reference_angle=reference * math.pi,
                                            max_motor_torque=friction * friction_torque))
    return bodies


def ragdolls(count=20, columns=4, seed=5):
    """``count`` ragdolls (:func:`add_ragdoll`) dropped in a pile into an open box 6 m wide, each turned at
    random and given a small random push, in ``columns`` columns."""
    w = World(gravity=(0, -10))
    container(w, 3.0, 12.0)
    rng = np.random.default_rng(seed)
    for k in range(count):
        column, row = k % columns, k // columns
        x = (column - 0.5 * (columns - 1)) * 1.3 + rng.uniform(-0.2, 0.2)
        bodies = add_ragdoll(w, (x, 1.0 + 1.9 * row), angle=rng.uniform(-0.6, 0.6), group=-(k + 1))
        push = rng.uniform(-2.0, 2.0, 2)
        for body in bodies.values():
            body.velocity = push
    return w


def car(motor_speed=-12.0, max_motor_torque=40.0, hertz=5.0, damping_ratio=0.7, track_length=40.0):
    """A car on bumpy ground: a rounded chassis and two wheels on wheel joints (a suspension spring of ``hertz``
    and ``damping_ratio`` along the chassis' vertical, ±0.25 m of travel), the rear one driven by a motor of
    ``motor_speed`` rad/s (negative: clockwise, so the car drives to +x) and at most ``max_motor_torque`` N·m.

    The ground is a static chain: flat at the start, then bumps of 0.1–0.35 m and a ramp, ``track_length`` m
    long, with a wall at each end.
    """
    w = World(gravity=(0, -10))
    x = np.arange(-10.0, track_length + 0.01, 1.0)
    bumps = np.where(x > 3.0, 0.1 + 0.25 * (0.5 + 0.5 * np.sin(1.7 * x)) * np.sin(0.9 * x) ** 2, 0.0)
    ramp = np.clip((x - 0.6 * track_length) * 0.25, 0.0, 1.5) * (x < 0.8 * track_length)
    w.static_body.add_chain(np.stack([x, bumps + ramp], 1), friction=0.8)
    for wall_x in (x[0], x[-1]):
        w.static_body.add_shape(box(0.5, 3.0, center=(wall_x + math.copysign(0.5, wall_x), 2.5)))
    chassis = w.add_body(position=(0.0, 1.4))
    chassis.add_shape(Polygon([(-1.5, -0.4), (1.5, -0.4), (1.5, 0.05), (0.1, 0.75), (-1.1, 0.75), (-1.5, 0.2)],
                              radius=0.1), density=1.0, friction=0.6)
    wheel = Circle(0.4)
    wheels = []
    for wx in (-1.0, 1.0):
        body = w.add_body(position=(wx, 0.85))
        body.add_shape(wheel, density=2.0, friction=1.2)
        wheels.append(body)
    rear, front = wheels
    w.add_joint(joints.Wheel(chassis, rear, anchor=rear.position, axis=(0, 1), hertz=hertz,
                             damping_ratio=damping_ratio, lower=-0.25, upper=0.25, motor_speed=motor_speed,
                             max_motor_torque=max_motor_torque))
    w.add_joint(joints.Wheel(chassis, front, anchor=front.position, axis=(0, 1), hertz=hertz,
                             damping_ratio=damping_ratio, lower=-0.25, upper=0.25))
    return w


def cradle(balls=5, radius=0.25, string=2.0, pull_deg=45.0, gap=0.03):
    """Newton's cradle: ``balls`` balls (restitution 1, friction 0) each hanging on a rigid ``string`` m long
    (a distance joint) from a bar, ``gap`` m apart, the first one pulled ``pull_deg`` aside.

    Let go, the first ball swings down into the row, stops, and the last one swings out (0.999 of the first
    ball's speed, the middle ones below 0.01 of it). The balls hang 3 cm apart rather than touching: balls that
    touch meet in one step, and the solver answers the points that meet in one step together, as one
    collision of the group (touching, the first ball bounces back at a third of its speed and the last two
    leave together at two thirds, as in pymunk); 3 cm apart, each impact is a collision of two equal balls of
    its own and hands the whole swing on.
    """
    w = World(gravity=(0, -10))
    top = string + 1.0
    pitch = 2 * radius + gap
    x0 = -0.5 * (balls - 1) * pitch
    w.static_body.add_shape(box(0.5 * balls * pitch + 0.5, 0.1, center=(0, top + 0.1)))
    shape = Circle(radius)
    a = math.radians(pull_deg)
    for k in range(balls):
        pin = np.array((x0 + pitch * k, top))
        hang = (-math.sin(a) * string, -math.cos(a) * string) if k == 0 else (0.0, -string)
        ball = w.add_body(position=pin + hang)
        ball.add_shape(shape, density=1.0, friction=0.0, restitution=1.0)
        w.add_joint(joints.Distance(None, ball, anchor_a=pin, anchor_b=ball.position))
    return w


def joint_grid(n=100):
    """Box2D v3's joint_grid benchmark: ``n`` × ``n`` circles of radius 0.4 at (i, −j), 1 m apart, each pinned to
    its left and upper neighbours halfway between them (2·n·(n − 1) revolute joints, 19,800 for n = 100), hanging
    from the seven middle bodies of the top row, which are static, under gravity (0, −10).

    The circles never touch each other (category 2, mask all but 2, as Box2D's), so the step's work is the joints.
    Box2D also pins the static top-row bodies to each other; carom refuses a joint between two static bodies,
    so those six are left out (19,794 joints for n = 100).
    """
    w = World(gravity=(0, -10))
    shape = Circle(0.4)
    mask = ALL_CATEGORIES ^ np.uint64(2)
    grid = {}
    for i in range(max(0, n // 2 - 3), min(n, n // 2 + 4)):
        grid[i, 0] = w.add_body(position=(float(i), 0.0), kind="static")
        grid[i, 0].add_shape(shape, category=2, mask=mask)
    cells = [(i, j) for i in range(n) for j in range(n) if (i, j) not in grid]
    # (the dynamic bodies in one call: a third of the build time of body-by-body shapes)
    positions = np.array(cells, float).reshape(-1, 2) * (1.0, -1.0)
    grid.update(zip(cells, w.add_bodies(positions, shape=shape, density=1.0, category=2, mask=mask)))
    for i in range(n):
        for j in range(n):
            if j > 0:
                w.add_joint(joints.Revolute(grid[i, j - 1], grid[i, j], anchor=(i, 0.5 - j)))
            if i > 0 and not (j == 0 and grid[i - 1, j].kind == grid[i, j].kind == "static"):
                w.add_joint(joints.Revolute(grid[i - 1, j], grid[i, j], anchor=(i - 0.5, -j)))
    return w


SCENES = {
    "balls": (balls, "15 balls of random radius and restitution bouncing in a box (the seed article)"),
    "pyramid": (pyramid, "a pyramid of 210 boxes (base 20) standing on the ground"),
    "pile": (pile, "circles, capsules, boxes, rounded polygons and a concave body falling into a box"),
    "bullets": (bullets, "small circles at 200 m/s against 0.1 m walls: continuous collision"),
    "smash": (smash, "a heavy box at 40 m/s into a block of 9,600 small boxes, no gravity (Box2D's smash)"),
    "tumbler": (tumbler, "2,025 small boxes in a hollow square turning at 25°/s (Box2D's tumbler)"),
    "pendulum": (pendulum, "a simple pendulum of 1 m beside a double pendulum (revolute joints)"),
    "chain": (chain, "a chain of 40 capsules on revolute joints swinging down from a pin"),
    "bridge": (bridge, "80 planks pinned end to end between two posts, things dropped on it (Box2D's bridge)"),
    "ragdolls": (ragdolls, "20 ragdolls of 11 capsules, joints with angle limits and friction, in a pile"),
    "car": (car, "a car on wheel joints (spring suspension, rear-wheel motor) driving over bumpy ground"),
    "cradle": (cradle, "Newton's cradle: 5 elastic balls on distance joints, the first pulled aside"),
    "joint_grid": (joint_grid, "100 × 100 circles, 19,794 revolute joints, hanging from its top row "
                               "(Box2D's joint_grid)"),
}
