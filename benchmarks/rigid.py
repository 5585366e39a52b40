"""Rigid-body benchmark: carom vs pymunk vs pybox2d on the same scenes, same dt (1/60), one thread.

Scenes (Box2D v3's benchmark set): large_pyramid (5,050 boxes), many_pyramids (22,000 boxes; scaled down
with --quick) and a pile of 5,000 circles in a box. Per engine: ms per step (mean over the timed steps after
one warm-up step), and quality figures computed the same way for every engine from the final body poses:
top-box drift (m) for pyramids and the deepest overlap between any two shapes (m, measured with carom's SAT
on the final poses, so every engine is judged by one ruler).

    python benchmarks/rigid.py [--steps N] [--quick]
"""
import argparse
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _results import write_section, table  # noqa: E402

import carom  # noqa: E402
from carom.geometry import box, Circle  # noqa: E402
from carom.geometry.manifold import collide_many  # noqa: E402
from carom.geometry.broadphase import SweepAndPrune  # noqa: E402

DT = 1.0 / 60.0


# ---------------------------------------------------------------------------------------------------------
# scene descriptions shared by all engines: a list of (x, y) box or circle centres plus the static ground

def pyramid_layout(base, cx=0.0, gy=0.0):
    pts = []
    for row in range(base):
        n = base - row
        for i in range(n):
            pts.append((cx + i - 0.5 * (n - 1), gy + 0.5 + row))
    return pts


def scene(name, quick):
    if name == "large_pyramid":
        return dict(kind="box", size=1.0, bodies=pyramid_layout(100), grounds=[("box", 0, -1, 100, 1)])
    if name == "many_pyramids":
        rows, cols = (5, 5) if quick else (20, 20)
        bodies, grounds = [], []
        for r in range(rows):
            gy = r * 12.0
            grounds.append(("segment", -0.5 * cols * 11 - 1, gy, 0.5 * cols * 11 + 1, gy))
            for c in range(cols):
                bodies += pyramid_layout(10, (c - 0.5 * (cols - 1)) * 11.0, gy)
        return dict(kind="box", size=1.0, bodies=bodies, grounds=grounds)
    if name == "circle_pile":
        count, r = 5000, 0.25
        cols = int(math.sqrt(count)) + 1
        half = cols * r * 1.1
        rng = np.random.default_rng(1)
        bodies = [(-half + r * 1.1 + (k % cols) * 2.1 * r + rng.uniform(-0.01, 0.01), r * 1.1 + (k // cols) * 2.1 * r)
                  for k in range(count)]
        grounds = [("box", 0, -0.5, half + 0.5, 0.5), ("box", -half - 0.5, 2 * half, 0.5, 2 * half),
                   ("box", half + 0.5, 2 * half, 0.5, 2 * half)]
        return dict(kind="circle", size=r, bodies=bodies, grounds=grounds)
    raise ValueError(name)


# ---------------------------------------------------------------------------------------------------------
def run_carom(sc, steps):
    w = carom.World(gravity=(0, -10), substeps=4)
    for g in sc["grounds"]:
        if g[0] == "box":
            w.static_body.add_shape(box(g[3], g[4], center=(g[1], g[2])), friction=0.6)
        else:
            w.static_body.add_shape(carom.geometry.Segment(g[1:3], g[3:5]), friction=0.6)
    shape = box(0.5 * sc["size"], 0.5 * sc["size"]) if sc["kind"] == "box" else Circle(sc["size"])
    for p in sc["bodies"]:
        w.add_body(position=p).add_shape(shape, density=1.0, friction=0.6)
    w.step(DT)
    t = time.perf_counter()
    for _ in range(steps):
        w.step(DT)
    ms = (time.perf_counter() - t) / steps * 1000
    return ms, w.positions, w.angles


def run_pymunk(sc, steps):
    import pymunk
    space = pymunk.Space()
    space.gravity = (0, -10)
    space.iterations = 10
    for g in sc["grounds"]:
        if g[0] == "box":
            x, y, hw, hh = g[1:]
            s = pymunk.Poly(space.static_body, [(x - hw, y - hh), (x + hw, y - hh), (x + hw, y + hh), (x - hw, y + hh)])
        else:
            s = pymunk.Segment(space.static_body, g[1:3], g[3:5], 0.0)
        s.friction = 0.6
        space.add(s)
    bodies = []
    for p in sc["bodies"]:
        b = pymunk.Body()
        b.position = p
        if sc["kind"] == "box":
            s = pymunk.Poly.create_box(b, (sc["size"], sc["size"]))
        else:
            s = pymunk.Circle(b, sc["size"])
        s.density = 1.0
        s.friction = 0.6
        space.add(b, s)
        bodies.append(b)
    space.step(DT)
    t = time.perf_counter()
    for _ in range(steps):
        space.step(DT)
    ms = (time.perf_counter() - t) / steps * 1000
    return ms, np.array([tuple(b.position) for b in bodies]), np.array([b.angle for b in bodies])


def run_box2d(sc, steps):
    import Box2D
    world = Box2D.b2World(gravity=(0, -10))
    ground = world.CreateStaticBody()
    for g in sc["grounds"]:
        if g[0] == "box":
            ground.CreatePolygonFixture(box=(g[3], g[4], (g[1], g[2]), 0.0), friction=0.6)
        else:
            ground.CreateEdgeFixture(vertices=[g[1:3], g[3:5]], friction=0.6)
    bodies = []
    for p in sc["bodies"]:
        b = world.CreateDynamicBody(position=p)
        if sc["kind"] == "box":
            b.CreatePolygonFixture(box=(0.5 * sc["size"], 0.5 * sc["size"]), density=1.0, friction=0.6)
        else:
            b.CreateCircleFixture(radius=sc["size"], density=1.0, friction=0.6)
        bodies.append(b)
    world.Step(DT, 8, 3)
    t = time.perf_counter()
    for _ in range(steps):
        world.Step(DT, 8, 3)
    ms = (time.perf_counter() - t) / steps * 1000
    return ms, np.array([tuple(b.position) for b in bodies]), np.array([b.angle for b in bodies])


def deepest_overlap(sc, positions, angles):
    """Deepest overlap (m) among the final poses, bodies and ground, by carom's SAT (same ruler for all)."""
    shapes = [box(g[3], g[4], center=(g[1], g[2])) if g[0] == "box"
              else carom.geometry.Segment(g[1:3], g[3:5]) for g in sc["grounds"]]
    grounds = len(shapes)
    body_shape = box(0.5 * sc["size"], 0.5 * sc["size"]) if sc["kind"] == "box" else Circle(sc["size"])
    shapes += [body_shape] * len(positions)
    counts = np.array([s.vertices.shape[0] for s in shapes])
    offsets = np.concatenate([[0], np.cumsum(counts)[:-1]])
    verts = np.concatenate([s.vertices for s in shapes])
    normals = np.concatenate([s.normals for s in shapes])
    radii = np.array([s.radius for s in shapes])
    xf = np.zeros((len(shapes), 4))
    xf[:, 2] = 1.0
    xf[grounds:, 0:2] = positions
    xf[grounds:, 2] = np.cos(angles)
    xf[grounds:, 3] = np.sin(angles)
    lower = np.empty((len(shapes), 2))
    upper = np.empty((len(shapes), 2))
    for k, s in enumerate(shapes):
        p = s.vertices @ np.array([[xf[k, 2], xf[k, 3]], [-xf[k, 3], xf[k, 2]]]) + xf[k, :2]
        lower[k] = p.min(0) - s.radius
        upper[k] = p.max(0) + s.radius
    sap = SweepAndPrune()
    for k in range(len(shapes)):
        sap.insert(lower[k], upper[k], static=k < grounds)
    pairs = sap.pairs()
    out_f = np.zeros((len(pairs), 8))
    out_i = np.zeros((len(pairs), 3), np.int64)
    collide_many(verts, normals, offsets, counts, radii, xf, pairs, 0.0, out_f, out_i)
    seps = np.concatenate([out_f[out_i[:, 0] >= 1, 4], out_f[out_i[:, 0] >= 2, 7]])
    return float(max(0.0, -seps.min())) if seps.size else 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--scenes", nargs="*", default=["large_pyramid", "many_pyramids", "circle_pile"])
    args = ap.parse_args()
    rows = []
    for name in args.scenes:
        sc = scene(name, args.quick)
        top0 = np.array(sc["bodies"][-1]) if sc["kind"] == "box" else None
        results = {}
        for engine, fn in (("carom", run_carom), ("pymunk", run_pymunk), ("pybox2d", run_box2d)):
            ms, pos, ang = fn(sc, args.steps)
            drift = float(np.linalg.norm(pos[-1] - top0)) if top0 is not None else float("nan")
            pen = deepest_overlap(sc, pos, ang)
            results[engine] = ms
            rows.append((name + (" (quick)" if args.quick and name == "many_pyramids" else ""), len(sc["bodies"]),
                         engine, f"{ms:.1f}", f"{ms / results['carom']:.2f}" if engine != "carom" else "1.00",
                         "" if math.isnan(drift) else f"{drift:.4f}", f"{pen * 1000:.1f}"))
            print(rows[-1], flush=True)
        rows.append((name, "", "carom / pymunk", f"{results['carom'] / results['pymunk']:.2f}", "", "", ""))
    body = table(["scene", "bodies", "engine", "ms/step", "engine/carom", "top-box drift (m)",
                  "deepest overlap (mm)"], rows)
    body += (f"\n\n{args.steps} timed steps after one warm-up step, dt = 1/60, one thread. carom: 4 substeps; "
             "pymunk: 10 iterations; pybox2d: 8 velocity / 3 position iterations. The deepest overlap is measured "
             "on the final poses with carom's SAT for every engine.")
    write_section("rigid", "Rigid bodies: carom vs pymunk vs pybox2d", body)


if __name__ == "__main__":
    main()
