"""Quarantine, review records and loading of generated tools, all bound to the file's hash.

A generated source is written to ``<tools_directory>/.quarantine/<name>-<hash12>.py``: a
name no import can reach, in a folder nothing loads from. Its review — by a policy
callable or a person through a review store — is bound to the SHA-256 of those exact
bytes. Only an approved hash becomes a tool: the loader hashes the bytes it has read and
hands those same bytes (never a second read) to the sandbox runner
(:mod:`lightagent_skills.toolgen.runner`); the host process never executes them. An installed
tool is kept as ``<tools_directory>/<name>.py`` with ``<name>.approval.json`` naming its
hash; :func:`load_installed` refuses the file if its bytes no longer match.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lightagent.errors import PolicyError, ValidationError

from lightagent_skills.toolgen.scan import ScanReport, scan_source

__all__ = [
    "GeneratedTool",
    "ToolReview",
    "digest",
    "install",
    "load_installed",
    "quarantine",
    "reviewed_tool",
]


def digest(data: bytes) -> str:
    """The hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


@dataclass
class ToolReview:
    """What a reviewer decides on: the exact source, its hash and the tool it defines.

    :meth:`trial` runs the tool once before the decision, in the agent's sandbox.
    """

    name: str
    source: str
    sha256: str
    path: str
    signature: dict[str, Any]
    request: str = ""
    sandbox: Any = field(default=None, repr=False)
    timeout: float = 60.0

    def trial(self, **arguments: Any) -> Any:
        """Call the tool under review with ``arguments`` (checked against its schema) in the
        sandbox; its JSON result. ``LA-SANDBOX`` without a sandbox provider."""
        tool = reviewed_tool(self.source.encode("utf-8"), self.sha256, self.sandbox, self.timeout)
        args, kwargs = tool.bind(tool.validate_arguments(arguments))
        return tool.func(*args, **kwargs)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe form."""
        return {
            "name": self.name,
            "source": self.source,
            "sha256": self.sha256,
            "path": self.path,
            "signature": self.signature,
            "request": self.request,
        }


@dataclass
class GeneratedTool:
    """A generated tool's state: ``pending`` (quarantined, awaiting review) or ``registered``."""

    name: str
    path: str
    sha256: str
    status: str
    signature: dict[str, Any] = field(default_factory=dict)
    request_id: str | None = None
    reason: str | None = None
    tool: Any = field(default=None, repr=False)

    def __str__(self) -> str:
        if self.status == "registered":
            return f"Tool {self.name} registered (sha256 {self.sha256[:12]}, from {self.path})."
        where = f"; review request {self.request_id}" if self.request_id else ""
        return f"Tool {self.name} is quarantined at {self.path}, awaiting review{where}."

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe form (without the Tool object)."""
        return {
            "name": self.name,
            "path": self.path,
            "sha256": self.sha256,
            "status": self.status,
            "signature": self.signature,
            "request_id": self.request_id,
            "reason": self.reason,
        }


def _write(path: Path, data: bytes) -> None:
    """Write atomically, readable by the owner only."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def quarantine(source: str, tools_directory: str | os.PathLike[str], report: ScanReport) -> Path:
    """Put ``source`` in the quarantine folder (with its scan report) and return its path."""
    data = source.encode("utf-8")
    name = report.signature.name if report.signature is not None else "tool"
    folder = Path(tools_directory) / ".quarantine"
    path = folder / f"{name}-{digest(data)[:12]}.py"
    _write(path, data)
    meta = {
        "name": name,
        "sha256": digest(data),
        "created_at": time.time(),
        "findings": [f.to_dict() for f in report.findings],
        "signature": report.signature.to_dict() if report.signature is not None else None,
    }
    _write(path.with_suffix(".json"), json.dumps(meta, indent=2).encode("utf-8"))
    return path


def reviewed_tool(data: bytes, sha256: str, sandbox: Any, timeout: float = 60.0) -> Any:
    """The ``Tool`` of the approved bytes ``data`` (they must hash to ``sha256`` and pass the
    scan again); each call runs in ``sandbox``, never in this process."""
    from lightagent_skills.toolgen.runner import require_sandbox, sandboxed_tool

    require_sandbox(sandbox)
    if digest(data) != sha256:
        raise PolicyError(
            "LA-TOOLGEN-HASH",
            "the tool's source does not match the hash it was approved for; it was not run",
            details={"approved_sha256": sha256, "sha256": digest(data)},
        )
    source = data.decode("utf-8")
    report = scan_source(source)
    if not report.ok or report.signature is None:
        raise PolicyError(
            "LA-TOOLGEN-UNSAFE",
            "the approved source no longer passes the safety scan; it was not run",
            details={"findings": [f.to_dict() for f in report.findings]},
        )
    return sandboxed_tool(source, report, sandbox, timeout=timeout)


def _approval_path(tools_directory: Path, name: str) -> Path:
    return tools_directory / f"{name}.approval.json"


def install(
    data: bytes,
    sha256: str,
    tools_directory: str | os.PathLike[str],
    record: dict[str, Any],
    *,
    sandbox: Any,
    timeout: float = 60.0,
) -> tuple[Path, Any]:
    """Keep approved bytes as ``<name>.py`` with their approval record; returns (path, Tool)."""
    tool = reviewed_tool(data, sha256, sandbox, timeout)
    folder = Path(tools_directory)
    path = folder / f"{tool.name}.py"
    _write(path, data)
    _write(
        _approval_path(folder, tool.name),
        json.dumps({"name": tool.name, "sha256": sha256, **record}, indent=2).encode("utf-8"),
    )
    tool.metadata["generated"] = {"sha256": sha256, "path": str(path)}
    return path, tool


def load_installed(
    name: str,
    tools_directory: str | os.PathLike[str] = "tools",
    *,
    sandbox: Any = None,
    timeout: float = 60.0,
) -> Any:
    """The installed tool ``name`` as a Tool running in ``sandbox``, after checking its bytes
    against its approval (``LA-SANDBOX`` without a sandbox provider)."""
    from lightagent_skills.toolgen.runner import require_sandbox

    require_sandbox(sandbox)
    folder = Path(tools_directory)
    record_path = _approval_path(folder, name)
    source_path = folder / f"{name}.py"
    if not record_path.is_file() or not source_path.is_file():
        raise ValidationError(
            "LA-TOOLGEN-SCHEMA",
            f"no approved generated tool {name!r} in {folder}",
            hint="Generate it with agent.create_tool and approve it first.",
        )
    record = json.loads(record_path.read_text(encoding="utf-8"))
    data = source_path.read_bytes()
    tool = reviewed_tool(data, str(record.get("sha256")), sandbox, timeout)
    tool.metadata["generated"] = {"sha256": record.get("sha256"), "path": str(source_path)}
    return tool
