"""Write one benchmark's section of benchmarks/RESULTS.md, leaving the other sections as they are.

Each benchmark owns a section between ``<!-- begin NAME -->`` and ``<!-- end NAME -->``; re-running it
replaces that section only, so all results stay in one file with their dates.
"""
import datetime
import os
import platform
import re

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "RESULTS.md")
HEADER = "# carom benchmark results\n\nEach section is written by the script named in it.\n"


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


def write_section(name: str, title: str, body: str) -> None:
    today = datetime.date.today().isoformat()
    block = (f"<!-- begin {name} -->\n## {title}\n\n{today} — {machine()} — `benchmarks/{name}.py`\n\n"
             f"{body.strip()}\n<!-- end {name} -->\n")
    text = open(RESULTS).read() if os.path.exists(RESULTS) else HEADER
    pattern = re.compile(rf"<!-- begin {re.escape(name)} -->.*?<!-- end {re.escape(name)} -->\n?", re.S)
    text = pattern.sub(lambda _m: block, text) if pattern.search(text) else text.rstrip() + "\n\n" + block
    with open(RESULTS, "w") as f:
        f.write(text)


def table(header, rows) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)
