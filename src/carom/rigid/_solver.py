"""Contact solver: graph colouring, packed constraint rows and the soft step, parallel over colours.

Solver (after Box2D v3's "soft step"), per substep of length h:

1. integrate velocities: v += h·(g·gravity_scale + f/m), ω += h·τ/I, then damping v /= 1 + h·c;
2. warm start: apply the accumulated impulses (in the first substep last step's, matched by feature id, in a
   sweep over the contacts; in the others the λ the substep before ended with, whose velocity change is that
   substep's own, applied body by body in step 1: ``_integrate_velocity``);
3. solve with a soft bias: for each contact point with current separation s (tracked from the bodies'
   position deltas, so no collision rerun is needed inside the substeps):
   s > 0 (speculative): bias = s/h (the bodies may close the gap but not more);
   s ≤ 0: bias = max(β·s, −v_push), with a soft constraint of stiffness ``CONTACT_HERTZ`` and damping ratio
   ``CONTACT_DAMPING_RATIO``: ω = 2π f, β = ω/(2ζ + hω), mass scale = hω(2ζ + hω)/(1 + hω(2ζ + hω)),
   impulse scale = 1/(1 + hω(2ζ + hω)).
   λ = −m_n·mass_scale·(v_n + bias) − impulse_scale·λ_acc, accumulated impulse clamped ≥ 0;
4. integrate positions;
5. relax: the same solve without the soft bias (bias 0 for s ≤ 0), which removes the velocity the bias added,
   then friction, λ_t = −m_t·v_t clamped to ±μ·λ_n (Coulomb).

Two choices keep a tall stack straight (a 20-box column: 21.6 mm of sideways drift before them, 0.07 mm
after; Box2D v3: 16.4 mm). A contact's two points are solved one after the other (Gauss-Seidel), so the
first takes a larger share of the impulse than the second and every sweep leaves the box a little torque
towards its first point; a column of boxes whose contacts all list their points in the same order leans
one way, more with each box. So odd substeps solve the points in the reverse order (``reverse``), and the
shares even out over two substeps. Friction is solved only in the relax sweep (as Box2D v3.2 does): there it
meets normal impulses without the bias's push, and with friction in both sweeps the reversed order let the
near-top boxes of a 20-base pyramid slide 6 cm (``tests/test_rigid.py``).

After the substeps, restitution, when some point approached faster than ``RESTITUTION_THRESHOLD`` and may
bounce: ``RESTITUTION_SWEEPS`` sweeps over every point that took an impulse in the step, each aiming at
λ = −m_n (v_n + e·v_n⁰) for v_n⁰ the point's normal speed at the start of the step (v_n⁰ when it was
separating), with the point's impulse over the step kept ≥ 0 (``_restitute``, ``step_sweeps``). For two free
bodies this is the closed form of the reference article, I = −(1 + e)·v_rel·n / (1/m1 + 1/m2 + (r1×n)²/I1 +
(r2×n)²/I2); for a group of bodies meeting in one step it keeps the kinetic energy for e = 1 and never adds
to it.

m_n = 1/(1/mA + 1/mB + (rA×n)²/IA + (rB×n)²/IB) is the effective mass along the normal (m_t along the
tangent).

Parallelism and determinism. Contacts are coloured greedily in key order so that no two contacts of one
colour share a dynamic body (static and kinematic bodies are only read). Every sweep visits the colours in
order; inside a colour the contacts touch disjoint bodies, so they can be solved in any order or at once,
with bitwise the same result: the answer does not depend on the thread count. Contacts that find no free
colour among the first ``OVERFLOW`` go to the overflow colour, solved in one thread in key order. With
several threads the whole solve is one parallel loop with one item per thread (``_solve_parallel``): the
threads claim chunks of each colour and of each integration pass, and wait for the last chunk of one before
the next (``_solve_share``; a parallel loop per colour cost microseconds of thread start-up and join, some 80
a step).

Layout and vectors. Contacts are solved ``LANES`` at a time (``carom._simd``: one contact per lane of an
LLVM vector, as Box2D v3 does with SIMD): the contacts of a colour are packed into bundles, and a bundle's
fields are stored field by field, ``rows[bundle, field, lane]`` (masses, normal, friction, restitution,
softness, then two points of ``POINT_WIDTH`` fields), so each field of a bundle is one vector load. Inside
each block of a few bundles of a colour the two-point contacts come first, so a bundle solves as many points
as its first lane has, and bundles of one-point contacts (circles) do half the work; a one-point manifold in
a two-point bundle has a second point of all zeros, which changes nothing. Each body is one row of
``fstate`` (v, ω, position delta, rotation delta); a sweep gathers the lanes' bodies into vectors, solves,
and scatters the new velocities back (static and kinematic bodies are only read). Lane arithmetic is the
scalar IEEE arithmetic in the same order, so the result is bitwise that of solving the contacts one by one,
whatever the lane count or thread count. The prepare stage fills a bundle the same way: each lane's contact
data is one packed row that the narrow phase writes beside its table (``_contact_rows.PACK_WIDTH``: two cache
lines), gathered and transposed into vectors as the bodies' rows are, where reading the table's columns in
colour order cost a cache miss per column and contact.
The scalar solve cost about 50 ns per two-point contact per sweep, bound by instruction throughput; 4 lanes
of doubles brought it to about 22 ns.

Precision. The sweeps work in single precision, as Box2D's solver does: 8 floats fill an AVX2 register where
4 doubles did, which halves the arithmetic per contact, and a body's row (8 floats) is half a cache line. The
rows are computed in double precision (``prepare_stage``, from the world's double-precision poses) and
rounded when stored; the integrators work in double precision and keep each body's position delta, and the
velocity of a body no contact acts on, in double precision (``state``), beside the single-precision row the
sweeps use (``fstate``), which holds the velocity of a body the solver holds: only a velocity the solver
changed is rounded. Momentum is then
conserved to about 1e-6 of its size over 1,000 steps (1e-9 in double precision). About 12 to 15 ns per
two-point contact per sweep on AVX2, against 22 ns for doubles (and the lever arms r × n, r × t stored per
point instead of the anchors, ``_speed_along``).

Where the parts are: ``_contact_rows`` (the rows' columns, mixing, softness, chunks), ``_colouring`` (the colouring
and when it is kept), ``_prepare`` (``prepare_stage``: the packed rows), ``_sweeps`` (warm start, solve, restitution
over one bundle, and a worker's range of bundles), ``_integrate`` (velocities and positions of the bodies), ``_solve``
(``solve_stage``: the phases of the substeps shared among threads). This module gathers their names.
"""
from ._layout import STATIC, KINEMATIC, DYNAMIC, KEY_SHIFT, KEY_MASK, LOCK_X, LOCK_Y
from ._contact_rows import (  # noqa: F401
    ADJ, BE, BOUNCE_WIDTH, BRELV, CHUNKS_PER_THREAD, IA, IB, MA, MATERIAL_WIDTH, MB, MIX_MAX, MIX_MEAN, MIX_MIN,
    MIX_MULTIPLY, MIX_SQRT, MRIMP, MRR, MTS, MU, NIMP, NMASS, NX, NY, OVERFLOW, P0, PARALLEL_MIN_ITEMS, POINT_WIDTH,
    QAX, QAY, QBX, QBY, RNA, RNB, ROW_WIDTH, RTA, RTB, SOFT, SOLVE_WIDTH, STEPN, STEPT, T0, TANGENT_WIDTH, TIMP,
    TMASS, chunk_count, mix, soft_params)
from ._colouring import (  # noqa: F401
    COLOURING, COLOUR_BLOCK, _same, body_flags, colour_contacts, same_colouring, same_pairs, with_colouring)
from ._prepare import (  # noqa: F401
    TCX, TCY, TG, TI, TM, TVX, TVY, TW, _impact_speed, _prepare_all_rows, _prepare_bundle, _prepare_bundles,
    _prepare_part, _prepare_point, prepare_stage)
from ._sweeps import (  # noqa: F401
    BIASED, RELAX, RESTITUTE, RESTITUTION_SWEEPS, ROLLING_RELAX, WARM, WRITE_BACK, _arms, _bundle_frame,
    _bundle_points, _gather_velocities, _one, _point_index, _push_along, _restitute, _scatter_velocities,
    _solve_contact, _solve_friction, _solve_normal, _solve_rolling, _solve_setup, _solve_two, _speed_along,
    _sweep_range, _tangent_speed, _warm_start, _write_back, step_sweeps, sweep_marks)
from ._integrate import (  # noqa: F401
    EIGHTH_TURN, FIRST_PASS, KADIV, KDVX, KDVY, KDW, KICK_WIDTH, KLDIV, KV0X, KV0Y, KW0, POSITION_PASS,
    VELOCITY_PASS, _CAPPED_SPEED, _I110, _I12, _I132, _I20, _I30, _I42, _I56, _I6, _I72, _I90, _fill_kick,
    _integrate_position, _integrate_range, _integrate_velocity, _load_body, _rotations, _set_velocity,
    _small_sin_cos, _velocity, capped_velocity, max_angular_speed)
from ._solve import (  # noqa: F401
    CHUNK_BODIES, CHUNK_BUNDLES, CHUNK_JOINTS, PHASE_CHUNKS_PER_THREAD, PLAIN_PYTHON, SYNC_STRIDE, _integrate_phase,
    _joint_phase, _solve_parallel, _solve_share, _sweep_phases, await_phase, claim_chunk, finish_chunk, phase_base,
    phase_chunks, phase_count, solve_stage)


