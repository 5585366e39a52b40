"""A new user's first calls: ``carom.render`` after a plain ``import carom`` (loaded lazily), and a clear carom
error naming ``pip install carom[viz]`` when a picture library is missing."""
import subprocess
import sys
import textwrap

import pytest

import carom
from carom.render import _deps


def _run(code):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=600)


def test_render_is_reachable_after_import_carom_and_costs_nothing_until_used():
    result = _run("""
        import sys
        import carom
        before = sorted(m for m in ("carom.render", "pygame", "matplotlib", "PIL") if m in sys.modules)
        draw = carom.render.draw_matplotlib
        after = "carom.render" in sys.modules
        print(before, after, "render" in dir(carom), carom.render is sys.modules["carom.render"])
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[-2] == "[] True True True"


def test_an_unknown_attribute_is_still_an_attribute_error():
    with pytest.raises(AttributeError, match="renderer"):
        carom.renderer


@pytest.mark.parametrize("module, package", [("pygame", "pygame-ce"), ("PIL.ImageDraw", "pillow"),
                                             ("matplotlib.patches", "matplotlib")])
def test_a_missing_picture_library_names_the_viz_extra(module, package, monkeypatch):
    top = module.split(".")[0]
    for name in list(sys.modules):                      # simulate the library not being installed
        if name == top or name.startswith(top + "."):
            monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, top, None)
    with pytest.raises(carom.MissingDependencyError) as info:
        _deps.require(module)
    message = str(info.value)
    assert "pip install carom[viz]" in message and package in message
    assert isinstance(info.value, carom.CaromError) and isinstance(info.value, ImportError)


def test_drawing_without_pillow_raises_the_carom_error_not_a_module_not_found(monkeypatch, tmp_path):
    world = carom.World()
    world.add_body().add_shape(carom.geometry.Circle(0.5))
    for name in list(sys.modules):
        if name == "PIL" or name.startswith("PIL."):
            monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "PIL", None)
    with pytest.raises(carom.MissingDependencyError, match=r"pillow.*pip install carom\[viz\]"):
        carom.render.render(world, tmp_path / "x.gif", frames=1, progress=False)


def test_the_demo_command_without_pygame_says_what_to_install():
    result = _run("""
        import sys
        sys.modules["pygame"] = None                    # as if pygame-ce were not installed
        from carom.cli import main
        sys.exit(main(["demo", "balls", "--frames", "1", "--out", "never.gif", "--quiet"]))
    """)
    assert result.returncode == 2
    assert "pip install carom[viz]" in result.stderr and "pygame-ce" in result.stderr
