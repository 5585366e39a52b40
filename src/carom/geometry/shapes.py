"""Shapes and transforms: thin Python objects over the arrays the kernels read.

Every shape is one convex point set with a rounding radius, the representation Box2D v3 uses:

==========  =====  ==========================================  ===========
class       kind   core vertices                               radius
==========  =====  ==========================================  ===========
Circle      0      1 (the centre)                              r > 0
Capsule     1      2 (the segment ends)                        r > 0
Segment     2      2                                           0
Polygon     3      n ≥ 3, counter-clockwise, strictly convex   r ≥ 0
==========  =====  ==========================================  ===========

A shape is the Minkowski sum of its core with a disk of its radius. Each core edge i runs from vertex i to
vertex i+1 and has the outward unit normal ``(e.y, -e.x)/|e|``; a 2-vertex core is a degenerate polygon with
the two opposite edges p1→p2 and p2→p1, so segments and capsules go through the same SAT and GJK code as
polygons. Shapes are immutable values: a world copies them into its shape table.
"""
from typing import TYPE_CHECKING
if TYPE_CHECKING:  # (annotations only)
    from typing import Tuple
    from .._types import Any, ArrayLike, Bits, Optional, Points, TransformLike, Vec2
import math

import numpy as np

from .. import _validate
from ..constants import WELDING_TOLERANCE, COLLINEAR_TOLERANCE, WORLD_LIMIT, ANGLE_LIMIT
from ..errors import GeometryError
from .hull import convex_hull

CIRCLE, CAPSULE, SEGMENT, POLYGON = 0, 1, 2, 3
KIND_NAMES = ("circle", "capsule", "segment", "polygon")


def _finite(value, name, low=None, low_open=False, limit=WORLD_LIMIT) -> float:
    """A size or angle of a shape: the world's number rules (``carom._validate``), a GeometryError if broken."""
    return _validate.number(value, name, low=low, low_open=low_open, magnitude=limit, error=GeometryError)


def _point(value, name) -> np.ndarray:
    return _validate.vector(value, name, WORLD_LIMIT, error=GeometryError)


def edge_normals(vertices: np.ndarray) -> np.ndarray:
    """Outward unit normals of the edges i → i+1 of a counter-clockwise core (n ≥ 2)."""
    e = np.roll(vertices, -1, axis=0) - vertices
    n = np.stack([e[:, 1], -e[:, 0]], axis=1)
    return n / np.linalg.norm(n, axis=1, keepdims=True)


class Transform:
    """A rigid placement: ``position`` (x, y) and ``angle`` in radians (counter-clockwise)."""

    __slots__ = ("position", "angle")

    def __init__(self, position: "Vec2" = (0.0, 0.0), angle: "float" = 0.0):
        self.position = _point(position, "Transform position")
        self.angle = _finite(angle, "Transform angle", limit=ANGLE_LIMIT)

    @property
    def cos(self) -> float:
        """cos(angle), for rotating points by the transform."""
        return math.cos(self.angle)

    @property
    def sin(self) -> float:
        """sin(angle), for rotating points by the transform."""
        return math.sin(self.angle)

    def as_tuple(self) -> "Tuple[float, float, float, float]":
        """The kernel form (x, y, cos, sin)."""
        return (float(self.position[0]), float(self.position[1]), math.cos(self.angle), math.sin(self.angle))

    def apply(self, points: "ArrayLike") -> np.ndarray:
        """Local points → world points."""
        p = np.asarray(points, dtype=np.float64)
        c, s = self.cos, self.sin
        rot = np.array([[c, -s], [s, c]])
        return p @ rot.T + self.position

    def __repr__(self):
        return f"Transform(position=({self.position[0]:g}, {self.position[1]:g}), angle={self.angle:g})"

    def __eq__(self, other):
        return (isinstance(other, Transform) and np.array_equal(self.position, other.position)
                and self.angle == other.angle)


def as_transform(xf: "TransformLike") -> Transform:
    """Accept a Transform, None (identity), a position (x, y) or a tuple (x, y, angle)."""
    if isinstance(xf, Transform):
        return xf
    if xf is None:
        return Transform()
    try:
        seq = tuple(xf)
    except TypeError as exc:
        raise GeometryError(f"expected a Transform, (x, y) or (x, y, angle), got {xf!r}") from exc
    if len(seq) == 2:
        return Transform(seq)
    if len(seq) == 3:
        return Transform(seq[:2], seq[2])
    raise GeometryError(f"expected a Transform, (x, y) or (x, y, angle), got {xf!r}")


class Shape:
    """Base of all shapes: ``kind``, ``radius``, core ``vertices`` and edge ``normals`` (local frame)."""

    kind: int
    __slots__ = ("_radius", "_vertices", "_normals", "_kernel_vertices", "_kernel_normals", "_memo")

    def __init__(self, vertices: np.ndarray, radius: float):
        # the kernels are handed writable copies (``_kernel_vertices``, ``_kernel_normals``), the user read-only
        # arrays: Numba types a read-only array apart from a writable one, and the world's arrays are writable,
        # so a kernel called with a shape's read-only arrays was compiled a second time (the SAT, GJK, EPA and
        # ray casts: about 5 s of a cold compile)
        self._kernel_vertices = np.array(vertices, dtype=np.float64, order="C")
        if self._kernel_vertices.shape[0] >= 2:
            self._kernel_normals = np.ascontiguousarray(edge_normals(self._kernel_vertices))
        else:
            self._kernel_normals = np.zeros((1, 2))
        self._vertices = self._kernel_vertices.copy()
        self._vertices.setflags(write=False)
        self._normals = self._kernel_normals.copy()
        self._normals.setflags(write=False)
        self._radius = float(radius)
        # what a world derives from the shape each time a body takes it (``carom.geometry.mass.shape_terms``)
        self._memo = None

    @property
    def radius(self) -> float:
        """The rounding radius (m): the shape is its core (``vertices``) grown by it (read-only, as the vertices:
        a world keeps the geometry a body takes, and reads it again when the body's mass is recomputed)."""
        return self._radius

    @property
    def vertices(self) -> np.ndarray:
        """Core vertices in the shape's frame, (n, 2), counter-clockwise (read-only)."""
        return self._vertices

    @property
    def normals(self) -> np.ndarray:
        """Outward unit normal of each core edge i → i+1, (n, 2) (read-only; zero row for a circle)."""
        return self._normals

    @property
    def kind_name(self) -> str:
        """The kind as a word: "circle", "capsule", "segment" or "polygon"."""
        return KIND_NAMES[self.kind]

    def mass_properties(self, density: "float" = 1.0) -> "Any":
        """Mass, centroid and rotational inertia about the centroid for a uniform ``density`` (kg/m²)."""
        from .mass import mass_properties
        return mass_properties(self, density)

    def aabb(self, transform: "TransformLike" = None) -> "Tuple[np.ndarray, np.ndarray]":
        """Tight world bounding box ``(lower, upper)`` of the shape placed by ``transform``."""
        from .aabb import shape_aabb
        return shape_aabb(self, as_transform(transform))

    def __eq__(self, other):
        return (type(self) is type(other) and self.radius == other.radius
                and np.array_equal(self._vertices, other._vertices))

    def __hash__(self):
        return hash((self.kind, self.radius, self._vertices.tobytes()))

    def __getstate__(self):
        return (np.array(self._vertices), self.radius)

    def __setstate__(self, state):
        Shape.__init__(self, state[0], state[1])


class Circle(Shape):
    """A disk of ``radius`` around ``center`` (local)."""

    kind = CIRCLE
    __slots__ = ()

    def __init__(self, radius: "float", center: "Vec2" = (0.0, 0.0)):
        r = _finite(radius, "Circle radius", 0.0, low_open=True)
        super().__init__(_point(center, "Circle center").reshape(1, 2), r)

    @property
    def center(self) -> np.ndarray:
        """The centre in the shape's frame (a copy)."""
        return self._vertices[0].copy()

    def __repr__(self):
        c = self._vertices[0]
        return f"Circle({self.radius:g}, center=({c[0]:g}, {c[1]:g}))"


def _two_points(p1, p2, what):
    a = _point(p1, f"{what} p1")
    b = _point(p2, f"{what} p2")
    length = float(np.hypot(*(b - a)))
    if length < WELDING_TOLERANCE:
        raise GeometryError(f"{what} has zero length: p1 = {tuple(a.tolist())}, p2 = {tuple(b.tolist())} "
                            f"(|p2 - p1| = {length:g} < welding tolerance {WELDING_TOLERANCE:g})")
    return np.stack([a, b])


class _TwoPointShape(Shape):
    """Shapes whose core is the segment p1–p2."""

    __slots__ = ()

    @property
    def p1(self) -> np.ndarray:
        """The first end point in the shape's frame (a copy)."""
        return self._vertices[0].copy()

    @property
    def p2(self) -> np.ndarray:
        """The second end point in the shape's frame (a copy)."""
        return self._vertices[1].copy()


class Capsule(_TwoPointShape):
    """The segment p1–p2 swept by a disk of ``radius`` > 0 (a stadium)."""

    kind = CAPSULE
    __slots__ = ()

    def __init__(self, p1: "Vec2", p2: "Vec2", radius: "float"):
        r = _finite(radius, "Capsule radius", 0.0, low_open=True)
        super().__init__(_two_points(p1, p2, "Capsule"), r)

    def __repr__(self):
        a, b = self._vertices
        return f"Capsule(({a[0]:g}, {a[1]:g}), ({b[0]:g}, {b[1]:g}), {self.radius:g})"


class Segment(_TwoPointShape):
    """A line segment of zero thickness (ground lines, walls); it has no area and so no mass.

    Its end points ``p1`` and ``p2`` are (x, y) pairs in the shape's frame and must differ.
    """

    kind = SEGMENT
    __slots__ = ()

    def __init__(self, p1: "Vec2", p2: "Vec2"):
        super().__init__(_two_points(p1, p2, "Segment"), 0.0)

    def __repr__(self):
        a, b = self._vertices
        return f"Segment(({a[0]:g}, {a[1]:g}), ({b[0]:g}, {b[1]:g}))"


class Polygon(Shape):
    """A convex polygon, optionally rounded by ``radius`` ≥ 0.

    ``points`` may be in any order and may contain interior points: the polygon is their convex hull,
    stored counter-clockwise. Fewer than 3 distinct points (closer ones are welded), collinear points or a
    zero area raise :class:`GeometryError`.
    """

    kind = POLYGON
    __slots__ = ()

    def __init__(self, points: "ArrayLike", radius: "float" = 0.0):
        r = _finite(radius, "Polygon radius", 0.0)
        arr = _validate.points(points, "Polygon points", WORLD_LIMIT, error=GeometryError)
        if arr.shape[0] < 3:
            raise GeometryError(f"Polygon needs at least 3 points, got {arr.shape[0]}: {arr.tolist()}")
        hull = convex_hull(arr)
        if hull.shape[0] < 3:
            distinct = "fewer than 3 distinct points" if hull.shape[0] < 2 else "collinear points (zero area)"
            raise GeometryError(f"Polygon has {distinct} after welding within {WELDING_TOLERANCE:g} m "
                                f"and dropping points within {COLLINEAR_TOLERANCE:g} m of a line: "
                                f"{arr.tolist()}")
        super().__init__(hull, r)

    @classmethod
    def _from_hull(cls, hull, radius=0.0):
        """Trusted constructor for vertices already counter-clockwise and strictly convex."""
        obj = cls.__new__(cls)
        Shape.__init__(obj, hull, radius)
        return obj

    def __repr__(self):
        pts = ", ".join(f"({x:g}, {y:g})" for x, y in self._vertices)
        extra = f", radius={self.radius:g}" if self.radius else ""
        return f"Polygon([{pts}]{extra})"


def box(half_width: "float", half_height: "float", center: "Vec2" = (0.0, 0.0), angle: "float" = 0.0,
        radius: "float" = 0.0) -> Polygon:
    """A rectangle of the given half extents, centred at ``center`` and rotated by ``angle``.

    ``half_width`` and ``half_height`` (> 0) are half the sides; ``radius`` > 0 rounds the corners (the box grows by
    it on every side).
    """
    hw = _finite(half_width, "box half_width", 0.0, low_open=True)
    hh = _finite(half_height, "box half_height", 0.0, low_open=True)
    c = _point(center, "box center")
    a = _finite(angle, "box angle", limit=ANGLE_LIMIT)
    local = np.array([[-hw, -hh], [hw, -hh], [hw, hh], [-hw, hh]])
    cs, sn = math.cos(a), math.sin(a)
    pts = local @ np.array([[cs, -sn], [sn, cs]]).T + c
    if min(hw, hh) < WELDING_TOLERANCE:
        return Polygon(pts, radius)          # let validation report it
    return Polygon._from_hull(pts, radius)
