"""The demo window: :class:`DemoApp`, a pygame-ce loop a test (or a recorder) can drive one call at a time.

``handle_event(event)`` reacts to one pygame event, ``frame()`` advances the world one step (unless paused)
and draws; ``run()`` is only the loop ``pump → frame → tick``. With ``headless=True`` the SDL "dummy" video
driver is used: nothing appears on screen, but the surface, the event queue and every control work, so the
same class writes the headless GIFs (:func:`carom.render.headless.record_scene`).

Controls: space pause/resume · → or S single step (pauses) · R reset · Tab / N next scene, Backspace / B
previous, 1–9 scene by number · C contacts · A AABBs · T broad-phase tree · J joints · left drag moves a body
(or a Verlet particle) · left click on empty space or right click spawns a body · Esc / Q quit.

Dragging a rigid body is Box2D's mouse joint (:class:`carom.joints.Mouse`): grabbing adds one at the grabbed
point (a spring of 5 Hz, damping ratio 0.7, at most 1000 × the body's mass in newtons, so it can lift the
body and whatever hangs from it, but not fling it through walls), each frame moves its target to the mouse,
and letting go removes it; the body hangs from where it was grabbed, its turning damped while it is held
(``GRAB_ANGULAR_DAMPING``). A Verlet particle is simply pinned to the mouse while held.
"""
from typing import TYPE_CHECKING
if TYPE_CHECKING:  # (annotations only)
    from typing import Tuple
    from .._types import Any, ArrayLike, Bits, Optional, Points, TransformLike, Vec2
import math
import os
import sys
import time

import numpy as np
from ._deps import require

from ..rigid.joints import Mouse
from . import catalog
from .draw import View, describe, BACKGROUND, INK

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

#: The mouse joint's strongest pull, per kilogram of the grabbed body (Box2D's samples: 1000 × mass).
GRAB_FORCE_PER_KG = 1000.0
#: The angular damping (1/s) of a body while it is held: carom's mouse joint pulls the point only, and a body
#: held off its centre would swing about that point like a pendulum for as long as it is held (Box2D's mouse
#: joint damps the body's turning itself; here the body's own ``angular_damping`` does, and is put back on
#: release).
GRAB_ANGULAR_DAMPING = 5.0
#: Scenes with more bodies than this start with contact drawing off (C turns it on): tens of thousands of
#: contact markers hide the bodies and cost more than the step.
CONTACTS_BODY_LIMIT = 1000
#: Scenes with more joints than this start with joint drawing off (J turns it on): every joint is read through
#: its handle, some microseconds each, and the joint grid's 20,000 would take longer than its step.
JOINTS_DRAW_LIMIT = 1000


def display_available() -> bool:
    """True when a window can be opened: not forced headless, and on X11/Wayland systems a display is set."""
    if os.environ.get("SDL_VIDEODRIVER", "").lower() in ("dummy", "offscreen"):
        return False
    if sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True


#: SDL video drivers that show nothing on screen (SDL falls back to "offscreen" when no display answers).
INVISIBLE_DRIVERS = ("dummy", "offscreen")


def _init_pygame(headless):
    """Initialise only pygame's display and font modules (not audio, which can block on machines without
    sound). Headless: the dummy driver. A window: fail with RuntimeError if SDL found no visible driver."""
    pygame = require("pygame")
    if headless:
        if pygame.display.get_init() and pygame.display.get_driver() != "dummy":
            pygame.display.quit()
        os.environ["SDL_VIDEODRIVER"] = "dummy"
    pygame.display.init()
    if not headless and pygame.display.get_driver() in INVISIBLE_DRIVERS:
        driver = pygame.display.get_driver()
        pygame.display.quit()
        raise RuntimeError(f"no display to open a window on (SDL chose the {driver!r} driver)")
    pygame.font.init()
    return pygame


class DemoApp:
    """A scene in a pygame window (or the dummy driver when ``headless``), stepped at ``dt`` per frame.

    Public state for tests and tools: ``world``, ``scene``, ``view``, ``paused``, ``steps`` (world steps since
    the scene was (re)loaded), ``frames`` (frames drawn), ``running``, ``step_ms`` (smoothed step time),
    ``show_contacts``/``show_aabbs``/``show_tree``/``show_joints``, ``grabbed`` (None, ``("body", index,
    mouse joint)`` or ``("particle", index, was pinned)``).

    ``headless=None`` opens a window when :func:`display_available` says so and falls back to the dummy
    driver if it cannot; ``headless=False`` raises RuntimeError instead. ``joints`` True or False draws the
    joints of every scene or of none; None (default) draws them for scenes of at most ``JOINTS_DRAW_LIMIT``.
    ``contacts`` likewise for contact points (None: for scenes of at most ``CONTACTS_BODY_LIMIT`` bodies).

    Hooks for examples and tools: ``follow(world) -> (x, y)`` moves the camera with a subject (default: the
    scene's entry in :data:`carom.render.catalog.FOLLOW`); ``on_step(app)`` runs before every world step (steer,
    push, query; it may set ``app.caption``, a line added to the heads-up text); ``overlay(app)`` returns extra
    primitives (:mod:`carom.render.draw`) drawn over the world. ``title`` is the window's title.

    ``size`` is the window (width, height) in pixels, ``seed`` seeds the shapes a click drops, ``hud`` shows the
    heads-up text, ``scenes`` is the table of scenes (default: :func:`carom.render.catalog.scenes`).
    """

    def __init__(self, scene: "str" = "pile", size: "Tuple[int, int]" = (960, 720), headless: "Optional[bool]" = None,
                 dt: "float" = 1 / 60, seed: "int" = 0, hud: "bool" = True, scenes: "Any" = None,
                 joints: "Optional[bool]" = None, contacts: "Optional[bool]" = None, follow: "Any" = None,
                 on_step: "Any" = None, overlay: "Any" = None, title: "str" = "carom demo"):
        self.headless = (not display_available()) if headless is None else bool(headless)
        try:
            self.pygame = pg = _init_pygame(self.headless)
        except (RuntimeError, OSError):       # pygame.error is a RuntimeError
            if headless is not None or self.headless:
                raise
            self.headless = True               # "automatic" asked for a window that cannot open
            self.pygame = pg = _init_pygame(True)
        self.size = (int(size[0]), int(size[1]))
        self.screen = pg.display.set_mode(self.size)
        pg.display.set_caption(str(title))
        self.font = pg.font.Font(None, 18 if self.size[1] < 500 else 22)
        self.table = scenes or catalog.scenes()
        self.names = list(self.table)
        self.dt = float(dt)
        self.rng = np.random.default_rng(seed)
        self.hud = hud
        self.paused = False
        self.running = True
        self.show_aabbs = False
        self.show_tree = False
        self.joints = joints
        self.contacts = contacts
        self.follow = follow
        self.on_step = on_step
        self.overlay = overlay
        self.caption = ""
        self.frames = 0
        self._single_step = False
        self.load(scene)

    # ------------------------------------------------------------------------------------------ scenes
    def load(self, name: "str") -> None:
        """(Re)build scene ``name``; counters, step time and any grab start over."""
        self.world, lower, upper = catalog.build(name, self.table)
        self.scene = name
        self.rigid = hasattr(self.world, "tables")
        self.view = View(lower, upper, *self.size)
        self.steps = 0
        self.step_ms = 0.0
        self.grabbed = None
        count = self.world.body_count if self.rigid else len(self.world.bodies)
        self.show_contacts = count <= CONTACTS_BODY_LIMIT if self.contacts is None else bool(self.contacts)
        if self.joints is None:
            self.show_joints = self.rigid and self.world.joint_count <= JOINTS_DRAW_LIMIT
        else:
            self.show_joints = bool(self.joints)
        self.mouse: "Any" = None
        self._subject = self.follow if self.follow is not None else catalog.FOLLOW.get(name)
        self._home = None if self._subject is None else (self.view.lower.copy(), self.view.upper.copy(),
                                                         np.asarray(self._subject(self.world), float))

    def reset(self) -> None:
        """Rebuild the current scene."""
        self.load(self.scene)

    def switch(self, offset: "int") -> None:
        """Load the scene ``offset`` places after (negative: before) the current one in the table."""
        i = self.names.index(self.scene) if self.scene in self.names else 0
        self.load(self.names[(i + offset) % len(self.names)])

    # ------------------------------------------------------------------------------------------ events
    def handle_event(self, event: "Any") -> None:
        """React to one pygame event (keys, mouse, window close)."""
        pg = self.pygame
        if event.type == pg.QUIT:
            self.running = False
        elif event.type == pg.KEYDOWN:
            key = event.key
            if key == pg.K_SPACE:
                self.paused = not self.paused
            elif key in (pg.K_RIGHT, pg.K_s, pg.K_PERIOD):
                self.paused = True
                self._single_step = True
            elif key == pg.K_r:
                self.reset()
            elif key in (pg.K_TAB, pg.K_n):
                self.switch(+1)
            elif key in (pg.K_BACKSPACE, pg.K_b):
                self.switch(-1)
            elif pg.K_1 <= key <= pg.K_9 and key - pg.K_1 < len(self.names):
                self.load(self.names[key - pg.K_1])
            elif key == pg.K_c:
                self.show_contacts = not self.show_contacts
            elif key == pg.K_a:
                self.show_aabbs = not self.show_aabbs
            elif key == pg.K_t:
                self.show_tree = not self.show_tree
            elif key == pg.K_j:
                self.show_joints = not self.show_joints
            elif key in (pg.K_ESCAPE, pg.K_q):
                self.running = False
        elif event.type == pg.MOUSEBUTTONDOWN:
            p = self.view.to_world(event.pos)
            self.mouse = p
            if event.button == 1 and self._grab(p):
                return
            if event.button in (1, 3):
                self.spawn(p)
        elif event.type == pg.MOUSEMOTION:
            self.mouse = self.view.to_world(event.pos)
        elif event.type == pg.MOUSEBUTTONUP and event.button == 1:
            self._release()

    def pump(self) -> None:
        """Handle every event waiting in pygame's queue."""
        for event in self.pygame.event.get():
            self.handle_event(event)

    # ------------------------------------------------------------------------------------------ mouse
    def body_at(self, p: "Vec2") -> "Optional[int]":
        """Index of the dynamic rigid body with a shape containing world point ``p``, or None."""
        w = self.world
        ns = w.tables.n_shapes
        for s in np.flatnonzero(w.tables.s_alive[:ns])[::-1]:
            b = int(w.tables.s_body[s])
            if w.tables.kind[b] != 2:
                continue
            x, y, c, sn = w.tables.origin_transform(b)
            o, n = int(w.tables.s_offset[s]), int(w.tables.s_count[s])
            v = w.tables.verts[o:o + n]
            core = np.stack([c * v[:, 0] - sn * v[:, 1] + x, sn * v[:, 0] + c * v[:, 1] + y], 1)
            if _core_distance(core, p) <= w.tables.s_radius[s]:
                return b
        return None

    def _grab(self, p):
        if self.rigid:
            b = self.body_at(p)
            if b is None:
                return False
            body = _body_handle(self.world, b)
            pull = self.world.add_joint(Mouse(body, p, max_force=GRAB_FORCE_PER_KG * body.mass))
            self.grabbed = ("body", b, pull)
            self._held_damping = body.angular_damping
            body.angular_damping = max(body.angular_damping, GRAB_ANGULAR_DAMPING)
            return True
        pos = self.world.positions
        free = np.isfinite(self.world.masses)
        if not free.any():
            return False
        dist = np.where(free, np.hypot(*(pos - p).T), np.inf)
        i = int(np.argmin(dist))
        if dist[i] > max(0.5, 12 / self.view.scale):
            return False
        self.grabbed = ("particle", i, bool(self.world.pinned[i]))
        return True

    def _release(self):
        if self.grabbed is not None:
            kind, index, extra = self.grabbed
            if kind == "particle" and not extra:
                self.world.unpin(index)
            elif kind == "body" and extra.alive:
                _body_handle(self.world, index).angular_damping = self._held_damping
                self.world.remove(extra)
        self.grabbed = None

    def _drag(self):
        """Move the grabbed body's mouse joint's target (or pin the grabbed particle) to the mouse. A body that
        is gone (its joint went with it) is let go."""
        if self.grabbed is None or self.mouse is None:
            return
        kind, index, extra = self.grabbed
        if kind == "particle":
            self.world.pin(index, self.mouse)
        elif extra.alive:
            extra.target = self.mouse
        else:
            self.grabbed = None

    def spawn(self, p: "Vec2") -> None:
        """Drop a random body (box, circle or capsule; a box in a Verlet world) at world point ``p``."""
        from ..scenes.rigid_scenes import random_shape
        rng = self.rng
        if not self.rigid:
            self.world.add_box(center=tuple(p), width=rng.uniform(0.5, 1.2), height=rng.uniform(0.5, 1.2),
                               angle=rng.uniform(0, math.pi))
            return
        body = self.world.add_body(position=tuple(p), angle=rng.uniform(0, math.pi))
        body.add_shape(random_shape(rng, int(rng.integers(3))), density=1.0)

    # ------------------------------------------------------------------------------------------ frames
    def frame(self) -> bool:
        """One frame: drag, one world step unless paused (a requested single step still runs), draw.
        Returns ``running``."""
        if not self.paused or self._single_step:
            self._single_step = False
            self._drag()
            if self.on_step is not None:
                self.on_step(self)
            t0 = time.perf_counter()
            self.world.step(self.dt)
            ms = 1e3 * (time.perf_counter() - t0)
            self.step_ms = ms if self.steps == 0 else 0.9 * self.step_ms + 0.1 * ms
            self.steps += 1
            self._follow()
        self.draw()
        self.frames += 1
        if not self.headless:
            self.pygame.display.flip()
        return self.running

    def _follow(self):
        """Move the camera with the followed subject: the view keeps the framing it had when the scene was
        loaded, shifted by how far the subject has moved since."""
        if self._home is None:
            return
        lower, upper, start = self._home
        shift = np.asarray(self._subject(self.world), float) - start
        if np.all(np.isfinite(shift)):
            self.view = View(lower + shift, upper + shift, *self.size)

    def draw(self) -> None:
        """Clear the surface and draw the world, the ``overlay`` primitives, and the heads-up text."""
        from .backends import to_pygame
        self.screen.fill(BACKGROUND)
        primitives = describe(self.world, contacts=self.show_contacts, aabbs=self.show_aabbs,
                              tree=self.show_tree, joints=self.show_joints)
        if self.overlay is not None:
            primitives = primitives + list(self.overlay(self))
        to_pygame(primitives, self.view, self.screen)
        if self.hud:
            self._draw_hud()

    def _draw_hud(self):
        if self.rigid:
            count = f"{self.world.body_count} bodies"
        else:
            count = f"{len(self.world.bodies)} bodies, {self.world.particle_count} particles"
        state = "paused" if self.paused else f"{self.step_ms:6.2f} ms/step"
        lines = [f"{self.scene}   step {self.steps}   t = {self.steps * self.dt:5.2f} s   {count}   {state}"]
        if self.caption:
            lines.append(str(self.caption))
        if self.size[0] >= 640:
            lines.append("space pause  s step  r reset  tab scene  c/a/t/j contacts/aabbs/tree/joints  drag/click")
            if len(self.names) > 1:
                lines.append("  ".join(f"{k + 1}:{n}" for k, n in enumerate(self.names[:9])))
        images = [self.font.render(text, True, INK) for text in lines]
        width = max(img.get_width() for img in images) + 12
        height = sum(img.get_height() + 1 for img in images) + 6
        backdrop = self.pygame.Surface((width, height), self.pygame.SRCALPHA)
        backdrop.fill(BACKGROUND + (210,))          # translucent, so the HUD stays legible over bodies
        self.screen.blit(backdrop, (0, 0))
        y = 4
        for img in images:
            self.screen.blit(img, (6, y))
            y += img.get_height() + 1

    def snapshot(self) -> "Any":
        """The current picture as a ``PIL.Image`` (RGB)."""
        Image = require("PIL.Image")
        data = self.pygame.image.tobytes(self.screen, "RGB")
        return Image.frombytes("RGB", self.size, data)

    def run(self, max_frames: "Optional[int]" = None, fps: "int" = 60) -> "DemoApp":
        """The interactive loop; stops on quit or after ``max_frames`` frames.

        ``fps`` caps the frame rate (frames per second).
        """
        clock = self.pygame.time.Clock()
        while self.running and (max_frames is None or self.frames < max_frames):
            self.pump()
            if not self.running:
                break
            self.frame()
            clock.tick(fps)
        return self

    def close(self) -> None:
        """Close the window (quit pygame's display)."""
        self.pygame.display.quit()


def _body_handle(world, index):
    return world.body_handle(index)


def _core_distance(core, p):
    """Distance from point ``p`` to a convex core (1 point, a segment, or a CCW polygon; 0 inside)."""
    n = core.shape[0]
    if n == 1:
        return float(np.hypot(*(p - core[0])))
    a = core
    b = np.roll(core, -1, axis=0)
    e = b - a
    if n >= 3:
        cross = e[:, 0] * (p[1] - a[:, 1]) - e[:, 1] * (p[0] - a[:, 0])
        if np.all(cross >= 0.0):
            return 0.0
    t = np.clip(((p - a) * e).sum(1) / np.maximum((e * e).sum(1), 1e-300), 0.0, 1.0)
    q = a + t[:, None] * e
    return float(np.min(np.hypot(*(q - p).T)))
