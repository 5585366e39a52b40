"""The scenes the demo window, ``carom demo`` and the tests know by name, each with the world rectangle to show.

Rigid scenes come from :data:`carom.scenes.rigid_scenes.SCENES` (whatever is registered there, so scenes added
for the benchmarks appear too), Verlet scenes from :mod:`carom.scenes.verlet_scenes`. A scene without a
rectangle listed here is framed by :func:`carom.render.draw.fit_bounds` on its first build.
"""
from collections import namedtuple

SceneInfo = namedtuple("SceneInfo", ("name", "build", "doc", "lower", "upper"))
SceneInfo.__doc__ = """A named scene: its builder (no arguments, returns a world), a one-line description and the
world rectangle to show (``lower``, ``upper``; None for both: fitted to the first build)."""

#: Hand-picked framing (lower, upper) for the scenes whose extent the builder alone does not show well
#: (the pile starts 37 m high; the pyramid's ground is 100 m wide; joint scenes swing beyond their first pose).
FRAMES = {
    "balls": ((-10, -1), (10, 14)),
    "pyramid": ((-12, -1), (12, 21)),
    "pile": ((-10, -1), (10, 14)),
    "bullets": ((-10, -1), (12, 12)),
    "pendulum": ((-5, -0.5), (5, 5.5)),
    "chain": ((-21, -1), (21, 23)),
    "bridge": ((-22, -1), (22, 26)),
    "ragdolls": ((-4.5, -1), (4.5, 12)),
    "car": ((-8, -3), (8, 9)),
    "cradle": ((-3.5, 0), (3.5, 4)),
    "joint_grid": ((-15, -115), (115, 5)),
    "verlet_boxes": ((-13.5, -1.5), (13.5, 18)),
    "rope_cloth": ((-10, -1), (10, 13)),
    "jelly": ((-11.5, -1.5), (11.5, 12)),
}


def _first_body_position(world):
    """Where the first body after the static one is (the car's chassis)."""
    return world.positions[0]


#: Scenes whose camera follows a subject: ``name -> function(world) -> (x, y)``. The view keeps the scene's
#: framing (above) shifted by how far the subject has moved.
FOLLOW = {"car": _first_body_position}

VERLET_SCENES = ("verlet_boxes", "rope_cloth", "jelly")


def _first_line(fn, name):
    return ((fn.__doc__ or name).strip().splitlines() or [name])[0]


def scenes() -> dict:
    """Ordered ``{name: SceneInfo}``: rigid scenes, then the Verlet ones."""
    from ..scenes.rigid_scenes import SCENES as RIGID
    from ..scenes import verlet_scenes
    out = {}
    for name, entry in RIGID.items():
        fn, doc = entry[0], entry[1]
        lower, upper = FRAMES.get(name, (None, None))
        out[name] = SceneInfo(name, fn, doc, lower, upper)
    for name in VERLET_SCENES:
        verlet_build = getattr(verlet_scenes, name, None)
        if verlet_build is not None:
            lower, upper = FRAMES.get(name, (None, None))
            out[name] = SceneInfo(name, verlet_build, _first_line(verlet_build, name), lower, upper)
    return out


def build(name, table=None):
    """Build scene ``name``: ``(world, lower, upper)``. Unknown names raise CaromError listing the known ones."""
    from ..errors import CaromError
    from .draw import fit_bounds
    table = table or scenes()
    if name not in table:
        raise CaromError(f"unknown scene {name!r}; known scenes: {', '.join(table)}")
    info = table[name]
    world = info.build()
    if info.lower is None:
        lower, upper = fit_bounds(world)
    else:
        lower, upper = info.lower, info.upper
    return world, lower, upper
