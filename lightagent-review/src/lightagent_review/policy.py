"""The policy engine: ordered policies that allow, block, require approval or rewrite arguments.

A policy is a callable ``policy(request) -> PolicyDecision | None | bool | str | dict``
(sync or async). ``None``/``True`` allow unchanged, ``False`` blocks, a string blocks with
that reason. Rewritten arguments flow into later policies. A policy that raises blocks
the request (fail closed) unless the engine was built with ``fail_closed=False``.

:class:`PolicyRequest` and :class:`PolicyDecision` are the kernel's
(:mod:`lightagent.policy`): the gate and the interceptor speak them to any engine.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from lightagent.deciders import Call, Decider, adecide, decide
from lightagent.errors import ConfigurationError
from lightagent.policy import Policy, PolicyDecision, PolicyRequest

__all__ = ["Policy", "PolicyDecision", "PolicyEngine", "PolicyRequest"]


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
