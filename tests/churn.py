"""A seeded churn of a rigid world: the fuzzing harness of ``make fuzz`` and of ``tests/test_fuzz.py``.

Each seed builds a world of circles, boxes, polygons, capsules and segments (dynamic, kinematic and static
bodies, bullets, compound bodies, sensors and filters) and then, step after step, applies random operations:
adding and removing bodies and shapes, impulses up to 1e15 N·s, teleports, velocity sets, a random dt between
1/240 and 1/30, sleeping on. Every ``check_every`` steps the world's snapshot must restore; every ``restore_every`` steps it is restored into a twin;
both take the next step and must then be bitwise equal (their snapshots' bytes), and the original goes on.

A failure is reported with its seed, its step and the last operations, and is reproduced by running the same
seed again: every random choice comes from ``numpy.random.default_rng(seed)``.

    python tests/churn.py --seeds 50 --steps 2000          # what the issue asked for
    python tests/churn.py --minutes 10                     # as many seeds as fit
    python tests/churn.py --seed 17 --steps 2000 -v        # one seed, printing its operations
"""
from __future__ import annotations

import argparse
import collections
import math
import sys
import time
import traceback

import numpy as np

import carom
from carom.geometry import Capsule, Circle, Polygon, Segment, box

ARENA = 30.0        # bodies start inside ±ARENA; the world's bounds hold them (outside ones are removed)


class ChurnFailure(AssertionError):
    """A churn seed failed: its message carries the seed, the step and the last operations."""


def _random_shape(rng, solid=False):
    """One of the five shape kinds, of a size between a few centimetres and a couple of metres (``solid``:
    not a segment, which has no area and so gives a dynamic body no mass)."""
    kind = rng.integers(4 if solid else 5)
    s = float(rng.uniform(0.05, 1.2))
    if kind == 0:
        return Circle(s, center=(float(rng.uniform(-0.3, 0.3)), 0.0))
    if kind == 1:
        return box(s, float(rng.uniform(0.02, 1.0)), center=(float(rng.uniform(-0.3, 0.3)), 0.0),
                   angle=float(rng.uniform(-1, 1)))
    if kind == 2:
        n = int(rng.integers(3, 8))
        a = np.sort(rng.uniform(0, 2 * np.pi, n))
        a += np.arange(n) * 1e-3        # distinct angles
        r = rng.uniform(0.5, 1.0, n) * s
        pts = np.c_[r * np.cos(a), r * np.sin(a)]
        try:
            return Polygon(pts)
        except carom.CaromError:        # degenerate draws (collinear, too thin): a box instead
            return box(s, s)
    if kind == 3:
        return Capsule((-s, 0.0), (s, 0.0), float(rng.uniform(0.02, 0.4)))
    return Segment((-s, 0.0), (s, 0.0))


class Churn:
    """One seed's world and its random operations."""

    def __init__(self, seed: int, restore_every: int = 300, verbose: bool = False, bodies: int = 12,
                 check_every: int = 25):
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.restore_every = restore_every
        self.check_every = check_every
        self.verbose = verbose
        self.log: collections.deque = collections.deque(maxlen=25)
        self.restores = 0
        self.body_steps = 0
        w = carom.World(gravity=(0.0, -10.0), substeps=4)
        w.sleep_enabled = True
        w.bounds = ((-200.0, -200.0), (200.0, 200.0))
        w.remove_outside = True
        w.static_body.add_shape(Segment((-ARENA, -ARENA), (ARENA, -ARENA)), friction=0.6)
        w.static_body.add_shape(box(1.0, ARENA, center=(-ARENA - 1.0, 0.0)))
        w.static_body.add_shape(box(1.0, ARENA, center=(ARENA + 1.0, 0.0)))
        self.world = w
        for _ in range(bodies):
            self.add_body()

    # --- operations -----------------------------------------------------------------------------------
    def _note(self, text):
        self.log.append(text)
        if self.verbose:
            print(text)

    def _bodies(self):
        return [b for b in self.world.bodies if b != self.world.static_body]

    def _pick(self, items):
        return items[int(self.rng.integers(len(items)))] if items else None

    def add_body(self):
        rng = self.rng
        kind = ("dynamic", "dynamic", "dynamic", "kinematic", "static")[int(rng.integers(5))]
        pos = (float(rng.uniform(-ARENA + 2, ARENA - 2)), float(rng.uniform(-ARENA + 2, ARENA - 2)))
        vel = (float(rng.uniform(-20, 20)), float(rng.uniform(-20, 20))) if kind != "static" else (0.0, 0.0)
        bullet = kind == "dynamic" and rng.random() < 0.2
        if bullet:
            vel = (float(rng.uniform(-400, 400)), float(rng.uniform(-400, 400)))
        b = self.world.add_body(position=pos, angle=float(rng.uniform(-3, 3)), velocity=vel,
                                angular_velocity=float(rng.uniform(-5, 5)) if kind != "static" else 0.0,
                                kind=kind, bullet=bullet)
        for i in range(int(rng.integers(1, 4))):
            self.add_shape(b, solid=i == 0)
        self._note(f"add_body {kind} at {pos} v {vel} bullet={bullet} -> {b.index}")
        return b

    def add_shape(self, body=None, solid=False):
        rng = self.rng
        body = body or self._pick(self._bodies())
        if body is None:
            return
        shape = _random_shape(rng, solid)
        sensor = rng.random() < 0.1
        category = 1 << int(rng.integers(3))
        mask = int(rng.integers(1, 8)) if rng.random() < 0.3 else 2**64 - 1
        h = body.add_shape(shape, density=float(rng.uniform(0.1, 5.0)), friction=float(rng.uniform(0, 1)),
                           restitution=float(rng.uniform(0, 1)) * (rng.random() < 0.3), sensor=sensor,
                           category=category, mask=mask)
        self._note(f"add_shape {type(shape).__name__} sensor={sensor} to body {body.index} -> {h.index}")

    def remove_body(self):
        b = self._pick(self._bodies())
        if b is not None:
            self._note(f"remove body {b.index}")
            self.world.remove(b)

    def remove_shape(self):
        b = self._pick(self._bodies())
        solid = [s for s in b.shapes if not isinstance(s.geometry, Segment)] if b is not None else []
        if b is not None and len(b.shapes) > 1 and (b.kind != "dynamic" or len(solid) > 1):
            s = self._pick(list(b.shapes))    # (a dynamic body keeps a shape with mass: it has two)
            self._note(f"remove shape {s.index} of body {b.index}")
            self.world.remove(s)

    def impulse(self):
        b = self._pick([b for b in self._bodies() if b.kind == "dynamic"])
        if b is not None:
            m = 10.0 ** float(self.rng.uniform(-2, 15))
            a = float(self.rng.uniform(0, 2 * np.pi))
            self._note(f"impulse {m:.3g} at {a:.3f} on body {b.index}")
            b.apply_impulse((m * math.cos(a), m * math.sin(a)))

    def teleport(self):
        b = self._pick(self._bodies())
        if b is not None:
            p = (float(self.rng.uniform(-ARENA, ARENA)), float(self.rng.uniform(-ARENA, ARENA)))
            self._note(f"teleport body {b.index} to {p}")
            b.position = p
            b.angle = float(self.rng.uniform(-10, 10))

    def set_velocity(self):
        b = self._pick([b for b in self._bodies() if b.kind != "static"])
        if b is not None:
            v = (float(self.rng.uniform(-500, 500)), float(self.rng.uniform(-500, 500)))
            self._note(f"velocity of body {b.index} = {v}")
            b.velocity = v
            b.angular_velocity = float(self.rng.uniform(-50, 50))

    OPERATIONS = ("add_body", "add_shape", "remove_body", "remove_shape", "impulse", "teleport", "set_velocity")
    WEIGHTS = np.array([3, 2, 2, 2, 3, 2, 2], float)

    def run(self, steps: int):
        """Run ``steps`` steps; raises ChurnFailure naming the seed, the step and the last operations."""
        w = self.world
        p = self.WEIGHTS / self.WEIGHTS.sum()
        step = 0
        try:
            for step in range(1, steps + 1):
                for _ in range(int(self.rng.poisson(0.6))):
                    getattr(self, self.OPERATIONS[int(self.rng.choice(len(p), p=p))])()
                dt = float(self.rng.uniform(1 / 240, 1 / 30))
                if step % self.restore_every == 0:
                    self._note(f"step {step}: snapshot, restore and step both with dt {dt!r}")
                    twin = carom.World.restore(w.snapshot())
                    self.restores += 1
                    w.step(dt)
                    twin.step(dt)
                    if w.snapshot().data != twin.snapshot().data:
                        raise ChurnFailure("the restored twin differs from the original after one step")
                    self.world = w = twin if self.rng.random() < 0.5 else w     # go on with either
                else:
                    w.step(dt)
                    if step % self.check_every == 0:
                        carom.World.restore(w.snapshot())       # every state the step leaves restores
                self.body_steps += w.body_count
                if not (np.isfinite(w.positions).all() and np.isfinite(w.velocities).all()):
                    raise ChurnFailure("a position or velocity is not finite")
        except Exception as e:
            ops = "\n  ".join(self.log)
            raise ChurnFailure(f"seed {self.seed}, step {step}: {type(e).__name__}: {e}\n"
                               f"last operations:\n  {ops}") from e


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=50, help="how many seeds (from --first)")
    ap.add_argument("--first", type=int, default=0, help="the first seed")
    ap.add_argument("--seed", type=int, help="run only this seed")
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--restore-every", type=int, default=300)
    ap.add_argument("--bodies", type=int, default=12, help="bodies at the start")
    ap.add_argument("--check-every", type=int, default=25, help="steps between snapshot checks")
    ap.add_argument("--minutes", type=float, help="run seeds from --first until this time is up")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args(argv)
    seeds = [a.seed] if a.seed is not None else range(a.first, a.first + (10 ** 9 if a.minutes else a.seeds))
    t0 = time.perf_counter()
    failures = total = restores = ran = 0
    for seed in seeds:
        if a.minutes and time.perf_counter() - t0 > 60 * a.minutes:
            break
        c = Churn(seed, a.restore_every, a.verbose, a.bodies, a.check_every)
        try:
            c.run(a.steps)
        except ChurnFailure as e:
            failures += 1
            print(f"FAIL {e}", flush=True)
            if a.verbose:
                traceback.print_exc()
        ran += 1
        total += c.body_steps
        restores += c.restores
        print(f"seed {seed}: {c.body_steps:,} body-steps, {c.restores} restores", flush=True)
    print(f"{ran} seeds x {a.steps} steps: {failures} failures, {total:,} body-steps, {restores} snapshot "
          f"restores, {time.perf_counter() - t0:.0f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
