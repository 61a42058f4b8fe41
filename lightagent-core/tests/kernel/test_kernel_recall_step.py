"""A run step's ``recall``: called once with the query as the run admitted it, after the
query joined the prompt and before the steps' ``start``, so what it adds is in the first
request."""

from __future__ import annotations

import types
from typing import Any

from lightagent import LightAgent, ScriptedModel
from lightagent.extensions import AgentExtension, ExtensionPart, RunStep
from lightagent.hookspecs import hookimpl
from lightagent.plugins import PluginHost, reset_host


class _Recalling(RunStep):
    def __init__(self, seen: list[str]) -> None:
        self.seen = seen

    def recall(self, spec: Any, st: Any, query: str, messages: list[dict[str, Any]]) -> Any:
        self.seen.append(f"recall:{query}:{messages[-1]['content']}")
        messages.insert(0, {"role": "system", "content": f"recalled for {query}"})
        return
        yield

    def start(self, spec: Any, st: Any, history: Any, messages: Any, tools: Any) -> Any:
        self.seen.append("start")
        return
        yield

    def finish(self, spec: Any, st: Any, content: str | None) -> Any:
        self.seen.append(f"finish:{content}")
        return
        yield


class _Part(ExtensionPart):
    def __init__(self, seen: list[str]) -> None:
        self.seen = seen

    def run_step(self, spec: Any, options: Any) -> RunStep | None:
        return _Recalling(self.seen)


class _Recaller(AgentExtension):
    name = "recaller"
    keywords = {"recaller": None}
    seen: list[str] = []

    def configure(self, agent: Any, values: dict[str, Any]) -> ExtensionPart | None:
        return _Part(self.seen)


def test_a_step_recalls_once_for_the_query_before_the_first_request() -> None:
    def register_agent_extensions(register: Any) -> None:
        register("recaller", _Recaller)

    plugin = types.ModuleType("recaller")
    plugin.register_agent_extensions = hookimpl(register_agent_extensions)  # type: ignore[attr-defined]
    reset_host(PluginHost(entry_points=False, plugins=[("recaller", plugin)]))
    try:
        _Recaller.seen = []
        model = ScriptedModel(["ok"])
        agent = LightAgent(model=model, recaller=True)
        agent.run("hello", user_id="u")
        assert _Recaller.seen == ["recall:hello:hello", "start", "finish:ok"]
        first = model.requests[0].messages
        assert first[0]["content"] == "recalled for hello" and first[-1]["content"] == "hello"
    finally:
        reset_host(None)
