"""In-kernel time of the rigid world's broad phase when most bodies move (the "bulk" paths).

Two scenes, sleeping off: the 5,000-circle pile and a smash of 60 × 40 boxes hit early (projectile at
x = 23.8). Each is stepped 30 times untimed, then for 20 steps the broad phase of the step is run once on
its own with the step's boxes and timed inside the compiled code with libc ``clock()`` (CPU time, one
thread): ``tree_update`` (leaf moves, reinsertions or the bulk rebuild) and ``tree_pairs_cached``
(candidate pairs). The world then takes its normal step. Prints ms per step and proxies reinserted per step.

Run: ``python benchmarks/broadphase_bulk.py`` (one thread; a few seconds after the kernels are compiled).

Measured (2-core VM): with one-by-one reinsertion and the sort-and-sweep candidate search, the pile took
3.5 + 3.9 ms and the smash 3.1 + 2.8 ms per step; with the bulk rebuild and the grid 0.4 + 0.7 ms and
0.2 + 0.6 ms; with the stale tree (a bulk move defers the refit to the first reader), the grid on the real
boxes in busy steps and the pairs kept as keys, 0.09 + 0.49 ms and 0.05 + 0.31 ms (2026-11-24).
"""
import ctypes

import numba
import numpy as np

import carom
from carom.geometry._broadphase_kernels import tree_update, tree_pairs_cached
from carom.rigid import _step
from carom.scenes.rigid_scenes import circle_pile, smash

_libc = ctypes.CDLL(None)
clock = _libc.clock
clock.restype = ctypes.c_long
clock.argtypes = []
CLOCKS_PER_MS = 1000.0          # POSIX: CLOCKS_PER_SEC = 1e6


@numba.njit
def timed_broad(shapes, tree, shape_proxy, lower, upper, T):
    shape_alive, shape_sensor, shape_category, shape_mask, shape_group = shapes[1], shapes[8], shapes[9], shapes[10], \
        shapes[11]
    (bp_moving, bp_static, bp_lower, bp_upper, bp_flags, bp_leaf, bp_moved, bp_moved_flag, bp_moved_meta,
     bp_cand, bp_margin, bp_multiplier) = tree
    ids, lowers, uppers, _plain = _step.live_proxy_boxes(shape_alive, shape_proxy, lower, upper, shape_sensor,
                                                         shape_category, shape_mask, shape_group)
    t1 = clock()
    tree_update(bp_moving, bp_static, bp_lower, bp_upper, bp_flags, bp_leaf, ids, lowers, uppers, bp_margin,
                bp_multiplier, bp_moved, bp_moved_flag, bp_moved_meta)
    moved = bp_moved_meta[0]
    t2 = clock()
    pairs, new_cand = tree_pairs_cached(bp_moving, bp_static, bp_lower, bp_upper, bp_flags, bp_leaf,
                                        bp_moved, bp_moved_flag, bp_moved_meta, bp_cand, 1)
    t3 = clock()
    T[0] += t2 - t1
    T[1] += t3 - t2
    T[2] += moved
    T[3] += pairs.shape[0]
    return new_cand


def measure(name, world, warm=30, steps=20):
    world.sleep_enabled = False
    for _ in range(warm):
        world.step(1 / 60)
    gx, gy = (float(g) for g in world.gravity)
    T = np.zeros(4)
    for _ in range(steps):
        bodies, shapes, tree, proxy, _proxy_shape = world.step_tables()
        _r, _a, _m, _xf, lower, upper, _rows = _step.bounds_stage(1 / 60, gx, gy, bodies, shapes, 1)
        world.tables.bp.set_candidates(timed_broad(shapes, tree, proxy, lower, upper, T))
        world.step(1 / 60)
    T /= steps
    update, pairs = T[0] / CLOCKS_PER_MS, T[1] / CLOCKS_PER_MS
    print(f"{name:14s} tree_update {update:6.2f} ms   tree_pairs_cached {pairs:6.2f} ms"
          f"   reinserted {T[2]:6.0f}   pairs {T[3]:6.0f}")


def main():
    carom.set_num_threads(1)
    measure("circle_pile", circle_pile())
    measure("smash 60x40", smash(columns=60, rows=40, projectile_x=23.8))


if __name__ == "__main__":
    main()
