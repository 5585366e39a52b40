"""The Verlet world: particles, stick edges and vertex/edge bodies (seed 000), stepped by one compiled call.

A body is a convex outline of particles joined by boundary edges and kept in shape by braces (every
pair of non-adjacent vertices for small bodies, O(n) of them for large ones: :func:`body_braces`).  Nothing
stores an angle or an angular velocity: when a collision moves one vertex and the two ends of an edge, the
sticks drag the other vertices along and rotation emerges.
Velocities are implicit, ``(pos - prev) / dt``; friction and restitution edit ``prev``.

Handles (:class:`Body`, :class:`Group`) are thin views over the world's arrays.
"""
from typing import TYPE_CHECKING
if TYPE_CHECKING:  # (annotations only)
    from typing import Tuple
    from .._types import Any, ArrayLike, Bits, Optional, Points, TransformLike, Vec2
import math
import numbers

import numpy as np

from .. import constants
from ..errors import GeometryError, SimulationError
from . import _kernels as K


#: the most particles one call may add (a rope's segments + 1, a cloth's columns x rows, a polygon's vertices):
#: a typo such as ``segments=10**9`` is refused instead of allocating gigabytes
MAX_PARTICLES_PER_CALL = 1_000_000
#: relaxation sweeps per step: beyond this a step takes seconds and adds no accuracy worth having
MAX_ITERATIONS = 1000
#: the largest damping rate (1/s): at 60 steps/s any rate above 60 already stops every particle each step
MAX_DAMPING = 1.0e6
#: the time step's range (s): below MIN_DT the next step's ratio dt / dt_prev would overflow
MIN_DT, MAX_DT = 1.0e-9, 1.0

#: types that Python or NumPy would turn into a number but that are never meant as one (True is not a length,
#: "1e3" is not a coordinate)
_NOT_NUMBERS = (bool, np.bool_, str, bytes, np.str_, np.bytes_)


def _brief(value, limit=200):
    """``repr(value)`` cut to about ``limit`` characters: an error naming a 10,000-point outline stays readable."""
    r = repr(value.tolist() if isinstance(value, np.ndarray) else value)
    return r if len(r) <= limit else f"{r[:limit]}... ({len(r)} characters)"


def _finite(value, name, error=SimulationError):
    """A finite real number as a float: a Python or NumPy int or float, never a bool or a string (float()
    would take both), nor an integer beyond the floats."""
    if isinstance(value, _NOT_NUMBERS) or not isinstance(value, numbers.Real):
        raise error(f"{name} must be a number, got {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError, OverflowError):
        raise error(f"{name} = {value!r} is not a finite number") from None
    if not math.isfinite(v):
        raise error(f"{name} must be finite, got {value!r}")
    return v


def _positive(value, name, error=SimulationError):
    v = _finite(value, name, error)
    if v <= 0.0:
        raise error(f"{name} must be > 0, got {value!r}")
    return v


def _integer(value, name, low, high, error=SimulationError):
    """An int (Python or NumPy, not a bool, not a float even if whole) in [low, high]."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise error(f"{name} must be an integer in [{low}, {high}], got {value!r}")
    if not low <= value <= high:
        raise error(f"{name} must be an integer in [{low}, {high}], got {value!r}")
    return int(value)


def _flag(value, name):
    """A bool (Python or NumPy): a flag given as 0/1 or "yes" is refused rather than guessed."""
    if not isinstance(value, (bool, np.bool_)):
        raise SimulationError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def _mass(value, count, name="mass"):
    """A body's (or particle's) mass, split over ``count`` particles: > 0 and finite, and so is the inverse mass
    of each particle (a mass of 1e-320 would give an infinite one)."""
    m = _positive(value, name)
    inv = count / m
    if not (math.isfinite(inv) and inv > 0.0):
        raise SimulationError(f"{name} = {value!r} is out of range: its inverse per particle is {inv!r}")
    return m


def _float_array(value, name, error):
    """``value`` as a float array, refusing bools and strings inside it: NumPy would turn both into numbers
    (and a bool among floats leaves no trace in the result's dtype, hence the look at the elements)."""
    if isinstance(value, np.ndarray):
        bad = value.dtype.kind not in "iuf"
    elif isinstance(value, _NOT_NUMBERS):
        bad = True
    else:
        try:
            flat = np.asarray(value, dtype=object).ravel()
        except (TypeError, ValueError):
            bad = False                    # (ragged: the conversion below says so)
        else:
            bad = any(issubclass(t, _NOT_NUMBERS) for t in set(map(type, flat)))
    if bad:
        raise error(f"{name} must hold numbers (no bools or strings), got {_brief(value)}")
    try:
        return np.array(value, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise error(f"{name} must be numbers, got {_brief(value)}") from None


def _point(value, name, error=GeometryError):
    p = _float_array(value, name, error)
    if p.shape != (2,):
        raise error(f"{name} must be a 2D point, got {value!r}")
    if not np.all(np.isfinite(p)):
        raise error(f"{name} must be finite, got {value!r}")
    if np.any(np.abs(p) > constants.WORLD_LIMIT):
        raise error(f"{name} is beyond the world limit {constants.WORLD_LIMIT}: {value!r}")
    return p


def _stiffness(value, name, error=SimulationError):
    v = _finite(value, name, error)
    if not (0.0 < v <= 1.0):
        raise error(f"{name} must be in (0, 1], got {value!r}")
    return v


def _break_length(value, name="break_length"):
    if value is None:
        return math.inf
    return _positive(value, name)


def _material(friction, restitution):
    f = _finite(friction, "friction")
    if f < 0.0:
        raise SimulationError(f"friction must be >= 0, got {friction!r}")
    r = _finite(restitution, "restitution")
    if not (0.0 <= r <= 1.0):
        raise SimulationError(f"restitution must be in [0, 1], got {restitution!r}")
    return f, r


def convex_outline(points: "ArrayLike") -> np.ndarray:
    """Validate a convex outline and return it counter-clockwise as an (n, 2) float array.

    Rejects (GeometryError): NaN/inf, fewer than 3 points, points closer than the welding tolerance,
    collinear consecutive points, zero area, and non-convex or self-intersecting outlines (every turn
    must have the same sign and the turns must add up to one full revolution).
    """
    p = _float_array(points, "outline", GeometryError)
    if p.ndim != 2 or p.shape[1] != 2:
        raise GeometryError(f"outline must be an (n, 2) array of points, got shape {p.shape}")
    n = len(p)
    if n < 3:
        raise GeometryError(f"outline needs at least 3 points, got {n}")
    if not np.all(np.isfinite(p)):
        raise GeometryError(f"outline has non-finite coordinates: {_brief(p)}")
    if np.any(np.abs(p) > constants.WORLD_LIMIT):
        raise GeometryError(f"outline is beyond the world limit {constants.WORLD_LIMIT}: {_brief(p)}")
    e = np.roll(p, -1, axis=0) - p
    lengths = np.hypot(e[:, 0], e[:, 1])
    if np.any(lengths <= constants.WELDING_TOLERANCE):
        k = int(np.argmin(lengths))
        raise GeometryError(f"outline points {k} and {(k + 1) % n} coincide: {p[k].tolist()!r}")
    area2 = float(np.sum(p[:, 0] * np.roll(p[:, 1], -1) - np.roll(p[:, 0], -1) * p[:, 1]))
    if area2 < 0.0:
        p = p[::-1].copy()
        e = np.roll(p, -1, axis=0) - p
        lengths = np.hypot(e[:, 0], e[:, 1])
    en = np.roll(e, -1, axis=0)
    turn = e[:, 0] * en[:, 1] - e[:, 1] * en[:, 0]
    # distance of each middle vertex from the line through its neighbours' edge: cross / |edge|
    height = turn / np.roll(lengths, -1)
    if abs(area2) <= 0.0 or np.any(height <= constants.COLLINEAR_TOLERANCE):
        bad = int(np.argmin(height))
        raise GeometryError(
            f"outline is not strictly convex at point {(bad + 1) % n} {p[(bad + 1) % n].tolist()!r} "
            f"(collinear, reflex or zero area): {_brief(p)}")
    angles = np.arctan2(turn, np.sum(e * en, axis=1))
    if abs(float(np.sum(angles)) - 2.0 * math.pi) > 1e-6:
        raise GeometryError(f"outline winds more than once (self-intersecting): {_brief(p)}")
    return p


class Group:
    """A set of particles and edges added together (a rope, a cloth, or the base of a body).

    Made by the world's ``add_*`` calls, not by hand: ``world``, and the group's particle and edge indices
    (``particles``, ``edges``).
    """

    def __init__(self, world: "Any", particles: "ArrayLike", edges: "ArrayLike"):
        self._world = world
        self._particles = np.asarray(particles, dtype=np.int64)
        self._edges = np.asarray(edges, dtype=np.int64)

    @property
    def particles(self) -> np.ndarray:
        """Indices of this group's particles (in outline order for bodies, start to end for ropes)."""
        return self._particles.copy()

    @property
    def positions(self) -> np.ndarray:
        """Positions of the group's particles (a copy), in the order of :attr:`particles`."""
        return self._world._pos[self._particles].copy()

    @property
    def center(self) -> np.ndarray:
        """Mean of the vertex positions (the seed's body centre)."""
        return self._world._pos[self._particles].mean(axis=0)

    @property
    def edges(self) -> np.ndarray:
        """(k, 2) particle indices of this group's living edges (boundary edges first for a body)."""
        w = self._world
        idx = self._edges[w._alive[self._edges]]
        return np.stack([w._ei[idx], w._ej[idx]], axis=1)

    @property
    def edge_indices(self) -> np.ndarray:
        """Indices of the group's edges in the world's edge arrays (living or broken)."""
        return self._edges.copy()

    @property
    def velocity(self) -> np.ndarray:
        """Mean vertex velocity, (pos - prev) / dt of the last step (1/60 s before the first step)."""
        w = self._world
        d = w._pos[self._particles] - w._prev[self._particles]
        return d.mean(axis=0) / w._dt_prev

    @velocity.setter
    def velocity(self, value: "Any"):
        v = _point(value, "velocity", SimulationError)
        w = self._world
        free = ~w._pinned[self._particles] & (w._inv_mass[self._particles] > 0.0)
        idx = self._particles[free]
        w._prev[idx] = w._pos[idx] - v * w._dt_prev

    def __len__(self):
        return len(self._particles)


class Body(Group):
    """A convex body: vertices in counter-clockwise outline order, boundary edges, braces.

    Made by the world's ``add_box``, ``add_polygon`` and ``add_soft_polygon``: ``world``, the body's ``index`` in
    :attr:`World.bodies`, and its ``particles`` and ``edges``.
    """

    def __init__(self, world: "Any", index: "int", particles: "ArrayLike", edges: "ArrayLike"):
        super().__init__(world, particles, edges)
        self.index = index

    @property
    def static(self) -> bool:
        """True for a static body (its vertices never move)."""
        return bool(self._world._b_static[self.index])

    @property
    def outline(self) -> np.ndarray:
        """Particle indices of the boundary, counter-clockwise (same as ``particles``)."""
        return self._particles.copy()

    @property
    def friction(self) -> float:
        """Friction coefficient of the body's surface."""
        return float(self._world._b_fric[self.index])

    @property
    def restitution(self) -> float:
        """Restitution of the body's surface (0: no bounce)."""
        return float(self._world._b_rest[self.index])

    def __repr__(self):
        kind = "static " if self.static else ""
        return f"<verlet {kind}Body {self.index}: {len(self)} vertices, center {self.center.tolist()}>"


def _grow(arr, need):
    if need <= len(arr):
        return arr
    cap = max(need, 2 * len(arr), 16)
    shape = (cap,) + arr.shape[1:]
    out = np.zeros(shape, dtype=arr.dtype)
    out[: len(arr)] = arr
    return out


def body_braces(n, offsets=None):
    """The braces of an n-vertex convex body: local vertex pairs (i, j) as two int64 arrays, O(n) of them.

    Every pair of non-adjacent vertices (n (n - 3) / 2 braces) while that is no more than the sparse set,
    that is up to 12 vertices (boxes and small polygons are braced as before); beyond, each vertex i is braced
    to i + k for the offsets k of :func:`_brace_offsets` (2, and n/7 ... n/2 away), each pair once: at most 8n
    braces. Why: all pairs made a 10,000-gon 50 million sticks, built in a Python loop and relaxed every
    iteration (and a 200-gon's 19,700 braces blew up under Gauss-Seidel). The offset-2 braces make each run of
    three vertices a rigid triangle (a chain of triangles sharing edges is already rigid, 2n - 3 sticks), but
    nearly flat ones for large n; the long braces tie every vertex to the far side from several directions,
    so the shape holds under load (tests/test_verlet.py drops 12- and 200-gons).

    ``offsets`` replaces :func:`_brace_offsets` (for experiments)."""
    k = np.arange(n, dtype=np.int64)
    steps = sorted({s for s in (offsets if offsets is not None else _brace_offsets(n)) if 2 <= s <= n // 2})
    count = sum(n // 2 if 2 * s == n else n for s in steps)
    if n * (n - 3) // 2 <= count:
        i, j = np.triu_indices(n, 2)
        keep = ~((i == 0) & (j == n - 1))
        return i[keep].astype(np.int64), j[keep].astype(np.int64)
    ii, jj = [], []
    for s in steps:                       # (a handful of offsets: one NumPy block each)
        first = k[: n // 2] if 2 * s == n else k
        ii.append(first)
        jj.append((first + s) % n)
    return np.concatenate(ii), np.concatenate(jj)


def _brace_offsets(n):
    """Offsets of a large body's braces: 2, and fractions of n with different denominators. Why these:
    offsets sharing a factor (n/8, n/4, 3n/8) tie vertices only within residue classes and left a 200-gon
    with a box dropped on it 30-40 % strained; fewer offsets (2, n/4, n/3, n/2) 8 %; these 0.15 %, where
    all pairs (19,700 braces) blew up."""
    return (2, n // 7, n // 5, 2 * n // 7, n // 3, 2 * n // 5, 3 * n // 7, n // 2)


class World:
    """A position-based (Verlet) world.

    Settings (properties, each validated when set; a refused value raises :class:`SimulationError` naming it
    and changes nothing):

    ``gravity``       (gx, gy) in m/s^2, finite, within the world limit.
    ``iterations``    relaxation sweeps per step (each: sticks, then collisions), an int in [1, MAX_ITERATIONS].
    ``damping``       a linear rate in 1/s in [0, MAX_DAMPING]: velocities are scaled by max(0, 1 - damping dt)
                      each step.
    ``shape_sweeps``  stick-only sweeps after the collision sweeps (shape recovery after hard impacts), an int
                      in [0, MAX_ITERATIONS]; until set, max(1, iterations // 2), following ``iterations``.
    """

    def __init__(self, gravity: "Vec2" = (0.0, -10.0), iterations: "int" = 8, damping: "float" = 0.0):
        # (validated all three before anything is set: a refused argument leaves no half-made world)
        g = _point(gravity, "gravity", SimulationError)
        it = _integer(iterations, "iterations", 1, MAX_ITERATIONS)
        d = self._check_damping(damping)
        self._gravity = g
        self._iterations = it
        self._damping = d
        self._shape_sweeps = None
        self._dt_prev = 1.0 / 60.0
        self.time = 0.0
        self.contact_count = 0
        self._np = 0
        self._pos = np.zeros((16, 2))
        self._prev = np.zeros((16, 2))
        self._vel0 = np.zeros((16, 2))
        self._inv_mass = np.zeros(16)
        self._pinned = np.zeros(16, dtype=np.bool_)
        self._pin_pos = np.zeros((16, 2))
        self._ne = 0
        self._ei = np.zeros(16, dtype=np.int64)
        self._ej = np.zeros(16, dtype=np.int64)
        self._rest = np.zeros(16)
        self._stiff = np.ones(16)
        self._brk = np.full(16, math.inf)
        self._alive = np.zeros(16, dtype=np.bool_)
        self._boundary = np.zeros(16, dtype=np.bool_)
        self._kiter = np.ones(16)
        self._nb = 0
        self._b_v0 = np.zeros(16, dtype=np.int64)
        self._b_n = np.zeros(16, dtype=np.int64)
        self._b_e0 = np.zeros(16, dtype=np.int64)
        self._b_static = np.zeros(16, dtype=np.bool_)
        self._b_fric = np.zeros(16)
        self._b_rest = np.zeros(16)
        self._b_box = np.zeros((16, 4))
        self._order = np.zeros(16, dtype=np.int64)
        self.bodies: list = []
        self.groups: list = []

    # ----------------------------------------------------------------- settings
    @property
    def gravity(self) -> np.ndarray:
        """(gx, gy) in m/s^2 (a copy: write the property, not its elements, so the value is checked)."""
        return self._gravity.copy()

    @gravity.setter
    def gravity(self, value: "Any"):
        self._gravity = _point(value, "gravity", SimulationError)

    @property
    def iterations(self) -> int:
        """Relaxation iterations per step (edges, then collisions), from 1 to ``MAX_ITERATIONS``: more make stiffer
        bodies and ropes."""
        return self._iterations

    @iterations.setter
    def iterations(self, value: "Any"):
        self._iterations = _integer(value, "iterations", 1, MAX_ITERATIONS)

    @property
    def damping(self) -> float:
        """A linear damping rate (1/s) from 0 to ``MAX_DAMPING``: velocities are scaled by max(0, 1 − damping·dt) each
        step."""
        return self._damping

    @damping.setter
    def damping(self, value: "Any"):
        self._damping = self._check_damping(value)

    @staticmethod
    def _check_damping(value):
        d = _finite(value, "damping")
        if not 0.0 <= d <= MAX_DAMPING:
            raise SimulationError(f"damping must be in [0, {MAX_DAMPING:g}] (1/s), got {value!r}")
        return d

    @property
    def shape_sweeps(self) -> int:
        """Stick-only sweeps after the collision sweeps of a step (shape recovery after hard impacts); until set,
        max(1, iterations // 2), following :attr:`iterations`."""
        return max(1, self._iterations // 2) if self._shape_sweeps is None else self._shape_sweeps

    @shape_sweeps.setter
    def shape_sweeps(self, value: "Any"):
        self._shape_sweeps = _integer(value, "shape_sweeps", 0, MAX_ITERATIONS)

    # ----------------------------------------------------------------- storage
    _PARTICLE_ARRAYS = ("_pos", "_prev", "_vel0", "_pin_pos", "_inv_mass", "_pinned")
    _EDGE_ARRAYS = ("_ei", "_ej", "_rest", "_stiff", "_brk", "_alive", "_boundary", "_kiter")
    _BODY_ARRAYS = ("_b_v0", "_b_n", "_b_e0", "_b_static", "_b_fric", "_b_rest", "_b_box", "_order")

    def _append(self, points=None, inv_mass=0.0, pinned=False, edges=None, body=None):
        """Add particles, edges and a body in one go; returns (particle indices, edge indices, body index).

        ``points`` (n, 2) new particles; ``edges`` (i, j, stiffness, break length, boundary) with i, j indices
        into the world's particles *after* the new ones are added; ``body`` (static, friction, restitution):
        the new particles are its outline and the first n edges its boundary. Rest lengths come from the
        positions. Why in one go: every check runs and every larger array is allocated before the first one
        is installed, so a refusal (or a failed allocation) leaves the world byte-for-byte as it was; what
        follows cannot fail.
        """
        n = 0 if points is None else len(points)
        a, e0, b = self._np, self._ne, self._nb
        if edges is not None:
            ei, ej, stiff, brk, boundary = edges
            ei = np.asarray(ei, dtype=np.int64)
            ej = np.asarray(ej, dtype=np.int64)
            rest = np.hypot(*(self._where(ej, points) - self._where(ei, points)).T)
            if np.any(rest <= constants.WELDING_TOLERANCE):
                k = int(np.argmin(rest))
                raise GeometryError(f"particles {int(ei[k])} and {int(ej[k])} are {rest[k]!r} apart: an edge "
                                    f"needs a rest length > {constants.WELDING_TOLERANCE}")
        m = 0 if edges is None else len(ei)
        grown = {}
        for names, need in ((self._PARTICLE_ARRAYS, a + n), (self._EDGE_ARRAYS, e0 + m),
                            (self._BODY_ARRAYS, b + (body is not None))):
            for name in names:
                grown[name] = _grow(getattr(self, name), need)
        # ---- nothing below can fail
        for name, arr in grown.items():
            setattr(self, name, arr)
        if n:
            self._pos[a:a + n] = points
            self._prev[a:a + n] = points
            self._vel0[a:a + n] = 0.0
            self._pin_pos[a:a + n] = points
            self._inv_mass[a:a + n] = inv_mass
            self._pinned[a:a + n] = pinned
        if m:
            self._ei[e0:e0 + m] = ei
            self._ej[e0:e0 + m] = ej
            self._rest[e0:e0 + m] = rest
            self._stiff[e0:e0 + m] = stiff
            self._brk[e0:e0 + m] = brk
            self._alive[e0:e0 + m] = True
            self._boundary[e0:e0 + m] = boundary
        if body is not None:
            static, friction, restitution = body
            self._b_v0[b] = a
            self._b_n[b] = n
            self._b_e0[b] = e0
            self._b_static[b] = static
            self._b_fric[b] = friction
            self._b_rest[b] = restitution
            self._order[b] = b
            self._nb = b + 1
        self._np = a + n
        self._ne = e0 + m
        return np.arange(a, a + n), np.arange(e0, e0 + m), b

    def _where(self, idx, points):
        """Positions of particles ``idx``: the world's below its particle count, ``points`` (about to be added)
        from there on."""
        a = self._np
        if points is None or len(points) == 0:
            return self._pos[idx]
        new = idx >= a
        return np.where(new[:, None], points[np.where(new, idx - a, 0)], self._pos[np.where(new, 0, idx)])

    def _add_body(self, outline, mass, static, brace_stiffness, friction, restitution, edge_stiffness=1.0):
        """A convex body from a checked outline: n particles, n boundary edges, then the braces (O(n) of them,
        :func:`body_braces`), added atomically (:meth:`_append`)."""
        n = len(outline)
        inv = 0.0 if static else n / mass
        a = self._np
        k = np.arange(n, dtype=np.int64)
        bi, bj = body_braces(n)
        ei = a + np.concatenate([k, bi])
        ej = a + np.concatenate([(k + 1) % n, bj])
        stiff = np.concatenate([np.full(n, float(edge_stiffness)), np.full(len(bi), float(brace_stiffness))])
        boundary = np.arange(len(ei)) < n
        parts, edges, b = self._append(outline, inv, False, (ei, ej, stiff, math.inf, boundary),
                                       (static, friction, restitution))
        body = Body(self, b, parts, edges)
        self.bodies.append(body)
        return body

    # ----------------------------------------------------------------- building
    def add_particle(self, position: "Vec2", mass: "float" = 1.0) -> int:
        """One free particle; returns its index.

        ``position`` is (x, y) in m; ``mass`` > 0 in kg.
        """
        p = _point(position, "position")
        m = _mass(mass, 1)
        return int(self._append(p[None, :], 1.0 / m)[0][0])

    def add_edge(self, i: "int", j: "int", stiffness: "float" = 1.0, break_length: "Optional[float]" = None) -> int:
        """A stick between particles i and j with its current length as rest length; returns its index.

        ``stiffness`` in (0, 1] is the share of the stick's error corrected per relaxation (1: rigid);
        ``break_length`` (m, None for never) breaks the stick once it is longer.
        """
        i = self._particle_index(i)
        j = self._particle_index(j)
        if i == j:
            raise SimulationError(f"an edge needs two different particles, got {i} twice")
        k = _stiffness(stiffness, "stiffness")
        brk = _break_length(break_length)
        return int(self._append(edges=([i], [j], k, brk, False))[1][0])

    def add_box(self, center: "Vec2" = (0.0, 0.0), width: "float" = 1.0, height: "float" = 1.0, angle: "float" = 0.0,
                mass: "float" = 1.0, static: "bool" = False,
                friction: "float" = 0.5, restitution: "float" = 0.0) -> "Body":
        """A box: 4 vertices (CCW), 4 boundary edges, 2 diagonal braces, all rigid.

        ``center`` and ``angle`` place it, ``width`` and ``height`` (m) size it, ``mass`` (kg) is split over its 4
        vertices; ``static`` bodies never move; ``friction`` and ``restitution`` are its surface's.
        """
        c = _point(center, "center")
        w = _positive(width, "width", GeometryError)
        h = _positive(height, "height", GeometryError)
        a = _finite(angle, "angle", GeometryError)
        hw, hh = 0.5 * w, 0.5 * h
        local = np.array([[-hw, -hh], [hw, -hh], [hw, hh], [-hw, hh]])
        cs, sn = math.cos(a), math.sin(a)
        pts = local @ np.array([[cs, sn], [-sn, cs]]) + c
        return self.add_polygon(pts, mass=mass, static=static, friction=friction, restitution=restitution)

    def add_polygon(self, points: "ArrayLike", mass: "float" = 1.0, static: "bool" = False, friction: "float" = 0.5,
                    restitution: "float" = 0.0) -> "Body":
        """A convex body kept rigid by braces (:func:`body_braces`: all non-adjacent pairs for up to 13
        vertices, O(n) beyond), mass split equally. All or nothing: a refused argument adds nothing.

        ``points`` is the outline, any order (its convex outline is used); ``static``, ``friction`` and
        ``restitution`` as in :meth:`add_box`.
        """
        outline = convex_outline(points)
        if len(outline) > MAX_PARTICLES_PER_CALL:
            raise GeometryError(f"outline has {len(outline)} points, more than {MAX_PARTICLES_PER_CALL}")
        s = _flag(static, "static")
        m = 1.0 if s else _mass(mass, len(outline))
        f, r = _material(friction, restitution)
        return self._add_body(outline, m, s, 1.0, f, r)

    def add_soft_polygon(self, points: "ArrayLike", stiffness: "float" = 0.2, mass: "float" = 1.0,
                         edge_stiffness: "float" = 1.0, friction: "float" = 0.5,
                         restitution: "float" = 0.0) -> "Body":
        """A jelly body: braces with ``stiffness`` < 1 give under load and spring back.

        ``points`` is the outline (convex); ``mass`` (kg) is split over its vertices; ``edge_stiffness`` is the
        outline edges' stiffness (1: they keep their length); ``friction`` and ``restitution`` as in
        :meth:`add_box`.
        """
        outline = convex_outline(points)
        if len(outline) > MAX_PARTICLES_PER_CALL:
            raise GeometryError(f"outline has {len(outline)} points, more than {MAX_PARTICLES_PER_CALL}")
        k = _stiffness(stiffness, "stiffness")
        ke = _stiffness(edge_stiffness, "edge_stiffness")
        m = _mass(mass, len(outline))
        f, r = _material(friction, restitution)
        return self._add_body(outline, m, False, k, f, r, edge_stiffness=ke)

    def add_rope(self, start: "Vec2", end: "Vec2", segments: "int" = 20, pin_start: "bool" = True,
                 pin_end: "bool" = False, mass: "float" = 1.0, stiffness: "float" = 1.0,
                 break_length: "Optional[float]" = None) -> "Group":
        """A chain of ``segments`` sticks from start to end (``mass`` split over its particles).

        ``pin_start`` and ``pin_end`` pin the first and last particle where they are; ``stiffness`` and
        ``break_length`` as in :meth:`add_edge`.
        """
        a = _point(start, "start")
        b = _point(end, "end")
        segments = _integer(segments, "segments", 1, MAX_PARTICLES_PER_CALL - 1, GeometryError)
        if np.hypot(*(b - a)) <= constants.WELDING_TOLERANCE * segments:
            raise GeometryError(f"rope start {a.tolist()} and end {b.tolist()} are too close")
        ps = _flag(pin_start, "pin_start")
        pe = _flag(pin_end, "pin_end")
        m = _mass(mass, segments + 1)
        k = _stiffness(stiffness, "stiffness")
        brk = _break_length(break_length)
        s = np.linspace(0.0, 1.0, segments + 1)[:, None]
        pinned = np.zeros(segments + 1, dtype=np.bool_)
        pinned[0] = ps
        pinned[-1] |= pe
        first = self._np + np.arange(segments, dtype=np.int64)
        parts, edges, _ = self._append(a + s * (b - a), (segments + 1) / m, pinned,
                                       (first, first + 1, k, brk, False))
        g = Group(self, parts, edges)
        self.groups.append(g)
        return g

    def add_cloth(self, top_left: "Vec2", width: "float", height: "float", columns: "int", rows: "int",
                  pinned: "str" = "top", mass: "float" = 1.0, stiffness: "float" = 1.0,
                  break_length: "Optional[float]" = None) -> "Group":
        """A grid of ``columns`` x ``rows`` particles joined by horizontal and vertical sticks.

        ``pinned``: "top" (the whole top row), "corners" (the two top corners) or None.  Particles are
        row-major from the top-left corner.

        ``top_left`` is the first particle's position, ``width`` and ``height`` (m) the size; ``mass`` (kg) is split
        over the particles; ``stiffness`` and ``break_length`` as in :meth:`add_edge`.
        """
        tl = _point(top_left, "top_left")
        w = _positive(width, "width", GeometryError)
        h = _positive(height, "height", GeometryError)
        columns = _integer(columns, "columns", 2, MAX_PARTICLES_PER_CALL // 2, GeometryError)
        rows = _integer(rows, "rows", 2, MAX_PARTICLES_PER_CALL // 2, GeometryError)
        if columns * rows > MAX_PARTICLES_PER_CALL:
            raise GeometryError(f"a cloth of {columns} x {rows} particles is more than {MAX_PARTICLES_PER_CALL}")
        if not (isinstance(pinned, str) or pinned is None) or pinned not in ("top", "corners", None):
            raise SimulationError(f"pinned must be 'top', 'corners' or None, got {pinned!r}")
        m = _mass(mass, columns * rows)
        k = _stiffness(stiffness, "stiffness")
        brk = _break_length(break_length)
        xs = tl[0] + np.linspace(0.0, w, columns)
        ys = tl[1] - np.linspace(0.0, h, rows)
        X, Y = np.meshgrid(xs, ys)
        pts = np.stack([X.ravel(), Y.ravel()], axis=1)
        if np.any(np.abs(pts) > constants.WORLD_LIMIT):
            raise GeometryError(f"cloth reaches beyond the world limit {constants.WORLD_LIMIT}")
        grid = self._np + np.arange(columns * rows, dtype=np.int64).reshape(rows, columns)
        hold = np.zeros((rows, columns), dtype=np.bool_)
        if pinned == "top":
            hold[0] = True
        elif pinned == "corners":
            hold[0, [0, -1]] = True
        ei = np.concatenate([grid[:, :-1].ravel(), grid[:-1, :].ravel()])
        ej = np.concatenate([grid[:, 1:].ravel(), grid[1:, :].ravel()])
        parts, edges, _ = self._append(pts, columns * rows / m, hold.ravel(), (ei, ej, k, brk, False))
        g = Group(self, parts, edges)
        self.groups.append(g)
        return g

    def _particle_index(self, particle):
        if isinstance(particle, bool) or not isinstance(particle, (int, np.integer)):
            raise SimulationError(f"particle must be an integer index, got {particle!r}")
        if not 0 <= particle < self._np:
            raise SimulationError(f"particle index {particle!r} out of range [0, {self._np})")
        return int(particle)

    def pin(self, particle: "int", position: "Optional[Vec2]" = None) -> None:
        """Hold a particle at ``position`` (default: where it is now)."""
        i = self._particle_index(particle)
        p = self._pos[i].copy() if position is None else _point(position, "position", SimulationError)
        self._pin_pos[i] = p
        self._pos[i] = p
        self._prev[i] = p
        self._pinned[i] = True

    def unpin(self, particle: "int") -> None:
        """Let ``particle`` (an index) move freely again.

        ``particle`` is a particle index.
        """
        i = self._particle_index(particle)
        self._pinned[i] = False

    # ----------------------------------------------------------------- stepping
    def step(self, dt: "float" = 1.0 / 60.0) -> None:
        """Advance the world by ``dt`` seconds: forces, Verlet integration, then :attr:`iterations` relaxation sweeps
        of edges and collisions.

        ``dt`` must be within [MIN_DT, MAX_DT] (seconds).
        """
        h = _finite(dt, "dt")
        if not MIN_DT <= h <= MAX_DT:
            raise SimulationError(f"dt must be in [{MIN_DT:g}, {MAX_DT:g}] s, got {dt!r}")
        self.contact_count = int(K.step_kernel(
            self._pos, self._prev, self._vel0, self._inv_mass, self._pinned, self._pin_pos, self._np,
            self._ei, self._ej, self._rest, self._stiff, self._brk, self._alive, self._kiter, self._ne,
            self._b_v0, self._b_n, self._b_static, self._b_fric, self._b_rest, self._b_box, self._order,
            self._nb, float(self._gravity[0]), float(self._gravity[1]), h, self._dt_prev, self._damping,
            self._iterations, constants.LINEAR_SLOP, constants.RESTITUTION_THRESHOLD, self.shape_sweeps))
        self._dt_prev = h
        self.time += h

    # ----------------------------------------------------------------- bulk views
    @property
    def positions(self) -> np.ndarray:
        """(N, 2) positions of all particles (a copy)."""
        return self._pos[: self._np].copy()

    @property
    def velocities(self) -> np.ndarray:
        """(N, 2) particle velocities, (position − previous position) / the last dt."""
        return (self._pos[: self._np] - self._prev[: self._np]) / self._dt_prev

    @property
    def masses(self) -> np.ndarray:
        """Particle masses (inf for static vertices)."""
        inv = self._inv_mass[: self._np]
        with np.errstate(divide="ignore"):
            return np.where(inv > 0.0, 1.0 / np.where(inv > 0.0, inv, 1.0), np.inf)

    @property
    def pinned(self) -> np.ndarray:
        """(N,) True for pinned particles (a copy)."""
        return self._pinned[: self._np].copy()

    @property
    def edges(self) -> np.ndarray:
        """(E, 2) particle indices of the living edges."""
        alive = self._alive[: self._ne]
        return np.stack([self._ei[: self._ne][alive], self._ej[: self._ne][alive]], axis=1)

    @property
    def rest_lengths(self) -> np.ndarray:
        """Rest lengths of the living edges, in the order of :attr:`edges`."""
        return self._rest[: self._ne][self._alive[: self._ne]].copy()

    def edge_strain(self) -> np.ndarray:
        """|length - rest| / rest for every living edge."""
        out = np.zeros(self._ne)
        K.edge_strain(self._pos, self._ei, self._ej, self._rest, self._alive, self._ne, out)
        return out[self._alive[: self._ne]]

    @property
    def outlines(self) -> list:
        """Per body, the particle indices of its boundary, counter-clockwise."""
        return [b.outline for b in self.bodies]

    @property
    def static_flags(self) -> np.ndarray:
        """(B,) True for the static bodies, in the order of :attr:`bodies`."""
        return self._b_static[: self._nb].copy()

    @property
    def particle_count(self) -> int:
        """Number of particles."""
        return self._np

    @property
    def edge_count(self) -> int:
        """Number of living (unbroken) edges."""
        return int(self._alive[: self._ne].sum())


def edge_vertex_response(vertex: "Vec2", e1: "Vec2", e2: "Vec2", depth: "Vec2",
                         inv_masses: "Optional[ArrayLike]" = None) -> "Tuple[np.ndarray, np.ndarray, np.ndarray]":
    """The seed's collision response, made exact (NOTES.md), as a pure function.

    ``depth`` is the vector D pointing from the edge's body towards the vertex's body.  With
    t = ((V - E1)·(E2 - E1)) / |E2 - E1|^2 clamped to [0, 1] and lambda = 1 / (t^2 + (1 - t)^2):
    ``E1 - D (1 - t) lambda / 2``, ``E2 - D t lambda / 2``, ``V + D / 2`` -- the edge point at t moves by
    exactly -D/2 and the vertex by +D/2.  With ``inv_masses = (wV, w1, w2)`` the split is by inverse
    mass instead (what the world uses; it conserves momentum).  Returns the new (V, E1, E2).

    ``e1`` and ``e2`` are the edge's end points, ``vertex`` the point pushed out.
    """
    v = _point(vertex, "vertex")
    a = _point(e1, "e1")
    b = _point(e2, "e2")
    d = _point(depth, "depth")
    t = K.edge_parameter(v[0], v[1], a[0], a[1], b[0], b[1])
    if inv_masses is None:
        cv, c1, c2 = K.response_coefficients(t, 1.0, 1.0, 1.0, True)
    else:
        w = _float_array(inv_masses, "inv_masses", SimulationError)
        if w.shape != (3,) or not np.all(np.isfinite(w)) or np.any(w < 0.0):
            raise SimulationError(f"inv_masses must be three finite numbers >= 0, got {inv_masses!r}")
        wv, w1, w2 = (float(x) for x in w)
        cv, c1, c2 = K.response_coefficients(t, wv, w1, w2, False)
    return v + cv * d, a - c1 * d, b - c2 * d
