"""Public narrow phase: ``collide(a, xf_a, b, xf_b)`` for any pair of shapes, by SAT or by GJK/EPA.

Both methods return a :class:`~carom.geometry.manifold_types.Manifold` (normal from A to B, up to two
points midway between the surfaces, separations negative when penetrating, feature ids) or None when the
shapes are farther apart than ``speculative``.
"""
from typing import TYPE_CHECKING
if TYPE_CHECKING:  # (annotations only)
    from typing import Tuple
    from .._types import Any, ArrayLike, Bits, Optional, Points, TransformLike, Vec2
import math

import numpy as np

from ..errors import GeometryError
from ._math import relative_transform
from .manifold import collide_sat, manifold_to_world
from .manifold_types import Manifold
from .shapes import Shape, as_transform


def _check_shape(shape, name):
    if not isinstance(shape, Shape):
        raise GeometryError(f"{name} must be a carom shape (Circle, Capsule, Segment, Polygon), got {shape!r}")


def _speculative(value):
    try:
        v = float(value)
    except (TypeError, ValueError) as exc:
        raise GeometryError(f"speculative must be a number, got {value!r}") from exc
    if not math.isfinite(v) or v < 0.0:
        raise GeometryError(f"speculative must be finite and >= 0, got {value!r}")
    return v


def _relative(xf_a, xf_b):
    ax, ay, ac, as_ = xf_a.as_tuple()
    bx, by, bc, bs = xf_b.as_tuple()
    return (ax, ay, ac, as_), relative_transform(ax, ay, ac, as_, bx, by, bc, bs)


def collide(a: "Any", xf_a: "TransformLike", b: "Any", xf_b: "TransformLike", method: "str" = "sat",
            speculative: "float" = 0.0) -> "Any":
    """Contact manifold of shape ``a`` placed by ``xf_a`` and shape ``b`` placed by ``xf_b``, or None.

    ``method="sat"``: separating axes and reference/incident clipping (circles in closed form).
    ``method="gjk"``: GJK distance / EPA penetration gives the normal, then the farthest features of each
    shape along it are matched (point–point, point–segment, clipped segment–segment).
    Points with separation above ``speculative`` (m) are left out; segment–segment gives None.
    """
    _check_shape(a, "a")
    _check_shape(b, "b")
    xf_a = as_transform(xf_a)
    xf_b = as_transform(xf_b)
    spec = _speculative(speculative)
    (ax, ay, ac, as_), (tx, ty, tc, ts) = _relative(xf_a, xf_b)
    if method == "sat":
        n = max(a.vertices.shape[0], b.vertices.shape[0])
        m = collide_sat(a._kernel_vertices, a._kernel_normals, a.radius, b._kernel_vertices, b._kernel_normals,
                        b.radius, tx, ty, tc, ts, spec, np.empty((n, 2)), np.empty((n, 2)))
    elif method == "gjk":
        from .contact_gjk import collide_gjk
        if a.vertices.shape[0] == 2 and b.vertices.shape[0] == 2 and a.radius == 0.0 and b.radius == 0.0:
            return None
        m = collide_gjk(a._kernel_vertices, a._kernel_normals, a.radius, b._kernel_vertices, b._kernel_normals,
                        b.radius, tx, ty, tc, ts, spec)
    else:
        raise GeometryError(f"method must be 'sat' or 'gjk', got {method!r}")
    if m[0] == 0:
        return None
    return Manifold.from_tuple(manifold_to_world(m, 0.0, 0.0, 1.0, 0.0), ax, ay, ac, as_)
