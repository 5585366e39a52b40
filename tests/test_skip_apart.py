"""Skipping separated pairs: a pair with no contact points whose cached separation bound, less how far the
shapes can have moved relative to each other since, exceeds the speculative margin skips its collision test.

Checked piece by piece against independent oracles (shapely distances, fresh collide_sat calls), and in the
world: stepping with and without the skip gives bitwise the same simulation."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from carom.constants import LINEAR_SLOP, SPECULATIVE_DISTANCE
from carom.geometry import Capsule, Circle, Transform
from carom.geometry._math import relative_transform
from carom.geometry.collide import collide
from carom.geometry.manifold import collide_sat
from carom.rigid import _step
from carom.scenes.rigid_scenes import pile, tumbler
from shape_gen import random_shape, true_distance
from tables import contact_state

SCRATCH = (np.empty((16, 2)), np.empty((16, 2)))
KINDS = ("circle", "capsule", "segment", "polygon", "rounded")


def _sat(a, b, t, spec):
    return collide_sat(a.vertices, a.normals, a.radius, b.vertices, b.normals, b.radius, *t, spec, *SCRATCH)


def _body(rng, shape):
    """A centre of mass for the shape's body (anywhere near it, as for a body of several shapes) and the
    shape's reach from it, as carom.rigid.mass.update_mass computes shape_reach."""
    lc = shape.vertices.mean(axis=0) + rng.normal(0.0, 0.5, 2)
    return lc, float(np.max(np.hypot(*(shape.vertices - lc).T))) + shape.radius


class _Offset:
    """A shape moved in its body's frame (a body whose origin is away from the shape, like a wall of a
    container body)."""

    def __init__(self, shape, offset):
        self.vertices = shape.vertices + offset
        self.normals = shape.normals
        self.radius = shape.radius


def _apart_pair(rng):
    """Two random shapes, each placed up to a few metres from its body origin, and a pose of B's body in A's
    at which collide_sat finds no points (often nearly touching): (a, b, B's transform, pose, lower bound L
    from the separation field)."""
    a = _Offset(random_shape(rng, KINDS), rng.normal(0.0, 2.0, 2))
    b = _Offset(random_shape(rng, KINDS), rng.normal(0.0, 2.0, 2))
    ca, cb = a.vertices.mean(axis=0), b.vertices.mean(axis=0)
    size = 1.2 * (np.max(np.hypot(*(a.vertices - ca).T)) + a.radius + np.max(np.hypot(*(b.vertices - cb).T))
                  + b.radius)
    while True:
        angle = rng.uniform(-math.pi, math.pi)
        c, s = math.cos(angle), math.sin(angle)
        # B's shape centre lands within `size` of A's
        xb = Transform(ca + rng.uniform(-size, size, 2) - (c * cb[0] - s * cb[1], s * cb[0] + c * cb[1]), angle)
        t = relative_transform(0.0, 0.0, 1.0, 0.0, *xb.as_tuple())
        m = _sat(a, b, t, SPECULATIVE_DISTANCE)
        if m[0] == 0:
            return a, b, xb, t, m[5]


def _moved(rng, xb, scale):
    """B's transform after a small random motion (translation and rotation of its frame)."""
    return Transform(xb.position + rng.normal(0.0, scale, 2), xb.angle + rng.normal(0.0, 2.0 * scale))


@settings(max_examples=150, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2 ** 32 - 1))
def test_hypothesis_empty_manifold_separation_is_a_lower_bound_of_the_distance(seed):
    """For count 0, collide_sat's separation field is ≤ dist(cores) − rA − rB (shapely), at any margin."""
    rng = np.random.default_rng(seed)
    a, b, xb, t, bound = _apart_pair(rng)
    if len(a.vertices) == len(b.vertices) == 2 and a.radius == b.radius == 0.0:
        assert bound == np.inf       # two segments never touch
        return
    for spec in (0.0, 0.1 * LINEAR_SLOP, SPECULATIVE_DISTANCE, 0.3):
        m = _sat(a, b, t, spec)
        if m[0] == 0:
            assert m[5] <= true_distance(a, Transform(), b, xb) + 1e-9, (m, spec)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2 ** 32 - 1), spec=st.floats(0.1 * LINEAR_SLOP, 0.3))
def test_hypothesis_shapes_farther_apart_than_the_margin_have_no_points(seed, spec):
    """dist(cores) − rA − rB > spec ⇒ count 0, for spec ≥ 0.1·LINEAR_SLOP: the fact the skip rests on."""
    rng = np.random.default_rng(seed)
    a, b = random_shape(rng, KINDS), random_shape(rng, KINDS)
    size = 1.5 * (np.max(np.abs(a.vertices)) + a.radius + np.max(np.abs(b.vertices)) + b.radius)
    for _ in range(20):
        xb = Transform(rng.uniform(-size, size, 2), rng.uniform(-math.pi, math.pi))
        if true_distance(a, Transform(), b, xb) > spec + 1e-9:
            assert _sat(a, b, relative_transform(0.0, 0.0, 1.0, 0.0, *xb.as_tuple()), spec)[0] == 0


@settings(max_examples=200, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2 ** 32 - 1), scale=st.sampled_from([0.003, 0.03, 0.1]))
def test_hypothesis_a_pair_judged_still_apart_has_no_points(seed, scale):
    """Whenever the skip rule says "still apart" after a small motion, a fresh collide_sat at the new pose
    returns count 0. Margins are drawn up to the cached bound, so many decisions are close calls."""
    rng = np.random.default_rng(seed)
    a, b, xb, t0, bound = _apart_pair(rng)
    la, reach_a = _body(rng, a)
    lb, reach_b = _body(rng, b)
    cache = np.zeros((1, _step.CACHE_WIDTH))
    _step._store_cache(cache, 0, (0, 0.0, 0.0, 0.0, 0.0, bound, 0, 0.0, 0.0, 0.0, 0), *t0)
    skipped = 0
    for _ in range(25):
        t = relative_transform(0.0, 0.0, 1.0, 0.0, *_moved(rng, xb, scale).as_tuple())
        spec = rng.uniform(0.1 * LINEAR_SLOP, min(max(bound, 0.1 * LINEAR_SLOP), 1.0))
        if _step._still_apart(cache, 0, *t, la[0], la[1], reach_a, lb[0], lb[1], reach_b, spec):
            skipped += 1
            m = _sat(a, b, t, spec)
            assert m[0] == 0, (m, spec, bound)
    # a pose that did not move at all is still apart whenever the bound clears the margin
    if bound > 1e-6:
        assert _step._still_apart(cache, 0, *t0, *la, reach_a, *lb, reach_b, 0.5 * min(bound, 1.0))


def test_a_circle_on_a_capsule_axis_beyond_its_end_is_apart():
    """A segment core has no inside: a centre on its line but beyond its ends is not "inside" (it gave a
    contact 9 m deep before)."""
    cap = Capsule((-1.0, 0.0), (1.0, 0.0), 0.1)
    assert collide(cap, (0, 0), Circle(0.5), (10.0, 0.0), speculative=0.02) is None
    assert collide(Circle(0.5), (10.0, 0.0), cap, (0, 0), speculative=0.02) is None
    m = collide(cap, (0, 0), Circle(0.5), (1.5, 0.0), speculative=0.02)
    assert m.count == 1 and m.separations[0] == pytest.approx(-0.1)
    m = collide(cap, (0, 0), Circle(0.5), (0.3, 0.0))       # centre on the segment itself
    assert m.count == 1 and m.separations[0] == pytest.approx(-0.6)


def _skipped_share(w, steps):
    """Step w; of the pairs without points, the share that kept an older cached pose (were skipped)."""
    zero = skipped = 0
    for _ in range(steps):
        bodies, shapes = w.step_tables()[:2]
        xf = _step.bounds_stage(1 / 60, *w.gravity, bodies, shapes, 1)[3]
        w.step(1 / 60)
        keys, count, cache = w.tables.contacts.keys, w.tables.contacts.count, w.tables.contacts.cache
        circles = (w.tables.s_count[keys >> 32] == 1) & (w.tables.s_count[keys & 0xFFFFFFFF] == 1)
        for k in np.flatnonzero((count == 0) & ~circles):      # (two circles keep no cache)
            ba, bb = w.tables.s_body[keys[k] >> 32], w.tables.s_body[keys[k] & 0xFFFFFFFF]
            zero += 1
            skipped += not np.array_equal(cache[k, :4], relative_transform(*xf[ba], *xf[bb]))
    return skipped / max(zero, 1), zero


@pytest.mark.parametrize("build, settle, least",
                         [(lambda: tumbler(grid=14), 70, 0.5), (lambda: pile(count=40), 40, 0.3)],
                         ids=["tumbler", "pile"])
def test_skipping_changes_nothing_in_a_moving_scene(build, settle, least):
    """The same scene stepped with and without the skip: bitwise the same bodies and contacts (all but the
    cache rows, which keep the pose of the last test), and a good share of separated pairs skipped (the
    tumbler's boxes once they have landed and tumble; the pile's mixed shapes and multi-shape bodies while
    they fall and settle)."""
    worlds = [build(), build()]
    worlds[1].tables.skip_apart = False
    for w in worlds:
        for _ in range(settle):
            w.step(1 / 60)
    share, zero = _skipped_share(worlds[0], 20)
    _skipped_share(worlds[1], 20)
    assert zero > 100 and share > least, (share, zero)
    a, b = worlds
    n = a.tables.n_bodies
    for name in ("com", "angle", "vel", "angvel", "asleep"):
        np.testing.assert_array_equal(getattr(a.tables, name)[:n], getattr(b.tables, name)[:n], err_msg=name)
    x, y = contact_state(a), contact_state(b)
    for name in x._fields[:x._fields.index("cache")]:
        np.testing.assert_array_equal(getattr(x, name), getattr(y, name), err_msg=f"contact table field {name}")
    # with the skip off nothing was skipped
    assert _skipped_share(b, 1)[0] == 0.0
