"""Approval requests, reviewer decisions and human feedback (plain data, JSON round-trips)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from lightagent.errors import ConfigurationError
from lightagent_control.approval import argument_digest

__all__ = [
    "DECISION_ACTIONS",
    "ApprovalDecision",
    "ApprovalRequest",
    "HumanFeedback",
    "argument_digest",
]

DECISION_ACTIONS = ("pending", "approve", "reject", "edit", "respond")


def _from_mapping(cls: Any, data: Mapping[str, Any]) -> Any:
    names = {f.name for f in fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise ConfigurationError("LA-CONFIG", f"{cls.__name__} has no fields {unknown}")
    return cls(**dict(data))


@dataclass
class ApprovalRequest:
    """One operation waiting for a human: what, with which arguments, for which run and user."""

    action: str = "before_tool_call"
    request_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    run_id: str | None = None
    trace_id: str | None = None
    action_name: str | None = None
    tool_name: str | None = None
    arguments: Any = None
    source_agent: str | None = None
    target_agent: str | None = None
    allowed_decisions: tuple[str, ...] = ("approve", "reject", "edit")
    reviewer_metadata: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    created_at: float = field(default_factory=time.time)
    user_id: str | None = None
    call_id: str | None = None
    reason: str | None = None
    batch_id: str | None = None
    argument_digest: str = ""

    def __post_init__(self) -> None:
        self.allowed_decisions = tuple(self.allowed_decisions)
        bad = [d for d in self.allowed_decisions if d not in DECISION_ACTIONS]
        if bad:
            raise ConfigurationError("LA-CONFIG", f"unknown decisions {bad} in allowed_decisions")
        if not self.action_name:
            self.action_name = self.tool_name
        if not self.argument_digest:
            self.argument_digest = argument_digest(self.action_name, self.arguments)

    def binding(self) -> dict[str, Any]:
        """What a decision for this request is bound to (agents only for handoffs)."""
        handoff = self.action == "on_handoff"
        return {
            "action": self.action,
            "action_name": self.action_name,
            "argument_digest": self.argument_digest,
            "user_id": self.user_id,
            "source_agent": self.source_agent if handoff else None,
            "target_agent": self.target_agent if handoff else None,
        }

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe form."""
        data = asdict(self)
        data["allowed_decisions"] = list(self.allowed_decisions)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ApprovalRequest:
        """Rebuild from :meth:`to_dict` output."""
        return _from_mapping(cls, data)


@dataclass
class ApprovalDecision:
    """A reviewer's answer: approve, reject, edit (new arguments), respond (a reply) or pending."""

    action: str = "pending"
    request_id: str | None = None
    reason: str | None = None
    arguments: Any = None
    response: str | None = None
    reviewer_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    decided_at: float = field(default_factory=time.time)

    def __post_init__(self) -> None:
        if self.action not in DECISION_ACTIONS:
            raise ConfigurationError(
                "LA-CONFIG",
                f"unknown approval decision {self.action!r}",
                hint=f"Use one of {', '.join(DECISION_ACTIONS)}.",
            )
        if self.action == "edit" and not isinstance(self.arguments, Mapping):
            raise ConfigurationError(
                "LA-CONFIG", "an edit decision needs the new arguments (a dict)"
            )

    @classmethod
    def approve(cls, reason: str | None = None, **kw: Any) -> ApprovalDecision:
        """Run the operation as requested."""
        return cls("approve", reason=reason, **kw)

    @classmethod
    def reject(cls, reason: str | None = None, **kw: Any) -> ApprovalDecision:
        """Do not run it; the model sees ``reason``."""
        return cls("reject", reason=reason or "rejected by reviewer", **kw)

    @classmethod
    def edit(
        cls, arguments: Mapping[str, Any], reason: str | None = None, **kw: Any
    ) -> ApprovalDecision:
        """Run it with the reviewer's ``arguments``."""
        return cls(
            "edit",
            reason=reason,
            arguments=dict(arguments) if isinstance(arguments, Mapping) else arguments,
            **kw,
        )

    @classmethod
    def respond(cls, response: str, reason: str | None = None, **kw: Any) -> ApprovalDecision:
        """Do not run it; the model gets the reviewer's ``response`` instead."""
        return cls("respond", reason=reason, response=response, **kw)

    @classmethod
    def pending(cls, reason: str | None = None, **kw: Any) -> ApprovalDecision:
        """No decision yet."""
        return cls("pending", reason=reason, **kw)

    @property
    def approved(self) -> bool:
        """True for approve, edit and respond (the seeds' meaning: the reviewer acted)."""
        return self.action in ("approve", "edit", "respond")

    @property
    def decided(self) -> bool:
        """Whether this is a final decision (not pending)."""
        return self.action != "pending"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe form."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ApprovalDecision:
        """Rebuild from :meth:`to_dict` output."""
        return _from_mapping(cls, data)

    @classmethod
    def coerce(cls, value: Any, request_id: str | None = None) -> ApprovalDecision:
        """Read a reviewer's answer: a decision, ``True``/``False``, ``None`` (pending), a reason string (reject) or a dict."""
        if isinstance(value, ApprovalDecision):
            decision = value
        elif value is None:
            decision = cls.pending()
        elif value is True:
            decision = cls.approve()
        elif value is False:
            decision = cls.reject()
        elif isinstance(value, str):
            decision = cls.reject(value)
        elif isinstance(value, Mapping):
            decision = cls.from_dict(
                {
                    "action": "approve" if value.get("approved") else "reject",
                    **{k: v for k, v in value.items() if k != "approved"},
                }
            )
        else:
            raise ConfigurationError(
                "LA-CONFIG",
                f"a reviewer returned {type(value).__name__}",
                hint="Return an ApprovalDecision, a bool, None (pending), a reason string or a dict.",
            )
        if decision.request_id is None and request_id is not None:
            decision.request_id = request_id
        return decision


@dataclass
class HumanFeedback:
    """A human's rating or comment on a run (recorded as a ``human_feedback`` event)."""

    trace_id: str | None = None
    rating: float | None = None
    label: str | None = None
    comment: str | None = None
    reviewer_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    feedback_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    created_at: float = field(default_factory=time.time)
    run_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe form."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> HumanFeedback:
        """Rebuild from :meth:`to_dict` output."""
        return _from_mapping(cls, data)
