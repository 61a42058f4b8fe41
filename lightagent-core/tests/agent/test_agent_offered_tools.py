"""Only the tools a run offered can be called: a tool left out by the tool selection is an
unknown tool to the model, exactly as a name that does not exist."""

from __future__ import annotations

import types

import pytest
from lightagent import LightAgent, Tool
from lightagent.hookspecs import hookimpl
from lightagent.plugins import PluginHost, reset_host

RAN: list[str] = []


class WeatherOnly:
    """A tool selector that offers the tools whose name shares a word with the question."""

    def offer(self, registry, query, *, limit, messages):
        words = set(query.lower().split())
        return [n for n in registry.names() if words & set(n.split("_"))]

    def select(self, registry, query, *, limit, messages, always):
        return self.offer(registry, query, limit=limit, messages=messages)[:limit]

    def report(self, registry, kept):
        return {}


@pytest.fixture
def selector():
    plugin = types.SimpleNamespace(
        register_tool_selectors=hookimpl(lambda register: register("words", WeatherOnly))
    )
    reset_host(PluginHost(entry_points=False, plugins=[("words-selector", plugin)]))
    yield
    reset_host(None)


def make(name: str, description: str) -> Tool:
    def run() -> str:
        RAN.append(name)
        return f"{name} done"

    return Tool(
        name=name,
        description=description,
        parameters={"type": "object", "properties": {}},
        func=run,
    )


TOOLS = (
    [make("get_weather", "Current weather and forecast for a city.")]
    + [make(f"inventory_{i}", f"Count the widgets of warehouse number {i}.") for i in range(18)]
    + [make("wipe_disk", "Erase every file on the disk.")]
)


def test_a_tool_left_out_of_the_selection_cannot_be_called(loopback_server, selector) -> None:
    RAN.clear()
    offered: list[list[str]] = []

    def model(body: dict):
        offered.append([t["function"]["name"] for t in body.get("tools") or ()])
        if body["messages"][-1]["role"] == "user":
            return {"tool_calls": [{"name": "wipe_disk", "arguments": {}}]}
        return "ok"

    loopback_server.default = model
    agent = LightAgent(model="gpt-4.1", api_key="k", base_url=loopback_server.base_url, tools=TOOLS)
    assert agent.run("What is the weather in Rome?") == "ok"
    assert "get_weather" in offered[0] and "wipe_disk" not in offered[0]
    assert RAN == []
    result = next(m for m in loopback_server.requests[-1]["messages"] if m["role"] == "tool")
    assert result["content"].startswith("Error [LA-TOOL-NOT-FOUND] no tool named `wipe_disk`")
    assert "get_weather" in result["content"]


def test_every_tool_is_callable_when_every_tool_is_offered(loopback_server) -> None:
    RAN.clear()
    loopback_server.reply({"tool_calls": [{"name": "wipe_disk", "arguments": {}}]}, "ok")
    agent = LightAgent(
        model="gpt-4.1",
        api_key="k",
        base_url=loopback_server.base_url,
        tools=TOOLS,
        filter_tools=False,
    )
    assert agent.run("What is the weather in Rome?") == "ok"
    assert RAN == ["wipe_disk"]


class _Refuse:
    phases = frozenset({"before_tool_call"})

    def before_tool_call(self, ctx):
        from lightagent.hooks import HookDecision

        return HookDecision.block("recipient came from a web page\n  not from the user")


def test_a_denial_reaches_the_model_as_one_line(loopback_server) -> None:
    RAN.clear()
    loopback_server.reply({"tool_calls": [{"name": "wipe_disk", "arguments": {}}]}, "ok")
    agent = LightAgent(
        model="gpt-4.1",
        api_key="k",
        base_url=loopback_server.base_url,
        tools=TOOLS,
        filter_tools=False,
        hooks=[_Refuse()],
    )
    agent.run("wipe it")
    result = next(m for m in loopback_server.requests[-1]["messages"] if m["role"] == "tool")
    assert result["content"] == (
        "Error [LA-HOOK] Tool call wipe_disk was denied: "
        "recipient came from a web page not from the user"
    )
    assert RAN == []
