"""The views of :class:`~lightagent_runtime.agent_runtime.AgentRuntime`: goals, inbox, budget, progress.

Each is a thin view over one session's log: it reads the events and folds them with the
same functions the loop uses (``all_goals``, ``fold_inbox``, ``session_spent``), and
writes through the same appends (``create_goal``/``update_goal``, ``send_message``/
``settle_message``, ``budget.consumed``). Nothing is cached, so every view is what the log
says now — in this process or after a restart.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from lightagent.errors import ValidationError

__all__ = ["BudgetView", "Goal", "GoalsView", "InboxMessage", "InboxView", "ProgressView"]

#: Reads the session's events; appends go to ``store`` for ``owner``.
Events = Callable[[], list[Any]]


@dataclass(frozen=True)
class Goal:
    """A goal as the session log holds it (the seeds' ``Goal``)."""

    goal_id: str
    objective: str
    status: str
    acceptance_criteria: list[Any] = field(default_factory=list)
    parent_goal_id: str | None = None
    evidence: Any = None
    blocker: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> Goal:
        """From a folded goal dict."""
        return cls(
            goal_id=str(data["goal_id"]),
            objective=str(data.get("objective") or ""),
            status=str(data.get("status") or "active"),
            acceptance_criteria=list(data.get("acceptance_criteria") or ()),
            parent_goal_id=data.get("parent_goal_id"),
            evidence=data.get("evidence"),
            blocker=data.get("blocker"),
            metadata=dict(data.get("metadata") or {}),
        )


@dataclass(frozen=True)
class InboxMessage:
    """An inbox message as the session log holds it (the seeds' ``InboxMessage``)."""

    message_id: str
    message_type: str
    content: str
    status: str
    correlation_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    claimed_by_run: str | None = None
    result: Any = None
    reason: str | None = None

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> InboxMessage:
        """From a folded message dict."""
        return cls(
            message_id=str(data["message_id"]),
            message_type=str(data.get("message_type") or "followup"),
            content=str(data.get("content") or ""),
            status=str(data.get("status") or "pending"),
            correlation_id=data.get("correlation_id"),
            metadata=dict(data.get("metadata") or {}),
            claimed_by_run=data.get("claimed_by_run"),
            result=data.get("result"),
            reason=data.get("reason"),
        )


class _View:
    def __init__(self, store: Any, session_id: str, owner: dict[str, Any], events: Events) -> None:
        self._store = store
        self._session_id = session_id
        self._owner = owner
        self._events = events


class GoalsView(_View):
    """``runtime.goals``: create and move the session's goals (the loop checks active ones)."""

    def __init__(
        self,
        store: Any,
        session_id: str,
        owner: dict[str, Any],
        events: Events,
        checks: dict[str, Any],
    ) -> None:
        super().__init__(store, session_id, owner, events)
        self._checks = checks

    def create(
        self,
        objective: str,
        *,
        acceptance_criteria: Any = (),
        parent_goal_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        goal_id: str | None = None,
        activate: bool = False,
    ) -> Goal:
        """A ``pending`` goal (``active`` with ``activate=True``); criteria as in ``create_goal``."""
        from lightagent_runtime.goals import create_goal, criterion_record

        criteria = (
            [acceptance_criteria]
            if isinstance(acceptance_criteria, str)
            else list(acceptance_criteria)
        )
        if parent_goal_id is not None:
            self.get(parent_goal_id)  # LA-GOAL-UNKNOWN for a parent that is not there
        data = create_goal(
            self._store,
            self._session_id,
            objective,
            acceptance_criteria=criteria,
            goal_id=goal_id,
            owner=self._owner,
            status="active" if activate else "pending",
            parent_goal_id=parent_goal_id,
            metadata=dict(metadata or {}),
        )
        for criterion in criteria:
            if callable(criterion):
                self._checks[criterion_record(criterion)["check"]] = criterion
        return Goal.of(data)

    def _move(self, goal_id: str, status: str, **extra: Any) -> Goal:
        from lightagent_runtime.goals import update_goal

        return Goal.of(
            update_goal(self._store, self._session_id, goal_id, status, owner=self._owner, **extra)
        )

    def activate(self, goal_id: str) -> Goal:
        """Make the goal active: runs of the session check it at their end."""
        return self._move(goal_id, "active")

    def complete(self, goal_id: str, *, evidence: Any = None) -> Goal:
        """Close the goal as done, with what shows it (``goal.completed``)."""
        return self._move(goal_id, "completed", evidence=evidence)

    def block(self, goal_id: str, reason: str) -> Goal:
        """Set the goal aside until someone activates it again; runs do not check it."""
        if not isinstance(reason, str) or not reason.strip():
            raise ValidationError("LA-VALIDATION", "block() needs a reason", hint="Say why.")
        return self._move(goal_id, "blocked", reason=reason)

    def cancel(self, goal_id: str, reason: str | None = None) -> Goal:
        """Close the goal without doing it (``goal.cancelled``)."""
        return self._move(goal_id, "cancelled", reason=reason)

    def get(self, goal_id: str) -> Goal:
        """The goal (``LA-GOAL-UNKNOWN`` when the session has none of that id)."""
        from lightagent_runtime.goal_steps import all_goals
        from lightagent_runtime.goals import goal_unknown

        goal = all_goals(self._events()).get(goal_id)
        if goal is None:
            raise goal_unknown(self._session_id, goal_id)
        return Goal.of(goal)

    def list(self, *, status: str | None = None) -> list[Goal]:
        """Every goal of the session in creation order (only those with ``status`` when given)."""
        from lightagent_runtime.goal_steps import all_goals

        goals = [Goal.of(g) for g in all_goals(self._events()).values()]
        return [g for g in goals if status is None or g.status == status]


class InboxView(_View):
    """``runtime.inbox``: messages to the session, taken in by its runs at step boundaries."""

    def enqueue(
        self,
        message_type: str,
        content: str,
        *,
        message_id: str | None = None,
        correlation_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> InboxMessage:
        """Send a message (the seeds' argument order); idempotent by ``message_id``."""
        from lightagent_runtime.inbox import send_message

        data = send_message(
            self._store,
            self._session_id,
            content,
            message_id=message_id,
            message_type=message_type,
            metadata=dict(metadata or {}),
            owner=self._owner,
            correlation_id=correlation_id,
        )
        return self.get(str(data["message_id"]))

    def _all(self) -> list[InboxMessage]:
        from lightagent_runtime.inbox import fold_inbox

        return [InboxMessage.of(m) for m in fold_inbox(self._events()).values()]

    def get(self, message_id: str) -> InboxMessage:
        """The message (``LA-VALIDATION`` when the session has none of that id)."""
        for message in self._all():
            if message.message_id == message_id:
                return message
        raise ValidationError(
            "LA-VALIDATION",
            f"session {self._session_id!r} has no inbox message {message_id!r}",
            hint="runtime.inbox.list() names the session's messages.",
        )

    def list(self, *, status: str | None = None) -> list[InboxMessage]:
        """Every message in the order sent (only those with ``status`` when given)."""
        return [m for m in self._all() if status is None or m.status == status]

    def pending(self, message_type: str | None = None) -> builtins.list[InboxMessage]:
        """Messages no run has taken in yet (of ``message_type`` when given)."""
        return [
            m
            for m in self.list(status="pending")
            if message_type is None or m.message_type == message_type
        ]

    def complete(self, message_id: str, *, result: Any = None) -> InboxMessage:
        """Record that a claimed message was acted on (``inbox.completed``)."""
        from lightagent_runtime.inbox import settle_message

        settle_message(
            self._store, self._session_id, message_id, "completed", result=result, owner=self._owner
        )
        return self.get(message_id)

    def reject(self, message_id: str, reason: str) -> InboxMessage:
        """Withdraw a pending message: no run will take it in (``inbox.rejected``)."""
        from lightagent_runtime.inbox import settle_message

        settle_message(
            self._store, self._session_id, message_id, "rejected", reason=reason, owner=self._owner
        )
        return self.get(message_id)


class BudgetView(_View):
    """``runtime.budget``: the session's ledger (the sum of its ``budget.consumed`` events)."""

    def __init__(
        self,
        store: Any,
        session_id: str,
        owner: dict[str, Any],
        events: Events,
        budgets: Any,
    ) -> None:
        super().__init__(store, session_id, owner, events)
        #: The agent's ``budgets`` extension part (lightagent-runtime): its ledger functions.
        self._budgets = budgets
        #: The agent's ``BudgetLimits`` (run and session ones).
        self.limits = tuple(budgets.budget_limits)

    def used(self) -> dict[str, float]:
        """What the session's runs (and :meth:`consume`) have consumed, per dimension."""
        return dict(self._budgets.session_spent(self._events()))

    def remaining(self) -> dict[str, float]:
        """What is left of each dimension the agent's ``per="session"`` limits cap."""
        used = self.used()
        left: dict[str, float] = {}
        for lim in self.limits:
            if lim.per != "session":
                continue
            for dimension, limit in lim.capped().items():
                value = limit - used[dimension]
                left[dimension] = min(left.get(dimension, value), value)
        return left

    def consume(self, **delta: float) -> dict[str, float]:
        """Record usage outside a run (e.g. a tool run by hand); fail-closed.

        Checked against the session limits first: one that would pass a limit raises
        ``BudgetExceeded`` and nothing is recorded. Returns what is used afterwards.
        """
        from lightagent.events.model import SessionEvent

        from lightagent_runtime.budgets import BudgetExceeded
        from lightagent_runtime.inbox import append_owned

        dimensions = self._budgets.dimensions
        session_spent = self._budgets.session_spent
        for key, value in delta.items():
            if key not in dimensions:
                raise ValidationError(
                    "LA-VALIDATION",
                    f"unknown budget dimension {key!r}",
                    hint=f"Use {', '.join(dimensions)}.",
                )
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ValidationError(
                    "LA-VALIDATION", f"consume({key}={value!r}) needs a number >= 0"
                )
        limits = [lim for lim in self.limits if lim.per == "session"]

        def check(existing: list[Any]) -> None:
            used = session_spent(existing)
            for lim in limits:
                for dimension, limit in lim.capped().items():
                    want = delta.get(dimension, 0)
                    if want and used[dimension] + want > limit:
                        raise BudgetExceeded(
                            dimension, limit, used[dimension], requested=want, scope="session"
                        )
            return None

        event = SessionEvent(
            "budget.consumed", data={"step": "runtime", "delta": dict(delta), "source": "runtime"}
        )
        if not self._store.last_sequence(self._session_id):
            check([])
        append_owned(self._store, self._session_id, [event], self._owner, known=check)
        return self.used()


class ProgressView(_View):
    """``runtime.progress``: the agent's ``ProgressPolicy`` and the stalls in the log."""

    def __init__(
        self, store: Any, session_id: str, owner: dict[str, Any], events: Events, policy: Any
    ) -> None:
        super().__init__(store, session_id, owner, events)
        #: The agent's ``ProgressPolicy`` (None: detection is off).
        self.policy = policy

    def stalls(self) -> list[dict[str, Any]]:
        """Every ``progress.stalled`` event of the session: its data and ``run_id``."""
        return [
            {**e.data, "run_id": e.run_id} for e in self._events() if e.type == "progress.stalled"
        ]

    @property
    def stalled(self) -> bool:
        """Whether the session's latest run stalled (repeated calls or no progress)."""
        events = self._events()
        last_run = next((e.run_id for e in reversed(events) if e.type == "turn.started"), None)
        return any(e.type == "progress.stalled" and e.run_id == last_run for e in events)
