"""Issue 18: renamed keywords accept the seeds' (0.11) spelling too."""

from __future__ import annotations

import asyncio
import inspect

import pytest
from lightagent import (
    BaseCapabilityProvider,
    CapabilityRegistry,
    CapabilitySpec,
    ConfigurationError,
    ToolRegistry,
    tool,
)


def test_capability_registry_seeds_keywords() -> None:
    registry = CapabilityRegistry()
    registry.register(
        BaseCapabilityProvider(
            [CapabilitySpec("calc.add")], handlers={"calc.add": lambda a, b: a + b}
        )
    )
    assert registry.resolve(cap="calc.add", ctx=None) is not None
    assert "calc.add" in registry.list(ctx=None)
    assert asyncio.run(registry.invoke(cap="calc.add", args={"a": 1, "b": 2})) == 3
    assert inspect.iscoroutinefunction(registry.invoke)
    assert "capability" in inspect.signature(registry.invoke).parameters
    with pytest.raises(ConfigurationError):
        registry.resolve(cap="calc.add", capability="calc.add")


def test_tool_registry_filter_tools_json_text() -> None:
    @tool
    def ping() -> str:
        """Ping."""
        return "pong"

    registry = ToolRegistry([ping])
    chosen = registry.filter_tools(json_text='{"tools": [{"name": "ping"}]}')
    assert [t["function"]["name"] for t in chosen] == ["ping"]


def test_guardrail_manager_check_tool_seeds_keywords() -> None:
    guardrails = pytest.importorskip("lightagent_guardrails")
    manager = guardrails.GuardrailManager(
        tool_guardrails=[lambda value, ctx: value["tool_name"] != "rm"]
    )
    assert manager.check_tool(name="ls", args={}).allowed
    assert not manager.check_tool(name="rm", args={}).allowed


def test_lightdag_register_worker_seeds_keyword() -> None:
    dag_module = pytest.importorskip("lightagent_dag")
    dag = dag_module.LightDAG()
    dag.register_worker("echo", worker_or_callable=lambda context: "ok")
    assert "echo" in dag.worker_factory.keys()
