"""The solver barrier's wait (carom._jit.wait_for_change / wake_waiters): a waiter that has spun out its budget
sleeps (a futex wait on Linux) and is woken by the writer; no wake-up is lost, and the sleeper count returns
to zero. Bitwise equality of the threaded solve is tests/test_threads.py's."""
import threading
import time

import numba
import numpy as np
import pytest

from carom import _jit
from carom._jit import atomic_load, atomic_store, wait_for_change, wake_waiters

pytestmark = pytest.mark.skipif(numba.config.DISABLE_JIT, reason="the barrier is only used in compiled code")


@numba.njit(nogil=True)
def _wait(sync, value):
    wait_for_change(sync, 8, value, 9)


@numba.njit(nogil=True)
def _release(sync, value):
    atomic_store(sync, 8, value)
    wake_waiters(sync, 8, 9)


@numba.njit(nogil=True)
def _ping_pong(sync, me, rounds):
    """Two threads take turns: thread ``me`` waits for the word to reach its parity, then advances it."""
    for r in range(rounds):
        turn = 2 * r + me
        while True:
            seen = atomic_load(sync, 8)
            if seen == turn:
                break
            wait_for_change(sync, 8, seen, 9)
        _release(sync, turn + 1)


def test_sleeping_waiter_is_woken_by_the_writer():
    sync = np.zeros(16, np.int64)
    _wait(sync, 1)                                 # the word differs already: returns at once
    done = []
    t = threading.Thread(target=lambda: (_wait(sync, 0), done.append(time.perf_counter())))
    t.start()
    time.sleep(0.05)                               # far beyond the spin: the waiter sleeps by now
    if _jit.WAIT_KIND == "futex":
        assert sync[9] == 1                        # counted as a sleeper
    start = time.perf_counter()
    _release(sync, 1)
    t.join(5.0)
    assert not t.is_alive() and done
    assert done[0] - start < 0.5
    assert sync[9] == 0 and sync[8] == 1


def test_no_wake_up_is_lost_between_two_threads():
    """Many hand-overs between two threads (each wait short or long, as the scheduler has it): all complete."""
    sync = np.zeros(16, np.int64)
    rounds = 2000
    threads = [threading.Thread(target=_ping_pong, args=(sync, np.int64(me), rounds)) for me in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60.0)
    assert not any(t.is_alive() for t in threads)
    assert sync[8] == 2 * rounds and sync[9] == 0
