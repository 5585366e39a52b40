"""Removing bodies (``World.remove``, ``World.remove_bodies``) against brute force.

The removal goes over the contact and joint tables once for a whole batch of bodies. Checked three ways:
a batch gives bit for bit the world that removing the same bodies one at a time gives, and the world that
taking each body apart through the public API one piece at a time gives (its joints, then its shapes one by
one, then the bodyless body); and a world from which a far-away pile of ragdolls was removed steps on as the
world built without that pile does, with the removed pile's touching contacts ended in the next step's events.
"""
import numpy as np
import pytest

import carom
from carom import World, CaromError, StaleHandleError
from carom.geometry import box
from carom.scenes.box2d_scenes import add_human

DT = 1.0 / 60.0


def _pile(w, x0, humans=4):
    """A static floor at x0 and ``humans`` ragdolls dropped onto it, overlapping (two collision groups), plus a
    few loose boxes among them; returns the bodies in creation order."""
    floor = w.add_body(position=(x0, 0.0), kind="static")
    floor.add_shape(box(6.0, 0.5))
    bodies = [floor]
    for k in range(humans):
        bodies += add_human(w, (x0 - 1.5 + 0.9 * k, 0.6 + 0.3 * k), group=1 + k % 2)
    for k in range(3):
        b = w.add_body(position=(x0 - 1.0 + k, 3.0 + 0.5 * k))
        b.add_shape(box(0.2, 0.2), density=2.0)
        bodies.append(b)
    return bodies


def _world(piles=(0.0,), steps=90):
    w = World(gravity=(0, -10))
    groups = [_pile(w, x0) for x0 in piles]
    for _ in range(steps):
        w.step(DT)
    return w, groups


def _state(w):
    """Everything the next steps depend on, as bytes: the snapshot."""
    return w.snapshot().data


def _twin(w):
    return World.restore(w.snapshot())


def _pick(rng, bodies, k):
    return [bodies[i] for i in rng.choice(len(bodies), k, replace=False)]


def test_a_batch_is_removing_one_at_a_time_bit_for_bit():
    w, (pile,) = _world()
    assert w.contact_events() is not None and len(w.contacts()) > 20
    rng = np.random.default_rng(3)
    for trial in range(3):
        victims = _pick(rng, [b for b in pile if b.alive], 12)
        one = _twin(w)
        w.remove_bodies(victims)
        for b in victims:
            one.remove(one.body_handle(b.index))
        assert _state(w) == _state(one)
        for a, b in ((w, one),):
            for _ in range(10):
                a.step(DT)
                b.step(DT)
            ea, eb = a.contact_events(), b.contact_events()
            for x, y in zip(ea, eb):
                assert x.tobytes() == y.tobytes()
        assert _state(w) == _state(one)


def _take_apart(w, body):
    """A body removed piece by piece through the public API: its joints (by row), its shapes one by one, then
    the body, now with neither (what ``World.remove`` did before it removed a body's shapes in one pass)."""
    for j in sorted(w.joints, key=lambda j: j.index):
        if body in (j.body_a, j.body_b):
            w.remove(j)
    for s in list(body.shapes):
        w.remove(s)
    w.remove(body)


@pytest.mark.parametrize("steps", [90, 120])
def test_a_batch_is_taking_each_body_apart_piece_by_piece(steps):
    # (at 120 steps the pile is slowing down: sleep clocks run, which a removal restarts for what it wakes)
    w, (pile,) = _world(steps=steps)
    rng = np.random.default_rng(5)
    victims = _pick(rng, pile[1:], 20)
    pieces = _twin(w)
    w.remove_bodies(victims)
    for b in victims:
        _take_apart(pieces, pieces.body_handle(b.index))
    # (a shape removed on its own updates its body's mass: the removed bodies' rows differ, nothing else)
    assert w.body_count == pieces.body_count and w.joint_count == pieces.joint_count
    ea, eb = w.contact_events(), pieces.contact_events()
    for x, y in zip(ea, eb):
        assert x.tobytes() == y.tobytes()
    for _ in range(30):
        w.step(DT)
        pieces.step(DT)
        for x, y in zip(w.contact_events(), pieces.contact_events()):
            assert x.tobytes() == y.tobytes()
    assert w.positions.tobytes() == pieces.positions.tobytes()
    assert w.velocities.tobytes() == pieces.velocities.tobytes()
    for x, y in zip(w.contact_data(), pieces.contact_data()):
        assert x.tobytes() == y.tobytes()


def test_removing_a_far_pile_leaves_the_world_built_without_it():
    # pile A, then pile B 100 m away (rows after A's); B removed after 60 steps. The world built with pile A
    # alone, stepped as often, is the same world for A's bodies
    both, (a, b) = _world(piles=(0.0, 100.0), steps=60)
    alone, (a1,) = _world(piles=(0.0,), steps=60)
    assert [x.index for x in a] == [x.index for x in a1]
    touching_b = {frozenset((c["shape_a"], c["shape_b"])) for c in both.contacts() if c["touching"]
                  and both.shape_handle(c["shape_a"]).body in b}
    assert touching_b
    b_shapes = {s.index for x in b for s in x.shapes}
    both.remove_bodies(b)
    assert not any(x.alive for x in b) and both.body_count == alone.body_count
    assert both.joint_count == alone.joint_count == 4 * 10
    both.step(DT)
    alone.step(DT)
    end = both.contact_events().end
    gone = {frozenset((int(e["shape_a"]), int(e["shape_b"]))) for e in end
            if int(e["shape_a"]) in b_shapes or int(e["shape_b"]) in b_shapes}
    assert gone == touching_b
    mine = [e for e in end if int(e["shape_a"]) not in b_shapes and int(e["shape_b"]) not in b_shapes]
    assert np.array(mine, end.dtype).tobytes() == alone.contact_events().end.tobytes()
    for _ in range(40):
        both.step(DT)
        alone.step(DT)
    rows = [x.index for x in a]
    for name in ("com", "angle", "vel", "angvel"):
        np.testing.assert_array_equal(getattr(both.tables, name)[rows], getattr(alone.tables, name)[rows])
    assert len(both.contacts()) == len(alone.contacts())


def test_removed_bodies_take_their_shapes_joints_and_contacts_with_them():
    w, (pile,) = _world(steps=60)
    human = pile[1:12]
    shapes = [s for b in human for s in b.shapes]
    joints = [j for j in w.joints if j.body_a in human or j.body_b in human]
    assert len(joints) == 10
    w.remove_bodies(human)
    for h in human + shapes + joints:
        assert not h.alive
    with pytest.raises(StaleHandleError):
        human[0].position
    with pytest.raises(StaleHandleError):
        w.remove_bodies([human[0]])
    gone = {s.index for s in shapes}
    keys = w.tables.contacts.keys
    assert not np.isin(keys >> 32, list(gone)).any() and not np.isin(keys & 0xFFFFFFFF, list(gone)).any()
    # the world's snapshot restores and the copy steps on as the world does
    twin = _twin(w)
    for _ in range(5):
        w.step(DT)
        twin.step(DT)
    assert _state(w) == _state(twin)
    # the rows are reused by the next bodies, and the old handles stay stale
    new = add_human(w, (0.0, 3.0), group=3)
    assert {b.index for b in new} == {b.index for b in human}
    assert not human[0].alive and new[0].alive


def test_a_refused_batch_changes_nothing():
    w, (pile,) = _world(steps=10)
    other = World()
    stranger = other.add_body()
    before = _state(w)
    for bad in ([pile[1], pile[1]], [pile[1], pile[1].index], [pile[1], w.static_body], [pile[2], stranger],
                [pile[3], "body"], [pile[3], 10 ** 6], np.array([pile[1].index, -1]), pile[1], "abc", 7):
        with pytest.raises(CaromError) as e:
            w.remove_bodies(bad)
        assert str(e.value)
    assert _state(w) == before
    w.remove_bodies([])
    assert _state(w) == before
    # indices as the bulk writes take them: the same world as handles
    twin = _twin(w)
    w.remove_bodies(np.array([pile[4].index, pile[2].index]))
    twin.remove_bodies([twin.body_handle(pile[4].index), twin.body_handle(pile[2].index)])
    assert _state(w) == _state(twin)


@pytest.mark.parametrize("steps", [120, 400])
def test_sleeping_and_joined_partners_wake_as_one_at_a_time_wakes_them(steps):
    w, (pile,) = _world(steps=steps)
    t = w.tables
    if steps == 400:
        assert w.awake_count < len(pile) - 1       # (most of the pile sleeps)
    # a bone whose joint partner is awake and has been slow for a while (its sleep clock runs): removing the
    # bone restarts the partner's clock, as removing the joint does
    bone = next((j.body_b for j in w.joints if not t.asleep[j.body_a.index] and t.sleep_time[j.body_a.index] > 0),
                pile[12])
    one = _twin(w)
    victims = list(dict.fromkeys(pile[1:12] + [bone] + pile[-2:-1]))
    w.remove_bodies(victims)
    for b in victims:
        one.remove(one.body_handle(b.index))
    assert w.awake_count == one.awake_count and _state(w) == _state(one)
    pieces = _twin(one)
    pieces.remove_bodies([pieces.body_handle(pile[-1].index)])
    one.remove(one.body_handle(pile[-1].index))
    assert _state(pieces) == _state(one)
