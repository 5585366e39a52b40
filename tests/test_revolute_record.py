"""A revolute joint with a limit, motor or spring is solved from one compact row (``revolute.solve_record``), not
from its generic rows: the results must be the generic rows' bit for bit. The generic rows stay reachable (the
param column ``GENERIC_ROWS``), so every scene here is run twice, once each way, and compared bitwise: bodies,
joint impulses and reactions, contacts."""
import numpy as np
import pytest

import carom
from carom import World, joints
from carom.geometry import box, Circle
from carom.rigid.joints import revolute
from carom.rigid.joints._apart import load_lanes
from carom.rigid.joints._common import REVOLUTE as _REVOLUTE
from carom.scenes.box2d_scenes import add_human

DT = 1.0 / 60.0


def _ragdolls(w):
    w.static_body.add_shape(box(20.0, 0.5, center=(0.0, -0.5)))
    for k in range(6):
        add_human(w, (-6.0 + 2.2 * k, 0.2 + 0.4 * k), group=1 + k % 3)


def _mixed(w):
    """Every feature alone and together, joints to the static body and to a kinematic one, a fixed-rotation
    body (no inertia), a motor that hits its torque limit, a limit that is apart, a spring with a target."""
    ground = w.static_body
    ground.add_shape(box(20.0, 0.5, center=(0.0, -0.5)))
    spinner = w.add_body(position=(8.0, 4.0), kind="kinematic", angular_velocity=1.5)
    spinner.add_shape(box(0.3, 0.3))
    settings = [dict(lower=-0.3, upper=0.4), dict(motor_speed=3.0, max_motor_torque=2.0),
                dict(hertz=4.0, damping_ratio=0.3, target_angle=0.5), dict(lower=0.0, upper=0.0),
                dict(lower=-1.0, upper=1.0, motor_speed=-2.0, max_motor_torque=50.0, hertz=30.0, damping_ratio=1.0),
                dict(upper=0.2), dict(lower=-0.1, hertz=2.0), dict()]
    prev = ground
    for i, extra in enumerate(settings):
        b = w.add_body(position=(-6.0 + 1.5 * i, 3.0 + 0.3 * i), angle=0.2 * i)
        b.add_shape(box(0.6, 0.15), density=1.0 + i)
        if i == 3:
            b.fixed_rotation = True
        w.add_joint(joints.Revolute(prev if i % 3 else ground, b, anchor=(-6.4 + 1.5 * i, 3.0 + 0.3 * i), **extra))
        prev = b
    for i, extra in enumerate(settings[:4]):
        b = w.add_body(position=(8.0 + 0.8 * (i + 1), 4.0))
        b.add_shape(Circle(0.2), density=2.0)
        w.add_joint(joints.Revolute(spinner, b, anchor=(8.0 + 0.8 * i + 0.4, 4.0), **extra))
        spinner = b if i % 2 else spinner


def _pendulums(w):
    """Rows of pendulums hung from the static body and from each other, every feature mixed across neighbours: the
    joints of one colour are consecutive records that touch no body another writes, so the step solves them
    side by side in vector lanes (``_solve._solve_record_lanes``), which must give the generic rows' bits too.
    Lanes where a row does nothing: a fixed-rotation body (its angle rows have no mass), a limit that is apart, a
    motor at its torque limit."""
    ground = w.static_body
    ground.add_shape(box(30.0, 0.5, center=(0.0, -8.0)))
    settings = [dict(lower=-0.3, upper=0.4), dict(motor_speed=3.0, max_motor_torque=2.0),
                dict(hertz=4.0, damping_ratio=0.3, target_angle=0.5), dict(lower=0.0, upper=0.0),
                dict(lower=-1.0, upper=1.0, motor_speed=-2.0, max_motor_torque=50.0, hertz=30.0, damping_ratio=1.0),
                dict(upper=0.2), dict(lower=-0.1, hertz=2.0), dict(lower=0.5, upper=2.0), dict(motor_speed=-1.0,
                max_motor_torque=0.01, lower=-2.0)]
    for i in range(27):
        x = -13.0 + 1.0 * i
        top = w.add_body(position=(x + 0.4, 4.0), angle=0.1 * i)
        top.add_shape(box(0.4, 0.1), density=1.0 + 0.1 * i)
        if i % 7 == 3:
            top.fixed_rotation = True
        w.add_joint(joints.Revolute(ground, top, anchor=(x, 4.0), **settings[i % len(settings)]))
        low = w.add_body(position=(x + 0.8, 3.4), angle=-0.2 * i)
        low.add_shape(Circle(0.15), density=2.0)
        w.add_joint(joints.Revolute(top, low, anchor=(x + 0.8, 4.0), **settings[(i + 4) % len(settings)]))


def _carousel(w):
    """Arms hung from one moving kinematic body (the solver does not hold it: the lanes read its velocity from the
    world's state, lane by lane) and from the static body, every feature mixed: the arms' joints are one colour,
    so the step solves them side by side."""
    settings = [dict(lower=-0.3, upper=0.4), dict(motor_speed=3.0, max_motor_torque=2.0),
                dict(hertz=4.0, damping_ratio=0.3, target_angle=0.5), dict(lower=-1.0, upper=1.0, hertz=30.0)]
    hub = w.add_body(position=(0.0, 4.0), kind="kinematic", velocity=(0.7, -0.2), angular_velocity=1.3)
    hub.add_shape(Circle(0.3))
    for i in range(12):
        arm = w.add_body(position=(-3.0 + 0.5 * i, 3.4), angle=0.2 * i)
        arm.add_shape(box(0.2, 0.05), density=1.0 + 0.1 * i)
        w.add_joint(joints.Revolute(hub if i % 3 else w.static_body, arm, anchor=(-3.0 + 0.5 * i, 3.6),
                                    **settings[i % len(settings)]))


def _run(build, generic, steps):
    load_lanes()        # (the records' vector lanes, which a step otherwise has compiled in a helper process)
    w = World(gravity=(0, -10))
    build(w)
    t = w.tables
    n = t.n_joints
    t.j_param[:n, revolute.GENERIC_ROWS] = np.where(t.j_kind[:n] == _REVOLUTE, float(generic), 0.0)
    assert (t.j_kind[:n] == _REVOLUTE).sum() >= 10
    out = []
    for _ in range(steps):
        w.step(DT)
        out.append((t.com[:t.n_bodies].copy(), t.angle[:t.n_bodies].copy(), t.vel[:t.n_bodies].copy(),
                    t.angvel[:t.n_bodies].copy(), t.j_impulse[:n].copy(), t.j_reaction[:n].copy()))
    return w, out


@pytest.mark.parametrize("build, steps", [(_ragdolls, 150), (_mixed, 200), (_pendulums, 120), (_carousel, 120)])
def test_the_record_is_the_generic_rows_bit_for_bit(build, steps):
    w0, generic = _run(build, True, steps)
    w1, record = _run(build, False, steps)
    moved = 0.0
    for g, r in zip(generic, record):
        for a, b in zip(g, r):
            assert a.tobytes() == b.tobytes()
        moved = max(moved, float(np.abs(g[3]).max()))
    assert moved > 1.0                       # (things turned)
    assert np.abs(w1.tables.j_impulse).max() > 0.0
    for x, y in zip(w0.contact_data(), w1.contact_data()):
        assert x.tobytes() == y.tobytes()


def test_the_record_holds_its_limits_and_runs_its_motor():
    # independent of the generic rows: a pendulum with a limit settles at the limit; a motor spins a wheel at
    # its speed; a spring without gravity swings about its target
    w = World(gravity=(0, -10))
    arm = w.add_body(position=(1.0, 0.0))
    arm.add_shape(box(1.0, 0.05), density=1.0)
    w.add_joint(joints.Revolute(None, arm, anchor=(0.0, 0.0), lower=-0.5, upper=0.5))
    wheel = w.add_body(position=(5.0, 0.0))
    wheel.add_shape(Circle(0.5), density=1.0)
    w.add_joint(joints.Revolute(None, wheel, anchor=(5.0, 0.0), motor_speed=2.0, max_motor_torque=100.0))
    for _ in range(240):
        w.step(DT)
    assert arm.angle == pytest.approx(-0.5, abs=0.02)
    assert wheel.angular_velocity == pytest.approx(2.0, rel=1e-3)


def _joint_data(w, steps, threads=1):
    """After ``steps`` steps of ``w``: its joints' step data as the step's preparation makes it (colour starts,
    plain joints per colour, bodies, frames, row starts, rows: ``_solve.prepare_joints``, its second pass in
    ``threads`` parts)."""
    from carom.rigid.joints._solve import joints_to_solve, prepare_joints
    from carom.rigid.joints import bookkeeping
    for _ in range(steps):
        w.step(DT)
    t = w.tables
    nb = t.n_bodies
    jl, js, pc = joints_to_solve(bookkeeping.table(t), t.kind[:nb], t.asleep[:nb])
    jbody, frame, rstart, rows = prepare_joints(jl, js, pc, bookkeeping.table(t), t.com[:nb], t.angle[:nb],
                                                t.inv_mass[:nb], t.inv_inertia[:nb], t.local_center[:nb],
                                                t.kind[:nb], DT / 4, threads)[:4]
    return js, pc, jbody, frame, rstart, rows


@pytest.mark.parametrize("build", [_ragdolls, _pendulums, _mixed])
def test_the_lane_blocks_touch_no_body_another_lane_writes_and_hold_a_ragdolls_joints(build):
    # the sweeps solve a lane block's LANES64 records side by side (``prepare_joints`` makes the blocks once per
    # step): that is solving them one after the other only where no body one of them writes (one with mass in its
    # frame) is a body of another of them; checked here with sets, and the ragdolls' joints mostly in blocks
    from carom.rigid.joints._common import MA, IA, MB, IB, TYPE
    from carom.rigid.joints._solve import lane_blocks
    from carom._simd import LANES64
    assert load_lanes()
    w = World(gravity=(0, -10))
    build(w)
    js, pc, jbody, frame, rstart, rows = _joint_data(w, 20)
    n = jbody.shape[0]
    lf = lane_blocks(jbody, frame, rstart, rows)[0]
    record = [rstart[i + 1] == rstart[i] + 1 and rows[rstart[i], TYPE] == revolute.ROW_REVOLUTE for i in range(n)]
    in_blocks = 0
    for i in range(n):
        if not (record[i] and rows[rstart[i], revolute.R_BUNDLE] > 0):
            continue
        u = int(rows[rstart[i], revolute.R_BUNDLE]) - 1
        assert all(record[i:i + LANES64])
        for q in range(LANES64):
            j = i + q
            written = [jbody[j, 0]] if lf[u, MA, q] + lf[u, IA, q] > 0 else []
            written += [jbody[j, 1]] if lf[u, MB, q] + lf[u, IB, q] > 0 else []
            others = {b for k in range(i, i + LANES64) if k != j for b in jbody[k]}
            assert not others.intersection(written), (i, q)
            if q:
                assert rows[rstart[j], revolute.R_BUNDLE] == -1.0
        in_blocks += LANES64
    if build is _ragdolls:
        assert in_blocks >= 0.5 * sum(record)


def _standing_crowd(w, count=60):
    """``count`` ragdolls (ten joints each) side by side on a floor: enough joints that two threads share each
    colour's joints in chunks (``_solve.CHUNK_JOINTS``), and chunks that would cut the lane blocks."""
    from carom.scenes.box2d_scenes import add_humans
    w.static_body.add_shape(box(80.0, 0.5, center=(0.0, -0.5)))
    add_humans(w, [(-70.0 + 2.3 * k, 0.1 + 0.01 * (k % 7)) for k in range(count)], [1 + k % 5 for k in range(count)])


def test_the_lane_blocks_are_the_sweeps_walk_of_the_records():
    # ``prepare_joints`` makes, once per step (the lanes loaded), the blocks the sweeps solve side by side: walking
    # each colour's joints solved one by one from its first (below the overflow colour), LANES64 records in a row
    # start a block, which the walk then steps over. Checked against that walk written out here; a block's columns
    # are its joints' (their features from their settings, their masses the bodies'), and ``block_edge`` moves a
    # chunk's edge off a block's inside only
    from carom.rigid.joints._common import MA, MB
    from carom.rigid.joints._solve import lane_blocks, block_edge, OVERFLOW, joints_to_solve
    from carom.rigid.joints import bookkeeping
    from carom._simd import LANES64
    assert load_lanes()
    w = World(gravity=(0, -10))
    _standing_crowd(w, 20)
    js, pc, jbody, frame, rstart, rows = _joint_data(w, 5)
    t = w.tables
    jl = joints_to_solve(bookkeeping.table(t), t.kind[:t.n_bodies], t.asleep[:t.n_bodies])[0]
    n = jbody.shape[0]
    lf, lr = lane_blocks(jbody, frame, rstart, rows)

    def record(i):
        return rstart[i + 1] == rstart[i] + 1 and rows[rstart[i], 0] == revolute.ROW_REVOLUTE
    expect = {}
    for c in range(OVERFLOW):
        i, end = js[c] + pc[c], js[c + 1]
        while i < end:
            if i + LANES64 <= end and all(record(k) for k in range(i, i + LANES64)):
                expect[i] = len(expect)
                i += LANES64
            else:
                i += 1
    assert len(expect) >= 0.6 * n / LANES64
    heads = {i: int(rows[rstart[i], revolute.R_BUNDLE]) - 1 for i in range(n)
             if record(i) and rows[rstart[i], revolute.R_BUNDLE] > 0}
    assert heads == expect
    p = t.j_param
    for i, u in expect.items():
        for q in range(LANES64):
            j = jl[i + q]
            features = ((p[j, revolute.HERTZ] > 0) * revolute.SPRING_ON + (p[j, revolute.MAX_MOTOR_TORQUE] > 0)
                        * revolute.MOTOR_ON + (p[j, revolute.LOWER] > -np.inf) * revolute.LOWER_ON
                        + (p[j, revolute.UPPER] < np.inf) * revolute.UPPER_ON)
            assert lr[u, revolute.R_FEATURES, q] == features
            assert lf[u, MA, q] == t.inv_mass[jbody[i + q, 0]] and lf[u, MB, q] == t.inv_mass[jbody[i + q, 1]]
            if q:
                assert rows[rstart[i + q], revolute.R_BUNDLE] == -1.0
        inside = set(range(i + 1, i + LANES64))
        for x in range(i, i + LANES64 + 1):
            assert block_edge(x, jbody, rstart, rows) == (i + LANES64 if x in inside else x)
    members = {k for i in expect for k in range(i, i + LANES64)}
    assert all(rows[rstart[i], revolute.R_BUNDLE] == 0.0 for i in range(n) if record(i) and i not in members)


def test_lane_blocks_give_the_same_bits_on_one_and_two_threads():
    # two threads share a colour's joints in chunks whose edges ``block_edge`` moves off the lane blocks: the world
    # must be the one-thread world bit for bit (and the lanes must be in use: the records' arithmetic is the
    # generic rows', checked above)
    assert load_lanes()
    before = carom.get_num_threads()
    try:
        results = []
        for threads in (1, 2):
            carom.set_num_threads(threads, adaptive=False)
            w = World(gravity=(0, -10))
            _standing_crowd(w)
            for _ in range(60):
                w.step(DT)
            t = w.tables
            results.append((t.com[:t.n_bodies].copy(), t.angle[:t.n_bodies].copy(), t.vel[:t.n_bodies].copy(),
                            t.angvel[:t.n_bodies].copy(), t.j_impulse[:t.n_joints].copy(),
                            t.j_reaction[:t.n_joints].copy()))
        for a, b in zip(*results):
            assert a.tobytes() == b.tobytes()
        assert np.abs(results[0][3]).max() > 0.1          # (the ragdolls move)
    finally:
        carom.set_num_threads(before)


def test_the_joints_are_prepared_in_parts_as_in_one_pass():
    # ``prepare_joints`` fills the frames, bundle lanes and records in a second pass over the solve order, in
    # ``threads`` parts (``_prepare_parts``; chunks that cut lane blocks and colours): the same tables bit for bit
    # as in one part (every field written: the unused rest of a table is not), on a crowd of ragdolls (records in
    # blocks and alone) with pendulums, plain point joints (bundles) and other kinds
    from carom.rigid._contact_rows import PARALLEL_MIN_ITEMS
    from carom.rigid.joints import bookkeeping
    from carom.rigid.joints._common import TYPE, WARM_DV
    from carom.rigid.joints._solve import joints_to_solve, prepare_joints, lane_blocks
    assert load_lanes()
    w = World(gravity=(0, -10))
    _standing_crowd(w, count=40)
    _pendulums(w)
    chain = [w.add_body(position=(30.0 + 0.5 * k, 8.0)) for k in range(12)]
    for body in chain:
        body.add_shape(box(0.2, 0.05))
    w.add_joints([joints.Revolute(a, b, anchor=(30.25 + 0.5 * k, 8.0)) for k, (a, b) in enumerate(zip(chain, chain[1:]))]
                 + [joints.Weld(chain[0], chain[2], anchor=(30.5, 8.0), linear_hertz=2.0)])
    for _ in range(30):
        w.step(DT)
    t = w.tables
    nb = t.n_bodies
    jl, js, pc = joints_to_solve(bookkeeping.table(t), t.kind[:nb], t.asleep[:nb])
    one, two = (prepare_joints(jl, js, pc, bookkeeping.table(t), t.com[:nb], t.angle[:nb], t.inv_mass[:nb],
                               t.inv_inertia[:nb], t.local_center[:nb], t.kind[:nb], DT / 4, threads)
                for threads in (1, 2))
    n = jl.shape[0]
    assert n >= PARALLEL_MIN_ITEMS and pc.sum() > 0
    jbody, frame, rstart, rows = one[:4]
    for a, b in zip(one[4:] + (jbody, rstart), two[4:] + (two[0], two[2])):     # the bundles, bodies, row starts
        assert a.tobytes() == b.tobytes()
    blocks = 0
    colour = np.searchsorted(js, np.arange(n), side="right") - 1
    for i in range(n):
        r0, r1 = rstart[i], rstart[i + 1]
        if i - js[colour[i]] < pc[colour[i]]:
            assert r0 == r1                                   # (a bundle lane: no frame, no rows)
            continue
        mark = rows[r0, revolute.R_BUNDLE] if rows[r0, TYPE] == revolute.ROW_REVOLUTE else 0.0
        if mark != 0.0:                                       # (a record in a block: its row holds the mark only)
            assert rows[r0, TYPE] == two[3][r0, TYPE] and mark == two[3][r0, revolute.R_BUNDLE]
            blocks = max(blocks, int(mark))
            continue
        # (a frame's columns from WARM_DV on are the sweeps' to write)
        assert frame[i, :WARM_DV].tobytes() == two[1][i, :WARM_DV].tobytes()
        assert rows[r0:r1].tobytes() == two[3][r0:r1].tobytes()
    assert blocks > 0
    lf1, lr1 = lane_blocks(jbody, frame, rstart, rows)
    lf2, lr2 = lane_blocks(*two[:4])
    assert lf1[:blocks, :WARM_DV].tobytes() == lf2[:blocks, :WARM_DV].tobytes()
    assert lr1[:blocks].tobytes() == lr2[:blocks].tobytes()


def test_the_lanes_are_asked_for_with_the_types_the_sweeps_hand_them():
    # ``prepare_joints`` asks once per step whether the lanes are loaded, with a tuple of dummy arrays
    # (``lanes_probe``): it must have the argument types the sweeps call ``record_lanes`` with, or lane blocks
    # would be made for lanes that can never be found
    import numba
    from carom.rigid.joints._apart import LANES_TYPES
    from carom.rigid.joints._solve import lanes_probe
    w = World(gravity=(0, -10))
    _ragdolls(w)
    jbody, frame, rstart, rows = _joint_data(w, 1)[2:]
    assert tuple(numba.typeof(v) for v in lanes_probe(jbody, frame, rstart, rows)) == LANES_TYPES
