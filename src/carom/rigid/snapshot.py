"""Snapshots of a rigid world: data only, in a documented, version-tagged layout, checked before use.

Why not pickle: unpickling runs whatever code the bytes name, so a snapshot from anywhere else could run
code, and a damaged one restored without complaint and then crashed the compiled step (an index out of
range reads or writes arbitrary memory). Here the bytes hold only numbers, strings and arrays; decoding
parses them with ``struct`` and ``numpy.frombuffer``, never executes anything, and checks the whole state
(counts, shapes, dtypes, every index, finiteness, free lists, geometry) before any world is built. Any
problem raises :class:`~carom.errors.SnapshotError` naming it. ``pickle``, ``copy`` and ``deepcopy`` of a
world go through the same bytes (``World.__reduce__``).

Layout (every number little-endian)::

    magic     8 bytes   b"CAROMSNP"
    version   u32       FORMAT_VERSION (5; version 4 had no body.sleep_threshold and body.locks, version 3 no
                        joints, version 2 no shape.chain and
                        shape.ghost, version 1 no body.can_sleep, body.fixed_rotation and body.mass_override)
    count     u32       number of entries
    entries   count x entry, in the fixed order of SCHEMA (every name exactly once)
    crc32     u32       zlib.crc32 of all the bytes before it (catches accidental damage; the checks below
                        are what make a deliberately crafted snapshot safe)

    entry     name length u8, name (ASCII), tag u8, then by tag:
              1 int     i64
              2 float   f64
              3 bool    u8, 0 or 1
              4 str     u16 length, UTF-8 bytes
              5 array   dtype code u8, ndim u8, ndim x u64 dims, the elements in C order;
                        dtype codes: 1 bool (a byte, 0 or 1), 2 int8, 3 int64, 4 uint64, 5 float64

What is saved (SCHEMA lists every entry): the settings; the live rows ``[:n]`` of every body and shape
array (capacities are not saved: arrays grow by doubling from 16, and a restored world gets the capacity
that rule gives); the free lists in their order (slots are reused last-freed-first); each body's shape
list in its order; the vertex and normal tables; the contact table without the colouring (the next step
colours afresh, which gives exactly the colouring it would have reused: ``_solver.same_colouring``); the
broad phase as data per proxy (flags, real box, fat box), its free list, move buffer and pair cache; the
last step's contact events and the pending end events. Shape objects (``Circle``, ``Polygon``, ...) are
rebuilt from their vertices and radius (as Circle, Capsule, Segment or Polygon by vertex count and radius;
shapes that shared one object get one each). The broad-phase trees are rebuilt from the fat boxes
(``tree_rebuild``) rather than trusted: which pairs, query hits and ray hits they give does not depend on
the trees' shape, only their speed does, so the restored world continues bitwise identically.

Not saved: event handlers (Python callables, often closures over the original world: register them again),
``Body.data`` and ``ShapeHandle.data`` (any Python objects: a snapshot is data only; ``pickle``, ``copy`` and
``deepcopy`` of a world carry them beside the snapshot bytes, ``World.__reduce__``),
``profile_times`` (timings, which would make equal states differ), and caches rebuilt on demand (kernel
argument views, the queries' boxes).
"""
import math
import struct
import zlib

import numpy as np

from ..constants import WORLD_LIMIT, FLOAT32_LIMIT, MAX_SUBSTEPS, MAX_TIME_STEP, WELDING_TOLERANCE, MAX_TRANSLATION_SPEED
from ..errors import CaromError, SnapshotError
from ..geometry import _pairs as K
from ..geometry._tree import tree_new, tree_rebuild
from ..geometry.broadphase import DynamicTree
from ..geometry.shapes import Circle, Capsule, Segment, Polygon, Shape
from . import _step
from . import joints as _joints
from . import events as _events
from .body import Body
from .events import BEGIN_DTYPE, END_DTYPE, HIT_DTYPE, ContactEvents
from .shape import ShapeHandle
from .tables import grow

__all__ = ["Snapshot", "FORMAT_VERSION", "encode", "decode", "SCHEMA"]

MAGIC = b"CAROMSNP"
FORMAT_VERSION = 5

T_INT, T_FLOAT, T_BOOL, T_STR, T_ARRAY = 1, 2, 3, 4, 5
B1, I1, I8, U8, F8 = 1, 2, 3, 4, 5
#: dtype code -> (NumPy dtype as stored, little-endian; dtype in memory)
DTYPES = {B1: (np.dtype("u1"), np.dtype(np.bool_)), I1: (np.dtype("<i1"), np.dtype(np.int8)),
          I8: (np.dtype("<i8"), np.dtype(np.int64)), U8: (np.dtype("<u8"), np.dtype(np.uint64)),
          F8: (np.dtype("<f8"), np.dtype(np.float64))}
_CODE_OF = {np.dtype(np.bool_): B1, np.dtype(np.int8): I1, np.dtype(np.int64): I8, np.dtype(np.uint64): U8,
            np.dtype(np.float64): F8}

#: contact keys pack two shape indices into 32 bits each, and proxy pair keys two proxy ids
INDEX_LIMIT = 2 ** 31 - 1
_MAX_STR = 256

# --- what is saved -------------------------------------------------------------------------------------------

#: the body arrays (``WorldTables.body_arrays``): attribute, dtype code, shape of a row
BODY_FIELDS = (("com", F8, (2,)), ("angle", F8, ()), ("vel", F8, (2,)), ("angvel", F8, ()),
               ("inv_mass", F8, ()), ("inv_inertia", F8, ()), ("mass", F8, ()), ("inertia", F8, ()),
               ("local_center", F8, (2,)), ("kind", I8, ()), ("bullet", B1, ()), ("alive", B1, ()),
               ("gen", I8, ()), ("force", F8, (2,)), ("torque", F8, ()), ("lin_damping", F8, ()),
               ("ang_damping", F8, ()), ("gravity_scale", F8, ()), ("min_extent", F8, ()),
               ("asleep", B1, ()), ("sleep_time", F8, ()), ("island", I8, ()), ("can_sleep", B1, ()),
               ("fixed_rotation", B1, ()), ("mass_override", I8, ()), ("sleep_threshold", F8, ()),
               ("locks", I1, ()))
#: the shape arrays (``WorldTables.shape_arrays``)
SHAPE_FIELDS = (("s_body", I8, ()), ("s_alive", B1, ()), ("s_gen", I8, ()), ("s_offset", I8, ()),
                ("s_count", I8, ()), ("s_radius", F8, ()), ("s_friction", F8, ()), ("s_restitution", F8, ()),
                ("s_density", F8, ()), ("s_reach", F8, ()), ("s_sensor", B1, ()), ("s_category", U8, ()),
                ("s_mask", U8, ()), ("s_group", I8, ()), ("s_proxy", I8, ()), ("s_tangent_speed", F8, ()),
                ("s_rolling", F8, ()), ("s_one_way", F8, (2,)), ("s_chain", I8, ()), ("s_ghost", F8, (4,)))
#: the joint arrays (``WorldTables.joint_arrays``)
JOINT_FIELDS = (("j_kind", I8, ()), ("j_alive", B1, ()), ("j_gen", I8, ()), ("j_enabled", B1, ()),
                ("j_body", I8, (2,)), ("j_local", F8, (_joints.LOCAL_WIDTH,)), ("j_param", F8, (_joints.PARAM_WIDTH,)),
                ("j_impulse", F8, (_joints.IMPULSE_WIDTH,)), ("j_reaction", F8, (3,)), ("j_collide", B1, ()),
                ("j_threshold", F8, (2,)), ("j_report", B1, ()))
#: the contact table's fields before the colouring (``_layout.ContactTable``, whose field names these are;
#: ``events.empty_contacts``)
CONTACT_FIELDS = (("keys", I8, ()), ("count", I8, ()), ("ids", I8, (2,)), ("normal_impulse", F8, (2,)),
                  ("tangent_impulse", F8, (2,)), ("normal", F8, (2,)), ("points", F8, (2, 2)),
                  ("separation", F8, (2,)), ("touching", B1, ()), ("sensor", B1, ()),
                  ("cache", F8, (_step.CACHE_WIDTH,)), ("step_impulse", F8, (2, 2)))
_PAIR = (("shape_a", I8, ()), ("shape_b", I8, ()), ("body_a", I8, ()), ("body_b", I8, ()))
#: the fields of the event records (``world.BEGIN_DTYPE``, ``END_DTYPE``, ``HIT_DTYPE``)
EVENT_FIELDS = {"begin": _PAIR + (("point", F8, (2,)), ("normal", F8, (2,)), ("sensor", B1, ())),
                "end": _PAIR + (("sensor", B1, ()),),
                "hit": _PAIR + (("point", F8, (2,)), ("normal", F8, (2,)), ("speed", F8, ()))}
#: the event record sets saved: the last step's three, and the end events of shapes removed since
EVENT_SETS = (("begin", "begin"), ("end", "end"), ("hit", "hit"), ("pending_end", "end"))

#: the counts the array shapes refer to
SYMBOLS = {"NB": "n_bodies", "NS": "n_shapes", "NV": "n_verts", "NP": "n_proxies", "K": "n_contacts",
           "NJ": "n_joints"}


#: every attribute of a World and of its tables (``tables.<name>``: ``WorldTables``) and what becomes of it in a
#: snapshot. A test checks that a world has no other, so an attribute added to World.__init__ or WorldTables without
#: a place here fails the tests instead of being silently lost
WORLD_ATTRIBUTES = {
    "tables": "the world's tables: each of their attributes below",
    **{"tables." + a: "body arrays (BODY_FIELDS), rows [:n_bodies]" for a, _, _ in BODY_FIELDS},
    **{"tables." + a: "shape arrays (SHAPE_FIELDS), rows [:n_shapes]" for a, _, _ in SHAPE_FIELDS},
    **{"tables." + a: "joint arrays (JOINT_FIELDS), rows [:n_joints]" for a, _, _ in JOINT_FIELDS},
    "tables.joint_arrays": "the constructor's (checked against JOINT_FIELDS)", "tables.n_joints": "n_joints",
    "tables.free_joints": "joint.free", "tables.joined": "not saved: rebuilt from the joint arrays by the next step",
    "_joint_events": "not saved: the last step's joint events, delivered after it",
    "tables.joint_data": "not saved: Python objects (pickle and copy carry them beside the snapshot bytes)",
    "tables.body_arrays": "the constructor's (checked against BODY_FIELDS)",
    "tables.shape_arrays": "the constructor's (checked against SHAPE_FIELDS)",
    "tables.n_bodies": "n_bodies", "tables.n_shapes": "n_shapes", "tables.n_verts": "n_verts",
    "tables.free_bodies": "body.free", "tables.free_shapes": "shape.free",
    "tables.body_shapes": "body.shape_count, body.shape_list (handles rebuilt)",
    "tables.static_body": "static_body (handle rebuilt)",
    "tables.s_geometry": "shape.geometry (objects rebuilt)",
    "tables.verts": "verts", "tables.normals": "normals",
    "tables.contacts": "contact.* (members before the colouring; the colouring is recomputed)",
    "tables.bp": "broad.* (trees rebuilt from the fat boxes)", "tables.proxy_shape": "broad.proxy_shape",
    "_gravity": "gravity_x, gravity_y", "_substeps": "substeps", "_friction_mixing": "friction_mixing",
    "_restitution_mixing": "restitution_mixing", "_sleep_enabled": "sleep_enabled",
    "_hit_event_threshold": "hit_event_threshold", "profile": "profile", "tables.skip_apart": "skip_apart",
    "step_count": "step_count", "tables.last_dt": "last_dt",
    "tables.events": "events.begin/end/hit.* (settled first)", "tables.raw_events": "settled into events.*, then None",
    "tables.pending_end": "events.pending_end.*",
    "tables.bounds": "bounds (empty when None)", "tables.remove_outside": "remove_outside",
    "tables.left": "events.left.body", "tables.left_gen": "events.left.generation",
    "_handlers": "not saved: Python callables (register them again)",
    "_pre_solve": "not saved: a compiled function (set World.pre_solve again)",
    "_pre_solve_address": "not saved: the pre-solve hook's address (0: none)",
    "tables.approach": "not saved: the last step's approach speeds (contact_data reads NaN until the next step)",
    "profile_times": "not saved: timings of the last step",
    "_governor": "not saved: the steps' timings, which choose the thread count (a restored world times its own)",
    "_arg_views": "not saved: views rebuilt by the next step",
    "_step_entry": "not saved: the compiled step's entry point, found again by the next step",
    "tables.thresholds_set": "not saved: found again from the joint thresholds by the next step",
    "tables.query_boxes": "not saved: rebuilt by a query",
    "tables.locked": "not saved: a snapshot is taken and restored between steps",
    "tables.body_data": "not saved: Python objects (pickle and copy carry them beside the snapshot bytes)",
    "tables.shape_data": "not saved: Python objects (pickle and copy carry them beside the snapshot bytes)",
}
#: the same for the broad phase (``WorldTables.bp``, a DynamicTree)
BROAD_PHASE_ATTRIBUTES = {
    "_flags": "broad.flags", "_lower": "broad.lower", "_upper": "broad.upper", "_n": "n_proxies",
    "_free": "broad.free", "_count": "counted from broad.flags", "margin": "broad.margin",
    "multiplier": "broad.multiplier", "_trees": "rebuilt from broad.fat_lower, broad.fat_upper",
    "_leaf": "rebuilt with the trees", "_moved": "broad.moved", "_moved_flag": "marks broad.moved",
    "_moved_meta": "len(broad.moved), broad.cache_real, 0 (no leaf pending)", "_cand": "broad.cand",
    "_deferred": "not saved: a world's tree always defers insertion (the snapshot is taken with none pending)",
}


def _entry_name(prefix, attr):
    return prefix + attr.lstrip("_").removeprefix("s_").removeprefix("j_")


def _schema():
    """Every entry in order: (name, tag, dtype code, dims). A dim is an int, a symbol of SYMBOLS, a name
    starting with '#' (any length, the same for every entry that names it) or None (any length)."""
    s = [(name, T_INT, None, None) for name in SYMBOLS.values()]
    s += [("static_body", T_INT, None, None), ("step_count", T_INT, None, None), ("last_dt", T_FLOAT, None, None),
          ("gravity_x", T_FLOAT, None, None), ("gravity_y", T_FLOAT, None, None),
          ("substeps", T_INT, None, None), ("friction_mixing", T_STR, None, None),
          ("restitution_mixing", T_STR, None, None), ("sleep_enabled", T_BOOL, None, None),
          ("hit_event_threshold", T_FLOAT, None, None), ("profile", T_BOOL, None, None),
          ("skip_apart", T_BOOL, None, None), ("remove_outside", T_BOOL, None, None),
          ("bounds", T_ARRAY, F8, (None,))]
    s += [(_entry_name("body.", a), T_ARRAY, c, ("NB",) + row) for a, c, row in BODY_FIELDS]
    s += [("body.free", T_ARRAY, I8, (None,)), ("body.shape_count", T_ARRAY, I8, ("NB",)),
          ("body.shape_list", T_ARRAY, I8, (None,))]
    s += [(_entry_name("shape.", a), T_ARRAY, c, ("NS",) + row) for a, c, row in SHAPE_FIELDS]
    s += [("shape.free", T_ARRAY, I8, (None,)), ("shape.geometry", T_ARRAY, F8, (None, 2)),
          ("verts", T_ARRAY, F8, ("NV", 2)), ("normals", T_ARRAY, F8, ("NV", 2))]
    s += [(_entry_name("joint.", a), T_ARRAY, c, ("NJ",) + row) for a, c, row in JOINT_FIELDS]
    s += [("joint.free", T_ARRAY, I8, (None,))]
    s += [("contact." + n, T_ARRAY, c, ("K",) + row) for n, c, row in CONTACT_FIELDS]
    s += [("broad.margin", T_FLOAT, None, None), ("broad.multiplier", T_FLOAT, None, None),
          ("broad.flags", T_ARRAY, I1, ("NP",)), ("broad.lower", T_ARRAY, F8, ("NP", 2)),
          ("broad.upper", T_ARRAY, F8, ("NP", 2)), ("broad.fat_lower", T_ARRAY, F8, ("NP", 2)),
          ("broad.fat_upper", T_ARRAY, F8, ("NP", 2)), ("broad.free", T_ARRAY, I8, (None,)),
          ("broad.moved", T_ARRAY, I8, (None,)), ("broad.cache_real", T_BOOL, None, None),
          ("broad.cand", T_ARRAY, I8, (None,)), ("broad.proxy_shape", T_ARRAY, I8, ("NP",))]
    for set_name, kind in EVENT_SETS:
        s += [(f"events.{set_name}.{f}", T_ARRAY, c, ("#" + set_name,) + row) for f, c, row in EVENT_FIELDS[kind]]
    s += [("events.left.body", T_ARRAY, I8, ("#left",)), ("events.left.generation", T_ARRAY, I8, ("#left",))]
    return tuple(s)


#: every entry of a snapshot, in order: (name, tag, dtype code, dims)
SCHEMA = _schema()


class Snapshot:
    """A world's whole state as bytes (``.data``, the layout of :mod:`carom.rigid.snapshot`);
    ``carom.World.restore(snapshot)`` (or the bytes themselves) rebuilds the world after checking them.

    Constructible from bytes (``Snapshot(data)``), so a snapshot can be stored and read back; nothing is
    checked until it is restored."""

    __slots__ = ("data",)

    def __init__(self, data):
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise SnapshotError(f"a snapshot is made from bytes, got {type(data).__name__}")
        self.data = bytes(data)

    def __eq__(self, other):
        return isinstance(other, Snapshot) and other.data == self.data

    def __hash__(self):
        return hash(self.data)

    def __reduce__(self):
        return (Snapshot, (self.data,))

    def __repr__(self):
        return f"<carom Snapshot, {len(self.data)} bytes>"


# --- encoding ------------------------------------------------------------------------------------------------

class _Writer:
    def __init__(self):
        self.parts = []
        self.names = []

    def _name(self, name, tag):
        b = name.encode("ascii")
        self.parts.append(struct.pack("<B", len(b)) + b + struct.pack("<B", tag))
        self.names.append(name)

    def int(self, name, v):
        self._name(name, T_INT)
        self.parts.append(struct.pack("<q", int(v)))

    def float(self, name, v):
        self._name(name, T_FLOAT)
        self.parts.append(struct.pack("<d", float(v)))

    def bool(self, name, v):
        self._name(name, T_BOOL)
        self.parts.append(struct.pack("<B", 1 if v else 0))

    def str(self, name, v):
        b = str(v).encode("utf-8")
        self._name(name, T_STR)
        self.parts.append(struct.pack("<H", len(b)) + b)

    def array(self, name, arr):
        arr = np.asarray(arr)
        code = _CODE_OF.get(arr.dtype)
        if code is None:
            raise SnapshotError(f"cannot save {name}: dtype {arr.dtype} is not one the snapshot format holds")
        self._name(name, T_ARRAY)
        self.parts.append(struct.pack("<BB", code, arr.ndim) + struct.pack(f"<{arr.ndim}Q", *arr.shape))
        stored = DTYPES[code][0]
        self.parts.append(np.ascontiguousarray(arr.view(np.uint8) if code == B1 else arr, dtype=stored).tobytes())

    def finish(self):
        if tuple(self.names) != tuple(e[0] for e in SCHEMA):
            missing = [e[0] for e in SCHEMA if e[0] not in self.names]
            raise SnapshotError(f"internal: the encoder wrote entries out of SCHEMA's order (missing {missing})")
        body = b"".join([MAGIC, struct.pack("<II", FORMAT_VERSION, len(self.names))] + self.parts)
        return body + struct.pack("<I", zlib.crc32(body))


def _check_lists(world):
    """The world's array lists must be the ones this format knows: a new body or shape array that the
    snapshot did not save would be silently lost (and the restored world would not continue identically)."""
    for what, known, have in (("body", BODY_FIELDS, world.tables.body_arrays), ("shape", SHAPE_FIELDS, world.tables.shape_arrays),
                              ("joint", JOINT_FIELDS, world.tables.joint_arrays)):
        names = [a for a, _, _ in known]
        if sorted(names) != sorted(have):
            raise SnapshotError(f"the world's {what} arrays {sorted(have)} are not the ones the snapshot format "
                                f"{FORMAT_VERSION} knows {sorted(names)}: update carom.rigid.snapshot")


def encode(world) -> bytes:
    """The state of ``world`` as snapshot bytes (module docstring). Equal states give equal bytes."""
    world.tables.check_unlocked()
    _check_lists(world)
    _events.settle(world.tables)      # (builds the last step's event records, which are state, if not yet built)
    nb, ns, nv = world.tables.n_bodies, world.tables.n_shapes, world.tables.n_verts
    bp = world.tables.bp
    bp.flush()            # (shapes added since the last step get their leaves, as the step would give them)
    npx = bp._n
    contacts = _events.contacts_to_save(world.tables)
    w = _Writer()
    w.int("n_bodies", nb)
    w.int("n_shapes", ns)
    w.int("n_verts", nv)
    w.int("n_proxies", npx)
    w.int("n_contacts", contacts.keys.shape[0])
    w.int("n_joints", world.tables.n_joints)
    w.int("static_body", world.tables.static_body.index)
    w.int("step_count", world.step_count)
    w.float("last_dt", world.tables.last_dt)
    w.float("gravity_x", world.gravity[0])
    w.float("gravity_y", world.gravity[1])
    w.int("substeps", world.substeps)
    w.str("friction_mixing", world.friction_mixing)
    w.str("restitution_mixing", world.restitution_mixing)
    w.bool("sleep_enabled", world.sleep_enabled)
    w.float("hit_event_threshold", world.hit_event_threshold)
    w.bool("profile", world.profile)
    w.bool("skip_apart", world.tables.skip_apart)
    w.bool("remove_outside", world.tables.remove_outside)
    w.array("bounds", np.zeros(0) if world.tables.bounds is None else world.tables.bounds)
    for attr, code, _ in BODY_FIELDS:
        w.array(_entry_name("body.", attr), _rows(world, attr, code, nb))
    w.array("body.free", np.array(world.tables.free_bodies, np.int64))
    lists = [[h.index for h in world.tables.body_shapes[b]] for b in range(nb)]
    w.array("body.shape_count", np.array([len(x) for x in lists], np.int64))
    w.array("body.shape_list", np.array([s for x in lists for s in x], np.int64))
    for attr, code, _ in SHAPE_FIELDS:
        w.array(_entry_name("shape.", attr), _rows(world, attr, code, ns))
    w.array("shape.free", np.array(world.tables.free_shapes, np.int64))
    w.array("shape.geometry", _geometry_rows(world, ns))
    w.array("verts", world.tables.verts[:nv])
    w.array("normals", world.tables.normals[:nv])
    for attr, code, _ in JOINT_FIELDS:
        w.array(_entry_name("joint.", attr), _rows(world, attr, code, world.tables.n_joints))
    w.array("joint.free", np.array(world.tables.free_joints, np.int64))
    for name, _, _ in CONTACT_FIELDS:
        w.array("contact." + name, getattr(contacts, name))
    flags = bp._flags[:npx]
    fat_lo = np.zeros((npx, 2))
    fat_hi = np.zeros((npx, 2))
    for which, tree in ((K.MOVING, bp._trees[0]), (K.STATIC, bp._trees[1])):
        ids = np.flatnonzero(flags == which)
        fat_lo[ids] = tree.lo[bp._leaf[ids]]
        fat_hi[ids] = tree.hi[bp._leaf[ids]]
    w.float("broad.margin", bp.margin)
    w.float("broad.multiplier", bp.multiplier)
    w.array("broad.flags", flags)
    w.array("broad.lower", bp._lower[:npx])
    w.array("broad.upper", bp._upper[:npx])
    w.array("broad.fat_lower", fat_lo)
    w.array("broad.fat_upper", fat_hi)
    w.array("broad.free", np.array(bp._free, np.int64))
    w.array("broad.moved", bp._moved[:int(bp._moved_meta[0])])
    w.bool("broad.cache_real", bp._moved_meta[1] != 0)
    w.array("broad.cand", np.asarray(bp._cand, np.int64))
    w.array("broad.proxy_shape", world.tables.proxy_shape[:npx])
    ev = world.tables.events
    pending = world.tables.pending_end
    sets = {"begin": ev.begin, "end": ev.end, "hit": ev.hit,
            "pending_end": np.concatenate(pending) if pending else np.zeros(0, ev.end.dtype)}
    for set_name, kind in EVENT_SETS:
        rec = sets[set_name]
        fields = tuple(f for f, _, _ in EVENT_FIELDS[kind])
        if rec.dtype.names != fields:
            raise SnapshotError(f"the world's {kind} event fields {rec.dtype.names} are not the ones the snapshot "
                                f"format {FORMAT_VERSION} knows {fields}: update carom.rigid.snapshot")
        for f in fields:
            w.array(f"events.{set_name}.{f}", np.ascontiguousarray(rec[f]))
    w.array("events.left.body", world.tables.left)
    w.array("events.left.generation", world.tables.left_gen)
    return w.finish()


def _geometry_rows(world, ns):
    """The vertices of every shape slot's geometry object, slot after slot (``s_count`` rows each). A removed
    shape keeps its object (the end events of its contacts hand it out) but not its rows of the vertex table,
    which later shapes may take, so the objects are saved apart from the table."""
    parts = []
    for s in range(ns):
        g = world.tables.s_geometry[s]
        if g.vertices.shape[0] != world.tables.s_count[s] or g.radius != world.tables.s_radius[s]:
            raise SnapshotError(f"internal: shape {s}'s geometry {g!r} is not the one its rows describe")
        parts.append(g.vertices)
    return np.concatenate(parts) if parts else np.zeros((0, 2))


def _rows(world, attr, code, n):
    arr = getattr(world.tables, attr)
    if arr.dtype != DTYPES[code][1]:
        raise SnapshotError(f"the world's {attr} is {arr.dtype}, the snapshot format {FORMAT_VERSION} has it as "
                            f"{DTYPES[code][1]}: update carom.rigid.snapshot")
    return arr[:n]


# --- decoding ------------------------------------------------------------------------------------------------

def _bad(message):
    return SnapshotError(f"invalid snapshot: {message}")


def _as_bytes(snapshot):
    if isinstance(snapshot, Snapshot):
        return snapshot.data
    if isinstance(snapshot, (bytes, bytearray, memoryview)):
        return bytes(snapshot)
    raise SnapshotError(f"expected a carom Snapshot or its bytes, got {type(snapshot).__name__}: "
                        f"{repr(snapshot)[:60]}")


class _Reader:
    def __init__(self, data, end):
        self.data = memoryview(data)      # (slices of a memoryview are not copies)
        self.pos = len(MAGIC) + 8
        self.end = end

    def take(self, fmt, what):
        size = struct.calcsize(fmt)
        if self.pos + size > self.end:
            raise _bad(f"truncated in {what} (byte {self.pos})")
        out = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += size
        return out

    def raw(self, size, what):
        if size > self.end - self.pos:
            raise _bad(f"truncated in {what}: {size} bytes needed at byte {self.pos}, {self.end - self.pos} left")
        b = self.data[self.pos:self.pos + size]
        self.pos += size
        return b


def _parse(data):
    """The entries of the bytes, checked against SCHEMA (names, order, tags, dtypes, shapes): name -> value."""
    head = len(MAGIC) + 8
    if len(data) < head + 4:
        raise _bad(f"{len(data)} bytes are too few for a snapshot")
    if data[:len(MAGIC)] != MAGIC:
        raise _bad(f"it does not start with {MAGIC!r} (got {bytes(data[:len(MAGIC)])!r})")
    version, count = struct.unpack_from("<II", data, len(MAGIC))
    if version != FORMAT_VERSION:
        raise _bad(f"format version {version}; this carom reads version {FORMAT_VERSION}")
    (crc,) = struct.unpack_from("<I", data, len(data) - 4)
    if zlib.crc32(data[:-4]) != crc:
        raise _bad("checksum mismatch (the bytes were damaged or truncated)")
    if count != len(SCHEMA):
        raise _bad(f"{count} entries, format {FORMAT_VERSION} has {len(SCHEMA)}")
    r = _Reader(data, len(data) - 4)
    out = {}
    bound = {}
    for name, tag, code, dims in SCHEMA:
        (n,) = r.take("<B", f"the name of entry {name}")
        got = r.raw(n, f"the name of entry {name}")
        if got != name.encode("ascii"):
            raise _bad(f"entry {len(out)} is {bytes(got)!r}, expected {name!r}")
        (t,) = r.take("<B", name)
        if t != tag:
            raise _bad(f"{name} has type tag {t}, expected {tag}")
        if tag == T_INT:
            (out[name],) = r.take("<q", name)
        elif tag == T_FLOAT:
            (out[name],) = r.take("<d", name)
        elif tag == T_BOOL:
            (v,) = r.take("<B", name)
            if v > 1:
                raise _bad(f"{name} = {v} is not a bool (0 or 1)")
            out[name] = bool(v)
        elif tag == T_STR:
            (n,) = r.take("<H", name)
            if n > _MAX_STR:
                raise _bad(f"{name} is a string of {n} bytes (at most {_MAX_STR})")
            try:
                out[name] = bytes(r.raw(n, name)).decode("utf-8")
            except UnicodeDecodeError:
                raise _bad(f"{name} is not UTF-8") from None
        else:
            out[name] = _parse_array(r, name, code, dims, out, bound)
    if r.pos != r.end:
        raise _bad(f"{r.end - r.pos} bytes after the last entry")
    return out


def _parse_array(r, name, code, dims, out, bound):
    c, ndim = r.take("<BB", name)
    if c != code:
        raise _bad(f"{name} has dtype code {c}, expected {code}")
    if ndim != len(dims):
        raise _bad(f"{name} has {ndim} dimensions, expected {len(dims)}")
    shape = r.take(f"<{ndim}Q", name)
    for axis, (got, want) in enumerate(zip(shape, dims)):
        if isinstance(want, int):
            expect = want
        elif want is None:
            expect = got
        elif want.startswith("#"):
            expect = bound.setdefault(want, got)
        else:
            expect = out[SYMBOLS[want]]
        if got != expect:
            raise _bad(f"{name} has shape {tuple(shape)}, expected {expect} along axis {axis}")
    stored, memory = DTYPES[code]
    n = math.prod(shape)
    raw = r.raw(n * stored.itemsize, name)
    arr = np.frombuffer(raw, stored, n).reshape(shape)
    if code == B1:
        if n and arr.max() > 1:
            i = np.unravel_index(int(np.argmax(arr > 1)), shape)
            raise _bad(f"{name}{list(i)} = {int(arr[i])} is not a bool (0 or 1)")
    return arr.astype(memory)          # (a copy: writable, native byte order, C order)


def _where(mask):
    return int(np.flatnonzero(np.asarray(mask).reshape(mask.shape[0], -1).any(axis=1))[0])


def _finite(d, name):
    a = d[name]
    bad = ~np.isfinite(a)
    if bad.any():
        i = _where(bad)
        raise _bad(f"{name}[{i}] = {a[i].tolist()} is not finite")


def _at_least(d, name, low, high=None):
    a = d[name]
    bad = ~(a >= low)
    if high is not None:
        bad |= ~(a <= high)
    if bad.any():
        i = _where(bad)
        span = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise _bad(f"{name}[{i}] = {a[i].tolist()} is not {span}")


def _indices(d, name, limit, what, low=0):
    a = d[name]
    bad = (a < low) | (a >= limit)
    if bad.any():
        i = _where(bad)
        raise _bad(f"{name}[{i}] = {a[i].tolist()} is not a {what} (there are {limit})")


def _free_list(d, name, alive, what):
    """A free list: distinct slots, each dead, and every dead slot listed (its order is kept: slots are
    reused last-freed-first)."""
    free = d[name]
    n = alive.shape[0]
    _indices(d, name, n, what)
    if np.unique(free).shape[0] != free.shape[0]:
        raise _bad(f"{name} lists a {what} twice")
    if alive[free].any():
        raise _bad(f"{name} lists live {what} {int(free[alive[free]][0])}")
    if free.shape[0] != int((~alive).sum()):
        raise _bad(f"{name} lists {free.shape[0]} free {what} slots, but {int((~alive).sum())} are not alive")


def _check_settings(d):
    for name in SYMBOLS.values():
        if not 0 <= d[name] <= INDEX_LIMIT:
            raise _bad(f"{name} = {d[name]} is out of range")
    if d["n_bodies"] < 1:
        raise _bad("there is no body (a world always has its static body)")
    if d["step_count"] < 0:
        raise _bad(f"step_count = {d['step_count']} is negative")
    if not 0.0 <= d["last_dt"] <= MAX_TIME_STEP:
        raise _bad(f"last_dt = {d['last_dt']} is not in [0, {MAX_TIME_STEP}]")
    if not 1 <= d["substeps"] <= MAX_SUBSTEPS:
        raise _bad(f"substeps = {d['substeps']} is not in [1, {MAX_SUBSTEPS}]")
    for name in ("gravity_x", "gravity_y"):
        if not math.isfinite(d[name]):
            raise _bad(f"{name} = {d[name]} is not finite")
    if math.isnan(d["hit_event_threshold"]):
        raise _bad("hit_event_threshold is NaN")
    for name in ("broad.margin", "broad.multiplier"):
        if not (math.isfinite(d[name]) and d[name] >= 0.0):
            raise _bad(f"{name} = {d[name]} is not a finite number >= 0")
    b = d["bounds"]
    if b.shape[0] not in (0, 4):
        raise _bad(f"bounds has {b.shape[0]} values, not 0 or 4")
    if b.shape[0] == 4 and not (np.isfinite(b).all() and np.abs(b).max() <= WORLD_LIMIT and b[0] < b[2]
                                and b[1] < b[3]):
        raise _bad(f"bounds = {b.tolist()} is not a box within the world limit")


def _check_bodies(d):
    nb = d["n_bodies"]
    alive = d["body.alive"]
    for attr, code, _ in BODY_FIELDS:
        if code == F8:
            _finite(d, _entry_name("body.", attr))
    kind = d["body.kind"]
    _indices(d, "body.kind", 3, "body kind (0 static, 1 kinematic, 2 dynamic)")
    _at_least(d, "body.gen", 0)
    _indices(d, "body.island", nb, "body")
    for name in ("body.mass", "body.inertia", "body.lin_damping", "body.ang_damping", "body.min_extent",
                 "body.sleep_time"):
        _at_least(d, name, 0.0)
    for name in ("body.inv_mass", "body.inv_inertia"):
        _at_least(d, name, 0.0, FLOAT32_LIMIT)
    for name in ("body.vel", "body.angvel"):
        _at_least(d, name, -FLOAT32_LIMIT, FLOAT32_LIMIT)
    _at_least(d, "body.sleep_threshold", 0.0, FLOAT32_LIMIT)
    _indices(d, "body.locks", 4, "set of motion-lock bits (0 to 3)")
    # fixed rotation: the solver's inverse inertia is 0 (Body.fixed_rotation); overridden mass data: only the
    # three bits (world.MASS_SET, INERTIA_SET, CENTER_SET), on live dynamic bodies
    fixed = d["body.fixed_rotation"]
    if (fixed & (d["body.inv_inertia"] != 0.0)).any():
        raise _bad(f"body {_where(fixed & (d['body.inv_inertia'] != 0.0))} has fixed rotation and an inverse "
                   "inertia other than 0")
    _indices(d, "body.mass_override", 8, "set of mass-data bits (0 to 7)")
    override = d["body.mass_override"] != 0
    if (override & ~(alive & (kind == _step.DYNAMIC))).any():
        raise _bad(f"body {_where(override & ~(alive & (kind == _step.DYNAMIC)))} has mass data set but is not a "
                   "live dynamic body")
    asleep = d["body.asleep"]
    if (asleep & ~(alive & (kind == _step.DYNAMIC))).any():
        raise _bad(f"body {_where(asleep & ~(alive & (kind == _step.DYNAMIC)))} is asleep but not a live dynamic body")
    sb = d["static_body"]
    if not (0 <= sb < nb and alive[sb] and kind[sb] == _step.STATIC):
        raise _bad(f"static_body = {sb} is not a live static body")
    _free_list(d, "body.free", alive, "body")


def _check_joints(d):
    """The joint table: kinds, bodies (two different live bodies of which one is dynamic, for a live joint),
    anchors and impulses finite, settings and thresholds not NaN (limits may be infinite), each live joint's
    settings consistent (``joints._consistent``), the free list."""
    nb = d["n_bodies"]
    alive = d["joint.alive"]
    _indices(d, "joint.kind", _joints.KIND_COUNT, "joint kind")
    _at_least(d, "joint.gen", 0)
    _indices(d, "joint.body", nb, "body")
    for name in ("joint.local", "joint.impulse", "joint.reaction"):
        _finite(d, name)
    _at_least(d, "joint.local", -WORLD_LIMIT, WORLD_LIMIT)
    for name in ("joint.param", "joint.threshold"):
        if np.isnan(d[name]).any():
            raise _bad(f"{name}[{_where(np.isnan(d[name]))}] is NaN")
    _at_least(d, "joint.threshold", 0.0)
    body = d["joint.body"]
    balive, bkind = d["body.alive"], d["body.kind"]
    for j in np.flatnonzero(alive).tolist():
        a, b = int(body[j, 0]), int(body[j, 1])
        if a == b or not (balive[a] and balive[b]) or _step.DYNAMIC not in (bkind[a], bkind[b]):
            raise _bad(f"joint {j} joins bodies {a} and {b}, not two different live bodies of which one is dynamic")
        try:
            _joints._consistent(int(d["joint.kind"][j]), d["joint.param"][j], f"joint {j}: ")
        except CaromError as exc:
            raise _bad(str(exc)) from None
    _free_list(d, "joint.free", alive, "joint")


def _check_shapes(d):
    ns, nb, nv = d["n_shapes"], d["n_bodies"], d["n_verts"]
    alive = d["shape.alive"]
    _indices(d, "shape.body", nb, "body")
    body = d["shape.body"]
    if (alive & ~d["body.alive"][body]).any():
        raise _bad(f"live shape {_where(alive & ~d['body.alive'][body])} belongs to a removed body")
    _at_least(d, "shape.gen", 0)
    _at_least(d, "shape.count", 1)
    _at_least(d, "shape.offset", 0)
    offset, count = d["shape.offset"], d["shape.count"]
    over = alive & (offset > nv - count)          # (offset + count > nv, without overflowing int64)
    if over.any():
        i = _where(over)
        raise _bad(f"shape {i}: vertex rows {offset[i]} + {count[i]} run past the vertex table ({nv} rows)")
    rows = d["shape.geometry"].shape[0]
    if float(count.sum(dtype=np.float64)) != rows or int(count.sum()) != rows:
        raise _bad(f"shape.geometry has {rows} vertices, the shapes' counts add up to {int(count.sum())}")
    for name in ("shape.radius", "shape.friction", "shape.density", "shape.reach"):
        _finite(d, name)
        _at_least(d, name, 0.0)
    _at_least(d, "shape.restitution", 0.0, 1.0)
    _at_least(d, "shape.tangent_speed", -MAX_TRANSLATION_SPEED, MAX_TRANSLATION_SPEED)
    _finite(d, "shape.rolling")
    _finite(d, "shape.one_way")
    ow = d["shape.one_way"]
    length = np.hypot(ow[:, 0], ow[:, 1]) if ow.size else np.zeros(0)
    odd = ~((length == 0.0) | (np.abs(length - 1.0) <= 1e-9))
    if odd.any():
        i = _where(odd)
        raise _bad(f"shape.one_way[{i}] = {ow[i].tolist()} is neither (0, 0) nor a unit vector")
    _at_least(d, "shape.rolling", 0.0)
    # chain segments: known bits only, on segments (two vertices) that are one-way, with finite ghost vertices
    _finite(d, "shape.ghost")
    chain = d["shape.chain"]
    known = _step.CHAIN | _step.CHAIN_PREV | _step.CHAIN_NEXT
    odd = (chain != 0) & (((chain & ~known) != 0) | ((chain & _step.CHAIN) == 0) | (d["shape.count"] != 2)
                          | (length == 0.0))
    if odd.any():
        i = _where(odd)
        raise _bad(f"shape.chain[{i}] = {int(chain[i])} is not a chain segment's bits, or shape {i} is not a "
                   "one-way segment")
    if (np.abs(d["shape.ghost"]) > WORLD_LIMIT).any():
        raise _bad(f"shape.ghost reaches beyond the world limit {WORLD_LIMIT:g}")
    # a ghost vertex on its joint would give the neighbour no direction (a live chain segment's only)
    idx = np.flatnonzero(alive & (chain != 0))
    if idx.size:
        first = np.concatenate([[0], np.cumsum(count)])[idx]
        geometry, ghost = d["shape.geometry"], d["shape.ghost"][idx]
        on_joint = (((chain[idx] & _step.CHAIN_PREV) != 0) & (geometry[first] == ghost[:, :2]).all(axis=1)) | (
            ((chain[idx] & _step.CHAIN_NEXT) != 0) & (geometry[first + 1] == ghost[:, 2:]).all(axis=1))
        if on_joint.any():
            i = int(idx[_where(on_joint)])
            raise _bad(f"shape.ghost[{i}] = {d['shape.ghost'][i].tolist()} puts a ghost vertex on its segment's "
                       "joint")
    _indices(d, "shape.proxy", d["n_proxies"], "broad-phase proxy")
    _free_list(d, "shape.free", alive, "shape")
    # each body's shape list: its live shapes, each once
    counts, listed = d["body.shape_count"], d["body.shape_list"]
    _at_least(d, "body.shape_count", 0)
    if int(counts.sum()) != listed.shape[0]:
        raise _bad(f"body.shape_count sums to {int(counts.sum())}, body.shape_list has {listed.shape[0]} shapes")
    _indices(d, "body.shape_list", ns, "shape")
    owner = np.repeat(np.arange(nb), counts)
    wrong = ~alive[listed] | (body[listed] != owner)
    if wrong.any():
        i = _where(wrong)
        raise _bad(f"body {owner[i]} lists shape {listed[i]}, which is not one of its live shapes")
    if not np.array_equal(np.bincount(listed, minlength=ns) != 0, alive) or np.unique(listed).size != listed.size:
        raise _bad("the bodies' shape lists do not hold every live shape exactly once")
    _finite(d, "verts")
    _finite(d, "normals")
    _finite(d, "shape.geometry")


def _check_geometry(d):
    """Every shape slot's vertices (``shape.geometry``) and radius describe a shape the constructors accept,
    checked for all slots at once: within the world limit; a circle (1 vertex) with a radius > 0; a capsule
    or segment (2) whose ends are at least the welding tolerance apart; a polygon (3 or more) counter-clockwise
    and convex (``_check_convex``)."""
    table, count, radius = d["shape.geometry"], d["shape.count"], d["shape.radius"]
    starts = np.concatenate([[0], np.cumsum(count)])[:-1]
    if table.shape[0]:
        owner = np.repeat(np.arange(count.shape[0]), count)
        beyond = np.abs(table).max(axis=1) + radius[owner] > WORLD_LIMIT
        if beyond.any():
            raise _bad(f"shape {owner[_where(beyond)]} reaches beyond the world limit {WORLD_LIMIT:g} m")
    bad = (count == 1) & ~(radius > 0.0)
    if bad.any():
        raise _bad(f"shape {_where(bad)}: a circle (one vertex) needs a radius > 0, got {radius[_where(bad)]}")
    two = np.flatnonzero(count == 2)
    e = table[starts[two] + 1] - table[starts[two]]
    bad = ~(np.hypot(e[:, 0], e[:, 1]) >= WELDING_TOLERANCE)
    if bad.any():
        raise _bad(f"shape {two[_where(bad)]}: its two points are closer than the welding tolerance")
    for n in np.unique(count[count >= 3]).tolist():
        which = np.flatnonzero(count == n)
        _check_convex(table[starts[which][:, None] + np.arange(n)], which)


def _check_convex(v, which):
    """Polygons ``v`` (m, n, 2), shapes ``which``: counter-clockwise and convex, every vertex on the inner side
    of (or on) every edge's line, and no edge of zero length (the kernels' SAT and GJK assume it)."""
    e = np.roll(v, -1, axis=1) - v
    length = np.hypot(e[..., 0], e[..., 1])
    bad = ~(length > 0.0).all(axis=1)
    if not bad.any():
        nx, ny = e[..., 1] / length, -e[..., 0] / length
        # side[k, i, j]: how far vertex j of polygon k lies outside the line of its edge i
        side = ((v[:, None, :, 0] - v[:, :, None, 0]) * nx[:, :, None]
                + (v[:, None, :, 1] - v[:, :, None, 1]) * ny[:, :, None])
        tol = 1e-9 * (1.0 + np.abs(v).max(axis=(1, 2)))
        area = np.sum(v[..., 0] * np.roll(v[..., 1], -1, axis=1) - np.roll(v[..., 0], -1, axis=1) * v[..., 1],
                      axis=1)
        bad = ~(side <= tol[:, None, None]).all(axis=(1, 2)) | ~(area > 0.0)
    if bad.any():
        i = _where(bad)
        raise _bad(f"shape {which[i]}: not a convex counter-clockwise polygon: {v[i].tolist()}")


def _shapes_geometry(d):
    """The shape object of every shape slot, made from its checked vertices and radius (``_check_geometry``)
    by the path ``Polygon._from_hull`` and unpickling take (``Shape.__init__``, which computes the edge
    normals); a live shape's rows of the world's vertex and normal tables must hold its vertices and edge
    normals, bit for bit."""
    _check_geometry(d)
    table, count = d["shape.geometry"], d["shape.count"]
    starts = np.concatenate([[0], np.cumsum(count)]).tolist()
    radii, counts = d["shape.radius"].tolist(), count.tolist()
    out = []
    for s in range(d["n_shapes"]):
        n, r = counts[s], radii[s]
        cls = Circle if n == 1 else (Polygon if n >= 3 else (Capsule if r > 0.0 else Segment))
        g = cls.__new__(cls)
        Shape.__init__(g, table[starts[s]:starts[s + 1]], r)
        out.append(g)
    live = np.flatnonzero(d["shape.alive"])
    if live.size:
        n = count[live]
        first = np.repeat(np.asarray(starts)[live], n)
        rows = np.repeat(d["shape.offset"][live], n) + np.arange(first.size) - np.repeat(np.cumsum(n) - n, n)
        geometry_rows = first + np.arange(first.size) - np.repeat(np.cumsum(n) - n, n)
        normals = np.concatenate([out[s].normals for s in live.tolist()])
        bad = ((d["verts"][rows] != table[geometry_rows]) | (d["normals"][rows] != normals)).any(axis=1)
        if bad.any():
            s = int(np.repeat(live, n)[_where(bad)])
            raise _bad(f"shape {s}: its rows of the vertex and normal tables are not its vertices and edge normals")
    return out


def _check_contacts(d):
    ns = d["n_shapes"]
    keys = d["contact.keys"]
    if keys.size:
        if (keys < 0).any():
            raise _bad(f"contact.keys[{_where(keys < 0)}] is negative")
        if not (np.diff(keys) > 0).all():
            raise _bad(f"contact.keys are not sorted and distinct (at {_where(~(np.diff(keys) > 0))})")
        a, b = keys >> _step.KEY_SHIFT, keys & _step.KEY_MASK
        bad = (a >= b) | (b >= ns)
        if bad.any():
            i = _where(bad)
            raise _bad(f"contact {i} names shapes ({a[i]}, {b[i]}): not two shapes a < b of the {ns}")
        alive, body = d["shape.alive"], d["shape.body"]
        bad = ~alive[a] | ~alive[b] | (body[a] == body[b])
        if bad.any():
            i = _where(bad)
            raise _bad(f"contact {i} is between shapes ({a[i]}, {b[i]}), not live shapes of two bodies")
    _indices(d, "contact.count", 3, "point count (0, 1 or 2)")
    for name, code, _ in CONTACT_FIELDS:
        if code == F8 and name != "cache":
            _finite(d, "contact." + name)
    # impulses the solver can hold (single precision): 1e271 passed as finite and its warm start blew the
    # bodies up to infinity
    for name in ("normal_impulse", "tangent_impulse", "step_impulse"):
        _at_least(d, "contact." + name, -FLOAT32_LIMIT, FLOAT32_LIMIT)
    cache = d["contact.cache"]
    if keys.size:
        # two segments never touch: their separation bound is +inf (``_step.invalid_cache_rows``)
        count, radius = d["shape.count"], d["shape.radius"]
        a, b = keys >> _step.KEY_SHIFT, keys & _step.KEY_MASK
        never_touch = (count[a] == 2) & (radius[a] == 0.0) & (count[b] == 2) & (radius[b] == 0.0)
        bad = _step.invalid_cache_rows(cache, never_touch)
        if bad.any():
            i = _where(bad)
            raise _bad(f"contact.cache[{i}] = {cache[i].tolist()} holds a NaN or an infinity (only the "
                       "separation bound may be infinite: -inf in a row with points, +inf for two segments)")


def _check_broad_phase(d):
    npx, ns = d["n_proxies"], d["n_shapes"]
    flags = d["broad.flags"]
    if ((flags < K.FREE) | (flags > K.STATIC)).any():
        raise _bad(f"broad.flags[{_where((flags < 0) | (flags > 2))}] is not 0, 1 or 2")
    live = flags != K.FREE
    _free_list(d, "broad.free", live, "proxy")
    for name in ("broad.lower", "broad.upper", "broad.fat_lower", "broad.fat_upper"):
        _finite(d, name)
    lo, hi, flo, fhi = d["broad.lower"], d["broad.upper"], d["broad.fat_lower"], d["broad.fat_upper"]
    bad = live[:, None] & ((lo > hi) | (flo > lo) | (hi > fhi))
    if bad.any():
        raise _bad(f"proxy {_where(bad)}: its box is not lower <= upper inside its fat box")
    # proxies <-> live shapes, one to one
    _indices(d, "broad.proxy_shape", max(ns, 1), "shape")
    s_alive, s_proxy, s_body = d["shape.alive"], d["shape.proxy"], d["shape.body"]
    live_shapes = np.flatnonzero(s_alive)
    p = s_proxy[live_shapes]
    if not live[p].all() or not np.array_equal(d["broad.proxy_shape"][p], live_shapes):
        raise _bad("the live shapes and the broad phase's proxies do not map to each other")
    if int(live.sum()) != live_shapes.size:
        raise _bad(f"{int(live.sum())} proxies for {live_shapes.size} live shapes")
    static = d["body.kind"][s_body[live_shapes]] == _step.STATIC
    if not np.array_equal(flags[p] == K.STATIC, static):
        raise _bad("a proxy is static while its body is not, or the other way round")
    moved = d["broad.moved"]
    _indices(d, "broad.moved", npx, "proxy")
    if np.unique(moved).size != moved.size:
        raise _bad("broad.moved lists a proxy twice")
    cand = d["broad.cand"]
    if cand.size:
        i, j = cand >> K._KEY_SHIFT, cand & K._KEY_MASK
        if (cand < 0).any() or (i >= j).any() or (j >= npx).any():
            raise _bad("broad.cand holds a pair that is not two proxies i < j")
        if not (np.diff(cand) > 0).all():
            raise _bad("broad.cand is not sorted and distinct")


def _check_events(d):
    ns, nb = d["n_shapes"], d["n_bodies"]
    _indices(d, "events.left.body", nb, "body")
    _at_least(d, "events.left.generation", 0)
    for set_name, kind in EVENT_SETS:
        for f, code, _ in EVENT_FIELDS[kind]:
            name = f"events.{set_name}.{f}"
            if f.startswith("shape"):
                _indices(d, name, ns, "shape")
            elif f.startswith("body"):
                _indices(d, name, nb, "body")
            elif code == F8:
                _finite(d, name)


def decode(snapshot, world_class):
    """The world a snapshot holds (a :class:`Snapshot` or its bytes), after checking all of it; anything else,
    or bytes that are not a valid snapshot, raise :class:`~carom.errors.SnapshotError`. ``world_class`` makes the
    world (``World``, which passes itself: this module sits below it)."""
    data = _as_bytes(snapshot)
    d = _parse(data)
    _check_settings(d)
    _check_bodies(d)
    _check_shapes(d)
    _check_joints(d)
    geometry = _shapes_geometry(d)
    _check_contacts(d)
    _check_broad_phase(d)
    _check_events(d)
    return _build(d, geometry, world_class)


def _capacity(n, start=16):
    """The capacity arrays that grow by doubling from ``start`` have while holding n rows."""
    cap = start
    while cap < n:
        cap *= 2
    return cap


def _build(d, geometry, world_class):
    """A World from checked entries. Made by the public constructor (which checks the settings again and sets
    every attribute a world has), then given the saved state."""
    try:
        w = world_class(gravity=(d["gravity_x"], d["gravity_y"]), substeps=d["substeps"],
                    friction_mixing=d["friction_mixing"], restitution_mixing=d["restitution_mixing"])
        w.sleep_enabled = d["sleep_enabled"]
        w.hit_event_threshold = d["hit_event_threshold"]
    except CaromError as exc:
        raise _bad(str(exc)) from None
    _check_lists(w)
    nb, ns, nv = d["n_bodies"], d["n_shapes"], d["n_verts"]
    for fields, prefix, n in ((BODY_FIELDS, "body.", nb), (SHAPE_FIELDS, "shape.", ns),
                              (JOINT_FIELDS, "joint.", d["n_joints"])):
        cap = _capacity(n)
        for attr, _, _ in fields:
            arr = grow(getattr(w.tables, attr), cap)
            arr[:n] = d[_entry_name(prefix, attr)]
            setattr(w.tables, attr, arr)
    w.tables.n_bodies = nb
    w.tables.free_bodies = d["body.free"].tolist()
    w.tables.n_shapes = ns
    w.tables.free_shapes = d["shape.free"].tolist()
    w.tables.n_joints = d["n_joints"]
    w.tables.free_joints = d["joint.free"].tolist()
    w.tables.j_threshold[w.tables.n_joints:] = np.inf
    w.tables.thresholds_set = None
    w.tables.s_geometry = geometry
    vcap = max(64, nv)
    w.tables.verts = grow(d["verts"], vcap)
    w.tables.normals = grow(d["normals"], vcap)
    w.tables.n_verts = nv
    gen = w.tables.s_gen
    w.tables.body_shapes = [[] for _ in range(_capacity(nb))]
    counts = d["body.shape_count"]
    starts = np.concatenate([[0], np.cumsum(counts)])
    listed = d["body.shape_list"].tolist()
    for b in np.flatnonzero(counts).tolist():
        w.tables.body_shapes[b] = [ShapeHandle(w, s, int(gen[s]), geometry[s]) for s in listed[starts[b]:starts[b + 1]]]
    sb = d["static_body"]
    w.tables.static_body = Body(w, sb, int(w.tables.gen[sb]))
    w.tables.contacts = _events.without_colouring(d["contact." + n] for n, _, _ in CONTACT_FIELDS)
    w.tables.bp, w.tables.proxy_shape = _build_broad_phase(d)
    w.step_count = d["step_count"]
    w.tables.last_dt = d["last_dt"]
    w.profile = d["profile"]
    w.tables.skip_apart = d["skip_apart"]
    w.tables.remove_outside = d["remove_outside"]
    w.tables.bounds = d["bounds"].copy() if d["bounds"].shape[0] == 4 else None
    w.tables.left = d["events.left.body"]
    w.tables.left_gen = d["events.left.generation"]
    sets = {}
    for set_name, kind in EVENT_SETS:
        dtype = {"begin": BEGIN_DTYPE, "end": END_DTYPE, "hit": HIT_DTYPE}[kind]
        fields = EVENT_FIELDS[kind]
        rec = np.zeros(d[f"events.{set_name}.{fields[0][0]}"].shape[0], dtype)
        for f, _, _ in fields:
            rec[f] = d[f"events.{set_name}.{f}"]
        sets[set_name] = rec
    w.tables.events = ContactEvents(sets["begin"], sets["end"], sets["hit"])
    w.tables.raw_events = None
    w.tables.pending_end = [sets["pending_end"]] if sets["pending_end"].size else []
    w.tables.query_boxes = None
    return w


def _build_broad_phase(d):
    """The dynamic tree from the proxies' data: boxes, flags, free list, move buffer and pair cache as saved,
    each tree rebuilt from its leaves' fat boxes (``_tree_of``)."""
    npx = d["n_proxies"]
    try:
        bp = DynamicTree(margin=d["broad.margin"], multiplier=d["broad.multiplier"], deferred=True)
    except CaromError as exc:
        raise _bad(str(exc)) from None
    cap = _capacity(npx)
    if cap > bp._flags.shape[0]:
        bp._grow(cap)
    flags = d["broad.flags"]
    bp._flags[:npx] = flags
    bp._lower[:npx] = d["broad.lower"]
    bp._upper[:npx] = d["broad.upper"]
    bp._n = npx
    bp._free = d["broad.free"].tolist()
    bp._count = int((flags != K.FREE).sum())
    moved = d["broad.moved"]
    bp._moved[:moved.size] = moved
    bp._moved_flag[moved] = 1
    bp._moved_meta[:] = (moved.size, int(d["broad.cache_real"]), 0)
    bp._cand = d["broad.cand"]
    bp._trees = [_tree_of(np.flatnonzero(flags == which), d["broad.fat_lower"], d["broad.fat_upper"], bp._leaf)
                 for which in (K.MOVING, K.STATIC)]
    proxy_shape = np.zeros(cap, np.int64)
    proxy_shape[:npx] = d["broad.proxy_shape"]
    return bp, proxy_shape


def _tree_of(proxies, fat_lo, fat_hi, leaf_of):
    """A tree of the given proxies' fat boxes: leaves in nodes [0, L) in proxy order, L - 1 inner nodes after
    them and the rest on the free list, then ``tree_rebuild`` links them (median splits; which pairs and hits
    the tree gives does not depend on its shape)."""
    n = proxies.size
    t = tree_new(max(16, 2 * n + 2))
    if n:
        t.lo[:n] = fat_lo[proxies]
        t.hi[:n] = fat_hi[proxies]
        t.proxy[:n] = proxies
        t.height[:n] = 0
        t.height[n:2 * n - 1] = 1         # (inner nodes: any height > 0 marks them for tree_rebuild)
        t.parent[:2 * n - 1] = -1
        leaf_of[proxies] = np.arange(n)
        t.meta[:] = (0, 2 * n - 1, n, 0, 0, 0)
        if n >= 2:
            tree_rebuild(t)
    return t
