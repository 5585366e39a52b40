"""Hello, world: a box, a ball and a capsule fall onto a ramp and the ground (the getting-started page)."""
import carom
from carom.geometry import Capsule, Circle, Segment, box
from carom.render import play


def build():
    """A box, a ball and a capsule falling onto a ramp and the ground."""
    world = carom.World(gravity=(0, -10))
    ground = world.static_body
    ground.add_shape(Segment((-8, 0), (8, 0)), friction=0.6)          # the floor
    ground.add_shape(Segment((-8, 4), (-1, 1.5)), friction=0.2)       # a ramp
    crate = world.add_body(position=(-6, 6), angle=0.3)
    crate.add_shape(box(0.5, 0.5), density=1.0, friction=0.4)         # half-widths: a 1 m box
    ball = world.add_body(position=(-4, 8))
    ball.add_shape(Circle(0.4), density=1.0, restitution=0.5)
    pill = world.add_body(position=(3, 5), angle=1.0)
    pill.add_shape(Capsule((-0.6, 0), (0.6, 0), 0.25), density=1.0)
    return world


def main(argv=None):
    """Run the example (window, or out/hello_world.gif headless); see :func:`carom.render.play`."""
    return play(build, name="hello_world", argv=argv, lower=(-8.5, -0.5), upper=(8.5, 9), default_frames=180)


if __name__ == "__main__":
    main()
