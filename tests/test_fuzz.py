"""Nothing lost: every state the step leaves can be saved and restored, under a random churn of the world.

The churn itself (``tests/churn.py``) runs here for a short budget; ``make fuzz`` runs it for as long as asked.
"""
import numpy as np
import pytest

import carom
from carom.geometry import Segment, box
from carom.rigid import _step

from churn import Churn, ChurnFailure


def test_a_body_with_a_segment_falls_past_a_ground_segment_and_its_snapshot_restores():
    """A tilted box carrying a segment, dropped onto a ground segment. Two segments never touch (the narrow
    phase has no manifold for them): the narrow phase writes +inf as the pair's separation bound so that it is
    skipped for good, and the snapshot check refused that bound (only -inf was allowed), so the world's own
    snapshot could not be restored: the failure of every seed of the churn audit. And the continuous stage
    swept the two segments as if they could touch (a segment makes its body "fast": its smallest extent is
    0), which stopped the body in mid-air above the ground, for good. Now the box lands, the pair stays in the
    contact table with its +inf bound, and the snapshot restores and continues bitwise."""
    w = carom.World(gravity=(0, -10))
    w.static_body.add_shape(Segment((-5, 0), (5, 0)))
    b = w.add_body(position=(0, 0.8), angle=0.3)
    b.add_shape(box(0.5, 0.5), density=1.0)
    b.add_shape(Segment((-1, -0.45), (1, -0.45)))          # reaches 7 cm above the ground
    for _ in range(120):
        w.step(1 / 60)
        carom.World.restore(w.snapshot())     # every step's state restores (the fall's steps held the +inf)
    # resting on the box's corner or face (its centre at most 0.5·√2 above the ground), not on the segment
    assert b.position[1] < 0.71 and abs(b.velocity[1]) < 0.5
    twin = carom.World.restore(w.snapshot())
    w.step(1 / 60)
    twin.step(1 / 60)
    assert twin.snapshot().data == w.snapshot().data


def test_the_cache_check_takes_exactly_what_the_step_writes():
    """``invalid_cache_rows``: finite fields, a separation bound of -inf anywhere and +inf only for a pair
    that never touches; NaN nowhere."""
    rows = np.zeros((5, _step.CACHE_WIDTH))
    rows[1, _step.CSEP] = -np.inf
    rows[2, _step.CSEP] = np.inf
    rows[3, _step.CSEP] = np.inf
    rows[4, _step.CQ0 + 4] = np.inf
    never_touch = np.array([False, False, True, False, True])
    assert _step.invalid_cache_rows(rows, never_touch).tolist() == [False, False, False, True, True]
    rows[0, _step.CSEP] = np.nan
    assert _step.invalid_cache_rows(rows, np.ones(5, bool))[0]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_short_churn_restores_every_snapshot_and_its_twin_agrees(seed):
    """Random adds and removals of bodies and shapes, impulses up to 1e15 N·s, teleports, velocity sets, a
    random dt: every 20 steps the world's snapshot restores, and every 150 its twin equals it bitwise after
    the next step (``make fuzz`` runs the same for longer)."""
    churn = Churn(seed, restore_every=150, check_every=20, bodies=20)
    churn.run(450)
    assert churn.restores == 3 and churn.body_steps > 450 * 10


def test_a_churn_failure_names_its_seed_step_and_operations():
    """A failure is reported with what reproduces it (the harness must not swallow one)."""
    churn = Churn(5, bodies=3)
    churn.world.step = lambda dt: (_ for _ in ()).throw(RuntimeError("planted"))
    with pytest.raises(ChurnFailure, match=r"seed 5, step 1: RuntimeError: planted\n(.|\n)*add_body"):
        churn.run(3)
