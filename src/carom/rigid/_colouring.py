"""Graph colouring of the contacts (the prepare stage's first part): contacts of one colour touch disjoint
dynamic bodies, so a colour's bundles are solved in parallel; a kept colouring is reused when the pairs and the
bodies' flags are the step's. The colouring is kept in the contact table (``ContactTable``'s last fields, from
``perm`` on: ``with_colouring``).
"""
import numpy as np

from .._jit import njit, trailing_zeros
from .._simd import LANES
from ._layout import DYNAMIC, KEY_SHIFT, KEY_MASK, CONTACT_NAMES, ContactTable
from ._contact_rows import OVERFLOW


#: a parallel colour's contacts are grouped two-point first in blocks of this many (``colour_contacts``): a
#: whole number of bundles, so that every bundle's first lane has the most points of its bundle, and small
#: enough that each thread's share of a colour stays nearly a run of keys
COLOUR_BLOCK = 4 * LANES


@njit
def colour_contacts(keys, c_count, c_sensor, shape_body, kind, asleep):
    """Select the contacts to solve and colour them, in one pass in key order: a contact is solved when it is
    no sensor, has points and at least one awake dynamic body; greedily, each takes the lowest colour that
    neither of its dynamic bodies uses yet. Returns (the solved contacts sorted by colour, their body pairs
    in that order, colour start offsets, and per body whether it is a dynamic body of a solved contact: the
    bodies whose velocity the solver holds, ``_velocity``; one more entry, for the dummy body of empty
    lanes).

    Inside each parallel colour the contacts are in key order, except that within each block of
    ``COLOUR_BLOCK`` of them the two-point contacts come first, so that bundles of one-point contacts
    (circles, a polygon's corner) solve one point instead of two; the order inside a colour changes no
    result, since its contacts touch disjoint bodies. Key order keeps each thread's share of a colour (a run
    of its bundles, ``_sweep_share``) to nearby bodies, mostly the same ones from colour to colour; with
    all of a colour's two-point contacts first, one thread of two took them and the other the one-point
    contacts, each spread over the whole scene, and the bodies' rows went back and forth between the cores
    at every colour (the smash's solve took 0.66 ms with two threads against 0.53 with one; 0.47 now). The
    overflow colour, whose contacts share bodies, keeps key order.

    The lowest free colour is the lowest zero bit of ``busy``, found with one ``trailing_zeros``; no colour
    sets bit OVERFLOW, so it is at most OVERFLOW. A loop over the colours, one branch per busy colour, took
    0.22 ms for smash's 15k contacts (0.12 ms now); pyramids, whose colours the branch predictor guesses,
    took 0.13 ms either way (15k contacts). The pairs are written here in colour order, so that the rows
    read them in sequence, not contact by contact from the whole table."""
    K = keys.shape[0]
    NB = kind.shape[0]
    used = np.zeros(NB, np.uint64)
    solved = np.zeros(NB + 1, np.bool_)
    order = np.empty(K, np.int64)
    ends = np.empty((K, 2), np.int64)
    colour = np.empty(K, np.int64)
    counts = np.zeros(OVERFLOW + 2, np.int64)
    one = np.uint64(1)
    none = np.uint64(0)
    all_ones = ~none
    n = 0
    for k in range(K):
        if c_count[k] == 0 or c_sensor[k]:
            continue
        # (the bodies' rows unsigned: no check for negative indices, ``carom._jit.index_range``)
        a = np.uint64(shape_body[np.uint64(keys[k] >> KEY_SHIFT)])
        b = np.uint64(shape_body[np.uint64(keys[k] & KEY_MASK)])
        dyn_a = kind[a] == DYNAMIC
        dyn_b = kind[b] == DYNAMIC
        if not ((dyn_a and not asleep[a]) or (dyn_b and not asleep[b])):
            continue
        # without branches: the masks are all ones for a dynamic body, zero otherwise (only dynamic bodies
        # have colours), and the overflow colour sets no bit
        mask_a = all_ones if dyn_a else none
        mask_b = all_ones if dyn_b else none
        used_a = used[a]
        busy = (used_a & mask_a) | (used[b] & mask_b)
        c = np.int64(trailing_zeros(~busy))
        bit = (one << np.uint64(c)) & ~(one << np.uint64(OVERFLOW))
        used[a] = used_a | (bit & mask_a)
        used[b] = used[b] | (bit & mask_b)
        solved[a] = solved[a] | dyn_a
        solved[b] = solved[b] | dyn_b
        counts[c + 1] += 1
        order[n] = k
        ends[n, 0] = a
        ends[n, 1] = b
        colour[n] = c
        n += 1
    # (plain loops rather than cumsum and slices: less to compile)
    start = np.zeros(OVERFLOW + 2, np.int64)
    fill = np.empty(OVERFLOW + 1, np.int64)
    for c in range(OVERFLOW + 1):
        start[c + 1] = start[c] + counts[c + 1]
        fill[c] = start[c]
    perm = np.empty(n, np.int64)
    pair = np.empty((n, 2), np.int64)
    for i in range(n):
        c = colour[i]
        r = fill[c]
        fill[c] = r + 1
        perm[r] = order[i]
        pair[r, 0] = ends[i, 0]
        pair[r, 1] = ends[i, 1]
    # each block of a parallel colour: its two-point contacts first, each group still in key order
    one_perm = np.empty(COLOUR_BLOCK, np.int64)
    one_pair = np.empty((COLOUR_BLOCK, 2), np.int64)
    for c in range(OVERFLOW):
        for lo in range(start[c], start[c + 1], COLOUR_BLOCK):
            hi = min(lo + COLOUR_BLOCK, start[c + 1])
            w = lo
            t = 0
            for i in range(lo, hi):
                if c_count[perm[i]] == 2:
                    perm[w] = perm[i]
                    pair[w, 0] = pair[i, 0]
                    pair[w, 1] = pair[i, 1]
                    w += 1
                else:
                    one_perm[t] = perm[i]
                    one_pair[t, 0] = pair[i, 0]
                    one_pair[t, 1] = pair[i, 1]
                    t += 1
            for i in range(t):
                perm[w + i] = one_perm[i]
                pair[w + i, 0] = one_pair[i, 0]
                pair[w + i, 1] = one_pair[i, 1]
    return perm, pair, start, solved


#: the number of the contact table's fields before the colouring (``ContactTable``: the narrow phase's
#: ``NarrowTable``)
COLOURING = len(CONTACT_NAMES)


@njit
def with_colouring(contacts, solver):
    """The contact table a step leaves (``ContactTable``): the narrow phase's (``contacts``) with the colouring it
    was solved with (of ``solver``, the prepare stage's ``SolverTable``), kept for the next step (``prepare_stage``)."""
    return ContactTable(contacts.keys, contacts.count, contacts.ids, contacts.normal_impulse,
                        contacts.tangent_impulse, contacts.normal, contacts.points, contacts.separation,
                        contacts.touching, contacts.sensor, contacts.cache, contacts.step_impulse,
                        solver.perm, solver.pair, solver.colour_start, solver.solved, solver.body_flags)


@njit
def body_flags(kind, asleep):
    """What the colouring reads of each body: 1 if dynamic, + 2 if asleep."""
    NB = kind.shape[0]
    flags = np.empty(NB, np.int8)
    for b in range(NB):
        flags[b] = np.int8(kind[b] == DYNAMIC) | np.int8(2 * np.int8(asleep[b]))
    return flags


@njit
def _same(a, b):
    """Whether the 1-d arrays a and b hold the same values, in the same order. (Every entry is compared, without
    a branch, so that the loop runs in vector registers: the usual answer is yes, which the loop that stopped at
    the first difference found a value at a time, 0.1 ms of many_pyramids' step for its three arrays.)"""
    if a.shape[0] != b.shape[0]:
        return False
    differ = False
    for k in range(a.shape[0]):
        differ |= a[k] != b[k]
    return not differ


@njit
def same_pairs(keys, old_keys):
    """Whether the broad phase's candidate pairs are last step's, in the same order."""
    return _same(keys, old_keys)


@njit
def same_colouring(pairs_same, c_count, c_sensor, flags, old):
    """Whether ``colour_contacts`` would give exactly last step's colouring (kept in the old table): the same
    pairs in the same order (``pairs_same``: ``same_pairs``), each with as many points and as much a sensor as
    then, and every body as dynamic and as asleep as then (a shape's body never changes, and a removed shape's
    contacts leave the table with its colouring: ``World._purge_contacts``). A resting pile keeps its contacts
    from step to step, and the colouring, a serial pass in key order, then costs a comparison instead (0.18 ms
    in the large pyramid, whose contacts stay the same 84 steps in 100)."""
    return (pairs_same and _same(c_count, old.count) and _same(c_sensor, old.sensor)
            and _same(flags, old.body_flags))
