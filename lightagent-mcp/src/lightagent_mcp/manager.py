"""The seeds' entry points: ``MCPClientManager`` and ``LightAgent.setup_mcp``.

Unlike the original, the manager keeps one long-lived session per server (never a process
per call), keeps schemas whole, never prints, and closes every session on ``cleanup()``.
Its servers are :class:`~lightagent_mcp.MCPToolset` objects, each run by a kernel
``ToolsetOwner``, so the manager works from any event loop and from sync code.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from lightagent import LightAgentError, Tool
from lightagent.errors import ToolError
from lightagent.toolsets import ToolsetOwner

from lightagent_mcp.errors import MCPConfigError
from lightagent_mcp.manager_features import ManagerFeatures
from lightagent_mcp.pins import DefinitionPins
from lightagent_mcp.toolset import MCPToolset

__all__ = ["MCPClientManager", "setup_mcp"]

_log = logging.getLogger("lightagent.mcp")


def _receipt(server: str, phase: str, error: BaseException | dict[str, Any]) -> dict[str, Any]:
    if isinstance(error, dict):
        return {
            "server": server,
            "phase": phase,
            "error_type": error.get("type", "LightAgentError"),
            "code": error.get("code"),
            "message": error.get("message", ""),
        }
    return {
        "server": server,
        "phase": phase,
        "error_type": type(error).__name__,
        "code": getattr(error, "code", None),
        "message": getattr(error, "message", None) or str(error),
    }


class MCPClientManager(ManagerFeatures):
    """The seeds' MCP manager over an ``mcpServers`` document (dict, JSON string or path).

    ``register_mcp_tool()`` connects every enabled server and, when a ``tool_registry`` was
    given, registers its tools there (``<namespace>__<tool>`` on a collision or with
    ``namespace_tools``). ``last_mcp_errors`` holds redacted receipts of the last failures.
    ``list_resources``, ``read_resource``, ``list_prompts``, ``get_prompt`` … reach the
    servers' resources and prompts. ``sampling_model`` and ``reviewer`` answer the servers'
    sampling and elicitation requests where their settings turn them on.
    """

    _receipt = staticmethod(_receipt)  # for the resource and prompt methods (ManagerFeatures)

    def __init__(
        self,
        config: Any,
        tool_registry: Any = None,
        credential_provider: Any = None,
        *,
        pins: DefinitionPins | None = None,
        sampling_model: Any = None,
        reviewer: Any = None,
    ) -> None:
        self.config = config
        self.tool_registry = tool_registry
        self.credential_provider = credential_provider
        self.pins = pins if pins is not None else DefinitionPins()
        self.toolsets: dict[str, MCPToolset] = {
            ts.name: ts
            for ts in MCPToolset.from_settings(
                config,
                credential_provider=credential_provider,
                pins=self.pins,
                sampling_model=sampling_model,
                reviewer=reviewer,
            )
        }
        self._owners: dict[str, ToolsetOwner] = {}
        self._registered: dict[str, dict[str, str]] = {}
        self.last_mcp_errors: list[dict[str, Any]] = []

    def _owner(self, server: str) -> ToolsetOwner:
        owner = self._owners.get(server)
        if owner is None:
            owner = self._owners[server] = ToolsetOwner(self.toolsets[server])
        return owner

    async def _list(self, server: str) -> list[Any] | None:
        try:
            listed = await self._owner(server).alist()
        except LightAgentError as exc:
            self.last_mcp_errors.append(_receipt(server, "register_server", exc.to_dict()))
            return None
        return list(listed)

    async def register_mcp_tool(self) -> bool:
        """Connect every enabled server (concurrently) and register its tools; True if any was."""
        self.last_mcp_errors.clear()
        names = list(self.toolsets)
        listings = await asyncio.gather(*(self._list(n) for n in names))
        count = 0
        for server, listed in zip(names, listings, strict=True):
            if listed is None:
                continue
            count += len(listed)
            if self.tool_registry is not None:
                self._register(server, listed)
        return count > 0

    def _public_name(self, server: str, tool: str) -> str:
        from lightagent.toolsets.router import qualified_name

        toolset = self.toolsets[server]
        registry = self.tool_registry
        owned_elsewhere = any(
            tool in names and other != server for other, names in self._registered.items()
        )
        taken = (
            registry is not None
            and registry.get(tool) is not None
            and (tool not in self._registered.get(server, {}))
        )
        if toolset.namespace_tools or owned_elsewhere or taken:
            return qualified_name(toolset.namespace or server, tool)
        return tool

    def _register(self, server: str, definitions: list[Any]) -> None:
        from lightagent.tools.diagnostics import fit_tool_name

        self._unregister(server)
        mapping: dict[str, str] = {}
        for definition in definitions:
            # the kernel's rule for toolset tools: fitted to a valid name, or left out
            fitted, why = fit_tool_name(definition.name)
            code = "LA-TOOL-DEFINITION"
            public = self._public_name(server, fitted) if fitted is not None else None
            if public is not None and self.tool_registry.get(public) is not None:
                public, why, code = None, f"the name {public!r} is taken", "LA-TOOLSET-CONFLICT"
            if why is not None:
                self._skipped(server, definition.name, public, code, why)
            if public is not None:
                self.tool_registry.register_tool(self._proxy(server, definition, public))
                mapping[definition.name] = public
        self._registered[server] = mapping

    def _skipped(self, server: str, tool: str, public: str | None, code: str, why: str) -> None:
        what = f"registered as {public!r}" if public else "left out"
        shown = ascii(tool)[1:-1][:200]
        message = f"tool {shown!r} {what}: {why}"
        _log.warning("MCP server %s: %s", server, message)
        self.last_mcp_errors.append(
            _receipt(
                server, "register_tool", {"type": "ToolError", "code": code, "message": message}
            )
        )

    def _unregister(self, server: str) -> None:
        for public in self._registered.pop(server, {}).values():
            if self.tool_registry is not None:
                self.tool_registry.unregister_tool(public)

    def _proxy(self, server: str, definition: Any, public: str) -> Tool:
        owner, original = self._owner(server), definition.name

        async def call_mcp(**arguments: Any) -> Any:
            from lightagent import ToolCallContext

            result = await owner.acall(original, arguments, ToolCallContext())
            if result.is_error:
                raise ToolError("LA-TOOL", str(result.content), details={"tool": original})
            return result.content

        return Tool(
            name=public,
            description=definition.description,
            parameters=definition.parameters,
            func=call_mcp,
            title=definition.title,
            timeout=self.toolsets[server]._call_limit,  # the server's limits, not the agent's
            source="schema",
            metadata={
                "toolset": server,
                "original_name": original,
                "untrusted_output": True,
                "definition_hash": definition.definition_hash,
            },
        )

    async def refresh_tools(self, server_name: str | None = None) -> bool:
        """List the servers' tools again, replacing (never duplicating) their registrations."""
        names = [server_name] if server_name else list(self.toolsets)
        unknown = [n for n in names if n not in self.toolsets]
        if unknown:
            raise MCPConfigError(
                "LA-MCP-CONFIG",
                f"no enabled MCP server named {unknown[0]!r}",
                details={"server": unknown[0]},
            )
        self.last_mcp_errors.clear()
        count = 0
        for name in names:
            self.toolsets[name]._server_changed("refresh")
            listed = await self._list(name)
            if listed is None:
                continue
            count += len(listed)
            if self.tool_registry is not None:
                self._register(name, listed)
        return count > 0

    async def call_tool(
        self, tool_name: str, arguments: dict[str, Any], target_server: str | None = None
    ) -> dict[str, Any]:
        """Call a tool by its MCP name; ``{"server", "tool", "result"}`` as in the seeds.

        ``result`` is the text content; ``structured`` is added when the server sent some.
        """
        self.last_mcp_errors.clear()
        servers = [target_server] if target_server else list(self.toolsets)
        for server in servers:
            if server not in self.toolsets:
                continue
            listed = await self._list(server)
            if listed is None or not any(d.name == tool_name for d in listed):
                continue
            try:
                result = await self._owner(server).acall(tool_name, dict(arguments or {}), None)
            except LightAgentError as exc:
                self.last_mcp_errors.append(
                    _receipt(server, f"call_tool:{tool_name}", exc.to_dict())
                )
                raise
            out = {"server": server, "tool": tool_name, "result": result.content}
            if result.structured is not None:
                out["structured"] = result.structured
            if result.is_error:
                out["is_error"] = True
            return out
        details = "; ".join(f"{r['server']}: {r['message']}" for r in self.last_mcp_errors[:3])
        raise ToolError(
            "LA-TOOL-NOT-FOUND",
            f"no MCP server offers a tool {tool_name!r}" + (f" ({details})" if details else ""),
            details={"tool": tool_name, "errors": list(self.last_mcp_errors)},
        )

    async def cleanup(self) -> None:
        """Close every session this manager opened."""
        from lightagent.bridge import on_background_loop

        for owner in list(self._owners.values()):
            await owner.aclose()
        for toolset in self.toolsets.values():
            # also the sessions an agent's owners opened (setup_mcp): the seeds' cleanup closes all
            await on_background_loop(toolset.link.close())
        for server in list(self._registered):
            self._unregister(server)

    async def __aenter__(self) -> MCPClientManager:
        await self.register_mcp_tool()
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.cleanup()


async def setup_mcp(
    agent: Any,
    mcp_setting: Any = None,
    *,
    credential_provider: Any = None,
    reviewer: Any = None,
) -> MCPClientManager:
    """Connect the servers of ``mcp_setting`` and add them to ``agent`` as toolsets.

    Every enabled server is opened now (concurrently); one that fails is recorded in the
    manager's ``last_mcp_errors`` and logged, and the others stay usable. The manager is
    also set as ``agent.mcp_client``. A server with sampling on is answered by the agent's
    own model; ``reviewer`` answers elicitation (and sampling approval) requests.
    """
    setting = mcp_setting if mcp_setting is not None else getattr(agent, "mcp_setting", None)
    if setting is None:
        raise MCPConfigError(
            "LA-MCP-CONFIG",
            "setup_mcp needs mcp_setting: a dict, a JSON string or the path of a JSON file",
            hint='Pass {"mcpServers": {"name": {"command": ..., "args": [...]}}}.',
        )
    manager = MCPClientManager(
        setting, None, credential_provider, sampling_model=agent, reviewer=reviewer
    )
    for toolset in manager.toolsets.values():
        agent.add_toolset(toolset)
    try:
        await agent.aopen()
    except LightAgentError:
        pass  # each failure is on its toolset; collected below
    for name, toolset in manager.toolsets.items():
        if toolset.last_error is not None:
            # (the toolset logged it: one line per failure)
            manager.last_mcp_errors.append(_receipt(name, "register_server", toolset.last_error))
    agent.mcp_setting = setting
    agent.mcp_client = manager
    return manager
