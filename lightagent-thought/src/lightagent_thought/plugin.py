"""The lightagent plugin of lightagent-thought: the Tree-of-Thought agent extension.

The extension is referenced lazily (``"module:attr"``), so loading this plugin imports
nothing until an agent uses ``tree_of_thought=`` or one of its attributes.
"""

from __future__ import annotations

from typing import Any

from lightagent.hookspecs import hookimpl

__all__ = ["lightagent_manifest", "register_agent_extensions"]


@hookimpl
def register_agent_extensions(register: Any) -> None:
    """Tree of Thought as the agent extension ``thought``."""
    register("thought", "lightagent_thought.extension:ThoughtExtension")


@hookimpl
def lightagent_manifest() -> dict[str, Any]:
    """What ``lightagent plugins`` shows for this distribution."""
    from lightagent_thought import __version__

    return {
        "name": "lightagent-thought",
        "version": __version__,
        "description": "Tree of Thought: plan and reflect over the run's real tools before the first model request.",
        "docs": "docs/tree-of-thought.md",
    }
