"""WorldBatch: many independent rigid worlds stepped together in one compiled call.

Reinforcement learning, evolutionary search and parameter sweeps step many small worlds, not one large one.
Stepped one by one, each world costs a Python call per step; a batch holds the tables of all its worlds in
one Numba typed list and steps every world in one compiled call (``_kernels.step_worlds``), the worlds spread
over the threads and each world stepped on one thread by the single world's own step kernel. So world i of a
batch is bitwise the same world stepped alone with :meth:`carom.World.step` (on any thread count), whatever
the number of worlds in the batch, the thread count, or what the other worlds do.

Layout: each world keeps its own arrays (those of a :class:`carom.World`, which the step kernel takes as they
are), and the batch keeps the list of their tables. The other layout, one shared pool of bodies with each
world's offset into it, would have needed step kernels that take offsets, and so a second step to keep
bitwise equal to the first; the per-world tables reuse the one step as it is. Worlds of different sizes sit
side by side without padding; the bulk arrays (:meth:`WorldBatch.state`) are padded to the largest world, with
``alive`` False in the padding.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from ..errors import CaromError
from ..rigid.world import World
from . import _adapter


class BatchState(NamedTuple):
    """The bodies of every world of a batch, with a leading world axis: ``positions`` (N, B, 2) body origins,
    ``angles`` (N, B), ``velocities`` (N, B, 2) of the centres of mass, ``angular_velocities`` (N, B) and
    ``alive`` (N, B; False for removed bodies and for the rows beyond a smaller world's bodies, which hold
    NaN). Row b of world i is the body whose ``index`` is b in ``batch.world(i)``."""
    positions: np.ndarray
    angles: np.ndarray
    velocities: np.ndarray
    angular_velocities: np.ndarray
    alive: np.ndarray


def _typed_list() -> Any:
    from numba.typed import List
    return List()


class WorldBatch:
    """``count`` independent rigid worlds stepped together by one compiled call (module docstring).

    ``source`` is a :class:`carom.World` (the template: every world starts as a copy of it, through its
    snapshot), a function ``build(i) -> World`` called for i = 0 … count − 1 (worlds may then differ in size
    and content), or a sequence of worlds (taken as they are, and stepped in place). Each world's state when
    the batch is made is what :meth:`reset` returns it to. Settings per world: :attr:`gravity` (N, 2),
    :attr:`substeps` (N,), read and written as arrays (they start as each world's own). A world may not have a
    pre-solve hook, event handlers or ``bounds`` (they run per world in Python). ``keep_initial=False`` skips the
    snapshot of each world's first state (a millisecond a world), for callers that never :meth:`reset` to it.
    """

    def __init__(self, source: "World | Callable[[int], World] | Sequence[World]", count: "int | None" = None,
                 keep_initial: bool = True):
        if isinstance(source, World):
            n = self._count(count)
            snap = source.snapshot()
            worlds = [World.restore(snap) for _ in range(n)]
        elif callable(source):
            n = self._count(count)
            worlds = []
            for i in range(n):
                w = source(i)
                if not isinstance(w, World):
                    raise CaromError(f"the builder returned {type(w).__name__} for world {i}, not a carom.World")
                worlds.append(w)
        else:
            worlds = list(source)
            if not worlds or not all(isinstance(w, World) for w in worlds):
                raise CaromError("a WorldBatch needs a World, a builder function or a non-empty sequence of Worlds")
            if count is not None and count != len(worlds):
                raise CaromError(f"count={count!r} but {len(worlds)} worlds were given")
            if len({id(w) for w in worlds}) != len(worlds):
                raise CaromError("the same World appears twice in the sequence: each world of a batch is its own")
        n = len(worlds)
        self._worlds: list[World] = worlds
        self._initial: list = [w.snapshot() if keep_initial else None for w in worlds]
        self._tables = _typed_list()
        self._previous = _typed_list()
        self._approach = _typed_list()
        self.gravity = np.zeros((n, 2))
        self.substeps = np.zeros(n, np.int64)
        self._friction_rule = np.zeros(n, np.int64)
        self._restitution_rule = np.zeros(n, np.int64)
        self._sleep_enabled = np.zeros(n, np.bool_)
        self._skip_apart = np.zeros(n, np.bool_)
        self._bad = np.zeros((n, 2), np.int64)
        self._since_sync = np.zeros(n, np.int64)      # steps since world i's Python side was brought up to date
        self._out: set[int] = set()                   # worlds handed out by world(i): captured again before a step
        self._last_dt = 0.0
        for i, w in enumerate(worlds):
            settings, tables = _adapter.world_tables(w)
            self._put(i, settings, tables, append=True)

    @staticmethod
    def _count(count: Any) -> int:
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
            raise CaromError(f"count must be a positive integer, got {count!r}")
        return int(count)

    def _put(self, i: int, settings: tuple, tables: "_adapter.WorldStepTables", append: bool = False) -> None:
        """Slot i of the batch from a world's settings and tables."""
        substeps, gx, gy, friction, restitution, sleep, skip = settings
        self.gravity[i] = (gx, gy)
        self.substeps[i] = substeps
        self._friction_rule[i] = friction
        self._restitution_rule[i] = restitution
        self._sleep_enabled[i] = sleep
        self._skip_apart[i] = skip
        empty = np.zeros((0, 2))
        if append:
            self._tables.append(tables)
            self._previous.append(tables.contacts)
            self._approach.append(empty)
        else:
            self._tables[i] = tables
            self._previous[i] = tables.contacts
            self._approach[i] = empty
        self._since_sync[i] = -1          # (no step since: no events)

    # --- size and worlds -----------------------------------------------------------------------------------
    def __len__(self) -> int:
        """The number of worlds."""
        return len(self._worlds)

    @property
    def count(self) -> int:
        """The number of worlds, N."""
        return len(self._worlds)

    def world(self, i: int) -> World:
        """World ``i`` as a :class:`carom.World`, up to date (contacts, events of the last step, step count).
        Changes made through it (bodies added, forces applied, …) are taken into the batch before its next
        step or bulk read."""
        i = self._index(i)
        self._sync(i)
        self._out.add(i)
        return self._worlds[i]

    def _index(self, i: Any) -> int:
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not -len(self) <= i < len(self):
            raise CaromError(f"world index must be an integer in [{-len(self)}, {len(self)}), got {i!r}")
        return int(i) % len(self)

    def _sync(self, i: int) -> None:
        steps = int(self._since_sync[i])
        if steps == 0:
            return
        _adapter.store_results(self._worlds[i], self._tables[i], self._previous[i] if steps >= 1 else None,
                               self._approach[i], max(steps, 0), self._last_dt, self.gravity[i])
        self._since_sync[i] = 0
        w = self._worlds[i]
        w.substeps = int(self.substeps[i])

    def _take_back(self) -> None:
        """Capture again the tables of the worlds handed out by :meth:`world` (they may have changed)."""
        for i in sorted(self._out):
            settings, tables = _adapter.world_tables(self._worlds[i])
            self._put(i, settings, tables)
            self._since_sync[i] = 0
        self._out.clear()

    # --- stepping ------------------------------------------------------------------------------------------
    def step(self, dt: float, active: "Any" = None) -> None:
        """Advance every world (or those where the boolean mask ``active`` (N,) is True) by ``dt`` seconds, in
        one compiled call. A world whose step is refused (a dynamic body without mass, a non-finite velocity,
        force or torque) is left as it was and a :class:`~carom.errors.SimulationError` names it and its body
        after the call (the other worlds have stepped)."""
        from ._kernels import count_steps, step_worlds, threads_for
        from .._validate import number
        from ..constants import MAX_TIME_STEP
        dt = number(dt, "dt", 0.0, MAX_TIME_STEP, low_open=True)
        mask = self._mask(active, "active")
        self._check_settings()
        self._take_back()
        self._bad[:, 0] = _adapter.BODY_OK
        with threads_for(len(self)):
            step_worlds(dt, self.substeps, self.gravity, self._friction_rule, self._restitution_rule,
                        self._sleep_enabled, self._skip_apart, mask, self._tables, self._previous, self._approach,
                        self._bad)
        self._last_dt = dt
        count_steps(mask, self._bad, self._since_sync)
        if (self._bad[:, 0] != _adapter.BODY_OK).any():
            i = int(np.flatnonzero(self._bad[:, 0] != _adapter.BODY_OK)[0])
            err = _adapter.refused(self._worlds[i], int(self._bad[i, 0]), int(self._bad[i, 1]))
            raise type(err)(f"world {i}: {err}")

    def _mask(self, mask: Any, name: str) -> np.ndarray:
        """A boolean mask (N,) from None (every world) or an array, or a CaromError naming it."""
        n = len(self)
        if mask is None:
            return np.ones(n, np.bool_)
        m = np.asarray(mask)
        if m.dtype != np.bool_ or m.shape != (n,):
            raise CaromError(f"{name} must be a boolean array of shape ({n},), got {m.dtype} {m.shape}")
        return m

    def _check_settings(self) -> None:
        """The per-world settings as the step needs them, or a CaromError naming the bad one."""
        from ._kernels import settings_in_range
        n = len(self)
        g = self.gravity
        s = self.substeps
        if (isinstance(g, np.ndarray) and g.shape == (n, 2) and g.dtype == np.float64 and isinstance(s, np.ndarray)
                and s.shape == (n,) and s.dtype == np.int64 and settings_in_range(g, s, 3.0e38, 64)):
            return          # (the usual case, in one compiled pass; otherwise the checks below name the bad value)
        if not isinstance(g, np.ndarray) or g.shape != (n, 2) or g.dtype != np.float64 or not np.isfinite(g).all():
            raise CaromError(f"gravity must be a finite float64 array of shape ({n}, 2), got {np.asarray(g)!r}")
        if np.abs(g).max(initial=0.0) > 3.0e38:
            raise CaromError("gravity beyond the solver's single-precision limit")
        s = self.substeps
        if (not isinstance(s, np.ndarray) or s.shape != (n,) or s.dtype != np.int64 or (s < 1).any()
                or (s > 64).any()):
            raise CaromError(f"substeps must be an int64 array of shape ({n},) with values in [1, 64], got {s!r}")

    # --- resets --------------------------------------------------------------------------------------------
    def reset(self, mask: "Any" = None, snapshot: "Any" = None) -> None:
        """Return the worlds where the boolean mask (N,) is True (all without one) to the state they had when
        the batch was made, or to ``snapshot`` (a :class:`carom.rigid.snapshot.Snapshot`, e.g. from
        ``batch.world(j).snapshot()``). The reset worlds then continue bitwise as the restored world would
        alone. Their gravity and substeps become the restored world's."""
        m = self._mask(mask, "mask")
        fresh = None if snapshot is None else World.restore(snapshot)
        picked = np.flatnonzero(m)
        if snapshot is None:
            bare = [int(i) for i in picked if self._initial[i] is None]
            if bare:
                raise CaromError(f"world {bare[0]} has no initial state to reset to (replaced with keep_initial=False): "
                                 "give a snapshot")
        for i in picked:
            w = World.restore(self._initial[i] if snapshot is None else snapshot) if fresh is None or i != picked[0] \
                else fresh
            self._worlds[i] = w
            self._out.discard(int(i))
            settings, tables = _adapter.world_tables(w)
            self._put(int(i), settings, tables)
            self._since_sync[i] = 0

    def replace(self, i: int, world: World, keep_initial: bool = True) -> None:
        """Put ``world`` in slot ``i`` (stepped in place from now on, as the worlds a batch is made from). With
        ``keep_initial`` its state now becomes what :meth:`reset` returns slot ``i`` to (a snapshot, about a
        millisecond); without, slot ``i`` has no initial state until the next replacement and resetting it without
        a snapshot raises :class:`~carom.errors.CaromError`."""
        i = self._index(i)
        if not isinstance(world, World):
            raise CaromError(f"world must be a carom.World, got {type(world).__name__}")
        settings, tables = _adapter.world_tables(world)
        self._worlds[i] = world
        self._initial[i] = world.snapshot() if keep_initial else None
        self._out.discard(i)
        self._put(i, settings, tables)
        self._since_sync[i] = 0

    def _kernel_state(self) -> tuple:
        """What a compiled caller steps a world of this batch with (``_kernels.step_one``'s arguments after
        ``dt``), for carom's vector environments; the worlds handed out by :meth:`world` are taken back first."""
        self._take_back()
        self._check_settings()
        return (self.substeps, self.gravity, self._friction_rule, self._restitution_rule, self._sleep_enabled,
                self._skip_apart, self._tables, self._previous, self._approach, self._bad)

    def _restored(self, mask: np.ndarray) -> None:
        """Note that a compiled caller put the worlds of ``mask`` back into a template's state in place
        (``_adapter.restore_world``): no step since, no events; their :class:`World` objects are brought up to
        date from the tables when next asked for (:meth:`world`)."""
        self._since_sync[mask] = -1
        if self._out:
            for i in np.flatnonzero(mask):
                self._out.discard(int(i))

    def _stepped(self, mask: np.ndarray, dt: float) -> None:
        """Note that a compiled caller stepped the worlds of ``mask`` once (see :meth:`_kernel_state`)."""
        from ._kernels import count_steps
        self._last_dt = dt
        count_steps(mask, self._bad, self._since_sync)

    # --- bulk state ----------------------------------------------------------------------------------------
    def state(self) -> BatchState:
        """Every world's bodies as arrays with a leading world axis (:class:`BatchState`), without a Python
        loop over the worlds."""
        from ._kernels import body_counts, read_bodies
        self._take_back()
        counts = body_counts(self._tables)
        n, b = len(self), int(counts.max(initial=0))
        out = BatchState(np.full((n, b, 2), np.nan), np.full((n, b), np.nan), np.full((n, b, 2), np.nan),
                         np.full((n, b), np.nan), np.zeros((n, b), np.bool_))
        read_bodies(self._tables, *out)
        return out

    @property
    def positions(self) -> np.ndarray:
        """Body origins (N, B, 2) (:meth:`state`); a copy: write with :meth:`set_state`."""
        return self.state().positions

    @property
    def angles(self) -> np.ndarray:
        """Body angles (N, B) (:meth:`state`); a copy: write with :meth:`set_state`."""
        return self.state().angles

    @property
    def velocities(self) -> np.ndarray:
        """Centre-of-mass velocities (N, B, 2) (:meth:`state`); a copy: write with :meth:`set_state`."""
        return self.state().velocities

    @property
    def angular_velocities(self) -> np.ndarray:
        """Angular velocities (N, B) (:meth:`state`); a copy: write with :meth:`set_state`."""
        return self.state().angular_velocities

    def set_state(self, bodies: "Any", positions: "Any" = None, angles: "Any" = None, velocities: "Any" = None,
                  angular_velocities: "Any" = None, mask: "Any" = None) -> None:
        """Write body states in every world (or those where the boolean ``mask`` (N,) is True): ``bodies`` are
        body rows (the same in every world), and each given argument has a leading world axis: ``positions``
        (N, n, 2), ``angles`` (N, n), ``velocities`` (N, n, 2), ``angular_velocities`` (N, n). Each world's part
        goes through :meth:`carom.World.set_state` (same checks, same bodies woken); everything is checked
        before any world changes."""
        m = self._mask(mask, "mask")
        rows = np.asarray(bodies)
        n = len(self)
        args = {}
        for name, value, tail in (("positions", positions, (2,)), ("angles", angles, ()),
                                  ("velocities", velocities, (2,)), ("angular_velocities", angular_velocities, ())):
            if value is None:
                continue
            a = np.asarray(value, dtype=np.float64) if not isinstance(value, str) else None
            want = (n, rows.shape[0]) + tail
            if a is None or a.shape != want:
                raise CaromError(f"{name} must have shape {want}, got {getattr(a, 'shape', value)!r}")
            args[name] = a
        picked = np.flatnonzero(m)
        worlds = [self.world(int(i)) for i in picked]
        # every world's part checked before any is written (World.set_state checks all before it writes)
        from .._validate import points, values
        from ..constants import ANGLE_LIMIT, FLOAT32_LIMIT, WORLD_LIMIT
        for name, a in args.items():
            part = a[picked]
            if name == "positions":
                points(part.reshape(-1, 2), name, WORLD_LIMIT)
            elif name == "velocities":
                points(part.reshape(-1, 2), name, FLOAT32_LIMIT)
            else:
                values(part.reshape(-1), name, magnitude=ANGLE_LIMIT if name == "angles" else FLOAT32_LIMIT)
        for w in worlds:
            _adapter.check_rows(w, rows)
        for i, w in zip(picked, worlds):
            w.set_state(rows, **{k: v[i] for k, v in args.items()})
