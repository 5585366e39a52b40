"""carom against Box2D v3 on Box2D's own seven benchmark scenes, side by side on this machine.

Box2D v3 is built from its public source (``--source``: a Box2D checkout or a bare git directory of one) with
cmake, Release, ``BOX2D_AVX2=ON`` (Box2D's own option) and ``BOX2D_BENCHMARKS=ON``, into a cached folder
(``build/box2d``; ``--rebuild`` builds again); nothing needs the network once the source is here. Its
``benchmark`` app runs one scene at a time (``-b=NAME -w=THREADS -r=1``) and prints the wall time of the steps
after the first; carom runs the same scene, built by ``carom.scenes.box2d_scenes`` exactly as Box2D builds it,
in a fresh process, timed the same way (the first step untimed; the per-step work of rain, new ragdolls, inside
the timing, as Box2D's ``stepFcn``). Threads are held (``carom.set_num_threads(n, adaptive=False)``), and a
second carom figure with the governor (``adaptive=True``) shows what a user gets without holding them.

Rounds are interleaved: each round runs every (scene, threads) of both engines once, so a load that comes
and goes hits both. The table gives the minimum and the median over rounds of the mean step time (ms), and
carom ÷ Box2D for each.

    python benchmarks/box2d.py [--source DIR] [--rounds 5] [--threads 1,2] [--scenes rain,smash]
    python benchmarks/box2d.py --build-only

Without ``--source`` the source is build/box2d-src, fetched there (Box2D v3 at BOX2D_COMMIT) if missing.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from _results import table, write_section  # noqa: E402

BUILD = os.path.join(ROOT, "build", "box2d")
#: Box2D's scene names, as its benchmark app registers them (benchmark/main.c).
SCENES = ("joint_grid", "large_pyramid", "many_pyramids", "rain", "smash", "spinner", "tumbler")
#: and its step counts (benchmark/main.c), of which the first is not timed
B2_STEPS = {"joint_grid": 500, "large_pyramid": 500, "many_pyramids": 200, "rain": 1000, "smash": 300,
            "spinner": 500, "tumbler": 750}

CAROM = """
import json, sys, time
import carom
from carom.scenes import box2d_scenes as b
name, threads, adaptive = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
carom.set_num_threads(threads, adaptive=adaptive)
scene = b.build(name)
steps = b.STEPS[name]
scene.before_step(0)
scene.world.step(b.TIME_STEP)
t0 = time.perf_counter()
for i in range(1, steps):
    scene.before_step(i)
    scene.world.step(b.TIME_STEP)
ms = (time.perf_counter() - t0) * 1e3
gov = scene.world._governor
print(json.dumps({"ms": ms / (steps - 1), "one_thread_steps": getattr(gov, "one_thread_steps", 0)}))
"""


def run(cmd, **kw):
    print("$", " ".join(cmd), file=sys.stderr, flush=True)
    subprocess.run(cmd, check=True, **kw)


#: the Box2D v3 commit the scenes were read from and the figures are taken with (fetched when no source is given)
BOX2D_REPO = "https://github.com/erincatto/box2d"
BOX2D_COMMIT = "617d32ab02570930625bbcb8479f54be9bf8d045"


def fetch(tree):
    """Fetch Box2D v3 at ``BOX2D_COMMIT`` (the commit the scenes follow) into ``tree``: the one
    step that needs the network."""
    os.makedirs(tree, exist_ok=True)
    run(["git", "-C", tree, "init", "-q"])
    run(["git", "-C", tree, "fetch", "-q", "--depth", "1", BOX2D_REPO, BOX2D_COMMIT])
    run(["git", "-C", tree, "checkout", "-q", "FETCH_HEAD"])


def source_dir(source):
    """A Box2D source tree: ``source`` itself, or a tree exported from ``source`` when it is a git directory,
    or fetched (:func:`fetch`) when ``source`` does not exist."""
    if os.path.exists(os.path.join(source, "CMakeLists.txt")):
        return source
    if not os.path.exists(source):
        fetch(source)
        return source
    tree = os.path.join(os.path.dirname(BUILD), "box2d-src")
    if not os.path.exists(os.path.join(tree, "CMakeLists.txt")):
        os.makedirs(tree, exist_ok=True)
        archive = subprocess.run(["git", "--git-dir", source, "archive", "HEAD"], check=True, capture_output=True)
        subprocess.run(["tar", "-x", "-C", tree], input=archive.stdout, check=True)
        head = subprocess.run(["git", "--git-dir", source, "rev-parse", "HEAD"], capture_output=True, text=True)
        with open(os.path.join(tree, ".box2d-commit"), "w") as f:
            f.write(head.stdout)
    return tree


def commit_of(source):
    """The Box2D commit of ``source`` (a checkout, a bare git directory, or a tree exported from one)."""
    stamp = os.path.join(source_dir(source), ".box2d-commit")
    if os.path.exists(stamp):
        with open(stamp) as f:
            return f.read().strip()[:8]
    git = os.path.join(source, ".git")
    args = (["git", "--git-dir", git] if os.path.exists(git) else
            ["git", "--git-dir", source] if os.path.exists(os.path.join(source, "HEAD")) else None)
    if args is None:
        return "unknown"
    out = subprocess.run(args + ["rev-parse", "--short=8", "HEAD"], capture_output=True, text=True)
    return out.stdout.strip() or "unknown"


def build(source, rebuild=False, jobs=2):
    """The path of Box2D's ``benchmark`` app, built Release with AVX2 into ``build/box2d`` unless it is there."""
    app = os.path.join(BUILD, "bin", "benchmark")
    if os.path.exists(app) and not rebuild:
        return app
    for tool in ("cmake", "cc"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is missing: apt-get install cmake build-essential")
    src = source_dir(source)
    if rebuild and os.path.exists(BUILD):
        shutil.rmtree(BUILD)
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    run(["cmake", "-S", src, "-B", BUILD, *generator, "-DCMAKE_BUILD_TYPE=Release", "-DBOX2D_AVX2=ON",
         "-DBOX2D_BENCHMARKS=ON", "-DBOX2D_SAMPLES=OFF", "-DBOX2D_UNIT_TESTS=OFF", "-DBOX2D_VALIDATE=OFF"])
    run(["cmake", "--build", BUILD, "--target", "benchmark", "-j", str(jobs)])
    return app


def box2d_ms(app, scene, threads):
    """Box2D's mean step time (ms) over the steps after the first, from one run of its benchmark app."""
    with tempfile.TemporaryDirectory() as cwd:        # (the app writes NAME.csv where it runs)
        out = subprocess.run([app, f"-b={scene}", f"-w={threads}", f"-t={threads}", "-r=1"], cwd=cwd,
                             capture_output=True, text=True, check=True).stdout
    steps = int(re.search(r"steps = (\d+)", out).group(1))
    total = float(re.search(r"run 0 : ([0-9.eE+-]+) \(ms\)", out).group(1))
    return total / (steps - 1)


def run_carom(code, *args):
    """The JSON that ``code`` prints last, run with ``args`` in a fresh process on this checkout's ``src``."""
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"))
    out = subprocess.run([sys.executable, "-c", code, *map(str, args)], env=env, capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def carom_ms(scene, threads, adaptive):
    return run_carom(CAROM, scene, threads, "1" if adaptive else "0")


def load():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--source", default=os.environ.get("BOX2D_SOURCE", os.path.join(os.path.dirname(BUILD),
                                                                                      "box2d-src")),
                    help="Box2D v3 source tree or bare git directory (default build/box2d-src)")
    ap.add_argument("--rebuild", action="store_true", help="build Box2D again even if build/box2d has it")
    ap.add_argument("--build-only", action="store_true")
    ap.add_argument("--rounds", type=int, default=5, help="0 with --merge: write the table of the saved figures")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--scenes", default=",".join(SCENES))
    ap.add_argument("--no-governed", action="store_true", help="skip the governed (adaptive) carom runs")
    ap.add_argument("--governed-rounds", type=int, default=None,
                    help="run the governed carom runs in the first N rounds only (default: every round)")
    ap.add_argument("--merge", action="store_true",
                    help="add to the figures of earlier runs (build/box2d/times.json) instead of starting afresh: "
                         "a scene measured again replaces its earlier figures")
    ap.add_argument("--no-write", action="store_true", help="print the table only, leave RESULTS.md alone")
    ap.add_argument("--note", default="", help="a remark added after the table (the machine's state, a profile)")
    a = ap.parse_args(argv)
    app = build(a.source, a.rebuild)
    if a.build_only:
        print(app)
        return
    scenes = a.scenes.split(",")
    for s in scenes:
        if s not in SCENES:
            raise SystemExit(f"unknown scene {s!r}: one of {', '.join(SCENES)}")
    threads = [int(t) for t in a.threads.split(",")]
    if a.rounds > 0:
        carom_ms(scenes[0], 1, False)                          # (compile, or load the cache)
    kinds = ["box2d", "held"] + ([] if a.no_governed else ["governed"])
    times = {}
    one_thread = {}
    loads = []
    started = time.time()
    for r in range(a.rounds):
        for s in scenes:
            for t in threads:
                loads.append(load())
                times.setdefault((s, t, "box2d"), []).append(box2d_ms(app, s, t))
                governed = t > 1 and (a.governed_rounds is None or r < a.governed_rounds)
                for k in kinds[1:] if governed else ["held"]:   # (one thread: nothing for the governor to choose)
                    res = carom_ms(s, t, k == "governed")
                    times.setdefault((s, t, k), []).append(res["ms"])
                    if k == "governed":
                        one_thread.setdefault((s, t), []).append(res["one_thread_steps"])
                print(f"  {s} {t}: " + ", ".join(f"{k} {times[s, t, k][-1]:.3f}" for k in kinds
                                                   if (s, t, k) in times) + f" (load {loads[-1]:.2f})",
                      file=sys.stderr, flush=True)
        print(f"round {r + 1}/{a.rounds} done ({time.time() - started:.0f} s)", file=sys.stderr, flush=True)

    store = os.path.join(BUILD, "times.json")
    if a.merge and os.path.exists(store):
        with open(store) as f:
            saved = json.load(f)
        for key, values in saved["times"].items():
            s, t, k = key.split("|")
            if s not in scenes or a.rounds == 0:
                times[s, int(t), k] = values
        for key, values in saved["one_thread"].items():
            s, t = key.split("|")
            if s not in scenes or a.rounds == 0:
                one_thread[s, int(t)] = values
        loads = loads + saved["loads"]
        scenes = [s for s in SCENES if s in scenes or any(key[0] == s for key in times)]
    with open(store, "w") as f:
        json.dump(dict(times={f"{s}|{t}|{k}": v for (s, t, k), v in times.items()},
                       one_thread={f"{s}|{t}": v for (s, t), v in one_thread.items()}, loads=loads), f)

    def fmt(x):
        return f"{x:.2f}"

    rows = []
    for s in scenes:
        for t in threads:
            b = times[s, t, "box2d"]
            c = times[s, t, "held"]
            row = [s, t, len(b), f"{fmt(min(b))} / {fmt(statistics.median(b))}", f"{fmt(min(c))} / {fmt(statistics.median(c))}",
                   f"{min(c) / min(b):.2f} / {statistics.median(c) / statistics.median(b):.2f}"]
            if "governed" in kinds and (s, t, "governed") in times:
                g = times[s, t, "governed"]
                same = c[:len(g)]           # (the governed runs are those of the first rounds: held in the same)
                row += [f"{fmt(min(g))} / {fmt(statistics.median(g))}",
                        f"{min(g) / min(same):.2f} / {statistics.median(g) / statistics.median(same):.2f}",
                        f"{max(one_thread[s, t])} of {B2_STEPS[s] - 1}"]
            elif "governed" in kinds:
                row += ["(held)", "", ""]
            rows.append(row)
    header = ["scene", "threads", "rounds", "Box2D v3 AVX2 ms (min / median)", "carom held ms (min / median)",
              "carom ÷ Box2D (min / median)"]
    if "governed" in kinds:
        header += ["carom governed ms (min / median)", "governed ÷ held, same rounds (min / median)", "governed: steps on 1 thread (max)"]
    speedups = []
    if 1 in threads and 2 in threads:
        for s in scenes:
            h1, h2 = times[s, 1, "held"], times[s, 2, "held"]
            speedups.append(f"{s} {statistics.median(h1) / statistics.median(h2):.2f}×")
    text = table(header, rows)
    note = (f"Box2D v3 {commit_of(a.source)} built Release with `BOX2D_AVX2=ON`, its `benchmark` app "
            f"(`-b=NAME -w=T -r=1`); carom's scenes from `carom.scenes.box2d_scenes`, built as Box2D builds them. "
            f"Interleaved rounds (the table gives each scene's count); each figure is the mean step time (ms) over the steps after the first "
            f"(Box2D's step counts), minimum / median over rounds. carom held: `set_num_threads(T, adaptive=False)`;"
            f" governed: the thread governor decides (`adaptive=True`). Load average (1 min) while measuring: "
            f"{min(loads):.2f}–{max(loads):.2f} on {os.cpu_count()} cores.")
    if speedups:
        note += " Two-thread speed-up, carom held (median 1 thread ÷ median 2 threads): " + ", ".join(speedups) + "."
    if a.note:
        note += "\n\n" + a.note
    print(text)
    print(note)
    if not a.no_write:
        write_section("box2d", "carom vs Box2D v3 on Box2D's benchmark scenes", text + "\n\n" + note)


if __name__ == "__main__":
    main()
