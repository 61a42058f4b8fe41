"""The lightagent plugin of lightagent-selection: the ``bm25`` tool selector.

The selector is referenced lazily (``"module:attr"``), so loading this plugin imports
nothing until a run holds more tools than its threshold or a selection method is called.
"""

from __future__ import annotations

from typing import Any

from lightagent.hookspecs import hookimpl

__all__ = ["lightagent_manifest", "register_tool_selectors"]


@hookimpl
def register_tool_selectors(register: Any) -> None:
    """BM25 ranking as the tool selector ``bm25``."""
    register("bm25", "lightagent_selection.selector:SELECTOR")


@hookimpl
def lightagent_manifest() -> dict[str, Any]:
    """What ``lightagent plugins`` shows for this distribution."""
    from lightagent_selection import __version__

    return {
        "name": "lightagent-selection",
        "version": __version__,
        "description": "Adaptive tool selection: offer each model request the tools that match it.",
        "providers": {"tool_selector": ("bm25",)},
        "docs": "docs/tools.md",
    }
