"""What the environments share: stepping a small world on one thread, and their pygame window."""
from __future__ import annotations

from typing import Any

import numba
import gymnasium as gym
from gymnasium.error import DependencyNotInstalled, ResetNeeded

import carom


def step_one_thread(world: carom.World, dt: float) -> None:
    """``world.step(dt)`` on one thread, whatever ``carom.set_num_threads`` says, and the count restored after.

    The environments' worlds hold a few dozen bodies at most; their step takes 20-60 µs on one thread, and waking
    a second thread for its parallel stages costs more than the stage (LunarLander: 4,500 steps/s on one thread,
    2,300 on two). The results are bitwise the same on any thread count, so this changes speed only."""
    threads = numba.get_num_threads()
    if threads == 1:
        world.step(dt)
        return
    numba.set_num_threads(1)
    try:
        world.step(dt)
    finally:
        numba.set_num_threads(threads)


def warn_no_render_mode(env: Any) -> None:
    """Gymnasium's warning for ``render()`` on an environment made without a render mode."""
    assert env.spec is not None
    gym.logger.warn("You are calling render method without specifying any render mode. You can specify the "
                    f'render_mode at initialization, e.g. gym.make("{env.spec.id}", render_mode="rgb_array")')


def pygame_modules() -> tuple[Any, Any]:
    """``(pygame, pygame.gfxdraw)``, or Gymnasium's ``DependencyNotInstalled`` naming the extra to install."""
    try:
        import pygame
        from pygame import gfxdraw
    except ImportError as e:
        raise DependencyNotInstalled('pygame is not installed, run `pip install "carom[viz]"`') from e
    return pygame, gfxdraw


class PygameWindow:
    """The window and clock of an environment's ``"human"`` mode, opened on the first frame shown."""

    screen: Any = None
    clock: Any = None
    isopen: bool = True

    def _begin_frame(self, size: tuple[int, int], ready: bool) -> tuple[Any, Any] | None:
        """The start of ``render()``: None without a render mode (after Gymnasium's warning), Gymnasium's
        ``ResetNeeded`` when not ``ready`` (no world yet), else ``(pygame, gfxdraw)`` with the window open
        (``"human"`` mode)."""
        mode = getattr(self, "render_mode", None)
        if mode is None:
            warn_no_render_mode(self)
            return None
        modules = pygame_modules()
        if not ready:
            raise ResetNeeded("Cannot call env.render() before calling env.reset()")
        self._open_window(mode, size)
        return modules

    def _open_window(self, mode: str, size: tuple[int, int]) -> None:
        """Open the window (``"human"`` mode) and the frame clock, once."""
        import pygame
        if self.screen is None and mode == "human":
            pygame.init()
            pygame.display.init()
            self.screen = pygame.display.set_mode(size)
        if self.clock is None:
            self.clock = pygame.time.Clock()

    def close(self) -> None:
        """Close the window and quit pygame (``"human"`` mode, once a frame was shown); otherwise nothing."""
        if self.screen is not None:
            import pygame
            pygame.display.quit()
            pygame.quit()
            self.screen = None
            self.isopen = False
