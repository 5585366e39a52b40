"""Physics you can trust, at the API: one validator for every number entering the world (a refused call names
the value and changes nothing, byte for byte), handles checked against their world, vertex rows reused, new
shapes waking the sleepers they touch, and mass properties exact for shapes far from their body's origin."""
import collections
import math

import numpy as np
import pytest
import shapely
from hypothesis import HealthCheck, given, settings, strategies as st

import carom
from carom.constants import FLOAT32_LIMIT, MAX_SUBSTEPS
from carom.errors import CaromError, GeometryError, SimulationError, StaleHandleError
from carom.geometry import Capsule, Circle, Polygon, Segment, Transform, box
from carom.rigid.shape import compact_vertex_rows

DT = 1 / 60
NAN, INF = float("nan"), float("inf")


# --- the world's state, byte for byte ---------------------------------------------------------------------

def _arrays(prefix, obj, out):
    for name, value in vars(obj).items():
        if isinstance(value, np.ndarray):
            out[prefix + name] = (value.dtype.str, value.shape, value.tobytes())
        elif isinstance(value, (bool, int, float, str, np.generic)) or value is None:
            out[prefix + name] = repr(value)
        elif isinstance(value, list) and name.lstrip("_").startswith("free"):
            out[prefix + name] = repr(value)


def world_state(w):
    """Every NumPy array of the world (and of its broad phase and contact table) as bytes, and its plain numbers
    and counts: two states are equal only if nothing the step reads changed."""
    out = {}
    _arrays("", w, out)
    _arrays("tables.", w.tables, out)
    _arrays("bp.", w.tables.bp, out)
    for k, a in enumerate(w.tables.contacts):
        out[f"contacts[{k}]"] = (a.dtype.str, a.shape, a.tobytes())
    out["body_shapes"] = repr([[h.index for h in hs] for hs in w.tables.body_shapes])
    return out


def assert_unchanged(before, w):
    after = world_state(w)
    assert before.keys() == after.keys()
    changed = [k for k in before if before[k] != after[k]]
    assert not changed, f"changed by a refused call: {changed}"


def scene():
    """A ground, a unit-mass box and a ball, a sensor, a few steps run (contacts, warm starts, events)."""
    w = carom.World(gravity=(0, -10), substeps=4)
    w.static_body.add_shape(Segment((-20, 0), (20, 0)), friction=0.6)
    b = w.add_body(position=(0, 0.5))
    b.add_shape(box(0.5, 0.5), density=1.0)                   # mass 1 kg
    ball = w.add_body(position=(3, 2))
    ball.add_shape(Circle(0.4), density=2.0, restitution=0.3)
    gate = w.add_body(position=(-4, 1), kind="static")
    gate.add_shape(box(0.5, 1), sensor=True)
    for _ in range(5):
        w.step(DT)
    w.contact_events()
    return w, b, ball


def other_world_handles():
    w2 = carom.World()
    body = w2.add_body(position=(0, 1))
    shape = body.add_shape(Circle(0.5))
    return w2, body, shape


# every bad value entering a world: (call, the name its error must contain)
BAD = {
    # world settings
    "substeps 0": (lambda w, b: setattr(w, "substeps", 0), "substeps"),
    "substeps 10**30": (lambda w, b: setattr(w, "substeps", 10 ** 30), "substeps"),
    "substeps above the maximum": (lambda w, b: setattr(w, "substeps", MAX_SUBSTEPS + 1), "substeps"),
    "substeps float": (lambda w, b: setattr(w, "substeps", 4.0), "substeps"),
    "substeps bool": (lambda w, b: setattr(w, "substeps", True), "substeps"),
    "substeps str": (lambda w, b: setattr(w, "substeps", "4"), "substeps"),
    "hit threshold negative": (lambda w, b: setattr(w, "hit_event_threshold", -1.0), "hit_event_threshold"),
    "hit threshold nan": (lambda w, b: setattr(w, "hit_event_threshold", NAN), "hit_event_threshold"),
    "hit threshold inf": (lambda w, b: setattr(w, "hit_event_threshold", INF), "hit_event_threshold"),
    "hit threshold str": (lambda w, b: setattr(w, "hit_event_threshold", "1"), "hit_event_threshold"),
    "hit threshold None": (lambda w, b: setattr(w, "hit_event_threshold", None), "hit_event_threshold"),
    "sleep_enabled str": (lambda w, b: setattr(w, "sleep_enabled", "no"), "sleep_enabled"),
    "sleep_enabled int": (lambda w, b: setattr(w, "sleep_enabled", 1), "sleep_enabled"),
    "gravity nan": (lambda w, b: setattr(w, "gravity", (NAN, 0)), "gravity"),
    "gravity beyond float32": (lambda w, b: setattr(w, "gravity", (0, 1e39)), "gravity"),
    "gravity beyond the limit": (lambda w, b: setattr(w, "gravity", (2 * FLOAT32_LIMIT, 0)), "gravity"),
    "gravity bools": (lambda w, b: setattr(w, "gravity", (True, False)), "gravity"),
    "gravity strs": (lambda w, b: setattr(w, "gravity", ("0", "-10")), "gravity"),
    "gravity length 3": (lambda w, b: setattr(w, "gravity", (0, -10, 0)), "gravity"),
    "friction_mixing unknown": (lambda w, b: setattr(w, "friction_mixing", "avg"), "friction_mixing"),
    "friction_mixing list": (lambda w, b: setattr(w, "friction_mixing", []), "friction_mixing"),
    "restitution_mixing None": (lambda w, b: setattr(w, "restitution_mixing", None), "restitution_mixing"),
    "dt zero": (lambda w, b: w.step(0.0), "dt"),
    "dt nan": (lambda w, b: w.step(NAN), "dt"),
    "dt str": (lambda w, b: w.step("0.1"), "dt"),
    "dt bool": (lambda w, b: w.step(True), "dt"),
    "dt huge": (lambda w, b: w.step(1.2e154), "dt"),
    "dt over a second": (lambda w, b: w.step(1.5), "dt"),
    # body properties
    "velocity beyond the limit": (lambda w, b: setattr(b, "velocity", (2 * FLOAT32_LIMIT, 0)), "velocity"),
    "velocity nan": (lambda w, b: setattr(b, "velocity", (NAN, 0)), "velocity"),
    "velocity str": (lambda w, b: setattr(b, "velocity", ("1", 0)), "velocity"),
    "velocity bool": (lambda w, b: setattr(b, "velocity", (True, 0)), "velocity"),
    "velocity length 1": (lambda w, b: setattr(b, "velocity", [1.0]), "velocity"),
    "velocity None": (lambda w, b: setattr(b, "velocity", None), "velocity"),
    "angular_velocity huge": (lambda w, b: setattr(b, "angular_velocity", 1e31), "angular_velocity"),
    "angular_velocity inf": (lambda w, b: setattr(b, "angular_velocity", INF), "angular_velocity"),
    "angular_velocity str": (lambda w, b: setattr(b, "angular_velocity", "1"), "angular_velocity"),
    "angular_velocity bool": (lambda w, b: setattr(b, "angular_velocity", True), "angular_velocity"),
    "angle nan": (lambda w, b: setattr(b, "angle", NAN), "angle"),
    "angle huge": (lambda w, b: setattr(b, "angle", 1e10), "angle"),
    "angle str": (lambda w, b: setattr(b, "angle", "0"), "angle"),
    "angle bool": (lambda w, b: setattr(b, "angle", False), "angle"),
    "position beyond the world": (lambda w, b: setattr(b, "position", (1e8, 0)), "position"),
    "position nan": (lambda w, b: setattr(b, "position", (0, NAN)), "position"),
    "position None": (lambda w, b: setattr(b, "position", None), "position"),
    "bullet str": (lambda w, b: setattr(b, "bullet", "no"), "bullet"),
    "bullet int": (lambda w, b: setattr(b, "bullet", 1), "bullet"),
    "linear_damping negative": (lambda w, b: setattr(b, "linear_damping", -1.0), "linear_damping"),
    "linear_damping nan": (lambda w, b: setattr(b, "linear_damping", NAN), "linear_damping"),
    "angular_damping negative": (lambda w, b: setattr(b, "angular_damping", -0.1), "angular_damping"),
    "angular_damping str": (lambda w, b: setattr(b, "angular_damping", "0"), "angular_damping"),
    "gravity_scale nan": (lambda w, b: setattr(b, "gravity_scale", NAN), "gravity_scale"),
    "gravity_scale inf": (lambda w, b: setattr(b, "gravity_scale", -INF), "gravity_scale"),
    "gravity_scale bool": (lambda w, b: setattr(b, "gravity_scale", True), "gravity_scale"),
    # add_body
    "add_body position inf": (lambda w, b: w.add_body(position=(INF, 0)), "position"),
    "add_body angle huge": (lambda w, b: w.add_body(angle=1e10), "angle"),
    "add_body velocity huge": (lambda w, b: w.add_body(velocity=(0, 1e39)), "velocity"),
    "add_body angular_velocity bool": (lambda w, b: w.add_body(angular_velocity=True), "angular_velocity"),
    "add_body bullet str": (lambda w, b: w.add_body(bullet="no"), "bullet"),
    "add_body linear_damping": (lambda w, b: w.add_body(linear_damping=-1), "linear_damping"),
    "add_body angular_damping": (lambda w, b: w.add_body(angular_damping="x"), "angular_damping"),
    "add_body gravity_scale": (lambda w, b: w.add_body(gravity_scale=NAN), "gravity_scale"),
    "add_body kind unknown": (lambda w, b: w.add_body(kind="floating"), "kind"),
    "add_body kind unhashable": (lambda w, b: w.add_body(kind=[]), "kind"),
    # add_shape
    "density str": (lambda w, b: b.add_shape(Circle(0.2), density="2"), "density"),
    "density bool": (lambda w, b: b.add_shape(Circle(0.2), density=True), "density"),
    "density negative": (lambda w, b: b.add_shape(Circle(0.2), density=-1), "density"),
    "density huge": (lambda w, b: b.add_shape(Circle(0.2), density=1e31), "density"),
    "density tiny": (lambda w, b: b.add_shape(Circle(0.2), density=1e-31), "density"),
    "density nan": (lambda w, b: b.add_shape(Circle(0.2), density=NAN), "density"),
    "density overflowing the mass": (lambda w, b: b.add_shape(box(1e6, 1e6), density=1e20), "density"),
    "friction bool": (lambda w, b: b.add_shape(Circle(0.2), friction=True), "friction"),
    "friction negative": (lambda w, b: b.add_shape(Circle(0.2), friction=-0.1), "friction"),
    "friction huge": (lambda w, b: b.add_shape(Circle(0.2), friction=1e31), "friction"),
    "restitution above 1": (lambda w, b: b.add_shape(Circle(0.2), restitution=1.5), "restitution"),
    "restitution negative": (lambda w, b: b.add_shape(Circle(0.2), restitution=-0.1), "restitution"),
    "restitution nan": (lambda w, b: b.add_shape(Circle(0.2), restitution=NAN), "restitution"),
    "sensor str": (lambda w, b: b.add_shape(Circle(0.2), sensor="yes"), "sensor"),
    "sensor int": (lambda w, b: b.add_shape(Circle(0.2), sensor=1), "sensor"),
    "category negative": (lambda w, b: b.add_shape(Circle(0.2), category=-1), "category"),
    "category bool": (lambda w, b: b.add_shape(Circle(0.2), category=True), "category"),
    "mask too wide": (lambda w, b: b.add_shape(Circle(0.2), mask=2 ** 64), "mask"),
    "group too wide": (lambda w, b: b.add_shape(Circle(0.2), group=2 ** 63), "group"),
    "group float": (lambda w, b: b.add_shape(Circle(0.2), group=1.5), "group"),
    "shape beyond the world": (lambda w, b: b.add_shape(Circle(5e6, (6e6, 0))), "world limit"),
    "bulk circles placed beyond the world": (lambda w, b: w.add_bodies([(0, 0), (9.5e6, 0)], shape=Circle(1e6)),
                                             "positions[1]"),
    # event handlers
    "handler categories int": (lambda w, b: w.on("begin", print, categories=5), "categories"),
    "handler categories str": (lambda w, b: w.on("begin", print, categories="ab"), "categories"),
    "handler categories triple": (lambda w, b: w.on("end", print, categories=(1, 2, 3)), "categories"),
    # forces and impulses: the value, and the velocity it would leave
    "force nan": (lambda w, b: b.apply_force((NAN, 0)), "force"),
    "force nan point": (lambda w, b: b.apply_force((1, 0), point=(NAN, 0)), "point"),
    "force point beyond the world": (lambda w, b: b.apply_force((1, 0), point=(1e8, 0)), "point"),
    "force str": (lambda w, b: b.apply_force(("1", 0)), "force"),
    "force huge": (lambda w, b: b.apply_force((1e31, 0)), "force"),
    "force overflowing the torque": (lambda w, b: b.apply_force((0, 1e29), point=(1e6, 0)), "force"),
    "torque nan": (lambda w, b: b.apply_torque(NAN), "torque"),
    "torque str": (lambda w, b: b.apply_torque("1"), "torque"),
    "torque huge": (lambda w, b: b.apply_torque(1e31), "torque"),
    "impulse nan": (lambda w, b: b.apply_impulse((NAN, 0)), "impulse"),
    "impulse nan point": (lambda w, b: b.apply_impulse((1, 0), point=(NAN, 0)), "point"),
    "impulse 1e308": (lambda w, b: b.apply_impulse((1e308, 0)), "impulse"),
    "impulse bool": (lambda w, b: b.apply_impulse((True, 0)), "impulse"),
    "impulse overflowing the spin": (lambda w, b: b.apply_impulse((0, 1e29), point=(1e6, 0.5)), "impulse"),
    # shape handles
    "shape friction": (lambda w, b: setattr(b.shapes[0], "friction", -1), "friction"),
    "shape friction str": (lambda w, b: setattr(b.shapes[0], "friction", "0.5"), "friction"),
    "shape friction bool": (lambda w, b: setattr(b.shapes[0], "friction", True), "friction"),
    "shape friction huge": (lambda w, b: setattr(b.shapes[0], "friction", 1e31), "friction"),
    "shape restitution": (lambda w, b: setattr(b.shapes[0], "restitution", 2.0), "restitution"),
    "shape restitution nan": (lambda w, b: setattr(b.shapes[0], "restitution", NAN), "restitution"),
    "shape category": (lambda w, b: setattr(b.shapes[0], "category", "1"), "category"),
    "shape mask": (lambda w, b: setattr(b.shapes[0], "mask", 2 ** 64), "mask"),
    "shape group": (lambda w, b: setattr(b.shapes[0], "group", 2 ** 63), "group"),
    # handles
    "remove a body of another world": (lambda w, b: w.remove(other_world_handles()[1]), "Body"),
    "remove a shape of another world": (lambda w, b: w.remove(other_world_handles()[2]), "ShapeHandle"),
    "remove junk": (lambda w, b: w.remove("body"), "'body'"),
    "shape_handle str": (lambda w, b: w.shape_handle("0"), "index"),
    "body_handle bool": (lambda w, b: w.body_handle(True), "index"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_every_bad_value_is_named_and_changes_nothing(case):
    call, name = BAD[case]
    w, b, _ = scene()
    before = world_state(w)
    with pytest.raises(CaromError) as info:
        call(w, b)
    assert name in str(info.value), str(info.value)
    assert_unchanged(before, w)
    w.step(DT)


@pytest.mark.parametrize("shape", [Circle(1e6), box(1e6, 1.0), Capsule((-1e6, 0), (1e6, 0), 0.5),
                                   Circle(1.0, center=(9e5, 0.0))], ids=["circle", "box", "capsule", "offset"])
def test_a_shape_reaching_beyond_the_world_from_its_body_is_refused(shape):
    """A shape within the world limit in its body's frame but not where the body puts it (x = 9.5e6, turned)
    is refused, naming the limit, and the world is unchanged (before, a circle there was taken)."""
    w, _, _ = scene()
    far = w.add_body(position=(9.5e6, 0.0), angle=0.4)
    far.add_shape(box(1, 1))
    before = world_state(w)
    with pytest.raises(GeometryError, match="world limit"):
        far.add_shape(shape)
    assert_unchanged(before, w)
    far.add_shape(Circle(1e5))      # one that fits is taken
    w.step(DT)


def test_the_velocity_a_force_or_impulse_leaves_is_checked_after_adding():
    """Each value alone is fine; the second one would take the unit-mass box beyond the limit."""
    for apply in (lambda b: b.apply_impulse((0.6 * FLOAT32_LIMIT, 0)),
                  lambda b: b.apply_force((0.6 * FLOAT32_LIMIT, 0)),
                  lambda b: b.apply_torque(0.6 * FLOAT32_LIMIT * b.inertia)):
        w, b, _ = scene()
        apply(b)
        before = world_state(w)
        with pytest.raises(SimulationError):
            apply(b)
        assert_unchanged(before, w)
    w, b, _ = scene()
    before = world_state(w)
    for _ in range(2):
        with pytest.raises(SimulationError, match="impulse"):
            b.apply_impulse((1e308, 0))
        assert_unchanged(before, w)


def test_a_density_whose_mass_underflows_is_refused():
    w, _, _ = scene()
    kinematic = w.add_body(kind="kinematic")
    light = w.add_body(position=(5, 5))
    before = world_state(w)
    with pytest.raises(SimulationError, match="density"):
        light.add_shape(Circle(0.01), density=2e-30)       # a mass of 6e-34 kg
    assert_unchanged(before, w)
    kinematic.add_shape(Circle(0.01), density=2e-30)       # (no mass the solver uses)
    light.add_shape(Circle(0.01), density=1.0)
    w.step(DT)


def test_good_values_of_every_numeric_type_are_taken():
    w, b, _ = scene()
    b.velocity = (np.float32(1.0), np.int64(2))
    b.angular_velocity = np.float64(0.5)
    b.bullet = np.True_
    b.angle = np.array(0.25)
    w.substeps = np.int32(8)
    w.hit_event_threshold = 2
    w.sleep_enabled = np.False_
    s = b.add_shape(Circle(np.float32(0.25)), density=np.float16(2), friction=1, sensor=np.False_)
    assert (b.velocity.tolist(), b.angular_velocity, b.bullet, b.angle) == ([1.0, 2.0], 0.5, True, 0.25)
    assert (w.substeps, w.hit_event_threshold, w.sleep_enabled) == (8, 2.0, False)
    assert (s.density, s.friction, s.sensor) == (2.0, 1.0, False)
    b.add_shape(Circle(0.1), density=0.0)          # massless shapes stay allowed
    w.static_body.add_shape(box(0.1, 0.1, center=(8, 0.1)), density=0.0)
    w.step(DT)


@pytest.mark.parametrize("make, name", [
    (lambda: Circle("1"), "radius"), (lambda: Circle(True), "radius"), (lambda: Circle(None), "radius"),
    (lambda: Circle(1e8), "radius"), (lambda: Circle(1, center=("0", "0")), "center"),
    (lambda: Circle(1, center=(True, 0)), "center"), (lambda: Circle(1, center=(0, 0, 0)), "center"),
    (lambda: box("1", 1), "half_width"), (lambda: box(1, np.nan), "half_height"),
    (lambda: box(1, 1, angle=True), "angle"), (lambda: box(1, 1, angle=1e10), "angle"),
    (lambda: box(1, 1, center=[1]), "center"), (lambda: Capsule((0, 0), (1, 0), "0.1"), "radius"),
    (lambda: Capsule((0, 0), ("1", 0), 0.1), "p2"), (lambda: Segment((0, 0), (1e8, 0)), "world limit"),
    (lambda: Polygon([("0", 0), (1, 0), (0, 1)]), "points"), (lambda: Polygon([(True, 0), (1, 0), (0, 1)]), "points"),
    (lambda: Polygon([(0, 0), (1, 0), (0, 1)], radius=False), "radius"),
    (lambda: Transform((0, 0), "1"), "angle"), (lambda: Transform(("0", 0)), "position"),
    (lambda: box(1, 1).mass_properties("2"), "density"), (lambda: box(1, 1).mass_properties(True), "density"),
])
def test_shape_constructors_follow_the_same_rules(make, name):
    with pytest.raises(GeometryError, match=name):
        make()


def test_a_handle_of_another_world_is_refused_and_changes_neither_world():
    w1, b1, _ = scene()
    w2, body2, shape2 = other_world_handles()
    for handle in (shape2, body2):
        s1, s2 = world_state(w1), world_state(w2)
        with pytest.raises(CaromError, match="another world|of this world"):
            w1.remove(handle)
        assert_unchanged(s1, w1)
        assert_unchanged(s2, w2)
    assert shape2.alive and body2.alive
    # a stale handle of this world is refused too, naming it
    s = b1.add_shape(Circle(0.1, (0.3, 0.3)))
    w1.remove(s)
    state = world_state(w1)
    with pytest.raises(StaleHandleError, match=f"shape {s.index}"):
        w1.remove(s)
    assert_unchanged(state, w1)


# --- random junk: refused without a trace, or taken and then stepped safely --------------------------------

JUNK = st.one_of(
    st.sampled_from([None, True, False, np.True_, "1", "", b"1", NAN, INF, -INF, 10 ** 400, 10 ** 30, -10 ** 30,
                     1e39, -1e39, 1e31, 1e-40, -1, 0, 0.5, 2, 7, [], [1], [1, 2, 3], (NAN, 0), (1e39, 0), ("1", "2"),
                     (True, False), (0.5, 0.5), (1, 2), (1e8, 0), [[1, 2]], {}, 1j, object(),
                     np.array([1.0, 2.0, 3.0]), np.array(["a", "b"]), np.array([np.nan, 1.0]), np.float32(3.0)]),
    st.floats(allow_nan=True, allow_infinity=True), st.integers(min_value=-2 ** 70, max_value=2 ** 70),
    st.tuples(st.floats(), st.floats()),
)

TARGETS = {
    "world.gravity": lambda w, b, v: setattr(w, "gravity", v),
    "world.substeps": lambda w, b, v: setattr(w, "substeps", v),
    "world.hit_event_threshold": lambda w, b, v: setattr(w, "hit_event_threshold", v),
    "world.sleep_enabled": lambda w, b, v: setattr(w, "sleep_enabled", v),
    "world.friction_mixing": lambda w, b, v: setattr(w, "friction_mixing", v),
    "world.step": lambda w, b, v: w.step(v),
    "body.position": lambda w, b, v: setattr(b, "position", v),
    "body.angle": lambda w, b, v: setattr(b, "angle", v),
    "body.velocity": lambda w, b, v: setattr(b, "velocity", v),
    "body.angular_velocity": lambda w, b, v: setattr(b, "angular_velocity", v),
    "body.bullet": lambda w, b, v: setattr(b, "bullet", v),
    "body.linear_damping": lambda w, b, v: setattr(b, "linear_damping", v),
    "body.angular_damping": lambda w, b, v: setattr(b, "angular_damping", v),
    "body.gravity_scale": lambda w, b, v: setattr(b, "gravity_scale", v),
    "body.apply_force": lambda w, b, v: b.apply_force(v),
    "body.apply_force point": lambda w, b, v: b.apply_force((1.0, 2.0), point=v),
    "body.apply_torque": lambda w, b, v: b.apply_torque(v),
    "body.apply_impulse": lambda w, b, v: b.apply_impulse(v),
    "body.apply_impulse point": lambda w, b, v: b.apply_impulse((0.5, 0.5), point=v),
    # (one call: a body at the world limit is taken, but no shape fits on it, and two calls would leave the body)
    "add_body position": lambda w, b, v: w.add_bodies([v], shape=Circle(0.2)),
    "add_body velocity": lambda w, b, v: w.add_body(velocity=v).add_shape(Circle(0.2)),
    "add_body kind": lambda w, b, v: w.add_body(kind=v).add_shape(Circle(0.2)),
    "add_body bullet": lambda w, b, v: w.add_body(bullet=v).add_shape(Circle(0.2)),
    "add_shape density": lambda w, b, v: b.add_shape(Circle(0.2, (0.1, 0)), density=v),
    "add_shape friction": lambda w, b, v: b.add_shape(Circle(0.2, (0.1, 0)), friction=v),
    "add_shape restitution": lambda w, b, v: b.add_shape(Circle(0.2, (0.1, 0)), restitution=v),
    "add_shape sensor": lambda w, b, v: b.add_shape(Circle(0.2, (0.1, 0)), sensor=v),
    "add_shape group": lambda w, b, v: b.add_shape(Circle(0.2, (0.1, 0)), group=v),
    "shape.friction": lambda w, b, v: setattr(b.shapes[0], "friction", v),
    "shape.restitution": lambda w, b, v: setattr(b.shapes[0], "restitution", v),
    "shape.mask": lambda w, b, v: setattr(b.shapes[0], "mask", v),
    "remove": lambda w, b, v: w.remove(v),
    "query_point": lambda w, b, v: w.query_point(v),
}


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(target=st.sampled_from(sorted(TARGETS)), value=JUNK)
def test_random_junk_is_refused_cleanly_or_stepped_safely(target, value):
    w, b, _ = scene()
    before = world_state(w)
    try:
        TARGETS[target](w, b, value)
    except CaromError:
        assert_unchanged(before, w)
        return
    n = w.tables.n_bodies
    for name in ("vel", "angvel", "force", "torque", "inv_mass", "inv_inertia", "_gravity"):
        arr = getattr(w.tables, name)[:n] if name != "_gravity" else w._gravity
        assert np.isfinite(arr).all() and (np.abs(arr) <= FLOAT32_LIMIT).all(), (name, arr)
    w.step(DT)
    assert np.isfinite(w.tables.com[:n]).all() and np.isfinite(w.tables.vel[:n]).all()


def test_shape_constructors_refuse_random_junk_cleanly():
    makers = (lambda v: Circle(v), lambda v: Circle(0.5, v), lambda v: box(v, 1), lambda v: box(1, 1, center=v),
              lambda v: Capsule((0, 0), v, 0.2), lambda v: Segment(v, (1, 1)), lambda v: Polygon(v),
              lambda v: Transform(v), lambda v: Transform((0, 0), v))

    @settings(max_examples=300, deadline=None)
    @given(k=st.integers(0, len(makers) - 1), value=JUNK)
    def run(k, value):
        try:
            makers[k](value)
        except GeometryError:
            pass
    run()


# --- vertex rows are reused --------------------------------------------------------------------------------

def assert_vertex_rows_match(w):
    for s in np.flatnonzero(w.tables.s_alive[:w.tables.n_shapes]):
        o, k = w.tables.s_offset[s], w.tables.s_count[s]
        assert o + k <= w.tables.n_verts
        np.testing.assert_array_equal(w.tables.verts[o:o + k], w.tables.s_geometry[s].vertices)
        np.testing.assert_array_equal(w.tables.normals[o:o + k], w.tables.s_geometry[s].normals)


def test_adding_and_removing_100000_boxes_keeps_the_vertex_table_bounded():
    w = carom.World()
    w.static_body.add_shape(Segment((-50, 0), (50, 0)))
    bodies = [w.add_body(position=(2.0 * k - 20, 1.0)) for k in range(10)]
    for b in bodies:
        b.add_shape(box(0.4, 0.4))
    small = box(0.1, 0.1, center=(0.2, 0.2))
    largest = 0
    for k in range(100_000):
        w.remove(bodies[k % 10].add_shape(small))
        largest = max(largest, w.tables.verts.shape[0])
    live = int(w.tables.s_count[:w.tables.n_shapes][w.tables.s_alive[:w.tables.n_shapes]].sum())
    assert live == 4 * 10 + 2 and largest <= 4 * live + 64
    assert_vertex_rows_match(w)


def test_churn_of_mixed_shapes_reuses_rows_and_steps():
    """Shapes of 1 to 7 vertices come and go in random order (the dead rows are fragmented): the table stays
    within four times the most rows ever live (it does not shrink), every live shape's rows are its own, and
    the world steps."""
    rng = np.random.default_rng(5)
    w = carom.World()
    w.static_body.add_shape(Segment((-50, 0), (50, 0)))
    bodies = [w.add_body(position=(2.0 * k - 20, 1.0)) for k in range(20)]
    for b in bodies:
        b.add_shape(box(0.4, 0.4))
    ring = np.linspace(0, 2 * np.pi, 7, endpoint=False)
    shapes = (box(0.1, 0.1, center=(0.2, 0.2)), Circle(0.1, (0.1, 0)), Polygon(0.2 * np.c_[np.cos(ring), np.sin(ring)]),
              Capsule((0, 0), (0.3, 0), 0.05))
    extra = collections.deque()
    peak = 0
    for k in range(10_000):
        b = bodies[int(rng.integers(len(bodies)))]
        extra.append(b.add_shape(shapes[int(rng.integers(len(shapes)))]))
        if len(extra) > int(rng.integers(1, 60)):
            w.remove(extra.popleft())
        peak = max(peak, int(w.tables.s_count[:w.tables.n_shapes][w.tables.s_alive[:w.tables.n_shapes]].sum()))
        assert w.tables.verts.shape[0] <= 4 * (peak + 7) + 64
        if k % 2_000 == 0:
            assert_vertex_rows_match(w)
    assert_vertex_rows_match(w)
    for _ in range(30):
        w.step(DT)
    assert np.isfinite(w.positions).all()


def churned_pile(extra_rows=0):
    """Boxes on a floor, built with far-away shapes added and removed in between (dead vertex rows)."""
    w = carom.World()
    if extra_rows:                        # room enough that this twin never has to compact
        for name in ("verts", "normals"):
            table = getattr(w.tables, name)
            setattr(w.tables, name, np.zeros((table.shape[0] + extra_rows, 2)))
    w.static_body.add_shape(Segment((-20, 0), (20, 0)))
    junk = []
    for k in range(40):
        b = w.add_body(position=(0.1 * (k % 3), 0.5 + 1.1 * k))
        b.add_shape(box(0.5, 0.5) if k % 2 else Polygon([(-0.5, -0.4), (0.5, -0.5), (0.4, 0.5), (-0.5, 0.5)]))
        junk += [w.static_body.add_shape(box(0.3, 0.3, center=(100.0 + 2 * k, 5.0 + 2 * j))) for j in range(3)]
        if k % 4 == 3:
            for s in junk:
                w.remove(s)
            junk = []
    return w


def test_compaction_moves_rows_in_place_and_the_step_is_unchanged():
    """Two twins, the same shapes in the same slots: one has compacted its vertex table when it filled up, the
    other had room. They step bitwise alike (the kept kernel views see the moved rows)."""
    a, b = churned_pile(), churned_pile(extra_rows=4096)
    assert a.tables.n_verts < b.tables.n_verts
    assert_vertex_rows_match(a)
    for w in (a, b):
        w.step(DT)
    # compact again while the step's views are kept: the arrays are the same objects, their rows moved
    verts = a.tables.verts
    a.remove(a.bodies[5])
    b.remove(b.bodies[5])
    compact_vertex_rows(a.tables, np.flatnonzero(a.tables.s_alive[:a.tables.n_shapes]))
    assert a.tables.verts is verts and a._arg_views is not None
    assert_vertex_rows_match(a)
    for _ in range(90):
        a.step(DT)
        b.step(DT)
        np.testing.assert_array_equal(a.positions, b.positions)
        np.testing.assert_array_equal(a.angles, b.angles)
        np.testing.assert_array_equal(a.velocities, b.velocities)
    assert a.positions[:, 1].min() > 0.3


# --- new shapes wake the sleepers they touch ---------------------------------------------------------------

def sleeping_box():
    w = carom.World()
    w.static_body.add_shape(Segment((-20, 0), (20, 0)))
    b = w.add_body(position=(0, 0.5))
    b.add_shape(box(0.5, 0.5))
    other = w.add_body(position=(3, 0.5))
    other.add_shape(box(0.5, 0.5))
    for _ in range(3):
        w.step(DT)
    b.sleep()
    other.sleep()
    return w, b, other


def test_a_static_shape_added_onto_a_sleeping_body_wakes_it():
    w, b, other = sleeping_box()
    w.static_body.add_shape(box(0.5, 0.5, center=(20, 0.5)))       # far away: nobody wakes
    assert b.sleeping and other.sleeping
    w.static_body.add_shape(box(0.3, 0.3, center=(0.6, 0.5)))      # into the box
    assert not b.sleeping and other.sleeping
    ground = w.add_body(kind="static")
    ground.add_shape(Circle(0.2, (3.0, 1.1)))                       # on the other one, from another static body
    assert not other.sleeping
    for _ in range(30):
        w.step(DT)
    assert abs(b.position[0]) > 0.05                                # pushed out of the new box


def test_a_shape_added_to_one_sleeper_wakes_the_sleeper_it_reaches():
    w, b, other = sleeping_box()
    b.add_shape(box(1.5, 0.2, center=(1.8, 0.0)))                   # reaches the other box's island
    assert not b.sleeping and not other.sleeping


# --- mass properties far from the origin -------------------------------------------------------------------

OFFSETS = [0.0, 1.0, 1e3, -3e4, 1e5]


def assert_mass(props, mass, centroid, inertia):
    assert props.mass == pytest.approx(mass, rel=1e-9)
    assert props.inertia == pytest.approx(inertia, rel=1e-9)
    np.testing.assert_allclose(props.centroid, centroid, rtol=1e-9, atol=1e-9 * math.sqrt(inertia / mass))


def assert_body_mass(shape, density, mass, centroid, inertia):
    """The same through a world: a dynamic body at the origin whose one shape sits far from it."""
    w = carom.World()
    b = w.add_body()
    b.add_shape(shape, density=density)
    assert b.mass == pytest.approx(mass, rel=1e-9)
    assert b.inertia == pytest.approx(inertia, rel=1e-9)
    np.testing.assert_allclose(b.local_center, centroid, rtol=1e-9, atol=1e-9 * math.sqrt(inertia / mass))


@pytest.mark.parametrize("off", OFFSETS)
def test_box_far_away(off):
    hw, hh, d = 0.05, 0.03, 7.0
    m = d * 4 * hw * hh
    inertia = m * ((2 * hw) ** 2 + (2 * hh) ** 2) / 12
    s = box(hw, hh, center=(off, -off))
    assert_mass(s.mass_properties(d), m, (off, -off), inertia)
    assert_body_mass(s, d, m, (off, -off), inertia)


@pytest.mark.parametrize("off", OFFSETS)
def test_circle_far_away(off):
    r, d = 0.07, 3.0
    m = d * math.pi * r * r
    s = Circle(r, (-off, off))
    assert_mass(s.mass_properties(d), m, (-off, off), m * r * r / 2)
    assert_body_mass(s, d, m, (-off, off), m * r * r / 2)


@pytest.mark.parametrize("off", OFFSETS)
def test_capsule_far_away(off):
    r, length, d = 0.03, 0.2, 2.0
    rect_m, disk_m = d * 2 * r * length, d * math.pi * r * r
    c = 4 * r / (3 * math.pi)                # a half disc's centroid beyond the end
    half_own = disk_m / 2 * (r * r / 2) - disk_m / 2 * c * c
    inertia = rect_m * (length ** 2 + 4 * r * r) / 12 + 2 * (half_own + disk_m / 2 * (length / 2 + c) ** 2)
    s = Capsule((off, off), (off + length, off), r)
    assert_mass(s.mass_properties(d), rect_m + disk_m, (off + length / 2, off), inertia)
    assert_body_mass(s, d, rect_m + disk_m, (off + length / 2, off), inertia)


@pytest.mark.parametrize("off", OFFSETS)
def test_random_polygon_far_away(off):
    rng = np.random.default_rng(int(abs(off)) + 3)
    pts = rng.normal(0, 0.1, (12, 2))
    near = Polygon(pts)
    far = Polygon(pts + (off, 2 * off))
    p0, p1 = near.mass_properties(1.5), far.mass_properties(1.5)
    assert_mass(p1, p0.mass, p0.centroid + (off, 2 * off), p0.inertia)
    g = shapely.Polygon(far.vertices)
    assert p1.mass == pytest.approx(1.5 * g.area, rel=1e-9)
    np.testing.assert_allclose(p1.centroid, [g.centroid.x, g.centroid.y], rtol=1e-9, atol=1e-9)
    assert_body_mass(far, 1.5, p0.mass, p0.centroid + (off, 2 * off), p0.inertia)


def test_a_small_box_far_from_its_body_origin_still_turns():
    """The bug this fixes: J − m|c|² about the origin gave a 10 cm box at (1000, 1000) a negative inertia, and
    its body silently stopped rotating."""
    w = carom.World(gravity=(0, 0))
    b = w.add_body()
    b.add_shape(box(0.05, 0.05, center=(1000, 1000)))
    assert b.inertia == pytest.approx(b.mass * 0.02 / 12, rel=1e-9)
    b.angular_velocity = 1.0
    w.step(DT)
    assert b.angle == pytest.approx(DT, rel=1e-6)


@pytest.mark.parametrize("off", [0.0, 1e5])
def test_compound_body_far_away(off):
    """Two boxes side by side: each about its own centroid plus m·d² to the combined one."""
    w = carom.World()
    b = w.add_body()
    b.add_shape(box(0.5, 0.25, center=(off, off)), density=2.0)
    b.add_shape(box(0.5, 0.25, center=(off + 1.0, off)), density=2.0)
    m = 2.0 * 0.5
    inertia = 2 * (m * (1.0 + 0.25) / 12 + m * 0.25)
    assert b.mass == pytest.approx(2 * m, rel=1e-12)
    assert b.inertia == pytest.approx(inertia, rel=1e-9)
    np.testing.assert_allclose(b.local_center, (off + 0.5, off), rtol=1e-12, atol=1e-12)
