"""The batch's only door into a :class:`carom.World`'s private state and the rigid step's internals.

Everything :mod:`carom.batch` needs from ``rigid/world.py`` and ``rigid/_step.py`` is read or written here and
nowhere else, so that a change of the world's layout (issue 48 puts the tables behind a named interface) is
mended in this one module. What it touches, by name:

* ``World._kernel_args()`` (bodies, shapes, broad-phase tree, shape → proxy, proxy → shape: the step's views),
  ``World._contacts`` (last step's contact table), ``World._joint_table()``, ``World._joined_keys()``;
* the settings ``World._substeps``, ``World._gravity``, ``World._friction_mixing``,
  ``World._restitution_mixing`` (through ``rigid.world.MIX_RULES``), ``World.sleep_enabled``,
  ``World._skip_apart``, ``World._pre_solve_address``, ``World._handlers``, ``World._bounds``,
  ``World._check_unlocked()``, ``World._refused_step()``, ``World._rows_of()``;
* after a batched step: ``World._contacts``, ``World._approach``, ``World._bp._cand``, ``World._raw_events``,
  ``World._events``, ``World._empty_events()``, ``World._pending_end``, ``World._query_boxes``, ``World.step_count``,
  ``World._last_dt``, ``World._gravity``;
* of ``rigid/_step.py``: ``event_rows``, ``KEY_SHIFT``, ``KEY_MASK``, ``step_kernel`` (called as is, on one thread, without a pre-solve hook),
  ``STAGES`` (the length of its clock), ``BODY_OK``, ``CACHE`` and ``CSEP`` (the contact cache's separation
  column, cleared before a step when ``_skip_apart`` is off), the broad-phase tree tuple's member 9 (the pair
  cache the step hands back) and the body table's members 0, 1, 2, 3, 6, 9 (com, angle, velocity, angular
  velocity, local centre, alive) for the bulk arrays, and 4, 5, 16, 17, 18 (inverse mass, inverse inertia, asleep,
  sleep time, island)
  for the environments' engines; the contact table's members 0, 1, 8, 11 (keys, count, touching, step impulse).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .._jit import njit
from ..errors import CaromError
from ..rigid import _step
from ..rigid.world import MIX_RULES, World

#: the length of the step's clock array (one slot per stage, plus the start)
CLOCK_LENGTH = len(_step.STAGES) + 1
BODY_OK = _step.BODY_OK
#: the step kernel, called for each world of a batch
step_kernel = _step.step_kernel
CACHE, CSEP = _step.CACHE, _step.CSEP


def world_tables(world: World) -> tuple[tuple, tuple]:
    """``(settings, tables)`` of a world for a batched step: settings = (substeps, gravity x, gravity y,
    friction rule, restitution rule, sleep enabled, skip apart), tables = (bodies, shapes, tree, shape → proxy,
    proxy → shape, contacts, joints, joined keys), the arrays the step reads and writes (views of the world's
    own, so the step moves the world's bodies in place). Refuses what a batch does not run: a pre-solve hook,
    event handlers and ``bounds`` (they run in Python after a step)."""
    world._check_unlocked()
    if world._pre_solve_address:
        raise CaromError("a world with a pre-solve hook cannot be stepped in a WorldBatch (the hook is per world)")
    if world._handlers:
        raise CaromError("a world with event handlers (World.on) cannot be stepped in a WorldBatch: handlers "
                         "run in Python after each step; read world(i).contact_events() instead")
    if world._bounds is not None:
        raise CaromError("a world with bounds cannot be stepped in a WorldBatch (bounds are checked in Python)")
    bodies, shapes, tree, proxy, proxy_shape = world._kernel_args()
    tables = (bodies, shapes, tree, proxy, proxy_shape, world._contacts, world._joint_table(), world._joined_keys())
    settings = (int(world._substeps), float(world._gravity[0]), float(world._gravity[1]),
                int(MIX_RULES[world._friction_mixing]), int(MIX_RULES[world._restitution_mixing]),
                bool(world.sleep_enabled), bool(world._skip_apart))
    return settings, tables


def store_results(world: World, tables: tuple, previous: Any, approach: np.ndarray, steps: int, dt: float,
                  gravity: np.ndarray) -> None:
    """Bring a world's Python side up to date after ``steps`` batched steps (the last of ``dt`` seconds): its
    contact table, the broad phase's pair cache, the approach speeds, the step count and the last step's
    events (from ``previous``, the table before the last step). ``gravity``
    is the batch's setting for this world."""
    world._contacts = tables[5]
    world._bp._cand = tables[2][9]
    world._approach = approach  # type: ignore[assignment]
    world._query_boxes = None
    world._events = None
    pending, world._pending_end = world._pending_end, []
    if steps >= 1 and previous is not None:
        world._raw_events = (previous[0], previous[8], previous[9], tables[5], approach, world.hit_event_threshold,
                             pending)
    else:
        world._raw_events = None
        world._events = world._empty_events()
    world.step_count += steps
    if steps:
        world._last_dt = dt
    world._gravity = np.array(gravity, dtype=np.float64)


def check_rows(world: World, rows: Any) -> None:
    """Raise the error ``World.set_state`` would raise for body rows that are not live bodies of ``world``, each
    once (``World._rows_of``)."""
    world._rows_of(rows, unique=True)


def refused(world: World, code: int, body: int) -> Exception:
    """The error ``World.step`` raises for a step the kernel refused (``code`` from ``first_bad_body``)."""
    return world._refused_step(code, body)


@njit
def with_results(tables, contacts, cand):
    """The tables of a world after a step: the new contact table, and the broad-phase tree tuple with the pair
    cache the step handed back (member 9)."""
    tree = tables[2]
    new_tree = (tree[0], tree[1], tree[2], tree[3], tree[4], tree[5], tree[6], tree[7], tree[8], cand, tree[10],
                tree[11])
    return (tables[0], tables[1], new_tree, tables[3], tables[4], contacts, tables[6], tables[7])


@njit
def clear_separations(contacts):
    """What ``World.step`` does when ``_skip_apart`` is off: every pair is tested again."""
    contacts[CACHE][:, CSEP] = -np.inf


@njit
def body_arrays(tables):
    """(com, angle, velocity, angular velocity, local centre, alive) of a world's body table."""
    bodies = tables[0]
    return bodies[0], bodies[1], bodies[2], bodies[3], bodies[6], bodies[9]


@njit
def begin_end(previous, contacts):
    """The rows of the touch events of a world's last step: (begin rows of ``contacts``, end rows of
    ``previous``), as ``World.contact_events`` finds them (``_step.event_rows``), and the two tables' keys."""
    begin, end, _, _, _ = _step.event_rows(previous[0], previous[8], contacts[0], contacts[8], contacts[1],
                                           contacts[11], np.zeros((0, 2)), np.inf)
    return begin, end, previous[0], contacts[0]


@njit
def key_shapes(key):
    """The two shape rows of a contact key."""
    return key >> _step.KEY_SHIFT, key & _step.KEY_MASK


@njit
def wake(tables, body):
    """What ``World._wake(body)`` does: wake the body's sleeping island (its bodies' sleep timers to 0) and set
    the body's own sleep timer to 0."""
    b = tables[0]
    asleep, sleep_time, island = b[16], b[17], b[18]
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
    b = tables[0]
    return b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[16]
