"""The rigid benchmark scenes with kernels compiled for each processor level (``carom._cpu_level``), in one
run: ``x86-64-v3`` (what a wheel ships and an AVX2 machine loads), ``x86-64`` (the shipped baseline) and
``host`` (compiled for this very processor, what carom did before it shipped kernels: on an AVX-512 machine,
16 solver lanes instead of 8). Each (scene, level) runs in its own process with one thread, levels
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
LEVELS = ("x86-64-v3", "host", "x86-64")

CODE = """
import json, sys
import carom
from carom.bench import scene_spec, build_carom
carom.set_num_threads(1)
spec = scene_spec(sys.argv[1])
w = build_carom(spec)
w.profile = True
best = float("inf")
for i in range(int(sys.argv[2])):
    w.step(spec["dt"] if "dt" in spec else 1 / 60)
    if i >= 5:
        best = min(best, sum(w.profile_times.values()))
print(json.dumps({"level": carom.cpu_level(), "best_ms": best}))
"""


def run(scene, level, steps):
    env = dict(os.environ, CAROM_CPU_LEVEL=level, PYTHONPATH=os.path.join(ROOT, "src"))
    out = subprocess.run([sys.executable, "-c", CODE, scene, str(steps)], env=env, capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])["best_ms"]


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
    print("| scene | x86-64-v3 (shipped) | host (local compile) | x86-64 (baseline) | v3 ÷ host | baseline ÷ host |")
    print("|---|---|---|---|---|---|")
    for s in scenes:
        v3, host, base = best[s, "x86-64-v3"], best[s, "host"], best[s, "x86-64"]
        print(f"| {s} | {v3:.3f} ms | {host:.3f} ms | {base:.3f} ms | {v3 / host:.3f} | {base / host:.3f} |")
    tot = {lv: sum(best[s, lv] for s in scenes) for lv in LEVELS}
    print(f"| sum | {tot['x86-64-v3']:.3f} | {tot['host']:.3f} | {tot['x86-64']:.3f} | "
          f"{tot['x86-64-v3'] / tot['host']:.3f} | {tot['x86-64'] / tot['host']:.3f} |")


if __name__ == "__main__":
    main()
