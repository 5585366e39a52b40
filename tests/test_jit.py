"""carom._jit's compiled helpers, checked against NumPy."""
import math
import os

import numpy as np
import pytest

from carom._jit import (KernelDispatcher, borrowed, borrowed_rows, by_ref, deref, entry_njit, inline_njit, llvm_inline_njit,
                        njit, sin_cos)
from carom.rigid.joints import bookkeeping as joint_rows


@njit
def _sum_and_mark(a, start, count):
    v = borrowed_rows(a, start, count)
    total = 0.0
    for i in range(v.shape[0]):
        for j in range(v.shape[1]):
            total += v[i, j]
    if v.shape[0] > 0:
        v[0, 0] = -1.0
    return total, v.shape[0], v.shape[1]


def test_borrowed_rows_is_the_slice_and_writes_through():
    a = np.arange(24.0).reshape(8, 3)
    for start, count in [(0, 8), (2, 3), (7, 1), (5, 0)]:
        b = a.copy()
        total, rows, cols = _sum_and_mark(b, start, count)
        assert total == a[start:start + count].sum()
        assert (rows, cols) == (count, 3)
        expected = a.copy()
        if count:
            expected[start, 0] = -1.0
        assert np.array_equal(b, expected)



@inline_njit
def _bump_where_positive(v, i):
    """A helper with a branch, inlined at Numba's IR level (the case ``borrowed`` is for)."""
    if v.flat[i] > 0.0:
        v.flat[i] += 1.0
    else:
        v.flat[i] -= 1.0


@njit
def _bump_all_borrowed(a):
    v = borrowed(a)
    for i in range(v.size):
        _bump_where_positive(v, i)
    return v.shape, v.strides


def _owner_of(typingctx, a):
    """(test helper) The meminfo pointer of an array in compiled code, as an integer (0: no owner)."""
    import numba
    from numba.core import cgutils

    def codegen(context, builder, sig, args):
        arr = context.make_array(sig.args[0])(context, builder, args[0])
        return builder.ptrtoint(arr.meminfo, cgutils.intp_t)
    return numba.types.intp(a), codegen


try:
    import numba
    _owner = numba.extending.intrinsic(_owner_of)

    @numba.njit
    def _owners(a):
        u, v = borrowed((a, a[1:]))        # a tuple of arrays: each member borrowed
        (x, k), y = borrowed(((a, 7), a[:2]))     # nested tuples: each array borrowed, other values kept
        return _owner(a), _owner(borrowed(a)), _owner(u), _owner(v), _owner(x), _owner(y), k
except Exception:       # (no JIT: nothing to inspect)
    _owners = None


def test_borrowed_is_the_same_array_without_an_owner():
    """``borrowed`` views see and change the array's own data, for any shape and layout, and hold no reference
    (a null meminfo: Numba's reference counting skips it, so per-item calls take no atomic references)."""
    import numba
    views = (lambda x: x, lambda x: x.reshape(4, 10), lambda x: x.reshape(2, 4, 5), lambda x: x.reshape(8, 5)[::2, 1:4])
    for view in views:
        base = np.arange(40.0) - 9.0
        b = view(base.copy())
        shape, strides = _bump_all_borrowed(b)
        a = view(base)
        assert tuple(shape) == a.shape and tuple(strides) == a.strides
        assert np.array_equal(b, np.where(a > 0.0, a + 1.0, a - 1.0))
    if numba.config.DISABLE_JIT:
        return
    owner, *borrowed_owners, kept = _owners(np.zeros(3))
    assert owner != 0 and borrowed_owners == [0, 0, 0, 0, 0] and kept == 7


@njit
def _sin_cos_all(x, out):
    for i in range(x.shape[0]):
        s, c = sin_cos(x[i])
        out[i, 0] = s
        out[i, 1] = c


def test_sin_cos_is_bitwise_math_sin_and_cos():
    """The solver and the bounds stage take sin and cos from one call (libm's sincos where it exists); the
    values must be exactly those of math.sin and math.cos, so that trajectories do not depend on it."""
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.uniform(-1e-3, 1e-3, 20000), rng.uniform(-7.0, 7.0, 20000), rng.uniform(-1e5, 1e5, 5000),
                        rng.normal(0.0, 1e-9, 5000), [0.0, -0.0, math.pi, -math.pi / 2, 1e300, 5e-324]])
    out = np.empty((x.shape[0], 2))
    _sin_cos_all(x, out)
    expected = np.array([[math.sin(v), math.cos(v)] for v in x])
    assert np.array_equal(out.view(np.int64), expected.view(np.int64))


@njit
def _triple(x):
    return 3 * x


@entry_njit
def _triple_from_kernel(x):
    return _triple(x) + 1


def test_kernel_without_wrappers_is_called_from_python_through_its_twin():
    """A kernel (``njit``) is compiled without the Python wrapper: its own code is used only from compiled code,
    and a call from Python goes to a twin compiled with the wrapper. Both give the same results, and the two
    are cached under different keys, so neither can load the other's code."""
    import numba
    if numba.config.DISABLE_JIT:
        assert _triple(2.5) == 7.5
        return
    assert _triple_from_kernel(4) == 13            # compiled caller: the wrapper-less kernel, linked in
    assert isinstance(_triple, KernelDispatcher)
    _triple.compile((numba.int64,))                 # the kernel's own code (from the cache, or compiled)
    kernel_sigs = list(_triple.signatures)
    assert kernel_sigs == [(numba.int64,)]
    assert _triple(2.5) == 7.5 and _triple(4) == 12     # from Python: the twin
    twin = _triple.python_twin()
    assert not isinstance(twin, KernelDispatcher) and (numba.float64,) in twin.signatures
    assert _triple.signatures == kernel_sigs        # Python calls never compiled (nor ran) the kernel itself
    codegen = _triple.targetctx.codegen()
    sig = kernel_sigs[0]
    assert _triple._cache._index_key(sig, codegen) != twin._cache._index_key(sig, codegen)


def _branchy_sum(a, b):
    total = 0.0
    for i in range(a.shape[0]):
        if a[i] > 0.0:
            total += a[i] * b[i % b.shape[0]]
        else:
            total -= b[0]
    return total


_branchy_kernel = njit(_branchy_sum)


@njit
def _this_or_fresh(a, fresh):
    """Returns its argument (which must then hold a reference of its own) or a new array."""
    if fresh:
        return a * 2.0
    return a


@njit
def _kept_in_a_tuple(a, pair):
    """Returns a tuple holding its argument, a slice of it and a member of its tuple argument."""
    return a, a[1:], pair[1]


@njit
def _reassigned(a, n):
    """Rebinds its argument (each new value drops the old one: Numba's way, not borrowed)."""
    for _ in range(n):
        a = a[1:] + 1.0
    return a


def _owning_caller(k):
    a = np.arange(float(k + 4)) - 1.0
    b = np.ones(k + 2)
    first = _this_or_fresh(a, k % 2 == 0)
    second = _kept_in_a_tuple(np.full(3, float(k)), (a, b))
    third = _reassigned(a.copy(), k % 3)
    return first, second, third, _branchy_kernel(a, b)


def _assert_each_allocation_freed_once(make, check):
    """``make()``'s results checked by ``check``, then dropped, under Numba's allocation counters: every array and
    every owner record made is freed exactly once (none leaked, none freed while in use: a double free aborts)."""
    import gc
    from numba.core.runtime import _nrt_python, rtsys
    _nrt_python.memsys_enable_stats()
    try:
        before = rtsys.get_allocation_stats()
        results = make()
        gc.collect()
        check(results)
        del results
        gc.collect()
        after = rtsys.get_allocation_stats()
    finally:
        _nrt_python.memsys_disable_stats()
    assert after.alloc - before.alloc > 0
    assert after.alloc - before.alloc == after.free - before.free
    assert after.mi_alloc - before.mi_alloc == after.mi_free - before.mi_free


def test_kernels_borrow_their_arguments_and_whatever_outlives_the_call_owns_its_reference():
    """Kernels take no reference on their array arguments (``_borrowed_arguments``): the caller's lasts the call.
    What outlives the call, returned or kept in a returned tuple, owns a reference of its own, and an argument
    the kernel rebinds keeps Numba's counting. Checked with Numba's own allocation counters: every array and
    every owner record made is freed exactly once, after the results are dropped, and the values are right."""
    import numba
    if numba.config.DISABLE_JIT:
        return
    from carom._jit import _LinkingCompiler

    # the entry as the step's (carom's library, so its own arguments are borrowed too), compiled here
    caller = numba.njit(pipeline_class=_LinkingCompiler)(_owning_caller)
    caller(0)

    def check(results):
        for k, (first, (a, tail, b), third, total) in enumerate(results):
            base = np.arange(float(k + 4)) - 1.0
            assert np.array_equal(first, base * 2.0 if k % 2 == 0 else base)
            assert np.array_equal(a, np.full(3, float(k))) and np.array_equal(tail, np.full(2, float(k)))
            assert np.array_equal(b, np.ones(k + 2))
            assert np.array_equal(third, base[k % 3:] + k % 3)
            assert total == _branchy_sum(base, np.ones(k + 2))
    _assert_each_allocation_freed_once(lambda: [caller(k) for k in range(60)], check)
    # and the kernel's code takes no reference on its arguments, where Numba's plain compile takes them
    sig = (numba.float64[::1], numba.float64[::1])
    _branchy_kernel.compile(sig)
    plain = numba.njit(_branchy_sum)
    plain.compile(sig)
    # (the optimised code: Numba's increments are inlined there, its decrements stay calls)
    assert _branchy_kernel.inspect_llvm(sig).count("call void @NRT_decref") == 0
    assert plain.inspect_llvm(sig).count("call void @NRT_decref") > 0


@njit
def _signed_sum(tables):
    """Σ b[i] where a[i] > 0, less Σ c[i] elsewhere, of tables = (a, b, c), handed by pointer (``by_ref``) or by
    value: a branchy loop, so that Numba's reference counts on the tables would stay."""
    tables = deref(tables)
    a, b, c = tables
    total = 0.0
    for i in range(a.shape[0]):
        if a[i] > 0.0:
            total += b[i]
        else:
            total -= c[i]
    return total


def _pointer_caller(k):
    tables = (np.arange(float(k + 3)) - 1.0, np.arange(float(k + 3)), np.full(k + 3, 2.0))
    return _signed_sum(by_ref(tables)), _signed_sum(tables), tables


def test_tables_handed_by_pointer_read_as_by_value_and_count_no_references():
    """A tuple of arrays handed by pointer (``by_ref``) reads in the callee (``deref``) as the tuple itself does,
    the same numbers as by value and as NumPy; no array is freed early or leaked (Numba's allocation counters);
    and the callee's code has no reference count left on the tables (``deref`` gives views without an owner),
    where Numba's plain compile of the same function over the tuple counts references."""
    import numba
    if numba.config.DISABLE_JIT:
        return
    from carom._jit import _LinkingCompiler

    caller = numba.njit(pipeline_class=_LinkingCompiler)(_pointer_caller)
    caller(0)

    def check(results):
        for k, (by_pointer, by_value, (a, b, c)) in enumerate(results):
            expected = b[a > 0].sum() - c[a <= 0].sum()
            assert by_pointer == by_value == expected == sum(range(2, k + 3)) - 4.0
    _assert_each_allocation_freed_once(lambda: [caller(k) for k in range(40)], check)
    tables = numba.types.UniTuple(numba.float64[::1], 3)
    _signed_sum.compile((numba.types.CPointer(tables),))
    code = _signed_sum.inspect_llvm((numba.types.CPointer(tables),))
    assert code.count("call void @NRT_decref") == 0 and code.count("@NRT_incref") == 0
    plain = numba.njit(_signed_sum.py_func)
    plain.compile((tables,))
    assert plain.inspect_llvm((tables,)).count("call void @NRT_decref") > 0


@llvm_inline_njit
def _scaled_row_sum(a, i, s):
    total = 0.0
    for j in range(a.shape[1]):
        total += s * a[i, j]
    return total


@njit
def _called_scaled_sum(a, s):
    total = 0.0
    for i in range(a.shape[0]):
        total += _scaled_row_sum(a, i, s)
    return total


@entry_njit
def _scaled_sum(a, s):
    return _called_scaled_sum(a, s)


def test_llvm_inline_kernel_is_inlined_into_its_caller_with_the_same_results():
    """An ``llvm_inline_njit`` kernel gives the caller the same numbers as the plain loop, and its caller's
    optimised IR has no call left to it (LLVM inlined it: the point of marking it ``alwaysinline``)."""
    import numba
    a = np.arange(12.0).reshape(3, 4) * 0.1
    expected = 0.0
    for i in range(3):
        row = 0.0
        for j in range(4):
            row += 0.7 * a[i, j]
        expected += row
    assert _scaled_sum(a, 0.7) == expected
    if numba.config.DISABLE_JIT:
        return
    _called_scaled_sum.compile((numba.typeof(a), numba.float64))      # (from the cache, or compiled)
    ir = next(iter(_called_scaled_sum.overloads.values())).library.get_llvm_str()
    _scaled_row_sum.compile((numba.typeof(a), numba.int64, numba.float64))   # (from the cache, or compiled)
    callee = next(iter(_scaled_row_sum.overloads.values())).fndesc.llvm_func_name
    calls = [line for line in ir.splitlines() if "call " in line and callee in line]
    assert calls == []
    # the mark itself, which makes LLVM inline however large the kernel (a small one it would inline anyway)
    library = next(iter(_scaled_row_sum.overloads.values())).library
    function_attributes = next(iter(library._final_module.get_function(callee).attributes))
    assert b"alwaysinline" in function_attributes.split()


_TOY_KERNELS = '''
import os, time
from carom._jit import njit, entry_njit

@njit
def callee(x):
    return 2.0 * x + 1.0

@entry_njit
def entry(x):
    return callee(x)

def job(arg_types):
    """The helper's job: compile the callee for the entry's argument types, then leave a mark."""
    callee.compile(arg_types)
    open(os.environ["TOY_MARK"], "w").close()

def slow_job(arg_types):
    """A job that outlasts its program: writes its process id, then the mark a minute later."""
    import time
    with open(os.environ["TOY_MARK"] + ".pid", "w") as f:
        f.write(str(os.getpid()))
    time.sleep(60)
    open(os.environ["TOY_MARK"], "w").close()
'''

_TOY_MAIN = '''
import json, os, sys, time
import subprocess
if os.environ.get("TOY_ONE_CORE"):
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
spawned = []
_popen = subprocess.Popen
def _counting_popen(*a, **k):
    spawned.append(a)
    return _popen(*a, **k)
subprocess.Popen = _counting_popen
sys.path.insert(0, os.environ["TOY_DIR"])
import toy_kernels
from carom._jit import compile_helper, start_compile_helper, _cached
args = (3.0,)
started = not _cached(toy_kernels.entry, (toy_kernels.entry.typeof_pyval(3.0),))
if os.environ.get("TOY_EARLY"):
    # the helper started ahead of the first call (as the first world starts the step's), then the call
    start_compile_helper(toy_kernels.entry, args, "toy_kernels:" + os.environ["TOY_EARLY"])
    if os.environ["TOY_EARLY"] == "slow_job":
        # the program ends before its first call, once the helper runs its job (abruptly: no exit handlers)
        while not os.path.exists(os.environ["TOY_MARK"] + ".pid"):
            time.sleep(0.05)
        os._exit(0)
with compile_helper(toy_kernels.entry, args, "toy_kernels:job"):
    deadline = time.time() + (0 if os.environ.get("TOY_ONE_CORE") else 60)
    while not os.path.exists(os.environ["TOY_MARK"]) and time.time() < deadline:
        time.sleep(0.05)
    result = toy_kernels.entry(*args)
print(json.dumps(dict(started=started, spawned=len(spawned), result=result,
                      hits=sum(toy_kernels.callee.stats.cache_hits.values()),
                      misses=sum(toy_kernels.callee.stats.cache_misses.values()))))
'''


def _run_toy(tmp_path, cache, mark, one_core=False, early=None):
    import json
    import os
    import subprocess
    import sys
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), TOY_DIR=str(tmp_path), TOY_MARK=str(mark))
    if one_core:
        env["TOY_ONE_CORE"] = "1"
    if early:
        env["TOY_EARLY"] = early
    env.pop("CAROM_COMPILE_HELPER", None)
    out = subprocess.run([sys.executable, "-c", _TOY_MAIN], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1]) if out.stdout.strip() else None


def test_compile_helper_fills_the_cache_that_the_entry_then_loads_from(tmp_path):
    """A cold first call starts a helper process whose job compiles the callee into the shared cache; the
    entry's compile then loads the callee instead of compiling it. A warm call starts no helper."""
    (tmp_path / "toy_kernels.py").write_text(_TOY_KERNELS)
    cache = tmp_path / "cache"
    cold = _run_toy(tmp_path, cache, tmp_path / "mark1")
    assert cold["started"] and cold["spawned"] == 1 and cold["result"] == 7.0
    assert (tmp_path / "mark1").exists()             # the helper ran the job
    assert cold["hits"] == 1 and cold["misses"] == 0  # and the entry found its callee in the cache
    warm = _run_toy(tmp_path, cache, tmp_path / "mark2")
    assert not warm["started"] and warm["result"] == 7.0
    assert not (tmp_path / "mark2").exists()        # nothing to compile: no helper


def test_compile_helper_started_ahead_is_the_one_the_first_call_uses(tmp_path):
    """A helper started ahead of the first call (``start_compile_helper``, as the first world starts the
    step's) is the call's helper: no second one is started, and the call loads the callee it compiled."""
    (tmp_path / "toy_kernels.py").write_text(_TOY_KERNELS)
    cold = _run_toy(tmp_path, tmp_path / "cache", tmp_path / "mark", early="job")
    assert cold["started"] and cold["spawned"] == 1 and cold["result"] == 7.0
    assert (tmp_path / "mark").exists()
    assert cold["hits"] == 1 and cold["misses"] == 0


def test_compile_helper_ends_with_a_program_that_ends_before_its_first_call(tmp_path):
    """A program that ends before the call its helper was started for leaves no helper running: the helper
    (whose job would run another minute) is gone within seconds."""
    import time
    (tmp_path / "toy_kernels.py").write_text(_TOY_KERNELS)
    mark = tmp_path / "mark"
    assert _run_toy(tmp_path, tmp_path / "cache", mark, early="slow_job") is None
    pid = int((tmp_path / "mark.pid").read_text())
    deadline = time.monotonic() + 10.0
    while time.monotonic() < deadline and os.path.exists(f"/proc/{pid}"):
        time.sleep(0.1)
    state = open(f"/proc/{pid}/stat").read().split()[2] if os.path.exists(f"/proc/{pid}") else "gone"
    assert state in ("gone", "Z"), state
    assert not mark.exists()


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs an affinity mask to pin the process")
def test_no_compile_helper_on_one_core(tmp_path):
    """Pinned to one core, a cold first call starts no helper (it would only take turns with the entry's
    compile): the entry compiles the callee itself."""
    (tmp_path / "toy_kernels.py").write_text(_TOY_KERNELS)
    cold = _run_toy(tmp_path, tmp_path / "cache", tmp_path / "mark", one_core=True)
    assert cold["started"] and cold["result"] == 7.0      # (started: nothing was cached)
    assert cold["spawned"] == 0 and not (tmp_path / "mark").exists()
    assert cold["hits"] == 0 and cold["misses"] == 1


class _FakeKernel:
    """(test helper) What a claim reads of a kernel: its Python function's module and name."""
    def __init__(self, name):
        self.py_func = type("F", (), {"__module__": "toy", "__qualname__": name})


def test_claims_let_one_process_compile_a_shared_kernel_and_the_other_wait_for_it(tmp_path):
    """Two processes of a cold compile (two ``_Claims`` on one directory here, one in a thread): the first to
    reach a shared kernel compiles it; the second waits until that compile is done, not longer; a kernel
    claimed by a process that is gone, or reached while holding a claim, is not waited for."""
    import threading
    import time
    from carom._jit import _Claims
    alive = [True]
    first = _Claims(str(tmp_path), ["toy.k", "toy.other"], lambda: alive[0])
    second = _Claims(str(tmp_path), ["toy.k", "toy.other"], lambda: alive[0])
    k = _FakeKernel("k")
    assert first.shared(k) and not first.shared(_FakeKernel("unshared"))
    events = []
    holding = threading.Event()

    def compile_first():
        with first.claim(k):
            holding.set()
            time.sleep(0.3)
            events.append("first compiled")

    t = threading.Thread(target=compile_first)
    t.start()
    holding.wait()
    t0 = time.monotonic()
    with second.claim(k):
        events.append("second went on")
    waited = time.monotonic() - t0
    t.join()
    assert events == ["first compiled", "second went on"]
    assert 0.1 < waited < 5.0
    # the claimant is gone (its process ended before it finished): no wait
    other = _FakeKernel("other")
    with first.claim(other):
        alive[0] = False
        t0 = time.monotonic()
        with second.claim(other):
            pass
        assert time.monotonic() - t0 < 1.0


def test_claims_never_wait_while_holding_one(tmp_path):
    """A process compiling a shared kernel that reaches another shared kernel, claimed by the other process,
    compiles it too instead of waiting (two processes could otherwise wait for each other)."""
    import time
    from carom._jit import _Claims
    mine = _Claims(str(tmp_path), ["toy.a", "toy.b"], lambda: True)
    theirs = _Claims(str(tmp_path), ["toy.a", "toy.b"], lambda: True)
    a, b = _FakeKernel("a"), _FakeKernel("b")
    with theirs.claim(b):              # (never finished while the other compiles)
        with mine.claim(a):
            t0 = time.monotonic()
            with mine.claim(b):
                pass
            assert time.monotonic() - t0 < 1.0


def test_late_stages_job_compiles_the_signatures_the_step_uses():
    """``compile_late_stages`` (the step's compile helper job) asks for exactly the types ``step_kernel``
    calls the late stages with: after a step, each stage's cache index holds one entry (a helper with other
    types would have left a second beside the step's own), and the job finds every one in the cache and adds
    no signature the step did not use."""
    import numba
    from carom.rigid import _step
    from carom.scenes.rigid_scenes import pyramid
    world = pyramid(base=3)
    world.step(1 / 60)
    bodies, shapes, tree, proxy, proxy_shape = world.step_tables()
    args = (1 / 60, world.substeps, 0.0, -10.0, 0, 0, True, bodies, shapes, tree, proxy, proxy_shape,
            world.tables.contacts, joint_rows.table(world.tables), joint_rows.joined_keys(world), numba.get_num_threads(), 0,
            np.zeros(len(_step.STAGES) + 1, np.int64))
    types = tuple(_step.step_kernel.typeof_pyval(a) for a in args)
    assert types in _step.step_kernel.overloads
    # the types a new, empty world gives its compile helper (started when the first world is made) are these
    from carom.rigid import World
    fresh = World()._step_args(1 / 60, numba.get_num_threads(), np.zeros(len(_step.STAGES) + 1, np.int64))
    assert tuple(_step.step_kernel.typeof_pyval(a) for a in fresh) == types
    late = _step.LATE_STAGES
    # (the narrow phase's polygon tests are also compiled for other callers, the queries, and CPU levels; the
    # continuous, sensor and sleep stages for ``step_tail``, which hands them the tables by value; a tree's leaf
    # insertion for the broad-phase structures)
    shared = {_step.collide_quadrilaterals, _step.collide_sat, _step.continuous_stage, _step.sensor_stage,
              _step.sleep_stage, _step._tree_insert_leaf}

    def entries(kernel):
        """The kernel's cache entries for this processor level, compiled to be called from compiled code (not
        a Python twin, which other tests may have made)."""
        level = kernel.targetctx.codegen().magic_tuple()
        return [key for key in kernel._cache._cache_file._load_index()
                if key[1] == level and key[-1] in ("carom kernel: no wrappers", "carom apart: no wrappers")]

    for kernel in late:
        if kernel not in shared:
            assert len(entries(kernel)) == 1, kernel
        kernel.stats.cache_misses.clear()
    before = {kernel: set(kernel.overloads) for kernel in late}
    _step.compile_late_stages(types)
    for kernel in late:
        assert not kernel.stats.cache_misses, kernel
        if kernel not in shared:
            assert len(kernel.overloads) == 1, kernel
        else:           # the narrow phase's signature (the shape table's rows), not one of the queries' (read-only)
            for sig in set(kernel.overloads) - before[kernel]:
                assert not any(getattr(t, "readonly", False) for t in sig), (kernel, sig)


def test_linking_entry_point_is_not_optimised_again_and_gives_the_same_results(monkeypatch):
    """An entry compiled the way ``linking_entry_njit`` compiles the step links its kernels' optimised code without
    running the module optimisation again: the same results as a plain entry, and Numba's module passes
    run for the plain entry's library only. Compiled here without the cache, which would load either."""
    import numba
    import numba.core.codegen
    from carom._jit import _LinkingCompiler
    from carom.rigid import _step

    optimised = []
    module_passes = numba.core.codegen.JITCodeLibrary._optimize_final_module

    def spy(library):
        optimised.append(library.name)
        return module_passes(library)

    monkeypatch.setattr(numba.core.codegen.JITCodeLibrary, "_optimize_final_module", spy)

    def linked_body(a, start, count):
        return _sum_and_mark(a, start, count)

    def plain_body(a, start, count):
        return _sum_and_mark(a, start, count)

    linked = numba.njit(pipeline_class=_LinkingCompiler)(linked_body)
    plain = numba.njit(plain_body)
    a = np.arange(24.0).reshape(8, 3)
    b = a.copy()
    assert linked(a, 2, 3) == plain(b, 2, 3)
    assert np.array_equal(a, b)
    assert any("plain_body" in name for name in optimised)
    assert not any("linked_body" in name for name in optimised)
    assert _step.step_kernel._compiler.pipeline_class is _LinkingCompiler


def test_compile_note_is_printed_only_while_nothing_is_cached(tmp_path):
    """``import carom`` says it is compiling when the cache (here ``NUMBA_CACHE_DIR``) holds no kernels, and
    says nothing once it does."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    env.pop("CAROM_COMPILE_HELPER", None)

    def note():
        out = subprocess.run([sys.executable, "-c", "import carom"], env=env, capture_output=True, text=True,
                             timeout=120)
        assert out.returncode == 0, out.stderr
        return "compiling kernels" in out.stderr

    assert note()
    (tmp_path / "somewhere").mkdir()
    (tmp_path / "somewhere" / "kernel.py311.nbi").write_bytes(b"")
    assert not note()


def test_each_kernel_of_a_step_is_compiled_once():
    """After steps in one and in two threads (in a fresh process: other tests call kernels directly, with other
    types), every carom kernel holds one compiled signature (a literal argument such as ``f(0, n)`` compiles
    a second one, for ``Literal[int](0)``, and costs its whole compile time again; so does a parallel loop's
    index passed on as it is, typed int64 and then uint64); the kernels used with several array types are
    named here."""
    import json
    import subprocess
    import sys
    code = """
import json, sys
import carom
from numba.core.registry import CPUDispatcher
from carom.geometry import Polygon, box
from carom.scenes.rigid_scenes import pyramid
pyramid(base=3).step(1 / 60)
# with two threads, a pyramid large enough for the parallel stages, a hexagon (the general SAT) and a bullet
# falling fast onto the ground (the continuous stage's tree query)
carom.set_num_threads(2)
w = pyramid(base=30)
w.sleep_enabled = False
hexagon = w.add_body(position=(40.0, 1.0))
hexagon.add_shape(Polygon([(0.5, 0.0), (0.25, 0.43), (-0.25, 0.43), (-0.5, 0.0), (-0.25, -0.43), (0.25, -0.43)]),
                  density=1.0)
bullet = w.add_body(position=(50.0, 3.0), velocity=(0.0, -300.0), bullet=True)
bullet.add_shape(box(0.1, 0.1), density=1.0)
for _ in range(3):
    w.step(1 / 60)
several = {}
for module in [m for name, m in list(sys.modules.items()) if name.startswith("carom")]:
    for name, f in vars(module).items():
        if isinstance(f, CPUDispatcher) and len(f.overloads) > 1:
            several[f.py_func.__module__ + "." + name] = [[str(t) for t in sig] for sig in f.overloads]
print(json.dumps(several))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    several = json.loads(out.stdout.strip().splitlines()[-1])
    # the partition step of the float median and of the integer key sort; the equality test of the arrays a
    # kept colouring depends on (int64, bool and int8)
    assert set(several) <= {"carom.geometry._tree_pairs._partition", "carom.rigid._colouring._same"}, several


def test_atomics_read_modify_and_write_an_int64_element():
    """The solver's barrier is built on these: atomic_add returns the old value, the store and load see it."""
    import numba
    from carom._jit import atomic_add, atomic_load, atomic_store

    @numba.njit
    def bump(a):
        old = atomic_add(a, 1, 5)
        atomic_store(a, 2, old + 1)
        return old, atomic_load(a, 1)

    a = np.array([0, 3, 0], np.int64)
    assert bump(a) == (3, 8)
    assert list(a) == [0, 8, 4]


def test_background_compile_ends_with_the_program(tmp_path):
    """The background compile started after a cold step (``carom._warmup.background``) ends as soon as the
    program it works for is gone: started for a process that has already exited, it leaves before it has
    compiled anything (its empty cache stays without a single index), and exits cleanly."""
    import subprocess
    import sys
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), CAROM_COMPILE_HELPER="1")
    run = subprocess.run([sys.executable, "-c", f"import carom._warmup as w; w.background({gone.pid})"],
                         env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert not list((tmp_path / "cache").rglob("*.nbi"))


def test_compile_flags_compare_and_hash_as_numba_defines_them():
    """carom's cheap flags lookups (``_jit._cheap_flags_lookups``) give what Numba's own definitions give: the
    hash of the sorted option names, and equality of the full option values (defaults included)."""
    import itertools
    from numba.core.compiler import Flags
    import carom._jit  # noqa: F401  (installs the cheap lookups)

    def made(**values):
        f = Flags()
        for k, v in values.items():
            setattr(f, k, v)
        return f

    sets = [made(), made(nrt=True), made(nrt=False), made(nrt=True, boundscheck=True), made(no_cpython_wrapper=True),
            made(nrt=True, no_cpython_wrapper=True), made(boundscheck=False)]
    for f in sets:
        assert hash(f) == hash(tuple(sorted(f.values())))
    for f, g in itertools.product(sets, repeat=2):
        assert (f == g) == (f.values() == g.values())
        if f == g:
            assert hash(f) == hash(g)


def test_compile_progress_names_every_stage_of_the_step_in_its_own_module(capsys):
    """While the step compiles, a line per stage as it starts (the stages live in their own modules since the
    step was split by stage) and one when the step is done; other functions say nothing."""
    import types
    from carom import _jit
    from carom.rigid import _step

    def event(func):
        return types.SimpleNamespace(data={"dispatcher": types.SimpleNamespace(py_func=func)})

    progress = _jit._CompileProgress()
    step = getattr(_step.step_kernel, "py_func", _step.step_kernel)
    progress.on_start(event(step))
    for name in _jit._CompileProgress.STAGES:
        stage = getattr(_step, name)
        func = getattr(stage, "py_func", stage)
        assert func.__module__.startswith("carom.rigid.")
        progress.on_start(event(func))
        progress.on_start(event(func))          # a second signature: announced once
    progress.on_start(event(np.zeros))          # not carom's: silent
    progress.on_end(event(step))
    lines = capsys.readouterr().err.splitlines()
    stages = _jit._CompileProgress.STAGES
    assert len(lines) == len(stages) + 1
    for k, (line, name) in enumerate(zip(lines, stages), start=1):
        assert f"({k}/{len(stages)})" in line and name[:-6].replace("_", "-") in line
    assert "the rigid step compiled" in lines[-1]


def _scaled_returns(arg_types):
    import numba
    return numba.types.Tuple((numba.types.float64[::1], arg_types[1]))


def _scaled(a, s):
    if s < 0.0:
        raise ValueError("negative scale")
    out = np.empty(a.shape[0])
    for i in range(a.shape[0]):
        out[i] = a[i] * s
    return out, s


def _scaled_again(a, s):
    out = np.empty(a.shape[0])
    for i in range(a.shape[0]):
        out[i] = a[i] * s
    return out, s


def test_function_compiled_apart_is_called_through_its_address():
    """A function compiled apart (``apart_njit``) runs from compiled code through its address once Python has
    loaded it for the call's types: the same results as the function itself, its exceptions raised through the
    caller; called before it is loaded, the caller raises RuntimeError instead of calling a null address; a
    return type other than the one its callers declare is refused when it is loaded."""
    import numba
    from carom._jit import apart_njit, apart_caller
    scaled = apart_njit(_scaled_returns)(_scaled)
    call = apart_caller(scaled)

    @numba.njit
    def caller(a, s):
        out, t = call((a, s))
        return out.sum() + t

    a = np.arange(1.0, 6.0)
    with pytest.raises(RuntimeError, match="was not loaded"):
        caller(a, 2.0)
    scaled.load((numba.typeof(a), numba.float64))
    assert caller(a, 2.0) == (a * 2.0).sum() + 2.0
    with pytest.raises(ValueError, match="negative scale"):
        caller(a, -1.0)
    wrong = apart_njit(lambda arg_types: numba.types.none)(_scaled_again)
    with pytest.raises(TypeError, match="its callers"):
        wrong.load((numba.typeof(a), numba.float64))


def test_joints_code_is_compiled_apart_and_loaded_only_for_a_world_with_joints():
    """The joints' code (``rigid.joints._apart``) is not part of the step's compiled code: a world without joints
    steps with none of it compiled or loaded; the first step of a world with joints loads it, and the step
    itself is the same compiled code for both (in a fresh process: other tests load it)."""
    import json
    import subprocess
    import sys
    code = """
import json
from carom.rigid import _step
from carom.rigid.joints import _apart
from carom.scenes.rigid_scenes import pyramid, chain
def seen():
    return [len(f.overloads) for f in (_apart.begin, _apart.chunk, _apart.end)], _apart.loaded
pyramid(base=3).step(1 / 60)
before = seen()
chain(links=4).step(1 / 60)
print(json.dumps([before, seen(), len(_step.step_kernel.overloads)]))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    before, after, steps = json.loads(out.stdout.strip().splitlines()[-1])
    assert before == [[0, 0, 0], False]
    assert after == [[1, 1, 1], True]
    assert steps == 1


_DEFERRED_STEP_CODE = """
import json, sys
import numpy as np
from carom import geometry as G
from carom.rigid import World, _continuous, _pre_solve_stage
from carom.scenes.rigid_scenes import pyramid

def loaded():
    return [len(f.overloads) for f in (_continuous.continuous_sweep, _continuous.sensor_pass,
                                       _pre_solve_stage.pre_solve_pass)]

def scene(fast):
    w = World(gravity=(0, -10))
    w.static_body.add_shape(G.box(30, 0.5, center=(0, -0.5)))
    w.static_body.add_shape(G.box(0.05, 3.0, center=(8.0, 3.5)))
    gate = w.add_body(position=(0.0, 1.5), kind="static")
    gate.add_shape(G.box(1.0, 0.5), sensor=True)
    for k in range(4):          # boxes falling through the sensor, then coming to rest below it (and sleeping)
        b = w.add_body(position=(-0.6 + 0.4 * k, 3.0 + 0.6 * k))
        b.add_shape(G.box(0.15, 0.15), density=1.0, friction=0.8)
    if fast:                    # a fast plain body and a bullet at the thin wall
        b = w.add_body(position=(-4.0, 2.0), velocity=(150.0, 0.0))
        b.add_shape(G.Circle(0.1), density=1.0)
        b = w.add_body(position=(-4.0, 4.0), velocity=(300.0, 0.0), bullet=True)
        b.add_shape(G.Circle(0.05), density=1.0)
    return w

def state(w):
    t = w.tables
    n = t.n_bodies
    begins = []
    for _ in range(90):
        w.step(1 / 60)
        e = w.contact_events()
        begins.append([int(x) for x in e.begin["shape_b"][e.begin["sensor"]]])
    c = t.contacts
    return ([a[:n].tobytes().hex() for a in (t.com, t.angle, t.vel, t.angvel, t.asleep)]
            + [c.keys.tobytes().hex(), c.touching.tobytes().hex(), begins])

from carom.rigid import world as W
stopped = []                          # the stage each finished step had stopped at
_finish = W.World._finish_step
W.World._finish_step = staticmethod(lambda args, contacts, left: (stopped.append(int(left[0])),
                                                                   _finish(args, contacts, left)))
pyramid(base=3).step(1 / 60)
first = loaded()
fast = sys.argv[1] == "fast"
deferred = state(scene(fast))        # its first step with work for them stops and is finished by step_tail
after = loaded()
direct = state(scene(fast))          # the code is loaded now: no step stops
print(json.dumps([first, after, stopped, deferred == direct, any(direct[-1])]))
"""


@pytest.mark.parametrize("which", ["sensors", "fast"])
def test_a_step_finished_after_loading_code_compiled_apart_equals_a_step_run_whole(which):
    """Continuous collision's sweep and the sensor pass (``rigid._continuous``) are compiled apart and loaded the
    first time a step has work for them: a pyramid steps without loading them; the first step of a world with a
    sensor (``sensors``: stopped before the sensor stage), or with fast bodies and a bullet (``fast``: stopped
    before the continuous stage), loads them and is finished by ``_step.step_tail``. That world, stepped 90
    steps, ends bitwise where its twin stepped afterwards with the code loaded ends (poses, velocities, sleep,
    contacts, the sensor's begin events step by step). The pre-solve pass is never loaded without a hook."""
    import json
    import subprocess
    import sys
    from carom.rigid import _step
    out = subprocess.run([sys.executable, "-c", _DEFERRED_STEP_CODE, which], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    first, after, stopped, same, sensed = json.loads(out.stdout.strip().splitlines()[-1])
    assert first == [0, 0, 0]
    assert after == [1, 1, 0]
    assert stopped == [_step.RESUME_CONTINUOUS if which == "fast" else _step.RESUME_SENSORS]
    assert same
    assert sensed                  # the boxes did pass through the sensor


_GRID_CODE = r"""
import hashlib, json, sys
import numpy as np
import carom._jit as J
from carom.geometry import _tree_pairs
from carom.rigid import World
from carom.scenes import rigid_scenes as R

mode, path = sys.argv[1], sys.argv[2]

def digest(w):
    t = w.tables
    n = t.n_bodies
    c = t.contacts
    return hashlib.sha256(b"".join(a[:n].tobytes() for a in (t.com, t.angle, t.vel, t.angvel))
                          + c.keys.tobytes() + c.touching.tobytes()).hexdigest()

def run(w, steps):
    marks, digests = [], []
    for _ in range(steps):
        w.step(1 / 60)
        marks.append(int(w.tables.bp._moved_meta[1]))
        digests.append(digest(w))
    return marks, digests

def grid_loaded(w):
    types = _tree_pairs.apart_types(w.tables.bp.step_table(), 1)
    return bool((J._apart_table[0::2] == J.apart_key(_tree_pairs.broad_apart, types)).any())

w = R.pile(count=120)
if mode == "with":
    _tree_pairs.load_grid(w.tables.bp.step_table(), 1)
else:
    _tree_pairs.grid_ready = True       # (so that World.step never asks for it: this process goes without)
marks, digests = run(w, 90)
if mode == "with":
    # a snapshot taken right after a busy step (the pair cache then holds that step's real pairs only, marked)
    w = R.pile(count=120)
    while True:
        w.step(1 / 60)
        if w.tables.bp._moved_meta[1]:
            break
    open(path, "wb").write(w.snapshot().data)
restored = World.restore(open(path, "rb").read())
after = run(restored, 60)
print(json.dumps([grid_loaded(w), marks, digests, after]))
"""


def test_steps_without_the_grid_search_loaded_equal_steps_with_it(tmp_path):
    """The broad phase's grid search (``_tree_pairs.broad_apart``) is compiled apart, and a process's first
    steps run before it is loaded (``World.step`` has it compiled in a helper process): a busy step then queries
    the trees. A falling pile stepped 90 steps in a process that never loads it is bitwise the pile stepped with
    it loaded from the start (poses, velocities, contact keys and touch flags, step by step), although only the
    latter ran the grid (the cache marked as holding real pairs). A snapshot taken right after a busy step (its
    cache so marked) continues 60 steps bitwise alike in both processes: without the grid, the marked cache is
    rebuilt by querying every proxy."""
    import json
    import subprocess
    import sys
    snap = str(tmp_path / "pile.snapshot")
    results = {}
    for mode in ("with", "without"):
        out = subprocess.run([sys.executable, "-c", _GRID_CODE, mode, snap], capture_output=True, text=True,
                             timeout=600)
        assert out.returncode == 0, out.stderr
        results[mode] = json.loads(out.stdout.strip().splitlines()[-1])
    loaded_with, marks_with, digests_with, after_with = results["with"]
    loaded_without, marks_without, digests_without, after_without = results["without"]
    assert loaded_with and not loaded_without
    assert any(marks_with) and not any(marks_without)      # only one process ran the grid
    assert digests_with == digests_without
    assert after_with[1] == after_without[1]
    assert not any(after_without[0])


def test_a_kernel_files_cache_is_stamped_with_every_file_it_imports(tmp_path, monkeypatch):
    """A kernel's cache entry holds the code of what it calls from other files: the step's file (``rigid/_step.py``)
    must drop its entries when the prepare stage's file changes, though its own text did not (``_linked_stamp``).
    Its stamp covers the files it imports, transitively, read from a copy of the package: an edit to
    ``rigid/_prepare.py`` changes it, an edit to ``rigid/world.py`` (no kernel module imports it) does not."""
    import os
    import shutil
    from carom import _linked_stamp
    copy = tmp_path / "carom"
    shutil.copytree(_linked_stamp.PACKAGE_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(_linked_stamp, "PACKAGE_DIR", str(copy))
    monkeypatch.setattr(_linked_stamp, "_scanned", {})
    monkeypatch.setattr(_linked_stamp, "_digests", {})
    step = str(copy / "rigid" / "_step.py")
    reached = {os.path.relpath(f, copy).replace(os.sep, "/") for f in _linked_stamp.reached_files(step)}
    assert {"rigid/_step.py", "rigid/_prepare.py", "rigid/_sweeps.py", "_simd.py", "geometry/_tree.py",
            "rigid/joints/revolute.py"} <= reached
    assert "rigid/world.py" not in reached and "envs/lunar_lander.py" not in reached
    before = _linked_stamp.reach_digest(step)

    def edit(rel):
        with open(copy / rel, "a") as f:
            f.write("\n# an edit\n")
        _linked_stamp._scanned.clear()
        _linked_stamp._digests.clear()
        return _linked_stamp.reach_digest(step)

    assert edit("rigid/world.py") == before
    assert edit("rigid/_prepare.py") != before


def test_carom_kernels_are_cached_under_the_linked_stamp():
    """carom's kernels find their cache through a locator that stamps with ``_linked_stamp.LinkedStamp``, which
    pickles into the index as a plain pair and compares equal to it (as Numba compares a loaded index's stamp)."""
    import pickle
    from carom._linked_stamp import LinkedSourcesLocator, LinkedStamp
    from carom.rigid import _prepare
    locator = _prepare.shared_material._cache._impl.locator
    assert isinstance(locator, LinkedSourcesLocator)
    stamp = locator.get_source_stamp()
    assert isinstance(stamp, LinkedStamp)
    saved = pickle.loads(pickle.dumps(stamp))
    assert type(saved) is tuple and len(saved) == 2
    assert saved == stamp and not saved != stamp and stamp == saved
