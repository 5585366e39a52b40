"""carom.render: debug drawing of rigid and Verlet worlds, the demo window, headless GIF/PNG export and the
collision lab pictures.

* :func:`describe` — a world as a list of primitives (polygons, discs, lines, dots) in world coordinates;
  every back end draws that list, so all pictures agree.
* :func:`draw_pygame` / :func:`draw_matplotlib` — debug draw onto a pygame-ce surface or matplotlib axes.
* :func:`render` / :func:`record_scene` — frames to a GIF or PNG without a window.
* :func:`play` — your own world in the demo window, or headless into a GIF (what every example uses).
* :class:`~carom.render.window.DemoApp` — the interactive window (``carom demo``).
* :mod:`carom.render.lab` — step-by-step pictures of SAT, GJK, EPA, clipping, TOI, sort-and-sweep, the tree.

pygame-ce, pillow and matplotlib are the ``viz`` extra; they are imported only when used, and a missing one
raises :class:`carom.MissingDependencyError` naming ``pip install carom[viz]``.
"""
from .draw import describe, View, fit_bounds
from .backends import draw_pygame, draw_matplotlib, to_pillow, to_pygame, to_matplotlib
from .headless import render, record_scene
from .catalog import scenes
from .player import play, example_arguments

__all__ = ["describe", "View", "fit_bounds", "draw_pygame", "draw_matplotlib", "to_pillow", "to_pygame",
           "to_matplotlib", "render", "record_scene", "scenes", "play", "example_arguments"]
