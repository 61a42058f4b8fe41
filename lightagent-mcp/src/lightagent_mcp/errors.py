"""Typed errors of lightagent-mcp: one ``LA-MCP-…`` code per way an MCP server can fail us.

Messages never carry a credential: they are scrubbed of every secret the settings resolved
(and of anything credential-shaped) before the error is raised.
"""

from __future__ import annotations

from lightagent.errors import ConfigurationError, PolicyError, ToolError

__all__ = [
    "MCPConfigError",
    "MCPDefinitionChanged",
    "MCPProtocolError",
    "MCPServerError",
    "MCPServerExited",
    "MCPStartError",
    "MCPTimeout",
    "MCPUnavailable",
]


class MCPConfigError(ConfigurationError):
    """The ``mcpServers`` settings are malformed, hold a literal secret, or name a missing credential."""

    default_code = "LA-MCP-CONFIG"


class MCPServerError(ToolError):
    """Base of the errors an MCP server causes at run time (``details["server"]`` names it)."""

    default_code = "LA-MCP-UNAVAILABLE"


class MCPStartError(MCPServerError):
    """The server could not be started (no such command, bad working directory …)."""

    default_code = "LA-MCP-START"


class MCPServerExited(MCPServerError):
    """The stdio server process exited during initialization or in the middle of a call."""

    default_code = "LA-MCP-EXITED"


class MCPTimeout(MCPServerError):
    """The server did not finish initialization, or a call, within its timeout."""

    default_code = "LA-MCP-TIMEOUT"


class MCPUnavailable(MCPServerError):
    """A remote server is not reachable, or the connection to it was lost."""

    default_code = "LA-MCP-UNAVAILABLE"


class MCPProtocolError(MCPServerError):
    """The server answered with an MCP (JSON-RPC) error: unknown tool, invalid parameters …"""

    default_code = "LA-MCP-PROTOCOL"


class MCPDefinitionChanged(PolicyError):
    """A tool's definition changed after it was approved; it stays disabled until approved again."""

    default_code = "LA-MCP-UNAPPROVED"
