"""Item 10 of issue 18: ``max_tool_iterations`` in a streamed tool loop (a deliberate difference).

In 0.11 a streamed run with ``max_tool_iterations=1`` made one model request, ran the tools it
asked for, and ended with the iteration error: the model never saw those results, and the
non-streamed loop was bounded by ``max_retry`` instead. Here ``N`` allows ``N`` tool rounds,
each followed by a request that sees its results, in every mode (docs/migration.md).
"""

from __future__ import annotations

import pytest
from lightagent import LightAgent

RAN: list[int] = []


def runtime_add(a: int, b: int) -> int:
    """Add `a` and `b`."""
    RAN.append(a + b)
    return a + b


def asks_for_the_tool(a: int) -> dict:
    return {"tool_calls": [{"name": "runtime_add", "arguments": {"a": a, "b": 1}}]}


@pytest.mark.parametrize("stream", [True, False])
def test_one_tool_round_is_seen_by_the_model_then_the_iteration_error(
    loopback_server, stream: bool
) -> None:
    RAN.clear()
    loopback_server.reply(asks_for_the_tool(1), asks_for_the_tool(2))
    agent = LightAgent(
        model="gpt-4.1", api_key="k", base_url=loopback_server.base_url, tools=[runtime_add]
    )
    if stream:
        items = list(agent.run("loop", stream=True, max_tool_iterations=1, trace=True))
        error = items[-1]
        assert error["code"] == "LA-MAX-ITERATIONS"
        assert "Max tool iterations(1) reached." in error["error"]  # the seeds' text
    else:
        result = agent.run("loop", max_tool_iterations=1, result_format="object", trace=True)
        assert result.error["code"] == "LA-MAX-ITERATIONS"
    _first, second = loopback_server.requests
    # The round's result reached the model; the second request's calls never ran.
    assert second["messages"][-1] == {
        "role": "tool",
        "tool_call_id": second["messages"][-2]["tool_calls"][0]["id"],
        "content": "2",
    }
    assert RAN == [2]
    end = agent.export_trace()[-1]
    assert end["type"] == "run_end" and end["data"]["stage"] == "max_tool_iterations"
    assert end["data"]["error"]["details"]["max_tool_iterations"] == 1
    loopback_server.assert_exhausted()
