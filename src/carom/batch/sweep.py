"""Sweeps: many worlds built from a list of cases (seeds, settings), stepped in batches, locally or as Ray tasks.

``run_sweep(build, cases, steps)`` builds ``build(case)`` for every case, splits the worlds into ``chunks``
:class:`~carom.batch.WorldBatch` es, steps each batch ``steps`` times and gathers every world's final bodies as
one :class:`~carom.batch.BatchState` (a leading case axis). With ``use_ray=True`` each chunk is a Ray task
(``ray.remote``), run where Ray schedules it and its arrays brought back by Ray's object store: nothing of the
scheduling or the transport is carom's. Ray is the optional extra ``carom[ray]``; ``address=None`` starts a
local Ray instance (``ray.init()``), ``address="auto"`` joins the running cluster.

The worlds are independent and each world of a batch is bitwise the world stepped alone, so the same sweep
gives bitwise the same arrays with or without Ray, and whatever the number of chunks.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ..errors import CaromError, MissingDependencyError
from ..rigid.world import World
from .world_batch import BatchState, WorldBatch


def run_chunk(build: Callable[[Any], World], cases: Sequence[Any], steps: int, dt: float) -> BatchState:
    """One chunk of a sweep: a :class:`WorldBatch` of ``build(case)`` for each of ``cases``, stepped ``steps``
    times by ``dt``; returns its final :meth:`WorldBatch.state`."""
    batch = WorldBatch(lambda i: build(cases[i]), len(cases))
    for _ in range(steps):
        batch.step(dt)
    return batch.state()


def _gather(parts: list[BatchState]) -> BatchState:
    """The chunks' states as one, padded to the largest world (NaN, and ``alive`` False, in the padding)."""
    width = max(p.alive.shape[1] for p in parts)

    def pad(a: np.ndarray, fill: Any) -> np.ndarray:
        out = np.full((a.shape[0], width) + a.shape[2:], fill, dtype=a.dtype)
        out[:, :a.shape[1]] = a
        return out
    return BatchState(*(np.concatenate([pad(getattr(p, f), False if f == "alive" else np.nan) for p in parts])
                        for f in BatchState._fields))


def run_sweep(build: Callable[[Any], World], cases: Sequence[Any], steps: int, dt: float = 1.0 / 60.0,
              chunks: int = 1, use_ray: bool = False, address: str | None = None) -> BatchState:
    """Step ``build(case)`` for every case of ``cases`` ``steps`` times by ``dt`` and return every world's final
    bodies (:class:`BatchState`, row k for ``cases[k]``). The worlds run in ``chunks`` batches: one after the
    other here, or, with ``use_ray``, as that many Ray tasks (Ray started locally with ``ray.init()``, or
    joining ``address``, e.g. ``"auto"``, unless it is running already). ``build`` must be picklable for Ray
    (a module-level function, or a closure cloudpickle can carry). Bitwise the same arrays either way."""
    cases = list(cases)
    if not cases:
        raise CaromError("a sweep needs at least one case")
    if isinstance(chunks, bool) or not isinstance(chunks, int) or not 1 <= chunks <= len(cases):
        raise CaromError(f"chunks must be an integer from 1 to the number of cases ({len(cases)}), got {chunks!r}")
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise CaromError(f"steps must be a non-negative integer, got {steps!r}")
    bounds = np.linspace(0, len(cases), chunks + 1).astype(int)
    parts = [cases[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    if not use_ray:
        return _gather([run_chunk(build, p, steps, dt) for p in parts])
    try:
        import ray
    except ImportError as e:
        raise MissingDependencyError('use_ray needs Ray: pip install "carom[ray]"') from e
    if not ray.is_initialized():
        ray.init(address=address)
    task = ray.remote(run_chunk)
    futures = [task.remote(build, p, steps, dt) for p in parts]
    return _gather([BatchState(*r) for r in ray.get(futures)])
