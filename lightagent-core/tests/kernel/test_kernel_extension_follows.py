"""An extension that follows a kernel keyword (``follows = ("memory",)``) joins the runs of
every agent built with it, and takes the loop's memory steps over through its run step."""

from __future__ import annotations

import types
from typing import Any

from lightagent import InMemoryMemory, LightAgent, ScriptedModel
from lightagent.extensions import AgentExtension, ExtensionPart, RunStep
from lightagent.hookspecs import hookimpl
from lightagent.plugins import PluginHost, reset_host


class _Steps(RunStep):
    def __init__(self, spec: Any, seen: list[str]) -> None:
        spec.memory_steps = self
        self.seen = seen

    def retrieve(self, spec: Any, st: Any, query: str, messages: list[dict[str, Any]]) -> Any:
        self.seen.append(f"retrieve:{query}")
        return
        yield

    def write(self, spec: Any, st: Any, data: Any, answer: str | None) -> Any:
        self.seen.append(f"write:{data}->{answer}")
        return
        yield


class _Part(ExtensionPart):
    def __init__(self, seen: list[str]) -> None:
        self.seen = seen

    def run_step(self, spec: Any, options: Any) -> RunStep | None:
        return _Steps(spec, self.seen) if spec.memory is not None else None


class _Follower(AgentExtension):
    name = "follower"
    follows = ("memory",)
    seen: list[str] = []

    def configure(self, agent: Any, values: dict[str, Any]) -> ExtensionPart | None:
        return _Part(self.seen)


def test_an_extension_that_follows_memory_takes_the_memory_steps_over() -> None:
    def register_agent_extensions(register: Any) -> None:
        register("follower", _Follower)

    plugin = types.ModuleType("follower")
    plugin.register_agent_extensions = hookimpl(register_agent_extensions)  # type: ignore[attr-defined]
    reset_host(PluginHost(entry_points=False, plugins=[("follower", plugin)]))
    try:
        _Follower.seen = []
        memory = InMemoryMemory()
        LightAgent(model=ScriptedModel(["ok"]), memory=memory).run("hello", user_id="u")
        LightAgent(model=ScriptedModel(["plain"])).run("no memory", user_id="u")
        assert _Follower.seen == ["retrieve:hello", "write:hello->ok"]
        assert len(memory) == 0, "the follower's write replaced the plain one"
    finally:
        reset_host(None)
