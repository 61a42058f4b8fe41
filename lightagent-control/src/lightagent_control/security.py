"""Narrowing-only security: who acts, what they may do, and the one gate every sensitive call passes.

* :class:`PermissionSet` — allowed / denied capability names, a risk ceiling and effect
  kinds. ``allowed=None`` means every capability; ``frozenset()`` means none.
  :meth:`PermissionSet.narrow` only ever removes: an empty allow-list narrows to nothing.
* :class:`SecurityContext` — frozen identity (tenant, project, user, session, run, task,
  attempt, agent, parent agent) plus permissions, resources, network, sandbox and a
  deadline. :meth:`SecurityContext.child` and :meth:`SecurityContext.narrow` give child
  agents, jobs, skills and tasks a context that never holds more than its parent.
* :class:`CapabilityGate` — deadline → resource → network → sandbox → permissions →
  approval token → policy → audit event. A denial raises a typed
  :class:`~lightagent.errors.PolicyError` (approval problems: ``ApprovalError``).
* :class:`ApprovalToken` — HMAC-signed, bound, expiring, single-use (see
  :mod:`lightagent_control.tokens`); its uses are recorded in a :class:`TokenLedger`
  (:class:`InMemoryTokenLedger` here, lightagent-review's ``SqlTokenLedger`` across processes).

This module only gathers them; they live in their own modules of this package (the control
plane imports from there, never from here).
"""

from __future__ import annotations

from lightagent.digest import canonical_digest

from lightagent_control.context import (
    SECURITY_CONTEXT_SCHEMA_VERSION,
    PermissionSet,
    SecurityContext,
)
from lightagent_control.gate import CapabilityGate
from lightagent_control.tokens import (
    APPROVAL_KEY_ENV,
    ApprovalToken,
    InMemoryTokenLedger,
    TokenLedger,
    default_ledger,
    resolve_approval_key,
)

__all__ = [
    "APPROVAL_KEY_ENV",
    "SECURITY_CONTEXT_SCHEMA_VERSION",
    "ApprovalToken",
    "CapabilityGate",
    "InMemoryTokenLedger",
    "PermissionSet",
    "SecurityContext",
    "TokenLedger",
    "canonical_digest",
    "default_ledger",
    "resolve_approval_key",
]
