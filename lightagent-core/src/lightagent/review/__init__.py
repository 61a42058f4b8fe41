"""Human review: approval requests, reviewer decisions, review stores and feedback.

``HumanApprovalHook`` parks sensitive tool calls and handoffs until a human decides;
stores keep requests durably (memory, a JSON file, or SQL) and consume each decision once.
"""

from __future__ import annotations

from lightagent.review.hook import HumanApprovalHook, record_feedback
from lightagent.review.models import (
    DECISION_ACTIONS,
    ApprovalDecision,
    ApprovalRequest,
    HumanFeedback,
    argument_digest,
)
from lightagent.review.sql import SqlReviewStore
from lightagent.review.stores import InMemoryReviewStore, JsonReviewStore, ReviewStore

__all__ = [
    "DECISION_ACTIONS",
    "ApprovalDecision",
    "ApprovalRequest",
    "HumanApprovalHook",
    "HumanFeedback",
    "InMemoryReviewStore",
    "JsonReviewStore",
    "ReviewStore",
    "SqlReviewStore",
    "argument_digest",
    "record_feedback",
]
