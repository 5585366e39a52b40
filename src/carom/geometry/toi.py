"""Time of impact of two shapes moving over one step.

Each shape moves from a start to an end transform, linearly in position and in angle:
p(t) = p0 + t·Δp, θ(t) = θ0 + t·Δθ, t ∈ [0, 1]. The answer is the first t at which the shapes touch, or None.

Two circles whose centres move on straight lines (no rotation, or centres at the body origin): the centre
offset is c(t) = c0 + t·Δc and contact is |c(t)| = R = rA + rB, the smallest root of

    |Δc|² t² + 2 (c0·Δc) t + |c0|² − R² = 0,

taken as t = 2c / (−b + √(b² − 4ac)) (no cancellation when b < 0, the approaching case).

Any other pair: conservative advancement on the GJK distance. At time t_k let d_k be the distance and n the
unit closest-point direction (world, A to B). The support gap along the fixed axis n is a lower bound of the
distance at every later time, and it changes at most at the rate

    μ = max(0, −n·Δp_rel) + |Δθ_A|·ρ_A + |Δθ_B|·ρ_B,     ρ = max |core vertex| about the pivot

(translation moves the gap exactly by n·Δp_rel; rotating a body turns each core point by at most |Δθ|·ρ per
unit t, and the rounding disk's support along n does not change). So d(t) ≥ d_k − μ (t − t_k): advancing by
(d_k − target/2)/μ can never pass a contact (the gap stays ≥ target/2 > 0 up to the new time). Aiming at half
the target rather than the target itself makes the iteration stop (d ≤ target) after finitely many steps
instead of creeping towards the target geometrically when μ overestimates the real approach speed. This is the directional form of the textbook bound
|Δp_rel| + |Δθ_A|·ρ_A + |Δθ_B|·ρ_B, which it never exceeds, so it needs fewer iterations. It stops when
d ≤ TOI_TARGET (a small gap is left on purpose, so a body put back at t is not overlapping), returns None
when t passes 1 or the shapes cannot approach (μ = 0), 0.0 when they already touch at t = 0, and the time
reached so far (still before any contact) if TOI_MAX_ITERATIONS run out.
"""
from typing import TYPE_CHECKING
if TYPE_CHECKING:  # (annotations only)
    from typing import Tuple
    from .._types import Any, ArrayLike, Bits, Optional, Points, TransformLike, Vec2
import math

from .._jit import njit
from ..constants import TOI_TARGET, TOI_MAX_ITERATIONS
from ..errors import GeometryError
from . import shapes as _shapes
from .gjk import gjk_core, _check_shape
from ._math import relative_transform


@njit
def circle_toi(c0x, c0y, dcx, dcy, radius_sum):
    """First t in [0, 1] with |c0 + t·dc| = radius_sum, 0 if already touching, -1 if none."""
    c = c0x * c0x + c0y * c0y - radius_sum * radius_sum
    if c <= 0.0:
        return 0.0
    a = dcx * dcx + dcy * dcy
    b = 2.0 * (c0x * dcx + c0y * dcy)
    if a == 0.0 or b >= 0.0:
        return -1.0                       # not moving, or moving apart
    disc = b * b - 4.0 * a * c
    if disc < 0.0:
        return -1.0
    t = 2.0 * c / (-b + math.sqrt(disc))
    if t > 1.0:
        return -1.0
    return t


@njit
def _max_extent(v, px, py):
    """The largest distance of a core vertex from the pivot (px, py) (shape frame)."""
    m = 0.0
    for i in range(v.shape[0]):
        dx = v[i, 0] - px
        dy = v[i, 1] - py
        r = math.sqrt(dx * dx + dy * dy)
        if r > m:
            m = r
    return m


@njit
def _placed_distance(vA, rA, vB, rB, xa, ya, ca, sa, xb, yb, cb, sb):
    """GJK distance of the rounded shapes with their frames at (x, y) turned by (cos, sin): (d, nx, ny) with
    the world unit direction from A to B."""
    tx, ty, tc, ts = relative_transform(xa, ya, ca, sa, xb, yb, cb, sb)
    res = gjk_core(vA, vB, tx, ty, tc, ts)
    dc = res[0]
    nx = 0.0
    ny = 0.0
    if dc > 0.0:
        lx = (res[3] - res[1]) / dc
        ly = (res[4] - res[2]) / dc
        nx = ca * lx - sa * ly
        ny = sa * lx + ca * ly
    return dc - rA - rB, nx, ny


@njit
def _frame_at(px, py, lx, ly, angle):
    """The frame (x, y, cos, sin) of a shape turned by ``angle`` whose pivot, the point (lx, ly) of its own
    frame, is at (px, py)."""
    c = math.cos(angle)
    s = math.sin(angle)
    return px - (c * lx - s * ly), py - (s * lx + c * ly), c, s


@njit
def conservative_advancement(vA, rA, lax, lay, xa0, ya0, aa0, xa1, ya1, aa1,
                             vB, rB, lbx, lby, xb0, yb0, ab0, xb1, yb1, ab1, target, max_iterations, touching):
    """Time of impact by conservative advancement (module docstring): (t, iterations), t = -1 when there is
    no contact.

    Each shape turns about its pivot, the point l = (lx, ly) of its own frame (a body's centre of mass; the
    frame origin when l = 0), and (x, y, angle) is the pivot's motion: p(t) = p0 + t·Δp, θ(t) = θ0 + t·Δθ.
    ρ is then the largest distance of a core vertex from the pivot. A pair closer than ``touching`` at t = 0
    is already in contact and gets -1 as well (the continuous stage leaves such a pair to the contact
    solver; ``time_of_impact`` passes −inf, so it gets 0.0)."""
    dax = xa1 - xa0
    day = ya1 - ya0
    dta = aa1 - aa0
    dbx = xb1 - xb0
    dby = yb1 - yb0
    dtb = ab1 - ab0
    rot = abs(dta) * _max_extent(vA, lax, lay) + abs(dtb) * _max_extent(vB, lbx, lby)
    dpx = dbx - dax
    dpy = dby - day
    # a shape that does not turn keeps its frame's rotation (no sine and cosine per iteration)
    fxa, fya, fca, fsa = _frame_at(xa0, ya0, lax, lay, aa0)
    fxb, fyb, fcb, fsb = _frame_at(xb0, yb0, lbx, lby, ab0)
    t = 0.0
    it = 0
    while True:
        if it > 0:
            if dta != 0.0:
                fxa, fya, fca, fsa = _frame_at(xa0 + t * dax, ya0 + t * day, lax, lay, aa0 + t * dta)
            else:
                fxa = xa0 + t * dax - (fca * lax - fsa * lay)
                fya = ya0 + t * day - (fsa * lax + fca * lay)
            if dtb != 0.0:
                fxb, fyb, fcb, fsb = _frame_at(xb0 + t * dbx, yb0 + t * dby, lbx, lby, ab0 + t * dtb)
            else:
                fxb = xb0 + t * dbx - (fcb * lbx - fsb * lby)
                fyb = yb0 + t * dby - (fsb * lbx + fcb * lby)
        d, nx, ny = _placed_distance(vA, rA, vB, rB, fxa, fya, fca, fsa, fxb, fyb, fcb, fsb)
        if it == 0 and d < touching:
            return -1.0, it
        if d <= target:
            return t, it
        if it >= max_iterations:
            return t, it
        it += 1
        approach = -(nx * dpx + ny * dpy)
        if approach < 0.0:
            approach = 0.0
        mu = approach + rot
        if mu <= 0.0:
            return -1.0, it
        t += (d - 0.5 * target) / mu
        if t > 1.0:
            return -1.0, it


def _motion(xf, name):
    try:
        t = _shapes.as_transform(xf)
    except GeometryError as exc:
        raise GeometryError(f"{name}: {exc}") from exc
    return float(t.position[0]), float(t.position[1]), float(t.angle)


def time_of_impact(a: "Any", a_start: "TransformLike", a_end: "TransformLike", b: "Any", b_start: "TransformLike",
                   b_end: "TransformLike", target: "float" = TOI_TARGET) -> "Optional[float]":
    """First fraction t ∈ [0, 1] of the motion at which the shapes touch, or None if they do not.

    ``a_start``/``a_end`` (and B's) are Transforms, (x, y) or (x, y, angle); the motion is linear in
    position and angle in between. 0.0 when already touching at the start. Two circles moving on straight
    lines are solved exactly; other pairs by conservative advancement, which reports a time at which the
    shapes are within ``target`` (default TOI_TARGET) of touching and never a time after the true first
    contact.

    ``a`` and ``b`` are the two shapes; ``b_start`` and ``b_end`` place B at the start and end of the motion as
    ``a_start`` and ``a_end`` place A.
    """
    _check_shape(a, "shape a")
    _check_shape(b, "shape b")
    try:
        tgt = float(target)
    except (TypeError, ValueError) as exc:
        raise GeometryError(f"target must be a number, got {target!r}") from exc
    if not math.isfinite(tgt) or tgt < 0.0:
        raise GeometryError(f"target must be finite and >= 0, got {target!r}")
    a0 = _motion(a_start, "a_start")
    a1 = _motion(a_end, "a_end")
    b0 = _motion(b_start, "b_start")
    b1 = _motion(b_end, "b_end")
    if a.kind == _shapes.CIRCLE and b.kind == _shapes.CIRCLE:
        ca, cb = a.vertices[0], b.vertices[0]
        straight_a = a0[2] == a1[2] or (ca[0] == 0.0 and ca[1] == 0.0)
        straight_b = b0[2] == b1[2] or (cb[0] == 0.0 and cb[1] == 0.0)
        if straight_a and straight_b:
            def centre(p, c):
                cs, sn = math.cos(p[2]), math.sin(p[2])
                return p[0] + cs * c[0] - sn * c[1], p[1] + sn * c[0] + cs * c[1]
            pa0, pa1 = centre(a0, ca), centre(a1, ca)
            pb0, pb1 = centre(b0, cb), centre(b1, cb)
            t = circle_toi(pb0[0] - pa0[0], pb0[1] - pa0[1],
                           (pb1[0] - pb0[0]) - (pa1[0] - pa0[0]), (pb1[1] - pb0[1]) - (pa1[1] - pa0[1]),
                           a.radius + b.radius)
            return None if t < 0.0 else float(t)
    t, _ = conservative_advancement(a._kernel_vertices, a.radius, 0.0, 0.0, *a0, *a1, b._kernel_vertices, b.radius,
                                    0.0, 0.0, *b0, *b1, tgt, TOI_MAX_ITERATIONS, -math.inf)
    return None if t < 0.0 else float(t)
