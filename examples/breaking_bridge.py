"""A bridge that breaks: planks on revolute joints that snap when their reaction force passes a threshold.

Every joint has ``force_threshold``: after a step in which its reaction force exceeds it, the joint is removed
and a joint event reports it (``world.on("joint", ...)``). A heavy box dropped on the middle of the bridge
snaps it; the light crates before it do not.
"""
import carom
from carom import joints
from carom.geometry import box
from carom.render import play

PLANKS, LENGTH, Y = 24, 0.5, 6.0
THRESHOLD = 4000.0         # newtons: settling, the bridge pulls its joints up to about 1,800 N; the box far more
broken = []


def build():
    """24 planks between two posts, three light crates on it and a heavy box falling from above."""
    world = carom.World(gravity=(0, -10))
    span = PLANKS * LENGTH
    x0 = -0.5 * span
    ground = world.static_body
    ground.add_shape(box(span, 0.5, center=(0, -0.5)), friction=0.6)
    for x in (x0 - 0.5, -x0 + 0.5):
        ground.add_shape(box(0.5, 0.5 * Y - 0.25, center=(x, 0.5 * Y - 0.75)), friction=0.6)
    previous = None                                         # None: the world's static body
    for k in range(PLANKS):
        plank = world.add_body(position=(x0 + (k + 0.5) * LENGTH, Y))
        plank.add_shape(box(0.5 * LENGTH, 0.08), density=20.0, friction=0.6)
        world.add_joint(joints.Revolute(previous, plank, anchor=(x0 + k * LENGTH, Y), max_motor_torque=5.0,
                                        force_threshold=THRESHOLD))
        previous = plank
    world.add_joint(joints.Revolute(previous, None, anchor=(-x0, Y), max_motor_torque=5.0,
                                    force_threshold=THRESHOLD))
    for k in range(3):
        world.add_body(position=(-3.0 + 2.5 * k, Y + 1.0)).add_shape(box(0.35, 0.35), density=1.0)
    weight = world.add_body(position=(0.4, Y + 9.0))
    weight.add_shape(box(0.8, 0.8), density=60.0)          # 154 kg
    broken.clear()
    world.on("joint", lambda event: broken.append(event.force))
    return world


def on_step(app):
    """Say how many joints broke so far."""
    app.caption = f"joints: {app.world.joint_count}   broken: {len(broken)}"


def main(argv=None):
    """Run the example (window, or out/breaking_bridge.gif headless)."""
    return play(build, name="breaking_bridge", argv=argv, lower=(-8, -1), upper=(8, 16), on_step=on_step,
                default_frames=240)


if __name__ == "__main__":
    main()
