"""Human review for lightagent: approval requests and decisions, review stores and the policy engine.

``HumanApprovalHook`` parks sensitive tool calls and handoffs until a human decides;
stores keep requests durably (memory, a JSON file, or SQL) and consume each decision once.
``PolicyEngine`` runs ordered policies that allow, block, require approval or rewrite
arguments; ``PolicyHook`` makes a hook fail closed; ``SqlTokenLedger`` records approval
token uses across processes.

The kernel keeps the decision path these plug into: the gate, the interceptor, the
approval protocol (:mod:`lightagent_control.approval`), :class:`PolicyRequest` and
:class:`PolicyDecision` (:mod:`lightagent.policy`) and the approval tokens.
"""

from __future__ import annotations

from lightagent.policy import PolicyDecision, PolicyRequest

from lightagent_review.hook import HumanApprovalHook, record_feedback
from lightagent_review.ledger import SqlTokenLedger
from lightagent_review.models import (
    DECISION_ACTIONS,
    ApprovalDecision,
    ApprovalRequest,
    HumanFeedback,
    argument_digest,
)
from lightagent_review.policy import Policy, PolicyEngine
from lightagent_review.policy_hook import PolicyHook
from lightagent_review.sql import SqlReviewStore
from lightagent_review.stores import InMemoryReviewStore, JsonReviewStore, ReviewStore

#: The roadmap's ``HumanApprovalTool`` (v0.8.5: approve, reject, edit arguments, time out,
#: resume): here the hook that parks a named tool's calls until a person decides.
HumanApprovalTool = HumanApprovalHook

__all__ = [
    "DECISION_ACTIONS",
    "ApprovalDecision",
    "ApprovalRequest",
    "HumanApprovalHook",
    "HumanApprovalTool",
    "HumanFeedback",
    "InMemoryReviewStore",
    "JsonReviewStore",
    "Policy",
    "PolicyDecision",
    "PolicyEngine",
    "PolicyHook",
    "PolicyRequest",
    "ReviewStore",
    "SqlReviewStore",
    "SqlTokenLedger",
    "argument_digest",
    "record_feedback",
]
