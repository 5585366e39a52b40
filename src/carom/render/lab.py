"""The collision lab: step-by-step pictures of the collision algorithms (``carom lab ALGORITHM --out FILE``).

Each algorithm is traced by a small, readable Python version that records its state at every step — not the
compiled kernels, whose loops keep no history — and the tests check that each trace ends at the same answer
as the library (:func:`carom.geometry.distance`, :func:`~carom.geometry.penetration`,
:func:`~carom.geometry.collide`, :func:`~carom.geometry.time_of_impact`, the broad phases).

========  =========================================================================================
sat       separating axes: both shapes projected on every edge normal (and, for rounded shapes whose
          cores are apart, the closest-points direction); the axis of least overlap is the answer
gjk       GJK on the Minkowski difference M = B ⊖ A = {b − a}: the simplex and its closest point to the
          origin at each iteration (distance = |closest point| − rA − rB)
epa       EPA on the same M when the cores overlap: the polygon grown towards M's boundary, one support
          point per iteration, until the closest edge is on M's boundary (depth = its distance + rA + rB)
clip      the contact manifold: reference face by SAT, incident edge, clipping to the reference edge's side
          planes, points below the reference face kept
toi       time of impact by conservative advancement: the swept shape, each safe advance, the first contact
sap       sort and sweep: boxes, their intervals on the axis of largest spread, the active list, the pairs
tree      the dynamic AABB tree (carom's own) after each insertion: leaf boxes and internal boxes by depth
========  =========================================================================================

A GIF gets one frame per step; a PNG is a grid of the steps (evenly sampled, first and last kept, when
there are many). Pictures use matplotlib's Agg canvas (no window, no pyplot state) and pillow for the GIF.

Shapes are given as text (``--a``/``--b``), e.g. ``box:0.5,0.3@1,2,0.4`` (half extents, then ``@x,y,angle``),
``circle:0.4``, ``capsule:-0.3,0,0.3,0,0.2``, ``segment:0,0,1,0``, ``polygon:0,0,1,0,0,1;0.05`` (points, then
an optional ``;radius``) — or drawn at random from ``--seed``.
"""
import math

import numpy as np
from ._deps import require

from ..constants import LINEAR_SLOP, TOI_TARGET, TOI_MAX_ITERATIONS, GJK_MAX_ITERATIONS, EPA_MAX_ITERATIONS
from ..errors import CaromError, GeometryError
from ..geometry import Circle, Capsule, Segment, Polygon, box, Transform
from ..geometry.shapes import as_transform
from .draw import rounded_outline

ALGORITHMS = {
    "sat": "separating axis test: projections on every axis, the axis of least overlap",
    "gjk": "GJK distance: the Minkowski difference and the simplex at each iteration",
    "epa": "EPA penetration: the expanding polytope at each iteration",
    "clip": "contact manifold: reference and incident edge, side-plane clipping, kept points",
    "toi": "time of impact: the swept shape, conservative advances, the first contact pose",
    "sap": "sort and sweep: boxes, their intervals on the axis, the active list and the pairs",
    "tree": "dynamic AABB tree: leaf boxes and internal node boxes by depth after each insertion",
}

COLOUR_A = "#1f77b4"
COLOUR_B = "#ff7f0e"
HIGHLIGHT = "#d62728"
GOOD = "#2ca02c"
MINK = "#9467bd"
DEPTH = ("#1f77b4", "#ff7f0e", "#9467bd", "#17becf", "#bcbd22", "#e377c2", "#8c564b")

#: Reference-face preference of the clipping (the library's rule): B's face wins only when it is better by
#: this much, so the choice does not flicker between nearly equal faces.
FLIP_TOLERANCE = 0.1 * LINEAR_SLOP


class Step:
    """One picture: a short ``title`` and ``draw(axes)`` that draws it onto a list of ``panels`` axes."""
    __slots__ = ("title", "draw")

    def __init__(self, title, draw):
        self.title = title
        self.draw = draw


class Lab:
    """A traced algorithm: its ``steps``, the number of axes each step needs, and the ``result`` (a dict)."""

    def __init__(self, algorithm, steps, result, panels=1):
        self.algorithm = algorithm
        self.steps = steps
        self.result = result
        self.panels = panels


# ============================================================================================ shape input
def _numbers(text, spec):
    try:
        return [float(x) for x in text.split(",") if x.strip() != ""]
    except ValueError:
        raise GeometryError(f"shape spec {spec!r}: {text!r} is not a comma-separated list of numbers") from None


def parse_shape(spec):
    """Parse ``kind:params[@x,y[,angle]]`` into ``(shape, Transform)`` (see the module docstring)."""
    if not isinstance(spec, str) or ":" not in spec:
        raise GeometryError(f"shape spec must look like 'box:0.5,0.3@1,2,0.4', got {spec!r}")
    body, _, pose = spec.partition("@")
    kind, _, params = body.partition(":")
    kind = kind.strip().lower()
    radius = 0.0
    if kind == "polygon" and ";" in params:
        params, _, r = params.partition(";")
        radius = _numbers(r, spec)[0] if _numbers(r, spec) else 0.0
    p = _numbers(params, spec)
    if kind == "circle" and len(p) == 1:
        shape = Circle(p[0])
    elif kind == "box" and len(p) in (2, 3):
        shape = box(p[0], p[1], radius=p[2] if len(p) == 3 else 0.0)
    elif kind == "capsule" and len(p) == 5:
        shape = Capsule(p[0:2], p[2:4], p[4])
    elif kind == "segment" and len(p) == 4:
        shape = Segment(p[0:2], p[2:4])
    elif kind == "polygon" and len(p) >= 6 and len(p) % 2 == 0:
        shape = Polygon(np.reshape(p, (-1, 2)), radius)
    else:
        raise GeometryError(f"shape spec {spec!r}: expected circle:R, box:HW,HH[,R], capsule:X1,Y1,X2,Y2,R, "
                            f"segment:X1,Y1,X2,Y2 or polygon:X1,Y1,X2,Y2,X3,Y3,...[;R]")
    if pose.strip():
        q = _numbers(pose, spec)
        if len(q) not in (2, 3):
            raise GeometryError(f"shape spec {spec!r}: the pose after '@' must be x,y or x,y,angle")
        xf = Transform(q[:2], q[2] if len(q) == 3 else 0.0)
    else:
        xf = Transform()
    return shape, xf


def _placed(item):
    """A shape spec string, a ``(shape, transform)`` pair or None → ``(shape, Transform)`` or None."""
    if item is None:
        return None
    if isinstance(item, str):
        return parse_shape(item)
    shape, xf = item
    return shape, as_transform(xf)


def random_shape(rng, kinds=("polygon", "box", "capsule", "circle"), size=1.0):
    """A random shape about 2·``size`` across, centred near its origin."""
    kind = kinds[int(rng.integers(len(kinds)))]
    if kind == "box":
        return box(*(size * rng.uniform(0.4, 0.9, 2)))
    if kind == "circle":
        return Circle(size * rng.uniform(0.5, 0.9))
    if kind == "capsule":
        h = size * rng.uniform(0.3, 0.7)
        return Capsule((-h, 0.0), (h, 0.0), size * rng.uniform(0.2, 0.45))
    n = int(rng.integers(3, 8))
    ang = np.sort(rng.uniform(0, 2 * math.pi, n)) + np.linspace(0, 0.5, n)
    rad = size * rng.uniform(0.6, 1.0, n)
    return Polygon(np.stack([rad * np.cos(ang), rad * np.sin(ang)], 1))


def _extent(shape):
    return float(np.max(np.hypot(*shape.vertices.T))) + shape.radius


def random_pair(rng, kinds=("polygon", "box", "capsule", "circle"), relation="overlap"):
    """Two random placed shapes: ``relation`` is ``"overlap"`` (cores overlapping), ``"apart"`` (a gap) or
    ``"any"``. Deterministic for a given ``rng`` state."""
    from ..geometry import distance
    for _ in range(200):
        a, b = random_shape(rng, kinds), random_shape(rng, kinds)
        xa = Transform((0.0, 0.0), rng.uniform(-math.pi, math.pi))
        u = rng.uniform(-math.pi, math.pi)
        reach = _extent(a) + _extent(b)
        factor = {"overlap": rng.uniform(0.45, 0.8), "apart": rng.uniform(1.1, 1.5), "any": rng.uniform(0.3, 1.3)}
        s = reach * factor[relation]
        xb = Transform((s * math.cos(u), s * math.sin(u)), rng.uniform(-math.pi, math.pi))
        if relation == "any":
            return a, xa, b, xb
        core_a, core_b = _core(a, xa), _core(b, xb)
        d_core = gjk_trace(core_a, core_b)[1]["core_distance"]
        if relation == "overlap" and d_core == 0.0:
            return a, xa, b, xb
        if relation == "apart" and distance(a, xa, b, xb).distance > 0.05:
            return a, xa, b, xb
    raise CaromError(f"could not draw a random {relation} pair")  # pragma: no cover


def _core(shape, xf):
    return as_transform(xf).apply(shape.vertices)


def _edge_normals(core):
    """Outward unit normals of a counter-clockwise core's edges i → i+1 (a 2-vertex core has two edges)."""
    e = np.roll(core, -1, axis=0) - core
    n = np.stack([e[:, 1], -e[:, 0]], 1)
    return n / np.hypot(n[:, 0], n[:, 1])[:, None]


def _cross(a, b):
    return a[0] * b[1] - a[1] * b[0]


# ==================================================================================================== GJK
def _support_m(core_a, core_b, d):
    """Support point of M = B ⊖ A along d: s_B(d) − s_A(−d), with the vertex indices that made it."""
    ia = int(np.argmax(core_a @ -d))
    ib = int(np.argmax(core_b @ d))
    return core_b[ib] - core_a[ia], ia, ib


def _closest_on_simplex(W):
    """Closest point to the origin of the simplex W (list of (w, ia, ib), 1–3 points): (v, reduced W, weights).

    Edge: v = w1 + t (w2 − w1), t = clamp(−w1·e / e·e); an end value of t means the vertex alone.
    Triangle: barycentric weights λk = cross(wi, wj) / cross(w2 − w1, w3 − w1) for the opposite edge (i, j);
    all ≥ 0 puts the origin inside (v = 0); otherwise the nearest of the three edges.
    """
    pts = [w for w, _, _ in W]
    if len(W) == 1:
        return pts[0].copy(), W, [1.0]
    if len(W) == 2:
        w1, w2 = pts
        e = w2 - w1
        ee = float(e @ e)
        t = 0.0 if ee == 0.0 else min(max(-float(w1 @ e) / ee, 0.0), 1.0)
        if t == 0.0:
            return w1.copy(), W[:1], [1.0]
        if t == 1.0:
            return w2.copy(), W[1:], [1.0]
        return w1 + t * e, W, [1.0 - t, t]
    w1, w2, w3 = pts
    area = _cross(w2 - w1, w3 - w1)
    if area != 0.0:
        lam = [_cross(w2, w3) / area, _cross(w3, w1) / area, _cross(w1, w2) / area]
        if min(lam) >= 0.0:
            return np.zeros(2), W, lam
    best = None
    for i, j in ((0, 1), (1, 2), (2, 0)):
        v, sub, lam = _closest_on_simplex([W[i], W[j]])
        if best is None or v @ v < best[0] @ best[0]:
            best = (v, sub, lam)
    return best


def gjk_trace(core_a, core_b, max_iterations=GJK_MAX_ITERATIONS):
    """GJK on world cores, recording every iteration: ``(states, result)``.

    Each state: ``simplex`` (M points before reduction), ``kept`` (the face nearest the origin), ``closest``
    (v), ``support`` (the new point s_M(−v) or None) and ``verdict``. The loop stops when the origin is in the
    simplex (cores overlap), or when s_M(−v) is no further along −v than v itself (v·v − v·s ≤ 1e-12·|v|²:
    no point of M is nearer the origin than v). ``result``: ``core_distance`` |v|, witness points
    ``point_a``/``point_b`` (the same weights on the A and B vertices), ``simplex``, ``iterations``.
    """
    core_a = np.asarray(core_a, float)
    core_b = np.asarray(core_b, float)
    d = core_b.mean(axis=0) - core_a.mean(axis=0)
    if not d.any():
        d = np.array([1.0, 0.0])
    w, ia, ib = _support_m(core_a, core_b, d)
    W = [(w, ia, ib)]
    states = []
    v, kept, lam = W[0][0], W, [1.0]
    for it in range(max_iterations):
        v, kept, lam = _closest_on_simplex(W)
        state = {"simplex": [p for p, _, _ in W], "kept": [p for p, _, _ in kept], "closest": v.copy(),
                 "support": None, "iteration": it + 1}
        states.append(state)
        vv = float(v @ v)
        if vv == 0.0:
            state["verdict"] = "origin inside the simplex: the cores overlap"
            break
        s, ia, ib = _support_m(core_a, core_b, -v)
        state["support"] = s
        if any(ia == ja and ib == jb for _, ja, jb in kept) or vv - float(v @ s) <= 1e-12 * vv:
            state["verdict"] = "no progress along −v: v is the closest point of M"
            break
        state["verdict"] = "add the support point s_M(−v)"
        W = kept + [(s, ia, ib)]
    pa = sum(l * core_a[i] for l, (_, i, _) in zip(lam, kept))
    pb = sum(l * core_b[j] for l, (_, _, j) in zip(lam, kept))
    result = {"core_distance": float(math.sqrt(v @ v)), "point_a": np.asarray(pa, float),
              "point_b": np.asarray(pb, float), "simplex": kept, "iterations": len(states)}
    return states, result


def gjk_distance(a, xa, b, xb):
    """Distance of two placed shapes by :func:`gjk_trace`: ``(distance, point_a, point_b, states)`` with the
    rounding applied (points moved by rA and rB along the core direction)."""
    xa, xb = as_transform(xa), as_transform(xb)
    states, res = gjk_trace(_core(a, xa), _core(b, xb))
    d = res["core_distance"]
    pa, pb = res["point_a"], res["point_b"]
    if d > 0.0:
        n = (pb - pa) / d
        pa, pb = pa + a.radius * n, pb - b.radius * n
    return max(d - a.radius - b.radius, 0.0), pa, pb, states


# ==================================================================================================== EPA
def _ccw(points):
    if len(points) == 3 and _cross(points[1] - points[0], points[2] - points[0]) < 0.0:
        return [points[0], points[2], points[1]]
    return list(points)


def epa_trace(core_a, core_b, start=None, max_iterations=EPA_MAX_ITERATIONS):
    """EPA on M = B ⊖ A from ``start`` (GJK's final triangle, else the supports along ±x, ±y).

    The polygon P (counter-clockwise) has vertices on M's boundary. Each iteration takes P's edge nearest the
    origin — outward normal u = (e.y, −e.x)/|e|, distance δ = u·p — and the support s = s_M(u). If
    u·s − δ ≤ 1e-12·max(1, |s|) that edge is on M's boundary and δ is the depth; else s is inserted into
    that edge. Moving B by δ along −u takes the origin out of M: the normal from A to B is −u.
    Returns ``(states, result)`` with ``result = {"depth", "normal", "iterations"}`` for the cores.
    """
    core_a = np.asarray(core_a, float)
    core_b = np.asarray(core_b, float)
    if start is not None and len(start) == 3:
        P = _ccw([np.asarray(p, float) for p in start])
    else:
        P = []
        for d in ((1.0, 0.0), (0.0, 1.0), (-1.0, 0.0), (0.0, -1.0)):
            s = _support_m(core_a, core_b, np.array(d))[0]
            if not P or not np.array_equal(s, P[-1]):
                P.append(s)
        if len(P) > 1 and np.array_equal(P[-1], P[0]):
            P.pop()
    states = []
    if len(P) == 1:     # M is a single point (two point cores at one place)
        off = core_b.mean(axis=0) - core_a.mean(axis=0)
        n = off / np.hypot(*off) if off.any() else np.array([1.0, 0.0])
        return states, {"depth": 0.0, "normal": n, "iterations": 0}
    u, delta = np.array([1.0, 0.0]), 0.0
    for it in range(max_iterations):
        best = None
        for i in range(len(P)):
            e = P[(i + 1) % len(P)] - P[i]
            length = math.hypot(*e)
            if length == 0.0:
                continue
            n = np.array([e[1], -e[0]]) / length
            dist = float(n @ P[i])
            if best is None or dist < best[1]:
                best = (i, dist, n)
        i, delta, u = best
        s = _support_m(core_a, core_b, u)[0]
        gain = float(u @ s) - delta
        state = {"polytope": [p.copy() for p in P], "edge": i, "normal": u, "distance": delta, "support": s,
                 "gain": gain, "iteration": it + 1}
        states.append(state)
        j = (i + 1) % len(P)
        if gain <= 1e-12 * max(1.0, abs(s[0]) + abs(s[1])) or np.array_equal(s, P[i]) or np.array_equal(s, P[j]):
            state["verdict"] = "the support does not push the edge out: it is on M's boundary"
            break
        state["verdict"] = "insert the support point into the nearest edge"
        P.insert(i + 1, s)
    normal = -u
    if len(P) == 2:     # flat M: the side is arbitrary, orient it from A's core towards B's
        if normal @ (core_b.mean(axis=0) - core_a.mean(axis=0)) < 0.0:
            normal = -normal
    return states, {"depth": delta, "normal": normal, "iterations": len(states)}


def penetration_trace(a, xa, b, xb):
    """Penetration of two placed shapes: ``(depth, normal, gjk_states, epa_states)`` or depth None if apart.

    Cores apart by d: depth = rA + rB − d along the closest-points direction (no EPA needed). Cores
    overlapping: EPA depth + rA + rB.
    """
    core_a, core_b = _core(a, xa), _core(b, xb)
    g_states, g = gjk_trace(core_a, core_b)
    rsum = a.radius + b.radius
    d = g["core_distance"]
    if d > rsum:
        return None, None, g_states, []
    if d > 0.0:
        return rsum - d, (g["point_b"] - g["point_a"]) / d, g_states, []
    start = [p for p, _, _ in g["simplex"]]
    e_states, e = epa_trace(core_a, core_b, start)
    return max(e["depth"], 0.0) + rsum, e["normal"], g_states, e_states


# ==================================================================================================== SAT
def sat_trace(a, xa, b, xb):
    """Project both shapes on every candidate axis: ``(axes, result)``.

    Axes: the edge normals of both cores (a 2-vertex core gives its one normal), plus — when the cores are
    apart, which only matters for rounded shapes — the direction between the closest core points. On axis
    n a shape covers [min core·n − r, max core·n + r]. The overlap is min(maxA − minB, maxB − minA): how far B
    must move along +n (or −n) to separate. A negative overlap is a gap: n separates the shapes. Otherwise the
    axis of least overlap gives the penetration depth and normal (for convex shapes these axes include every
    edge normal of the Minkowski difference, where the depth is attained).
    """
    xa, xb = as_transform(xa), as_transform(xb)
    core_a, core_b = _core(a, xa), _core(b, xb)
    candidates = []
    for owner, core in (("A", core_a), ("B", core_b)):
        if len(core) >= 2:
            for k, n in enumerate(_edge_normals(core)):
                candidates.append((f"{owner} edge {k}", n))
    _, g = gjk_trace(core_a, core_b)
    if g["core_distance"] > 0.0:
        candidates.append(("closest cores", (g["point_b"] - g["point_a"]) / g["core_distance"]))
    axes = []
    for name, n in candidates:
        if any(abs(abs(float(n @ m["axis"])) - 1.0) < 1e-12 for m in axes):
            continue    # the same axis (either sign) was projected already
        pa, pb = core_a @ n, core_b @ n
        ia = (float(pa.min()) - a.radius, float(pa.max()) + a.radius)
        ib = (float(pb.min()) - b.radius, float(pb.max()) + b.radius)
        forward, backward = ia[1] - ib[0], ib[1] - ia[0]
        overlap = min(forward, backward)
        direction = n if forward <= backward else -n
        axes.append({"name": name, "axis": n, "interval_a": ia, "interval_b": ib, "overlap": overlap,
                     "normal": direction})
    gaps = [m for m in axes if m["overlap"] < 0.0]
    if gaps:
        best = min(gaps, key=lambda m: m["overlap"])
        result = {"separated": True, "depth": None, "gap": -best["overlap"], "normal": best["normal"],
                  "best": axes.index(best)}
    else:
        best = min(axes, key=lambda m: m["overlap"])
        result = {"separated": False, "depth": best["overlap"], "gap": None, "normal": best["normal"],
                  "best": axes.index(best)}
    return axes, result


# =================================================================================================== clip
def clip_trace(a, xa, b, xb, speculative=0.0):
    """The polygon manifold step by step (cores of ≥ 2 vertices), as :func:`carom.geometry.collide` builds it
    for overlapping cores: ``(stages, result)``.

    1. For each edge i of A: sep_i = min_j n_i·(b_j − a_i); the best edge is the largest. Same for B.
    2. Reference face: A's best edge, unless B's is better by FLIP_TOLERANCE. Normal n (flipped to point from
       A to B when B is the reference). Incident edge: the other core's edge whose normal is most anti-parallel.
    3. With t the unit tangent of the reference edge v1→v2, clip the incident edge to 0 ≤ t·(w − v1) ≤ |v2−v1|
       (the two side planes).
    4. Each clipped point w has separation s = n·(w − v1) − rR − rI; it is kept when s ≤ ``speculative`` and
       reported midway between the two surfaces: w + ½(rR − rI − c)·n with c = n·(w − v1).
    """
    xa, xb = as_transform(xa), as_transform(xb)
    core_a, core_b = _core(a, xa), _core(b, xb)
    if len(core_a) < 2 or len(core_b) < 2:
        raise GeometryError("clip needs two shapes with an edge (polygon, box, capsule or segment), "
                            f"got {a!r} and {b!r}")
    na, nb = _edge_normals(core_a), _edge_normals(core_b)

    def max_separation(v1, n1, v2):
        seps = [float(np.min((v2 - v1[i]) @ n1[i])) for i in range(len(v1))]
        i = int(np.argmax(seps))
        return i, seps[i], seps

    edge_a, sep_a, seps_a = max_separation(core_a, na, core_b)
    edge_b, sep_b, seps_b = max_separation(core_b, nb, core_a)
    flip = sep_b > sep_a + FLIP_TOLERANCE
    if flip:
        vR, nR, rR, ref, vI, nI, rI = core_b, nb, b.radius, edge_b, core_a, na, a.radius
    else:
        vR, nR, rR, ref, vI, nI, rI = core_a, na, a.radius, edge_a, core_b, nb, b.radius
    inc = int(np.argmin(nI @ nR[ref]))
    v1, v2 = vR[ref], vR[(ref + 1) % len(vR)]
    n = nR[ref]
    length = math.hypot(*(v2 - v1))
    t = (v2 - v1) / length
    w = [vI[inc].copy(), vI[(inc + 1) % len(vI)].copy()]
    stages = {"sep_a": (edge_a, sep_a, seps_a), "sep_b": (edge_b, sep_b, seps_b), "flip": flip,
              "reference": (v1, v2), "normal_ref": n, "incident": (w[0].copy(), w[1].copy())}
    empty = {"points": np.zeros((0, 2)), "separations": np.zeros(0), "normal": -n if flip else n}
    clipped = []
    for lo_side, limit in ((True, 0.0), (False, length)):
        s = [float(t @ (p - v1)) for p in w]
        outside = [(x < limit) if lo_side else (x > limit) for x in s]
        if all(outside):
            clipped.append(None)
            stages["clipped"] = clipped
            return stages, empty
        for k in (0, 1):
            if outside[k]:
                u = (s[k] - limit) / (s[k] - s[1 - k])
                w[k] = w[k] + u * (w[1 - k] - w[k])
        clipped.append((w[0].copy(), w[1].copy()))
    stages["clipped"] = clipped
    c = [float(n @ (p - v1)) for p in w]
    seps = [ci - rR - rI for ci in c]
    pts = [p + 0.5 * (rR - rI - ci) * n for p, ci in zip(w, c)]
    keep = [k for k in (0, 1) if seps[k] <= speculative]
    stages["all_points"] = (pts, seps)
    return stages, {"points": np.array([pts[k] for k in keep]).reshape(-1, 2),
                    "separations": np.array([seps[k] for k in keep]), "normal": -n if flip else n}


# ==================================================================================================== TOI
def toi_trace(a, a_start, a_end, b, b_start, b_end, target=TOI_TARGET, max_iterations=TOI_MAX_ITERATIONS):
    """Conservative advancement, recording each advance: ``(states, t or None)``.

    Poses are linear in position and angle over t ∈ [0, 1]. At t_k with distance d_k and closest-point
    direction n (A to B), no contact can happen before t_k + (d_k − target/2)/μ with
    μ = max(0, −n·Δp_rel) + |Δθ_A|·ρ_A + |Δθ_B|·ρ_B (ρ the largest core radius about the body origin). Stop
    when d ≤ target; None when t passes 1 or μ = 0 (no approach). The distance is :func:`gjk_distance`.
    """
    a0, a1, b0, b1 = (as_transform(x) for x in (a_start, a_end, b_start, b_end))
    dpa, dpb = a1.position - a0.position, b1.position - b0.position
    dta, dtb = a1.angle - a0.angle, b1.angle - b0.angle
    rho_a = float(np.max(np.hypot(*a.vertices.T)))
    rho_b = float(np.max(np.hypot(*b.vertices.T)))
    rot = abs(dta) * rho_a + abs(dtb) * rho_b
    dp = dpb - dpa

    def poses(t):
        return (Transform(a0.position + t * dpa, a0.angle + t * dta),
                Transform(b0.position + t * dpb, b0.angle + t * dtb))

    t = 0.0
    states = []
    for it in range(max_iterations + 1):
        xa, xb = poses(t)
        d, pa, pb, _ = gjk_distance(a, xa, b, xb)
        state = {"t": t, "distance": d, "point_a": pa, "point_b": pb, "pose_a": xa, "pose_b": xb,
                 "iteration": it}
        states.append(state)
        if d <= target or it == max_iterations:
            state["verdict"] = "touching (within the target gap)" if d <= target else "iteration cap"
            return states, t
        gap = pb - pa
        ln = math.hypot(*gap)
        n = gap / ln if ln > 0.0 else np.zeros(2)
        mu = max(0.0, -float(n @ dp)) + rot
        state["bound"] = mu
        if mu <= 0.0:
            state["verdict"] = "not approaching: no contact"
            return states, None
        t += (d - 0.5 * target) / mu
        state["verdict"] = f"safe to advance by {(d - 0.5 * target) / mu:.3f}"
        if t > 1.0:
            state["verdict"] = "advance passes t = 1: no contact in this step"
            return states, None
    return states, t  # pragma: no cover


# ================================================================================================ sweeps
def sap_trace(lowers, uppers):
    """Sort and sweep over boxes, recording each box's visit: ``(axis, order, states, pairs)``.

    The sweep axis is the one along which box centres spread most (largest variance). Boxes are visited by
    increasing lower bound; the active list holds the boxes whose interval is still open (upper ≥ the
    current lower bound, touching counts); each visited box is paired with the active boxes whose intervals
    on the other axis overlap too, then joins the list.
    """
    lo = np.asarray(lowers, float)
    hi = np.asarray(uppers, float)
    centres = 0.5 * (lo + hi)
    axis = int(np.var(centres[:, 1]) > np.var(centres[:, 0]))
    other = 1 - axis
    order = sorted(range(len(lo)), key=lambda i: (lo[i, axis], i))
    active, pairs, states = [], [], []
    for i in order:
        active = [j for j in active if hi[j, axis] >= lo[i, axis]]
        found = [(min(i, j), max(i, j)) for j in active if lo[i, other] <= hi[j, other] and lo[j, other] <= hi[i, other]]
        pairs.extend(found)
        states.append({"box": i, "active": list(active), "found": found, "pairs": sorted(pairs)})
        active.append(i)
    return axis, order, states, sorted(pairs)


def random_boxes(rng, count=10, field=10.0):
    """``count`` random boxes (lower, upper) in a square of side ``field``."""
    c = rng.uniform(1.0, field - 1.0, (count, 2))
    h = rng.uniform(0.3, 1.3, (count, 2))
    return c - h, c + h


# =============================================================================================== drawing
def _draw_shape(ax, shape, xf, colour, alpha=0.3, lw=1.4, ls="-", label=None, zorder=2):
    patches = require("matplotlib.patches")
    core = _core(shape, xf)
    r = shape.radius
    if len(core) == 1:
        ax.add_patch(patches.Circle(core[0], r, facecolor=colour, alpha=alpha, zorder=zorder))
        ax.add_patch(patches.Circle(core[0], r, fill=False, edgecolor=colour, lw=lw, ls=ls, zorder=zorder))
        c, s = math.cos(xf.angle), math.sin(xf.angle)
        ax.plot([core[0, 0], core[0, 0] + r * c], [core[0, 1], core[0, 1] + r * s], color=colour, lw=lw * 0.7)
    elif len(core) == 2 and r == 0.0:
        ax.plot(core[:, 0], core[:, 1], color=colour, lw=2 * lw, ls=ls, zorder=zorder)
    else:
        outline = rounded_outline(core, r) if r > 0.0 else core
        ax.add_patch(patches.Polygon(outline, closed=True, facecolor=colour, alpha=alpha, zorder=zorder))
        ax.add_patch(patches.Polygon(outline, closed=True, fill=False, edgecolor=colour, lw=lw, ls=ls,
                                     zorder=zorder))
        if r > 0.0:
            ax.add_patch(patches.Polygon(core, closed=len(core) > 2, fill=False, edgecolor=colour, lw=0.6,
                                         ls=":", zorder=zorder))
    if label:
        m = core.mean(axis=0)
        ax.text(m[0], m[1], label, color=colour, ha="center", va="center", fontsize=10, weight="bold",
                zorder=5)


def _frame(ax, lo, hi, grid=True):
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_aspect("equal", adjustable="box")
    ax.tick_params(labelsize=6)
    if grid:
        ax.grid(True, lw=0.3, alpha=0.5)


def _square(points, pad=0.15):
    p = np.asarray(points, float).reshape(-1, 2)
    lo, hi = p.min(axis=0), p.max(axis=0)
    c, half = 0.5 * (lo + hi), 0.5 * max(*(hi - lo), 1e-3) * (1 + 2 * pad)
    return c - half, c + half


def _shape_points(shape, xf):
    core = _core(shape, xf)
    r = shape.radius
    return np.vstack([core - r, core + r])


def _minkowski(core_a, core_b):
    """Core of M = B ⊖ A (the convex hull of all differences b − a), counter-clockwise."""
    from ..geometry import convex_hull
    diff = (core_b[None, :, :] - core_a[:, None, :]).reshape(-1, 2)
    hull = convex_hull(diff)
    return hull if len(hull) else diff[:1]


def _label_m(ax):
    ax.text(0.02, 0.97, "M = B ⊖ A, origin +", transform=ax.transAxes, fontsize=8, va="top", color=MINK)


def _draw_m(ax, hull, rsum, alpha=0.15):
    patches = require("matplotlib.patches")
    if len(hull) >= 3:
        ax.add_patch(patches.Polygon(hull, closed=True, facecolor=MINK, alpha=alpha, edgecolor=MINK, lw=1.0))
    elif len(hull) == 2:
        ax.plot(hull[:, 0], hull[:, 1], color=MINK, lw=1.5)
    if rsum > 0.0:
        outline = rounded_outline(hull, rsum) if len(hull) >= 2 else None
        if outline is None:
            ax.add_patch(patches.Circle(hull[0], rsum, fill=False, edgecolor=MINK, lw=0.8, ls="--"))
        else:
            ax.add_patch(patches.Polygon(outline, closed=True, fill=False, edgecolor=MINK, lw=0.8, ls="--"))
    ax.plot([0], [0], marker="+", color="k", ms=10, mew=1.5, zorder=6)


# ============================================================================================ algorithms
def lab_sat(a, xa, b, xb):
    """The SAT lab of shapes ``a`` and ``b`` placed at ``xa`` and ``xb``: a panel per candidate axis (both shapes'
    projections and their overlap), then the axis of least overlap."""
    axes, result = sat_trace(a, xa, b, xb)
    core_pts = np.vstack([_shape_points(a, xa), _shape_points(b, xb)])
    centre = core_pts.mean(axis=0)
    reach = float(np.max(np.hypot(*(core_pts - centre).T)))
    offset = 1.25 * reach
    lo, hi = centre - offset - 0.35 * reach, centre + offset + 0.35 * reach

    def draw_axis(ax, m, strong):
        n = m["axis"]
        perp = np.array([-n[1], n[0]])
        base = centre - offset * perp          # the axis line runs beside the shapes
        t0 = float(base @ n)
        ends = [base + (x - t0) * n for x in (-10 * reach + t0, 10 * reach + t0)]
        ax.plot(*np.array(ends).T, color="0.5", lw=0.8)
        for shape, xf, colour in ((a, xa, COLOUR_A), (b, xb, COLOUR_B)):
            core = _core(shape, xf)
            proj = core @ n
            for k, sign in ((int(np.argmin(proj)), -1.0), (int(np.argmax(proj)), 1.0)):
                p = core[k] + sign * shape.radius * n        # the extreme point of the rounded shape
                q = base + (float(p @ n) - t0) * n
                ax.plot([p[0], q[0]], [p[1], q[1]], color=colour, lw=0.6, ls="--", alpha=0.7)
        for (l, h), colour, shift in ((m["interval_a"], COLOUR_A, 0.05), (m["interval_b"], COLOUR_B, -0.05)):
            p, q = base + (l - t0) * n + shift * reach * perp, base + (h - t0) * n + shift * reach * perp
            ax.plot([p[0], q[0]], [p[1], q[1]], color=colour, lw=5, solid_capstyle="butt", alpha=0.85)
        l, h = max(m["interval_a"][0], m["interval_b"][0]), min(m["interval_a"][1], m["interval_b"][1])
        colour = HIGHLIGHT if strong else ("0.2" if m["overlap"] >= 0 else GOOD)
        p, q = base + (l - t0) * n - 0.14 * reach * perp, base + (h - t0) * n - 0.14 * reach * perp
        ax.plot([p[0], q[0]], [p[1], q[1]], color=colour, lw=2.5 if strong else 1.8, marker="|", ms=6)
        arrow_at = centre - 0.8 * offset * perp
        ax.annotate("", xy=arrow_at + 0.3 * reach * n, xytext=arrow_at,
                    arrowprops=dict(arrowstyle="->", color=HIGHLIGHT if strong else "0.3"))

    def make(k):
        m = axes[k]

        def draw(axs):
            ax = axs[0]
            _draw_shape(ax, a, xa, COLOUR_A, label="A")
            _draw_shape(ax, b, xb, COLOUR_B, label="B")
            draw_axis(ax, m, False)
            _frame(ax, lo, hi)
        word = "overlap" if m["overlap"] >= 0 else "gap"
        return Step(f"axis {k + 1}/{len(axes)} ({m['name']}): {word} {abs(m['overlap']):.3f}", draw)

    steps = [make(k) for k in range(len(axes))]
    best = axes[result["best"]]

    def final(axs):
        ax = axs[0]
        _draw_shape(ax, a, xa, COLOUR_A, label="A")
        _draw_shape(ax, b, xb, COLOUR_B, label="B")
        draw_axis(ax, best, True)
        _frame(ax, lo, hi)
    if result["separated"]:
        title = f"separating axis ({best['name']}): gap {result['gap']:.3f}"
    else:
        title = f"least overlap ({best['name']}): depth {result['depth']:.3f}"
    steps.append(Step(title, final))
    return Lab("sat", steps, result)


def lab_gjk(a, xa, b, xb):
    """The GJK lab of shapes ``a`` and ``b`` placed at ``xa`` and ``xb``: the Minkowski difference and, per iteration,
    the simplex and its closest point to the origin, then the closest points on the shapes."""
    core_a, core_b = _core(a, xa), _core(b, xb)
    states, res = gjk_trace(core_a, core_b)
    dist, pa, pb, _ = gjk_distance(a, xa, b, xb)
    hull = _minkowski(core_a, core_b)
    rsum = a.radius + b.radius
    lo_s, hi_s = _square(np.vstack([_shape_points(a, xa), _shape_points(b, xb)]))
    lo_m, hi_m = _square(np.vstack([hull - rsum, hull + rsum, [[0.0, 0.0]]]))

    def make(st, last):
        def draw(axs):
            ax, am = axs
            _draw_shape(ax, a, xa, COLOUR_A, label="A")
            _draw_shape(ax, b, xb, COLOUR_B, label="B")
            if last:
                ax.plot(*np.array([pa, pb]).T, color=HIGHLIGHT, lw=1.5, marker="o", ms=3)
            _frame(ax, lo_s, hi_s)
            _draw_m(am, hull, rsum)
            simplex = np.array(st["simplex"])
            closed = np.vstack([simplex, simplex[:1]]) if len(simplex) == 3 else simplex
            am.plot(*closed.T, color="k", lw=1.6, marker="o", ms=4, zorder=5)
            kept = np.array(st["kept"])
            am.plot(*kept.T, color=HIGHLIGHT, lw=2.5, marker="o", ms=5, zorder=6)
            v = st["closest"]
            am.plot([0, v[0]], [0, v[1]], color=HIGHLIGHT, lw=1, ls="--")
            if st["support"] is not None and not last:
                s = st["support"]
                am.plot([s[0]], [s[1]], marker="*", color=GOOD, ms=11, zorder=7)
            _label_m(am)
            _frame(am, lo_m, hi_m)
        return draw

    steps = []
    for st in states:
        title = f"iteration {st['iteration']}: |v| = {math.hypot(*st['closest']):.3f}; {st['verdict']}"
        steps.append(Step(title, make(st, False)))
    steps.append(Step(f"distance = |v| − rA − rB = {dist:.4f} after {len(states)} iterations",
                      make(states[-1], True)))
    return Lab("gjk", steps, {"distance": dist, "point_a": pa, "point_b": pb,
                              "core_distance": res["core_distance"], "iterations": len(states)}, panels=2)


def lab_epa(a, xa, b, xb):
    """The EPA lab of shapes ``a`` and ``b`` placed at ``xa`` and ``xb`` (overlapping cores): the polygon grown towards
    the Minkowski difference's boundary one support point per iteration, then the penetration depth and normal."""
    core_a, core_b = _core(a, xa), _core(b, xb)
    depth, normal, g_states, e_states = penetration_trace(a, xa, b, xb)
    hull = _minkowski(core_a, core_b)
    rsum = a.radius + b.radius
    lo_s, hi_s = _square(np.vstack([_shape_points(a, xa), _shape_points(b, xb)]))
    lo_m, hi_m = _square(np.vstack([hull - rsum, hull + rsum, [[0.0, 0.0]]]))

    def shapes(ax, moved):
        _draw_shape(ax, a, xa, COLOUR_A, label="A")
        _draw_shape(ax, b, xb, COLOUR_B, label="B")
        if moved and depth is not None:
            shifted = Transform(xb.position + depth * normal, xb.angle)
            _draw_shape(ax, b, shifted, COLOUR_B, alpha=0.0, ls="--", lw=1.0)
            c = _core(b, xb).mean(axis=0)
            ax.annotate("", xy=c + depth * normal, xytext=c, arrowprops=dict(arrowstyle="->", color=HIGHLIGHT))
        _frame(ax, lo_s, hi_s)

    def make(st, last):
        def draw(axs):
            ax, am = axs
            shapes(ax, last)
            _draw_m(am, hull, rsum)
            P = np.array(st["polytope"])
            am.plot(*np.vstack([P, P[:1]]).T, color="k", lw=1.4, marker="o", ms=4, zorder=5)
            i = st["edge"]
            e = np.array([P[i], P[(i + 1) % len(P)]])
            am.plot(*e.T, color=HIGHLIGHT, lw=2.8, zorder=6)
            foot = st["distance"] * st["normal"]
            am.plot([0, foot[0]], [0, foot[1]], color=HIGHLIGHT, lw=1, ls="--")
            if not last:
                am.plot([st["support"][0]], [st["support"][1]], marker="*", color=GOOD, ms=11, zorder=7)
            _label_m(am)
            _frame(am, lo_m, hi_m)
        return draw

    steps = []
    for st in g_states:
        def draw(axs, st=st):
            shapes(axs[0], False)
            _draw_m(axs[1], hull, rsum)
            simplex = np.array(st["simplex"])
            closed = np.vstack([simplex, simplex[:1]]) if len(simplex) == 3 else simplex
            axs[1].plot(*closed.T, color="k", lw=1.4, marker="o", ms=4)
            _label_m(axs[1])
            _frame(axs[1], lo_m, hi_m)
        steps.append(Step(f"GJK {st['iteration']}: {st['verdict']}", draw))
    for st in e_states:
        steps.append(Step(f"EPA {st['iteration']}: nearest edge at {st['distance']:.4f}; {st['verdict']}",
                          make(st, False)))
    if depth is None:
        title = "the shapes are apart: no penetration"
    elif e_states:
        title = f"depth = edge distance + rA + rB = {depth:.4f}, normal ({normal[0]:.3f}, {normal[1]:.3f})"
        steps.append(Step(title, make(e_states[-1], True)))
    else:
        title = f"cores apart: depth = rA + rB − d = {depth:.4f}"
    if depth is None or not e_states:
        steps.append(Step(title, lambda axs: (shapes(axs[0], True), _draw_m(axs[1], hull, rsum),
                                              _frame(axs[1], lo_m, hi_m))))
    return Lab("epa", steps, {"depth": depth, "normal": normal, "iterations": len(e_states)}, panels=2)


def lab_clip(a, xa, b, xb, speculative=0.0):
    """The contact-manifold lab of shapes ``a`` and ``b`` placed at ``xa`` and ``xb``: reference face, incident edge,
    clipping to the side planes, the points kept (within ``speculative`` m of touching)."""
    stages, res = clip_trace(a, xa, b, xb, speculative)
    lo, hi = _square(np.vstack([_shape_points(a, xa), _shape_points(b, xb)]), pad=0.25)
    core_a, core_b = _core(a, xa), _core(b, xb)
    flip = stages["flip"]
    v1, v2 = stages["reference"]
    n = stages["normal_ref"]
    span = float(np.max(hi - lo))

    def base(ax):
        _draw_shape(ax, a, xa, COLOUR_A, alpha=0.2, label="A")
        _draw_shape(ax, b, xb, COLOUR_B, alpha=0.2, label="B")
        _frame(ax, lo, hi)

    def edge(ax, core, i, colour, lw=3.0, normal=True):
        p, q = core[i], core[(i + 1) % len(core)]
        ax.plot([p[0], q[0]], [p[1], q[1]], color=colour, lw=lw, zorder=6)
        if normal:
            m = 0.5 * (p + q)
            nn = _edge_normals(core)[i]
            ax.annotate("", xy=m + 0.15 * span * nn, xytext=m, arrowprops=dict(arrowstyle="->", color=colour))

    def plane(ax, at):
        t = (v2 - v1) / math.hypot(*(v2 - v1))
        ax.plot(*np.array([at - span * n, at + span * n]).T, color="0.4", lw=1, ls="--")
        return t

    steps = []
    ea, sa, _ = stages["sep_a"]
    eb, sb, _ = stages["sep_b"]
    steps.append(Step(f"A's best face: edge {ea}, separation {sa:.3f}",
                      lambda axs: (base(axs[0]), edge(axs[0], core_a, ea, COLOUR_A))))
    steps.append(Step(f"B's best face: edge {eb}, separation {sb:.3f}",
                      lambda axs: (base(axs[0]), edge(axs[0], core_b, eb, COLOUR_B))))
    ref_core, inc_core = (core_b, core_a) if flip else (core_a, core_b)
    ref_i = eb if flip else ea
    w1, w2 = stages["incident"]
    inc_i = next(i for i in range(len(inc_core)) if np.array_equal(inc_core[i], w1))

    def ref_inc(ax):
        base(ax)
        edge(ax, ref_core, ref_i, HIGHLIGHT)
        edge(ax, inc_core, inc_i, GOOD, normal=False)
    who = "B" if flip else "A"
    steps.append(Step(f"reference face: {who}'s edge {ref_i} (red); incident edge (green)",
                      lambda axs: ref_inc(axs[0])))
    for k, seg in enumerate(stages["clipped"]):
        at = v1 if k == 0 else v2

        def draw(axs, seg=seg, at=at):
            ref_inc(axs[0])
            plane(axs[0], at)
            if seg is not None:
                axs[0].plot(*np.array(seg).T, color="k", lw=2, marker="o", ms=5, zorder=7)
        what = "no part of the incident edge is inside" if seg is None else "incident edge clipped"
        steps.append(Step(f"side plane {k + 1}: {what}", draw))
    if "all_points" in stages:
        pts, seps = stages["all_points"]

        def final(axs):
            ax = axs[0]
            ref_inc(ax)
            for p, s in zip(pts, seps):
                kept = s <= speculative
                ax.plot([p[0]], [p[1]], marker="o", ms=7, color=HIGHLIGHT if kept else "0.6", zorder=8)
                ax.annotate(f"{s:.3f}", p, textcoords="offset points", xytext=(5, 5), fontsize=7)
            for p in res["points"]:
                ax.annotate("", xy=p + 0.15 * span * res["normal"], xytext=p,
                            arrowprops=dict(arrowstyle="->", color=HIGHLIGHT))
        steps.append(Step(f"{len(res['points'])} contact point(s) below the reference face "
                          f"(separation ≤ {speculative:g})", final))
    return Lab("clip", steps, res)


def lab_toi(a, a_start, a_end, b, b_start, b_end):
    """The time-of-impact lab: shape ``a`` moving from ``a_start`` to ``a_end`` and ``b`` from ``b_start`` to
    ``b_end``: the swept shapes, each safe advance, the first contact."""
    states, t = toi_trace(a, a_start, a_end, b, b_start, b_end)
    a0, a1, b0, b1 = (as_transform(x) for x in (a_start, a_end, b_start, b_end))

    def pose(x0, x1, s):
        return Transform(x0.position + s * (x1.position - x0.position), x0.angle + s * (x1.angle - x0.angle))

    ghosts = np.linspace(0.0, 1.0, 9)
    pts = np.vstack([_shape_points(a, pose(a0, a1, s)) for s in ghosts] +
                    [_shape_points(b, pose(b0, b1, s)) for s in ghosts])
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    lo, hi = lo - 0.1 * (hi - lo).max(), hi + 0.1 * (hi - lo).max()

    def sweep(ax):
        for s in ghosts:
            _draw_shape(ax, b, pose(b0, b1, s), COLOUR_B, alpha=0.0, lw=0.6, ls=":")
            if a0 != a1:
                _draw_shape(ax, a, pose(a0, a1, s), COLOUR_A, alpha=0.0, lw=0.6, ls=":")
        _frame(ax, lo, hi)

    def make(st, final):
        def draw(axs):
            ax = axs[0]
            sweep(ax)
            _draw_shape(ax, a, st["pose_a"], COLOUR_A, alpha=0.35 if final else 0.25, label="A")
            _draw_shape(ax, b, st["pose_b"], HIGHLIGHT if final else COLOUR_B, alpha=0.35, label="B")
            ax.plot(*np.array([st["point_a"], st["point_b"]]).T, color="k", lw=1, marker="o", ms=3)
        return draw

    steps = [Step(f"t = {st['t']:.4f}: distance {st['distance']:.4f}; {st['verdict']}", make(st, False))
             for st in states]
    if t is None:
        steps.append(Step("no contact during the motion", make(states[-1], False)))
    else:
        steps.append(Step(f"first contact at t = {t:.4f} after {len(states) - 1} advances", make(states[-1], True)))
    return Lab("toi", steps, {"t": t, "iterations": len(states) - 1})


def lab_sap(lowers, uppers):
    """The sort-and-sweep lab for boxes with corners ``lowers`` and ``uppers``: the intervals on the axis of largest
    spread, the active list at each step, the pairs found."""
    axis, order, states, pairs = sap_trace(lowers, uppers)
    lo, hi = np.asarray(lowers, float), np.asarray(uppers, float)
    other = 1 - axis
    n = len(lo)
    lane = 0.45          # spacing of the interval bars below (or left of) the boxes

    def xy(along, across):
        """A point given by its coordinate on the sweep axis and on the other axis."""
        return (along, across) if axis == 0 else (across, along)

    field_lo, field_hi = lo.min(axis=0), hi.max(axis=0)
    bar0 = field_lo[other] - 0.8

    def draw_state(ax, st, final):
        patches = require("matplotlib.patches")
        seen = set(order[:order.index(st["box"]) + 1]) if st else set(range(n))
        in_pairs = {i for p in (st["pairs"] if st else pairs) for i in p}
        for i in range(n):
            colour = HIGHLIGHT if st and i == st["box"] else GOOD if st and i in st["active"] else (
                MINK if i in in_pairs else "0.45")
            ax.add_patch(patches.Rectangle(lo[i], *(hi[i] - lo[i]), fill=False, edgecolor=colour,
                                           lw=2.0 if colour != "0.45" else 1.0))
            ax.text(*(0.5 * (lo[i] + hi[i])), str(i), ha="center", va="center", fontsize=7, color=colour)
            rank = order.index(i)
            y = bar0 - lane * rank
            alpha = 1.0 if i in seen else 0.25
            ax.plot(*np.array([xy(lo[i, axis], y), xy(hi[i, axis], y)]).T, color=colour, lw=3, alpha=alpha,
                    solid_capstyle="butt")
        if st:
            x = lo[st["box"], axis]
            ax.plot(*np.array([xy(x, bar0 - lane * n), xy(x, field_hi[other] + 0.3)]).T, color=HIGHLIGHT,
                    lw=0.8, ls="--")
            for i, j in st["found"]:
                ax.plot(*np.array([0.5 * (lo[i] + hi[i]), 0.5 * (lo[j] + hi[j])]).T, color=HIGHLIGHT, lw=1.5)
        if final:
            for i, j in pairs:
                ax.plot(*np.array([0.5 * (lo[i] + hi[i]), 0.5 * (lo[j] + hi[j])]).T, color=MINK, lw=1.5)
        corners = np.array([xy(field_lo[axis] - 0.3, bar0 - lane * (n + 0.5)),
                            xy(field_hi[axis] + 0.3, field_hi[other] + 0.5)])
        _frame(ax, corners.min(axis=0), corners.max(axis=0), grid=False)

    name = "xy"[axis]
    steps = [Step(f"{n} boxes; their intervals on {name} (the axis of largest spread), sorted by lower bound",
                  lambda axs: draw_state(axs[0], None, False))]
    for k, st in enumerate(states):
        got = ", ".join(f"({i},{j})" for i, j in st["found"]) or "none"
        steps.append(Step(f"visit box {st['box']}: active {st['active']} → new pairs {got}",
                          lambda axs, st=st: draw_state(axs[0], st, False)))
    steps.append(Step(f"{len(pairs)} overlapping pairs", lambda axs: draw_state(axs[0], None, True)))
    return Lab("sap", steps, {"axis": axis, "pairs": pairs})


def tree_layout(nodes):
    """Node → (x, depth) for a node-link picture: leaves left to right in tree order, parents centred."""
    pos = {}
    counter = [0]

    def place(i, depth):
        if nodes["child1"][i] < 0:
            pos[i] = (float(counter[0]), depth)
            counter[0] += 1
        else:
            place(int(nodes["child1"][i]), depth + 1)
            place(int(nodes["child2"][i]), depth + 1)
            pos[i] = (0.5 * (pos[int(nodes["child1"][i])][0] + pos[int(nodes["child2"][i])][0]), depth)
    if nodes["root"] >= 0:
        place(nodes["root"], 0)
    return pos


def lab_tree(lowers, uppers):
    """The dynamic-tree lab for boxes with corners ``lowers`` and ``uppers``: the tree after each insertion, leaves and
    internal boxes by depth."""
    from ..geometry import DynamicTree
    from .draw import tree_boxes
    lo, hi = np.asarray(lowers, float), np.asarray(uppers, float)
    tree = DynamicTree()
    snapshots = []
    for i in range(len(lo)):
        tree.insert(lo[i], hi[i])
        snapshots.append(tree.nodes())
    pairs = [tuple(map(int, p)) for p in tree.pairs()]
    final_height = int(tree.height)
    lim_lo, lim_hi = lo.min(axis=0) - 0.5, hi.max(axis=0) + 0.5

    def make(k, final):
        nodes = snapshots[k]

        def draw(axs):
            patches = require("matplotlib.patches")
            ax, at = axs
            for (blo, bhi, depth, leaf) in tree_boxes(nodes):
                colour = "0.35" if leaf else DEPTH[depth % len(DEPTH)]
                ax.add_patch(patches.Rectangle(blo, *(bhi - blo), fill=not leaf, alpha=0.08 if not leaf else 1,
                                               facecolor=colour, edgecolor="none"))
                ax.add_patch(patches.Rectangle(blo, *(bhi - blo), fill=False, edgecolor=colour,
                                               lw=0.8 if leaf else 1.6, ls="-" if leaf else "--"))
            for i in range(k + 1):
                ax.add_patch(patches.Rectangle(lo[i], *(hi[i] - lo[i]), facecolor=HIGHLIGHT if i == k and not
                                               final else GOOD, alpha=0.35, edgecolor="none"))
                ax.text(*(0.5 * (lo[i] + hi[i])), str(i), ha="center", va="center", fontsize=7)
            if final:
                for i, j in pairs:
                    ax.plot(*np.array([0.5 * (lo[i] + hi[i]), 0.5 * (lo[j] + hi[j])]).T, color=HIGHLIGHT, lw=1.2)
            _frame(ax, lim_lo, lim_hi, grid=False)
            pos = tree_layout(nodes)
            for i, (x, d) in pos.items():
                if nodes["child1"][i] >= 0:
                    for c in (int(nodes["child1"][i]), int(nodes["child2"][i])):
                        at.plot([x, pos[c][0]], [-d, -pos[c][1]], color="0.5", lw=0.8)
            for i, (x, d) in pos.items():
                leaf = nodes["child1"][i] < 0
                label = str(int(nodes["proxy"][i])) if leaf else ""
                at.plot([x], [-d], marker="s" if leaf else "o", ms=9 if leaf else 7,
                        color=GOOD if leaf else DEPTH[d % len(DEPTH)])
                if label:
                    at.text(x, -d, label, ha="center", va="center", fontsize=7, color="w")
            at.set_xlim(-1, len(lo))
            at.set_ylim(-(final_height + 0.7), 0.7)
            at.set_axis_off()
            at.set_title(f"height {int(nodes['height'][nodes['root']])}", fontsize=7)
        return draw

    steps = [Step(f"insert box {k}: {k + 1} leaves", make(k, False)) for k in range(len(lo))]
    steps.append(Step(f"{len(pairs)} overlapping pairs found by querying the tree", make(len(lo) - 1, True)))
    return Lab("tree", steps, {"pairs": pairs, "nodes": snapshots[-1]}, panels=2)


# ================================================================================================ driver
def build(algorithm, seed=0, a=None, b=None, end=None, count=None):
    """Trace ``algorithm`` on shapes ``a``/``b`` (spec strings or (shape, transform)) or random ones from
    ``seed``; ``end`` is B's end pose for ``toi`` (x, y[, angle]); ``count`` boxes for ``sap``/``tree``."""
    if algorithm not in ALGORITHMS:
        raise CaromError(f"unknown lab algorithm {algorithm!r}; choose one of {', '.join(ALGORITHMS)}")
    rng = np.random.default_rng(seed)
    if algorithm in ("sap", "tree"):
        n = 10 if count is None else count
        if isinstance(n, bool) or not isinstance(n, int) or not 2 <= n <= 200:
            raise CaromError(f"count must be an integer from 2 to 200, got {count!r}")
        lowers, uppers = random_boxes(rng, n)
        return lab_sap(lowers, uppers) if algorithm == "sap" else lab_tree(lowers, uppers)
    pa, pb = _placed(a), _placed(b)
    if algorithm == "toi":
        if pa is None:
            pa = (random_shape(rng, ("polygon", "box")), Transform((0.0, 0.0), rng.uniform(-1, 1)))
        if pb is None:
            shape = random_shape(rng, ("polygon", "box", "capsule"), size=0.6)
            pb = (shape, Transform((-4.0, rng.uniform(-0.6, 0.6)), 0.0))
        if end is None:
            end_xf = Transform(pb[1].position + (8.0, rng.uniform(-0.6, 0.6)), pb[1].angle + rng.uniform(2, 5))
        else:
            end_xf = as_transform(tuple(end))
        return lab_toi(pa[0], pa[1], pa[1], pb[0], pb[1], end_xf)
    kinds = {"sat": ("polygon", "box", "capsule"), "gjk": ("polygon", "box", "capsule", "circle"),
             "epa": ("polygon", "box"), "clip": ("polygon", "box")}[algorithm]
    relation = "apart" if algorithm == "gjk" else "overlap"
    if pa is None or pb is None:
        ra, rxa, rb, rxb = random_pair(rng, kinds, relation)
        pa = pa or (ra, rxa)
        pb = pb or (rb, rxb)
    fn = {"sat": lab_sat, "gjk": lab_gjk, "epa": lab_epa, "clip": lab_clip}[algorithm]
    return fn(pa[0], pa[1], pb[0], pb[1])


def _sample(steps, limit):
    if len(steps) <= limit:
        return steps
    idx = np.unique(np.round(np.linspace(0, len(steps) - 1, limit)).astype(int))
    return [steps[i] for i in idx]


def _figure_image(fig):
    Image = require("PIL.Image")
    FigureCanvasAgg = require("matplotlib.backends.backend_agg").FigureCanvasAgg
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba(), "raw", "RGBA", 0, 1).convert("RGB")


def frames(lab, dpi=100, panel_size=4.4):
    """One pillow image per step (the GIF frames) of ``lab``, drawn at ``dpi`` with panels ``panel_size``
    inches square (100 dpi: the step text is large enough to read)."""
    Figure = require("matplotlib.figure").Figure
    out = []
    for k, step in enumerate(lab.steps):
        fig = Figure(figsize=(panel_size * lab.panels, panel_size + 0.4), dpi=dpi)
        axes = fig.subplots(1, lab.panels, squeeze=False)[0]
        step.draw(list(axes))
        fig.suptitle(f"{lab.algorithm} — step {k + 1}/{len(lab.steps)}\n{step.title}", fontsize=10)
        fig.tight_layout(rect=(0, 0, 1, 0.93))
        out.append(_figure_image(fig))
    return out


def grid_image(lab, dpi=100, limit=None, panel_size=3.2):
    """The steps (at most ``limit``, evenly sampled) as one grid picture (the PNG)."""
    Figure = require("matplotlib.figure").Figure
    limit = limit or (12 if lab.panels == 1 else 8)
    steps = _sample(lab.steps, limit)
    cols = min(len(steps), 4 if lab.panels == 1 else 2)
    rows = int(math.ceil(len(steps) / cols))
    fig = Figure(figsize=(panel_size * cols * lab.panels, (panel_size + 0.5) * rows), dpi=dpi)
    gs = fig.add_gridspec(rows, cols * lab.panels)
    for k, step in enumerate(steps):
        r, c = divmod(k, cols)
        axes = [fig.add_subplot(gs[r, c * lab.panels + p]) for p in range(lab.panels)]
        step.draw(axes)
        axes[0].set_title(_wrap(f"{lab.steps.index(step) + 1}. {step.title}", 44 * lab.panels), fontsize=8,
                          loc="left")
    fig.suptitle(f"carom lab {lab.algorithm}: {ALGORITHMS[lab.algorithm]}", fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    return _figure_image(fig)


def _wrap(text, width):
    import textwrap
    return "\n".join(textwrap.wrap(text, width))


def write(lab, out):
    """Write ``lab`` to ``out``: a GIF with one frame per step (the last held longer) or a PNG grid."""
    import os
    out = str(out)
    ext = os.path.splitext(out)[1].lower()
    if ext not in (".gif", ".png"):
        raise CaromError(f"lab output must end in .gif or .png, got {out!r}")
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    if ext == ".gif":
        images = frames(lab)
        w = max(i.width for i in images)
        h = max(i.height for i in images)
        images = [i if i.size == (w, h) else i.resize((w, h)) for i in images]
        durations = [900] * (len(images) - 1) + [2500]
        images[0].save(out, save_all=True, append_images=images[1:], duration=durations, loop=0)
    else:
        grid_image(lab).save(out)
    return out


def run(algorithm, out, seed=0, a=None, b=None, end=None, count=None):
    """Trace ``algorithm`` (see :func:`build`) and write the picture to ``out``; returns the :class:`Lab`."""
    lab = build(algorithm, seed=seed, a=a, b=b, end=end, count=count)
    write(lab, out)
    return lab
