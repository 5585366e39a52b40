"""The contact solver's shared layout: the mixing rules of friction and restitution, the columns of a bundle's
packed rows (``MA`` … ``SOFT``, per point ``QAX`` … ``NIMP``, ``MU``, per point ``RTA`` … ``STEPT``) and its
bounce and material tables, the soft constraint's parameters and how work is cut into chunks. See
:mod:`carom.rigid._solver` for the method.
"""
import math

from .._jit import njit


MIX_SQRT, MIX_MIN, MIX_MAX, MIX_MEAN, MIX_MULTIPLY = 0, 1, 2, 3, 4

#: colours 0 … OVERFLOW − 1 are parallel; colour OVERFLOW is solved in one thread
OVERFLOW = 63

# contact row fields: what the substeps' sweeps read (the warm start, the biased solve, the relax), and nothing else.
# First what every solve reads: the bundle's masses, normal and softness, then per point (point p's from
# P0 + p·POINT_WIDTH) the anchors of the tracked core points (q), the separation offset, the lever arms of the
# normal about each centre of mass (rA × n, rB × n, with r the anchor from the centre of mass), the normal mass and
# impulse; the biased solve reads only these, the first SOLVE_WIDTH fields.
MA, IA, MB, IB, NX, NY, SOFT = 0, 1, 2, 3, 4, 5, 6
P0 = 7
POINT_WIDTH = 9
QAX, QAY, QBX, QBY, ADJ, RNA, RNB, NMASS, NIMP = range(9)
SOLVE_WIDTH = P0 + 2 * POINT_WIDTH
# Then what the relax adds (friction): the friction coefficient, then per point (point p's from T0 + p·TANGENT_WIDTH)
# the lever arms of the tangent (rA × t, rB × t), the tangent mass and impulse, and the normal and tangent impulses
# of the whole step (``_solve_normal``; a point took an impulse in the step when its STEPN is above 0).
MU = SOLVE_WIDTH
T0 = MU + 1
TANGENT_WIDTH = 6
RTA, RTB, TMASS, TIMP, STEPN, STEPT = range(6)
ROW_WIDTH = T0 + 2 * TANGENT_WIDTH
# Why only those, and in this order: each sweep streams its bundles' rows (``_sweeps._sweep_range`` prefetches the
# lines it reads), so a sweep costs about in proportion to what it streams: with 5 unused fields more (50 instead of
# 45), large_pyramid's solve took 10 % longer. What only the restitution or a rare material reads has a table of its
# own:

# the bounce table (bundle × field × lane, single precision): each lane's restitution and each point's normal
# speed before the solve (point p's at BRELV + p: the restitution's target, ``_sweeps._restitute``, and the
# approach speed written back, ``_write_back``)
BE, BRELV = 0, 1
BOUNCE_WIDTH = 3
# the material table (the same, with no bundles in a step where no contact has a tangent speed or rolling
# resistance: ``_prepare.prepare_stage``): the surfaces' relative tangent speed (conveyor belts), the rolling
# resistance (coefficient × the larger shape radius) and the accumulated rolling impulse (``_solve_rolling``)
MTS, MRR, MRIMP = 0, 1, 2
MATERIAL_WIDTH = 3
# and how many points each bundle solves (its first lane's count, the largest: ``colour_contacts``), an integer
# per bundle (``bundle_points``)

# the contact's own data the prepare stage reads, one row of PACK_WIDTH doubles per contact (two cache lines),
# written by the narrow phase beside its table (``_narrow._put_pack``): the world normal, a recycled contact's
# anchor offset (``_narrow._recycle``), and per point its separation, position and warm-start impulses; then
# the point count. Read in colour order, the table's own columns (normal, offset, separations, points,
# impulses: one array each) cost the prepare stage a cache miss apiece per contact, and it waited on them
# (many_pyramids: 58,000 contacts, 5 ms a step). A second point's fields are zeros when there is none.
PACK_NX, PACK_NY, PACK_DLX, PACK_DLY, PACK_SEP0, PACK_PX0, PACK_PY0, PACK_NIMP0 = range(8)
PACK_TIMP0, PACK_SEP1, PACK_PX1, PACK_PY1, PACK_NIMP1, PACK_TIMP1, PACK_COUNT = range(8, 15)
PACK_WIDTH = 16



@njit
def mix(a, b, rule):
    if rule == MIX_SQRT:
        return math.sqrt(a * b)
    if rule == MIX_MIN:
        return min(a, b)
    if rule == MIX_MAX:
        return max(a, b)
    if rule == MIX_MEAN:
        return 0.5 * (a + b)
    return a * b


@njit
def soft_params(hertz, zeta, h):
    """(bias rate, mass scale, impulse scale) of a soft constraint of frequency ``hertz`` and damping ratio
    ``zeta`` over a substep h (module docstring); hertz = 0 is a rigid constraint."""
    if hertz == 0.0:
        return 0.0, 1.0, 0.0
    omega = 2.0 * math.pi * hertz
    a1 = 2.0 * zeta + h * omega
    a2 = h * omega * a1
    a3 = 1.0 / (1.0 + a2)
    return omega / a1, a2 * a3, a3


#: a parallel loop hands each thread this many chunks (for balance); a chunk is one call that runs a plain
#: loop, so per-item costs (array reference counts on calls) are paid once per chunk, not per contact
CHUNKS_PER_THREAD = 4
#: below this many items a loop runs in the calling thread: launching threads costs more than it saves
PARALLEL_MIN_ITEMS = 256


@njit
def chunk_count(n, threads):
    """How many chunks a parallel loop over n independent items gets (1: run it in this thread). Any split
    gives the same result, since the items are independent; only the speed depends on it. ``threads`` is
    ``numba.get_num_threads()``, passed in from Python (reading it inside a kernel defeats the disk cache)."""
    if threads == 1 or n < PARALLEL_MIN_ITEMS:
        return 1
    return min(n, threads * CHUNKS_PER_THREAD)
