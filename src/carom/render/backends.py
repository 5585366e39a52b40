"""Back ends: draw the primitives of :mod:`carom.render.draw` with pillow, pygame or matplotlib.

Each takes the primitive list and its target; pillow and pygame also take a :class:`~carom.render.draw.View`
(world → pixels), matplotlib draws in world coordinates on the axes directly. The libraries are imported
inside the functions, so ``carom.render`` imports without any of them.
"""
from typing import TYPE_CHECKING
if TYPE_CHECKING:  # (annotations only)
    from typing import Tuple
    from .._types import Any, ArrayLike, Bits, Optional, Points, TransformLike, Vec2
import numpy as np
from ._deps import require

from .draw import Poly, Disc, Lines, Dot, View, describe, fit_bounds, BACKGROUND


#: Discs smaller than this radius in pixels are drawn without their outline (a pile of 10,000 small circles
#: would otherwise be a black block of outlines).
SMALL_DISC = 2.5


def _pixels(primitives, view):
    """Pixel coordinates of every primitive from one vectorised transform: a list with, per primitive, its
    points as a list of [x, y] (polygons, lines) or its centre [x, y] (discs, dots)."""
    chunks = [p.points if isinstance(p, (Poly, Lines)) else p.center.reshape(1, 2) for p in primitives]
    if not chunks:
        return []
    flat = view.px(np.concatenate(chunks)).tolist()
    out, at = [], 0
    for p, c in zip(primitives, chunks):
        k = len(c)
        out.append(flat[at:at + k] if isinstance(p, (Poly, Lines)) else flat[at])
        at += k
    return out


# ------------------------------------------------------------------------------------------------- pillow
def to_pillow(primitives: "Any", view: "Any", image: "Any") -> "Any":
    """Draw onto a ``PIL.Image`` (RGB) through ``view``.

    ``primitives`` is a list from :func:`~carom.render.draw.describe`; ``image`` is changed in place and returned.
    """
    ImageDraw = require("PIL.ImageDraw")
    d = ImageDraw.Draw(image)
    for p, q in zip(primitives, _pixels(primitives, view)):
        if isinstance(p, Poly):
            pts = [tuple(v) for v in q]
            if len(pts) >= 3:
                d.polygon(pts, fill=p.fill, outline=p.outline)
            elif len(pts) == 2:
                d.line(pts, fill=p.fill or p.outline)
        elif isinstance(p, Disc):
            x, y = q
            r = max(p.radius * view.scale, 1.0)
            outline = p.outline if r >= SMALL_DISC or p.fill is None else None   # tiny discs: fill only
            d.ellipse([x - r, y - r, x + r, y + r], fill=p.fill, outline=outline)
        elif isinstance(p, Lines):
            pts = [tuple(v) for v in q]
            if p.closed:
                pts.append(pts[0])
            d.line(pts, fill=p.colour, width=p.width)
        elif isinstance(p, Dot):
            x, y = q
            r = p.radius
            d.ellipse([x - r, y - r, x + r, y + r], fill=p.colour)
    return image


# ------------------------------------------------------------------------------------------------- pygame
def to_pygame(primitives: "Any", view: "Any", surface: "Any") -> "Any":
    """Draw onto a ``pygame.Surface`` through ``view``.

    ``primitives`` is a list from :func:`~carom.render.draw.describe`; ``surface`` is changed in place and returned.
    """
    pygame = require("pygame")
    draw = pygame.draw
    for p, q in zip(primitives, _pixels(primitives, view)):
        if isinstance(p, Poly):
            if len(q) >= 3:
                if p.fill is not None:
                    draw.polygon(surface, p.fill, q)
                if p.outline is not None:
                    draw.polygon(surface, p.outline, q, 1)
            elif len(q) == 2:
                draw.line(surface, p.fill or p.outline, q[0], q[1])
        elif isinstance(p, Disc):
            r = max(p.radius * view.scale, 1.0)
            if p.fill is not None:
                draw.circle(surface, p.fill, q, r)
            if p.outline is not None and (r >= SMALL_DISC or p.fill is None):
                draw.circle(surface, p.outline, q, r, 1)
        elif isinstance(p, Lines):
            if len(q) >= 2:
                draw.lines(surface, p.colour, p.closed, q, p.width)
        elif isinstance(p, Dot):
            draw.circle(surface, p.colour, q, p.radius)
    return surface


def draw_pygame(world: "Any", surface: "Any", view: "Any" = None, contacts: "bool" = True, aabbs: "bool" = False,
                tree: "bool" = False, clear: "bool" = True, joints: "bool" = True) -> "View":
    """Debug-draw a rigid or Verlet world onto a pygame surface (the whole world fitted when ``view`` is None).

    Shapes with rotation marks, sleeping bodies dimmed, joints, contact points and normals; AABBs and the
    broad-phase tree on demand. Returns the view used.

    ``world`` is rigid or Verlet; ``surface`` a pygame surface; ``view`` a :class:`~carom.render.draw.View`.
    ``contacts`` draws contact points with their normals (``normal_length`` m long), ``aabbs`` each shape's bounding
    box, ``tree`` the broad phase's tree, ``joints`` the joints. ``clear`` fills the surface with the background
    first.
    """
    if view is None:
        view = View(*fit_bounds(world), *surface.get_size())
    if clear:
        surface.fill(BACKGROUND)
    to_pygame(describe(world, contacts=contacts, aabbs=aabbs, tree=tree, joints=joints), view, surface)
    return view


# --------------------------------------------------------------------------------------------- matplotlib
def _rgb(colour):
    return None if colour is None else tuple(c / 255.0 for c in colour)


def to_matplotlib(primitives: "Any", ax: "Any") -> "Any":
    """Add the primitives to a matplotlib ``Axes`` in world coordinates (equal aspect).

    ``primitives`` is a list from :func:`~carom.render.draw.describe`; ``ax`` is the Axes drawn on (returned).
    """
    patches = require("matplotlib.patches")
    LineCollection = require("matplotlib.collections").LineCollection
    segments, colours, widths = [], [], []
    dots, dot_colours, dot_sizes = [], [], []
    for p in primitives:
        if isinstance(p, Poly):
            ax.add_patch(patches.Polygon(p.points, closed=True, facecolor=_rgb(p.fill) or "none",
                                         edgecolor=_rgb(p.outline) or "none", linewidth=0.6))
        elif isinstance(p, Disc):
            ax.add_patch(patches.Circle(p.center, p.radius, facecolor=_rgb(p.fill) or "none",
                                        edgecolor=_rgb(p.outline) or "none", linewidth=0.6))
        elif isinstance(p, Lines):
            pts = p.points
            if p.closed:
                pts = np.vstack([pts, pts[:1]])
            segments.append(pts)
            colours.append(_rgb(p.colour))
            widths.append(0.8 * p.width)
        elif isinstance(p, Dot):
            dots.append(p.center)
            dot_colours.append(_rgb(p.colour))
            dot_sizes.append((1.5 * p.radius) ** 2)
    if segments:
        ax.add_collection(LineCollection(segments, colors=colours, linewidths=widths))
    if dots:
        d = np.array(dots)
        ax.scatter(d[:, 0], d[:, 1], s=dot_sizes, c=dot_colours, zorder=3)
    ax.set_aspect("equal")
    ax.autoscale_view()
    return ax


def draw_matplotlib(world: "Any", ax: "Any" = None, contacts: "bool" = True, aabbs: "bool" = False,
                    tree: "bool" = False, lower: "Optional[Vec2]" = None, upper: "Optional[Vec2]" = None,
                    joints: "bool" = True) -> "Any":
    """Debug-draw a rigid or Verlet world on matplotlib axes (a new figure when ``ax`` is None), for notebooks.
    ``lower``/``upper`` set the axis limits (default: everything). Returns the axes.

    ``world`` is rigid or Verlet; ``ax`` a matplotlib Axes. ``contacts`` draws contact points with their normals
    (``normal_length`` m long), ``aabbs`` each shape's bounding box, ``tree`` the broad phase's tree, ``joints`` the
    joints.
    """
    if ax is None:
        plt = require("matplotlib.pyplot")
        _, ax = plt.subplots(figsize=(6, 4.5))
    to_matplotlib(describe(world, contacts=contacts, aabbs=aabbs, tree=tree, joints=joints), ax)
    if lower is None or upper is None:
        lower, upper = fit_bounds(world)
    ax.set_xlim(lower[0], upper[0])
    ax.set_ylim(lower[1], upper[1])
    ax.set_facecolor(_rgb(BACKGROUND))
    return ax
