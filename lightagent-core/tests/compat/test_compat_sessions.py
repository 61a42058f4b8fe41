"""Item 3 of issue 18: the runtime guide's session calls without ``session_id=``."""

from __future__ import annotations

import pytest
from lightagent import ConfigurationError, LightAgent, SqliteSessionStore


def test_runtime_guide_durable_sessions(loopback_server, tmp_path) -> None:
    loopback_server.reply("Noted.", "We decided to use SQLite.")
    store = SqliteSessionStore(str(tmp_path / "sessions.sqlite3"))
    agent = LightAgent(
        model="deepseek-v4-flash",
        api_key="your_api_key",
        base_url=loopback_server.base_url,
        session_store=store,
    )
    agent.run("Remember this project decision", session_id="project-42")
    agent.run("What did we decide?", session_id="project-42")

    replay = agent.replay_session("project-42")
    assert len(replay.completed_turns) == 2
    checkpoint = agent.checkpoint_session("before-implementation")
    assert checkpoint["session_id"] == "project-42"
    fork = agent.fork_session(through_sequence=checkpoint["sequence"])
    assert fork != "project-42"
    assert "project-42" in str(agent.replay_session(fork).forked_from)


def test_no_session_yet_is_a_typed_error(scripted_model) -> None:
    agent = LightAgent(model=scripted_model, session_store="memory")
    with pytest.raises(ConfigurationError) as info:
        agent.checkpoint_session("x")
    assert info.value.code == "LA-CONFIG" and "session_id" in info.value.hint


def test_a_run_writes_the_seeds_lifecycle_events(loopback_server, tmp_path) -> None:
    loopback_server.reply("Noted.")
    agent = LightAgent(
        model="gpt-4.1",
        api_key="k",
        base_url=loopback_server.base_url,
        session_store=SqliteSessionStore(str(tmp_path / "s.sqlite3")),
    )
    agent.run("Remember this", session_id="s1")
    types = [e.type for e in agent.get_session("s1")]
    for kind in ("run.started", "model.completed", "turn.completed"):
        assert kind in types, types
    assert types.index("turn.started") < types.index("run.started")
    assert types.index("assistant.completed") < types.index("model.completed")
    # The trace view rebuilt from the log is unchanged by them.
    replay = agent.replay_session("s1")
    assert len(replay.completed_turns) == 1 and replay.incomplete_turns == []
