"""The driver entry resume is built on: _drive/_adrive(initial_messages=, skip_calls=, run_id=)."""

from __future__ import annotations

import asyncio

import pytest
from lightagent import ConfigurationError, LightAgent, RunOptions, ScriptedModel, tool
from lightagent.loop import idempotency_key, pending_tool_calls

RUNS: list[str] = []


@tool
def book(seat: str, idempotency_key: str) -> str:
    """Book a seat."""
    RUNS.append(seat)
    return f"booked {seat} ({idempotency_key[:8]})"


def transcript() -> list[dict]:
    return [
        {"role": "system", "content": "You are a helpful agent."},
        {"role": "user", "content": "book 1A and 1B"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "book", "arguments": '{"seat": "1A"}'},
                },
                {
                    "id": "c2",
                    "type": "function",
                    "function": {"name": "book", "arguments": '{"seat": "1B"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "booked 1A"},
    ]


def test_pending_tool_calls_of_the_current_turn() -> None:
    pending, positions, total = pending_tool_calls(transcript())
    assert [c.id for c in pending] == ["c2"]
    assert positions == {"c1": 0, "c2": 1} and total == 2


def test_resume_runs_only_the_missing_calls_then_the_model() -> None:
    RUNS.clear()
    model = ScriptedModel(["Both seats are booked."])
    agent = LightAgent(model=model, tools=[book])
    result = agent._drive(
        initial_messages=transcript(),
        run_id="run_original",
        options=RunOptions(result_format="object", trace=True),
    )
    assert result.content == "Both seats are booked."
    assert RUNS == ["1B"]
    sent = model.requests[0].messages
    assert [m.get("tool_call_id") for m in sent if m["role"] == "tool"] == ["c1", "c2"]
    assert sent[0]["content"] == "You are a helpful agent." and len(sent) == 5
    key = next(e for e in result.trace if e["type"] == "tool_call")["data"]["idempotency_key"]
    assert key == idempotency_key("run_original", 1, "book", {"seat": "1B"})
    assert result.trace[0]["data"]["resumed"] is True


def test_skip_calls_use_the_recorded_output() -> None:
    RUNS.clear()
    model = ScriptedModel(["done"])
    agent = LightAgent(model=model, tools=[book])
    messages = transcript()[:-1]  # neither call has a result in the transcript
    result = asyncio.run(
        agent._adrive(
            initial_messages=messages,
            skip_calls={"c1": "booked 1A (ledger)"},
            options=RunOptions(result_format="object"),
        )
    )
    assert result.success and RUNS == ["1B"]
    tool_messages = [m for m in model.requests[0].messages if m["role"] == "tool"]
    assert tool_messages[0] == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": "booked 1A (ledger)",
    }


def test_resume_with_nothing_pending_just_calls_the_model() -> None:
    model = ScriptedModel(["answer"])
    agent = LightAgent(model=model)
    messages = [{"role": "user", "content": "hi"}]
    assert agent._drive(initial_messages=messages) == "answer"
    assert model.requests[0].messages == messages


def test_drive_needs_a_query_or_messages() -> None:
    with pytest.raises(ConfigurationError):
        LightAgent(model=ScriptedModel())._drive()


def test_a_query_cannot_follow_pending_calls() -> None:
    with pytest.raises(ConfigurationError):
        LightAgent(model=ScriptedModel(), tools=[book])._drive(
            "new question", initial_messages=transcript()
        )


def test_agent_resume_delegates_to_the_session_layer() -> None:
    memory_store = pytest.importorskip("lightagent.events.memory_store")
    store = memory_store.InMemorySessionStore()
    agent = LightAgent(model=ScriptedModel(["the answer"]), session_store=store)
    result = agent.run("q", session_id="s-r", result_format="object")
    again = agent.resume(result.run_id, session_id="s-r")
    assert "the answer" in str(again)
    assert "the answer" in str(asyncio.run(agent.aresume(result.run_id, session_id="s-r")))
