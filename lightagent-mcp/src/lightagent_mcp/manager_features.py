"""Resources and prompts across the servers of an ``MCPClientManager`` (the seeds' API).

Each method asks every enabled server (or the one named) through its toolset
(:class:`~lightagent_mcp.resources.ServerFeatures`); a server that fails is left out and
recorded in ``last_mcp_errors``, as the manager does for tools.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from lightagent_mcp.errors import MCPConfigError, MCPProtocolError

__all__ = ["ManagerFeatures"]


class ManagerFeatures:
    """Resources and prompts across the servers of an ``MCPClientManager`` (mixed into it)."""

    toolsets: dict[str, Any]
    last_mcp_errors: list[dict[str, Any]]
    _owner: Callable[[str], Any]
    _receipt: Callable[[str, str, dict[str, Any]], dict[str, Any]]

    def _servers(self, server_name: str | None) -> list[str]:
        if server_name is not None and server_name not in self.toolsets:
            raise MCPConfigError(
                "LA-MCP-CONFIG",
                f"no enabled MCP server named {server_name!r}",
                details={"server": server_name},
            )
        return [server_name] if server_name else list(self.toolsets)

    async def _each(
        self, server_name: str | None, phase: str, ask: Callable[[Any], Awaitable[Any]]
    ) -> dict[str, Any]:
        from lightagent import LightAgentError

        self.last_mcp_errors.clear()
        out: dict[str, Any] = {}
        for server in self._servers(server_name):
            try:
                await self._owner(server).aopen()
                out[server] = await ask(self.toolsets[server])
            except LightAgentError as exc:
                self.last_mcp_errors.append(self._receipt(server, phase, exc.to_dict()))
        return out

    async def list_resources(self, server_name: str | None = None) -> dict[str, list[Any]]:
        """``{server: resources}`` (a server that fails is left out, in ``last_mcp_errors``)."""
        return await self._each(server_name, "list_resources", lambda t: t.list_resources())

    async def list_resource_templates(self, server_name: str | None = None) -> dict[str, list[Any]]:
        """``{server: resource templates}``."""
        return await self._each(
            server_name, "list_resource_templates", lambda t: t.list_resource_templates()
        )

    async def list_prompts(self, server_name: str | None = None) -> dict[str, list[Any]]:
        """``{server: prompts}``."""
        return await self._each(server_name, "list_prompts", lambda t: t.list_prompts())

    async def read_resource(self, uri: str, server_name: str | None = None) -> dict[str, Any]:
        """``{"server", "uri", "contents"}`` from the first server that can read ``uri``."""
        found = await self._first(
            server_name, f"read_resource:{uri}", lambda t: t.read_resource(uri)
        )
        server, contents = found
        return {"server": server, "uri": uri, "contents": contents}

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None = None, server_name: str | None = None
    ) -> dict[str, Any]:
        """``{"server", "prompt", "description", "messages"}`` from the first server that has it."""
        server, prompt = await self._first(
            server_name, f"get_prompt:{name}", lambda t: t.get_prompt(name, arguments)
        )
        return {"server": server, "prompt": name, **prompt}

    async def _first(
        self, server_name: str | None, phase: str, ask: Callable[[Any], Awaitable[Any]]
    ) -> tuple[str, Any]:
        from lightagent import LightAgentError

        self.last_mcp_errors.clear()
        for server in self._servers(server_name):
            try:
                await self._owner(server).aopen()
                return server, await ask(self.toolsets[server])
            except LightAgentError as exc:
                self.last_mcp_errors.append(self._receipt(server, phase, exc.to_dict()))
        details = "; ".join(f"{r['server']}: {r['message']}" for r in self.last_mcp_errors[:3])
        raise MCPProtocolError(
            "LA-MCP-PROTOCOL",
            f"no MCP server answered {phase}" + (f" ({details})" if details else ""),
            details={"errors": list(self.last_mcp_errors)},
        )
