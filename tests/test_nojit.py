"""A subset of the kernel tests runs as plain Python (NUMBA_DISABLE_JIT=1), so the kernels stay readable
and debuggable without the compiler."""
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def test_kernels_run_as_plain_python():
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    tests = [
        "test_collide_sat.py::test_box_on_box_gives_two_points_with_stable_ids",
        "test_collide_sat.py::test_circle_closed_form",
        "test_mass.py::test_capsule_closed_form",
        "test_hull.py::test_hull_of_square_with_edge_points_is_four_corners",
        "test_rigid.py::test_seed_head_on_example",
        "test_rigid.py::test_kinematic_body_pushes_and_is_not_pushed",
        # (the pre-solve hook called through ctypes: carom.rigid.presolve.call_pre_solve's stand-in)
        "test_pre_solve.py::test_a_hook_that_disables_some_contacts_lets_a_body_fall_through",
    ]
    r = subprocess.run([sys.executable, "-m", "pytest", "-o", "addopts=", "-q", "-p", "no:cacheprovider", *tests], cwd=HERE,
                       env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert f"{len(tests)} passed" in r.stdout


def test_vector_solver_lanes_agree_with_plain_python(tmp_path):
    """The contact solver works on LANES contacts at once with LLVM vector intrinsics (carom._simd). Each
    lane must be bitwise the scalar IEEE arithmetic, and the result must not depend on how contacts are
    grouped into lanes: the compiled step (LANES of this machine) and the plain-Python step with NumPy lanes
    and 6 lanes per bundle, filled in two parts of 3 (so partly empty bundles and parts, and a different
    grouping), give the same state, single-precision sweeps included."""
    scene = os.path.join(HERE, "lane_scene.py")
    compiled = tmp_path / "compiled.npz"
    plain = tmp_path / "plain.npz"
    r = subprocess.run([sys.executable, scene, str(compiled)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    env = dict(os.environ, NUMBA_DISABLE_JIT="1", CAROM_LANES="6")
    r = subprocess.run([sys.executable, scene, str(plain)], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    a, b = np.load(compiled), np.load(plain)
    assert np.abs(a["v"]).max() > 0.1          # the scene is still moving: the comparison means something
    for k in ("p", "a", "v", "w"):
        assert np.array_equal(a[k], b[k]), (k, np.abs(a[k] - b[k]).max())


def test_joint_lanes_agree_with_plain_python(tmp_path):
    """The revolute records of a colour are solved LANES64 at a time in double vectors (``joints._solve``: the
    bodies' rows read whole and written back as rows, ``_simd.joint_rows64`` / ``put_joint_velocities64``; the
    records' and frames' changing columns written back as blocks). Compiled, and as plain Python with NumPy
    lanes of 3 (a different grouping, and the lanes really taken), the steps must give the same bits."""
    scene = os.path.join(HERE, "joint_lane_scene.py")
    compiled, plain = tmp_path / "compiled.npy", tmp_path / "plain.npy"
    r = subprocess.run([sys.executable, scene, str(compiled), str(tmp_path / "n0")], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    env = dict(os.environ, NUMBA_DISABLE_JIT="1", CAROM_LANES="6")
    r = subprocess.run([sys.executable, scene, str(plain), str(tmp_path / "n1")], env=env, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert int((tmp_path / "n1").read_text()) > 100          # the plain-Python run went through the lanes
    a, b = np.load(compiled), np.load(plain)
    assert np.abs(a).max() > 0.1
    assert np.array_equal(a, b), np.abs(a - b).max()
