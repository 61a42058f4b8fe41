"""Goals with acceptance criteria, checked by the loop at a run's end (written once).

A goal is recorded as a ``goal.created`` event (``lightagent_runtime.goals``); the run
reads the session's open goals with its history (:func:`open_goals` folds the events)
and, when it ends well, checks each criterion against its answer: a text criterion is
met when the answer contains it (case-insensitive), a ``{"check": name}`` criterion when
the agent's ``goal_checks[name](answer)`` is truthy. A goal whose criteria are all met is
``goal.completed`` (never checked again); else ``goal.updated`` lists what is unmet.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable
from typing import Any

from lightagent.run.effects import LoadHistory
from lightagent.run.spec import RunSpec

__all__ = ["all_goals", "check_goals", "open_goals"]

_CLOSED = ("completed", "cancelled")


def all_goals(events: Iterable[Any]) -> dict[str, dict[str, Any]]:
    """goal_id -> goal, closed ones included, as the log leaves it.

    Each goal has ``goal_id``, ``objective``, ``acceptance_criteria``, ``status``
    (``pending``, ``active``, ``blocked``, ``completed`` or ``cancelled``),
    ``parent_goal_id``, ``metadata``, and ``evidence`` / ``blocker`` once recorded.
    """
    goals: dict[str, dict[str, Any]] = {}
    for event in events:
        kind = event.type
        if not kind.startswith("goal."):
            continue
        gid = event.data.get("goal_id")
        if not isinstance(gid, str):
            continue
        if kind == "goal.created":
            goals[gid] = {k: event.data.get(k) for k in ("goal_id", "objective")}
            goals[gid]["acceptance_criteria"] = list(event.data.get("acceptance_criteria") or ())
            goals[gid]["status"] = event.data.get("status") or "active"
            goals[gid]["parent_goal_id"] = event.data.get("parent_goal_id")
            goals[gid]["metadata"] = dict(event.data.get("metadata") or {})
        elif gid in goals and goals[gid]["status"] not in _CLOSED:
            goal = goals[gid]
            goal["status"] = event.data.get("status") or kind.removeprefix("goal.")
            for key in ("evidence", "blocker"):
                if key in event.data:
                    goal[key] = event.data[key]
    return goals


def open_goals(events: Iterable[Any]) -> dict[str, dict[str, Any]]:
    """goal_id -> goal (``objective``, ``acceptance_criteria``, ``status`` …) of goals not closed."""
    return {gid: g for gid, g in all_goals(events).items() if g["status"] not in _CLOSED}


def _met(criterion: Any, answer: str, checks: Any) -> tuple[bool, str | None]:
    if isinstance(criterion, str):
        return criterion.casefold() in answer.casefold(), None
    name = criterion.get("check") if isinstance(criterion, dict) else None
    check = (checks or {}).get(name)
    if check is None:
        return False, f"no goal check named {name!r} on this agent"
    try:
        return bool(check(answer)), None
    except Exception as exc:  # a failing check is an unmet criterion, not a failed run
        return False, f"{type(exc).__name__}: {exc}"


def check_goals(
    spec: RunSpec, goals: dict[str, dict[str, Any]] | None, answer: str | None, checks: Any
) -> Generator[Any, Any, list[dict[str, Any]]]:
    """Check the session's open goals against the run's answer; their outcomes (events too).

    ``checks`` is the agent's ``goal_checks`` (name -> callable, for ``{"check": name}``).
    """
    ctx = spec.ctx
    if spec.binding is None or not ctx.session_id:
        return []
    if goals is None:  # the run read no history (a resume): read the goals from the log
        loaded = yield LoadHistory(ctx.session_id)
        goals = open_goals(getattr(loaded, "events", None) or ())
    outcomes = []
    for goal in goals.values():
        criteria = goal["acceptance_criteria"]
        if not criteria or goal["status"] != "active":
            continue  # nothing to check it by, or pending/blocked: it waits for a person
        met: list[Any] = []
        unmet: list[Any] = []
        notes: list[str] = []
        for criterion in criteria:
            ok, note = _met(criterion, answer or "", checks)
            (met if ok else unmet).append(criterion)
            if note:
                notes.append(note)
        status = "completed" if not unmet else "active"
        outcome = {
            "goal_id": goal["goal_id"],
            "objective": goal["objective"],
            "status": status,
            "met": met,
            "unmet": unmet,
            **({"notes": notes} if notes else {}),
        }
        outcomes.append(outcome)
        if ctx.active:
            ctx.emit("goal_completed" if status == "completed" else "goal_updated", outcome)
    return outcomes
