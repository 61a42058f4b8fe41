"""An extension with ``sessions = True`` takes part in every run that has a session, also on
an agent that used none of its names; runs without a session never configure it."""

from __future__ import annotations

import types
from typing import Any

import pytest
from lightagent import LightAgent, ScriptedModel
from lightagent.events.memory_store import InMemorySessionStore
from lightagent.extensions import AgentExtension, ExtensionPart, RunStep, session_extensions
from lightagent.hookspecs import hookimpl
from lightagent.plugins import PluginHost, reset_host


class SeenStep(RunStep):
    def __init__(self, part: SeenPart) -> None:
        self.part = part

    def start(self, spec, st, history, messages, tools):
        self.part.runs.append(len(getattr(history, "events", ())))
        return
        yield


class SeenPart(ExtensionPart):
    def __init__(self) -> None:
        self.runs: list[int] = []

    def run_step(self, spec: Any, options: Any) -> RunStep:
        return SeenStep(self)


class SessionsExtension(AgentExtension):
    name = "seen"
    sessions = True

    def configure(self, agent: Any, values: dict[str, Any]) -> SeenPart:
        return SeenPart()


@pytest.fixture
def seen_host():
    plugin = types.SimpleNamespace(
        register_agent_extensions=hookimpl(lambda register: register("seen", SessionsExtension))
    )
    host = PluginHost(entry_points=False, plugins=[("seen-plugin", plugin)])
    reset_host(host)
    yield host
    reset_host(None)


def test_a_sessions_extension_takes_part_in_every_session_run(seen_host):
    assert session_extensions() == ("seen",)
    agent = LightAgent(model=ScriptedModel(["a", "b"]), session_store=InMemorySessionStore())
    assert agent.run("no session") == "a"
    assert "seen" not in agent._parts  # a run without a session does not configure it
    assert agent.run("in a session", session_id="s1") == "b"
    part = agent.extension_part("seen")
    assert len(part.runs) == 1 and part.runs[0] > 0  # it read the events of the history


def test_a_session_id_without_a_session_store_does_not_configure_it(seen_host):
    agent = LightAgent(model=ScriptedModel(["a"]))
    assert agent.run("no store", session_id="s1") == "a"
    assert "seen" not in agent._parts
