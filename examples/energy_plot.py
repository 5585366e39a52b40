"""Energy over time, plotted with matplotlib: a pendulum and a mass on a spring, without damping.

Each step records the kinetic energy ½mv² + ½Iω² and the potential energies (mgy, and ½k(x − L)² of the
spring) of both systems from the public body properties; after the run, matplotlib draws the three curves into
``out/energy_plot-energy.png`` (beside ``--out``'s file when given). The kinetic energy swings by about 70 J
while the total stays within a few per cent: the soft spring is integrated implicitly, so its energy wobbles
a little within each swing and drifts down slowly (about 1 % in 5 s).
"""
import math
import os

import numpy as np

import carom
from carom import joints
from carom.geometry import Circle, box
from carom.render import play

record = []
K, REST = None, 2.0


def build():
    """A 2 m pendulum released 70 degrees out, and a 1 kg weight on a 2 Hz spring pulled 1 m down."""
    world = carom.World(gravity=(0, -10))
    pin = (-2.0, 5.0)
    a = math.radians(70)
    bob = world.add_body(position=(pin[0] + 2 * math.sin(a), pin[1] - 2 * math.cos(a)))
    bob.add_shape(Circle(0.2), density=1.0)
    world.add_joint(joints.Distance(None, bob, anchor_a=pin, anchor_b=bob.position))
    weight = world.add_body(position=(3.0, 5.0 - REST - 1.0))
    weight.add_shape(box(0.3, 0.3), density=1.0 / 0.36)        # 1 kg
    world.add_joint(joints.Distance(None, weight, anchor_a=(3.0, 5.0), anchor_b=weight.position, length=REST,
                                    hertz=2.0, damping_ratio=0.0))
    world.static_body.add_shape(box(0.6, 0.1, center=(0.5, 5.1)))
    record.clear()
    return world


def energies(world):
    """(kinetic, gravitational potential, spring potential) of the two bodies, in joules."""
    bob, weight = world.bodies
    ke = sum(0.5 * b.mass * float(np.dot(b.velocity, b.velocity)) + 0.5 * b.inertia * b.angular_velocity ** 2
             for b in (bob, weight))
    pe = sum(b.mass * 10.0 * float(b.world_center[1]) for b in (bob, weight))
    k = weight.mass * (2 * math.pi * 2.0) ** 2                  # stiffness of a 2 Hz spring on this mass
    stretch = float(np.hypot(*(weight.position - (3.0, 5.0)))) - REST
    return ke, pe, 0.5 * k * stretch ** 2


def measure(app):
    """Record the energies before each step."""
    record.append((app.steps * app.dt,) + energies(app.world))


def plot(path):
    """Draw the recorded energies with matplotlib (no window needed) into ``path``."""
    from matplotlib.figure import Figure
    data = np.array(record)
    fig = Figure(figsize=(6, 3.5), dpi=100)
    ax = fig.add_subplot()
    t, ke, pe, spring = data.T
    base = pe.min()
    ax.plot(t, ke, label="kinetic")
    ax.plot(t, pe - base + spring, label="potential (gravity + spring)")
    ax.plot(t, ke + pe - base + spring, label="total", color="k")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("energy (J)")
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    return path


def main(argv=None):
    """Run the example (window, or out/energy_plot.gif headless), then write the energy plot (a PNG)."""
    app = play(build, name="energy_plot", argv=argv, lower=(-5, 1), upper=(5, 6), on_step=measure,
               default_frames=300)
    out = getattr(app, "out_path", None) or os.path.join("out", "energy_plot.gif")
    path = plot(os.path.splitext(out)[0] + "-energy.png")
    print(f"wrote {path}")
    return app


if __name__ == "__main__":
    main()
