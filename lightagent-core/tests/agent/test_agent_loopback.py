"""The seeds' examples against a real OpenAI-wire server on 127.0.0.1, through the real openai SDK."""

from __future__ import annotations

import asyncio
import json

from lightagent import LightAgent


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


def agent_for(server, **kw) -> LightAgent:
    return LightAgent(model="gpt-4.1", api_key="your_api_key", base_url=server.base_url, **kw)


def test_hello_world(loopback_server) -> None:
    loopback_server.reply("Hello! I am LightAgent, a helpful agent.")
    agent = agent_for(loopback_server)
    response = agent.run("Hello, who are you?")
    assert response == "Hello! I am LightAgent, a helpful agent."
    body = loopback_server.requests[0]
    assert body["model"] == "gpt-4.1"
    assert body["messages"][-1] == {"role": "user", "content": "Hello, who are you?"}
    loopback_server.assert_exhausted()


def test_tool_example(loopback_server) -> None:
    loopback_server.reply(
        {"tool_calls": [{"name": "get_weather", "arguments": {"city_name": "Shanghai"}}]},
        "The weather in Shanghai is sunny.",
    )
    agent = agent_for(loopback_server, tools=[get_weather])
    response = agent.run("Please check the weather in Shanghai.")
    assert response == "The weather in Shanghai is sunny."
    first, second = loopback_server.requests
    assert first["tools"][0]["function"]["name"] == "get_weather"
    assert second["messages"][-1]["role"] == "tool"
    assert second["messages"][-1]["content"] == "Query result: Shanghai is sunny."
    assert second["messages"][-2]["tool_calls"][0]["id"] == second["messages"][-1]["tool_call_id"]


def test_streaming_api(loopback_server) -> None:
    report = "AI agents plan, call tools and report back."
    loopback_server.reply(report)
    agent = agent_for(loopback_server)
    text = ""
    for chunk in agent.run("Write a short report about AI agents.", stream=True):
        assert chunk["object"] == "chat.completion.chunk"
        text += chunk["choices"][0]["delta"].get("content") or ""
    assert text == report
    assert loopback_server.requests[0]["stream"] is True


def test_streaming_with_a_tool_round(loopback_server) -> None:
    loopback_server.reply(
        {
            "content": "Let me look.",
            "tool_calls": [{"name": "get_weather", "arguments": {"city_name": "Rome"}}],
        },
        "Rome is sunny.",
    )
    agent = agent_for(loopback_server, tools=[get_weather])
    items = list(agent.run("weather in Rome?", stream=True))
    tool_items = [i for i in items if "choices" not in i]
    assert {k: tool_items[0][k] for k in ("name", "title")} == {
        "name": "get_weather",
        "title": "get_weather",
    }
    assert json.loads(tool_items[0]["arguments"]) == {"city_name": "Rome"}
    assert tool_items[0]["call_id"] == tool_items[1]["call_id"]
    assert tool_items[1]["output"] == "Query result: Rome is sunny."
    text = "".join(i["choices"][0]["delta"].get("content") or "" for i in items if "choices" in i)
    assert text == "Let me look.Rome is sunny."
    assert len(loopback_server.requests) == 2


def test_async_run_and_stream(loopback_server) -> None:
    loopback_server.reply("async hello", "streamed hello")
    agent = agent_for(loopback_server)

    async def main() -> tuple[str, str]:
        first = await agent.arun("hi")
        second = ""
        async for chunk in agent.astream("hi"):
            second += chunk["choices"][0]["delta"].get("content") or ""
        return first, second

    assert asyncio.run(main()) == ("async hello", "streamed hello")


def test_provider_errors_are_carried(loopback_server) -> None:
    denied = loopback_server.error(401, {"error": {"message": "bad key"}})
    loopback_server.reply(denied, denied)
    agent = agent_for(loopback_server)
    result = agent.run("hi", result_format="object")
    assert result.error["code"] == "LA-401"
    assert agent.run("hi").startswith("[LA-401]")
    assert len(loopback_server.requests) == 2  # a 4xx is never retried


def test_client_injection_seam(loopback_server) -> None:
    import openai

    loopback_server.reply("through the injected client")
    agent = LightAgent(model="gpt-4.1", api_key="unused", base_url="http://127.0.0.1:9/v1")
    agent.client = openai.OpenAI(base_url=loopback_server.base_url, api_key="injected")
    assert agent.run("hi") == "through the injected client"
    assert loopback_server.requests[0]["messages"][-1]["content"] == "hi"


class CountingClient:
    """A seeds-style injected client: any object with chat.completions.create."""

    def __init__(self, inner) -> None:
        self.calls = 0
        self.chat = self
        self.completions = self
        self._inner = inner

    def create(self, **body):
        self.calls += 1
        return self._inner.chat.completions.create(**body)


def test_client_injection_with_a_custom_object(loopback_server) -> None:
    import openai

    loopback_server.reply("via the wrapper", "async via the wrapper")
    client = CountingClient(openai.OpenAI(base_url=loopback_server.base_url, api_key="x"))
    agent = LightAgent(model="gpt-4.1", api_key="unused")
    agent.client = client
    assert agent.run("hi") == "via the wrapper"
    assert asyncio.run(agent.arun("hi")) == "async via the wrapper"
    assert client.calls == 2


def test_provider_names_a_registered_model_provider(loopback_server) -> None:
    from lightagent import get_registry
    from lightagent.models.openai_compat import OpenAIModel

    made = []

    def factory(model, **kwargs):
        made.append((model, sorted(kwargs)))
        return OpenAIModel(model, **kwargs)

    get_registry().register("model", "test-agent-provider", factory, replace=True)
    try:
        loopback_server.reply("from the provider")
        agent = LightAgent(
            model="m-1",
            provider="test-agent-provider",
            api_key="k",
            base_url=loopback_server.base_url,
        )
        assert agent.run("hi") == "from the provider"
        assert made == [("m-1", ["api_key", "base_url"])]
    finally:
        get_registry().unregister("model", "test-agent-provider")


def test_unknown_provider_is_a_clear_error() -> None:
    import pytest
    from lightagent import LightAgentError

    agent = LightAgent(model="m", provider="no-such-provider")
    with pytest.raises(LightAgentError) as info:
        agent.run("hi")
    assert info.value.code == "LA-PROVIDER-NOT-FOUND"
    assert "no-such-provider" in info.value.message


def test_cut_stream_is_a_typed_error_never_a_success(loopback_server) -> None:
    loopback_server.reply({"content": "half an answ", "truncate": True})
    agent = agent_for(loopback_server)
    items = list(agent.run("q", stream=True, result_format="event"))
    assert items[-2].type == "error" and items[-1].type == "done"
    assert items[-1].data["error"]["code"] == "LA-TRUNCATED"
    assert items[-1].data["content"].startswith("[LA-TRUNCATED]")
