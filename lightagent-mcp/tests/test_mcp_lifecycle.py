"""One rule for a server that cannot be opened among several, under ``with``, ``setup_mcp``
and ``run()``: the agent goes on with the others; the failure is logged, kept in
``last_error`` and offers no tools (docs/mcp.md, "A server that fails")."""

from __future__ import annotations

import asyncio
import logging

import pytest
from lightagent import LightAgent, ScriptedModel
from lightagent_mcp import MCPTimeout, MCPToolset
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


def test_a_silent_tool_listing_is_a_typed_timeout_at_the_idle_limit():
    from lightagent.toolsets import ToolsetOwner

    toolset = MCPToolset(stdio("slow_list", timeout=1.0), name="silent")
    owner = ToolsetOwner(toolset)
    owner.open()
    try:
        with pytest.raises(MCPTimeout) as info:
            owner.list()
        assert info.value.details["limit"] == "timeout"
        assert "tools/list" in info.value.message and "1 s" in info.value.message
        with pytest.raises(MCPTimeout) as info:
            asyncio.run(toolset.list_resources())
        assert info.value.details["limit"] == "timeout"
    finally:
        owner.close()


def test_a_listing_is_bounded_by_total_timeout_across_its_pages():
    from lightagent_mcp.connection import ServerLink
    from lightagent_mcp.settings import parse_server

    link = ServerLink(parse_server("s", {"command": "x", "timeout": 5, "total_timeout": 5}))
    limit = link.list_clock("tools/list")
    assert 0 < limit() <= 5
    limit.deadline = 0.0  # as if the pages had used it up
    with pytest.raises(MCPTimeout) as info:
        limit()
    assert info.value.details["limit"] == "total_timeout"
