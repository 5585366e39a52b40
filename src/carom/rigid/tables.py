"""The world's tables: every array and count a rigid world keeps, in one named object (``World.tables``).

A :class:`~carom.rigid.world.World` is a face over a :class:`WorldTables`: the bodies, shapes and joints are rows
of structure-of-arrays tables here, grown by doubling, and the handles (``Body``, ``ShapeHandle``, ``Joint``), the
joints' bookkeeping, the queries, snapshots, the renderer and the world itself read and write them through this
object and its few methods, never through each other's private attributes. The compiled step receives views of the
live rows (``World.step_tables``): these arrays are the state, the step's tuples are views of them.

Field groups (one row per body, shape or joint; ``n_bodies``, ``n_shapes``, ``n_joints`` rows used, the rest
capacity; a removed row goes on the ``free_*`` list and its generation ``gen``/``s_gen``/``j_gen`` moves on so
old handles go stale):

- bodies (``BODY_ARRAYS``): ``com`` (centre of mass, world frame), ``angle``, ``vel``, ``angvel``, ``inv_mass``,
  ``inv_inertia``, ``mass``, ``inertia``, ``local_center`` (centre of mass in the body frame), ``kind``
  (``STATIC``/``KINEMATIC``/``DYNAMIC`` of ``_step``), ``bullet``, ``alive``, ``gen``, ``force``, ``torque``,
  ``lin_damping``, ``ang_damping``, ``gravity_scale``, ``min_extent``, ``asleep``, ``sleep_time``, ``island``,
  ``can_sleep``, ``fixed_rotation``, ``mass_override`` (``body.MASS_SET`` …), ``sleep_threshold``, ``locks``;
  ``body_shapes`` (each body's shape handles) and ``body_data`` (``Body.data`` by row).
- shapes (``SHAPE_ARRAYS``, prefix ``s_``): ``s_body``, ``s_alive``, ``s_gen``, ``s_offset`` and ``s_count``
  (the shape's rows of ``verts``/``normals``, body frame), ``s_radius``, ``s_friction``, ``s_restitution``,
  ``s_density``, ``s_reach``, ``s_sensor``, ``s_category``, ``s_mask``, ``s_group``, ``s_tangent_speed``,
  ``s_rolling``, ``s_one_way``, ``s_chain``, ``s_ghost``, ``s_proxy`` (its broad-phase proxy); ``s_geometry``
  (the geometry objects) and ``shape_data``; the shared vertex table ``verts``, ``normals`` (``n_verts`` used).
- joints (``JOINT_ARRAYS``, prefix ``j_``): ``j_kind``, ``j_alive``, ``j_gen``, ``j_enabled``, ``j_body``,
  ``j_local``, ``j_param``, ``j_impulse``, ``j_reaction``, ``j_collide``, ``j_threshold``, ``j_report``;
  ``joint_data``; ``joined`` (sorted body-pair keys joints keep apart, None when to be rebuilt).
- the broad phase ``bp`` (a :class:`~carom.geometry.broadphase.DynamicTree`) and ``proxy_shape`` (proxy → shape);
  ``query_boxes`` (the boxes the queries last synced the tree with, None when stale).
- the last step: ``contacts`` (the contact table, a ``ContactTable`` of ``_layout``: the fields of
  ``snapshot.CONTACT_FIELDS``, then the colouring), ``approach`` (approach speeds),
  ``last_dt``; its events: ``events`` (built records), ``raw_events`` (what they are built from, until asked
  for), ``pending_end`` (end events of removed shapes).
- ``locked``: True while the world steps (nothing may change then: :meth:`WorldTables.check_unlocked`).
"""
from typing import TYPE_CHECKING
if TYPE_CHECKING:  # (annotations only)
    from typing import Tuple
    from .._types import Any, Optional
import math

import numpy as np

from ..constants import SLEEP_LINEAR_TOLERANCE
from ..errors import WorldLockedError
from ..geometry.broadphase import DynamicTree
from . import _step
from .joints._common import LOCAL_WIDTH, PARAM_WIDTH, IMPULSE_WIDTH
from .events import empty_contacts, empty_events

#: Every collision category bit set: the default mask (a shape collides with all categories).
ALL_CATEGORIES = np.uint64(0xFFFFFFFFFFFFFFFF)


def grow(arr, size):
    """A copy of ``arr`` with ``size`` rows: its rows first, zeros after (tables grow by doubling)."""
    out = np.zeros((size,) + arr.shape[1:], dtype=arr.dtype)
    out[: arr.shape[0]] = arr
    return out


class WorldTables:
    """The state of one rigid world as tables (see the module's docstring for every field).

    Made by the world (``World.tables``); its fields are public to the rooms of :mod:`carom.rigid` and to the
    renderer, not to users (who go through the handles, and the bulk properties ``World.positions`` …). A
    field may be replaced by a larger array when its table grows: read it from here each time, do not keep it.
    """

    def __init__(self) -> None:
        self.locked = False
        cap = 16
        self.com = np.zeros((cap, 2))
        self.angle = np.zeros(cap)
        self.vel = np.zeros((cap, 2))
        self.angvel = np.zeros(cap)
        self.inv_mass = np.zeros(cap)
        self.inv_inertia = np.zeros(cap)
        self.mass = np.zeros(cap)
        self.inertia = np.zeros(cap)
        self.local_center = np.zeros((cap, 2))
        self.kind = np.zeros(cap, np.int64)
        self.bullet = np.zeros(cap, np.bool_)
        self.alive = np.zeros(cap, np.bool_)
        self.gen = np.zeros(cap, np.int64)
        self.force = np.zeros((cap, 2))
        self.torque = np.zeros(cap)
        self.lin_damping = np.zeros(cap)
        self.ang_damping = np.zeros(cap)
        self.gravity_scale = np.ones(cap)
        self.min_extent = np.zeros(cap)
        self.asleep = np.zeros(cap, np.bool_)       # the body's island is asleep
        self.sleep_time = np.zeros(cap)             # seconds the body has been slow
        self.island = np.zeros(cap, np.int64)       # label of the island a sleeping body fell asleep with
        self.can_sleep = np.ones(cap, np.bool_)     # Body.sleep_enabled
        self.fixed_rotation = np.zeros(cap, np.bool_)
        self.sleep_threshold = np.full(cap, SLEEP_LINEAR_TOLERANCE)   # Body.sleep_threshold (m/s)
        self.locks = np.zeros(cap, np.int8)        # Body.lock_x (LOCK_X) and Body.lock_y (LOCK_Y)
        self.mass_override = np.zeros(cap, np.int64)   # MASS_SET | INERTIA_SET | CENTER_SET
        self.body_arrays = ("com", "angle", "vel", "angvel", "inv_mass", "inv_inertia", "mass",
                             "inertia", "local_center", "kind", "bullet", "alive", "gen", "force",
                             "torque", "lin_damping", "ang_damping", "gravity_scale", "min_extent",
                             "asleep", "sleep_time", "island", "can_sleep", "fixed_rotation",
                             "mass_override", "sleep_threshold", "locks")
        #: Body.data and ShapeHandle.data by row: Python objects, kept by pickle and copy, not by snapshots
        self.body_data: dict = {}
        self.shape_data: dict = {}
        self.n_bodies = 0
        self.free_bodies: list = []
        self.body_shapes: list = [[] for _ in range(cap)]
        scap = 16
        self.s_body = np.zeros(scap, np.int64)
        self.s_alive = np.zeros(scap, np.bool_)
        self.s_gen = np.zeros(scap, np.int64)
        self.s_offset = np.zeros(scap, np.int64)
        self.s_count = np.zeros(scap, np.int64)
        self.s_radius = np.zeros(scap)
        self.s_friction = np.zeros(scap)
        self.s_restitution = np.zeros(scap)
        self.s_density = np.zeros(scap)
        self.s_reach = np.zeros(scap)
        self.s_sensor = np.zeros(scap, np.bool_)
        self.s_category = np.ones(scap, np.uint64)
        self.s_mask = np.full(scap, ALL_CATEGORIES, np.uint64)
        self.s_group = np.zeros(scap, np.int64)
        self.s_tangent_speed = np.zeros(scap)
        self.s_rolling = np.zeros(scap)
        self.s_one_way = np.zeros((scap, 2))
        # chain segments (Body.add_chain): the bits _step.CHAIN | CHAIN_PREV | CHAIN_NEXT, and the ghost
        # vertices (the previous segment's first vertex, the next segment's second vertex; body frame)
        self.s_chain = np.zeros(scap, np.int64)
        self.s_ghost = np.zeros((scap, 4))
        self.shape_arrays: "Tuple[str, ...]" = ("s_body", "s_alive", "s_gen", "s_offset", "s_count", "s_radius",
                              "s_friction", "s_restitution", "s_density", "s_reach", "s_sensor",
                              "s_category", "s_mask", "s_group", "s_tangent_speed", "s_rolling",
                              "s_one_way", "s_chain", "s_ghost")
        self.n_shapes = 0
        self.free_shapes: list = []
        self.s_geometry: list = []
        self.verts = np.zeros((64, 2))
        self.normals = np.zeros((64, 2))
        self.n_verts = 0
        self.contacts = empty_contacts()
        # fat boxes are stretched by one displacement, not Box2D v2's four: a fast body's long box meets many
        # shapes it never touches (smash: 32 → 21 ms per step), and its speculative margin covers the motion
        # (deferred insertion: the step gives new shapes their leaves, ``DynamicTree``)
        self.bp = DynamicTree(multiplier=1.0, deferred=True)
        self.s_proxy = np.zeros(scap, np.int64)
        self.shape_arrays += ("s_proxy",)
        self.proxy_shape = np.zeros(16, np.int64)
        self.last_dt = 0.0         # (the last step's dt: contact forces are its impulses over it)
        self.events = empty_events()
        #: the last step's raw events until someone asks for them (``events.settle``)
        self.raw_events: "Optional[tuple]" = None
        self.pending_end: list = []
        #: each contact point's approach speed in the last step (rows of the contact table; empty when the step
        #: solved nothing, None when unknown: no step since the world was made or restored)
        self.approach: "Optional[np.ndarray]" = None
        # the joint table (carom.rigid.joints): kind, alive, generation, enabled, the two bodies, anchors and axis
        # in the bodies' frames, settings, accumulated impulses (warm starting), the last step's reaction (force,
        # torque), collide_connected, the force and torque thresholds and whether crossing one only reports
        jcap = 16
        self.j_kind = np.zeros(jcap, np.int64)
        self.j_alive = np.zeros(jcap, np.bool_)
        self.j_gen = np.zeros(jcap, np.int64)
        self.j_enabled = np.zeros(jcap, np.bool_)
        self.j_body = np.zeros((jcap, 2), np.int64)
        self.j_local = np.zeros((jcap, LOCAL_WIDTH))
        self.j_param = np.zeros((jcap, PARAM_WIDTH))
        self.j_impulse = np.zeros((jcap, IMPULSE_WIDTH))
        self.j_reaction = np.zeros((jcap, 3))
        self.j_collide = np.zeros(jcap, np.bool_)
        self.j_threshold = np.full((jcap, 2), np.inf)
        self.j_report = np.zeros(jcap, np.bool_)
        self.joint_arrays = ("j_kind", "j_alive", "j_gen", "j_enabled", "j_body", "j_local", "j_param",
                              "j_impulse", "j_reaction", "j_collide", "j_threshold", "j_report")
        self.n_joints = 0
        self.free_joints: list = []
        #: Joint.data by row (like body_data)
        self.joint_data: dict = {}
        #: the body pairs joints keep from colliding, sorted (``joints.bookkeeping.joined_keys``), or None when to be rebuilt
        self.joined = None
        #: whether a joint row may hold a finite force or torque threshold (``joints.bookkeeping.check_thresholds``),
        #: or None when to be found again: set to None wherever thresholds are written
        self.thresholds_set = None
        #: the shapes' tight boxes (lower, upper) as the queries last brought the broad phase up to date with them
        #: (``carom.rigid.queries``), or None when a shape may have moved since: set to None by the step and by
        #: everything that moves, adds or removes a shape; not saved
        self.query_boxes = None

        #: separated pairs skip their collision test while provably still apart (``_step._still_apart``); False
        #: runs every test (for tests that compare the two; costs a pass over the contact table per step)
        self.skip_apart = True
        #: the world bounds (xmin, ymin, xmax, ymax), or None; the bodies (rows, generations) that left them in
        #: the last step; whether those are removed (``World.bounds``)
        self.bounds: "Optional[np.ndarray]" = None
        self.left = np.zeros(0, np.int64)
        self.left_gen = np.zeros(0, np.int64)
        self.remove_outside = False
        #: the world's static body (``World.static_body``: a Body handle), set once the world has made it
        self.static_body: "Any" = None

    def check_unlocked(self):
        """Refuse a change while the world steps (``WorldLockedError``): handles and services call this first."""
        if self.locked:
            raise WorldLockedError("the world is stepping: bodies and shapes can change only between steps")

    def origin_frame(self, b):
        """(origin, cos θ, sin θ) of body b."""
        x, y, c, s = self.origin_transform(b)
        return np.array((x, y)), c, s

    def origin_transform(self, b):
        """(x, y, cos θ, sin θ) of body b's origin, as Python floats."""
        a = float(self.angle[b])
        c, s = math.cos(a), math.sin(a)
        lx, ly = float(self.local_center[b, 0]), float(self.local_center[b, 1])
        return float(self.com[b, 0]) - (c * lx - s * ly), float(self.com[b, 1]) - (s * lx + c * ly), c, s

    def wake(self, b, partners=False):
        """Wake body b's sleeping island (every body sharing its island label); with ``partners`` also the
        islands of the bodies it touches (it is being removed or moved away: they may rest on it). Touching
        a sleeping body otherwise wakes it in the next step's narrow phase."""
        n = self.n_bodies
        if self.asleep[b]:
            group = self.asleep[:n] & (self.island[:n] == self.island[b])
            self.asleep[:n][group] = False
            self.sleep_time[:n][group] = 0.0
        self.sleep_time[b] = 0.0
        if partners and self.contacts.keys.size and self.asleep[:n].any():
            for o in self.touching(b):
                if self.asleep[o]:
                    self.wake(int(o))

    def touching(self, b):
        """The bodies with which body b has contacts with points in the last step's table (sorted, unique)."""
        keys, count = self.contacts.keys, self.contacts.count
        ba = self.s_body[keys >> _step.KEY_SHIFT]
        bb = self.s_body[keys & _step.KEY_MASK]
        touching = count > 0
        return np.unique(np.concatenate([bb[touching & (ba == b)], ba[touching & (bb == b)]]))

    def wake_rows(self, rows, partners=False):
        """:meth:`wake` for the bodies of ``rows`` at once, with the same outcome as one by one: the sleeping
        islands of those bodies (and with ``partners`` of the bodies they touch) wake."""
        n = self.n_bodies
        asleep = self.asleep[:n]
        if rows.size and asleep.any():
            woken = rows
            if partners and self.contacts.keys.size:
                keys, count = self.contacts.keys, self.contacts.count
                ba = self.s_body[keys >> _step.KEY_SHIFT]
                bb = self.s_body[keys & _step.KEY_MASK]
                mine = np.zeros(n, np.bool_)
                mine[rows] = True
                touching = count > 0
                woken = np.concatenate([rows, bb[touching & mine[ba]], ba[touching & mine[bb]]])
            hit = woken[asleep[woken]]
            if hit.size:
                group = asleep & np.isin(self.island[:n], self.island[hit])
                asleep[group] = False
                self.sleep_time[:n][group] = 0.0
        self.sleep_time[rows] = 0.0

    def wake_joint(self, i):
        """Wake the live bodies of joint row i (a joint's bodies sleep and wake together)."""
        for e in range(2):
            b = int(self.j_body[i, e])
            if self.alive[b]:
                self.wake(b)
