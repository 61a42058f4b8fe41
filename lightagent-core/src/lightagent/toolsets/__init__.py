"""Toolsets: sources of tools with a lifecycle (see :mod:`lightagent.toolsets.protocol`)."""

from __future__ import annotations

from lightagent.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "BaseToolset": "lightagent.toolsets.protocol",
    "FunctionToolset": "lightagent.toolsets.function",
    "ToolCallContext": "lightagent.toolsets.protocol",
    "ToolDefinition": "lightagent.toolsets.protocol",
    "ToolResult": "lightagent.toolsets.protocol",
    "Toolset": "lightagent.toolsets.protocol",
    "ToolsetConflict": "lightagent.toolsets.router",
    "ToolsetOwner": "lightagent.toolsets.owner",
    "ToolsetRouter": "lightagent.toolsets.router",
    "ToolsetView": "lightagent.toolsets.router",
    "is_toolset": "lightagent.toolsets.protocol",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
