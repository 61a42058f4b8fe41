"""``CapabilityGate``: the one decision path every sensitive operation passes.

Order: deadline, resource, network, sandbox, permissions, approval token (checked), policy
engine, then approval (a checked token, or the gate's human-approval path; neither fails
closed), the token is consumed and an audit event is written. Denials raise typed
:class:`~lightagent.errors.PolicyError` / :class:`~lightagent.errors.ApprovalError`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from lightagent.deciders import Call, Decider, adecide, decide
from lightagent.errors import ApprovalError, ConfigurationError, LightAgentError, PolicyError
from lightagent.hooks.types import HookContext, HookDecision
from lightagent.policy import PolicyDecision, PolicyRequest, policy_steps

from lightagent_control.approval import approver as approval_path
from lightagent_control.specs import CapabilitySpec
from lightagent_control.tokens import (
    ApprovalToken,
    InMemoryTokenLedger,
    TokenLedger,
    canonical_digest,
    default_ledger,
)

__all__ = ["CAPABILITY_APPROVAL_ACTION", "CapabilityGate"]

_audit_log = logging.getLogger("lightagent.audit")


class CapabilityGate:
    """The one decision path for sensitive operations; every decision leaves an audit event.

    ``audit`` is a callable ``audit(type, data)`` (``RunContext.emit`` fits); without it
    decisions go to the ``lightagent.audit`` logger. Events carry digests, never argument values.
    ``approval`` (an :class:`~lightagent_control.approval.Approver` such as
    lightagent-review's ``HumanApprovalHook``, a review store or a reviewer callable) answers approvals that arrive without an :class:`ApprovalToken`;
    without it such a call is refused with ``LA-APPROVAL`` (fail closed).
    """

    def __init__(
        self,
        registry: Any = None,
        *,
        policy_engine: Any = None,
        audit: Any = None,
        ledger: TokenLedger | None = None,
        key: bytes | str | None = None,
        approval: Any = None,
    ) -> None:
        self.registry = registry
        self.policy_engine = (
            policy_engine if policy_engine is not None else getattr(registry, "policy_engine", None)
        )
        self.audit = audit
        self.ledger = ledger if ledger is not None else default_ledger()
        self._key = key
        self.approval = approval_path(approval)

    # -- the decision path (written once; authorize and authorize_sync drive it) --------
    def _precheck(
        self,
        spec: CapabilitySpec,
        arguments: Mapping[str, Any],
        context: Any,
        approval_token: ApprovalToken | None,
        resource: str | None,
        scoped: bool,
        approver: Any = None,
    ) -> bool:
        """Deadline, resource, network, sandbox, permissions and token binding; True if a token was checked.

        ``scoped=False`` (the registry with a context that is not a SecurityContext) skips
        the context checks: there is no context to check, only policy and approval.
        """
        from lightagent_control.context import SecurityContext

        if scoped:
            if not isinstance(context, SecurityContext):
                raise ConfigurationError(
                    "LA-CONFIG",
                    f"CapabilityGate needs a SecurityContext, got {type(context).__name__}",
                )
            self._check_context(spec, context, resource)
        if approval_token is not None:
            if not isinstance(approval_token, ApprovalToken):
                raise ApprovalError(
                    "LA-APPROVAL-MISMATCH", "approval_token must be an ApprovalToken"
                )
            approval_token.check(
                spec.name, dict(arguments), context, key=self._key, resource=resource
            )
            return True
        if spec.requires_approval and approver is None:
            raise _no_approval(spec, f"{spec.name} requires an approval token")
        return False

    @staticmethod
    def _check_context(spec: CapabilitySpec, context: Any, resource: str | None) -> None:
        if context.expired():
            raise PolicyError("LA-POLICY", "the deadline has passed", details={"check": "deadline"})
        if resource is not None or context.resources is not None:
            reason = context.resource_denial(resource)
            if reason is not None:
                raise PolicyError(
                    "LA-POLICY",
                    reason,
                    details={"check": "resource", "resource": resource},
                )
        if spec.network and not context.network_allowed:
            raise PolicyError(
                "LA-POLICY", f"{spec.name} needs the network", details={"check": "network"}
            )
        if spec.requires_sandbox and not context.sandbox_required:
            raise PolicyError(
                "LA-SANDBOX", f"{spec.name} must run in a sandbox", details={"check": "sandbox"}
            )
        reason = context.permissions.denial_reason(spec.name, spec.risk, spec.effects)
        if reason:
            raise PolicyError("LA-POLICY", reason, details={"check": "permissions"})

    def steps(
        self,
        spec: CapabilitySpec,
        provider_name: str = "",
        arguments: Mapping[str, Any] | None = None,
        context: Any = None,
        *,
        scoped: bool = True,
        approver: Any = None,
        approval_token: ApprovalToken | None = None,
        approval_id: str | None = None,
        resource: str | None = None,
    ) -> Decider[PolicyDecision]:
        """:meth:`authorize` as a decider (:mod:`lightagent.deciders`): policies, approval and
        the token's consumption are the calls it yields; a denial is audited, then raised.

        ``scoped=False`` (the registry with a context that is not a SecurityContext) skips
        the context checks; ``approver`` stands in for a gate without its own approval path.
        """
        args = dict(arguments or {})
        try:
            approver = approver if approver is not None else self.approval
            token_ok = self._precheck(
                spec, args, context, approval_token, resource, scoped, approver
            )
            decision = PolicyDecision.allow()
            if self.policy_engine is not None:
                decision = yield from policy_steps(
                    self.policy_engine,
                    self._policy_request(spec, provider_name, args, context, token_ok),
                )
            if not decision.allowed:
                raise PolicyError(
                    "LA-POLICY", decision.reason or "denied by policy", details={"check": "policy"}
                )
            if not token_ok and (spec.requires_approval or decision.requires_approval):
                reason = decision.reason if decision.requires_approval else None
                reason = reason or f"{spec.name} requires approval"
                if approver is None:
                    raise _no_approval(spec, reason)
                current = dict(decision.arguments) if decision.arguments is not None else args
                ctx = self._approval_context(spec, current, context, approval_id)
                verdict = yield from approver.steps(ctx, force=True, reason=reason)
                edited = _approved(verdict, spec)
                if edited is not None:
                    decision = replace(decision, arguments=edited)
                decision = replace(decision, requires_approval=False)
            if approval_token is not None:
                # a durable ledger does I/O: on an event loop it runs in a worker thread
                durable = not isinstance(self.ledger, InMemoryTokenLedger)
                yield Call(approval_token.consume, (self.ledger,), offload=durable)
            return self._allowed(decision, spec, provider_name, args, context, resource)
        except LightAgentError as exc:
            self._audit("deny", spec, provider_name, args, context, resource, exc.message, exc)
            raise

    def _approval_context(
        self, spec: CapabilitySpec, args: dict[str, Any], context: Any, approval_id: str | None
    ) -> HookContext:
        # A capability approval is bound to its own action kind, so one given for a tool
        # call of the same name never answers it (and the other way round).
        return HookContext(
            phase=CAPABILITY_APPROVAL_ACTION,
            payload={"tool_name": spec.name, "arguments": args, "call_id": None},
            run_id=getattr(context, "run_id", None),
            user_id=getattr(context, "user_id", None),
            agent_name=getattr(context, "agent_id", None),
            metadata=dict(getattr(context, "metadata", None) or {}),
            approval_id=approval_id,
            security_context=context,
            emitter=self._emit,
        )

    def _emit(self, kind: str, data: dict[str, Any]) -> None:
        if self.audit is None:
            _audit_log.info("%s %s", kind, data.get("action_name"), extra={"audit": data})
            return
        try:
            self.audit(kind, data)
        except Exception:  # an audit sink failure is shown, never allowed to change the decision
            _audit_log.exception("approval audit sink failed")

    def _allowed(
        self,
        decision: PolicyDecision,
        spec: CapabilitySpec,
        provider_name: str,
        arguments: Mapping[str, Any],
        context: Any,
        resource: str | None,
    ) -> PolicyDecision:
        self._audit("allow", spec, provider_name, arguments, context, resource, decision.reason)
        return decision

    def _policy_request(
        self,
        spec: CapabilitySpec,
        provider_name: str,
        arguments: Mapping[str, Any],
        context: Any,
        token_ok: bool,
    ) -> PolicyRequest:
        # A verified token answers the spec's own approval flag; policies still run.
        checked = replace(spec, requires_approval=False) if token_ok else spec
        return PolicyRequest(checked, provider_name, dict(arguments), context)

    async def authorize(
        self,
        spec: CapabilitySpec,
        provider_name: str = "",
        arguments: Mapping[str, Any] | None = None,
        context: Any = None,
        *,
        approval_token: ApprovalToken | None = None,
        resource: str | None = None,
        approval_id: str | None = None,
    ) -> PolicyDecision:
        """Authorize one call; returns the decision (maybe with rewritten arguments) or raises PolicyError.

        ``approval_id`` names a resolved request of this gate's ``approval`` store (the
        ``request_id`` of an earlier ``LA-APPROVAL-PENDING``).
        """
        options: dict[str, Any] = {"approval_token": approval_token, "resource": resource}
        return await adecide(
            self.steps(spec, provider_name, arguments, context, approval_id=approval_id, **options)
        )

    def authorize_sync(
        self, spec: CapabilitySpec, provider_name: str = "", *args: Any, **options: Any
    ) -> PolicyDecision:
        """Sync form of :meth:`authorize` (the same arguments)."""
        return decide(self.steps(spec, provider_name, *args, **options))

    async def invoke(
        self,
        capability: str,
        arguments: Mapping[str, Any] | None,
        context: Any,
        *,
        approval_token: ApprovalToken | None = None,
        resource: str | None = None,
        approval_id: str | None = None,
    ) -> Any:
        """Authorize and invoke ``capability`` through the registry."""
        if self.registry is None:
            raise ConfigurationError("LA-CONFIG", "CapabilityGate.invoke needs a registry")
        return await self.registry.invoke(
            capability,
            arguments,
            context=context,
            approval_token=approval_token,
            resource=resource,
            approval_id=approval_id,
        )

    def _audit(
        self,
        outcome: str,
        spec: CapabilitySpec,
        provider_name: str,
        arguments: Mapping[str, Any],
        context: Any,
        resource: str | None,
        reason: str | None,
        error: LightAgentError | None = None,
    ) -> None:
        data = {
            "decision": outcome,
            "capability": spec.name,
            "provider": provider_name,
            "risk": f"L{int(spec.risk)}",
            "argument_digest": canonical_digest(dict(arguments)),
            "resource": resource,
            "reason": reason,
            "code": error.code if error is not None else None,
            "check": error.details.get("check") if error is not None else None,
            "at": time.time(),
        }
        for name in (
            "tenant_id",
            "project_id",
            "user_id",
            "run_id",
            "task_id",
            "attempt_id",
            "agent_id",
        ):
            data[name] = getattr(context, name, None)
        if self.audit is None:
            _audit_log.info("capability.gate %s %s", outcome, spec.name, extra={"audit": data})
            return
        try:
            self.audit("capability.gate", data)
        except Exception:  # an audit sink failure is shown, never allowed to change the decision
            _audit_log.exception("capability.gate audit sink failed")


#: The approval action a capability call is bound to (tools use ``before_tool_call``).
CAPABILITY_APPROVAL_ACTION = "capability_invoke"


def _no_approval(spec: CapabilitySpec, reason: str) -> ApprovalError:
    return ApprovalError(
        "LA-APPROVAL",
        f"{reason}, and no approval path is configured",
        hint=(
            "Pass approval_token= (ApprovalToken.issue), or give the registry or gate "
            "approval= (a HumanApprovalHook, a review store or a reviewer callable)."
        ),
        details={"check": "approval", "capability": spec.name},
    )


def _approved(verdict: HookDecision, spec: CapabilitySpec) -> dict[str, Any] | None:
    """The reviewer's arguments when they edited the call, None when they approved it as is."""
    if verdict.action == "continue":
        return None
    if verdict.action == "replace" and isinstance(verdict.payload, Mapping):
        return dict(verdict.payload.get("arguments") or {})
    meta = dict(verdict.metadata)
    code = str(meta.get("code") or "LA-APPROVAL")
    reason = verdict.reason or f"{spec.name} was not approved"
    if reason.startswith(f"[{code}] "):
        reason = reason[len(code) + 3 :]
    details = {"check": "approval", "capability": spec.name}
    if meta.get("request_id"):
        details["request_id"] = meta["request_id"]
    raise ApprovalError(code, reason, details=details)
