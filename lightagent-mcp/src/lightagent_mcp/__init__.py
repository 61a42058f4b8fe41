"""lightagent-mcp: MCP tool servers (stdio, SSE, streamable HTTP) as lightagent toolsets.

``import lightagent_mcp`` stays cheap: the ``mcp`` SDK is imported when a server is first
connected.
"""

from __future__ import annotations

__version__ = "0.1.0"

from lightagent_mcp.client_features import InputRequest, SamplingSettings
from lightagent_mcp.credentials import Scrubber
from lightagent_mcp.errors import (
    MCPConfigError,
    MCPDefinitionChanged,
    MCPProtocolError,
    MCPServerError,
    MCPServerExited,
    MCPStartError,
    MCPTimeout,
    MCPUnavailable,
)
from lightagent_mcp.manager import MCPClientManager, setup_mcp
from lightagent_mcp.oauth import MemoryTokens
from lightagent_mcp.pins import DefinitionPins
from lightagent_mcp.provider import MCPProviderAdapter
from lightagent_mcp.settings import ServerSettings, load_mcp_settings, parse_server
from lightagent_mcp.toolset import MCPToolset

__all__ = [
    "DefinitionPins",
    "InputRequest",
    "MCPClientManager",
    "MCPConfigError",
    "MCPDefinitionChanged",
    "MCPProtocolError",
    "MCPProviderAdapter",
    "MCPServerError",
    "MCPServerExited",
    "MCPStartError",
    "MCPTimeout",
    "MCPToolset",
    "MCPUnavailable",
    "MemoryTokens",
    "SamplingSettings",
    "Scrubber",
    "ServerSettings",
    "__version__",
    "load_mcp_settings",
    "parse_server",
    "setup_mcp",
]
