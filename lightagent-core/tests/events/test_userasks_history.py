"""User ask 8 (shared/research/user-asks.md): "once poisoned, stays poisoned".

Whatever ends a run in a session (a budget, a provider error, a cut answer, a guardrail,
a cancel in the middle of a tool round), the next run's history is still valid for the
provider: every assistant tool call is answered right after it, and no result is orphaned.
"""

from __future__ import annotations

from typing import Any

import pytest
from lightagent import (
    CancellationToken,
    HookDecision,
    InMemorySessionStore,
    LightAgent,
    ScriptedModel,
    tool,
)
from lightagent.errors import ModelError
from lightagent.models.base import ModelResponse, ToolCall

TOKEN: list[CancellationToken] = []


@tool
def echo(x: int) -> str:
    """Echo a number; x=9 presses stop while it runs."""
    if x == 9:
        TOKEN[0].cancel("user pressed stop")
    return f"e{x}"


def call(x: int) -> dict[str, Any]:
    return {"tool_calls": [{"name": "echo", "arguments": {"x": x}}]}


def broken(call_id: str) -> ModelResponse:
    bad = ToolCall(call_id, "echo", "{}", error="not JSON", raw_arguments="{")
    return ModelResponse(tool_calls=[bad], finish_reason="tool_calls")


def block_output(ctx: Any) -> Any:
    return HookDecision.block("not shown") if ctx.phase == "output_guardrail" else None


CASES = {
    "LA-MAX-ITERATIONS": ([call(1), call(2)], {"max_tool_iterations": 1}, None),
    "LA-TOOL-ARGS": ([broken("a"), broken("b")], {"max_retry": 1, "max_tool_iterations": 5}, None),
    "LA-500": ([call(1), ModelError("LA-500", "upstream died")], {}, None),
    "LA-TRUNCATED": ([call(1), {"content": "cut", "finish_reason": "length"}], {}, None),
    "LA-GUARDRAIL": ([call(1), "the answer"], {}, [block_output]),
    "LA-CANCELLED": ([{"tool_calls": [*call(9)["tool_calls"], *call(2)["tool_calls"]]}], {}, None),
}


def assert_provider_valid(messages: list[dict[str, Any]]) -> None:
    open_ids: list[str] = []
    for m in messages:
        if m["role"] == "tool":
            assert m["tool_call_id"] in open_ids, f"orphan result {m}"
            open_ids.remove(m["tool_call_id"])
            continue
        assert not open_ids, f"calls {open_ids} unanswered before {m}"
        if m["role"] == "assistant":
            open_ids = [c["id"] for c in m.get("tool_calls") or ()]
    assert not open_ids, f"calls {open_ids} unanswered"


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("code", list(CASES))
def test_the_next_run_after_any_failure_sends_a_valid_history(code: str, stream: bool) -> None:
    replies, options, hooks = CASES[code]
    TOKEN[:] = [CancellationToken()]
    store = InMemorySessionStore()
    agent = LightAgent(
        model=ScriptedModel(list(replies)), tools=[echo], session_store=store, hooks=hooks
    )
    options = {**options, "cancellation_token": TOKEN[0]}
    if stream:
        items = list(agent.run("first", session_id="s", stream=True, **options))
        assert items[-1]["code"] == code
    else:
        result = agent.run("first", session_id="s", result_format="object", **options)
        assert result.error["code"] == code
    after = ScriptedModel(["fine"])
    assert (
        LightAgent(model=after, tools=[echo], session_store=store).run("next", session_id="s")
        == "fine"
    )
    sent = after.requests[0].messages
    assert [m["content"] for m in sent if m["role"] == "user"] == ["first", "next"]
    assert_provider_valid(sent)
