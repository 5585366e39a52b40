"""Short vectors in compiled code: the contact solver works on ``LANES`` contacts at once.

Why: the scalar contact solve is bound by instruction throughput (about 50 ns per two-point contact per
sweep, the same in cache as out of it), and Numba does not vectorize straight-line code. Box2D v3 gets its
speed the same way: contacts of one graph colour touch disjoint bodies, so ``LANES`` of them are solved
side by side, one contact per vector lane, with the bodies' velocities gathered into vectors before and
scattered back after.

Two vector types:

- ``f32x{LANES}`` (LLVM ``<LANES x float>``): the solver's. Single precision, as Box2D's solver, puts twice
  as many contacts in a register as doubles do, and the sweeps are bound by instruction throughput, not by
  latency or memory (the cost per contact is the same for 100 contacts as for 10,000, and solving two
  bundles of doubles at once gained nothing): 8 lanes of floats halved the solve.
- ``f64x{LANES64}`` (``<LANES64 x double>``, LANES64 = LANES / 2, one register as well): for filling the
  solver's rows, which is done in double precision from the world's double-precision state and rounded to
  single only when stored (:func:`store_part`), part by part of a bundle.

Each has a mask type (``<n x i1>``) and ``+ − × ÷``, unary minus and comparisons (a scalar operand is first
converted to the vector's element type), plus :func:`splat` / :func:`splat64`, :func:`load`/:func:`store`
(one field of a bundle: ``a[j, f, 0:n]`` of a C-contiguous 3-D array of the vector's element type),
:func:`store_part` (doubles rounded into lanes h·LANES64 … of a float bundle), :func:`lane`/:func:`insert`
(one lane), :func:`gather_rows` / :func:`gather_rows64` (the bodies' state rows of a bundle's lanes,
transposed into column vectors), :func:`scatter_rows` (the way back), :func:`select`, :func:`vmax`,
:func:`vmin`, :func:`vfloor`. Each operation is the IEEE operation of every lane, in the same order as the scalar
code it replaces, with no fused multiply-add and no fastmath: a lane gives bitwise what scalar code in the same
precision gives, so results stay deterministic and independent of the thread count and of how contacts are
grouped into lanes.

``vmax(a, b)`` is ``a if a > b else b`` per lane and ``vmin(a, b)`` is ``a if a < b else b`` (so a NaN in
``a`` yields ``b``).

Under ``NUMBA_DISABLE_JIT=1`` the same names work on NumPy arrays (float32 and float64: NumPy rounds a
Python float to the array's type before the operation, as the compiled code does), so kernels written with
them still run (slowly) as plain Python.
"""
import operator
import os

import numpy as np
import numba

from ._jit import njit


def _double_lanes_for_host():
    """Doubles per vector register: 8 where the code is compiled for 512-bit vectors (AVX-512: the level
    ``x86-64-v4``, or the host's own features when they have it), else 4 (a 256-bit AVX register). Numba keys
    its cache by the CPU name, so each level keeps the width it compiled with."""
    from . import _cpu_level
    if _cpu_level.level != "host":         # a shipped level: its vectors, whatever the host has
        return 8 if _cpu_level.level in _cpu_level.WIDE_LEVELS else 4
    if numba.config.CPU_NAME or numba.config.CPU_FEATURES:
        return 4
    try:
        import llvmlite.binding as llvm
        return 8 if llvm.get_host_cpu_features().get("avx512f", False) else 4
    except Exception:
        return 4


def _lanes():
    """(LANES, LANES64). As plain Python (NUMBA_DISABLE_JIT=1) the environment variable CAROM_LANES may set
    LANES, to test that results do not depend on how contacts are grouped into lanes; LANES64 is then half
    of it when it is even, else all of it."""
    if numba.config.DISABLE_JIT and os.environ.get("CAROM_LANES"):
        n = int(os.environ["CAROM_LANES"])
        return n, (n // 2 if n % 2 == 0 else n)
    d = _double_lanes_for_host()
    return 2 * d, d


#: contacts solved side by side (one per lane of a vector of floats), and doubles per vector register
LANES, LANES64 = _lanes()
#: a bundle's rows are filled in PARTS parts of LANES64 lanes (``store_part``)
PARTS = LANES // LANES64
#: doubles per row of the arrays :func:`gather_rows` reads (a row is one 64-byte cache line)
ROW = 8

if numba.config.DISABLE_JIT:
    def splat(x):
        """A float vector with ``x`` in every lane."""
        return np.full(LANES, x, np.float32)

    def splat64(x):
        """A double vector with ``x`` in every lane."""
        return np.full(LANES64, float(x))

    def load(a, j, f):
        """Lanes ``a[j, f, 0:n]``."""
        return a[j, f].copy()

    def store(a, j, f, v):
        """``a[j, f, 0:n] = v``."""
        a[j, f] = v

    def store_part(a, j, f, h, v):
        """``a[j, f, h·LANES64 : (h + 1)·LANES64] = v`` (doubles rounded to floats)."""
        a[j, f, h * LANES64:(h + 1) * LANES64] = v

    def lane(v, k):
        """Lane ``k`` of ``v`` as a float."""
        return float(v[k])

    def insert(v, k, x):
        """``v`` with lane ``k`` replaced by ``x``."""
        w = v.copy()
        w[k] = x
        return w

    def gather_rows(state, body, j, side):
        """The ``ROW`` columns of ``state[body[j, side, q]]`` for the LANES lanes q, as ``ROW`` float
        vectors."""
        block = state[body[j, side]]
        return tuple(block[:, c].copy() for c in range(ROW))

    def scatter_rows(state, body, move, j, side, cols):
        """``state[body[j, side, q], :len(cols)] = (lane q of each column)`` for the lanes q with
        ``move[j, side, q]``."""
        for q in range(LANES):
            if move[j, side, q]:
                state[body[j, side, q], :len(cols)] = [c[q] for c in cols]

    def gather_rows64(state, body, j, side, h):
        """The ``ROW`` columns of ``state[body[j, side, q]]`` for the lanes q of part h, as ``ROW`` double
        vectors."""
        block = state[body[j, side, h * LANES64:(h + 1) * LANES64]]
        return tuple(block[:, c].copy() for c in range(ROW))

    def joint_rows64(state, jbody, i, side):
        """The ``ROW`` columns of ``state[jbody[i + q, side]]`` for the LANES64 lanes q, as ``ROW`` double
        vectors."""
        block = state[jbody[i:i + LANES64, side]].astype(np.float64)
        return tuple(block[:, c].copy() for c in range(ROW))

    def put_joint_velocities64(state, jbody, i, side, vx, vy, w, mask):
        """``state[jbody[i + q, side], 0:3] = (vx, vy, w)`` (lane q of each) for the lanes q whose bit is set in
        ``mask``."""
        for q in range(LANES64):
            if mask >> q & 1:
                state[jbody[i + q, side], 0:3] = (vx[q], vy[q], w[q])

    def select(mask, a, b):
        """Per lane: ``a`` where ``mask``, else ``b``."""
        return np.where(mask, a, b)

    def prefetch_row(a, i):
        """Nothing (a hint to the processor's cache in compiled code)."""
        return None

    def prefetch_bundle(a, j, fields):
        """Nothing (a hint to the processor's cache in compiled code)."""
        return None

    def vfloor(a):
        """Per lane: the largest whole number not above the lane."""
        return np.floor(a)

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

    class Vector(types.Type):
        """``count`` numbers of type ``dtype`` (float32 or float64) in one LLVM vector."""

        def __init__(self, dtype, count):
            self.dtype = dtype
            self.count = count
            super().__init__(name=f"{'f32' if dtype == types.float32 else 'f64'}x{count}")

    class VectorMask(types.Type):
        """The per-lane result of a comparison of two vectors of ``count`` lanes."""

        def __init__(self, count):
            self.count = count
            super().__init__(name=f"b1x{count}")

    def _ir_element(dtype):
        return ir.FloatType() if dtype == types.float32 else ir.DoubleType()

    @register_model(Vector)
    class _VectorModel(models.PrimitiveModel):
        def __init__(self, dmm, fe_type):
            super().__init__(dmm, fe_type, ir.VectorType(_ir_element(fe_type.dtype), fe_type.count))

    @register_model(VectorMask)
    class _VectorMaskModel(models.PrimitiveModel):
        def __init__(self, dmm, fe_type):
            super().__init__(dmm, fe_type, ir.VectorType(ir.IntType(1), fe_type.count))

    f32v = Vector(types.float32, LANES)
    f64v = Vector(types.float64, LANES64)
    _SCALAR = (types.Float, types.Integer, types.Boolean)

    def _vector_of(dtype):
        """The vector type of a bundle array of ``dtype`` (its last extent is that vector's count)."""
        return f32v if dtype == types.float32 else f64v if dtype == types.float64 else None

    def _ir_vector(vty):
        return ir.VectorType(_ir_element(vty.dtype), vty.count)

    def _lane_index(k):
        return ir.Constant(ir.IntType(32), k)

    def _splat_value(context, builder, value, ty, vty):
        x = context.cast(builder, value, ty, vty.dtype)
        vec = ir.Constant(_ir_vector(vty), None)
        for k in range(vty.count):
            vec = builder.insert_element(vec, x, _lane_index(k))
        return vec

    def _splat_intrinsic(vty):
        @intrinsic
        def splat_to(typingctx, x):
            if not isinstance(x, _SCALAR):
                return None

            def codegen(context, builder, sig, args):
                return _splat_value(context, builder, args[0], sig.args[0], vty)
            return vty(x), codegen
        return splat_to

    splat = _splat_intrinsic(f32v)
    splat64 = _splat_intrinsic(f64v)

    def _field_pointer(context, builder, aty, arr, j, jty, f, fty, count, lane0, vty):
        """Address of ``a[j, f, lane0]`` (lane0 an LLVM value, or None for lane 0) for a bundle array whose last extent is ``count`` by construction, as
        a pointer to ``vty``: the offset (j · fields + f) · count + lane0 then needs one multiplication per
        bundle, and a constant field becomes an address displacement (the generic indexing multiplies by the
        runtime last extent at every field)."""
        ary = context.make_array(aty)(context, builder, arr)
        shape = cgutils.unpack_tuple(builder, ary.shape)
        jj = context.cast(builder, j, jty, types.intp)
        ff = context.cast(builder, f, fty, types.intp)
        row = builder.add(builder.mul(jj, shape[1]), ff)
        off = builder.mul(row, ir.Constant(row.type, count))
        if lane0 is not None:
            off = builder.add(off, lane0)
        ptr = builder.gep(ary.data, [off])
        return builder.bitcast(ptr, ir.PointerType(_ir_vector(vty)))

    def _bundle_array(a):
        return (isinstance(a, types.Array) and a.ndim == 3 and a.layout == "C"
                and _vector_of(a.dtype) is not None)

    @intrinsic
    def load(typingctx, a, j, f):
        if not (_bundle_array(a) and isinstance(j, types.Integer) and isinstance(f, types.Integer)):
            return None
        vty = _vector_of(a.dtype)

        def codegen(context, builder, sig, args):
            ptr = _field_pointer(context, builder, sig.args[0], args[0], args[1], sig.args[1], args[2],
                                 sig.args[2], vty.count, None, vty)
            return builder.load(ptr, align=vty.dtype.bitwidth // 8)
        return vty(a, j, f), codegen

    @intrinsic
    def store(typingctx, a, j, f, v):
        if not (_bundle_array(a) and isinstance(j, types.Integer) and isinstance(f, types.Integer)
                and v == _vector_of(a.dtype)):
            return None

        def codegen(context, builder, sig, args):
            vty = sig.args[3]
            ptr = _field_pointer(context, builder, sig.args[0], args[0], args[1], sig.args[1], args[2],
                                 sig.args[2], vty.count, None, vty)
            builder.store(args[3], ptr, align=vty.dtype.bitwidth // 8)
            return context.get_dummy_value()
        return types.none(a, j, f, v), codegen

    @intrinsic
    def store_part(typingctx, a, j, f, h, v):
        """Doubles ``v`` rounded to floats (IEEE round to nearest) into lanes h·LANES64 … of a float
        bundle."""
        if not (_bundle_array(a) and a.dtype == types.float32 and isinstance(j, types.Integer)
                and isinstance(f, types.Integer) and isinstance(h, types.Integer) and v == f64v):
            return None

        def codegen(context, builder, sig, args):
            part = Vector(types.float32, LANES64)
            hh = context.cast(builder, args[3], sig.args[3], types.intp)
            lane0 = builder.mul(hh, ir.Constant(hh.type, LANES64))
            ptr = _field_pointer(context, builder, sig.args[0], args[0], args[1], sig.args[1], args[2],
                                 sig.args[2], LANES, lane0, part)
            builder.store(builder.fptrunc(args[4], _ir_vector(part)), ptr, align=4)
            return context.get_dummy_value()
        return types.none(a, j, f, h, v), codegen

    @intrinsic
    def lane(typingctx, v, k):
        if not (isinstance(v, Vector) and isinstance(k, types.Integer)):
            return None

        def codegen(context, builder, sig, args):
            return builder.extract_element(args[0], context.cast(builder, args[1], sig.args[1], types.int32))
        return v.dtype(v, k), codegen

    @intrinsic
    def insert(typingctx, v, k, x):
        if not (isinstance(v, Vector) and isinstance(k, types.Integer) and isinstance(x, _SCALAR)):
            return None

        def codegen(context, builder, sig, args):
            val = context.cast(builder, args[2], sig.args[2], sig.args[0].dtype)
            return builder.insert_element(args[0], val, context.cast(builder, args[1], sig.args[1], types.int32))
        return v(v, k, x), codegen

    def _index_vector(indices):
        return ir.Constant(ir.VectorType(ir.IntType(32), len(indices)), indices)

    def _transpose(builder, vecs):
        """Transpose an n × n block held as n row vectors into column vectors, by swapping the off-diagonal
        h × h blocks for h = n/2, …, 1 (each swap is one two-source shuffle per vector: log2(n) · n shuffles,
        against n² element inserts)."""
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

    def _concatenate(builder, vecs):
        """One vector of the given vectors' lanes in order (their count a power of two)."""
        while len(vecs) > 1:
            width = vecs[0].type.count
            vecs = [builder.shuffle_vector(vecs[i], vecs[i + 1], _index_vector(list(range(2 * width))))
                    for i in range(0, len(vecs), 2)]
        return vecs[0]

    def _gather_typing(state, body, j, side, dtype):
        return (isinstance(state, types.Array) and state.ndim == 2 and state.dtype == dtype
                and state.layout == "C" and isinstance(body, types.Array) and body.ndim == 3
                and isinstance(body.dtype, types.Integer) and isinstance(j, types.Integer)
                and isinstance(side, types.Integer))

    def _lane_offset(builder, jj, ss, qq):
        """Flat index of ``[j, side, q]`` in a (bundles, 2, LANES) array. The bundle arrays have that shape and
        the state rows are ROW wide, C-contiguous, by construction (the solver makes them): addresses are then
        a few shifts and adds, where indexing by the arrays' runtime shapes took a multiplication per index
        and a check for negative indices (about a tenth of a sweep's instructions)."""
        return builder.add(builder.mul(builder.add(builder.mul(jj, ir.Constant(jj.type, 2)), ss),
                                       ir.Constant(jj.type, LANES)), qq)

    def _row_pointer(context, builder, st, bty, bd, i):
        """Address of ``state[body.flat[i], 0]`` (i from :func:`_lane_offset`)."""
        b = context.cast(builder, builder.load(builder.gep(bd.data, [i])), bty.dtype, types.intp)
        return builder.gep(st.data, [builder.mul(b, ir.Constant(b.type, ROW))])

    def _gather_arrays(context, builder, sig, args, at=2):
        """(state type, state, body type, body, j, side) of an intrinsic whose first two arguments are the
        state and the bundle bodies, and whose arguments ``at`` and ``at + 1`` are j and side."""
        sty, bty, jty, dty = sig.args[0], sig.args[1], sig.args[at], sig.args[at + 1]
        st = context.make_array(sty)(context, builder, args[0])
        bd = context.make_array(bty)(context, builder, args[1])
        jj = context.cast(builder, args[at], jty, types.intp)
        ss = context.cast(builder, args[at + 1], dty, types.intp)
        return sty, st, bty, bd, jj, ss

    @intrinsic
    def gather_rows(typingctx, state, body, j, side):
        """Rows ``state[body[j, side, q]]`` (ROW floats each) of the LANES lanes q, as ROW float column
        vectors: each row is loaded whole, then each ROW × ROW block of rows is transposed in registers and
        the blocks' columns joined."""
        if not (_gather_typing(state, body, j, side, types.float32) and ROW & (ROW - 1) == 0
                and LANES % ROW == 0 and (LANES // ROW) & (LANES // ROW - 1) == 0):
            return None
        out = types.UniTuple(f32v, ROW)

        def codegen(context, builder, sig, args):
            sty, st, bty, bd, jj, ss = _gather_arrays(context, builder, sig, args)
            pty = ir.PointerType(ir.VectorType(ir.FloatType(), ROW))
            rows = []
            for q in range(LANES):
                qq = ir.Constant(context.get_value_type(types.intp), q)
                rptr = _row_pointer(context, builder, st, bty, bd, _lane_offset(builder, jj, ss, qq))
                rows.append(builder.load(builder.bitcast(rptr, pty), align=4))
            blocks = [_transpose(builder, rows[b:b + ROW]) for b in range(0, LANES, ROW)]
            cols = [_concatenate(builder, [blk[c] for blk in blocks]) for c in range(ROW)]
            return context.make_tuple(builder, out, cols)
        return out(state, body, j, side), codegen

    def _four_column_rows(builder, cols):
        """Four 8-lane column vectors as the 8 rows of 4 they hold: pairs of columns interleaved, then pairs
        of pairs, which leaves rows q and q + 4 in the two halves of one vector (8 shuffles within 128-bit
        halves, and 4 to take the upper halves: half the work of an 8 × 8 transpose)."""
        c0, c1, c2, c3 = cols
        lo, hi = _index_vector([0, 8, 1, 9, 4, 12, 5, 13]), _index_vector([2, 10, 3, 11, 6, 14, 7, 15])
        t0, t1 = builder.shuffle_vector(c0, c1, lo), builder.shuffle_vector(c0, c1, hi)
        t2, t3 = builder.shuffle_vector(c2, c3, lo), builder.shuffle_vector(c2, c3, hi)
        first, second = _index_vector([0, 1, 8, 9, 4, 5, 12, 13]), _index_vector([2, 3, 10, 11, 6, 7, 14, 15])
        pairs = [builder.shuffle_vector(t0, t2, first), builder.shuffle_vector(t0, t2, second),
                 builder.shuffle_vector(t1, t3, first), builder.shuffle_vector(t1, t3, second)]
        low, high = _index_vector([0, 1, 2, 3]), _index_vector([4, 5, 6, 7])
        return ([builder.shuffle_vector(u, u, low) for u in pairs]
                + [builder.shuffle_vector(u, u, high) for u in pairs])

    @intrinsic
    def scatter_rows(typingctx, state, body, move, j, side, cols):
        """``state[body[j, side, q], :k] = (lane q of each of the k vectors cols)`` for the lanes q with
        ``move[j, side, q]``, k = ROW or 4 (the inverse of :func:`gather_rows`: the columns are transposed
        back into rows in registers, and each row is one store). The solver writes back only the first four
        columns (the velocities it changed), which halves the transposing (``_four_column_rows``)."""
        if not (_gather_typing(state, body, j, side, types.float32) and isinstance(move, types.Array)
                and move.ndim == 3 and move.dtype == types.boolean and move.layout == "C"
                and isinstance(cols, types.UniTuple) and cols.count in (ROW, 4) and cols.dtype == f32v
                and LANES % ROW == 0 and ROW == 8):
            return None

        def codegen(context, builder, sig, args):
            sty, st, bty, bd, jj, ss = _gather_arrays(context, builder, sig, args, at=3)
            mv = context.make_array(sig.args[2])(context, builder, args[2])
            columns = cgutils.unpack_tuple(builder, args[5])
            pty = ir.PointerType(ir.VectorType(ir.FloatType(), len(columns)))
            for blk in range(0, LANES, ROW):
                part = [builder.shuffle_vector(c, c, _index_vector(list(range(blk, blk + ROW))))
                        if LANES != ROW else c for c in columns]
                rows = _transpose(builder, part) if len(part) == ROW else _four_column_rows(builder, part)
                for q in range(ROW):
                    i = _lane_offset(builder, jj, ss, ir.Constant(jj.type, blk + q))
                    flag = builder.load(builder.gep(mv.data, [i]))
                    with cgutils.if_likely(builder, builder.icmp_unsigned("!=", flag, ir.Constant(flag.type, 0))):
                        rptr = _row_pointer(context, builder, st, bty, bd, i)
                        builder.store(rows[q], builder.bitcast(rptr, pty), align=4)
            return context.get_dummy_value()
        return types.none(state, body, move, j, side, cols), codegen

    @intrinsic
    def gather_rows64(typingctx, state, body, j, side, h):
        """Rows ``state[body[j, side, q]]`` (ROW doubles each) of the LANES64 lanes q of part h, as ROW double
        column vectors: each row is loaded in LANES64-wide pieces, then the blocks are transposed in
        registers."""
        if not (_gather_typing(state, body, j, side, types.float64) and isinstance(h, types.Integer)
                and LANES64 & (LANES64 - 1) == 0 and ROW % LANES64 == 0):
            return None
        out = types.UniTuple(f64v, ROW)

        def codegen(context, builder, sig, args):
            sty, st, bty, bd, jj, ss = _gather_arrays(context, builder, sig, args)
            hh = context.cast(builder, args[4], sig.args[4], types.intp)
            lane0 = builder.mul(hh, ir.Constant(hh.type, LANES64))
            vty = ir.PointerType(ir.VectorType(ir.DoubleType(), LANES64))
            pieces = [[] for _ in range(ROW // LANES64)]
            for q in range(LANES64):
                qq = builder.add(lane0, ir.Constant(hh.type, q))
                rptr = _row_pointer(context, builder, st, bty, bd, _lane_offset(builder, jj, ss, qq))
                for p in range(ROW // LANES64):
                    ptr = builder.gep(rptr, [ir.Constant(ir.IntType(64), p * LANES64)])
                    pieces[p].append(builder.load(builder.bitcast(ptr, vty), align=8))
            cols = []
            for p in range(ROW // LANES64):
                cols.extend(_transpose(builder, pieces[p]))
            return context.make_tuple(builder, out, cols)
        return out(state, body, j, side, h), codegen

    def _joint_row_pointer(context, builder, sig, args):
        """(state, a function of the lane q giving the address of ``state[jbody[i + q, side], 0]``) of an
        intrinsic whose arguments begin (state, jbody, i, side): jbody a C-contiguous (n, 2) integer array, state
        ROW wide and C-contiguous (the solver's rows)."""
        st = context.make_array(sig.args[0])(context, builder, args[0])
        jb = context.make_array(sig.args[1])(context, builder, args[1])
        ii = context.cast(builder, args[2], sig.args[2], types.intp)
        ss = context.cast(builder, args[3], sig.args[3], types.intp)

        def row(q):
            at = builder.add(builder.mul(builder.add(ii, ir.Constant(ii.type, q)), ir.Constant(ii.type, 2)), ss)
            b = context.cast(builder, builder.load(builder.gep(jb.data, [at])), sig.args[1].dtype, types.intp)
            return builder.gep(st.data, [builder.mul(b, ir.Constant(b.type, ROW))])
        return row

    def _joint_typing(state, jbody, i, side):
        return (isinstance(state, types.Array) and state.ndim == 2 and state.dtype == types.float32
                and state.layout == "C" and isinstance(jbody, types.Array) and jbody.ndim == 2
                and isinstance(jbody.dtype, types.Integer) and jbody.layout == "C" and isinstance(i, types.Integer)
                and isinstance(side, types.Integer) and ROW % LANES64 == 0 and LANES64 >= 4
                and LANES64 & (LANES64 - 1) == 0)

    @intrinsic
    def joint_rows64(typingctx, state, jbody, i, side):
        """Rows ``state[jbody[i + q, side]]`` (ROW floats each: the solver's rows of the bodies of joints i …
        i + LANES64 − 1 on ``side``) as ROW double column vectors: each row one load, widened to doubles (exact)
        and its two halves transposed with the other lanes' in registers, where a column read lane by lane took
        a load, a conversion and an insert per lane and column."""
        if not _joint_typing(state, jbody, i, side):
            return None
        out = types.UniTuple(f64v, ROW)

        def codegen(context, builder, sig, args):
            row = _joint_row_pointer(context, builder, sig, args)
            pty = ir.PointerType(ir.VectorType(ir.FloatType(), ROW))
            pieces = [[] for _ in range(ROW // LANES64)]
            for q in range(LANES64):
                wide = builder.fpext(builder.load(builder.bitcast(row(q), pty), align=4),
                                     ir.VectorType(ir.DoubleType(), ROW))
                for p in range(ROW // LANES64):
                    pieces[p].append(builder.shuffle_vector(wide, wide, _index_vector(
                        list(range(p * LANES64, (p + 1) * LANES64)))))
            cols = []
            for p in range(ROW // LANES64):
                cols.extend(_transpose(builder, pieces[p]))
            return context.make_tuple(builder, out, cols)
        return out(state, jbody, i, side), codegen

    @intrinsic
    def put_joint_velocities64(typingctx, state, jbody, i, side, vx, vy, w, mask):
        """``state[jbody[i + q, side], 0:3] = (vx, vy, w)`` (lane q of each, rounded to single precision) for
        the lanes q whose bit is set in ``mask``: the three vectors (and w again) transposed into per-lane rows
        in registers, each row rounded at once and stored as two floats and one (where each number went
        through a lane extract, a rounding and a store). (Wider vectors: w repeated to fill the block.)"""
        if not (_joint_typing(state, jbody, i, side) and vx == f64v and vy == f64v and w == f64v
                and isinstance(mask, types.Integer)):
            return None

        def codegen(context, builder, sig, args):
            row = _joint_row_pointer(context, builder, sig, args)
            rows = _transpose(builder, [args[4], args[5]] + [args[6]] * (LANES64 - 2))
            m = context.cast(builder, args[7], sig.args[7], types.int64)
            p2 = ir.PointerType(ir.VectorType(ir.FloatType(), 2))
            for q in range(LANES64):
                bit = builder.and_(builder.lshr(m, ir.Constant(m.type, q)), ir.Constant(m.type, 1))
                with cgutils.if_likely(builder, builder.icmp_unsigned("!=", bit, ir.Constant(m.type, 0))):
                    narrow = builder.fptrunc(rows[q], ir.VectorType(ir.FloatType(), LANES64))
                    ptr = row(q)
                    builder.store(builder.shuffle_vector(narrow, narrow, _index_vector([0, 1])),
                                  builder.bitcast(ptr, p2), align=4)
                    builder.store(builder.extract_element(narrow, ir.Constant(ir.IntType(32), 2)),
                                  builder.gep(ptr, [ir.Constant(ir.IntType(64), 2)]), align=4)
            return context.get_dummy_value()
        return types.none(state, jbody, i, side, vx, vy, w, mask), codegen

    def _prefetch(builder, ptr):
        """``llvm.prefetch`` of the cache line at ``ptr``: for a read, kept in every cache level, data."""
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
                                            "llvm.prefetch.p0i8")
        builder.call(fn, [builder.bitcast(ptr, i8p), ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])

    @intrinsic
    def prefetch_row(typingctx, a, i):
        """Ask the processor to bring row ``a[i]`` of a C-contiguous 2-D array (its first cache line), or item
        ``a[i]`` of a 1-D one, into the cache, for a read soon (``llvm.prefetch``: a hint, which changes no
        value)."""
        if not (isinstance(a, types.Array) and a.ndim in (1, 2) and a.layout == "C" and isinstance(i, types.Integer)):
            return None

        def codegen(context, builder, sig, args):
            arr = context.make_array(sig.args[0])(context, builder, args[0])
            ii = context.cast(builder, args[1], sig.args[1], types.intp)
            if sig.args[0].ndim == 2:
                ii = builder.mul(ii, cgutils.unpack_tuple(builder, arr.shape)[1])
            _prefetch(builder, builder.gep(arr.data, [ii]))
            return context.get_dummy_value()
        return types.none(a, i), codegen

    @intrinsic
    def prefetch_bundle(typingctx, a, j, fields):
        """Ask the processor to bring the first ``fields`` fields of ``a[j]`` (a bundle of a C-contiguous 3-D array:
        every cache line they touch) into the cache, for a read soon (``llvm.prefetch``: a hint, which changes no
        value)."""
        if not (isinstance(a, types.Array) and a.ndim == 3 and a.layout == "C" and isinstance(j, types.Integer)
                and isinstance(fields, types.Integer)):
            return None

        def codegen(context, builder, sig, args):
            arr = context.make_array(sig.args[0])(context, builder, args[0])
            jj = context.cast(builder, args[1], sig.args[1], types.intp)
            ff = context.cast(builder, args[2], sig.args[2], types.intp)
            shape = cgutils.unpack_tuple(builder, arr.shape)
            size = context.get_abi_sizeof(context.get_data_type(sig.args[0].dtype))
            per = builder.mul(shape[1], shape[2])
            base = builder.bitcast(builder.gep(arr.data, [builder.mul(jj, per)]), ir.IntType(8).as_pointer())
            nbytes = builder.mul(builder.mul(ff, shape[2]), ir.Constant(per.type, size))
            # one prefetch per 64 bytes, and one at the last byte (a bundle need not start on a line)
            with cgutils.for_range_slice(builder, ir.Constant(per.type, 0), nbytes, ir.Constant(per.type, 64)) as (off, _):
                _prefetch(builder, builder.gep(base, [off]))
            _prefetch(builder, builder.gep(base, [builder.sub(nbytes, ir.Constant(per.type, 1))]))
            return context.get_dummy_value()
        return types.none(a, j, fields), codegen

    @intrinsic
    def vfloor(typingctx, a):
        """Per lane: the largest whole number not above the lane (``llvm.floor``: exact)."""
        if not isinstance(a, Vector):
            return None

        def codegen(context, builder, sig, args):
            vty = args[0].type
            suffix = f"v{vty.count}{'f64' if isinstance(vty.element, ir.DoubleType) else 'f32'}"
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(vty, [vty]), f"llvm.floor.{suffix}")
            return builder.call(fn, [args[0]])
        return a(a), codegen

    @intrinsic
    def select(typingctx, mask, a, b):
        if not (isinstance(mask, VectorMask) and isinstance(a, Vector) and a == b and mask.count == a.count):
            return None

        def codegen(context, builder, sig, args):
            return builder.select(args[0], args[1], args[2])
        return a(mask, a, b), codegen

    def _vector_operand(a, b):
        """The vector type of (vector, vector) of one type, (vector, scalar) or (scalar, vector); else None."""
        va, vb = isinstance(a, Vector), isinstance(b, Vector)
        if va and vb:
            return a if a == b else None
        if va and isinstance(b, _SCALAR):
            return a
        if vb and isinstance(a, _SCALAR):
            return b
        return None

    def _vector_args(context, builder, sig, args, vty):
        """Both operands as vectors (a scalar operand is converted to the element type and splat)."""
        out = []
        for value, ty in zip(args, sig.args):
            out.append(value if isinstance(ty, Vector) else _splat_value(context, builder, value, ty, vty))
        return out

    def _binary(comparison, emit):
        """An intrinsic for (vector or scalar) ∘ (vector or scalar): a vector (or, for a comparison, a mask) of
        the vector operand's type; ``emit(builder, x, y)`` builds the operation on both operands as
        vectors."""
        @intrinsic
        def vop(typingctx, a, b):
            vty = _vector_operand(a, b)
            if vty is None:
                return None
            result = VectorMask(vty.count) if comparison else vty

            def codegen(context, builder, sig, args):
                x, y = _vector_args(context, builder, sig, args, vty)
                return emit(builder, x, y)
            return result(a, b), codegen
        return vop

    def _mask_logic(method):
        @intrinsic
        def vlogic(typingctx, a, b):
            if not (isinstance(a, VectorMask) and a == b):
                return None

            def codegen(context, builder, sig, args):
                return getattr(builder, method)(args[0], args[1])
            return a(a, b), codegen
        return vlogic

    _vadd, _vsub, _vmul, _vdiv = (_binary(False, lambda builder, x, y, m=m: getattr(builder, m)(x, y))
                                  for m in ("fadd", "fsub", "fmul", "fdiv"))
    _vgt, _vlt, _vge, _vle, _veq, _vne = (_binary(True, lambda builder, x, y, o=o: builder.fcmp_ordered(o, x, y))
                                          for o in (">", "<", ">=", "<=", "==", "!="))
    _vand, _vor = _mask_logic("and_"), _mask_logic("or_")

    @intrinsic
    def _vneg(typingctx, a):
        if not isinstance(a, Vector):
            return None

        def codegen(context, builder, sig, args):
            return builder.fneg(args[0])
        return a(a), codegen

    def _register(op, impl, check):
        @overload(op)
        def _ov(a, b):
            if check(a, b):
                return lambda a, b: impl(a, b)

    for _op, _impl in ((operator.add, _vadd), (operator.sub, _vsub), (operator.mul, _vmul),
                       (operator.truediv, _vdiv), (operator.gt, _vgt), (operator.lt, _vlt),
                       (operator.ge, _vge), (operator.le, _vle), (operator.eq, _veq), (operator.ne, _vne)):
        _register(_op, _impl, lambda a, b: _vector_operand(a, b) is not None)
    for _op, _impl in ((operator.and_, _vand), (operator.or_, _vor)):
        _register(_op, _impl, lambda a, b: isinstance(a, VectorMask) and a == b)

    @overload(operator.neg)
    def _neg(a):
        if isinstance(a, Vector):
            return lambda a: _vneg(a)

    @njit
    def vmax(a, b):
        return select(a > b, a, b)

    @njit
    def vmin(a, b):
        return select(a < b, a, b)
