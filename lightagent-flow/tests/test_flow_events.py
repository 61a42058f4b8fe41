"""Flow trace events land in the same session event log as agent runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from lightagent_flow import LightFlow

events_mod = pytest.importorskip("lightagent.events")


def test_flow_events_are_appended_to_a_session_store(tmp_path: Path) -> None:
    store = events_mod.JsonlSessionStore(tmp_path / "sessions")
    flow = (
        LightFlow(session_store=store)
        .step("a", agent=lambda q: "A")
        .step("b", agent=lambda q: "B", depends_on="a", requires_approval=True)
    )
    result = flow.run("q", run_id="ev-1", session_id="support-42")
    assert result.status == "waiting_approval"
    flow.approve("ev-1", "b", True)
    assert flow.resume("ev-1", session_id="support-42").success
    logged = store.events("support-42")
    types = [e.type for e in logged]
    assert types[0] == "flow_start" and types.count("flow_end") == 2
    assert "approval_required" in types and "approval_approve" in types
    assert [e.sequence for e in logged] == list(range(1, len(logged) + 1))
    step_ends = [e for e in logged if e.type == "step_end"]
    assert [e.step_id for e in step_ends] == ["a", "b", "b"]
    assert all(e.run_id == "ev-1" for e in logged)


def test_the_session_defaults_to_the_run_id() -> None:
    store = events_mod.InMemorySessionStore()
    LightFlow(session_store=store).step("a", agent=lambda q: "A").run("q", run_id="ev-2")
    assert [e.type for e in store.events("ev-2")] == [
        "flow_start",
        "step_start",
        "step_end",
        "flow_end",
    ]


def test_session_store_accepts_what_lightagent_accepts(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'sessions.db'}"
    result = LightFlow(session_store=url).step("a", agent=lambda q: "A").run("q", run_id="ev-3")
    assert result.success
    assert not [e for e in result.trace or [] if e["type"] == "session_append_failed"]
    logged = events_mod.SqlSessionStore(url).events("ev-3")
    assert [e.type for e in logged] == ["flow_start", "step_start", "step_end", "flow_end"]

    named = LightFlow(session_store=("sqlite", {"path": str(tmp_path / "named.db")}))
    named.step("a", agent=lambda q: "A").run("q", run_id="ev-4")
    assert len(events_mod.SqliteSessionStore(tmp_path / "named.db").events("ev-4")) == 4


@pytest.mark.parametrize(
    "spec", ["no-such-store", "jsonl-but-not-a-url://x", 42, object(), {"provider": 3}]
)
def test_a_session_store_the_flow_cannot_use_is_refused(spec: object) -> None:
    from lightagent.errors import LightAgentError

    with pytest.raises(LightAgentError) as info:
        LightFlow(session_store=spec)
    assert info.value.code == "LA-CONFIG" and info.value.hint
