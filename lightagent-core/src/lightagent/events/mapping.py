"""From the loop's trace events (seeds' vocabulary) to session events, and back.

The loop emits ``{type, data, trace_id, parent_trace_id, run_group_id, timestamp,
run_id, seq}`` through ``RunContext.emit``. Each becomes one :class:`SessionEvent`
whose type is in the session vocabulary; the original trace type is kept in
``data["trace_type"]`` where the mapping is many-to-one, so the trace view can be
rebuilt exactly.
"""

from __future__ import annotations

from typing import Any

from lightagent.events.model import SessionEvent

__all__ = ["TRACE_TO_SESSION", "session_event_from_trace", "trace_type_of", "with_companions"]

#: One-to-one mappings (reversible without extra data).
TRACE_TO_SESSION: dict[str, str] = {
    "run_start": "turn.started",
    "model_request": "model.requested",
    "model_response": "assistant.completed",
    "tool_call": "tool.requested",
    "tool_finished": "tool.finished",
    "tool_result": "tool.completed",
    "error": "error.recorded",
    "hook_decision": "policy.decision",
    "handoff": "handoff.requested",
    "memory_write": "memory.written",
    "exporter_error": "exporter.failed",
    "context_compacted": "context.compacted",
    "budget_consumed": "budget.consumed",
    "budget_exhausted": "budget.exhausted",
    "progress_stalled": "progress.stalled",
    "goal_completed": "goal.completed",
    "goal_updated": "goal.updated",
}
_REVERSE = {v: k for k, v in TRACE_TO_SESSION.items()}

# Many-to-one: the trace type goes into data["trace_type"].
_PREFIXES: tuple[tuple[str, str], ...] = (
    ("hook_block", "policy.blocked"),
    ("guardrail_block", "guardrail.blocked"),
    ("approval_required", "approval.requested"),
    ("approval_pending", "approval.requested"),
    ("approval_", "approval.decided"),
    ("memory_promotion_", "memory.promotion"),
    ("memory_retrieve_filter", "memory.retrieved"),
    ("memory_retrieve", "memory.blocked"),
    ("memory_write_block", "memory.blocked"),
)


def _session_type(trace_type: str, data: dict[str, Any]) -> tuple[str, bool]:
    """(session type, whether data must carry the trace type)."""
    if trace_type == "run_end":
        return ("run.completed" if data.get("success") else "run.failed"), True
    mapped = TRACE_TO_SESSION.get(trace_type)
    if mapped is not None:
        return mapped, False
    for prefix, session_type in _PREFIXES:
        if trace_type.startswith(prefix):
            return session_type, True
    return "trace.recorded", True


def session_event_from_trace(event: dict[str, Any], *, agent_id: str | None = None) -> SessionEvent:
    """The session event for one trace event (``data`` is not yet redacted)."""
    trace_type = str(event.get("type") or "unknown")
    raw = event.get("data")
    data = dict(raw) if isinstance(raw, dict) else {"value": raw}
    session_type, keep_type = _session_type(trace_type, data)
    if keep_type:
        data["trace_type"] = trace_type
    if event.get("seq") is not None:
        data["trace_seq"] = event["seq"]
    run_id = event.get("run_id")
    kwargs: dict[str, Any] = {}
    if isinstance(event.get("timestamp"), (int, float)):
        kwargs["timestamp"] = float(event["timestamp"])
    # A model step is one model request and what follows it; request_index numbers them.
    step = data.get("request_index")
    return SessionEvent(
        type=session_type,
        data=data,
        step_id=f"{run_id}:{step}" if step is not None and run_id else None,
        turn_id=run_id,
        run_id=run_id,
        agent_id=agent_id,
        trace_id=event.get("trace_id"),
        parent_trace_id=event.get("parent_trace_id"),
        run_group_id=event.get("run_group_id"),
        **kwargs,
    )


def trace_type_of(event: SessionEvent) -> str | None:
    """The trace type a session event came from, or ``None`` for a direct session event."""
    recorded = event.data.get("trace_type")
    if isinstance(recorded, str):
        return recorded
    return _REVERSE.get(event.type)


# The seeds' lifecycle names, written next to ours so code reading either vocabulary finds
# its events: (our type) -> (the seeds' type, the data keys copied from ours).
_COMPANIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "turn.started": ("run.started", ("query", "user_id", "resumed")),
    "assistant.completed": ("model.completed", ("request_index", "usage", "finish_reason")),
    "run.completed": ("turn.completed", ("success",)),
    "run.failed": ("turn.failed", ("success", "error")),
}


def with_companions(event: SessionEvent) -> list[SessionEvent]:
    """``event`` with the seeds' lifecycle event next to it: ``run.started`` after
    ``turn.started``, ``model.completed`` after ``assistant.completed``, ``turn.completed`` /
    ``turn.failed`` just before ``run.completed`` / ``run.failed`` (so a run's log still ends
    with ``run.*``); ``[event]`` for other types.

    They carry no ``trace_type``, so the trace view rebuilt from the log skips them."""
    found = _COMPANIONS.get(event.type)
    if found is None:
        return [event]
    kind, keys = found
    data = {k: event.data[k] for k in keys if k in event.data}
    data["companion_of"] = event.type
    companion = SessionEvent(
        type=kind,
        data=data,
        step_id=event.step_id,
        turn_id=event.turn_id,
        run_id=event.run_id,
        agent_id=event.agent_id,
        trace_id=event.trace_id,
        parent_trace_id=event.parent_trace_id,
        run_group_id=event.run_group_id,
        timestamp=event.timestamp,
    )
    return [companion, event] if event.type.startswith("run.") else [event, companion]
