"""Verlet world benchmark: 1,000 boxes piling into a container, and a 100 x 100 pinned cloth.

Reports ms per step (dt 1/60) beside quality figures: the largest relative edge-length error of the
rigid edges (over the whole run for the boxes, at the end for the cloth), boxes escaped from the
container, and the deepest overlap of a box vertex into the floor at the end.
Run: .venv/bin/python benchmarks/verlet.py [--quick]
"""
import sys
import time

import numpy as np

sys.path.insert(0, __import__("os").path.dirname(__file__))
from _results import table, write_section  # noqa: E402

from carom import verlet  # noqa: E402


def container_world(n_boxes=1000, size=0.5):
    vw = verlet.World(gravity=(0.0, -10.0), iterations=8)
    vw.add_box(center=(0.0, -0.5), width=22.0, height=1.0, static=True)
    vw.add_box(center=(-10.5, 15.0), width=1.0, height=30.0, static=True)
    vw.add_box(center=(10.5, 15.0), width=1.0, height=30.0, static=True)
    cols = 25
    rng = np.random.default_rng(0)
    for k in range(n_boxes):
        x = -9.0 + (k % cols) * 0.75 + rng.uniform(-0.05, 0.05)
        y = 1.0 + (k // cols) * 0.75
        vw.add_box(center=(x, y), width=size, height=size, angle=rng.uniform(0, 1.5), friction=0.6)
    return vw


def run(vw, steps, every=10):
    vw.step(1 / 60)  # compile / warm up
    worst = 0.0
    t_total = 0.0
    for s in range(steps):
        t0 = time.perf_counter()
        vw.step(1 / 60)
        t_total += time.perf_counter() - t0
        if s % every == 0:
            worst = max(worst, float(vw.edge_strain().max()))
    return 1000.0 * t_total / steps, worst


def main():
    quick = "--quick" in sys.argv
    rows = []
    vw = container_world(200 if quick else 1000)
    ms, worst = run(vw, 100 if quick else 600)
    pos = vw.positions
    boxes = [b for b in vw.bodies if not b.static]
    centers = np.array([b.center for b in boxes])
    escaped = int(np.sum((np.abs(centers[:, 0]) > 10.0) | (centers[:, 1] < 0.0)))
    floor_pen = float(max(0.0, -min(pos[b.particles][:, 1].min() for b in boxes)))
    rows.append([f"{len(boxes)} boxes 0.5 m into a container", len(pos), vw.edge_count, 600 if not quick else 100,
                 f"{ms:.2f}", f"{100 * worst:.2f} %",
                 f"escaped {escaped}, floor overlap {1000 * floor_pen:.1f} mm, top y {pos[:, 1].max():.1f} m"])
    print(rows[-1])
    vw = verlet.World(gravity=(0.0, -10.0), iterations=8)
    n = 30 if quick else 100
    vw.add_cloth((-5.0, 10.0), 10.0, 10.0, n, n, pinned="top")
    ms, worst = run(vw, 100 if quick else 300)
    attached = bool(np.all(vw.positions[:n, 1] == 10.0))
    rows.append([f"{n} x {n} cloth pinned along the top", vw.particle_count, vw.edge_count,
                 100 if quick else 300, f"{ms:.2f}", f"{100 * worst:.2f} %",
                 f"top row attached: {attached}"])
    print(rows[-1])
    body = table(["scene", "particles", "edges", "steps", "ms / step", "max edge error", "quality"], rows)
    body += ("\n\nOne thread, dt 1/60, 8 iterations. Edge error = max |length − rest| / rest over all edges "
             "(boxes: worst seen every 10 steps of the run; cloth: sampled the same way — the cloth is a chain "
             "of sticks under its own weight, so Gauss–Seidel with 8 sweeps leaves it stretched).")
    if not quick:
        write_section("verlet", "Verlet world (carom.verlet)", body)
    print(body)


if __name__ == "__main__":
    main()
