"""One drawing description for every back end: a world becomes a list of primitives in world coordinates.

:func:`describe` turns a rigid world (:class:`carom.World`) or a Verlet world (:class:`carom.verlet.World`)
into a flat list of four primitive kinds — filled polygons, discs, polylines and fixed-size dots — and each
back end (:mod:`carom.render.backends`: pillow images, pygame surfaces, matplotlib axes) only knows how to
draw those four. So the window, the headless GIFs and the notebook pictures cannot drift apart.

Every rigid shape is a convex core plus a radius (1 vertex + r = circle, 2 vertices = segment or capsule,
n ≥ 3 = polygon, maybe rounded). The drawn outline of a rounded core is its Minkowski sum with the disk: each
core edge moved out by r along its outward normal, joined at each vertex by the arc from the previous edge's
normal to the next one's (counter-clockwise, the exterior angle). A 2-vertex core is the degenerate polygon
p1→p2→p1, whose two "exterior angles" are half turns: that gives a capsule's end caps with the same code.

Coordinates are world metres, y up; the pixel mapping is :class:`View` (y flipped). Dot radii and line widths
are in pixels, so markers keep their size whatever the zoom.
"""
from typing import TYPE_CHECKING
if TYPE_CHECKING:  # (annotations only)
    from typing import Tuple
    from .._types import Any, ArrayLike, Bits, Optional, Points, TransformLike, Vec2
import math

import numpy as np

# --------------------------------------------------------------------------------------------------- palette
BACKGROUND = (245, 245, 240)
INK = (30, 30, 34)
STATIC_FILL = (118, 118, 128)
KINEMATIC_FILL = (120, 160, 222)
CONTACT = (214, 39, 40)
AABB = (44, 160, 44)
TREE_STATIC = (150, 150, 150)
JOINT = (217, 119, 6)
JOINT_AXIS = (31, 119, 180)
#: Internal tree nodes are coloured by depth (root first), cycling through these.
DEPTH_COLOURS = ((31, 119, 180), (255, 127, 14), (148, 103, 189), (23, 190, 207), (188, 189, 34),
                 (227, 119, 194), (140, 86, 75))


def body_colour(index):
    """A stable, well-spread colour per body index: hues stepped by the golden ratio (no two neighbours alike)."""
    hue = (index * 0.61803398875) % 1.0
    return tuple(int(255 * (0.5 + 0.4 * math.cos(2 * math.pi * (hue + k / 3)))) for k in range(3))


def dimmed(colour, amount=0.6):
    """``colour`` blended ``amount`` of the way towards light grey (sleeping bodies)."""
    return tuple(int(round(c + amount * (205 - c))) for c in colour)


# ------------------------------------------------------------------------------------------------ primitives
class Poly:
    """Filled polygon (world points, k × 2). ``fill`` or ``outline`` may be None."""
    __slots__ = ("points", "fill", "outline")

    def __init__(self, points, fill, outline=INK):
        self.points = np.asarray(points, float)
        self.fill = fill
        self.outline = outline


class Disc:
    """Circle of world ``radius`` around ``center``."""
    __slots__ = ("center", "radius", "fill", "outline")

    def __init__(self, center, radius, fill, outline=INK):
        self.center = np.asarray(center, float)
        self.radius = float(radius)
        self.fill = fill
        self.outline = outline


class Lines:
    """Polyline through world points (k × 2), ``width`` in pixels; ``closed`` joins the last to the first."""
    __slots__ = ("points", "colour", "width", "closed")

    def __init__(self, points, colour, width=1, closed=False):
        self.points = np.asarray(points, float)
        self.colour = colour
        self.width = int(width)
        self.closed = bool(closed)


class Dot:
    """A marker of ``radius`` pixels at a world point (contact points, pins)."""
    __slots__ = ("center", "radius", "colour")

    def __init__(self, center, radius, colour):
        self.center = np.asarray(center, float)
        self.radius = float(radius)
        self.colour = colour


# ------------------------------------------------------------------------------------------------------ view
class View:
    """World rectangle ``lower``–``upper`` → a ``width`` × ``height`` pixel image, y up, aspect kept.

    scale = min(width / span_x, height / span_y) pixels per metre; the rectangle is centred in the image.
    """

    def __init__(self, lower: "Vec2", upper: "Vec2", width: "int" = 480, height: "int" = 360):
        self.lower = np.asarray(lower, float)
        self.upper = np.asarray(upper, float)
        span = self.upper - self.lower
        if not (np.all(np.isfinite(span)) and np.all(span > 0)):
            from ..errors import CaromError
            raise CaromError(f"view corners must satisfy lower < upper, got lower={lower!r}, upper={upper!r}")
        self.width = int(width)
        self.height = int(height)
        self.scale = min(self.width / span[0], self.height / span[1])
        self.offset = 0.5 * (np.array([self.width, self.height]) - span * self.scale)

    @property
    def size(self) -> tuple:
        """(width, height) in pixels."""
        return self.width, self.height

    def px(self, p: "Vec2") -> "np.ndarray":
        """World point(s) (…, 2) → pixel coordinates (…, 2), y down.

        ``p`` is a point or an array of points (…, 2).
        """
        p = np.asarray(p, float)
        x = self.offset[0] + (p[..., 0] - self.lower[0]) * self.scale
        y = self.height - self.offset[1] - (p[..., 1] - self.lower[1]) * self.scale
        return np.stack([x, y], -1)

    def to_world(self, q: "Vec2") -> "np.ndarray":
        """Pixel coordinates (…, 2) → world point(s): the inverse of :meth:`px`.

        ``q`` is a pixel position or an array of them (…, 2).
        """
        q = np.asarray(q, float)
        x = self.lower[0] + (q[..., 0] - self.offset[0]) / self.scale
        y = self.lower[1] + (self.height - self.offset[1] - q[..., 1]) / self.scale
        return np.stack([x, y], -1)


def fit_bounds(world: "Any", pad: "float" = 0.05) -> "Tuple[tuple, tuple]":
    """Lower and upper corners of a rectangle holding every shape (rigid) or particle (Verlet), padded.

    ``world`` is rigid or Verlet; ``pad`` is the margin, a fraction of the extent on each side.
    """
    if _is_rigid(world):
        _, _, verts, radius, _ = _rigid_shapes(world)
        if verts:
            lo = np.min([v.min(axis=0) - r for v, r in zip(verts, radius)], axis=0)
            hi = np.max([v.max(axis=0) + r for v, r in zip(verts, radius)], axis=0)
        else:
            lo, hi = np.array([-10.0, -10.0]), np.array([10.0, 10.0])
    else:
        pos = world.positions
        lo, hi = (pos.min(axis=0), pos.max(axis=0)) if len(pos) else (np.full(2, -10.0), np.full(2, 10.0))
    span = np.maximum(hi - lo, 1.0)
    return tuple(lo - pad * span), tuple(hi + pad * span)


# ---------------------------------------------------------------------------------------------- rigid world
def _is_rigid(world):
    """A rigid world (``carom.World``) has tables (``WorldTables``); a Verlet world has none."""
    return hasattr(world, "tables")


def rounded_outline(core: "Any", radius: "float", step: "float" = math.pi / 8) -> np.ndarray:
    """Outline of a convex core (k × 2, counter-clockwise, k ≥ 2) grown by ``radius``: offset edges joined by
    arcs of at most ``step`` radians per segment (see the module docstring)."""
    k = core.shape[0]
    edges = np.roll(core, -1, axis=0) - core
    normals = np.stack([edges[:, 1], -edges[:, 0]], 1)
    normals /= np.maximum(np.hypot(normals[:, 0], normals[:, 1]), 1e-300)[:, None]
    out = []
    for i in range(k):
        a0 = math.atan2(normals[i - 1, 1], normals[i - 1, 0])
        a1 = math.atan2(normals[i, 1], normals[i, 0])
        turn = (a1 - a0) % (2 * math.pi)
        if k == 2 and turn == 0.0:
            turn = math.pi
        n = max(1, int(math.ceil(turn / step)))
        ang = a0 + turn * np.arange(n + 1) / n
        out.append(core[i] + radius * np.stack([np.cos(ang), np.sin(ang)], 1))
    return np.concatenate(out)


def _rigid_shapes(world):
    """World-space cores of the living shapes: (shape ids, body ids, list of (k, 2) arrays, radii, angles).

    Shapes are transformed in batches of equal vertex count (one array operation per batch, not per shape).
    """
    ns = world.tables.n_shapes
    ids = np.flatnonzero(world.tables.s_alive[:ns])
    bodies = world.tables.s_body[ids]
    ang = world.tables.angle[bodies]
    c, s = np.cos(ang), np.sin(ang)
    lc = world.tables.local_center[bodies]
    ox = world.tables.com[bodies, 0] - (c * lc[:, 0] - s * lc[:, 1])
    oy = world.tables.com[bodies, 1] - (s * lc[:, 0] + c * lc[:, 1])
    counts = world.tables.s_count[ids]
    offsets = world.tables.s_offset[ids]
    verts = [None] * len(ids)
    for k in np.unique(counts):
        rows = np.flatnonzero(counts == k)
        v = world.tables.verts[offsets[rows, None] + np.arange(k)]             # (m, k, 2) body frame
        cr, sr = c[rows, None], s[rows, None]
        wv = np.stack([cr * v[..., 0] - sr * v[..., 1] + ox[rows, None],
                       sr * v[..., 0] + cr * v[..., 1] + oy[rows, None]], -1)
        for r, row in enumerate(rows):
            verts[row] = wv[r]
    return ids, bodies, verts, world.tables.s_radius[ids], ang


#: joint kinds that only relate the two bodies' angles (their anchors are just the bodies' origins): drawn as a
#: thin line between the bodies' centres
ANGULAR_JOINTS = ("rotary_limit", "rotary_spring", "angular_motor", "ratchet", "gear")
#: joint kinds whose two anchors are apart by design: drawn with a line from one anchor to the other (the rod,
#: the rope, the spring, the mouse's pull)
SPAN_JOINTS = ("distance", "mouse", "pulley")


def describe_joints(world, axis_length=0.5):
    """Primitives for the joints of a rigid world, from the public joint handles (``world.joints``): a line
    from each body's centre of mass to its anchor (none for the world's static body), a dot at each anchor,
    a line between the anchors of distance, mouse and pulley joints, and the axis (``axis_length`` m each
    side of anchor A) of prismatic and wheel joints. Joints that only tie angles link the two centres with a
    thin line; filter joints are not drawn."""
    out = []
    static = world.static_body
    for j in world.joints:
        kind = j.kind
        if kind == "filter":
            continue
        bodies = [body for body in (j.body_a, j.body_b) if body != static]
        if kind in ANGULAR_JOINTS:
            if len(bodies) == 2:
                out.append(Lines([bodies[0].world_center, bodies[1].world_center], JOINT, 1))
            continue
        pa, pb = j.anchor_a, j.anchor_b
        for body, anchor in ((j.body_a, pa), (j.body_b, pb)):
            if body != static:
                out.append(Lines([body.world_center, anchor], JOINT, 1))
        if kind in SPAN_JOINTS:
            out.append(Lines([pa, pb], JOINT, 2))
        if kind in ("prismatic", "wheel"):
            u = axis_length * j.axis
            out.append(Lines([pa - u, pa + u], JOINT_AXIS, 1))
        out.append(Dot(pa, 2.5, JOINT))
        if kind in SPAN_JOINTS:
            out.append(Dot(pb, 2.5, JOINT))
    return out


def describe_rigid(world, contacts=True, aabbs=False, tree=False, normal_length=0.35, joints=True):
    """Primitives for a rigid world: shapes (circles with a rotation mark), sleeping bodies dimmed, sensors
    as outlines, joints (:func:`describe_joints`, unless ``joints`` is False); optionally contact points with
    normals, shape AABBs and the broad-phase tree."""
    out = []
    ids, bodies, verts, radii, angles = _rigid_shapes(world)
    asleep = world.tables.asleep
    sensor = world.tables.s_sensor
    for k, sid in enumerate(ids):
        b = int(bodies[k])
        kind = int(world.tables.kind[b])
        fill = STATIC_FILL if kind == 0 else KINEMATIC_FILL if kind == 1 else body_colour(b)
        if asleep is not None and kind == 2 and asleep[b]:
            fill = dimmed(fill)
        outline = INK
        if sensor is not None and sensor[sid]:
            fill, outline = None, dimmed(fill if fill else INK, 0.2)
        v, r = verts[k], float(radii[k])
        if v.shape[0] == 1:
            out.append(Disc(v[0], r, fill, outline))
            mark = v[0] + r * np.array([math.cos(angles[k]), math.sin(angles[k])])
            out.append(Lines([v[0], mark], outline or INK, 1))
        elif v.shape[0] == 2 and r == 0.0:
            out.append(Lines(v, fill or outline, 2))
        else:
            out.append(Poly(rounded_outline(v, r) if r > 0.0 else v, fill, outline))
    if joints and world.joint_count:
        out.extend(describe_joints(world))
    if aabbs:
        for v, r in zip(verts, radii):
            lo, hi = v.min(axis=0) - r, v.max(axis=0) + r
            out.append(Lines(_box_points(lo, hi), AABB, 1, closed=True))
    if tree:
        out.extend(describe_tree(world.tables.bp))
    if contacts:
        for c in world.contacts():
            n = np.asarray(c["normal"], float)
            for p in np.asarray(c["points"], float).reshape(-1, 2):
                out.append(Lines([p, p + normal_length * n], CONTACT, 1))
                out.append(Dot(p, 2.5, CONTACT))
    return out


def _box_points(lo, hi):
    return np.array([[lo[0], lo[1]], [hi[0], lo[1]], [hi[0], hi[1]], [lo[0], hi[1]]])


def tree_boxes(nodes):
    """(lower, upper, depth, is_leaf) of every node reachable from the root of a ``DynamicTree.nodes()`` dict,
    in depth-first order (root depth 0)."""
    root = nodes["root"]
    if root < 0:
        return []
    out = []
    stack = [(root, 0)]
    while stack:
        i, d = stack.pop()
        leaf = nodes["child1"][i] < 0
        out.append((nodes["lower"][i], nodes["upper"][i], d, leaf))
        if not leaf:
            stack.append((int(nodes["child2"][i]), d + 1))
            stack.append((int(nodes["child1"][i]), d + 1))
    return out


def describe_tree(bp):
    """The dynamic tree's boxes: moving tree's internal nodes coloured by depth, its leaves (fat boxes) in the
    AABB colour; the static tree in grey."""
    out = []
    for static in (True, False):
        for lo, hi, depth, leaf in tree_boxes(bp.nodes(static=static)):
            if static:
                col = TREE_STATIC
            else:
                col = AABB if leaf else DEPTH_COLOURS[depth % len(DEPTH_COLOURS)]
            out.append(Lines(_box_points(lo, hi), col, 1, closed=True))
    return out


# --------------------------------------------------------------------------------------------- Verlet world
def describe_verlet(world, aabbs=False, **_ignored):
    """Primitives for a Verlet world: bodies filled from their outlines, every living edge as a thin line
    (braces, ropes, cloth), pinned particles as dots, optionally each body's AABB."""
    out = []
    pos = world.positions
    for k, body in enumerate(world.bodies):
        outline = pos[np.asarray(body.outline)]
        if len(outline) >= 3:
            out.append(Poly(outline, STATIC_FILL if body.static else body_colour(k), INK))
        if aabbs and len(outline):
            out.append(Lines(_box_points(outline.min(axis=0), outline.max(axis=0)), AABB, 1, closed=True))
    edges = np.asarray(world.edges)
    for i, j in edges:
        out.append(Lines([pos[i], pos[j]], (60, 60, 66), 1))
    for p in pos[np.asarray(world.pinned, bool)]:
        out.append(Dot(p, 3, CONTACT))
    return out


def describe(world: "Any", contacts: "bool" = True, aabbs: "bool" = False, tree: "bool" = False,
             normal_length: "float" = 0.35, joints: "bool" = True) -> list:
    """Primitives for either kind of world (see :func:`describe_rigid` and :func:`describe_verlet`; a Verlet
    world's edges are always drawn, ``joints`` is for rigid joints).

    ``world`` is a :class:`carom.World` or a :class:`carom.verlet.World`. ``contacts`` draws contact points with
    their normals (``normal_length`` m long), ``aabbs`` each shape's bounding box, ``tree`` the broad phase's tree,
    ``joints`` the joints.
    """
    if _is_rigid(world):
        return describe_rigid(world, contacts=contacts, aabbs=aabbs, tree=tree, normal_length=normal_length,
                              joints=joints)
    return describe_verlet(world, aabbs=aabbs)


def shape_centres(world):
    """A point inside every drawn shape (the mean of its world core vertices), skipping sensors: where a
    picture must not be blank. Verlet: body outline means and every particle of an edge-only group."""
    if _is_rigid(world):
        ids, _, verts, _, _ = _rigid_shapes(world)
        sensor = world.tables.s_sensor
        return np.array([v.mean(axis=0) for sid, v in zip(ids, verts)
                         if sensor is None or not sensor[sid]]).reshape(-1, 2)
    pos = world.positions
    pts = [pos[np.asarray(b.outline)].mean(axis=0) for b in world.bodies if len(b.outline) >= 3]
    in_bodies = np.zeros(len(pos), bool)
    for b in world.bodies:
        in_bodies[np.asarray(b.outline)] = True
    edges = np.asarray(world.edges).reshape(-1, 2)
    on_edges = np.zeros(len(pos), bool)
    on_edges[edges.ravel()] = True
    pts.extend(pos[on_edges & ~in_bodies])
    return np.array(pts).reshape(-1, 2)
