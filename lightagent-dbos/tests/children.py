"""Starting the crash tests' child processes (see durable_child.py)."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ["last_json", "spawn"]

CHILD = Path(__file__).with_name("durable_child.py")
_n = itertools.count()


def spawn(cfg: dict[str, Any], child: Path = CHILD, **popen: Any) -> subprocess.Popen[str]:
    """Start ``child`` (``durable_child.py``) with ``cfg``; stdout a pipe, stderr a file."""
    folder = Path(cfg["dir"])
    n = next(_n)
    path = folder / f"cfg-{n}.json"
    path.write_text(json.dumps(cfg))
    err = open(folder / f"child-{n}.err", "w")
    return subprocess.Popen(
        [sys.executable, str(child), str(path)],
        stdout=subprocess.PIPE,
        stderr=err,
        text=True,
        env=dict(os.environ),
        **popen,
    )


def last_json(proc: subprocess.Popen[str], timeout: float = 120) -> dict[str, Any]:
    """The JSON line a child printed last, once it exited."""
    out, _ = proc.communicate(timeout=timeout)
    lines = [line for line in out.splitlines() if line.startswith("{")]
    assert lines, f"the child printed no result (exit {proc.returncode})"
    value: dict[str, Any] = json.loads(lines[-1])
    return value
