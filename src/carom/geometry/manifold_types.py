"""The contact manifold: what every narrow-phase pair kernel produces.

Kernel convention (shared by the SAT kernels in ``manifold.py`` and the GJK/EPA kernels in ``contact_gjk.py``):
a pair kernel ``collide_x_y(vA, nA, rA, vB, nB, rB, tx, ty, tc, ts, speculative)`` receives both cores in
their local frames (vertices ``v``, edge normals ``n``, radius ``r``) and B's placement relative to A
``(tx, ty, tc, ts)`` = inv(xf_A)·xf_B, and returns the 11-tuple, in A's frame::

    (count, nx, ny, p0x, p0y, s0, id0, p1x, p1y, s1, id1)

- ``count`` in {0, 1, 2}; 0 means no contact within ``speculative``. For count 0 the SAT kernels
  (``manifold.py``) put a lower bound of the separation dist(cores) − rA − rB into ``s0`` (+inf when the pair
  can never touch); other kernels and ``EMPTY_MANIFOLD`` leave 0, which means nothing.
- ``(nx, ny)``: unit normal pointing from A to B.
- ``p_k``: the contact point, midway between the two surfaces along the normal.
- ``s_k``: signed separation of the surfaces along the normal (negative = penetration). Points with
  ``s_k > speculative`` are dropped.
- ``id_k``: feature id ``256 * a + b`` from the feature (vertex/edge index) on A and on B, so the same
  contact can be recognised next step for warm starting.

Returning a tuple of scalars keeps the kernels allocation-free, which matters in bulk.
"""
from typing import TYPE_CHECKING
if TYPE_CHECKING:  # (annotations only)
    from typing import Tuple
    from .._types import Any, ArrayLike, Bits, Optional, Points, TransformLike, Vec2
import numpy as np

EMPTY_MANIFOLD = (0, 0.0, 0.0, 0.0, 0.0, 0.0, 0, 0.0, 0.0, 0.0, 0)


def make_id(feature_a: int, feature_b: int) -> int:
    return 256 * feature_a + feature_b


class Manifold:
    """Contact manifold in world space: ``normal`` (unit, from A to B), ``points`` (k × 2),
    ``separations`` (k, negative when penetrating) and ``ids`` (k feature ids for warm starting)."""

    __slots__ = ("normal", "points", "separations", "ids")

    def __init__(self, normal: "Vec2", points: "ArrayLike", separations: "ArrayLike", ids: "ArrayLike"):
        self.normal = np.asarray(normal, dtype=np.float64)
        self.points = np.asarray(points, dtype=np.float64).reshape(-1, 2)
        self.separations = np.asarray(separations, dtype=np.float64).reshape(-1)
        self.ids = np.asarray(ids, dtype=np.int64).reshape(-1)

    @property
    def count(self) -> int:
        """Number of contact points (0, 1 or 2)."""
        return self.points.shape[0]

    @property
    def depth(self) -> float:
        """Deepest penetration (≥ 0 when overlapping, negative when only speculative)."""
        return -float(self.separations.min())

    @classmethod
    def from_tuple(cls, m: "Any", x: "Any", y: "Any", c: "Any", s: "Any") -> "Any":
        """Build from a kernel tuple in A's frame, placing it with A's transform (x, y, c, s).

        ``m`` is the tuple a compiled kernel returns (normal x, normal y, count, points, separations, ids), or None
        for no contact.
        """
        count = m[0]
        nx, ny = c * m[1] - s * m[2], s * m[1] + c * m[2]
        pts, seps, ids = [], [], []
        for k in range(count):
            px, py = m[3 + 4 * k], m[4 + 4 * k]
            pts.append((c * px - s * py + x, s * px + c * py + y))
            seps.append(m[5 + 4 * k])
            ids.append(m[6 + 4 * k])
        return cls((nx, ny), np.array(pts).reshape(-1, 2), seps, ids)

    def __repr__(self):
        return (f"Manifold(normal={self.normal.round(6).tolist()}, points={self.points.round(6).tolist()}, "
                f"separations={self.separations.round(6).tolist()}, ids={self.ids.tolist()})")
