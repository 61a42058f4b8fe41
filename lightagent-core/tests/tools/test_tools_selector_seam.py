"""The tool-selection seam: the loop asks a registered ``ToolSelector`` which tools to offer,
only when a run holds more tools than the threshold; with none registered every tool is offered
and the selection methods name the extra that brings one."""

from __future__ import annotations

import subprocess
import sys
import types

import pytest
from lightagent import LightAgent, ScriptedModel, tool
from lightagent.errors import MissingExtraError
from lightagent.hookspecs import hookimpl
from lightagent.plugins import PluginHost, reset_host
from lightagent.tools import ToolRegistry


def many(count: int) -> list:
    return [
        tool(name=f"tool_{i}", description=f"Look up item number {i}.")(lambda x="": x)
        for i in range(count)
    ]


class ProbeSelector:
    """Offers the first two tools, and records each question."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def offer(self, registry, query, *, limit, messages):
        self.asked.append(query)
        return registry.names()[:2]

    def select(self, registry, query, *, limit, messages, always):
        return registry.names()[:limit]

    def report(self, registry, kept):
        return {"tools_total": len(registry), "tools_kept": len(list(kept))}


@pytest.fixture
def bare_host():
    """A host with no plugin: what lightagent-core alone sees."""
    host = PluginHost(entry_points=False)
    reset_host(host)
    yield host
    reset_host(None)


@pytest.fixture
def probe():
    selector = ProbeSelector()
    plugin = types.SimpleNamespace(
        register_tool_selectors=hookimpl(lambda register: register("probe", selector))
    )
    reset_host(PluginHost(entry_points=False, plugins=[("probe-selector", plugin)]))
    yield selector
    reset_host(None)


def test_without_a_selector_every_tool_is_offered(bare_host) -> None:
    model = ScriptedModel(["ok"])
    agent = LightAgent(model=model, tools=many(40))  # filter_tools=True, the default
    result = agent.run("look up item 7", result_format="object", trace=True)
    assert len(model.requests[0].tools) == 40
    assert not [e for e in result.trace if e["type"] == "tool_selection"]


def test_the_selector_chooses_above_the_threshold_only(probe) -> None:
    model = ScriptedModel(["ok", "ok"])
    small = LightAgent(model=model, tools=many(16))
    small.run("look up item 7")
    assert probe.asked == [] and len(model.requests[0].tools) == 16  # the fast path
    big = LightAgent(model=model, tools=many(17))
    result = big.run("look up item 7", result_format="object", trace=True)
    assert probe.asked == ["look up item 7"]
    assert [t["function"]["name"] for t in model.requests[1].tools] == ["tool_0", "tool_1"]
    (event,) = [e["data"] for e in result.trace if e["type"] == "tool_selection"]
    assert event == {"kept": ["tool_0", "tool_1"], "tools_total": 17, "tools_kept": 2}


def test_filter_tools_false_never_asks_the_selector(probe) -> None:
    model = ScriptedModel(["ok"])
    LightAgent(model=model, tools=many(40), filter_tools=False).run("look up item 7")
    assert probe.asked == [] and len(model.requests[0].tools) == 40


def test_a_run_at_the_threshold_loads_no_plugin() -> None:
    host = PluginHost(entry_points=False)
    reset_host(host)
    try:
        LightAgent(model=ScriptedModel(["ok"]), tools=many(16)).run("look up item 7")
        assert host._registry is None  # nothing looked a selector up
    finally:
        reset_host(None)


def test_selection_methods_name_the_extra_without_a_selector(bare_host) -> None:
    registry = ToolRegistry(many(3))
    for call in (
        lambda: registry.select("item"),
        lambda: registry.offer("item"),
        lambda: registry.selection_report(["tool_0"]),
    ):
        with pytest.raises(MissingExtraError) as info:
            call()
        assert info.value.code == "LA-MISSING-EXTRA"
        assert "pip install 'lightagent-core[selection]'" in info.value.hint


def test_the_moved_names_name_the_extra_when_the_distribution_is_absent() -> None:
    code = (
        "import sys; sys.modules['lightagent_selection'] = None\n"
        "from lightagent.errors import MissingExtraError\n"
        "try:\n    from lightagent.tools import ToolIndex\n"
        "except MissingExtraError as exc:\n    print(exc.code, exc.hint)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("LA-MISSING-EXTRA pip install 'lightagent-core[selection]'")


def test_layers_show_an_overlay_over_its_base() -> None:
    base = ToolRegistry(many(2))
    run = base.with_tools(many(3)[2:])
    assert base.layers() == [base] and run.layers() == [base, run]
    assert list(run.own_tools()) == ["tool_2"] and list(base.own_tools()) == ["tool_0", "tool_1"]
    version = base.version
    base.unregister_tool("tool_0")
    assert base.version != version


def test_a_selector_registered_after_the_first_lookup_is_used(bare_host) -> None:
    from lightagent.tools.selector import tool_selector

    assert tool_selector() is None  # looked up, and nothing is there
    probe = ProbeSelector()
    bare_host.registry.register("tool_selector", "late", probe, plugin="test")
    assert tool_selector() is probe  # a registration drops what was looked up
    bare_host.registry.unregister("tool_selector", "late")
    assert tool_selector() is None


def test_registry_derived_is_built_once_until_a_registration_changes() -> None:
    from lightagent.registry import Registry

    registry, builds = Registry(), []

    def build(reg: Registry) -> list[str]:
        builds.append(1)
        return reg.names("model")

    assert registry.derived("models", build) == [] and registry.derived("models", build) == []
    assert len(builds) == 1
    registry.register("model", "m", object(), plugin="test")
    assert registry.derived("models", build) == ["m"] and len(builds) == 2
    registry.remove_plugin("test")
    assert registry.derived("models", build) == [] and len(builds) == 3
