"""Write one benchmark's section of benchmarks/RESULTS.md, leaving the other sections as they are.

Each benchmark owns a section between ``<!-- begin NAME -->`` and ``<!-- end NAME -->``: RESULTS.md holds the
latest figures of each, with the date, the machine and the commit. Re-running a benchmark replaces its section and
appends the section it replaces to ``benchmarks/history/NAME.md``, so the history stays beside, not in the way.
"""
import datetime
import os
import platform
import re
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "RESULTS.md")
HISTORY = os.path.join(HERE, "history")
HEADER = ("# carom benchmark results\n\nThe latest figures of each benchmark, one section each, with the date, the "
          "machine and the commit; each script replaces its own section and moves the one it replaces to "
          "`benchmarks/history/<name>.md`.\n")


def machine() -> str:
    """CPU model, cores and versions; the same line `carom bench` writes (carom.bench.machine_description)."""
    try:
        from carom.bench import machine_description
        return machine_description()
    except ImportError:
        pass
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "")
    except OSError:
        cpu = platform.processor()
    return f"{cpu or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def commit() -> str:
    """The short hash of the checkout's HEAD, with ``+`` when its files differ from it (or ``unknown``)."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True,
                              timeout=30).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=HERE,
                               capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (head + ("+" if dirty else "")) if head else "unknown"


def write_section(name: str, title: str, body: str, source: str = "", results: str = RESULTS,
                  history: str = HISTORY) -> None:
    """Put ``body`` under ``## title`` as the section ``name`` of ``results``, headed by today's date, the
    machine, the commit and ``source`` (what wrote it; default ``benchmarks/NAME.py``). The section it replaces,
    if any, is appended to ``history/NAME.md``."""
    today = datetime.date.today().isoformat()
    source = source or f"`benchmarks/{name}.py`"
    block = (f"<!-- begin {name} -->\n## {title}\n\n{today} — {machine()} — {source} — commit `{commit()}`\n\n"
             f"{body.strip()}\n<!-- end {name} -->\n")
    text = open(results).read() if os.path.exists(results) else HEADER
    pattern = re.compile(rf"<!-- begin {re.escape(name)} -->\n(.*?)<!-- end {re.escape(name)} -->\n?", re.S)
    old = pattern.search(text)
    if old:
        os.makedirs(history, exist_ok=True)
        path = os.path.join(history, f"{name}.md")
        previous = open(path).read() if os.path.exists(path) else f"# {title}: earlier results\n"
        with open(path, "w") as f:
            f.write(previous.rstrip() + "\n\n" + old.group(1).strip() + "\n")
        text = pattern.sub(lambda _m: block, text)
    else:
        text = text.rstrip() + "\n\n" + block
    with open(results, "w") as f:
        f.write(text)


def table(header, rows) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)
