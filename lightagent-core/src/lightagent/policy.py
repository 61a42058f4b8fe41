"""The policy engine: ordered policies that allow, block, require approval or rewrite arguments.

A policy is a callable ``policy(request) -> PolicyDecision | None | bool | str | dict``
(sync or async). ``None``/``True`` allow unchanged, ``False`` blocks, a string blocks with
that reason. Rewritten arguments flow into later policies. A policy that raises blocks
the request (fail closed) unless the engine was built with ``fail_closed=False``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from lightagent.deciders import Call, Decider, adecide, decide
from lightagent.errors import ConfigurationError

__all__ = ["Policy", "PolicyDecision", "PolicyEngine", "PolicyRequest", "policy_steps"]


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


def _coerce(result: Any, name: str) -> PolicyDecision:
    if result is None or result is True:
        return PolicyDecision.allow()
    if result is False:
        return PolicyDecision.block(f"policy {name} denied")
    if isinstance(result, PolicyDecision):
        return result
    if isinstance(result, str):
        return PolicyDecision.block(result)
    if isinstance(result, Mapping):
        return PolicyDecision(
            allowed=bool(result.get("allowed", True)),
            reason=result.get("reason"),
            requires_approval=bool(result.get("requires_approval", False)),
            arguments=result.get("arguments"),
            metadata=dict(result.get("metadata") or {}),
        )
    raise ConfigurationError(
        "LA-CONFIG",
        f"policy {name} returned {type(result).__name__}",
        hint="Return a PolicyDecision, None, a bool, a reason string or a dict.",
    )


def _name(policy: Any) -> str:
    return str(getattr(policy, "name", None) or getattr(policy, "__name__", type(policy).__name__))


class PolicyEngine:
    """Ordered policies evaluated on one decision path; fail closed by default."""

    def __init__(
        self, policies: Iterable[Policy] | None = None, *, fail_closed: bool = True
    ) -> None:
        self.policies: list[Policy] = []
        self.fail_closed = fail_closed
        for policy in policies or ():
            self.add(policy)

    def add(self, policy: Policy) -> PolicyEngine:
        """Append a policy (evaluated after the existing ones)."""
        if not callable(policy):
            raise ConfigurationError(
                "LA-CONFIG", f"a policy must be callable, got {type(policy).__name__}"
            )
        self.policies.append(policy)
        return self

    def _prepare(self, request: PolicyRequest) -> PolicyDecision | None:
        spec = request.capability
        context = request.context
        permissions = getattr(context, "permissions", None)
        if permissions is not None and spec is not None and hasattr(permissions, "allows"):
            reason = permissions.denial_reason(spec.name, spec.risk, spec.effects)
            if reason:
                return PolicyDecision.block(reason)
        return None

    def steps(self, request: PolicyRequest) -> Decider[PolicyDecision]:
        """The decision on ``request`` as a decider (:mod:`lightagent.deciders`):
        permissions, the spec's approval flag, then each policy in order."""
        early = self._prepare(request)
        if early is not None:
            return early
        state = _State(request)
        for policy in self.policies:
            try:
                decision = _coerce((yield Call(policy, (state.request,))), _name(policy))
            except Exception as exc:
                if not self.fail_closed:
                    state.notes.append({"policy": _name(policy), "error": type(exc).__name__})
                    continue
                return PolicyDecision.block(
                    f"policy {_name(policy)} failed ({type(exc).__name__}); failing closed"
                )
            if state.apply(decision, _name(policy)):
                return state.final_block
        return state.result()

    async def evaluate(self, request: PolicyRequest) -> PolicyDecision:
        """Decide on ``request`` from async code."""
        return await adecide(self.steps(request))

    def evaluate_sync(self, request: PolicyRequest) -> PolicyDecision:
        """Decide on ``request`` from sync code (async policies run on a private loop)."""
        return decide(self.steps(request))


def policy_steps(engine: Any, request: PolicyRequest) -> Decider[PolicyDecision]:
    """The decider of any policy engine: a :class:`PolicyEngine`, or an object with
    ``evaluate`` (async or sync) and optionally ``evaluate_sync``."""
    steps = getattr(engine, "steps", None)
    if steps is not None:
        return (yield from steps(request))  # type: ignore[no-any-return]
    sync = getattr(engine, "evaluate_sync", None)
    evaluate = engine.evaluate
    return (yield Call(sync or evaluate, (request,), afn=evaluate if sync else None))  # type: ignore[no-any-return]


class _State:
    """The running fold of policy decisions over one request (per evaluation, never shared)."""

    def __init__(self, request: PolicyRequest) -> None:
        spec = request.capability
        self.request = request
        self.requires_approval = bool(getattr(spec, "requires_approval", False))
        self.reasons: list[str] = []
        if self.requires_approval:
            self.reasons.append(f"{getattr(spec, 'name', 'capability')} requires approval")
        self.rewritten = False
        self.notes: list[dict[str, Any]] = []
        self.final_block = PolicyDecision.block("blocked")

    def apply(self, decision: PolicyDecision, name: str) -> bool:
        """Fold one decision in; True when it blocks (evaluation stops)."""
        if not decision.allowed:
            self.final_block = PolicyDecision(
                False,
                decision.reason or f"policy {name} denied",
                False,
                None,
                {**decision.metadata, "policy": name},
            )
            return True
        if decision.requires_approval:
            self.requires_approval = True
            self.reasons.append(decision.reason or f"policy {name} requires approval")
        if decision.arguments is not None:
            self.rewritten = True
            self.request = PolicyRequest(
                self.request.capability,
                self.request.provider_name,
                dict(decision.arguments),
                self.request.context,
                self.request.metadata,
            )
        return False

    def result(self) -> PolicyDecision:
        args = dict(self.request.arguments) if self.rewritten else None
        meta: dict[str, Any] = {"policy_errors": self.notes} if self.notes else {}
        if self.requires_approval:
            return PolicyDecision(True, "; ".join(self.reasons), True, args, meta)
        return PolicyDecision(True, None, False, args, meta)
