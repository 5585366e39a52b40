"""Threads: the parallel stages give bitwise the same world for every thread count, and the compiled step
agrees with the same kernels run as plain Python (a guard against miscompiled parallel loops)."""
import os
import subprocess
import sys

import numba
import numpy as np
import pytest

import carom
from carom.geometry import Circle, box
from carom.scenes.rigid_scenes import joint_grid, pile, pyramid, ragdolls, smash
from tables import assert_same_contacts

HERE = os.path.dirname(os.path.abspath(__file__))
STATE = ("com", "angle", "vel", "angvel")


def run(builder, steps, threads):
    carom.set_num_threads(threads)
    try:
        w = builder()
        for _ in range(steps):
            w.step(1 / 60)
        return w
    finally:
        carom.set_num_threads(numba.config.NUMBA_NUM_THREADS)


def crowded_plank():
    """A dynamic plank under a row of 120 balls: the plank's contacts outnumber the parallel colours, so some go
    to the overflow colour (solved by one thread while the others wait at the barrier)."""
    w = carom.World(gravity=(0, -10))
    w.static_body.add_shape(box(30.0, 0.5, center=(0.0, -0.5)))
    plank = w.add_body(position=(0.0, 0.25))
    plank.add_shape(box(15.0, 0.25), density=1.0)
    for i in range(120):
        ball = w.add_body(position=(-14.5 + 0.245 * i, 0.62))
        ball.add_shape(Circle(0.12), density=1.0)
    return w


# the small scenes solve in one thread whatever the count; the larger ones run the threads' shared solve loop
# (one parallel loop with barriers between colours), the plank's with an overflow colour, the smash's with one-
# and two-point contacts in one bundle; the falling column of 2,500 bodies is a busy broad phase whose grid
# (over 2,048 entries) tests its entries in one part per thread
# (joints: one thread solves each joint sweep in one call over every colour, several threads in chunks of each
# colour; the grid's are bundles of plain point joints, the ragdolls' single joints with limits and friction)
@pytest.mark.parametrize("builder", [lambda: pyramid(base=12), lambda: pile(count=60), lambda: pyramid(base=30),
                                     crowded_plank, lambda: smash(columns=30, rows=20, projectile_x=20.0),
                                     lambda: pile(count=2500), lambda: joint_grid(n=20),
                                     lambda: ragdolls(count=30, columns=6)])
def test_one_and_many_threads_are_bitwise_equal(builder):
    many = min(4, numba.config.NUMBA_NUM_THREADS)
    a = run(builder, 120, 1)
    b = run(builder, 120, many)
    for name in STATE:
        assert np.array_equal(getattr(a.tables, name), getattr(b.tables, name)), name
    assert_same_contacts(a, b)


def test_set_num_threads_validates():
    with pytest.raises(carom.CaromError, match="threads"):
        carom.set_num_threads(0)
    with pytest.raises(carom.CaromError, match="threads"):
        carom.set_num_threads(10 ** 6)
    carom.set_num_threads(1)
    assert carom.get_num_threads() == 1
    carom.set_num_threads(numba.config.NUMBA_NUM_THREADS)


SCRIPT = """
import sys, numpy as np
sys.path.insert(0, {src!r})
from carom.scenes.rigid_scenes import pile
w = pile(count=30)
for _ in range(40):
    w.step(1 / 60)
np.save({out!r}, np.concatenate([w.tables.com.ravel(), w.tables.angle, w.tables.vel.ravel(), w.tables.angvel]))
"""


def test_compiled_step_matches_plain_python(tmp_path):
    """Numba's parallel loops once applied an in-place update twice; the plain-Python run catches that."""
    src = os.path.join(os.path.dirname(HERE), "src")
    outs = []
    for jit in ("0", "1"):
        out = str(tmp_path / f"state{jit}.npy")
        env = dict(os.environ, NUMBA_DISABLE_JIT=jit)
        r = subprocess.run([sys.executable, "-c", SCRIPT.format(src=src, out=out)], env=env, capture_output=True,
                           text=True, timeout=600)
        assert r.returncode == 0, r.stderr[-3000:]
        outs.append(np.load(out))
    # the same arithmetic in the same order: equal to rounding (LLVM may contract a*b+c differently)
    np.testing.assert_allclose(outs[0], outs[1], rtol=0, atol=1e-9)


def test_allocator_tuning_is_applied_and_can_be_switched_off():
    """carom asks glibc's malloc to keep a step's arrays in the heap (page faults serialise threads);
    CAROM_MALLOPT=0 leaves malloc alone. Both in fresh processes, since the setting is process-wide."""
    if not sys.platform.startswith("linux"):
        pytest.skip("glibc's mallopt is Linux-only")
    code = "import carom, carom._jit as j; print(j.allocator_tuned)"
    on = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    off = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, CAROM_MALLOPT="0"))
    assert on.stdout.strip() == "True", on.stderr
    assert off.stdout.strip() == "False", off.stderr


def test_steps_run_in_one_thread_where_a_layer_may_run_two_items_in_one_thread(monkeypatch):
    """The solver's threads wait for one another at barriers: under TBB (whose calling thread may run both
    items of a two-item parallel loop) or OpenMP allowed fewer threads than asked, a step uses one thread."""
    from carom import _jit
    carom.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    n = numba.get_num_threads()
    for layer, env, expected in (("tbb", {}, 1), ("omp", {"OMP_DYNAMIC": "true"}, 1),
                                 ("omp", {"OMP_THREAD_LIMIT": "1"}, 1 if n > 1 else n), ("omp", {}, n),
                                 ("workqueue", {}, n)):
        monkeypatch.setattr(_jit, "_layer", None)
        monkeypatch.setattr(numba, "threading_layer", lambda layer=layer: layer)
        for name in ("OMP_DYNAMIC", "OMP_THREAD_LIMIT"):
            monkeypatch.delenv(name, raising=False)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        assert _jit.step_threads() == expected, (layer, env)
    monkeypatch.setattr(_jit, "_layer", None)


def test_the_step_follows_a_thread_count_set_through_numba():
    """step_threads reads Numba's count on every step (after the first, without the locks of
    ``numba.get_num_threads``): a count set with numba.set_num_threads directly, not carom's, is the one a
    step uses, and each Python thread has its own."""
    import threading
    from carom import _jit
    most = numba.config.NUMBA_NUM_THREADS
    try:
        carom.World().step(1 / 60)
        for n in sorted({1, most}):
            numba.set_num_threads(n)
            assert _jit.step_threads() == n
            assert _jit.step_threads() == numba.get_num_threads()
        numba.set_num_threads(1)
        seen = []
        worker = threading.Thread(target=lambda: seen.append((_jit.step_threads(), numba.get_num_threads())))
        worker.start()
        worker.join()
        assert seen[0][0] == seen[0][1]
        assert _jit.step_threads() == 1
    finally:
        numba.set_num_threads(most)


def _govern(times, steps, available=2):
    """Drive a ThreadGovernor with made-up step times: ``times(threads)`` is the cycle count a step takes with
    that many threads. Returns the thread count of each step."""
    from carom._jit import ThreadGovernor
    g = ThreadGovernor()
    used = []
    for k in range(steps):
        n = g.threads(available)
        used.append(n)
        g.record(times(n, k))
    return np.array(used)


def test_the_governor_moves_to_one_thread_beside_a_busy_core_and_back():
    """Threads twice as slow as one thread (another process on the second core): after the first probe the
    steps run in one thread, with a probe of the threads that grows rarer; when the core is free again the
    threads come back at the next probe."""
    G = 10 ** 6
    used = _govern(lambda n, k: 2 * G if n == 2 else G, 1000)
    assert (used[:5] == 2).all()
    assert (used[100:] == 1).mean() > 0.97
    # free again after step 500: threads 1.8 × faster
    used = _govern(lambda n, k: (2 * G if n == 2 else G) if k < 500 else (G if n == 2 else 1.8 * G), 1200)
    assert (used[900:] == 2).mean() > 0.97


def test_the_governor_keeps_the_threads_on_a_quiet_machine_and_ignores_small_steps():
    G = 10 ** 6
    used = _govern(lambda n, k: G if n == 2 else 1.7 * G, 2000)
    assert (used == 2).mean() > 0.99          # probes in one thread: about 1 step in 256 once settled
    # within noise (one thread 5 % faster, less than the switch margin): stays with the threads
    assert (_govern(lambda n, k: G if n == 2 else 0.95 * G, 500) == 2).mean() > 0.97
    # too short to time: never probes
    assert (_govern(lambda n, k: 1000 if n == 2 else 1, 500) == 2).all()
    # one thread only: nothing to choose
    assert (_govern(lambda n, k: G, 100, available=1) == 1).all()


def test_a_world_whose_steps_switch_thread_count_is_bitwise_the_one_of_a_single_thread():
    """The governor may change the thread count from step to step; the world does not notice."""
    from carom._jit import ThreadGovernor

    class Alternating(ThreadGovernor):
        def threads(self, available):
            self.k = getattr(self, "k", 0) + 1
            return 1 + self.k % 2 if available > 1 else 1

    def alternating():
        w = pyramid(base=30)           # (large enough for the threads' shared solve loop)
        w._governor = Alternating()
        return w

    a = run(alternating, 60, min(4, numba.config.NUMBA_NUM_THREADS))
    b = run(lambda: pyramid(base=30), 60, 1)
    for name in STATE:
        assert np.array_equal(getattr(a.tables, name), getattr(b.tables, name))


def test_the_governor_comes_back_to_threads_that_are_a_little_faster():
    """One thread clearly faster for the first 300 steps (the governor moves to it), then the threads 6 % faster
    (0.94 × one thread's time: within the margin that takes a world to one thread, beyond the one that brings it
    back): the steps return to the threads. And one thread 6 % faster keeps them on the threads."""
    G = 10 ** 6
    used = _govern(lambda n, k: (1.5 * G if n == 2 else G) if k < 300 else (0.94 * G if n == 2 else G), 1200)
    assert (used[200:300] == 1).mean() > 0.9
    assert (used[700:] == 2).mean() > 0.97
    assert (_govern(lambda n, k: G if n == 2 else 0.94 * G, 1000)[100:] == 2).mean() > 0.97


def test_the_governor_is_not_moved_by_a_lone_cheap_step():
    """One thread is faster than the threads on one step in seven only (a scene whose step time wanders, or a
    moment when the other thread was descheduled); otherwise the threads are faster: a probe that lands on a
    cheap step is one vote, never three in a row, so the steps keep the threads."""
    G = 10 ** 6
    used = _govern(lambda n, k: G if n == 2 else (0.5 * G if k % 7 == 0 else 1.5 * G), 3000)
    assert (used == 2).mean() > 0.99


def test_the_governor_switches_after_three_agreeing_probes():
    """From the first probe (after FIRST_PROBE steps of the threads and KEEP kept times) it takes CONFIRM probes,
    CONFIRM_GAP steps apart, to move to one thread."""
    from carom._jit import ThreadGovernor as T
    G = 10 ** 6
    used = _govern(lambda n, k: 2 * G if n == 2 else G, 60)
    first_probe = T.FIRST_PROBE               # steps 0 … FIRST_PROBE − 1 with the threads, then the probe
    switched = first_probe + (T.CONFIRM - 1) * (T.CONFIRM_GAP + 1) + 1
    assert (used[:first_probe] == 2).all()
    assert used[first_probe] == 1 and used[switched - 1] == 1
    assert (used[first_probe + 1:switched - 1] == 2).sum() == (T.CONFIRM - 1) * T.CONFIRM_GAP
    assert (used[switched:switched + 8] == 1).all()


def test_held_threads_are_used_whatever_the_steps_time():
    """``set_num_threads(n, adaptive=False)``: every step runs with the threads even where one thread times
    faster; ``adaptive=True`` hands the choice back to the governor."""
    try:
        top = numba.config.NUMBA_NUM_THREADS
        carom.set_num_threads(top, adaptive=False)
        assert (_govern(lambda n, k: 2 * 10 ** 6 if n == 2 else 10 ** 6, 500) == 2).all()
        carom.set_num_threads(top)
        assert (_govern(lambda n, k: 2 * 10 ** 6 if n == 2 else 10 ** 6, 500)[100:] == 1).mean() > 0.97
        with pytest.raises(carom.CaromError, match="adaptive"):
            carom.set_num_threads(top, adaptive="no")
    finally:
        carom.set_num_threads(numba.config.NUMBA_NUM_THREADS)


HELD = """
import carom, numba
from carom import _jit
from carom.scenes.rigid_scenes import pyramid
w = pyramid(base=12)
w.step(1 / 60)
print(numba.get_num_threads(), _jit.threads_held)
"""


def test_carom_threads_in_the_environment_holds_the_count():
    env = dict(os.environ, CAROM_THREADS="1", NUMBA_NUM_THREADS=str(numba.config.NUMBA_NUM_THREADS))
    out = subprocess.run([sys.executable, "-c", HELD], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1", "True"]
    env["CAROM_THREADS"] = "many"
    out = subprocess.run([sys.executable, "-c", HELD], env=env, capture_output=True, text=True)
    assert out.returncode != 0 and "CAROM_THREADS" in out.stderr and "'many'" in out.stderr


def test_a_resting_pair_cache_with_removed_proxies_is_the_same_on_one_and_many_threads():
    """The broad phase's pass over a pair cache no fat box changed (``_tree_pairs._unmoved_pairs``) and the shape
    keys made from it: the top boxes taken off a resting pyramid leave dead pairs in the cache (their proxies
    freed) while nothing else leaves its fat box, and the next step drops them; a sensor turns the plain filter off.
    The cache never keeps a dead pair, and the pairs, contacts, bodies and cache are those of one thread."""
    many = min(4, numba.config.NUMBA_NUM_THREADS)
    worlds = []
    for threads in (1, many):
        carom.set_num_threads(threads)
        try:
            w = pyramid(base=30)
            w.static_body.add_shape(box(3.0, 1.0, center=(0.0, 4.0)), sensor=True)
            for step in range(90):
                if step == 60:
                    w.remove_bodies([b for b in w.bodies if b.kind == "dynamic"][-3:])    # (the top three)
                    dead = w.tables.bp._cand.size
                w.step(1 / 60)
                cand = w.tables.bp._cand
                flags = w.tables.bp.step_table()[4]
                assert np.all(np.diff(cand) > 0) and np.all(np.diff(w.tables.contacts.keys) > 0)
                assert np.all(flags[cand >> 32] != 0) and np.all(flags[cand & 0xFFFFFFFF] != 0), step
                if step == 60:
                    # (the removed boxes' pairs dropped by the pass over an unchanged cache)
                    assert cand.size < dead
            worlds.append(w)
        finally:
            carom.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    a, b = worlds
    assert a.tables.contacts.keys.size > 1000
    for name in STATE:
        assert np.array_equal(getattr(a.tables, name), getattr(b.tables, name)), name
    assert np.array_equal(a.tables.bp._cand, b.tables.bp._cand)
    assert_same_contacts(a, b)
