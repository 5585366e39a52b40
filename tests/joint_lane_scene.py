"""A small scene for the joints' lane test (run by tests/test_nojit.py, compiled and as plain Python): the
pendulums of test_revolute_record, whose revolute records the sweeps solve side by side in vector lanes, a few
steps. Writes every step's bodies, joint impulses and reactions to argv[1], and the number of lane calls (plain
Python only: the compiled lanes are not counted, 0) to argv[2]."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from carom.rigid.joints import revolute  # noqa: E402

calls = [0]
_lanes = revolute.solve_record_lanes


def _counted(*args):
    calls[0] += 1
    return _lanes(*args)


# (plain Python only: a compiled kernel that is not yet cached would try to compile the counting wrapper)
if os.environ.get("NUMBA_DISABLE_JIT") == "1":
    revolute.solve_record_lanes = _counted

from test_revolute_record import _pendulums, _run  # noqa: E402

if __name__ == "__main__":
    w, out = _run(_pendulums, False, 6)
    np.save(sys.argv[1], np.concatenate([np.concatenate([a.ravel() for a in o]) for o in out]))
    with open(sys.argv[2], "w") as f:
        f.write(str(calls[0]))
