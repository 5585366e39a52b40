"""carom bench: the command prints its table, the smash and tumbler builders behave, and the translation to
pymunk / pybox2d and the quality ruler agree with independent computations. No timing is asserted."""
import math
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from carom import bench
from carom.geometry import box
from carom.rigid import World
from carom.scenes.rigid_scenes import SCENES, smash, tumbler, pyramid

DT = 1.0 / 60.0


def test_main_prints_a_table_and_writes_nothing(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.mkdir("benchmarks")                       # where the default --out would go
    assert bench.main(["pyramid", "--engines", "carom", "--steps", "3", "--no-write"]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith("| ")]
    assert lines[0].startswith("| scene | bodies | engine | ms/step")
    row = [c.strip() for c in lines[1].strip("|").split("|")]
    assert row[:3] == ["pyramid", "210", "carom"]
    assert float(row[3]) > 0.0                   # ms per step: a number, no bound on it
    assert row[4] == "1.00"                      # carom ÷ carom
    assert float(row[6]) >= 0.0 and float(row[7]) >= 0.0 and int(row[9]) == 0
    assert os.listdir("benchmarks") == []


def test_main_appends_a_dated_section(tmp_path, capsys):
    out = tmp_path / "RESULTS.md"
    out.write_text("# results\n\nolder section\n")
    bench.main(["balls", "--engines", "carom", "--steps", "2", "--runs", "1", "--out", str(out)])
    text = out.read_text()
    assert text.startswith("# results\n\nolder section\n")             # appended, not replaced
    assert "## Rigid bodies: carom vs pymunk vs pybox2d —" in text
    assert "cores" in text and "Numba" in text and "| balls |" in text


def test_two_threads_report_the_machine_ceiling(tmp_path, capsys):
    """With --threads 2 the report gives each scene's 2-thread speed-up next to what two threads give on this
    machine for a latency-bound and a throughput-bound loop, measured just before and after the scene's runs
    (numbers only: no bound on them)."""
    out = tmp_path / "RESULTS.md"
    bench.main(["balls", "--engines", "carom", "--steps", "2", "--runs", "1", "--threads", "2", "--out", str(out)])
    text = out.read_text()
    assert "carom with 2 threads (one-thread time ÷ 2-thread time)" in text
    line = next(l for l in text.splitlines() if l.startswith("- balls: "))
    number = r"\d+\.\d\d"
    assert re.search(fr"= {number}× faster; ceiling {number}–{number}× for a loop bound by throughput, "
                     fr"{number}–{number}× for one bound by latency$", line), line
    import numba
    before = numba.get_num_threads()
    ceiling = bench.thread_ceiling(2, repeats=1)
    assert sorted(ceiling) == ["latency", "throughput"]
    assert all(math.isfinite(v) and v > 0.0 for v in ceiling.values())
    assert numba.get_num_threads() == before                 # the thread count is put back


def test_library_code_runs(capsys):
    """The script whose cold run the benchmark reports as the whole library's compile runs without error (its
    last line is the process's peak memory in MB)."""
    exec(bench.LIBRARY_CODE, {})
    assert float(capsys.readouterr().out.split()[-1]) > 0.0


def test_bad_arguments_are_refused():
    with pytest.raises(SystemExit):
        bench.main(["no_such_scene", "--no-write"])
    with pytest.raises(SystemExit):
        bench.main(["pyramid", "--engines", "bullet3", "--no-write"])
    with pytest.raises(SystemExit):
        bench.main(["pyramid", "--steps", "0", "--no-write"])


def test_importing_bench_imports_no_other_engine():
    code = "import sys, carom.bench; print('pymunk' in sys.modules, 'Box2D' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_new_scenes_are_listed():
    assert "smash" in SCENES and "tumbler" in SCENES


def _momentum(w):
    m = np.array([b.mass for b in w.bodies])
    return (m[:, None] * w.velocities).sum(axis=0)


def test_smash_steps_and_conserves_momentum():
    """No gravity and no statics: contact impulses come in equal and opposite pairs, so the total momentum
    (512 kg × 40 m/s of the projectile at the start) stays what it was through the impact, to the solver's
    single precision: each impulse changes the two velocities by amounts rounded to 24 bits (measured 4e-7
    relative after 40 steps; in double precision it held to 1e-9)."""
    w = smash(columns=8, rows=6, projectile_x=24.0)
    p0 = _momentum(w)
    assert p0 == pytest.approx([8.0 * 64.0 * 40.0, 0.0])
    for _ in range(40):
        w.step(DT)
    np.testing.assert_allclose(_momentum(w), p0, rtol=1e-5, atol=1e-5 * abs(p0[0]))
    small = w.velocities[1:]
    assert np.abs(small[:, 0]).max() > 1.0       # the block was hit


def test_tumbler_turns_at_25_degrees_per_second():
    w = tumbler(grid=6)
    drum = w.bodies[0]
    assert drum.kind == "kinematic"
    for _ in range(90):
        w.step(DT)
    assert drum.angle == pytest.approx(math.radians(25.0) * 90 * DT, rel=1e-12)
    assert drum.angular_velocity == pytest.approx(math.radians(25.0), rel=1e-12)
    np.testing.assert_allclose(drum.position, [0.0, 10.0], atol=1e-12)
    # every box is still inside the drum, in the drum's frame
    spec = dict(bench.BENCH_SCENES["tumbler_kinematic"])
    desc = bench.describe(tumbler(grid=6))
    q = bench.quality(spec, desc, (w.positions, w.angles, w.velocities, w.angular_velocities), 91 * DT)
    assert q["escaped"] == 0


def test_pymunk_and_box2d_get_the_same_masses():
    """Each engine computes mass and inertia itself from the translated shapes and densities."""
    pytest.importorskip("pymunk")
    pytest.importorskip("Box2D")
    w = World(gravity=(0, -10))
    w.static_body.add_shape(box(5.0, 0.5, center=(0, -0.5)))
    a = w.add_body(position=(1.0, 2.0), angle=0.3, velocity=(1.0, -2.0), angular_velocity=0.5)
    a.add_shape(box(0.5, 0.25, center=(0.3, 0.1)), density=2.0)
    a.add_shape(box(0.2, 0.2, center=(-0.4, 0.0)), density=1.0)
    desc = bench.describe(w)
    space, (pb,) = bench.build_pymunk(desc)
    assert pb.mass == pytest.approx(a.mass, rel=1e-9)
    assert pb.moment == pytest.approx(a.inertia, rel=1e-9)              # pymunk: about the centre of mass
    np.testing.assert_allclose(pb.local_to_world(pb.center_of_gravity), a.world_center, atol=1e-12)
    np.testing.assert_allclose(tuple(pb.velocity), a.velocity, atol=1e-12)
    world, (bb,) = bench.build_box2d(desc)
    lc = np.array(tuple(bb.localCenter))
    assert bb.mass == pytest.approx(a.mass, rel=1e-6)                   # Box2D stores float32
    assert bb.inertia - bb.mass * lc @ lc == pytest.approx(a.inertia, rel=1e-5)   # Box2D: about the origin
    np.testing.assert_allclose(tuple(bb.worldCenter), a.world_center, atol=1e-5)
    assert len(space.shapes) == 3 and len(bb.fixtures) == 2


def test_deepest_overlap_and_drift_by_hand():
    """Two unit boxes 0.9 m apart overlap by 0.1 m; a box sunk 0.05 m into the ground overlaps by 0.05 m."""
    w = World(gravity=(0, -10))
    w.static_body.add_shape(box(10.0, 0.5, center=(0, -0.5)))
    for x in (0.0, 0.9, 5.0):
        w.add_body(position=(x, 0.5)).add_shape(box(0.5, 0.5))
    desc = bench.describe(w)
    pos = desc["position"].copy()
    assert bench.deepest_overlap(desc, pos, desc["angle"]) == pytest.approx(0.1, abs=1e-9)
    pos[1, 0] = 2.0
    pos[2, 1] = 0.45
    assert bench.deepest_overlap(desc, pos, desc["angle"]) == pytest.approx(0.05, abs=1e-9)
    pos[2, 1] = 0.5
    assert bench.deepest_overlap(desc, pos, desc["angle"]) == pytest.approx(0.0, abs=1e-9)


def test_pyramid_tops():
    desc = bench.describe(pyramid(base=4))
    tops = bench.pyramid_tops(desc)
    assert len(tops) == 1 and desc["position"][tops[0]][1] == pytest.approx(3.5)
    from carom.scenes.rigid_scenes import many_pyramids
    assert len(bench.pyramid_tops(bench.describe(many_pyramids(rows=2, columns=3, base=3)))) == 6


def test_every_engine_keeps_resting_bodies_awake():
    """Box2D's benchmarks run with sleeping off; a box resting 2 s on the ground must still be simulated."""
    pytest.importorskip("Box2D")
    spec = bench.scene_spec("pyramid")
    spec["kwargs"] = dict(base=2)
    w = bench.build_carom(spec)
    assert getattr(w, "sleep_enabled", False) is False
    world, bodies = bench.build_box2d(bench.describe(w))
    for _ in range(120):
        world.Step(DT, 8, 3)
    assert all(b.awake for b in bodies)


def test_runs_are_taken_in_rounds(monkeypatch):
    """Every engine runs once per round (so a machine whose speed drifts treats them alike); the times of the
    rounds are merged, memory comes from the first round and quality from the last."""
    calls = []

    def fake(engine, spec, desc, steps, runs, threads):
        calls.append((engine, threads, runs))
        r = sum(1 for c in calls if c[:2] == (engine, threads))
        if engine == "box2d":
            return dict(error="not expressible: test")
        return dict(ms=[10.0 * r], memory_mb=float(r), quality=dict(round=r))

    monkeypatch.setattr(bench, "run_in_subprocess", fake)
    configs = [("carom", 1), ("carom", 2), ("pymunk", 1), ("box2d", 1)]
    out = bench._interleaved_runs(configs, None, None, 5, 3)
    # round 1 runs all four once; box2d failed, so rounds 2 and 3 run the other three
    rest = [("carom", 1, 1), ("carom", 2, 1), ("pymunk", 1, 1)]
    assert calls == rest + [("box2d", 1, 1)] + rest + rest
    assert out[0]["ms"] == [10.0, 20.0, 30.0] and out[0]["memory_mb"] == 1.0 and out[0]["quality"] == {"round": 3}
    assert "error" in out[3]
