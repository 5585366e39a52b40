"""Headless pictures of worlds with pillow: a frame per step, written as a GIF or PNG.

The picture maps a world rectangle onto the image (y up); rigid shapes are drawn from the world's shape
table (polygons, circles with a rotation mark, capsules, segments), Verlet bodies from their outlines.
"""
import math

import numpy as np


class View:
    """World rectangle → pixel mapping."""

    def __init__(self, lower, upper, width=480, height=360):
        self.lower = np.asarray(lower, float)
        self.upper = np.asarray(upper, float)
        span = self.upper - self.lower
        self.scale = min(width / span[0], height / span[1])
        self.width = width
        self.height = height

    def px(self, p):
        p = np.asarray(p, float)
        x = (p[..., 0] - self.lower[0]) * self.scale
        y = self.height - (p[..., 1] - self.lower[1]) * self.scale
        return np.stack([x, y], -1)


def _colour(index, static):
    if static:
        return (90, 90, 100)
    hue = (index * 0.61803398875) % 1.0
    r, g, b = (int(255 * (0.45 + 0.45 * math.cos(2 * math.pi * (hue + k / 3)))) for k in range(3))
    return (r, g, b)


def draw_rigid(world, view, image):
    from PIL import ImageDraw
    d = ImageDraw.Draw(image)
    ns = world._n_shapes
    for s in range(ns):
        if not world._s_alive[s]:
            continue
        b = int(world._s_body[s])
        c, sn = math.cos(world._angle[b]), math.sin(world._angle[b])
        lc = world._local_center[b]
        origin = world._com[b] - (c * lc[0] - sn * lc[1], sn * lc[0] + c * lc[1])
        o, n = int(world._s_offset[s]), int(world._s_count[s])
        v = world._verts[o:o + n] @ np.array([[c, sn], [-sn, c]]) + origin
        r = world._s_radius[s] * view.scale
        col = _colour(b, world._kind[b] == 0)
        pts = view.px(v)
        if n == 1:
            x, y = pts[0]
            d.ellipse([x - r, y - r, x + r, y + r], fill=col, outline=(20, 20, 20))
            e = view.px(v[0] + world._s_radius[s] * np.array([c, sn]))
            d.line([tuple(pts[0]), tuple(e)], fill=(20, 20, 20))
        elif n == 2:
            width = max(1, int(2 * r))
            d.line([tuple(pts[0]), tuple(pts[1])], fill=col, width=width)
            for x, y in pts:
                if r > 1:
                    d.ellipse([x - r, y - r, x + r, y + r], fill=col)
        else:
            d.polygon([tuple(p) for p in pts], fill=col, outline=(20, 20, 20))


def draw_verlet(world, view, image):
    from PIL import ImageDraw
    d = ImageDraw.Draw(image)
    pos = world.positions
    for k, (outline, static) in enumerate(zip(world.outlines, world.static_flags)):
        pts = view.px(pos[np.asarray(outline)])
        if len(pts) >= 3:
            d.polygon([tuple(p) for p in pts], fill=_colour(k, static), outline=(20, 20, 20))
    for i, j in np.asarray(world.edges):
        d.line([tuple(view.px(pos[i])), tuple(view.px(pos[j]))], fill=(40, 40, 40))


def render(world, path, frames=120, dt=1 / 60, lower=(-10, -1), upper=(10, 14), size=(480, 360),
           progress=True):
    """Step ``world`` ``frames`` times, drawing each frame; write a GIF (or the last frame as PNG)."""
    from PIL import Image
    view = View(lower, upper, *size)
    draw = draw_rigid if hasattr(world, "_s_alive") else draw_verlet
    images = []
    for f in range(frames):
        world.step(dt)
        img = Image.new("RGB", size, (245, 245, 240))
        draw(world, view, img)
        images.append(img)
        if progress and (f % 10 == 9 or f == frames - 1):
            done = (f + 1) * 30 // frames
            print(f"\r[{'#' * done}{'.' * (30 - done)}] {f + 1}/{frames} frames", end="", flush=True)
    if progress:
        print()
    if str(path).lower().endswith(".gif"):
        images[0].save(path, save_all=True, append_images=images[1:], duration=int(1000 * dt), loop=0)
    else:
        images[-1].save(path)
    return path
