"""Abort now, keeping what has streamed: the text the consumer was shown before a mid-stream
cancel is in the error's details (``partial_content``), in the result and the session log."""

from __future__ import annotations

import asyncio

from lightagent import CancellationToken, LightAgent
from lightagent.events.sql_store import SqliteSessionStore

ANSWER = "The release goes out on Friday after the freeze lifts at noon."


def agent_for(server, tmp_path) -> LightAgent:
    return LightAgent(
        model="gpt-4.1",
        api_key="k",
        base_url=server.base_url,
        session_store=SqliteSessionStore(tmp_path / "s.sqlite3"),
    )


def text_of(items) -> str:
    return "".join(
        (i["choices"][0]["delta"].get("content") or "") for i in items if i.get("choices")
    )


def failure_details(agent: LightAgent, session_id: str) -> dict:
    failed = [e for e in agent.get_session(session_id) if e.data.get("error")]
    assert failed, [e.type for e in agent.get_session(session_id)]
    return failed[-1].data["error"]["details"]


def test_a_sync_stream_aborted_mid_answer_keeps_what_was_shown(loopback_server, tmp_path):
    loopback_server.chunk_size = 8
    loopback_server.reply(ANSWER)
    agent = agent_for(loopback_server, tmp_path)
    token = CancellationToken()
    shown = []
    for item in agent.run("When?", stream=True, cancellation_token=token, session_id="s"):
        shown.append(item)
        if len(shown) == 3:
            token.cancel("user pressed stop")
    error = shown[-1]
    assert error["code"] == "LA-CANCELLED"
    partial = error["details"]["details"]["partial_content"]
    assert partial == text_of(shown[:-1]) and ANSWER.startswith(partial) and partial != ANSWER
    assert error["details"]["details"]["mode"] == "now"
    assert failure_details(agent, "s")["partial_content"] == partial


def test_an_async_event_stream_aborted_mid_answer_keeps_it_on_the_result(loopback_server, tmp_path):
    loopback_server.chunk_size = 8
    loopback_server.reply(ANSWER)
    agent = agent_for(loopback_server, tmp_path)
    token = CancellationToken()

    async def main():
        texts, done = [], None
        stream = await agent.arun(
            "When?", stream=True, result_format="event", cancellation_token=token, session_id="a"
        )
        async for event in stream:
            if event.type == "content":
                texts.append(event.data)
                if len(texts) == 2:
                    token.cancel("enough")
            elif event.type == "done":
                done = event.data
        return "".join(texts), done

    shown, result = asyncio.run(main())
    assert result["error"]["code"] == "LA-CANCELLED"
    partial = result["error"]["details"]["partial_content"]
    assert partial == shown and ANSWER.startswith(shown) and shown != ANSWER
    assert failure_details(agent, "a")["partial_content"] == shown
