"""The compiled parts of the public API, called once each on small inputs: compiled in the background after
the first cold rigid step, and the body of the benchmark's whole-library compile (``bench.LIBRARY_CODE``).

Why: with an empty cache, the first rigid step compiles on both cores (``carom._jit.compile_helper``), and
every other kernel (queries, geometry functions, broad-phase classes, the Verlet world: about 30 s) would be
compiled when first called, on one core. So the step's compile helper, once it has compiled the step's late
stages, starts one more process (:func:`background`) that calls :func:`public_api` at the lowest priority:
it runs on the core the step's compile leaves idle, and on whatever core is idle afterwards, while the
program goes on; what it finishes is in the cache when the program gets there. It ends within a fifth of
a second of the program (a cache entry is written whole, so none is left half written), and it is started
on POSIX systems with two cores or more only (no helper is started on one core). Measured with
``bench.LIBRARY_CODE`` (the rigid step, then this module's calls) from an empty cache: 63.5 s with every
kernel compiled on first use, 59.6 s with the helper calling these before it stops, 54.9 s with this process.
"""
import os
import subprocess
import sys
import threading

from ._jit import end_with
from .rigid import _step


def late_stages_then_public_api(step_types):
    """The compile helper's job: the step's late stages (``_step.compile_late_stages``), then the rest of the
    public API in a process of its own (:func:`background`), which outlives this helper (stopped as soon as
    the step's compile is done) and stops with the program."""
    _step.compile_late_stages(step_types)
    if os.name != "posix":
        return
    try:
        subprocess.Popen([sys.executable, "-c", f"import carom._warmup as w; w.background({os.getppid()})"],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         env=os.environ.copy())
    except OSError:
        pass


def background(program):
    """:func:`public_api` at the lowest priority, for as long as the process ``program`` runs (a watcher
    thread ends this process when it is gone)."""
    try:
        os.nice(19)
    except OSError:
        pass
    threading.Thread(target=end_with, args=(program,), daemon=True).start()
    public_api()


def public_api():
    """Call every compiled part of the public API but the rigid step once, most used first: the world's
    queries, the geometry functions, the four broad-phase classes and the Verlet world (one step of each of
    its scenes)."""
    from . import geometry as G
    from .rigid import World
    from .scenes import verlet_scenes

    w = World()
    w.static_body.add_shape(G.Segment((-10.0, 0.0), (10.0, 0.0)))
    body = w.add_body(position=(0.0, 1.0))
    body.add_shape(G.box(0.5, 0.5))
    body.add_shape(G.Circle(0.3, center=(0.5, 0.5)))
    w.raycast((-20.0, 1.0), (20.0, 1.0))
    w.raycast_first((-20.0, 1.0), (20.0, 1.0))
    w.query_point((0.0, 1.0))
    w.query_aabb((-1.0, -1.0), (1.0, 1.0))
    w.query_shape(G.Circle(1.0), (0.0, 1.0))

    a, b = G.box(1.0, 1.0), G.Circle(0.5)
    outline = [(0.0, 0.0), (4.0, 0.0), (4.0, 4.0), (2.0, 1.0), (0.0, 4.0)]
    G.convex_hull(outline)
    G.decompose(outline)
    G.triangulate(outline)
    a.mass_properties()
    a.aabb((1.0, 2.0, 0.3))
    G.collide(a, (0.0, 0.0, 0.0), b, (0.5, 0.6, 0.0))
    G.collide(a, (0.0, 0.0, 0.0), a, (0.5, 0.6, 0.3), method="gjk")
    G.distance(a, (0.0, 0.0, 0.0), b, (3.0, 0.0, 0.0))
    G.overlap(a, (0.0, 0.0, 0.0), b, (3.0, 0.0, 0.0))
    G.penetration(a, (0.0, 0.0, 0.0), b, (0.5, 0.0, 0.0))
    G.raycast(a, (0.0, 0.0, 0.0), (-3.0, 0.0), (6.0, 0.0))
    G.time_of_impact(a, (0.0, 0.0, 0.0), (5.0, 0.0, 0.0), b, (3.0, 0.0, 0.0), (3.0, 0.0, 0.0))

    for structure in (G.DynamicTree, G.UniformGrid, G.SweepAndPrune, G.BruteForce):
        bp = structure()
        ids = [bp.insert((i, 0.0), (i + 1.5, 1.0)) for i in range(10)]
        bp.pairs()
        bp.move(ids[0], (0.5, 0.0), (2.0, 1.0))
        bp.update(ids[2:4], [[2.0, 0.0], [3.0, 0.0]], [[3.0, 1.0], [4.0, 1.0]])
        bp.pairs()
        bp.query((0.0, 0.0), (3.0, 1.0))
        bp.raycast((-1.0, 0.5), (20.0, 0.0))
        bp.remove(ids[1])
        bp.pairs()

    for scene in (verlet_scenes.verlet_boxes, verlet_scenes.rope_cloth, verlet_scenes.jelly):
        scene().step(1.0 / 60.0)


def every_kernel():
    """Compile (or load) every kernel a user can reach, for the wheel's shipped cache (``tools/kernel_wheel.py``):
    rigid steps of worlds that use every stage (stacks, mixed shapes, bullets, joints of every kind the scenes
    hold, a chain terrain, sensors, a pre-solve hook), their events and contact data, then :func:`public_api`."""
    import numpy as np
    from . import geometry as G
    from .scenes import rigid_scenes as R
    from .rigid import World, pre_solve_function, joints
    from .geometry._tree_pairs import load_grid
    from .rigid.joints._apart import load_lanes

    worlds = [R.pyramid(base=5), R.pile(count=60), R.bullets(), R.pendulum(), R.chain(links=8),
              R.bridge(planks=10, drops=2), R.ragdolls(count=2, columns=2), R.car(track_length=10.0),
              R.cradle(balls=3)]
    w = World()
    w.static_body.add_chain([(-20, 0), (-10, 0), (0, 0.5), (10, 0), (20, 0)])
    gate = w.add_body(position=(3, 1), kind="static")
    gate.add_shape(G.box(0.5, 1), sensor=True)
    a = w.add_body(position=(0, 2))
    a.add_shape(G.box(0.5, 0.5), one_way=(0, 1), tangent_speed=1.0)
    b = w.add_body(position=(1.5, 2))
    b.add_shape(G.Capsule((-0.3, 0), (0.3, 0), 0.2), rolling_resistance=0.1)
    for kind in (joints.Distance(a, b, (0, 2), (1.5, 2)), joints.Weld(a, b, anchor=(0.7, 2)),
                 joints.Prismatic(a, b, anchor=(0.7, 2), axis=(1, 0)), joints.Motor(a, b),
                 joints.Mouse(b, target=(2, 3)), joints.Wheel(a, b, anchor=(1.5, 2), axis=(0, 1))):
        w.add_joint(kind)
    w.on("begin", lambda e: None)
    worlds.append(w)
    # the broad phase's grid search and the joints' vector lanes, which a world's step otherwise has compiled in
    # a helper process
    load_grid(worlds[0].tables.bp.step_table(), 1)
    load_lanes()
    for world in worlds:
        for _ in range(3):
            world.step(1 / 60)
        world.contact_events()
        world.contact_data()
        world.contacts()
        World.restore(world.snapshot())

    @pre_solve_function
    def keep(shape_a, shape_b, body_a, body_b, normal_x, normal_y, point_count, points, material):
        return 1

    worlds[0].pre_solve = keep
    worlds[0].step(1 / 60)
    worlds[0].add_bodies(np.zeros((2, 2)) + (0.0, 30.0), shape=G.Circle(0.2))
    worlds[0].step(1 / 60)
    batch_kernels()
    public_api()


def batch_kernels() -> None:
    """The kernels of :class:`carom.WorldBatch` (its step, bulk reads) and, with gymnasium installed, of the
    native vector LunarLander (steps and resets) and BipedalWalker, for the wheel's shipped cache."""
    import importlib.util
    import numpy as np
    from .batch import WorldBatch
    from .scenes import rigid_scenes as R
    batch = WorldBatch(R.chain(links=3), 2)
    batch.step(1 / 60)
    batch.state()
    if importlib.util.find_spec("gymnasium") is not None:
        import gymnasium as gym
        import carom.envs  # noqa: F401
        env = gym.make_vec("carom/LunarLander-v3", num_envs=2)
        env.reset(seed=0)
        env.step(np.zeros(2, np.int64))
        env.reset(seed=1)               # (the compiled resets)
        walkers = gym.make_vec("carom/BipedalWalker-v3", num_envs=2)
        walkers.reset(seed=0)
        walkers.step(np.zeros((2, 4)))
