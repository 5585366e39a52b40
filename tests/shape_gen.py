"""Seeded random shapes shared by the geometry tests, and their shapely oracles (core geometry + radius)."""
import math

import numpy as np
import shapely

from carom.geometry import Circle, Capsule, Segment, Polygon, Transform


def random_shape(rng, kinds=("circle", "capsule", "segment", "polygon", "rounded")):
    kind = kinds[int(rng.integers(len(kinds)))]
    scale = float(rng.uniform(0.2, 2.0))
    if kind == "circle":
        return Circle(scale * rng.uniform(0.2, 1.0), rng.normal(0, 0.2, 2))
    if kind in ("capsule", "segment"):
        p1 = rng.normal(0, scale, 2)
        p2 = p1 + rng.normal(0, scale, 2) + 0.05
        return Capsule(p1, p2, scale * rng.uniform(0.05, 0.5)) if kind == "capsule" else Segment(p1, p2)
    while True:
        n = int(rng.integers(3, 9))
        ang = np.sort(rng.uniform(0, 2 * math.pi, n))
        rad = scale * rng.uniform(0.5, 1.0, n)
        pts = np.stack([rad * np.cos(ang), rad * np.sin(ang)], axis=1)
        try:
            poly = Polygon(pts, radius=scale * rng.uniform(0.02, 0.3) if kind == "rounded" else 0.0)
        except ValueError:
            continue
        if shapely.Polygon(poly.vertices).area > 0.01 * scale * scale:
            return poly


def random_transform(rng, spread=2.0):
    return Transform(rng.uniform(-spread, spread, 2), rng.uniform(-math.pi, math.pi))


def core_geometry(shape, xf):
    """The shape's core as a shapely geometry in world space."""
    pts = xf.apply(shape.vertices)
    if len(pts) == 1:
        return shapely.Point(pts[0])
    if len(pts) == 2:
        return shapely.LineString(pts)
    return shapely.Polygon(pts)


def true_distance(a, xa, b, xb):
    """Signed-free distance between the rounded shapes (≤ 0 means touching/overlapping), by shapely."""
    return core_geometry(a, xa).distance(core_geometry(b, xb)) - a.radius - b.radius
