"""The one place kernels are compiled from: ``njit`` is ``numba.njit(cache=True)`` with no fastmath, for
kernels called from other kernels (compiled without Numba's Python and C wrappers, see
:class:`KernelDispatcher`); ``entry_njit`` is the same with the wrappers, for the functions Python calls.

fastmath is off on purpose: it lets LLVM drop NaN checks and reassociate sums, which breaks both the
validation of bad input and bitwise determinism. Compiled kernels are cached on disk next to the sources,
so the (slow) cold compile happens once per machine; :func:`announce_compile` says so on the console.
"""
import atexit
import contextlib
import glob
import importlib
import math
import os
import platform
import pickle
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import numba
import numba.extending
import numpy as _np
import numba.core.registry
import numba.core.caching
import numba.core.event
import numba.core.codegen
import numba.core.compiler
import numba.core.compiler_lock
import numba.core.errors
import numba.core.cgutils
import numba.core.targetconfig
from llvmlite import ir as llvm_ir
import llvmlite.binding as llvm_binding

from . import _cpu_level

# the processor level kernels are compiled for, and the locator of the shipped cache: before anything compiles
_cpu_level.choose()
_cpu_level.install_locator()


def _cheap_flags_lookups():
    """Make Numba's compile flags cheap to hash and compare; what they hash and compare to is unchanged.

    Why: every call an overloaded function (``np.empty``, ``min``, the SIMD lanes…) makes is looked up in a
    cache keyed by the compile flags, about 150,000 lookups in the step's cold compile. Numba hashes the flags
    as the sorted names of all its options (the same for every set of flags) and compares two sets by building
    both full dicts of option values; both rebuilt each time took about 6 % of the cold compile. The hash is
    the same value computed once per class; two flags whose set values are equal are equal without the rest
    being read (flags that differ still get Numba's full comparison)."""
    config = numba.core.targetconfig.TargetConfig
    if getattr(config, "_carom_cheap", False):
        return
    full_eq = config.__eq__
    hashes = {}

    def __hash__(self):
        cls = type(self)
        h = hashes.get(cls)
        if h is None:
            h = hashes[cls] = hash(tuple(sorted(self.options)))
        return h

    def __eq__(self, other):
        if type(other) is type(self) and self._values == other._values:
            return True
        return full_eq(self, other)

    config.__eq__ = __eq__       # (Numba's subclasses, ``Flags`` among them, inherit both)
    config.__hash__ = __hash__
    config._carom_cheap = True


_cheap_flags_lookups()


def _borrowed_arguments():
    """Compile carom's kernels with their array arguments borrowed from the caller: no reference taken on
    entry and dropped on the way out. What runs is otherwise unchanged (Numba's lowering, patched for carom's
    libraries only: :class:`_CaromLibrary`).

    Why: Numba binds each argument to a variable that owns a reference, an atomic increment of each array's
    count on entry and a decrement where the variable dies (a tuple of arrays: one per array). LLVM's pruning of
    reference counts removes such pairs only within a block or a simple diamond, and a kernel's body branches,
    so most pairs stay. The step of a world of one box on the ground made about 2,200 such atomics and calls
    (18 % of the samples of its 28 µs); a stage over a 13-array tuple, called per substep, made 26 a call.

    Why it is safe: the caller holds its own reference to every argument until the call returns (a variable of
    the caller lives past the call; the CPython wrapper releases its arrays after it), so the argument cannot
    be freed during the call without the callee's own. Only a variable assigned once, from the argument, is
    borrowed: Numba drops a variable's old value when the variable is assigned again. Whatever keeps the value
    beyond the call takes its own reference (returning it, putting it in a tuple or a list, binding it to
    another variable), as before. A borrowed variable's deaths (``del``) then drop nothing. Generators and
    the bodies of parallel loops (Numba's ``__numba_parfor_gufunc``) keep Numba's way. Code compiled the old
    way (an older cache) and code compiled this way call each other freely: the convention is inside each
    function. A variable bound from an omitted argument (a default) keeps Numba's way.

    (Reviewed against Numba 0.68.1's lowering: every store, return, container build and copy of a value takes a
    reference of its own; only ``storevar`` over an old value, ``delvar`` and generators drop one.)"""
    from numba.core import ir, lowering
    Lower = lowering.Lower
    if getattr(Lower, "_carom_borrows", False):
        return
    pre_lower, lower_assign, delvar, storevar = Lower.pre_lower, Lower.lower_assign, Lower.delvar, Lower.storevar

    def borrowed_names(self):
        if (self.generator_info is not None or not isinstance(self.library, _CaromLibrary)
                or "__numba_parfor_gufunc" in self.fndesc.qualname):
            return frozenset()
        assigned, from_arg = {}, set()
        for block in self.func_ir.blocks.values():
            for inst in block.body:
                if isinstance(inst, ir.Assign):
                    name = inst.target.name
                    assigned[name] = assigned.get(name, 0) + 1
                    if isinstance(inst.value, ir.Arg) and not isinstance(
                            self.typeof("arg." + inst.value.name), numba.core.types.Omitted):
                        from_arg.add(name)
        return frozenset(name for name in from_arg if assigned[name] == 1)

    def carom_pre_lower(self):
        pre_lower(self)
        self._carom_borrowed = borrowed_names(self)

    def carom_lower_assign(self, ty, inst):
        value = inst.value
        if isinstance(value, ir.Arg) and inst.target.name in self._carom_borrowed:
            argty = self.typeof("arg." + value.name)
            return self.context.cast(self.builder, self.fnargs[value.index], argty, ty)
        return lower_assign(self, ty, inst)

    def carom_storevar(self, value, name, argidx=None):
        # (a second store would drop the reference the variable never took: the count of assignments above sees
        # the function's own statements, and Numba's SSA gives each of them a new name; a store from elsewhere,
        # such as a parallel loop's reduction, is refused here rather than freeing the caller's array)
        if argidx is None and name in self._carom_borrowed:
            raise AssertionError(f"carom: the borrowed argument {name!r} of {self.fndesc.qualname} is stored again")
        storevar(self, value, name, argidx)

    def carom_delvar(self, name):
        if name in self._carom_borrowed:
            return
        delvar(self, name)

    Lower.pre_lower = carom_pre_lower
    Lower.lower_assign = carom_lower_assign
    Lower.delvar = carom_delvar
    Lower.storevar = carom_storevar
    Lower._carom_borrowed = frozenset()     # (until ``pre_lower`` sets a function's own)
    Lower._carom_borrows = True


_borrowed_arguments()


class _KernelCacheImpl(numba.core.caching.CompileResultCacheImpl):
    """Numba's rebuilding of a compiled function from its cache entry, with a kernel's code loaded into a
    :class:`_KernelLibrary` (:meth:`_KernelLibrary.load`) instead of a library that makes machine code."""

    def rebuild(self, target_context, payload):
        codegen = target_context.codegen()
        codegen.unserialize_library = lambda state: _KernelLibrary.load(codegen, state)
        try:
            return super().rebuild(target_context, payload)
        finally:
            del codegen.unserialize_library


class _KernelCache(numba.core.caching.FunctionCache):
    """Numba's on-disk cache, with kernels' entries keyed apart from those of the same function compiled with
    its wrappers: Numba keys an entry by signature and bytecode only, not by these flags, and code without
    the Python wrapper loaded for a call from Python would crash. A kernel is loaded without machine code
    (:class:`_KernelCacheImpl`)."""
    _impl_class = _KernelCacheImpl
    def _index_key(self, sig, codegen):
        return super()._index_key(sig, codegen) + ("carom kernel: no wrappers",)


class _KernelCodegenView:
    """The shared codegen, as a kernel's library shows it to Numba: an environment address is not written,
    since the kernel's code is not in the JIT engine (see :class:`_KernelLibrary`)."""

    def __init__(self, codegen):
        self._codegen = codegen

    def set_env(self, env_name, env):
        pass

    def __getattr__(self, name):
        return getattr(self._codegen, name)


#: a callee whose exported functions all have more instructions than this (optimised LLVM IR) is linked into its
#: caller's code after the caller's optimisation (:func:`_links_late`): LLVM's inliner, at Numba's -O3, takes
#: functions of a few dozen instructions (a cost threshold of 250, about 5 per instruction); this leaves it
#: every callee it could take, with a wide margin
LATE_LINK_INSTRUCTIONS = 400


def _links_late(library):
    """Whether a callee's library is linked into a kernel's code after the kernel's optimisation
    (:meth:`_KernelLibrary.finalize`): when each function it exports has more than ``LATE_LINK_INSTRUCTIONS``
    instructions and none is marked ``alwaysinline`` (:func:`llvm_inline_njit`). Decided once per library.

    Why: Numba links a callee's code, already optimised, into each caller before the caller's optimisation,
    so the code of a deep call tree was optimised again at every level above it (Numba issue #9566): 14 of
    the 75 s of CPU of the step's cold compile went to LLVM's module passes, most of it on such code. A
    callee linked after is called, not inlined, which LLVM's inliner decides anyway for a callee this large;
    and a callee's definition (``linkonce_odr``, replaceable by another copy) tells the optimiser of its
    callers nothing else. The step runs as fast, with bitwise the same results."""
    verdict = getattr(library, "_carom_links_late", None)
    if verdict is None:
        verdict = True
        for fn in library._final_module.functions:
            if fn.is_declaration or fn.linkage != llvm_binding.Linkage.external:
                continue
            if (b"alwaysinline" in fn.attributes
                    or sum(1 for block in fn.blocks for _ in block.instructions) <= LATE_LINK_INSTRUCTIONS):
                verdict = False
                break
        library._carom_links_late = verdict
    return verdict


class _CaromLibrary(numba.core.codegen.JITCodeLibrary):
    """Numba's library of a compiled function, with its function passes run over defined functions only."""

    def _optimize_functions(self, ll_module):
        """Numba's function passes over each function ``ll_module`` defines: Numba makes a pass builder for each
        of the module's functions, declarations too, where the passes do nothing (about 3,300 of the 3,800 in
        the step's cold compile, 0.07 ms each)."""
        ll_module.data_layout = self._codegen._data_layout
        for func in ll_module.functions:
            if func.is_declaration:
                continue
            fpm, pb = self._codegen._function_pass_manager()
            with self._recorded_timings.record(f"Function passes on {func.name!r}", pb):
                fpm.run(func, pb)


class _KernelLibrary(_CaromLibrary):
    """The code of a kernel, optimised as Numba does but never turned into machine code on its own.

    Why: Numba finalises every compiled function's library, which generates machine code for the function
    and everything it links in; every caller then links that code in (as LLVM IR) and generates it again, so
    the step's code was compiled to machine code once per level of its call tree, about 5 of the cold
    compile's 60 s. A kernel (no Python wrapper) never runs from its own library, only from an entry
    point's, which links the kernel's optimised IR; so the kernel's library runs the same LLVM passes as
    before (the generated code is the same; skipping them too made the step 15 % slower, since each level's
    optimisation builds on the one below) and stops there.

    The cache stores the IR (bitcode), and a kernel loaded from it is not made into machine code either
    (:meth:`load`). Callees that LLVM would not inline are linked after the optimisation (:meth:`finalize`).
    The parallel loops of carom's functions are compiled into such libraries too
    (:func:`_parallel_loops_in_kernel_libraries`). The kernel's environment (Numba's link to Python objects,
    used only to box values for Python) is not installed: kernels raise only exceptions with constant
    messages, which need none.
    """

    #: mark the kernel's own functions ``alwaysinline`` (:func:`llvm_inline_njit`), in the IR that callers
    #: link and that the cache stores
    inline_into_callers = False
    #: link every callee's whole code before the optimisation, none after (:class:`_WholeTreeLibrary`)
    links_whole_tree = False

    @property
    def codegen(self):
        return _KernelCodegenView(self._codegen)

    #: the libraries linked after the optimisation (:meth:`finalize`), its callees' too
    _late_libraries = ()
    #: the optimised module before those were linked in (:meth:`_core_module_for_linking`)
    _core_module = None
    _core_shared = None

    def finalize(self):
        """Numba's ``finalize`` (link the callees' code, optimise, make ready), with the callees that LLVM would
        not inline (:func:`_links_late`) linked after the optimisation instead of before, at every level: a
        callee linked before brings only its own optimised code, and its late callees join this library's."""
        numba.core.compiler_lock.require_global_compiler_lock()
        self._codegen._check_llvm_bugs()
        self._raise_if_finalized()
        late, seen = {}, set()
        for library in self._linking_libraries:
            if library in seen:
                continue
            seen.add(library)
            self._reload_init.update(library._reload_init)
            if self.links_whole_tree:
                self._final_module.link_in(library._get_module_for_linking(), preserve=True)
            elif _links_late(library):
                late[library] = None
            elif isinstance(library, _KernelLibrary) and library._core_module is not None:
                self._final_module.link_in(library._core_module_for_linking(), preserve=True)
                late.update(dict.fromkeys(library._late_libraries))
            else:
                self._final_module.link_in(library._get_module_for_linking(), preserve=True)
        self._optimize_final_module()
        if self.inline_into_callers:
            for fn in self._final_module.functions:
                if not fn.is_declaration and fn.linkage == llvm_binding.Linkage.external:
                    fn.add_function_attribute("alwaysinline")
        if late:
            self._core_module = self._final_module.clone()
            self._late_libraries = tuple(late)
            for library in late:
                self._final_module.link_in(library._get_module_for_linking(), preserve=True)
        self._final_module.verify()
        self._finalize_final_module()

    def _core_module_for_linking(self):
        """The optimised module without the late-linked callees, as ``_get_module_for_linking`` makes it."""
        if self._core_shared is None:
            mod = self._core_module.clone()
            for fn in mod.functions:
                if not fn.is_declaration and fn.linkage == llvm_binding.Linkage.external:
                    fn.linkage = "linkonce_odr"
            self._core_shared = mod
        return self._core_shared

    def _finalize_final_module(self):
        """The end of Numba's ``finalize`` (after linking and optimising): no JIT engine, no machine code."""
        self._finalize_dynamic_globals()
        self._finalized = True

    def get_pointer_to_function(self, name):
        """No machine code, so nothing to point at (Numba asks for the Python wrapper, which a kernel lacks)."""
        self._ensure_finalized()
        return 0

    def serialize_using_object_code(self):
        return self.serialize_using_bitcode()

    @classmethod
    def load(cls, codegen, state):
        """A kernel's library from its cache entry (``serialize_using_object_code``): its optimised IR, ready to
        be linked into callers, with no machine code made.

        Why: Numba loads a cached library into its JIT engine, which makes machine code for the kernel and all
        it links in; but a kernel runs only from its callers' code. In a cold compile the step loads the
        stages its compile helper compiled (``compile_helper``): 2.5 s of machine code on the step's own
        core that nothing ran."""
        name, kind, data = state
        if kind != "bitcode":
            return codegen._library_class._unserialize(codegen, state)
        library = cls(codegen, name)
        library._final_module = llvm_binding.parse_bitcode(data)
        library._finalize_final_module()
        return library


class _WholeTreeLibrary(_KernelLibrary):
    """A parallel loop's launcher (:class:`_KernelLibraryContext`) optimised as Numba optimises it, with the loop's
    whole call tree linked in first (so LLVM inlines across it), but never made into machine code, and linked into
    its caller after the caller's optimisation (:func:`_links_late`), so that the tree is not optimised again there.
    """
    links_whole_tree = True
    _carom_links_late = True


class _LibraryCompiler(numba.core.compiler.Compiler):
    """Numba's compiler, with the function's code in a library of class ``library_class``."""
    library_class = None

    def compile_extra(self, func):
        if self.state.library is None:
            self.state.library = self.library_class(self.state.targetctx.codegen(), func.__qualname__)
            self.state.library.inline_into_callers = func in _LLVM_INLINE
            self.state.library.enable_object_caching()
        depth = getattr(_compiling, "depth", 0)
        _compiling.depth = depth + 1
        outer = getattr(_compiling, "function", None)
        _compiling.function = func
        if depth:
            try:
                return super().compile_extra(func)
            finally:
                _compiling.depth = depth
                _compiling.function = outer
        colours = numba.core.errors._termcolor_inst
        numba.core.errors._termcolor_inst = _PLAIN_MESSAGES
        # (Numba's modules that keep the colour scheme they found at import: its markup made plain too)
        scheme = colours
        marked = hasattr(type(scheme), "_markup") and "_markup" not in vars(scheme)
        if marked:
            scheme._markup = _plain_markup
        lock_calls = _llvm_lock_callbacks()
        held = list(lock_calls) if lock_calls is not None else None
        if held:
            del lock_calls[:]
        try:
            return super().compile_extra(func)
        finally:
            _compiling.depth = depth
            _compiling.function = outer
            numba.core.errors._termcolor_inst = colours
            if marked:
                del scheme._markup
            if held:
                lock_calls[:] = held + lock_calls


def _llvm_lock_callbacks():
    """The list of callbacks llvmlite makes as it takes and releases its lock around every call into LLVM, or None
    where llvmlite keeps none there.

    Why they are set aside while a carom function compiles (:class:`_LibraryCompiler`): Numba's callbacks start
    and end an event (``numba:llvm_lock``) for each of the 170,000 calls of the step's cold compile, which every
    compile under way (the step's, each stage's and callee's inside it) times for its statistics: 8 µs a call
    with six compiles nested, 1.3 s of the cold compile. Only the LLVM time in Numba's compile statistics is
    lost (``dispatcher.get_metadata``'s timers)."""
    lock = getattr(getattr(getattr(llvm_binding, "ffi", None), "lib", None), "_lock", None)
    calls = getattr(lock, "_cblist", None)
    return calls if isinstance(calls, list) else None


def _plain_markup(message, color=None, style=None):
    return message


class _PlainMessages:
    """Numba's error messages without terminal colours (Numba's colour scheme, every markup the message itself).

    Why: Numba's typing tries the templates of an overloaded call in turn, and each that does not fit raises
    an error whose message is coloured for the terminal as it is made (colorama wraps and unwraps the standard
    streams each time): about 46,000 in the step's cold compile, 0.9 s of it, and 26,000 more in Numba's
    modules that keep the scheme they found at import (``typeof``, ``ir``: their markup is made plain,
    ``_plain_markup``). Only while a carom function is compiled (:class:`_LibraryCompiler`), whose errors are
    not shown unless compiling it fails."""

    def __getattr__(self, name):
        return _plain


def _plain(message):
    return message


_PLAIN_MESSAGES = _PlainMessages()


#: how many carom functions (:class:`_LibraryCompiler`) this thread is compiling, one inside the other (``depth``),
#: and the innermost one's Python function (``function``)
_compiling = threading.local()


def _parallel_loops_in_kernel_libraries():
    """Compile the parallel loops (``numba.prange``) of carom's functions into :class:`_KernelLibrary` code:
    each loop's body (Numba's "gufunc") and its wrapper for the thread pool.

    Why: Numba compiles a parallel loop's body as a function of its own, makes machine code for it, wraps it in
    a second function and makes machine code for both again; the function that holds the loop then links both
    in (as IR) and calls the wrapper by name, so that machine code never runs (the solver's and the narrow
    phase's loops: about 3 s of the step's cold compile). As kernel libraries, their code is optimised once and
    linked in, late where it is large (:func:`_links_late`); so are their launchers (:class:`_KernelLibraryContext`).
    Only while a carom function is compiled; Numba's own behaviour is kept for every other function in the
    process."""
    compiler = numba.core.compiler
    if getattr(compiler.compile_ir, "_carom", False):
        return
    from numba.np.ufunc import parallel, wrappers
    compile_ir, compile_wrapper = compiler.compile_ir, wrappers._GufuncWrapper._compile_wrapper
    build_gufunc_kernel = parallel.build_gufunc_kernel

    def carom_compile_ir(typingctx, targetctx, func_ir, *args, **kwargs):
        pipeline = kwargs.get("pipeline_class")
        if (getattr(_compiling, "depth", 0) and kwargs.get("library") is None and pipeline is not None
                and pipeline.__name__ == "ParforGufuncCompiler"):
            kwargs["library"] = _KernelLibrary(targetctx.codegen(), func_ir.func_id.func_qualname)
        return compile_ir(typingctx, targetctx, func_ir, *args, **kwargs)

    def carom_compile_wrapper(self, wrapper_name):
        if not (self.is_parfors and getattr(_compiling, "depth", 0)):
            return compile_wrapper(self, wrapper_name)
        library = _KernelLibrary(self.context.codegen(), str(self))
        self._build_wrapper(library, wrapper_name)
        return library

    def carom_build_gufunc_kernel(library, ctx, info, sig, inner_ndim):
        if not (getattr(_compiling, "depth", 0) and isinstance(library, _KernelLibrary)):
            return build_gufunc_kernel(library, ctx, info, sig, inner_ndim)
        whole = getattr(_compiling, "function", None) not in _KERNEL_LAUNCHERS
        return build_gufunc_kernel(library, _KernelLibraryContext(ctx, whole), info, sig, inner_ndim)

    carom_compile_ir._carom = True
    compiler.compile_ir = carom_compile_ir
    wrappers._GufuncWrapper._compile_wrapper = carom_compile_wrapper
    parallel.build_gufunc_kernel = carom_build_gufunc_kernel


#: the functions (:func:`pnjit_kernel_launcher`) whose parallel loops' launchers are compiled as kernel libraries
_KERNEL_LAUNCHERS = set()


class _KernelLibraryContext:
    """A target context whose codegen makes carom's libraries: handed to Numba's builder of a parallel loop's
    launcher (``parallelgufuncwrapper``, the function that hands the loop's body to the thread pool), where Numba
    makes an ordinary library that links the loop's body and its wrapper (:func:`_parallel_loops_in_kernel_libraries`)
    with the whole call tree below them, is optimised as a whole (LLVM's -O3 over the tree: the large callees that
    carom links late elsewhere, :func:`_links_late`, can be inlined there) and made into machine code that never
    runs, and then optimised again inside its caller's code. About 1.7 s of the step's cold compile for the
    solver's and the narrow phase's loops.

    The launcher is a :class:`_WholeTreeLibrary` (``whole_tree``: :func:`pnjit`): optimised over the tree as Numba
    does, without machine code, and linked into its caller after the caller's optimisation. Or a plain
    :class:`_KernelLibrary` (:func:`pnjit_kernel_launcher`), optimised without the tree. Measured on large_pyramid
    (one thread, 9 rounds; two threads, 7): the solve ran 11 % slower and the bounds stage 7 % slower without the
    tree, the narrow phase as fast (0.997 and 1.005), and its launcher without the tree saves about 0.6 s of the
    step's own process."""

    def __init__(self, context, whole_tree):
        self._context = context
        self._library_class = _WholeTreeLibrary if whole_tree else _KernelLibrary

    def codegen(self):
        return _KernelLibraryMaker(self._context.codegen(), self._library_class)

    def __getattr__(self, name):
        return getattr(self._context, name)


class _KernelLibraryMaker:
    """The shared codegen, making libraries of class ``library_class`` (see :class:`_KernelLibraryContext`)."""

    def __init__(self, codegen, library_class):
        self._codegen = codegen
        self._library_class = library_class

    def create_library(self, name, **kwargs):
        return self._library_class(self._codegen, name, **kwargs)

    def __getattr__(self, name):
        return getattr(self._codegen, name)


_parallel_loops_in_kernel_libraries()


class _KernelCompiler(_LibraryCompiler):
    """Numba's compiler, with the function's code in a :class:`_KernelLibrary`."""
    library_class = _KernelLibrary


class KernelDispatcher(numba.core.registry.CPUDispatcher):
    """A kernel compiled for calls from other kernels only: without the CPython and C-ABI wrappers.

    Why: Numba gives every compiled function two wrappers, one that unboxes Python arguments and boxes the
    result, one with a plain C signature. A kernel called only from compiled code needs neither, and making
    them took about 10 of the 67 s of the step's cold compile: every caller's module links them in and
    optimises them again.

    A call from Python still works: it goes to a *twin*, the same function compiled with its wrappers, made
    on the first Python call (:meth:`python_twin`), so a function called only from kernels is compiled once
    and one called only from Python once too. The wrapper-less code is never called from Python, where it
    would crash.
    """
    _python_twin = None
    twin_options = {}

    def enable_caching(self):
        self._cache = _KernelCache(self.py_func)

    def python_twin(self):
        """The same function compiled with its Python wrapper (made once, on the first Python call)."""
        twin = self._python_twin
        if twin is None:
            twin = self._python_twin = numba.njit(cache=True, **self.twin_options)(self.py_func)
        return twin

    def __call__(self, *args, **kwargs):
        twin = self._python_twin
        if twin is None:
            twin = self.python_twin()
        return twin(*args, **kwargs)

    def compile(self, sig):
        """Numba's compile (or cache load) of ``sig``; during a cold compile shared with a helper process, a
        kernel of the helper's job is claimed first (:class:`_Claims`), so that only one of the two compiles it."""
        claims = _claims
        if claims is None or not isinstance(sig, tuple) or sig in self.overloads or not claims.shared(self):
            return super().compile(sig)
        with claims.claim(self):
            return super().compile(sig)


def _kernel(func, **options):
    if numba.config.DISABLE_JIT:
        return func
    disp = KernelDispatcher(py_func=func, locals={},
                            targetoptions=dict(nopython=True, boundscheck=None, no_cpython_wrapper=True,
                                               no_cfunc_wrapper=True, **options),
                            pipeline_class=_KernelCompiler)
    disp.twin_options = options
    disp.enable_caching()
    return disp


_LLVM_INLINE = set()


def llvm_inline_njit(func):
    """:func:`njit`, inlined into its callers by LLVM: the kernel's functions carry ``alwaysinline``, so each
    caller that links its optimised IR inlines it there (see :class:`_KernelLibrary`).

    Why not Numba's ``inline="always"`` (:data:`inline_njit`): that inlines at Numba's IR level, so the caller
    is typed and lowered with the callee's whole body, again for every call site. For the narrow phase's pair
    loop (the SAT routines, contact recycling) this was about 11 of the cold compile's 80 s; inlined by LLVM
    it is typed once, and the pair loop runs as fast as before (within noise: 1.45 ms for large_pyramid's
    narrow phase either way). Array arguments still take their reference counts at the call site, as for
    any :func:`njit` call (the SAT routines are handed :func:`borrowed_rows` views, which have none)."""
    _LLVM_INLINE.add(func)
    return _kernel(func)


def njit(func):
    """A compiled kernel (cached, no fastmath) for calls from other kernels; Python calls go through its
    twin (see :class:`KernelDispatcher`). Use :data:`entry_njit` for the functions Python calls each step."""
    return _kernel(func)


def pnjit(func):
    """:func:`njit` with Numba's parallel loops (``numba.prange``); the thread count is
    ``carom.set_num_threads``. Each loop's launcher is optimised with the loop's whole call tree
    (:class:`_WholeTreeLibrary`)."""
    return _kernel(func, parallel=True)


def pnjit_kernel_launcher(func):
    """:func:`pnjit`, with each loop's launcher a :class:`_KernelLibrary`, optimised without the loop's call tree
    (:class:`_KernelLibraryContext`): for loops whose code runs as fast that way (the narrow phase's)."""
    _KERNEL_LAUNCHERS.add(func)
    return _kernel(func, parallel=True)


#: an entry point that Python calls (the step, the queries): a plain cached Numba function, with its wrappers
entry_njit = numba.njit(cache=True)

#: inlined into the caller at Numba's IR level (no call); used for the per-contact solver functions, called in
#: a plain loop once per chunk (inlining into a parallel loop's body costs much more compile time). Each array
#: argument is still bound to a new name, which takes a reference where the inlined code branches: hot loops
#: hand such functions :func:`borrowed` views. The cost is compile time: such a function is typed on its own
#: for each signature, and at every call site its IR is deep-copied and typed and lowered again with the
#: caller, so a large body belongs in :func:`llvm_inline_njit` (typed once) unless the copy runs measurably
#: faster (``_solve_two``)
inline_njit = numba.njit(cache=True, inline="always")


@inline_njit
def index_range(lo, hi):
    """``range(lo, hi)`` with unsigned indices, for the per-item loops of the step's stages (``lo`` ≥ 0).

    Why: Numba indexes with a signed integer as Python does, so every ``a[i]`` with i from a plain ``range``
    first adds the length where i < 0 (a shift, an and and an add per array per item), and LLVM can then not
    turn the loop's addresses into pointers that step along the rows. With an unsigned index there is no
    such check (the integrators' passes of the large pyramid: a sixth fewer instructions, 6 % less solve).
    Arithmetic that mixes the index with a signed integer gives a float in Numba: subtract an unsigned
    ``lo`` (``np.uint64(lo)``), never a plain one."""
    return range(_np.uint64(lo), _np.uint64(hi))


class _LinkingLibrary(_CaromLibrary):
    """The code of an entry point that only calls kernels (:func:`linking_entry_njit`): its module, with the
    kernels' code linked in, is not optimised again as a whole, only turned into machine code.

    Why: each kernel's code was optimised in its own library, with its callees linked and inlined there.
    Numba runs the full module optimisation again over everything the entry links: 5.6 s of the 10 s the
    step's own compile took, spent on code already optimised, with the step's body (a few calls) the only
    new code. Without it the step's own compile takes 6.6-7.9 s instead of 10.2-11.2 s, and the step runs
    as fast, with bitwise the same results. The entry's own function still gets Numba's function passes."""

    def _optimize_final_module(self):
        pass


class _LinkingCompiler(_LibraryCompiler):
    """Numba's compiler, with the function's code in a :class:`_LinkingLibrary`."""
    library_class = _LinkingLibrary


def linking_entry_njit(func):
    """:data:`entry_njit` for an entry point whose body only calls kernels (the step): see
    :class:`_LinkingLibrary`."""
    if numba.config.DISABLE_JIT:
        return func
    return numba.njit(cache=True, pipeline_class=_LinkingCompiler)(func)


def parallel_linking_entry_njit(func):
    """:func:`linking_entry_njit` with Numba's parallel loops (the batch's step over many worlds)."""
    if numba.config.DISABLE_JIT:
        return func
    return numba.njit(cache=True, parallel=True, pipeline_class=_LinkingCompiler)(func)


#: the functions compiled apart (:func:`apart_njit`) that this process has loaded: pairs (key, address) in a C array
#: of int64, which compiled code reads as the external symbol ``_APART_SYMBOL`` (:func:`apart_caller`); empty pairs
#: are (0, 0), and the pairs in use come first
APART_SLOTS = 64
_APART_SYMBOL = "_carom_apart_functions"
_apart_table = _np.zeros(2 * APART_SLOTS, _np.int64)
if not numba.config.DISABLE_JIT:
    llvm_binding.add_symbol(_APART_SYMBOL, _apart_table.ctypes.data)


class _ApartCache(numba.core.caching.FunctionCache):
    """Numba's on-disk cache, with the entries of a function compiled apart keyed apart from those of the same
    function compiled with its wrappers (as :class:`_KernelCache`)."""
    def _index_key(self, sig, codegen):
        return super()._index_key(sig, codegen) + ("carom apart: no wrappers",)


class ApartDispatcher(numba.core.registry.CPUDispatcher):
    """A function compiled apart (:func:`apart_njit`): its own machine code, without Numba's Python and C wrappers,
    called from other compiled code through its address (:func:`apart_caller`), never from Python."""

    #: the return type a caller declares for given argument types (:func:`apart_njit`'s ``returns``)
    returns = None

    def enable_caching(self):
        self._cache = _ApartCache(self.py_func)

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{kernel_name(self)} is compiled apart: it is called from compiled code only")

    def compile(self, sig):
        """Numba's compile (or cache load), claimed as a kernel is during a shared cold compile (``_Claims``)."""
        claims = _claims
        if claims is None or not isinstance(sig, tuple) or sig in self.overloads or not claims.shared(self):
            return super().compile(sig)
        with claims.claim(self):
            return super().compile(sig)

    def load(self, arg_types):
        """Compile (or load from the cache) the function for ``arg_types`` and make its address known to compiled
        code (``_apart_table``); returns the address. The compiled return type must be the one its callers
        declare (``returns``): a caller reads the result as that type."""
        arg_types = tuple(arg_types)
        key = apart_key(self, arg_types)
        found = _np.flatnonzero(_apart_table[0::2] == key)
        if found.size:
            return int(_apart_table[2 * found[0] + 1])
        # a helper compiling it (:meth:`load_soon`): its cache entry, rather than a second compile at once
        helper = _apart_compiles.pop(key, None)
        if helper is not None:
            helper.wait()
        # Numba's threads started first: the machine code of a parallel loop calls the threading layer's scheduler
        # (allocate_sched, ...), whose symbols Numba makes known only when it starts its threads. A step starts them
        # (``step_threads``) before it loads anything; code loaded from the cache before a process's first step (the
        # broad phase's grid search, ``load_grid``) left those symbols unresolved, and the next compiled code made
        # LLVM abort the process ("Symbol not found: allocate_sched")
        numba.get_num_threads()
        self.compile(arg_types)
        cres = self.overloads[arg_types]
        declared = self.returns(arg_types)
        if cres.signature.return_type != declared:
            raise TypeError(f"{kernel_name(self)} returns {cres.signature.return_type} for {arg_types}; its callers "
                            f"read {declared}")
        address = cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name)
        free = _np.flatnonzero(_apart_table[0::2] == 0)
        if not address or not free.size:
            raise RuntimeError(f"carom: cannot load {kernel_name(self)} (address {address}, "
                               f"{APART_SLOTS} functions apart at most)")
        _apart_table[2 * free[0] + 1] = address
        _apart_table[2 * free[0]] = key
        return address

    def load_soon(self, arg_types):
        """:meth:`load`, without waiting for a compile: when the function is neither loaded nor cached for
        ``arg_types`` and a compile helper may run (``_helpers_wanted``), its compile is started in a helper process
        on the other core and False returned; a later call loads it once that process has ended (from the cache it
        wrote, or compiled here if it failed) and returns True. Otherwise loads it now (compiling it here when it
        is not cached: with one core or within a helper) and returns True. Callers ask again until True.

        Why: a function that only speeds up work the step can do without it (the broad phase's grid search:
        ``carom.geometry._tree_pairs.broad_apart``) need not be compiled before the first step returns."""
        arg_types = tuple(arg_types)
        key = apart_key(self, arg_types)
        if (_apart_table[0::2] == key).any():
            return True
        helper = _apart_compiles.get(key)
        if helper is None:
            if not _cached(self, arg_types) and _helpers_wanted():
                helper = _spawn_helper("carom._jit:_compile_apart", (kernel_name(self), arg_types))
                if helper is not None:
                    _apart_compiles[key] = helper
                    atexit.register(_stop, helper)
                    return False
        elif helper.poll() is None:
            return False
        self.load(arg_types)
        return True


#: the compiles of functions compiled apart running in helper processes (:meth:`ApartDispatcher.load_soon`): the
#: process by the function's key (``apart_key``)
_apart_compiles = {}


def _compile_apart(job):
    """A helper's job (:meth:`ApartDispatcher.load_soon`): compile the function compiled apart named ``name`` (as
    ``kernel_name`` gives it) for ``arg_types`` into the on-disk cache."""
    name, arg_types = job
    module, _, qualname = name.rpartition(".")
    getattr(importlib.import_module(module), qualname).compile(tuple(arg_types))


def apart_key(dispatcher, arg_types):
    """The key under which compiled code finds ``dispatcher``'s function for ``arg_types`` (``_apart_table``): a
    hash of its name and the types, the same in every process, never 0."""
    import hashlib
    text = f"{kernel_name(dispatcher)}{tuple(arg_types)}".encode()
    return (int.from_bytes(hashlib.sha256(text).digest()[:8], "little") & (2 ** 63 - 1)) | 1


def apart_njit(returns):
    """Decorator: a function compiled apart from its callers (:class:`ApartDispatcher`), with its own machine code
    and cache entry; compiled code calls it through its address (:func:`apart_caller`), after Python has loaded
    it for the argument types of the call (:meth:`ApartDispatcher.load`). ``returns(arg_types)`` is the numba
    type it returns for those argument types, which the callers declare without compiling it.

    Why: the step is compiled as one module, every stage's code linked into it; code that only some worlds run
    (the joints') was compiled, optimised and made into machine code with every step, although the step of a
    world without joints never runs it. Compiled apart, it is compiled (or loaded) only when a world needs it,
    and its cache entry is its own. The call is indirect (a few nanoseconds): for calls per batch of work, not
    per item. Its body is an entry that only calls kernels, as the step's (:class:`_LinkingLibrary`)."""
    def decorate(func):
        if numba.config.DISABLE_JIT:
            return func
        disp = ApartDispatcher(py_func=func, locals={},
                               targetoptions=dict(nopython=True, boundscheck=None, no_cpython_wrapper=True,
                                                  no_cfunc_wrapper=True),
                               pipeline_class=_LinkingCompiler)
        disp.returns = returns
        disp.enable_caching()
        return disp
    return decorate


def _apart_address(builder, key):
    """Compiled code: the address of the function compiled apart whose key is ``key`` in the table of loaded
    functions (``_APART_SYMBOL``; the pairs in use come first), or 0 when it is not there."""
    i64, i32 = llvm_ir.IntType(64), llvm_ir.IntType(32)
    module = builder.module
    table = module.globals.get(_APART_SYMBOL)
    if table is None:
        table = llvm_ir.GlobalVariable(module, llvm_ir.ArrayType(i64, 2 * APART_SLOTS), _APART_SYMBOL)
        table.linkage = "external"
    fn = builder.function
    head = fn.append_basic_block("apart.look")
    check = fn.append_basic_block("apart.check")
    step_on = fn.append_basic_block("apart.next")
    found = fn.append_basic_block("apart.found")
    done = fn.append_basic_block("apart.done")
    before = builder.basic_block
    builder.branch(head)
    builder.position_at_end(head)
    i = builder.phi(i64)
    i.add_incoming(i64(0), before)
    slot_key = builder.load(builder.gep(table, [i32(0), builder.mul(i, i64(2))]))
    builder.cbranch(builder.icmp_signed("==", slot_key, i64(key)), found, check)
    builder.position_at_end(check)
    last = builder.or_(builder.icmp_signed("==", slot_key, i64(0)),
                       builder.icmp_signed(">=", i, i64(APART_SLOTS - 1)))
    builder.cbranch(last, done, step_on)
    builder.position_at_end(step_on)
    i.add_incoming(builder.add(i, i64(1)), step_on)
    builder.branch(head)
    builder.position_at_end(found)
    address = builder.load(builder.gep(table, [i32(0), builder.add(builder.mul(i, i64(2)), i64(1))]))
    builder.branch(done)
    builder.position_at_end(done)
    out = builder.phi(i64)
    out.add_incoming(i64(0), check)
    out.add_incoming(address, found)
    return out


def apart_caller(dispatcher):
    """The compiled call ``caller(args)`` of the function compiled apart ``dispatcher`` (:func:`apart_njit`) with
    the tuple ``args``: its address is looked up by key (``apart_key``: the function's name and the argument
    types) in the table of loaded functions, and the function called with Numba's calling convention (an
    exception it raises goes on up); the caller raises RuntimeError when the function was not loaded for
    these types. Plain Python without the JIT: ``dispatcher(*args)``."""
    if numba.config.DISABLE_JIT:
        def call(args):
            return dispatcher(*args)
        return call

    from numba.core import cgutils, imputils

    @numba.extending.intrinsic
    def call(typingctx, args):
        if not isinstance(args, numba.core.types.BaseTuple):
            return None
        arg_types = tuple(args.types)
        restype = dispatcher.returns(arg_types)
        key = apart_key(dispatcher, arg_types)

        def codegen(context, builder, sig, llargs):
            address = _apart_address(builder, key)
            with cgutils.if_unlikely(builder, builder.icmp_signed("==", address, address.type(0))):
                context.call_conv.return_user_exc(builder, RuntimeError, (
                    f"carom: {kernel_name(dispatcher)} was not loaded for the types of this call",))
            # Numba's call of a compiled function (``CPUCallConv.call_function``), through the address
            conv = context.call_conv
            fnty = conv.get_function_type(restype, arg_types)
            callee = builder.inttoptr(address, fnty.as_pointer())
            retty = conv.get_return_type(restype).pointee
            retval = cgutils.alloca_once(builder, retty)
            builder.store(cgutils.get_null_value(retty), retval)
            excinfo = cgutils.alloca_once(builder, llvm_ir.PointerType(numba.core.callconv.excinfo_t),
                                          name="excinfo")
            values = [builder.extract_value(llargs[0], k) for k in range(len(arg_types))]
            packed = list(conv._get_arg_packer(arg_types).as_arguments(builder, values))
            code = builder.call(callee, [retval, excinfo] + packed)
            status = conv._get_return_status(builder, code, builder.load(excinfo))
            with cgutils.if_unlikely(builder, status.is_error):
                conv.return_status_propagate(builder, status)
            out = context.get_returned_value(builder, restype, builder.load(retval))
            return imputils.fix_returning_optional(context, builder, sig, status, out)
        return restype(args), codegen
    return call


def apart_loaded(dispatcher):
    """The compiled test ``loaded(args)``: whether the function compiled apart ``dispatcher`` (:func:`apart_njit`)
    was loaded (:meth:`ApartDispatcher.load`) for the types of the tuple ``args`` (which is not read), so that
    :func:`apart_caller`'s call with ``args`` would find it. Plain Python without the JIT: always True.

    Why: code that runs in a step only now and then (continuous collision, sensors) is loaded the first time a
    step needs it; the step asks first, and when the answer is no it stops before that stage and hands the rest
    to Python, which loads the code and finishes the step (``carom.rigid._step.step_tail``)."""
    if numba.config.DISABLE_JIT:
        def loaded(args):
            return True
        return loaded

    @numba.extending.intrinsic
    def loaded(typingctx, args):
        if not isinstance(args, numba.core.types.BaseTuple):
            return None
        key = apart_key(dispatcher, tuple(args.types))

        def codegen(context, builder, sig, llargs):
            address = _apart_address(builder, key)
            return builder.icmp_signed("!=", address, address.type(0))
        return numba.core.types.boolean(args), codegen
    return loaded


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_announced = False


def kernels_cached() -> bool:
    """True when Numba's on-disk cache already holds compiled carom kernels: next to the sources, or under
    ``NUMBA_CACHE_DIR`` when that is set (where Numba then keeps them)."""
    if numba.config.CACHE_DIR:
        where = os.path.join(numba.config.CACHE_DIR, "**", "*.nbi")
    else:
        where = os.path.join(_PACKAGE_DIR, "**", "__pycache__", "*.nbi")
    return bool(glob.glob(where, recursive=True))


def announce_compile() -> None:
    """Print a one-time note before the first compile on a machine (compiling takes tens of seconds)."""
    global _announced
    if _announced or os.environ.get("NUMBA_DISABLE_JIT") == "1" or os.environ.get(_HELPER_ENV):
        return
    _announced = True
    shipped = _cpu_level.shipped_levels()
    if shipped and _cpu_level.level not in shipped:
        # an installed wheel's kernels are for other levels: this run compiles, and says why
        print(f"carom: no shipped kernels for this processor ({_cpu_level.reason}; shipped: "
              f"{', '.join(shipped)}): compiling kernels… (once; later runs load them from the cache)",
              file=sys.stderr, flush=True)
    elif not kernels_cached():
        print("carom: compiling kernels… (once per machine; later runs load them from the cache)",
              file=sys.stderr, flush=True)
    else:
        return
    numba.core.event.register("numba:compile", _CompileProgress())


class _CompileProgress(numba.core.event.Listener):
    """While a first run compiles: one line on the console as each stage of the rigid step starts compiling in
    this process (a stage the compile helper has already put in the cache is loaded and says nothing), with
    the stage's place in the step and the seconds since the first, and one when the step is done."""

    #: the step's stages in the order ``_step.step_kernel`` calls (and compiles) them
    STAGES = ("bounds_stage", "broad_stage", "narrow_stage", "pre_solve_stage", "prepare_stage", "solve_stage",
              "continuous_stage", "sensor_stage", "sleep_stage")

    def __init__(self):
        self._t0 = None
        self._seen = set()

    def _name(self, event):
        func = getattr(event.data.get("dispatcher"), "py_func", None)
        if func is None or not getattr(func, "__module__", "").startswith("carom.rigid."):
            return None
        return func.__name__

    def on_start(self, event):
        name = self._name(event)
        if name == "step_kernel" and self._t0 is None:
            self._t0 = time.perf_counter()
        elif name in self.STAGES and name not in self._seen and self._t0 is not None:
            self._seen.add(name)
            k = self.STAGES.index(name) + 1
            print(f"carom: compiling the rigid step: {name[:-6].replace('_', '-')} ({k}/{len(self.STAGES)}), "
                  f"{time.perf_counter() - self._t0:.0f} s", file=sys.stderr, flush=True)

    def on_end(self, event):
        if self._name(event) == "step_kernel" and self._t0 is not None:
            print(f"carom: the rigid step compiled in {time.perf_counter() - self._t0:.0f} s", file=sys.stderr,
                  flush=True)
            # (the clock goes on: the solve, compiled apart, may be compiled after the step, and says so)


#: set in the environment of a compile helper (:func:`compile_helper`): it says nothing on the console
_HELPER_ENV = "CAROM_COMPILE_HELPER"


def _cached(dispatcher, arg_types) -> bool:
    """Whether ``dispatcher`` holds, or its on-disk cache indexes, code for ``arg_types`` (reads the index only,
    so a warm start does not load the code twice). Numba's cache internals: when they are not as expected
    the answer is True, and no helper is started."""
    if arg_types in dispatcher.overloads:
        return True
    try:
        cache = dispatcher._cache
        key = cache._index_key(arg_types, dispatcher.targetctx.codegen())
        return key in cache._cache_file._load_index()
    except Exception:
        return True


class _Claims:
    """Which of the two processes of a cold compile (the entry's and its helper, :func:`compile_helper`)
    compiles each of the kernels the helper's job compiles (``names``): the first to reach one claims it (a file
    created in the directory ``where``, which only one process can create) and compiles it; the other waits
    until that compile is done (a second file) and then loads it from the cache.

    Why: before, the entry compiled any of these it did not find in the cache, so a stage that the helper was
    still compiling when the entry's compile reached it was compiled twice, at once on both cores (the
    helper's job grew with the joints' solve): 20-30 s of the step's cold compile, 177-182 s of CPU time in
    both processes where the step compiled in one process took 143 s. Waiting costs no time: the helper,
    having started that stage first, finishes it first. The waiter stops waiting when the other process is
    gone (``other_alive``), and a process that holds a claim (compiles a shared kernel that calls another)
    never waits, so two processes cannot wait for each other."""
    #: the longest wait for the other process's compile of one kernel (s); then the waiter compiles it too
    MAX_WAIT = 600.0
    POLL = 0.02

    def __init__(self, where, names, other_alive):
        self.where = where
        self.names = frozenset(names)
        self.other_alive = other_alive
        self.held = 0

    def shared(self, dispatcher):
        return kernel_name(dispatcher) in self.names

    @contextlib.contextmanager
    def claim(self, dispatcher):
        path = os.path.join(self.where, kernel_name(dispatcher))
        try:
            os.close(os.open(path + ".claim", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            mine = True
        except FileExistsError:
            mine = False
        except OSError:
            mine = True              # (no claim possible: compile it, as without a helper)
        if mine or self.held:
            self.held += 1
            try:
                yield
            finally:
                self.held -= 1
                if mine:
                    try:
                        os.close(os.open(path + ".done", os.O_CREAT | os.O_WRONLY))
                    except OSError:
                        pass
            return
        deadline = time.monotonic() + self.MAX_WAIT
        while not os.path.exists(path + ".done") and self.other_alive() and time.monotonic() < deadline:
            time.sleep(self.POLL)
        yield


#: the claims of the cold compile under way in this process, if it shares one with a helper (:class:`_Claims`)
_claims = None


def kernel_name(dispatcher):
    """A compiled function's module and qualified name, as the claims of a shared cold compile name it."""
    return f"{dispatcher.py_func.__module__}.{dispatcher.py_func.__qualname__}"


#: the compile helper under way (:func:`start_compile_helper`): (process, claims directory, entry, argument types),
#: or None
_running = None


def start_compile_helper(entry, args, job, shared=()):
    """Start the compile helper of the entry point ``entry`` now, ahead of its first call with ``args``: when
    that call will compile (nothing cached), a helper process runs ``job`` ("module:function") with ``entry``'s
    argument types, compiling part of ``entry``'s callees into the on-disk cache on the other core, until the
    first call's compile is done (:func:`compile_helper`) or this process ends. Does nothing when a helper is
    already under way or none is wanted.

    Why: Numba compiles a call tree depth first in one thread, and the step's cold compile took 70-90 s on
    one core of two. A callee found in the cache when the entry's compile reaches it is loaded, not compiled
    (Numba reads the cache index at every such lookup), so the job takes the callees the entry reaches
    last. A callee the helper has not finished in time is compiled by the entry as before (then both write
    the same cache entry; Numba replaces cache files whole), so a slow or failed helper costs nothing
    but its core. The kernels ``shared`` (those the job compiles) are compiled by only one of the two
    processes, the first to reach each; the other waits for it (:class:`_Claims`). Cache writes are Numba's:
    the helper shares ``NUMBA_CACHE_DIR``, the sources and the module path. No helper in a frozen application,
    whose executable is not a Python interpreter, nor with one core to run on, where it would only take turns
    with the entry's compile.

    Why ahead of the call: the world a program builds before its first step compiles its own kernels (the
    shapes' mass, the broad phase's tree: about 10 s of a cold start), while the other core idled. The world
    starts the step's helper when it is made (``carom.rigid.World``), from its own (empty) arrays, whose types
    are those of any world's step."""
    global _claims, _running
    if _running is not None or not _helpers_wanted():
        return
    arg_types = tuple(entry.typeof_pyval(a) for a in args)
    if _cached(entry, arg_types):
        return
    names = [kernel_name(k) for k in shared]
    where = tempfile.mkdtemp(prefix="carom-compile-") if names else None
    helper = _spawn_helper(job, arg_types, where, names)
    if helper is None:                     # no helper then: the entry compiles everything
        if where is not None:
            shutil.rmtree(where, ignore_errors=True)
        return
    if where is not None:
        _claims = _Claims(where, names, lambda: helper.poll() is None)
    _running = (helper, where, entry, arg_types)
    atexit.register(end_compile_helper)


def _helpers_wanted():
    """Whether this process may start compile helpers: not without the JIT, not in a helper itself, not in a frozen
    application (whose executable is not a Python interpreter) and not with one core to run on."""
    return not (numba.config.DISABLE_JIT or os.environ.get(_HELPER_ENV) or getattr(sys, "frozen", False)
                or _usable_cores() < 2)


def _spawn_helper(job, arg_types, where=None, names=()):
    """A helper process (:func:`_helper_main`) running ``job`` ("module:function") with ``arg_types``, silent, or
    None when it cannot be started."""
    helper = None
    try:
        helper = subprocess.Popen([sys.executable, "-c", "import carom._jit as j; j._helper_main()"],
                                  stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  env=dict(os.environ, **{_HELPER_ENV: "1"}))
        helper.stdin.write(pickle.dumps((sys.path, job, arg_types, where, list(names))))
        helper.stdin.close()
    except Exception:
        _stop(helper)
        return None
    return helper


def end_compile_helper():
    """Stop the compile helper under way, if any (its work is of no use once the entry compiled), and remove its
    claims."""
    global _claims, _running
    if _running is None:
        return
    helper, where = _running[:2]
    _claims = None
    _running = None
    _stop(helper)
    if where is not None:
        shutil.rmtree(where, ignore_errors=True)


@contextlib.contextmanager
def compile_helper(entry, args, job, shared=()):
    """Around the first call of the entry point ``entry`` with ``args``: the compile helper
    (:func:`start_compile_helper`) under way, or started now, is stopped when the call returns. One started
    ahead for other argument types is stopped first and a helper started for these."""
    if _running is not None and (_running[2] is not entry or
                                 _running[3] != tuple(entry.typeof_pyval(a) for a in args)):
        end_compile_helper()
    start_compile_helper(entry, args, job, shared)
    try:
        yield
    finally:
        end_compile_helper()


def _usable_cores():
    """The cores this process may run on (its affinity mask where the system has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _stop(helper):
    """Stop and reap the helper process ``helper`` (if any): its work is of no use once the entry compiled."""
    if helper is not None:
        helper.kill()                              # (nothing happens to one that has already exited)
        helper.wait()


def end_with(pid):
    """Poll the process ``pid`` (POSIX: signal 0 only checks that it exists) and end this process when it is
    gone: a compile helper or background compile (run in a thread) does not outlive its program. Numba writes
    each cache file whole, so none is left half written."""
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            os._exit(0)
        except OSError:
            pass             # (it exists, but is not ours to signal)
        time.sleep(0.2)


def _helper_main():
    """A compile helper's body: read (the parent's module path, job, argument types, claims directory, shared
    kernels' names) from stdin and run the job."""
    global _claims
    sys.path[:], job, arg_types, where, names = pickle.loads(sys.stdin.buffer.read())
    parent = os.getppid()
    if where is not None:
        _claims = _Claims(where, names, lambda: os.getppid() == parent)
    # (a program that ends before its first step leaves no compile running)
    threading.Thread(target=end_with, args=(parent,), daemon=True).start()
    module, name = job.split(":")
    getattr(importlib.import_module(module), name)(arg_types)


if numba.config.DISABLE_JIT:
    def cycle_counter():
        """Plain-Python stand-in for the compiled cycle counter: nanoseconds of ``time.perf_counter_ns``."""
        return time.perf_counter_ns()
else:
    @numba.extending.intrinsic
    def cycle_counter(typingctx):
        """The processor's cycle counter (LLVM's ``readcyclecounter``: the time-stamp counter on x86), read
        inside compiled code to time the stages of a step without leaving the kernel; a few cycles to read.
        :func:`cycles_per_second` converts it to time."""
        def codegen(context, builder, signature, args):
            fnty = llvm_ir.FunctionType(llvm_ir.IntType(64), [])
            fn = numba.core.cgutils.get_or_insert_function(builder.module, fnty, "llvm.readcyclecounter")
            return builder.call(fn, [])
        return numba.core.types.int64(), codegen


if numba.config.DISABLE_JIT:
    def atomic_add(a, i, v):
        """Plain-Python stand-in: ``a[i] += v``, returning the old value."""
        old = a[i]
        a[i] = old + v
        return old

    def atomic_load(a, i):
        """Plain-Python stand-in: ``a[i]``."""
        return a[i]

    def atomic_store(a, i, v):
        """Plain-Python stand-in: ``a[i] = v``."""
        a[i] = v

    def spin_pause():
        """Plain-Python stand-in: nothing."""
        return None
else:
    def _int64_slot(context, builder, aty, a, i, ity):
        """Pointer to element i of a 1-D int64 array."""
        arr = numba.core.cgutils.create_struct_proxy(aty)(context, builder, value=a)
        index = context.cast(builder, i, ity, numba.core.types.intp)
        return builder.gep(arr.data, [index])

    def _int64_access(a, i, v=None):
        """Whether (a, i[, v]) types an access to element i of a 1-D int64 array (writing the integer v)."""
        ok = (isinstance(a, numba.core.types.Array) and a.ndim == 1 and a.dtype == numba.core.types.int64
              and a.layout == "C" and isinstance(i, numba.core.types.Integer))
        return ok and (v is None or isinstance(v, numba.core.types.Integer))

    def _atomic_write(emit):
        """Codegen of an atomic write ``emit(builder, pointer, int64 value)`` to a[i] for (a, i, v)."""
        def codegen(context, builder, signature, args):
            ptr = _int64_slot(context, builder, signature.args[0], args[0], args[1], signature.args[1])
            val = context.cast(builder, args[2], signature.args[2], numba.core.types.int64)
            return emit(context, builder, ptr, val)
        return codegen

    @numba.extending.intrinsic
    def atomic_add(typingctx, a, i, v):
        """``a[i] += v`` as one atomic read-modify-write (sequentially consistent: every write made before it
        in this thread is visible to a thread that sees its result), returning the old value. For the
        solver's barrier (``carom.rigid._solver``) between the threads of one parallel loop."""
        if not _int64_access(a, i, v):
            return None
        return numba.core.types.int64(a, i, v), _atomic_write(
            lambda context, builder, ptr, val: builder.atomic_rmw("add", ptr, val, "seq_cst"))

    @numba.extending.intrinsic
    def atomic_load(typingctx, a, i):
        """``a[i]`` read atomically (sequentially consistent), never merged with another read or moved out of
        a loop by the compiler, so a thread can wait for another thread's ``atomic_store``."""
        if not _int64_access(a, i):
            return None

        def codegen(context, builder, signature, args):
            ptr = _int64_slot(context, builder, signature.args[0], args[0], args[1], signature.args[1])
            return builder.load_atomic(ptr, "seq_cst", 8)
        return numba.core.types.int64(a, i), codegen

    def _store_atomic(context, builder, ptr, val):
        builder.store_atomic(val, ptr, "seq_cst", 8)
        return context.get_dummy_value()

    @numba.extending.intrinsic
    def atomic_store(typingctx, a, i, v):
        """``a[i] = v`` written atomically (sequentially consistent)."""
        if not _int64_access(a, i, v):
            return None
        return numba.core.types.none(a, i, v), _atomic_write(_store_atomic)

    @numba.extending.intrinsic
    def spin_pause(typingctx):
        """A hint that this thread is waiting in a loop (x86's ``pause``: it frees the core's resources for its
        other hardware thread and saves power); nothing on other processors."""
        def codegen(context, builder, signature, args):
            if platform.machine().lower() in ("x86_64", "amd64", "i386", "i686"):
                fn = numba.core.cgutils.get_or_insert_function(
                    builder.module, llvm_ir.FunctionType(llvm_ir.VoidType(), []), "llvm.x86.sse2.pause")
                builder.call(fn, [])
            return context.get_dummy_value()
        return numba.core.types.none(), codegen


#: how the barrier's waiting threads sleep (:func:`futex_wait`): "futex" (Linux on a little-endian 64-bit machine
#: whose futex system call number is known: the kernel puts the thread to sleep on the 32-bit low half of the
#: int64 word, and :func:`futex_wake` wakes it), "yield" (other POSIX systems: ``sched_yield`` hands the core to
#: another thread and the caller looks again) or "spin" (elsewhere: only the spin, as before)
_FUTEX_SYSCALL = {"x86_64": 202, "amd64": 202, "aarch64": 98, "arm64": 98}


def _wait_kind():
    machine = platform.machine().lower()
    if sys.platform.startswith("linux") and sys.byteorder == "little" and machine in _FUTEX_SYSCALL:
        return "futex"
    if os.name == "posix":
        return "yield"
    return "spin"


WAIT_KIND = _wait_kind()
_SLEEPS = WAIT_KIND != "spin"
_FUTEX_WAIT_PRIVATE, _FUTEX_WAKE_PRIVATE = 128, 129     # FUTEX_WAIT | FUTEX_PRIVATE_FLAG, FUTEX_WAKE | ...
#: longest sleep of one futex wait (ns): a waiter whose wake-up went missing looks again after this long, so a
#: lost wake-up would cost time, never a hang (the barrier's protocol loses none: see ``wait_for_change``)
_FUTEX_TIMEOUT_NS = 1_000_000
#: the processor's cycle counter is the time-stamp counter (constant rate, readable by user code): the spin is
#: timed with it; elsewhere it is counted in pauses
_TSC = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686")
#: how long a thread waiting at a barrier spins before it sleeps: in time-stamp counter ticks on x86 (about
#: 20 µs at 2.5 GHz), else in pauses. Why spin at all: on an idle machine the other threads arrive within
#: microseconds, sooner than a sleeping thread is woken (tens of µs on a virtual machine); why not longer: a
#: thread that is not running (another process has its core) arrives only after the scheduler's time slice,
#: and the spinning thread keeps that very core busy
SPIN_TICKS = 50_000
SPIN_PAUSES = 5_000

if numba.config.DISABLE_JIT:
    def futex_wait(a, i, value):
        """Plain-Python stand-in: give up the processor for a moment."""
        time.sleep(0)

    def futex_wake(a, i):
        """Plain-Python stand-in: nothing (a waiter looks again by itself)."""
        return None
else:
    def _futex(builder, ptr, op, value, timeout):
        i64 = llvm_ir.IntType(64)
        fnty = llvm_ir.FunctionType(i64, [i64], var_arg=True)
        fn = numba.core.cgutils.get_or_insert_function(builder.module, fnty, "syscall")
        null = llvm_ir.Constant(llvm_ir.IntType(8).as_pointer(), None)
        addr = builder.bitcast(ptr, llvm_ir.IntType(8).as_pointer())
        builder.call(fn, [i64(_FUTEX_SYSCALL[platform.machine().lower()]), addr, i64(op), value,
                          timeout if timeout is not None else null, null, i64(0)])

    @numba.extending.intrinsic
    def futex_wait(typingctx, a, i, value):
        """Sleep while the int64 ``a[i]`` still holds ``value`` (compared on the low 32 bits, atomically with
        going to sleep): Linux's futex wait, which returns when :func:`futex_wake` is called on the same word,
        at once if the word differs, after 1 ms at most, or spuriously, so the caller looks again in a loop.
        Elsewhere ``sched_yield`` (POSIX) or nothing. Why: a thread spinning at the solver's barrier for a
        thread that is not running keeps from it the core it could run on (``carom.rigid._solver.await_phase``).
        External functions are called by name (``syscall``, ``sched_yield``), so the code stays cacheable."""
        if not _int64_access(a, i, value):
            return None

        def codegen(context, builder, signature, args):
            if WAIT_KIND == "futex":
                i64 = llvm_ir.IntType(64)
                ptr = _int64_slot(context, builder, signature.args[0], args[0], args[1], signature.args[1])
                low = builder.trunc(context.cast(builder, args[2], signature.args[2], numba.core.types.int64),
                                    llvm_ir.IntType(32))
                spec = numba.core.cgutils.alloca_once(builder, llvm_ir.ArrayType(i64, 2))
                builder.store(llvm_ir.Constant(llvm_ir.ArrayType(i64, 2), [0, _FUTEX_TIMEOUT_NS]), spec)
                _futex(builder, ptr, _FUTEX_WAIT_PRIVATE, builder.sext(low, i64),
                       builder.bitcast(spec, llvm_ir.IntType(8).as_pointer()))
            elif WAIT_KIND == "yield":
                fn = numba.core.cgutils.get_or_insert_function(
                    builder.module, llvm_ir.FunctionType(llvm_ir.IntType(32), []), "sched_yield")
                builder.call(fn, [])
            return context.get_dummy_value()
        return numba.core.types.none(a, i, value), codegen

    @numba.extending.intrinsic
    def futex_wake(typingctx, a, i):
        """Wake every thread sleeping in :func:`futex_wait` on ``a[i]`` (Linux's futex wake; elsewhere nothing:
        waiters there yield and look again)."""
        if not _int64_access(a, i):
            return None

        def codegen(context, builder, signature, args):
            if WAIT_KIND == "futex":
                ptr = _int64_slot(context, builder, signature.args[0], args[0], args[1], signature.args[1])
                i64 = llvm_ir.IntType(64)
                _futex(builder, ptr, _FUTEX_WAKE_PRIVATE, i64(2 ** 31 - 1), None)
            return context.get_dummy_value()
        return numba.core.types.none(a, i), codegen


@numba.njit(cache=True, inline="always")
def wait_for_change(a, i, value, sleepers):
    """Wait until the int64 ``a[i]`` no longer holds ``value`` (another thread's ``atomic_store``): spin with
    pauses for about ``SPIN_TICKS`` (``SPIN_PAUSES``), then sleep in :func:`futex_wait`, counted in ``a[sleepers]``
    so that the writer wakes the sleepers (:func:`wake_waiters`) only when there are any.

    Why not spin throughout: with another process on the second core, a spinning thread waited for one that
    was not running (large_pyramid: 171 ms a step with two threads, 3.35 ms with one). No wake-up is lost:
    the sleeper counts itself before its futex wait checks the word, the writer stores the word before it
    reads the count (all sequentially consistent), so either the writer sees the count and wakes it, or the
    wait sees the new word and returns at once."""
    start = cycle_counter() if _TSC else 0
    spins = 0
    while atomic_load(a, i) == value:
        if (cycle_counter() - start < SPIN_TICKS) if _TSC else (spins < SPIN_PAUSES):
            spin_pause()
            spins += 1
        elif not _SLEEPS:
            spin_pause()
        else:
            atomic_add(a, sleepers, 1)
            futex_wait(a, i, value)
            atomic_add(a, sleepers, -1)


@numba.njit(cache=True, inline="always")
def wake_waiters(a, i, sleepers):
    """After storing a new value in ``a[i]``: wake the threads sleeping on it in :func:`wait_for_change` (one
    system call, made only when ``a[sleepers]`` counts a sleeper)."""
    if atomic_load(a, sleepers) > 0:
        futex_wake(a, i)


if numba.config.DISABLE_JIT:
    def borrowed_rows(a, start, count):
        """Plain-Python stand-in: the slice ``a[start:start + count]``."""
        return a[start:start + count]
else:
    @numba.extending.intrinsic
    def borrowed_rows(typingctx, a, start, count):
        """Rows ``start … start + count − 1`` of a C-contiguous 2-D array, as a view that holds no reference.

        Why: a slice in compiled code takes a reference on the array's memory, an atomic increment and
        decrement. The narrow phase hands each pair's cores to the collision routines as slices of the shared
        vertex table, and those atomics cost about 40 ns per pair, a third of a circle pair's time. The view
        has no owner (a null meminfo, which Numba's reference counting skips), so it is valid only while
        ``a`` is alive and must not outlive the call that made it: pass it down, never return or store it.
        """
        if not (isinstance(a, numba.core.types.Array) and a.ndim == 2 and a.layout == "C"
                and isinstance(start, numba.core.types.Integer) and isinstance(count, numba.core.types.Integer)):
            return None
        from numba.np.arrayobj import populate_array
        intp = numba.core.types.intp

        def codegen(context, builder, sig, args):
            aty = sig.args[0]
            src = context.make_array(aty)(context, builder, args[0])
            first = context.cast(builder, args[1], sig.args[1], intp)
            rows = context.cast(builder, args[2], sig.args[2], intp)
            shape = numba.core.cgutils.unpack_tuple(builder, src.shape)
            strides = numba.core.cgutils.unpack_tuple(builder, src.strides)
            data = builder.gep(src.data, [builder.mul(first, shape[1])])
            out = context.make_array(sig.return_type)(context, builder)
            populate_array(out, data=data, shape=[rows, shape[1]], strides=strides, itemsize=src.itemsize,
                           meminfo=None)
            return out._getvalue()
        return a.copy(layout="C")(a, start, count), codegen


def _without_owner(context, builder, aty, value):
    """``value`` (of type ``aty``) with every array in it a view without an owner (a null meminfo and parent):
    :func:`borrowed`, :func:`deref`."""
    if isinstance(aty, numba.core.types.Array):
        view = context.make_array(aty)(context, builder, value)
        view.meminfo = numba.core.cgutils.get_null_value(view.meminfo.type)
        view.parent = numba.core.cgutils.get_null_value(view.parent.type)
        return view._getvalue()
    if isinstance(aty, numba.core.types.BaseTuple):
        out = value
        for i, ty in enumerate(aty.types):
            out = builder.insert_value(out, _without_owner(context, builder, ty, builder.extract_value(out, i)), i)
        return out
    return value


if numba.config.DISABLE_JIT:
    def borrowed(a):
        """Plain-Python stand-in: the array itself."""
        return a
else:
    @numba.extending.intrinsic
    def borrowed(typingctx, a):
        """The array ``a`` as a view that holds no reference (a null meminfo, as :func:`borrowed_rows`).

        Why: Numba's IR-level inlining (:data:`inline_njit`) binds each array argument of the inlined function
        to a new name, which takes a reference (an atomic increment, and a decrement where the name dies).
        LLVM removes such pairs only when they sit in one block or a simple diamond; where the inlined code
        branches they stay: six atomics per body in the integrators' loop (28 ns per body with them, 4 ns
        without), several per bundle in the sweeps. With two threads the atomics on the same arrays also
        bounce their cache line between the cores. A per-chunk function rebinds its arrays to borrowed views
        once, and the per-item references are then taken on nothing (a null check). Valid only while ``a`` is
        alive: use it inside the call that made it, never return or store it.

        ``a`` may also be a tuple (a stage's ``shapes``, ``old``, ...) of arrays, of such tuples (the step's
        tables) or of other values (numbers, passed on as they are): then each array in it is borrowed.
        """
        Array, BaseTuple = numba.core.types.Array, numba.core.types.BaseTuple

        def has_array(t):
            return isinstance(t, Array) or isinstance(t, BaseTuple) and any(has_array(m) for m in t.types)
        if not has_array(a):
            return None

        def codegen(context, builder, sig, args):
            return _without_owner(context, builder, sig.args[0], args[0])
        return a(a), codegen


if numba.config.DISABLE_JIT:
    def by_ref(a):
        """Plain-Python stand-in: the value itself."""
        return a

    def deref(a):
        """Plain-Python stand-in: the value itself."""
        return a
else:
    @numba.extending.intrinsic
    def by_ref(typingctx, a):
        """A pointer to ``a`` (a tuple of a stage's tables), for a call that hands it on: one word instead of
        every field of every array in it. The callee takes the value back with :func:`deref`. Valid only during
        the call (the pointer is to the caller's stack).

        Why: a call between carom's kernels passes a tuple of arrays by value, every field of every array (7-9
        words an array: the bodies table alone is 162 words, the shapes table 141), loaded and stored at every
        call. The step's own calls to its stages copied some 4,500 words a step; a small world's step spent
        about a sixth of its time on such copies (``step_kernel``'s and ``step_one``'s own time)."""
        def codegen(context, builder, sig, args):
            return numba.core.cgutils.alloca_once_value(builder, args[0])
        return numba.core.types.CPointer(a)(a), codegen

    @numba.extending.intrinsic
    def deref(typingctx, a):
        """The tuple :func:`by_ref` pointed to, as :func:`borrowed` views: the fields a function reads are loaded
        where it reads them, the others never. Given the tuple itself (a call from Python), the tuple as
        :func:`borrowed` views. Their arrays hold no reference, so none is counted on them (Numba's drops where
        a variable dies test for the null owner, inlined, and LLVM folds them away). Valid only during the
        call: never return or store them."""
        value_type = a.dtype if isinstance(a, numba.core.types.CPointer) else a

        def codegen(context, builder, sig, args):
            value = builder.load(args[0]) if isinstance(a, numba.core.types.CPointer) else args[0]
            return _without_owner(context, builder, value_type, value)
        return value_type(a), codegen


if numba.config.DISABLE_JIT:
    def trailing_zeros(x):
        """Plain-Python stand-in: the number of trailing zero bits of a 64-bit unsigned integer (64 for 0)."""
        x = int(x) & 0xFFFFFFFFFFFFFFFF
        return 64 if x == 0 else (x & -x).bit_length() - 1
else:
    #: the number of trailing zero bits of an integer (its width for 0): one instruction (``tzcnt``, LLVM's
    #: ``cttz``), where a loop over the bits takes one iteration per bit
    from numba.cpython.unsafe.numbers import trailing_zeros


def _glibc_sincos():
    """Whether compiled code can call the C library's ``sincos`` with bitwise the results of ``sin`` and
    ``cos``: glibc computes all three with the same routines (other C libraries are not relied on)."""
    import platform
    return sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"


if not numba.config.DISABLE_JIT and _glibc_sincos():
    @numba.extending.intrinsic
    def sin_cos(typingctx, x):
        """(sin x, cos x) in one call of glibc's ``sincos``: LLVM calls ``sin`` and ``cos`` separately, and the
        two were a fifth of the solver's position integration (per body per substep)."""
        if not isinstance(x, numba.core.types.Float):
            return None
        f64 = numba.core.types.float64
        sig = numba.core.types.UniTuple(f64, 2)(x)

        def codegen(context, builder, signature, args):
            arg = context.cast(builder, args[0], signature.args[0], f64)
            dbl = llvm_ir.DoubleType()
            fnty = llvm_ir.FunctionType(llvm_ir.VoidType(), [dbl, dbl.as_pointer(), dbl.as_pointer()])
            fn = numba.core.cgutils.get_or_insert_function(builder.module, fnty, "sincos")
            s = numba.core.cgutils.alloca_once(builder, dbl)
            c = numba.core.cgutils.alloca_once(builder, dbl)
            builder.call(fn, [arg, s, c])
            return context.make_tuple(builder, signature.return_type, [builder.load(s), builder.load(c)])
        return sig, codegen
else:
    @numba.njit(cache=True, inline="always")
    def sin_cos(x):
        """(sin x, cos x): two calls (elsewhere than glibc, and as plain Python under NUMBA_DISABLE_JIT)."""
        return math.sin(x), math.cos(x)


@njit
def read_cycle_counter():
    return cycle_counter()


#: glibc malloc settings (mallopt codes) that carom asks for, unless CAROM_MALLOPT=0
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
#: a step's arrays (contact table, solver rows: a few MB for thousands of bodies) are served from the heap
#: below this size, instead of fresh zeroed pages from the kernel for every step
MMAP_THRESHOLD = 32 * 1024 * 1024     # glibc's largest allowed value
#: freed memory at the top of the heap is kept up to this size instead of being handed back at every free
TRIM_THRESHOLD = 256 * 1024 * 1024
#: Numba's threading layers that run the items of a parallel loop with as many items as threads all at once,
#: one per thread (OpenMP's static schedule, the work queue's one task per thread). TBB's work stealing gives
#: no such promise: its calling thread may run both items, one after the other. (The solver's threads once met
#: at barriers, where that would hang; they now wait only for chunks another thread has claimed and is doing,
#: ``carom.rigid._solver.await_phase``, where it would only cost the parallelism.)
CONCURRENT_LAYERS = ("omp", "workqueue")


def prefer_concurrent_threading_layer():
    """Ask Numba for OpenMP, then the work queue, before TBB (its default order puts TBB first), unless the
    user chose a layer (NUMBA_THREADING_LAYER); it takes effect if no parallel loop has run yet."""
    if "NUMBA_THREADING_LAYER" not in os.environ and str(numba.config.THREADING_LAYER).lower() == "default":
        numba.config.THREADING_LAYER_PRIORITY = ["omp", "workqueue", "tbb"]


#: how many times an idle OpenMP worker of libgomp looks for work before it sleeps (``GOMP_SPINCOUNT``), unless
#: the user set GOMP_SPINCOUNT or OMP_WAIT_POLICY (``default_omp_spin``)
OMP_SPIN_COUNT = "100000"
#: carom set GOMP_SPINCOUNT (``default_omp_spin``): it is taken out again once Numba's threads are started
_omp_spin_set = False


def default_omp_spin():
    """Have libgomp's idle workers spin ``OMP_SPIN_COUNT`` times before they sleep, instead of its default of
    300,000, unless the user chose (GOMP_SPINCOUNT or OMP_WAIT_POLICY); returns whether it did. libgomp reads
    the variable once, when Numba's OpenMP layer loads it (at the first parallel loop or thread count), so this
    takes effect only if that has not happened yet; the variable is taken out of the environment again once
    Numba's threads are started (``step_threads``), so that child processes do not inherit it.

    Why: between two parallel loops of a step (and between steps) the worker spins for up to 300,000 pauses,
    a millisecond or more. With another process busy on the second core, that spinning thread takes turns
    with the calling thread, which is doing the step's serial work, and with the solve's threads
    (large_pyramid: two threads took twice the one-thread time, 1.5 times with GOMP_SPINCOUNT=0). On an idle
    machine a short spin keeps the worker awake across the gaps inside a step and between two steps.

    How long: a pause takes about 10 ns on our Xeon, so 10,000 spins were 0.1 ms, shorter than a step's serial
    stretches and the call from Python between steps; the worker slept and the next parallel loop waited for
    it to wake. 100,000 (about 1 ms) took the in-step time with two threads down 4 % (large_pyramid, smash,
    rain), 7 % (tumbler) and 1-2 % (many_pyramids, joint_grid); spinner did not change (interleaved runs).
    Beside a busy core the governor (``ThreadGovernor``) moves a world to one thread, which starts no
    parallel loop, so no worker spins (``benchmarks/busy_core.py``)."""
    global _omp_spin_set
    if "GOMP_SPINCOUNT" in os.environ or "OMP_WAIT_POLICY" in os.environ or sys.modules.get(
            "numba.np.ufunc.omppool") is not None:
        return False
    os.environ["GOMP_SPINCOUNT"] = OMP_SPIN_COUNT
    _omp_spin_set = True
    return True


def _forget_omp_spin():
    """Take carom's GOMP_SPINCOUNT out of the environment once libgomp has read it (``default_omp_spin``)."""
    global _omp_spin_set
    if _omp_spin_set:
        _omp_spin_set = False
        if os.environ.get("GOMP_SPINCOUNT") == OMP_SPIN_COUNT:
            del os.environ["GOMP_SPINCOUNT"]


#: the threading layer, and the most threads it is sure to run at once (0: any number; 1: none beside the
#: caller), found once: the layer is chosen when Numba starts its threads, and OpenMP reads its variables
#: when it starts (reading them on every step cost 2.5 µs)
_layer = None
_layer_limit = 0
#: Numba's own reader of the calling thread's thread count, once its threads run (``_thread_count_reader``)
_read_thread_count = None


def _thread_count_reader():
    """Numba's internal reader of the calling thread's thread count (the value ``numba.get_num_threads``
    returns), once Numba's threads are started; None if this Numba has no such reader. ``numba.get_num_threads``
    first takes two locks to check that the threads are started, one of them a multiprocessing lock: after a
    step, with the caches cold, that cost about 17 µs of the 45 µs of Python around the compiled call of the
    5,000-circle pile, where the reader alone costs well under 1 µs. The thread count is still read on every
    step (``numba.set_num_threads`` may change it)."""
    try:
        from numba.np.ufunc import parallel
    except ImportError:
        return None
    reader = getattr(parallel, "_get_num_threads", None)
    return reader if callable(reader) and getattr(parallel, "_is_initialized", False) else None


#: the step runs with exactly the threads set, not the governor's choice (``ThreadGovernor``): set by
#: ``carom.set_num_threads(n, adaptive=False)`` or, at the first step, by the environment variable
#: ``CAROM_THREADS`` (``environment_threads``)
threads_held = False
#: the thread count was chosen in this process (set_num_threads or CAROM_THREADS): CAROM_THREADS is read once
_threads_chosen = False


def hold_threads(n, adaptive):
    """``carom.set_num_threads``: ``n`` threads from now on (checked by the caller), held unless ``adaptive``."""
    global threads_held, _threads_chosen
    numba.set_num_threads(n)
    threads_held = not adaptive
    _threads_chosen = True


def environment_threads():
    """Apply ``CAROM_THREADS=n`` (n threads, held: the governor does not choose) unless the program chose with
    ``carom.set_num_threads`` first; called at the first step. A value that is not a thread count from 1 to
    Numba's maximum raises a CaromError naming it."""
    global _threads_chosen
    if _threads_chosen:
        return
    _threads_chosen = True
    value = os.environ.get("CAROM_THREADS", "").strip()
    if not value:
        return
    top = numba.config.NUMBA_NUM_THREADS
    if not value.isdigit() or not 1 <= int(value) <= top:
        from .errors import CaromError
        raise CaromError(f"CAROM_THREADS must be an integer from 1 to {top} (this machine), got {value!r}")
    hold_threads(int(value), adaptive=False)


def step_threads():
    """The thread count a step runs with: ``numba.get_num_threads()``, or 1 where the threading layer might
    run two items of a parallel loop in one thread (TBB, chosen by the user, or OpenMP allowed to give fewer
    threads than asked: OMP_DYNAMIC, or OMP_THREAD_LIMIT below the count). Results do not depend on it."""
    global _layer, _layer_limit, _read_thread_count
    n = _read_thread_count() if _read_thread_count is not None else 0
    if n <= 0:
        environment_threads()
        n = numba.get_num_threads()       # (this also starts Numba's threads, so the layer is known below)
        _read_thread_count = _thread_count_reader()
        _forget_omp_spin()
    if n == 1:
        return 1
    if _layer is None:
        _layer = numba.threading_layer()
        _layer_limit = 0
        if _layer not in CONCURRENT_LAYERS:
            _layer_limit = 1
        elif _layer == "omp":
            dynamic = os.environ.get("OMP_DYNAMIC", "").strip().lower() in ("1", "true", "yes", "on")
            limit = os.environ.get("OMP_THREAD_LIMIT", "").strip()
            if dynamic:
                _layer_limit = 1
            elif limit.isdigit():
                _layer_limit = max(int(limit), 1)
    if 0 < _layer_limit < n:
        return 1
    return n


allocator_tuned = False


def tune_allocator() -> bool:
    """Ask glibc's malloc to keep the step's arrays in the heap (returns whether it did).

    Every step allocates its contact table and solver rows and frees last step's. With glibc's defaults,
    blocks of a few MB are mapped fresh from the kernel and unmapped when freed, so each step touches
    thousands of new pages. Page faults of one process are serialised in the kernel, so they cost the most
    where they happen in parallel: the narrow phase and the solver rows did not get faster with 2 threads
    (many_pyramids: 6.4 ms per step with 2 threads, 4.1 ms with these settings, 6.9 ms with 1 thread). The
    price is that up to TRIM_THRESHOLD of freed memory stays with the process. Linux with glibc only; set
    the environment variable CAROM_MALLOPT=0 to leave malloc as it is.
    """
    global allocator_tuned
    if allocator_tuned or os.environ.get("CAROM_MALLOPT", "1") == "0" or not sys.platform.startswith("linux"):
        return allocator_tuned
    try:
        import ctypes
        libc = ctypes.CDLL("libc.so.6")
        ok = libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
        ok = libc.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1 and ok
    except (OSError, AttributeError):
        return False
    allocator_tuned = ok
    return ok


_rate = None


def cycles_per_second() -> float:
    """The rate of :func:`cycle_counter`, measured once per process against ``time.perf_counter`` over 20 ms
    (0.0 where the platform has no usable counter: then only whole-step times can be given)."""
    global _rate
    if _rate is None:
        read_cycle_counter()
        t0 = time.perf_counter()
        c0 = read_cycle_counter()
        while time.perf_counter() - t0 < 0.02:
            pass
        c1 = read_cycle_counter()
        t1 = time.perf_counter()
        _rate = max(0.0, (c1 - c0) / (t1 - t0))
    return _rate


class ThreadGovernor:
    """Which thread count a world's steps run with: the threads available (``step_threads``) or one, whichever
    the steps themselves time as faster; or always the threads available while they are held
    (``carom.set_num_threads(n, adaptive=False)`` or ``CAROM_THREADS``: ``threads_held``).

    Why: threads help only while every one of them runs. When another process keeps a core busy, the solver's
    threads meet at dozens of barriers a step and wait there for the one the scheduler has parked; even with
    barriers that sleep instead of spinning (``wait_for_change``), large_pyramid took 1.47 × its one-thread
    time with two threads beside a busy core. The results do not depend on the thread count (bitwise), so the
    count can change from one step to the next.

    How: the governor runs in one mode (the threads, or one thread) and keeps the time of its last
    ``KEEP`` steps (the step's own cycle count, read inside the compiled call). Every ``interval`` steps it
    runs one step in the other mode (a probe). A probe that took less than ``SWITCH`` × the median of the kept
    steps (``SWITCH_BACK`` × when the probe is of the threads) is a vote for the other mode; the mode changes
    only after ``CONFIRM`` such votes in a row, the probes then coming every ``CONFIRM_GAP`` steps, and each vote
    is judged against the kept steps around it. One
    probe that happens to fall on a cheap step (a scene whose step time wanders: the tumbler's boxes settle
    and tumble in turns) or on a moment when the other thread was descheduled does not move the mode (with one
    probe deciding, the tumbler ran up to 720 of its 749 steps in one thread on a quiet machine). A probe
    that does not vote for the switch ends the vote. The interval starts at ``FIRST_PROBE`` steps and doubles,
    up to ``MAX_INTERVAL``, each time a probe confirms the mode, so on a steady machine probes become rare (at
    most 1 step in 256 runs in the slower mode), and it starts again from ``FIRST_PROBE`` after a switch. Steps
    shorter than ``MIN_CYCLES`` are too short to time against the noise: there it keeps the threads (a small
    step runs in one thread anyway: ``_solver.PARALLEL_MIN_ITEMS``). ``one_thread_steps`` counts the steps it
    ran in one thread while more were available (for benchmarks).

    Why back to the threads at a smaller margin: held in one thread by an early stretch where it was faster, the
    tumbler then ran 716 of its 749 steps in one thread while the threads were 6 % faster (0.94 × one thread's
    time, inside a common margin of 0.9): 1.06 × the held threads' time. One thread is taken only when clearly
    faster (the other core busy: 1.5-2 × with the threads); the threads come back as soon as they are faster
    beyond the noise."""
    KEEP = 5
    SWITCH = 0.9
    SWITCH_BACK = 0.97
    CONFIRM = 3
    CONFIRM_GAP = 2
    FIRST_PROBE = 8
    MAX_INTERVAL = 256
    MIN_CYCLES = 200_000

    def __init__(self):
        self.single = False          # the mode: one thread instead of the threads available
        self.probing = False         # the step under way is a probe (the other mode)
        self.kept = []               # cycles of the mode's last KEEP steps
        self.votes = 0               # probes in a row that found the other mode faster
        self.interval = self.FIRST_PROBE
        self.until_probe = self.FIRST_PROBE
        self.one_thread_steps = 0

    def threads(self, available):
        """The thread count of the next step, given the threads ``available``; call :meth:`record` after it."""
        if available <= 1 or threads_held:
            self.probing = False
            return available if available > 1 else 1
        self.probing = self.until_probe <= 0 and len(self.kept) >= self.KEEP
        one = self.single != self.probing
        self.one_thread_steps += one
        return 1 if one else available

    def record(self, cycles):
        """The step just run took ``cycles`` (0 where the processor has no cycle counter: nothing learnt)."""
        if cycles <= 0:
            self.probing = False
            return
        if self.probing:
            self.probing = False
            kept = sorted(self.kept)
            if cycles < (self.SWITCH_BACK if self.single else self.SWITCH) * kept[len(kept) // 2]:
                self.votes += 1
                if self.votes >= self.CONFIRM:
                    self.single = not self.single
                    self.kept = [cycles]
                    self.votes = 0
                    self.interval = self.FIRST_PROBE
                    self.until_probe = self.interval
                else:
                    self.until_probe = self.CONFIRM_GAP
                return
            self.votes = 0
            self.interval = min(2 * self.interval, self.MAX_INTERVAL)
            self.until_probe = self.interval
            return
        if cycles < self.MIN_CYCLES and not self.single:
            self.kept = []
            self.votes = 0
            return
        self.kept.append(cycles)
        if len(self.kept) > self.KEEP:
            del self.kept[0]
        self.until_probe -= 1
