"""Plain point joints solved ``LANES`` at a time (``carom._simd``), as the contacts are.

A plain point joint is a revolute joint with no limit, motor or spring between two dynamic bodies: only its
point row (``_rows.solve_point`` with the rigid bias). It is the joint of chains, bridges, ropes and grids, and
the common case by far (Box2D's joint_grid has nothing else). Solved one at a time, each took about 35 ns per
sweep (a 2 × 2 block with a division, bound by latency: one joint's chain of dependent operations); 8 side by
side in single-precision vectors take about 6 ns each.

``_solve.joints_to_solve`` puts each colour's plain point joints first (a colour's joints touch disjoint
dynamic bodies, so their order within the colour changes no result); ``_solve.prepare_joints`` packs them,
``LANES`` consecutive joints of one colour to a bundle, into a table of vectors (``PB_*``: per lane the joint's
frame, its accumulated impulse and its velocity change in the substep; they get no generic rows), and the
overflow colour (whose joints share bodies) is never bundled. ``solve_point_bundles`` is
``_solve.solve_joints`` for a plain point joint, lane by lane in single precision (the precision the bodies'
velocities are held in during the solve): the same warm start and carried velocity change per mode.
``store_bundle_reactions`` writes their impulses and reactions to the joint table.

Empty lanes point at the solver's dummy body (at rest, never written) with unit masses, so they compute
finite numbers that nothing reads. The bundles depend only on the colouring, never on the thread count, and a
lane gives bitwise what the same operations in scalar single precision give: the results stay the same for
any number of threads."""
import numpy as np

from ..._jit import njit, llvm_inline_njit
from ..._simd import LANES, splat, load, store, gather_rows, scatter_rows
from .._layout import VX, VY, W, DPX, DPY, DC, DS
from . import revolute

#: a bundle's fields (each LANES floats): the frame (inverse masses and inertias, anchors about the centres at
#: the start of the step, cB − cA), the accumulated impulse (PB_LX, PB_LY), the velocity change applied in the
#: substep (PB_DV …: A's v, ω then B's; ``_solve``'s WARM_DV)
PB_MA, PB_IA, PB_MB, PB_IB, PB_RAX, PB_RAY, PB_RBX, PB_RBY, PB_DCX, PB_DCY, PB_LX, PB_LY, PB_DV = range(13)
PB_WIDTH = PB_DV + 6
#: the sweep modes (``_solve``'s)
_WARM_START, _SOLVE, _RELAX, _SOLVE_FIRST = 0, 1, 2, 3


@njit
def empty_bundles(pcount, dummy):
    """The bundles of the plain point joints (``pcount[c]`` of each colour c), every lane empty: (bundle start
    per colour, table (bundles, PB_WIDTH, LANES) float32, bodies (bundles, 2, LANES), which of them the bundle
    writes). ``_solve.prepare_joints`` fills the joints' lanes; an empty lane has the solver's dummy body
    (``dummy``) on both sides, unit masses and nothing to write."""
    colours = pcount.shape[0]
    pstart = np.zeros(colours + 1, np.int64)
    for c in range(colours):
        pstart[c + 1] = pstart[c] + (pcount[c] + LANES - 1) // LANES
    nb = pstart[colours]
    pb = np.zeros((nb, PB_WIDTH, LANES), np.float32)
    pb[:, PB_MA, :] = 1.0
    pb[:, PB_MB, :] = 1.0
    pbody = np.full((nb, 2, LANES), dummy, np.int64)
    pmove = np.zeros((nb, 2, LANES), np.bool_)
    return pstart, pb, pbody, pmove


@llvm_inline_njit
def _push(vax, vay, vaw, vbx, vby, vbw, ma, ia, mb, ib, rax, ray, rbx, rby, px, py):
    """The lanes' velocities after the impulse (px, py) on B at rB and its opposite on A at rA."""
    return (vax - ma * px, vay - ma * py, vaw - ia * (rax * py - ray * px), vbx + mb * px, vby + mb * py,
            vbw + ib * (rbx * py - rby * px))


@llvm_inline_njit
def carried_back(a, j, f, vax, vay, vaw, vbx, vby, vbw):
    """The lanes' velocities less the carried warm start, the velocity change kept in columns f … f + 5 of bundle
    j of ``a`` (a later substep's biased solve: ``_solve``'s module docstring). For the plain point joints'
    bundles and the revolute records' lane blocks alike."""
    return (vax - load(a, j, f), vay - load(a, j, f + 1), vaw - load(a, j, f + 2), vbx - load(a, j, f + 3),
            vby - load(a, j, f + 4), vbw - load(a, j, f + 5))


@llvm_inline_njit
def keep_change(a, j, f, add, dvax, dvay, dvaw, dvbx, dvby, dvbw):
    """The lanes' velocity change of a sweep into columns f … f + 5 of bundle j of ``a``: added to what they hold
    (``add``: a relax, or a biased pass that adds to the substep's), else in its place."""
    if add:
        dvax = dvax + load(a, j, f)
        dvay = dvay + load(a, j, f + 1)
        dvaw = dvaw + load(a, j, f + 2)
        dvbx = dvbx + load(a, j, f + 3)
        dvby = dvby + load(a, j, f + 4)
        dvbw = dvbw + load(a, j, f + 5)
    store(a, j, f, dvax)
    store(a, j, f + 1, dvay)
    store(a, j, f + 2, dvaw)
    store(a, j, f + 3, dvbx)
    store(a, j, f + 4, dvby)
    store(a, j, f + 5, dvbw)


@njit
def solve_point_bundles(mode, lo, hi, pb, pbody, pmove, fstate, jsoft):
    """One sweep (``mode``, as ``_solve.solve_joints``) over bundles lo … hi − 1: each lane's point block
    Ċ = vB + ωB × rB − vA − ωA × rA, K = (mA + mB)·I + IA·[rA]ᵀ[rA] + IB·[rB]ᵀ[rB],
    Δλ = −mass_scale·K⁻¹(Ċ + β·d) − impulse_scale·λ with the joint softness ``jsoft`` in the biased solve;
    rA, rB the anchors turned by the bodies' rotations so far and d from anchor A to anchor B (``_common``)."""
    carried = mode == _SOLVE
    warm_only = mode == _WARM_START
    if mode == _SOLVE or mode == _SOLVE_FIRST:
        rate, ms, isc = np.float32(jsoft[0]), np.float32(jsoft[1]), np.float32(jsoft[2])
    else:
        rate, ms, isc = np.float32(0.0), np.float32(1.0), np.float32(0.0)
    add = mode == _RELAX or mode == _SOLVE_FIRST
    one = splat(1.0)
    for j in range(lo, hi):
        sa = gather_rows(fstate, pbody, j, 0)
        sb = gather_rows(fstate, pbody, j, 1)
        vax, vay, vaw, vbx, vby, vbw = sa[VX], sa[VY], sa[W], sb[VX], sb[VY], sb[W]
        ma, ia, mb, ib = load(pb, j, PB_MA), load(pb, j, PB_IA), load(pb, j, PB_MB), load(pb, j, PB_IB)
        fx, fy = load(pb, j, PB_RAX), load(pb, j, PB_RAY)
        rax = sa[DC] * fx - sa[DS] * fy
        ray = sa[DS] * fx + sa[DC] * fy
        fx, fy = load(pb, j, PB_RBX), load(pb, j, PB_RBY)
        rbx = sb[DC] * fx - sb[DS] * fy
        rby = sb[DS] * fx + sb[DC] * fy
        lx, ly = load(pb, j, PB_LX), load(pb, j, PB_LY)
        if carried:
            # a later substep: the carried warm start taken back (``_solve``'s module docstring)
            vax, vay, vaw, vbx, vby, vbw = carried_back(pb, j, PB_DV, vax, vay, vaw, vbx, vby, vbw)
        vax0, vay0, vaw0, vbx0, vby0, vbw0 = vax, vay, vaw, vbx, vby, vbw
        if carried or warm_only:
            # the warm start: the accumulated impulse through today's Jacobian
            vax, vay, vaw, vbx, vby, vbw = _push(vax, vay, vaw, vbx, vby, vbw, ma, ia, mb, ib, rax, ray, rbx, rby, lx,
                                                 ly)
        if not warm_only:
            dx = load(pb, j, PB_DCX) + (sb[DPX] - sa[DPX]) + rbx - rax
            dy = load(pb, j, PB_DCY) + (sb[DPY] - sa[DPY]) + rby - ray
            cx = vbx - vbw * rby - vax + vaw * ray + rate * dx
            cy = vby + vbw * rbx - vay - vaw * rax + rate * dy
            k11 = ma + mb + ray * ray * ia + rby * rby * ib
            k12 = -ray * rax * ia - rby * rbx * ib
            k22 = ma + mb + rax * rax * ia + rbx * rbx * ib
            inv = one / (k11 * k22 - k12 * k12)
            nx = lx - ms * ((k22 * cx - k12 * cy) * inv) - isc * lx
            ny = ly - ms * ((k11 * cy - k12 * cx) * inv) - isc * ly
            store(pb, j, PB_LX, nx)
            store(pb, j, PB_LY, ny)
            vax, vay, vaw, vbx, vby, vbw = _push(vax, vay, vaw, vbx, vby, vbw, ma, ia, mb, ib, rax, ray, rbx, rby,
                                                 nx - lx, ny - ly)
        keep_change(pb, j, PB_DV, add, vax - vax0, vay - vay0, vaw - vaw0, vbx - vbx0, vby - vby0, vbw - vbw0)
        scatter_rows(fstate, pbody, pmove, j, 0, (vax, vay, vaw, sa[DPX]))
        scatter_rows(fstate, pbody, pmove, j, 1, (vbx, vby, vbw, sb[DPX]))


@njit
def store_bundle_reactions(jlist, jstart, pcount, pstart, pb, imp, reaction, inv_h):
    """The bundled joints' accumulated impulses back to the joint table (their warm start next step) and their
    reactions, the force λ/h on body B (``_solve.store_reactions`` for the others)."""
    for c in range(pcount.shape[0]):
        for k in range(pcount[c]):
            j = jlist[jstart[c] + k]
            u = pstart[c] + k // LANES
            q = k % LANES
            lx = np.float64(pb[u, PB_LX, q])
            ly = np.float64(pb[u, PB_LY, q])
            imp[j, revolute.PX] = lx
            imp[j, revolute.PY] = ly
            reaction[j, 0] = lx * inv_h
            reaction[j, 1] = ly * inv_h
            reaction[j, 2] = 0.0
