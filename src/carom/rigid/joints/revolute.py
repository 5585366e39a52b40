"""Revolute joint (Box2D's revolute, pymunk's PivotJoint): anchor B held on anchor A, the bodies free to turn
about it, with an optional limit on the relative angle, a motor and a rotational spring.

Solved, as Box2D does, spring first, then motor, then limits, then the point (so the point constraint has the
last word): spring Ċ = ωB − ωA with bias β·(θ − target); motor Ċ − speed with |λ| ≤ max torque × h; lower limit
C = θ − lower ≥ 0, upper C = upper − θ ≥ 0; point d = 0 (``_rows.solve_point``)."""
import numpy as np

from ..._jit import njit, llvm_inline_njit
from ..._simd import splat64, select
from ._rows import point_block, point_softness, point_terms
from ._common import (INF, G_ANG0, ROW_ANGLE, ROW_POINT, BIAS_RIGID, BIAS_LIMIT, BIAS_SPRING, BIAS_MOTOR, add_row,
                      soft)

REF, LOWER, UPPER, MOTOR_SPEED, MAX_MOTOR_TORQUE, HERTZ, DAMPING_RATIO, TARGET = range(8)
# impulses: the point (x, y), spring, motor, lower, upper
PX, PY, SPRING, MOTOR, LOW, HIGH = range(6)


@njit
def is_plain(param, j):
    """Whether revolute joint j is only its point row (no spring, motor or limit): a plain point joint, which
    the step solves in vectors when both its bodies are dynamic (``_bundles``)."""
    return (param[j, HERTZ] == 0.0 and param[j, MAX_MOTOR_TORQUE] == 0.0 and param[j, LOWER] == -INF
            and param[j, UPPER] == INF)


@njit
def emit(j, param, imp, rows, r, h, g):
    """The rows, in the order solved: spring, motor, lower and upper limit (angles), the point last."""
    angle0 = g[G_ANG0]
    if param[j, HERTZ] > 0.0:
        r = add_row(rows, r, ROW_ANGLE, BIAS_SPRING, imp, j, float(SPRING), -INF, INF, angle0 - param[j, TARGET], 1.0,
                    1.0, param[j, HERTZ], param[j, DAMPING_RATIO], h)
    if param[j, MAX_MOTOR_TORQUE] > 0.0:
        m = param[j, MAX_MOTOR_TORQUE] * h
        r = add_row(rows, r, ROW_ANGLE, BIAS_MOTOR, imp, j, float(MOTOR), -m, m, -param[j, MOTOR_SPEED], 1.0, 1.0,
                    0.0, 0.0, h)
    if param[j, LOWER] > -INF:
        r = add_row(rows, r, ROW_ANGLE, BIAS_LIMIT, imp, j, float(LOW), 0.0, INF, angle0 - param[j, LOWER], 1.0, 1.0,
                    0.0, 0.0, h)
    if param[j, UPPER] < INF:
        r = add_row(rows, r, ROW_ANGLE, BIAS_LIMIT, imp, j, float(HIGH), 0.0, INF, param[j, UPPER] - angle0, -1.0,
                    -1.0, 0.0, 0.0, h)
    return add_row(rows, r, ROW_POINT, BIAS_RIGID, imp, j, float(PX), 0.0, INF, 0.0, 0.0, 0.0, 0.0, 0.0, h)


# ------------------------------------------------------------------------------------------ the compact record
#: A revolute joint is solved from one row of the step's row table (``ROW_REVOLUTE``), not from its five generic
#: rows: the sweeps stream the row table, and the generic rows were 5 × 24 numbers (15 cache lines) a joint, of
#: which a sweep reads 2 a row. A ragdoll's joints (limits, motor, spring) spent most of the solve waiting on
#: them. The record's columns: the type and which rows the joint has (FEATURES: SPRING_ON | MOTOR_ON | …); the
#: spring's impulse, error constant, softness (``_common.soft``) and error at the biased solve; the motor's
#: impulse, bounds (± max torque × h) and bias (−speed); each limit's impulse and error constant; the point's
#: impulses. The arithmetic is the generic rows', operation for operation (``_rows.scalar_row``, ``bias_of``,
#: ``solve_point`` with their constants: an angle row's Jacobian (0, 0, ±1), the limits' bounds [0, ∞), the
#: point's infinite cap), so the results are bitwise the generic rows'. A joint whose param column
#: GENERIC_ROWS is set keeps the generic rows (tests compare the two).
#:
#: What a sweep changes (the impulses, the spring's error at the biased solve) is the record's last cache line,
#: columns R_SL …, and the rest is fixed for the step (the row table's rows start on cache lines:
#: ``_layout.aligned_rows``), so a record solved alone dirties one line a sweep. A record of a lane block lives
#: in the block, column by column (``_solve.lane_blocks``), where the lanes write back only those columns.
(R_TYPE, R_FEATURES, R_SC0, R_SBETA, R_SMS, R_SISC, R_SALPHA, R_MLO, R_MHI, R_MC0, R_LC0, R_UC0) = range(12)
#: not the joint's own: where the sweeps' vector lanes keep the record (``_solve.lane_blocks``, set once per step by
#: ``_solve.prepare_joints``): u + 1 on the first record of lane block u, −1 on the others of that block (whose
#: columns are then in the block, not in the row), 0 on a record solved alone
R_BUNDLE = 12
R_SL, R_ML, R_LL, R_UL, R_PX, R_PY, R_SCS0 = range(16, 23)
SPRING_ON, MOTOR_ON, LOWER_ON, UPPER_ON = 1, 2, 4, 8
#: ``_common.ROW_*``'s code of the record (a float, as the row table stores it)
ROW_REVOLUTE = 7.0
#: the param column that keeps a joint on the generic rows (tests only)
GENERIC_ROWS = 15


@llvm_inline_njit
def emit_record(j, param, imp, rows, r, h, g):
    """The joint's record in row r (module comment above); returns r + 1."""
    for f in range(rows.shape[1]):
        rows[r, f] = 0.0
    angle0 = g[G_ANG0]
    features = 0
    rows[r, R_TYPE] = ROW_REVOLUTE
    if param[j, HERTZ] > 0.0:
        features |= SPRING_ON
        rows[r, R_SL] = imp[j, SPRING]
        rows[r, R_SC0] = angle0 - param[j, TARGET]
        rows[r, R_SBETA], rows[r, R_SMS], rows[r, R_SISC], rows[r, R_SALPHA] = soft(param[j, HERTZ],
                                                                                    param[j, DAMPING_RATIO], h)
    if param[j, MAX_MOTOR_TORQUE] > 0.0:
        features |= MOTOR_ON
        m = param[j, MAX_MOTOR_TORQUE] * h
        rows[r, R_ML] = imp[j, MOTOR]
        rows[r, R_MLO] = -m
        rows[r, R_MHI] = m
        rows[r, R_MC0] = -param[j, MOTOR_SPEED]
    if param[j, LOWER] > -INF:
        features |= LOWER_ON
        rows[r, R_LL] = imp[j, LOW]
        rows[r, R_LC0] = angle0 - param[j, LOWER]
    if param[j, UPPER] < INF:
        features |= UPPER_ON
        rows[r, R_UL] = imp[j, HIGH]
        rows[r, R_UC0] = param[j, UPPER] - angle0
    rows[r, R_FEATURES] = features
    rows[r, R_PX] = imp[j, PX]
    rows[r, R_PY] = imp[j, PY]
    return r + 1


@llvm_inline_njit
def _angle_row(rows, r, col, lo, hi, s, kind, warm, use_bias, jsoft, inv_h, vax, vay, vaw, vbx, vby, vbw, ma, ia,
               mb, ib, c):
    """An angle row of the record (impulse in column ``col``): ``_rows.scalar_row`` with the Jacobian (0, 0, s)
    on both bodies and ``bias_of`` for ``kind`` (0 spring, 1 motor, 2 limit). (``col`` and ``kind`` are passed as
    np.int64, not as constants: a constant is typed as its value, and each call would compile its own copy.)"""
    lam = rows[r, col]
    if warm:
        d = lam
    else:
        k = ia * s * s + ib * s * s
        if k <= 0.0:
            return vax, vay, vaw, vbx, vby, vbw
        if kind == 0:
            if use_bias:
                rows[r, R_SCS0] = c
            else:
                c0 = rows[r, R_SCS0]
                c = c0 + rows[r, R_SALPHA] * (c - c0)
            bias, ms, isc = c * rows[r, R_SBETA], rows[r, R_SMS], rows[r, R_SISC]
        elif kind == 1:
            bias, ms, isc = rows[r, R_MC0], 1.0, 0.0
        elif c > 0.0:
            bias, ms, isc = c * inv_h, 1.0, 0.0
        elif use_bias:
            bias, ms, isc = jsoft[0] * c, jsoft[1], jsoft[2]
        else:
            bias, ms, isc = 0.0, 1.0, 0.0
        # (the Jacobian's zero entries left out: 0·v cannot be folded away by the compiler (v might be inf or
        # NaN), and the five additions they made were in the chain of rows, which waits on each row's velocities)
        cdot = s * vbw - s * vaw
        # (times 1/k, not over k: the record's angle rows share k, so the compiled record computes its reciprocal
        # once, off the chain of rows, each of which waits for the one before; four divisions in that chain were
        # a sixth of a ragdoll's solve. The generic ``_rows.scalar_row`` does the same, for the same bits)
        new = lam - ms * (cdot + bias) * (1.0 / k) - isc * lam
        new = min(max(new, lo), hi)
        rows[r, col] = new
        d = new - lam
    return vax, vay, vaw - ia * d * s, vbx, vby, vbw + ib * d * s


@llvm_inline_njit
def solve_record(rows, r, warm, use_bias, jsoft, inv_h, vax, vay, vaw, vbx, vby, vbw, ma, ia, mb, ib, rax, ray, rbx,
                 rby, dx, dy, da, db):
    """One pass (the warm start, or the solve) over the record's rows in the generic rows' order: spring, motor,
    lower and upper limit, the point (``_rows.solve_point`` of a rigid point with no cap); ``da``, ``db`` the
    bodies' angle changes so far."""
    features = np.int64(rows[r, R_FEATURES])
    if features & SPRING_ON:
        vax, vay, vaw, vbx, vby, vbw = _angle_row(rows, r, np.int64(R_SL), -INF, INF, 1.0, np.int64(0), warm,
                                                  use_bias, jsoft, inv_h, vax, vay, vaw, vbx, vby, vbw, ma, ia, mb,
                                                  ib, rows[r, R_SC0] + 1.0 * db - 1.0 * da)
    if features & MOTOR_ON:
        vax, vay, vaw, vbx, vby, vbw = _angle_row(rows, r, np.int64(R_ML), rows[r, R_MLO], rows[r, R_MHI], 1.0,
                                                  np.int64(1), warm, use_bias, jsoft, inv_h, vax, vay, vaw, vbx,
                                                  vby, vbw, ma, ia, mb, ib, rows[r, R_MC0] + 1.0 * db - 1.0 * da)
    if features & LOWER_ON:
        vax, vay, vaw, vbx, vby, vbw = _angle_row(rows, r, np.int64(R_LL), 0.0, INF, 1.0, np.int64(2), warm,
                                                  use_bias, jsoft, inv_h, vax, vay, vaw, vbx, vby, vbw, ma, ia, mb,
                                                  ib, rows[r, R_LC0] + 1.0 * db - 1.0 * da)
    if features & UPPER_ON:
        vax, vay, vaw, vbx, vby, vbw = _angle_row(rows, r, np.int64(R_UL), 0.0, INF, -1.0, np.int64(2), warm,
                                                  use_bias, jsoft, inv_h, vax, vay, vaw, vbx, vby, vbw, ma, ia, mb,
                                                  ib, rows[r, R_UC0] + -1.0 * db - -1.0 * da)
    lx, ly = rows[r, R_PX], rows[r, R_PY]
    if warm:
        px, py = lx, ly
    else:
        rate, ms, isc = point_softness(use_bias, jsoft)
        solvable, bx, by = point_block(vax, vay, vaw, vbx, vby, vbw, ma, ia, mb, ib, rax, ray, rbx, rby, rate, dx,
                                       dy)
        if not solvable:
            return vax, vay, vaw, vbx, vby, vbw
        nx = lx - ms * bx - isc * lx
        ny = ly - ms * by - isc * ly
        rows[r, R_PX] = nx
        rows[r, R_PY] = ny
        px, py = nx - lx, ny - ly
    return (vax - ma * px, vay - ma * py, vaw - ia * (rax * py - ray * px), vbx + mb * px, vby + mb * py,
            vbw + ib * (rbx * py - rby * px))


# ------------------------------------------------------------------------------------------ records in lanes
#: A colour's records are also solved ``LANES64`` at a time, in double-precision vectors (``carom._simd``), by
#: ``_solve.solve_joints``: its runs of LANES64 records below the overflow colour, kept for the step in lane
#: blocks (``_solve.lane_blocks``; a colour's joints touch disjoint dynamic bodies). One record's rows
#: are a chain of dependent operations (each row waits for the velocities the one before wrote), about 70 ns a
#: pass, most of it waiting; side by side, the chains of LANES64 joints run in the same time. Each lane does the
#: scalar record's operations in the same order (a row a joint lacks, or one the scalar code skips, is computed
#: and then not taken: ``select``), so the results are bitwise the scalar record's.


@llvm_inline_njit
def _angle_lanes(on, lam, warm, use_bias, kind, s, lo, hi, c, c0, alpha, beta, sms, sisc, jsoft, inv_h, vaw, vbw,
                 ia, ib):
    """``_angle_row`` for the lanes of the mask ``on`` (the joints that have the row): (the rows' new impulses, the
    lanes whose row acted, vaw, vbw). The other lanes keep theirs."""
    zero = splat64(0.0)
    one = splat64(1.0)
    if warm:
        d = lam
        act = on
        new = lam
    else:
        k = ia * s * s + ib * s * s
        act = on & (k > 0.0)
        if kind == 0:
            if not use_bias:
                c = c0 + alpha * (c - c0)
            bias, ms, isc = c * beta, sms, sisc
        elif kind == 1:
            bias, ms, isc = c, one, zero
        else:
            # the limit: c > 0 (apart), the speculative c/h; else the joint softness in the biased solve
            apart = c > 0.0
            if use_bias:
                bias = select(apart, c * inv_h, jsoft[0] * c)
                ms = select(apart, one, splat64(jsoft[1]))
                isc = select(apart, zero, splat64(jsoft[2]))
            else:
                bias = select(apart, c * inv_h, zero)
                ms = one
                isc = zero
        cdot = s * vbw - s * vaw
        # (the lanes without the row divide by 1: no division by zero, which NumPy warns of as plain Python)
        new = lam - ms * (cdot + bias) * (1.0 / select(act, k, one)) - isc * lam
        # min(max(new, lo), hi), as Python's max and min take them
        new = select(lo > new, lo, new)
        new = select(hi < new, hi, new)
        new = select(act, new, lam)
        d = new - lam
    return new, act, select(act, vaw - ia * d * s, vaw), select(act, vbw + ib * d * s, vbw)


@llvm_inline_njit
def solve_record_lanes(warm, use_bias, jsoft, inv_h, spring, motor, lower, upper, sl, sc0, sbeta, sms, sisc, salpha,
                       scs0, ml, mlo, mhi, mc0, ll, lc0, ul, uc0, lx, ly, vax, vay, vaw, vbx, vby, vbw, ma, ia, mb, ib,
                       rax, ray, rbx, rby, dx, dy, da, db):
    """``solve_record`` for LANES64 records at once, from their rows gathered into vectors (``spring`` … ``upper``:
    the lanes that have the row): (the impulses sl, ml, ll, ul, lx, ly, the spring's error at the biased solve
    scs0 (``R_SCS0``), the velocities)."""
    zero = splat64(0.0)
    ninf = splat64(-INF)
    pinf = splat64(INF)
    c = sc0 + 1.0 * db - 1.0 * da
    sl, act, vaw, vbw = _angle_lanes(spring, sl, warm, use_bias, np.int64(0), 1.0, ninf, pinf, c, scs0, salpha, sbeta,
                                     sms, sisc, jsoft, inv_h, vaw, vbw, ia, ib)
    if use_bias and not warm:
        scs0 = select(act, c, scs0)
    ml, _, vaw, vbw = _angle_lanes(motor, ml, warm, use_bias, np.int64(1), 1.0, mlo, mhi, mc0, zero, zero, zero, zero,
                                   zero, jsoft, inv_h, vaw, vbw, ia, ib)
    ll, _, vaw, vbw = _angle_lanes(lower, ll, warm, use_bias, np.int64(2), 1.0, zero, pinf, lc0 + 1.0 * db - 1.0 * da,
                                   zero, zero, zero, zero, zero, jsoft, inv_h, vaw, vbw, ia, ib)
    ul, _, vaw, vbw = _angle_lanes(upper, ul, warm, use_bias, np.int64(2), -1.0, zero, pinf,
                                   uc0 + -1.0 * db - -1.0 * da, zero, zero, zero, zero, zero, jsoft, inv_h, vaw, vbw,
                                   ia, ib)
    if warm:
        px, py = lx, ly
    else:
        rate, ms, isc = point_softness(use_bias, jsoft)
        # ``point_block`` lane by lane: K⁻¹(Ċ + β·d), K singular (both bodies without mass) leaves the lane alone
        cx, cy, k11, k12, k22, det = point_terms(vax, vay, vaw, vbx, vby, vbw, ma, ia, mb, ib, rax, ray, rbx, rby,
                                                 rate, dx, dy)
        solvable = det != 0.0
        inv = 1.0 / select(solvable, det, splat64(1.0))
        bx = (k22 * cx - k12 * cy) * inv
        by = (k11 * cy - k12 * cx) * inv
        nx = lx - ms * bx - isc * lx
        ny = ly - ms * by - isc * ly
        px = select(solvable, nx - lx, zero)
        py = select(solvable, ny - ly, zero)
        lx = select(solvable, nx, lx)
        ly = select(solvable, ny, ly)
        return (sl, ml, ll, ul, lx, ly, scs0, select(solvable, vax - ma * px, vax),
                select(solvable, vay - ma * py, vay), select(solvable, vaw - ia * (rax * py - ray * px), vaw),
                select(solvable, vbx + mb * px, vbx), select(solvable, vby + mb * py, vby),
                select(solvable, vbw + ib * (rbx * py - rby * px), vbw))
    return (sl, ml, ll, ul, lx, ly, scs0, vax - ma * px, vay - ma * py, vaw - ia * (rax * py - ray * px),
            vbx + mb * px, vby + mb * py, vbw + ib * (rbx * py - rby * px))


@njit
def store_record(rec, j, imp, reaction, inv_h):
    """The record's impulses back to the joint table and the joint's reaction, as ``_solve.store_reactions`` sums
    the generic rows' (the angle rows' impulses times their factor of B for the torque, then the point's). ``rec``:
    the record's columns (its row, or its column of a lane block)."""
    features = np.int64(rec[R_FEATURES])
    fx = fy = t = 0.0
    if features & SPRING_ON:
        imp[j, SPRING] = rec[R_SL]
        t += rec[R_SL] * 1.0
    if features & MOTOR_ON:
        imp[j, MOTOR] = rec[R_ML]
        t += rec[R_ML] * 1.0
    if features & LOWER_ON:
        imp[j, LOW] = rec[R_LL]
        t += rec[R_LL] * 1.0
    if features & UPPER_ON:
        imp[j, HIGH] = rec[R_UL]
        t += rec[R_UL] * -1.0
    imp[j, PX] = rec[R_PX]
    imp[j, PY] = rec[R_PY]
    fx += rec[R_PX]
    fy += rec[R_PY]
    reaction[j, 0] = fx * inv_h
    reaction[j, 1] = fy * inv_h
    reaction[j, 2] = t * inv_h
