"""Snapshots (carom.rigid.snapshot): data only, checked on restore, deterministic, continuing bitwise.

Run as a script (``python tests/test_snapshot.py fuzz SEED TRIALS``) it is the corruption fuzz, which the test
runs in a subprocess so that a crash of the compiled step fails the test instead of killing pytest.
"""
import copy
import json
import os
import pickle
import subprocess
import sys
import time
import zlib
from struct import error as struct_error

import numpy as np
import pytest

import carom
from carom.errors import CaromError, SnapshotError
from carom.geometry import Capsule, Circle, Polygon, Segment, box
from carom.rigid import _step
from carom.rigid import snapshot as S
from carom.rigid.world import World

DT = 1 / 60


def busy_world(steps=300):
    """A world with a bit of everything a snapshot holds: a resting stack that falls asleep, a pile of
    circles, capsules, triangles and compound bodies, a sensor, filters (mask, negative group), a kinematic
    body, a bullet, a removed body and a removed shape (free slots, pending end events), a reused slot."""
    w = carom.World(gravity=(0, -10), substeps=4)
    w.static_body.add_shape(Segment((-20, 0), (20, 0)), friction=0.6)
    w.static_body.add_shape(box(0.5, 3, center=(-10, 3)))
    w.static_body.add_shape(box(0.5, 3, center=(10, 3)))
    for i in range(4):                                  # a stack beyond the wall: asleep after a few seconds
        w.add_body(position=(-15, 0.5 + 1.0 * i)).add_shape(box(0.5, 0.5), density=1.0, friction=0.8)
    rng = np.random.default_rng(3)
    for i in range(24):
        b = w.add_body(position=(rng.uniform(-2, 5), 1 + 0.8 * i), angle=float(rng.uniform(0, 3)))
        k = i % 4
        if k == 0:
            b.add_shape(Circle(0.3), density=1.0, restitution=0.3)
        elif k == 1:
            b.add_shape(Capsule((-0.3, 0), (0.3, 0), 0.2), density=1.0, friction=0.4)
        elif k == 2:
            b.add_shape(Polygon([(0, 0), (0.8, 0), (0.3, 0.6)]), density=2.0, friction=0.3, group=-1)
        else:
            b.add_shape(box(0.3, 0.2), density=1.0)
            b.add_shape(Circle(0.15, center=(0.3, 0.2)), density=1.0, category=0b10, mask=~0b100 & (2 ** 64 - 1))
    gate = w.add_body(position=(7, 1), kind="static")
    gate.add_shape(box(1.0, 1.0), sensor=True)
    kin = w.add_body(position=(-3, 4), kind="kinematic", velocity=(0.5, 0), angular_velocity=0.4)
    kin.add_shape(box(1.0, 0.1))
    bullet = w.add_body(position=(8, 6), velocity=(-30, -5), bullet=True)
    bullet.add_shape(Circle(0.1), density=5.0)
    for _ in range(steps // 2):
        w.step(DT)
    bodies = w.bodies
    w.remove(bodies[10])                                 # a removed body (its slot and shapes are freed)
    compound = next(b for b in bodies[4:] if len(b.shapes) == 2 and b.alive)
    w.remove(compound.shapes[1])                         # a removed shape of a compound body
    w.add_body(position=(2, 12)).add_shape(Circle(0.25), density=1.0)     # reuses the freed slots
    for _ in range(steps - steps // 2):
        w.step(DT)
    # a touching body removed just before the snapshot: the end events of its contacts are pending
    touching = [w.shape_handle(c["shape_b"]).body for c in w.contacts() if c["touching"]]
    gone = next((b for b in reversed(touching) if b.kind == "dynamic" and b.position[0] > -12), None)  # (not the stack)
    if gone is not None:
        w.remove(gone)
    return w


def same_state(a, b):
    """Worlds a and b are in bitwise the same state: their snapshots (every saved array and number) and their
    contact tables' colouring (``tables.assert_same_contacts``) are the same."""
    from tables import assert_same_contacts
    assert a.snapshot().data == b.snapshot().data
    assert_same_contacts(a, b)


def reencode(d):
    """Snapshot bytes from entries (name -> value) in SCHEMA's order, with a correct checksum: for making
    snapshots that are well formed but hold a wrong state."""
    w = S._Writer()
    put = {S.T_INT: w.int, S.T_FLOAT: w.float, S.T_BOOL: w.bool, S.T_STR: w.str, S.T_ARRAY: w.array}
    for name, tag, _, _ in S.SCHEMA:
        put[tag](name, d[name])
    return w.finish()


# --- (1) restore continues bitwise identically -------------------------------------------------------------

def test_the_contact_fields_are_the_contact_tables():
    """The snapshot saves the contact table's fields by name: the names it lists are the table's (before the
    colouring, which a restore recomputes)."""
    from carom.rigid._layout import ContactTable, NarrowTable
    names = tuple(n for n, _, _ in S.CONTACT_FIELDS)
    assert names == NarrowTable._fields == ContactTable._fields[:len(names)]


def test_the_busy_world_has_what_it_should():
    w = busy_world()
    assert w.tables.asleep[:w.tables.n_bodies].sum() >= 4, "the stack (at least) should be asleep"
    assert w.awake_count >= 2
    assert len(w.tables.free_shapes) >= 1                      # the removed shape just before the snapshot
    assert w.tables.pending_end, "the removed touching shape leaves pending end events"
    assert w.tables.contacts.keys.size > 20 and w.tables.contacts.touching.sum() > 10
    assert (w.tables.s_group[:w.tables.n_shapes] < 0).any() and w.tables.s_sensor[:w.tables.n_shapes].any()


@pytest.mark.parametrize("how", ["restore", "restore_bytes", "pickle", "copy", "deepcopy"])
def test_restore_continues_bitwise(how):
    w = busy_world()
    if how == "restore":
        w2 = carom.World.restore(w.snapshot())
    elif how == "restore_bytes":
        w2 = carom.World.restore(S.Snapshot(bytes(w.snapshot().data)).data)
    elif how == "pickle":
        w2 = pickle.loads(pickle.dumps(w))
    elif how == "copy":
        w2 = copy.copy(w)
    else:
        w2 = copy.deepcopy([w])[0]
    assert w2 is not w and w2.tables.com is not w.tables.com and w2.tables.bp is not w.tables.bp
    assert all(b.world is w2 for b in w2.bodies) and all(h.world is w2 for b in w2.bodies for h in b.shapes)
    assert w2.snapshot().data == w.snapshot().data
    # what the user sees is the same: handles, geometry, events of the last step
    assert [repr(b) for b in w.bodies] == [repr(b) for b in w2.bodies]
    assert [[h.geometry for h in b.shapes] for b in w.bodies] == [[h.geometry for h in b.shapes] for b in w2.bodies]
    for x, y in zip(w.contact_events(), w2.contact_events()):
        assert x.dtype == y.dtype and x.tobytes() == y.tobytes()
    for step in range(240):
        w.step(DT)
        w2.step(DT)
        if step % 20 == 0 or step < 3:
            same_state(w, w2)
        else:
            assert np.array_equal(w.tables.com, w2.tables.com) and np.array_equal(w.tables.vel, w2.tables.vel), step
    same_state(w, w2)
    assert w.awake_count == w2.awake_count


def test_restore_continues_bitwise_with_a_shape_added_since_the_step():
    """A shape added after the last step has no tree leaf yet (deferred insertion): the snapshot gives it one, as
    the step would, and the restored world goes on bitwise like the original, the new body landing on the
    pile in both."""
    w = busy_world()
    body = w.add_body(position=(2.0, 14.0))
    body.add_shape(Circle(0.3), density=1.0)
    w2 = carom.World.restore(w.snapshot())
    for step in range(120):
        w.step(DT)
        w2.step(DT)
    same_state(w, w2)
    assert body.position[1] < 13.0


def test_restored_world_works_like_any_other():
    """Bodies and shapes can be added to and removed from a restored world (the free lists, the grown arrays,
    the rebuilt trees), queries agree with the original's, and doing the same to both keeps them identical."""
    w = busy_world()
    w2 = carom.World.restore(w.snapshot())
    for world in (w, w2):
        for k in range(40):                              # grows the body and shape arrays past their capacity
            world.add_body(position=(-8 + 0.45 * (k % 30), 14 + k // 30)).add_shape(Circle(0.2), density=1.0)
        world.remove(world.bodies[3])
        world.remove(next(b for b in world.bodies if len(b.shapes) == 2).shapes[0])
    same_state(w, w2)
    assert [h.index for h in w.query_aabb((-20, -1), (20, 20))] == [h.index for h in w2.query_aabb((-20, -1), (20, 20))]
    assert [(h.shape.index, h.fraction) for h in w.raycast((-15, 0.3), (15, 0.3))] == \
        [(h.shape.index, h.fraction) for h in w2.raycast((-15, 0.3), (15, 0.3))]
    for _ in range(120):
        w.step(DT)
        w2.step(DT)
    same_state(w, w2)


def test_every_world_attribute_has_a_place_in_the_format():
    """An attribute added to World (or its broad phase) must be saved or declared transient in
    carom.rigid.snapshot.WORLD_ATTRIBUTES, or a restored world would silently lose it."""
    w = busy_world(steps=10)
    def attributes(world):      # the world's own and its tables' (``WorldTables``: "tables.<name>")
        return set(vars(world)) | {"tables." + name for name in vars(world.tables)}
    assert attributes(w) <= set(S.WORLD_ATTRIBUTES), sorted(attributes(w) - set(S.WORLD_ATTRIBUTES))
    assert set(vars(w.tables.bp)) <= set(S.BROAD_PHASE_ATTRIBUTES), sorted(set(vars(w.tables.bp)) - set(S.BROAD_PHASE_ATTRIBUTES))
    w2 = carom.World.restore(w.snapshot())
    assert attributes(w2) == attributes(w) and set(vars(w2.tables.bp)) == set(vars(w.tables.bp))


def test_handlers_are_not_saved():
    w = busy_world(steps=10)
    seen = []
    w.on("begin", seen.append)
    w2 = carom.World.restore(w.snapshot())
    assert w2._handlers == [] and w._handlers
    w2.step(DT)
    assert seen == []


def test_pickle_every_protocol_and_a_snapshot_object():
    w = busy_world(steps=20)
    data = w.snapshot().data
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps(w, protocol=protocol)).snapshot().data == data
        snap = pickle.loads(pickle.dumps(w.snapshot(), protocol=protocol))
        assert isinstance(snap, S.Snapshot) and snap.data == data
    with pytest.raises(SnapshotError):          # a pickle from before data-only snapshots is refused
        World.__new__(World).__setstate__({"_com": np.zeros((1, 2))})


# --- (2) equal states give equal bytes ---------------------------------------------------------------------

def test_equal_states_give_equal_bytes():
    a, b = busy_world(), busy_world()
    sa, sb = a.snapshot(), b.snapshot()
    assert sa.data == sb.data and sa == sb and hash(sa) == hash(sb)
    assert a.snapshot().data == sa.data                  # twice
    assert carom.World.restore(sa).snapshot().data == sa.data
    assert pickle.dumps(a) == pickle.dumps(b)
    a.step(DT)
    assert a.snapshot().data != sa.data


def test_snapshot_starts_with_the_header():
    data = busy_world(steps=5).snapshot().data
    assert data[:8] == S.MAGIC and int.from_bytes(data[8:12], "little") == S.FORMAT_VERSION
    assert int.from_bytes(data[12:16], "little") == len(S.SCHEMA)
    assert int.from_bytes(data[-4:], "little") == zlib.crc32(data[:-4])


# --- (3) restore never runs code, and refuses what is not a snapshot ----------------------------------------

RAN = []


def _evil():
    RAN.append(True)
    raise RuntimeError("a snapshot ran code")


class Evil:
    def __reduce__(self):
        return (_evil, ())


@pytest.mark.parametrize("payload", [
    pickle.dumps(Evil()), pickle.dumps(42), pickle.dumps({"_com": 1}), b"", b"not a snapshot", os.urandom(5000),
    S.MAGIC + b"\x01\x00\x00\x00" + os.urandom(200)])
def test_restore_never_runs_code(payload):
    RAN.clear()
    for given in (payload, S.Snapshot(payload), bytearray(payload), memoryview(payload)):
        with pytest.raises(SnapshotError):
            carom.World.restore(given)
    with pytest.raises(SnapshotError):
        World._from_snapshot_bytes(payload)
    assert not RAN


@pytest.mark.parametrize("thing", [42, 4.5, "a string", None, [1, 2], {"data": b""}, object(), Evil()])
def test_restore_refuses_what_is_not_bytes(thing):
    RAN.clear()
    with pytest.raises(SnapshotError) as info:
        carom.World.restore(thing)
    assert "expected a carom Snapshot" in str(info.value)
    assert isinstance(info.value, CaromError) and isinstance(info.value, ValueError)
    with pytest.raises(SnapshotError):
        S.Snapshot(thing)
    assert not RAN


def test_truncated_and_extended_snapshots_are_refused():
    data = busy_world(steps=5).snapshot().data
    for cut in (1, 4, 5, 17, 100, len(data) // 2, len(data) - 5, len(data) - 1):
        with pytest.raises(SnapshotError):
            carom.World.restore(data[:cut])
        body = data[:cut - 4] if cut > 20 else data[:cut]
        with pytest.raises(SnapshotError):   # truncated with a checksum that matches: caught by the parser
            carom.World.restore(body + zlib.crc32(body).to_bytes(4, "little"))
    body = data[:-4] + b"\x00" * 8
    with pytest.raises(SnapshotError, match="after the last entry"):
        carom.World.restore(body + zlib.crc32(body).to_bytes(4, "little"))
    with pytest.raises(SnapshotError, match="version"):
        carom.World.restore(data[:8] + (S.FORMAT_VERSION + 1).to_bytes(4, "little") + data[12:])
    with pytest.raises(SnapshotError, match="checksum"):
        carom.World.restore(data[:-30] + bytes([data[-30] ^ 1]) + data[-29:])


def _mutations(d):
    """(what it breaks, entries changed, a word the error names) for the state of busy_world."""
    nb, ns, nv, npx = d["n_bodies"], d["n_shapes"], d["n_verts"], d["n_proxies"]
    live_shape = int(np.flatnonzero(d["shape.alive"])[-1])
    dead_shape = int(d["shape.free"][0])
    dynamic = int(np.flatnonzero(d["body.kind"] == _step.DYNAMIC)[0])
    polygon = int(np.flatnonzero(d["shape.count"] == 3)[0])
    geometry_row = int(np.cumsum(d["shape.count"])[polygon - 1]) if polygon else 0

    def put(name, index, value):
        def f(e):
            e[name] = e[name].copy()
            e[name][index] = value
        return f

    def setv(name, value):
        def f(e):
            e[name] = value
        return f

    def keys_swap(e):
        e["contact.keys"] = e["contact.keys"].copy()
        e["contact.keys"][[0, 1]] = e["contact.keys"][[1, 0]]

    def key_to_dead(e):
        e["contact.keys"] = e["contact.keys"].copy()
        e["contact.keys"][-1] = (min(dead_shape, live_shape) << 32) | max(dead_shape, live_shape)
        e["contact.keys"].sort()

    def drop(name):
        def f(e):
            e[name] = e[name][1:]
        return f

    def append(name, value):
        def f(e):
            e[name] = np.concatenate([e[name], np.asarray([value], e[name].dtype)])
        return f

    def swap_proxies(e):
        e["broad.proxy_shape"] = e["broad.proxy_shape"][::-1].copy()

    def nonconvex(e):
        e["shape.geometry"] = e["shape.geometry"].copy()
        e["shape.geometry"][geometry_row + 2] = e["shape.geometry"][geometry_row:geometry_row + 2].mean(axis=0)

    def clockwise(e):
        g = e["shape.geometry"] = e["shape.geometry"].copy()
        g[geometry_row:geometry_row + 3] = g[geometry_row:geometry_row + 3][::-1].copy()

    def count_up(e):
        e["shape.count"] = e["shape.count"].copy()
        e["shape.count"][live_shape] += 1

    return [
        ("a shape's body out of range", put("shape.body", live_shape, nb), "shape.body"),
        ("a negative shape body", put("shape.body", 0, -1), "shape.body"),
        ("an island label out of range", put("body.island", dynamic, nb + 5), "body.island"),
        ("a body kind 3", put("body.kind", dynamic, 3), "body.kind"),
        ("a NaN velocity", put("body.vel", dynamic, np.nan), "not finite"),
        ("an infinite position", put("body.com", dynamic, np.inf), "not finite"),
        ("a velocity beyond float32", put("body.vel", dynamic, 1e36), "body.vel"),
        ("a negative generation", put("body.gen", dynamic, -1), "body.gen"),
        ("a static body asleep", put("body.asleep", 0, True), "asleep"),
        ("static_body is dynamic", setv("static_body", dynamic), "static_body"),
        ("a shape's rows past the vertex table", put("shape.offset", live_shape, nv), "vertex table"),
        ("a shape's count 0", put("shape.count", live_shape, 0), "shape.count"),
        ("counts not matching the geometry", count_up, "shape.geometry"),
        ("a restitution of 2", put("shape.restitution", live_shape, 2.0), "restitution"),
        ("a NaN radius", put("shape.radius", live_shape, np.nan), "not finite"),
        ("a shape's proxy out of range", put("shape.proxy", live_shape, npx), "shape.proxy"),
        ("a live shape on the free list", append("shape.free", live_shape), "shape.free"),
        ("a free slot missing from the free list", drop("shape.free"), "shape.free"),
        ("a body lists a shape twice", append("body.shape_list", live_shape), "body.shape"),
        ("a non-convex polygon", nonconvex, "convex"),
        ("a clockwise polygon", clockwise, "convex"),
        ("a normal that is not the edge's", put("normals", 0, (0.6, 0.6)), "normal"),
        ("contact keys out of order", keys_swap, "sorted"),
        ("a contact with a removed shape", key_to_dead, "live shapes"),
        ("a contact key past the shapes", put("contact.keys", -1, (1 << 32) | ns), "contact"),
        ("a contact with 3 points", put("contact.count", 0, 3), "contact.count"),
        ("a NaN impulse", put("contact.normal_impulse", 0, np.nan), "not finite"),
        ("a NaN in the cache", put("contact.cache", 0, np.nan), "cache"),
        ("a +inf separation bound of a pair that can touch", put("contact.cache", (0, _step.CSEP), np.inf), "cache"),
        ("proxies mapped to the wrong shapes", swap_proxies, "proxies"),
        ("a proxy flag 3", put("broad.flags", 0, 3), "broad.flags"),
        ("a proxy outside its fat box", put("broad.fat_lower", int(d["shape.proxy"][live_shape]), 1e6), "fat box"),
        ("a moved proxy out of range", append("broad.moved", npx), "broad.moved"),
        ("a proxy moved twice", lambda e: e.__setitem__("broad.moved", np.array([0, 0])), "twice"),
        ("a cached pair past the proxies", append("broad.cand", (1 << 32) | npx), "broad.cand"),
        ("a cached pair i > j", lambda e: e.__setitem__("broad.cand", np.array([(3 << 32) | 1])), "broad.cand"),
        ("a pending end event of no shape", put("events.pending_end.shape_a", 0, ns), "events.pending_end"),
        ("substeps 0", setv("substeps", 0), "substeps"),
        ("substeps a million", setv("substeps", 10 ** 6), "substeps"),
        ("an unknown mixing rule", setv("friction_mixing", "__import__('os')"), "friction_mixing"),
        ("a NaN gravity", setv("gravity_x", float("nan")), "gravity_x"),
        ("a negative margin", setv("broad.margin", -1.0), "broad.margin"),
        ("a negative step count", setv("step_count", -3), "step_count"),
    ]


def test_each_broken_invariant_is_named():
    data = busy_world().snapshot().data
    d = S._parse(data)
    assert reencode(d) == data
    assert d["events.pending_end.shape_a"].size and d["shape.free"].size
    for what, change, word in _mutations(d):
        e = dict(d)
        change(e)
        with pytest.raises(SnapshotError) as info:
            carom.World.restore(reencode(e))
        assert word in str(info.value), (what, str(info.value))


def test_a_bool_byte_that_is_not_0_or_1_is_refused():
    data = busy_world(steps=5).snapshot().data
    name = b"\x0abody.alive\x05"
    at = data.index(name) + len(name) + 2 + 8       # dtype code, ndim, one dim
    body = bytearray(data[:-4])
    body[at] = 2
    with pytest.raises(SnapshotError, match="body.alive"):
        carom.World.restore(bytes(body) + zlib.crc32(body).to_bytes(4, "little"))


# --- (4) random corruption fuzz (in a subprocess) ------------------------------------------------------------

def fuzz(seed, trials):
    """Corrupt a real snapshot ``trials`` times (1-8 bytes each, flipped bits or random values, a sixth of the
    time in the header) and restore it; most trials repair the checksum, so the corruption reaches the checks
    of the state. Each must raise a CaromError or give a world that steps 5 times, each step succeeding or
    raising a CaromError, and that is finite afterwards unless a step refused. Returns a summary."""
    rng = np.random.default_rng(seed)
    data = busy_world().snapshot().data
    out = {"refused": 0, "restored": 0, "refused_step": 0, "stepped": 0, "checksum_fixed": 0, "failures": []}
    errors = {}
    for trial in range(trials):
        body = bytearray(data)
        for _ in range(int(rng.integers(1, 9))):
            at = int(rng.integers(0, 64)) if rng.random() < 1 / 6 else int(rng.integers(0, len(body)))
            body[at] = (body[at] ^ (1 << int(rng.integers(0, 8)))) if rng.random() < 0.5 else int(rng.integers(0, 256))
        if rng.random() < 0.9:
            body[-4:] = zlib.crc32(bytes(body[:-4])).to_bytes(4, "little")
            out["checksum_fixed"] += 1
        try:
            w = carom.World.restore(bytes(body))
        except CaromError as exc:
            out["refused"] += 1
            key = str(exc).split(":")[1].split("[")[0].split(" = ")[0].strip()[:40]
            errors[key] = errors.get(key, 0) + 1
            continue
        except Exception as exc:             # noqa: BLE001 (anything but a carom error is a failure)
            out["failures"].append(f"trial {trial}: restore raised {exc!r}")
            continue
        out["restored"] += 1
        try:
            for _ in range(5):
                w.step(DT)
        except CaromError:
            out["refused_step"] += 1
            continue
        except Exception as exc:             # noqa: BLE001
            out["failures"].append(f"trial {trial}: step raised {exc!r}")
            continue
        out["stepped"] += 1
        n = w.tables.n_bodies
        alive = w.tables.alive[:n]
        state = (w.tables.com[:n][alive], w.tables.vel[:n][alive], w.tables.angle[:n][alive], w.tables.angvel[:n][alive])
        if not all(np.isfinite(a).all() for a in state):
            out["failures"].append(f"trial {trial}: the world is not finite after 5 steps")
    out["errors"] = dict(sorted(errors.items(), key=lambda kv: -kv[1])[:12])
    return out


def mutate_entries(d, rng):
    """1-3 entries of a parsed snapshot changed to values at and beyond the edges of what is valid (indices
    -1, n, n + 1, 2**31; NaN, infinities, 1e300, -0.0; flipped flags; other strings), keeping the layout."""
    d = dict(d)
    names = [e[0] for e in S.SCHEMA]
    n = max(d["n_bodies"], d["n_shapes"], d["n_proxies"])
    for _ in range(int(rng.integers(1, 4))):
        name = names[int(rng.integers(len(names)))]
        v = d[name]
        if isinstance(v, np.ndarray):
            if v.size == 0:
                continue
            v = v.copy()
            flat = v.reshape(-1)
            i = int(rng.integers(v.size))
            if v.dtype.kind == "f":
                choices = [np.nan, np.inf, -np.inf, 1e300, -1e300, 1e-300, 0.0, -0.0, 1e30, -5.0, flat[i] * 1.5]
            elif v.dtype.kind == "b":
                choices = [not flat[i]]
            elif v.dtype == np.uint64:
                choices = [0, 1, 2 ** 64 - 1, int(rng.integers(0, 2 ** 63))]
            elif v.dtype == np.int8:
                choices = [-1, 0, 1, 2, 3, 127]
            else:
                choices = [-1, 0, 1, n - 1, n, n + 1, 2 ** 31, int(rng.integers(-5, n + 5)), int(flat[i]) + 1,
                           int(flat[i]) - 1]
            flat[i] = choices[int(rng.integers(len(choices)))]
            d[name] = v
        elif isinstance(v, bool):
            d[name] = not v
        elif isinstance(v, int):
            d[name] = [-1, 0, 1, v + 1, v - 1, 2 ** 31, 65][int(rng.integers(7))]
        elif isinstance(v, float):
            d[name] = [np.nan, np.inf, -1.0, 0.0, 1e30, 1e300][int(rng.integers(6))]
        else:
            d[name] = "max" if v != "max" else "sqrt "
    return d


def fuzz_entries(seed, trials):
    """Well-formed snapshots holding wrong states (``mutate_entries``): each must be refused with a CaromError
    or give a world that steps 5 times (or refuses a step with a CaromError), stays finite, and answers
    events and queries."""
    rng = np.random.default_rng(seed)
    d0 = S._parse(busy_world().snapshot().data)
    out = {"refused": 0, "restored": 0, "refused_step": 0, "failures": []}
    for trial in range(trials):
        try:
            data = reencode(mutate_entries(d0, rng))
        except (SnapshotError, OverflowError, struct_error):       # (a value the layout cannot hold)
            continue
        try:
            w = carom.World.restore(data)
        except CaromError:
            out["refused"] += 1
            continue
        except Exception as exc:             # noqa: BLE001
            out["failures"].append(f"entries trial {trial}: restore raised {exc!r}")
            continue
        out["restored"] += 1
        try:
            for _ in range(5):
                w.step(DT)
            n = w.tables.n_bodies
            alive = w.tables.alive[:n]
            if not all(np.isfinite(a[:n][alive]).all() for a in (w.tables.com, w.tables.vel, w.tables.angle, w.tables.angvel)):
                out["failures"].append(f"entries trial {trial}: the world is not finite after 5 steps")
            w.contact_events()
            w.query_aabb((-20, -1), (20, 20))
            w.raycast((-15, 0.3), (15, 0.3))
        except CaromError:
            out["refused_step"] += 1
        except Exception as exc:             # noqa: BLE001
            out["failures"].append(f"entries trial {trial}: {exc!r}")
    return out


def test_corruption_fuzz_in_a_subprocess():
    busy_world(steps=2)                       # (compiles the step into the cache the subprocess loads)
    start = time.time()
    proc = subprocess.run([sys.executable, __file__, "fuzz", "12345", "1000", "200"], capture_output=True,
                          text=True, timeout=600, env=dict(os.environ), cwd=os.path.dirname(__file__))
    assert proc.returncode == 0, f"the fuzz crashed (code {proc.returncode}):\n{proc.stdout[-2000:]}\n" \
                                 f"{proc.stderr[-4000:]}"
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    print(f"fuzz: {time.time() - start:.1f} s, {summary}")
    raw, entries = summary["bytes"], summary["entries"]
    assert raw["failures"] == [] and entries["failures"] == [], (raw["failures"][:10], entries["failures"][:10])
    assert raw["refused"] + raw["restored"] == 1000
    assert raw["refused"] > 300 and raw["restored"] > 50      # both paths are exercised
    assert entries["refused"] > 50 and entries["restored"] > 20


if __name__ == "__main__":
    if sys.argv[1:2] == ["fuzz"]:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        result = {"bytes": fuzz(int(sys.argv[2]), int(sys.argv[3])),
                  "entries": fuzz_entries(int(sys.argv[2]), int(sys.argv[4]))}
        print(json.dumps(result))
