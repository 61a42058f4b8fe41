"""The control plane for lightagent: hooks, guardrails, policy and approval on one decision path.

``LightAgent(hooks=..., input_guardrails=..., tool_guardrails=..., output_guardrails=...,
policy_engine=..., capability_registry=..., approval=..., security_context=...)`` reaches
this distribution through its agent extension (:mod:`lightagent_control.extension`), which
builds the agent's :class:`ControlInterceptor`: the kernel's interceptor seam
(:class:`lightagent.interceptors.Interceptor`) asks it at every phase of a run.

It also holds what other capabilities build on: narrowing-only security contexts
(:class:`SecurityContext`, :class:`PermissionSet`), the :class:`CapabilityGate` every
sensitive operation passes, capability specs and the scoped :class:`CapabilityRegistry`,
and HMAC-signed single-use :class:`ApprovalToken` with their ledgers. The kernel keeps the
vocabulary these speak: the hook types (:mod:`lightagent.hooks`), :class:`PolicyRequest`
and :class:`PolicyDecision` (:mod:`lightagent.policy`) and the interceptor protocol.
"""

from __future__ import annotations

from lightagent_control.approval import Approver, argument_digest
from lightagent_control.capabilities import (
    EFFECTS,
    BaseCapabilityProvider,
    CapabilityProvider,
    CapabilityRegistry,
    CapabilityRisk,
    CapabilityScope,
    CapabilitySpec,
    ProviderHealth,
    Registration,
)
from lightagent_control.hook_manager import HookManager
from lightagent_control.interceptor import ControlInterceptor, GuardrailRunner, build_interceptor
from lightagent_control.security import (
    APPROVAL_KEY_ENV,
    SECURITY_CONTEXT_SCHEMA_VERSION,
    ApprovalToken,
    CapabilityGate,
    InMemoryTokenLedger,
    PermissionSet,
    SecurityContext,
    TokenLedger,
    default_ledger,
    resolve_approval_key,
)

__version__ = "0.1.0"

__all__ = [
    "APPROVAL_KEY_ENV",
    "EFFECTS",
    "SECURITY_CONTEXT_SCHEMA_VERSION",
    "ApprovalToken",
    "Approver",
    "BaseCapabilityProvider",
    "CapabilityGate",
    "CapabilityProvider",
    "CapabilityRegistry",
    "CapabilityRisk",
    "CapabilityScope",
    "CapabilitySpec",
    "ControlInterceptor",
    "GuardrailRunner",
    "HookManager",
    "InMemoryTokenLedger",
    "PermissionSet",
    "ProviderHealth",
    "Registration",
    "SecurityContext",
    "TokenLedger",
    "argument_digest",
    "build_interceptor",
    "default_ledger",
    "resolve_approval_key",
]
