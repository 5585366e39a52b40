"""Contact recycling: a pair that barely moved relative to itself since its manifold was computed keeps that
manifold as Box2D v3 keeps it (``carom.constants.RECYCLE_DISTANCE``). Checked against a fresh collision test of
the same poses, and against Box2D's rule for the kept manifold."""
import numpy as np
import pytest

from carom.constants import RECYCLE_DISTANCE, LINEAR_SLOP, SPECULATIVE_DISTANCE, UNCACHED_MOTION
from carom.geometry._math import relative_transform
from carom.geometry.manifold import collide_sat
from carom.rigid import _step
from carom.geometry import box
from carom.scenes.rigid_scenes import pyramid, pile
from tables import contact_state


def poses(w):
    """Each body's (origin x, origin y, cos, sin) and speculative motion, as the next step computes them."""
    bodies, shapes = w.step_tables()[:2]
    reach, awake, motion, xf, lower, upper, _rows = _step.bounds_stage(1 / 60, *w.gravity, bodies, shapes, 1)
    return xf, motion


def fresh_and_recycled(w):
    """Step once; for every contact with points, its table entry and a fresh collide_sat at the poses the
    step started from (the poses the narrow phase saw). Returns (rows, recycled flags)."""
    xf, motion = poses(w)
    w.step(1 / 60)
    c = w.tables.contacts
    keys, count, ids, nimp, timp, normal, points, sep, touch, sensor, cache = (
        c.keys, c.count, c.ids, c.normal_impulse, c.tangent_impulse, c.normal, c.points, c.separation, c.touching,
        c.sensor, c.cache)
    out = []
    recycled = []
    scratch_v = np.empty((8, 2))
    scratch_n = np.empty((8, 2))
    for k in range(keys.shape[0]):
        if count[k] == 0 or sensor[k]:
            continue
        a, b = int(keys[k] >> 32), int(keys[k] & 0xFFFFFFFF)
        ba, bb = w.tables.s_body[a], w.tables.s_body[b]
        t = relative_transform(*xf[ba], *xf[bb])
        oa, ob = w.tables.s_offset[a], w.tables.s_offset[b]
        na, nb = w.tables.s_count[a], w.tables.s_count[b]
        # a contact is recycled when its cache holds an older pose than the one the step saw (two circles
        # are always tested afresh and keep no cache, and a row marked as holding no manifold was just
        # computed afresh too)
        marked = cache[k, _step.CTC] == 0.0 and cache[k, _step.CTS] == 0.0
        recycled.append((na, nb) != (1, 1) and not marked and not np.allclose(cache[k, :4], t, rtol=0, atol=1e-15))
        m = collide_sat(w.tables.verts[oa:oa + na], w.tables.normals[oa:oa + na], w.tables.s_radius[a],
                        w.tables.verts[ob:ob + nb], w.tables.normals[ob:ob + nb], w.tables.s_radius[b], *t,
                        SPECULATIVE_DISTANCE + _step.pair_motion(motion, ba, bb), scratch_v, scratch_n)
        out.append((k, ba, m, xf[ba]))
    return out, np.array(recycled)


def test_resting_pyramid_recycles_most_contacts_and_they_match_a_fresh_test():
    w = pyramid(base=12)
    w.sleep_enabled = False
    for _ in range(90):
        w.step(1 / 60)
    rows, recycled = fresh_and_recycled(w)
    assert recycled.mean() > 0.5, recycled.mean()
    c = w.tables.contacts
    keys, count, ids, nimp, timp, normal, points, sep, touch, sensor, cache = (
        c.keys, c.count, c.ids, c.normal_impulse, c.tangent_impulse, c.normal, c.points, c.separation, c.touching,
        c.sensor, c.cache)
    for (k, ba, m, xa), r in zip(rows, recycled):
        ox, oy, c, s = xa
        assert m[0] == count[k], (k, r)
        fresh_n = np.array([c * m[1] - s * m[2], s * m[1] + c * m[2]])
        assert np.allclose(normal[k], fresh_n, atol=2 * RECYCLE_DISTANCE), (k, r)
        fresh_sep = sorted([m[5], m[9]][:m[0]])
        assert np.allclose(sorted(sep[k, :count[k]]), fresh_sep, atol=RECYCLE_DISTANCE), (k, r)


def test_moving_pile_recomputes_what_moved():
    """In a falling pile relative poses change by more than RECYCLE_DISTANCE per step: those pairs must be
    recomputed, and every contact's separation still agrees with a fresh test."""
    w = pile(count=60)
    for _ in range(20):
        w.step(1 / 60)
    rows, recycled = fresh_and_recycled(w)
    assert (~recycled).any()
    c = w.tables.contacts
    keys, count, ids, nimp, timp, normal, points, sep, touch, sensor, cache = (
        c.keys, c.count, c.ids, c.normal_impulse, c.tangent_impulse, c.normal, c.points, c.separation, c.touching,
        c.sensor, c.cache)
    for (k, ba, m, xa), r in zip(rows, recycled):
        if not r:
            assert m[0] == count[k]
            assert np.allclose(sorted(sep[k, :count[k]]), sorted([m[5], m[9]][:m[0]]), atol=1e-12)
        elif m[0] == count[k]:
            assert np.allclose(sorted(sep[k, :count[k]]), sorted([m[5], m[9]][:m[0]]),
                               atol=RECYCLE_DISTANCE)


def _resting_box():
    """A box of 1 m resting on static ground without gravity (sleeping off), a fifth of the slop above it, after
    two steps: its ground contact is recycled from now on while nothing moves it. Returns (world, box)."""
    import carom
    from carom.geometry import box
    w = carom.World(gravity=(0.0, 0.0))
    w.sleep_enabled = False
    w.static_body.add_shape(box(10.0, 0.5, center=(0.0, -0.5)))
    b = w.add_body(position=(0.0, 0.5 + 0.2 * LINEAR_SLOP))
    b.add_shape(box(0.5, 0.5))
    w.step(1 / 60)
    w.step(1 / 60)
    return w, b


@pytest.mark.parametrize("shift", [0.5 * RECYCLE_DISTANCE, 3 * RECYCLE_DISTANCE])
def test_a_teleported_body_is_recycled_only_within_the_distance(shift):
    """Move a resting box sideways by hand between two steps: within RECYCLE_DISTANCE its ground contact is
    recycled, beyond it the contact is computed again."""
    w, b = _resting_box()
    p = b.position
    b.position = (p[0] + shift, p[1])
    rows, recycled = fresh_and_recycled(w)
    assert len(recycled) == 1
    assert recycled[0] == (shift < RECYCLE_DISTANCE)


def test_recomputed_circle_pairs_match_collide_sat_bitwise():
    """The narrow phase collides two circles without collide_sat's dispatch (a shortcut for speed); the
    manifold must be exactly collide_sat's."""
    from carom.scenes.rigid_scenes import circle_pile
    w = circle_pile(count=300)
    w.sleep_enabled = False
    for _ in range(40):
        w.step(1 / 60)
    rows, recycled = fresh_and_recycled(w)
    c = w.tables.contacts
    keys, count, ids, nimp, timp, normal, points, sep, touch, sensor, cache = (
        c.keys, c.count, c.ids, c.normal_impulse, c.tangent_impulse, c.normal, c.points, c.separation, c.touching,
        c.sensor, c.cache)
    checked = 0
    for (k, ba, m, xa), r in zip(rows, recycled):
        a, b = int(keys[k] >> 32), int(keys[k] & 0xFFFFFFFF)
        if r or w.tables.s_count[a] != 1 or w.tables.s_count[b] != 1:
            continue
        ox, oy, c, s = xa
        assert m[0] == count[k] == 1
        assert normal[k, 0] == c * m[1] - s * m[2] and normal[k, 1] == s * m[1] + c * m[2]
        assert points[k, 0, 0] == c * m[3] - s * m[4] + ox and points[k, 0, 1] == s * m[3] + c * m[4] + oy
        assert sep[k, 0] == m[5]
        checked += 1
    assert checked > 100, checked


def test_a_fast_pair_keeps_no_cache_and_is_tested_afresh_when_it_slows():
    """A box sliding fast along the ground moves too far each step to be recycled: its contact's manifold is
    not cached (the row is marked). Stopped by hand, the next step tests the pair afresh, bitwise as
    collide_sat, and caches that manifold (it may be recycled again from then on)."""
    import carom
    from carom.geometry import box
    w = carom.World(gravity=(0.0, -10.0))
    w.sleep_enabled = False
    w.static_body.add_shape(box(50.0, 0.5, center=(0.0, -0.5)))
    b = w.add_body(position=(0.0, 0.5), velocity=(9.0, 0.0))
    b.add_shape(box(0.5, 0.5), friction=0.0)
    w.step(1 / 60)
    assert 9.0 / 60 > UNCACHED_MOTION
    cache = w.tables.contacts.cache
    assert w.tables.contacts.count[0] > 0
    assert cache[0, _step.CTC] == 0.0 and cache[0, _step.CTS] == 0.0
    b.velocity = (0.0, 0.0)
    rows, recycled = fresh_and_recycled(w)
    assert list(recycled) == [False]
    (k, ba, m, xa), = rows
    c = w.tables.contacts
    keys, count, ids, nimp, timp, normal, points, sep, touch, sensor, cache = (
        c.keys, c.count, c.ids, c.normal_impulse, c.tangent_impulse, c.normal, c.points, c.separation, c.touching,
        c.sensor, c.cache)
    assert count[k] == m[0] and list(sep[k, :m[0]]) == [m[5], m[9]][:m[0]]
    assert cache[k, _step.CTC] != 0.0
    rows, recycled = fresh_and_recycled(w)
    assert list(recycled) == [True]


def test_a_recycled_contact_keeps_box2ds_anchors_and_normal():
    """Box2D v3's recycled manifold: the normal stays fixed in the world; each body's anchor stays at that body's
    centre of mass in the world's orientation of when the manifold was computed (it moves with the body and does
    not turn with it); the separation is tracked from the anchors turned with their bodies. A box resting on
    static ground, moved 0.5 mm and turned 0.5 mrad by hand (within RECYCLE_DISTANCE and RECYCLE_COS): the
    contact is recycled, its normal is the one computed before, its points are the midpoints of the two anchors
    so kept, and its separations are Box2D's formula. (Anchors turned with the box, as carom kept them before,
    let a 20-box stack at 30 Hz fall: ``tests/test_trust_physics.py``.)"""
    w, b = _resting_box()
    c = w.tables.contacts
    assert c.count[0] == 2
    n0 = c.normal[0].copy()
    p0 = c.points[0].copy()
    s0 = c.separation[0].copy()
    centre0 = np.array(b.world_center)
    # the anchors as the manifold was computed: on the ground's surface and on the box's, either side of the point
    anchor_a = p0 - 0.5 * s0[:, None] * n0
    anchor_b = p0 + 0.5 * s0[:, None] * n0
    dx, turn = 0.0005, 0.0005
    b.position = (b.position[0] + dx, b.position[1])
    b.angle = b.angle + turn
    centre1 = np.array(b.world_center)
    rows, recycled = fresh_and_recycled(w)
    assert list(recycled) == [True]
    c = w.tables.contacts
    np.testing.assert_allclose(c.normal[0], n0, rtol=0, atol=1e-15)
    # B's anchor moved with its centre, not turned; A's (static ground) where it was
    kept_b = anchor_b + (centre1 - centre0)
    np.testing.assert_allclose(c.points[0], 0.5 * (anchor_a + kept_b), rtol=0, atol=1e-12)
    # the separation from B's anchor turned with the box
    ct, st = np.cos(turn), np.sin(turn)
    r = anchor_b - centre0
    turned_b = centre1 + np.stack([ct * r[:, 0] - st * r[:, 1], st * r[:, 0] + ct * r[:, 1]], axis=1)
    np.testing.assert_allclose(c.separation[0], (turned_b - anchor_a) @ n0, rtol=0, atol=1e-12)


def test_the_loop_of_reused_pairs_steps_as_the_general_loop():
    """The narrow phase's own loop for runs of reused pairs (``_narrow._recycled_run``: the pairs are last step's
    and no shape is one-way) against its general loop, which a world with a one-way shape takes for every pair
    (here a platform far from everything, which meets nothing, on a body of its own: the last): bitwise the same bodies and contacts while a pile
    of every kind of shape settles and falls asleep, with a sensor in it. On the way: recycled manifolds, pairs
    still apart, pairs tested afresh (two circles, a sensor, bodies that moved too far), pairs of two sleeping
    bodies, and a body knocked off its rest (a fresh test inside a run of reused pairs)."""
    worlds = []
    for platform in (False, True):
        w = pile(count=40)
        w.static_body.add_shape(box(1.5, 0.5, center=(0.0, 1.0)), sensor=True)
        if platform:
            w.add_body(position=(500.0, 0.0), kind="static").add_shape(box(1.0, 0.1), one_way=(0.0, 1.0))
        worlds.append(w)
    in_place = asleep = 0
    for step in range(380):
        keys = [w.tables.contacts.keys.copy() for w in worlds]
        for w in worlds:
            if step == 345:
                w.bodies[20].apply_impulse((0.0, 0.05))
            w.step(1 / 60)
        a, b = worlds
        in_place += np.array_equal(keys[0], a.tables.contacts.keys) and a.tables.contacts.keys.size > 0
        asleep += int(a.tables.asleep[:a.tables.n_bodies].sum() > 0)
        n = a.tables.n_bodies
        for name in ("com", "angle", "vel", "angvel", "asleep"):
            np.testing.assert_array_equal(getattr(a.tables, name)[:n], getattr(b.tables, name)[:n],
                                          err_msg=f"{name}, step {step}")
        x, y = contact_state(a), contact_state(b)
        for name in x._fields:
            xa, ya = getattr(x, name), getattr(y, name)
            if name in ("solved", "body_flags"):       # (a row per body: the platform's is b's last)
                ya = ya[:xa.shape[0]]
            np.testing.assert_array_equal(xa, ya, err_msg=f"{name}, step {step}")
    # the loop of reused pairs ran: many steps with last step's pairs, some with sleeping bodies
    assert in_place > 150 and asleep > 15, (in_place, asleep)
