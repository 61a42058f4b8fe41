"""Import cost of ``lightagent`` next to ``python -c pass`` and the PyPI ``lightagent==0.11.0``.

The 0.11.0 wheel is installed into ``bench/.work/venv-la011`` on first run (it pulls its
own heavy dependencies); if that install fails the row says so.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

from la011 import la011_python

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work"
RUNS = 15


def _time(python: str, code: str) -> float:
    samples = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run([python, "-c", code], check=True, capture_output=True)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000


def main() -> None:
    py = sys.executable
    floor = _time(py, "pass")
    ours = _time(py, "import lightagent")
    ours_agent = _time(py, "import lightagent; lightagent.LightAgent")
    rows = [
        ("`python -c pass` (floor)", floor),
        ("`import lightagent`", ours),
        ("`import lightagent; lightagent.LightAgent` (first use)", ours_agent),
    ]
    old = la011_python()
    old_py = old or py
    old_floor = _time(old_py, "pass") if old else None
    if old:
        rows.append(
            ("`import LightAgent` (PyPI lightagent 0.11.0)", _time(old, "import LightAgent"))
        )
    lines = [
        "## Import time\n",
        f"Median of {RUNS} fresh interpreters, wall time including interpreter start-up.\n",
        "| what | ms | over `python -c pass` |",
        "|---|---:|---:|",
    ]
    for label, ms in rows:
        base = old_floor if "0.11.0" in label and old_floor else floor
        lines.append(f"| {label} | {ms:.1f} | +{ms - base:.1f} ms |")
    if not old:
        lines.append(
            "| `import LightAgent` (PyPI lightagent 0.11.0) | not measured: install failed | |"
        )
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "import.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
