"""``agent.setup_mcp(...)``: the MCP capability's part of ``LightAgent``.

Registered by this distribution's plugin as the agent extension ``mcp``; the kernel
serves ``agent.setup_mcp`` through it (and names the ``pip install`` line when this
distribution is not installed). Nothing here imports the ``mcp`` SDK until a server is
connected.
"""

from __future__ import annotations

from typing import Any

from lightagent.extensions import AgentExtension, ExtensionPart

__all__ = ["MCPExtension", "MCPPart"]


class MCPPart(ExtensionPart):
    """The MCP part of one agent: connects ``mcpServers`` documents as its toolsets."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent

    async def setup_mcp(
        self, mcp_setting: Any = None, *, credential_provider: Any = None, reviewer: Any = None
    ) -> Any:
        """Connect the MCP servers of an ``mcpServers`` document (a dict, JSON string or path)
        as toolsets of this agent; returns the ``MCPClientManager``. ``reviewer`` answers the
        servers' elicitation requests (where their settings turn elicitation on)."""
        from lightagent.extras import missing_extra

        try:
            from lightagent_mcp.manager import setup_mcp
        except ModuleNotFoundError as exc:
            if exc.name != "mcp":  # this package is there, but not the MCP SDK it needs
                raise
            raise missing_extra("agent.setup_mcp", "lightagent-mcp", "mcp") from None
        return await setup_mcp(
            self.agent, mcp_setting, credential_provider=credential_provider, reviewer=reviewer
        )


class MCPExtension(AgentExtension):
    """Provides ``agent.setup_mcp``; claims no keyword and no run option."""

    name = "mcp"
    attributes = ("setup_mcp",)

    def configure(self, agent: Any, values: dict[str, Any]) -> MCPPart:
        """The agent's MCP part (there is nothing to configure)."""
        return MCPPart(agent)
