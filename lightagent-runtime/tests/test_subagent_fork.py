"""Issue 28, item 10: a subagent that starts from a fork of the parent's session."""

from __future__ import annotations

import asyncio

from lightagent import LightAgent, SqliteSessionStore


def test_a_subagent_starts_from_the_parents_history_in_its_own_log(
    loopback_server, tmp_path
) -> None:
    store = SqliteSessionStore(str(tmp_path / "s.sqlite3"))

    def agent(name: str) -> LightAgent:
        return LightAgent(
            name=name,
            model="gpt-4.1",
            api_key="k",
            base_url=loopback_server.base_url,
            session_store=store,
        )

    parent = agent("lead")
    loopback_server.reply("Noted: Falcon.", "Later turn.")
    parent.run("Our project is called Falcon.", session_id="p1")
    through = store.last_sequence("p1")
    parent.run("Something after the fork point.", session_id="p1")

    subagents = parent.runtime.for_session("p1").subagents
    subagents.register(agent("helper"))
    loopback_server.reply("The project is Falcon.")
    result = asyncio.run(
        subagents.run("helper", "What is the project called?", fork_through=through)
    )
    assert result.status == "completed" and result.content == "The project is Falcon."
    sent = loopback_server.requests[-1]["messages"]
    texts = [m.get("content") for m in sent]
    assert "Our project is called Falcon." in texts
    assert "Something after the fork point." not in texts  # only up to the sequence
    child = store.get(subagents.subagent_session("helper"))
    assert child.metadata["forked_from"] == "p1"
    assert child.metadata["forked_at_sequence"] == through
    assert any(e.type == "run.completed" for e in child.events)  # its own log
    parent_log = [e.type for e in store.events("p1")]
    assert "subagent.forked" in parent_log
    assert not any(
        e.data.get("content") == "The project is Falcon."
        for e in store.events("p1")
        if e.type == "assistant.completed"
    )
