"""carom.geometry: collision geometry usable without any world (shapes, mass, hull, decomposition, AABB,
SAT/GJK/EPA manifolds, ray casts, time of impact, broad phases)."""
from .shapes import (Shape, Circle, Capsule, Segment, Polygon, box, Transform,
                     CIRCLE, CAPSULE, SEGMENT, POLYGON)
from .hull import convex_hull
