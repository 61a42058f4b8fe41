"""User ask 7 (shared/research/user-asks.md): parallel calls that arrive with the *same* id.

Some servers and gateways derive the id from the tool name (``call_add``), so two parallel
calls to one tool share it. Each call must still get its own result, and the transcript
sent back must not repeat an id (providers reject that with a 400).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from lightagent import LightAgent, OpenAIModel, ScriptedModel, tool
from lightagent_contracts.loopback import LoopbackServer

DUP = "call_add"


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def fn(a: int, b: int) -> dict[str, Any]:
    return {"name": "add", "arguments": json.dumps({"a": a, "b": b})}


def check_transcript(messages: list[dict[str, Any]]) -> None:
    assistant, results = messages[-3], messages[-2:]
    ids = [c["id"] for c in assistant["tool_calls"]]
    assert len(set(ids)) == 2 and all(ids), ids
    args = {c["id"]: json.loads(c["function"]["arguments"]) for c in assistant["tool_calls"]}
    assert [m["tool_call_id"] for m in results] == ids
    assert {m["tool_call_id"]: m["content"] for m in results} == {
        i: str(a["a"] + a["b"]) for i, a in args.items()
    }


def test_non_streamed_duplicate_ids_keep_their_own_results(loopback_server: LoopbackServer) -> None:
    calls = [{"id": DUP, "type": "function", "function": fn(a, b)} for a, b in ((1, 2), (10, 20))]
    body = {
        "id": "x",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": None, "tool_calls": calls},
                "finish_reason": "tool_calls",
            }
        ],
    }
    loopback_server.reply(LoopbackServer.raw(body=body), "3 and 30")
    model = OpenAIModel("m", base_url=loopback_server.base_url, api_key="k", profile="openai")
    result = LightAgent(model=model, tools=[add]).run("sums", result_format="object")
    assert result.content == "3 and 30"
    assert sorted(c["output"] for c in result.tool_calls) == ["3", "30"]
    check_transcript(loopback_server.requests[1]["messages"])


def test_streamed_duplicate_ids_keep_their_own_results(loopback_server: LoopbackServer) -> None:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "s",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    def call(index: int, a: int, b: int) -> dict[str, Any]:
        return chunk(
            {"tool_calls": [{"index": index, "id": DUP, "type": "function", "function": fn(a, b)}]}
        )

    loopback_server.reply(
        LoopbackServer.raw(
            chunks=[
                chunk({"role": "assistant", "content": ""}),
                call(0, 1, 2),
                call(1, 10, 20),
                chunk({}, "tool_calls"),
            ]
        ),
        "3 and 30",
    )
    model = OpenAIModel("m", base_url=loopback_server.base_url, api_key="k", profile="openai")
    items = list(LightAgent(model=model, tools=[add]).run("sums", stream=True))
    outputs = {i["call_id"]: i["output"] for i in items if "output" in i}
    assert sorted(outputs.values()) == ["3", "30"] and len(outputs) == 2
    check_transcript(loopback_server.requests[1]["messages"])


@pytest.mark.parametrize("stream", [False, True])
def test_any_model_plugin_returning_duplicate_ids_is_handled(stream: bool) -> None:
    model = ScriptedModel(
        [
            {
                "tool_calls": [
                    {"name": "add", "arguments": {"a": 1, "b": 2}, "id": DUP},
                    {"name": "add", "arguments": {"a": 10, "b": 20}, "id": DUP},
                ]
            },
            "3 and 30",
        ]
    )
    agent = LightAgent(model=model, tools=[add])
    if stream:
        list(agent.run("sums", stream=True))
    else:
        assert agent.run("sums") == "3 and 30"
    check_transcript(model.requests[1].messages)
