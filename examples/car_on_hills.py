"""A car driving over hills: wheel joints (a suspension spring along the chassis' vertical and a motor on the
rear wheel) on a terrain that is one smooth static chain. The camera follows the chassis.
"""
import numpy as np

import carom
from carom import joints
from carom.geometry import Circle, Polygon
from carom.render import play

state = {}


def build():
    """Hills made of a chain (a smooth polyline) and a car of three bodies and two wheel joints."""
    world = carom.World(gravity=(0, -10))
    x = np.arange(-20.0, 200.0, 0.5)
    y = 1.2 * np.sin(0.15 * x) + 0.6 * np.sin(0.41 * x + 1.0) + np.where(x > 60, 0.05 * (x - 60), 0.0)
    world.static_body.add_chain(np.stack([x, y], axis=1), friction=0.9)   # walked left to right: solid above
    start = 1.2 * np.sin(0.0) + 0.6 * np.sin(1.0)
    chassis = world.add_body(position=(0.0, start + 1.6))
    chassis.add_shape(Polygon([(-1.5, -0.4), (1.5, -0.4), (1.5, 0.05), (0.1, 0.75), (-1.1, 0.75), (-1.5, 0.2)],
                              radius=0.1), density=2.0, friction=0.6)
    wheels = []
    for dx in (-1.1, 1.1):
        wheel = world.add_body(position=(dx, start + 0.9))
        wheel.add_shape(Circle(0.45), density=2.0, friction=1.2)         # a radius line shows each wheel turn
        wheels.append(wheel)
    for k, wheel in enumerate(wheels):
        world.add_joint(joints.Wheel(chassis, wheel, anchor=wheel.position, axis=(0, 1), hertz=4.0,
                                     damping_ratio=0.7, lower=-0.3, upper=0.3,
                                     motor_speed=-12.0 if k == 0 else 0.0,        # negative: clockwise, to +x
                                     max_motor_torque=25.0 if k == 0 else 0.0))
    state["chassis"] = chassis
    return world


def follow(world):
    """The camera's subject: the chassis."""
    return state["chassis"].position


def main(argv=None):
    """Run the example (window, or out/car_on_hills.gif headless)."""
    return play(build, name="car_on_hills", argv=argv, lower=(-8, -3), upper=(8, 9), follow=follow,
                joints=True, default_frames=360)


if __name__ == "__main__":
    main()
