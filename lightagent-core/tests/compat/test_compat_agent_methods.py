"""Item 4 of issue 18: the seeds' agent methods and attributes."""

from __future__ import annotations

import asyncio

import pytest
from lightagent import (
    BaseCapabilityProvider,
    CapabilityRegistry,
    CapabilitySpec,
    ConfigurationError,
    LightAgent,
    ToolRegistry,
)


def get_weather(city_name: str) -> str:
    """Get the current weather for `city_name`."""
    return f"{city_name} is sunny."


get_weather.tool_info = {
    "tool_name": "get_weather",
    "tool_description": "Get the weather.",
    "tool_params": [
        {"name": "city_name", "description": "city", "type": "string", "required": True}
    ],
}


def test_tool_methods_and_attributes(scripted_model, tmp_path) -> None:
    agent = LightAgent(model=scripted_model, tools=[get_weather])
    assert isinstance(agent.tool_registry, ToolRegistry) and agent.tool_registry is agent.tools
    assert [t["function"]["name"] for t in agent.get_tools()] == ["get_weather"]
    assert agent.get_tool("get_weather") is not None and agent.get_tool("nope") is None
    assert agent.validate_tools() == []
    (tmp_path / "shout.py").write_text(
        "def shout(text: str) -> str:\n    '''Upper-case `text`.'''\n    return text.upper()\n"
    )
    assert agent.load_tools(["shout"], tools_directory=tmp_path) == ["shout"]
    assert agent.loaded_tools == ["shout"]
    assert agent.get_tool("shout") is not None
    assert agent.tool_loader.__class__.__name__ == "ToolLoader"
    assert agent.guardrails is None and agent.capability_registry is None


def test_guardrails_attribute(scripted_model) -> None:
    def no_secrets(text, ctx):
        return "secret" not in text

    agent = LightAgent(model=scripted_model, input_guardrails=[no_secrets])
    assert len(agent.guardrails.input_guardrails) == 1


def test_get_history_copies_the_last_runs_messages(loopback_server) -> None:
    loopback_server.reply("Hello!")
    agent = LightAgent(model="gpt-4.1", api_key="k", base_url=loopback_server.base_url)
    assert agent.get_history() == []
    agent.run("Hi")
    history = agent.get_history()
    assert {"role": "user", "content": "Hi"} in history
    assert history[-1]["role"] == "assistant" and history[-1]["content"] == "Hello!"
    history.clear()
    assert agent.get_history() != []


def test_get_history_after_a_streamed_run(loopback_server) -> None:
    loopback_server.reply("Streamed hello!", "Async streamed!")
    agent = LightAgent(model="gpt-4.1", api_key="k", base_url=loopback_server.base_url)
    stream = agent.run("Hi", stream=True)
    assert agent.get_history() == []  # nothing until the stream has ended
    text = "".join(chunk.choices[0].delta.content or "" for chunk in stream)
    assert text == "Streamed hello!"
    history = agent.get_history()
    assert {"role": "user", "content": "Hi"} in history
    assert history[-1]["role"] == "assistant" and history[-1]["content"] == "Streamed hello!"

    async def main() -> None:
        async for _ in await agent.arun("Again", stream=True):
            pass

    asyncio.run(main())
    assert agent.get_history()[-1]["content"] == "Async streamed!"
    assert {"role": "user", "content": "Again"} in agent.get_history()


def test_pause_resume_cancel_session_append_events(loopback_server) -> None:
    loopback_server.reply("ok")
    agent = LightAgent(
        model="gpt-4.1", api_key="k", base_url=loopback_server.base_url, session_store="memory"
    )
    with pytest.raises(ConfigurationError):
        agent.pause_session("no run yet")
    agent.run("start", session_id="s-1")
    agent.pause_session("lunch")
    agent.resume_session()
    agent.cancel_session("done", session_id="s-1")
    types = [e.type for e in agent.get_session("s-1")]
    assert types[-3:] == ["session.paused", "session.resumed", "session.cancelled"]
    assert agent.get_session("s-1")[-3].data["reason"] == "lunch"


def test_a_paused_session_stops_its_runs_until_it_is_resumed(loopback_server) -> None:
    agent = LightAgent(
        model="gpt-4.1", api_key="k", base_url=loopback_server.base_url, session_store="memory"
    )
    loopback_server.reply("ok", "back")
    agent.run("start", session_id="s-1")
    agent.pause_session("lunch")
    asked = len(loopback_server.requests)
    paused = agent.run("now?", session_id="s-1", result_format="object")
    assert paused.error is not None and paused.error["details"]["mode"] == "paused"
    assert len(loopback_server.requests) == asked  # stopped before its first request
    assert agent.runtime.for_session("s-1").snapshot()["paused"] == "lunch"
    agent.resume_session()
    assert agent.run("now?", session_id="s-1") == "back"


def test_invoke_capability(scripted_model) -> None:
    registry = CapabilityRegistry()
    spec = CapabilitySpec("calc.add")
    registry.register(BaseCapabilityProvider([spec], handlers={"calc.add": lambda a, b: a + b}))
    agent = LightAgent(model=scripted_model, capability_registry=registry)
    assert agent.capability_registry is registry
    assert asyncio.run(agent.invoke_capability("calc.add", a=2, b=3)) == 5
    with pytest.raises(ConfigurationError):
        asyncio.run(LightAgent(model=scripted_model).invoke_capability("calc.add"))
