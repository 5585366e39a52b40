"""The Verlet world: particles, stick edges and vertex/edge bodies (seed 000), stepped by one compiled call.

A body is a convex outline of particles joined by boundary edges and kept in shape by braces (every
pair of non-adjacent vertices).  Nothing stores an angle or an angular velocity: when a collision moves
one vertex and the two ends of an edge, the sticks drag the other vertices along and rotation emerges.
Velocities are implicit, ``(pos - prev) / dt``; friction and restitution edit ``prev``.

Handles (:class:`Body`, :class:`Group`) are thin views over the world's arrays.
"""
import math

import numpy as np

from .. import constants
from ..errors import GeometryError, SimulationError
from . import _kernels as K


def _finite(value, name, error=SimulationError):
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise error(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(v):
        raise error(f"{name} must be finite, got {value!r}")
    return v


def _positive(value, name, error=SimulationError):
    v = _finite(value, name, error)
    if v <= 0.0:
        raise error(f"{name} must be > 0, got {value!r}")
    return v


def _point(value, name, error=GeometryError):
    try:
        p = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise error(f"{name} must be a 2D point, got {value!r}") from None
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


def convex_outline(points) -> np.ndarray:
    """Validate a convex outline and return it counter-clockwise as an (n, 2) float array.

    Rejects (GeometryError): NaN/inf, fewer than 3 points, points closer than the welding tolerance,
    collinear consecutive points, zero area, and non-convex or self-intersecting outlines (every turn
    must have the same sign and the turns must add up to one full revolution).
    """
    try:
        p = np.array(points, dtype=float)
    except (TypeError, ValueError):
        raise GeometryError(f"outline must be a sequence of 2D points, got {points!r}") from None
    if p.ndim != 2 or p.shape[1] != 2:
        raise GeometryError(f"outline must be an (n, 2) array of points, got shape {p.shape}")
    n = len(p)
    if n < 3:
        raise GeometryError(f"outline needs at least 3 points, got {n}")
    if not np.all(np.isfinite(p)):
        raise GeometryError(f"outline has non-finite coordinates: {p.tolist()!r}")
    if np.any(np.abs(p) > constants.WORLD_LIMIT):
        raise GeometryError(f"outline is beyond the world limit {constants.WORLD_LIMIT}: {p.tolist()!r}")
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
            f"(collinear, reflex or zero area): {p.tolist()!r}")
    angles = np.arctan2(turn, np.sum(e * en, axis=1))
    if abs(float(np.sum(angles)) - 2.0 * math.pi) > 1e-6:
        raise GeometryError(f"outline winds more than once (self-intersecting): {p.tolist()!r}")
    return p


class Group:
    """A set of particles and edges added together (a rope, a cloth, or the base of a body)."""

    def __init__(self, world, particles, edges):
        self._world = world
        self._particles = np.asarray(particles, dtype=np.int64)
        self._edges = np.asarray(edges, dtype=np.int64)

    @property
    def particles(self) -> np.ndarray:
        """Indices of this group's particles (in outline order for bodies, start to end for ropes)."""
        return self._particles.copy()

    @property
    def positions(self) -> np.ndarray:
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
        return self._edges.copy()

    @property
    def velocity(self) -> np.ndarray:
        """Mean vertex velocity, (pos - prev) / dt of the last step (1/60 s before the first step)."""
        w = self._world
        d = w._pos[self._particles] - w._prev[self._particles]
        return d.mean(axis=0) / w._dt_prev

    @velocity.setter
    def velocity(self, value):
        v = _point(value, "velocity", SimulationError)
        w = self._world
        free = ~w._pinned[self._particles] & (w._inv_mass[self._particles] > 0.0)
        idx = self._particles[free]
        w._prev[idx] = w._pos[idx] - v * w._dt_prev

    def __len__(self):
        return len(self._particles)


class Body(Group):
    """A convex body: vertices in counter-clockwise outline order, boundary edges, braces."""

    def __init__(self, world, index, particles, edges):
        super().__init__(world, particles, edges)
        self.index = index

    @property
    def static(self) -> bool:
        return bool(self._world._b_static[self.index])

    @property
    def outline(self) -> np.ndarray:
        """Particle indices of the boundary, counter-clockwise (same as ``particles``)."""
        return self._particles.copy()

    @property
    def friction(self) -> float:
        return float(self._world._b_fric[self.index])

    @property
    def restitution(self) -> float:
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


class World:
    """A position-based (Verlet) world.

    ``gravity`` in m/s^2, ``iterations`` relaxation sweeps per step (each: sticks, then collisions),
    ``damping`` a linear rate in 1/s (velocities are scaled by max(0, 1 - damping dt) each step).
    """

    def __init__(self, gravity=(0.0, -10.0), iterations=8, damping=0.0):
        g = _point(gravity, "gravity", SimulationError)
        if isinstance(iterations, bool) or not isinstance(iterations, (int, np.integer)):
            raise SimulationError(f"iterations must be an integer >= 1, got {iterations!r}")
        if iterations < 1:
            raise SimulationError(f"iterations must be >= 1, got {iterations!r}")
        d = _finite(damping, "damping")
        if d < 0.0:
            raise SimulationError(f"damping must be >= 0, got {damping!r}")
        self.gravity = g
        self.iterations = int(iterations)
        self.damping = d
        #: stick-only sweeps after the collision sweeps (shape recovery after hard impacts)
        self.shape_sweeps = max(1, self.iterations // 2)
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
        self.bodies = []
        self.groups = []

    # ----------------------------------------------------------------- storage
    def _add_particles(self, points, inv_mass):
        n = len(points)
        a = self._np
        for name in ("_pos", "_prev", "_vel0", "_pin_pos"):
            setattr(self, name, _grow(getattr(self, name), a + n))
        self._inv_mass = _grow(self._inv_mass, a + n)
        self._pinned = _grow(self._pinned, a + n)
        self._pos[a:a + n] = points
        self._prev[a:a + n] = points
        self._vel0[a:a + n] = 0.0
        self._pin_pos[a:a + n] = points
        self._inv_mass[a:a + n] = inv_mass
        self._pinned[a:a + n] = False
        self._np = a + n
        return np.arange(a, a + n)

    def _add_edges(self, i, j, stiffness, break_length, boundary):
        i = np.asarray(i, dtype=np.int64)
        j = np.asarray(j, dtype=np.int64)
        n = len(i)
        a = self._ne
        for name in ("_ei", "_ej", "_rest", "_stiff", "_brk", "_alive", "_boundary", "_kiter"):
            setattr(self, name, _grow(getattr(self, name), a + n))
        self._ei[a:a + n] = i
        self._ej[a:a + n] = j
        self._rest[a:a + n] = np.hypot(*(self._pos[j] - self._pos[i]).T)
        self._stiff[a:a + n] = stiffness
        self._brk[a:a + n] = break_length
        self._alive[a:a + n] = True
        self._boundary[a:a + n] = boundary
        self._ne = a + n
        return np.arange(a, a + n)

    def _add_body(self, outline, mass, static, brace_stiffness, friction, restitution, edge_stiffness=1.0):
        n = len(outline)
        inv = 0.0 if static else n / mass
        parts = self._add_particles(outline, inv)
        k = np.arange(n)
        bnd = self._add_edges(parts[k], parts[(k + 1) % n], edge_stiffness, math.inf, True)
        bi, bj = [], []
        for p in range(n):
            for q in range(p + 2, n):
                if p == 0 and q == n - 1:
                    continue
                bi.append(parts[p])
                bj.append(parts[q])
        braces = self._add_edges(bi, bj, brace_stiffness, math.inf, False)
        b = self._nb
        for name in ("_b_v0", "_b_n", "_b_e0", "_b_static", "_b_fric", "_b_rest", "_b_box"):
            setattr(self, name, _grow(getattr(self, name), b + 1))
        self._order = _grow(self._order, b + 1)
        self._b_v0[b] = parts[0]
        self._b_n[b] = n
        self._b_e0[b] = bnd[0]
        self._b_static[b] = static
        self._b_fric[b] = friction
        self._b_rest[b] = restitution
        self._order[b] = b
        self._nb = b + 1
        body = Body(self, b, parts, np.concatenate([bnd, braces]))
        self.bodies.append(body)
        return body

    # ----------------------------------------------------------------- building
    def add_particle(self, position, mass=1.0):
        """One free particle; returns its index."""
        p = _point(position, "position")
        m = _positive(mass, "mass")
        return int(self._add_particles(p[None, :], 1.0 / m)[0])

    def add_edge(self, i, j, stiffness=1.0, break_length=None):
        """A stick between particles i and j with its current length as rest length; returns its index."""
        i = self._particle_index(i)
        j = self._particle_index(j)
        if i == j:
            raise SimulationError(f"an edge needs two different particles, got {i} twice")
        k = _stiffness(stiffness, "stiffness")
        brk = _break_length(break_length)
        if np.hypot(*(self._pos[j] - self._pos[i])) <= 0.0:
            raise GeometryError(f"particles {i} and {j} coincide: an edge needs a rest length > 0")
        return int(self._add_edges([i], [j], k, brk, False)[0])

    def add_box(self, center=(0.0, 0.0), width=1.0, height=1.0, angle=0.0, mass=1.0, static=False,
                friction=0.5, restitution=0.0):
        """A box: 4 vertices (CCW), 4 boundary edges, 2 diagonal braces, all rigid."""
        c = _point(center, "center")
        w = _positive(width, "width", GeometryError)
        h = _positive(height, "height", GeometryError)
        a = _finite(angle, "angle", GeometryError)
        hw, hh = 0.5 * w, 0.5 * h
        local = np.array([[-hw, -hh], [hw, -hh], [hw, hh], [-hw, hh]])
        cs, sn = math.cos(a), math.sin(a)
        pts = local @ np.array([[cs, sn], [-sn, cs]]) + c
        return self.add_polygon(pts, mass=mass, static=static, friction=friction, restitution=restitution)

    def add_polygon(self, points, mass=1.0, static=False, friction=0.5, restitution=0.0):
        """A convex body kept rigid by braces between all non-adjacent vertices (mass split equally)."""
        outline = convex_outline(points)
        m = 1.0 if static else _positive(mass, "mass")
        f, r = _material(friction, restitution)
        return self._add_body(outline, m, bool(static), 1.0, f, r)

    def add_soft_polygon(self, points, stiffness=0.2, mass=1.0, edge_stiffness=1.0, friction=0.5,
                         restitution=0.0):
        """A jelly body: braces with ``stiffness`` < 1 give under load and spring back."""
        outline = convex_outline(points)
        k = _stiffness(stiffness, "stiffness")
        ke = _stiffness(edge_stiffness, "edge_stiffness")
        m = _positive(mass, "mass")
        f, r = _material(friction, restitution)
        return self._add_body(outline, m, False, k, f, r, edge_stiffness=ke)

    def add_rope(self, start, end, segments=20, pin_start=True, pin_end=False, mass=1.0, stiffness=1.0,
                 break_length=None):
        """A chain of ``segments`` sticks from start to end (``mass`` split over its particles)."""
        a = _point(start, "start")
        b = _point(end, "end")
        if isinstance(segments, bool) or not isinstance(segments, (int, np.integer)) or segments < 1:
            raise GeometryError(f"segments must be an integer >= 1, got {segments!r}")
        if np.hypot(*(b - a)) <= constants.WELDING_TOLERANCE * segments:
            raise GeometryError(f"rope start {a.tolist()} and end {b.tolist()} are too close")
        m = _positive(mass, "mass")
        k = _stiffness(stiffness, "stiffness")
        brk = _break_length(break_length)
        s = np.linspace(0.0, 1.0, segments + 1)[:, None]
        parts = self._add_particles(a + s * (b - a), (segments + 1) / m)
        edges = self._add_edges(parts[:-1], parts[1:], k, brk, False)
        if pin_start:
            self._pinned[parts[0]] = True
        if pin_end:
            self._pinned[parts[-1]] = True
        g = Group(self, parts, edges)
        self.groups.append(g)
        return g

    def add_cloth(self, top_left, width, height, columns, rows, pinned="top", mass=1.0, stiffness=1.0,
                  break_length=None):
        """A grid of ``columns`` x ``rows`` particles joined by horizontal and vertical sticks.

        ``pinned``: "top" (the whole top row), "corners" (the two top corners) or None.  Particles are
        row-major from the top-left corner.
        """
        tl = _point(top_left, "top_left")
        w = _positive(width, "width", GeometryError)
        h = _positive(height, "height", GeometryError)
        for name, v in (("columns", columns), ("rows", rows)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 2:
                raise GeometryError(f"{name} must be an integer >= 2, got {v!r}")
        if pinned not in ("top", "corners", None):
            raise SimulationError(f"pinned must be 'top', 'corners' or None, got {pinned!r}")
        m = _positive(mass, "mass")
        k = _stiffness(stiffness, "stiffness")
        brk = _break_length(break_length)
        xs = tl[0] + np.linspace(0.0, w, columns)
        ys = tl[1] - np.linspace(0.0, h, rows)
        X, Y = np.meshgrid(xs, ys)
        parts = self._add_particles(np.stack([X.ravel(), Y.ravel()], axis=1), columns * rows / m)
        grid = parts.reshape(rows, columns)
        hi = grid[:, :-1].ravel()
        hj = grid[:, 1:].ravel()
        vi = grid[:-1, :].ravel()
        vj = grid[1:, :].ravel()
        edges = self._add_edges(np.concatenate([hi, vi]), np.concatenate([hj, vj]), k, brk, False)
        if pinned == "top":
            self._pinned[grid[0]] = True
        elif pinned == "corners":
            self._pinned[[grid[0, 0], grid[0, -1]]] = True
        g = Group(self, parts, edges)
        self.groups.append(g)
        return g

    def _particle_index(self, particle):
        if isinstance(particle, bool) or not isinstance(particle, (int, np.integer)):
            raise SimulationError(f"particle must be an integer index, got {particle!r}")
        if not 0 <= particle < self._np:
            raise SimulationError(f"particle index {particle!r} out of range [0, {self._np})")
        return int(particle)

    def pin(self, particle, position=None):
        """Hold a particle at ``position`` (default: where it is now)."""
        i = self._particle_index(particle)
        p = self._pos[i].copy() if position is None else _point(position, "position", SimulationError)
        self._pin_pos[i] = p
        self._pos[i] = p
        self._prev[i] = p
        self._pinned[i] = True

    def unpin(self, particle):
        i = self._particle_index(particle)
        self._pinned[i] = False

    # ----------------------------------------------------------------- stepping
    def step(self, dt=1.0 / 60.0):
        h = _positive(dt, "dt")
        self.contact_count = int(K.step_kernel(
            self._pos, self._prev, self._vel0, self._inv_mass, self._pinned, self._pin_pos, self._np,
            self._ei, self._ej, self._rest, self._stiff, self._brk, self._alive, self._kiter, self._ne,
            self._b_v0, self._b_n, self._b_static, self._b_fric, self._b_rest, self._b_box, self._order,
            self._nb, float(self.gravity[0]), float(self.gravity[1]), h, self._dt_prev, self.damping,
            self.iterations, constants.LINEAR_SLOP, constants.RESTITUTION_THRESHOLD, self.shape_sweeps))
        self._dt_prev = h
        self.time += h

    # ----------------------------------------------------------------- bulk views
    @property
    def positions(self) -> np.ndarray:
        """(N, 2) positions of all particles (a copy)."""
        return self._pos[: self._np].copy()

    @property
    def velocities(self) -> np.ndarray:
        return (self._pos[: self._np] - self._prev[: self._np]) / self._dt_prev

    @property
    def masses(self) -> np.ndarray:
        """Particle masses (inf for static vertices)."""
        inv = self._inv_mass[: self._np]
        with np.errstate(divide="ignore"):
            return np.where(inv > 0.0, 1.0 / np.where(inv > 0.0, inv, 1.0), np.inf)

    @property
    def pinned(self) -> np.ndarray:
        return self._pinned[: self._np].copy()

    @property
    def edges(self) -> np.ndarray:
        """(E, 2) particle indices of the living edges."""
        alive = self._alive[: self._ne]
        return np.stack([self._ei[: self._ne][alive], self._ej[: self._ne][alive]], axis=1)

    @property
    def rest_lengths(self) -> np.ndarray:
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
        return self._b_static[: self._nb].copy()

    @property
    def particle_count(self) -> int:
        return self._np

    @property
    def edge_count(self) -> int:
        return int(self._alive[: self._ne].sum())


def edge_vertex_response(vertex, e1, e2, depth, inv_masses=None):
    """The seed's collision response, made exact (NOTES.md), as a pure function.

    ``depth`` is the vector D pointing from the edge's body towards the vertex's body.  With
    t = ((V - E1)·(E2 - E1)) / |E2 - E1|^2 clamped to [0, 1] and lambda = 1 / (t^2 + (1 - t)^2):
    ``E1 - D (1 - t) lambda / 2``, ``E2 - D t lambda / 2``, ``V + D / 2`` -- the edge point at t moves by
    exactly -D/2 and the vertex by +D/2.  With ``inv_masses = (wV, w1, w2)`` the split is by inverse
    mass instead (what the world uses; it conserves momentum).  Returns the new (V, E1, E2).
    """
    v = _point(vertex, "vertex")
    a = _point(e1, "e1")
    b = _point(e2, "e2")
    d = _point(depth, "depth")
    t = K.edge_parameter(v[0], v[1], a[0], a[1], b[0], b[1])
    if inv_masses is None:
        cv, c1, c2 = K.response_coefficients(t, 1.0, 1.0, 1.0, True)
    else:
        wv, w1, w2 = (float(x) for x in inv_masses)
        if min(wv, w1, w2) < 0.0 or not all(map(math.isfinite, (wv, w1, w2))):
            raise SimulationError(f"inverse masses must be finite and >= 0, got {inv_masses!r}")
        cv, c1, c2 = K.response_coefficients(t, wv, w1, w2, False)
    return v + cv * d, a - c1 * d, b - c2 * d
