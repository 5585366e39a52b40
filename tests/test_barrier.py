"""The solver's waits (carom._jit.wait_for_change / wake_waiters): a waiter that has spun out its budget sleeps
(a futex wait on Linux) and is woken by the writer; no wake-up is lost, and the sleeper count returns to zero.
The solver's work claiming (carom.rigid._solver claim_chunk / finish_chunk / await_phase): every chunk of a
phase is done once, all of them before any of the next phase, and no thread waits for one that has not come.
Bitwise equality of the threaded solve is tests/test_threads.py's."""
import threading
import time

import numba
import numpy as np
import pytest

from carom import _jit
from carom._jit import atomic_add, atomic_load, atomic_store, wait_for_change, wake_waiters
from carom.rigid._solver import await_phase, claim_chunk, finish_chunk, phase_base

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


@numba.njit(nogil=True)
def _phases(sync, w, threads, chunks, ticket, done, start, end, work):
    """Thread w's part of a run of phases (``chunks[p]`` chunks each), as the solver goes through them: each
    claimed chunk takes a ticket when it starts and one when it ends, and counts itself in ``done``."""
    for p in range(chunks.shape[0]):
        base = phase_base(p, threads)
        k = claim_chunk(sync, base, w, threads, chunks[p])
        while k >= 0:
            start[p, k] = atomic_add(ticket, 0, 1)
            x = 0.0
            for i in range(work):           # a little work, so the threads overlap
                x += i * 1e-9
            atomic_add(done, p * chunks.max() + k, 1 + np.int64(x > 1e300))
            end[p, k] = atomic_add(ticket, 0, 1)
            finish_chunk(sync, base, chunks[p])
            k = claim_chunk(sync, base, w, threads, chunks[p])
        await_phase(sync, base, chunks[p])


def _phase_arrays(threads, chunks):
    P, C = chunks.shape[0], chunks.max()
    return (np.zeros(phase_base(P, threads), np.int64), np.zeros(8, np.int64), np.zeros(P * C, np.int64),
            np.full((P, C), -1, np.int64), np.full((P, C), -1, np.int64))


def _check_phases(chunks, done, start, end):
    """Every chunk done exactly once, and each phase's chunks all ended before any of the next one started."""
    C = chunks.max()
    for p, n in enumerate(chunks):
        assert (done[p * C:p * C + n] == 1).all(), p
        assert (done[p * C + n:(p + 1) * C] == 0).all(), p
        if p + 1 < chunks.shape[0]:
            assert end[p, :n].max() < start[p + 1, :chunks[p + 1]].min(), p


@pytest.mark.parametrize("threads", [2, 3])
def test_claimed_chunks_run_once_and_phase_by_phase(threads):
    rng = np.random.default_rng(threads)
    chunks = rng.integers(1, 4 * threads + 3, 300).astype(np.int64)
    sync, ticket, done, start, end = _phase_arrays(threads, chunks)
    workers = [threading.Thread(target=_phases, args=(sync, np.int64(w), np.int64(threads), chunks, ticket, done,
                                                      start, end, np.int64(200 * (w + 1))))
               for w in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join(60.0)
    assert not any(t.is_alive() for t in workers)
    _check_phases(chunks, done, start, end)
    for p in range(chunks.shape[0]):                # every count reached, no sleeper left counted
        base = phase_base(p, threads)
        assert sync[base] == chunks[p] and sync[base + 1] == 0


def test_a_thread_that_has_not_come_is_not_waited_for():
    """Thread 0 of 2 runs every phase alone (thread 1 is not running, as under a busy core or a layer that
    runs the items one after the other): it does all the chunks; thread 1, coming late, finds them done."""
    chunks = np.array([8, 1, 5, 8, 3], np.int64)
    sync, ticket, done, start, end = _phase_arrays(2, chunks)
    for w in (0, 1):
        t = threading.Thread(target=_phases, args=(sync, np.int64(w), np.int64(2), chunks, ticket, done, start,
                                                   end, np.int64(10)))
        t.start()
        t.join(30.0)
        assert not t.is_alive(), w
        if w == 0:
            _check_phases(chunks, done, start, end)
    assert ticket[0] == 2 * chunks.sum()            # thread 1 did nothing
