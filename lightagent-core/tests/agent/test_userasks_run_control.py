"""User asks 14, 16 and 28 (shared/research/user-asks.md): budgets, hung tools, stopping a run.

Each test drives the whole agent loop; the dispatcher-level tests cover the parts alone.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from lightagent import CancellationToken, InMemorySessionStore, LightAgent, ScriptedModel, tool

RELEASE = threading.Event()
STARTED: list[str] = []


@pytest.fixture(autouse=True)
def _reset() -> Any:
    RELEASE.clear()
    STARTED.clear()
    yield
    RELEASE.set()  # free any abandoned worker thread


@tool(timeout=0.3)
def hung(x: int) -> str:
    """A tool that never answers in time."""
    STARTED.append("hung")
    RELEASE.wait(60)
    return "late"


@tool(timeout=0.3)
async def ahung(x: int) -> str:
    """An async tool that never answers in time."""
    STARTED.append("ahung")
    await asyncio.sleep(60)
    return "late"


@tool
def echo(x: int) -> str:
    """Echo a number."""
    STARTED.append(f"echo {x}")
    return f"echo {x}"


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": args}]}


def usage(n: int) -> dict[str, int]:
    return {"prompt_tokens": n, "completion_tokens": 1, "total_tokens": n + 1}


# -- 16. a hung tool: the model is told it timed out, and the run goes on -------------------


@pytest.mark.parametrize(
    ("name", "asynchronous"), [("hung", False), ("ahung", True), ("hung", True)]
)
def test_a_hung_tool_times_out_and_the_run_continues(name: str, asynchronous: bool) -> None:
    model = ScriptedModel([call(name, x=1), "I could not get it in time."])
    agent = LightAgent(model=model, tools=[hung, ahung])
    started = time.perf_counter()
    if asynchronous:
        result = asyncio.run(agent.arun("q", result_format="object"))
    else:
        result = agent.run("q", result_format="object")
    assert time.perf_counter() - started < 10  # 0.3 s limit; never the tool's 60 s
    assert result.error is None and result.content == "I could not get it in time."
    told = model.requests[1].messages[-1]
    assert told["role"] == "tool" and told["content"].startswith("Error [LA-TOOL-TIMEOUT]")
    assert result.tool_calls[0]["error"]["code"] == "LA-TOOL-TIMEOUT"
    model.assert_exhausted()


# -- 14. a runaway tool loop stops at the budget, with what was done so far ---------------


@pytest.mark.parametrize("stream", [False, True])
def test_tool_budget_stops_a_runaway_loop_with_a_partial_result(stream: bool) -> None:
    model = ScriptedModel(
        default={**call("echo", x=7), "content": "call me again", "usage": usage(10)}
    )
    agent = LightAgent(model=model, tools=[echo])
    if stream:
        events = list(agent.run("loop", stream=True, result_format="event", max_tool_iterations=2))
        done = events[-1].data
    else:
        done = agent.run("loop", max_tool_iterations=2, result_format="dict")
    assert done["error"]["code"] == "LA-MAX-ITERATIONS"
    assert STARTED == ["echo 7", "echo 7"]  # nothing ran after the budget was reached
    assert [c["output"] for c in done["tool_calls"]] == ["echo 7", "echo 7"]
    # what was spent is reported, including the request that hit the budget
    assert done["usage"] == {"prompt_tokens": 30, "completion_tokens": 3, "total_tokens": 33}
    assert len(model.requests) == 3


def test_the_budget_run_leaves_a_provider_valid_transcript_in_the_session() -> None:
    store = InMemorySessionStore()
    model = ScriptedModel([call("echo", x=1), call("echo", x=2), "fresh answer"])
    agent = LightAgent(model=model, tools=[echo], session_store=store)
    result = agent.run("loop", session_id="s", max_tool_iterations=1, result_format="object")
    assert result.error["code"] == "LA-MAX-ITERATIONS"
    assert agent.run("next", session_id="s") == "fresh answer"
    _assert_provider_valid(model.requests[-1].messages)


def _assert_provider_valid(messages: list[dict[str, Any]]) -> None:
    """Every assistant tool call is answered right after it, and no result is orphaned."""
    open_ids: list[str] = []
    for m in messages:
        if m["role"] == "tool":
            assert m["tool_call_id"] in open_ids, f"orphan tool result {m}"
            open_ids.remove(m["tool_call_id"])
            continue
        assert not open_ids, f"calls {open_ids} have no result before {m}"
        if m["role"] == "assistant":
            open_ids = [c["id"] for c in m.get("tool_calls") or ()]
    assert not open_ids


# -- 28. stopping: a cancelled stream starts no tool; a cancelled task leaves a valid log ---


def test_cancel_while_a_tool_call_streams_in_starts_no_tool() -> None:
    token = CancellationToken()
    model = ScriptedModel(
        [{"content": "Let me check that for you now.", **call("echo", x=1)}], chunk_size=3
    )
    agent = LightAgent(model=model, tools=[echo])
    items = []
    for item in agent.run("q", stream=True, cancellation_token=token):
        items.append(item)
        if len(items) == 2:
            token.cancel("user pressed stop")
    assert items[-1]["code"] == "LA-CANCELLED"
    assert STARTED == [] and not any("arguments" in i for i in items if "choices" not in i)


def test_a_cancelled_task_cancels_its_tool_and_the_session_stays_valid() -> None:
    """A client disconnect cancels the asyncio task running ``arun`` mid-tool."""
    store = InMemorySessionStore()
    model = ScriptedModel([call("slow", x=1), "after the disconnect"])
    finished: list[str] = []

    @tool
    async def slow(x: int) -> str:
        """A slow async tool."""
        STARTED.append("slow")
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            finished.append("cancelled")
            raise
        return "never"

    agent = LightAgent(model=model, tools=[slow], session_store=store)

    async def main() -> Any:
        task = asyncio.create_task(agent.arun("q", session_id="s"))
        for _ in range(1000):  # up to 10 s for the tool to start
            if STARTED:
                break
            await asyncio.sleep(0.01)
        assert STARTED == ["slow"]
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return await agent.arun("again", session_id="s")

    assert asyncio.run(main()) == "after the disconnect"
    assert finished == ["cancelled"]  # the tool did not keep running behind the caller's back
    sent = model.requests[-1].messages
    _assert_provider_valid(sent)
    assert sent[-2]["content"].startswith("[interrupted]")


@pytest.mark.parametrize("how", ["cancel the task", "close the stream"])
def test_stopped_streams_give_their_connections_back(loopback_server, how: str) -> None:
    """Ten streams stopped mid-answer on a pool of two connections; then a normal run."""
    import httpx
    import openai
    from lightagent import OpenAIModel
    from lightagent_contracts.loopback import LoopbackServer

    def chunk(delta: dict[str, Any]) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": None}
        return {"id": "s", "object": "chat.completion.chunk", "created": 1, "choices": [choice]}

    async def main() -> str:
        http = httpx.AsyncClient(
            limits=httpx.Limits(max_connections=2, max_keepalive_connections=2),
            timeout=httpx.Timeout(10.0, pool=3.0),  # a leaked pool fails fast, not hangs
        )
        client = openai.AsyncOpenAI(
            base_url=loopback_server.base_url, api_key="k", http_client=http, max_retries=0
        )
        model = OpenAIModel(
            "m", base_url=loopback_server.base_url, async_client=client, profile="openai"
        )
        agent = LightAgent(model=model)
        for _ in range(10):
            loopback_server.reply(  # the server keeps the stream open for 30 s
                LoopbackServer.raw(chunks=[chunk({"content": "hel"})], done=False, stall=30)
            )
            if how == "cancel the task":
                first = asyncio.Event()

                async def consume(first: asyncio.Event = first) -> None:
                    async for _item in agent.astream("q"):
                        first.set()

                task = asyncio.create_task(consume())
                await asyncio.wait_for(first.wait(), 10)
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task
            else:
                stream = agent.astream("q")
                async for _item in stream:
                    break
                await stream.aclose()
        loopback_server.reply("still served")
        try:
            return await asyncio.wait_for(agent.arun("q"), 20)
        finally:
            await http.aclose()

    assert asyncio.run(main()) == "still served"


# -- 15. a context overflow is a typed, unretried error that keeps the provider's words ------


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (
            400,
            "This model's maximum context length is 128000 tokens. However, you requested 130011 tokens.",
        ),
        (400, "Input length exceeds the maximum allowed context window (prompt is too long)"),
        (413, "Request too large for model: context_length_exceeded"),
    ],
)
def test_a_context_overflow_is_typed_and_not_retried(
    loopback_server, status: int, message: str
) -> None:
    from lightagent import OpenAIModel
    from lightagent_contracts.loopback import LoopbackServer

    body = {
        "error": {
            "message": message,
            "type": "invalid_request_error",
            "code": "context_length_exceeded",
        }
    }
    loopback_server.reply(LoopbackServer.error(status, body))
    model = OpenAIModel("m", base_url=loopback_server.base_url, api_key="k", retry_backoff=0.0)
    result = LightAgent(model=model).run("q", result_format="object")
    assert result.error["code"] == f"LA-{status}"
    assert message in result.error["details"]["provider_error"]
    assert result.error["details"]["status_code"] == status
    assert len(loopback_server.requests) == 1  # a 4xx is never retried
