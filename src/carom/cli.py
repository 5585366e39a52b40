"""Command line: ``carom demo | lab | bench | scenes``."""
import argparse
import os
import sys


def _demo(args):
    from .render.geometry_picture import draw_collisions
    out = args.out or os.path.join("out", "demo.png")
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    draw_collisions(out)
    print(f"wrote {out}")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="carom", description="carom 2D physics engine")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run a scene (window if there is a display, file otherwise)")
    demo.add_argument("scene", nargs="?", default=None)
    demo.add_argument("--out", default=None)
    demo.add_argument("--frames", type=int, default=120)
    args = parser.parse_args(argv)
    if args.command == "demo":
        return _demo(args)
    return 1


if __name__ == "__main__":
    sys.exit(main())
