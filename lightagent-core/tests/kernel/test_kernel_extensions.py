"""The kernel hook through which a capability reaches ``LightAgent`` (lightagent.extensions)."""

from __future__ import annotations

import asyncio
import types
from typing import Any

import pytest
from lightagent import LightAgent, ScriptedModel, tool, vocabulary
from lightagent.errors import ConfigurationError, LightAgentError, MissingExtraError
from lightagent.extensions import AgentExtension, ExtensionPart, RunStep
from lightagent.hookspecs import hookimpl
from lightagent.models.base import ModelResponse, ToolCall
from lightagent.plugins import PluginHost, reset_host


class ProbeStep(RunStep):
    def __init__(self, part: ProbePart) -> None:
        self.part = part
        self.seen: list[str] = []
        part.steps.append(self)

    def start(self, spec, st, history, messages, tools):
        self.seen.append("start")
        messages.insert(1, {"role": "system", "content": f"level {self.part.level}"})
        return
        yield

    def before_request(self, spec, st, messages, tools):
        self.seen.append("before_request")
        return
        yield

    def request(self, spec, st, request):
        self.seen.append("request")

    def response(self, spec, st, request, response):
        self.seen.append("response")

    def before_tools(self, spec, st, calls):
        self.seen.append("before_tools")

    def after_tools(self, spec, st, calls, messages):
        self.seen.append("after_tools")

    def finish(self, spec, st, content):
        self.seen.append("finish")
        return
        yield

    def end(self, spec, st, end):
        self.seen.append("end")
        end["probe"] = len(self.seen)


class ProbePart(ExtensionPart):
    def __init__(self, agent: Any, level: int) -> None:
        self.agent = agent
        self.level = level
        self.steps: list[ProbeStep] = []

    def system_prompt(self, prompt, options):
        return f"{prompt} (probed)"

    def run_step(self, spec, options):
        return ProbeStep(self)

    def probe_hello(self) -> str:
        return f"hello from {self.agent.name}"


class ProbeExtension(AgentExtension):
    name = "probe"
    keywords = {"probe_level": 0}
    run_options = {"probe_elsewhere": None}
    attributes = ("probe_hello", "probe_level")

    def configure(self, agent, values):
        level = values.get("probe_level", 0)
        if not isinstance(level, int):
            raise ConfigurationError("LA-CONFIG", "probe_level= must be an int")
        return ProbePart(agent, level)

    def attribute(self, agent, part, name):
        return part.level if name == "probe_level" else getattr(part, name)

    def delegate(self, agent, query, options, mode):
        target = options.extensions.get("probe_elsewhere")
        if target is None:
            return NotImplemented
        if mode == "arun":

            async def later() -> str:
                return f"{target} ran {query}"

            return later()
        return f"{target} ran {query}"


@pytest.fixture
def probe_host():
    plugin = types.SimpleNamespace(
        register_agent_extensions=hookimpl(lambda register: register("probe", ProbeExtension))
    )
    host = PluginHost(entry_points=False, plugins=[("probe-plugin", plugin)])
    reset_host(host)
    yield host
    reset_host(None)


@tool
def echo(text: str) -> str:
    """Echo the text."""
    return text


def _tool_then_answer() -> ScriptedModel:
    return ScriptedModel(
        [
            ModelResponse(tool_calls=[ToolCall(id="c1", name="echo", arguments={"text": "x"})]),
            "done",
        ]
    )


def test_a_claimed_keyword_configures_the_part_and_each_run_gets_its_own_step(probe_host):
    agent = LightAgent(model=_tool_then_answer(), tools=[echo], probe_level=3)
    result = agent.run("go", result_format="object", trace=True)
    assert result.content == "done"
    part = agent.extension_part("probe")
    (step,) = part.steps
    assert step.seen == [
        "start",
        "before_request",
        "request",
        "response",
        "before_tools",
        "after_tools",
        "before_request",
        "request",
        "response",
        "finish",
        "end",
    ]
    first = result.trace[[e["type"] for e in result.trace].index("model_request")]
    sent = first["data"]["request"]["messages"]
    assert sent[0]["content"].endswith("(probed)")
    assert sent[1] == {"role": "system", "content": "level 3"}
    run_end = next(e for e in result.trace if e["type"] == "run_end")
    assert run_end["data"]["probe"] == 11


def test_a_failed_run_still_ends_its_steps(probe_host):
    model = ScriptedModel([ModelResponse(content="cut", finish_reason="length")])
    agent = LightAgent(model=model, probe_level=1)
    result = agent.run("go", result_format="object")
    assert result.error["code"] == "LA-TRUNCATED"
    assert agent.extension_part("probe").steps[0].seen[-1] == "end"
    assert "finish" not in agent.extension_part("probe").steps[0].seen


def test_a_bad_value_fails_the_construction(probe_host):
    with pytest.raises(ConfigurationError, match="probe_level"):
        LightAgent(model=ScriptedModel(["x"]), probe_level="high")


def test_an_attribute_configures_the_part_on_first_use(probe_host):
    agent = LightAgent(name="a1", model=ScriptedModel(["x"]))
    assert agent.probe_hello() == "hello from a1"
    assert agent.probe_level == 0
    with pytest.raises(AttributeError, match="no_such_thing"):
        agent.no_such_thing  # noqa: B018


def test_concurrent_runs_of_one_agent_keep_their_own_steps(probe_host):
    agent = LightAgent(model=ScriptedModel(lambda request: "ok"), probe_level=2)

    async def both() -> list[Any]:
        return await asyncio.gather(agent.arun("a"), agent.arun("b"))

    assert asyncio.run(both()) == ["ok", "ok"]
    steps = agent.extension_part("probe").steps
    assert len(steps) == 2 and steps[0] is not steps[1]
    assert all(s.seen[0] == "start" and s.seen[-1] == "end" for s in steps)


def test_a_claimed_run_option_can_take_the_run_elsewhere(probe_host):
    agent = LightAgent(model=ScriptedModel(["own loop"]))
    assert agent.run("q", probe_elsewhere="the other") == "the other ran q"
    assert asyncio.run(agent.arun("q", probe_elsewhere="async")) == "async ran q"
    assert agent.run("q") == "own loop"


def test_an_unknown_keyword_is_still_a_typed_error(probe_host):
    with pytest.raises(ConfigurationError) as info:
        LightAgent(model=ScriptedModel(["x"]), probe_levl=1)
    assert info.value.code == "LA-CONFIG"
    assert info.value.details["did_you_mean"] == {"probe_levl": "probe_level"}
    with pytest.raises(ConfigurationError) as info:
        LightAgent(model=ScriptedModel(["x"])).run("q", probe_elsewher=1)
    assert info.value.details["did_you_mean"] == {"probe_elsewher": "probe_elsewhere"}


def test_a_typo_of_a_seeds_keyword_suggests_it_without_its_distribution(monkeypatch):
    host = PluginHost(entry_points=False)  # nothing installed claims it
    reset_host(host)
    monkeypatch.setitem(vocabulary.KEYWORDS, "seeds_feature", ("thought", False))
    monkeypatch.setitem(vocabulary.RUN_OPTIONS, "seeds_option", ("swarm", None))
    try:
        with pytest.raises(ConfigurationError) as info:
            LightAgent(model=ScriptedModel(["x"]), seeds_featur=True)
        assert info.value.details["did_you_mean"] == {"seeds_featur": "seeds_feature"}
        with pytest.raises(ConfigurationError) as info:
            LightAgent(model=ScriptedModel(["x"])).run("q", seeds_optio=1)
        assert info.value.details["did_you_mean"] == {"seeds_optio": "seeds_option"}
    finally:
        reset_host(None)


def test_a_seeds_name_without_its_distribution_names_the_install_line(probe_host, monkeypatch):
    monkeypatch.setitem(vocabulary.KEYWORDS, "seeds_feature", ("thought", False))
    monkeypatch.setitem(vocabulary.RUN_OPTIONS, "seeds_option", ("swarm", None))
    monkeypatch.setitem(vocabulary.ATTRIBUTES, "seeds_method", "runtime")
    # left at the value that means "not used", seeds code runs without the distribution
    agent = LightAgent(model=ScriptedModel(["x", "y"]), seeds_feature=False)
    assert agent.run("q", seeds_option=None) == "x"
    with pytest.raises(MissingExtraError) as info:
        LightAgent(model=ScriptedModel(["x"]), seeds_feature=True)
    assert info.value.code == "LA-MISSING-EXTRA"
    assert info.value.details["install"] == "pip install 'lightagent-core[thought]'"
    with pytest.raises(MissingExtraError, match="lightagent-swarm"):
        agent.run("q", seeds_option="on")
    with pytest.raises(MissingExtraError, match=r"agent\.seeds_method"):
        agent.seeds_method()


def test_construction_and_private_names_do_not_load_plugins():
    host = PluginHost(entry_points=False)
    reset_host(host)
    try:
        agent = LightAgent(model=ScriptedModel(["x"]), tools=[echo])
        with pytest.raises(AttributeError):
            agent._not_there  # noqa: B018
        assert agent.run("q") == "x"
        assert not host._loaded
    finally:
        reset_host(None)


def test_an_unknown_extension_part_is_a_typed_error(probe_host):
    with pytest.raises(ConfigurationError, match="nope"):
        LightAgent(model=ScriptedModel(["x"])).extension_part("nope")


def test_a_keyword_two_extensions_claim_is_a_plugin_error_naming_both():
    class Other(ProbeExtension):
        name = "other"

    plugin = types.SimpleNamespace(
        register_agent_extensions=hookimpl(
            lambda register: (register("probe", ProbeExtension), register("other", Other))
        )
    )
    reset_host(PluginHost(entry_points=False, plugins=[("two", plugin)]))
    try:
        agent = LightAgent(model=ScriptedModel(["x"]))  # nothing claimed: no conflict
        assert agent.run("q") == "x"
        with pytest.raises(LightAgentError) as info:
            LightAgent(model=ScriptedModel(["x"]), probe_level=1)
        assert info.value.code == "LA-PLUGIN"
        assert info.value.details["extensions"] == ["other", "probe"]
    finally:
        reset_host(None)
