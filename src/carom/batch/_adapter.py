"""The batch's one door into a :class:`carom.World`'s state and the rigid step's internals.

Everything :mod:`carom.batch` needs of a world and of the step is read or written here, through the world's named
interfaces, and nowhere else in the batch:

* the world: ``World.step_tables()`` (the step's body, shape and tree tables, shape → proxy, proxy → shape), the
  public settings (``substeps``, ``gravity``, ``friction_mixing``, ``restitution_mixing`` through
  ``rigid.world.MIX_RULES``, ``sleep_enabled``, ``pre_solve``, ``bounds``, ``has_handlers``),
  ``World.refused_step_error``, and its tables (``World.tables``: ``contacts``, ``approach``, ``bp`` with
  ``set_candidates``, ``raw_events``, ``events``, ``pending_end``, ``query_boxes``, ``last_dt``, ``skip_apart``,
  ``check_unlocked()``); the joints' bookkeeping (``joints.bookkeeping.table``, ``joined_keys``) and
  ``bulk.rows_of``;
* the step (``rigid/_step.py``): ``step_kernel`` (called as is, on one thread, without a pre-solve hook),
  ``STAGES`` (the length of its clock), ``BODY_OK``, ``CSEP`` (the contact cache's separation column, cleared
  before a step when ``skip_apart`` is off), ``event_rows``, ``KEY_SHIFT``, ``KEY_MASK``; the body, tree and
  contact tables' fields by name (``BodyTable``, ``TreeTable``, ``ContactTable`` of ``rigid/_layout.py``: of the
  contacts ``keys``, ``count``, ``touching``, ``sensor``, ``cache``, ``step_impulse``).
"""
from __future__ import annotations

import math
from collections import namedtuple
from typing import Any

import numpy as np

from .._jit import njit
from ..geometry.aabb import core_aabb
from ..geometry._tree_pairs import load_grid
from ..errors import CaromError
from ..rigid import _step, bulk
from ..rigid import _continuous
from ..rigid._layout import ContactTable, TreeTable, narrow_part
from ..rigid.events import empty_events
from ..rigid.joints import bookkeeping, revolute
from ..rigid.joints import _apart as joints_apart
from ..rigid.world import MIX_RULES, World

#: One world's tables as a batched step reads and writes them: the step's body, shape and tree tables, shape →
#: proxy and proxy → shape, last step's contact table, the joint table and the body pairs joints keep apart.
WorldStepTables = namedtuple("WorldStepTables", ["bodies", "shapes", "tree", "shape_proxy", "proxy_shape",
                                                 "contacts", "joints", "joined"])

#: the length of the step's clock array (one slot per stage, plus the start)
CLOCK_LENGTH = len(_step.STAGES) + 1
BODY_OK = _step.BODY_OK
#: a world's step stopped before its continuous or sensor stage, whose code was not loaded (which
#: ``world_tables`` prevents): not one of ``first_bad_body``'s codes
STEP_UNFINISHED = 99
#: the step kernel, called for each world of a batch
step_kernel = _step.step_kernel
CSEP = _step.CSEP


def world_tables(world: World) -> tuple[tuple, WorldStepTables]:
    """``(settings, tables)`` of a world for a batched step: settings = (substeps, gravity x, gravity y,
    friction rule, restitution rule, sleep enabled, skip apart), tables = a :data:`WorldStepTables`, the arrays the step reads and writes (views of the world's
    own, so the step moves the world's bodies in place). Refuses what a batch does not run: a pre-solve hook,
    event handlers and ``bounds`` (they run in Python after a step)."""
    world.tables.check_unlocked()
    if world.pre_solve is not None:
        raise CaromError("a world with a pre-solve hook cannot be stepped in a WorldBatch (the hook is per world)")
    if world.has_handlers:
        raise CaromError("a world with event handlers (World.on) cannot be stepped in a WorldBatch: handlers "
                         "run in Python after each step; read world(i).contact_events() instead")
    if world.bounds is not None:
        raise CaromError("a world with bounds cannot be stepped in a WorldBatch (bounds are checked in Python)")
    bodies, shapes, tree, proxy, proxy_shape = world.step_tables()
    tables = WorldStepTables(bodies, shapes, tree, proxy, proxy_shape, world.tables.contacts,
                             bookkeeping.table(world.tables),
              bookkeeping.joined_keys(world))
    if world.tables.n_joints:
        joints_apart.load(bodies, tables.joints)       # (the joints' code, compiled apart from the step)
    # (the continuous and sensor stages' code, compiled apart and loaded by World.step when a step needs it: a
    # batch's step cannot stop for Python, so it is loaded before)
    _continuous.load(bodies, shapes, tree, proxy_shape, narrow_part(world.tables.contacts))
    _step.load_solve(world._step_args(1 / 60, 1, np.zeros(CLOCK_LENGTH, np.int64)))   # (the solve, likewise)
    load_grid(tree, 1)                                 # (the broad phase's grid search, likewise)
    gravity = world.gravity
    settings = (int(world.substeps), float(gravity[0]), float(gravity[1]),
                int(MIX_RULES[world.friction_mixing]), int(MIX_RULES[world.restitution_mixing]),
                bool(world.sleep_enabled), bool(world.tables.skip_apart))
    return settings, tables


def store_results(world: World, tables: WorldStepTables, previous: Any, approach: np.ndarray, steps: int, dt: float,
                  gravity: np.ndarray) -> None:
    """Bring a world's Python side up to date after ``steps`` batched steps (the last of ``dt`` seconds): its
    contact table, the broad phase's pair cache, the approach speeds, the step count and the last step's
    events (from ``previous``, the table before the last step). ``gravity``
    is the batch's setting for this world."""
    t = world.tables
    t.contacts = tables.contacts
    t.bp.set_candidates(tables.tree.cand)
    t.approach = approach
    t.query_boxes = None
    t.events = None
    pending, t.pending_end = t.pending_end, []
    if steps >= 1 and previous is not None:
        t.raw_events = (previous.keys, previous.touching, previous.sensor, tables.contacts, approach,
                        world.hit_event_threshold, pending)
    else:
        t.raw_events = None
        t.events = empty_events()
    world.step_count += steps
    if steps:
        t.last_dt = dt
    world.gravity = np.array(gravity, dtype=np.float64)


def check_rows(world: World, rows: Any) -> None:
    """Raise the error ``World.set_state`` would raise for body rows that are not live bodies of ``world``, each
    once (``World._rows_of``)."""
    bulk.rows_of(world, rows, unique=True)


def refused(world: World, code: int, body: int) -> Exception:
    """The error ``World.step`` raises for a step the kernel refused (``code`` from ``first_bad_body``), or
    RuntimeError for a step left unfinished (``STEP_UNFINISHED``: code compiled apart was not loaded)."""
    if code == STEP_UNFINISHED:
        return RuntimeError("carom: a batched step stopped for code compiled apart that was not loaded")
    return world.refused_step_error(code, body)


@njit
def with_results(tables, contacts, cand):
    """The tables of a world after a step: the new contact table, and the broad-phase tree tuple with the pair
    cache the step handed back (``cand``)."""
    tree = tables.tree
    new_tree = TreeTable(tree.moving, tree.static, tree.lower, tree.upper, tree.flags, tree.leaf, tree.moved,
                         tree.moved_flag, tree.moved_meta, cand, tree.margin, tree.multiplier)
    return WorldStepTables(tables.bodies, tables.shapes, new_tree, tables.shape_proxy, tables.proxy_shape, contacts,
                           tables.joints, tables.joined)


@njit
def with_cand(tree, cand):
    """The broad-phase tree tuple with the pair cache ``cand``."""
    return TreeTable(tree.moving, tree.static, tree.lower, tree.upper, tree.flags, tree.leaf, tree.moved,
                     tree.moved_flag, tree.moved_meta, cand, tree.margin, tree.multiplier)


@njit
def clear_separations(contacts):
    """What ``World.step`` does when ``_skip_apart`` is off: every pair is tested again."""
    contacts.cache[:, CSEP] = -np.inf


@njit
def body_arrays(tables):
    """(com, angle, velocity, angular velocity, local centre, alive) of a world's body table."""
    b = tables.bodies
    return b.com, b.angle, b.vel, b.angvel, b.local_center, b.alive


@njit
def begin_end(previous, contacts):
    """The rows of the touch events of a world's last step: (begin rows of ``contacts``, end rows of
    ``previous``), as ``World.contact_events`` finds them (``_step.event_rows``), and the two tables' keys."""
    begin, end, _, _, _ = _step.event_rows(previous.keys, previous.touching, contacts.keys, contacts.touching,
                                           contacts.count, contacts.step_impulse, np.zeros((0, 2)), np.inf)
    return begin, end, previous.keys, contacts.keys


@njit
def key_shapes(key):
    """The two shape rows of a contact key."""
    return key >> _step.KEY_SHIFT, key & _step.KEY_MASK


@njit
def wake(tables, body):
    """What ``World._wake(body)`` does: wake the body's sleeping island (its bodies' sleep timers to 0) and set
    the body's own sleep timer to 0."""
    b = tables.bodies
    asleep, sleep_time, island = b.asleep, b.sleep_time, b.island
    if asleep[body]:
        for o in range(asleep.shape[0]):
            if asleep[o] and island[o] == island[body]:
                asleep[o] = False
                sleep_time[o] = 0.0
    sleep_time[body] = 0.0


@njit
def lander_arrays(tables):
    """(com, angle, velocity, angular velocity, inverse mass, inverse inertia, local centre, asleep) of a
    world's body table."""
    b = tables.bodies
    return b.com, b.angle, b.vel, b.angvel, b.inv_mass, b.inv_inertia, b.local_center, b.asleep


# --- a world restored in place from a template of the same layout (the vector environments' resets) ----------
def copy_tables(tables: WorldStepTables) -> WorldStepTables:
    """A deep copy of a world's step tables (every array copied): the template a batch's worlds of the same layout
    are restored from in place (:func:`restore_world`)."""
    def copied(value: Any) -> Any:
        if isinstance(value, np.ndarray):
            return value.copy()
        if isinstance(value, tuple):
            return type(value)(*(copied(v) for v in value))
        return value
    return copied(tables)


def layout(tables: WorldStepTables) -> tuple:
    """The shapes and types of every array of a world's step tables: two worlds whose layouts are equal can be
    restored into each other in place."""
    def of(value: Any) -> Any:
        if isinstance(value, np.ndarray):
            return (value.shape, value.dtype.str)
        if isinstance(value, tuple):
            return tuple(of(v) for v in value)
        return type(value).__name__
    return of(tables)


@njit
def _tree_into(dst, src):
    dst.lo[:] = src.lo
    dst.hi[:] = src.hi
    dst.parent[:] = src.parent
    dst.child1[:] = src.child1
    dst.child2[:] = src.child2
    dst.height[:] = src.height
    dst.proxy[:] = src.proxy
    dst.meta[:] = src.meta


@njit
def restore_world(template, tables, previous, approach, i):
    """World i of a batch put back, in place, into the state of ``template`` (a :func:`copy_tables` of a world
    of the same :func:`layout`, taken before its first step): every array of its body, shape, tree and joint tables
    overwritten with the template's, its contact table and pair cache new empty ones, no approach speeds. World i
    then steps bitwise as the template's world would (the step reads nothing else)."""
    t = tables[i]
    b, s = t.bodies, template.bodies
    b.com[:] = s.com
    b.angle[:] = s.angle
    b.vel[:] = s.vel
    b.angvel[:] = s.angvel
    b.inv_mass[:] = s.inv_mass
    b.inv_inertia[:] = s.inv_inertia
    b.local_center[:] = s.local_center
    b.kind[:] = s.kind
    b.bullet[:] = s.bullet
    b.alive[:] = s.alive
    b.force[:] = s.force
    b.torque[:] = s.torque
    b.lin_damping[:] = s.lin_damping
    b.ang_damping[:] = s.ang_damping
    b.gravity_scale[:] = s.gravity_scale
    b.min_extent[:] = s.min_extent
    b.asleep[:] = s.asleep
    b.sleep_time[:] = s.sleep_time
    b.island[:] = s.island
    b.can_sleep[:] = s.can_sleep
    b.sleep_threshold[:] = s.sleep_threshold
    b.locks[:] = s.locks
    h, g = t.shapes, template.shapes
    h.body[:] = g.body
    h.alive[:] = g.alive
    h.offset[:] = g.offset
    h.vert_count[:] = g.vert_count
    h.radius[:] = g.radius
    h.friction[:] = g.friction
    h.restitution[:] = g.restitution
    h.reach[:] = g.reach
    h.sensor[:] = g.sensor
    h.category[:] = g.category
    h.mask[:] = g.mask
    h.group[:] = g.group
    h.verts[:] = g.verts
    h.normals[:] = g.normals
    h.tangent_speed[:] = g.tangent_speed
    h.rolling[:] = g.rolling
    h.one_way[:] = g.one_way
    h.ghost[:] = g.ghost
    h.chain[:] = g.chain
    r, q = t.tree, template.tree
    _tree_into(r.moving, q.moving)
    _tree_into(r.static, q.static)
    r.lower[:] = q.lower
    r.upper[:] = q.upper
    r.flags[:] = q.flags
    r.leaf[:] = q.leaf
    r.moved[:] = q.moved
    r.moved_flag[:] = q.moved_flag
    r.moved_meta[:] = q.moved_meta
    t.shape_proxy[:] = template.shape_proxy
    t.proxy_shape[:] = template.proxy_shape
    j, k = t.joints, template.joints
    j.kind[:] = k.kind
    j.active[:] = k.active
    j.body[:] = k.body
    j.local[:] = k.local
    j.param[:] = k.param
    j.impulse[:] = k.impulse
    j.reaction[:] = k.reaction
    c = template.contacts
    contacts = ContactTable(c.keys.copy(), c.count.copy(), c.ids.copy(), c.normal_impulse.copy(),
                            c.tangent_impulse.copy(), c.normal.copy(), c.points.copy(), c.separation.copy(),
                            c.touching.copy(), c.sensor.copy(), c.cache.copy(), c.step_impulse.copy(), c.perm.copy(),
                            c.pair.copy(), c.colour_start.copy(), c.solved.copy(), c.body_flags.copy())
    tree = TreeTable(r.moving, r.static, r.lower, r.upper, r.flags, r.leaf, r.moved, r.moved_flag, r.moved_meta,
                     q.cand.copy(), r.margin, r.multiplier)
    tables[i] = WorldStepTables(t.bodies, t.shapes, tree, t.shape_proxy, t.proxy_shape, contacts, t.joints, t.joined)
    previous[i] = contacts
    approach[i] = np.zeros((0, 2))


@njit
def body_extent(tables):
    """The bodies' smallest extents (``min_extent``) and forces."""
    return tables.bodies.min_extent, tables.bodies.force


#: the revolute joint's motor columns of the joint table's ``param``
REVOLUTE_MOTOR_SPEED = revolute.MOTOR_SPEED
REVOLUTE_MAX_MOTOR_TORQUE = revolute.MAX_MOTOR_TORQUE


@njit
def joint_arrays(tables):
    """(settings, bodies) of a world's joint table: ``param`` (J, PARAM_WIDTH) and ``body`` (J, 2)."""
    return tables.joints.param, tables.joints.body


@njit
def contact_points(tables):
    """(keys, point counts, point separations, sensor flags) of a world's contact table after its last step."""
    c = tables.contacts
    return c.keys, c.count, c.separation, c.sensor


@njit
def chain_arrays(tables):
    """(one-way directions, ghost vertices) of a world's shapes (chain segments: ``Body.add_chain``)."""
    return tables.shapes.one_way, tables.shapes.ghost


@njit
def touch_flags(previous, contacts):
    """(keys, touching flags) of a world's contact table before its last step and after it (both in key order):
    what ``_step.event_rows`` merges into begin and end events."""
    return previous.keys, previous.touching, contacts.keys, contacts.touching


@njit
def put_static_segment(tables, shape, ax, ay, bx, by):
    """Shape row ``shape`` of a world, a segment on a static body at the origin, moved to (ax, ay)–(bx, by) as
    ``Body.add_shape`` would place a new ``Segment`` there: its two vertices, its edge normals
    (``shapes.edge_normals``: each edge turned clockwise over its length), its reach (the farther vertex's
    distance from the body's centre, the origin) and its broad-phase box (``aabb.core_aabb``). Returns the
    segment's half smallest extent (``mass.parts_mass``: half the smaller side of its box), for its body's
    ``min_extent``."""
    h = tables.shapes
    o = h.offset[shape]
    verts, normals = h.verts, h.normals
    verts[o, 0], verts[o, 1], verts[o + 1, 0], verts[o + 1, 1] = ax, ay, bx, by
    ex, ey = bx - ax, by - ay
    length = math.sqrt(ey * ey + ex * ex)
    normals[o, 0], normals[o, 1] = ey / length, -ex / length
    ex, ey = ax - bx, ay - by
    length = math.sqrt(ey * ey + ex * ex)
    normals[o + 1, 0], normals[o + 1, 1] = ey / length, -ex / length
    h.reach[shape] = max(math.hypot(ax, ay), math.hypot(bx, by)) + 0.0
    lx, ly, ux, uy = core_aabb(verts[o:o + 2], 0.0, 0.0, 0.0, 1.0, 0.0)
    q = tables.shape_proxy[shape]
    lower, upper = tables.tree.lower, tables.tree.upper
    lower[q, 0], lower[q, 1], upper[q, 0], upper[q, 1] = lx, ly, ux, uy
    return 0.5 * min(max(ax, bx) - min(ax, bx), max(ay, by) - min(ay, by))


@njit
def shape_bodies(tables):
    """The body row of each of a world's shapes."""
    return tables.shapes.body
