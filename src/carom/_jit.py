"""The one place kernels are compiled from: ``njit`` is ``numba.njit(cache=True)`` with no fastmath.

fastmath is off on purpose: it lets LLVM drop NaN checks and reassociate sums, which breaks both the
validation of bad input and bitwise determinism. Compiled kernels are cached on disk next to the sources,
so the (slow) cold compile happens once per machine; :func:`announce_compile` says so on the console.
"""
import os
import sys
import glob

import numba

njit = numba.njit(cache=True)
#: inlined into the caller at Numba's IR level (no call, so no array reference counts per call); used only for
#: the per-contact solver functions, called in a plain loop once per chunk (inlining into a parallel loop's
#: body costs much more compile time)
inline_njit = numba.njit(cache=True, inline="always")
#: the same with Numba's parallel loops (``numba.prange``); the thread count is ``carom.set_num_threads``
pnjit = numba.njit(cache=True, parallel=True)

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_announced = False


def kernels_cached() -> bool:
    """True when Numba's on-disk cache already holds compiled carom kernels."""
    return bool(glob.glob(os.path.join(_PACKAGE_DIR, "**", "__pycache__", "*.nbi"), recursive=True))


def announce_compile() -> None:
    """Print a one-time note before the first compile on a machine (compiling takes tens of seconds)."""
    global _announced
    if _announced or os.environ.get("NUMBA_DISABLE_JIT") == "1":
        return
    _announced = True
    if not kernels_cached():
        print("carom: compiling kernels… (once per machine; later runs load them from the cache)",
              file=sys.stderr, flush=True)
