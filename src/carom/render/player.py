"""Show a world of your own the way ``carom demo`` shows its scenes: a pygame window when there is a display,
a GIF (or PNG) written headless otherwise. The examples in ``examples/`` all end with :func:`play`.

The window and the recording are the same :class:`~carom.render.window.DemoApp` (the recording under SDL's
dummy driver), so every control of the demo window works: space pauses, R rebuilds the world, drag a body with
the mouse, C/A/T/J toggle contacts, AABBs, the broad-phase tree and joints.

Command-line options read from ``argv`` (``sys.argv[1:]`` when None), so every example takes the same ones::

    python examples/cradle.py                     # a window (or out/cradle.gif without a display)
    python examples/cradle.py --frames 60 --out cradle.gif
    python examples/cradle.py --headless          # never a window
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Callable, Dict, Optional, Sequence, Tuple, Union

from ..errors import CaromError

Point = Tuple[float, float]


def example_arguments(argv: Optional[Sequence[str]] = None, name: str = "example",
                      default_frames: int = 240) -> argparse.Namespace:
    """Parse an example's command line: ``--frames N`` (default ``default_frames`` headless; in a window,
    close after N), ``--out FILE`` (.gif or .png; implies headless), ``--headless``, ``--size WxH``.

    ``argv`` is the argument list (None: ``sys.argv[1:]``); ``name`` is the program's name in the help text.
    """
    from .._args import positive_int as _positive_int, size as _size
    p = argparse.ArgumentParser(prog=name, description=f"carom example: {name}")
    p.add_argument("--frames", type=_positive_int, default=None,
                   help=f"frames to run (default {default_frames} headless, unlimited in a window)")
    p.add_argument("--out", default=None, help="write this .gif or .png without a window")
    p.add_argument("--headless", action="store_true", help="never open a window")
    p.add_argument("--size", type=_size, default=None, help="picture size WxH")
    args = p.parse_args(list(sys.argv[1:] if argv is None else argv))
    return args


def play(build: Callable[[], Any], *, name: str = "example", argv: Optional[Sequence[str]] = None,
         lower: Optional[Point] = None, upper: Optional[Point] = None, frames: Optional[int] = None,
         out: Optional[Union[str, os.PathLike]] = None, headless: Optional[bool] = None,
         size: Optional[Tuple[int, int]] = None, dt: float = 1 / 60, default_frames: int = 240,
         follow: Optional[Callable[[Any], Any]] = None, on_step: Optional[Callable[[Any], None]] = None,
         overlay: Optional[Callable[[Any], list]] = None, contacts: Optional[bool] = False,
         joints: Optional[bool] = None, progress: bool = True) -> Any:
    """Run the world that ``build()`` returns in a window, or headless into a GIF; returns the
    :class:`~carom.render.window.DemoApp` after its last frame (its ``world`` is the final state; headless,
    its ``out_path`` is the file written).

    ``build`` is called again when R rebuilds the scene. ``lower``/``upper`` are the world rectangle shown
    (default: fitted to the first build). ``frames``, ``out``, ``headless`` and ``size`` override the command
    line (``argv``, see :func:`example_arguments`). Headless output goes to ``out/<name>.gif`` unless told
    otherwise. ``follow(world) -> (x, y)`` moves the camera with a subject; ``on_step(app)`` runs before every
    step; ``overlay(app)`` returns extra primitives to draw; ``contacts``/``joints`` as in the demo window
    (contact points off by default). ``dt`` is the time step and, in a GIF, the real time of each step.

    ``default_frames`` is the number of frames headless when neither ``frames`` nor --frames is given; ``progress``
    prints a progress bar while recording.
    """
    from .catalog import SceneInfo
    from .window import DemoApp, display_available
    if not callable(build):
        raise CaromError(f"build must be a function that returns a world, got {build!r}")
    args = example_arguments(argv, name, default_frames)
    frames = frames if frames is not None else args.frames
    out = out if out is not None else args.out
    size = size or args.size
    headless = bool(headless or args.headless or out is not None or not display_available())
    doc = ((getattr(build, "__doc__", None) or name).strip().splitlines() or [name])[0]
    table = {name: SceneInfo(name, build, doc, lower, upper)}
    options: Dict[str, Any] = dict(scenes=table, follow=follow, on_step=on_step, overlay=overlay, contacts=contacts,
                   joints=joints, title=f"carom: {name}", dt=dt)
    if not headless:
        try:
            app = DemoApp(name, size=size or (960, 720), headless=False, **options)
        except (ImportError, OSError, RuntimeError) as exc:
            print(f"carom: cannot open a window ({exc}); rendering headless instead", file=sys.stderr)
        else:
            try:
                app.run(max_frames=frames)
            finally:
                app.close()
            return app
    from .headless import record_scene
    path = str(out) if out is not None else os.path.join("out", f"{name}.gif")
    options.pop("contacts")
    app = record_scene(name, path, frames=frames or default_frames, size=size or (480, 360), progress=progress,
                       contacts=bool(contacts), **options)
    app.close()
    app.out_path = path
    print(f"wrote {path}")
    return app
