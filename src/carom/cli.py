"""Command line: ``carom demo [SCENE]``, ``carom scenes``, ``carom lab ALGORITHM`` and ``carom bench ...``.

``carom demo`` opens a pygame-ce window when there is a display; without one (no ``DISPLAY`` on Linux, as on CI),
or with ``--out FILE`` or ``--headless``, it renders ``--frames`` frames with SDL's dummy driver and writes a GIF
(or the last frame as a PNG), with a progress bar. It never waits for a window that cannot open.
"""
import argparse
import os
import sys

from ._args import positive_int as _positive_int, size as _size
from .errors import CaromError

HEADLESS_FRAMES = 180


def _demo(args):
    from .render.catalog import scenes
    table = scenes()
    name = args.scene or "pile"
    if name not in table:
        print(f"carom: unknown scene {name!r}; try one of: {', '.join(table)}", file=sys.stderr)
        return 2
    from .render.window import display_available
    headless = args.headless or args.out is not None or not display_available()
    if not headless:
        try:
            from .render.window import DemoApp
            app = DemoApp(name, size=args.size or (960, 720), headless=False, joints=args.joints)
        except (ImportError, OSError, RuntimeError) as exc:   # pygame.error is a RuntimeError: no display
            print(f"carom: cannot open a window ({exc}); rendering headless instead", file=sys.stderr)
        else:
            try:
                app.run(max_frames=args.frames)
            finally:
                app.close()
            return 0
    out = args.out or os.path.join("out", f"{name}.gif")
    from .render.headless import record_scene
    record_scene(name, out, frames=args.frames or HEADLESS_FRAMES, size=args.size or (480, 360),
                 progress=not args.quiet, joints=args.joints)
    print(f"wrote {out}")
    return 0


def _lab(args):
    from .render import lab
    out = args.out or os.path.join("out", f"lab-{args.algorithm}.gif")
    end = None
    if args.end is not None:
        try:
            end = [float(v) for v in args.end.split(",")]
        except ValueError:
            raise CaromError(f"--end must be x,y or x,y,angle, got {args.end!r}") from None
        if len(end) not in (2, 3):
            raise CaromError(f"--end must be x,y or x,y,angle, got {args.end!r}")
    result = lab.run(args.algorithm, out, seed=args.seed, a=args.a, b=args.b, end=end, count=args.count)
    print(f"wrote {out} ({len(result.steps)} steps)")
    return 0


def _bench(argv):
    from . import bench           # written separately; imported only when asked for
    return bench.main(list(argv))


def parser():
    p = argparse.ArgumentParser(prog="carom", description="carom 2D physics engine")
    sub = p.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run a scene in a window, or headless into a GIF/PNG",
                          description="Keys in the window: space pause, s/right single step, r reset, "
                                      "tab/n next scene, 1-9 scene, c contacts, a AABBs, t tree, j joints, drag and "
                                      "click with the mouse, esc quit.")
    demo.add_argument("scene", nargs="?", default=None, help="scene name (default pile; see `carom scenes`)")
    demo.add_argument("--out", default=None, help="write this .gif or .png headless (default out/SCENE.gif "
                                                  "when there is no display)")
    demo.add_argument("--frames", type=_positive_int, default=None,
                      help=f"frames to render headless (default {HEADLESS_FRAMES}); in a window, close after N")
    demo.add_argument("--size", type=_size, default=None, help="picture size WxH (480x360 headless, "
                                                               "960x720 window)")
    demo.add_argument("--headless", action="store_true", help="never open a window")
    demo.add_argument("--joints", action=argparse.BooleanOptionalAction, default=None,
                      help="draw the joints (default: for scenes of at most 1,000 joints; J in the window)")
    demo.add_argument("--quiet", action="store_true", help="no progress bar")
    sub.add_parser("scenes", help="list the scenes")
    lab = sub.add_parser("lab", help="step-by-step pictures of a collision algorithm")
    from .render.lab import ALGORITHMS
    lab.add_argument("algorithm", choices=list(ALGORITHMS), help="; ".join(f"{k}: {v}" for k, v in
                                                                           ALGORITHMS.items()))
    lab.add_argument("--out", default=None, help=".gif (a frame per step) or .png (a grid of steps); "
                                                 "default out/lab-ALGORITHM.gif")
    lab.add_argument("--seed", type=int, default=0, help="seed of the random shapes or boxes")
    lab.add_argument("--a", default=None, help="shape A, e.g. box:0.5,0.3@0,0,0.2 (kind:params@x,y,angle)")
    lab.add_argument("--b", default=None, help="shape B, e.g. circle:0.4@0.8,0.2")
    lab.add_argument("--end", default=None, help="toi: B's end pose x,y[,angle]")
    lab.add_argument("--count", type=int, default=None, help="sap/tree: number of boxes (default 10)")
    sub.add_parser("bench", help="benchmarks side by side with pymunk and Box2D (arguments go to carom.bench)",
                   add_help=False)
    return p


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "bench":
        return _bench(argv[1:])
    args = parser().parse_args(argv)
    try:
        if args.command == "demo":
            return _demo(args)
        if args.command == "lab":
            return _lab(args)
        if args.command == "scenes":
            from .render.catalog import scenes
            for name, info in scenes().items():
                print(f"{name:14s} {info.doc}")
            return 0
    except CaromError as exc:
        print(f"carom: {exc}", file=sys.stderr)
        return 2
    return 1


if __name__ == "__main__":
    sys.exit(main())
