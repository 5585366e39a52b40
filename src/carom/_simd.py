"""Short vectors of doubles in compiled code: the contact solver works on ``LANES`` contacts at once.

Why: the scalar contact solve is bound by instruction throughput (about 50 ns per two-point contact per
sweep, the same in cache as out of it), and Numba does not vectorize straight-line code. Box2D v3 gets its
speed the same way: contacts of one graph colour touch disjoint bodies, so ``LANES`` of them are solved
side by side, one contact per vector lane, with the bodies' velocities gathered into vectors before and
scattered back after.

What: a vector type ``f64x{LANES}`` (LLVM ``<LANES x double>``) and a mask type (``<LANES x i1>``) with
``+ − × ÷``, unary minus and comparisons, plus :func:`splat`, :func:`load`/:func:`store` (one field of a
bundle: ``a[j, f, 0:LANES]`` of a C-contiguous 3-D float64 array), :func:`lane`/:func:`insert` (one lane),
:func:`select`, :func:`vmax`, :func:`vmin`. Each operation is the IEEE operation of every lane, in the
same order as the scalar code it replaces, with no fused multiply-add and no fastmath: a lane gives bitwise
what the scalar code gives, so results stay deterministic and independent of the thread count.

``vmax(a, b)`` is ``a if a > b else b`` per lane and ``vmin(a, b)`` is ``a if a < b else b`` (so a NaN in
``a`` yields ``b``).

Under ``NUMBA_DISABLE_JIT=1`` the same names work on NumPy arrays of ``LANES`` doubles, so kernels written
with them still run (slowly) as plain Python.
"""
import operator
import os

import numpy as np
import numba

from ._jit import njit


def _lanes_for_host():
    """8 where the processor has 512-bit vectors (AVX-512: 32 registers of 8 doubles, so the solver's two
    dozen live vectors fit), else 4 (a 256-bit AVX register; with 16 of them, 8 lanes would spill). Numba
    caches compiled code per processor, so each machine keeps the width it compiled with. As plain Python
    (NUMBA_DISABLE_JIT=1) the environment variable CAROM_LANES may set it, to test that results do not
    depend on how contacts are grouped into lanes."""
    if numba.config.DISABLE_JIT and os.environ.get("CAROM_LANES"):
        return int(os.environ["CAROM_LANES"])
    if numba.config.CPU_NAME or numba.config.CPU_FEATURES:
        return 4
    try:
        import llvmlite.binding as llvm
        return 8 if llvm.get_host_cpu_features().get("avx512f", False) else 4
    except Exception:
        return 4


#: contacts solved side by side (one per vector lane)
LANES = _lanes_for_host()
#: doubles per row of the arrays :func:`gather_rows` reads (a row is one 64-byte cache line)
ROW = 8

if numba.config.DISABLE_JIT:
    def splat(x):
        """A vector with ``x`` in every lane."""
        return np.full(LANES, float(x))

    def load(a, j, f):
        """Lanes ``a[j, f, 0:LANES]``."""
        return a[j, f].copy()

    def store(a, j, f, v):
        """``a[j, f, 0:LANES] = v``."""
        a[j, f] = v

    def lane(v, k):
        """Lane ``k`` of ``v`` as a float."""
        return float(v[k])

    def insert(v, k, x):
        """``v`` with lane ``k`` replaced by ``x``."""
        w = v.copy()
        w[k] = x
        return w

    def gather_rows(state, body, j, side):
        """The ``ROW`` columns of ``state[body[j, side, q]]`` for the lanes q, as ``ROW`` vectors."""
        block = state[body[j, side]]
        return tuple(block[:, c].copy() for c in range(ROW))

    def select(mask, a, b):
        """Per lane: ``a`` where ``mask``, else ``b``."""
        return np.where(mask, a, b)

    def vmax(a, b):
        """Per lane: ``a if a > b else b``."""
        return np.where(a > b, a, b)

    def vmin(a, b):
        """Per lane: ``a if a < b else b``."""
        return np.where(a < b, a, b)

else:
    from llvmlite import ir
    from numba.core import types, cgutils
    from numba.extending import intrinsic, overload, register_model, models

    class VectorF64(types.Type):
        """``LANES`` doubles in one LLVM vector register."""

        def __init__(self, count):
            self.count = count
            super().__init__(name=f"f64x{count}")

    class VectorMask(types.Type):
        """The per-lane result of a comparison of two ``VectorF64``."""

        def __init__(self, count):
            self.count = count
            super().__init__(name=f"b1x{count}")

    @register_model(VectorF64)
    class _VectorF64Model(models.PrimitiveModel):
        def __init__(self, dmm, fe_type):
            super().__init__(dmm, fe_type, ir.VectorType(ir.DoubleType(), fe_type.count))

    @register_model(VectorMask)
    class _VectorMaskModel(models.PrimitiveModel):
        def __init__(self, dmm, fe_type):
            super().__init__(dmm, fe_type, ir.VectorType(ir.IntType(1), fe_type.count))

    f64v = VectorF64(LANES)
    maskv = VectorMask(LANES)
    _SCALAR = (types.Float, types.Integer, types.Boolean)

    def _lane_index(k):
        return ir.Constant(ir.IntType(32), k)

    def _splat_value(context, builder, value, ty):
        x = context.cast(builder, value, ty, types.float64)
        vec = ir.Constant(ir.VectorType(ir.DoubleType(), LANES), None)
        for k in range(LANES):
            vec = builder.insert_element(vec, x, _lane_index(k))
        return vec

    @intrinsic
    def splat(typingctx, x):
        if not isinstance(x, _SCALAR):
            return None

        def codegen(context, builder, sig, args):
            return _splat_value(context, builder, args[0], sig.args[0])
        return f64v(x), codegen

    def _field_pointer(context, builder, aty, arr, j, jty, f, fty):
        """Address of ``a[j, f, 0]`` for a bundle array, whose last extent is LANES by construction: the
        offset (j · fields + f) · LANES then needs one multiplication per bundle, and a constant field
        becomes an address displacement (the generic indexing multiplies by the runtime last extent at every
        field)."""
        ary = context.make_array(aty)(context, builder, arr)
        shape = cgutils.unpack_tuple(builder, ary.shape)
        jj = context.cast(builder, j, jty, types.intp)
        ff = context.cast(builder, f, fty, types.intp)
        row = builder.add(builder.mul(jj, shape[1]), ff)
        off = builder.mul(row, ir.Constant(row.type, LANES))
        ptr = builder.gep(ary.data, [off])
        return builder.bitcast(ptr, ir.PointerType(ir.VectorType(ir.DoubleType(), LANES)))

    def _bundle_array(a):
        return isinstance(a, types.Array) and a.ndim == 3 and a.dtype == types.float64 and a.layout == "C"

    @intrinsic
    def load(typingctx, a, j, f):
        if not (_bundle_array(a) and isinstance(j, types.Integer) and isinstance(f, types.Integer)):
            return None

        def codegen(context, builder, sig, args):
            ptr = _field_pointer(context, builder, sig.args[0], args[0], args[1], sig.args[1], args[2],
                                 sig.args[2])
            return builder.load(ptr, align=8)
        return f64v(a, j, f), codegen

    @intrinsic
    def store(typingctx, a, j, f, v):
        if not (_bundle_array(a) and isinstance(j, types.Integer) and isinstance(f, types.Integer)
                and isinstance(v, VectorF64)):
            return None

        def codegen(context, builder, sig, args):
            ptr = _field_pointer(context, builder, sig.args[0], args[0], args[1], sig.args[1], args[2],
                                 sig.args[2])
            builder.store(args[3], ptr, align=8)
            return context.get_dummy_value()
        return types.none(a, j, f, v), codegen

    @intrinsic
    def lane(typingctx, v, k):
        if not (isinstance(v, VectorF64) and isinstance(k, types.Integer)):
            return None

        def codegen(context, builder, sig, args):
            return builder.extract_element(args[0], context.cast(builder, args[1], sig.args[1], types.int32))
        return types.float64(v, k), codegen

    @intrinsic
    def insert(typingctx, v, k, x):
        if not (isinstance(v, VectorF64) and isinstance(k, types.Integer) and isinstance(x, _SCALAR)):
            return None

        def codegen(context, builder, sig, args):
            val = context.cast(builder, args[2], sig.args[2], types.float64)
            return builder.insert_element(args[0], val, context.cast(builder, args[1], sig.args[1], types.int32))
        return f64v(v, k, x), codegen

    def _index_vector(indices):
        return ir.Constant(ir.VectorType(ir.IntType(32), len(indices)), indices)

    def _transpose(builder, vecs):
        """Transpose a LANES × LANES block held as LANES row vectors into column vectors, by swapping the
        off-diagonal h × h blocks for h = LANES/2, …, 1 (each swap is one two-source shuffle per vector:
        log2(LANES) · LANES shuffles, against LANES² element inserts)."""
        n = len(vecs)
        vecs = list(vecs)
        h = n // 2
        while h >= 1:
            lo_mask = [k if (k // h) % 2 == 0 else n + k - h for k in range(n)]
            hi_mask = [k + h if (k // h) % 2 == 0 else n + k for k in range(n)]
            for i in range(n):
                if (i // h) % 2 == 0:
                    a, b = vecs[i], vecs[i + h]
                    vecs[i] = builder.shuffle_vector(a, b, _index_vector(lo_mask))
                    vecs[i + h] = builder.shuffle_vector(a, b, _index_vector(hi_mask))
            h //= 2
        return vecs

    @intrinsic
    def gather_rows(typingctx, state, body, j, side):
        """Rows ``state[body[j, side, q]]`` (ROW doubles each) of the LANES lanes q, as ROW column vectors:
        each row is loaded whole, then the blocks are transposed in registers."""
        if not (isinstance(state, types.Array) and state.ndim == 2 and state.dtype == types.float64
                and state.layout == "C" and isinstance(body, types.Array) and body.ndim == 3
                and isinstance(body.dtype, types.Integer) and isinstance(j, types.Integer)
                and isinstance(side, types.Integer) and LANES & (LANES - 1) == 0 and ROW % LANES == 0):
            return None
        out = types.UniTuple(f64v, ROW)

        def codegen(context, builder, sig, args):
            sty, bty, jty, dty = sig.args
            st = context.make_array(sty)(context, builder, args[0])
            bd = context.make_array(bty)(context, builder, args[1])
            jj = context.cast(builder, args[2], jty, types.intp)
            ss = context.cast(builder, args[3], dty, types.intp)
            zero = ir.Constant(context.get_value_type(types.intp), 0)
            vty = ir.PointerType(ir.VectorType(ir.DoubleType(), LANES))
            pieces = [[] for _ in range(ROW // LANES)]
            for q in range(LANES):
                qq = ir.Constant(context.get_value_type(types.intp), q)
                bptr = cgutils.get_item_pointer2(context, builder, data=bd.data,
                                                 shape=cgutils.unpack_tuple(builder, bd.shape),
                                                 strides=cgutils.unpack_tuple(builder, bd.strides),
                                                 layout=bty.layout, inds=[jj, ss, qq])
                b = context.cast(builder, builder.load(bptr), bty.dtype, types.intp)
                rptr = cgutils.get_item_pointer2(context, builder, data=st.data,
                                                 shape=cgutils.unpack_tuple(builder, st.shape),
                                                 strides=cgutils.unpack_tuple(builder, st.strides),
                                                 layout=sty.layout, inds=[b, zero])
                for h in range(ROW // LANES):
                    ptr = builder.gep(rptr, [ir.Constant(ir.IntType(64), h * LANES)])
                    pieces[h].append(builder.load(builder.bitcast(ptr, vty), align=8))
            cols = []
            for h in range(ROW // LANES):
                cols.extend(_transpose(builder, pieces[h]))
            return context.make_tuple(builder, out, cols)
        return out(state, body, j, side), codegen

    @intrinsic
    def select(typingctx, mask, a, b):
        if not (isinstance(mask, VectorMask) and isinstance(a, VectorF64) and isinstance(b, VectorF64)):
            return None

        def codegen(context, builder, sig, args):
            return builder.select(args[0], args[1], args[2])
        return f64v(mask, a, b), codegen

    def _vector_args(context, builder, sig, args):
        """Both operands as vectors (a scalar operand is splat)."""
        out = []
        for value, ty in zip(args, sig.args):
            out.append(value if isinstance(ty, VectorF64) else _splat_value(context, builder, value, ty))
        return out

    def _typed_pair(a, b):
        """True for (vector, vector), (vector, scalar) and (scalar, vector)."""
        va, vb = isinstance(a, VectorF64), isinstance(b, VectorF64)
        return (va and vb) or (va and isinstance(b, _SCALAR)) or (vb and isinstance(a, _SCALAR))

    def _binary(result, emit):
        """An intrinsic for (vector or scalar) ∘ (vector or scalar) → ``result``: ``emit(builder, x, y)``
        builds the operation on both operands as vectors (a scalar operand is splat)."""
        @intrinsic
        def vop(typingctx, a, b):
            if not _typed_pair(a, b):
                return None

            def codegen(context, builder, sig, args):
                x, y = _vector_args(context, builder, sig, args)
                return emit(builder, x, y)
            return result(a, b), codegen
        return vop

    def _mask_logic(method):
        @intrinsic
        def vlogic(typingctx, a, b):
            if not (isinstance(a, VectorMask) and isinstance(b, VectorMask)):
                return None

            def codegen(context, builder, sig, args):
                return getattr(builder, method)(args[0], args[1])
            return maskv(a, b), codegen
        return vlogic

    _vadd, _vsub, _vmul, _vdiv = (_binary(f64v, lambda builder, x, y, m=m: getattr(builder, m)(x, y))
                                  for m in ("fadd", "fsub", "fmul", "fdiv"))
    _vgt, _vlt, _vge, _vle, _veq, _vne = (_binary(maskv, lambda builder, x, y, o=o: builder.fcmp_ordered(o, x, y))
                                          for o in (">", "<", ">=", "<=", "==", "!="))
    _vand, _vor = _mask_logic("and_"), _mask_logic("or_")

    @intrinsic
    def _vneg(typingctx, a):
        if not isinstance(a, VectorF64):
            return None

        def codegen(context, builder, sig, args):
            return builder.fneg(args[0])
        return f64v(a), codegen

    def _register(op, impl, check):
        @overload(op)
        def _ov(a, b):
            if check(a, b):
                return lambda a, b: impl(a, b)

    for _op, _impl in ((operator.add, _vadd), (operator.sub, _vsub), (operator.mul, _vmul),
                       (operator.truediv, _vdiv), (operator.gt, _vgt), (operator.lt, _vlt),
                       (operator.ge, _vge), (operator.le, _vle), (operator.eq, _veq), (operator.ne, _vne)):
        _register(_op, _impl, _typed_pair)
    for _op, _impl in ((operator.and_, _vand), (operator.or_, _vor)):
        _register(_op, _impl, lambda a, b: isinstance(a, VectorMask) and isinstance(b, VectorMask))

    @overload(operator.neg)
    def _neg(a):
        if isinstance(a, VectorF64):
            return lambda a: _vneg(a)

    @njit
    def vmax(a, b):
        return select(a > b, a, b)

    @njit
    def vmin(a, b):
        return select(a < b, a, b)
