"""The compiled parts of the public API, called once each on small inputs: the job of the step's compile
helper once it has compiled the step's late stages, and the body of the benchmark's whole-library compile.

Why: with an empty cache, the first rigid step compiles on both cores (``carom._jit.compile_helper``), but
the helper finishes its share about 7 s before the step's own compile is done, and every other kernel
(queries, geometry functions, broad-phase classes, the Verlet world) is compiled when first called, on one
core. The helper spends its spare seconds here, most used first, until the step's compile is done and stops
it; what it finished is in the cache when the program gets there. Measured with ``bench.LIBRARY_CODE``: the
whole library's cold compile went from 63.5 to 59.6 s (the world's ray cast and point query, mostly).
"""
from .rigid import _step


def late_stages_then_public_api(step_types):
    """The compile helper's job: the step's late stages (``_step.compile_late_stages``), then
    :func:`public_api`."""
    _step.compile_late_stages(step_types)
    public_api()


def public_api():
    """Call every compiled part of the public API but the rigid step once: the world's queries and contact
    list, the geometry functions, the four broad-phase classes and the Verlet world (one step of each of its
    scenes)."""
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
