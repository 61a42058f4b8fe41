"""Import a plugin in a subprocess with network, file writes and process starts refused.

The child program (``_child.py``) installs a :func:`sys.addaudithook` hook before any
plugin code runs: socket connects and name lookups, writes outside a fresh temporary
directory, and process starts raise ``PermissionError`` inside the plugin and are
recorded. The parent enforces a wall-clock limit and reports the time measured.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lightagent.connectors.project import ProjectInfo

__all__ = ["SandboxResult", "run_sandboxed"]

_EVENT_PREFIX = "LIGHTAGENT-SANDBOX-EVENT "


@dataclass
class SandboxResult:
    """What the sandboxed import reported, or why it did not finish."""

    elapsed: float
    timed_out: bool = False
    returncode: int | None = None
    data: dict[str, Any] | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    stderr_tail: str = ""


def run_sandboxed(info: ProjectInfo, *, timeout: float = 20.0) -> SandboxResult:
    """Import each ``lightagent`` entry point of ``info`` in a sandboxed child process."""
    source = (Path(__file__).with_name("_child.py")).read_text(encoding="utf-8")
    sentinel = f"LIGHTAGENT-SANDBOX-RESULT-{uuid.uuid4().hex} "
    roots = [str(p.resolve()) for p in info.package_dirs] or ["\0none"]
    with tempfile.TemporaryDirectory(prefix="lightagent-validate-") as tmp:
        config = {
            "tmp": tmp,
            "roots": roots,
            "sentinel": sentinel,
            "sys_path": info.sys_path,
            "entry_points": [{"name": ep.name, "value": ep.value} for ep in info.entry_points],
        }
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "LIGHTAGENT_"))}
        # Caches and config a library writes on import land in the scratch folder.
        env.update(
            TMPDIR=tmp,
            HOME=tmp,
            XDG_CACHE_HOME=tmp,
            XDG_CONFIG_HOME=tmp,
            XDG_DATA_HOME=tmp,
            LIGHTAGENT_LOAD_PLUGINS="",
            NO_PROXY="*",
        )
        started = time.perf_counter()
        try:
            proc = subprocess.run(
                [sys.executable, "-B", "-E", "-s", "-c", source, json.dumps(config)],
                cwd=tmp,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            stderr = _text(exc.stderr)
            return SandboxResult(
                elapsed=time.perf_counter() - started,
                timed_out=True,
                events=_events(stderr),
                stderr_tail=stderr[-2000:],
            )
        elapsed = time.perf_counter() - started
    stdout, stderr = _text(proc.stdout), _text(proc.stderr)
    data = None
    marker = stdout.rfind(sentinel)
    if marker >= 0:
        try:
            data = json.loads(stdout[marker + len(sentinel) :].strip().splitlines()[0])
        except (ValueError, IndexError):
            data = None
    return SandboxResult(
        elapsed=elapsed,
        returncode=proc.returncode,
        data=data,
        events=_events(stderr),
        stderr_tail=stderr[-2000:],
    )


def _text(raw: bytes | str | None) -> str:
    if raw is None:
        return ""
    return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw


def _events(stderr: str) -> list[dict[str, Any]]:
    out = []
    for line in stderr.splitlines():
        if line.startswith(_EVENT_PREFIX):
            try:
                out.append(json.loads(line[len(_EVENT_PREFIX) :]))
            except ValueError:
                continue
    return out
