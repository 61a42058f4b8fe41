"""Tools: ``@tool`` and seeds ``tool_info`` callables, the registry and the dispatcher.

Names load on first use so that ``import lightagent.tools`` stays cheap (pydantic is
imported only when a schema is first built). ``ToolIndex``, ``selection_report`` and
``estimate_tokens`` come from lightagent-selection (``LA-MISSING-EXTRA`` without it).
"""

from __future__ import annotations

from lightagent.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "Tool": "lightagent.tools.decorator",
    "tool": "lightagent.tools.decorator",
    "as_tool": "lightagent.tools.decorator",
    "ToolRegistry": "lightagent.tools.registry",
    "AsyncToolDispatcher": "lightagent.tools.dispatch",
    "ToolOutcome": "lightagent.tools.dispatch",
    "ToolSelector": "lightagent.tools.selector",
    "validate_tool_info": "lightagent.tools.diagnostics",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(
    __name__, _EXPORTS, globals(), plugins=("ToolIndex", "selection_report", "estimate_tokens")
)
