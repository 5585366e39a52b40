"""Debug drawing, headless GIFs, the demo window (dummy driver in-process, a real X server via Xvfb in a
subprocess) and the ``carom demo`` command."""
import json
import math
import os
import select
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

from PIL import Image  # noqa: E402

import carom  # noqa: E402
from carom.cli import main  # noqa: E402
from carom.geometry import Circle, Capsule, Polygon, box  # noqa: E402
from carom.render import catalog, describe, render, record_scene, draw_matplotlib  # noqa: E402
from carom.render.headless import gif_frames  # noqa: E402
from carom.render.draw import (View, Poly, Disc, Lines, Dot, BACKGROUND, rounded_outline, tree_boxes,  # noqa: E402
                               shape_centres, dimmed, body_colour)

SMALL = (240, 180)
ALL_SCENES = list(catalog.scenes())


def _not_blank_at(image, view, points, tolerance=30):
    """For every world point that lands inside the image, does a 3 × 3 pixel patch around it differ from the
    background? Returns (number checked, number blank)."""
    a = np.asarray(image.convert("RGB"), dtype=int)
    h, w = a.shape[:2]
    px = np.rint(view.px(points)).astype(int).reshape(-1, 2)
    checked = blank = 0
    for x, y in px:
        if not (1 <= x < w - 1 and 1 <= y < h - 1):
            continue
        patch = a[y - 1:y + 2, x - 1:x + 2].reshape(-1, 3)
        checked += 1
        if np.all(np.abs(patch - np.array(BACKGROUND)).max(axis=1) <= tolerance):
            blank += 1
    return checked, blank


def _last_frame(path):
    im = Image.open(path)
    n = getattr(im, "n_frames", 1)
    im.seek(n - 1)
    return n, im.convert("RGB")


# ------------------------------------------------------------------------------------------- headless files
@pytest.mark.parametrize("scene", ALL_SCENES)
def test_every_scene_renders_headless_with_the_requested_frames(scene, tmp_path):
    out = tmp_path / f"{scene}.gif"
    app = record_scene(scene, out, frames=3, size=SMALL, progress=False)
    n, last = _last_frame(out)
    assert n == len(gif_frames(3, 1 / 60)[0]) == 2     # a GIF keeps every other frame at 60 steps a second
    assert last.size == SMALL
    assert app.steps == 3
    centres = shape_centres(app.world)
    checked, blank = _not_blank_at(last, app.view, centres)
    assert checked > 0, "no body inside the picture"
    assert blank == 0, f"{blank} of {checked} visible shapes left no pixels"
    app.close()


def test_png_output_is_the_last_frame(tmp_path):
    out = tmp_path / "pile.png"
    app = record_scene("pile", out, frames=4, size=SMALL, progress=False)
    im = Image.open(out)
    assert im.format == "PNG" and im.size == SMALL
    assert np.array_equal(np.asarray(im.convert("RGB")), np.asarray(app.snapshot()))
    app.close()


def test_pillow_render_of_a_world_with_every_overlay(tmp_path):
    world, lower, upper = catalog.build("pile")
    out = tmp_path / "pile.gif"
    render(world, out, frames=5, lower=lower, upper=upper, size=SMALL, progress=False, aabbs=True, tree=True)
    n, last = _last_frame(out)
    assert n == 3                                      # frames 2, 4 and the last (5): 30 per second
    checked, blank = _not_blank_at(last, View(lower, upper, *SMALL), shape_centres(world))
    assert checked > 10 and blank == 0


def test_pillow_render_of_a_verlet_world(tmp_path):
    world, lower, upper = catalog.build("rope_cloth")
    out = tmp_path / "cloth.png"
    render(world, out, frames=3, lower=lower, upper=upper, size=SMALL, progress=False)
    _, last = _last_frame(out)
    checked, blank = _not_blank_at(last, View(lower, upper, *SMALL), shape_centres(world))
    assert checked > 100 and blank == 0


def test_bad_output_and_frames_are_rejected_before_any_work(tmp_path):
    world, lower, upper = catalog.build("balls")
    with pytest.raises(carom.CaromError, match="jpg"):
        render(world, tmp_path / "x.jpg", frames=2)
    with pytest.raises(carom.CaromError, match="frames"):
        render(world, tmp_path / "x.gif", frames=0)
    assert world.step_count == 0
    assert not list(tmp_path.iterdir())


# ------------------------------------------------------------------------------------------- drawing
def test_rounded_outline_matches_shapely_buffer():
    shapely = pytest.importorskip("shapely.geometry")
    for core, r in (([(0, 0), (2, 0), (1, 1.5)], 0.3), ([(-1, 0), (1, 0)], 0.4), ([(0, 0), (1, 0), (1, 1), (0, 1)], 0.1)):
        core = np.array(core, float)
        ours = shapely.Polygon(rounded_outline(core, r, step=math.pi / 64))
        base = shapely.LineString(core) if len(core) == 2 else shapely.Polygon(core)
        exact = base.buffer(r, quad_segs=64)
        assert ours.is_valid
        assert ours.symmetric_difference(exact).area < 2e-3 * exact.area


def test_primitives_of_a_small_world():
    w = carom.World(gravity=(0, -10))
    w.static_body.add_shape(box(5, 0.5, center=(0, -0.5)))
    ball = w.add_body(position=(0, 0.45), angle=0.3)
    ball.add_shape(Circle(0.5))
    pill = w.add_body(position=(3, 0.3), kind="kinematic")
    pill.add_shape(Capsule((-0.5, 0), (0.5, 0), 0.3))
    rounded = w.add_body(position=(-3, 1.0))
    rounded.add_shape(Polygon([(0, 0), (1, 0), (0, 1)], radius=0.1))
    w.step(1 / 60)
    prims = describe(w, contacts=True, aabbs=True, tree=True)
    discs = [p for p in prims if isinstance(p, Disc)]
    polys = [p for p in prims if isinstance(p, Poly)]
    assert len(discs) == 1 and math.isclose(discs[0].radius, 0.5)
    assert np.allclose(discs[0].center, ball.world_center)
    # the rotation mark runs from the centre to the rim along the body angle
    mark = next(p for p in prims if isinstance(p, Lines) and np.allclose(p.points[0], discs[0].center))
    assert np.allclose(mark.points[1] - mark.points[0], 0.5 * np.array([math.cos(ball.angle), math.sin(ball.angle)]))
    assert len(polys) == 3                               # ground box, capsule outline, rounded triangle
    assert any(p.fill == (120, 160, 222) for p in polys)  # the kinematic capsule's colour
    # contacts: one dot per contact point of the world
    n_points = sum(len(c["points"]) for c in w.contacts())
    assert n_points > 0
    assert sum(isinstance(p, Dot) for p in prims) == n_points
    # AABBs: one closed rectangle per shape, in world coordinates around each shape
    boxes = [p for p in prims if isinstance(p, Lines) and p.closed and p.colour == (44, 160, 44)]
    assert len(boxes) >= 4


def test_sleeping_bodies_are_dimmed():
    w = carom.World()
    b = w.add_body(position=(0, 0))
    b.add_shape(box(0.5, 0.5))
    awake = [p for p in describe(w) if isinstance(p, Poly)][0].fill
    if not hasattr(b, "sleep"):
        pytest.skip("bodies cannot be put to sleep yet")
    b.sleep()
    asleep = [p for p in describe(w) if isinstance(p, Poly)][0].fill
    assert awake == body_colour(b.index) and asleep == dimmed(awake)


def test_tree_boxes_cover_their_children():
    world, _, _ = catalog.build("pile")
    for _ in range(3):
        world.step(1 / 60)
    nodes = world.tables.bp.nodes(static=False)
    boxes = tree_boxes(nodes)
    leaves = [b for b in boxes if b[3]]
    assert len(boxes) == 2 * len(leaves) - 1 and len(leaves) == nodes["leaves"]
    # every reachable internal node's box holds its children's boxes
    stack = [nodes["root"]]
    while stack:
        i = stack.pop()
        for c in (nodes["child1"][i], nodes["child2"][i]):
            if c >= 0:
                assert np.all(nodes["lower"][i] <= nodes["lower"][c]) and np.all(nodes["upper"][c] <= nodes["upper"][i])
                stack.append(int(c))


def test_matplotlib_debug_draw():
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    world, lower, upper = catalog.build("balls")
    world.step(1 / 60)
    fig = Figure(figsize=(4, 3), dpi=60)
    ax = fig.add_subplot()
    draw_matplotlib(world, ax, aabbs=True, lower=lower, upper=upper)
    n_shapes = int(world.tables.s_alive[:world.tables.n_shapes].sum())
    assert len(ax.patches) == n_shapes
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    pixels = np.asarray(canvas.buffer_rgba())[..., :3]
    assert len(np.unique(pixels.reshape(-1, 3), axis=0)) > 20


def test_view_round_trip():
    v = View((-10, -1), (10, 14), 480, 360)
    p = np.array([[1.5, 2.0], [-10, -1], [10, 14]])
    assert np.allclose(v.to_world(v.px(p)), p)
    assert np.allclose(v.px([-10, 14]), [0, 0])      # top-left corner (y down in pixels)
    with pytest.raises(carom.CaromError):
        View((0, 0), (0, 1))


# ------------------------------------------------------------------------------------------- window (dummy)
@pytest.fixture
def app():
    from carom.render.window import DemoApp
    a = DemoApp("pile", size=(320, 240), headless=True)
    yield a
    a.close()


def _key(app, key):
    import pygame
    pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=key, mod=0, unicode=""))
    app.pump()


def test_window_pause_step_resume_through_the_event_queue(app):
    import pygame
    assert pygame.display.get_driver() == "dummy"
    for _ in range(3):
        app.frame()
    assert app.steps == 3
    _key(app, pygame.K_SPACE)
    assert app.paused
    for _ in range(4):
        app.frame()
    assert app.steps == 3 and app.frames == 7          # paused: frames still drawn, no steps
    _key(app, pygame.K_s)
    app.frame()
    app.frame()
    assert app.steps == 4                              # exactly one single step
    _key(app, pygame.K_SPACE)
    app.frame()
    assert not app.paused and app.steps == 5


def test_window_reset_switch_and_quit(app):
    import pygame
    for _ in range(2):
        app.frame()
    _key(app, pygame.K_r)
    assert app.steps == 0 and app.scene == "pile"
    names = list(catalog.scenes())
    _key(app, pygame.K_TAB)
    assert app.scene == names[(names.index("pile") + 1) % len(names)]
    _key(app, pygame.K_1)
    assert app.scene == names[0]
    _key(app, pygame.K_c)
    _key(app, pygame.K_a)
    _key(app, pygame.K_t)
    assert app.show_aabbs and app.show_tree
    app.frame()
    pygame.event.post(pygame.event.Event(pygame.QUIT))
    app.pump()
    assert not app.running


def _mouse(app, kind, world_point, button=1):
    import pygame
    pos = tuple(int(round(v)) for v in app.view.px(world_point))
    if kind == "down":
        ev = pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=pos, button=button)
    elif kind == "up":
        ev = pygame.event.Event(pygame.MOUSEBUTTONUP, pos=pos, button=button)
    else:
        ev = pygame.event.Event(pygame.MOUSEMOTION, pos=pos, rel=(0, 0), buttons=(1, 0, 0))
    app.handle_event(ev)


def _one_box_on_the_ground():
    w = carom.World(gravity=(0, -10))
    w.static_body.add_shape(box(10, 0.5, center=(0, -0.5)))
    w.add_body(position=(0, 0.5)).add_shape(box(0.5, 0.5))
    return w


def test_window_mouse_drag_pulls_a_body_to_the_mouse():
    from carom.render.window import DemoApp
    table = {"one_box": catalog.SceneInfo("one_box", _one_box_on_the_ground, "a box", (-5, -1), (5, 6))}
    app = DemoApp("one_box", size=(320, 240), headless=True, scenes=table)
    try:
        body = app.world.bodies[0]
        grab = body.world_center + np.array([0.3, 0.2])           # off-centre: the body swings about it
        _mouse(app, "down", grab)
        assert app.grabbed is not None and app.grabbed[1] == body.index
        target = np.array([-2.0, 3.0])
        _mouse(app, "move", target)
        for _ in range(90):
            app.frame()
        anchor = app.grabbed[2].anchor_b                             # the mouse joint's point on the body
        assert np.hypot(*(anchor - app.mouse)) < 0.25                # the grabbed point hangs at the mouse
        _mouse(app, "up", target)
        assert app.grabbed is None
        for _ in range(60):
            app.frame()
        assert body.position[1] < 1.0                                # released: it fell back down
    finally:
        app.close()


def test_window_click_on_empty_space_spawns_a_body(app):
    n = app.world.body_count
    _mouse(app, "down", np.array([8.0, 12.0]))
    _mouse(app, "up", np.array([8.0, 12.0]))
    assert app.world.body_count == n + 1
    _mouse(app, "down", np.array([-8.0, 12.0]), button=3)
    assert app.world.body_count == n + 2
    for _ in range(3):
        app.frame()


def test_window_drags_a_verlet_particle():
    from carom.render.window import DemoApp
    app = DemoApp("jelly", size=(320, 240), headless=True)
    try:
        body = app.world.bodies[-1]
        p = app.world.positions[body.outline[0]]
        _mouse(app, "down", p)
        assert app.grabbed is not None and app.grabbed[0] == "particle"
        i = app.grabbed[1]
        target = p + np.array([0.0, 3.0])
        _mouse(app, "move", target)
        for _ in range(5):
            app.frame()
        assert np.hypot(*(app.mouse - target)) <= 1.0 / app.view.scale      # the mouse is a pixel position
        assert np.allclose(app.world.positions[i], app.mouse, atol=1e-9)
        _mouse(app, "up", target)
        assert not app.world.pinned[i]
    finally:
        app.close()


# ------------------------------------------------------------------------------------------- command line
def test_make_demo_without_display_writes_out_pile_gif(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert main(["demo", "--frames", "3", "--size", "200x150"]) == 0
    n, last = _last_frame(tmp_path / "out" / "pile.gif")
    assert n == 2 and last.size == (200, 150)          # 3 frames at 60 per second: the 2nd and the last
    assert "3/3 frames" in capsys.readouterr().out


def test_demo_cli_out_and_errors(tmp_path, capsys):
    out = tmp_path / "b.gif"
    assert main(["demo", "balls", "--out", str(out), "--frames", "4", "--size", "160x120", "--quiet"]) == 0
    assert _last_frame(out)[0] == 2                 # 4 steps, every other one kept (30 frames a second)
    assert main(["demo", "no_such_scene"]) == 2
    assert "unknown scene" in capsys.readouterr().err
    assert main(["demo", "balls", "--out", str(tmp_path / "b.jpg")]) == 2
    with pytest.raises(SystemExit):
        main(["demo", "balls", "--frames", "0"])


def test_scenes_lists_one_per_line(capsys):
    assert main(["scenes"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split()[0] for line in lines] == ALL_SCENES
    assert all(len(line.split()) > 2 for line in lines)


def test_bench_forwards_its_arguments(monkeypatch):
    import types
    seen = []
    fake = types.ModuleType("carom.bench")
    fake.main = lambda argv: seen.append(argv) or 0
    monkeypatch.setitem(sys.modules, "carom.bench", fake)
    monkeypatch.setattr(carom, "bench", fake, raising=False)
    assert main(["bench", "--quick", "pyramid"]) == 0
    assert seen == [["--quick", "pyramid"]]


# ------------------------------------------------------------------------------------------- real window
@pytest.fixture(scope="module")
def xvfb_display():
    """A private X server (Xvfb picks a free display number and reports it through -displayfd)."""
    exe = shutil.which("Xvfb") or ("/usr/bin/Xvfb" if os.path.exists("/usr/bin/Xvfb") else None)
    if exe is None:
        pytest.skip("Xvfb not found: cannot open a real window here")
    r, w = os.pipe()
    proc = subprocess.Popen([exe, "-displayfd", str(w), "-screen", "0", "800x600x24", "-nolisten", "tcp"],
                            pass_fds=(w,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(w)
    try:
        ready, _, _ = select.select([r], [], [], 20)
        number = os.read(r, 64).decode().strip() if ready else ""
        if not number.isdigit():
            pytest.skip("Xvfb did not start")
        yield f":{number}"
    finally:
        os.close(r)
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def _display_env(display):
    env = dict(os.environ, DISPLAY=display, PYGAME_HIDE_SUPPORT_PROMPT="1")
    env.pop("SDL_VIDEODRIVER", None)
    env.pop("WAYLAND_DISPLAY", None)
    return env


WINDOW_SCRIPT = textwrap.dedent("""
    import json
    import pygame
    from carom.render.window import DemoApp
    app = DemoApp("pile", size=(480, 360), headless=None)
    driver = pygame.display.get_driver()
    for _ in range(3):
        app.pump(); app.frame()
    before = app.steps
    pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=pygame.K_SPACE, mod=0, unicode=" "))
    for _ in range(4):
        app.pump(); app.frame()
    paused_steps = app.steps
    pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=pygame.K_SPACE, mod=0, unicode=" "))
    for _ in range(2):
        app.pump(); app.frame()
    surface = pygame.display.get_surface()
    print(json.dumps({"driver": driver, "headless": app.headless, "before": before, "paused_steps": paused_steps,
                      "paused": True, "after": app.steps, "size": list(surface.get_size())}))
    app.close()
""")


def test_window_opens_on_a_display_and_pauses_on_space(xvfb_display):
    res = subprocess.run([sys.executable, "-c", WINDOW_SCRIPT], env=_display_env(xvfb_display),
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    state = json.loads(res.stdout.strip().splitlines()[-1])
    assert state["driver"] == "x11" and state["headless"] is False and state["size"] == [480, 360]
    assert state["before"] == 3
    assert state["paused_steps"] == 3          # space paused the world: the step counter stopped
    assert state["after"] == 5                 # and space again resumed it


def test_carom_demo_uses_the_window_when_there_is_a_display(xvfb_display, tmp_path):
    res = subprocess.run([sys.executable, "-m", "carom.cli", "demo", "balls", "--frames", "5"],
                         env=_display_env(xvfb_display), cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert not (tmp_path / "out").exists()     # a window, not a file


def test_carom_demo_falls_back_to_a_file_when_the_display_does_not_answer(tmp_path):
    number = next(n for n in range(4242, 4300) if not os.path.exists(f"/tmp/.X11-unix/X{n}"))
    res = subprocess.run([sys.executable, "-m", "carom.cli", "demo", "balls", "--frames", "2", "--quiet"],
                         env=_display_env(f":{number}"), cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert _last_frame(tmp_path / "out" / "balls.gif")[0] == len(gif_frames(2, 1 / 60)[0]) == 1


# ------------------------------------------------------------------------------------------- GIF timing
@pytest.mark.parametrize("dt", [1 / 60, 1 / 30, 1 / 120, 0.1])
def test_gif_delays_are_real_time_and_never_the_10ms_browsers_slow_down(tmp_path, dt):
    """GIF delays are hundredths of a second, and browsers show 0 or 10 ms as 100 ms. The stored delays must be
    at least 20 ms each and add up to the simulated time (to the 10 ms rounding of the last delay)."""
    world, lower, upper = catalog.build("balls")
    frames = 12
    out = tmp_path / "t.gif"
    render(world, out, frames=frames, dt=dt, lower=lower, upper=upper, size=(64, 48), progress=False)
    im = Image.open(out)
    delays = []
    for k in range(im.n_frames):
        im.seek(k)
        delays.append(im.info["duration"])
    assert min(delays) >= 20
    stride = max(1, math.ceil(0.02 / dt - 1e-9))                  # steps per kept frame
    assert im.n_frames == math.ceil(frames / stride)
    assert abs(sum(delays) / 1000 - frames * dt) <= 0.011


def test_a_three_second_demo_gif_plays_three_seconds_at_30_frames_a_second():
    keep, delays = gif_frames(180, 1 / 60)
    assert len(keep) == 90 and sum(delays) == 3000 and set(delays) == {30, 40}


def test_recordings_leave_contacts_out_unless_asked(tmp_path):
    from carom.render.draw import CONTACT
    quiet = record_scene("pile", tmp_path / "a.png", frames=30, size=SMALL, progress=False)
    loud = record_scene("pile", tmp_path / "b.png", frames=30, size=SMALL, progress=False, contacts=True)
    assert not quiet.show_contacts and loud.show_contacts
    red = [np.sum(np.all(np.abs(np.asarray(Image.open(tmp_path / f).convert("RGB"), int) - np.array(CONTACT)) < 30,
                         axis=-1)) for f in ("a.png", "b.png")]
    assert red[0] == 0 and red[1] > 0
    quiet.close()
    loud.close()


def test_the_car_scene_camera_follows_the_chassis(tmp_path):
    app = record_scene("car", tmp_path / "car.png", frames=240, size=SMALL, progress=False)
    chassis = app.world.positions[0]
    assert chassis[0] > 3.0                                   # the car has driven off its start
    centre = 0.5 * (app.view.lower + app.view.upper)
    lower, upper = catalog.FRAMES["car"]
    home = 0.5 * (np.array(lower) + np.array(upper))
    assert np.allclose(centre - home, chassis - np.array([0.0, 1.4]), atol=0.05)
    app.close()


def test_round_bodies_show_their_rotation_with_a_radius_line():
    w = carom.World(gravity=(0, 0))
    b = w.add_body(position=(1.0, 2.0), angle=0.7)
    b.add_shape(Circle(0.5))
    lines = [p for p in describe(w) if isinstance(p, Lines)]
    assert len(lines) == 1
    start, end = lines[0].points
    assert np.allclose(start, (1.0, 2.0)) and np.allclose(end, (1.0 + 0.5 * math.cos(0.7), 2.0 + 0.5 * math.sin(0.7)))
