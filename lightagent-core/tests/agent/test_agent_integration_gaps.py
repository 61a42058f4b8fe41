"""Seams between the loop and the model, control and tool layers (each failed before its fix)."""

from __future__ import annotations

import asyncio

import pytest
from lightagent import LightAgent, ScriptedModel, tool
from lightagent.errors import ConfigurationError
from lightagent.models.base import ModelResponse, ToolCall

hooks_mod = pytest.importorskip("lightagent.hooks")
pytest.importorskip("lightagent_control.interceptor")

RAN: list[dict] = []


@tool
def lookup(city: str = "Paris") -> str:
    """Look up the weather of a city."""
    RAN.append({"city": city})
    return f"{city}: sunny"


def _broken_call(call_id: str = "c1") -> ModelResponse:
    return ModelResponse(
        tool_calls=[
            ToolCall(
                call_id,
                "lookup",
                "{}",
                error="the arguments are not valid JSON: Expecting value (line 1 column 10)",
                raw_arguments='{"city": }',
            )
        ],
        finish_reason="tool_calls",
    )


# -- 1. ToolCall.error: never run the tool, send the error back -------------------------


def test_unparsable_wire_arguments_are_sent_back_not_run(loopback_server) -> None:
    RAN.clear()
    loopback_server.reply(
        {"tool_calls": [{"name": "lookup", "arguments": '{"city": }', "id": "call_bad"}]},
        {"tool_calls": [{"name": "lookup", "arguments": {"city": "Rome"}, "id": "call_ok"}]},
        "Rome is sunny.",
    )
    agent = LightAgent(model="m", api_key="k", base_url=loopback_server.base_url, tools=[lookup])
    result = agent.run("weather in Rome?", result_format="object", trace=True)
    assert result.content == "Rome is sunny."
    assert RAN == [{"city": "Rome"}]  # the broken call never ran with "{}" (city=Paris)
    second = loopback_server.requests[1]["messages"]
    assert second[-2]["tool_calls"][0]["function"]["arguments"] == "{}"
    assert second[-1]["tool_call_id"] == "call_bad"
    assert second[-1]["content"].startswith("Error [LA-TOOL-ARGS] the arguments of lookup")
    results = [e["data"] for e in result.trace if e["type"] == "tool_result"]
    assert results[0]["error"]["code"] == "LA-TOOL-ARGS" and results[1]["error"] is None
    errors = [e["data"] for e in result.trace if e["type"] == "error"]
    assert errors[0]["stage"] == "tool_arguments"
    loopback_server.assert_exhausted()


def test_unparsable_arguments_in_a_stream(loopback_server) -> None:
    RAN.clear()
    loopback_server.reply(
        {"tool_calls": [{"name": "lookup", "arguments": '{"city": }', "id": "call_bad"}]},
        "Sorry.",
    )
    agent = LightAgent(model="m", api_key="k", base_url=loopback_server.base_url, tools=[lookup])
    items = list(agent.run("q", stream=True, result_format="event"))
    results = [i.data for i in items if i.type == "tool_result"]
    assert RAN == [] and results[0]["code"] == "LA-TOOL-ARGS"
    assert "[LA-TOOL-ARGS]" in loopback_server.requests[1]["messages"][-1]["content"]


def test_broken_text_tool_call_is_sent_back(loopback_server) -> None:
    RAN.clear()
    loopback_server.reply(
        {"content": '<tool_call>{"name": "lookup", "arguments": {"city": }}</tool_call>'},
        "Sorry.",
    )
    agent = LightAgent(model="m", api_key="k", base_url=loopback_server.base_url, tools=[lookup])
    assert agent.run("weather?") == "Sorry."
    assert RAN == []
    tool_msg = loopback_server.requests[1]["messages"][-1]
    assert tool_msg["role"] == "tool" and "[LA-TOOL-ARGS]" in tool_msg["content"]


def test_unparsable_arguments_are_bounded_by_max_retry() -> None:
    RAN.clear()
    model = ScriptedModel([_broken_call("a"), _broken_call("b"), _broken_call("c")])
    agent = LightAgent(model=model, tools=[lookup])
    result = agent.run("q", max_retry=1, max_tool_iterations=5, result_format="object")
    assert result.error["code"] == "LA-TOOL-ARGS"
    assert RAN == [] and model.remaining == 1
    asyncio.run(agent.arun("q", max_retry=1, max_tool_iterations=5))  # the async driver too
    assert RAN == []


# -- 2. security_context= and agent.hooks -----------------------------------------------


def test_security_context_reaches_the_interceptor() -> None:
    from lightagent_control.security import PermissionSet, SecurityContext

    RAN.clear()
    ctx = SecurityContext(tenant_id="t", permissions=PermissionSet(allowed={"tool.other"}))
    model = ScriptedModel([{"tool_calls": [{"name": "lookup", "arguments": {}}]}, "denied"])
    agent = LightAgent(model=model, tools=[lookup], security_context=ctx)
    result = agent.run("q", result_format="object", trace=True)
    assert RAN == [] and result.content == "denied"
    gate = [e["data"] for e in result.trace if e["type"] == "capability.gate"]
    assert gate and gate[0]["decision"] == "withhold"  # not offered to the model at all


def test_hooks_appended_later_take_effect_and_fast_path_stays_free() -> None:
    RAN.clear()
    model = ScriptedModel(["plain", {"tool_calls": [{"name": "lookup", "arguments": {}}]}, "ok"])
    agent = LightAgent(model=model, tools=[lookup])
    from lightagent_control import HookManager

    assert isinstance(agent.hooks, HookManager) and agent.hooks.hooks == []
    assert agent.run("q") == "plain"
    assert agent._run_interceptor() is None  # an empty manager adds no interception
    seen: list[str] = []

    def deny(ctx):
        seen.append(ctx.phase)
        if ctx.phase == "before_tool_call":
            return hooks_mod.HookDecision.block("not today")
        return None

    agent.hooks.hooks.append(deny)  # the seeds' pattern
    result = agent.run("q", result_format="object")
    assert RAN == [] and result.content == "ok"
    assert "not today" in result.tool_calls[0]["output"]
    assert agent.hooks is agent.interceptor.hooks and "before_run" in seen


def test_hooks_of_a_configured_agent_are_the_interceptors() -> None:
    model = ScriptedModel(["x"])
    agent = LightAgent(model=model, hooks=[lambda ctx: None])
    assert agent.hooks is agent.interceptor.hooks and len(agent.hooks.hooks) == 1


# -- 3. the decider's code is the code the model and the trace see ----------------------


@pytest.mark.parametrize("phase", ["before_run", "input_guardrail"])
def test_run_level_block_code_follows_the_decider(phase: str) -> None:
    def policy(ctx):
        if ctx.phase == phase:
            return hooks_mod.HookDecision(
                "block", None, "[LA-POLICY] off hours", {"code": "LA-POLICY"}
            )
        return None

    model = ScriptedModel(["never"])
    agent = LightAgent(model=model, hooks=[policy])
    result = agent.run("q", result_format="object")
    assert result.error["code"] == "LA-POLICY" and result.error["message"] == "off hours"
    assert model.remaining == 1


# -- 4. provider= model factories --------------------------------------------------------


def test_provider_scripted_builds_a_named_scripted_model() -> None:
    agent = LightAgent(provider="scripted", model="demo", api_key="ignored")
    assert isinstance(agent.model, ScriptedModel) and agent.model.name == "demo"
    assert agent.model.remaining == 0
    agent.model.add("hi")
    assert agent.run("q") == "hi"


def test_provider_factory_gets_only_the_keywords_it_takes() -> None:
    from lightagent import get_registry

    made: list[dict] = []

    def factory(model: str, *, api_key: str | None = None) -> ScriptedModel:
        made.append({"model": model, "api_key": api_key})
        return ScriptedModel(["from factory"], model=model)

    registry = get_registry()
    registry.register("model", "test-gaps-factory", factory, replace=True)
    registry.register("model", "test-gaps-broken", lambda name: None, replace=True)
    try:
        agent = LightAgent(
            model="m-2", provider="test-gaps-factory", api_key="k", base_url="http://x/v1"
        )
        assert agent.run("q") == "from factory"
        assert made == [{"model": "m-2", "api_key": "k"}]
        with pytest.raises(ConfigurationError) as info:
            LightAgent(model="m", provider="test-gaps-broken").run("q")
        assert info.value.code == "LA-CONFIG" and "test-gaps-broken" in info.value.message
    finally:
        registry.unregister("model", "test-gaps-factory")
        registry.unregister("model", "test-gaps-broken")
