"""``MCPProviderAdapter``: MCP tools as capabilities (the runtime guide's adapter)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lightagent_control.capabilities import BaseCapabilityProvider, CapabilityRisk, CapabilitySpec

__all__ = ["MCPProviderAdapter"]


class MCPProviderAdapter(BaseCapabilityProvider):
    """``mcp.<tool>`` for each of ``tool_names`` (L2: network, executes, cancellable);
    invoking one calls ``manager.call_tool`` (an ``MCPClientManager``) and returns its
    ``{"server", "tool", "result"}``."""

    name = "mcp"
    version = "1"

    def __init__(self, manager: Any, tool_names: Iterable[str] | None = None) -> None:
        self.manager = manager
        names = list(tool_names or ())

        def handler(tool: str) -> Any:
            async def call(**arguments: Any) -> Any:
                return await manager.call_tool(tool, arguments)

            return call

        super().__init__(
            [
                CapabilitySpec(
                    f"mcp.{name}",
                    network=True,
                    execute=True,
                    cancellable=True,
                    risk=CapabilityRisk.SENSITIVE,
                )
                for name in names
            ],
            handlers={f"mcp.{n}": handler(n) for n in names},
        )
