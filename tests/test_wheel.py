"""A wheel carries its compiled kernels: installed into a fresh environment in a new folder, the README's first
rigid-body example runs with no kernel compiled — as is, with the installed package unwritable to the
process (run as an unprivileged user), and with the processor level forced to the baseline.

The wheel is built by ``tools/kernel_wheel.py`` from this tree's own caches (``--in-tree``: in a clean clone the
suite has just compiled them from these sources; the baseline level is compiled here). Compiles are counted
with Numba's own event (``numba:compile``, sent only when a kernel is compiled, not when it is loaded from the
cache).
"""
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "tools"))

pytestmark = pytest.mark.slow

#: run inside the fresh environment: count Numba's compile events around the README's example
COUNTING = '''
import numba.core.event as ev
compiled = []
class Count(ev.Listener):
    def on_start(self, event):
        compiled.append(event.data["dispatcher"].py_func.__qualname__)
    def on_end(self, event):
        pass
ev.register("numba:compile", Count())
import carom
{example}
print("LEVEL", carom.cpu_level())
print("COMPILED", len(compiled), sorted(set(compiled))[:10])
'''


def readme_first_rigid_example():
    """The README's first python block (its first rigid-body example)."""
    text = open(os.path.join(ROOT, "README.md")).read()
    block = re.search(r"```python\n(.*?)```", text, re.S)
    assert "World" in block.group(1)
    return block.group(1)


def _host_levels():
    from carom import _cpu_level
    return _cpu_level.supported(_cpu_level._host_features())


def _x86_v3_host():
    return "x86-64-v3" in _host_levels()


@pytest.fixture(scope="module")
def installed():
    """The kernel wheel installed into a fresh virtual environment in a new temporary folder that other
    users may read (for the unprivileged run)."""
    import kernel_wheel
    folder = tempfile.mkdtemp(prefix="carom-wheel-", dir="/tmp")
    os.chmod(folder, 0o755)
    wheel = kernel_wheel.build(os.path.join(folder, "dist"), kernel_wheel.buildable_levels(), in_tree=True)
    venv = os.path.join(folder, "venv")
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    py = os.path.join(venv, "bin", "python")
    subprocess.run([py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", wheel], check=True)
    yield folder, py
    shutil.rmtree(folder, ignore_errors=True)


def run_example(py, folder, env=None, user=None):
    script = os.path.join(folder, "example.py")
    with open(script, "w") as f:
        f.write(COUNTING.format(example=readme_first_rigid_example()))
    os.chmod(script, 0o644)
    cmd = [py, script]
    if user is not None:
        cmd = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", "--"] + cmd
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "CAROM_", "PYTHON"))}
    proc = subprocess.run(cmd, cwd=folder, env=dict(clean, **(env or {})), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    level = re.search(r"LEVEL (\S+)", proc.stdout).group(1)
    count = int(re.search(r"COMPILED (\d+)", proc.stdout).group(1))
    return level, count, proc


@pytest.mark.skipif(not _x86_v3_host(), reason="the shipped levels are x86-64's; this processor compiles")
def test_the_installed_wheel_runs_the_readme_example_without_compiling(installed):
    folder, py = installed
    level, count, proc = run_example(py, folder)
    assert level == _host_levels()[0]          # the best level this processor supports
    assert count == 0, proc.stdout
    assert "compiling" not in proc.stderr


@pytest.mark.skipif(not _x86_v3_host(), reason="the shipped levels are x86-64's; this processor compiles")
def test_the_avx2_level_runs_the_example_without_compiling(installed):
    folder, py = installed
    level, count, proc = run_example(py, folder, env={"CAROM_CPU_LEVEL": "x86-64-v3"})
    assert level == "x86-64-v3" and count == 0, proc.stdout


@pytest.mark.skipif(not _x86_v3_host(), reason="the shipped levels are x86-64's; this processor compiles")
def test_the_baseline_level_runs_the_example_without_compiling(installed):
    folder, py = installed
    level, count, proc = run_example(py, folder, env={"CAROM_CPU_LEVEL": "x86-64"})
    assert level == "x86-64" and count == 0, proc.stdout


@pytest.mark.skipif(not _x86_v3_host(), reason="the shipped levels are x86-64's; this processor compiles")
def test_a_read_only_install_still_finds_its_kernels(installed):
    """The installed package made read-only and the example run by a user who does not own it (``nobody``,
    via setpriv, when the suite runs as root, for whom file modes do not bind): Numba would skip the
    unwritable ``__pycache__``; carom's locator copies the shipped entries into the user's cache folder."""
    folder, py = installed
    site = subprocess.run([py, "-c", "import carom, os; print(os.path.dirname(carom.__file__))"],
                          capture_output=True, text=True, check=True, env={"CAROM_CPU_LEVEL": "host"}).stdout.strip()
    home = os.path.join(folder, "home")
    os.makedirs(home, exist_ok=True)
    user = None
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.fail("running as root, and setpriv (util-linux) is missing to run as an unprivileged user")
        user = 65534                     # nobody
        os.chown(home, user, user)
    # a read-only package: no write bit anywhere in it
    for dirpath, dirnames, filenames in os.walk(site):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            os.chmod(p, os.stat(p).st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    os.chmod(site, os.stat(site).st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    try:
        level, count, proc = run_example(py, folder, env={"HOME": home, "XDG_CACHE_HOME": os.path.join(home, "c")},
                                          user=user)
    finally:
        for dirpath, dirnames, filenames in os.walk(site):
            for name in dirnames + filenames:
                p = os.path.join(dirpath, name)
                os.chmod(p, os.stat(p).st_mode | stat.S_IWUSR)
        os.chmod(site, os.stat(site).st_mode | stat.S_IWUSR)
    assert level == _host_levels()[0]
    assert count == 0, proc.stdout
    copied = [f for _, _, fs in os.walk(os.path.join(home, "c", "carom")) for f in fs if f.endswith(".nbi")]
    assert copied, "the shipped kernels were not found through the user's cache folder"


def test_the_wheel_pins_numba_and_carries_the_levels(installed):
    folder, py = installed
    out = subprocess.run([py, "-c", "import json, importlib.metadata as m, carom, os;"
                          "print(m.requires('carom'));"
                          "print(json.load(open(os.path.join(os.path.dirname(carom.__file__), '_kernels.json'))));"
                          "print('typed', os.path.exists(os.path.join(os.path.dirname(carom.__file__), 'py.typed')))"],
                         capture_output=True, text=True, check=True, env={"CAROM_CPU_LEVEL": "host"}).stdout
    import numba
    assert f"numba=={numba.__version__}" in out
    # every level this processor runs (a wheel built here ships those: ``kernel_wheel.buildable_levels``)
    assert f"'levels': {_host_levels()}" in out
    assert _host_levels()[-1] == "x86-64"
    assert "typed True" in out


def test_a_wheel_without_the_processors_best_level_loads_its_best_shipped_one():
    """A wheel built on a machine without AVX-512 ships x86-64-v3 and the baseline (``kernel_wheel.buildable_levels``);
    on a processor with AVX-512 it must take its x86-64-v3 kernels, not compile for x86-64-v4; a source checkout
    (nothing shipped) takes the processor's best."""
    from carom._cpu_level import best_level
    v4 = ["x86-64-v4", "x86-64-v3", "x86-64"]
    assert best_level(v4, ["x86-64-v3", "x86-64"]) == "x86-64-v3"
    assert best_level(v4, ["x86-64-v4", "x86-64-v3", "x86-64"]) == "x86-64-v4"
    assert best_level(["x86-64-v3", "x86-64"], ["x86-64-v4", "x86-64-v3", "x86-64"]) == "x86-64-v3"
    assert best_level(["x86-64"], ["x86-64-v4", "x86-64-v3"]) == "x86-64"
    assert best_level(v4, []) == "x86-64-v4"
