"""The pre-solve hook: a user function compiled with Numba that the step calls, from inside its one compiled
call, for every contact it is about to solve, and that may disable the contact or change its friction,
restitution and tangent speed for this step (``World.pre_solve``).

How the step calls it. The hook is a C callback (``numba.cfunc``) of one fixed signature,
:data:`PRE_SOLVE_SIGNATURE`; the step receives its address as an integer (0 for none) and calls it through a
function pointer (:func:`call_pre_solve`, a few lines of LLVM IR). The step is therefore compiled once, for
every hook and for none, and stays in Numba's on-disk cache. The alternatives were weighed:

- a first-class function argument (``numba.types.FunctionType``: a cfunc passed to a compiled function) also
  compiles once per signature and is cached, but it has no "none" (the step would need a dummy cfunc, compiled
  at import), a pointer argument cannot be made from an array inside the step without an intrinsic anyway, and
  it adds a function type to the step's signature;
- a Numba dispatcher (``@njit`` function) as an argument is typed by its identity: the step would be compiled
  again for every user function, and not found in the cache by the next process.

The address is data, not type: with no hook the step only checks it against 0 (``_step.pre_solve_stage``).

The signature (every argument a C scalar or a pointer to doubles)::

    keep = hook(shape_a, shape_b, body_a, body_b, normal_x, normal_y, point_count, points, material)

``shape_a < shape_b`` are shape rows (``ShapeHandle.index``) and ``body_a``, ``body_b`` their bodies' rows
(``Body.index``); the normal points from shape_a to shape_b (world frame); ``points[0:3]`` and, when
``point_count`` is 2, ``points[3:6]`` are (x, y, separation) of each manifold point (world frame, metres; a
positive separation is a speculative point, not yet touching). ``material[0:3]`` holds the contact's friction,
restitution and tangent speed as the shapes and the world's mixing rules give them; the hook may overwrite
them for this step. The hook returns 0 to disable the contact for this step (it is dropped as a one-way shape
drops one: no points, not touching, no impulse), anything else to keep it.
"""
from typing import TYPE_CHECKING
if TYPE_CHECKING:  # (annotations only)
    from typing import Tuple
    from .._types import Any, ArrayLike, Bits, Optional, Points, TransformLike, Vec2
import ctypes

import numba
from numba import types

from ..errors import CaromError

#: the C signature of a pre-solve hook (module docstring)
PRE_SOLVE_SIGNATURE = types.int64(types.int64, types.int64, types.int64, types.int64, types.float64,
                                  types.float64, types.int64, types.CPointer(types.float64),
                                  types.CPointer(types.float64))

#: the hook's ``material`` fields
FRICTION, RESTITUTION, TANGENT_SPEED = 0, 1, 2


def pre_solve_function(fn: "Any") -> "Any":
    """Compile ``fn`` into a pre-solve hook (``numba.cfunc(PRE_SOLVE_SIGNATURE)(fn)``), for
    ``World.pre_solve``. Usable as a decorator; ``fn`` must compile in Numba's nopython mode."""
    if isinstance(fn, numba.core.registry.CPUDispatcher):
        fn = fn.py_func
    try:
        return numba.cfunc(PRE_SOLVE_SIGNATURE)(fn)
    except Exception as exc:
        raise CaromError(f"pre_solve function {fn!r} does not compile with the signature "
                         f"{PRE_SOLVE_SIGNATURE}: {type(exc).__name__}: {str(exc).splitlines()[0]}") from exc


def as_hook(fn):
    """(the C callback, its address) for a value given to ``World.pre_solve``: None → (None, 0); a cfunc of
    :data:`PRE_SOLVE_SIGNATURE` as it is; an ``@njit`` function compiled into one (:func:`pre_solve_function`).
    Anything else raises CaromError naming it."""
    if fn is None:
        return None, 0
    if isinstance(fn, numba.core.ccallback.CFunc):
        sig = fn._sig
        if sig.return_type != PRE_SOLVE_SIGNATURE.return_type or tuple(sig.args) != tuple(PRE_SOLVE_SIGNATURE.args):
            raise CaromError(f"pre_solve must be compiled with the signature {PRE_SOLVE_SIGNATURE} "
                             f"(carom.PRE_SOLVE_SIGNATURE), got a cfunc of {sig}")
        return fn, int(fn.address)
    if isinstance(fn, numba.core.registry.CPUDispatcher):
        hook = pre_solve_function(fn)
        return hook, int(hook.address)
    raise CaromError("pre_solve must be None, a numba.cfunc of carom.PRE_SOLVE_SIGNATURE (carom.pre_solve_function) "
                     f"or a numba.njit function, got {fn!r}")


if numba.config.DISABLE_JIT:
    _C_HOOK = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                               ctypes.c_double, ctypes.c_double, ctypes.c_int64, ctypes.POINTER(ctypes.c_double),
                               ctypes.POINTER(ctypes.c_double))

    def call_pre_solve(address, sa, sb, ba, bb, nx, ny, count, points, material):
        """Plain-Python stand-in: the hook called through ctypes on the arrays' memory."""
        dp = ctypes.POINTER(ctypes.c_double)
        return _C_HOOK(int(address))(int(sa), int(sb), int(ba), int(bb), float(nx), float(ny), int(count),
                                     points.ctypes.data_as(dp), material.ctypes.data_as(dp))
else:
    from llvmlite import ir as _ir

    @numba.extending.intrinsic
    def call_pre_solve(typingctx, address, sa, sb, ba, bb, nx, ny, count, points, material):
        """``hook(sa, sb, ba, bb, nx, ny, count, &points[0], &material[0])`` for the hook at ``address`` (an
        int64; the arguments int64 and float64 scalars and two contiguous float64 arrays), returning its int64."""
        sig = types.int64(address, sa, sb, ba, bb, nx, ny, count, points, material)

        def codegen(context, builder, signature, args):
            i64 = _ir.IntType(64)
            f64 = _ir.DoubleType()
            fnty = _ir.FunctionType(i64, [i64, i64, i64, i64, f64, f64, i64, f64.as_pointer(), f64.as_pointer()])
            fn = builder.inttoptr(args[0], fnty.as_pointer())
            pts = context.make_array(signature.args[8])(context, builder, args[8]).data
            mat = context.make_array(signature.args[9])(context, builder, args[9]).data
            return builder.call(fn, list(args[1:8]) + [pts, mat])
        return sig, codegen
