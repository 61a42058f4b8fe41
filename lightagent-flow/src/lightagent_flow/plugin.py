"""The lightagent plugin of lightagent-flow: registers LightFlow as the ``lightflow`` workflow."""

from __future__ import annotations

from typing import Any

import lightagent.hookspecs

__all__ = ["lightagent_manifest", "register_hookspecs", "register_workflows"]


@lightagent.hookspecs.hookimpl
def register_hookspecs(add: Any) -> None:
    """Declare the hooks LightFlow owns (``register_workflows``)."""
    from lightagent_flow import hookspecs

    add(hookspecs, kinds=hookspecs.KINDS)


@lightagent.hookspecs.hookimpl
def register_workflows(register: Any) -> None:
    """Register ``LightFlow`` under the name ``lightflow`` (a lazy reference, imported on first use)."""
    register("lightflow", "lightagent_flow:LightFlow")


@lightagent.hookspecs.hookimpl
def lightagent_manifest() -> dict[str, Any]:
    """This plugin's manifest fields."""
    from lightagent_flow import __version__

    return {
        "name": "lightagent-flow",
        "version": __version__,
        "description": "LightFlow: deterministic, durable, resumable multi-step agent workflows.",
        "docs": "docs/flow.md",
        "provides": {"workflow": ["lightflow"]},
    }
