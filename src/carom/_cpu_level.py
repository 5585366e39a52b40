"""The processor level carom's kernels are compiled for, and where their compiled code is found: what lets an
installed wheel carry its kernels so that a first run compiles nothing.

Numba keys each entry of its on-disk cache by the target's CPU name and feature string (besides the
signature and a hash of the source file's contents). Left alone, they are the host's own (``znver4`` and
its 60-odd features), so a cache built on one machine misses on every other. carom instead compiles for a
named level, the same on every machine of that level, and a wheel ships the cache of each level:

=============  =========================  ===========================================================
level          LLVM CPU (features)        runs on
=============  =========================  ===========================================================
``x86-64-v4``  ``x86-64-v4`` (implied)    x86-64-v3 with AVX-512 F, BW, CD, DQ, VL (Zen 4, Xeon since
                                          Skylake-SP): the solver's vectors hold 16 contacts
``x86-64-v3``  ``x86-64-v3`` (implied)    x86-64 with AVX2, FMA, BMI1/2, F16C, MOVBE, LZCNT (2013 on)
``x86-64``     ``x86-64`` (implied)       every x86-64 (SSE2): the baseline
=============  =========================  ===========================================================

At import, before anything is compiled, :func:`choose` picks the best level the running processor
supports (of those the wheel ships, when it ships some: :func:`best_level`) and sets ``numba.config.CPU_NAME`` and ``CPU_FEATURES`` to it. Where no shipped level fits (another
architecture) Numba keeps the host's CPU, and the first run compiles, as it says
(:func:`carom._jit.announce_compile`).

This setting is process-wide: other Numba code compiled in the same process after ``import carom`` is
compiled for the same level (portable code for the level, without the host's own extensions beyond it), and
its cache entries are keyed by it. Choose with the environment variable ``CAROM_CPU_LEVEL``:

- ``auto`` (the default): the best shipped level this processor supports;
- ``x86-64-v4``, ``x86-64-v3`` or ``x86-64``: that level (refused, with a message, if the processor lacks it);
- ``host``: Numba's default, the host's own CPU and features (what carom did before shipping kernels; every
  first run on a new machine compiles).

Setting ``NUMBA_CPU_NAME`` yourself also leaves Numba's setting alone. So does importing carom after Numba has
already compiled something in the process (its code generator is then set up and keeps the host's CPU: a
level set afterwards would key the cache with a CPU the code was not compiled for).

The second half of shipping kernels is finding them (:class:`ShippedCacheLocator`): Numba looks for a cache
next to the sources only where it may write (``__pycache__`` of an installed package in a read-only
site-packages is skipped, and everything compiled again); carom's locator then copies the shipped entries
of a source file, once, into a user cache folder and uses that.
"""
import hashlib
import os
import shutil
import sys

import numba
import numba.core.caching as _caching

from ._linked_stamp import LinkedSourcesLocator
from .errors import CaromError

#: the shipped levels, best first: (level, LLVM CPU name, host features the level requires)
_V3 = ("avx", "avx2", "fma", "bmi", "bmi2", "f16c", "movbe", "lzcnt")
LEVELS = (
    ("x86-64-v4", "x86-64-v4", _V3 + ("avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl")),
    ("x86-64-v3", "x86-64-v3", _V3),
    ("x86-64", "x86-64", ("sse2",)),
)
#: the levels with 512-bit vectors (the contact solver then works on 16 contacts at once: ``carom._simd``)
WIDE_LEVELS = ("x86-64-v4",)
LEVEL_NAMES = tuple(level for level, _, _ in LEVELS)
#: the environment variable that chooses the level
ENV = "CAROM_CPU_LEVEL"
#: the file of a wheel's package that lists its kernels' levels and the Numba and Python they were built with
MANIFEST = "_kernels.json"
_X86 = ("x86_64", "amd64")

#: the level chosen at import ("host" when Numba's own CPU is kept), and why, for ``carom.cpu_level()``
level = "host"
reason = "not chosen yet"


def _host_features():
    try:
        import llvmlite.binding as llvm
        return {k for k, v in llvm.get_host_cpu_features().items() if v}
    except Exception:       # (llvmlite without the call: no shipped level is assumed to fit)
        return set()


def _codegen_started():
    """Whether Numba's CPU code generator already exists in this process (its target machine, made with the
    CPU settings of that moment, is kept)."""
    try:
        from numba.core.registry import cpu_target
    except ImportError:
        return False
    return "_toplevel_target_context" in vars(cpu_target) or "target_context" in vars(cpu_target)


def supported(features, machine=None):
    """The shipped levels a processor with these LLVM feature names supports, best first."""
    import platform
    machine = (machine or platform.machine()).lower()
    if machine not in _X86:
        return []
    return [name for name, _, needs in LEVELS if all(f in features for f in needs if f != "sse2")]


def choose():
    """Set Numba's CPU name and features to the best shipped level (or the one ``CAROM_CPU_LEVEL`` names);
    returns the level, or "host" when Numba's own setting is kept (see the module doc)."""
    global level, reason
    wanted = os.environ.get(ENV, "auto").strip() or "auto"
    if wanted not in ("auto", "host") + LEVEL_NAMES:
        raise CaromError(f"{ENV} must be auto, host or one of {', '.join(LEVEL_NAMES)}, got {wanted!r}")
    if wanted == "host":
        level, reason = "host", f"{ENV}=host"
        return level
    if numba.config.CPU_NAME or numba.config.CPU_FEATURES:
        level, reason = "host", "NUMBA_CPU_NAME or NUMBA_CPU_FEATURES is set"
        return level
    if _codegen_started():
        level, reason = "host", "Numba compiled code in this process before carom was imported"
        return level
    fits = supported(_host_features())
    if wanted != "auto":
        if wanted not in fits:
            raise CaromError(f"{ENV}={wanted}: this processor does not support that level "
                             f"(supported: {', '.join(fits) or 'none'})")
        fits = [wanted]
    if not fits:
        level, reason = "host", "no shipped level fits this processor"
        return level
    level = best_level(fits, shipped_levels()) if wanted == "auto" else fits[0]
    numba.config.CPU_NAME = dict((n, cpu) for n, cpu, _ in LEVELS)[level]
    numba.config.CPU_FEATURES = ""      # the level's own features (those its CPU name implies)
    reason = "chosen by CAROM_CPU_LEVEL" if wanted != "auto" else "the best shipped level this processor supports"
    return level


def best_level(fits, shipped):
    """The level to compile for, of those the processor runs (``fits``, best first): the best one whose kernels
    this copy ships (``shipped``), else the best one (a source checkout ships none). A wheel built on a machine
    without AVX-512 ships no ``x86-64-v4`` kernels (``tools/kernel_wheel.py``): on a processor with it, its
    ``x86-64-v3`` kernels load, where choosing ``x86-64-v4`` would compile everything on the first run."""
    for name in fits:
        if name in shipped:
            return name
    return fits[0]


def shipped_levels():
    """The levels whose kernels this copy of carom ships (``_kernels.json``, written by the wheel build; none
    in a source checkout)."""
    import json
    try:
        with open(os.path.join(PACKAGE_DIR, MANIFEST)) as f:
            return list(json.load(f)["levels"])
    except (OSError, ValueError, KeyError, TypeError):
        return []


# --- finding the shipped cache --------------------------------------------------------------------------------

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_seeded: set = set()
_writable_folders: dict = {}


def user_cache_root():
    """Where carom keeps kernels when its package folder is read-only: ``$XDG_CACHE_HOME/carom`` (or
    ``~/.cache/carom``), one folder per installed copy of carom (a hash of its path)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    tag = hashlib.sha1(PACKAGE_DIR.encode()).hexdigest()[:16]
    return os.path.join(base, "carom", f"{sys.version_info[0]}.{sys.version_info[1]}-{tag}")


def _writable(folder):
    """Whether this process can create files in ``folder`` (made if missing); asked once per folder."""
    if folder not in _writable_folders:
        _writable_folders[folder] = _try_write(folder)
    return _writable_folders[folder]


def _try_write(folder):
    try:
        os.makedirs(folder, exist_ok=True)
        probe = os.path.join(folder, f".carom-probe-{os.getpid()}")
        with open(probe, "wb"):
            pass
        os.unlink(probe)
        return True
    except OSError:
        return False


class ShippedCacheLocator(LinkedSourcesLocator, _caching._SourceFileBackedLocatorMixin, _caching._CacheLocator):
    """Numba cache locator for carom's own source files in a package folder this process may not write to.

    Numba's in-tree locator, tried next, serves a writable ``__pycache__`` (a source checkout, a wheel
    installed by the user who runs it). Where it would be skipped, this one takes the source file's
    ``__pycache__`` entries shipped in the wheel, copies them once into :func:`user_cache_root` (the same
    relative folder), and keeps the cache there: the shipped kernels load, and anything compiled later is
    saved there. Stamps are content hashes (Numba 0.68), so copies stay valid. ``NUMBA_CACHE_DIR`` set by
    the user takes precedence (Numba's own locator for it comes first)."""

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        rel = os.path.relpath(os.path.dirname(os.path.abspath(py_file)), PACKAGE_DIR)
        self._cache_path = os.path.normpath(os.path.join(user_cache_root(), rel, "__pycache__"))
        self._shipped = os.path.join(os.path.dirname(os.path.abspath(py_file)), "__pycache__")

    def get_cache_path(self):
        return self._cache_path

    def ensure_cache_path(self):
        super().ensure_cache_path()
        self._seed()

    def _seed(self):
        """Copy the shipped index and data files of this source file (named after its module) that the user
        folder does not have yet."""
        if self._py_file in _seeded:
            return
        _seeded.add(self._py_file)
        stem = os.path.splitext(os.path.basename(self._py_file))[0] + "."
        try:
            names = os.listdir(self._shipped)
        except OSError:
            return
        for name in names:
            if name.startswith(stem) and name.endswith((".nbi", ".nbc")):
                target = os.path.join(self._cache_path, name)
                if not os.path.exists(target):
                    try:
                        shutil.copyfile(os.path.join(self._shipped, name), target)
                    except OSError:
                        pass

    @classmethod
    def from_function(cls, py_func, py_file):
        if numba.config.CACHE_DIR:
            return None
        src = os.path.abspath(py_file)
        if not src.startswith(PACKAGE_DIR + os.sep) or not os.path.exists(src):
            return None
        if _writable(os.path.join(os.path.dirname(src), "__pycache__")):
            return None         # Numba's in-tree locator serves it
        return super().from_function(py_func, py_file)


class LinkedUserProvidedLocator(LinkedSourcesLocator, _caching.UserProvidedCacheLocator):
    """Numba's locator for ``NUMBA_CACHE_DIR``, for carom's own files, stamped with what they link in
    (:mod:`carom._linked_stamp`)."""


class LinkedInTreeLocator(LinkedSourcesLocator, _caching.InTreeCacheLocator):
    """Numba's in-tree locator (a writable ``__pycache__``), for carom's own files, stamped with what they link in
    (:mod:`carom._linked_stamp`)."""


def install_locator():
    """Put carom's locators before Numba's own (once): for carom's files, each stamped with what it links in
    (:mod:`carom._linked_stamp`), ``NUMBA_CACHE_DIR`` first, then :class:`ShippedCacheLocator`, then the
    in-tree ``__pycache__``."""
    classes = _caching.CacheImpl._locator_classes
    if ShippedCacheLocator not in classes:
        classes[0:0] = [LinkedUserProvidedLocator, ShippedCacheLocator, LinkedInTreeLocator]
