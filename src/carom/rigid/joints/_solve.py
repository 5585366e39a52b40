"""The joints' part of the step: which joints are solved, their rows (``prepare_joints``), the sweeps over them
(``solve_joints``, dispatching on the kind) and their reactions (``store_reactions``).

The joints are solved before the contacts of each sweep (as Box2D solves a colour's joints before its
contacts): in the first substep a warm start with last step's impulses, in every substep a biased solve and a
relax. They are coloured as the contacts are (``colour_joints``): the joints of one colour touch disjoint
dynamic bodies, so the threads share a colour's joints and the result does not depend on how. A later substep's warm start is the body's velocity change over the
substep before (``_solver._integrate_velocity``), which holds the joints' impulses as well as the contacts',
since every dynamic body of a solved joint is one the solver holds (``joint_solved``); each joint then swaps
its own part of it for a fresh warm start at the start of its biased solve (``solve_joints``). One thread in a
fixed order: the result is bitwise the same for any thread count."""
import numpy as np

from ..._jit import njit, borrowed
from .._layout import VX, VY, W, MOVE_SOLVED
from ._common import (MA, IA, MB, IB, RAX, RAY, RBX, RBY, DCX, DCY, ANG0, AA0, AB0, AXX, AXY, ROW_WIDTH, G_WIDTH,
                      WARM_DV, FRESH,
                      VAX, VAY, VAW, VBX, VBY, VBW, FILTER, DISTANCE, REVOLUTE, PRISMATIC, WHEEL, WELD, MOTOR, MOUSE,
                      ROTARY_LIMIT, ROTARY_SPRING, ANGULAR_MOTOR, RATCHET, GEAR, PULLEY, read_velocity, geometry)
from . import (distance, revolute, prismatic, wheel, weld, motor, mouse, rotary_limit, rotary_spring, angular_motor,
               ratchet, gear, pulley)

DYNAMIC = 2
#: colours 0 … OVERFLOW − 1 are solved in parallel, OVERFLOW in one thread (as the contacts': ``_solver``)
OVERFLOW = 63
#: the modes of a joint sweep: warm start, biased solve, relax
WARM_START, SOLVE, RELAX = 0, 1, 2


@njit
def joints_to_solve(joints, bodies):
    """The joints solved this step (active, not a filter, with at least one awake dynamic body), coloured: each
    takes, in joint order, the lowest colour that neither of its dynamic bodies uses yet, those that find none
    below OVERFLOW go to the overflow colour (solved in one thread). Returns (the joints sorted by colour, in
    joint order within a colour; the colour start offsets)."""
    kind, active, body = joints.kind, joints.active, joints.body
    bkind, asleep = bodies[7], bodies[16]
    J = kind.shape[0]
    NB = bkind.shape[0]
    used = np.zeros(NB, np.uint64)
    picked = np.empty(J, np.int64)
    colour = np.empty(J, np.int64)
    counts = np.zeros(OVERFLOW + 2, np.int64)
    n = 0
    for j in range(J):
        if not active[j] or kind[j] == FILTER:
            continue
        a = body[j, 0]
        b = body[j, 1]
        dyn_a = bkind[a] == DYNAMIC
        dyn_b = bkind[b] == DYNAMIC
        if not ((dyn_a and not asleep[a]) or (dyn_b and not asleep[b])):
            continue
        busy = (used[a] if dyn_a else np.uint64(0)) | (used[b] if dyn_b else np.uint64(0))
        c = 0
        while c < OVERFLOW and busy & (np.uint64(1) << np.uint64(c)):
            c += 1
        if c < OVERFLOW:
            bit = np.uint64(1) << np.uint64(c)
            if dyn_a:
                used[a] |= bit
            if dyn_b:
                used[b] |= bit
        picked[n] = j
        colour[n] = c
        counts[c + 1] += 1
        n += 1
    start = np.zeros(OVERFLOW + 2, np.int64)
    for c in range(OVERFLOW + 1):
        start[c + 1] = start[c] + counts[c + 1]
    fill = start[:OVERFLOW + 1].copy()
    out = np.empty(n, np.int64)
    for i in range(n):
        out[fill[colour[i]]] = picked[i]
        fill[colour[i]] += 1
    return out, start


@njit
def joint_solved(solved, jlist, joints, bodies):
    """The bodies the solver holds in single precision: those of solved contacts (``solved``) and the dynamic
    bodies of the solved joints."""
    if jlist.shape[0] == 0:
        return solved
    out = solved.copy()
    body, bkind = joints.body, bodies[7]
    for j in jlist:
        for e in range(2):
            b = body[j, e]
            if bkind[b] == DYNAMIC:
                out[b] = True
    return out


@njit
def prepare_joints(jlist, joints, bodies, h):
    """The step's rows of the joints in ``jlist`` (``_common``'s layout): the anchors about the centres of mass
    rA = R(θA)·(anchor − local centre), the inverse masses (0 for a body that is not dynamic), cB − cA, the
    angles, the axis in world coordinates; then each kind's own (``<kind>.prepare``)."""
    kind, body, local, param, imp = joints.kind, joints.body, joints.local, joints.param, joints.impulse
    com, angle, inv_mass, inv_inertia, local_center, bkind = (bodies[0], bodies[1], bodies[4], bodies[5], bodies[6],
                                                              bodies[7])
    J = kind.shape[0]
    rows = np.zeros((J, ROW_WIDTH))
    for j in jlist:
        a = body[j, 0]
        b = body[j, 1]
        ca, sa = np.cos(angle[a]), np.sin(angle[a])
        cb, sb = np.cos(angle[b]), np.sin(angle[b])
        lax = local[j, 0] - local_center[a, 0]
        lay = local[j, 1] - local_center[a, 1]
        lbx = local[j, 2] - local_center[b, 0]
        lby = local[j, 3] - local_center[b, 1]
        rows[j, MA] = inv_mass[a] if bkind[a] == DYNAMIC else 0.0
        rows[j, IA] = inv_inertia[a] if bkind[a] == DYNAMIC else 0.0
        rows[j, MB] = inv_mass[b] if bkind[b] == DYNAMIC else 0.0
        rows[j, IB] = inv_inertia[b] if bkind[b] == DYNAMIC else 0.0
        rows[j, RAX] = ca * lax - sa * lay
        rows[j, RAY] = sa * lax + ca * lay
        rows[j, RBX] = cb * lbx - sb * lby
        rows[j, RBY] = sb * lbx + cb * lby
        rows[j, DCX] = com[b, 0] - com[a, 0]
        rows[j, DCY] = com[b, 1] - com[a, 1]
        rows[j, ANG0] = angle[b] - angle[a] - param[j, 0]
        rows[j, AA0] = angle[a]
        rows[j, AB0] = angle[b]
        rows[j, AXX] = ca * local[j, 4] - sa * local[j, 5]
        rows[j, AXY] = sa * local[j, 4] + ca * local[j, 5]
        _prepare_kind(kind[j], j, param, imp, rows, h, com[a], com[b])
    return rows


@njit
def _prepare_kind(k, j, param, imp, rows, h, ca, cb):
    if k == DISTANCE:
        distance.prepare(j, param, imp, rows, h, ca, cb)
    elif k == REVOLUTE:
        revolute.prepare(j, param, imp, rows, h, ca, cb)
    elif k == PRISMATIC:
        prismatic.prepare(j, param, imp, rows, h, ca, cb)
    elif k == WHEEL:
        wheel.prepare(j, param, imp, rows, h, ca, cb)
    elif k == WELD:
        weld.prepare(j, param, imp, rows, h, ca, cb)
    elif k == MOTOR:
        motor.prepare(j, param, imp, rows, h, ca, cb)
    elif k == MOUSE:
        mouse.prepare(j, param, imp, rows, h, ca, cb)
    elif k == ROTARY_SPRING:
        rotary_spring.prepare(j, param, imp, rows, h, ca, cb)
    elif k == RATCHET:
        ratchet.prepare(j, param, imp, rows, h, ca, cb)
    elif k == PULLEY:
        pulley.prepare(j, param, imp, rows, h, ca, cb)


@njit
def solve_joints(mode, jlist, joints, rows, state, fstate, flags, dangle, jsoft, h, inv_h):
    """One sweep (``mode``: WARM_START, SOLVE or RELAX) over the joints of ``jlist``, in order: each joint's
    bodies' velocities are read, changed by its kind's solve and written back.

    The warm start of every substep but the first is the solver's carry (``_solver._integrate_velocity``): the
    bodies' whole velocity change over the substep before, which repeats each joint's impulses through the
    Jacobians they were applied with. A contact's Jacobian is fixed for the step; a joint's is not (its anchors
    turn with the bodies, a distance joint's axis follows the anchors), and the stale one is not harmless: a
    pendulum's rope pull, repeated along where the rope pointed a substep ago, has a component along the
    motion, and the swing gained 8 % of its energy per period (60 Hz, 4 substeps). So each joint records the
    velocity change it applied in the substep (``WARM_DV``), and at the start of the next substep's biased
    solve takes that carried part back and warm starts afresh with its accumulated impulses and today's
    Jacobians, as Box2D warm starts its joints in every substep."""
    v_owned = np.empty(6)
    g_owned = np.empty(G_WIDTH)
    # borrowed views (``carom._jit.borrowed``): the calls per joint below then take no references on the arrays
    # (an atomic increment and decrement per array per call: most of a joint's time without this)
    kind, body, param, imp = borrowed((joints.kind, joints.body, joints.param, joints.impulse))
    jlist, rows, state, fstate, flags, dangle, jsoft = borrowed((jlist, rows, state, fstate, flags, dangle, jsoft))
    v, g = borrowed((v_owned, g_owned))
    # (only read and written here, never passed on)
    v0 = np.empty(6)
    for j in jlist:
        a = body[j, 0]
        b = body[j, 1]
        v[VAX], v[VAY], v[VAW] = read_velocity(a, state, fstate, flags)
        v[VBX], v[VBY], v[VBW] = read_velocity(b, state, fstate, flags)
        geometry(j, rows, a, b, fstate, dangle, g)
        if mode == WARM_START:
            for e in range(6):
                rows[j, WARM_DV + e] = 0.0
        elif mode == SOLVE and rows[j, FRESH] == 0.0:
            # a later substep: the carried warm start replaced by a fresh one (docstring)
            for e in range(6):
                v[e] -= rows[j, WARM_DV + e]
                rows[j, WARM_DV + e] = 0.0
            for e in range(6):
                v0[e] = v[e]
            _solve_kind(kind[j], j, rows, param, imp, v, g, WARM_START, jsoft, h, inv_h)
            for e in range(6):
                rows[j, WARM_DV + e] = v[e] - v0[e]
        rows[j, FRESH] = 1.0 if mode == WARM_START else 0.0
        for e in range(6):
            v0[e] = v[e]
        _solve_kind(kind[j], j, rows, param, imp, v, g, mode, jsoft, h, inv_h)
        for e in range(6):
            rows[j, WARM_DV + e] += v[e] - v0[e]
        # only the bodies the solver holds are written: a static or kinematic body is only read
        if flags[a] & MOVE_SOLVED and rows[j, MA] + rows[j, IA] > 0.0:
            fstate[a, VX] = v[VAX]
            fstate[a, VY] = v[VAY]
            fstate[a, W] = v[VAW]
        if flags[b] & MOVE_SOLVED and rows[j, MB] + rows[j, IB] > 0.0:
            fstate[b, VX] = v[VBX]
            fstate[b, VY] = v[VBY]
            fstate[b, W] = v[VBW]


@njit
def _solve_kind(k, j, rows, param, imp, v, g, mode, jsoft, h, inv_h):
    if k == REVOLUTE:
        revolute.solve(j, rows, param, imp, v, g, mode, jsoft, h, inv_h)
    elif k == DISTANCE:
        distance.solve(j, rows, param, imp, v, g, mode, jsoft, h, inv_h)
    elif k == PRISMATIC:
        prismatic.solve(j, rows, param, imp, v, g, mode, jsoft, h, inv_h)
    elif k == WHEEL:
        wheel.solve(j, rows, param, imp, v, g, mode, jsoft, h, inv_h)
    elif k == WELD:
        weld.solve(j, rows, param, imp, v, g, mode, jsoft, h, inv_h)
    elif k == MOTOR:
        motor.solve(j, rows, param, imp, v, g, mode, jsoft, h, inv_h)
    elif k == MOUSE:
        mouse.solve(j, rows, param, imp, v, g, mode, jsoft, h, inv_h)
    elif k == ROTARY_LIMIT:
        rotary_limit.solve(j, rows, param, imp, v, g, mode, jsoft, h, inv_h)
    elif k == ROTARY_SPRING:
        rotary_spring.solve(j, rows, param, imp, v, g, mode, jsoft, h, inv_h)
    elif k == ANGULAR_MOTOR:
        angular_motor.solve(j, rows, param, imp, v, g, mode, jsoft, h, inv_h)
    elif k == RATCHET:
        ratchet.solve(j, rows, param, imp, v, g, mode, jsoft, h, inv_h)
    elif k == GEAR:
        gear.solve(j, rows, param, imp, v, g, mode, jsoft, h, inv_h)
    elif k == PULLEY:
        pulley.solve(j, rows, param, imp, v, g, mode, jsoft, h, inv_h)


@njit
def store_reactions(jlist, joints, rows, fstate, dangle, inv_h):
    """Each solved joint's reaction of the step: the force (on body B, at its anchor) and the torque its
    accumulated impulses stand for, λ/h (the impulse of the last substep over its length); zero for joints
    not solved (a sleeping pair, a disabled joint)."""
    kind, body, param, imp, reaction = joints.kind, joints.body, joints.param, joints.impulse, joints.reaction
    for j in range(kind.shape[0]):
        reaction[j, 0] = 0.0
        reaction[j, 1] = 0.0
        reaction[j, 2] = 0.0
    g = np.empty(G_WIDTH)
    for j in jlist:
        geometry(j, rows, body[j, 0], body[j, 1], fstate, dangle, g)
        fx, fy, t = _reaction_kind(kind[j], j, rows, param, imp, g)
        reaction[j, 0] = fx * inv_h
        reaction[j, 1] = fy * inv_h
        reaction[j, 2] = t * inv_h


@njit
def _reaction_kind(k, j, rows, param, imp, g):
    if k == REVOLUTE:
        return revolute.reaction(j, rows, param, imp, g)
    if k == DISTANCE:
        return distance.reaction(j, rows, param, imp, g)
    if k == PRISMATIC:
        return prismatic.reaction(j, rows, param, imp, g)
    if k == WHEEL:
        return wheel.reaction(j, rows, param, imp, g)
    if k == WELD:
        return weld.reaction(j, rows, param, imp, g)
    if k == MOTOR:
        return motor.reaction(j, rows, param, imp, g)
    if k == MOUSE:
        return mouse.reaction(j, rows, param, imp, g)
    if k == ROTARY_LIMIT:
        return rotary_limit.reaction(j, rows, param, imp, g)
    if k == ROTARY_SPRING:
        return rotary_spring.reaction(j, rows, param, imp, g)
    if k == ANGULAR_MOTOR:
        return angular_motor.reaction(j, rows, param, imp, g)
    if k == RATCHET:
        return ratchet.reaction(j, rows, param, imp, g)
    if k == GEAR:
        return gear.reaction(j, rows, param, imp, g)
    return pulley.reaction(j, rows, param, imp, g)
