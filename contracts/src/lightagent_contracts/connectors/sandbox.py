"""Import a plugin in a subprocess with network, file writes and process starts refused.

The child program (``_child.py``) installs a :func:`sys.addaudithook` hook before any
plugin code runs: socket connects and name lookups, writes outside a fresh temporary
directory, and process starts (``multiprocessing``'s spawn and forkserver included) raise
``PermissionError`` inside the plugin and are recorded. On Linux the child also runs in a
network namespace of its own as a child subreaper, and reports and kills every process
still below it when the import ends. It leads a process group of its own: when the
wall-clock limit stops it, the group goes with it, and anything of the group left after
it ended is reported and killed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lightagent_contracts.connectors.project import ProjectInfo

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
        proc = subprocess.Popen(
            [sys.executable, "-B", "-E", "-s", "-c", source, json.dumps(config)],
            cwd=tmp,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group: it can be stopped whole
        )
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            stderr = _text(_stop(proc)[1])
            return SandboxResult(
                elapsed=time.perf_counter() - started,
                timed_out=True,
                events=_events(stderr) + _leftovers(proc.pid),
                stderr_tail=stderr[-2000:],
            )
        elapsed = time.perf_counter() - started
    stdout, stderr = _text(out), _text(err)
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
        events=_events(stderr) + _leftovers(proc.pid),
        stderr_tail=stderr[-2000:],
    )


def _stop(proc: subprocess.Popen[bytes]) -> tuple[bytes | None, bytes | None]:
    """Stop a child past its limit: SIGTERM (it kills what it started), then the whole group."""
    proc.terminate()
    try:
        return proc.communicate(timeout=3)
    except subprocess.TimeoutExpired:
        pass
    _kill_group(proc.pid)
    try:
        return proc.communicate(timeout=3)
    except subprocess.TimeoutExpired:
        # Something outside the group still holds the pipes: give up on the output.
        proc.kill()
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
        proc.wait()
        return None, None


def _kill_group(pgid: int) -> bool:
    """SIGKILL process group ``pgid``; True when it still had members."""
    if not hasattr(os, "killpg"):
        return False
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _leftovers(pgid: int) -> list[dict[str, Any]]:
    """Processes of the child's group that outlived it, killed and reported."""
    if not _kill_group(pgid):
        return []
    return [
        {
            "kind": "process",
            "detail": f"processes of the sandbox's group {pgid} outlived the import and were killed",
            "where": "",
        }
    ]


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
