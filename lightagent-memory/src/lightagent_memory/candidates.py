"""Memory candidates: internal evidence that may not reach a prompt until it is promoted.

A write whose source or scope is internal (reflection, self-learning, tool output,
delegation, trace …) is not stored as memory: it becomes a :class:`MemoryCandidate`,
recorded in the run's event log (``memory_promotion_required``). A
:class:`MemoryPromotionDecision` — from the policy, a hook or a person — approves it,
rewrites it, rejects it or keeps it waiting. :class:`CandidateBook` is the agent's
in-process view of its candidates (the session log is the durable one).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from lightagent.errors import ValidationError

__all__ = [
    "PROMOTION_ACTIONS",
    "CandidateBook",
    "MemoryCandidate",
    "MemoryPromotionDecision",
    "admit_promotion",
    "coerce_decision",
    "hook_blocked",
]

PROMOTION_ACTIONS = ("approve", "reject", "rewrite", "keep")
#: The trace event of each final decision (the seeds' vocabulary).
DECISION_EVENTS = {
    "approve": "memory_promotion_approved",
    "rewrite": "memory_promotion_rewritten",
    "reject": "memory_promotion_rejected",
}
EVENT_ACTIONS = {event: action for action, event in DECISION_EVENTS.items()}


@dataclass
class MemoryPromotionDecision:
    """What happens to a candidate: ``approve``, ``rewrite`` (to ``value``), ``reject`` or ``keep``."""

    action: str = "keep"
    reason: str | None = None
    value: Any = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.action not in PROMOTION_ACTIONS:
            raise ValidationError(
                "LA-VALIDATION",
                f"unknown memory promotion action {self.action!r}",
                hint=f"Use one of {', '.join(PROMOTION_ACTIONS)}.",
                details={"action": repr(self.action)[:100]},
            )
        if self.action == "rewrite" and (self.value is None or not str(self.value).strip()):
            raise ValidationError(
                "LA-VALIDATION",
                "a rewrite decision needs the new text as value",
                hint='MemoryPromotionDecision.rewrite("the corrected memory").',
            )

    @property
    def promotes(self) -> bool:
        """Whether the candidate becomes memory (approve or rewrite)."""
        return self.action in ("approve", "rewrite")

    @property
    def final(self) -> bool:
        """Whether this decides the candidate for good (everything but keep)."""
        return self.action != "keep"

    @classmethod
    def approve(cls, reason: str | None = None, **metadata: Any) -> MemoryPromotionDecision:
        """Promote the candidate as it is."""
        return cls("approve", reason, metadata=metadata)

    @classmethod
    def reject(cls, reason: str | None = None, **metadata: Any) -> MemoryPromotionDecision:
        """Never promote it."""
        return cls("reject", reason, metadata=metadata)

    @classmethod
    def rewrite(
        cls, value: Any, reason: str | None = None, **metadata: Any
    ) -> MemoryPromotionDecision:
        """Promote ``value`` instead of the candidate's text."""
        return cls("rewrite", reason, value, metadata=metadata)

    @classmethod
    def keep(cls, reason: str | None = None, **metadata: Any) -> MemoryPromotionDecision:
        """Leave it a non-injectable candidate (decide later)."""
        return cls("keep", reason, metadata=metadata)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict."""
        return {
            "action": self.action,
            "reason": self.reason,
            "value": self.value,
            "metadata": dict(self.metadata),
        }


def coerce_decision(result: Any) -> MemoryPromotionDecision:
    """A decider's answer as a decision.

    ``None`` keeps; ``True`` approves; ``False`` rejects; a string is an action name
    (``"approve"``) or else a rejection reason; a dict has ``action`` (or ``approved``),
    ``reason``, ``value``, ``metadata``.
    """
    if isinstance(result, MemoryPromotionDecision):
        return result
    if result is None:
        return MemoryPromotionDecision.keep()
    if result is True:
        return MemoryPromotionDecision.approve()
    if result is False:
        return MemoryPromotionDecision.reject("rejected")
    if isinstance(result, str):
        if result in PROMOTION_ACTIONS:
            return MemoryPromotionDecision(result)
        return MemoryPromotionDecision.reject(result)
    if isinstance(result, Mapping):
        action = result.get("action")
        if action is None and "approved" in result:
            action = "approve" if result["approved"] else "reject"
        if action is None and result.get("value") is not None:
            action = "rewrite"
        return MemoryPromotionDecision(
            str(action or "keep"),
            result.get("reason"),
            result.get("value"),
            dict(result.get("metadata") or {}),
        )
    action = getattr(result, "action", None)
    if isinstance(action, str):
        return MemoryPromotionDecision(
            action,
            getattr(result, "reason", None),
            getattr(result, "value", None),
            dict(getattr(result, "metadata", None) or {}),
        )
    raise ValidationError(
        "LA-VALIDATION",
        f"a memory promotion decision cannot be read from {type(result).__name__}",
        hint="Return a MemoryPromotionDecision, True/False, an action name or a dict with action.",
    )


def hook_blocked(ctx: Any, reason: str, outcome: Any) -> None:
    """Trace a ``before_memory_promote`` block (a failed fail-closed hook too) as the seeds
    do: ``hook_block``, beside the ``hook_decision`` the hook manager records."""
    if getattr(ctx, "active", True):
        metadata = getattr(outcome, "metadata", None) or {}
        ctx.emit(
            "hook_block",
            {
                "phase": "before_memory_promote",
                "reason": reason,
                "code": metadata.get("code", "LA-HOOK"),
            },
        )


def admit_promotion(
    policy: Any,
    candidate: MemoryCandidate,
    decision: MemoryPromotionDecision,
    ctx: Mapping[str, Any],
) -> tuple[MemoryPromotionDecision, str | None]:
    """(the decision in force, why the write admission refused or None): a promoting
    decision's text passes the policy's write admission like any write; refused, the
    candidate is kept (blocked), and an admission that rewrites makes it a rewrite."""
    if not decision.promotes:
        return decision, None
    text = decision.value if decision.action == "rewrite" else candidate.data
    verdict: Any = None
    try:
        allows = getattr(policy, "allows_write", None)
        if callable(allows):
            verdict = allows(text, ctx)
        else:
            verdict = policy.admit_write(text, user_id=candidate.original_user_id, context=ctx)
        reason = None if verdict.allowed else str(verdict.reason or "refused")
    except Exception as exc:  # a failing admission refuses
        reason = f"memory write admission failed: {type(exc).__name__}"
    if reason is not None:
        return MemoryPromotionDecision.keep(reason, blocked=True), reason
    if verdict.value is not None:
        return MemoryPromotionDecision(
            "rewrite", decision.reason, verdict.value, dict(decision.metadata)
        ), None
    return decision, None


@dataclass
class MemoryCandidate:
    """Internal evidence waiting for promotion (never injected while ``status == "candidate"``)."""

    data: Any
    memory_user_id: str
    original_user_id: str
    source: str = "reflection"
    scope: str = "agent"
    agent_name: str | None = None
    trace_id: str | None = None
    parent_trace_id: str | None = None
    run_id: str | None = None
    run_group_id: str | None = None
    confidence: float | None = None
    trust_level: str | None = None
    candidate_id: str = field(default_factory=lambda: f"cand_{uuid.uuid4().hex}")
    status: str = "candidate"
    injectable: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)
    session_id: str | None = None
    created_at: float = field(default_factory=time.time)
    #: The tenant of the run that proposed it: the promoted memory is that tenant's.
    tenant_id: str | None = None

    def to_dict(self, *, include_data: bool = True) -> dict[str, Any]:
        """A JSON-safe dict (without ``data`` when ``include_data`` is False)."""
        out = asdict(self)
        out["metadata"] = dict(self.metadata)
        if not include_data:
            out.pop("data")
        return out

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> MemoryCandidate:
        """The candidate a :meth:`to_dict` describes (unknown keys are ignored)."""
        known = {k: raw[k] for k in cls.__dataclass_fields__ if k in raw}
        return cls(**known)

    def write_metadata(self, decision: MemoryPromotionDecision) -> dict[str, Any]:
        """The metadata the promoted memory is stored with."""
        out = {
            **self.metadata,
            "source": self.source,
            "scope": self.scope,
            "agent_name": self.agent_name,
            "trace_id": self.trace_id,
            "parent_trace_id": self.parent_trace_id,
            "run_id": self.run_id,
            "confidence": self.confidence,
            "trust_level": self.trust_level,
            "user_id": self.memory_user_id,
            "tenant_id": self.tenant_id,
            "candidate_id": self.candidate_id,
            "memory_id": self.candidate_id,
            "promotion_status": "promoted",
            "injectable": True,
            "promotion_action": decision.action,
        }
        return {k: v for k, v in out.items() if v is not None}


class CandidateBook:
    """The agent's candidates in this process, and the fingerprints of its recent writes.

    Bounded (oldest dropped first); the session log is the durable record.
    """

    def __init__(self, capacity: int = 1000) -> None:
        self.capacity = capacity
        self._items: OrderedDict[str, MemoryCandidate] = OrderedDict()
        self._recent: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, candidate: MemoryCandidate) -> None:
        """Remember ``candidate`` (replacing one with the same id)."""
        with self._lock:
            self._items[candidate.candidate_id] = candidate
            self._items.move_to_end(candidate.candidate_id)
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)

    def get(self, candidate_id: str) -> MemoryCandidate | None:
        """The candidate, or None."""
        with self._lock:
            return self._items.get(candidate_id)

    def list(self) -> list[MemoryCandidate]:
        """Every candidate known here, oldest first."""
        with self._lock:
            return list(self._items.values())

    def decide(self, candidate: MemoryCandidate) -> bool:
        """Record ``candidate``'s final status unless another decision got there first."""
        with self._lock:
            known = self._items.get(candidate.candidate_id)
            if known is not None and known.status != "candidate":
                return False
            self._items[candidate.candidate_id] = candidate
            return True

    def remember(self, fingerprint: str) -> None:
        """Note a written memory's fingerprint (duplicate checks across runs)."""
        with self._lock:
            self._recent[fingerprint] = None
            self._recent.move_to_end(fingerprint)
            while len(self._recent) > self.capacity:
                self._recent.popitem(last=False)

    def seen(self, fingerprint: str) -> bool:
        """Whether a memory with this fingerprint was written by this agent recently."""
        with self._lock:
            return fingerprint in self._recent
