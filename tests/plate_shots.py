"""Bullets fired at a free dynamic plate (the setup of the bullets-at-moving-bodies audit): the shared harness
of ``tests/test_bullets.py`` and ``benchmarks/bullets.py``.

A plate 0.1 × 1 m of density 50 floats free (no gravity) with its centre at x = 2; a bullet body starts at
x = 0 at a random angle with its centre aimed well within the plate's span (|y| ≤ 0.3 m), flying along +x.
The shot passes when the bullet's centre goes through the plate within 30 steps of 1/60 s (``shot``).
"""
import numpy as np

import carom
from carom.geometry import Capsule, Circle, box

#: the four bullets: a circle of radius 0.05 m, a thin box 0.02 × 0.2 m, a box 0.5 m square, a capsule 0.44 m
#: long and 0.04 m thick; each a bullet body of density 1
BULLETS = {
    "circle": lambda: Circle(0.05),
    "thin_box": lambda: box(0.01, 0.1),
    "box": lambda: box(0.25, 0.25),
    "capsule": lambda: Capsule((-0.2, 0.0), (0.2, 0.0), 0.02),
}
SPEEDS = (10.0, 20.0, 50.0, 100.0, 200.0, 400.0)
PLATE_X = 2.0


#: poses sampled within each step to follow the bullet's centre relative to the plate
SAMPLES = 32


def _relative_path(b0, b1, p0, p1):
    """The bullet's centre in the plate's frame at SAMPLES + 1 instants of a step, both bodies' centres and
    angles interpolated linearly from their poses (x, y, angle) at the step's start to its end, as the
    continuous stage moves them. (The plate can spin by up to half a turn a step after a heavy hit: comparing
    only the step ends would call a bullet that stays in front of it a pass.)"""
    f = np.linspace(0.0, 1.0, SAMPLES + 1)[:, None]
    b = b0 + f * (b1 - b0)
    p = p0 + f * (p1 - p0)
    c, s = np.cos(p[:, 2]), np.sin(p[:, 2])
    dx, dy = b[:, 0] - p[:, 0], b[:, 1] - p[:, 1]
    return np.c_[c * dx + s * dy, -s * dx + c * dy]


def shot(kind, speed, y, angle=0.0, spin=0.0, drift=0.0, steps=30, dt=1 / 60, bullet=True):
    """Fire one bullet; True when its centre goes through the plate: from the near side to the far side of the
    plate's mid-plane, crossing it within the plate's span, in the plate's frame (``_relative_path``). A bullet
    that glances off an end and goes round the plate does not pass."""
    w = carom.World(gravity=(0.0, 0.0))
    plate = w.add_body(position=(PLATE_X, 0.0), velocity=(-drift, 0.0), angular_velocity=spin)
    plate.add_shape(box(0.05, 0.5), density=50.0)
    b = w.add_body(position=(0.0, y), angle=angle, velocity=(speed, 0.0), bullet=bullet)
    b.add_shape(BULLETS[kind](), density=1.0)

    def poses():
        return np.r_[b.position, b.angle], np.r_[plate.position, plate.angle]

    b0, p0 = poses()
    for _ in range(steps):
        w.step(dt)
        b1, p1 = poses()
        r = _relative_path(b0, b1, p0, p1)
        cross = np.flatnonzero((r[:-1, 0] < 0.0) & (r[1:, 0] >= 0.0))
        for i in cross:
            y_cross = r[i, 1] + (r[i + 1, 1] - r[i, 1]) * (-r[i, 0]) / (r[i + 1, 0] - r[i, 0])
            if abs(y_cross) < 0.5:
                return True
        b0, p0 = b1, p1
    return False


def passes(kind, speed, shots=40, seed=0, moving=False):
    """How many of ``shots`` shots pass the plate (aims and bullet angles drawn from ``seed``; ``moving``: the
    plate also spins at up to 30 rad/s and comes at the bullet at up to 20 m/s)."""
    rng = np.random.default_rng(seed)
    ys = rng.uniform(-0.3, 0.3, shots)
    angles = rng.uniform(-np.pi, np.pi, shots)
    spins = rng.uniform(-30.0, 30.0, shots) * moving
    drifts = rng.uniform(0.0, 20.0, shots) * moving
    return sum(shot(kind, speed, float(y), float(a), float(w), float(u))
               for y, a, w, u in zip(ys, angles, spins, drifts))
