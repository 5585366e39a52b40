"""CarRacing on carom: Gymnasium's ``CarRacing-v3`` (pixels; continuous or discrete actions; ``domain_randomize``)
without Box2D.

The task, as an agent sees it, is Gymnasium 1.x's: a random closed track of tiles (12 jittered checkpoints, the
original's generator and random numbers, so a seed gives the original's track), a rear-wheel-drive car with the
original's tyre model (``carom.envs.car_dynamics``), and a 96 × 96 × 3 top-down picture that turns with the car
as the observation. The reward is −0.1 a frame and +1000/N for each of the N tiles the first time a wheel
touches it; the episode ends when every tile has been visited or, after ``lap_complete_percent`` of them, the
start tile is touched again, and with −100 when the car leaves the 333 m square playfield. Actions: continuous
(steer −1..1, gas 0..1, brake 0..1) or discrete (nothing, left, right, gas 0.2, brake 0.8), as there.

Where Box2D 2.3 and carom differ, and what was done about it:

* The tiles are Box2D sensor fixtures whose contact listener keeps, per wheel, the tiles under it (for the road
  friction) and counts first visits. Here each tile is a carom sensor shape (on a static body of its own, as in
  the original) and the same bookkeeping runs on the step's begin and end events (``World.contact_events``), as
  arrays. A sensor reports overlap of the shapes (carom: no skin), Box2D's fixtures overlapped within their
  1 cm skins: the visits happen at the same places to within 2 cm.
* The car touches nothing, so the engines differ only in how they hold the wheels on their joints; the tyre
  model, which is the car's physics, is the original's (``car_dynamics``).
* The picture: the original draws every frame at 1000 × 800 and shrinks it to 96 × 96 (``smoothscale``); here
  the same scene is drawn at ``STATE_DRAW_SCALE`` of that size and shrunk the same way, which gives the same
  picture to a few levels of each colour and takes a fraction of the time. ``rgb_array`` (600 × 400) and
  ``human`` (1000 × 800) are drawn likewise. Tiles, grass, borders, the car, its wheels' turning stripes, skid
  marks (not in the observation, as there), the bar of indicators and the score are the original's.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, cast

import numpy as np

import gymnasium as gym
from gymnasium import spaces
from gymnasium.error import InvalidAction, ResetNeeded
from gymnasium.utils import EzPickle

import carom
from carom.geometry import Polygon

from ._common import PygameWindow, pygame_modules, step_one_thread, warn_no_render_mode
from .car_dynamics import (Car, FRICTION_LIMIT, HULL_COLOR, HULL_POLYS, SIZE, WHEEL_COLOR, WHEEL_POLY, WHEEL_R,
                           WHEEL_W, WHEEL_WHITE)

if TYPE_CHECKING:
    import pygame

STATE_W = STATE_H = 96
VIDEO_W, VIDEO_H = 600, 400
WINDOW_W, WINDOW_H = 1000, 800
SCALE = 6.0
TRACK_RAD = 900 / SCALE
PLAYFIELD = 2000 / SCALE
FPS = 50
ZOOM = 2.7
TRACK_DETAIL_STEP = 21 / SCALE
TRACK_TURN_RATE = 0.31
TRACK_WIDTH = 40 / SCALE
BORDER = 8 / SCALE
BORDER_MIN_COUNT = 4
GRASS_DIM = PLAYFIELD / 20.0
MAX_SHAPE_DIM = max(GRASS_DIM, TRACK_WIDTH, TRACK_DETAIL_STEP) * math.sqrt(2) * ZOOM * SCALE
CHECKPOINTS = 12

#: the observation is drawn at this fraction of the original's 1000 × 800 before shrinking to 96 × 96
STATE_DRAW_SCALE = 0.3
#: rgb_array frames (600 × 400) are drawn at this fraction of 1000 × 800
VIDEO_DRAW_SCALE = 0.6


class CarRacing(PygameWindow, gym.Env, EzPickle):
    """Drive a lap from pixels (Gymnasium's ``CarRacing-v3`` on carom; the module docstring says what differs
    from the Box2D original).

    ``continuous``: ``Box([-1, 0, 0], [1, 1, 1])`` actions (steer, gas, brake) instead of ``Discrete(5)`` (nothing,
    left, right, gas, brake). ``domain_randomize``: random road, background and grass colours, drawn anew at each
    reset unless its ``options`` hold ``{"randomize": False}``. ``lap_complete_percent``: the fraction of the
    tiles to visit before touching the start tile ends the lap. ``verbose``: print the track generator's messages.
    ``render_mode``: None, ``"human"`` (a 1000 × 800 window at ``render_fps``), ``"rgb_array"`` (``render``
    returns 400 × 600 × 3 pixels) or ``"state_pixels"`` (96 × 96 × 3, the observation's view)."""

    metadata = {"render_modes": ["human", "rgb_array", "state_pixels"], "render_fps": FPS}

    def __init__(self, render_mode: str | None = None, verbose: bool = False, lap_complete_percent: float = 0.95,
                 domain_randomize: bool = False, continuous: bool = True):
        EzPickle.__init__(self, render_mode, verbose, lap_complete_percent, domain_randomize, continuous)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got "
                             f"{render_mode!r}")
        self.continuous = bool(continuous)
        self.domain_randomize = bool(domain_randomize)
        self.lap_complete_percent = float(lap_complete_percent)
        self.verbose = verbose
        self.render_mode = render_mode
        self._init_colors()
        if self.continuous:
            self.action_space = spaces.Box(np.array([-1, 0, 0], np.float32), np.array([+1, +1, +1], np.float32))
        else:
            self.action_space = spaces.Discrete(5)
        self.observation_space = spaces.Box(low=0, high=255, shape=(STATE_H, STATE_W, 3), dtype=np.uint8)
        self.world: carom.World | None = None
        self.car: Car | None = None
        self.reward = 0.0
        self.prev_reward = 0.0
        self.new_lap = False
        self.screen: pygame.Surface | None = None
        self.clock: pygame.time.Clock | None = None
        self.surf: pygame.Surface | None = None
        self.isopen = True
        self._fonts: dict[int, pygame.font.Font] = {}
        self._grass = self._grass_polygons()

    # --- colours and track (the original's random numbers, in its order) ------------------------------------
    def _init_colors(self) -> None:
        if self.domain_randomize:
            self.road_color = self.np_random.uniform(0, 210, size=3)
            self.bg_color = self.np_random.uniform(0, 210, size=3)
            self.grass_color = np.copy(self.bg_color)
            self.grass_color[self.np_random.integers(3)] += 20
        else:
            self.road_color = np.array([102, 102, 102])
            self.bg_color = np.array([102, 204, 102])
            self.grass_color = np.array([102, 230, 102])

    @staticmethod
    def _grass_polygons() -> np.ndarray:
        squares = []
        for x in range(-20, 20, 2):
            for y in range(-20, 20, 2):
                squares.append([(GRASS_DIM * x + GRASS_DIM, GRASS_DIM * y), (GRASS_DIM * x, GRASS_DIM * y),
                                (GRASS_DIM * x, GRASS_DIM * y + GRASS_DIM),
                                (GRASS_DIM * x + GRASS_DIM, GRASS_DIM * y + GRASS_DIM)])
        return np.array(squares)

    def _create_track(self) -> bool:
        """The original's track generator: checkpoints jittered around a circle, a path that steers towards them
        lap after lap, one lap cut out where the path crosses the start angle twice, then tiles and the red and
        white borders of sharp bends. False when the lap does not close (the caller tries again)."""
        rng = self.np_random
        checkpoints = []
        for c in range(CHECKPOINTS):
            noise = rng.uniform(0, 2 * math.pi * 1 / CHECKPOINTS)
            alpha = 2 * math.pi * c / CHECKPOINTS + noise
            rad = rng.uniform(TRACK_RAD / 3, TRACK_RAD)
            if c == 0:
                alpha = 0
                rad = 1.5 * TRACK_RAD
            if c == CHECKPOINTS - 1:
                alpha = 2 * math.pi * c / CHECKPOINTS
                self.start_alpha = 2 * math.pi * (-0.5) / CHECKPOINTS
                rad = 1.5 * TRACK_RAD
            checkpoints.append((alpha, rad * math.cos(alpha), rad * math.sin(alpha)))

        x, y, beta = 1.5 * TRACK_RAD, 0.0, 0.0
        dest_i = 0
        laps = 0
        track = []
        no_freeze = 2500
        visited_other_side = False
        while True:
            alpha = math.atan2(y, x)
            if visited_other_side and alpha > 0:
                laps += 1
                visited_other_side = False
            if alpha < 0:
                visited_other_side = True
                alpha += 2 * math.pi
            while True:
                failed = True
                while True:
                    dest_alpha, dest_x, dest_y = checkpoints[dest_i % len(checkpoints)]
                    if alpha <= dest_alpha:
                        failed = False
                        break
                    dest_i += 1
                    if dest_i % len(checkpoints) == 0:
                        break
                if not failed:
                    break
                alpha -= 2 * math.pi
            r1x, r1y = math.cos(beta), math.sin(beta)
            p1x, p1y = -r1y, r1x
            proj = r1x * (dest_x - x) + r1y * (dest_y - y)
            while beta - alpha > 1.5 * math.pi:
                beta -= 2 * math.pi
            while beta - alpha < -1.5 * math.pi:
                beta += 2 * math.pi
            prev_beta = beta
            proj *= SCALE
            if proj > 0.3:
                beta -= min(TRACK_TURN_RATE, abs(0.001 * proj))
            if proj < -0.3:
                beta += min(TRACK_TURN_RATE, abs(0.001 * proj))
            x += p1x * TRACK_DETAIL_STEP
            y += p1y * TRACK_DETAIL_STEP
            track.append((alpha, prev_beta * 0.5 + beta * 0.5, x, y))
            if laps > 4:
                break
            no_freeze -= 1
            if no_freeze == 0:
                break

        i1, i2 = -1, -1
        i = len(track)
        while True:
            i -= 1
            if i == 0:
                return False
            through_start = track[i][0] > self.start_alpha >= track[i - 1][0]
            if through_start and i2 == -1:
                i2 = i
            elif through_start and i1 == -1:
                i1 = i
                break
        if self.verbose:
            print(f"Track generation: {i1}..{i2} -> {i2 - i1}-tiles track")
        track = track[i1:i2 - 1]
        first_beta = track[0][1]
        glue = math.sqrt((math.cos(first_beta) * (track[0][2] - track[-1][2])) ** 2
                         + (math.sin(first_beta) * (track[0][3] - track[-1][3])) ** 2)
        if glue > TRACK_DETAIL_STEP:
            return False

        n = len(track)
        border = [False] * n
        for i in range(n):
            good = True
            oneside = 0
            for neg in range(BORDER_MIN_COUNT):
                beta1 = track[i - neg][1]
                beta2 = track[i - neg - 1][1]
                good &= abs(beta1 - beta2) > TRACK_TURN_RATE * 0.2
                oneside += np.sign(beta1 - beta2)
            border[i] = good and abs(oneside) == BORDER_MIN_COUNT
        for i in range(n):
            for neg in range(BORDER_MIN_COUNT):
                border[i - neg] |= border[i]

        tiles, shades, borders = [], [], []
        for i in range(n):
            _, beta1, x1, y1 = track[i]
            _, beta2, x2, y2 = track[i - 1]
            c1, s1, c2, s2 = math.cos(beta1), math.sin(beta1), math.cos(beta2), math.sin(beta2)
            w = TRACK_WIDTH
            tiles.append([(x1 - w * c1, y1 - w * s1), (x1 + w * c1, y1 + w * s1), (x2 + w * c2, y2 + w * s2),
                          (x2 - w * c2, y2 - w * s2)])
            shades.append(0.01 * (i % 3) * 255)
            if border[i]:
                side = np.sign(beta2 - beta1)
                w0, w1 = side * TRACK_WIDTH, side * (TRACK_WIDTH + BORDER)
                borders.append(([(x1 + w0 * c1, y1 + w0 * s1), (x1 + w1 * c1, y1 + w1 * s1),
                                 (x2 + w1 * c2, y2 + w1 * s2), (x2 + w0 * c2, y2 + w0 * s2)],
                                (255, 255, 255) if i % 2 == 0 else (255, 0, 0)))
        self.track = track
        self.tiles = np.array(tiles)
        self.tile_shade = np.array(shades)
        self.borders = borders
        return True

    def _build(self) -> None:
        world = carom.World(gravity=(0.0, 0.0), substeps=SUBSTEPS)
        n = len(self.track)
        shape_rows = []
        for quad in self.tiles:
            tile = world.add_body(kind="static")
            shape_rows.append(tile.add_shape(Polygon(quad), sensor=True).index)
        car = Car(world, *self.track[0][1:4])
        # shape row -> tile index, and -> wheel index (hull shapes: -1; they recolour tiles only)
        rows = max(max(shape_rows), int(car.wheel_shape_rows.max()), max(s.index for s in car.hull.shapes)) + 1
        self._tile_of_shape = np.full(rows, -1, np.int64)
        self._tile_of_shape[shape_rows] = np.arange(n)
        self._wheel_of_shape = np.full(rows, -1, np.int64)
        self._wheel_of_shape[car.wheel_shape_rows] = np.arange(4)
        self._hull_shape = np.zeros(rows, np.bool_)
        self._hull_shape[[s.index for s in car.hull.shapes]] = True
        self.tile_visited = np.zeros(n, np.bool_)
        self.tile_plain = np.zeros(n, np.bool_)        # touched once: drawn in the plain road colour
        self._under = np.zeros((4, n), np.int64)       # per wheel, per tile: overlapping (the listener's tiles)
        self.world, self.car = world, car

    # --- Gymnasium API ------------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        """Start an episode: a new track and car (from ``seed`` when given, else from the environment's random
        generator), then one step with no action; returns (observation, {}). ``options``: with
        ``domain_randomize``, ``{"randomize": False}`` keeps the colours of the last episode."""
        super().reset(seed=seed)
        self.reward = 0.0
        self.prev_reward = 0.0
        self.tile_visited_count = 0
        self.t = 0.0
        self.new_lap = False
        if self.domain_randomize:
            randomize = True
            if isinstance(options, dict) and "randomize" in options:
                randomize = options["randomize"]
            if randomize:
                self.road_color = self.np_random.uniform(0, 210, size=3)
                self.bg_color = self.np_random.uniform(0, 210, size=3)
                self.grass_color = np.copy(self.bg_color)
                self.grass_color[self.np_random.integers(3)] += 20
        while not self._create_track():
            if self.verbose:
                print("retry to generate track (normal if there are not many instances of this message)")
        self._build()
        if self.render_mode == "human":
            self.render()
        return self.step(None)[0], {}

    def _apply_action(self, action: Any) -> None:
        car = self.car
        assert car is not None
        if self.continuous:
            a = None if isinstance(action, str) else np.asarray(action, dtype=np.float64)
            if (a is None or a.shape != (3,) or not np.isfinite(a).all() or not -1.0 <= a[0] <= 1.0
                    or not 0.0 <= a[1] <= 1.0 or not 0.0 <= a[2] <= 1.0):
                raise InvalidAction(f"you passed the invalid action `{action!r}`. The supported action_space is "
                                    f"`{self.action_space}` (steer -1..1, gas 0..1, brake 0..1)")
            car.steer(-a[0])
            car.gas(a[1])
            car.brake(a[2])
        else:
            if not self.action_space.contains(action):
                raise InvalidAction(f"you passed the invalid action `{action!r}`. The supported action_space is "
                                    f"`{self.action_space}`")
            car.steer(-0.6 * (action == 1) + 0.6 * (action == 2))
            car.gas(0.2 * (action == 3))
            car.brake(0.8 * (action == 4))

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Drive the car with ``action`` (steer, gas, brake: ``continuous``; else 0-4; None, as ``reset`` does,
        leaves the controls and gives no reward; anything else raises ``InvalidAction``) and advance the world
        1/50 s; returns (observation, reward, terminated, truncated (always False: the time limit is the
        registration's), info: ``lap_finished`` when the episode ends)."""
        if self.world is None or self.car is None:
            raise ResetNeeded("Cannot call env.step() before calling env.reset()")
        if action is not None:
            self._apply_action(action)
        world, car = self.world, self.car
        on_road = cast(np.ndarray, self._under.any(axis=1))      # (one per wheel: an array, not a scalar)
        car.on_road = on_road
        friction = np.where(on_road, FRICTION_LIMIT, 0.6 * FRICTION_LIMIT)
        drawing = self.render_mode in ("human", "rgb_array")
        car.step(1.0 / FPS, world.angles, world.velocities, world.positions if drawing else None, friction)
        step_one_thread(world, 1.0 / FPS)
        self._read_tiles()
        self.t += 1.0 / FPS
        state = self._render("state_pixels")
        assert state is not None            # (the car is there)
        self.state = state

        step_reward = 0.0
        terminated = False
        info: dict[str, bool] = {}
        if action is not None:
            self.reward -= 0.1
            car.fuel_spent = 0.0
            step_reward = self.reward - self.prev_reward
            self.prev_reward = self.reward
            if self.tile_visited_count == len(self.track) or self.new_lap:
                terminated = True
                info["lap_finished"] = True
            x, y = car.hull.position
            if abs(x) > PLAYFIELD or abs(y) > PLAYFIELD:
                terminated = True
                info["lap_finished"] = False
                step_reward = -100
        if self.render_mode == "human":
            self.render()
        return self.state, float(step_reward), terminated, False, info

    def _read_tiles(self) -> None:
        """The original's friction detector on the step's sensor events: which tiles each wheel overlaps, first
        visits (+1000/N each; the lap ends at the start tile once ``lap_complete_percent`` is visited), and tiles
        any part of the car touched drawn in the plain road colour."""
        assert self.world is not None
        events = self.world.contact_events()
        for records, sign in ((events.begin, 1), (events.end, -1)):
            if not records.size:
                continue
            sa, sb = records["shape_a"], records["shape_b"]
            tile = np.where(self._tile_of_shape[sa] >= 0, self._tile_of_shape[sa], self._tile_of_shape[sb])
            other = np.where(self._tile_of_shape[sa] >= 0, sb, sa)
            mine = tile >= 0
            tile, other = tile[mine], other[mine]
            self.tile_plain[tile] = True
            wheel = self._wheel_of_shape[other]
            on_wheel = wheel >= 0
            tile, wheel = tile[on_wheel], wheel[on_wheel]
            if sign < 0:
                np.add.at(self._under, (wheel, tile), -1)
                continue
            np.add.at(self._under, (wheel, tile), 1)
            n = len(self.track)
            for t in tile.tolist():          # (the first visits of the step, in event order)
                if not self.tile_visited[t]:
                    self.tile_visited[t] = True
                    self.reward += 1000.0 / n
                    self.tile_visited_count += 1
                    if t == 0 and self.tile_visited_count / n > self.lap_complete_percent:
                        self.new_lap = True

    # --- drawing --------------------------------------------------------------------------------------------
    def render(self) -> np.ndarray | None:
        """Draw the current frame as Gymnasium's original does: in ``"rgb_array"`` mode return it (400 × 600 × 3
        uint8), in ``"state_pixels"`` mode the 96 × 96 × 3 view, in ``"human"`` mode show it in a 1000 × 800 window
        at ``render_fps`` and return None (None also before a reset, and, with a warning, without a render
        mode)."""
        if self.render_mode is None:
            warn_no_render_mode(self)
            return None
        return self._render(self.render_mode)

    def _font(self, size: int) -> pygame.font.Font:
        import pygame
        if size not in self._fonts:
            pygame.font.init()
            self._fonts[size] = pygame.font.Font(pygame.font.get_default_font(), size)
        return self._fonts[size]

    def _render(self, mode: str) -> np.ndarray | None:
        pygame, gfxdraw = pygame_modules()
        if self.car is None:
            return None
        self._open_window(mode, (WINDOW_W, WINDOW_H))
        k = {"state_pixels": STATE_DRAW_SCALE, "rgb_array": VIDEO_DRAW_SCALE}.get(mode, 1.0)
        width, height = int(round(WINDOW_W * k)), int(round(WINDOW_H * k))
        surf = pygame.Surface((width, height))
        car = self.car
        hull = car.hull
        angle = -hull.angle
        zoom = (0.1 * SCALE * max(1 - self.t, 0) + ZOOM * SCALE * min(self.t, 1)) * k
        ca, sa = math.cos(angle), math.sin(angle)
        px, py = hull.position
        sx, sy = -px * zoom, -py * zoom
        tx, ty = width / 2 + (ca * sx - sa * sy), height / 4 + (sa * sx + ca * sy)

        def screen(points: np.ndarray) -> np.ndarray:
            """World points (..., 2) to the surface before its vertical flip."""
            x, y = points[..., 0], points[..., 1]
            return np.stack([(ca * x - sa * y) * zoom + tx, (sa * x + ca * y) * zoom + ty], axis=-1)

        margin = MAX_SHAPE_DIM * k

        def draw_all(polys: np.ndarray, colours, clip: bool = True) -> None:
            pts = screen(polys)
            if clip:
                inside = ((pts[..., 0] >= -margin) & (pts[..., 0] <= width + margin) & (pts[..., 1] >= -margin)
                          & (pts[..., 1] <= height + margin)).any(axis=1)
            else:
                inside = np.ones(len(pts), np.bool_)
            for i in np.flatnonzero(inside):
                poly = pts[i].tolist()
                colour = colours[i] if isinstance(colours, list) else colours
                gfxdraw.aapolygon(surf, poly, colour)
                gfxdraw.filled_polygon(surf, poly, colour)

        field = np.array([[(PLAYFIELD, PLAYFIELD), (PLAYFIELD, -PLAYFIELD), (-PLAYFIELD, -PLAYFIELD),
                           (-PLAYFIELD, PLAYFIELD)]])
        draw_all(field, tuple(int(c) for c in self.bg_color), clip=False)
        draw_all(self._grass, tuple(int(c) for c in self.grass_color))
        road = np.asarray(self.road_color, dtype=np.float64)
        shade = np.where(self.tile_plain, 0.0, self.tile_shade)
        tile_colours = [tuple(int(c) for c in road + s) for s in shade]
        draw_all(self.tiles, tile_colours)
        if self.borders:
            draw_all(np.array([b[0] for b in self.borders]), [b[1] for b in self.borders])
        self._draw_car(surf, screen, mode not in ("state_pixels",))
        surf = pygame.transform.flip(surf, False, True)
        self._render_indicators(surf, width, height)
        text = self._font(max(1, int(round(42 * k)))).render(f"{self.reward:04.0f}", True, (255, 255, 255), (0, 0, 0))
        rect = text.get_rect()
        rect.center = (60 * k, height - height * 2.5 / 40.0)
        surf.blit(text, rect)
        self.surf = surf
        if mode == "human":
            assert self.screen is not None and self.clock is not None
            pygame.event.pump()
            self.clock.tick(self.metadata["render_fps"])
            self.screen.fill(0)
            self.screen.blit(surf, (0, 0))
            pygame.display.flip()
            return None
        size = (VIDEO_W, VIDEO_H) if mode == "rgb_array" else (STATE_W, STATE_H)
        small = pygame.transform.smoothscale(surf, size)
        return np.transpose(np.array(pygame.surfarray.pixels3d(small)), axes=(1, 0, 2))

    def _draw_car(self, surf, screen, particles: bool) -> None:
        import pygame
        car = self.car
        assert car is not None
        if particles:
            for colour, points, _ in car.particles:
                pts = screen(np.array(points)).tolist()
                pygame.draw.lines(surf, colour, False, pts, 2)
        bodies = [car.hull] + car.wheels
        poses = [(b.position, b.angle) for b in bodies]

        def placed(verts, pose):
            (bx, by), a = pose
            c, s = math.cos(a), math.sin(a)
            v = np.asarray(verts, dtype=np.float64)
            return np.stack([bx + c * v[:, 0] - s * v[:, 1], by + s * v[:, 0] + c * v[:, 1]], axis=1)

        for k, (pose, wheel) in enumerate(zip(poses[1:], car.wheels)):
            body = np.array(WHEEL_POLY, np.float64) * SIZE
            pygame.draw.polygon(surf, WHEEL_COLOR, screen(placed(body, pose)).tolist())
            a1, a2 = car.phase[k], car.phase[k] + 1.2
            s1, s2, c1, c2 = math.sin(a1), math.sin(a2), math.cos(a1), math.cos(a2)
            if s1 > 0 and s2 > 0:
                continue
            if s1 > 0:
                c1 = np.sign(c1)
            if s2 > 0:
                c2 = np.sign(c2)
            stripe = np.array([(-WHEEL_W, WHEEL_R * c1), (WHEEL_W, WHEEL_R * c1), (WHEEL_W, WHEEL_R * c2),
                               (-WHEEL_W, WHEEL_R * c2)]) * SIZE
            pygame.draw.polygon(surf, WHEEL_WHITE, screen(placed(stripe, pose)).tolist())
        for poly in HULL_POLYS:
            pygame.draw.polygon(surf, HULL_COLOR, screen(placed(np.array(poly, np.float64) * SIZE, poses[0])).tolist())

    def _render_indicators(self, surf, width: int, height: int) -> None:
        """The original's bar: true speed, the four wheels' spins (ABS), steering and gyroscope."""
        import pygame
        s, h = width / 40.0, height / 40.0
        pygame.draw.polygon(surf, (0, 0, 0), [(width, height), (width, height - 5 * h), (0, height - 5 * h),
                                              (0, height)])

        def vertical(place, val):
            return [(place * s, height - (h + h * val)), ((place + 1) * s, height - (h + h * val)),
                    ((place + 1) * s, height - h), (place * s, height - h)]

        def horizontal(place, val):
            return [(place * s, height - 4 * h), ((place + val) * s, height - 4 * h),
                    ((place + val) * s, height - 2 * h), (place * s, height - 2 * h)]

        car = self.car
        assert car is not None
        vx, vy = car.hull.velocity
        speed = math.hypot(vx, vy)
        bars = [(speed, vertical(5, 0.02 * speed), (255, 255, 255))]
        for k, colour in ((0, (0, 0, 255)), (1, (0, 0, 255)), (2, (51, 0, 255)), (3, (51, 0, 255))):
            bars.append((car.omega[k], vertical(7 + k, 0.01 * car.omega[k]), colour))
        steer = car.wheels[0].angle - car.hull.angle
        bars.append((steer, horizontal(20, -10.0 * steer), (0, 255, 0)))
        spin = car.hull.angular_velocity
        bars.append((spin, horizontal(30, -0.8 * spin), (255, 0, 0)))
        for value, points, colour in bars:
            if abs(value) > 1e-4:
                pygame.draw.polygon(surf, colour, points)



#: carom substeps per 1/50 s step (the car touches nothing: the substeps only hold the wheels on their joints)
SUBSTEPS = 2
