"""Speculative margins: a pair's margin covers how far its gap can close in the step (the relative motion of its
bodies, ``_step.pair_motion``), not the sum of how far each body moves."""
import math

import numpy as np
import pytest

import carom
from carom.constants import SPECULATIVE_DISTANCE
from carom.geometry import box
from carom.rigid import _step


def _pair_row(w, a, b):
    """The contact table row of the pair of shapes a and b, or None."""
    sa, sb = sorted((a.index, b.index))
    keys = w.tables.contacts.keys
    k = np.searchsorted(keys, (sa << 32) | sb)
    return k if k < len(keys) and keys[k] == (sa << 32) | sb else None


def test_bodies_flying_together_get_no_speculative_points():
    """Two boxes 10 cm apart, one behind the other, flying at 12 m/s: the back one's box, swept along its 0.2 m
    step, reaches the front one, so they are a candidate pair, but their gap cannot close, so the pair has no
    points (a margin of the two speeds' sum, 0.42 m, gave it two)."""
    w = carom.World(gravity=(0, 0))
    a = w.add_body(position=(0.0, 0.0), velocity=(12.0, 0.0)).add_shape(box(0.5, 0.5))
    b = w.add_body(position=(1.1, 0.0), velocity=(12.0, 0.0)).add_shape(box(0.5, 0.5))
    for _ in range(3):
        w.step(1 / 60)
        k = _pair_row(w, a, b)
        assert k is not None                     # a candidate of the broad phase
        assert w.tables.contacts.count[k] == 0            # and no manifold


def test_boxes_are_swept_along_the_motion():
    """Side by side, 10 cm apart, flying at 12 m/s: the boxes are swept along x only, so the pair is not even a
    candidate; a box at rest beside a moving one still meets it within the slop-sized margin."""
    w = carom.World(gravity=(0, 0))
    a = w.add_body(position=(0.0, 0.0), velocity=(12.0, 0.0)).add_shape(box(0.5, 0.5))
    b = w.add_body(position=(0.0, 1.1), velocity=(12.0, 0.0)).add_shape(box(0.5, 0.5))
    c = w.add_body(position=(0.0, -1.015), velocity=(0.0, 0.0)).add_shape(box(0.5, 0.5))
    w.step(1 / 60)
    assert _pair_row(w, a, b) is None
    k = _pair_row(w, a, c)
    assert k is not None and w.tables.contacts.count[k] > 0
    bodies, shapes = w.step_tables()[:2]
    lower, upper = _step.bounds_stage(1 / 60, 0.0, 0.0, bodies, shapes, 1)[4:6]
    half = 0.5 * SPECULATIVE_DISTANCE
    # a's box: its core at x in [-0.5, 0.5] at the pose the step starts from, swept 0.2 m ahead
    x0 = a.body.position[0] - 0.5
    assert lower[a.index, 0] == pytest.approx(x0 - half) and upper[a.index, 0] == pytest.approx(x0 + 1.2 + half)
    assert upper[a.index, 1] - lower[a.index, 1] == pytest.approx(1.0 + 2 * half)


def test_dynamic_bodies_closing_fast_meet_without_passing_through():
    """Two 1 m boxes closing at 30 m/s (half a metre a step, their gap 0.3 m): the margin of the pair is what
    their relative motion can close, so the first step already has speculative points and they stop at
    contact, never more than a centimetre into each other."""
    w = carom.World(gravity=(0, 0))
    a = w.add_body(position=(0.0, 0.0), velocity=(15.0, 0.0))
    a.add_shape(box(0.5, 0.5), friction=0.0, restitution=0.0)
    b = w.add_body(position=(1.3, 0.0), velocity=(-15.0, 0.0))
    b.add_shape(box(0.5, 0.5), friction=0.0, restitution=0.0)
    for _ in range(20):
        w.step(1 / 60)
        gap = b.position[0] - a.position[0] - 1.0
        assert gap > -0.01, gap
    assert abs(a.velocity[0]) < 1e-3 and abs(b.velocity[0]) < 1e-3     # stopped (no restitution)


def _motion(vel, angvel, reach, scale, dt=1 / 60, g=10.0, min_extent=10.0):
    """Rows of bounds_stage's motion table for bodies with these velocities (as _body_bounds computes them)."""
    rows = []
    for (vx, vy), w, r, s in zip(vel, angvel, reach, scale):
        turn = abs(w) * r * dt
        fall = dt * dt * g * s
        bound = min(math.hypot(vx, vy) * dt + turn + abs(fall), 0.5 * min_extent)
        rows.append((bound, vx * dt, vy * dt, turn, fall))
    return np.array(rows)


@pytest.mark.parametrize("vel, angvel, scale, expect", [
    (((5.0, 1.0), (5.0, 1.0)), (0.0, 0.0), (1.0, 1.0), 0.0),                   # flying together
    (((5.0, 0.0), (-5.0, 0.0)), (0.0, 0.0), (1.0, 1.0), 10.0 / 60),            # head on: the sum
    (((3.0, 0.0), (0.0, 4.0)), (2.0, 1.0), (1.0, 0.0), None),                  # anything else: in between
])
def test_pair_motion_is_the_relative_motion_capped_by_the_sum(vel, angvel, scale, expect):
    motion = _motion(vel, angvel, (0.5, 0.5), scale)
    got = _step.pair_motion(motion, 0, 1)
    dt = 1 / 60
    rel = (math.hypot(vel[1][0] - vel[0][0], vel[1][1] - vel[0][1]) * dt + (abs(angvel[0]) + abs(angvel[1])) * 0.5
           * dt + dt * dt * 10.0 * abs(scale[1] - scale[0]))
    assert got == pytest.approx(min(rel, motion[0, 0] + motion[1, 0]), rel=1e-12, abs=1e-15)
    assert got <= motion[0, 0] + motion[1, 0]
    if expect is not None:
        assert got == pytest.approx(expect, abs=1e-12)
    # the margin the narrow phase uses is never below the slop-sized one of bodies at rest
    assert SPECULATIVE_DISTANCE + got >= SPECULATIVE_DISTANCE
