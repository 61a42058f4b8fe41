"""The replay filter of the session log: a run's events emitted again are not recorded twice."""

from __future__ import annotations

from pathlib import Path

from lightagent.events.binding import SessionBinding
from lightagent.events.sql_store import SqliteSessionStore
from lightagent.interceptors import RunContext
from lightagent_dbos.replay import ReplayBinding


def _emit_all(binding, kinds) -> None:
    ctx = RunContext(run_id="run_x", trace_id="trace_x", agent_name="a")
    ctx.observers.append(binding.observer("s1", "run_x"))
    for kind in kinds:
        ctx.emit(kind, {"n": kind})


def test_a_replay_records_only_what_is_new(tmp_path: Path) -> None:
    store = SqliteSessionStore(tmp_path / "s.sqlite3")
    first = ["run_start", "model_request", "model_response", "tool_call", "tool_finished"]
    _emit_all(ReplayBinding(SessionBinding(store)), first)
    recorded = [e.type for e in store.events("s1")]
    # the replay emits what the loop emits outside steps again (not tool_finished, which
    # came from inside a checkpointed step), then goes on
    again = [
        "run_start",
        "model_request",
        "model_response",
        "tool_call",
        "tool_result",
        "model_request",
    ]
    _emit_all(ReplayBinding(SessionBinding(store)), again)
    after = [e.type for e in store.events("s1")]
    assert after[: len(recorded)] == recorded
    assert after[len(recorded) :] == ["tool.completed", "model.requested"]
