"""The rigid benchmark scenes in two or more carom source trees, in one run (the 5 % rule: an issue's commit
against the commit before it began). Each (scene, tree) runs in its own process with one thread, trees
interleaved; the figure is the best over rounds of the minimum step time of the run (ms, summed
``world.profile_times``, steps 5 on), sleeping off as in ``carom bench``.

    python benchmarks/compare_trees.py --trees /path/to/base/src src [--rounds 3] [--steps 200]
"""
import argparse
import json
import os
import subprocess
import sys

SCENES = ("large_pyramid", "many_pyramids", "circle_pile", "tumbler", "smash", "joint_grid")
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
    w.step(1 / 60)
    if i >= 5:
        best = min(best, sum(w.profile_times.values()))
print(json.dumps({"best_ms": best}))
"""


def run(scene, tree, steps, env_extra=None):
    env = dict(os.environ, PYTHONPATH=os.path.abspath(tree), **(env_extra or {}))
    out = subprocess.run([sys.executable, "-c", CODE, scene, str(steps)], env=env, capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])["best_ms"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trees", nargs="+", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--scenes", default=",".join(SCENES))
    a = ap.parse_args(argv)
    scenes = a.scenes.split(",")
    for t in a.trees:
        run(scenes[0], t, 2)        # (compile)
    best = {(s, t): float("inf") for s in scenes for t in a.trees}
    for r in range(a.rounds):
        for s in scenes:
            for t in a.trees:
                best[s, t] = min(best[s, t], run(s, t, a.steps))
        print(f"round {r + 1} done", file=sys.stderr, flush=True)
    base = a.trees[0]
    print("| scene | " + " | ".join(a.trees) + " | " + " | ".join(f"{t} ÷ {base}" for t in a.trees[1:]) + " |")
    print("|---" * (2 * len(a.trees)) + "|")
    for s in scenes + ["sum"]:
        vals = ([best[s, t] for t in a.trees] if s != "sum"
                else [sum(best[x, t] for x in scenes) for t in a.trees])
        print(f"| {s} | " + " | ".join(f"{v:.3f} ms" for v in vals) + " | "
              + " | ".join(f"{v / vals[0]:.3f}" for v in vals[1:]) + " |")


if __name__ == "__main__":
    main()
