"""Process-wide observers: attached to every new run, isolated, removable."""

from __future__ import annotations

import asyncio

import pytest
from lightagent import (
    ConfigurationError,
    LightAgent,
    ScriptedModel,
    add_global_observer,
    global_observers,
    remove_global_observer,
    tool,
)


class Seen:
    def __init__(self) -> None:
        self.types: list[str] = []

    def on_event(self, run, event) -> None:
        self.types.append(event["type"])


class Broken:
    def on_event(self, run, event) -> None:
        raise RuntimeError("observer bug")


@tool
def ping() -> str:
    """Answer pong."""
    return "pong"


def test_every_new_run_of_every_agent_reaches_a_global_observer() -> None:
    seen = Seen()
    add_global_observer(seen)
    add_global_observer(seen)  # twice: still once
    try:
        assert global_observers().count(seen) == 1
        LightAgent(model=ScriptedModel(["a"])).run("x")
        agent = LightAgent(
            model=ScriptedModel([{"tool_calls": [{"name": "ping"}]}, "b"]), tools=[ping]
        )
        asyncio.run(agent.arun("y"))
    finally:
        remove_global_observer(seen)
    assert seen.types.count("run_start") == 2 and seen.types.count("run_end") == 2
    # it asked for nothing more, so no per-call tool_finished event
    assert "tool_call" in seen.types and "tool_finished" not in seen.types
    LightAgent(model=ScriptedModel(["c"])).run("z")
    assert seen.types.count("run_start") == 2  # removed: new runs no longer reach it


def test_wants_tool_finished_adds_the_per_call_event() -> None:
    seen = Seen()
    seen.wants_tool_finished = True
    add_global_observer(seen)
    try:
        agent = LightAgent(
            model=ScriptedModel([{"tool_calls": [{"name": "ping"}]}, "b"]), tools=[ping]
        )
        agent.run("y")
    finally:
        remove_global_observer(seen)
    assert (
        seen.types.index("tool_call")
        < seen.types.index("tool_finished")
        < seen.types.index("tool_result")
    )


def test_a_failing_global_observer_never_fails_the_run() -> None:
    broken = Broken()
    add_global_observer(broken)
    try:
        result = LightAgent(model=ScriptedModel(["fine"])).run("x", result_format="object")
    finally:
        remove_global_observer(broken)
    assert result.error is None and result.content == "fine"


def test_an_object_without_on_event_is_refused() -> None:
    with pytest.raises(ConfigurationError) as info:
        add_global_observer(object())
    assert info.value.code == "LA-CONFIG"
