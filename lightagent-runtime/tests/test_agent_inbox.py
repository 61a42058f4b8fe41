"""The inbox: messages sent to a session (another thread, another process through the same
SQLite file) are injected before the run's next model request — after a tool round's
results, never between a call and its result — and consumed exactly once."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import threading
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from lightagent import ConfigurationError, LightAgent, ValidationError
from lightagent.events.jsonl_store import JsonlSessionStore
from lightagent.events.sql_store import SqliteSessionStore, SqlSessionStore
from lightagent_runtime.inbox import claim_pending, send_message
from lightagent_runtime.inbox_steps import InboxScan


def agent_for(server, db, **kw) -> LightAgent:
    return LightAgent(
        model="gpt-4.1",
        api_key="k",
        base_url=server.base_url,
        session_store=SqliteSessionStore(db),
        **kw,
    )


def call(city: str = "Paris") -> dict:
    return {"tool_calls": [{"name": "lookup", "arguments": {"city": city}}]}


def kinds(agent: LightAgent, session_id: str, kind: str) -> list:
    return [e for e in agent.get_session(session_id) if e.type == kind]


def roles(request: dict) -> list[tuple[str, str | None]]:
    return [(m["role"], m.get("content")) for m in request["messages"]]


def test_a_message_from_another_thread_during_a_tool_call_comes_after_its_result(
    loopback_server, tmp_path
) -> None:
    db = tmp_path / "s.sqlite3"
    sent = threading.Event()
    holder: dict = {}

    def lookup(city: str) -> str:
        """Look up `city`."""
        # another thread sends while this call runs; the call returns once it is stored
        threading.Thread(
            target=lambda: (
                holder["agent"].send_message("s1", "Also check Rome", message_id="m1"),
                sent.set(),
            )
        ).start()
        assert sent.wait(10)
        return f"{city}: sunny"

    agent = agent_for(loopback_server, db, tools=[lookup])
    holder["agent"] = agent
    loopback_server.reply(call(), call("Rome"), "Paris and Rome: sunny")
    result = agent.run("weather?", session_id="s1", result_format="object")
    assert result.error is None, result.error
    second, third = loopback_server.requests[1], loopback_server.requests[2]
    msgs = second["messages"]
    # the call, its result, then the inbox message: never between a call and its result
    assert [m["role"] for m in msgs[-3:]] == ["assistant", "tool", "user"]
    assert msgs[-1]["content"] == "Also check Rome"
    # consumed once: the next request holds it once, and the log one claim
    assert [m.get("content") for m in third["messages"]].count("Also check Rome") == 1
    claimed = kinds(agent, "s1", "inbox.claimed")
    assert [e.data["message_id"] for e in claimed] == ["m1"]
    assert claimed[0].run_id == result.run_id
    # the next run's history holds it where it was injected
    loopback_server.reply("ok")
    agent.run("and now?", session_id="s1")
    history = roles(loopback_server.requests[3])
    assert history.count(("user", "Also check Rome")) == 1
    assert len(kinds(agent, "s1", "inbox.claimed")) == 1


def test_a_message_from_another_process_through_the_sqlite_file(loopback_server, tmp_path) -> None:
    db = tmp_path / "s.sqlite3"
    child = textwrap.dedent(
        f"""
        from lightagent import LightAgent
        from lightagent.events.sql_store import SqliteSessionStore

        agent = LightAgent(model="gpt-4.1", api_key="k", base_url="http://127.0.0.1:9",
                           session_store=SqliteSessionStore({str(db)!r}))
        agent.send_message("job", "Stop after Paris", message_id="stop")
        """
    )

    def lookup(city: str) -> str:
        """Look up `city`."""
        proc = subprocess.run(
            [sys.executable, "-c", child],
            capture_output=True,
            text=True,
            timeout=120,
            env=os.environ,
        )
        assert proc.returncode == 0, proc.stderr
        return f"{city}: sunny"

    agent = agent_for(loopback_server, db, tools=[lookup])
    loopback_server.reply(call(), "done")
    assert agent.run("weather?", session_id="job") == "done"
    msgs = loopback_server.requests[1]["messages"]
    assert [m["role"] for m in msgs[-3:]] == ["assistant", "tool", "user"]
    assert msgs[-1]["content"] == "Stop after Paris"
    assert len(kinds(agent, "job", "inbox.claimed")) == 1


def test_a_message_sent_between_runs_opens_the_next_run_and_async_runs_take_it(
    loopback_server, tmp_path
) -> None:
    db = tmp_path / "s.sqlite3"
    agent = agent_for(loopback_server, db)
    # the message opens the session: it records its owner like a run would
    agent.send_message("s2", "Remember: metric units")
    assert agent.send_message("s2", "once", message_id="x") == agent.send_message(
        "s2", "once", message_id="x"
    )  # idempotent by id
    loopback_server.reply("fine")
    assert asyncio.run(agent.arun("hi", session_id="s2")) == "fine"
    first = roles(loopback_server.requests[0])
    assert first[-3:] == [("user", "hi"), ("user", "Remember: metric units"), ("user", "once")]
    assert len(kinds(agent, "s2", "inbox.enqueued")) == 2
    assert len(kinds(agent, "s2", "inbox.claimed")) == 2
    with pytest.raises(Exception) as info:
        agent.send_message("s2", "hi", user_id="mallory")
    assert getattr(info.value, "code", None) == "LA-SESSION-OWNER"


@pytest.fixture(params=["sqlite", "jsonl", "postgres"])
def open_store(request, tmp_path) -> Callable[[], Any]:
    """Opens a new store object on one shared storage (as separate processes would)."""
    if request.param == "sqlite":
        return lambda: SqliteSessionStore(tmp_path / "s.db")
    if request.param == "jsonl":
        return lambda: JsonlSessionStore(tmp_path / "sessions")
    url = request.getfixturevalue("postgres_url")
    prefix = f"inbox{uuid.uuid4().hex[:8]}_"
    return lambda: SqlSessionStore(url, table_prefix=prefix)


def test_concurrent_claimers_consume_each_message_once(open_store) -> None:
    send_message(open_store(), "c", "first", message_id="a")
    send_message(open_store(), "c", "second", message_id="b")
    got: list[list[str]] = []
    barrier = threading.Barrier(6)

    def claim(i: int) -> None:
        store = open_store()  # a store object each
        barrier.wait()
        got.append(claim_pending(store, "c", f"run{i}", InboxScan()))

    threads = [threading.Thread(target=claim, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    taken = [text for texts in got for text in texts]
    assert sorted(taken) == ["first", "second"]
    claims = [e for e in open_store().events("c") if e.type == "inbox.claimed"]
    assert sorted(e.data["message_id"] for e in claims) == ["a", "b"]


def test_bad_inbox_input_is_typed(loopback_server, tmp_path) -> None:
    with pytest.raises(ConfigurationError) as info:
        LightAgent(model="gpt-4.1", api_key="k", base_url=loopback_server.base_url).send_message(
            "s", "hi"
        )
    assert info.value.code == "LA-CONFIG"
    with pytest.raises(ValidationError) as bad:
        agent_for(loopback_server, tmp_path / "s.sqlite3").send_message("s", "  ")
    assert bad.value.code == "LA-VALIDATION"
    assert bad.value.hint


def test_a_message_claimed_by_a_run_that_then_fails_reaches_the_next_run(
    loopback_server, tmp_path
) -> None:
    from lightagent_contracts.loopback import ErrorReply

    agent = agent_for(loopback_server, tmp_path / "s.sqlite3")
    agent.run("hello", session_id="s1")
    agent.send_message("s1", "Ship on Friday", message_id="m1")
    # the request that carries the claimed message fails: the run ends in error
    loopback_server.reply(ErrorReply(400, {"error": {"message": "bad", "type": "invalid"}}))
    failed = agent.run("plan?", session_id="s1", result_format="object")
    assert failed.error is not None
    loopback_server.reply("Friday it is")
    agent.run("and now?", session_id="s1")
    contents = [m.get("content") for m in loopback_server.requests[-1]["messages"]]
    # claimed once, never lost: the next run's history holds it where it was injected
    assert contents.count("Ship on Friday") == 1
    assert contents.index("plan?") < contents.index("Ship on Friday") < contents.index("and now?")
    assert len(kinds(agent, "s1", "inbox.claimed")) == 1
