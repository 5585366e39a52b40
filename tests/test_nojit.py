"""A subset of the kernel tests runs as plain Python (NUMBA_DISABLE_JIT=1), so the kernels stay readable
and debuggable without the compiler."""
import os
import subprocess
import sys

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
    ]
    r = subprocess.run([sys.executable, "-m", "pytest", "-o", "addopts=", "-q", "-p", "no:cacheprovider", *tests], cwd=HERE,
                       env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert f"{len(tests)} passed" in r.stdout
