"""Issue 28, item 5: ``AgentRuntime`` built on its own, as LightAgent 0.11 allows."""

from __future__ import annotations

import pytest
from lightagent import AgentRuntime, BudgetLimits, ConfigurationError, SqliteSessionStore


def test_a_runtime_on_its_own_keeps_state_in_the_store(tmp_path) -> None:
    path = str(tmp_path / "s.sqlite3")
    runtime = AgentRuntime(
        session_store=SqliteSessionStore(path), budget_limits=BudgetLimits(model_calls=3)
    )
    runtime.open_session("job-1")
    goal = runtime.goals.create("Ship the report")
    runtime.goals.activate(goal.goal_id)
    runtime.inbox.enqueue("followup", "Add the appendix")
    runtime.pause("waiting for data")
    snapshot = runtime.snapshot()
    assert snapshot["session_id"] == "job-1" and snapshot["paused"] == "waiting for data"
    assert runtime.session.session_id == "job-1" and runtime.session.events
    # the state is the log's: a second runtime over the same file sees it
    again = AgentRuntime(session_store=SqliteSessionStore(path)).open_session("job-1")
    assert [g.objective for g in again.goals.list()] == ["Ship the report"]
    assert again.paused == "waiting for data"


def test_a_runtime_needs_an_agent_or_a_store() -> None:
    with pytest.raises(ConfigurationError) as info:
        AgentRuntime()
    assert info.value.code == "LA-CONFIG"
