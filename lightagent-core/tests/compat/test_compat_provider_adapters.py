"""Issue 28, item 7: the runtime guide's provider adapters, through a real registry."""

from __future__ import annotations

import asyncio

import pytest
from lightagent import (
    CapabilityRegistry,
    CapabilityRisk,
    InMemoryMemory,
    LightAgent,
    ScriptedModel,
    ToolRegistry,
    tool,
)

skills = pytest.importorskip("lightagent_skills")
memory_dist = pytest.importorskip("lightagent_memory")
flow_dist = pytest.importorskip("lightagent_flow")


def invoke(registry: CapabilityRegistry, capability: str, **arguments):
    return asyncio.run(registry.invoke(capability, arguments))


def test_tool_provider_adapter_calls_the_tools_it_saw() -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    tools = ToolRegistry()
    tools.register_tool(add)
    adapter = skills.ToolProviderAdapter(tools)
    spec = adapter.capabilities["tool.add"]
    assert spec.execute and spec.risk == CapabilityRisk.SENSITIVE
    assert spec.description == "Add two numbers."
    registry = CapabilityRegistry()
    registry.register(adapter)
    assert invoke(registry, "tool.add", a=2, b=3) == "5"
    assert "[LA-" in invoke(registry, "tool.add", a="x", b=3)  # the tool's argument checks


def test_memory_provider_adapter_reads_and_writes_the_backend() -> None:
    backend = InMemoryMemory()
    adapter = memory_dist.MemoryProviderAdapter(backend)
    assert adapter.capabilities["memory.retrieve"].risk == CapabilityRisk.READ_ONLY
    assert adapter.capabilities["memory.store"].risk == CapabilityRisk.ISOLATED_WRITE
    registry = CapabilityRegistry()
    registry.register(adapter)
    invoke(registry, "memory.store", data="the boat is blue", user_id="alice")
    found = invoke(registry, "memory.retrieve", query="boat", user_id="alice")
    assert [m["memory"] for m in found["results"]] == ["the boat is blue"]


def test_skill_provider_adapter(tmp_path) -> None:
    folder = tmp_path / "skills" / "greet"
    (folder / "references").mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: greet\ndescription: Say hello.\n---\nGreet warmly.\n", encoding="utf-8"
    )
    (folder / "references" / "tone.md").write_text("Be kind.", encoding="utf-8")
    adapter = skills.SkillProviderAdapter(skills.SkillManager([str(tmp_path / "skills")]))
    script = adapter.capabilities["skill.execute_script"]
    assert script.requires_sandbox and script.requires_approval
    registry = CapabilityRegistry()
    registry.register(adapter)
    assert [s["name"] for s in invoke(registry, "skill.list")] == ["greet"]
    assert "Greet warmly." in invoke(registry, "skill.activate", name="greet")
    assert invoke(registry, "skill.read_reference", name="greet", reference="tone.md") == "Be kind."


def test_workflow_provider_adapter(tmp_path) -> None:
    flow = flow_dist.LightFlow(store=flow_dist.JsonLightFlowStore(tmp_path / "runs")).step(
        "answer", agent=LightAgent(model=ScriptedModel(["done"]))
    )
    adapter = flow_dist.WorkflowProviderAdapter(flow)
    assert adapter.capabilities["workflow.status"].read
    registry = CapabilityRegistry()
    registry.register(adapter)
    result = invoke(registry, "workflow.start", query="go", run_id="w1")
    assert result.status == "success" and result.content == "done"
    assert invoke(registry, "workflow.status", run_id="w1")["status"] == "success"
