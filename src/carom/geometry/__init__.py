"""carom.geometry: collision geometry usable without any world (shapes, mass, hull, decomposition, AABB,
SAT/GJK/EPA manifolds, ray casts, time of impact, broad phases)."""
from .shapes import (Shape, Circle, Capsule, Segment, Polygon, box, Transform,
                     CIRCLE, CAPSULE, SEGMENT, POLYGON)
from .hull import convex_hull
from .mass import mass_properties, MassProperties
from .manifold_types import Manifold
from .collide import collide
from .gjk import distance, overlap, DistanceResult
from .epa import penetration
from .toi import time_of_impact
from .decompose import decompose, triangulate
from .raycast import raycast, RayHit
from .broadphase import BruteForce, SweepAndPrune, DynamicTree, UniformGrid

__all__ = ["Shape", "Circle", "Capsule", "Segment", "Polygon", "box", "Transform", "CIRCLE", "CAPSULE", "SEGMENT",
           "POLYGON", "convex_hull", "mass_properties", "MassProperties", "Manifold", "collide", "distance",
           "overlap", "DistanceResult", "penetration", "time_of_impact", "decompose", "triangulate", "raycast",
           "RayHit", "BruteForce", "SweepAndPrune", "DynamicTree", "UniformGrid"]
