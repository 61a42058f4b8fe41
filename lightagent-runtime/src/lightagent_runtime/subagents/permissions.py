"""How a subagent's permissions are made and enforced: intersected with what its parent
holds, and bound to the agent's tool calls (a LightAgent's interceptor)."""

from __future__ import annotations

from typing import Any

from lightagent.errors import ConfigurationError, PolicyError
from lightagent_control.context import PermissionSet, SecurityContext

__all__ = ["bind_security", "intersect"]


def intersect(context: SecurityContext, given: PermissionSet | SecurityContext) -> SecurityContext:
    """``context`` narrowed to what ``given`` also holds (never strict: both are parents)."""
    permissions = given.permissions if isinstance(given, SecurityContext) else given
    if not isinstance(permissions, PermissionSet):
        raise ConfigurationError(
            "LA-CONFIG",
            f"parent_permissions= must be a PermissionSet or SecurityContext, got {type(given).__name__}",
        )
    narrowing: dict[str, Any] = {
        "denied_capabilities": permissions.denied,
        "max_risk": min(permissions.max_risk, context.permissions.max_risk),
    }
    if permissions.allowed is not None:
        narrowing["allowed_capabilities"] = permissions.allowed
    if permissions.effects is not None:
        narrowing["effects"] = permissions.effects
    return context.narrow(**narrowing)


def bind_security(agent: Any, context: SecurityContext) -> None:
    """Make the agent's tool calls answer to ``context`` (a LightAgent's interceptor).

    An agent that already has a narrower context keeps it; one whose own context holds
    more than ``context`` is refused (``LA-PERMISSION-WIDEN``): a child never widens.
    """
    if not hasattr(agent, "interceptor"):
        return  # not a LightAgent: the caller enforces (manager.context(agent_id))
    interceptor = agent.interceptor
    if interceptor is None and _unrestricted(context):
        return  # nothing to enforce: the agent's calls stay on their fast path
    if interceptor is None:
        from lightagent_control.interceptor import build_interceptor

        agent.interceptor = build_interceptor(security_context=context)
        return
    own = getattr(interceptor, "security_context", None)
    if own is None:
        interceptor.security_context = context
    elif not own.is_within(context):
        raise PolicyError(
            "LA-PERMISSION-WIDEN",
            f"agent {getattr(agent, 'name', agent)!r} holds more than its parent allows",
            hint="Give the agent no security_context= of its own, or one within the parent's.",
            details={"agent": own.to_dict(), "allowed": context.to_dict()},
        )


def _unrestricted(context: SecurityContext) -> bool:
    """Whether ``context`` allows everything (binding it would check nothing)."""
    return (
        context.permissions == PermissionSet()
        and context.resources is None
        and context.network_allowed
        and not context.sandbox_required
        and context.deadline is None
    )
