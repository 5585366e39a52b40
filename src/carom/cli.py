"""Command line: ``carom demo [SCENE] [--out FILE] [--frames N]`` and ``carom scenes``."""
import argparse
import os
import sys


def _scenes():
    from .scenes.rigid_scenes import SCENES as RIGID
    from .scenes import verlet_scenes
    scenes = {name: (fn, doc, (-10, -1), (10, 14)) for name, (fn, doc) in RIGID.items()}
    scenes["bullets"] = (RIGID["bullets"][0], RIGID["bullets"][1], (-10, -1), (12, 12))
    for name in ("verlet_boxes", "rope_cloth", "jelly"):
        fn = getattr(verlet_scenes, name)
        doc = (fn.__doc__ or name).strip().splitlines()[0]
        scenes[name] = (fn, doc, (-10, -2), (10, 13))
    return scenes


def _demo(args):
    scenes = _scenes()
    name = args.scene or "pile"
    if name not in scenes:
        print(f"carom: unknown scene {name!r}; try one of: {', '.join(scenes)}", file=sys.stderr)
        return 2
    fn, _doc, lower, upper = scenes[name]
    out = args.out or os.path.join("out", f"{name}.gif")
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    from .render.headless import render
    render(fn(), out, frames=args.frames, lower=lower, upper=upper)
    print(f"wrote {out}")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="carom", description="carom 2D physics engine")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run a scene and write it as a GIF (or PNG)")
    demo.add_argument("scene", nargs="?", default=None)
    demo.add_argument("--out", default=None, help="output file, .gif or .png (default out/SCENE.gif)")
    demo.add_argument("--frames", type=int, default=180)
    sub.add_parser("scenes", help="list the scenes")
    args = parser.parse_args(argv)
    if args.command == "demo":
        return _demo(args)
    if args.command == "scenes":
        for name, (_fn, doc, _l, _u) in _scenes().items():
            print(f"{name:14s} {doc}")
        return 0
    return 1


if __name__ == "__main__":
    sys.exit(main())
