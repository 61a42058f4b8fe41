"""A run stopped by its ``CancellationToken`` — in a tool round or mid-stream — can be resumed
(``agent.resume``/``aresume``) and returns the real final answer, without repeating a tool
call whose result was recorded."""

from __future__ import annotations

import asyncio

from lightagent import CancellationToken, LightAgent, ScriptedModel
from lightagent.events.sql_store import SqliteSessionStore

ANSWER = "The release goes out on Friday after the freeze lifts at noon."


def test_a_run_cancelled_in_its_tool_round_resumes_to_its_answer(tmp_path) -> None:
    token = CancellationToken()
    booked: list[str] = []

    def book(seat: str) -> str:
        """Book a seat."""
        booked.append(seat)
        token.cancel("user pressed stop")  # while the tool runs
        return f"booked {seat}"

    model = ScriptedModel(
        [{"tool_calls": [{"name": "book", "arguments": {"seat": "1A"}}]}, "Seat 1A is yours."]
    )
    agent = LightAgent(
        model=model, tools=[book], session_store=SqliteSessionStore(tmp_path / "s.sqlite3")
    )
    first = agent.run("book 1A", session_id="s", cancellation_token=token, result_format="object")
    assert first.error["code"] == "LA-CANCELLED" and booked == ["1A"]
    assert agent.resume(first.run_id, session_id="s") == "Seat 1A is yours."
    assert booked == ["1A"]  # its recorded result was used, not run again
    sent = model.requests[-1].messages
    assert sent[-1] == {"role": "tool", "tool_call_id": sent[-2]["tool_calls"][0]["id"],
                        "content": "booked 1A"}  # fmt: skip
    # Finished now: a second resume returns the recorded answer and asks nothing.
    assert agent.resume(first.run_id, session_id="s") == "Seat 1A is yours."
    assert len(model.requests) == 2


def test_a_stream_cancelled_mid_answer_resumes_to_the_whole_answer(
    loopback_server, tmp_path
) -> None:
    loopback_server.chunk_size = 8
    loopback_server.reply(ANSWER, ANSWER)
    agent = LightAgent(
        model="gpt-4.1",
        api_key="k",
        base_url=loopback_server.base_url,
        session_store=SqliteSessionStore(tmp_path / "s.sqlite3"),
    )
    token = CancellationToken()

    async def main() -> tuple[dict, object]:
        done = None
        shown = 0
        async for event in agent.astream(
            "When?", result_format="event", cancellation_token=token, session_id="a"
        ):
            if event.type == "content":
                shown += 1
                if shown == 2:
                    token.cancel("enough")
            elif event.type == "done":
                done = event.data
        assert done is not None
        resumed = await agent.aresume(done["run_id"], session_id="a", result_format="object")
        return done, resumed

    done, resumed = asyncio.run(main())
    assert done["error"]["code"] == "LA-CANCELLED"
    assert resumed.success and resumed.content == ANSWER
    assert resumed.run_id == done["run_id"]
    assert len(loopback_server.requests) == 2
