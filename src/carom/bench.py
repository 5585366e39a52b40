"""``carom bench``: carom, pymunk and pybox2d on the same scenes, in one run, with one ruler for quality.

Scenes are carom worlds from :mod:`carom.scenes.rigid_scenes`. Each one is read back into a plain description
(:func:`describe`: bodies, their shapes, materials, poses and velocities) and pymunk's and pybox2d's worlds are
built from that description, so all engines start from the same geometry by construction. Every engine then
runs with dt = 1/60, one thread: carom with 4 substeps, pymunk with 10 iterations, pybox2d with 8 velocity and
3 position iterations.

Timing: every run is a fresh subprocess. A run is: build the world, one untimed warm-up step, then ``steps``
timed steps; the figure is the best of 3 runs (ms per step). The runs are taken in rounds, every engine once
per round (:func:`_interleaved_runs`), so that on a machine whose speed drifts all engines share the same
stretches of time. Each run rebuilds the world rather
than continuing the previous one: the scenes change character as they go (the smash scatters, the pile settles),
so continued runs would time three different stretches of the simulation and "best of 3" would pick whichever
was cheapest, possibly a different stretch for each engine. Rebuilt runs time the same stretch every time.

Memory: in the first round's subprocess, the peak resident set (``ru_maxrss``; on Linux the equivalent ``VmHWM``, see
:func:`_maxrss_mb`) after the first run minus the resident set before building the scene. The baseline is
taken after the imports and after one step of a tiny world, so it holds the interpreter, NumPy, Numba and
carom's loaded kernels (a fixed cost, reported on its own by the start-up figures), and the peak mark is
reset there (Linux ``/proc/self/clear_refs``) so that the transient spike of loading does not hide the
scene: the increment is what the scene itself costs.

Quality, computed the same way for every engine from the final poses and velocities (one ruler):

* deepest overlap (mm): the largest penetration between any two shapes of different bodies that may collide
  (their collision filters let them, and no joint joins their bodies without ``collide_connected``), by
  carom's SAT (:func:`carom.geometry.manifold.collide_many`) over the pairs carom's sweep-and-prune reports;
* top-box drift (m), pyramids only: how far the top box of each pyramid moved (the largest of them);
* bodies escaped: dynamic bodies outside the scene's bounds — the box around the initial bodies, the static
  shapes and the discs kinematic shapes sweep when they turn, grown by 1 m plus the distance 2·v_max·t that
  no body could cover physically (2·v_max is the fastest a light body can leave an elastic collision with a
  heavy one moving at v_max), and in a scene that hangs from joints with nothing below (``hanging``: the
  joint grid) by the free-fall distance ½·|g|·t² along gravity as well; inside a turning container (the
  tumbler), also bodies whose centres are past the inner face of a wall in the container's frame;
* kinetic energy (J) at the end: Σ ½·m·|v|² + ½·I·ω² over dynamic bodies, with carom's masses for everyone;
* joint error (mm), scenes with joints: how far the joints are from holding, the largest over the joints of
  the distance between the two anchors of a revolute joint, or of a rigid distance joint's length from its
  set length (each engine's joints are soft to some degree, and a long chain of them stretches).

Two settings are matched so that the engines solve the same problem: pymunk's ``collision_slop`` is set to
carom's (and Box2D's) linear slop of 5 mm instead of pymunk's default 0.1, and pymunk's friction, which
multiplies (μa·μb), is given √μ per shape so that two shapes of friction μ meet with μ as in carom and Box2D
(√(μa·μb)). Sleeping is off in all three (carom's ``sleep_enabled``, pybox2d's per-body ``allowSleep``;
pymunk does not sleep by default): every body stays awake, as in Box2D's benchmarks. Collision filters are
translated (category and mask bits, to 32 bits in pymunk and 16 in Box2D; a negative group, whose shapes never
collide with each other, to a pymunk group and a Box2D group index); sensors are not (no benchmark scene has
them). Joints are translated where the other engine has the same joint: a revolute joint with its angle limits
and motor (pymunk: a PivotJoint, a RotaryLimitJoint and a SimpleMotor; Box2D: a revolute joint), a rigid
distance joint (pymunk's PinJoint, Box2D's distance joint) and a rope (pymunk's SlideJoint, Box2D's rope joint);
any other joint or setting makes the scene not expressible in that engine.

Start-up: ``python -c "import carom; <small pyramid>; w.step(1/60)"`` with ``NUMBA_CACHE_DIR`` set to a new
empty directory (cold: every kernel the step needs is compiled) and again with the same directory (warm: the
kernels load from the cache).

pymunk and Box2D are imported only inside the functions that use them; an engine that is not installed is
reported as such.
"""
import argparse
import datetime
import gc
import math
import os
import pickle
import platform
import subprocess
import sys
import tempfile
import time

import numba
import numpy as np

DT = 1.0 / 60.0
ENGINES = ("carom", "pymunk", "box2d")
ENGINE_LABELS = {"carom": "carom", "pymunk": "pymunk", "box2d": "pybox2d"}
RUNS = 3

# The benchmark set: Box2D v3's seven benchmark scenes, built as its benchmark app builds them
# (carom.scenes.box2d_scenes; ``module="box2d_scenes"``), then a 5,000-circle pile and carom's earlier variants
# of three of them. ``kwargs`` go to the carom builder in carom.scenes.<module> (rigid_scenes unless named);
# ``note`` says what the scene is and where it departs from Box2D's. Sleeping is off here, for every engine
# (pybox2d's worlds are built from the description of the first step and cannot follow Box2D's sleeping
# block or rain's later waves): benchmarks/box2d.py runs Box2D v3's own app against the scenes as Box2D runs them.
BENCH_SCENES = {
    "large_pyramid": dict(module="box2d_scenes", builder="large_pyramid", kwargs={}, pyramid=True,
                          note="Box2D's: 5,050 boxes of 1 m (base 100) on a 200 × 2 m box"),
    "many_pyramids": dict(module="box2d_scenes", builder="many_pyramids", kwargs={}, pyramid=True,
                          note="Box2D's: 20 × 20 pyramids of base 10, 22,000 boxes, on 20 ground segments"),
    "smash": dict(module="box2d_scenes", builder="smash", kwargs={}, pyramid=False,
                  note="Box2D's: an 8 m box of density 8 at 40 m/s, 45.8 m from a block of 120 × 80 boxes of 0.4 m "
                       "(asleep in Box2D; awake here, sleeping being off), no gravity"),
    "tumbler": dict(module="box2d_scenes", builder="tumbler", kwargs={}, pyramid=False,
                    note="Box2D's: 45 × 45 boxes of 0.25 m in a hollow square of density 50 turned at 25°/s by a "
                         "revolute motor"),
    "joint_grid": dict(module="box2d_scenes", builder="joint_grid", kwargs={}, pyramid=False, hanging=True,
                       note="Box2D's: 100 × 100 circles that do not collide, 19,794 revolute joints (Box2D: 19,800, "
                            "six of them between static bodies), hanging from the top row's seven middle bodies"),
    "spinner": dict(module="box2d_scenes", builder="spinner", kwargs={}, pyramid=False,
                    note="Box2D's: 6,076 capsules, circles and squares in a loop of 360 chain segments, stirred by a "
                         "40 m rounded bar turned at 5 rad/s by a revolute motor"),
    "rain": dict(module="box2d_scenes", builder="rain", kwargs={}, pyramid=False,
                 note="Box2D's rain, its first wave only (25 ragdolls over 5 floors of 501 boxes); the later waves "
                      "need the scene's step driver (benchmarks/box2d.py)"),
    "circle_pile": dict(builder="circle_pile", kwargs={}, pyramid=False,
                        note="5,000 circles of radius 0.25 m dropped into an open box"),
    "many_pyramids_10x10": dict(builder="many_pyramids", kwargs=dict(rows=10, columns=10), pyramid=True,
                                note="10 × 10 pyramids of base 10, 5,500 boxes (Box2D's many_pyramids is 20 × 20)"),
    "smash_close": dict(builder="smash", kwargs=dict(columns=60, rows=40, projectile_x=23.8), pyramid=False,
                        note="60 × 40 boxes of 0.4 m (Box2D: 120 × 80); the projectile starts 2 m from the block "
                             "(Box2D: 45.8 m) so the timed steps are spent smashing"),
    "tumbler_kinematic": dict(builder="tumbler", kwargs={}, pyramid=False, container_half=9.5,
                              note="45 × 45 boxes of 0.25 m, container kinematic at 25°/s (Box2D: a dynamic body "
                                   "turned by a motor at 25°/s)"),
}


#: what ``carom bench`` runs when no scene is named: Box2D's seven and the circle pile (not the variants)
DEFAULT_SCENES = tuple(name for name in BENCH_SCENES if name not in ("many_pyramids_10x10", "smash_close",
                                                                      "tumbler_kinematic"))


class NotExpressible(Exception):
    """The scene uses something the engine has no equivalent for (e.g. a capsule in pybox2d)."""


# ---------------------------------------------------------------------------------------------------------
# scene descriptions

def scene_spec(name):
    """The bench entry for ``name``: a benchmark scene, or any scene of carom.scenes.rigid_scenes as it is."""
    from .scenes import rigid_scenes
    if name in BENCH_SCENES:
        return dict(BENCH_SCENES[name])
    if name in rigid_scenes.SCENES:
        return dict(builder=name, kwargs={}, pyramid=name == "pyramid", note=rigid_scenes.SCENES[name][1])
    known = sorted(set(BENCH_SCENES) | set(rigid_scenes.SCENES))
    from .errors import CaromError
    raise CaromError(f"unknown scene {name!r}; known: {', '.join(known)}")


def build_carom(spec):
    """The carom world of a bench entry, with sleeping off (every body awake, as in the other engines)."""
    import importlib
    module = importlib.import_module(f"{__package__}.scenes.{spec.get('module', 'rigid_scenes')}")
    world = getattr(module, spec["builder"])(**spec["kwargs"])
    if hasattr(world, "sleep_enabled"):
        world.sleep_enabled = False
    return world


def describe(world):
    """A carom world as plain data: what another engine needs to build the same scene.

    Returns a dict: ``gravity``; per body (rows of ``world.bodies``) ``kind`` ('dynamic', 'kinematic' or
    'static'),
    ``position`` (origin), ``angle``, ``velocity`` (of the centre of mass), ``angular_velocity``, ``mass`` and
    ``inertia`` (about the centre of mass); ``shapes``: (owner row or −1 for the static body, geometry,
    density, friction, restitution) in the world's shape order, and ``filters``: (category, mask, group) of
    each shape in the same order; ``joints``: one dict per joint (:func:`describe_joint`).
    """
    bodies = world.bodies
    shapes, filters = [], []
    for k, b in [(-1, world.static_body)] + list(enumerate(bodies)):
        for h in b.shapes:
            shapes.append((k, h.geometry, 0.0 if k < 0 else h.density, h.friction, h.restitution))
            filters.append((h.category, h.mask, h.group))
    row = {b.index: k for k, b in enumerate(bodies)}
    row[world.static_body.index] = -1
    return dict(
        gravity=tuple(float(g) for g in world.gravity),
        kind=[b.kind for b in bodies],
        position=world.positions, angle=world.angles, velocity=world.velocities,
        angular_velocity=world.angular_velocities,
        mass=np.array([b.mass for b in bodies]), inertia=np.array([b.inertia for b in bodies]),
        shapes=shapes, filters=filters, joints=[describe_joint(j, row) for j in world.joints])


#: the settings :func:`describe_joint` keeps, per joint kind (those the other engines can be given)
JOINT_SETTINGS = {"revolute": ("reference_angle", "lower", "upper", "motor_speed", "max_motor_torque", "hertz"),
                  "distance": ("length", "min_length", "max_length", "hertz", "max_motor_force")}


def describe_joint(joint, row):
    """A joint as plain data: ``kind``, the bodies' rows ``a`` and ``b`` (``row``: body index → row, −1 the static
    body), ``anchor_a`` and ``anchor_b`` in their bodies' frames (from the origin, as pymunk and Box2D take
    them), ``collide_connected`` and the kind's settings of :data:`JOINT_SETTINGS` (``settings``)."""
    ends = []
    for body, anchor in ((joint.body_a, joint.anchor_a), (joint.body_b, joint.anchor_b)):
        c, s = math.cos(body.angle), math.sin(body.angle)
        d = anchor - body.position
        ends.append(np.array((c * d[0] + s * d[1], -s * d[0] + c * d[1])))
    kind = joint.kind
    return dict(kind=kind, a=row[joint.body_a.index], b=row[joint.body_b.index], anchor_a=ends[0],
                anchor_b=ends[1], collide_connected=joint.collide_connected,
                settings={name: getattr(joint, name) for name in JOINT_SETTINGS.get(kind, ())})


# ---------------------------------------------------------------------------------------------------------
# the other engines, built from a description

def build_pymunk(desc):
    """A pymunk Space holding the described scene; returns (space, bodies in description order)."""
    import pymunk
    from .constants import LINEAR_SLOP
    from .geometry.shapes import CIRCLE, CAPSULE, SEGMENT
    space = pymunk.Space()
    space.gravity = desc["gravity"]
    space.iterations = 10
    space.collision_slop = LINEAR_SLOP
    bodies = []
    body_types = dict(dynamic=pymunk.Body.DYNAMIC, kinematic=pymunk.Body.KINEMATIC, static=pymunk.Body.STATIC)
    for k, kind in enumerate(desc["kind"]):
        b = pymunk.Body(body_type=body_types[kind])
        b.position = tuple(desc["position"][k])
        b.angle = float(desc["angle"][k])
        bodies.append(b)
    owned = [[] for _ in bodies]
    static = []
    for (owner, geom, density, friction, restitution), bits in zip(desc["shapes"], desc["filters"]):
        body = space.static_body if owner < 0 else bodies[owner]
        v = geom.vertices
        if geom.kind == CIRCLE:
            s = pymunk.Circle(body, geom.radius, tuple(v[0]))
        elif geom.kind in (CAPSULE, SEGMENT):
            s = pymunk.Segment(body, tuple(v[0]), tuple(v[1]), geom.radius)
        else:
            s = pymunk.Poly(body, [tuple(p) for p in v], radius=geom.radius)
        if owner >= 0 and desc["kind"][owner] == "dynamic":
            s.density = density
        s.friction = math.sqrt(friction)          # pymunk multiplies: √μa·√μb = √(μa·μb) as in carom
        s.elasticity = math.sqrt(restitution)
        s.filter = _pymunk_filter(pymunk, *bits)
        (static if owner < 0 else owned[owner]).append(s)
    space.add(*static)
    for b, shapes in zip(bodies, owned):
        space.add(b, *shapes)
    for k, b in enumerate(bodies):                # velocities after the shapes set the centre of mass
        b.velocity = tuple(desc["velocity"][k])
        b.angular_velocity = float(desc["angular_velocity"][k])
    for joint in desc["joints"]:
        space.add(*_pymunk_joint(pymunk, joint, [space.static_body if k < 0 else bodies[k]
                                                 for k in (joint["a"], joint["b"])]))
    return space, bodies


def _pymunk_filter(pymunk, category, mask, group):
    """A pymunk ShapeFilter with carom's filter: categories and mask to 32 bits, a negative group (never collide
    with each other) as the pymunk group −group. A positive group (always collide, whatever the masks) has no
    pymunk equivalent."""
    bits = 0xFFFFFFFF
    if category & ~bits:
        raise NotExpressible(f"pymunk categories have 32 bits, got category {category:#x}")
    if group > 0:
        raise NotExpressible("pymunk has no group whose shapes always collide (a positive group)")
    return pymunk.ShapeFilter(group=-group, categories=category, mask=mask & bits)


def _pymunk_joint(pymunk, joint, bodies):
    """The pymunk constraints of a described joint (:func:`describe_joint`), on ``bodies`` (A, B)."""
    a, b = bodies
    anchors = tuple(joint["anchor_a"]), tuple(joint["anchor_b"])
    p = joint["settings"]
    if joint["kind"] == "revolute" and p["hertz"] == 0.0:
        parts = [pymunk.PivotJoint(a, b, *anchors)]
        if p["lower"] > -math.inf or p["upper"] < math.inf:
            # pymunk limits θB − θA; carom's angle is θB − θA − the reference angle
            parts.append(pymunk.RotaryLimitJoint(a, b, p["lower"] + p["reference_angle"],
                                                 p["upper"] + p["reference_angle"]))
        if p["max_motor_torque"] > 0.0:
            motor = pymunk.SimpleMotor(a, b, -p["motor_speed"])     # (Chipmunk drives ωB − ωA to −rate)
            motor.max_force = p["max_motor_torque"]
            parts.append(motor)
    elif joint["kind"] == "distance" and p["hertz"] == 0.0 and p["max_motor_force"] == 0.0:
        if p["min_length"] == p["max_length"]:
            parts = [pymunk.PinJoint(a, b, *anchors)]
            parts[0].distance = p["length"]
        else:
            parts = [pymunk.SlideJoint(a, b, *anchors, p["min_length"], p["max_length"])]
    else:
        raise NotExpressible(f"no pymunk joint for carom's {joint['kind']} joint with {joint['settings']}")
    for c in parts:
        c.collide_bodies = joint["collide_connected"]
    return parts


def build_box2d(desc):
    """A pybox2d (Box2D v2.3) world holding the described scene; returns (world, bodies in order).

    Raises NotExpressible for capsules and rounded polygons (v2 has neither) and polygons of more than
    b2_maxPolygonVertices vertices.
    """
    import Box2D
    from .geometry.shapes import CIRCLE, CAPSULE, SEGMENT
    world = Box2D.b2World(gravity=desc["gravity"], doSleep=False)
    ground = world.CreateStaticBody()
    bodies = []
    for k, kind in enumerate(desc["kind"]):
        make = dict(dynamic=world.CreateDynamicBody, kinematic=world.CreateKinematicBody,
                    static=world.CreateStaticBody)[kind]
        # allowSleep per body: in pybox2d 2.3.10 the world's doSleep=False alone still lets bodies sleep
        bodies.append(make(position=tuple(desc["position"][k]), angle=float(desc["angle"][k]), allowSleep=False))
    for (owner, geom, density, friction, restitution), (category, mask, group) in zip(desc["shapes"],
                                                                                    desc["filters"]):
        v = geom.vertices
        if geom.kind == CIRCLE:
            shape = Box2D.b2CircleShape(radius=geom.radius, pos=tuple(v[0]))
        elif geom.kind == SEGMENT:
            shape = Box2D.b2EdgeShape(vertices=[tuple(v[0]), tuple(v[1])])
        elif geom.kind == CAPSULE:
            raise NotExpressible("pybox2d (Box2D v2) has no capsule shape")
        else:
            if geom.radius > 0.0:
                raise NotExpressible("pybox2d (Box2D v2) has no rounded polygons")
            if len(v) > Box2D.b2_maxPolygonVertices:
                raise NotExpressible(f"pybox2d polygons have at most {Box2D.b2_maxPolygonVertices} vertices")
            shape = Box2D.b2PolygonShape(vertices=[tuple(p) for p in v])
        body = ground if owner < 0 else bodies[owner]
        dynamic = owner >= 0 and desc["kind"][owner] == "dynamic"
        if category & ~0xFFFF or not -2 ** 15 <= group < 2 ** 15:
            raise NotExpressible(f"Box2D filters have 16 category bits and 16-bit groups, got category "
                                 f"{category:#x}, group {group}")
        body.CreateFixture(shape=shape, density=density if dynamic else 0.0, friction=friction,
                           restitution=restitution, categoryBits=category, maskBits=mask & 0xFFFF,
                           groupIndex=group)
    for k, b in enumerate(bodies):
        b.linearVelocity = tuple(desc["velocity"][k])
        b.angularVelocity = float(desc["angular_velocity"][k])
    for joint in desc["joints"]:
        _box2d_joint(world, joint, [ground if k < 0 else bodies[k] for k in (joint["a"], joint["b"])])
    return world, bodies


def _box2d_joint(world, joint, bodies):
    """The pybox2d joint of a described joint (:func:`describe_joint`), between ``bodies`` (A, B)."""
    common = dict(bodyA=bodies[0], bodyB=bodies[1], localAnchorA=tuple(joint["anchor_a"]),
                  localAnchorB=tuple(joint["anchor_b"]), collideConnected=joint["collide_connected"])
    p = joint["settings"]
    if joint["kind"] == "revolute" and p["hertz"] == 0.0:
        limited = p["lower"] > -math.inf, p["upper"] < math.inf
        if limited[0] != limited[1]:
            raise NotExpressible("Box2D's revolute limits are both on or both off")
        return world.CreateRevoluteJoint(referenceAngle=p["reference_angle"], enableLimit=limited[0],
                                         lowerAngle=p["lower"] if limited[0] else 0.0,
                                         upperAngle=p["upper"] if limited[0] else 0.0,
                                         enableMotor=p["max_motor_torque"] > 0.0, motorSpeed=p["motor_speed"],
                                         maxMotorTorque=p["max_motor_torque"], **common)
    if joint["kind"] == "distance" and p["hertz"] == 0.0 and p["max_motor_force"] == 0.0:
        if p["min_length"] == p["max_length"]:
            return world.CreateDistanceJoint(length=p["length"], frequencyHz=0.0, dampingRatio=0.0, **common)
        if p["min_length"] == 0.0:
            return world.CreateRopeJoint(maxLength=p["max_length"], **common)
    raise NotExpressible(f"no pybox2d joint for carom's {joint['kind']} joint with {joint['settings']}")


class _Runner:
    """One engine running one scene: ``build()``, ``step()``, ``state()`` (in description order)."""

    def __init__(self, engine, spec, desc):
        self.engine, self.spec, self.desc = engine, spec, desc
        self.world = self.bodies = None

    def build(self):
        self.world = self.bodies = None
        gc.collect()
        if self.engine == "carom":
            self.world = build_carom(self.spec)
            self.step = lambda: self.world.step(DT)
        elif self.engine == "pymunk":
            self.world, self.bodies = build_pymunk(self.desc)
            self.step = lambda: self.world.step(DT)
        else:
            self.world, self.bodies = build_box2d(self.desc)
            self.step = lambda: self.world.Step(DT, 8, 3)

    def state(self):
        """(positions of the origins, angles, centre-of-mass velocities, angular velocities)."""
        if self.engine == "carom":
            w = self.world
            return w.positions, w.angles, w.velocities, w.angular_velocities
        if self.engine == "pymunk":
            bs = self.bodies
            return (np.array([tuple(b.position) for b in bs]), np.array([b.angle for b in bs]),
                    np.array([tuple(b.velocity) for b in bs]), np.array([b.angular_velocity for b in bs]))
        bs = self.bodies
        return (np.array([tuple(b.position) for b in bs]), np.array([b.angle for b in bs]),
                np.array([tuple(b.linearVelocity) for b in bs]), np.array([b.angularVelocity for b in bs]))


def _tiny_description():
    """Two bodies on a ground box: stepping it loads an engine's code before the memory baseline."""
    from .rigid import World
    from .geometry import Circle, box
    w = World(gravity=(0, -10))
    w.static_body.add_shape(box(5.0, 0.5, center=(0, -0.5)))
    w.add_body(position=(0, 0.5)).add_shape(box(0.5, 0.5))
    w.add_body(position=(0.2, 1.6)).add_shape(Circle(0.5))
    return w, describe(w)


# ---------------------------------------------------------------------------------------------------------
# quality, one ruler for all engines

def deepest_overlap(desc, positions, angles):
    """Deepest penetration (m) between shapes of different bodies, by carom's SAT on the given poses.

    Pairs come from carom's SweepAndPrune over the shapes' tight boxes; pairs on the same body and pairs with
    no dynamic body (static–kinematic) are skipped. Separation s < 0 of a manifold point is an overlap of −s.
    """
    from .geometry.broadphase import SweepAndPrune
    from .geometry.manifold import collide_many
    shapes = desc["shapes"]
    n = len(shapes)
    owner = np.array([s[0] for s in shapes], np.int64)
    geoms = [s[1] for s in shapes]
    counts = np.array([g.vertices.shape[0] for g in geoms], np.int64)
    offsets = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    verts = np.concatenate([g.vertices for g in geoms])
    normals = np.concatenate([g.normals for g in geoms])
    radii = np.array([g.radius for g in geoms])
    xf = np.zeros((n, 4))
    xf[:, 2] = 1.0
    moving = owner >= 0
    xf[moving, 0:2] = positions[owner[moving]]
    xf[moving, 2] = np.cos(angles[owner[moving]])
    xf[moving, 3] = np.sin(angles[owner[moving]])
    # world vertices of every shape, then per-shape min/max (one pass over the vertex table)
    shape_of_vertex = np.repeat(np.arange(n), counts)
    c, s = xf[shape_of_vertex, 2], xf[shape_of_vertex, 3]
    wx = c * verts[:, 0] - s * verts[:, 1] + xf[shape_of_vertex, 0]
    wy = s * verts[:, 0] + c * verts[:, 1] + xf[shape_of_vertex, 1]
    lower = np.stack([np.minimum.reduceat(wx, offsets), np.minimum.reduceat(wy, offsets)], 1) - radii[:, None]
    upper = np.stack([np.maximum.reduceat(wx, offsets), np.maximum.reduceat(wy, offsets)], 1) + radii[:, None]
    dynamic = np.array([o >= 0 and desc["kind"][o] == "dynamic" for o in owner])
    sap = SweepAndPrune()
    for k in range(n):
        sap.insert(lower[k], upper[k], static=not dynamic[k])
    pairs = np.asarray(sap.pairs(), np.int64).reshape(-1, 2)
    keep = (owner[pairs[:, 0]] != owner[pairs[:, 1]]) | (owner[pairs[:, 0]] < 0)
    keep &= dynamic[pairs[:, 0]] | dynamic[pairs[:, 1]]
    keep &= may_collide(desc, pairs)
    pairs = np.ascontiguousarray(pairs[keep])
    if len(pairs) == 0:
        return 0.0
    out_f = np.zeros((len(pairs), 8))
    out_i = np.zeros((len(pairs), 3), np.int64)
    collide_many(verts, normals, offsets, counts, radii, xf, pairs, 0.0, out_f, out_i)
    seps = np.concatenate([out_f[out_i[:, 0] >= 1, 4], out_f[out_i[:, 0] >= 2, 7]])
    return float(max(0.0, -seps.min())) if seps.size else 0.0


def may_collide(desc, pairs):
    """For each pair of shape rows (k, 2): whether the two shapes may collide at all, by their filters (a shared
    nonzero group: a positive one always, a negative one never; otherwise each one's category meets the other's
    mask) and their joints (bodies joined by a joint without ``collide_connected`` do not collide, except a
    joint's static body, which keeps colliding with everything)."""
    i, k = pairs[:, 0], pairs[:, 1]
    cat = np.array([f[0] for f in desc["filters"]], np.uint64)
    mask = np.array([f[1] for f in desc["filters"]], np.uint64)
    group = np.array([f[2] for f in desc["filters"]], np.int64)
    same = (group[i] == group[k]) & (group[i] != 0)
    out = np.where(same, group[i] > 0, ((cat[i] & mask[k]) != 0) & ((cat[k] & mask[i]) != 0))
    joined = {frozenset((j["a"], j["b"])) for j in desc["joints"]
              if not j["collide_connected"] and min(j["a"], j["b"]) >= 0}
    if joined:
        owner = [s[0] for s in desc["shapes"]]
        for r in np.flatnonzero(out):
            out[r] = frozenset((owner[i[r]], owner[k[r]])) not in joined
    return out


def joint_error(desc, positions, angles):
    """The largest error of the revolute and rigid distance joints (m) with the bodies at the given poses: the
    distance between a revolute joint's anchors, the difference between a rigid distance joint's anchor
    distance and its length. None when the scene has no such joint."""
    worst = None
    for j in desc["joints"]:
        p = j["settings"]
        rigid_distance = j["kind"] == "distance" and p["hertz"] == 0.0 and p["min_length"] == p["max_length"]
        if j["kind"] != "revolute" and not rigid_distance:
            continue
        ends = []
        for row, local in ((j["a"], j["anchor_a"]), (j["b"], j["anchor_b"])):
            if row < 0:
                ends.append(np.asarray(local, float))
                continue
            c, s = math.cos(angles[row]), math.sin(angles[row])
            ends.append(positions[row] + (c * local[0] - s * local[1], s * local[0] + c * local[1]))
        gap = float(np.hypot(*(ends[1] - ends[0])))
        err = abs(gap - p["length"]) if rigid_distance else gap
        worst = err if worst is None else max(worst, err)
    return worst


def pyramid_tops(desc):
    """Rows of the top box of each pyramid of unit boxes: dynamic bodies with no box resting on them.

    Boxes sit on a half-metre lattice (x = k/2, y = ½ + row); a box at (x, y) carries the boxes at
    (x − ½, y + 1), (x, y + 1) and (x + ½, y + 1). A box with none of those is a top.
    """
    p = desc["position"]
    keys = {(int(round(2 * x)), int(round(2 * y))) for x, y in p}
    tops = [k for k, (x, y) in enumerate(p) if desc["kind"][k] == "dynamic"
            and not any((int(round(2 * x)) + dx, int(round(2 * y)) + 2) in keys for dx in (-1, 0, 1))]
    return np.array(tops, np.int64)


def scene_bounds(desc, elapsed, hanging=False):
    """(lower, upper) that no body can physically leave in ``elapsed`` seconds (see the module docstring);
    ``hanging``: nothing holds the bodies up but joints, so they may also fall freely."""
    p = desc["position"]
    lo, hi = p.min(axis=0), p.max(axis=0)
    for owner, geom, *_ in desc["shapes"]:
        if owner < 0:
            lo = np.minimum(lo, geom.vertices.min(axis=0) - geom.radius)
            hi = np.maximum(hi, geom.vertices.max(axis=0) + geom.radius)
        elif desc["kind"][owner] == "kinematic":
            # a kinematic body may turn: the disc its shape sweeps about the body origin
            reach = float(np.max(np.hypot(*geom.vertices.T))) + geom.radius
            lo = np.minimum(lo, p[owner] - reach)
            hi = np.maximum(hi, p[owner] + reach)
    vmax = float(np.max(np.hypot(*desc["velocity"].T))) if len(p) else 0.0
    grow = 1.0 + 2.0 * vmax * elapsed
    fall = 0.5 * np.array(desc["gravity"]) * elapsed ** 2 if hanging else np.zeros(2)
    return lo - grow + np.minimum(fall, 0.0), hi + grow + np.maximum(fall, 0.0)


def quality(spec, desc, state, elapsed):
    """The quality figures of one final state (dict): overlap_mm, drift_m, escaped, kinetic_J and, with joints,
    joint_mm."""
    pos, ang, vel, angvel = state
    dyn = np.array([k == "dynamic" for k in desc["kind"]])
    out = dict(overlap_mm=1000.0 * deepest_overlap(desc, pos, ang))
    if spec.get("pyramid"):
        tops = pyramid_tops(desc)
        out["drift_m"] = float(np.max(np.hypot(*(pos[tops] - desc["position"][tops]).T))) if len(tops) else 0.0
    lo, hi = scene_bounds(desc, elapsed, spec.get("hanging", False))
    outside = np.any((pos < lo) | (pos > hi), axis=1)
    if spec.get("container_half"):
        k = desc["kind"].index("kinematic")
        c, s = math.cos(ang[k]), math.sin(ang[k])
        d = pos - pos[k]
        local = np.stack([c * d[:, 0] + s * d[:, 1], -s * d[:, 0] + c * d[:, 1]], 1)
        outside |= np.any(np.abs(local) > spec["container_half"], axis=1)
    out["escaped"] = int(np.count_nonzero(outside & dyn))
    m, inertia = desc["mass"], desc["inertia"]
    ke = 0.5 * m * (vel[:, 0] ** 2 + vel[:, 1] ** 2) + 0.5 * inertia * angvel ** 2
    out["kinetic_J"] = float(np.sum(ke[dyn]))
    gap = joint_error(desc, pos, ang)
    if gap is not None:
        out["joint_mm"] = 1000.0 * gap
    return out


# ---------------------------------------------------------------------------------------------------------
# the worker: one engine, one scene, in its own process

def _maxrss_mb():
    """Peak resident set of this process (MB).

    On Linux this is ``VmHWM`` from /proc/self/status, the same high-water mark that ``ru_maxrss`` reports
    except that ``ru_maxrss`` of a process started by fork + exec also includes the peak of the parent at the
    fork (the kernel carries the old address space's mark over the exec), which would bury a worker's figure
    under the parent's. Elsewhere ``ru_maxrss``.
    """
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    import resource
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kb / (1024.0 * 1024.0) if sys.platform == "darwin" else kb / 1024.0


def _reset_peak_rss():
    """Reset the peak-RSS mark to the current RSS (Linux ≥ 4.0: write 5 to /proc/self/clear_refs).

    Without it the baseline would be the peak of the imports (Numba's loading is a transient spike larger
    than a small scene), and a scene that fits under that old spike would read as 0 MB. Returns False where
    the reset is not available (the figure is then only an upper bound on nothing: read it as ≥ 0).
    """
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _engine_available(engine):
    import importlib
    module = {"pymunk": "pymunk", "box2d": "Box2D"}.get(engine)
    try:
        if module:
            importlib.import_module(module)
    except ImportError:
        return False
    return True


def run_engine(engine, spec, desc, steps, runs=RUNS, threads=1):
    """Time one engine on one scene in this process; returns a result dict (see :func:`_worker`)."""
    if not _engine_available(engine):
        return dict(error="not installed")
    if engine == "carom":
        import carom
        if hasattr(carom, "set_num_threads"):        # explicit, also for 1: parallel kernels default to all
            carom.set_num_threads(threads)
    tiny_world, tiny = _tiny_description()
    if hasattr(tiny_world, "sleep_enabled"):
        tiny_world.sleep_enabled = False
    if engine == "carom":
        tiny_world.step(DT)                        # loads (or compiles) carom's kernels
    elif engine == "pymunk":
        build_pymunk(tiny)[0].step(DT)
    else:
        build_box2d(tiny)[0].Step(DT, 8, 3)
    del tiny_world
    gc.collect()
    peak_reset = _reset_peak_rss()
    baseline = _maxrss_mb()
    runner = _Runner(engine, spec, desc)
    times, peak = [], None
    try:
        for r in range(runs):
            runner.build()
            runner.step()                          # warm-up step, not timed
            t0 = time.perf_counter()
            for _ in range(steps):
                runner.step()
            times.append((time.perf_counter() - t0) / steps * 1000.0)
            if peak is None:
                peak = _maxrss_mb()
    except NotExpressible as e:
        return dict(error=f"not expressible: {e}")
    q = quality(spec, desc, runner.state(), (steps + 1) * DT)
    return dict(ms=times, memory_mb=peak - baseline, baseline_mb=baseline, peak_reset=peak_reset, quality=q)


def _worker(path):
    """Subprocess entry: read the job pickled at ``path``, run it, write the result to ``path + '.out'``."""
    with open(path, "rb") as f:
        job = pickle.load(f)
    try:
        result = run_engine(job["engine"], job["spec"], job["desc"], job["steps"], job["runs"], job["threads"])
    except Exception as e:                          # reported in the table, the other engines still run
        result = dict(error=f"{type(e).__name__}: {e}")
    with open(path + ".out", "wb") as f:
        pickle.dump(result, f)


def _child_env(extra=None):
    env = dict(os.environ)
    src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.update(extra or {})
    return env


def run_in_subprocess(engine, spec, desc, steps, runs=RUNS, threads=1, timeout=1800):
    """:func:`run_engine` in a fresh Python process (so memory figures do not mix)."""
    with tempfile.TemporaryDirectory(prefix="carom-bench-") as tmp:
        path = os.path.join(tmp, "job.pkl")
        with open(path, "wb") as f:
            pickle.dump(dict(engine=engine, spec=spec, desc=desc, steps=steps, runs=runs, threads=threads), f)
        # Numba's thread pool capped at the run's thread count, whatever carom's kernels do with it
        env = _child_env({"NUMBA_NUM_THREADS": str(max(1, min(threads, os.cpu_count() or 1)))})
        proc = subprocess.run([sys.executable, "-c", "import sys; from carom.bench import _worker; "
                               "_worker(sys.argv[1])", path], env=env, capture_output=True,
                              text=True, timeout=timeout)
        if not os.path.exists(path + ".out"):
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
            return dict(error=f"worker failed (exit {proc.returncode}): {tail[0]}")
        with open(path + ".out", "rb") as f:
            return pickle.load(f)


# ---------------------------------------------------------------------------------------------------------
# start-up: cold compile and warm start

# prints this process's peak resident set in MB (as _maxrss_mb, without importing carom)
_PEAK = ("import resource, sys\n"
         "try:\n"
         "    _kb = int(next(l for l in open('/proc/self/status') if l.startswith('VmHWM:')).split()[1])\n"
         "except (OSError, StopIteration):\n"
         "    _kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
         "print(_kb / 1024)\n")

STARTUP_CODE = ("import carom\n"
                "from carom.scenes.rigid_scenes import pyramid\n"
                "w = pyramid(base=5)\n"
                "w.step(1 / 60)\n") + _PEAK

# every compiled part of the public API once: the rigid step (its continuous stage and contact events too; any
# thread count runs the same kernels), then the rest (``carom._warmup.public_api``: queries, geometry functions,
# broad-phase classes, Verlet world). Its run with an empty cache is the whole library's cold compile.
LIBRARY_CODE = (
    "import carom\n"
    "from carom.scenes import rigid_scenes as R\n"
    "from carom._warmup import public_api\n"
    "for make in (lambda: R.pyramid(base=5), lambda: R.pile(count=60), R.bullets):\n"
    "    w = make()\n"
    "    for _ in range(3):\n"
    "        w.step(1 / 60)\n"
    "    w.contact_events\n"
    "public_api()\n") + _PEAK

# the same 15-box pyramid in the other engines, for their whole-process memory (imports included)
_OTHER_STARTUP = {
    "pymunk": ("import pymunk\n"
               "s = pymunk.Space(); s.gravity = (0, -10)\n"
               "s.add(pymunk.Poly(s.static_body, [(-50, -2), (50, -2), (50, 0), (-50, 0)]))\n"
               "for row in range(5):\n"
               "    for i in range(5 - row):\n"
               "        b = pymunk.Body(); b.position = (i - 0.5 * (4 - row), 0.5 + row)\n"
               "        p = pymunk.Poly.create_box(b, (1, 1)); p.density = 1.0; s.add(b, p)\n"
               "s.step(1 / 60)\n") + _PEAK,
    "box2d": ("import Box2D\n"
              "w = Box2D.b2World(gravity=(0, -10), doSleep=False)\n"
              "w.CreateStaticBody().CreatePolygonFixture(box=(50, 1, (0, -1), 0))\n"
              "for row in range(5):\n"
              "    for i in range(5 - row):\n"
              "        w.CreateDynamicBody(position=(i - 0.5 * (4 - row), 0.5 + row)).CreatePolygonFixture("
              "box=(0.5, 0.5), density=1.0)\n"
              "w.Step(1 / 60, 8, 3)\n") + _PEAK,
}


def _run_timed(code, env):
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        return wall, None, (proc.stderr.strip().splitlines() or ["?"])[-1]
    return wall, float(proc.stdout.split()[-1]), None


def startup_times(engines=ENGINES, library=False):
    """Start-up of a fresh process that imports carom, builds a 15-box pyramid and steps once.

    Returns ``cold_s`` (wall time with an empty Numba cache: every kernel the step needs is compiled),
    ``warm_s`` (the same again, kernels loaded from that cache), ``rss_mb`` (whole-process peak resident set
    of the warm run, per engine: the same pyramid in pymunk and pybox2d when installed), with ``library``,
    ``library_s`` (wall time of :data:`LIBRARY_CODE`, every compiled part of the public API, with another
    empty cache), and ``error``.
    """
    out = dict(rss_mb={})
    # (a cold run leaves a background compile, carom._warmup.background, which ends within 0.2 s of the run:
    # waited for before the next run, and a cache directory it may still write to is removed regardless)
    with tempfile.TemporaryDirectory(prefix="carom-numba-cache-", ignore_cleanup_errors=True) as cache:
        env = _child_env({"NUMBA_CACHE_DIR": cache})
        for label in ("cold_s", "warm_s"):
            out[label], rss, err = _run_timed(STARTUP_CODE, env)
            time.sleep(0.5)
            if err:
                out["error"] = err
                return out
        out["rss_mb"]["carom"] = rss
    if library:
        with tempfile.TemporaryDirectory(prefix="carom-numba-cache-", ignore_cleanup_errors=True) as cache:
            out["library_s"], _rss, err = _run_timed(LIBRARY_CODE, _child_env({"NUMBA_CACHE_DIR": cache}))
            time.sleep(0.5)
            if err:
                out["error"] = err
                return out
    for engine in engines:
        if engine in _OTHER_STARTUP and _engine_available(engine):
            _wall, rss, err = _run_timed(_OTHER_STARTUP[engine], _child_env())
            if rss is not None:
                out["rss_mb"][engine] = rss
    return out


# ---------------------------------------------------------------------------------------------------------
# machine, table, report

def machine_description():
    """CPU model (from /proc/cpuinfo), core count, and the Python / NumPy / Numba / engine versions."""
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "")
    except OSError:
        pass
    cpu = cpu or platform.processor() or platform.machine()
    import numba
    parts = [f"{cpu}, {os.cpu_count()} cores", f"Python {platform.python_version()}",
             f"NumPy {np.__version__}", f"Numba {numba.__version__}"]
    for label, module in (("pymunk", "pymunk"), ("pybox2d", "Box2D")):
        try:
            mod = __import__(module)
            parts.append(f"{label} {getattr(mod, 'version', None) or getattr(mod, '__version__', '?')}")
        except ImportError:
            parts.append(f"{label} not installed")
    return ", ".join(parts)


# ---------------------------------------------------------------------------------------------------------
# how much a second thread can give on this machine

@numba.njit(cache=True)
def _probe_chain(x, reps):
    """A loop bound by latency: every step waits for the previous one (a multiply and an add)."""
    s = 0.0
    for _ in range(reps):
        for i in range(x.shape[0]):
            s = s * 0.999 + x[i]
    return s


@numba.njit(cache=True)
def _probe_throughput(x, reps):
    """A loop bound by throughput: eight independent sums, as many multiplies and adds per cycle as the
    core's units allow (the data, 16 KB, stays in the first-level cache)."""
    s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = 0.0
    for _ in range(reps):
        for i in range(0, x.shape[0] - 7, 8):
            s0 += x[i] * 1.0001
            s1 += x[i + 1] * 1.0001
            s2 += x[i + 2] * 1.0001
            s3 += x[i + 3] * 1.0001
            s4 += x[i + 4] * 1.0001
            s5 += x[i + 5] * 1.0001
            s6 += x[i + 6] * 1.0001
            s7 += x[i + 7] * 1.0001
    return s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7


@numba.njit(cache=True, parallel=True)
def _probe_parallel(throughput, x, reps):
    """One probe loop per row of x, all at once (one row per thread)."""
    out = np.zeros(x.shape[0])
    for t in numba.prange(x.shape[0]):
        out[t] = _probe_throughput(x[t], reps) if throughput else _probe_chain(x[t], reps)
    return out


def thread_ceiling(threads, repeats=3):
    """The speed-up ``threads`` threads give on work that splits perfectly: each of ``threads`` equal loops
    run one after another in one thread, against all of them at once (best of ``repeats``), for a loop
    bound by latency and one bound by throughput. On separate cores both come near ``threads``; when the
    "cores" are hardware threads of one core (SMT siblings, common in cloud machines), they share its
    execution units, and the throughput-bound loop gains little: that bounds what any engine's threads can
    give here; so does a clock that drops when every core is busy (on a shared cloud machine, also with the
    neighbours' load: the same loop has measured 1.2× and 2.0× on this 2-core machine within an hour).
    Returns ``{"latency": x, "throughput": y}``."""
    old = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        x = np.random.default_rng(0).random((threads, 2048))
        out = {}
        for label, throughput, reps in (("latency", False, 1500), ("throughput", True, 6000)):
            kernel = _probe_throughput if throughput else _probe_chain
            kernel(x[0], 1)
            _probe_parallel(throughput, x, 1)
            serial = parallel = np.inf
            for _ in range(repeats):
                t0 = time.perf_counter()
                for t in range(threads):
                    kernel(x[t], reps)
                serial = min(serial, time.perf_counter() - t0)
                t0 = time.perf_counter()
                _probe_parallel(throughput, x, reps)
                parallel = min(parallel, time.perf_counter() - t0)
            out[label] = serial / parallel
        return out
    finally:
        numba.set_num_threads(old)


def markdown_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


TABLE_HEADER = ["scene", "bodies", "engine", "ms/step (best of {runs})", "÷ carom", "runs spread", "memory (MB)",
                "top-box drift (m)", "deepest overlap (mm)", "escaped", "kinetic energy (J)", "joint error (mm)"]


def _row(name, bodies, label, res, carom_ms):
    if "error" in res:
        return [name, bodies, label, res["error"]] + [""] * (len(TABLE_HEADER) - 4)
    best = min(res["ms"])
    q = res["quality"]
    ratio = f"{best / carom_ms:.2f}" if carom_ms else ""
    spread = f"{(max(res['ms']) - best) / best * 100:.0f}%"
    drift = f"{q['drift_m']:.4f}" if "drift_m" in q else ""
    joint = f"{q['joint_mm']:.1f}" if "joint_mm" in q else ""
    return [name, bodies, label, f"{best:.2f}", ratio, spread, f"{res['memory_mb']:.1f}", drift,
            f"{q['overlap_mm']:.1f}", q["escaped"], f"{q['kinetic_J']:.4g}", joint]


def _speedup_line(name, ms_one, ms_many, around):
    """The report's line on a scene's multi-thread speed-up and the machine's ceiling around its runs."""
    lat = [c["latency"] for c in around]
    thr = [c["throughput"] for c in around]
    return (f"{name}: {ms_one:.2f} ms ÷ {ms_many:.2f} ms = {ms_one / ms_many:.2f}× faster; ceiling "
            f"{min(thr):.2f}–{max(thr):.2f}× for a loop bound by throughput, {min(lat):.2f}–{max(lat):.2f}× for "
            f"one bound by latency")


def _interleaved_runs(configs, spec, desc, steps, runs):
    """:func:`run_engine` results for each (engine, threads) of ``configs``, the runs taken in rounds: round r
    runs every configuration once, each in a fresh process, before round r + 1 starts. On a shared machine
    whose speed drifts over minutes (a VM next to busy neighbours), running one engine's runs back to back and
    then the next engine's put the engines in different conditions; in rounds, every engine's best run comes
    from the same stretch of time. Memory is that of the first round (a fresh process's first run, as
    before), quality that of the last round's final state."""
    merged = [None] * len(configs)
    for _round in range(runs):
        for c, (engine, th) in enumerate(configs):
            if merged[c] is not None and "error" in merged[c]:
                continue
            res = run_in_subprocess(engine, spec, desc, steps, 1, th)
            if "error" in res or merged[c] is None:
                merged[c] = res
            else:
                merged[c] = dict(merged[c], ms=merged[c]["ms"] + res["ms"], quality=res["quality"])
    return merged


def run(scenes, engines, steps, runs=RUNS, threads=1, startup=False, log=print):
    """Run the benchmark; returns the Markdown report (table and notes) and prints rows as they come."""
    import carom
    rows, summary, notes, scene_notes = [], [], [], []
    header = [h.format(runs=runs) for h in TABLE_HEADER]
    log("| " + " | ".join(header) + " |")
    thread_sets = [1]
    if threads > 1:
        if hasattr(carom, "set_num_threads"):
            thread_sets.append(threads)
        else:
            notes.append(f"--threads {threads} ignored: this carom has no set_num_threads.")
            log(f"note: {notes[-1]}")
    speedups = []
    for name in scenes:
        spec = scene_spec(name)
        desc = describe(build_carom(spec))
        n = sum(1 for k in desc["kind"] if k == "dynamic")
        ms = {}
        one_thread_ms = None           # carom's, when its one-thread runs worked
        configs = [(engine, th) for engine in engines for th in (thread_sets if engine == "carom" else [1])]
        # the machine's ceiling for the threads, measured just before and just after the scene's runs
        around = [thread_ceiling(threads)] if len(thread_sets) > 1 else []
        results = _interleaved_runs(configs, spec, desc, steps, runs)
        around += [thread_ceiling(threads)] if around else []
        for (engine, th), res in zip(configs, results):
            label = ENGINE_LABELS[engine] + (f" ({th} threads)" if th > 1 else "")
            if "error" not in res:
                ms.setdefault(engine, min(res["ms"]))
                if engine == "carom" and th == 1:
                    one_thread_ms = min(res["ms"])
                elif engine == "carom" and one_thread_ms is not None:
                    speedups.append(_speedup_line(name, one_thread_ms, min(res["ms"]), around))
            rows.append(_row(name, n, label, res, ms.get("carom")))
            log("| " + " | ".join(str(c) for c in rows[-1]) + " |")
        for other in ("pymunk", "box2d"):
            if "carom" in ms and other in ms:
                summary.append(f"{name}: carom {ms['carom']:.2f} ms, {ENGINE_LABELS[other]} {ms[other]:.2f} ms "
                               f"→ carom takes {ms['carom'] / ms[other]:.2f}× {ENGINE_LABELS[other]}'s time")
        if spec.get("note"):
            scene_notes.append(f"{name}: {spec['note']}.")
    report = markdown_table(header, rows)
    if summary:
        report += "\n\nRatios (carom time ÷ other engine's time; below 1 means carom is faster):\n\n"
        report += "\n".join(f"- {s}" for s in summary)
    if speedups:
        report += (f"\n\ncarom with {threads} threads (one-thread time ÷ {threads}-thread time), next to this "
                   f"machine's ceiling for {threads} threads just before and after the scene's runs (a loop run "
                   f"{threads} times, one after another in one thread vs all at once; below {threads}× the cores "
                   f"slow down when all are busy: hardware threads of one core, or a clock that drops under "
                   f"load, which bounds what threads can give any engine):\n\n")
        report += "\n".join(f"- {s}" for s in speedups)
        for line in speedups:
            log(line)
    if startup:
        st = startup_times(engines, library=True)
        if "error" in st:
            line = f"carom start-up: failed ({st['error']})"
        else:
            rss = ", ".join(f"{ENGINE_LABELS[e]} {mb:.0f} MB" for e, mb in st["rss_mb"].items())
            line = (f"carom start-up (fresh process: `import carom`, a 15-box pyramid, one step): cold compile "
                    f"{st['cold_s']:.1f} s (empty Numba cache), warm start {st['warm_s']:.2f} s (kernels "
                    f"from the cache). Cold compile of the whole library (every compiled part of the public "
                    f"API once: rigid step, events, queries, geometry functions, broad-phase classes, Verlet "
                    f"world; `bench.LIBRARY_CODE`): {st['library_s']:.1f} s. Whole-process peak memory for "
                    f"that small pyramid (interpreter and imports included): {rss}")
        log(line)
        report += "\n\n" + line + "."
    report += (f"\n\nEach figure: {runs} runs per engine and scene, taken in rounds (every engine once per "
               f"round), each run in a fresh process: the world is built, one warm-up step + {steps} timed steps "
               "(best run shown; spread = (worst − best) / best). "
               "dt = 1/60, one thread. carom: 4 substeps; pymunk: 10 iterations, collision slop 5 mm, friction "
               "√μ per shape (so pairs meet with μ); pybox2d: 8 velocity / 3 position iterations. Sleeping "
               "off everywhere. Memory: peak resident set during build + first run minus the resident set "
               "before building (imports and loaded kernels excluded; peak mark reset before the scene). "
               "Quality, from the final state of the last run with one ruler for every engine: deepest overlap "
               "by carom's SAT between shapes of different bodies that may collide; drift of the pyramids' top "
               "boxes (largest); bodies escaped from the scene bounds (tumbler: past a wall's inner face in the "
               "container frame); kinetic energy with carom's masses; joint error: the largest distance between "
               "a revolute joint's two anchors (or a rigid distance joint's error in length).")
    if scene_notes:
        report += "\n\nScenes: " + " ".join(scene_notes)
    if notes:
        report += "\n\n" + " ".join(notes)
    return report


def append_results(path, report, command):
    """Append a dated section (date, machine, command, report) to the Markdown file at ``path``."""
    now = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    block = (f"\n## Rigid bodies: carom vs pymunk vs pybox2d — {now}\n\n"
             f"{machine_description()} — `{command}`\n\n{report.strip()}\n")
    if not os.path.exists(path):
        block = "# carom benchmark results\n" + block
    with open(path, "a") as f:
        f.write(block)


def main(argv=None, command=None):
    """``carom bench [SCENE ...] [--steps N] [--threads N] [--engines carom,pymunk,box2d] [--no-write]``.

    ``command`` is how the run is named in the results file (default ``carom bench`` and the arguments).
    """
    ap = argparse.ArgumentParser(prog="carom bench", description="carom vs pymunk vs pybox2d on Box2D's "
                                 "benchmark scenes: ms per step, memory and quality")
    ap.add_argument("scenes", nargs="*", help=f"scenes (default: {' '.join(DEFAULT_SCENES)}); any scene of "
                    "`carom scenes` works too")
    ap.add_argument("--steps", type=int, default=100, help="timed steps per run (default 100)")
    ap.add_argument("--runs", type=int, default=RUNS, help="runs per engine and scene, best kept (default 3)")
    ap.add_argument("--threads", type=int, default=1, help="also run carom with N threads, if it can")
    ap.add_argument("--engines", default=",".join(ENGINES), help="comma-separated: carom,pymunk,box2d")
    ap.add_argument("--startup", action=argparse.BooleanOptionalAction, default=None,
                    help="measure cold compile and warm start (default: on when no scene is named)")
    ap.add_argument("--out", default=os.path.join("benchmarks", "RESULTS.md"),
                    help="Markdown file the dated results are appended to (default benchmarks/RESULTS.md)")
    ap.add_argument("--no-write", action="store_true", help="print only, append nothing")
    args = ap.parse_args(argv)
    engines = [e.strip().lower() for e in args.engines.split(",") if e.strip()]
    engines = ["box2d" if e in ("pybox2d", "b2") else e for e in engines]
    bad = [e for e in engines if e not in ENGINES]
    if bad or not engines:
        ap.error(f"unknown engine(s) {', '.join(bad) or '(none)'}; choose from {', '.join(ENGINES)}")
    if args.steps < 1 or args.runs < 1 or args.threads < 1:
        ap.error("--steps, --runs and --threads must be at least 1")
    scenes = args.scenes or list(DEFAULT_SCENES)
    for name in scenes:
        try:
            scene_spec(name)
        except Exception as e:
            ap.error(str(e))
    startup = (not args.scenes) if args.startup is None else args.startup
    report = run(scenes, engines, args.steps, args.runs, args.threads, startup)
    if not args.no_write:
        if os.path.isdir(os.path.dirname(os.path.abspath(args.out))):
            if command is None:
                command = "carom bench " + " ".join(sys.argv[1:] if argv is None else argv)
            append_results(args.out, report, command.strip())
            print(f"appended to {args.out}")
        else:
            print(f"not written: no directory for {args.out} (use --out or --no-write)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
