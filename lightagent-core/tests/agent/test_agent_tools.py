"""Tool rounds: registry and per-run tools, validation retries, limits, parallelism, idempotency."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest
from lightagent import LightAgent, ScriptedModel, tool
from lightagent.loop import idempotency_key


def get_weather(city_name: str) -> str:
    """Get the current weather for `city_name`."""
    return f"Query result: {city_name} is sunny."


get_weather.tool_info = {
    "tool_name": "get_weather",
    "tool_description": "Get current weather information for the specified city.",
    "tool_params": [
        {
            "name": "city_name",
            "description": "The name of the city to query",
            "type": "string",
            "required": True,
        },
    ],
}


def call(name: str, **arguments) -> dict:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def test_seeds_tool_info_round_trip(scripted_model: ScriptedModel) -> None:
    scripted_model.add(call("get_weather", city_name="Shanghai"), "Shanghai is sunny.")
    agent = LightAgent(model=scripted_model, tools=[get_weather])
    assert agent.run("Please check the weather in Shanghai.") == "Shanghai is sunny."
    first, second = scripted_model.requests
    assert [t["function"]["name"] for t in first.tools] == ["get_weather"]
    tool_message = second.messages[-1]
    assert tool_message["role"] == "tool"
    assert tool_message["content"] == "Query result: Shanghai is sunny."
    assert tool_message["tool_call_id"] == second.messages[-2]["tool_calls"][0]["id"]


def test_per_run_tools_do_not_touch_the_agent(scripted_model: ScriptedModel) -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    scripted_model.add(call("add", a=2, b=3), "5", "no tools here")
    agent = LightAgent(model=scripted_model)
    result = agent.run("2+3?", tools=[add], result_format="object")
    assert result.content == "5"
    assert result.tool_calls[0]["output"] == "5"
    assert len(agent.tools) == 0
    agent.run("plain")
    assert scripted_model.requests[-1].tools is None


def test_invalid_arguments_reach_the_model_which_retries(scripted_model: ScriptedModel) -> None:
    scripted_model.add(
        {"tool_calls": [{"name": "get_weather", "arguments": "{'city': oops"}]},
        call("get_weather", city_name="Paris"),
        "Paris is sunny.",
    )
    agent = LightAgent(model=scripted_model, tools=[get_weather])
    result = agent.run("weather in Paris", result_format="object", trace=True)
    assert result.content == "Paris is sunny."
    bad = scripted_model.requests[1].messages[-1]
    assert bad["role"] == "tool" and "LA-TOOL-ARGS" in bad["content"]
    assert result.tool_calls[0]["error"]["code"] == "LA-TOOL-ARGS"
    stages = [e["data"]["stage"] for e in result.trace if e["type"] == "error"]
    assert stages == ["tool_arguments"]


def test_invalid_arguments_are_bounded_by_max_retry() -> None:
    bad = {"tool_calls": [{"name": "get_weather", "arguments": {"town": "x"}}]}
    model = ScriptedModel([bad, bad, bad])
    agent = LightAgent(model=model, tools=[get_weather])
    result = agent.run("q", max_retry=2, max_tool_iterations=10, result_format="object")
    assert result.error["code"] == "LA-TOOL-ARGS"
    assert len(model.requests) == 3
    model.assert_exhausted()


def test_unknown_tool_is_told_to_the_model(scripted_model: ScriptedModel) -> None:
    scripted_model.add(call("launch_rockets"), "sorry")
    agent = LightAgent(model=scripted_model, tools=[get_weather])
    assert agent.run("q") == "sorry"
    assert "LA-TOOL-NOT-FOUND" in scripted_model.requests[1].messages[-1]["content"]


@pytest.mark.parametrize("stream", [False, True])
def test_max_tool_iterations_in_every_mode(stream: bool) -> None:
    model = ScriptedModel(default=call("get_weather", city_name="Rome"))
    agent = LightAgent(model=model, tools=[get_weather])
    if stream:
        items = list(agent.run("loop", stream=True, max_tool_iterations=3))
        assert items[-1]["code"] == "LA-MAX-ITERATIONS"
        assert sum(1 for i in items if "output" in i) == 3
    else:
        result = agent.run("loop", max_tool_iterations=3, result_format="object")
        assert result.error["code"] == "LA-MAX-ITERATIONS"
        assert len(result.tool_calls) == 3
    assert len(model.requests) == 4


def test_parallel_tool_calls_run_concurrently() -> None:
    started = threading.Barrier(3, timeout=30)

    @tool
    def slow(n: int) -> str:
        """Wait for the other calls, then echo n."""
        started.wait()  # deadlocks (then times out) unless the three calls run at once
        return f"done {n}"

    calls = {"tool_calls": [{"name": "slow", "arguments": {"n": i}} for i in range(3)]}
    model = ScriptedModel([calls, "all done"])
    agent = LightAgent(model=model, tools=[slow])
    result = agent.run("go", result_format="object")
    assert result.content == "all done"
    assert [c["output"] for c in result.tool_calls] == ["done 0", "done 1", "done 2"]
    tool_messages = [m for m in model.requests[1].messages if m["role"] == "tool"]
    assert [m["content"] for m in tool_messages] == ["done 0", "done 1", "done 2"]


def test_idempotency_key_is_passed_to_tools_that_declare_it(scripted_model: ScriptedModel) -> None:
    seen: list[str] = []

    @tool
    def charge(amount: int, idempotency_key: str) -> str:
        """Charge an amount once."""
        seen.append(idempotency_key)
        return "charged"

    scripted_model.add(call("charge", amount=5), "ok")
    agent = LightAgent(model=scripted_model, tools=[charge])
    result = agent.run("pay", result_format="object", trace=True)
    run_id = result.run_id
    expected = idempotency_key(run_id, 0, "charge", {"amount": 5})
    assert seen == [expected]
    assert "idempotency_key" not in json.dumps(scripted_model.requests[0].tools)
    event = next(e for e in result.trace if e["type"] == "tool_call")
    assert event["data"]["idempotency_key"] == expected
    # canonical: whitespace and key order do not change it
    assert idempotency_key(run_id, 0, "charge", '{ "amount" : 5 }') == expected


def test_sync_run_works_inside_a_running_event_loop(scripted_model: ScriptedModel) -> None:
    scripted_model.add(call("get_weather", city_name="Oslo"), "cold but sunny")
    agent = LightAgent(model=scripted_model, tools=[get_weather])

    async def handler() -> str:
        # A FastAPI/Jupyter-style caller: the sync API called while a loop runs here.
        return agent.run("weather in Oslo")

    assert asyncio.run(handler()) == "cold but sunny"


def test_async_tools_run_on_the_callers_loop() -> None:
    loops = []

    @tool
    async def where() -> str:
        """Report the loop it runs on."""
        loops.append(asyncio.get_running_loop())
        await asyncio.sleep(0)
        return "here"

    model = ScriptedModel([call("where"), "done"])
    agent = LightAgent(model=model, tools=[where])

    async def main():
        result = await agent.arun("q")
        return result, asyncio.get_running_loop()

    result, loop = asyncio.run(main())
    assert result == "done" and loops == [loop]


def test_sync_tools_do_not_block_the_event_loop() -> None:
    lock = threading.Lock()
    inside = {"now": 0}
    both_blocking, loop_ticked = threading.Event(), threading.Event()
    outputs: list[str] = []

    @tool
    def sleepy() -> str:
        """Block until the loop has ticked while both runs' calls block their threads."""
        with lock:
            inside["now"] += 1
            if inside["now"] == 2:
                both_blocking.set()
        outputs.append("rested" if loop_ticked.wait(30) else "the loop stood still")
        return outputs[-1]

    model = ScriptedModel(
        lambda req: "done" if req.messages[-1]["role"] == "tool" else call("sleepy")
    )
    agent = LightAgent(model=model, tools=[sleepy])
    ticks = []

    async def heartbeat() -> None:
        await asyncio.to_thread(both_blocking.wait, 30)
        for _ in range(20):
            ticks.append(time.perf_counter())
            await asyncio.sleep(0.01)
        loop_ticked.set()

    async def main() -> list:
        return await asyncio.gather(agent.arun("a"), agent.arun("b"), heartbeat())

    try:
        answers = asyncio.run(main())
    finally:
        loop_ticked.set()  # frees the threads of a failed run
    assert answers[:2] == ["done", "done"]
    # the loop kept ticking while both tools blocked their threads
    assert outputs == ["rested", "rested"] and len(ticks) == 20


def test_unknown_tool_name_is_a_config_error() -> None:
    from lightagent import ConfigurationError

    with pytest.raises(ConfigurationError):
        LightAgent(model=ScriptedModel(), tools=["no_such_tool_anywhere"])


def test_no_tool_starts_after_the_cancel_is_seen() -> None:
    from lightagent import CancellationToken

    token = CancellationToken()
    started: list[str] = []

    @tool
    def first() -> str:
        """Cancel the run from inside a tool."""
        started.append("first")
        token.cancel("enough")
        return "cancelled it"

    @tool
    def second() -> str:
        """Must never start."""
        started.append("second")
        return "oops"

    model = ScriptedModel([call("first"), call("second"), "never"])
    agent = LightAgent(model=model, tools=[first, second])
    result = agent.run("go", cancellation_token=token, result_format="object")
    assert result.error["code"] == "LA-CANCELLED"
    assert started == ["first"]
    assert len(model.requests) == 1
    assert model.remaining == 2


def test_sync_run_with_an_async_tool_inside_a_running_loop() -> None:
    @tool
    async def fetch(key: str) -> str:
        """Fetch a value asynchronously."""
        await asyncio.sleep(0.001)
        return f"fetched {key}"

    model = ScriptedModel([call("fetch", key="k"), "done"])
    agent = LightAgent(model=model, tools=[fetch])

    async def notebook_cell() -> str:
        return agent.run("go")  # a Jupyter cell calling the sync API

    assert asyncio.run(notebook_cell()) == "done"
    assert model.requests[1].messages[-1]["content"] == "fetched k"


def test_the_sync_driver_creates_no_event_loop(monkeypatch, scripted_model: ScriptedModel) -> None:
    def forbidden(*args, **kwargs):
        raise AssertionError("the sync driver must not create an event loop")

    monkeypatch.setattr(asyncio, "run", forbidden)
    monkeypatch.setattr(asyncio, "new_event_loop", forbidden)
    scripted_model.add(
        call("get_weather", city_name="Lima"),
        "sunny",
        call("get_weather", city_name="Quito"),
        "also sunny",
    )
    agent = LightAgent(model=scripted_model, tools=[get_weather])
    assert agent.run("Lima?") == "sunny"
    items = list(agent.run("Quito?", stream=True))
    assert items[-1]["choices"][0]["finish_reason"] == "stop"
