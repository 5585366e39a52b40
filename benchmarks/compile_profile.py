"""Where the cold compile goes: every function Numba compiles while ``bench.STARTUP_CODE`` (import carom, a
15-box pyramid, one step; ``--library``: ``bench.LIBRARY_CODE``) runs in one process on one core (no compile
helper) with an empty cache, from Numba's ``numba:compile`` events. A callee is compiled inside its caller's
compile (when the caller's typing reaches it), so each function's own time is its event's duration less its
callees'. Prints the functions with the most own time, and the total.

    python benchmarks/compile_profile.py [--library] [--top 30]
"""
import argparse
import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "src"))

RECORD = """
import time, json, sys
import numba.core.event as ev
stack, own, total, count = [], {}, {}, {}
class Rec(ev.Listener):
    def on_start(self, e):
        stack.append([time.perf_counter(), 0.0])
    def on_end(self, e):
        t0, inner = stack.pop()
        d = time.perf_counter() - t0
        f = e.data["dispatcher"].py_func
        name = f.__module__ + "." + f.__qualname__
        own[name] = own.get(name, 0.0) + d - inner
        total[name] = total.get(name, 0.0) + d
        count[name] = count.get(name, 0) + 1
        if stack:
            stack[-1][1] += d
ev.register("numba:compile", Rec())
"""
DUMP = "\nimport json; print('PROFILE' + json.dumps([own, total, count]))\n"


def main(argv=None):
    from carom import bench
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--library", action="store_true")
    ap.add_argument("--top", type=int, default=30)
    a = ap.parse_args(argv)
    code = RECORD + (bench.LIBRARY_CODE if a.library else bench.STARTUP_CODE) + DUMP
    import json
    with tempfile.TemporaryDirectory(prefix="carom-profile-") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=os.path.join(ROOT, "src"))
        out = subprocess.run(["taskset", "-c", "0", sys.executable, "-c", code], env=env, capture_output=True,
                             text=True)
    if out.returncode:
        raise SystemExit(out.stderr)
    own, total, count = json.loads(out.stdout.split("PROFILE")[-1])
    whole = sum(own.values())
    print(f"{len(own)} functions compiled, {whole:.1f} s of compile in all (one core)\n")
    print("| function | own s | with callees s | compiles |")
    print("|---|---|---|---|")
    for name in sorted(own, key=own.get, reverse=True)[:a.top]:
        print(f"| `{name.replace('carom.', '')}` | {own[name]:.2f} | {total[name]:.2f} | {count[name]} |")


if __name__ == "__main__":
    main()
