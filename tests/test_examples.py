"""Every script in ``examples/`` runs headless for a few frames and writes its picture (the gallery's pictures
come from the same scripts, through ``docs/make_gallery.py``)."""
import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from carom.render.draw import BACKGROUND

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")
NAMES = sorted(f[:-3] for f in os.listdir(EXAMPLES) if f.endswith(".py") and not f.startswith("_"))

#: What the issue asks for, each by the script that shows it.
REQUIRED = ("platformer", "newtons_cradle", "ragdolls", "car_on_hills", "breaking_bridge", "chain_and_pendulums",
            "tumbler", "tower_and_projectile", "conveyor_belts", "sensors_and_filters", "raycast_vision",
            "cloth_and_rope", "jelly", "numpy_pile", "energy_plot")


def _load(name):
    spec = importlib.util.spec_from_file_location(f"carom_example_{name}", os.path.join(EXAMPLES, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_there_are_the_fifteen_required_examples_and_more():
    assert set(REQUIRED) <= set(NAMES)
    assert len(NAMES) >= 15


@pytest.mark.parametrize("name", NAMES)
def test_example_runs_headless_and_draws_something(name, tmp_path, monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    monkeypatch.chdir(tmp_path)
    module = _load(name)
    assert module.__doc__ and module.main.__doc__
    out = tmp_path / f"{name}.gif"
    app = module.main(["--frames", "4", "--out", str(out), "--size", "240x180"])
    assert app.steps == 4 and app.out_path == str(out)
    im = Image.open(out)
    assert im.size == (240, 180) and im.n_frames == 2          # 4 steps at 60 per second: 2 GIF frames
    im.seek(im.n_frames - 1)
    pixels = np.asarray(im.convert("RGB"), int)
    drawn = np.abs(pixels - np.array(BACKGROUND)).max(axis=-1) > 30
    assert drawn.mean() > 0.01, "the picture is (nearly) empty"


def test_energy_example_writes_its_matplotlib_plot(tmp_path, monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    module = _load("energy_plot")
    module.main(["--frames", "30", "--out", str(tmp_path / "e.gif"), "--size", "240x180"])
    plot = Image.open(tmp_path / "e-energy.png")
    assert plot.format == "PNG" and plot.size == (600, 350)
    t, ke, pe, spring = np.array(module.record).T
    total = ke + pe + spring
    assert len(t) == 30 and np.ptp(total) < 0.1 * np.ptp(ke)      # energy moves between forms, its sum stays


def test_numpy_pile_has_ten_thousand_bodies_read_as_arrays(tmp_path, monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    module = _load("numpy_pile")
    world = module.build()
    stats = module.analyse(world)
    assert stats["bodies"] == 10_000 == world.body_count
    moving = np.any(world.velocities != 0.0, axis=1)
    assert moving.sum() == 100 and np.all(moving[:100])           # a nudge of the first 100 bodies only
    mass = np.pi * module.RADIUS ** 2
    assert np.isclose(stats["kinetic_energy"], 0.5 * mass * (world.velocities[:100] ** 2).sum())
    assert abs(stats["mean_height"] - world.positions[:, 1].mean()) < 1e-12


def test_an_example_runs_as_a_script(tmp_path):
    out = tmp_path / "hello.png"
    env = dict(os.environ, SDL_VIDEODRIVER="dummy")
    env.pop("DISPLAY", None)
    result = subprocess.run([sys.executable, os.path.join(EXAMPLES, "hello_world.py"), "--frames", "2", "--out",
                             str(out)], capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stderr
    assert f"wrote {out}" in result.stdout
    assert Image.open(out).format == "PNG"
