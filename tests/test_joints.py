"""Joints against closed forms and against pymunk.

Every scene runs at 60 Hz with 4 substeps unless it says otherwise, sleep off where sleeping would end the
motion being measured. Each test quotes the figure it measured when it was written (carom, this branch), beside
the bound it asserts. The closed forms: a pendulum's period T0·(1 + θ²/16) and its energy; a spring's frequency
f·√(1 − ζ²) and its decay per period e^(−2πζ/√(1−ζ²)); a motor's torque balancing its load; a limit's torque
m·g·l·cos θ; free fall through a pulley (m2 − r·m1)·g/(m2 + r²·m1); a double pendulum integrated by RK4 at
0.1 ms; and the soft joints' own compliance (a rigid joint is a spring of JOINT_HERTZ about the effective mass
of its row: under a load F it gives F/(m·ω²))."""
import math
import struct

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import carom
from carom import joints
from carom.constants import LINEAR_SLOP, JOINT_HERTZ
from carom.errors import CaromError, StaleHandleError
from carom.rigid.joints import SETTINGS
from carom.geometry import Capsule, Circle, box

DT = 1.0 / 60.0
G = 10.0


def _world(gravity=(0.0, -G), sleep=False, substeps=4):
    w = carom.World(gravity=gravity, substeps=substeps)
    w.sleep_enabled = sleep
    return w


def _crossings(x, dt, direction=0):
    """Times where the sampled signal x (x[i] at (i + 1)·dt) crosses zero, linearly interpolated; direction
    -1 only downward crossings, +1 only upward, 0 both."""
    out = []
    for i in range(1, len(x)):
        down = x[i - 1] > 0.0 >= x[i]
        up = x[i - 1] < 0.0 <= x[i]
        if (down and direction <= 0) or (up and direction >= 0):
            out.append((i + x[i - 1] / (x[i - 1] - x[i])) * dt)
    return np.array(out)


# --- 1. simple pendulum ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["revolute", "distance"])
def test_pendulum_period_and_energy(kind):
    """A 1 m pendulum released at 5°: period T0·(1 + θ²/16) (T0 = 2π√(L/g)) within 1 %, and its energy (kinetic
    plus potential, averaged over each period) the same in the tenth period as in the first within 1 % of the
    swing energy m·g·L·(1 − cos θ). Measured: period error +0.01 % (revolute) and +0.002 % (distance); energy
    change −0.045 % and −0.038 % of the swing (−0.009 % with one joint pass, 60 Hz and damping ratio 2).
    (Before this branch the swing gained 8 % of its energy per period: the joints' warm start of later
    substeps was the solver's carry, through a rope direction one substep old.)

    The energy is compared period to period, not to the release: the soft joint stretches by g/ω² (0.05 mm at
    70 Hz) under the bob's weight in the first steps, 1.3 % of this small swing's energy."""
    L, th0 = 1.0, math.radians(5.0)
    w = _world()
    pivot = np.array((0.0, 5.0))
    bob = w.add_body(position=(pivot[0] + L * math.sin(th0), pivot[1] - L * math.cos(th0)))
    bob.add_shape(Circle(0.02), density=1000.0)
    if kind == "revolute":
        w.add_joint(joints.Revolute(None, bob, anchor=tuple(pivot)))
    else:
        w.add_joint(joints.Distance(None, bob, anchor_a=tuple(pivot), anchor_b=tuple(bob.position)))
    m, inertia = bob.mass, bob.inertia

    def energy():
        v = bob.velocity
        return 0.5 * m * (v @ v) + 0.5 * inertia * bob.angular_velocity ** 2 + m * G * (bob.position[1] - pivot[1] + L)

    T = 2.0 * math.pi * math.sqrt(L / G) * (1.0 + th0 ** 2 / 16.0)
    per = int(round(T / DT))
    n = 10 * per + 2
    x = np.empty(n)
    e = np.empty(n)
    for i in range(n):
        w.step(DT)
        x[i] = bob.position[0] - pivot[0]
        e[i] = energy()
    period = np.diff(_crossings(x, DT, -1)).mean()
    assert abs(period / T - 1.0) < 0.01
    swing = m * G * L * (1.0 - math.cos(th0))
    first, last = e[:per].mean(), e[9 * per:10 * per].mean()
    assert abs(last - first) < 0.01 * swing


# --- 2. springs ------------------------------------------------------------------------------------------------

def _spring_run(f, zeta, seconds, amplitude=0.1):
    """A 0.1 m circle (mass π·0.1²·10) on a distance spring to the static body, anchored at its centre (so the
    row's effective mass is the body's), gravity off, released 0.1 m out: its displacement per step."""
    w = _world(gravity=(0.0, 0.0))
    b = w.add_body(position=(1.0 + amplitude, 0.0))
    b.add_shape(Circle(0.1), density=10.0)
    w.add_joint(joints.Distance(None, b, anchor_a=(0.0, 0.0), anchor_b=(1.0 + amplitude, 0.0), length=1.0,
                                hertz=f, damping_ratio=zeta))
    n = int(round(seconds / DT))
    x = np.empty(n)
    for i in range(n):
        w.step(DT)
        x[i] = b.position[0] - 1.0
    return x


def _peaks(x):
    """|x| at each extremum between zero crossings (the sample of largest |x| refined by a parabola)."""
    idx = np.flatnonzero(np.diff(np.sign(x)) != 0)
    out = []
    for a, b in zip(idx[:-1], idx[1:]):
        seg = np.abs(x[a + 1:b + 1])
        k = int(np.argmax(seg))
        if 0 < k < len(seg) - 1:
            y0, y1, y2 = seg[k - 1], seg[k], seg[k + 1]
            den = y0 - 2 * y1 + y2
            out.append(y1 - 0.125 * (y0 - y2) ** 2 / den if den != 0 else y1)
    return np.array(out)


@pytest.mark.parametrize("f", [0.5, 1.0, 2.0])
def test_undamped_spring_oscillates_at_its_frequency(f):
    """Frequency within 2 % of f and amplitude kept (≥ 99 % per period). Measured: frequency error below
    0.012 % at 0.5, 1 and 2 Hz; amplitude 1.00000, 0.99988 and 0.99910 per period. (Before this branch: 0.92,
    0.85 and 0.72 per period, Box2D's soft spring, a backward Euler step, solved in the biased solve and again
    in the relax.)"""
    x = _spring_run(f, 0.0, 6.0)
    freq = 1.0 / (2.0 * np.diff(_crossings(x, DT)).mean())
    assert abs(freq / f - 1.0) < 0.02
    p = _peaks(x)
    per_period = (p[2:] / p[:-2]).min()
    assert per_period > 0.99


@pytest.mark.parametrize("f, zeta", [(1.0, 0.1), (0.5, 0.1), (1.0, 0.3), (0.5, 0.3)])
def test_damped_spring_decays_as_closed_form(f, zeta):
    """Amplitude decay per period within 5 % of e^(−2πζ/√(1−ζ²)) and frequency within 2 % of f·√(1 − ζ²).
    Measured decay errors +0.07 % (1 Hz, ζ 0.1), +0.04 % (0.5 Hz, 0.1), +0.84 % (1 Hz, 0.3), +0.43 % (0.5 Hz,
    0.3); frequency errors −0.06 to −0.35 %. (Before this branch: −15 % and −8 % for ζ = 0.1.)"""
    x = _spring_run(f, zeta, 2.5 / f)
    expected = math.exp(-2.0 * math.pi * zeta / math.sqrt(1.0 - zeta ** 2))
    p = _peaks(x)
    ratio = (p[2:4] / p[0:2]).mean()
    assert abs(ratio / expected - 1.0) < 0.05
    freq = 1.0 / (2.0 * np.diff(_crossings(x, DT)[:4]).mean())
    assert abs(freq / (f * math.sqrt(1.0 - zeta ** 2)) - 1.0) < 0.02


def test_rotary_spring_frequency():
    """A wheel on a rotary spring of 1 Hz to the static body (a revolute pin holds its centre): it turns back
    and forth at 1 Hz within 2 %, keeping its amplitude. Measured: 1.00003 Hz, amplitude 0.2999 of 0.3 after
    four periods."""
    w = _world(gravity=(0.0, 0.0))
    wheel = w.add_body(angle=0.3)
    wheel.add_shape(box(0.5, 0.1), density=1.0)
    w.add_joint(joints.Revolute(None, wheel, anchor=(0.0, 0.0)))
    w.add_joint(joints.RotarySpring(None, wheel, 0.0, 1.0))
    n = 240
    a = np.empty(n)
    for i in range(n):
        w.step(DT)
        a[i] = wheel.angle
    freq = 1.0 / (2.0 * np.diff(_crossings(a, DT)).mean())
    assert abs(freq - 1.0) < 0.02, freq
    assert _peaks(a).min() > 0.29


# --- 3. revolute motor and limit -------------------------------------------------------------------------------

def _motor_wheel(load, seconds=2.0):
    w = _world(gravity=(0.0, 0.0))
    wheel = w.add_body()
    wheel.add_shape(Circle(0.5), density=1.0)
    j = w.add_joint(joints.Revolute(None, wheel, anchor=(0.0, 0.0), motor_speed=2.0, max_motor_torque=10.0))
    for _ in range(int(round(seconds / DT))):
        wheel.apply_torque(-load)
        w.step(DT)
    return j


def test_revolute_motor_reaches_its_speed_under_a_smaller_load():
    """Load 5 N·m, max motor torque 10: speed 2 rad/s (measured 2.0 exactly) and the motor's torque balances
    the load (measured 5.0000)."""
    j = _motor_wheel(5.0)
    assert abs(j.speed - 2.0) < 1e-3
    assert abs(j.reaction_torque - 5.0) < 0.01


def test_revolute_motor_stalls_under_a_larger_load():
    """Load 15 N·m, max motor torque 10: the wheel turns back (measured −46.7 rad/s after 2 s, the net −5 N·m
    over I = 0.098 kg·m²), the motor at its maximum."""
    j = _motor_wheel(15.0)
    assert j.speed < 0.0
    assert abs(j.reaction_torque - 10.0) < 1e-6


def test_revolute_limit_holds_under_load():
    """A 1 m bar pinned at one end, gravity pulling it below its lower limit −0.25 rad: it rests at the limit
    within 0.01 rad (measured 4e-4) and the limit's torque is m·g·l·cos θ within 1 % (measured 0.01 %)."""
    w = _world()
    bar = w.add_body(position=(0.5, 0.0))
    bar.add_shape(box(0.5, 0.05), density=1.0)
    j = w.add_joint(joints.Revolute(None, bar, anchor=(0.0, 0.0), lower=-0.25, upper=0.25))
    worst = 0.0
    for i in range(180):
        w.step(DT)
        if i > 60:
            worst = max(worst, abs(j.angle + 0.25))
    assert worst < 0.01
    expected = bar.mass * G * 0.5 * math.cos(0.25)
    assert abs(j.reaction_torque / expected - 1.0) < 0.01
    assert j.length < LINEAR_SLOP


# --- 4. prismatic ----------------------------------------------------------------------------------------------

def _slider(free_rotation=False, torque=0.0, seconds=4.0):
    """A 0.5 m box on a horizontal prismatic axis through (0, 1), gravity across the axis, a motor driving it
    at 1 m/s towards its upper limit 2 m; returns (speed and translation at 1 s, largest distance off the axis,
    largest |angle|, the joint, the body)."""
    w = _world()
    b = w.add_body(position=(0.0, 1.0))
    b.add_shape(box(0.25, 0.25), density=1.0)
    j = w.add_joint(joints.Prismatic(None, b, anchor=(0.0, 1.0), axis=(1.0, 0.0), lower=-1.0, upper=2.0,
                                     motor_speed=1.0, max_motor_force=50.0, free_rotation=free_rotation))
    off = turn = 0.0
    at_1s = None
    for i in range(int(round(seconds / DT))):
        if torque:
            b.apply_torque(torque)
        w.step(DT)
        off = max(off, abs(b.position[1] - 1.0))
        turn = max(turn, abs(b.angle))
        if i == 59:
            at_1s = (b.velocity[0], j.translation)
    return at_1s, off, turn, j, b


def test_prismatic_slides_on_its_axis_to_its_limit():
    """Perpendicular error < 1 mm (measured 0.07 mm: the soft joint's g/ω²), the motor's 1 m/s reached (1.0
    exactly, translation 0.9993 m at 1 s), the upper limit 2 m held within LINEAR_SLOP with the motor pushing
    (measured 1.4 mm beyond), the joint's force across the axis m·g (measured 2.5000 N for 2.5 N), and a
    torque of 1 N·m does not turn the body (measured 7e-4 rad)."""
    (speed, trans), off, turn, j, b = _slider(torque=1.0)
    assert off < 1e-3
    assert abs(speed - 1.0) < 0.01 and abs(trans - 1.0) < 0.01
    assert abs(j.translation - 2.0) < LINEAR_SLOP
    assert abs(j.reaction_force[1] - b.mass * G) < 0.01 * b.mass * G
    assert turn < 0.01
    # back to the lower limit
    j.motor_speed = -1.0
    w = j.world
    for _ in range(240):
        w.step(DT)
    assert abs(j.translation + 1.0) < LINEAR_SLOP


def test_prismatic_free_rotation_lets_the_body_turn():
    """With free_rotation a torque turns the body (measured 77 rad in 4 s under 0.1 N·m) while it stays on the
    axis (< 1 mm)."""
    _, off, turn, j, b = _slider(free_rotation=True, torque=0.1)
    assert turn > 1.0
    assert off < 1e-3


# --- 5. weld ---------------------------------------------------------------------------------------------------

def _l_shape(welded, tilt, height=3.0, seconds=4.0):
    """An L of two boxes (1 × 0.5 m and 0.5 × 1 m) dropped at ``tilt`` from ``height`` onto the ground, as two
    bodies welded together or as one body with both shapes. Returns (pose of the first box at the end, the
    largest offset of the second box from its welded place in the first box's frame and the largest relative
    turn, the same at the end, fastest body at the end)."""
    w = _world()
    ground = w.add_body(kind="static", position=(0.0, -0.5))
    ground.add_shape(box(20.0, 0.5), friction=0.6)
    c, s = math.cos(tilt), math.sin(tilt)
    off = np.array((0.75, 0.25))
    a = w.add_body(position=(0.0, height), angle=tilt)
    a.add_shape(box(0.5, 0.25), density=1.0)
    if welded:
        pb = np.array((0.0, height)) + np.array((c * off[0] - s * off[1], s * off[0] + c * off[1]))
        b = w.add_body(position=tuple(pb), angle=tilt)
        b.add_shape(box(0.25, 0.5), density=1.0)
        w.add_joint(joints.Weld(a, b, anchor=(c * 0.5, height + s * 0.5)))
    else:
        a.add_shape(box(0.25, 0.5, center=tuple(off)), density=1.0)
    worst = (0.0, 0.0)
    now = (0.0, 0.0)
    for _ in range(int(round(seconds / DT))):
        w.step(DT)
        if welded:
            d = b.position - a.position
            ca, sa = math.cos(a.angle), math.sin(a.angle)
            local = np.array((ca * d[0] + sa * d[1], -sa * d[0] + ca * d[1]))
            now = (float(np.hypot(*(local - off))), abs(b.angle - a.angle))
            worst = (max(worst[0], now[0]), max(worst[1], now[1]))
    return (a.position.copy(), a.angle), worst, now, float(np.abs(w.velocities).max())


@pytest.mark.parametrize("tilt", [0.0, 1.0])
def test_welded_boxes_land_like_one_body(tilt):
    """The welded L comes to rest as the one-body L does: same height within 2 mm and angle within 0.01 rad
    (measured 0.02 mm and 1e-5 rad), both at rest; the weld's bodies kept at their relative pose within 2 cm and
    0.03 rad through a 3 m drop (measured 3.5 mm / 0.011 rad landing flat, 15.1 mm / 0.010 rad landing on a
    corner: the soft joint under the landing's impulses) and within 1 mm and 0.01 rad at rest (measured
    0.05 mm and 4e-5 rad). (At Box2D's joint softness, 60 Hz and damping ratio 2, the landing gave 4.9 and
    7.5 mm: the damping ratio of 10 that stills a hanging chain lowers the rate β = ω/(2ζ + hω) at which the
    weld's error is taken back; 7.2 mm at 70 Hz and 2, 11.8 mm at 70 Hz and 5.)

    Where they come to rest along the ground differs (measured 0.4 mm flat, 9.6 cm from the corner): the
    corner's bounce is where the soft weld and the rigid body part ways. (At 0.3 rad the one-body L is frozen
    in mid-air by continuous collision: see the ragdoll test.)"""
    (pw, aw), worst, rest, vw = _l_shape(True, tilt)
    (p1, a1), _, _, v1 = _l_shape(False, tilt)
    assert abs(pw[1] - p1[1]) < 2e-3
    assert abs(aw - a1) < 0.01
    assert vw < 1e-3 and v1 < 1e-3
    assert worst[0] < 0.02 and worst[1] < 0.03, worst
    assert rest[0] < 1e-3 and rest[1] < 0.01, rest


# --- 6. gear and pulley ----------------------------------------------------------------------------------------

def test_gear_keeps_its_ratio():
    """Wheel A (motor 3 rad/s, at most 5 N·m) drives wheel B through a gear of ratio 2 while a varying torque
    loads B: 2·θB − θA stays within 1e-3 of the phase 0 (measured 3.6e-4, while A spins up: the soft joint's
    give under the motor's torque), and ωB = ωA/2."""
    w = _world(gravity=(0.0, 0.0))
    a = w.add_body()
    a.add_shape(Circle(0.5), density=1.0)
    b = w.add_body(position=(3.0, 0.0))
    b.add_shape(Circle(1.0), density=1.0)
    w.add_joint(joints.Revolute(None, a, anchor=(0.0, 0.0), motor_speed=3.0, max_motor_torque=5.0))
    w.add_joint(joints.Revolute(None, b, anchor=(3.0, 0.0)))
    w.add_joint(joints.Gear(a, b, 0.0, 2.0))
    err = 0.0
    for i in range(180):
        b.apply_torque(0.5 * math.sin(0.1 * i))
        w.step(DT)
        err = max(err, abs(2.0 * b.angle - a.angle))
    assert err < 1e-3, err
    assert abs(2.0 * b.angular_velocity - a.angular_velocity) < 1e-3


@pytest.mark.parametrize("ratio, m1, m2", [(1.0, 1.0, 2.0), (2.0, 1.0, 1.0)])
def test_pulley_keeps_its_rope_and_accelerates_as_atwood(ratio, m1, m2):
    """Two boxes hung over a pulley: |pA − gA| + ratio·|pB − gB| constant within 1e-3 m (measured 1.4e-4 and
    2.1e-4), and B moves by ½·a·t² in 1 s with a = (m2 − r·m1)·g/(m2 + r²·m1) within 1 % (measured +0.4 %: the
    substeps' first-order integration gives ½·a·t²·(1 + h/t) exactly)."""
    w = _world()
    a = w.add_body(position=(-2.0, 0.0))
    a.add_shape(box(0.25, 0.25), density=m1 / 0.25)
    b = w.add_body(position=(2.0, 0.0))
    b.add_shape(box(0.25, 0.25), density=m2 / 0.25)
    w.add_joint(joints.Pulley(a, b, (-2.0, 5.0), (2.0, 5.0), anchor_a=(-2.0, 0.0), anchor_b=(2.0, 0.0), ratio=ratio))
    rope = 5.0 + ratio * 5.0
    err = 0.0
    for _ in range(60):
        w.step(DT)
        la = np.hypot(*(a.position - (-2.0, 5.0)))
        lb = np.hypot(*(b.position - (2.0, 5.0)))
        err = max(err, abs(la + ratio * lb - rope))
    assert err < 1e-3
    acc = (m2 - ratio * m1) * G / (m2 + ratio ** 2 * m1)
    assert abs(-b.position[1] / (0.5 * acc) - 1.0) < 0.01


# --- 7. a hanging chain ----------------------------------------------------------------------------------------

def test_hanging_chain_stretch_and_settling():
    """40 capsule links of 0.25 m on revolute joints, hanging straight down from the static body (issue 34: a
    40-link chain hangs with total stretch < 1 % and does not jitter at rest, max speed < 1 mm/s after 2 s).

    Stretch: the joints are soft (JOINT_HERTZ about each row's effective mass), so joint k gives under the
    weight below it F_k/(m_eff·ω²): m_eff is the link's mass for the top joint and half of it for the others
    (the load is along the line of the anchors, so no rotation enters). The sum, 0.83 % of the chain's length
    at 70 Hz, is what the chain shows within 3 % (measured 0.003 % off: the solve has converged); at Box2D's
    60 Hz it was 1.13 %.

    Settling: the chain's slowest longitudinal mode (2 Hz) decays through the joints' damping and the joints'
    two Gauss-Seidel passes per sweep (JOINT_ITERATIONS): measured below 1 mm/s from 1.52 s on, 3e-5 m/s at
    2 s, 1.4e-6 m/s at 3 s, 7e-8 m/s at 10 s (fastest after 2 s: 8e-5 m/s). With one pass and Box2D's
    softness (60 Hz, damping ratio 2) it was 0.22 m/s at 2 s and below 1 mm/s only after 9.4 s. Asserted:
    below 1 mm/s in every step from 2 s to 10 s."""
    n, link, top = 40, 0.25, 10.0
    w = _world()
    prev = None
    js = []
    mass = None
    for i in range(n):
        b = w.add_body(position=(0.0, top - link * (i + 0.5)))
        b.add_shape(Capsule((0.0, -link / 2 + 0.05), (0.0, link / 2 - 0.05), 0.05), density=1.0)
        mass = b.mass
        js.append(w.add_joint(joints.Revolute(prev, b, anchor=(0.0, top - link * i))))
        prev = b
    for _ in range(120):
        w.step(DT)
    fastest = 0.0
    for _ in range(480):
        w.step(DT)
        fastest = max(fastest, float(np.abs(w.velocities).max()))
    assert fastest < 1e-3
    omega2 = (2.0 * math.pi * JOINT_HERTZ) ** 2
    expected = n * G / omega2 + sum((n - k) * mass * G / (0.5 * mass * omega2) for k in range(1, n))
    stretch = sum(j.length for j in js)
    assert abs(stretch / expected - 1.0) < 0.03
    assert stretch < 0.01 * n * link
    assert np.abs(w.positions[:, 0]).max() < 1e-9


# --- 8. a pile of ragdolls -------------------------------------------------------------------------------------

def _ragdoll(w, x, y, group, friction):
    """A ragdoll of 10 bodies (torso, head, upper and lower arms and legs) on 9 revolute joints with angle limits
    and joint friction (a motor of speed 0 and at most ``friction`` N·m, as Box2D's ragdoll sample has)."""
    def body(pos, shape):
        b = w.add_body(position=pos)
        b.add_shape(shape, density=1.0, friction=0.6, group=group)
        return b

    def pin(a, b, anchor, lower, upper):
        return w.add_joint(joints.Revolute(a, b, anchor=anchor, lower=lower, upper=upper, max_motor_torque=friction))
    torso = body((x, y), box(0.15, 0.3))
    head = body((x, y + 0.45), Circle(0.12))
    bodies = [torso, head]
    js = [pin(torso, head, (x, y + 0.32), -0.5, 0.5)]
    for side in (-1.0, 1.0):
        upper_arm = body((x + side * 0.3, y + 0.22), Capsule((-0.12, 0.0), (0.12, 0.0), 0.05))
        lower_arm = body((x + side * 0.6, y + 0.22), Capsule((-0.12, 0.0), (0.12, 0.0), 0.045))
        thigh = body((x + side * 0.08, y - 0.45), Capsule((0.0, -0.13), (0.0, 0.13), 0.06))
        shin = body((x + side * 0.08, y - 0.78), Capsule((0.0, -0.13), (0.0, 0.13), 0.05))
        bend = (-1.5, 0.0) if side > 0 else (0.0, 1.5)
        js.append(pin(torso, upper_arm, (x + side * 0.16, y + 0.22), -1.5, 1.5))
        js.append(pin(upper_arm, lower_arm, (x + side * 0.45, y + 0.22), *bend))
        js.append(pin(torso, thigh, (x + side * 0.08, y - 0.3), -1.2, 1.2))
        js.append(pin(thigh, shin, (x + side * 0.08, y - 0.62), *bend))
        bodies += [upper_arm, lower_arm, thigh, shin]
    return bodies, js


def test_ragdoll_pile_comes_to_rest_in_one_piece():
    """20 ragdolls (200 bodies, 180 revolute joints with limits and a little joint friction) dropped one above
    the other into an 8 m pit (issue 34: the pile comes to rest without any body exploding or separating).
    Bounds, and what was measured over seeds 1 to 7 (this seed, 3, in brackets):

    - no body faster than 1.25 times the free fall from the top, √(2·g·26 m) = 22.8 m/s: measured up to 1.00
      times [1.00];
    - no joint's anchors ever more than 0.25 m apart (a limb's length; an explosion or a frozen body shows
      as much as 1 m): measured 11.3 to 15.2 cm while the pile lands, and 24.8 cm in seed 5 (a body frozen by
      continuous collision for a while, below) [12.5 cm];
    - at rest after 8 s (fastest body below 1 cm/s): measured 0.0 to 0.5 mm/s [0.0];
    - at rest, at least 97 % of the joints within 1 cm and none beyond 12 cm: measured 0 to 5 of 180 joints
      beyond 1 cm, the worst 0.8 to 10.9 cm [2 joints, 5.6 cm]. The far ones are wedges: another ragdoll's
      limb caught between a torso and its upper arm or in a bent knee, the contacts pushing the two bodies apart
      and the joint pulling them together with 70 to 180 N, more than the whole pile weighs (96 N); a soft joint
      gives F/(m·ω²) under a force F, 1 cm per 40 N for a limb's row of 20 g at JOINT_HERTZ = 70;
    - the angle limits within 0.15 rad at rest (the same softness about a limb's small inertia): measured
      0.06 to 0.148 rad [0.08].

    Not asserted: no body frozen by continuous collision (standing still while faster than 1 m/s). In seed 5
    a torso pressed into the ground by the pile is: its inner core within the target distance of the ground, it
    gets a time of impact of 0 in every step and is put back while its speed stays (before the contact changes
    of the relax sweep it stayed there to the end, at 2.9 m/s, its joints 46 cm apart). Taking no stop from an
    inner core's time of impact of 0 when the shape overlaps fixed that, but let thin boxes and capsules through
    a thin wall (tests/test_trust_physics.py): the continuous stage needs a better test for that case.
    ``frozen`` counts the body-steps seen frozen (this seed: none)."""
    w = _world()
    ground = w.add_body(kind="static")
    ground.add_shape(box(4.0, 0.5, center=(0.0, -0.5)))
    ground.add_shape(box(0.5, 6.0, center=(-4.5, 6.0)))
    ground.add_shape(box(0.5, 6.0, center=(4.5, 6.0)))
    rng = np.random.default_rng(3)
    js = []
    n = 20
    for k in range(n):
        _, j = _ragdoll(w, float(rng.uniform(-2.0, 2.0)), 2.0 + 1.2 * k, -(k + 1), 0.02)
        js += j
    fastest = worst_sep = 0.0
    frozen = 0
    prev = w.positions.copy()
    for _ in range(480):
        w.step(DT)
        speed = np.hypot(*w.velocities.T)
        fastest = max(fastest, float(speed.max()))
        worst_sep = max(worst_sep, max(j.length for j in js))
        frozen += int(((w.positions == prev).all(axis=1) & (speed > 1.0)).sum())
        prev = w.positions.copy()
    seps = np.array([j.length for j in js])
    limit_err = max(max(j.lower - j.angle, j.angle - j.upper) for j in js)
    rest = float(np.hypot(*w.velocities.T).max())
    figures = dict(frozen=frozen, fastest=fastest, worst_sep=worst_sep, rest=rest, over_1cm=int((seps > 0.01).sum()),
                   end_sep=float(seps.max()), limit_err=limit_err)
    assert np.isfinite(w.positions).all(), figures
    assert fastest < 1.25 * math.sqrt(2.0 * G * (2.0 + 1.2 * n)), figures
    assert worst_sep < 0.25, figures
    assert rest < 0.01, figures
    assert (seps > 0.01).sum() <= 0.03 * len(js) and seps.max() < 0.12, figures
    assert limit_err < 0.15, figures


# --- 9. force threshold ----------------------------------------------------------------------------------------

def _hanging(threshold, on_threshold="break"):
    w = _world()
    b = w.add_body(position=(0.0, 4.0))
    b.add_shape(Circle(0.1), density=10.0)
    j = w.add_joint(joints.Distance(None, b, anchor_a=(0.0, 5.0), anchor_b=(0.0, 4.0), force_threshold=threshold,
                                    on_threshold=on_threshold))
    return w, b, j


def test_force_threshold_breaks_only_above_the_reaction():
    """A mass hung on a distance joint: the joint's reaction is m·g from the first step on (measured 1.0000·m·g
    in every step); with a threshold 2 % above it the joint holds for 2 s, 2 % below it breaks in the first
    step, with one event (broke=True, force ≈ m·g) and a stale handle."""
    w, b, j = _hanging(math.inf)
    mg = b.mass * G
    forces = []
    for _ in range(120):
        w.step(DT)
        forces.append(np.hypot(*j.reaction_force))
    assert max(abs(f / mg - 1.0) for f in forces) < 0.01

    w, b, j = _hanging(1.02 * mg)
    for _ in range(120):
        w.step(DT)
        assert w.joint_events() == []
    assert j.alive and abs(b.position[1] - 4.0) < 1e-3

    w, b, j = _hanging(0.98 * mg)
    seen = []
    w.on("joint", seen.append)
    w.step(DT)
    events = w.joint_events()
    assert len(events) == 1 and events[0].broke and events[0].joint == j
    assert abs(np.hypot(*events[0].force) / mg - 1.0) < 0.01
    assert seen == events
    assert not j.alive and w.joint_count == 0
    with pytest.raises(StaleHandleError):
        j.reaction_force
    for _ in range(30):
        w.step(DT)
    assert b.position[1] < 3.0            # it fell


def test_threshold_set_after_steps_without_any():
    """The step looks at the thresholds only while some joint has a finite one (``check_thresholds``' memo):
    a world stepped with none, then given a joint whose threshold is below its reaction, breaks it in its first
    step; one restored from a snapshot of that world does too."""
    w, b, j = _hanging(math.inf)
    for _ in range(5):
        w.step(DT)
    assert w.joint_events() == [] and j.alive
    mg = b.mass * G
    c = w.add_body(position=(2.0, 4.0))
    c.add_shape(Circle(0.1), density=10.0)
    spec = joints.Distance(None, c, anchor_a=(2.0, 5.0), anchor_b=(2.0, 4.0), force_threshold=0.5 * mg)
    copy = carom.World.restore(w.snapshot())
    k = w.add_joint(spec)
    w.step(DT)
    events = w.joint_events()
    assert len(events) == 1 and events[0].broke and events[0].joint == k and j.alive
    copy.step(DT)                                       # (the copy has no second joint: nothing to break)
    assert copy.joint_events() == []
    c2 = next(body for body in copy.bodies if body.index == c.index)
    k2 = copy.add_joint(joints.Distance(None, c2, anchor_a=(2.0, 5.0), anchor_b=(2.0, 4.0),
                                        force_threshold=0.5 * mg))
    copy.step(DT)
    assert [e.joint for e in copy.joint_events()] == [k2]


def test_force_threshold_report_keeps_the_joint():
    w, b, j = _hanging(0.98 * 0.1 ** 2 * math.pi * 10.0 * G, on_threshold="report")
    for _ in range(10):
        w.step(DT)
        events = w.joint_events()
        assert len(events) == 1 and not events[0].broke and events[0].joint == j
    assert j.alive and abs(b.position[1] - 4.0) < 1e-3


def test_torque_threshold():
    """A bar held level by a weld to the static body: the weld's torque is m·g·l (0.5 m lever), measured 1.0000
    times that from the first step on (1.36 times in the first step before the weld's point and angle were
    solved as one block); a torque threshold 5 % below it breaks it in the first step, 5 % above it holds."""
    for factor, broke in ((0.95, True), (1.05, False)):
        w = _world()
        bar = w.add_body(position=(0.5, 0.0))
        bar.add_shape(box(0.5, 0.05), density=1.0)
        torque = bar.mass * G * 0.5
        j = w.add_joint(joints.Weld(None, bar, anchor=(0.0, 0.0), torque_threshold=factor * torque))
        for _ in range(30):
            w.step(DT)
        assert j.alive != broke


# --- 10. Newton's cradle ---------------------------------------------------------------------------------------

def _cradle(n=5, r=0.1, length=1.0, release=math.radians(30.0), gap=0.02):
    """Five balls (restitution 1, friction 0) hung on distance joints 1 m long, ``gap`` m apart, the first
    released at 30°: each ball's horizontal velocity per step, and the first ball's impact speed.

    Why a gap (a fifth of the radius): a real cradle hands the strike on as a quick sequence of collisions of
    two balls each. Balls closer than about half what a ball moves in a step meet in one step, and the soft
    step answers the points that meet in one step together (``carom.rigid._solver._restitute``): touching,
    the first ball bounces off the next two as one block and they off the last two (the first ball back at
    −0.33 of the impact speed, the last two out at 0.67, the same as pymunk 7.3, whose own cradle example
    hangs its balls touching: −0.30 and 0.67); 1 cm apart, the last ball leaves at 0.89 and two middle ones
    keep 0.19 (pymunk, which makes no contact before the shapes overlap, hands it on from a 1 mm gap: 1.00,
    middle 0.01). From 1.5 cm the strike goes to the last ball (0.997, middle 0.022)."""
    w = _world()
    balls = []
    for i in range(n):
        px, py = (2.0 * r + gap) * i, 2.0
        pos = (px - length * math.sin(release), py - length * math.cos(release)) if i == 0 else (px, py - length)
        b = w.add_body(position=pos)
        b.add_shape(Circle(r), density=1.0, friction=0.0, restitution=1.0)
        w.add_joint(joints.Distance(None, b, anchor_a=(px, py), anchor_b=pos))
        balls.append(b)
    hist = []
    for _ in range(60):
        w.step(DT)
        hist.append([b.velocity[0] for b in balls])
    hist = np.array(hist)
    return hist, hist[:, 0].max(), balls[0].mass


def test_newtons_cradle_keeps_momentum():
    """The strike keeps the row's horizontal momentum (the joints pull vertically at the bottom) within 2 %,
    and restitution 1 gives back no more energy than came in. Impact 1.63 m/s (closed form
    √(2gL(1 − cos 30°)) = 1.637)."""
    hist, v0, m = _cradle()
    assert abs(v0 / math.sqrt(2.0 * G * (1.0 - math.cos(math.radians(30.0)))) - 1.0) < 0.01
    k = int(np.argmax(hist[:, 0]))
    after = hist[k + 3]
    assert abs(after.sum() / v0 - 1.0) < 0.02
    assert (after ** 2).sum() <= v0 ** 2 * 1.01


def test_newtons_cradle_passes_the_strike_to_the_last_ball():
    """After the first ball strikes, the last leaves with at least 90 % of its speed and the middle three stay
    below 10 % (measured: 0.997 and 0.022; pymunk 7.3 on the same row, 4 substeps: 0.994 and 0.023)."""
    hist, v0, _ = _cradle()
    k = int(np.argmax(hist[:, 0]))
    after = hist[k + 1:k + 12]
    assert after[:, -1].max() >= 0.9 * v0
    assert np.abs(after[-1, 1:-1]).max() < 0.1 * v0


def test_touching_cradle_keeps_momentum_and_energy():
    """Touching balls meet in one step and the restitution answers them together (see ``_cradle``): the
    first ball bounces back off two balls as one block, and they pass the strike on to the last two (measured
    −0.33, 0, 0, 0.66, 0.66 of the impact speed three steps after it; pymunk 7.3 −0.30, 0, 0, 0.57, 0.57 after
    eleven). Momentum is kept within 2 % and energy within 1 % (−1.0 % measured; 38 % was lost when only the
    point that bounced took part in the restitution sweeps, as in Box2D v3)."""
    hist, v0, _ = _cradle(gap=0.0)
    k = int(np.argmax(hist[:, 0]))
    after = hist[k + 3]
    assert abs(after.sum() / v0 - 1.0) < 0.02
    assert 0.98 * v0 ** 2 <= (after ** 2).sum() <= 1.01 * v0 ** 2
    assert after[0] < -0.25 * v0 and after[-1] > 0.6 * v0


# --- 11. against pymunk ----------------------------------------------------------------------------------------

def _double_pendulum_reference(th1, th2, l1, l2, m1, m2, pivot, seconds):
    """Positions of the two point masses of a double pendulum (massless rods) at each step of DT, by RK4 at
    0.1 ms from rest."""
    def f(y):
        t1, t2, w1, w2 = y
        d = t1 - t2
        den = 2 * m1 + m2 - m2 * math.cos(2 * d)
        a1 = (-G * (2 * m1 + m2) * math.sin(t1) - m2 * G * math.sin(t1 - 2 * t2)
              - 2 * math.sin(d) * m2 * (w2 * w2 * l2 + w1 * w1 * l1 * math.cos(d))) / (l1 * den)
        a2 = (2 * math.sin(d) * (w1 * w1 * l1 * (m1 + m2) + G * (m1 + m2) * math.cos(t1)
                                 + w2 * w2 * l2 * m2 * math.cos(d))) / (l2 * den)
        return np.array((w1, w2, a1, a2))
    y = np.array((th1, th2, 0.0, 0.0))
    h = 1e-4
    per = int(round(DT / h))
    out = []
    for i in range(int(round(seconds / h))):
        k1 = f(y)
        k2 = f(y + 0.5 * h * k1)
        k3 = f(y + 0.5 * h * k2)
        k4 = f(y + h * k3)
        y = y + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        if (i + 1) % per == 0:
            p1 = pivot + l1 * np.array((math.sin(y[0]), -math.cos(y[0])))
            out.append((p1, p1 + l2 * np.array((math.sin(y[1]), -math.cos(y[1])))))
    return out


def test_double_pendulum_against_closed_form_and_pymunk():
    """A double pendulum of two small dense circles on distance joints (pymunk's PinJoint), released at 60° and
    −20°, over 1.5 s. Against an RK4 solution of the point-mass equations, carom's bobs are within 1 cm
    (measured at most 3.8 mm, 1.8 mm at 1 s). pymunk 7.3 with the same 4 substeps per frame is farther from it
    (1.9 cm at 1 s, 3.3 cm at 1.5 s: its bias-velocity joint correction lags), so carom and pymunk are asserted
    within 3 cm of each other at 1 s and the closed form is what decides: carom's error is asserted below
    pymunk's own."""
    pymunk = pytest.importorskip("pymunk")
    l1, l2, r, dens = 1.0, 0.8, 0.05, 100.0
    th1, th2 = math.radians(60.0), math.radians(-20.0)
    pivot = np.array((0.0, 5.0))
    p1 = pivot + l1 * np.array((math.sin(th1), -math.cos(th1)))
    p2 = p1 + l2 * np.array((math.sin(th2), -math.cos(th2)))
    seconds = 1.5
    steps = int(round(seconds / DT))
    # carom
    w = _world()
    b1 = w.add_body(position=tuple(p1))
    b1.add_shape(Circle(r), density=dens)
    b2 = w.add_body(position=tuple(p2))
    b2.add_shape(Circle(r), density=dens)
    w.add_joint(joints.Distance(None, b1, anchor_a=tuple(pivot), anchor_b=tuple(p1)))
    w.add_joint(joints.Distance(b1, b2, anchor_a=tuple(p1), anchor_b=tuple(p2)))
    ours = []
    for _ in range(steps):
        w.step(DT)
        ours.append((b1.position.copy(), b2.position.copy()))
    # pymunk, 4 steps of DT/4 per frame (its substeps), default 10 iterations
    space = pymunk.Space()
    space.gravity = (0.0, -G)
    pbs = []
    for p in (p1, p2):
        m = dens * math.pi * r * r
        pb = pymunk.Body(m, pymunk.moment_for_circle(m, 0, r))
        pb.position = tuple(p)
        shape = pymunk.Circle(pb, r)
        shape.filter = pymunk.ShapeFilter(group=1)
        space.add(pb, shape)
        pbs.append(pb)
    space.add(pymunk.PinJoint(space.static_body, pbs[0], tuple(pivot), (0, 0)),
              pymunk.PinJoint(pbs[0], pbs[1], (0, 0), (0, 0)))
    theirs = []
    for _ in range(steps):
        for _ in range(4):
            space.step(DT / 4)
        theirs.append((np.array(pbs[0].position), np.array(pbs[1].position)))
    ref = _double_pendulum_reference(th1, th2, l1, l2, b1.mass, b2.mass, pivot, seconds + DT)

    def gap(a, b, i):
        return max(float(np.hypot(*(a[i][k] - b[i][k]))) for k in range(2))
    ours_err = max(gap(ours, ref, i) for i in range(steps))
    theirs_err = max(gap(theirs, ref, i) for i in range(steps))
    assert ours_err < 0.01, ours_err
    assert ours_err < theirs_err
    assert gap(ours, theirs, 59) < 0.03


# --- 12. every kind steps, with a sensible reaction ------------------------------------------------------------

def _hung_mass(w, x=0.0):
    b = w.add_body(position=(x, 0.0))
    b.add_shape(Circle(0.1), density=10.0)
    return b


KINDS = {
    # (definition maker (w, b) -> joint, expected reaction: "mg" the force m·g up on the body, or None)
    "distance": (lambda w, b: joints.Distance(None, b, anchor_a=(0.0, 1.0), anchor_b=(0.0, 0.0)), "mg"),
    "revolute": (lambda w, b: joints.Revolute(None, b, anchor=(0.0, 0.0)), "mg"),
    "prismatic": (lambda w, b: joints.Prismatic(None, b, anchor=(0.0, 0.0), axis=(1.0, 0.0)), "mg"),
    "wheel": (lambda w, b: joints.Wheel(None, b, anchor=(0.0, 0.0), axis=(0.0, 1.0), hertz=4.0, damping_ratio=0.7),
              "mg"),
    "weld": (lambda w, b: joints.Weld(None, b, anchor=(0.0, 0.0)), "mg"),
    "motor": (lambda w, b: joints.Motor(None, b, max_force=1000.0, max_torque=1000.0), "mg"),
    "mouse": (lambda w, b: joints.Mouse(b, (0.0, 0.0), hertz=5.0, damping_ratio=1.0), "mg"),
    "distance_spring": (lambda w, b: joints.Distance(None, b, anchor_a=(0.0, 1.0), anchor_b=(0.0, 0.0), hertz=3.0,
                                                     damping_ratio=1.0), "mg"),
    "rotary_limit": (lambda w, b: joints.RotaryLimit(None, b, -0.1, 0.1), None),
    "rotary_spring": (lambda w, b: joints.RotarySpring(None, b, 0.0, 2.0, 0.5), None),
    "angular_motor": (lambda w, b: joints.AngularMotor(None, b, 1.0, 10.0), None),
    "ratchet": (lambda w, b: joints.Ratchet(None, b, 0.0, 0.5), None),
    "gear": (lambda w, b: joints.Gear(None, b, 0.0, 2.0), None),
    "pulley": (lambda w, b: joints.Pulley(None, b, (0.0, 5.0), (0.0, 5.0), anchor_a=(0.0, 3.0), anchor_b=(0.0, 0.0)),
               "mg"),
    "filter": (lambda w, b: joints.Filter(None, b), None),
}


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_kind_steps_and_reacts_sensibly(kind):
    """Each kind on a 0.1 m circle (0.314 kg) under gravity for 2 s: finite throughout, and a joint that holds
    the mass up reacts with m·g upward within 2 % (the force on the body; the springs of the wheel, mouse and
    distance spring once settled, at g/ω² below: measured 16, 10 and 28 mm for 15.8, 10.1 and 28.1). Measured:
    1.000000 for every one of them. The angular kinds leave the mass falling freely, with no force, and no
    torque but the angular motor's, which is 0 once the body turns at its speed."""
    make, expect = KINDS[kind]
    w = _world()
    b = _hung_mass(w)
    j = w.add_joint(make(w, b))
    assert j.kind == ("distance" if kind == "distance_spring" else kind)
    for _ in range(120):
        w.step(DT)
        assert np.isfinite(w.positions).all() and np.isfinite(w.velocities).all()
        assert np.isfinite(j.reaction_force).all() and math.isfinite(j.reaction_torque)
    mg = b.mass * G
    if expect == "mg":
        f = j.reaction_force
        assert abs(f[1] / mg - 1.0) < 0.02 and abs(f[0]) < 0.02 * mg, f
    elif kind == "angular_motor":
        assert abs(b.angular_velocity - 1.0) < 1e-6 and abs(j.reaction_torque) < 1e-6
    elif kind != "filter":
        assert b.position[1] < -10.0        # free fall: nothing holds it up
        assert np.hypot(*j.reaction_force) < 1e-9


def test_ratchet_turns_one_way_only():
    """A wheel on a ratchet (teeth every 0.5 rad, forward positive): driven forward it turns freely; driven
    back it stops at the last tooth it passed, within 0.01 rad."""
    w = _world(gravity=(0.0, 0.0))
    wheel = w.add_body()
    wheel.add_shape(Circle(0.5), density=1.0)
    w.add_joint(joints.Revolute(None, wheel, anchor=(0.0, 0.0)))
    w.add_joint(joints.Ratchet(None, wheel, 0.0, 0.5))
    for _ in range(60):
        wheel.apply_torque(0.2)
        w.step(DT)
    forward = wheel.angle
    assert forward > 1.0
    for _ in range(120):
        wheel.apply_torque(-0.5)
        w.step(DT)
    tooth = math.floor(forward / 0.5) * 0.5
    assert abs(wheel.angle - tooth) < 0.01


def test_wheel_spring_and_motor():
    """A wheel on a vertical suspension spring of 2 Hz (its row's mass the wheel's) under gravity: it settles
    g/ω² below the anchor within 2 % (implicit spring, no sag error), and its motor turns it at its speed."""
    w = _world()
    wheel = w.add_body()
    wheel.add_shape(Circle(0.3), density=1.0)
    j = w.add_joint(joints.Wheel(None, wheel, anchor=(0.0, 0.0), axis=(0.0, 1.0), hertz=2.0, damping_ratio=1.0,
                                 motor_speed=-3.0, max_motor_torque=10.0))
    for _ in range(240):
        w.step(DT)
    sag = G / (2.0 * math.pi * 2.0) ** 2
    assert abs(-j.translation / sag - 1.0) < 0.02
    assert abs(wheel.angular_velocity + 3.0) < 1e-3
    assert abs(wheel.position[0]) < 1e-3


def test_mouse_joint_pulls_to_its_target_with_capped_force():
    """A mouse joint pulls a body to its moved target (gravity off) and its force never exceeds max_force."""
    w = _world(gravity=(0.0, 0.0))
    b = w.add_body()
    b.add_shape(box(0.2, 0.2), density=1.0)
    j = w.add_joint(joints.Mouse(b, (0.0, 0.0), max_force=5.0, hertz=5.0, damping_ratio=1.0))
    j.target = (2.0, 1.0)
    worst = 0.0
    for _ in range(180):
        w.step(DT)
        worst = max(worst, float(np.hypot(*j.reaction_force)))
    assert np.hypot(*(b.position - (2.0, 1.0))) < 0.01
    assert worst <= 5.0 * (1 + 1e-6)


def test_motor_joint_drives_to_its_offset():
    """A motor joint moves its body to the linear and angular offset set on the handle (gravity off)."""
    w = _world(gravity=(0.0, 0.0))
    b = w.add_body()
    b.add_shape(box(0.2, 0.2), density=1.0)
    j = w.add_joint(joints.Motor(None, b, max_force=50.0, max_torque=50.0))
    j.linear_offset = (1.0, -0.5)
    j.angular_offset = 0.5
    for _ in range(240):
        w.step(DT)
    assert np.hypot(*(b.position - (1.0, -0.5))) < 0.01
    assert abs(b.angle - 0.5) < 0.01


# --- 13. validation --------------------------------------------------------------------------------------------

def _state(w):
    return (w.snapshot().data, w.joint_count)


def _two_bodies(w):
    a = w.add_body(position=(0.0, 0.0))
    a.add_shape(Circle(0.1), density=1.0)
    b = w.add_body(position=(1.0, 0.0))
    b.add_shape(Circle(0.1), density=1.0)
    return a, b


BAD_DEFINITIONS = {
    "nan anchor": (lambda w, a, b, s: joints.Revolute(a, b, anchor=(math.nan, 0.0)), "anchor"),
    "negative hertz": (lambda w, a, b, s: joints.Distance(a, b, hertz=-1.0), "hertz"),
    "nan hertz": (lambda w, a, b, s: joints.Revolute(a, b, anchor=(0.5, 0.0), hertz=math.nan), "hertz"),
    "same body": (lambda w, a, b, s: joints.Revolute(a, a, anchor=(0.0, 0.0)), "two different bodies"),
    "two static bodies": (lambda w, a, b, s: joints.Revolute(None, s, anchor=(0.0, 0.0)), "dynamic"),
    "lower above upper": (lambda w, a, b, s: joints.Revolute(a, b, anchor=(0.5, 0.0), lower=1.0, upper=-1.0),
                          "lower"),
    "min above max": (lambda w, a, b, s: joints.Distance(a, b, min_length=2.0, max_length=1.0), "min_length"),
    "prismatic lower above upper": (lambda w, a, b, s: joints.Prismatic(a, b, anchor=(0.5, 0.0), lower=1.0,
                                                                        upper=0.0), "lower"),
    "unknown setting": (lambda w, a, b, s: joints.Revolute(a, b, anchor=(0.5, 0.0), speed=3.0), "speed"),
    "wrong on_threshold": (lambda w, a, b, s: joints.Revolute(a, b, anchor=(0.5, 0.0), on_threshold="explode"),
                           "on_threshold"),
    "negative threshold": (lambda w, a, b, s: joints.Weld(a, b, anchor=(0.5, 0.0), force_threshold=-1.0),
                           "force_threshold"),
    "zero axis": (lambda w, a, b, s: joints.Prismatic(a, b, anchor=(0.5, 0.0), axis=(0.0, 0.0)), "axis"),
    "zero gear ratio": (lambda w, a, b, s: joints.Gear(a, b, 0.0, 0.0), "ratio"),
    "zero ratchet": (lambda w, a, b, s: joints.Ratchet(a, b, 0.0, 0.0), "ratchet"),
    "negative pulley ratio": (lambda w, a, b, s: joints.Pulley(a, b, (0, 5), (1, 5), ratio=-1.0), "ratio"),
    "bool collide_connected": (lambda w, a, b, s: joints.Weld(a, b, anchor=(0.5, 0.0), collide_connected="yes"),
                               "collide_connected"),
    "string motor speed": (lambda w, a, b, s: joints.Revolute(a, b, anchor=(0.5, 0.0), motor_speed="fast"),
                           "motor_speed"),
    "not a body": (lambda w, a, b, s: joints.Revolute(a, "b", anchor=(0.5, 0.0)), "body_b"),
    "mouse on a static body": (lambda w, a, b, s: joints.Mouse(s, (0.0, 0.0)), "dynamic"),
    "negative max torque": (lambda w, a, b, s: joints.Revolute(a, b, anchor=(0.5, 0.0), max_motor_torque=-1.0),
                            "max_motor_torque"),
}


@pytest.mark.parametrize("case", list(BAD_DEFINITIONS))
def test_bad_definitions_raise_naming_the_value_and_change_nothing(case):
    """``add_joint`` refuses the definition naming its bad value; ``add_joints`` with it among good ones raises the
    same error prefixed with its position, and adds none of the good ones before or after it."""
    make, name = BAD_DEFINITIONS[case]
    w = _world()
    a, b = _two_bodies(w)
    s = w.add_body(kind="static", position=(3.0, 0.0))
    w.add_joint(joints.Distance(a, b))
    w.step(DT)
    before = _state(w)
    with pytest.raises(CaromError) as alone:
        w.add_joint(make(w, a, b, s))
    assert name in str(alone.value)
    assert _state(w) == before
    good = [joints.Revolute(a, b, anchor=(0.5, 0.0)), joints.Weld(a, b, anchor=(0.2, 0.0), data="kept")]
    with pytest.raises(type(alone.value)) as info:
        w.add_joints(good + [make(w, a, b, s)] + good)
    assert str(info.value) == f"definitions[2]: {alone.value}"
    assert _state(w) == before and not w.tables.joint_data


_CHECK_BOUNDS = (0.0, -0.0, 1e-300, carom.constants.FLOAT32_LIMIT, carom.constants.WORLD_LIMIT,
                 carom.constants.ANGLE_LIMIT)


@settings(max_examples=300, deadline=None)
@given(value=st.floats() | st.sampled_from(_CHECK_BOUNDS) | st.sampled_from(_CHECK_BOUNDS).map(
    lambda x: -np.nextafter(x, math.inf)) | st.sampled_from(_CHECK_BOUNDS).map(lambda x: np.nextafter(x, math.inf)),
       check=st.sampled_from(sorted({check for kind in SETTINGS.values() for _, check in kind.values()})))
def test_a_plain_float_setting_is_checked_as_any_other_number(value, check):
    """A joint setting given as a Python float takes a shorter path through its check (``joints._setting``): it
    must return what the general path returns for the same number as a NumPy float, or refuse it as that does."""
    value = float(value)
    try:
        general = joints._setting(np.float64(value), "x", check)
    except CaromError as exc:
        with pytest.raises(type(exc)) as info:
            joints._setting(value, "x", check)
        assert str(info.value) == str(exc)
        return
    fast = joints._setting(value, "x", check)
    assert type(fast) is float and struct.pack("<d", fast) == struct.pack("<d", general)


def _joint_rows(w):
    """Every joint row the table holds (to its capacity), the free list and the joints' data."""
    t = w.tables
    return ([getattr(t, name).tobytes() for name in t.joint_arrays], t.n_joints, list(t.free_joints),
            dict(t.joint_data))


def test_adding_many_joints_is_adding_them_one_at_a_time_bit_for_bit():
    """``World.add_joints`` against ``add_joint`` in turn, on twin worlds: the same rows (the free list's last
    row first, then new rows, the table doubling as it fills up twice), handles, data and woken bodies (a row of
    boxes asleep on the ground, joined to each other and to falling bodies), then the same motion."""
    def world():
        w = _world(sleep=True)
        ground = w.add_body(kind="static")
        ground.add_shape(box(20.0, 0.5))
        # (the last of the row is joined only as a body B: to the ground)
        row = [w.add_body(position=(x, 1.0)) for x in np.arange(-6.0, 9.5, 1.5)]
        for body in row:
            body.add_shape(box(0.5, 0.5), density=1.0)
        chain = [w.add_body(position=(x, 4.0)) for x in np.arange(-6.0, 6.5, 0.75)]
        for body in chain:
            body.add_shape(Capsule((-0.3, 0.0), (0.3, 0.0), 0.1), density=1.0)
        old = [w.add_joint(joints.Revolute(c, d, anchor=(0.5 * (c.position[0] + d.position[0]), 4.0)))
               for c, d in zip(chain, chain[1:])]
        for j in old[2:9:3]:
            w.remove(j)
        return w, ground, row, chain

    def definitions(ground, row, chain):
        out = [joints.Revolute(c, d, anchor=(0.5 * (c.position[0] + d.position[0]), 4.0), lower=-0.5, upper=0.5,
                               max_motor_torque=0.1, hertz=5.0, damping_ratio=0.5, data=("link", i))
               for i, (c, d) in enumerate(zip(chain, chain[1:]))]
        out += [joints.Weld(c, d, anchor=(0.5 * (c.position[0] + d.position[0]), 1.0), linear_hertz=3.0)
                for c, d in zip(row, row[1:])]
        out += [joints.Distance(r, c, hertz=2.0, damping_ratio=0.3, collide_connected=True)
                for r, c in zip(row, chain[::2])]
        out += [joints.Revolute(None, chain[0], anchor=(-6.0, 4.0)), joints.Mouse(chain[-1], (7.0, 5.0)),
                joints.Revolute(ground, row[-1], anchor=(9.0, 1.0)),
                joints.Prismatic(ground, row[0], anchor=(-6.0, 1.0), axis=(1.0, 0.0), lower=-0.1, upper=0.1),
                joints.Filter(row[1], chain[3], data={"why": "apart"})]
        return out

    w1, *parts1 = world()
    for _ in range(90):
        w1.step(DT)
    assert all(body.sleeping for body in parts1[1])
    w2 = carom.World.restore(w1.snapshot())
    parts2 = ([w2.body_handle(b.index) for b in part] if isinstance(part, list) else w2.body_handle(part.index)
              for part in parts1)
    free = list(w1.tables.free_joints)
    assert len(free) == 3 and w1.tables.j_kind.shape[0] == 16
    handles1 = w1.add_joints(definitions(*parts1))
    handles2 = [w2.add_joint(d) for d in definitions(*parts2)]
    assert len(handles1) == 40 and w1.tables.j_kind.shape[0] == 64
    assert [(h.index, h.generation) for h in handles1] == [(h.index, h.generation) for h in handles2]
    assert [h.index for h in handles1[:3]] == free[::-1]
    assert _joint_rows(w1) == _joint_rows(w2)
    assert w1.snapshot().data == w2.snapshot().data
    assert not any(body.sleeping for body in parts1[1])
    for _ in range(30):
        w1.step(DT)
        w2.step(DT)
    assert w1.snapshot().data == w2.snapshot().data
    assert w1.add_joints([]) == [] and w1.add_joints(iter([joints.Filter(parts1[1][0], parts1[1][2])]))
    with pytest.raises(CaromError, match="sequence of joint definitions"):
        w1.add_joints(joints.Filter(parts1[1][0], parts1[1][2]))


#: a revolute setting: any float (most refused somewhere), or one its check takes
_WILD_SETTING = st.one_of(st.floats(allow_nan=True), st.sampled_from([0.0, -0.0, math.inf, -math.inf, 1e39, 5.0]))
_GOOD_SETTING = {"reference_angle": st.floats(-1.0, 1.0), "target_angle": st.floats(-1.0, 1.0),
                 "lower": st.sampled_from([-math.inf, -0.5, -0.1, -0.0]), "upper": st.sampled_from([0.0, 0.1, math.inf]),
                 "motor_speed": st.floats(-10.0, 10.0), "max_motor_torque": st.floats(0.0, 10.0),
                 "hertz": st.floats(0.0, 10.0), "damping_ratio": st.floats(0.0, 10.0)}


def _ragdoll_world():
    """A ground, a static body and a row of twelve capsules, some turned (the anchors' frames differ)."""
    w = _world()
    ground = w.add_body(kind="static", position=(0.0, -1.0))
    ground.add_shape(box(20.0, 0.5))
    parts = []
    for k in range(12):
        body = w.add_body(position=(0.7 * k - 4.0, 2.0 + 0.1 * k), angle=0.3 * k - 1.0)
        body.add_shape(Capsule((-0.3, 0.0), (0.3, 0.0), 0.1), density=1.0)
        parts.append(body)
    return w, ground, parts


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_many_plain_revolute_joints_are_added_as_one_at_a_time_bit_for_bit(data):
    """``add_joints`` takes a batch of plain revolute definitions (``bookkeeping._plain_revolute_rows``) a column at
    a time: with random settings (limits, motors, springs, given or today's reference angle, thresholds, options,
    bad values among them), the same rows, handles and data as ``add_joint`` in turn on a twin world, or the same
    error (prefixed with the definition's position) and nothing added."""
    from carom.rigid.joints import bookkeeping
    names = sorted(SETTINGS[joints.REVOLUTE])

    wild = data.draw(st.booleans(), label="wild")

    def definitions(ground, parts):
        out = []
        for k, (a, b) in enumerate(zip([ground, None] + parts[:-1], parts)):
            chosen = data.draw(st.lists(st.sampled_from(names), unique=True, max_size=4), label=f"names{k}")
            settings_k = {name: data.draw(_WILD_SETTING if wild else _GOOD_SETTING[name], label=f"{name}{k}")
                          for name in chosen}
            extra = data.draw(st.sampled_from([{}, {"collide_connected": True}, {"on_threshold": "report",
                                                                                 "force_threshold": 3.5},
                                               {"enabled": False, "data": ("bone", k)}]), label=f"extra{k}")
            x, y = b.position
            out.append(joints.Revolute(a, b, anchor=(float(x) - 0.25, float(y)), **settings_k, **extra))
        return out

    w1, g1, p1 = _ragdoll_world()
    w2, g2, p2 = _ragdoll_world()
    defs1 = definitions(g1, p1)
    # the twin world's definitions: the same values on its own bodies
    defs2 = [joints.Revolute(None if d.body_a is None else w2.body_handle(d.body_a.index),
                             w2.body_handle(d.body_b.index), anchor=d.anchor, collide_connected=d.collide_connected,
                             enabled=d.enabled, force_threshold=d.force_threshold, on_threshold=d.on_threshold,
                             data=d.data, **d.settings) for d in defs1]
    fast = bookkeeping._plain_revolute_rows(w1, defs1) is not None
    error = None
    handles2 = []
    for k, d in enumerate(defs2):
        try:
            handles2.append(w2.add_joint(d))
        except CaromError as exc:
            error = f"definitions[{k}]: {exc}"
            break
    before = _joint_rows(w1)
    if not wild:          # (values every check takes: the column path, and no error)
        assert fast and error is None
    if error is not None:
        assert not fast
        with pytest.raises(CaromError) as info:
            w1.add_joints(defs1)
        assert str(info.value) == error and _joint_rows(w1) == before
        return
    handles1 = w1.add_joints(defs1)
    assert [(h.index, h.generation) for h in handles1] == [(h.index, h.generation) for h in handles2]
    assert _joint_rows(w1) == _joint_rows(w2)
    assert w1.snapshot().data == w2.snapshot().data


def test_a_batch_of_plain_revolute_joints_takes_the_column_path():
    """Twelve revolute joints of plain floats take ``_plain_revolute_rows``; one definition that is not plain (an
    integer setting, a Weld) sends the batch through the general checks, with the same rows."""
    from carom.rigid.joints import bookkeeping
    w, ground, parts = _ragdoll_world()

    def plain():
        return [joints.Revolute(a, b, anchor=(float(b.position[0]) - 0.25, float(b.position[1])), lower=-0.5,
                                upper=0.5, max_motor_torque=0.05, hertz=5.0, damping_ratio=0.5)
                for a, b in zip([ground] + parts[:-1], parts)]

    assert bookkeeping._plain_revolute_rows(w, plain()) is not None
    mixed = plain()
    mixed[3] = joints.Revolute(mixed[3].body_a, mixed[3].body_b, anchor=mixed[3].anchor, hertz=5)
    assert bookkeeping._plain_revolute_rows(w, mixed) is None
    assert bookkeeping._plain_revolute_rows(w, plain()[:7]) is None
    assert bookkeeping._plain_revolute_rows(w, plain()[:-1] + [joints.Weld(parts[0], parts[1])]) is None


def test_bodies_of_another_world_are_refused():
    w1, w2 = _world(), _world()
    a, _ = _two_bodies(w1)
    c, _ = _two_bodies(w2)
    before = _state(w1)
    with pytest.raises(CaromError, match="another world"):
        w1.add_joint(joints.Revolute(a, c, anchor=(0.0, 0.0)))
    assert _state(w1) == before
    with pytest.raises(CaromError):
        w1.add_joint("not a definition")


@pytest.mark.parametrize("setting, value", [("hertz", -1.0), ("hertz", math.nan), ("lower", 2.0),
                                            ("upper", -2.0), ("motor_speed", math.inf), ("max_motor_torque", -5.0),
                                            ("motor_speed", "fast")])
def test_bad_settings_on_a_handle_raise_and_change_nothing(setting, value):
    w = _world()
    a, b = _two_bodies(w)
    j = w.add_joint(joints.Revolute(a, b, anchor=(0.5, 0.0), lower=-1.0, upper=1.0))
    w.step(DT)
    before = _state(w)
    with pytest.raises(CaromError) as info:
        setattr(j, setting, value)
    assert setting in str(info.value) or ("lower" in str(info.value) and setting in ("lower", "upper"))
    assert _state(w) == before


def test_unknown_setting_on_a_handle():
    w = _world()
    a, b = _two_bodies(w)
    j = w.add_joint(joints.Revolute(a, b, anchor=(0.5, 0.0)))
    with pytest.raises(AttributeError, match="max_motor_force"):
        j.max_motor_force = 3.0
    with pytest.raises(AttributeError):
        j.max_motor_force
    j.motor_speed = 3.0
    assert j.motor_speed == 3.0


# --- 14. handles, removal, collision filtering, sleep ----------------------------------------------------------

def test_removed_joint_handle_is_stale():
    w = _world()
    a, b = _two_bodies(w)
    j = w.add_joint(joints.Revolute(a, b, anchor=(0.5, 0.0)))
    w.remove(j)
    assert w.joint_count == 0 and not j.alive
    for read in (lambda: j.reaction_force, lambda: j.angle, lambda: j.motor_speed, lambda: j.body_a):
        with pytest.raises(StaleHandleError):
            read()
    with pytest.raises(StaleHandleError):
        j.motor_speed = 1.0
    with pytest.raises(StaleHandleError):
        w.remove(j)
    # the row is reused by the next joint; the old handle stays stale
    k = w.add_joint(joints.Weld(a, b, anchor=(0.5, 0.0)))
    assert k.index == j.index and k != j
    with pytest.raises(StaleHandleError):
        j.angle
    w.step(DT)


def test_removing_a_body_removes_its_joints():
    w = _world()
    a, b = _two_bodies(w)
    c = w.add_body(position=(2.0, 0.0))
    c.add_shape(Circle(0.1), density=1.0)
    j1 = w.add_joint(joints.Revolute(a, b, anchor=(0.5, 0.0)))
    j2 = w.add_joint(joints.Distance(b, c))
    j3 = w.add_joint(joints.Distance(None, a, anchor_a=(0.0, 1.0)))
    w.remove(b)
    assert not j1.alive and not j2.alive and j3.alive
    assert w.joint_count == 1
    for _ in range(10):
        w.step(DT)
    assert np.isfinite(w.positions).all()


@pytest.mark.parametrize("collide", [False, True])
def test_joined_bodies_collide_only_with_collide_connected(collide):
    """Two overlapping boxes joined by a long rope (a distance joint with min_length 0, max 5 m): without
    collide_connected they stay overlapping (gravity off); with it their contact pushes them apart."""
    w = _world(gravity=(0.0, 0.0))
    a = w.add_body(position=(0.0, 0.0))
    a.add_shape(box(0.5, 0.5), density=1.0)
    b = w.add_body(position=(0.5, 0.0))
    b.add_shape(box(0.5, 0.5), density=1.0)
    j = w.add_joint(joints.Distance(a, b, min_length=0.0, max_length=5.0, collide_connected=collide))
    for _ in range(60):
        w.step(DT)
    gap = b.position[0] - a.position[0]
    if collide:
        assert gap > 1.0 - LINEAR_SLOP
    else:
        assert abs(gap - 0.5) < 1e-9
    # switching it on the handle takes effect at the next step
    j.collide_connected = not collide
    assert j.collide_connected == (not collide)


def test_jointed_bodies_sleep_and_wake_together():
    """Two links hanging from the static body on revolute joints (sleep on, the default) fall asleep together;
    an impulse on the lower one wakes both, and the upper one moves."""
    w = carom.World(gravity=(0.0, -G))
    a = w.add_body(position=(0.0, -0.5))
    a.add_shape(box(0.05, 0.5), density=1.0)
    b = w.add_body(position=(0.0, -1.5))
    b.add_shape(box(0.05, 0.5), density=1.0)
    w.add_joint(joints.Revolute(None, a, anchor=(0.0, 0.0)))
    w.add_joint(joints.Revolute(a, b, anchor=(0.0, -1.0)))
    asleep = False
    for _ in range(120):
        w.step(DT)
        assert a.sleeping == b.sleeping
        if a.sleeping:
            asleep = True
            break
    assert asleep and w.awake_count == 0
    b.apply_impulse((0.1, 0.0))
    assert not a.sleeping and not b.sleeping
    w.step(DT)
    assert abs(a.angular_velocity) > 0.0


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5), st.booleans()), min_size=0, max_size=30),
       st.lists(st.integers(0, 29), max_size=10))
def test_joined_keys_are_the_distinct_pairs_of_live_joints_that_keep_their_bodies_apart(pairs, removed):
    """``bookkeeping.joined_keys`` against a set built pair by pair: each live joint without collide_connected and
    not to the world's static body gives one key min << 32 | max, listed once, in increasing order (the same pair
    twice, or reversed, is one key)."""
    from carom.rigid.joints import bookkeeping
    from carom.rigid import _step
    w = _world()
    bodies = [w.add_body(position=(float(i), 0.0)) for i in range(6)]
    for b in bodies:
        b.add_shape(Circle(0.2), density=1.0)
    made = []
    for a, b, connected in pairs:
        if a == b:
            continue
        made.append((a, b, connected, w.add_joint(joints.Distance(bodies[a], bodies[b], collide_connected=connected))))
    made.append((None, 0, False, w.add_joint(joints.Revolute(None, bodies[0], anchor=(0.0, 0.0)))))
    gone = {k for k in removed if k < len(made)}
    for k in gone:
        w.remove(made[k][3])
    want = set()
    for k, (a, b, connected, _) in enumerate(made):
        if k in gone or connected or a is None:
            continue
        i, j = sorted((bodies[a].index, bodies[b].index))
        want.add((i << _step.KEY_SHIFT) | j)
    keys = bookkeeping.joined_keys(w)
    assert keys.dtype == np.int64
    assert keys.tolist() == sorted(want)


@settings(max_examples=60, deadline=None)
@given(st.sets(st.tuples(st.integers(0, 40), st.integers(0, 40)).filter(lambda p: p[0] < p[1]), max_size=60),
       st.lists(st.tuples(st.integers(0, 45), st.integers(0, 45)).filter(lambda p: p[0] < p[1]), max_size=80))
def test_the_broad_stage_finds_a_joined_pair_by_its_first_bodys_keys_as_a_set_lookup_does(pairs, queries):
    """The broad stage's test of a candidate body pair against the joined keys (``_broad._joined_first`` and
    ``_joined_has``: only the keys of the pair's first body are read) against a Python set: every joined pair is
    found, and no other (bodies beyond the last first body of a key included; no keys at all)."""
    from carom.rigid import _broad, _step
    keys = np.array(sorted((a << _step.KEY_SHIFT) | b for a, b in pairs), np.int64)
    first = _broad._joined_first(keys)
    for a, b in list(pairs) + queries:
        assert bool(_broad._joined_has(keys, first, a, b)) == ((a, b) in pairs)


#: kinds for ``Kind.many``: (class, settings drawn for it); the first four are written a column at a time, the
#: last two made joint by joint from their definitions
_MANY_KINDS = [
    (joints.Revolute, {"lower": st.sampled_from([-math.inf, -0.5, -0.1]), "upper": st.sampled_from([0.1, math.inf]),
                       "max_motor_torque": st.floats(0.0, 10.0), "hertz": st.floats(0.0, 10.0),
                       "reference_angle": st.floats(-1.0, 1.0)}),
    (joints.Weld, {"linear_hertz": st.floats(0.0, 10.0), "angular_damping_ratio": st.floats(0.0, 2.0)}),
    (joints.RotaryLimit, {"lower": st.sampled_from([-0.5, -0.1]), "upper": st.sampled_from([0.1, 0.5])}),
    (joints.Gear, {"ratio": st.sampled_from([-2.0, 0.5, 3.0]), "phase": st.floats(-1.0, 1.0)}),
    (joints.Distance, {"hertz": st.floats(0.5, 10.0), "damping_ratio": st.floats(0.0, 2.0)}),
    (joints.Prismatic, {"lower": st.sampled_from([-0.5, -0.1]), "upper": st.sampled_from([0.1, 0.5])}),
]


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_joints_from_columns_are_the_joints_of_their_definitions_bit_for_bit(data):
    """``Kind.many`` (``joints.many``): columns of bodies (handles with None for the static body, or an index
    array), anchors (one world anchor, both local anchors, or none), settings and options, each one value for all
    or one per joint, give the rows, handles and data that the definitions of the joints one by one give on a twin
    world, for kinds written a column at a time and kinds made joint by joint."""
    kind, drawn = data.draw(st.sampled_from(_MANY_KINDS), label="kind")
    w1, g1, p1 = _ragdoll_world()
    w2, g2, p2 = _ragdoll_world()
    for w in (w1, w2):              # (free rows first, as the definitions one by one take them)
        js = [w.add_joint(joints.Filter(a, b)) for a, b in zip(w.bodies[2:6], w.bodies[3:7])]
        w.remove(js[1])
        w.remove(js[3])
    n = 11
    a_rows = [None if k == 0 else p1[k - 1].index for k in range(n)]
    b_rows = [p1[k].index for k in range(1, n + 1)]
    columns = {}
    as_array = data.draw(st.booleans(), label="index array")
    columns["body_a"] = [None if r is None else w1.body_handle(r) for r in a_rows]
    columns["body_b"] = np.array(b_rows) if as_array else [w1.body_handle(r) for r in b_rows]
    points = np.array([[0.7 * k - 4.2, 2.0 + 0.05 * k] for k in range(n)])
    if kind is joints.Distance:
        mode = data.draw(st.sampled_from(["anchors", "local"]), label="mode")
        if mode == "anchors":
            columns["anchor_a"], columns["anchor_b"] = points, points + (0.3, 0.1)
    else:
        mode = data.draw(st.sampled_from(["anchor", "local", "none"]), label="mode")
        if mode == "anchor":
            columns["anchor"] = points if data.draw(st.booleans(), label="per joint") else (0.5, 2.0)
    if mode == "local":
        columns["local_anchor_a"], columns["local_anchor_b"] = points * 0.1, (0.2, -0.05)
    for name, values in drawn.items():
        if data.draw(st.booleans(), label=f"{name} given"):
            per_joint = data.draw(st.booleans(), label=f"{name} per joint")
            columns[name] = (np.array([data.draw(values, label=f"{name}{k}") for k in range(n)]) if per_joint
                             else data.draw(values, label=name))
    columns["collide_connected"] = data.draw(st.sampled_from([False, True, np.arange(n) % 2 == 0]), label="cc")
    columns["force_threshold"] = data.draw(st.sampled_from([math.inf, 2.5, np.linspace(1.0, 3.0, n)]), label="ft")
    if data.draw(st.booleans(), label="data"):
        columns["data"] = [("joint", k) for k in range(n)]

    def entry(name, value, k, world):
        per_joint = (isinstance(value, np.ndarray) and value.ndim == (2 if "anchor" in name else 1)) or (
            isinstance(value, list))
        v = value[k] if per_joint else value
        if name.startswith("body_") and v is not None:
            v = world.body_handle(int(v) if not isinstance(v, carom.Body) else v.index)
        if isinstance(v, np.ndarray):
            v = tuple(v.tolist())
        elif isinstance(v, np.generic):
            v = v.item()
        return v

    many = kind.many(**columns)
    assert len(many) == n
    handles1 = w1.add_joints(many)
    handles2 = [w2.add_joint(kind(**{name: entry(name, value, k, w2) for name, value in columns.items()}))
                for k in range(n)]
    assert [(h.index, h.generation) for h in handles1] == [(h.index, h.generation) for h in handles2]
    assert _joint_rows(w1) == _joint_rows(w2)
    assert w1.snapshot().data == w2.snapshot().data
    for _ in range(10):
        w1.step(DT)
        w2.step(DT)
    assert w1.snapshot().data == w2.snapshot().data


def test_joints_from_columns_refuse_a_bad_entry_by_its_name_and_add_nothing():
    """A bad entry of a column is named with its position (``lower[3]``), the world unchanged; so are columns of
    different lengths, a body that is not there, the same body twice and two static bodies."""
    w, ground, parts = _ragdoll_world()
    a = np.array([p.index for p in parts[:-1]])
    b = np.array([p.index for p in parts[1:]])
    before = _joint_rows(w)
    lower = np.full(a.size, -0.5)
    lower[3] = 0.7
    cases = [
        (dict(body_a=a, body_b=b, lower=lower, upper=0.5), r"lower\[3\] = 0.7 is above upper\[3\] = 0.5"),
        (dict(body_a=a, body_b=b, hertz=np.where(np.arange(a.size) == 4, -1.0, 2.0)), r"hertz\[4\] must be in \[0, "),
        (dict(body_a=a, body_b=b, motor_speed=np.where(np.arange(a.size) == 2, np.nan, 0.0)),
         r"motor_speed\[2\] = nan is not finite"),
        (dict(body_a=a, body_b=np.where(np.arange(b.size) == 5, 999, b)), r"body_b\[5\] \(body 999\) is not a live"),
        (dict(body_a=a, body_b=np.where(np.arange(b.size) == 1, a, b)), r"got body \d+ twice \(joint 1\)"),
        (dict(body_a=[ground] * a.size, body_b=[None] * b.size), "needs a dynamic body"),
        (dict(body_a=a, body_b=b, anchor=np.zeros((a.size, 3))), r"anchor must be an \(n, 2\) array"),
        (dict(body_a=a, body_b=b, force_threshold=np.where(np.arange(a.size) == 6, -2.0, 1.0)),
         r"force_threshold\[6\]"),
        (dict(body_a=a, body_b=b, on_threshold="snap"), "on_threshold"),
    ]
    for columns, message in cases:
        with pytest.raises(CaromError, match=message):
            w.add_joints(joints.Revolute.many(**columns))
        assert _joint_rows(w) == before
    with pytest.raises(CaromError, match="differ in length"):
        joints.Revolute.many(body_a=a, body_b=b[:-1])
    with pytest.raises(CaromError, match="one column with a value per joint"):
        joints.Revolute.many(body_a=parts[0], body_b=parts[1])
    # a kind made joint by joint words its errors with the joint's position
    with pytest.raises(CaromError, match=r"Distance.many: joint 2: .*hertz"):
        w.add_joints(joints.Distance.many(body_a=a, body_b=b, hertz=np.where(np.arange(a.size) == 2, -1.0, 1.0)))
    assert _joint_rows(w) == before


@pytest.mark.parametrize("hertz", [1e-296, 5e-324])
def test_a_spring_too_weak_to_count_leaves_the_joint_as_without_one(hertz):
    """A revolute spring of ζ = 0 and a frequency whose (hω)² underflows (``joints._common.soft``: the stiffness
    and the damping are both 0 in double precision) has no effect: the pendulum swings as without the spring,
    where its bias rate was 0 / 0 and the step raised ZeroDivisionError."""
    def swing(hz):
        w = _world()
        b = w.add_body(position=(1.0, 0.0))
        b.add_shape(box(0.2, 0.1))
        w.add_joint(joints.Revolute(None, b, anchor=(0.0, 0.0), hertz=hz))
        for _ in range(60):
            w.step(DT)
        return b.position, b.angle

    (p0, a0), (p1, a1) = swing(0.0), swing(hertz)
    np.testing.assert_array_equal(p0, p1)
    assert a0 == a1 and a0 < -1.0
