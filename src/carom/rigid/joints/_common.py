"""What every joint kind shares: the kind codes, the layout of the joint table, and the step's generic
constraint rows, which each kind emits once per step (``<kind>.emit``) and one solver sweeps (``_rows``,
``_solve``) without knowing the kinds.

A joint is solved as Box2D v3 solves it, inside the soft step: prepared once per step (anchors about the centres
of mass, masses, spring softness), then in every substep warm started, solved with a soft bias and relaxed
without it. Its position error is tracked inside the step from the bodies' position and rotation changes (the
solver's rows, ``_layout``), so nothing is recomputed from the poses between substeps: with rA, rB the anchors
about the centres of mass at the start of the step, ΔcA, ΔqA the change of A's centre and rotation so far (and
likewise for B),

    d = (cB − cA) + (ΔcB − ΔcA) + ΔqB·rB − ΔqA·rA      (from anchor A to anchor B)
    θ = (θB − θA − θref) + (ΔθB − ΔθA)                  (the relative angle)

Every kind is a short list of rows of a few generic types (``ROW_*``), each with a bias mode (``BIAS_*``), its
impulse bounds and its accumulated impulse(s):

- POINT: the 2-d point constraint d = 0 (anchor B on anchor A) as one block, its accumulated impulse optionally
  capped in length (a mouse or motor joint's force × h);
- ANGLE: Ċ = sb·ωB − sa·ωA, C = c0 + sb·ΔθB − sa·ΔθA (a relative angle's limit, motor, spring, a gear's ratio,
  a ratchet's direction, a weld's or motor joint's angle);
- AXIS: along an axis fixed in A (or its left normal), Jacobian jA = jB = s·u, jaw = s·(d + rA) × u,
  jbw = s·rB × u, C = s·(u·d − c0) (prismatic and wheel joints);
- LENGTH: along d/|d|, jaw = s·rA × u, jbw = s·rB × u, C = s·(|d| − c0) (distance joints);
- PULLEY: a pulley's rope, C = constant − |pA − gA| − ratio·|pB − gB|;
- WELD: a rigid weld's point and angle as one 3-d block (``weld.solve_block``);
- PRISM: a prismatic joint's normal row and angle as one 2-d block (``prismatic.solve_axis``).

The bias modes:

- RIGID (a joint's own bond): bias β·C with the joint softness (frequency ``JOINT_HERTZ``, damping ratio
  ``JOINT_DAMPING_RATIO``, as Box2D's joint softness) in the biased solve, none in the relax;
- LIMIT (λ ≥ 0): speculative while apart (bias C/h: the bodies may close the gap, not more), rigid once
  crossed;
- SPRING of the user's frequency f and damping ratio ζ, with the bias, mass scale and impulse scale of
  ``soft``, in the relax with its error at the biased solve (``_rows.bias_of``);
- MOTOR: bias −speed (the row's c0), λ within its bounds (± the maximum force or torque × h);
- CORRECT (a motor joint's): bias ``correction_factor``/h · C, in both sweeps.

The λ are impulses per substep, so a joint's reaction force is λ/h."""
import math
from collections import namedtuple

import numpy as np

from ..._jit import njit

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

#: the step's frame of each solved joint (in solve order): inverse masses and inertias (0 for a body that is not
#: dynamic), the anchors about the centres of mass at the start of the step (RAX … RBY), cB − cA (DCX, DCY), the
#: velocity change (A's v, ω then B's) the joint has applied in the current substep (WARM_DV …: ``_solve``)
MA, IA, MB, IB, RAX, RAY, RBX, RBY, DCX, DCY = range(10)
WARM_DV = 10
FRAME_WIDTH = 16

#: the row types and bias modes (module docstring)
#: (floats, as the row table stores them: the emitters pass them to ``add_row``, which an integer constant would
#: compile once for each value, a constant being typed as its value: add_row was compiled 42 times, 10 s)
ROW_POINT, ROW_ANGLE, ROW_AXIS, ROW_LENGTH, ROW_PULLEY, ROW_WELD, ROW_PRISM = 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0
BIAS_RIGID, BIAS_LIMIT, BIAS_SPRING, BIAS_MOTOR, BIAS_CORRECT = 0.0, 1.0, 2.0, 3.0, 4.0

#: a row's columns. The first cache line is all a rigid point row reads: its type, bias mode, the joint-table
#: column of its first impulse (SLOT), its accumulated impulses (L0 … L2: one, or a point's two, or a weld
#: block's three), its bounds (LO, HI; a point's cap on |λ| in HI). Then: the error's constant part (C0; a
#: motor's bias −speed), the angle factors or an axis row's sign (SA) and normal flag (SB), the axis at the
#: start of the step (UX, UY), the last linear Jacobian of body B (FX, FY: the reaction's direction), a spring's
#: softness (BETA, MS, ISC, ALPHA; a correction's rate in BETA), its error(s) at the biased solve (CS0, CS1),
#: and a pulley's second ground point (P0, P1)
(TYPE, BIAS, SLOT, L0, L1, L2, LO, HI, C0, SA, SB, UX, UY, FX, FY, BETA, MS, ISC, ALPHA, CS0, CS1, P0, P1,
 ROW_PAD) = range(24)
ROW_WIDTH = 24

#: the most rows a joint of each kind emits (by kind code), for the step's row table
MAX_ROWS = np.array([0, 4, 5, 5, 5, 2, 2, 1, 2, 1, 1, 1, 1, 1], np.int64)

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
    more: ``_rows.bias_of``.)

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
    if a1 == 0.0:
        # (ζ = 0 and a frequency so low that α·hω underflows, 1e-150 Hz or less: no stiffness and no damping. The
        # scales' limit as ω → 0, where β below would be 0 / 0: no bias, no mass, the impulse kept at 0)
        return 0.0, 0.0, 1.0, alpha
    a2 = w * a1
    a3 = 1.0 / (1.0 + a2)
    return omega / a1, a2 * a3, a3, alpha


@njit
def add_row(rows, r, typ, bias, imp, j, slot, lo, hi, c0, sa, sb, hertz, zeta, h):
    """Row r of the step's row table: type, bias mode, its accumulated impulse(s) from the joint table
    (imp[j, slot …]: a point's two, a weld block's three, a prism block's two), bounds, error constant, factors,
    and a spring's softness (``soft``, for the SPRING mode; else unused). Returns r + 1. (Every argument but
    the arrays, j and r a float: see ROW_POINT.)"""
    n = 2 if typ == ROW_POINT or typ == ROW_PRISM else (3 if typ == ROW_WELD else 1)
    first = np.int64(slot)
    for f in range(ROW_WIDTH):
        rows[r, f] = 0.0
    rows[r, TYPE] = typ
    rows[r, BIAS] = bias
    rows[r, SLOT] = slot
    for k in range(n):
        rows[r, L0 + k] = imp[j, first + k]
    rows[r, LO] = lo
    rows[r, HI] = hi
    rows[r, C0] = c0
    rows[r, SA] = sa
    rows[r, SB] = sb
    if bias == BIAS_SPRING:
        rows[r, BETA], rows[r, MS], rows[r, ISC], rows[r, ALPHA] = soft(hertz, zeta, h)
    return r + 1


@njit
def cross(ax, ay, bx, by):
    return ax * by - ay * bx


#: what a kind's ``emit`` gets of its joint besides its settings (the scratch ``g``): θB − θA − θref at the start
#: of the step, the absolute angles, the centres of mass, IA + IB (0: neither body can turn) and the axis (local
#: column 4, 5) in world coordinates
G_ANG0, G_TA, G_TB, G_CAX, G_CAY, G_CBX, G_CBY, G_TURN, G_AXX, G_AXY = range(10)
G_WIDTH = 10
