"""Contacts seen from Python: the contact table's empty forms, the event records (their dtypes) and how they are
found from two steps' tables, the contact data arrays and contact forces.

Functions over a world's tables (``t``: :class:`~carom.rigid.tables.WorldTables`); the world calls them and keeps
their results there. Events are not built in the step: after it the world keeps last step's keys, touch and
sensor flags beside the new table (``t.raw_events``), and :func:`settle` builds the records when someone asks
(``World.contact_events``, a handler) or before a shape slot they name can be reused.
"""
from collections import namedtuple

import numpy as np

from . import _step, _solver
from ._layout import CONTACT_NAMES, ContactTable

_PAIR_FIELDS = [("shape_a", np.int64), ("shape_b", np.int64), ("body_a", np.int64), ("body_b", np.int64)]
#: begin-touch records: the shapes (rows of the shape table), their bodies, a contact point and the normal
#: (from A to B); for a sensor overlap ``sensor`` is True and shape_a is the sensor
BEGIN_DTYPE = np.dtype(_PAIR_FIELDS + [("point", np.float64, 2), ("normal", np.float64, 2), ("sensor", np.bool_)])
END_DTYPE = np.dtype(_PAIR_FIELDS + [("sensor", np.bool_)])
#: hit records: the point that approached fastest and its approach speed (m/s) before the solve
HIT_DTYPE = np.dtype(_PAIR_FIELDS + [("point", np.float64, 2), ("normal", np.float64, 2), ("speed", np.float64)])

#: The events of the last step: three NumPy record arrays (``BEGIN_DTYPE``, ``END_DTYPE``, ``HIT_DTYPE``).
ContactEvents = namedtuple("ContactEvents", "begin end hit")

EVENT_KINDS = ("begin", "end", "hit", "leave", "joint", "post_solve")

#: The contacts of the last step as arrays, one row per contact point (``World.contact_data``): shape and body
#: rows, the point and the normal (world frame; the normal from shape_a to shape_b), the separation (m, negative
#: when overlapping), the normal and tangent impulse over the whole step (N·s, on shape_b's body; the tangent is
#: (normal.y, −normal.x)), the approach speed −v_n before the solve (m/s, positive when approaching) and whether
#: the contact touches.
ContactData = namedtuple("ContactData", "shape_a shape_b body_a body_b point normal separation normal_impulse "
                                        "tangent_impulse approach_speed touching")


class ContactEvent:
    """One event as handed to a handler: handles instead of row numbers (``speed`` is set for hits)."""

    __slots__ = ("kind", "shape_a", "shape_b", "body_a", "body_b", "point", "normal", "speed", "sensor")

    def __init__(self, kind, shape_a, shape_b, body_a, body_b, point, normal, speed, sensor):
        self.kind = kind
        self.shape_a = shape_a
        self.shape_b = shape_b
        self.body_a = body_a
        self.body_b = body_b
        self.point = point
        self.normal = normal
        self.speed = speed
        self.sensor = sensor

    def __repr__(self):
        return f"<ContactEvent {self.kind} {self.shape_a!r} {self.shape_b!r}>"


def no_colouring():
    """The colouring fields of a contact table that has none (``ContactTable``'s from ``perm`` on, in order: the
    next step colours afresh)."""
    return (np.zeros(0, np.int64), np.zeros((0, 2), np.int64), np.zeros(_solver.OVERFLOW + 2, np.int64),
            np.zeros(1, np.bool_), np.zeros(0, np.int8))


def without_colouring(fields):
    """A ``ContactTable`` of the contact fields ``fields`` (``snapshot.CONTACT_FIELDS``' order: a ``NarrowTable``'s)
    and no colouring."""
    return ContactTable(*fields, *no_colouring())


def empty_contacts():
    """A contact table without contacts (a new world's ``ContactTable``): no rows, no colouring."""
    return ContactTable(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, 2), np.int64), np.zeros((0, 2)),
            np.zeros((0, 2)), np.zeros((0, 2)), np.zeros((0, 2, 2)), np.zeros((0, 2)), np.zeros(0, np.bool_),
            np.zeros(0, np.bool_), np.zeros((0, _step.CACHE_WIDTH)), np.zeros((0, 2, 2)), *no_colouring())


def empty_events():
    """No events: three empty record arrays."""
    return ContactEvents(np.zeros(0, BEGIN_DTYPE), np.zeros(0, END_DTYPE), np.zeros(0, HIT_DTYPE))


def pair_rows(t, dtype, keys, rows, sensor):
    """Records of ``dtype`` naming the shapes and bodies of the contacts ``rows`` of ``keys`` (a sensor as shape A),
    and which rows were swapped for that."""
    out = np.zeros(len(rows), dtype)
    sa = keys[rows] >> _step.KEY_SHIFT
    sb = keys[rows] & _step.KEY_MASK
    # a sensor event names the sensor as shape A
    swap = sensor[rows] & ~t.s_sensor[sa]
    out["shape_a"] = np.where(swap, sb, sa)
    out["shape_b"] = np.where(swap, sa, sb)
    out["body_a"] = t.s_body[out["shape_a"]]
    out["body_b"] = t.s_body[out["shape_b"]]
    return out, swap


def build_events(t, old_keys, old_touch, old_sensor, contacts, approach, hit_threshold, pending):
    """Event records of a step from last step's keys, touch and sensor flags, this step's contact table and
    the solver's approach speeds (``_step.event_rows``), and the end events of removed shapes (``pending``)."""
    begin_k, end_j, hit_k, hit_p, hit_v = _step.event_rows(old_keys, old_touch, contacts.keys, contacts.touching,
                                                           contacts.count, contacts.step_impulse, approach,
                                                           hit_threshold)
    ended_keys = old_keys[end_j]
    ended_sensor = old_sensor[end_j]
    if begin_k.size == 0 and end_j.size == 0 and hit_k.size == 0 and not pending:
        return empty_events()
    keys, count, normal, points, sep, sensor = (contacts.keys, contacts.count, contacts.normal, contacts.points,
                                                contacts.separation, contacts.sensor)
    begin, swap = pair_rows(t, BEGIN_DTYPE, keys, begin_k, sensor)
    deepest = (count[begin_k] == 2) & (sep[begin_k, 1] < sep[begin_k, 0])
    begin["point"] = points[begin_k, deepest.astype(np.int64)]
    begin["normal"] = np.where(swap[:, None], -normal[begin_k], normal[begin_k])
    begin["sensor"] = sensor[begin_k]
    every = np.arange(ended_keys.shape[0])
    end, _ = pair_rows(t, END_DTYPE, ended_keys, every, ended_sensor)
    end["sensor"] = ended_sensor
    if pending:
        end = np.concatenate(pending + [end])
    hit, _ = pair_rows(t, HIT_DTYPE, keys, hit_k, sensor)
    hit["point"] = points[hit_k, hit_p]
    hit["normal"] = normal[hit_k]
    hit["speed"] = hit_v
    return ContactEvents(begin, end, hit)


def settle(t):
    """Build the last step's event records, if not yet done (before anything changes the shape slots
    they are read from)."""
    if t.raw_events is not None:
        t.events = build_events(t, *t.raw_events)
        t.raw_events = None


def drop_contacts(t, mine):
    """Drop the contact table's rows flagged in ``mine`` (and their approach speeds). The colouring goes: the next
    step colours the remaining contacts afresh. The kept rows are taken by index, not by a boolean mask: a
    quarter of the time for the cache's 15 columns."""
    c = t.contacts
    keep = np.flatnonzero(~mine)
    t.contacts = without_colouring(getattr(c, name).take(keep, axis=0) for name in CONTACT_NAMES)
    if t.approach is not None and t.approach.shape[0] == mine.shape[0]:
        t.approach = t.approach.take(keep, axis=0)


def contact_forces(t, which):
    """The contact force of the last step on the bodies of rows ``which``: the step impulses of the
    contact table, P = λn·n + λt·t on shape_b's body and −P on shape_a's, summed and divided by dt."""
    c = t.contacts
    keys, count, normal, sensor, step = c.keys, c.count, c.normal, c.sensor, c.step_impulse
    out = np.zeros((len(which), 2))
    if t.last_dt == 0.0 or keys.size == 0:
        return out
    k = np.flatnonzero((count > 0) & ~sensor)
    sn = step[k, :, 0].sum(axis=1)
    st = step[k, :, 1].sum(axis=1)
    n = normal[k]
    p = np.stack((sn * n[:, 0] + st * n[:, 1], sn * n[:, 1] - st * n[:, 0]), axis=1)
    total = np.zeros((t.n_bodies, 2))
    np.add.at(total, t.s_body[keys[k] & _step.KEY_MASK], p)
    np.subtract.at(total, t.s_body[keys[k] >> _step.KEY_SHIFT], p)
    return total[which] / t.last_dt


def contact_data(t):
    """The last step's contacts with points, sensors excluded, one row per point (``World.contact_data``)."""
    c = t.contacts
    keys, count, normal, points, sep, touch, sensor, step = (c.keys, c.count, c.normal, c.points, c.separation,
                                                             c.touching, c.sensor, c.step_impulse)
    k = np.flatnonzero((count > 0) & ~sensor)
    c = count[k]
    row = np.repeat(k, c)
    # each row's point index within its contact: 0, 1 for a two-point contact
    p = np.arange(row.size) - np.repeat(np.cumsum(c) - c, c)
    sa = (keys[row] >> _step.KEY_SHIFT).astype(np.int64)
    sb = (keys[row] & _step.KEY_MASK).astype(np.int64)
    approach = t.approach
    if approach is None:
        speed = np.full(row.size, np.nan)
    elif approach.shape[0] != keys.shape[0]:        # (a step in which every body slept: nothing moved)
        speed = np.zeros(row.size)
    else:
        speed = approach[row, p] + 0.0       # (+ 0: a missing point's −0 reads 0)
    return ContactData(sa, sb, t.s_body[sa], t.s_body[sb], points[row, p], normal[row],
                       sep[row, p], step[row, p, 0], step[row, p, 1], speed, touch[row])


def contacts_to_save(t):
    """The contact table with the cache rows the narrow phase left unwritten zeroed: those of two-circle
    pairs, and those marked as holding no manifold (cos and sin 0: ``_narrow._mark_uncached``). In memory they hold
    whatever the allocation held, which must not leave the process in a snapshot or a pickle (and would
    make two snapshots of one state differ). A zeroed marked row is still marked."""
    c = t.contacts
    keys = c.keys
    cache = c.cache
    unwritten = ((t.s_count[keys >> _solver.KEY_SHIFT] == 1) & (t.s_count[keys & _solver.KEY_MASK] == 1)
                 | (cache[:, _step.CTC] == 0.0) & (cache[:, _step.CTS] == 0.0))
    if not unwritten.any():
        return c
    cache = cache.copy()
    cache[unwritten] = 0.0
    return c._replace(cache=cache)
