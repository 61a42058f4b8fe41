"""``CapabilityGate``: the one decision path every sensitive operation passes.

Order: deadline, resource, network, sandbox, permissions, approval token (checked), policy
engine, then the token is consumed and an audit event is written. Denials raise typed
:class:`~lightagent.errors.PolicyError` / :class:`~lightagent.errors.ApprovalError`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from lightagent.capabilities import CapabilitySpec
from lightagent.control.tokens import (
    ApprovalToken,
    InMemoryTokenLedger,
    TokenLedger,
    canonical_digest,
    default_ledger,
)
from lightagent.errors import ApprovalError, ConfigurationError, LightAgentError, PolicyError
from lightagent.policy import PolicyDecision, PolicyRequest

__all__ = ["CapabilityGate"]

_audit_log = logging.getLogger("lightagent.audit")


class CapabilityGate:
    """The one decision path for sensitive operations; every decision leaves an audit event.

    ``audit`` is a callable ``audit(type, data)`` (``RunContext.emit`` fits); without it
    decisions go to the ``lightagent.audit`` logger. Events carry digests, never argument values.
    """

    def __init__(
        self,
        registry: Any = None,
        *,
        policy_engine: Any = None,
        audit: Any = None,
        ledger: TokenLedger | None = None,
        key: bytes | str | None = None,
    ) -> None:
        self.registry = registry
        self.policy_engine = (
            policy_engine if policy_engine is not None else getattr(registry, "policy_engine", None)
        )
        self.audit = audit
        self.ledger = ledger if ledger is not None else default_ledger()
        self._key = key

    # -- the decision path ------------------------------------------------------------
    def _precheck(
        self,
        spec: CapabilitySpec,
        arguments: Mapping[str, Any],
        context: Any,
        approval_token: ApprovalToken | None,
        resource: str | None,
    ) -> bool:
        """Deadline, resource, network, sandbox, permissions and token binding; True if a token was checked."""
        from lightagent.security import SecurityContext

        if not isinstance(context, SecurityContext):
            raise ConfigurationError(
                "LA-CONFIG", f"CapabilityGate needs a SecurityContext, got {type(context).__name__}"
            )
        if context.expired():
            raise PolicyError("LA-POLICY", "the deadline has passed", details={"check": "deadline"})
        if resource is not None or context.resources is not None:
            if not context.allows_resource(resource):
                raise PolicyError(
                    "LA-POLICY",
                    f"resource {resource!r} is outside this context",
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
        if approval_token is not None:
            if not isinstance(approval_token, ApprovalToken):
                raise ApprovalError(
                    "LA-APPROVAL-MISMATCH", "approval_token must be an ApprovalToken"
                )
            approval_token.check(
                spec.name, dict(arguments), context, key=self._key, resource=resource
            )
            return True
        if spec.requires_approval:
            raise ApprovalError(
                "LA-APPROVAL",
                f"{spec.name} requires an approval token",
                details={"check": "approval", "capability": spec.name},
            )
        return False

    def _finish(
        self,
        decision: PolicyDecision,
        spec: CapabilitySpec,
        provider_name: str,
        arguments: Mapping[str, Any],
        context: Any,
        approval_token: ApprovalToken | None,
        token_ok: bool,
        resource: str | None,
    ) -> PolicyDecision:
        if not decision.allowed:
            raise PolicyError(
                "LA-POLICY", decision.reason or "denied by policy", details={"check": "policy"}
            )
        if decision.requires_approval and not token_ok:
            raise ApprovalError(
                "LA-APPROVAL",
                decision.reason or f"{spec.name} requires approval",
                details={"check": "approval", "capability": spec.name},
            )
        return decision

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
    ) -> PolicyDecision:
        """Authorize one call; returns the decision (maybe with rewritten arguments) or raises PolicyError."""
        args = dict(arguments or {})
        try:
            token_ok = self._precheck(spec, args, context, approval_token, resource)  # type: ignore[arg-type]
            decision = PolicyDecision.allow()
            if self.policy_engine is not None:
                decision = await self.policy_engine.evaluate(
                    self._policy_request(spec, provider_name, args, context, token_ok)
                )
            self._finish(
                decision,
                spec,
                provider_name,
                args,
                context,
                approval_token,
                token_ok,
                resource,  # type: ignore[arg-type]
            )
            if approval_token is not None:
                if isinstance(self.ledger, InMemoryTokenLedger):
                    approval_token.consume(self.ledger)
                else:  # a durable ledger does I/O: keep it off the event loop
                    await asyncio.to_thread(approval_token.consume, self.ledger)
            return self._allowed(decision, spec, provider_name, args, context, resource)
        except LightAgentError as exc:
            self._audit("deny", spec, provider_name, args, context, resource, exc.message, exc)
            raise

    def authorize_sync(
        self,
        spec: CapabilitySpec,
        provider_name: str = "",
        arguments: Mapping[str, Any] | None = None,
        context: Any = None,
        *,
        approval_token: ApprovalToken | None = None,
        resource: str | None = None,
    ) -> PolicyDecision:
        """Sync form of :meth:`authorize`."""
        args = dict(arguments or {})
        try:
            token_ok = self._precheck(spec, args, context, approval_token, resource)  # type: ignore[arg-type]
            decision = PolicyDecision.allow()
            if self.policy_engine is not None:
                decision = self.policy_engine.evaluate_sync(
                    self._policy_request(spec, provider_name, args, context, token_ok)
                )
            self._finish(
                decision,
                spec,
                provider_name,
                args,
                context,
                approval_token,
                token_ok,
                resource,  # type: ignore[arg-type]
            )
            if approval_token is not None:
                approval_token.consume(self.ledger)
            return self._allowed(decision, spec, provider_name, args, context, resource)
        except LightAgentError as exc:
            self._audit("deny", spec, provider_name, args, context, resource, exc.message, exc)
            raise

    async def invoke(
        self,
        capability: str,
        arguments: Mapping[str, Any] | None,
        context: Any,
        *,
        approval_token: ApprovalToken | None = None,
        resource: str | None = None,
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
