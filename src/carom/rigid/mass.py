"""A body's mass from its shapes, and the checks on mass data and loads.

Functions over a world's tables (``t``: :class:`~carom.rigid.tables.WorldTables`), used by the body and shape
handles (``Body.mass`` …, ``Body.add_shape``) and by the world's bulk calls (``World.add_bodies``).
"""
import math

import numpy as np

from ..constants import FLOAT32_LIMIT
from ..errors import SimulationError
from ..geometry.mass import shape_terms, shape_reach
from . import _step

KINDS = {"static": _step.STATIC, "kinematic": _step.KINEMATIC, "dynamic": _step.DYNAMIC}
KIND_NAMES = {v: k for k, v in KINDS.items()}

#: bits of ``WorldTables.mass_override``: which of a body's mass, inertia and centre of mass the user set
#: (``Body.mass``, ``Body.inertia``, ``Body.local_center``); the shapes no longer decide those until
#: ``Body.reset_mass``
MASS_SET, INERTIA_SET, CENTER_SET = 1, 2, 4


def body_mass(t, b, extra=()):
    """(mass, cx, cy, inertia, min_extent) of body b's shapes and the (geometry, density) pairs ``extra``:
    the centroid in the body frame, the inertia about it. Each shape's area, centroid and inertia are
    about its own centroid (``shape_moments``) and combine with the parallel-axis theorem on c_shape −
    c_body, so nothing cancels for shapes far from the body's origin (J − m|c|² about the origin gave a
    10 cm box at (1000, 1000) a negative inertia)."""
    parts = [(t.s_geometry[h.index], float(t.s_density[h.index])) for h in t.body_shapes[b]]
    parts.extend(extra)
    return parts_mass(parts)


def parts_mass(parts):
    """:func:`body_mass` of the (geometry, density) pairs ``parts``."""
    pieces = []
    mass = 0.0
    min_extent = math.inf
    for geom, d in parts:
        a, cx, cy, jc, half, _ = shape_terms(geom)
        if d * a > 0.0:
            pieces.append((d * a, cx, cy, d * jc))
            mass += d * a
        min_extent = min(min_extent, half)
    if mass <= 0.0:
        return 0.0, 0.0, 0.0, 0.0, min_extent
    # the centroid relative to the first piece's: exactly that one's for a single shape
    x0, y0 = pieces[0][1], pieces[0][2]
    cx = x0 + sum(m * (x - x0) for m, x, _, _ in pieces) / mass
    cy = y0 + sum(m * (y - y0) for m, _, y, _ in pieces) / mass
    inertia = sum(j + m * ((x - cx) ** 2 + (y - cy) ** 2) for m, x, y, j in pieces)
    return mass, cx, cy, inertia, min_extent


def check_shape_mass(mass, d, who):
    """A dynamic body's mass and inertia from shapes (:func:`body_mass`) must fit single precision."""
    if mass[0] > 0.0 and not (1.0 / FLOAT32_LIMIT <= mass[0] <= FLOAT32_LIMIT
                              and 1.0 / FLOAT32_LIMIT <= mass[3] <= FLOAT32_LIMIT):
        raise SimulationError(f"density = {d!r} would give {who} the mass {mass[0]:g} kg and inertia "
                              f"{mass[3]:g} kg·m², beyond the solver's single precision (both must be within "
                              f"[{1.0 / FLOAT32_LIMIT:g}, {FLOAT32_LIMIT:g}])")


def update_mass(t, b, mass=None, center=None, origin=None):
    """Set body b's mass, centroid and inertia from its shapes (``mass``: :func:`body_mass`'s answer, if
    already known), except those the user set (``t.mass_override``; ``center``: a centre being set now);
    the body's origin stays where it is (``origin``: ``t.origin_transform(b)``, if already known)."""
    x, y, c, s_ = t.origin_transform(b) if origin is None else origin
    area_m, cx, cy, inertia, min_extent = body_mass(t, b) if mass is None else mass
    kind = t.kind[b]
    override = t.mass_override[b]
    if override & MASS_SET:
        area_m = float(t.mass[b])
    if override & INERTIA_SET:
        inertia = float(t.inertia[b])
    if center is not None:
        cx, cy = float(center[0]), float(center[1])
    elif override & CENTER_SET:
        cx, cy = float(t.local_center[b, 0]), float(t.local_center[b, 1])
    t.mass[b] = area_m
    t.inertia[b] = inertia
    t.inv_mass[b] = 1.0 / area_m if kind == _step.DYNAMIC and area_m > 0.0 else 0.0
    set_inv_inertia(t, b)
    lc, com = t.local_center, t.com     # (element by element: writing a row from a tuple costs 3 times more)
    lc[b, 0] = cx
    lc[b, 1] = cy
    com[b, 0] = x + (c * cx - s_ * cy)
    com[b, 1] = y + (s_ * cx + c * cy)
    t.query_boxes = None
    t.min_extent[b] = min_extent if math.isfinite(min_extent) else 0.0
    for h in t.body_shapes[b]:
        t.s_reach[h.index] = shape_reach(t.s_geometry[h.index], cx, cy)


def set_inv_inertia(t, b):
    """The solver's inverse inertia of body b from its inertia: 0 for a body that does not turn (not dynamic,
    no mass, no inertia, or ``fixed_rotation``)."""
    inertia = t.inertia[b]
    turns = (t.kind[b] == _step.DYNAMIC and t.inv_mass[b] > 0.0 and inertia > 0.0
             and not t.fixed_rotation[b])
    t.inv_inertia[b] = 1.0 / inertia if turns else 0.0


def check_mass_data(t, b, name):
    """Mass data can be set on dynamic bodies only (static and kinematic ones have infinite mass)."""
    if t.kind[b] != _step.DYNAMIC:
        raise SimulationError(f"{name} can be set on a dynamic body only; body {b} is "
                              f"{KIND_NAMES[int(t.kind[b])]}")


def check_load(t, i, name, value, force, torque):
    """Refuse ``value`` (a force or torque) if it would leave body i with a total force or torque, or the
    acceleration they give it, beyond what the solver's single precision holds (or not finite)."""
    f = float(np.abs(force).max())
    tq = abs(float(torque))
    if not (f <= FLOAT32_LIMIT and tq <= FLOAT32_LIMIT and t.inv_mass[i] * f <= FLOAT32_LIMIT
            and t.inv_inertia[i] * tq <= FLOAT32_LIMIT):
        raise SimulationError(f"{name} = {value!r} would give body {i} the force {tuple(force.tolist())} and "
                              f"torque {float(torque)}, beyond the solver's limit {FLOAT32_LIMIT:g} (or its "
                              "accelerations would be)")
