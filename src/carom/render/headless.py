"""Pictures without a window: a frame per step, written as a GIF (every frame) or a PNG (the last one).

Two ways in, one drawing description (:func:`carom.render.draw.describe`):

* :func:`render` — any world you built, drawn with pillow alone (no pygame needed).
* :func:`record_scene` — a named scene through the demo window class under SDL's dummy video driver, so the
  file shows exactly what the window shows (heads-up line included). ``carom demo`` uses this headless.

Each frame carries its time (or step) as text: GIF writers merge identical consecutive frames, and a scene at
rest (a standing pyramid) would otherwise lose frames.
"""
from typing import TYPE_CHECKING
if TYPE_CHECKING:  # (annotations only)
    from typing import Tuple
    from .._types import Any, ArrayLike, Bits, Optional, Points, TransformLike, Vec2
import os
import sys

from ..errors import CaromError
from ._deps import require
from .draw import View, describe, describe_rigid, describe_verlet, BACKGROUND, INK
from .backends import to_pillow

__all__ = ["View", "render", "record_scene", "save_frames", "gif_frames", "draw_rigid", "draw_verlet"]


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


#: GIF frame delays are whole hundredths of a second, and browsers play a delay of 0 or 1 (10 ms) as 100 ms. A
#: GIF therefore keeps at most one frame per this many seconds: at dt = 1/60 every other frame (30 per second).
GIF_MIN_DELAY = 0.02


def gif_frames(count, dt):
    """Which of ``count`` frames, ``dt`` seconds apart, a GIF keeps and how long each shows (ms).

    Every ``stride``-th frame is kept, the smallest stride with ``stride * dt >= GIF_MIN_DELAY`` (and always the
    last frame). Frame k shows the world at time (k + 1) dt; a kept frame lasts until the next kept one. The
    delays are rounded to 10 ms on the running total, not one by one, so the animation keeps real time: at
    dt = 1/60 the delays go 30, 30, 40 ms (33.3 ms on average, exactly 60 steps a second). Returns
    ``(indices, durations_ms)``.
    """
    stride = max(1, int(-(-GIF_MIN_DELAY // dt))) if dt > 0 else 1
    while stride * dt < GIF_MIN_DELAY - 1e-12:
        stride += 1
    keep = list(range(stride - 1, count, stride))
    if not keep or keep[-1] != count - 1:
        keep.append(count - 1)
    ends = [keep[j + 1] + 1 for j in range(len(keep) - 1)] + [keep[-1] + 1 + stride]
    starts = [k + 1 for k in keep]
    durations = []
    for start, end in zip(starts, ends):
        a = int(round(100 * start * dt))
        b = int(round(100 * end * dt))
        durations.append(10 * max(b - a, 2))
    return keep, durations


def save_frames(images, path, dt=1 / 60):
    """Write pillow images, one per ``dt`` seconds: a looping GIF at real speed (:func:`gif_frames` picks the
    frames and their delays), or the last one as a PNG. Returns ``path``."""
    path = str(path)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    if path.lower().endswith(".gif"):
        keep, durations = gif_frames(len(images), dt)
        frames = [images[k] for k in keep]
        frames[0].save(path, save_all=True, append_images=frames[1:], duration=durations, loop=0)
    else:
        images[-1].save(path)
    return path


def render(world: "Any", path: "Any", frames: "int" = 120, dt: "float" = 1 / 60, lower: "Vec2" = (-10, -1),
           upper: "Vec2" = (10, 14), size: "Tuple[int, int]" = (480, 360),
           progress: "bool" = True, contacts: "bool" = False, aabbs: "bool" = False, tree: "bool" = False,
           joints: "bool" = True) -> str:
    """Step ``world`` ``frames`` times, drawing each frame with pillow; write a GIF (or the last frame as PNG).

    ``lower``/``upper`` are the world corners shown; ``contacts``/``aabbs``/``tree``/``joints`` as in the debug
    draw. Returns ``path``.

    ``dt`` is the step (s) and each frame's time in the GIF; ``size`` the picture (width, height) in pixels;
    ``progress`` prints a progress bar.
    """
    Image = require("PIL.Image")
    ImageDraw = require("PIL.ImageDraw")
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


def record_scene(scene: "str", path: "Any", frames: "int" = 180, size: "Tuple[int, int]" = (480, 360),
                 dt: "float" = 1 / 60, progress: "bool" = True, contacts: "bool" = False,
                 **app_options) -> "Any":
    """Run scene ``scene`` headless (SDL dummy driver) for ``frames`` frames and write ``path``.

    Contact points are off unless ``contacts`` is True (in a pile they hide the bodies); other options go to
    :class:`~carom.render.window.DemoApp` (``joints``, ``follow``, ``on_step``, ``overlay``, ``scenes``, ...).

    Returns the :class:`~carom.render.window.DemoApp`, whose ``world`` and ``view`` are those of the last
    frame (tests use them to find where bodies must be drawn).

    ``size`` is the picture (width, height) in pixels, ``dt`` the step (s) and each frame's time in the GIF,
    ``progress`` prints a progress bar; ``app_options`` go to the DemoApp.
    """
    check_output(path, frames)
    from .window import DemoApp
    app = DemoApp(scene, size=size, headless=True, dt=dt, contacts=contacts, **app_options)
    images = []
    bar = Progress(frames, progress)
    for f in range(frames):
        app.frame()
        images.append(app.snapshot())
        bar.update(f + 1)
    bar.close()
    save_frames(images, path, dt)
    return app
