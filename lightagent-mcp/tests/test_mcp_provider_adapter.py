"""Issue 28, item 7: ``MCPProviderAdapter`` over a real stdio MCP server."""

from __future__ import annotations

import asyncio

from lightagent import CapabilityRegistry, CapabilityRisk
from lightagent_mcp import MCPClientManager, MCPProviderAdapter
from mcp_testkit import stdio


def test_mcp_tools_are_capabilities() -> None:
    async def scenario() -> None:
        async with MCPClientManager({"mcpServers": {"kit": stdio()}}) as manager:
            adapter = MCPProviderAdapter(manager, ["echo"])
            spec = adapter.capabilities["mcp.echo"]
            assert spec.network and spec.cancellable and spec.risk == CapabilityRisk.SENSITIVE
            registry = CapabilityRegistry()
            registry.register(adapter)
            out = await registry.invoke("mcp.echo", {"text": "hi"})
            assert out["server"] == "kit" and out["result"] == "hi"

    asyncio.run(scenario())
