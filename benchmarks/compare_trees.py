"""The rigid benchmark scenes in two or more carom source trees, in one run (the 5 % rule: an issue's commit
against the commit before it began). Each (scene, tree) runs in its own process with one thread, trees
interleaved; the figure is the best over rounds of the minimum step time of the run (ms, summed
``world.profile_times``, steps 5 on), sleeping off as in ``carom bench``.

    python benchmarks/compare_trees.py --trees /path/to/base/src src [--rounds 3] [--steps 200]

``--threads 2`` runs with two threads, held where the tree can hold them (``set_num_threads(2, adaptive=False)``;
older trees take the count as it is). ``--builders`` takes the scenes as builders of
``carom.scenes.rigid_scenes`` called with their defaults (sleeping off), which every tree has under the same
name, where the bench entries of one name may differ between trees (many_pyramids: 10 × 10 before, 20 × 20 now).
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
threads = int(sys.argv[3]) if len(sys.argv) > 3 else 1
try:
    carom.set_num_threads(threads, adaptive=False)
except TypeError:                   # (a tree from before held thread counts)
    carom.set_num_threads(threads)
if sys.argv[4:5] == ["1"]:
    from carom.scenes import rigid_scenes
    w = getattr(rigid_scenes, sys.argv[1])()
    w.sleep_enabled = False
else:
    w = build_carom(scene_spec(sys.argv[1]))
w.profile = True
best = float("inf")
for i in range(int(sys.argv[2])):
    w.step(1 / 60)
    if i >= 5:
        best = min(best, sum(w.profile_times.values()))
print(json.dumps({"best_ms": best}))
"""


def run(scene, tree, steps, env_extra=None, threads=1, builders=False):
    env = dict(os.environ, PYTHONPATH=os.path.abspath(tree), **(env_extra or {}))
    out = subprocess.run([sys.executable, "-c", CODE, scene, str(steps), str(threads), "1" if builders else "0"],
                         env=env, capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])["best_ms"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trees", nargs="+", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--scenes", default=",".join(SCENES))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--builders", action="store_true", help="scenes are rigid_scenes builders (module docstring)")
    a = ap.parse_args(argv)
    scenes = a.scenes.split(",")
    for t in a.trees:
        run(scenes[0], t, 2, threads=a.threads, builders=a.builders)        # (compile)
    best = {(s, t): float("inf") for s in scenes for t in a.trees}
    for r in range(a.rounds):
        for s in scenes:
            for t in a.trees:
                best[s, t] = min(best[s, t], run(s, t, a.steps, threads=a.threads, builders=a.builders))
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
