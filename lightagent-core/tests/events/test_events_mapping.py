"""The trace -> session mapping covers the seeds' vocabulary and round-trips to the trace view."""

from __future__ import annotations

import pytest
from lightagent.events.binding import SessionRecorder
from lightagent.events.mapping import session_event_from_trace, trace_type_of
from lightagent.events.memory_store import InMemorySessionStore
from lightagent.events.model import SESSION_EVENT_TYPES
from lightagent.events.projector import ContextProjector

CASES = [
    ("run_start", {"query": "q"}, "turn.started"),
    ("model_request", {"request": {"messages": []}, "request_index": 1}, "model.requested"),
    ("model_response", {"message": {"role": "assistant", "content": "a"}}, "assistant.completed"),
    ("tool_call", {"call_id": "c", "name": "t", "idempotency_key": "k"}, "tool.requested"),
    ("tool_result", {"call_id": "c", "output": "o"}, "tool.completed"),
    ("error", {"stage": "tool_execution", "error": {"code": "LA-TOOL"}}, "error.recorded"),
    ("hook_decision", {"phase": "before_run", "action": "continue"}, "policy.decision"),
    ("hook_block", {"phase": "before_run", "reason": "no"}, "policy.blocked"),
    ("guardrail_block", {"stage": "input", "reason": "pii"}, "guardrail.blocked"),
    ("approval_required", {"tool": "t"}, "approval.requested"),
    ("approval_pending", {"tool": "t"}, "approval.requested"),
    ("approval_approve", {"tool": "t"}, "approval.decided"),
    ("approval_reject", {"tool": "t"}, "approval.decided"),
    ("handoff", {"source_agent": "a", "target_agent": "b"}, "handoff.requested"),
    ("memory_write", {"data": "x"}, "memory.written"),
    ("memory_write_block", {"reason": "dup"}, "memory.blocked"),
    ("memory_retrieve_filter", {"total_count": 3}, "memory.retrieved"),
    ("memory_promotion_approved", {"candidate_id": "m"}, "memory.promotion"),
    ("context_compacted", {"removed_count": 4}, "context.compacted"),
    ("exporter_error", {"exporter": "X"}, "exporter.failed"),
    ("run_end", {"success": True}, "run.completed"),
    ("run_end", {"success": False, "error": {"code": "LA-500"}}, "run.failed"),
    ("tool_selection", {"kept": ["a"]}, "trace.recorded"),
    ("human_feedback", {"rating": 5}, "trace.recorded"),
]


@pytest.mark.parametrize(("trace_type", "data", "session_type"), CASES)
def test_each_trace_type_maps_and_comes_back(trace_type, data, session_type):
    trace = {
        "type": trace_type,
        "data": data,
        "trace_id": "t1",
        "parent_trace_id": "p1",
        "run_group_id": "g1",
        "timestamp": 12.5,
        "run_id": "r1",
        "seq": 4,
    }
    event = session_event_from_trace(trace)
    assert event.type == session_type and event.type in SESSION_EVENT_TYPES
    assert (
        event.run_id,
        event.turn_id,
        event.trace_id,
        event.parent_trace_id,
        event.run_group_id,
    ) == ("r1", "r1", "t1", "p1", "g1")
    assert trace_type_of(event) == trace_type
    store = InMemorySessionStore()
    (stored,) = store.append("m", [event])
    (view,) = ContextProjector().trace([stored])
    assert view == trace


def test_recorder_works_with_a_store_without_async_methods():
    import asyncio

    class SyncOnly:
        def __init__(self):
            self.inner = InMemorySessionStore()

        def append(self, *a, **k):
            return self.inner.append(*a, **k)

        def last_sequence(self, sid):
            return self.inner.last_sequence(sid)

    store = SyncOnly()
    recorder = SessionRecorder(store, "s", "r1")
    asyncio.run(
        recorder.aon_event(None, {"type": "run_start", "data": {"query": "q"}, "run_id": "r1"})
    )
    # run.started: the seeds' name, written next to turn.started (issue 18).
    assert [e.type for e in store.inner.events("s")] == [
        "session.started",
        "turn.started",
        "run.started",
    ]
