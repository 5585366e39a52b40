"""The rigid-body benchmark: carom vs pymunk vs pybox2d on Box2D's scenes, its section of RESULTS.md.

Runs ``carom bench`` (:mod:`carom.bench`) on every benchmark scene — large_pyramid, many_pyramids, smash,
tumbler and a 5,000-circle pile — in carom, pymunk and pybox2d, plus carom's cold-compile and warm-start
times, and writes the report (machine: CPU model, cores, Python / NumPy / Numba / engine versions) as the
``rigid`` section of benchmarks/RESULTS.md, the section it replaces going to benchmarks/history/rigid.md
(``_results.write_section``). Arguments are passed on to ``carom bench``; with ``--out FILE`` the report is
appended to FILE instead, as ``carom bench`` does:

    python benchmarks/run.py                      # everything (a few minutes on 2 cores)
    python benchmarks/run.py smash --steps 200    # one scene, more steps
    python benchmarks/run.py --no-write           # print only

This replaces the former benchmarks/rigid.py (same scenes and quality measures, now in carom.bench).
"""
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))
sys.path.insert(0, HERE)

from carom.bench import main  # noqa: E402
from _results import write_section  # noqa: E402

TITLE = "Rigid bodies: carom vs pymunk vs pybox2d"


def run(argv):
    """``carom bench`` with ``argv``; unless told ``--out`` or ``--no-write``, its report becomes RESULTS.md's
    ``rigid`` section."""
    command = " ".join(["python benchmarks/run.py"] + argv)
    if "--out" in argv or "--no-write" in argv:
        return main(argv, command=command)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "report.md")
        code = main(argv + ["--out", out], command=command)
        if code or not os.path.exists(out):
            return code
        report = open(out).read().strip()
    # (carom bench heads its report "## TITLE — date time", then the machine and the command: those move into
    # the section's own heading line)
    lines = report.split("\n")
    heading, machine_line = lines[0], lines[2] if len(lines) > 2 else ""
    stamp = heading.split(" — ", 1)[1] if " — " in heading else ""
    command_part = machine_line.rsplit(" — ", 1)[-1] if " — " in machine_line else f"`{command}`"
    body = "\n".join(lines[3:]).strip()
    write_section("rigid", TITLE, (f"Measured {stamp}.\n\n" if stamp else "") + body, source=command_part)
    return 0


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
