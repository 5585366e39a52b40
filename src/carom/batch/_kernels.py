"""The batch's compiled calls: every world of a batch stepped in one call, threads spread over the worlds, and
the bulk reads and writes of the bodies' state with a leading world axis.

Each world is stepped by the single world's step kernel (``_adapter.step_kernel``, on one thread), so world i
of a batch is bitwise the world stepped alone: the same function, on the same arrays, in the same order. The
worlds are independent (no array is shared between two), so the parallel loop over them needs no
synchronisation, and which thread steps a world, or how many worlds there are, changes nothing.

The per-world tables live in a Numba typed ``List`` (one tuple of tables per world), which Python hands to the
compiled call as one object: the call's Python cost does not grow with the number of worlds. These kernels
compile the first time a batch is used, not at ``import carom``.
"""
from __future__ import annotations

import math

import numba
import numpy as np
from numba import prange

from .._jit import njit, parallel_linking_entry_njit
from . import _adapter
from ._slots import put_results, world_parts

# Numba starts its thread pool (and gives the JIT the pool's symbols) on first use; a kernel loaded from the
# cache that calls parallel code needs them before it is linked, so the pool is started here
numba.get_num_threads()


#: below this many worlds a batched call runs on the calling thread alone: starting the pool's threads costs
#: more than a world's step (20-150 µs); the results are the same on any thread count
PARALLEL_MIN_WORLDS = 4


class threads_for:
    """``with threads_for(n):`` runs the compiled calls inside on one thread when ``n`` worlds are fewer than
    :data:`PARALLEL_MIN_WORLDS`, the thread count restored after."""

    def __init__(self, n: int):
        self.n = n
        self.before = 0

    def __enter__(self) -> None:
        if self.n < PARALLEL_MIN_WORLDS:
            self.before = numba.get_num_threads()
            if self.before != 1:
                numba.set_num_threads(1)

    def __exit__(self, *exc: object) -> None:
        if self.before > 1:
            numba.set_num_threads(self.before)


#: an entry point whose body only calls kernels, with parallel loops: its module, the kernels' optimised code
#: linked in, is not optimised again as a whole (``carom._jit.parallel_linking_entry_njit``)
parallel_linking_entry = parallel_linking_entry_njit


@njit
def step_one(i, dt, substeps, gravity, friction_rule, restitution_rule, sleep_enabled, skip_apart, tables, previous,
             approach, bad):
    """Step world i of the batch (one thread): the single world's step kernel on its tables, the results put
    back into slot i of ``tables`` (the previous contact table into ``previous``, the approach speeds into
    ``approach``). A refused step (``first_bad_body``) leaves the world as it was and its code and body in
    ``bad[i]``."""
    # (the entry read without a reference per array, but for the two parts the step may hand back: ``_slots``)
    t, old, cand = world_parts(tables, i)
    if not skip_apart[i]:
        _adapter.clear_separations(old)
    clock = np.zeros(_adapter.CLOCK_LENGTH, np.int64)
    contacts, new_cand, appr, b, left = _adapter.step_kernel(dt, substeps[i], gravity[i, 0], gravity[i, 1],
                                                       friction_rule[i], restitution_rule[i], sleep_enabled[i],
                                                       t.bodies, t.shapes, _adapter.with_cand(t.tree, cand),
                                                       t.shape_proxy, t.proxy_shape, old, t.joints, t.joined,
                                                       np.int64(1), np.int64(0), clock)
    bad[i, 0] = b[0] if left is None else _adapter.STEP_UNFINISHED
    bad[i, 1] = b[1]
    if b[0] == _adapter.BODY_OK:
        put_results(tables, i, contacts, new_cand)
        previous[i] = old
        approach[i] = appr


@parallel_linking_entry
def step_worlds(dt, substeps, gravity, friction_rule, restitution_rule, sleep_enabled, skip_apart, active, tables,
                previous, approach, bad):
    """One step of ``dt`` for every world i with ``active[i]``, the worlds spread over the threads."""
    n = len(tables)
    for i in prange(n):
        if active[i]:
            step_one(np.int64(i), dt, substeps, gravity, friction_rule, restitution_rule, sleep_enabled, skip_apart, tables,
                     previous, approach, bad)


@numba.njit(cache=True, parallel=True)
def read_bodies(tables, positions, angles, velocities, angular_velocities, alive):
    """The bodies' origins, angles, centre-of-mass velocities, angular velocities and alive flags of every world
    into (N, B, …) arrays (rows beyond a world's bodies are left as they are). A body's origin is its centre of
    mass less its local centre turned by its angle, as ``Body.position`` gives it."""
    for i in prange(len(tables)):
        com, angle, vel, angvel, lc, live = _adapter.body_arrays(tables[np.int64(i)])
        for b in range(com.shape[0]):
            c = math.cos(angle[b])
            s = math.sin(angle[b])
            positions[i, b, 0] = com[b, 0] - (c * lc[b, 0] - s * lc[b, 1])
            positions[i, b, 1] = com[b, 1] - (s * lc[b, 0] + c * lc[b, 1])
            angles[i, b] = angle[b]
            velocities[i, b, 0] = vel[b, 0]
            velocities[i, b, 1] = vel[b, 1]
            angular_velocities[i, b] = angvel[b]
            alive[i, b] = live[b]


@numba.njit(cache=True)
def body_counts(tables):
    """The number of body rows of each world."""
    out = np.empty(len(tables), np.int64)
    for i in range(len(tables)):
        out[i] = _adapter.body_arrays(tables[i])[0].shape[0]
    return out


@numba.njit(cache=True)
def count_steps(mask, bad, since):
    """After a batched step of the worlds of ``mask``: each stepped world's count of steps since its Python side
    was brought up to date (``WorldBatch._since_sync``) one more, or 1 after none (−1); refused steps (``bad``)
    not counted. (A compiled loop: as NumPy masks and ``np.where`` it cost 16 µs a step whatever the count.)"""
    for i in range(mask.shape[0]):
        if mask[i] and bad[i, 0] == _adapter.BODY_OK:
            since[i] = 1 if since[i] < 0 else since[i] + 1


@numba.njit(cache=True)
def settings_in_range(gravity, substeps, limit, most):
    """Whether every gravity component is finite and within ±``limit`` and every substep count in [1, ``most``]
    (``WorldBatch._check_settings``, which names the bad value when not)."""
    for i in range(gravity.shape[0]):
        for c in range(gravity.shape[1]):
            if not (math.isfinite(gravity[i, c]) and abs(gravity[i, c]) <= limit):
                return False
    for i in range(substeps.shape[0]):
        if substeps[i] < 1 or substeps[i] > most:
            return False
    return True
