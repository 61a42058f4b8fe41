"""Quarantine, review records and loading of generated tools, all bound to the file's hash.

A generated source is written to ``<tools_directory>/.quarantine/<name>-<hash12>.py``: a
name no import can reach, in a folder nothing loads from. Its review — by a policy
callable or a person through a review store — is bound to the SHA-256 of those exact
bytes. Only an approved hash is ever executed: the loader hashes the bytes it has read and
runs those same bytes (never a second read), in a namespace whose builtins leave out code
execution and whose imports are limited to the scan's allow-list. An installed tool is
kept as ``<tools_directory>/<name>.py`` with ``<name>.approval.json`` naming its hash;
:func:`load_installed` refuses the file if its bytes no longer match.
"""

from __future__ import annotations

import builtins
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lightagent.errors import PolicyError, ValidationError
from lightagent.toolgen.scan import ALLOWED_MODULES, REFUSED_NAMES, ScanReport, scan_source

__all__ = [
    "GeneratedTool",
    "ToolReview",
    "digest",
    "install",
    "load_installed",
    "quarantine",
    "reviewed_function",
]


def digest(data: bytes) -> str:
    """The hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


@dataclass
class ToolReview:
    """What a reviewer decides on: the exact source, its hash and the tool it defines."""

    name: str
    source: str
    sha256: str
    path: str
    signature: dict[str, Any]
    request: str = ""

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


def _guarded_import(
    name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0
) -> Any:
    if level or not (name in ALLOWED_MODULES or name.split(".")[0] in ALLOWED_MODULES):
        raise ImportError(f"import of {name!r} is not allowed in a generated tool")
    return __import__(name, globals, locals, fromlist, level)


def _builtins() -> dict[str, Any]:
    allowed = {k: v for k, v in vars(builtins).items() if k not in REFUSED_NAMES}
    allowed["__import__"] = _guarded_import
    return allowed


def reviewed_function(data: bytes, sha256: str) -> Callable[..., Any]:
    """Run the approved bytes ``data`` (they must hash to ``sha256``) and return the tool function."""
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
    name = report.signature.name
    namespace: dict[str, Any] = {
        "__name__": f"lightagent_generated_{name}",
        "__builtins__": _builtins(),
    }
    exec(compile(source, f"<generated tool {name} {sha256[:12]}>", "exec"), namespace)
    function = namespace[name]
    info = report.signature.tool_info
    if info is not None and getattr(function, "tool_info", None) is None:
        function.tool_info = info
    return function  # type: ignore[no-any-return]


def _approval_path(tools_directory: Path, name: str) -> Path:
    return tools_directory / f"{name}.approval.json"


def install(
    data: bytes, sha256: str, tools_directory: str | os.PathLike[str], record: dict[str, Any]
) -> tuple[Path, Any]:
    """Keep approved bytes as ``<name>.py`` with their approval record; returns (path, Tool)."""
    from lightagent.tools.decorator import as_tool

    function = reviewed_function(data, sha256)
    tool = as_tool(function, infer=True)
    folder = Path(tools_directory)
    path = folder / f"{tool.name}.py"
    _write(path, data)
    _write(
        _approval_path(folder, tool.name),
        json.dumps({"name": tool.name, "sha256": sha256, **record}, indent=2).encode("utf-8"),
    )
    tool.metadata["generated"] = {"sha256": sha256, "path": str(path)}
    return path, tool


def load_installed(name: str, tools_directory: str | os.PathLike[str] = "tools") -> Any:
    """The installed tool ``name`` as a Tool, after checking its bytes against its approval."""
    from lightagent.tools.decorator import as_tool

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
    tool = as_tool(reviewed_function(data, str(record.get("sha256"))), infer=True)
    tool.metadata["generated"] = {"sha256": record.get("sha256"), "path": str(source_path)}
    return tool
