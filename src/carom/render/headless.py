"""Pictures without a window: a frame per step, written as a GIF (every frame) or a PNG (the last one).

Two ways in, one drawing description (:func:`carom.render.draw.describe`):

* :func:`render` — any world you built, drawn with pillow alone (no pygame needed).
* :func:`record_scene` — a named scene through the demo window class under SDL's dummy video driver, so the
  file shows exactly what the window shows (heads-up line included). ``carom demo`` uses this headless.

Each frame carries its time (or step) as text: GIF writers merge identical consecutive frames, and a scene at
rest (a standing pyramid) would otherwise lose frames.
"""
import os
import sys

from ..errors import CaromError
from .draw import View, describe, describe_rigid, describe_verlet, BACKGROUND, INK
from .backends import to_pillow

__all__ = ["View", "render", "record_scene", "save_frames", "draw_rigid", "draw_verlet"]


def draw_rigid(world, view, image, **options):
    """Draw a rigid world onto a pillow image (options as :func:`carom.render.draw.describe_rigid`)."""
    return to_pillow(describe_rigid(world, **options), view, image)


def draw_verlet(world, view, image, **options):
    """Draw a Verlet world onto a pillow image."""
    return to_pillow(describe_verlet(world, **options), view, image)


def check_output(path, frames):
    """Validate an output file name (.gif or .png) and a frame count (int ≥ 1) before any work is done."""
    ext = os.path.splitext(str(path))[1].lower()
    if ext not in (".gif", ".png"):
        raise CaromError(f"output file must end in .gif or .png, got {str(path)!r}")
    if isinstance(frames, bool) or not isinstance(frames, int) or frames < 1:
        raise CaromError(f"frames must be an integer >= 1, got {frames!r}")
    return ext


class Progress:
    """A console progress bar ``[#####.....] k/n frames`` on one line (stderr-free: stdout, flushed)."""

    def __init__(self, total, enabled=True, width=30, stream=None):
        self.total = total
        self.enabled = enabled
        self.width = width
        self.stream = stream or sys.stdout

    def update(self, done):
        if self.enabled and (done % 10 == 0 or done == self.total):
            filled = done * self.width // self.total
            print(f"\r[{'#' * filled}{'.' * (self.width - filled)}] {done}/{self.total} frames", end="",
                  flush=True, file=self.stream)

    def close(self):
        if self.enabled:
            print(file=self.stream)


def save_frames(images, path, dt=1 / 60):
    """Write pillow images: every frame to a looping GIF (``dt`` seconds each), or the last one to a PNG."""
    path = str(path)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    if path.lower().endswith(".gif"):
        images[0].save(path, save_all=True, append_images=images[1:], duration=max(int(round(1000 * dt)), 10),
                       loop=0)
    else:
        images[-1].save(path)
    return path


def render(world, path, frames=120, dt=1 / 60, lower=(-10, -1), upper=(10, 14), size=(480, 360),
           progress=True, contacts=True, aabbs=False, tree=False, joints=True):
    """Step ``world`` ``frames`` times, drawing each frame with pillow; write a GIF (or the last frame as PNG).

    ``lower``/``upper`` are the world corners shown; ``contacts``/``aabbs``/``tree``/``joints`` as in the debug
    draw. Returns ``path``.
    """
    from PIL import Image, ImageDraw
    check_output(path, frames)
    view = View(lower, upper, *size)
    images = []
    bar = Progress(frames, progress)
    for f in range(frames):
        world.step(dt)
        img = Image.new("RGB", tuple(size), BACKGROUND)
        to_pillow(describe(world, contacts=contacts, aabbs=aabbs, tree=tree, joints=joints), view, img)
        ImageDraw.Draw(img).text((4, 2), f"t = {(f + 1) * dt:.3f} s", fill=INK)
        images.append(img)
        bar.update(f + 1)
    bar.close()
    return save_frames(images, path, dt)


def record_scene(scene, path, frames=180, size=(480, 360), dt=1 / 60, progress=True, **app_options):
    """Run scene ``scene`` headless (SDL dummy driver) for ``frames`` frames and write ``path``.

    Returns the :class:`~carom.render.window.DemoApp`, whose ``world`` and ``view`` are those of the last
    frame (tests use them to find where bodies must be drawn).
    """
    check_output(path, frames)
    from .window import DemoApp
    app = DemoApp(scene, size=size, headless=True, dt=dt, **app_options)
    images = []
    bar = Progress(frames, progress)
    for f in range(frames):
        app.frame()
        images.append(app.snapshot())
        bar.update(f + 1)
    bar.close()
    save_frames(images, path, dt)
    return app
