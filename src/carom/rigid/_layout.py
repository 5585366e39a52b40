"""Layouts shared by the step's stages: the body kinds (``STATIC``, ``KINEMATIC``, ``DYNAMIC``: the ``kind`` column of
the body table), the pair keys (a contact's shapes, or a joined pair's bodies, as ``a << KEY_SHIFT | b`` with
``a < b``), and the solver's per-body rows, shared by the contact solver (``_solver``) and the joints (``joints``).

Each body has a row of ``state`` (double precision, the integrators') and of ``fstate`` (single precision, what
the sweeps gather and scatter): velocity (VX, VY, W), position change so far in the step (DPX, DPY: read from
``fstate`` only; the integrators keep it in double precision in a table of their own, ``_integrate.MOVE_X``) and
the rotation so far as (cos, sin) (DC, DS), and MOVED: 1 once a restitution impulse of the step has changed the
body's velocity (``_solver._restitute``; 0 from the start of the step). ``flags[b]`` holds the MOVE_* bits of
the step; ``aligned_rows`` allocates the tables whose rows should start on cache lines."""
from collections import namedtuple

import numpy as np

from .._jit import njit
from .._simd import ROW

STATIC, KINEMATIC, DYNAMIC = 0, 1, 2
KEY_SHIFT = 32
KEY_MASK = 0xFFFFFFFF

VX, VY, W, DPX, DPY, DC, DS, MOVED = 0, 1, 2, 3, 4, 5, 6, 7

#: the columns of the body table the prepare stage gathers (one row of ``ROW`` doubles per body, written by the
#: bounds stage: ``_bounds._body_bounds``): centre of mass, velocity, inverse mass and inertia, and the gravity
#: scale of a dynamic body (0 for others)
TCX, TCY, TVX, TVY, TW, TM, TI, TG = range(8)
STATE_WIDTH = ROW   # 8: a body's state is one cache line, gathered whole (``carom._simd.gather_rows``)

#: a body whose velocity is integrated (alive, dynamic, awake), whose position is (alive, not static, awake),
#: and whose velocity the solver holds in single precision (``solved``, ``_velocity``: bodies of solved
#: contacts and of solved joints)
MOVE_VELOCITY, MOVE_POSITION, MOVE_SOLVED = 1, 2, 4
#: bits of ``World._locks``: the body's motion locks along x and y (``Body.lock_x``, ``Body.lock_y``)
LOCK_X, LOCK_Y = 1, 2
#: the body's motion locks (``Body.lock_x``, ``Body.lock_y``: bits LOCK_X, LOCK_Y of ``World._locks``) as flags
MOVE_LOCK_X, MOVE_LOCK_Y = 8, 16


#: The step's body table (``World._live_views``: views of the live rows of ``WorldTables``' body arrays), in this
#: field order (the positions are the ones the stages used before the fields had names).
BodyTable = namedtuple("BodyTable", ["com", "angle", "vel", "angvel", "inv_mass", "inv_inertia", "local_center",
                                     "kind", "bullet", "alive", "force", "torque", "lin_damping", "ang_damping",
                                     "gravity_scale", "min_extent", "asleep", "sleep_time", "island", "can_sleep",
                                     "sleep_threshold", "locks"])
#: The step's shape table (``World._live_views``): a shape's ``vert_count`` rows of the shared ``verts`` and
#: ``normals`` from ``offset``, its body, material, filter bits, chain flags and ghost vertices.
ShapeTable = namedtuple("ShapeTable", ["body", "alive", "offset", "vert_count", "radius", "friction", "restitution",
                                       "reach", "sensor", "category", "mask", "group", "verts", "normals",
                                       "tangent_speed", "rolling", "one_way", "ghost", "chain"])
#: The broad phase as the step sees it (``World.step_tables``): the moving and static trees (``Tree`` of
#: ``geometry/_tree.py``), the proxies' real boxes, flags and leaves, the move buffer, the pair cache and the
#: fat-box margin and multiplier.
TreeTable = namedtuple("TreeTable", ["moving", "static", "lower", "upper", "flags", "leaf", "moved", "moved_flag",
                                     "moved_meta", "cand", "margin", "multiplier"])
#: What the narrow phase finds for each candidate pair (``_narrow.narrow_stage``), one row per pair in key order:
#: the pair's key, its point count, the points' feature ids, normal and tangent impulses (warm start), the normal
#: (from A to B), the points (world frame) and their separations, whether it touches, whether it is a sensor pair,
#: its cache row (columns ``_narrow.CTX`` … ``CSEP``: the manifold in body A's frame) and each point's impulses
#: over the whole step. The names are the snapshot's (``snapshot.CONTACT_FIELDS``).
NarrowTable = namedtuple("NarrowTable", ["keys", "count", "ids", "normal_impulse", "tangent_impulse", "normal",
                                         "points", "separation", "touching", "sensor", "cache", "step_impulse"])
CONTACT_NAMES = NarrowTable._fields
#: The contact table a world keeps between steps (``WorldTables.contacts``, ``_step.step_kernel``'s result): the
#: narrow phase's table, then the colouring it was solved with (``_colouring.with_colouring``), kept for the next
#: step (``COLOURING_NAMES``): the solved contacts in colour order (``perm``), their bodies' pairs (``pair``), where
#: each colour starts in ``perm`` (``colour_start``), the solved bodies (``solved``) and the body flags the
#: colouring read (``body_flags``).
ContactTable = namedtuple("ContactTable", ["keys", "count", "ids", "normal_impulse", "tangent_impulse", "normal",
                                           "points", "separation", "touching", "sensor", "cache", "step_impulse",
                                           "perm", "pair", "colour_start", "solved", "body_flags"])
COLOURING_NAMES = ContactTable._fields[len(CONTACT_NAMES):]


def narrow_part(table):
    """The narrow phase's table (``NarrowTable``) of a step's contact table (``ContactTable``): its first fields,
    the same arrays (what the stages after the narrow phase take, outside the step: ``World._finish_step``, the
    code compiled apart that ``_continuous.load`` and ``_pre_solve_stage.load`` load for them)."""
    return NarrowTable(*table[:len(CONTACT_NAMES)])
#: What the prepare stage hands the solve (``_prepare.prepare_stage``): the solved contacts in colour order
#: (``perm``), where each colour starts in ``perm`` (``colour_start``) and in the bundles (``bundle_start``),
#: each bundle's first contact in ``perm`` (``bundle_first``), each contact's bodies (``pair``), the packed rows
#: (bundle × field × lane, single precision: ``rows``), each bundle's bodies and write flags (``bundle_body``,
#: ``bundle_move``), its contact count (``bundle_count``), the solved bodies (``solved``), the body flags the
#: colouring read (``body_flags``), the step's sweeps (``sweeps``: how many restitution sweeps, the relax
#: sweep's task code; ``_sweeps.step_sweeps``), and the bundles' bounce and material tables and point counts
#: (``bounce``, ``material``, ``bundle_points``: ``_contact_rows``).
SolverTable = namedtuple("SolverTable", ["perm", "colour_start", "bundle_start", "bundle_first", "pair", "rows",
                                         "bundle_body", "bundle_move", "bundle_count", "solved", "body_flags",
                                         "sweeps", "bounce", "material", "bundle_points"])


@njit
def aligned_rows(n, width):
    """An uninitialised C-ordered (n, width) table of doubles whose first row starts on a 64-byte boundary (a
    cache line), so that a row of 8 or 16 doubles fills whole lines (and a row of 24, three)."""
    raw = np.empty(n * width + 8)
    skip = ((64 - raw.ctypes.data % 64) % 64) // 8
    return raw[skip:skip + n * width].reshape((n, width))
