"""The shipped example runs offline and prints what the docs say it prints."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "flow_example.py"


def test_flow_example_runs_offline() -> None:
    env = {
        k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "LIGHTAGENT_BASE_URL")
    }
    proc = subprocess.run(
        [sys.executable, str(EXAMPLE)], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("first attempt: failed") and "LA-503" in lines[0]
    assert lines[1] == "success - ACME: a steady anvil business, growing 12% a year."
    assert lines[2] == "[('research', 'success', 1), ('write', 'success', 1)]"
    assert "approval: approve - Approved by policy." in lines
    assert "Published the summary to the help center." in lines
