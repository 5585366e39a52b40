"""10,000 bodies added, stepped and analysed with NumPy: no Python loop over bodies anywhere.

``world.add_bodies`` adds n bodies with one shape each from arrays; ``world.positions``, ``velocities``,
``angles`` and ``angular_velocities`` read every body's state as arrays (one row per body, in the order of
``world.bodies``); ``world.set_state`` and ``world.apply_impulses`` write them back in bulk. The caption shows
statistics computed from those arrays each frame: the pile's height profile, its kinetic energy, how many
bodies sleep.
"""
import numpy as np

import carom
from carom.geometry import Circle, box
from carom.render import play

COUNT, RADIUS = 10_000, 0.1


def build():
    """A 100 × 100 block of small circles in an open box 24 m wide."""
    world = carom.World(gravity=(0, -10))
    walls = world.static_body
    walls.add_shape(box(12.5, 0.5, center=(0, -0.5)))
    walls.add_shape(box(0.5, 15, center=(-12.5, 15)))
    walls.add_shape(box(0.5, 15, center=(12.5, 15)))
    side = int(np.sqrt(COUNT))
    ix, iy = np.meshgrid(np.arange(side), np.arange(side))
    rng = np.random.default_rng(0)
    positions = np.stack([-11.0 + 0.22 * ix.ravel() + 0.05 * (iy.ravel() % 2),
                          0.5 + 0.23 * iy.ravel()], axis=1) + rng.uniform(-0.01, 0.01, (COUNT, 2))
    world.add_bodies(positions, shape=Circle(RADIUS), density=1.0, friction=0.5)
    world.apply_impulses(world.bodies[:100], rng.normal(0.0, 0.02, (100, 2)))   # stir the bottom row a little
    return world


def analyse(world):
    """Statistics of the whole pile from the bulk arrays: a dict of plain numbers."""
    pos = world.positions                                      # (10000, 2)
    vel = world.velocities                                     # (10000, 2)
    mass = np.pi * RADIUS ** 2 * 1.0                           # every body has the same shape and density
    kinetic = 0.5 * mass * np.einsum("ij,ij->", vel, vel)
    columns = np.digitize(pos[:, 0], np.linspace(-12, 12, 9))   # 8 columns across the box
    heights = np.array([pos[columns == c, 1].max(initial=0.0) for c in range(1, 9)])
    return {"bodies": len(pos), "kinetic_energy": float(kinetic), "mean_height": float(pos[:, 1].mean()),
            "highest_column": float(heights.max()), "lowest_column": float(heights.min()),
            "awake": world.awake_count}


def caption(app):
    """Put the statistics of the last step in the heads-up line."""
    s = analyse(app.world)
    app.caption = (f"KE {s['kinetic_energy']:7.1f} J   mean height {s['mean_height']:5.2f} m   columns "
                   f"{s['lowest_column']:4.1f}-{s['highest_column']:4.1f} m   awake {s['awake']}")


def main(argv=None):
    """Run the example (window, or out/numpy_pile.gif headless) and print the final statistics."""
    app = play(build, name="numpy_pile", argv=argv, lower=(-13, -1), upper=(13, 24), on_step=caption,
               default_frames=180)
    print(analyse(app.world))
    return app


if __name__ == "__main__":
    main()
