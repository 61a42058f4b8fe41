"""The lightagent plugin of lightagent-mcp: the ``mcp`` toolset factory, the ``mcp`` agent
extension (``agent.setup_mcp``) and the manifest.

Registered lazily (a ``"module:attribute"`` string), so loading the plugin imports neither
this package's modules nor the ``mcp`` SDK.
"""

from __future__ import annotations

from typing import Any

from lightagent.hookspecs import Register, hookimpl

__all__ = ["lightagent_manifest", "register_agent_extensions", "register_toolsets"]


@hookimpl
def register_toolsets(register: Register) -> None:
    """``tools=[("mcp", {"name": "time", "command": "mcp-server-time"})]``: one MCP server."""
    register("mcp", "lightagent_mcp.plugin:mcp_toolset")


@hookimpl
def register_agent_extensions(register: Register) -> None:
    """``agent.setup_mcp(mcp_setting)``: connect an ``mcpServers`` document as toolsets."""
    register("mcp", "lightagent_mcp.extension:MCPExtension")


def mcp_toolset(name: str = "mcp", **settings: Any) -> Any:
    """The factory behind the ``mcp`` toolset name: one server's settings as keywords."""
    from lightagent_mcp import MCPToolset

    credential_provider = settings.pop("credential_provider", None)
    return MCPToolset(settings, name=name, credential_provider=credential_provider)


@hookimpl
def lightagent_manifest() -> dict[str, Any]:
    """What ``lightagent plugins`` shows for this distribution."""
    from lightagent_mcp import __version__

    return {
        "name": "lightagent-mcp",
        "version": __version__,
        "description": "MCP tool servers (stdio, SSE, streamable HTTP) as lightagent toolsets.",
        "providers": {"toolset": ("mcp",)},
        "docs": "docs/mcp.md",
    }
