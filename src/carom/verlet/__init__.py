"""carom.verlet: a position-based world of particles, sticks and vertex/edge bodies (seed 000).

    from carom import verlet
    vw = verlet.World(gravity=(0, -10), iterations=8)
    box = vw.add_box(center=(0, 5), width=1, height=1)
    vw.step(1 / 60)
"""
from .world import World, Body, Group, convex_outline, edge_vertex_response

__all__ = ["World", "Body", "Group", "convex_outline", "edge_vertex_response"]
