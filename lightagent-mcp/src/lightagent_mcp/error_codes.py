"""The codes of MCP tool servers (``LA-MCP-…``).

The ``lightagent.error_codes`` entry point of lightagent-mcp points here; each code is
stable and in docs/errors.md.
"""

from __future__ import annotations

from lightagent.error_codes import Row

__all__ = ["CODES"]

# fmt: off
CODES: tuple[Row, ...] = (
    ("LA-MCP-CONFIG", "validation", "The MCP server settings are invalid.", "Fix the mcpServers entry and key named in the message."),
    ("LA-MCP-START", "tool", "The MCP server could not be started.", "Check the server's command, args and cwd; its stderr is in details."),
    ("LA-MCP-EXITED", "tool", "The MCP server process exited.", "See the server's stderr in details; the next call starts it again."),
    ("LA-MCP-TIMEOUT", "tool", "The MCP server did not answer in time.", "Raise init_timeout, timeout (silence allowed; progress notifications restart it) or total_timeout in the server's settings, or make the server faster."),
    ("LA-MCP-UNAVAILABLE", "tool", "The MCP server is not reachable or the connection was lost.", "Check the server's URL and that it runs; calls reconnect up to reconnect_attempts."),
    ("LA-MCP-PROTOCOL", "tool", "The MCP server answered with a protocol error.", "See the server's error in the message; check the tool name and arguments."),
    ("LA-MCP-SAMPLING-REFUSED", "policy", "An MCP server's sampling request was refused.", "Turn sampling on in the server's settings, raise its max_requests / max_total_tokens, give the toolset a model (sampling_model=) or a reviewer when approval is on."),
    ("LA-MCP-ELICITATION-REFUSED", "policy", "An MCP server's elicitation request was refused.", "Pass reviewer= (a human reviewer) to MCPToolset or setup_mcp; only form elicitation is supported."),
    ("LA-MCP-UNAPPROVED", "policy", "The MCP tool's definition changed since it was approved.", "Review the new definition, then call toolset.approve(tool) to enable it again."),
)
# fmt: on
