"""What a policy engine is asked and answers: :class:`PolicyRequest` and :class:`PolicyDecision`.

lightagent-control's gate (``CapabilityGate``) and the loop's interceptor
ask ``policy_engine=`` through :func:`policy_steps`: any object with ``steps(request)``
(a decider) or ``evaluate(request)`` (async or sync, optionally ``evaluate_sync``) that
answers a :class:`PolicyDecision`. The ordered engine of callables, ``PolicyEngine``, is
lightagent-review's (``pip install 'lightagent-core[review]'``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from lightagent.deciders import Call, Decider

__all__ = ["Policy", "PolicyDecision", "PolicyRequest", "policy_steps"]


@dataclass(frozen=True)
class PolicyRequest:
    """What a policy decides on: the capability, its provider, the arguments and the caller's context."""

    capability: Any  # CapabilitySpec
    provider_name: str = ""
    arguments: Mapping[str, Any] = field(default_factory=dict)
    context: Any = None  # SecurityContext, or any object with .metadata
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PolicyDecision:
    """A policy verdict: allowed or not, whether a human must approve, and rewritten arguments."""

    allowed: bool = True
    reason: str | None = None
    requires_approval: bool = False
    arguments: Mapping[str, Any] | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def allow(
        cls, arguments: Mapping[str, Any] | None = None, reason: str | None = None
    ) -> PolicyDecision:
        """Allow, optionally with rewritten ``arguments``."""
        return cls(True, reason, False, dict(arguments) if arguments is not None else None)

    @classmethod
    def rewrite(cls, arguments: Mapping[str, Any], reason: str | None = None) -> PolicyDecision:
        """Allow with rewritten ``arguments``."""
        return cls(True, reason, False, dict(arguments))

    @classmethod
    def block(cls, reason: str) -> PolicyDecision:
        """Deny with ``reason``."""
        return cls(False, reason or "blocked by policy")

    @classmethod
    def approval(cls, reason: str | None = None) -> PolicyDecision:
        """Allow only after a human approves."""
        return cls(True, reason or "requires approval", True)

    require_approval = approval

    @property
    def action(self) -> str:
        """``block``, ``require_approval``, ``rewrite`` or ``allow``."""
        if not self.allowed:
            return "block"
        if self.requires_approval:
            return "require_approval"
        return "rewrite" if self.arguments is not None else "allow"


Policy = Callable[[PolicyRequest], Any]


def policy_steps(engine: Any, request: PolicyRequest) -> Decider[PolicyDecision]:
    """The decider of any policy engine: an object with ``steps`` (lightagent-review's
    ``PolicyEngine``), or with ``evaluate`` (async or sync) and optionally ``evaluate_sync``."""
    steps = getattr(engine, "steps", None)
    if steps is not None:
        return (yield from steps(request))  # type: ignore[no-any-return]
    sync = getattr(engine, "evaluate_sync", None)
    evaluate = engine.evaluate
    return (yield Call(sync or evaluate, (request,), afn=evaluate if sync else None))  # type: ignore[no-any-return]
