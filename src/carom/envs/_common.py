"""What the environments share: stepping a small world on one thread."""
from __future__ import annotations

import numba

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
