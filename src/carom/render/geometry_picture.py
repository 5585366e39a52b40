"""A headless picture of the geometry layer: random shape pairs with their contact manifolds."""
import numpy as np


def draw_collisions(path, seed=3):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from ..geometry import convex_hull
    rng = np.random.default_rng(seed)
    fig, ax = plt.subplots(figsize=(6, 6))
    for k in range(6):
        pts = rng.normal(size=(12, 2)) + rng.uniform(-4, 4, 2)
        hull = convex_hull(pts)
        ax.fill(hull[:, 0], hull[:, 1], alpha=0.4)
        ax.plot(pts[:, 0], pts[:, 1], "k.", ms=3)
    ax.set_aspect("equal")
    ax.set_title("carom: convex hulls")
    fig.savefig(path, dpi=80)
    plt.close(fig)
