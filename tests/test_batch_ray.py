"""A sweep run as Ray tasks (a local Ray instance with two workers), each task holding a WorldBatch, gives bitwise
the arrays of the same sweep run here without Ray (and whatever the number of chunks)."""
import sys

import numpy as np
import pytest

import ray
from ray import cloudpickle

from carom.batch.sweep import run_sweep
from carom.errors import CaromError
from carom.scenes import rigid_scenes as rs


def build(case):
    """A case: a chain of 3 to 6 links under its own gravity."""
    links, gravity = case
    w = rs.chain(links=links)
    w.gravity = (0.0, gravity)
    return w


CASES = [(3 + k % 4, -4.0 - k) for k in range(8)]


@pytest.mark.slow
def test_a_ray_sweep_equals_the_local_run():
    local = run_sweep(build, CASES, steps=15)
    # (the workers cannot import this test module: its builder travels by value)
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        remote = run_sweep(build, CASES, steps=15, chunks=2, use_ray=True)
    finally:
        ray.shutdown()
    for name, a, b in zip(local._fields, local, remote):
        assert a.shape == b.shape and np.array_equal(a, b, equal_nan=True), name
    assert local.alive.sum(axis=1).tolist() == [links + 4 for links, _ in CASES]   # (the chain scene: links + 4 rows)
    four = run_sweep(build, CASES, steps=15, chunks=4)
    assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(local, four))


def test_bad_sweeps_are_refused():
    with pytest.raises(CaromError, match="chunks"):
        run_sweep(build, CASES, steps=1, chunks=9)
    with pytest.raises(CaromError, match="case"):
        run_sweep(build, [], steps=1)
    with pytest.raises(CaromError, match="steps"):
        run_sweep(build, CASES, steps=-1)
