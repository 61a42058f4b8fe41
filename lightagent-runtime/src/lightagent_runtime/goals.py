"""Goals in the session log: :func:`create_goal` appends a ``goal.created`` event.

The loop checks them at each run's end (:mod:`lightagent_runtime.goal_steps`) and records
``goal.completed`` / ``goal.updated``; ``lightagent_runtime.goal_steps.open_goals`` folds the
log into the open goals.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from lightagent.errors import ValidationError
from lightagent.events.model import SessionEvent
from lightagent.events.store import SessionStore, validate_session_id

from lightagent_runtime.inbox import append_owned

__all__ = ["GOAL_STATUSES", "create_goal", "criterion_record", "goal_unknown", "update_goal"]

#: A goal's statuses; ``completed`` and ``cancelled`` close it.
GOAL_STATUSES = ("pending", "active", "blocked", "completed", "cancelled")

# status -> the statuses it may move to (the same status again is a no-op)
_MOVES = {
    "pending": ("active", "blocked", "completed", "cancelled"),
    "active": ("blocked", "completed", "cancelled"),
    "blocked": ("active", "completed", "cancelled"),
}


def criterion_record(criterion: Any) -> Any:
    """A criterion as the log keeps it: its text, or ``{"check": name}`` for a callable."""
    if isinstance(criterion, str) and criterion.strip():
        return criterion
    if callable(criterion):
        return {"check": getattr(criterion, "__name__", None) or repr(criterion)}
    raise ValidationError(
        "LA-VALIDATION",
        f"an acceptance criterion must be non-empty text or a callable, not {criterion!r}",
        hint="Pass e.g. acceptance_criteria=['tests pass', my_check] (my_check(answer) -> bool).",
    )


def create_goal(
    store: SessionStore,
    session_id: str,
    objective: str,
    *,
    acceptance_criteria: Sequence[Any] = (),
    goal_id: str | None = None,
    owner: dict[str, Any] | None = None,
    status: str = "active",
    parent_goal_id: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Record a goal of the session (``active``, or ``pending`` until activated); returns
    the ``goal.created`` event's data."""
    if status not in ("pending", "active"):
        raise ValidationError(
            "LA-VALIDATION",
            f"a new goal is 'pending' or 'active', not {status!r}",
            hint="Create it, then move it with activate/block/complete/cancel.",
        )
    validate_session_id(session_id)
    if not isinstance(objective, str) or not objective.strip():
        raise ValidationError(
            "LA-VALIDATION",
            "a goal needs a non-empty objective",
            hint="Pass the objective as text: agent.create_goal(session_id, 'Ship the release').",
        )
    if isinstance(acceptance_criteria, str):
        acceptance_criteria = [acceptance_criteria]
    data = {
        "goal_id": goal_id or uuid.uuid4().hex,
        "objective": objective,
        "acceptance_criteria": [criterion_record(c) for c in acceptance_criteria],
        "status": status,
        **({"parent_goal_id": parent_goal_id} if parent_goal_id else {}),
        **({"metadata": dict(metadata)} if metadata else {}),
    }
    append_owned(store, session_id, [SessionEvent("goal.created", data=data)], owner)
    return data


def goal_unknown(session_id: str, goal_id: str) -> ValidationError:
    """The error for a goal id the session does not hold (``LA-GOAL-UNKNOWN``)."""
    return ValidationError(
        "LA-GOAL-UNKNOWN",
        f"session {session_id!r} has no goal {goal_id!r}",
        hint="runtime.goals.list() names the session's goals.",
    )


def update_goal(
    store: SessionStore,
    session_id: str,
    goal_id: str,
    status: str,
    *,
    evidence: Any = None,
    reason: str | None = None,
    owner: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Move a goal to ``status`` (``goal.updated``, ``goal.completed`` or ``goal.cancelled``).

    Appended on condition that the log still ends as read, so two writers never both move
    one goal out of a status. Returns the goal as the log then holds it; moving a goal to
    the status it has is a no-op. ``LA-GOAL-UNKNOWN`` / ``LA-GOAL-STATE`` otherwise.
    """
    from lightagent_runtime.goal_steps import all_goals

    validate_session_id(session_id)
    if status not in GOAL_STATUSES or status == "pending":
        raise ValidationError(
            "LA-VALIDATION",
            f"a goal moves to 'active', 'blocked', 'completed' or 'cancelled', not {status!r}",
        )
    kind = {"completed": "goal.completed", "cancelled": "goal.cancelled"}.get(
        status, "goal.updated"
    )
    data: dict[str, Any] = {"goal_id": goal_id, "status": status, "source": "runtime"}
    if evidence is not None:
        data["evidence"] = evidence
    if status == "blocked":
        data["blocker"] = reason
    elif reason is not None:
        data["reason"] = reason
    moved: dict[str, Any] = {}

    if not store.last_sequence(session_id):
        raise goal_unknown(
            session_id, goal_id
        )  # an empty session holds no goal (and is not opened by this)

    def known(existing: list[SessionEvent]) -> dict[str, Any] | None:
        goal = all_goals(existing).get(goal_id)
        if goal is None:
            raise goal_unknown(session_id, goal_id)
        if goal["status"] == status:
            return goal
        if status not in _MOVES.get(goal["status"], ()):
            raise ValidationError(
                "LA-GOAL-STATE",
                f"goal {goal_id!r} is {goal['status']} and cannot become {status}",
                hint="Completed and cancelled goals are closed; create a new goal instead.",
                details={"goal_id": goal_id, "status": goal["status"], "requested": status},
            )
        moved.update(goal)
        return None

    same = append_owned(store, session_id, [SessionEvent(kind, data=data)], owner, known=known)
    if same is not None:
        return dict(same)
    moved["status"] = status
    for key in ("evidence", "blocker"):
        if key in data:
            moved[key] = data[key]
    return moved
