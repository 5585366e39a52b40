"""The continuous stage (``continuous_stage``): fast bodies and bullets put back at their first time of impact
with what they would pass through (conservative advancement on shape cores), and the sensor stage
(``sensor_stage``): sensor overlaps on the final poses.

The two stages' work is compiled apart from the step (``carom._jit.apart_njit``: :func:`continuous_sweep`,
:func:`sensor_pass`) and loaded the first time a step needs it (:func:`load`). Why: most steps of most worlds
have no fast body and no sensor, yet the sweep's code (time of impact by conservative advancement, GJK, the
trees' box queries) and the sensors' were 7.3 s of CPU time of the step's cold compile, a fifth of it. The
stages in the step only look for work (fast bodies, sensor shapes); when there is some and its code is not
loaded yet, the step stops there and says so, and ``World.step`` loads the code and finishes the step with
``carom.rigid._step.step_tail``, which runs the same stages in the same order: the result is the same to the bit.
"""
import math

import numba
import numpy as np
from numba import prange, types

from .._jit import njit, pnjit, inline_njit, borrowed_rows, apart_njit, apart_caller, apart_loaded, deref
from ..constants import LINEAR_SLOP, TOI_MAX_ITERATIONS
from ..geometry._math import relative_transform
from ..geometry.toi import conservative_advancement
from ..geometry._tree import Tree, tree_fit
from ..geometry._tree_query import tree_query_boxes
from ._layout import STATIC, DYNAMIC, KEY_SHIFT, KEY_MASK
from ._bounds import body_origin
from ._contact_rows import chunk_count
from ._broad import should_collide
from ._narrow import _clear_manifold, _collide_pair, _is_one_way, _put_manifold, one_way_passes


@njit
def sensor_stage(bodies, shapes, awake, contacts):
    """Sensor overlaps at the end of the step (as Box2D v3 finds them): each sensor pair with an awake body is
    tested again at the bodies' final poses, so its touch flag (and so its begin and end events) belongs to
    the step in which the overlap began or ended. Tested with the narrow phase's poses, from the start of the
    step, an overlap was reported one step late. The broad phase's boxes cover the whole motion of the step,
    so every pair that overlaps at the end is among the candidates. Scenes without sensors skip the pass
    after one look at the shapes.

    The pass is :func:`sensor_pass`, compiled apart; returns False, having done nothing, when it is needed
    but not loaded (:func:`load`), True otherwise."""
    bodies = deref(bodies)
    shapes = deref(shapes)
    shape_alive, shape_sensor = shapes.alive, shapes.sensor
    any_sensor = False
    for s in range(shape_sensor.shape[0]):
        any_sensor = any_sensor or (shape_sensor[s] and shape_alive[s])
    if not any_sensor:
        return True
    args = (bodies, shapes, awake, contacts)
    if not _sensor_pass_loaded(args):
        return False
    _call_sensor_pass(args)
    return True


@apart_njit(lambda arg_types: types.none)
def sensor_pass(bodies, shapes, awake, contacts):
    """The sensor pairs with an awake body tested at the final poses (``sensor_stage``)."""
    com, angle, local_center = bodies.com, bodies.angle, bodies.local_center
    (shape_body, shape_offset, shape_count, shape_radius, verts, normals) = (
        shapes.body, shapes.offset, shapes.vert_count, shapes.radius, shapes.verts, shapes.normals)
    keys, c_count, c_normal, c_point, c_sep, c_touch, c_sensor = (
        contacts.keys, contacts.count, contacts.normal, contacts.points, contacts.separation, contacts.touching,
        contacts.sensor)
    maxc = np.int64(1)
    for s in range(shape_count.shape[0]):
        maxc = max(maxc, shape_count[s])
    sv = np.empty((maxc, 2))
    snm = np.empty((maxc, 2))
    for k in range(keys.shape[0]):
        if not c_sensor[k]:
            continue
        a = keys[k] >> KEY_SHIFT
        b = keys[k] & KEY_MASK
        ba = shape_body[a]
        bb = shape_body[b]
        if not awake[ba] and not awake[bb]:
            continue
        ax, ay, ac, as_ = body_origin(com, angle, local_center, ba)
        bx, by, bc, bs = body_origin(com, angle, local_center, bb)
        tx, ty, tc, ts = relative_transform(ax, ay, ac, as_, bx, by, bc, bs)
        m = _collide_pair(a, b, tx, ty, tc, ts, 0.0, shape_offset, shape_count, shape_radius, verts, normals, sv,
                          snm)
        c_count[k] = m[0]
        if m[0] > 0:
            c_touch[k] = _put_manifold(k, m, ax, ay, ac, as_, c_normal, c_point, c_sep) < 0.0
        else:
            _clear_manifold(k, c_touch, c_normal, c_point, c_sep)


@njit
def continuous_stage(bodies, shapes, awake, reach, com0, angle0, tree, proxy_shape, threads):
    """Continuous collision (after Box2D v3's): fast bodies are put back at their first time of impact in the
    step, so that no contact the step could not see is crossed.

    A body is fast when it is a bullet, or when any of its points may have moved more than half its smallest
    extent this step: |Δc| + |Δθ|·reach ≥ min_extent / 2, with reach the farthest point of its shapes from the
    centre of mass. (The rotation term is new: a thin box set spinning by a corner hit crossed a wall in the
    next step without a contact, as only its centre's travel was looked at.) The motion is interpolated
    linearly in centre and angle; ``carom.geometry.toi.conservative_advancement`` finds the first contact of
    each shape with each shape its swept box meets, and the body is put at the earliest, its velocity kept.

    Fast bodies that are not bullets meet static shapes; bullets then meet static shapes and the shapes of
    every other body that is not a bullet, at their final poses (a bullet stopped a 0.1 m dynamic plate no
    better than any body before). Sensors and filtered pairs are skipped.

    A pair that already touches at the start (within LINEAR_SLOP: a body resting against the wall it is
    pushed into, or a thin shape that has just hit a corner) would have time of impact 0 and is left to the
    contact solver; but a thin shape that already touches a wall can still cross it in the step. For such a
    pair the sweep is tried again with the shape's inner core (``inner_core``: a quarter of its thickness,
    its length kept), which stops the body before that core reaches the other shape (after Box2D's fallback
    to a small circle at the centroid): it can then slide along the wall but not pass through it.

    The sweep is :func:`continuous_sweep`, compiled apart, its items (a fast body's shape) in ``threads`` parts at
    once; returns False, having changed nothing, when a body is fast but the sweep is not loaded (:func:`load`),
    True otherwise.
    """
    bodies = deref(bodies)
    shapes = deref(shapes)
    com, angle, kind, bullet, body_min_extent = bodies.com, bodies.angle, bodies.kind, bodies.bullet, bodies.min_extent
    if tree.static.meta[2] == 0 and tree.moving.meta[2] == 0:
        return True
    NB = com.shape[0]
    fast = np.empty(NB, np.int64)
    # (np.int64, not 0: the constant 0 is typed as its value first, and _continuous_pass was compiled once more
    # for it, 5 s of the cold compile)
    n_fast = np.int64(0)
    any_bullet = False
    for b in range(NB):
        if not awake[b] or kind[b] != DYNAMIC:
            continue
        dx = com[b, 0] - com0[b, 0]
        dy = com[b, 1] - com0[b, 1]
        travel = math.sqrt(dx * dx + dy * dy) + abs(angle[b] - angle0[b]) * reach[b]
        if bullet[b] or travel >= 0.5 * body_min_extent[b]:
            fast[n_fast] = b
            n_fast += 1
            any_bullet = any_bullet or bullet[b]
    if n_fast == 0:
        return True
    args = (fast, n_fast, any_bullet, bodies, shapes, reach, com0, angle0, tree, proxy_shape, threads)
    if not _continuous_sweep_loaded(args):
        return False
    _call_continuous_sweep(args)
    return True


@apart_njit(lambda arg_types: types.none)
def continuous_sweep(fast, n_fast, any_bullet, bodies, shapes, reach, com0, angle0, tree, proxy_shape, threads):
    """The fast bodies ``fast[:n_fast]`` swept and put back at their first contact (``continuous_stage``):
    those that are not bullets against static shapes, then the bullets (``any_bullet``)."""
    shape_body, shape_alive = shapes.body, shapes.alive
    NB = bodies.com.shape[0]
    S = shape_body.shape[0]
    # each body's shapes as a linked list (so a fast body visits its own shapes, not the whole table)
    first_shape = np.full(NB, -1, np.int64)
    next_shape = np.full(S, -1, np.int64)
    for s in range(S - 1, -1, -1):
        if shape_alive[s]:
            next_shape[s] = first_shape[shape_body[s]]
            first_shape[shape_body[s]] = s
    lists = (first_shape, next_shape)
    # non-bullets first, against static shapes; then bullets, which also meet the others at their final poses
    if tree.static.meta[2] > 0:
        _continuous_pass(np.bool_(False), fast, n_fast, lists, bodies, shapes, reach, com0, angle0, tree,
                         proxy_shape, threads)
    if any_bullet:
        _continuous_pass(np.bool_(True), fast, n_fast, lists, bodies, shapes, reach, com0, angle0, tree,
                         proxy_shape, threads)


#: The continuous stage stops a body when it is within CCD_TARGET of the other shape (somewhere between half
#: that and all of it), and leaves to the contact solver a pair closer than CCD_TOUCHING at the start. The
#: gap left is as large as the one Box2D leaves (a linear slop), so that the next step does not start with
#: the pair touching: a thin box stopped at a wall 1.25 mm short of it (TOI_TARGET) was then "touching" and
#: only its core was swept in the next step, in which its spin swung its far end through the wall.
CCD_TARGET = LINEAR_SLOP
CCD_TOUCHING = 0.5 * LINEAR_SLOP

#: The fallback sweep of ``continuous_stage`` keeps this fraction of a shape's thickness (``inner_core``; Box2D's
#: core fraction)
CORE_FRACTION = 0.25


@njit
def _continuous_pass(bullets, fast, n_fast, lists, bodies, shapes, body_reach, com0, angle0, tree, proxy_shape,
                     threads):
    """The fast bodies that are bullets (``bullets``) or not, swept and put back at their first contact
    (``continuous_stage``).

    Bullets meet the other bodies along those bodies' own motion in the step, both swept: a plate spinning at
    30 rad/s or coming at 20 m/s crossed a bullet's path between its start and end poses, and a bullet swept
    against its final pose only (Box2D v3's way) passed through it one shot in four. The tree holds the moving
    shapes' boxes at the step's start, so a bullet's query box is widened by the farthest any moving body
    travelled (``_moving_reach``), and each candidate's own swept box is checked before its time of impact.
    A bullet stopped by a moving body is then carried with it for the rest of the step (``_carry``): it ends
    where it touched, in that body's frame, instead of where the body has since moved through.

    Each fast body's shapes are items, queried at once, then swept in ``threads`` parts of whole bodies at once
    (``_continuous_parts``): each body's earliest time of impact comes from its own items in their order, and
    no body moves until all are done, so any split gives the same poses."""
    com, angle, bullet = bodies.com, bodies.angle, bodies.bullet
    shape_count, shape_reach = shapes.vert_count, shapes.reach
    first_shape, next_shape = lists
    S = shape_count.shape[0]
    # the swept box of each shape of a fast body (which fast body, which shape), all queried at once
    item_fast = np.empty(S, np.int64)
    item_shape = np.empty(S, np.int64)
    boxes = np.empty((S, 4))
    n = 0
    for i in range(n_fast):
        b = fast[i]
        if bullet[b] != bullets:
            continue
        s = first_shape[b]
        while s != -1:
            # the shape swept by the body's motion: no point of it is farther than its reach from the centre
            reach = shape_reach[s]
            item_fast[n] = i
            item_shape[n] = s
            boxes[n, 0] = min(com0[b, 0], com[b, 0]) - reach
            boxes[n, 1] = min(com0[b, 1], com[b, 1]) - reach
            boxes[n, 2] = max(com0[b, 0], com[b, 0]) + reach
            boxes[n, 3] = max(com0[b, 1], com[b, 1]) + reach
            n += 1
            s = next_shape[s]
    if n == 0:
        return
    t_min = np.ones(n_fast)
    maxc = np.int64(1)
    for it in range(n):
        maxc = max(maxc, shape_count[item_shape[it]])
    hit_body = np.full(n_fast, -1, np.int64)
    widen = _moving_reach(bodies, body_reach, com0, angle0) if bullets else 0.0
    # the static tree, then (bullets) the tree of the moving shapes
    # (two calls, not one on a conditional expression of the two trees: with that, queries of other worlds went
    # wrong after a step, as if the chosen tree's arrays had lost a reference and been freed)
    _sweep_tree(np.int64(0), tree.static, 0.0, n, threads, item_fast, item_shape, boxes, tree.lower, tree.upper, maxc,
                fast, proxy_shape, bodies, shapes, com0, angle0, t_min, hit_body)
    if bullets:
        _sweep_tree(np.int64(1), tree.moving, widen, n, threads, item_fast, item_shape, boxes, tree.lower, tree.upper,
                    maxc, fast, proxy_shape, bodies, shapes, com0, angle0, t_min, hit_body)
    for i in range(n_fast):
        if t_min[i] < 1.0:
            b = fast[i]
            com[b, 0] = com0[b, 0] + t_min[i] * (com[b, 0] - com0[b, 0])
            com[b, 1] = com0[b, 1] + t_min[i] * (com[b, 1] - com0[b, 1])
            angle[b] = angle0[b] + t_min[i] * (angle[b] - angle0[b])
            if hit_body[i] >= 0:
                _carry(com, angle, com0, angle0, b, hit_body[i], t_min[i])


@njit
def _sweep_tree(which, t, widen, n, threads, item_fast, item_shape, boxes, lower, upper, maxc, fast, proxy_shape, bodies,
                shapes, com0, angle0, t_min, hit_body):
    """The n items of ``_continuous_pass`` swept against tree t (``which``: 0 the static tree, 1 the moving one),
    fitted first (its queries in the parts then only read it), in ``threads`` parts (``_continuous_parts``: a
    parallel loop takes arrays, not the tables' named tuples)."""
    tree_fit(t)
    _continuous_parts(which, n, threads, item_fast, item_shape, boxes, widen, t.lo, t.hi, t.parent, t.child1,
                      t.child2, t.height, t.proxy, t.meta, lower, upper, maxc, fast, proxy_shape, bodies.com,
                      bodies.angle, bodies.local_center, bodies.kind, bodies.bullet, com0, angle0, shapes.body,
                      shapes.offset, shapes.vert_count, shapes.radius, shapes.reach, shapes.sensor, shapes.category,
                      shapes.mask, shapes.group, shapes.verts, shapes.normals, shapes.one_way, t_min, hit_body)


@pnjit
def _continuous_parts(which, n, threads, item_fast, item_shape, boxes, widen, lo, hi, parent, child1, child2, height,
                      proxy, meta, lower, upper, maxc, fast, proxy_shape, com, angle, local_center, kind, bullet, com0,
                      angle0, shape_body, shape_offset, shape_count, shape_radius, shape_reach, shape_sensor,
                      shape_category, shape_mask, shape_group, verts, normals, one_way, t_min, hit_body):
    """The n items of ``_continuous_pass`` against tree ``which`` (0 static, 1 moving; its node arrays ``lo`` …
    ``meta``, fitted) in parallel chunks (``chunk_count``), each chunk's ends moved forward to the first item of a
    body (``_body_edge``), so that every fast body's items are in one chunk, which alone writes its ``t_min`` and
    ``hit_body``."""
    chunks = chunk_count(n, threads)
    if chunks == 1:
        _continuous_run(which, np.int64(0), n, item_fast, item_shape, boxes, widen, lo, hi, parent, child1, child2,
                        height, proxy, meta, lower, upper, maxc, fast, proxy_shape, com, angle, local_center, kind,
                        bullet, com0, angle0, shape_body, shape_offset, shape_count, shape_radius, shape_reach,
                        shape_sensor, shape_category, shape_mask, shape_group, verts, normals, one_way, t_min,
                        hit_body)
        return
    for ch in prange(chunks):
        _continuous_run(which, _body_edge(ch * n // chunks, n, item_fast),
                        _body_edge((ch + 1) * n // chunks, n, item_fast), item_fast, item_shape, boxes, widen, lo, hi,
                        parent, child1, child2, height, proxy, meta, lower, upper, maxc, fast, proxy_shape, com, angle,
                        local_center, kind, bullet, com0, angle0, shape_body, shape_offset, shape_count, shape_radius,
                        shape_reach, shape_sensor, shape_category, shape_mask, shape_group, verts, normals, one_way,
                        t_min, hit_body)


@njit
def _body_edge(it, n, item_fast):
    """The first item from ``it`` on that starts a fast body's items (n at the end)."""
    while 0 < it < n and item_fast[it] == item_fast[it - 1]:
        it += 1
    return it


@njit
def _continuous_run(which, i0, i1, item_fast, item_shape, boxes, widen, lo, hi, parent, child1, child2, height, proxy,
                    meta, lower, upper, maxc, fast, proxy_shape, com, angle, local_center, kind, bullet, com0, angle0,
                    shape_body, shape_offset, shape_count, shape_radius, shape_reach, shape_sensor, shape_category,
                    shape_mask, shape_group, verts, normals, one_way, t_min, hit_body):
    """Items i0 … i1 − 1 of ``_continuous_pass`` against tree ``which`` (its node arrays ``lo`` … ``meta``): their
    boxes queried (a bullet's widened by ``widen``, the farthest any moving body travelled), each candidate's time
    of impact, and each fast body's earliest (``t_min``) and what it hit (``hit_body``: the body, for the moving
    tree; else −1)."""
    if i1 <= i0:
        return
    # (a loop: an operation on a slice compiles Numba's string formatting for its shape error, 2 s)
    query = np.empty((i1 - i0, 4))
    for k in range(i1 - i0):
        query[k, 0] = boxes[i0 + k, 0] - widen
        query[k, 1] = boxes[i0 + k, 1] - widen
        query[k, 2] = boxes[i0 + k, 2] + widen
        query[k, 3] = boxes[i0 + k, 3] + widen
    first, hits = tree_query_boxes(Tree(lo, hi, parent, child1, child2, height, proxy, meta), lower, upper, query,
                                   i1 - i0)
    inner = np.empty((maxc, 2))
    for it in range(i0, i1):
        i = item_fast[it]
        b = fast[i]
        s = item_shape[it]
        for hq in range(first[it - i0], first[it - i0 + 1]):
            q = proxy_shape[hits[hq]]
            bq = shape_body[q]
            if bq == b or shape_sensor[s] or shape_sensor[q] or (kind[bq] == DYNAMIC and bullet[bq]):
                continue
            if (shape_count[s] == 2 and shape_count[q] == 2 and shape_radius[s] == 0.0
                    and shape_radius[q] == 0.0):
                # two segments never touch (``collide_sat``): sweeping them stopped a body with a segment
                # in mid-air above a segment of the ground, for good
                continue
            if not should_collide(shape_category[s], shape_mask[s], shape_group[s], shape_category[q],
                                  shape_mask[q], shape_group[q]):
                continue
            if which == 1 and not _swept_boxes_meet(boxes, it, com0, com, bq, shape_reach[q]):
                continue
            if _is_one_way(one_way, q) and one_way_passes(one_way, q, math.cos(angle[bq]), math.sin(angle[bq]),
                                                          com0[b, 0] - com[b, 0], com0[b, 1] - com[b, 1]):
                # a one-way shape lets through what moves out of its solid side, or along it: this body
                # does, if it came more than 60° off the way in
                continue
            t = _shape_toi(borrowed_rows(verts, shape_offset[s], shape_count[s]), shape_radius[s], b,
                           borrowed_rows(verts, shape_offset[q], shape_count[q]), shape_radius[q], bq,
                           com, angle, local_center, com0, angle0, which == 1)
            if t == -2.0 or t == 0.0:
                # touching at the start, or closer than the target distance (a time of impact of 0, which
                # put a fast body back where it started every step, frozen in the air while its speed grew):
                # sweep the shape's inner core instead (``inner_core``)
                count = shape_count[s]
                r_inner = inner_core(borrowed_rows(verts, shape_offset[s], count),
                                     borrowed_rows(normals, shape_offset[s], count), shape_radius[s], inner)
                t = _shape_toi(borrowed_rows(inner, 0, count), r_inner, b,
                               borrowed_rows(verts, shape_offset[q], shape_count[q]), shape_radius[q], bq,
                               com, angle, local_center, com0, angle0, which == 1)
            if 0.0 <= t < t_min[i]:
                t_min[i] = t
                hit_body[i] = bq if which == 1 else -1


@njit
def _moving_reach(bodies, reach, com0, angle0):
    """The farthest any point of a moving body that is not a bullet travelled in the step: a bound of
    |Δc| + |Δθ|·reach over them (0 when nothing moved)."""
    com, angle, kind, bullet = bodies.com, bodies.angle, bodies.kind, bodies.bullet
    widest = 0.0
    for b in range(com.shape[0]):
        if kind[b] == STATIC or (kind[b] == DYNAMIC and bullet[b]):
            continue
        dx = com[b, 0] - com0[b, 0]
        dy = com[b, 1] - com0[b, 1]
        widest = max(widest, math.sqrt(dx * dx + dy * dy) + abs(angle[b] - angle0[b]) * reach[b])
    return widest


@inline_njit
def _swept_boxes_meet(boxes, it, com0, com, bq, shape_reach):
    """Whether the box of bullet item ``it`` meets the box swept by a shape of body bq (no point of which is
    farther than ``shape_reach`` from the body's centre) over the step."""
    return (min(com0[bq, 0], com[bq, 0]) - shape_reach <= boxes[it, 2]
            and max(com0[bq, 0], com[bq, 0]) + shape_reach >= boxes[it, 0]
            and min(com0[bq, 1], com[bq, 1]) - shape_reach <= boxes[it, 3]
            and max(com0[bq, 1], com[bq, 1]) + shape_reach >= boxes[it, 1])


@njit
def _carry(com, angle, com0, angle0, b, bq, t):
    """Body b, just put at its pose of time t of the step where it touches body bq (at its own pose of time
    t, interpolated like the sweep), moved on rigidly with bq to the step's end: b's centre keeps its place
    in bq's frame, p₁ = c_q(1) + R(θ_q(1) − θ_q(t))·(p(t) − c_q(t)), and its angle turns as bq's does."""
    qx = com0[bq, 0] + t * (com[bq, 0] - com0[bq, 0])
    qy = com0[bq, 1] + t * (com[bq, 1] - com0[bq, 1])
    turn = (1.0 - t) * (angle[bq] - angle0[bq])
    c = math.cos(turn)
    s = math.sin(turn)
    dx = com[b, 0] - qx
    dy = com[b, 1] - qy
    com[b, 0] = com[bq, 0] + c * dx - s * dy
    com[b, 1] = com[bq, 1] + s * dx + c * dy
    angle[b] += turn


@njit
def _shape_toi(vs, rs, b, vq, rq, bq, com, angle, local_center, com0, angle0, both_move):
    """First time of impact of a core (vs, rs) of fast body b, swept from its start to its end pose, against
    a core (vq, rq) of body bq, swept too when ``both_move`` and otherwise at its final pose: t in [0, 1), −1
    for none, −2 when the two already touch (within LINEAR_SLOP) at the start."""
    q0x = com0[bq, 0] if both_move else com[bq, 0]
    q0y = com0[bq, 1] if both_move else com[bq, 1]
    q0a = angle0[bq] if both_move else angle[bq]
    t, iterations = conservative_advancement(vs, rs, local_center[b, 0], local_center[b, 1], com0[b, 0], com0[b, 1],
                                             angle0[b], com[b, 0], com[b, 1], angle[b], vq, rq,
                                             local_center[bq, 0], local_center[bq, 1], q0x, q0y, q0a,
                                             com[bq, 0], com[bq, 1], angle[bq], CCD_TARGET,
                                             TOI_MAX_ITERATIONS, CCD_TOUCHING)
    if t < 0.0 and iterations == 0:
        return -2.0
    return t


@njit
def inner_core(v, n, radius, out):
    """The core of a shape (vertices v, edge normals n, rounding radius) shrunk to a quarter of its thickness,
    into out[:len(v)]; returns its rounding radius. The continuous stage sweeps it for a pair that already
    touches at the start of the step (``continuous_stage``).

    Its thickness is e = the distance from the centroid c of the core's vertices to the nearest face of the
    shape: r for a circle or a capsule, min_i n_i·(v_i − c) + r for a polygon. A circle or a capsule keeps
    its core with radius e/4. A polygon's edges move inward by δ = 3e/4 − r (when positive; the rounding
    radius already gives part of it): each vertex moves to where its two shifted edges meet,
    v_i − δ (n_{i−1} + n_i) / (1 + n_{i−1}·n_i), which for δ below the inradius keeps the polygon convex and
    its edges parallel to the shape's; the radius is then min(r, e/4). Box2D sweeps a circle of radius e/4
    about the centroid instead, which lets a long thin box swing its ends through a wall while its centre is
    stopped; the inner core keeps the shape's length."""
    count = v.shape[0]
    cx = 0.0
    cy = 0.0
    for i in range(count):
        cx += v[i, 0]
        cy += v[i, 1]
    cx /= count
    cy /= count
    if count <= 2:
        for i in range(count):
            out[i, 0] = v[i, 0]
            out[i, 1] = v[i, 1]
        return CORE_FRACTION * radius
    inradius = math.inf
    for i in range(count):
        inradius = min(inradius, n[i, 0] * (v[i, 0] - cx) + n[i, 1] * (v[i, 1] - cy))
    e = inradius + radius
    delta = max(0.0, (1.0 - CORE_FRACTION) * e - radius)
    for i in range(count):
        k = i - 1 if i > 0 else count - 1
        sx = n[k, 0] + n[i, 0]
        sy = n[k, 1] + n[i, 1]
        f = delta / (1.0 + n[k, 0] * n[i, 0] + n[k, 1] * n[i, 1])
        out[i, 0] = v[i, 0] - f * sx
        out[i, 1] = v[i, 1] - f * sy
    return min(radius, CORE_FRACTION * e)


#: the compiled calls of the two functions compiled apart and their tests (``carom._jit.apart_caller``,
#: ``apart_loaded``): each takes the function's arguments as one tuple
_call_continuous_sweep = apart_caller(continuous_sweep)
_continuous_sweep_loaded = apart_loaded(continuous_sweep)
_call_sensor_pass = apart_caller(sensor_pass)
_sensor_pass_loaded = apart_loaded(sensor_pass)


def load(bodies, shapes, tree, proxy_shape, contacts):
    """Compile (or load from the cache) :func:`continuous_sweep` and :func:`sensor_pass` for a step of the
    tables ``bodies`` (``BodyTable``), ``shapes``, ``tree``, ``proxy_shape`` and ``contacts`` (the narrow phase's
    ``NarrowTable``), so that the step finds them: ``World.step`` calls it when a step stopped for want of
    them, ``carom.WorldBatch`` before its first step (a batch's worlds are stepped in one compiled call, which
    cannot stop for Python). The step's own arrays, fresh in each step (the bodies' reach, awake flags and
    start poses), are C-ordered arrays of float64 and of flags."""
    if numba.config.DISABLE_JIT:
        return
    f1, f2, b1, i1 = (numba.typeof(np.zeros(1)), numba.typeof(np.zeros((1, 2))), numba.typeof(np.zeros(1, np.bool_)),
                      numba.typeof(np.zeros(1, np.int64)))
    body, shape, table = numba.typeof(bodies), numba.typeof(shapes), numba.typeof(tree)
    continuous_sweep.load((i1, types.int64, types.boolean, body, shape, f1, f2, f1, table, numba.typeof(proxy_shape),
                           types.int64))
    sensor_pass.load((body, shape, b1, numba.typeof(contacts)))
