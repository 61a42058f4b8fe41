"""lightagent-mcp: MCP tool servers (stdio, SSE, streamable HTTP) as lightagent tool providers."""

__version__ = "0.1.0"
__all__: list[str] = []
