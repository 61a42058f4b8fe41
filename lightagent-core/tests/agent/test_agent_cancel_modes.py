"""Cancellation modes: stop after this turn (the transcript stays complete) versus abort now.
Against the loopback OpenAI-wire server."""

from __future__ import annotations

import asyncio

from lightagent import CancellationToken, LightAgent
from lightagent.events.sql_store import SqliteSessionStore

TOKEN: dict[str, CancellationToken] = {}
RAN: list[str] = []


def step(name: str) -> str:
    """Do step `name`."""
    RAN.append(name)
    token = TOKEN.get("t")
    if token is not None and name == "a":
        if TOKEN.get("mode") == "after_turn":
            token.stop_after_turn("user pressed stop")  # as another thread would
        else:
            token.cancel("user pressed abort")
    return f"{name} done"


def two_steps() -> dict:
    return {
        "tool_calls": [
            {"name": "step", "arguments": {"name": "a"}},
            {"name": "step", "arguments": {"name": "b"}},
        ]
    }


def agent_for(server, **kw) -> LightAgent:
    return LightAgent(model="gpt-4.1", api_key="k", base_url=server.base_url, tools=[step], **kw)


def arm(mode: str) -> CancellationToken:
    RAN.clear()
    token = CancellationToken()
    TOKEN.update(t=token, mode=mode)
    return token


def test_stop_after_turn_finishes_the_round_and_sends_no_further_request(
    loopback_server,
) -> None:
    token = arm("after_turn")
    loopback_server.reply(two_steps())
    agent = agent_for(loopback_server, max_tool_workers=1)
    result = agent.run("go", cancellation_token=token, result_format="object", trace=True)
    assert RAN == ["a", "b"]  # the turn finished
    assert len(loopback_server.requests) == 1  # and no next request went out
    assert token.cancelled is False and token.stop_requested == "user pressed stop"
    assert result.error["code"] == "LA-CANCELLED"
    assert result.error["details"]["mode"] == "after_turn"
    end = next(e["data"] for e in result.trace if e["type"] == "run_end")
    assert end["exit_reason"] == "stopped_after_turn"
    tool_ids = {m["tool_call_id"] for m in result.messages if m["role"] == "tool"}
    assert len(tool_ids) == 2  # every call has its result


def test_abort_now_stops_inside_the_turn(loopback_server) -> None:
    token = arm("now")
    loopback_server.reply(two_steps())
    agent = agent_for(loopback_server, max_tool_workers=1)
    result = agent.run("go", cancellation_token=token, result_format="object")
    assert RAN == ["a"]
    assert result.error["details"]["mode"] == "now"


def test_a_stopped_session_continues_with_the_next_run(loopback_server, tmp_path) -> None:
    db = tmp_path / "stop.sqlite3"
    token = arm("after_turn")
    loopback_server.reply(two_steps(), "Both steps are done.")
    agent = agent_for(loopback_server, session_store=SqliteSessionStore(db))
    stopped = asyncio.run(
        agent.arun("go", session_id="s", cancellation_token=token, result_format="object")
    )
    assert stopped.error["details"]["mode"] == "after_turn"
    TOKEN.clear()
    again = agent_for(loopback_server, session_store=SqliteSessionStore(db))
    assert again.run("status?", session_id="s") == "Both steps are done."
    sent = loopback_server.requests[-1]["messages"]
    assert [m["content"] for m in sent if m["role"] == "tool"] == ["a done", "b done"]


def test_stop_reaches_child_tokens() -> None:
    parent = CancellationToken()
    child = parent.child()
    assert parent.stop_after_turn("enough") is True
    assert parent.stop_after_turn("again") is False
    assert child.stop_requested == "enough" and not child.cancelled
