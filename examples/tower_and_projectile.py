"""A tower of blocks knocked down by a projectile: a heavy ball fired at 40 m/s as a bullet.

A bullet is swept against dynamic bodies too (continuous collision), so it cannot pass through a thin block
in one step. The ball is fired one second in, by a hook that runs before every step.
"""
import carom
from carom.geometry import Circle, box
from carom.render import play


def build():
    """A tower of 12 storeys: two pillars and a lintel each."""
    world = carom.World(gravity=(0, -10))
    world.static_body.add_shape(box(30, 0.5, center=(0, -0.5)), friction=0.8)
    y = 0.0
    for storey in range(12):
        for x in (-0.8, 0.8):                                 # two pillars 1 m tall
            world.add_body(position=(4 + x, y + 0.5)).add_shape(box(0.15, 0.5), density=1.0, friction=0.7)
        world.add_body(position=(4, y + 1.1)).add_shape(box(1.2, 0.1), density=1.0, friction=0.7)   # a lintel
        y += 1.2
    return world


def fire(app):
    """One second in, fire a 0.4 m ball of density 20 from the left at 40 m/s."""
    if app.steps == 60:
        ball = app.world.add_body(position=(-10, 5.5), velocity=(40, 3), bullet=True)
        ball.add_shape(Circle(0.4), density=20.0, friction=0.3)


def main(argv=None):
    """Run the example (window, or out/tower_and_projectile.gif headless)."""
    return play(build, name="tower_and_projectile", argv=argv, lower=(-11, -1), upper=(13, 17), on_step=fire,
                default_frames=240)


if __name__ == "__main__":
    main()
