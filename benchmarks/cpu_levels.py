"""The rigid benchmark scenes with kernels compiled for each processor level (``carom._cpu_level``), in one
run: ``x86-64-v4`` (AVX-512, 16 solver lanes) and ``x86-64-v3`` (AVX2, 8 lanes), what a wheel ships and such
machines load, ``x86-64`` (the shipped baseline) and ``host`` (compiled for this very processor, what carom did
before it shipped kernels). Each (scene, level) runs in its own process with one thread, levels
interleaved, and reports the best of the runs' minimum step times (ms, from ``world.profile_times``).

    python benchmarks/cpu_levels.py [--rounds 3] [--steps 200]

The first round compiles each level's kernels into the source tree's cache (their cache entries are apart).
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
SCENES = ("large_pyramid", "many_pyramids", "circle_pile", "tumbler", "smash", "joint_grid")
LEVELS = ("x86-64-v4", "x86-64-v3", "host", "x86-64")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_trees import CODE  # noqa: E402  (one scene's best step time, in a fresh process)


def run(scene, level, steps):
    env = dict(os.environ, CAROM_CPU_LEVEL=level, PYTHONPATH=os.path.join(ROOT, "src"))
    out = subprocess.run([sys.executable, "-c", CODE, scene, str(steps)], env=env, capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])["best_ms"]     # (the level: CAROM_CPU_LEVEL)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--scenes", default=",".join(SCENES))
    a = ap.parse_args(argv)
    scenes = a.scenes.split(",")
    for level in LEVELS:            # warm each level's cache first
        run(scenes[0], level, 2)
    best = {(s, lv): float("inf") for s in scenes for lv in LEVELS}
    for r in range(a.rounds):
        for s in scenes:
            for lv in LEVELS:
                best[s, lv] = min(best[s, lv], run(s, lv, a.steps))
        print(f"round {r + 1} done", file=sys.stderr, flush=True)
    others = [lv for lv in LEVELS if lv != "host"]
    print("| scene | host (local compile) | " + " | ".join(others) + " | "
          + " | ".join(f"{lv} ÷ host" for lv in others) + " |")
    print("|---" * (1 + 2 * len(others) + 1) + "|")
    for s in scenes + ["sum"]:
        row = {lv: (best[s, lv] if s != "sum" else sum(best[x, lv] for x in scenes)) for lv in LEVELS}
        print(f"| {s} | {row['host']:.3f} ms | " + " | ".join(f"{row[lv]:.3f} ms" for lv in others) + " | "
              + " | ".join(f"{row[lv] / row['host']:.3f}" for lv in others) + " |")


if __name__ == "__main__":
    main()
