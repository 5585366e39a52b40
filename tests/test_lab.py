"""The collision lab: a picture per algorithm through the command line, and each traced algorithm ends at the
library's answer (GJK/EPA/SAT/clipping/TOI against carom.geometry, sort-and-sweep and the tree against the
brute-force broad phase)."""
import math

import numpy as np
import pytest
from PIL import Image

import carom
from carom.cli import main
from carom.geometry import (Circle, Capsule, Polygon, Segment, Transform, box, distance, penetration, collide,
                            time_of_impact, BruteForce, SweepAndPrune)
from carom.render import lab

SEEDS = range(25)


# ------------------------------------------------------------------------------------------- pictures
@pytest.mark.parametrize("algorithm,ext", [("sat", "gif"), ("gjk", "png"), ("epa", "gif"), ("clip", "png"),
                                           ("toi", "gif"), ("sap", "png"), ("tree", "gif")])
def test_lab_writes_a_picture(algorithm, ext, tmp_path, capsys):
    out = tmp_path / f"{algorithm}.{ext}"
    assert main(["lab", algorithm, "--out", str(out), "--seed", "4"]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    im = Image.open(out)
    steps = len(lab.build(algorithm, seed=4).steps)
    assert steps >= 3
    if ext == "gif":
        assert im.n_frames == steps                 # one frame per step
    else:
        assert im.format == "PNG" and im.width > 300 and im.height > 200
    pixels = np.asarray(im.convert("RGB"))
    assert len(np.unique(pixels.reshape(-1, 3), axis=0)) > 10      # a drawing, not a blank page


def test_lab_with_given_shapes(tmp_path):
    out = tmp_path / "sat.png"
    assert main(["lab", "sat", "--a", "box:1,0.5@0,0,0.3", "--b", "circle:0.6@1.2,0.4", "--out", str(out)]) == 0
    assert main(["lab", "toi", "--a", "box:1,1", "--b", "capsule:-0.3,0,0.3,0,0.2@-5,0.5",
                 "--end", "5,0.5,3", "--out", str(tmp_path / "toi.gif")]) == 0
    assert main(["lab", "tree", "--count", "5", "--out", str(tmp_path / "tree.png")]) == 0


def test_lab_errors(tmp_path, capsys):
    assert main(["lab", "gjk", "--out", str(tmp_path / "x.bmp")]) == 2
    assert "x.bmp" in capsys.readouterr().err
    assert main(["lab", "sat", "--a", "triangle:1", "--out", str(tmp_path / "x.png")]) == 2
    assert "triangle:1" in capsys.readouterr().err
    assert main(["lab", "sap", "--count", "1", "--out", str(tmp_path / "x.png")]) == 2
    assert main(["lab", "toi", "--end", "1", "--out", str(tmp_path / "x.png")]) == 2
    with pytest.raises(SystemExit):
        main(["lab", "voronoi"])
    assert not list(tmp_path.iterdir())


def test_parse_shape():
    s, xf = lab.parse_shape("box:0.5,0.25@1,2,0.5")
    assert s == box(0.5, 0.25) and np.allclose(xf.position, (1, 2)) and xf.angle == 0.5
    assert lab.parse_shape("circle:0.3")[0] == Circle(0.3)
    assert lab.parse_shape("capsule:-1,0,1,0,0.2")[0] == Capsule((-1, 0), (1, 0), 0.2)
    assert lab.parse_shape("segment:0,0,1,1@3,4")[0] == Segment((0, 0), (1, 1))
    assert lab.parse_shape("polygon:0,0,1,0,0,1;0.1")[0] == Polygon([(0, 0), (1, 0), (0, 1)], 0.1)
    for bad in ("box", "box:1", "box:a,b", "circle:-1", "polygon:0,0,1,0", "box:1,1@1", "box:1,1@1,2,3,4"):
        with pytest.raises(carom.GeometryError, match="spec|radius|must"):
            lab.parse_shape(bad)


# ------------------------------------------------------------------------------------------- agreement
ALL_KINDS = ("polygon", "box", "capsule", "circle")


@pytest.mark.parametrize("seed", SEEDS)
def test_gjk_trace_agrees_with_the_library_distance(seed):
    rng = np.random.default_rng(seed)
    a, xa, b, xb = lab.random_pair(rng, ALL_KINDS, "any")
    d, pa, pb, states = lab.gjk_distance(a, xa, b, xb)
    ref = distance(a, xa, b, xb)
    assert d == pytest.approx(ref.distance, rel=1e-9, abs=1e-12)
    if d > 0:
        assert np.hypot(*(pb - pa)) == pytest.approx(d, rel=1e-9)
    assert 1 <= len(states) <= carom.constants.GJK_MAX_ITERATIONS
    # every recorded simplex point is a point of M = B ⊖ A: the difference of a B vertex and an A vertex
    diffs = (lab._core(b, xb)[None] - lab._core(a, xa)[:, None]).reshape(-1, 2)
    for st in states:
        for w in st["simplex"]:
            assert np.min(np.hypot(*(diffs - w).T)) < 1e-12


@pytest.mark.parametrize("seed", SEEDS)
def test_epa_trace_agrees_with_the_library_penetration(seed):
    rng = np.random.default_rng(100 + seed)
    a, xa, b, xb = lab.random_pair(rng, ("polygon", "box"), "overlap")
    depth, normal, g_states, e_states = lab.penetration_trace(a, xa, b, xb)
    ref_depth, ref_normal = penetration(a, xa, b, xb)
    assert e_states, "overlapping cores must go through EPA"
    assert depth == pytest.approx(ref_depth, rel=1e-9, abs=1e-12)
    # independent of both: moving B by the depth along the normal makes the shapes just touch
    assert distance(a, xa, b, Transform(xb.position + (depth - 1e-6) * normal, xb.angle)).distance == 0.0
    assert distance(a, xa, b, Transform(xb.position + (depth + 1e-6) * normal, xb.angle)).distance > 0.0
    # the polytope only grows, and its nearest edge distance never decreases
    assert all(len(s["polytope"]) <= len(t["polytope"]) for s, t in zip(e_states, e_states[1:]))
    assert all(s["distance"] <= t["distance"] + 1e-12 for s, t in zip(e_states, e_states[1:]))


@pytest.mark.parametrize("seed", SEEDS)
def test_sat_trace_agrees_with_the_library_penetration(seed):
    rng = np.random.default_rng(200 + seed)
    a, xa, b, xb = lab.random_pair(rng, ("polygon", "box", "capsule"), "any")
    axes, result = lab.sat_trace(a, xa, b, xb)
    ref = penetration(a, xa, b, xb)
    if ref is None:
        assert result["separated"]
    else:
        assert not result["separated"]
        assert result["depth"] == pytest.approx(ref[0], rel=1e-9, abs=1e-12)
        n = result["normal"]
        assert distance(a, xa, b, Transform(xb.position + (result["depth"] + 1e-6) * n, xb.angle)).distance > 0


@pytest.mark.parametrize("seed", SEEDS)
def test_clip_trace_agrees_with_the_library_manifold(seed):
    rng = np.random.default_rng(300 + seed)
    a, xa, b, xb = lab.random_pair(rng, ("polygon", "box"), "overlap")
    stages, res = lab.clip_trace(a, xa, b, xb)
    m = collide(a, xa, b, xb)
    assert m is not None
    assert np.allclose(res["normal"], m.normal, atol=1e-9)
    assert len(res["points"]) == m.count

    def by_x(points, seps):
        order = np.lexsort((points[:, 1], points[:, 0]))
        return points[order], seps[order]
    p, s = by_x(res["points"], res["separations"])
    q, t = by_x(m.points, m.separations)
    assert np.allclose(p, q, atol=1e-9) and np.allclose(s, t, atol=1e-9)


@pytest.mark.parametrize("seed", SEEDS)
def test_toi_trace_agrees_with_the_library_and_has_no_earlier_contact(seed):
    rng = np.random.default_rng(400 + seed)
    a = lab.random_shape(rng, ("polygon", "box"))
    b = lab.random_shape(rng, ("polygon", "box", "capsule"), size=0.6)
    xa = Transform((0.0, 0.0), rng.uniform(-1, 1))
    b0 = Transform((-4.0, rng.uniform(-1, 1)), rng.uniform(-1, 1))
    b1 = Transform((4.0, rng.uniform(-1, 1)), b0.angle + rng.uniform(-4, 4))
    states, t = lab.toi_trace(a, xa, xa, b, b0, b1)
    ref = time_of_impact(a, xa, xa, b, b0, b1)
    if ref is None:
        assert t is None
        return
    assert t == pytest.approx(ref, abs=1e-9)

    def pose(s):
        return Transform(b0.position + s * (b1.position - b0.position), b0.angle + s * (b1.angle - b0.angle))
    assert distance(a, xa, b, pose(t)).distance <= carom.constants.TOI_TARGET + 1e-12
    assert all(distance(a, xa, b, pose(s)).distance > 0.0 for s in np.linspace(0.0, t, 200, endpoint=False))
    assert [s["t"] for s in states] == sorted(s["t"] for s in states)


@pytest.mark.parametrize("seed", range(10))
def test_sap_trace_finds_the_brute_force_pairs(seed):
    rng = np.random.default_rng(500 + seed)
    lowers, uppers = lab.random_boxes(rng, 25)
    axis, order, states, pairs = lab.sap_trace(lowers, uppers)
    brute, sap = BruteForce(), SweepAndPrune()
    for lo, hi in zip(lowers, uppers):
        brute.insert(lo, hi)
        sap.insert(lo, hi)
    expected = [tuple(map(int, p)) for p in brute.pairs()]
    assert pairs == expected
    assert pairs == [tuple(map(int, p)) for p in sap.pairs()]
    assert [lowers[i, axis] for i in order] == sorted(lowers[:, axis])


@pytest.mark.parametrize("seed", range(5))
def test_tree_lab_pairs_and_node_boxes(seed):
    rng = np.random.default_rng(600 + seed)
    lowers, uppers = lab.random_boxes(rng, 12)
    result = lab.lab_tree(lowers, uppers)
    brute = BruteForce()
    for lo, hi in zip(lowers, uppers):
        brute.insert(lo, hi)
    assert result.result["pairs"] == [tuple(map(int, p)) for p in brute.pairs()]
    nodes = result.result["nodes"]
    assert nodes["leaves"] == 12 and len(result.steps) == 13
    # every internal box holds both children; every leaf box holds its proxy's real box
    stack = [nodes["root"]]
    while stack:
        i = stack.pop()
        c1, c2 = int(nodes["child1"][i]), int(nodes["child2"][i])
        if c1 < 0:
            p = int(nodes["proxy"][i])
            assert np.all(nodes["lower"][i] <= lowers[p]) and np.all(uppers[p] <= nodes["upper"][i])
            continue
        for c in (c1, c2):
            assert np.all(nodes["lower"][i] <= nodes["lower"][c]) and np.all(nodes["upper"][c] <= nodes["upper"][i])
            stack.append(c)


def test_gjk_trace_on_touching_and_nested_cores():
    # a point core inside a polygon core: the origin is inside M, distance 0 in one or two iterations
    states, res = lab.gjk_trace(box(1, 1).vertices, np.array([[0.2, 0.1]]))
    assert res["core_distance"] == 0.0
    # two unit squares side by side 3 apart: distance 1 exactly, witness points on the facing edges
    sq = box(1, 1).vertices
    states, res = lab.gjk_trace(sq, sq + (3.0, 0.0))
    assert res["core_distance"] == pytest.approx(1.0, abs=1e-15)
    assert res["point_a"][0] == pytest.approx(1.0) and res["point_b"][0] == pytest.approx(2.0)
    depth, normal, _, e_states = lab.penetration_trace(box(1, 1), (0, 0), box(1, 1), (1.5, 0.2))
    assert depth == pytest.approx(0.5) and np.allclose(normal, (1, 0))
    assert math.isclose(penetration(box(1, 1), (0, 0), box(1, 1), (1.5, 0.2))[0], depth)
