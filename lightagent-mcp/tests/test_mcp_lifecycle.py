"""One rule for a server that cannot be opened among several, under ``with``, ``setup_mcp``
and ``run()``: the agent goes on with the others; the failure is logged, kept in
``last_error`` and offers no tools (docs/mcp.md, "A server that fails")."""

from __future__ import annotations

import asyncio
import logging

from lightagent import LightAgent, ScriptedModel
from lightagent_mcp import MCPToolset
from mcp_testkit import stdio


def _script() -> ScriptedModel:
    return ScriptedModel([{"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}]}, "3"])


def _outcome(agent: LightAgent, model: ScriptedModel, broken: MCPToolset) -> list[str]:
    result = agent.run("1+2?", result_format="object", trace=True)
    offered = sorted(t["function"]["name"] for t in model.requests[0].tools)
    assert "add" in offered and not any(n.startswith("broken") for n in offered)
    assert broken.last_error is not None and broken.last_error["code"] == "LA-MCP-EXITED"
    return [e["data"]["output"] for e in result.trace if e["type"] == "tool_result"]


def test_with_agent_goes_on_without_the_broken_server(caplog):
    caplog.set_level(logging.WARNING, "lightagent.mcp")
    broken = MCPToolset(stdio("exit_during_init"), name="broken")
    model = _script()
    with LightAgent(model=model, tools=[broken, MCPToolset(stdio(), name="ok")]) as agent:
        assert _outcome(agent, model, broken) == ["3"]
    said = [r.getMessage() for r in caplog.records if "broken" in r.getMessage()]
    assert said and "goes on without it" in said[0]


def test_run_without_with_goes_on_without_the_broken_server():
    broken = MCPToolset(stdio("exit_during_init"), name="broken")
    model = _script()
    agent = LightAgent(model=model, tools=[broken, MCPToolset(stdio(), name="ok")])
    try:
        assert _outcome(agent, model, broken) == ["3"]
    finally:
        agent.close()


def test_setup_mcp_goes_on_without_the_broken_server_and_names_it():
    model = _script()
    agent = LightAgent(model=model)
    setting = {"mcpServers": {"broken": stdio("exit_during_init"), "ok": stdio()}}
    manager = asyncio.run(agent.setup_mcp(setting))
    try:
        assert [(r["server"], r["code"]) for r in manager.last_mcp_errors] == [
            ("broken", "LA-MCP-EXITED")
        ]
        assert _outcome(agent, model, manager.toolsets["broken"]) == ["3"]
    finally:
        asyncio.run(manager.cleanup())
