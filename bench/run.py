"""Run every ``bench/bench_*.py`` and gather their tables into ``bench/RESULTS.md``.

Each benchmark writes its own ``bench/results/<area>.md``; this script runs them one
after another (never in parallel: they measure) and concatenates the tables.
``python bench/run.py import agent`` runs only the named ones.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ORDER = [
    "import",
    "agent",
    "concurrency",
    "peers",
    "swarm",
    "tools",
    "events",
    "durable",
    "dbos",
    "events_peer",
    "memory",
    "flow",
    "dag",
    "dag_peer",
    "otel",
    "serve",
    "mcp",
]


def _as_section(text: str) -> str:
    """Demote a table file's headings one level when it starts at ``#``: RESULTS.md owns ``#``."""
    if not text.startswith("# "):
        return text
    return "\n".join("#" + line if line.startswith("#") else line for line in text.splitlines())


def _versions() -> str:
    """The versions that move the figures: the SDK, the drivers, the machine's CPU."""
    import importlib.metadata as md
    import sqlite3

    parts = []
    for dist in ("openai", "psycopg", "SQLAlchemy"):
        try:
            parts.append(f"{dist} {md.version(dist)}")
        except md.PackageNotFoundError:
            parts.append(f"{dist} not installed")
    parts.append(f"SQLite {sqlite3.sqlite_version}")
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return ", ".join(parts) + (f"; CPU {cpu}" if cpu else "")


READING = """\
How to read this page. Every table compares lightagent with a *floor* measured in the same
run on the same machine: the raw `openai` SDK against the same loopback server for the agent
loop, raw `sqlite3` / raw `psycopg` doing one `INSERT` + `COMMIT` for the stores. A ratio is
ours over the floor, so **lower is better**, except in the concurrency table, where it is
runs per second and **higher is better**. The machine is shared with other work: absolute
times move between runs (the load average is printed where it matters); the ratios are the
figures to compare. The goals:

* concurrent runs under model latency (50 ms, 100 and 1,000 in flight): at least the raw
  SDK's runs/s — *Concurrent tool runs under model latency*;
* one durable session append within 2x the raw driver at every session length, SQLite and
  PostgreSQL — *Durable session appends against the raw driver*;
* one durable LightFlow step within 2x one raw commit — *LightFlow checkpoint overhead*
  (`overhead x floor`);
* LightDAG's whole attempt path within 5x a fenced claim and completion on the raw driver at
  one worker, and on PostgreSQL a ratio to that floor that does not grow from 1 to 8 worker
  processes — *LightDAG claim+complete throughput* (`x floor`; its second table shows what
  the rows LightDAG records cost by themselves on the raw driver);
* a single run cheaper than the raw SDK's — *Agent loop overhead over the raw openai SDK*.
"""


def main(selected: list[str]) -> int:
    scripts = sorted(
        HERE.glob("bench_*.py"),
        key=lambda p: (ORDER.index(p.stem[6:]) if p.stem[6:] in ORDER else len(ORDER), p.name),
    )
    if selected:
        scripts = [s for s in scripts if s.stem[6:] in selected]
    failed = []
    for script in scripts:
        print(f"== {script.name}", flush=True)
        if subprocess.run([sys.executable, str(script)], cwd=HERE.parent).returncode != 0:
            failed.append(script.name)
    parts = [
        "# Benchmark results\n",
        f"Measured {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC on {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}, {_versions()}; load average "
        f"{os.getloadavg()[0]:.1f} at the end, by "
        + (
            f"`python bench/run.py {' '.join(selected)}`: only those tables are from this run;"
            " the others are kept from earlier ones.\n"
            if selected
            else "`make bench`.\n"
        ),
        READING,
    ]
    for area in ORDER + sorted(
        p.stem for p in (HERE / "results").glob("*.md") if p.stem not in ORDER
    ):
        path = HERE / "results" / f"{area}.md"
        if path.exists():
            parts.append(_as_section(path.read_text().strip()) + "\n")
    (HERE / "RESULTS.md").write_text("\n".join(parts))
    if failed:
        print(f"bench: failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
