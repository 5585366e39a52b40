"""Box2D v3's seven benchmark scenes, built as its ``benchmark`` app builds them (Box2D v3.2, commit 617d32ab:
``shared/benchmarks.c`` builds the scenes, ``shared/human.c`` the ragdolls of rain, ``benchmark/main.c`` runs
them), so that a timing of carom and of Box2D is a timing of the same work.

Box2D's app steps every scene with dt = 1/60 and 4 substeps, gravity (0, −10) unless the scene changes it,
continuous collision on, for ``STEPS[name]`` steps, and times the steps after the first. Box2D's defaults
fill what a scene leaves unset: density 1, friction 0.6, restitution 0, sleeping on (a body sleeps after
0.5 s below 0.05 m/s), collision category 1 and mask all. carom's defaults are the same, so a builder here
sets only what Box2D's scene sets.

Where carom cannot say what Box2D says, the builder says so: carom refuses a joint between two static bodies
(joint_grid's top row has six), and carom's chain segments collide on their left side where Box2D's collide
on their right, so the spinner's loop is listed the other way round (the same 360 points).

Each scene is a :class:`Box2DScene`: the world, and ``before_step(i)``, which does what Box2D's ``stepFcn``
does before step ``i`` (rain: new ragdolls every 8 steps; the others: nothing). :func:`build` makes one by
name; the plain builders (``large_pyramid()`` …) return the world alone, with rain's first wave in.
"""
import math

import numpy as np

from ..geometry import Capsule, Circle, Polygon, Segment, box
from ..rigid import World, joints
from ..rigid.world import ALL_CATEGORIES

#: Box2D's benchmark app: dt and the number of steps of each scene (benchmark/main.c, ``totalStepCount``)
TIME_STEP = 1.0 / 60.0
STEPS = {"joint_grid": 500, "large_pyramid": 500, "many_pyramids": 200, "rain": 1000, "smash": 300,
         "spinner": 500, "tumbler": 750}
#: the spinner motor's torque limit: Box2D's is FLT_MAX (no limit); carom takes settings up to FLOAT32_LIMIT
#: (1e30), far beyond any torque the motor reaches
from ..constants import FLOAT32_LIMIT as NO_TORQUE_LIMIT


class Box2DScene:
    """A world and what Box2D's benchmark does to it before each step (``before_step(i)``, i from 0)."""

    def __init__(self, world, before_step=None):
        self.world = world
        self._before = before_step

    def before_step(self, i):
        if self._before is not None:
            self._before(i)


def joint_grid(n=100):
    """100 × 100 circles of radius 0.4 at (k, −i), density 1, category 2 and mask ~2 (they never touch each
    other), each pinned by a revolute joint to the one above (anchors (0, −0.5) and (0, 0.5) in the bodies'
    frames) and to the one on its left (anchors (0.5, 0) and (−0.5, 0)). The seven bodies k = n/2 − 3 … n/2 + 3
    of the top row (i = 0) are static. Sleeping off. Bodies and joints in Box2D's order (k outer, i inner).

    Box2D makes 2·n·(n − 1) = 19,800 joints; six of them join two of the static top-row bodies, which carom
    refuses (they do nothing in Box2D either: a joint between static bodies is never solved), so 19,794."""
    w = World(gravity=(0, -10))
    w.sleep_enabled = False
    shape = Circle(0.4)
    mask = ALL_CATEGORIES ^ np.uint64(2)
    bodies = {}
    for k in range(n):
        for i in range(n):
            static = n // 2 - 3 <= k <= n // 2 + 3 and i == 0
            body = w.add_body(position=(float(k), float(-i)), kind="static" if static else "dynamic")
            body.add_shape(shape, density=1.0, category=2, mask=mask)
            if i > 0:
                w.add_joint(joints.Revolute(bodies[k, i - 1], body, anchor=(float(k), 0.5 - i)))
            if k > 0 and not (static and bodies[k - 1, i].kind == "static"):
                w.add_joint(joints.Revolute(bodies[k - 1, i], body, anchor=(k - 0.5, float(-i))))
            bodies[k, i] = body
    return w


def large_pyramid(base=100):
    """A pyramid of 5,050 boxes of 1 m (base 100, density 1, friction 0.6) on a static 200 × 2 m box centred at
    (0, −1). Row i (from 0 at the bottom) has base − i boxes at y = i + 0.5, x = 0.5·i + 0.5 + (j − i) − 50 for
    j = i … base − 1. Sleeping off."""
    w = World(gravity=(0, -10))
    w.sleep_enabled = False
    w.add_body(position=(0.0, -1.0), kind="static").add_shape(box(100.0, 1.0))
    shape = box(0.5, 0.5)
    for i in range(base):
        for j in range(i, base):
            w.add_body(position=((i + 1.0) * 0.5 + (j - i) - 0.5 * base, i + 0.5)).add_shape(shape, density=1.0)
    return w


def _small_pyramid(w, base, extent, center_x, base_y, shape):
    for i in range(base):
        for j in range(i, base):
            x = (i + 1.0) * extent + 2.0 * (j - i) * extent + center_x - 0.5
            w.add_body(position=(x, (2.0 * i + 1.0) * extent + base_y)).add_shape(shape, density=1.0)


def many_pyramids(rows=20, columns=20, base=10):
    """20 × 20 pyramids of base 10 (22,000 boxes of 1 m, density 1, friction 0.6) on 20 static ground segments
    220 m long, 11 m apart (y = 0, 11, … 209), all on one static body at the origin. Pyramid (r, c) stands on
    segment r with its left end at centre_x = −110 + 11·c + 1 (Box2D's ``CreateSmallPyramid``). Sleeping off."""
    w = World(gravity=(0, -10))
    w.sleep_enabled = False
    extent = 0.5
    ground = w.add_body(kind="static")
    dy = 2.0 * extent * (base + 1.0)
    width = 2.0 * extent * columns * (base + 1.0)
    for r in range(rows):
        ground.add_shape(Segment((-0.5 * width, r * dy), (0.5 * width, r * dy)))
    shape = box(extent, extent)
    for r in range(rows):
        for c in range(columns):
            center_x = -0.5 * width + c * (2.0 * extent * base + 2.0 * extent) + 2.0 * extent
            _small_pyramid(w, base, extent, center_x, r * dy, shape)
    return w


# ------------------------------------------------------------------------------------------------------ rain
#: Box2D's rain: rows and columns of groups of ragdolls, ragdolls per group, the ground's cells
RAIN_ROWS, RAIN_COLUMNS, RAIN_GROUP, RAIN_GRID, RAIN_CELL = 5, 40, 5, 500, 0.5

#: Box2D's human (shared/human.c, scale 1): name, parent, the body's height above the ragdoll's position,
#: capsule (bottom, top of its core on the body's y axis, radius), the pin's height, angle limits (half turns),
#: share of the joint friction torque, linear damping, the joint's reference angle (half turns)
HUMAN = (
    ("hip", None, 0.95, (-0.02, 0.02, 0.095), None, None, 1.0, 0.0, 0.0),
    ("torso", "hip", 1.2, (-0.135, 0.135, 0.09), 1.0, (-0.25, 0.0), 0.5, 0.0, 0.0),
    ("head", "torso", 1.475, (-0.038, 0.039, 0.075), 1.4, (-0.3, 0.1), 0.25, 0.1, 0.0),
    ("upper_left_leg", "hip", 0.775, (-0.125, 0.125, 0.06), 0.9, (-0.05, 0.4), 1.0, 0.0, 0.0),
    ("lower_left_leg", "upper_left_leg", 0.475, (-0.155, 0.125, 0.045), 0.625, (-0.5, -0.02), 0.5, 0.0, 0.0),
    ("upper_right_leg", "hip", 0.775, (-0.125, 0.125, 0.06), 0.9, (-0.05, 0.4), 1.0, 0.0, 0.0),
    ("lower_right_leg", "upper_right_leg", 0.475, (-0.155, 0.125, 0.045), 0.625, (-0.5, -0.02), 0.5, 0.0, 0.0),
    ("upper_left_arm", "torso", 1.225, (-0.125, 0.125, 0.035), 1.35, (-0.1, 0.8), 0.5, 0.0, 0.0),
    ("lower_left_arm", "upper_left_arm", 0.975, (-0.125, 0.125, 0.03), 1.1, (-0.2, 0.3), 0.1, 0.1, 0.25),
    ("upper_right_arm", "torso", 1.225, (-0.125, 0.125, 0.035), 1.35, (-0.1, 0.8), 0.5, 0.0, 0.0),
    ("lower_right_arm", "upper_right_arm", 0.975, (-0.125, 0.125, 0.03), 1.1, (-0.2, 0.3), 0.1, 0.1, 0.25),
)
#: the foot on each lower leg: a rounded quadrilateral (radius 0.015 m) in the body's frame
FOOT = ((-0.03, -0.185), (0.11, -0.185), (0.11, -0.16), (-0.03, -0.14))


_HUMAN_SHAPES: list = []


def _human_shapes():
    """The human's capsules (bone order) and foot, made once (as Box2D's CreateHuman makes its b2Capsule values
    once per call): a shape is copied into the body that takes it, so one geometry serves every ragdoll."""
    if not _HUMAN_SHAPES:
        _HUMAN_SHAPES.append([Capsule((0.0, y0), (0.0, y1), r) for _, _, _, (y0, y1, r), *_ in HUMAN])
        _HUMAN_SHAPES.append(Polygon(FOOT, radius=0.015))
    return _HUMAN_SHAPES


def add_human(w, position, group, friction_torque=0.05, hertz=5.0, damping_ratio=0.5):
    """Box2D's human at scale 1 standing on ``position``: 11 capsule bodies (friction 0.2, category 2, mask 1|2,
    collision group −``group``; sleep threshold 0.1 m/s), 10 revolute joints with angle limits, joint friction
    (a motor of speed 0 and at most share × ``friction_torque`` N·m) and a spring of ``hertz`` and
    ``damping_ratio`` towards the rest pose; on each lower leg a foot (friction 0.05, category 2, mask 1: feet
    touch the ground only). Returns the bodies in bone order."""
    return add_humans(w, [position], [group], friction_torque, hertz, damping_ratio)[0]


def add_humans(w, positions, groups, friction_torque=0.05, hertz=5.0, damping_ratio=0.5):
    """:func:`add_human` for each of ``positions`` with its group of ``groups``, as Box2D's CreateHuman makes
    them one after the other: the bodies in one ``World.add_bodies`` call (human by human, bone by bone, each
    with its capsule), then the feet, then the joints (in one ``World.add_joints`` call). Returns each human's
    bodies in bone order."""
    capsules, foot = _human_shapes()
    count = len(HUMAN)
    at = []
    for x, y in positions:
        at.extend((x, y + height) for _, _, height, *_ in HUMAN)
    damping = np.tile([bone[7] for bone in HUMAN], len(positions))
    group = np.repeat(-np.array(groups, np.int64), count)
    bodies = w.add_bodies(np.array(at), shape=capsules * len(positions), density=1.0, friction=0.2, category=2,
                          mask=1 | 2, group=group, linear_damping=damping, sleep_threshold=0.1)
    humans = [bodies[count * h:count * (h + 1)] for h in range(len(positions))]
    names = [bone[0] for bone in HUMAN]
    legs = [k for k, name in enumerate(names) if name.startswith("lower") and name.endswith("leg")]
    w.add_shapes([human[k] for human in humans for k in legs], foot, density=1.0, friction=0.05, category=2, mask=1,
                 group=np.repeat(-np.array(groups, np.int64), len(legs)))
    # the joints as columns, human by human, bone by bone (joints.Revolute.many: one definition per joint was most
    # of adding a wave of rain)
    parent, child, pin, lower, upper, reference, share = _human_joints()
    rows = np.array([body.index for body in bodies], np.int64).reshape(len(positions), count)
    at = np.array(positions, np.float64)
    anchor = np.empty((len(positions), len(child), 2))
    anchor[:, :, 0] = at[:, :1]
    anchor[:, :, 1] = at[:, 1:] + pin
    repeat = len(positions)
    w.add_joints(joints.Revolute.many(body_a=rows[:, parent].reshape(-1), body_b=rows[:, child].reshape(-1),
                                      anchor=anchor.reshape(-1, 2), lower=np.tile(lower, repeat),
                                      upper=np.tile(upper, repeat), reference_angle=np.tile(reference, repeat),
                                      max_motor_torque=np.tile(share * friction_torque, repeat), hertz=hertz,
                                      damping_ratio=damping_ratio))
    return humans


def _human_joints():
    """The human's joints as columns in bone order: the parent's and the child's bone, the pin's height, the angle
    limits and reference angle (radians) and the share of the joint friction torque."""
    names = [bone[0] for bone in HUMAN]
    bones = [(names.index(parent), k, pin, limits[0] * math.pi, limits[1] * math.pi, reference * math.pi, share)
             for k, (_, parent, _, _, pin, limits, share, _, reference) in enumerate(HUMAN) if parent is not None]
    return tuple(np.array(column) for column in zip(*bones))


class Rain(Box2DScene):
    """Box2D's rain: 5 floors 45 m apart, each 501 static boxes of 0.5 m side by side (x = −125 … 125); every 8
    steps a column of 5 groups (one per floor, 40 m above it) of 5 ragdolls 0.5 m apart falls, 40 columns
    across the 250 m; once all 40 are in, every 8 steps the oldest column is removed and dropped again.
    The ragdolls of one group have collision groups −1 … −5, so ragdoll k of every group passes through ragdoll
    k of every other group (as in Box2D, whose group indices are i + 1)."""

    def __init__(self):
        w = World(gravity=(0, -10))
        super().__init__(w, self._rain)
        for r in range(RAIN_ROWS):
            x = -0.5 * RAIN_GRID * RAIN_CELL
            for _ in range(RAIN_GRID + 1):
                # (Box2D puts the 2,505 boxes on one static body; carom recomputes a body's mass data over all
                # its shapes when one is added, so that build takes a minute: one static body per box here,
                # which the step treats the same: static bodies are never awake)
                cell = w.add_body(position=(x, 45.0 * r), kind="static")
                cell.add_shape(box(0.5 * RAIN_CELL, 0.5 * RAIN_CELL))
                x += RAIN_CELL
        self.groups = {}
        self.column_count = 0
        self.column_index = 0

    def _column(self, column):
        """The column's group of humans on every row (Box2D's CreateHuman calls of a column, row by row, human by
        human: one ``add_humans`` call for the column's 25)."""
        span = RAIN_GRID * RAIN_CELL
        x = -0.5 * span + span / RAIN_COLUMNS * (column + 0.5)
        at = [(x + 0.5 * i, 40.0 + 45.0 * row) for row in range(RAIN_ROWS) for i in range(RAIN_GROUP)]
        humans = add_humans(self.world, at, [i + 1 for _ in range(RAIN_ROWS) for i in range(RAIN_GROUP)])
        for row in range(RAIN_ROWS):
            # (as body indices: ``remove_bodies`` checks an index array as a whole, a list handle by handle)
            self.groups[row, column] = np.array([body.index for human in humans[RAIN_GROUP * row:RAIN_GROUP * (row + 1)]
                                                 for body in human], np.int64)

    def _rain(self, step):
        if step & 7:
            return
        if self.column_count < RAIN_COLUMNS:
            self._column(self.column_count)
            self.column_count += 1
        else:
            # (Box2D destroys the column's humans one body at a time; one remove_bodies call for the column's
            # 275 bodies goes over carom's contact and joint tables once)
            self.world.remove_bodies(np.concatenate([self.groups.pop((r, self.column_index))
                                                     for r in range(RAIN_ROWS)]))
            self._column(self.column_index)
            self.column_index = (self.column_index + 1) % RAIN_COLUMNS


def rain():
    """Box2D's rain (:class:`Rain`) with its first wave in, as before Box2D's first step."""
    scene = Rain()
    scene.before_step(0)
    return scene.world


# --------------------------------------------------------------------------------------------------- spinner
def spinner(count=2 * 3038):
    """A static loop of 360 chain segments (a circle of radius 40 m around (0, 32), friction 0.1) and, inside
    it, a dynamic rounded box 0.8 × 40 m (corner radius 0.2, friction 0, density 1, never sleeping) at (0, 12),
    turned at 5 rad/s by a revolute motor with no torque limit (Box2D: FLT_MAX; carom: 1e30, the largest it takes); 6,076 bodies (density 0.25, friction
    0.1, restitution 0.1) in rows of 92, 0.5 m apart, from (−23, 2): a capsule of 0.5 m between its centres and
    radius 0.25, a circle of radius 0.35, a 0.7 m square, in turn. Sleeping on."""
    w = World(gravity=(0, -10))
    ground = w.add_body(kind="static")
    turn = 2.0 * math.pi / 360
    # Box2D lists the points clockwise (its chains collide on their right); carom's collide on their left
    points = [(40.0 * math.cos(i * turn), 40.0 * math.sin(i * turn) + 32.0) for i in range(360)]
    ground.add_chain(points, loop=True, friction=0.1)
    arm = w.add_body(position=(0.0, 12.0))
    arm.sleep_enabled = False
    arm.add_shape(Polygon([(-0.2, -19.8), (0.2, -19.8), (0.2, 19.8), (-0.2, 19.8)], radius=0.2), density=1.0,
                  friction=0.0)
    w.add_joint(joints.Revolute(ground, arm, anchor=(0.0, 12.0), motor_speed=5.0, max_motor_torque=NO_TORQUE_LIMIT))
    shapes = (Capsule((-0.25, 0.0), (0.25, 0.0), 0.25), Circle(0.35), box(0.35, 0.35))
    x, y = -23.0, 2.0
    for i in range(count):
        w.add_body(position=(x, y)).add_shape(shapes[i % 3], density=0.25, friction=0.1, restitution=0.1)
        x += 0.5
        if x >= 23.0:
            x, y = -23.0, y + 0.5
    return w


def smash(columns=120, rows=80):
    """No gravity. A dynamic 8 × 8 m box of density 8 at (−20, 0) moving at 40 m/s towards a block of 120 × 80
    boxes of 0.4 m (density 1), at x = 30 + 0.4·i, y = 0.4·(j − 40), created asleep; the box travels 45.8 m
    before it hits them and wakes them. Sleeping on."""
    w = World(gravity=(0, 0))
    w.add_body(position=(-20.0, 0.0), velocity=(40.0, 0.0)).add_shape(box(4.0, 4.0), density=8.0)
    d = 0.4
    shape = box(0.5 * d, 0.5 * d)
    block = []
    for i in range(columns):
        for j in range(rows):
            body = w.add_body(position=(i * d + 30.0, (j - rows / 2.0) * d))
            body.add_shape(shape, density=1.0)
            block.append(body)
    for body in block:      # (after the block is whole: a new shape wakes the bodies it touches)
        body.sleep()
    return w


def tumbler(grid=45):
    """A dynamic hollow square at (0, 10), four boxes of density 50 (walls 1 m thick, 20 m long, centred 10 m
    out), turned at 25°/s by a revolute motor of at most 10⁸ N·m pinned to a static body at (0, 10); inside, 45 ×
    45 boxes of 0.25 m (density 1) on a 0.4 m grid from (−9, 1). Sleeping on."""
    w = World(gravity=(0, -10))
    ground = w.add_body(kind="static")
    drum = w.add_body(position=(0.0, 10.0))
    for center, half in (((10.0, 0.0), (0.5, 10.0)), ((-10.0, 0.0), (0.5, 10.0)),
                         ((0.0, 10.0), (10.0, 0.5)), ((0.0, -10.0), (10.0, 0.5))):
        drum.add_shape(box(half[0], half[1], center=center), density=50.0)
    w.add_joint(joints.Revolute(ground, drum, anchor=(0.0, 10.0), motor_speed=math.radians(25.0),
                                max_motor_torque=1e8))
    shape = box(0.125, 0.125)
    y = -0.2 * grid + 10.0
    for i in range(grid):
        x = -0.2 * grid
        for j in range(grid):
            w.add_body(position=(x, y)).add_shape(shape, density=1.0)
            x += 0.4
        y += 0.4
    return w


BUILDERS = {"joint_grid": joint_grid, "large_pyramid": large_pyramid, "many_pyramids": many_pyramids,
            "rain": rain, "smash": smash, "spinner": spinner, "tumbler": tumbler}


def build(name):
    """Box2D's scene ``name`` as a :class:`Box2DScene`, ready for its first ``before_step(0)``."""
    if name == "rain":
        return Rain()
    if name not in BUILDERS:
        from ..errors import CaromError
        raise CaromError(f"unknown Box2D benchmark scene {name!r}; known: {', '.join(BUILDERS)}")
    return Box2DScene(BUILDERS[name]())
