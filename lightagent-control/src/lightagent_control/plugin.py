"""The lightagent plugin of lightagent-control: the control plane as the agent extension ``control``.

The extension is referenced lazily (``"module:attr"``), so loading this plugin imports
nothing until an agent uses one of its keywords (``hooks=``, ``input_guardrails=`` …) or
attributes (``agent.hooks``, ``agent.guardrails``, ``agent.capability_registry``).
"""

from __future__ import annotations

from typing import Any

from lightagent.hookspecs import hookimpl

__all__ = ["lightagent_manifest", "register_agent_extensions"]


@hookimpl
def register_agent_extensions(register: Any) -> None:
    """Hooks, guardrails, policy, approval and security contexts as the extension ``control``."""
    register("control", "lightagent_control.extension:ControlExtension")


@hookimpl
def lightagent_manifest() -> dict[str, Any]:
    """What ``lightagent plugins`` shows for this distribution."""
    from lightagent_control import __version__

    return {
        "name": "lightagent-control",
        "version": __version__,
        "description": "Hooks, guardrails, policy and approval on one decision path; security contexts and the capability gate.",
        "docs": "docs/security.md",
    }
