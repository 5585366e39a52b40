"""Every tolerance carom uses, in one place, each with the reason for its value.

Units are metres, kilograms, seconds and radians. The values follow the scale of Box2D's defaults: carom is
tuned for moving objects between 0.1 m and 10 m.
"""

#: Collision and constraint tolerance. Contacts are allowed to overlap this much so that resting contacts
#: stay touching from step to step (no jitter between "touching" and "apart"). 0.5 cm is invisible at 1 m.
LINEAR_SLOP = 0.005

#: Points closer than this are one point: used by the hull and polygon validation so that nearly equal
#: vertices do not produce edges of length ~0 whose normals are noise.
WELDING_TOLERANCE = 0.5 * LINEAR_SLOP

#: A vertex this close to the line through its neighbours is collinear and removed by the hull; a polygon
#: whose points are all within it of one line has no area and is rejected.
COLLINEAR_TOLERANCE = 0.5 * LINEAR_SLOP

#: Contacts are created this far before shapes touch, so the solver can stop an approaching body in one
#: step without overlap (speculative contacts). 4 slops, as in Box2D v3.
SPECULATIVE_DISTANCE = 4.0 * LINEAR_SLOP

#: Fat AABB margin of the broad phase: a proxy moves inside its enlarged box without touching the tree.
AABB_MARGIN = 0.1

#: Largest rotation in one step (radians), as Box2D's: |ω| ≤ MAX_ROTATION / dt. A speculative contact made at the
#: start of a step holds only while its bodies turn little in the step; faster spin is left to none.
MAX_ROTATION = 0.25 * 3.141592653589793

#: Largest speed (m/s). Bodies faster than this are clamped (documented, not rejected). 4 m per step at 60 Hz
#: per metre of body would tunnel without continuous collision; 400 m/s keeps everything finite.
MAX_TRANSLATION_SPEED = 400.0

#: Coordinates beyond this are rejected: a float64 still has sub-micrometre resolution at 1e7 m, but
#: contact tolerances of millimetres stop being meaningful well before 1e9.
WORLD_LIMIT = 1.0e7

#: Time-of-impact target separation: conservative advancement stops this close (before contact) so the
#: body that is put back at the reported time is never overlapping.
TOI_TARGET = 0.25 * LINEAR_SLOP

#: Time-of-impact and GJK iteration caps (each iteration of GJK adds a support point; 2D needs few).
TOI_MAX_ITERATIONS = 64
GJK_MAX_ITERATIONS = 32
EPA_MAX_ITERATIONS = 64

#: EPA stops when a new support point improves the face distance by less than this (relative to scale).
EPA_TOLERANCE = 1.0e-12

#: Approach speed (m/s) below which restitution is ignored: resting contacts do not bounce forever.
RESTITUTION_THRESHOLD = 1.0

#: Speed (m/s) above which a contact reports a "hit" event.
HIT_EVENT_THRESHOLD = 1.0

#: Bodies slower than this (m/s, and rad/s times extent) for SLEEP_TIME seconds fall asleep.
SLEEP_LINEAR_TOLERANCE = 0.05
SLEEP_TIME = 0.5

#: Contact softness of the soft-step solver (Box2D v3): stiffness as a frequency and a damping ratio (capped
#: at a quarter of the substep rate), 30 Hz as Box2D's; contacts with a static or kinematic body get
#: ``STATIC_CONTACT_SCALE`` times the frequency. (It was 60 Hz for all: at 30 Hz a 20-box stack's lean grew
#: 2.8-fold every 1.5 s until it fell, where Box2D's stands; and at 60 Hz Box2D's large pyramid never came to
#: rest (mean box speed 0.128 m/s against Box2D's 0.012). The stack's cause was the recycled contacts' anchors,
#: not the stiffness: ``RECYCLE_DISTANCE``.)
CONTACT_HERTZ = 30.0
CONTACT_DAMPING_RATIO = 10.0
#: Contacts with a static or kinematic body (nothing on the other side gives way) are this many times as stiff as
#: ``CONTACT_HERTZ``: 120 Hz, what carom's ground contacts were before the move to 30 Hz. Box2D v3 doubles it;
#: with 60 Hz ground contacts BipedalWalker's heuristic walked half as far as on Gymnasium's original (whose
#: Box2D v2 contacts are rigid), with 120 Hz as far (``tests/test_envs_bipedal_walker.py``).
STATIC_CONTACT_SCALE = 4.0
#: Largest speed at which overlap is pushed apart (m/s), so deep overlaps resolve without explosions.
CONTACT_PUSH_MAX_VELOCITY = 3.0

#: A joint's own constraints (a revolute's pivot, a weld, a limit once crossed) are soft in the biased solve with
#: this frequency (Hz, capped at half the substep rate) and damping ratio, as Box2D v3's joint softness (60 Hz,
#: 2): stiffer than a contact, and heavily damped so that a chain settles instead of ringing. Under a load F a
#: row of effective mass m gives F/(m·ω²): a 40-link hanging chain stretched 1.13 % at Box2D's 60 Hz, 0.83 % at
#: 70 Hz. The damping ratio of 10 is what that chain's slowest mode (2 Hz) needs to be still (< 1 mm/s) 1.5 s
#: after its release (at 5: 2.5 s).
JOINT_HERTZ = 70.0
JOINT_DAMPING_RATIO = 10.0
#: How many times each substep's biased solve and relax go over the joints (the contacts are swept once): one
#: Gauss-Seidel pass carries a change only a link or two along a chain, and a 40-link chain then rang for 10 s,
#: and buckled into a zigzag at joint frequencies above 70 Hz (``rigid._solver._joint_phase``).
JOINT_ITERATIONS = 2

#: A dynamic-tree leaf is stretched this many displacements ahead of a moving proxy (Box2D's value), so a
#: body moving steadily stays inside its fat box for a few steps before the tree has to be touched.
AABB_DISPLACEMENT_MULTIPLIER = 4.0

#: Core distance (m) below which GJK's closest-point direction (pB − pA)/d is rounding noise: contact and
#: penetration queries then take their normal from EPA (a face of the Minkowski difference) instead.
GJK_TOUCH_DISTANCE = 1.0e-9

#: Two candidate reference faces whose normals' sines against the contact direction differ by less than
#: this are a tie, resolved in favour of shape A (stable feature ids; the normals agree to this angle).
GJK_FACE_TOLERANCE = 1.0e-10

#: Contact recycling (Box2D v3's): a pair whose relative pose moved less than this (m, at the manifold points
#: plus the rotation swept over the smaller shape) since its manifold was computed, and whose bodies each turned
#: less than acos(``RECYCLE_COS``), keeps that manifold instead of running the collision test again, as the
#: substeps keep it within a step: the normal fixed in the world, each body's anchor fixed to that body's centre
#: of mass in the world's orientation of then (it moves with the body, it does not turn with it), and the
#: separation tracked from the anchors turned with their bodies (``carom.rigid._narrow._recycle``).
#: Why the anchors are kept so: a recycled contact is then the same linearised constraint over many steps, and a
#: tall stack stands on it. With the anchors turned with the bodies, or one point midway between the two
#: bodies' anchors (as carom had), a 20-box stack at 30 Hz leans 2.8-fold more every 1.5 s and falls, and so
#: does Box2D's with those anchors or with recycling off (measured on Box2D v3's own source, changed for the
#: test); with them, carom's stack follows Box2D's to three digits over 10 s when the rest of the step is
#: made Box2D's too. Half the slop, where Box2D allows 10 × the slop: resting stacks move micrometres per step,
#: and BipedalWalker's feet, which pivot on the ground, walked a fifth less far with Box2D's distance.
RECYCLE_DISTANCE = 0.5 * LINEAR_SLOP

#: (``RECYCLE_DISTANCE``) the cosine of the largest turn of either body since a recycled manifold was computed
RECYCLE_COS = 0.98

#: A pair with points whose bodies can close their gap by more than this in the step (its speculative margin
#: beyond SPECULATIVE_DISTANCE, ``pair_motion``) will most likely move more than RECYCLE_DISTANCE again by the
#: next step, so its fresh manifold is not cached: the row is only marked as holding none, and the next step
#: tests the pair afresh. A wrong guess costs that test, nothing else. In a smash, most pairs fly apart.
UNCACHED_MOTION = 2.0 * RECYCLE_DISTANCE

#: Skipping separated pairs: a pair whose cached distance bound, less how far the shapes can have moved
#: relative to each other since, still exceeds the speculative margin by this much times (1 m + both shapes'
#: reach) provably has no contact points, and skips its collision test. Room for rounding only (float64
#: separations are good to ~1e-15 of the shape size), so no skipped pair is one a fresh test would keep.
APART_ROUNDING = 1.0e-9

#: Largest size of a velocity component, angular velocity, gravity, force, torque, friction, mass or inertia a
#: world accepts (and the smallest nonzero mass or inertia is its inverse): the contact solver works in single
#: precision (float32 overflows at 3.4e38), and 1e30 leaves room for the products it forms.
FLOAT32_LIMIT = 1.0e30

#: Largest size of a body's angle (radians): a float64 angle's resolution (its ulp, 1.2e-7 rad at 1e9) is
#: still sub-micrometre at the rim of a metre-sized body; beyond it rotations turn into rounding noise.
ANGLE_LIMIT = 1.0e9

#: Most substeps per step: the step's cost grows with them, and 64 is already finer than any scene needs.
MAX_SUBSTEPS = 64

#: Longest step (s) a world takes: a body moves at most MAX_TRANSLATION_SPEED·dt in a step, and with any dt a
#: step of years put bodies at 1e80 m (and a larger one at infinity). A step is a fraction of a second.
MAX_TIME_STEP = 1.0
