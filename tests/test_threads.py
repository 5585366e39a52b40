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
from carom.scenes.rigid_scenes import pile, pyramid, smash
from tables import assert_same_contacts

HERE = os.path.dirname(os.path.abspath(__file__))
STATE = ("_com", "_angle", "_vel", "_angvel")


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
@pytest.mark.parametrize("builder", [lambda: pyramid(base=12), lambda: pile(count=60), lambda: pyramid(base=30),
                                     crowded_plank, lambda: smash(columns=30, rows=20, projectile_x=20.0),
                                     lambda: pile(count=2500)])
def test_one_and_many_threads_are_bitwise_equal(builder):
    many = min(4, numba.config.NUMBA_NUM_THREADS)
    a = run(builder, 120, 1)
    b = run(builder, 120, many)
    for name in STATE:
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
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
np.save({out!r}, np.concatenate([w._com.ravel(), w._angle, w._vel.ravel(), w._angvel]))
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
