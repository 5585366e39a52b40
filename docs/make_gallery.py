"""Make the documentation's pictures: run every ``examples/*.py`` headless into ``docs/gallery/<name>.gif``,
write ``docs/gallery.md`` from the examples' own docstrings, and draw the collision lab's pictures
(``carom lab``) into ``docs/lab/<algorithm>.png``.

    make gallery                  # or: python docs/make_gallery.py [NAME ...] [--frames N]

No display is needed (the examples record with SDL's dummy driver). The docs build only reads the files this
writes, so it never runs a simulation.
"""
import argparse
import ast
import importlib.util
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")
GALLERY = os.path.join(ROOT, "docs", "gallery")
SIZE = "320x240"


def example_names():
    """Every example script (``examples/*.py`` whose name does not start with an underscore), sorted."""
    return sorted(f[:-3] for f in os.listdir(EXAMPLES) if f.endswith(".py") and not f.startswith("_"))


def load(name):
    """Import ``examples/<name>.py`` as a module."""
    spec = importlib.util.spec_from_file_location(f"carom_example_{name}", os.path.join(EXAMPLES, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def docstring(name):
    """The example's module docstring (read without running it): first paragraph as title, rest as text."""
    with open(os.path.join(EXAMPLES, f"{name}.py"), encoding="utf-8") as f:
        doc = ast.get_docstring(ast.parse(f.read())) or name
    first, _, rest = doc.partition("\n\n")
    return " ".join(first.split()), rest.strip()


def write_page(names):
    """docs/gallery.md: one section per example, its animation and its docstring."""
    lines = ["# Gallery", "",
             "Every picture here is made by one of the scripts in `examples/` (`make gallery` runs them all "
             "headless and rewrites this page). Run one yourself: `python examples/NAME.py` opens a window when "
             "there is a display and writes `out/NAME.gif` otherwise; `--frames N`, `--out FILE`, `--size WxH` "
             "and `--headless` work for each.", ""]
    for name in names:
        title, text = docstring(name)
        lines += [f"## {name}", "", f"![{name}](gallery/{name}.gif)", "", title, ""]
        if text:
            lines += [text, ""]
        lines += [f"Source: `examples/{name}.py`", ""]
    with open(os.path.join(ROOT, "docs", "gallery.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("names", nargs="*", help="examples to run (default: all)")
    p.add_argument("--frames", type=int, default=None, help="frames per example (default: the example's own)")
    args = p.parse_args(argv)
    os.environ["SDL_VIDEODRIVER"] = "dummy"
    os.makedirs(GALLERY, exist_ok=True)
    names = args.names or example_names()
    for name in names:
        t0 = time.perf_counter()
        module = load(name)
        frames = ["--frames", str(args.frames)] if args.frames else []       # default: the example's own
        module.main(frames + ["--out", os.path.join(GALLERY, f"{name}.gif"), "--size", SIZE])
        print(f"{name}: {time.perf_counter() - t0:.1f} s", flush=True)
    write_page(example_names())
    if not args.names:
        lab_pictures()
    return 0


#: The lab pictures of the collision-lab tutorial: (algorithm, command-line options of ``carom lab``).
LAB = (("sat", ["--a", "box:0.9,0.5@0,0,0.3", "--b", "polygon:0,0,1.2,0.2,0.4,1.1@0.9,0.5,0.2"]),
       ("gjk", ["--seed", "1"]),
       ("epa", ["--a", "box:0.8,0.6@0,0,0.2", "--b", "polygon:0,0,1.2,0.3,0.3,1.0@0.6,0.2,0.5"]),
       ("clip", ["--a", "box:1.5,0.3@0,0,0", "--b", "box:0.5,0.5@0.4,0.75,0.25"]),
       ("toi", ["--a", "box:0.3,0.3@-2,0.2,0", "--b", "box:0.2,1.2@2,0,0", "--end=-2.5,0.5,2"]),
       ("sap", ["--seed", "2"]),
       ("tree", ["--seed", "2", "--count", "8"]))


def lab_pictures():
    """The collision lab's step grids (PNG) for the docs."""
    from carom.cli import main as carom_main
    folder = os.path.join(ROOT, "docs", "lab")
    os.makedirs(folder, exist_ok=True)
    for name, options in LAB:
        carom_main(["lab", name, "--out", os.path.join(folder, f"{name}.png")] + options)


if __name__ == "__main__":
    sys.exit(main())
