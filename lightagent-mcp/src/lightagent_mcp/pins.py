"""Approved tool definitions: the "rug pull" defence.

Each MCP tool's definition (name, description, input and output schema) is hashed
(``ToolDefinition.definition_hash``). The hash approved for ``(server, tool)`` is pinned
here; a definition whose hash differs later is left out of the tool list, and its calls are
refused with ``LA-MCP-UNAPPROVED``, until someone approves the new one. Pins live in memory,
or in a JSON file (``DefinitionPins("pins.json")``) so a change made while the agent was
down is caught at the next start.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from pathlib import Path
from typing import Any

from lightagent_mcp.errors import MCPConfigError

__all__ = ["DefinitionPins"]


class DefinitionPins:
    """``(server, tool) -> approved definition hash``; thread-safe; optionally a JSON file."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self._lock = threading.Lock()
        self._pins: dict[str, dict[str, str]] = {}
        if self.path is not None and self.path.exists():
            try:
                data = json.loads(self.path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise MCPConfigError(
                    "LA-MCP-CONFIG",
                    f"cannot read the MCP definition pins {str(self.path)!r}: {exc}",
                    hint="Fix or remove the file; removing it approves the current definitions again.",
                ) from None
            servers = data.get("servers") if isinstance(data, dict) else None
            if not isinstance(servers, dict):
                raise MCPConfigError(
                    "LA-MCP-CONFIG", f"{str(self.path)!r} is not a definition pins file"
                )
            self._pins = {
                str(s): {str(t): str(h) for t, h in tools.items()}
                for s, tools in servers.items()
                if isinstance(tools, dict)
            }

    def get(self, server: str, tool: str) -> str | None:
        """The approved hash, or None when the tool was never approved."""
        with self._lock:
            return self._pins.get(server, {}).get(tool)

    def pin(self, server: str, tool: str, definition_hash: str) -> None:
        """Approve ``definition_hash`` for ``(server, tool)``."""
        with self._lock:
            self._pins.setdefault(server, {})[tool] = definition_hash
            self._save()

    def forget(self, server: str, tool: str | None = None) -> None:
        """Drop the approval of one tool, or of every tool of ``server``."""
        with self._lock:
            if tool is None:
                self._pins.pop(server, None)
            else:
                self._pins.get(server, {}).pop(tool, None)
            self._save()

    def to_dict(self) -> dict[str, Any]:
        """``{"servers": {server: {tool: hash}}}``."""
        with self._lock:
            return {"servers": {s: dict(t) for s, t in self._pins.items()}}

    def _save(self) -> None:
        if self.path is None:
            return
        body = json.dumps({"servers": self._pins}, indent=2, sort_keys=True)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".pins-", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(body)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
