"""Goals in the session log: :func:`create_goal` appends a ``goal.created`` event.

The loop checks them at each run's end (:mod:`lightagent.run.goal_steps`) and records
``goal.completed`` / ``goal.updated``; ``lightagent.run.goal_steps.open_goals`` folds the
log into the open goals.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from lightagent.errors import ValidationError
from lightagent.events.inbox import append_owned
from lightagent.events.model import SessionEvent
from lightagent.events.store import SessionStore, validate_session_id

__all__ = ["create_goal", "criterion_record"]


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
) -> dict[str, Any]:
    """Record an active goal of the session; returns the ``goal.created`` event's data."""
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
        "status": "active",
    }
    append_owned(store, session_id, [SessionEvent("goal.created", data=data)], owner)
    return data
