"""Issue 28, item 5: session and runtime shapes as LightAgent 0.11 gives them."""

from __future__ import annotations

from lightagent import LightAgent, SqliteSessionStore, summarize_trace
from lightagent.events.manager import ForkedSession


def agent_on(server, tmp_path, **kwargs) -> LightAgent:
    return LightAgent(
        model="gpt-4.1",
        api_key="k",
        base_url=server.base_url,
        session_store=SqliteSessionStore(str(tmp_path / "s.sqlite3")),
        **kwargs,
    )


def test_replay_lists_turns_fork_carries_lineage_and_the_store_gets_a_session(
    loopback_server, tmp_path
) -> None:
    loopback_server.reply("Noted.", "SQLite.")
    agent = agent_on(loopback_server, tmp_path)
    first = agent.run("Remember this", session_id="p42", result_format="object")
    second = agent.run("What did we decide?", session_id="p42", result_format="object")
    replay = agent.replay_session("p42")
    assert replay.completed_turns == [first.run_id, second.run_id]
    assert replay.incomplete_turns == [] and replay.failed_turns == []

    checkpoint = agent.checkpoint_session("before")
    fork = agent.fork_session(through_sequence=checkpoint["sequence"], metadata={"why": "try"})
    assert isinstance(fork, ForkedSession) and isinstance(fork, str)
    assert fork.session_id == str(fork)
    assert fork.metadata == {
        "why": "try",
        "forked_from": "p42",
        "forked_at_sequence": checkpoint["sequence"],
    }

    store = agent.session_binding.store
    session = store.get(fork)
    assert session is not None and session.session_id == fork
    assert session.metadata["forked_from"] == "p42"
    assert session.events[-1].type == "session.forked"
    assert store.get("p42").metadata.get("forked_from") is None
    assert len(store.get("p42").events) == store.last_sequence("p42")
    assert store.get("nobody") is None


def test_compact_session_reports_removed_count(loopback_server, tmp_path) -> None:
    loopback_server.reply("one", "two", "three")
    agent = agent_on(loopback_server, tmp_path)
    for text in ("a", "b", "c"):
        agent.run(text, session_id="c1")
    compaction = agent.compact_session(session_id="c1", max_messages=2)
    assert compaction["removed_count"] == compaction["removed_messages"] == 4


def test_on_error_payload_says_success_false(loopback_server) -> None:
    seen = []

    class Watch:
        def on_error(self, ctx):
            seen.append(dict(ctx.payload))

    loopback_server.reply(loopback_server.error(400))
    agent = LightAgent(
        model="gpt-4.1",
        api_key="k",
        base_url=loopback_server.base_url,
        hooks=[Watch()],
    )
    result = agent.run("hi", result_format="object")
    assert result.error is not None
    (payload,) = seen
    assert payload["success"] is False and payload["stage"] and payload["error"]["code"]
    assert "content" in payload


def test_summarize_trace_finds_usage_where_the_seeds_put_it() -> None:
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    seeds_trace = [
        {"type": "model_request", "data": {"usage": usage}},
        {"type": "model_request", "data": {"usage": usage}},
    ]
    assert summarize_trace(seeds_trace).usage == {
        "prompt_tokens": 20,
        "completion_tokens": 10,
        "total_tokens": 30,
    }
    # a run's total counts only when no request or response reports usage
    assert summarize_trace([{"type": "run_end", "data": {"usage": usage}}]).usage == usage
    both = [
        {"type": "model_response", "data": {"usage": usage}},
        {"type": "run_end", "data": {"usage": usage}},
    ]
    assert summarize_trace(both).usage == usage
