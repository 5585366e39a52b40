"""Does a resting scene come to rest? carom against Box2D v3 on two probes, side by side.

- **pyramid**: Box2D's large_pyramid (``carom.scenes.box2d_scenes.large_pyramid``, sleeping off): the boxes' mean
  speed over steps 250-400. A pyramid that does not settle costs speed as well as looks: the narrow phase reuses
  a pair's manifold only while the pair barely moves (contact recycling), so a pyramid that keeps moving is
  tested afresh pair by pair.
- **stack**: 20 boxes of 1 m stacked on the ground (friction 0.6, sleeping off, 30 Hz, 4 substeps): the
  largest sideways offset of any box after 10, 20, 30 … seconds and the top box's height.

Why both: the contact stiffness once traded one against the other. At 60 Hz carom's stack stood and its pyramid
kept moving (0.128 m/s); at Box2D's 30 Hz its pyramid rested and its stack fell, until recycled contacts kept
their anchors on their bodies as Box2D's do (``carom.constants.RECYCLE_DISTANCE``): now both hold at 30 Hz
(ground contacts at 120 Hz: ``carom.constants.STATIC_CONTACT_SCALE``).

The Box2D side is ``settle_probe.c``, compiled with ``cc`` against the library ``benchmarks/box2d.py`` builds
into ``build/box2d`` (run that first; without it only carom's figures are given).

    python benchmarks/settle_probe.py [--seconds 30] [--no-write]
"""
import argparse
import os
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _results import write_section  # noqa: E402
from box2d import BUILD, ROOT  # noqa: E402

import carom  # noqa: E402
from carom.geometry import box  # noqa: E402
from carom.scenes import box2d_scenes  # noqa: E402


def carom_pyramid():
    """carom's mean box speed (m/s) over steps 250-400 of Box2D's large pyramid."""
    w = box2d_scenes.large_pyramid()
    speeds = []
    for k in range(1, 401):
        w.step(1 / 60)
        if k >= 250:
            speeds.append(float(np.linalg.norm(w.velocities[1:], axis=1).mean()))
    return float(np.mean(speeds))


def carom_stack(n, seconds):
    """[(second, lean, top height)] of carom's stack of n boxes, every second."""
    w = carom.World(gravity=(0, -10), substeps=4)
    w.sleep_enabled = False
    w.add_body(kind="static", position=(0, -1)).add_shape(box(20, 1), friction=0.6)
    for i in range(n):
        w.add_body(position=(0, 0.5 + i)).add_shape(box(0.5, 0.5), density=1.0, friction=0.6)
    rows = []
    for k in range(1, 60 * seconds + 1):
        w.step(1 / 60)
        if k % 60 == 0:
            p = w.positions[1:]
            rows.append((k // 60, float(np.abs(p[:, 0]).max()), float(p[-1, 1])))
    return rows


def compile_probe(name, shared=False):
    """The compiled Box2D side ``benchmarks/NAME.c`` (built into ``build/box2d`` when missing or older than its
    source), or None when Box2D is not built (``benchmarks/box2d.py``) or there is no ``cc``. With ``shared``, also
    against Box2D's ``shared`` library (its benchmark scenes, ``shared/benchmarks.h``), which that build makes."""
    lib = os.path.join(BUILD, "src", "libbox2d.a")
    source = os.path.join(ROOT, "build", "box2d-src")
    include = os.path.join(source, "include")
    extra = [os.path.join(BUILD, "shared", "libshared.a")] if shared else []
    if not (os.path.exists(lib) and os.path.isdir(include) and all(map(os.path.exists, extra))) \
            or shutil.which("cc") is None:
        return None
    exe = os.path.join(BUILD, name)
    src = os.path.join(HERE, f"{name}.c")
    if not os.path.exists(exe) or os.path.getmtime(exe) < os.path.getmtime(src):
        flags = ["-I", os.path.join(source, "shared")] if shared else []
        subprocess.run(["cc", "-O2", "-I", include, *flags, src, *extra, lib, "-lm", "-lpthread", "-o", exe],
                       check=True)
    return exe


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=int, default=30)
    ap.add_argument("--no-write", action="store_true", help="print only, leave RESULTS.md alone")
    args = ap.parse_args()
    carom.set_num_threads(1)
    exe = compile_probe("settle_probe")
    pyr = {"carom": carom_pyramid()}
    stack = {"carom": carom_stack(20, args.seconds)}
    if exe:
        pyr["Box2D v3"] = float(subprocess.run([exe, "pyramid"], capture_output=True, text=True,
                                               check=True).stdout)
        out = subprocess.run([exe, "stack", "20", str(args.seconds)], capture_output=True, text=True,
                             check=True).stdout.split("\n")
        stack["Box2D v3"] = [(int(a), float(b), float(c)) for a, b, c in (line.split() for line in out if line)]
    engines = list(pyr)
    lines = ["| probe | " + " | ".join(engines) + " |", "|---|" + "---|" * len(engines),
             "| large_pyramid: mean box speed, steps 250-400 | "
             + " | ".join(f"{pyr[e]:.3f} m/s" for e in engines) + " |"]
    for t in range(10, args.seconds + 1, 10):
        cells = []
        for e in engines:
            _, lean, top = stack[e][t - 1]
            cells.append(f"lean {lean * 1e3:.2f} mm, top {top:.4f} m")
        lines.append(f"| 20-box stack at {t} s | " + " | ".join(cells) + " |")
    body = "\n".join(lines)
    print(body)
    if not args.no_write:
        write_section("settle_probe", "Does a resting scene rest? (carom against Box2D v3)", body + (
            "\n\ncarom's contacts at 30 Hz as Box2D's (ground contacts at 120 Hz) with Box2D's recycling: a "
            "recycled contact keeps its anchors on their bodies, unturned (``carom.constants.RECYCLE_DISTANCE``). "
            "Both probes hold: the pyramid comes to rest and the stack stands. Before (60 Hz, anchors turned with "
            "the bodies) the pyramid kept moving at 0.128 m/s; at 30 Hz without Box2D's anchors the stack fell."))


if __name__ == "__main__":
    main()
