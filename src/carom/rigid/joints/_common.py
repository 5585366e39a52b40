"""What every joint kind shares: the kind codes, the layout of the joint table and of the step's joint rows, and
the compiled pieces each kind's solve is made of.

A joint is solved as Box2D v3 solves it, inside the soft step: prepared once per step (``prepare``: anchors
about the centres of mass, masses, spring softness), then in every substep warm started, solved with a soft
bias and relaxed without it. Its position error is tracked inside the step from the bodies' position and
rotation changes (the solver's rows, ``_layout``), so nothing is recomputed from the poses between substeps:
with rA, rB the anchors about the centres of mass at the start of the step, ΔcA, ΔqA the change of A's centre
and rotation so far (and likewise for B),

    d = (cB − cA) + (ΔcB − ΔcA) + ΔqB·rB − ΔqA·rA      (from anchor A to anchor B)
    θ = (θB − θA − θref) + (ΔθB − ΔθA)                  (the relative angle)

Every constraint is a row of the form Ċ = jB·vB + jbw·ωB − jA·vA − jaw·ωA with one accumulated impulse λ
(``solve_row``), or the 2-d point constraint d = 0 (``solve_point``). A row is one of

- rigid (a joint's own bond): bias β·C with the joint softness (frequency ``JOINT_HERTZ``, damping ratio
  ``JOINT_DAMPING_RATIO``, as Box2D's joint softness) in the biased solve, none in the relax;
- a limit (λ ≥ 0): speculative while apart (bias C/h: the bodies may close the gap, not more), rigid once
  crossed;
- a spring of the user's frequency f and damping ratio ζ, with the bias, mass scale and impulse scale of
  ``soft``, in the relax with its error at the biased solve (``spring_bias``);
- a motor: bias −speed, λ clamped to ± the maximum force (or torque) × h.

The λ are impulses per substep, so a joint's reaction force is λ/h (``reaction``)."""
import math
from collections import namedtuple

import numpy as np

from ..._jit import njit
from .._layout import VX, VY, W, DPX, DPY, DC, DS, MOVE_SOLVED

#: joint kind codes (the table's ``kind``)
(FILTER, DISTANCE, REVOLUTE, PRISMATIC, WHEEL, WELD, MOTOR, MOUSE, ROTARY_LIMIT, ROTARY_SPRING, ANGULAR_MOTOR,
 RATCHET, GEAR, PULLEY) = range(14)
KIND_COUNT = 14

#: the joint table as the step sees it: per joint its kind code, whether it is solved (alive and enabled), its
#: two bodies, and the columns below
JointTable = namedtuple("JointTable", "kind active body local param impulse reaction")

#: the joint table's columns: ``local`` holds anchor A and anchor B in their bodies' frames (from the body
#: origin) and an axis in A's frame; ``param`` the kind's settings (each kind's module names its columns);
#: ``impulse`` the accumulated impulses, kept from step to step (warm starting)
LOCAL_WIDTH = 6
PARAM_WIDTH = 16
IMPULSE_WIDTH = 6

#: the step's joint rows: inverse masses and inertias (0 for a body that is not dynamic), anchors about the
#: centres of mass at the start of the step (RAX … RBY), cB − cA (DCX, DCY), θB − θA − θref (ANG0), the start
#: angles (AA0, AB0), the axis in world coordinates at the start of the step (AXX, AXY); from K0 on the kind's
#: own (springs' softness and the like)
MA, IA, MB, IB, RAX, RAY, RBX, RBY, DCX, DCY, ANG0, AA0, AB0, AXX, AXY = range(15)
K0 = 15
#: after the kind's own columns: the velocity change (A's v, ω then B's, in ``VAX`` … order) the joint has
#: applied in the current substep (WARM_DV …), and whether this substep's warm start was a sweep of its own
#: (FRESH: the first substep's) rather than the solver's carried one (``_solve.solve_joints``)
WARM_DV = K0 + 9
FRESH = WARM_DV + 6
#: the errors of the joint's user springs at the start of the substep's biased solve (``spring_bias``,
#: ``spring_point``: an angle or length, and a point's 2-d separation), for its relax
SPRING_C = FRESH + 1
#: and the fraction α of each spring's stiffness that is implicit (``soft``), set by ``set_soft``
SPRING_ALPHA = SPRING_C + 3
ROW_WIDTH = SPRING_ALPHA + 3

#: the current geometry a kind's solve gets (``geometry``): anchors about the centres of mass, separation
#: d (anchor A to anchor B), relative angle, A's rotation since the start of the step (cos, sin), the absolute
#: angles, the centres' changes since the start of the step
G_RAX, G_RAY, G_RBX, G_RBY, G_DX, G_DY, G_ANGLE, G_QC, G_QS, G_TA, G_TB, G_CAX, G_CAY, G_CBX, G_CBY = range(15)
G_WIDTH = 15

#: where a joint's velocities sit in the scratch ``v`` (A's then B's)
VAX, VAY, VAW, VBX, VBY, VBW = range(6)

INF = np.inf


@njit
def soft(hertz, zeta, h):
    """(bias rate, mass scale, impulse scale, α) of a user spring of frequency ``hertz`` and damping ratio
    ``zeta`` over a substep h; hertz = 0 is rigid (1, 0 scales, no bias). The biased solve with these gives, for
    a row of effective mass m (ω = 2πf, k = mω², c = 2mζω, x the error at the start of the substep, v the
    velocity before the row's impulse, v' after it):

        m·v' = m·v − h·k·(x + α·h·v') − h·c·v'

    the damping implicit, the stiffness implicit by the fraction α = min(1, (hω)²): β = ω/(2ζ + αhω), mass
    scale = hω(2ζ + αhω)/(1 + hω(2ζ + αhω)), impulse scale = 1/(1 + hω(2ζ + αhω)). (The relax solves it once
    more: ``spring_bias``.)

    Why not α = 1 throughout (Box2D v3's b2MakeSoft, the backward Euler step): it damps the spring by a factor
    (1 + (hω)²)^(−½) per substep whatever ζ says (and Box2D's relax, a second such step, as much again): a 1 Hz
    spring with ζ = 0 lost 15 % of its amplitude per period at 60 Hz and 4 substeps, and one with ζ = 0.1
    decayed 15 % faster than e^(−2πζ/√(1−ζ²)). With α < 1 the loss per substep is (1 + α(hω)²)^(−½): α = (hω)²
    makes it (hω)⁴/2, nothing that can be seen below some tens of hertz (a 1 Hz spring keeps 0.99994 of its
    amplitude per period), and the step of a lone spring stays stable for any stiffness: it asks for
    α ≥ ½ − 2/(hω)², and α = 1 from hω = 1 on."""
    if hertz == 0.0:
        return 0.0, 1.0, 0.0, 1.0
    omega = 2.0 * math.pi * hertz
    w = h * omega
    alpha = min(1.0, w * w)
    a1 = 2.0 * zeta + alpha * w
    a2 = w * a1
    a3 = 1.0 / (1.0 + a2)
    return omega / a1, a2 * a3, a3, alpha


@njit
def set_soft(rows, j, col, slot, hertz, zeta, h):
    """A user spring's softness (``soft``) into rows[j, col:col+3], its α into rows[j, SPRING_ALPHA + slot] (slot
    0 an angle's or a length's spring, 1 a point's)."""
    rows[j, col], rows[j, col + 1], rows[j, col + 2], rows[j, SPRING_ALPHA + slot] = soft(hertz, zeta, h)


@njit
def rigid_bias(c, use_bias, jsoft):
    """(bias, mass scale, impulse scale) of a rigid constraint with error c: the joint softness in the biased
    solve, nothing in the relax."""
    if use_bias:
        return jsoft[0] * c, jsoft[1], jsoft[2]
    return 0.0, 1.0, 0.0


@njit
def limit_bias(c, use_bias, jsoft, inv_h):
    """(bias, mass scale, impulse scale) of a one-sided limit with margin c (c ≥ 0 allowed): while apart a
    speculative bias c/h lets the bodies close the gap in this substep but not cross it; once crossed, the
    rigid bias."""
    if c > 0.0:
        return c * inv_h, 1.0, 0.0
    return rigid_bias(c, use_bias, jsoft)


@njit
def spring_bias(c, mode, rows, j, col, slot):
    """(bias, mass scale, impulse scale) of a user spring with error c, whose softness ``set_soft`` stored at
    rows[j, col:col+3]. The biased solve (mode 1) keeps c at rows[j, SPRING_C + slot]; the relax (mode 2)
    solves the spring again with the error at the start of the substep moved by α (``soft``) of the substep's
    motion: c0 + α·(c − c0).

    Why again: one solve per substep is ``soft``'s step for a spring alone, but several springs on one body (a
    node of a soft body, a star of springs) are solved one after the other, and one pass of that is not
    enough for stiff ones; the relax is a second pass, which leaves a lone spring's impulse as it is.
    Why not with the error after the motion, as Box2D's relax does: that second solve is then a second
    implicit step, which doubles the spring's numerical damping (a 1 Hz spring of ζ = 0 lost 15 % of its
    amplitude per period). Moved by α it is so only for the stiff springs (α = 1: Box2D's relax, and its
    stability: 32 springs of 60 Hz on one body blew up with c0 alone), and not at all for the soft ones
    (α = (hω)², 7e-4 for 1 Hz at 240 Hz)."""
    if mode == 1:
        rows[j, SPRING_C + slot] = c
    else:
        c0 = rows[j, SPRING_C + slot]
        c = c0 + rows[j, SPRING_ALPHA + slot] * (c - c0)
    return c * rows[j, col], rows[j, col + 1], rows[j, col + 2]


@njit
def spring_point(mode, rows, j, g, col):
    """(bias rate, mass scale, impulse scale) of a point spring (``solve_point`` with the softness at
    rows[j, col:col+3]), its separation d in ``g`` kept by the biased solve and moved for the relax as
    ``spring_bias`` moves an error (slot 1: d at SPRING_C + 1 and + 2)."""
    if mode == 1:
        rows[j, SPRING_C + 1] = g[G_DX]
        rows[j, SPRING_C + 2] = g[G_DY]
    else:
        alpha = rows[j, SPRING_ALPHA + 1]
        g[G_DX] = rows[j, SPRING_C + 1] + alpha * (g[G_DX] - rows[j, SPRING_C + 1])
        g[G_DY] = rows[j, SPRING_C + 2] + alpha * (g[G_DY] - rows[j, SPRING_C + 2])
    return rows[j, col], rows[j, col + 1], rows[j, col + 2]


@njit
def solve_row(v, rows, j, ax, ay, aw, bx, by, bw, lam, bias, mass_scale, impulse_scale, lo, hi):
    """One scalar constraint Ċ = (bx, by)·vB + bw·ωB − (ax, ay)·vA − aw·ωA: the impulse
    Δλ = −m·mass_scale·(Ċ + bias) − impulse_scale·λ, m = 1/(mA|a|² + IA·aw² + mB|b|² + IB·bw²), with the
    accumulated λ clamped to [lo, hi]; applied to the velocities in ``v``. Returns the new λ."""
    k = (rows[j, MA] * (ax * ax + ay * ay) + rows[j, IA] * aw * aw + rows[j, MB] * (bx * bx + by * by)
         + rows[j, IB] * bw * bw)
    if k <= 0.0:
        return lam
    cdot = bx * v[VBX] + by * v[VBY] + bw * v[VBW] - ax * v[VAX] - ay * v[VAY] - aw * v[VAW]
    new = lam - mass_scale * (cdot + bias) / k - impulse_scale * lam
    new = min(max(new, lo), hi)
    apply_row(v, rows, j, ax, ay, aw, bx, by, bw, new - lam)
    return new


@njit
def apply_row(v, rows, j, ax, ay, aw, bx, by, bw, d):
    """The impulse d of a scalar row (``solve_row``) applied to the velocities in ``v``."""
    ma, ia, mb, ib = rows[j, MA], rows[j, IA], rows[j, MB], rows[j, IB]
    v[VAX] -= ma * d * ax
    v[VAY] -= ma * d * ay
    v[VAW] -= ia * d * aw
    v[VBX] += mb * d * bx
    v[VBY] += mb * d * by
    v[VBW] += ib * d * bw


@njit
def solve_point(v, rows, j, g, imp, i0, bias_rate, mass_scale, impulse_scale, max_impulse):
    """The point constraint d = 0 (anchor B on anchor A) as one 2-d block:
    Ċ = vB + ωB × rB − vA − ωA × rA, K = (mA + mB)·I + IA·[rA]ᵀ[rA] + IB·[rB]ᵀ[rB],
    Δλ = −mass_scale·K⁻¹(Ċ + β·d) − impulse_scale·λ; with ``max_impulse`` finite the accumulated λ keeps
    |λ| ≤ max_impulse (a mouse or motor joint's force limit × h). λ is imp[j, i0], imp[j, i0 + 1]."""
    ma, ia, mb, ib = rows[j, MA], rows[j, IA], rows[j, MB], rows[j, IB]
    rax, ray, rbx, rby = g[G_RAX], g[G_RAY], g[G_RBX], g[G_RBY]
    cx = v[VBX] - v[VBW] * rby - v[VAX] + v[VAW] * ray
    cy = v[VBY] + v[VBW] * rbx - v[VAY] - v[VAW] * rax
    cx += bias_rate * g[G_DX]
    cy += bias_rate * g[G_DY]
    k11 = ma + mb + ray * ray * ia + rby * rby * ib
    k12 = -ray * rax * ia - rby * rbx * ib
    k22 = ma + mb + rax * rax * ia + rbx * rbx * ib
    det = k11 * k22 - k12 * k12
    if det == 0.0:
        return
    bx = (k22 * cx - k12 * cy) / det
    by = (k11 * cy - k12 * cx) / det
    lx, ly = imp[j, i0], imp[j, i0 + 1]
    nx = lx - mass_scale * bx - impulse_scale * lx
    ny = ly - mass_scale * by - impulse_scale * ly
    if max_impulse < INF:
        m = math.sqrt(nx * nx + ny * ny)
        if m > max_impulse:
            nx *= max_impulse / m
            ny *= max_impulse / m
    imp[j, i0] = nx
    imp[j, i0 + 1] = ny
    apply_point(v, rows, j, g, nx - lx, ny - ly)


@njit
def apply_point(v, rows, j, g, px, py):
    """The impulse (px, py) at the anchors: −P on A at rA, +P on B at rB."""
    ma, ia, mb, ib = rows[j, MA], rows[j, IA], rows[j, MB], rows[j, IB]
    v[VAX] -= ma * px
    v[VAY] -= ma * py
    v[VAW] -= ia * (g[G_RAX] * py - g[G_RAY] * px)
    v[VBX] += mb * px
    v[VBY] += mb * py
    v[VBW] += ib * (g[G_RBX] * py - g[G_RBY] * px)


@njit
def axis_now(rows, j, g):
    """The joint's axis (fixed in A) now: A's rotation since the start of the step applied to the start axis."""
    ux, uy = rows[j, AXX], rows[j, AXY]
    return g[G_QC] * ux - g[G_QS] * uy, g[G_QS] * ux + g[G_QC] * uy


@njit
def axis_frame(rows, j, g):
    """A prismatic or wheel joint's rows now: the axis u (fixed in A, ``axis_now``), its left normal p, and the
    angular parts of the rows along u and along p, (d + rA) × u, rB × u, (d + rA) × p, rB × p: A's lever arm
    reaches from its centre to anchor B, since the axis turns with A."""
    ux, uy = axis_now(rows, j, g)
    px, py = -uy, ux
    ax, ay = g[G_DX] + g[G_RAX], g[G_DY] + g[G_RAY]
    bx, by = g[G_RBX], g[G_RBY]
    return ux, uy, px, py, ax * uy - ay * ux, bx * uy - by * ux, ax * py - ay * px, bx * py - by * px


@njit
def cross(ax, ay, bx, by):
    return ax * by - ay * bx


@njit
def read_velocity(b, state, fstate, flags):
    """Body b's velocity as the solver holds it: single precision for a body it solves, else double."""
    if flags[b] & MOVE_SOLVED:
        return np.float64(fstate[b, VX]), np.float64(fstate[b, VY]), np.float64(fstate[b, W])
    return state[b, VX], state[b, VY], state[b, W]


@njit
def geometry(j, rows, a, b, fstate, dangle, g):
    """The joint's current geometry (``G_*``) in ``g``, from the rows and the bodies' changes so far."""
    ca, sa = np.float64(fstate[a, DC]), np.float64(fstate[a, DS])
    cb, sb = np.float64(fstate[b, DC]), np.float64(fstate[b, DS])
    rax = ca * rows[j, RAX] - sa * rows[j, RAY]
    ray = sa * rows[j, RAX] + ca * rows[j, RAY]
    rbx = cb * rows[j, RBX] - sb * rows[j, RBY]
    rby = sb * rows[j, RBX] + cb * rows[j, RBY]
    g[G_RAX] = rax
    g[G_RAY] = ray
    g[G_RBX] = rbx
    g[G_RBY] = rby
    pax, pay = np.float64(fstate[a, DPX]), np.float64(fstate[a, DPY])
    pbx, pby = np.float64(fstate[b, DPX]), np.float64(fstate[b, DPY])
    g[G_DX] = rows[j, DCX] + (pbx - pax) + rbx - rax
    g[G_DY] = rows[j, DCY] + (pby - pay) + rby - ray
    g[G_CAX] = pax
    g[G_CAY] = pay
    g[G_CBX] = pbx
    g[G_CBY] = pby
    da = dangle[a]
    db = dangle[b]
    g[G_ANGLE] = rows[j, ANG0] + (db - da)
    g[G_QC] = ca
    g[G_QS] = sa
    g[G_TA] = rows[j, AA0] + da
    g[G_TB] = rows[j, AB0] + db
