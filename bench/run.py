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
    "peers",
    "tools",
    "events",
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
        f"{os.cpu_count()} cores, Python {platform.python_version()}, by `make bench`. "
        "Figures are ratios to the floor named in each table (the raw `openai` SDK on the same "
        "loopback server, or raw `sqlite3`); lower is better.\n",
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
