"""The generic joint rows (``_common``'s ROW_* types) solved: one function per row type, each taking the joint's
velocities (A's v, ω then B's, as scalars) and its current geometry and returning the new velocities. With
``warm`` the row's accumulated impulse is applied as it stands (the warm start, through today's Jacobian);
otherwise the row is solved with its bias (``use_bias``: the biased solve, else the relax) and its accumulated
impulse updated in the row table."""
import math

import numpy as np

from ..._jit import llvm_inline_njit
from .._layout import DPX, DPY
from ._common import (ROW_ANGLE, ROW_AXIS, ROW_LENGTH, ROW_PULLEY, ROW_WELD, ROW_PRISM, BIAS_RIGID, BIAS_LIMIT,
                      BIAS_SPRING, BIAS_MOTOR, BIAS, L0, L1, LO, HI, C0, SA, SB, UX, UY, FX, FY, BETA, MS, ISC, ALPHA,
                      CS0, CS1, P0, P1, INF, cross)
from . import weld, prismatic


@llvm_inline_njit
def bias_of(mode, c, rows, r, use_bias, jsoft, inv_h):
    """(bias, mass scale, impulse scale) of a scalar row with error c in bias ``mode`` (``_common``).

    A spring's biased solve keeps c (CS0); its relax solves the spring again with the error at the start of the
    substep moved by α (``soft``) of the substep's motion: c0 + α·(c − c0). Why again: one solve per substep
    is ``soft``'s step for a spring alone, but several springs on one body (a node of a soft body, a star of
    springs) are solved one after the other, and one pass of that is not enough for stiff ones; the relax is a
    second pass, which leaves a lone spring's impulse as it is. Why not with the error after the motion, as
    Box2D's relax does: that second solve is then a second implicit step, which doubles the spring's numerical
    damping (a 1 Hz spring of ζ = 0 lost 15 % of its amplitude per period). Moved by α it is so only for the
    stiff springs (α = 1: Box2D's relax, and its stability: 32 springs of 60 Hz on one body blew up with c0
    alone), and not at all for the soft ones (α = (hω)², 7e-4 for 1 Hz at 240 Hz)."""
    if mode == BIAS_SPRING:
        if use_bias:
            rows[r, CS0] = c
        else:
            c0 = rows[r, CS0]
            c = c0 + rows[r, ALPHA] * (c - c0)
        return c * rows[r, BETA], rows[r, MS], rows[r, ISC]
    if mode == BIAS_MOTOR:
        return rows[r, C0], 1.0, 0.0
    if mode == BIAS_LIMIT and c > 0.0:
        # apart: a speculative bias, the bodies may close the gap in this substep but not cross it
        return c * inv_h, 1.0, 0.0
    if mode == BIAS_RIGID or mode == BIAS_LIMIT:
        if use_bias:
            return jsoft[0] * c, jsoft[1], jsoft[2]
        return 0.0, 1.0, 0.0
    return rows[r, BETA] * c, 1.0, 0.0


@llvm_inline_njit
def scalar_row(rows, r, warm, use_bias, jsoft, inv_h, vax, vay, vaw, vbx, vby, vbw, ma, ia, mb, ib, ax, ay, aw, bx,
               by, bw, c):
    """One scalar row Ċ = (bx, by)·vB + bw·ωB − (ax, ay)·vA − aw·ωA with error c: the impulse
    Δλ = −m·mass_scale·(Ċ + bias) − impulse_scale·λ, m = 1/(mA|a|² + IA·aw² + mB|b|² + IB·bw²), the accumulated λ
    clamped to [LO, HI]."""
    lam = rows[r, L0]
    if warm:
        d = lam
    else:
        k = ma * (ax * ax + ay * ay) + ia * aw * aw + mb * (bx * bx + by * by) + ib * bw * bw
        if k <= 0.0:
            return vax, vay, vaw, vbx, vby, vbw
        bias, ms, isc = bias_of(np.int64(rows[r, BIAS]), c, rows, r, use_bias, jsoft, inv_h)
        cdot = bx * vbx + by * vby + bw * vbw - ax * vax - ay * vay - aw * vaw
        # (times 1/k, not over k, as the revolute record's angle rows, which must give the same bits:
        # ``revolute._angle_row``)
        new = lam - ms * (cdot + bias) * (1.0 / k) - isc * lam
        new = min(max(new, rows[r, LO]), rows[r, HI])
        rows[r, L0] = new
        d = new - lam
    return (vax - ma * d * ax, vay - ma * d * ay, vaw - ia * d * aw, vbx + mb * d * bx, vby + mb * d * by,
            vbw + ib * d * bw)


@llvm_inline_njit
def point_terms(vax, vay, vaw, vbx, vby, vbw, ma, ia, mb, ib, rax, ray, rbx, rby, rate, dx, dy):
    """Ċ + β·d and K of the point constraint's 2-d block: (cx, cy, k11, k12, k22, det K), for numbers or for
    vectors of lanes (``revolute.solve_record_lanes``), with the same operations in the same order."""
    cx = vbx - vbw * rby - vax + vaw * ray + rate * dx
    cy = vby + vbw * rbx - vay - vaw * rax + rate * dy
    k11 = ma + mb + ray * ray * ia + rby * rby * ib
    k12 = -ray * rax * ia - rby * rbx * ib
    k22 = ma + mb + rax * rax * ia + rbx * rbx * ib
    return cx, cy, k11, k12, k22, k11 * k22 - k12 * k12


@llvm_inline_njit
def point_softness(use_bias, jsoft):
    """(bias rate, mass scale, impulse scale) of a rigid point: the joint softness in the biased solve, none in
    the relax."""
    if use_bias:
        return jsoft[0], jsoft[1], jsoft[2]
    return 0.0, 1.0, 0.0


@llvm_inline_njit
def point_block(vax, vay, vaw, vbx, vby, vbw, ma, ia, mb, ib, rax, ray, rbx, rby, rate, dx, dy):
    """K⁻¹(Ċ + β·d) of the point constraint's 2-d block (``solve_point``; the revolute record's point too):
    (False, 0, 0) when K is singular (both bodies without mass), else (True, the two components)."""
    cx, cy, k11, k12, k22, det = point_terms(vax, vay, vaw, vbx, vby, vbw, ma, ia, mb, ib, rax, ray, rbx, rby, rate,
                                             dx, dy)
    if det == 0.0:
        return False, 0.0, 0.0
    inv = 1.0 / det
    return True, (k22 * cx - k12 * cy) * inv, (k11 * cy - k12 * cx) * inv


@llvm_inline_njit
def solve_point(rows, r, warm, use_bias, jsoft, vax, vay, vaw, vbx, vby, vbw, ma, ia, mb, ib, rax, ray, rbx, rby, dx,
                dy):
    """The point constraint d = 0 (anchor B on anchor A) as one 2-d block:
    Ċ = vB + ωB × rB − vA − ωA × rA, K = (mA + mB)·I + IA·[rA]ᵀ[rA] + IB·[rB]ᵀ[rB],
    Δλ = −mass_scale·K⁻¹(Ċ + β·d) − impulse_scale·λ; with a finite cap (HI) the accumulated λ keeps |λ| ≤ HI (a
    mouse or motor joint's force limit × h). A spring's d is kept by the biased solve and moved for the relax
    as ``bias_of`` moves a scalar error."""
    lx, ly = rows[r, L0], rows[r, L1]
    if warm:
        px, py = lx, ly
    else:
        mode = np.int64(rows[r, BIAS])
        if mode == BIAS_RIGID:
            if use_bias:
                rate, ms, isc = jsoft[0], jsoft[1], jsoft[2]
            else:
                rate, ms, isc = 0.0, 1.0, 0.0
        elif mode == BIAS_SPRING:
            if use_bias:
                rows[r, CS0] = dx
                rows[r, CS1] = dy
            else:
                alpha = rows[r, ALPHA]
                dx = rows[r, CS0] + alpha * (dx - rows[r, CS0])
                dy = rows[r, CS1] + alpha * (dy - rows[r, CS1])
            rate, ms, isc = rows[r, BETA], rows[r, MS], rows[r, ISC]
        else:
            rate, ms, isc = rows[r, BETA], 1.0, 0.0
        solvable, bx, by = point_block(vax, vay, vaw, vbx, vby, vbw, ma, ia, mb, ib, rax, ray, rbx, rby, rate, dx,
                                       dy)
        if not solvable:
            return vax, vay, vaw, vbx, vby, vbw
        nx = lx - ms * bx - isc * lx
        ny = ly - ms * by - isc * ly
        cap = rows[r, HI]
        if cap < INF:
            m = math.sqrt(nx * nx + ny * ny)
            if m > cap:
                nx *= cap / m
                ny *= cap / m
        rows[r, L0] = nx
        rows[r, L1] = ny
        px, py = nx - lx, ny - ly
    return (vax - ma * px, vay - ma * py, vaw - ia * (rax * py - ray * px), vbx + mb * px, vby + mb * py,
            vbw + ib * (rbx * py - rby * px))


@llvm_inline_njit
def solve_row(rows, r, warm, use_bias, jsoft, inv_h, vax, vay, vaw, vbx, vby, vbw, ma, ia, mb, ib, rax, ray, rbx, rby,
              dx, dy, qc, qs, a, b, dangle, fstate):
    """Row r of a joint (its type: ``_common``; a POINT row is ``solve_point``'s), the joint's geometry now
    given: anchors about the centres rA, rB, separation d, A's rotation so far (qc, qs); the angle changes
    (``dangle``) and the centres' (``fstate``) of bodies a and b are read by the rows that need them."""
    t = np.int64(rows[r, 0])
    if t == ROW_WELD or t == ROW_PRISM:
        rate, ms, isc = (jsoft[0], jsoft[1], jsoft[2]) if use_bias else (0.0, 1.0, 0.0)
        angle = rows[r, C0] + (dangle[b] - dangle[a])
        if t == ROW_WELD:
            return weld.solve_block(rows, r, warm, rate, ms, isc, vax, vay, vaw, vbx, vby, vbw, ma, ia, mb, ib, rax,
                                    ray, rbx, rby, dx, dy, angle)
        ux, uy = rows[r, UX], rows[r, UY]
        return prismatic.solve_axis(rows, r, warm, rate, ms, isc, vax, vay, vaw, vbx, vby, vbw, ma, ia, mb, ib,
                                    qc * ux - qs * uy, qs * ux + qc * uy, dx + rax, dy + ray, rbx, rby, dx, dy, angle)
    # a scalar row: its Jacobian (jA, jaw; jB, jbw) and error c
    if t == ROW_ANGLE:
        sa, sb = rows[r, SA], rows[r, SB]
        ax = ay = bx = by = 0.0
        aw, bw = sa, sb
        c = rows[r, C0] + sb * dangle[b] - sa * dangle[a]
    elif t == ROW_PULLEY:
        pax, pay = np.float64(fstate[a, DPX]), np.float64(fstate[a, DPY])
        pbx, pby = np.float64(fstate[b, DPX]), np.float64(fstate[b, DPY])
        # each anchor from its ground point: (c − g) at the start of the step, plus the centre's change and the
        # anchor's about the centre now
        gax = rax + pax - rows[r, UX]
        gay = ray + pay - rows[r, UY]
        gbx = rbx + pbx - rows[r, P0]
        gby = rby + pby - rows[r, P1]
        la = math.sqrt(gax * gax + gay * gay)
        lb = math.sqrt(gbx * gbx + gby * gby)
        uax, uay = (gax / la, gay / la) if la > 1e-12 else (0.0, 0.0)
        ubx, uby = (gbx / lb, gby / lb) if lb > 1e-12 else (0.0, 0.0)
        ratio = rows[r, SB]
        ax, ay, aw = uax, uay, cross(rax, ray, uax, uay)
        bx, by, bw = -ratio * ubx, -ratio * uby, -ratio * cross(rbx, rby, ubx, uby)
        c = rows[r, C0] - la - ratio * lb
    else:
        s = rows[r, SA]
        if t == ROW_LENGTH:
            length = math.sqrt(dx * dx + dy * dy)
            if length > 1e-12:
                ux, uy = dx / length, dy / length
            else:
                ux, uy = 1.0, 0.0
            c = s * (length - rows[r, C0])
            lax, lay = rax, ray
        else:
            # ROW_AXIS: the axis fixed in A (turned by A's rotation so far), or its left normal; A's lever reaches
            # from its centre to anchor B, since the axis turns with A
            ux0, uy0 = rows[r, UX], rows[r, UY]
            ux, uy = qc * ux0 - qs * uy0, qs * ux0 + qc * uy0
            if rows[r, SB] != 0.0:
                ux, uy = -uy, ux
            c = s * (ux * dx + uy * dy - rows[r, C0])
            lax, lay = dx + rax, dy + ray
        ax, ay, aw = s * ux, s * uy, s * cross(lax, lay, ux, uy)
        bx, by, bw = ax, ay, s * cross(rbx, rby, ux, uy)
    rows[r, FX] = bx
    rows[r, FY] = by
    return scalar_row(rows, r, warm, use_bias, jsoft, inv_h, vax, vay, vaw, vbx, vby, vbw, ma, ia, mb, ib, ax, ay, aw,
                      bx, by, bw, c)
