"""``MCPToolset``: one MCP server as a kernel ``Toolset``.

The toolset is loop-bound: the kernel enters it in one owner task of its background loop,
so its session works from sync code, from any event loop and any thread, and closes in the
task that opened it. Its tools keep their JSON schemas whole; their output is marked
untrusted (``ToolDefinition.untrusted_output``) so tool-output screens apply; each
definition is pinned by hash (see :mod:`lightagent_mcp.pins`).
"""

from __future__ import annotations

import fnmatch
import logging
from collections.abc import Mapping
from typing import Any

from lightagent import BaseToolset, ToolCallContext, ToolDefinition, ToolResult
from lightagent.errors import LightAgentError, ToolError

from lightagent_mcp import _sdk
from lightagent_mcp.client_features import ServerRequests
from lightagent_mcp.connection import ServerLink
from lightagent_mcp.content import convert_result
from lightagent_mcp.credentials import Scrubber
from lightagent_mcp.errors import MCPConfigError, MCPDefinitionChanged
from lightagent_mcp.pins import DefinitionPins
from lightagent_mcp.progress import EVENTS_KEPT, MESSAGE_KEPT, Report
from lightagent_mcp.resources import ServerFeatures, task_only
from lightagent_mcp.settings import ServerSettings, load_mcp_settings, parse_server

__all__ = ["MCPToolset"]

_log = logging.getLogger("lightagent.mcp")


class MCPToolset(ServerFeatures, BaseToolset):
    """The tools of one MCP server (stdio, SSE or streamable HTTP), and its resources and prompts.

    ``MCPToolset({"command": "uvx", "args": ["mcp-server-time"]}, name="time")`` or
    ``MCPToolset(ServerSettings(...))``; :meth:`from_settings` builds one per server of an
    ``mcpServers`` document. ``credential_provider`` supplies headers for remote servers;
    ``pins`` shares (or persists) approved definition hashes. ``sampling_model`` (a model,
    a model name or an agent, whose own model is used) answers the server's sampling
    requests and ``reviewer`` (a reviewer callable, or an approval hook holding one) its
    elicitation requests, when its settings turn them on (:mod:`lightagent_mcp.client_features`).
    ``oauth_authorize(url)`` sends the user to an OAuth authorization URL and returns the URL
    they came back to (servers with ``"oauth"`` on; :mod:`lightagent_mcp.oauth`).
    """

    loop_bound = True

    def __init__(
        self,
        server: ServerSettings | Mapping[str, Any],
        *,
        name: str | None = None,
        credential_provider: Any = None,
        pins: DefinitionPins | None = None,
        sampling_model: Any = None,
        reviewer: Any = None,
        oauth_authorize: Any = None,
    ) -> None:
        if isinstance(server, ServerSettings):
            settings = server
        elif isinstance(server, Mapping):
            if "mcpServers" in server:
                raise MCPConfigError(
                    "LA-MCP-CONFIG",
                    "MCPToolset takes one server's settings; use MCPToolset.from_settings(document) "
                    "for a whole mcpServers document",
                )
            settings = parse_server(name or "mcp", server)
        else:
            raise MCPConfigError(
                "LA-MCP-CONFIG",
                f"MCPToolset needs one server's settings (a dict), got {type(server).__name__}",
            )
        super().__init__(
            namespace=settings.namespace or settings.name, namespace_tools=settings.namespace_tools
        )
        self.settings = settings
        self.pins = pins if pins is not None else DefinitionPins()
        self.scrubber = Scrubber()
        self.link = ServerLink(
            settings,
            credential_provider=credential_provider,
            scrubber=self.scrubber,
            on_change=self._server_changed,
        )
        self._emits: list[Any] = []
        #: Answers the server's sampling, elicitation and roots requests (as its settings allow).
        self.requests = ServerRequests(
            settings,
            model=sampling_model,
            reviewer=reviewer,
            record=self.link._event,
            emit=self._emit,
            hold=self.link.hold,
        )
        self.link.callbacks = self.requests.callbacks()
        if settings.oauth is not None:
            self.link.auth = self._oauth(credential_provider, oauth_authorize)
        self._definitions: dict[str, ToolDefinition] | None = None
        self._users = 0
        #: Tools whose definition is not approved: name -> {"approved", "current", "definition"}.
        self.pending: dict[str, dict[str, Any]] = {}

    def _oauth(self, provider: Any, authorize: Any) -> Any:
        from lightagent_mcp.oauth import oauth_auth, token_storage

        storage, oauth = token_storage(provider), self.settings.oauth
        assert oauth is not None

        def auth(url: str) -> Any:
            return oauth_auth(self.settings.name, url, oauth, storage, authorize, self.scrubber)

        return auth

    @classmethod
    def from_settings(
        cls,
        source: Any,
        *,
        credential_provider: Any = None,
        pins: DefinitionPins | None = None,
        sampling_model: Any = None,
        reviewer: Any = None,
    ) -> list[MCPToolset]:
        """One toolset per enabled server of an ``mcpServers`` document (dict, JSON or path)."""
        shared = pins if pins is not None else DefinitionPins()
        return [
            cls(
                settings,
                credential_provider=credential_provider,
                pins=shared,
                sampling_model=sampling_model,
                reviewer=reviewer,
            )
            for settings in load_mcp_settings(source).values()
            if not settings.disabled
        ]

    @property
    def name(self) -> str:
        """The server's name in the settings."""
        return self.settings.name

    def __repr__(self) -> str:
        return f"MCPToolset({self.settings.name!r}, transport={self.settings.transport!r})"

    # -- lifecycle (called in the owner task) ---------------------------------------------
    async def __aenter__(self) -> MCPToolset:
        # Several owners (two agents, an agent and a manager) may share one toolset: the
        # session closes when the last of them leaves.
        #
        # The rule for a server that cannot be opened, the same under ``with agent``,
        # ``agent.open()``, ``setup_mcp`` and ``run()``: it never stops the agent. It is
        # logged once, kept in ``last_error`` (and the manager's ``last_mcp_errors``), offers
        # no tools, and is tried again each time the agent lists its tools.
        self._users += 1
        try:
            await self.link.client()
        except LightAgentError as exc:
            self.link._event("open_failed", code=exc.code, error=exc.message)
            _log.warning(
                "MCP server %s could not be opened (%s): %s; the agent goes on without it",
                self.settings.name,
                exc.code,
                exc.message,
            )
        except BaseException:
            self._users -= 1
            raise
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        self._users = max(0, self._users - 1)
        if self._users == 0:
            await self.link.close()

    @property
    def _call_limit(self) -> float:
        # a little past total_timeout, so the typed LA-MCP-TIMEOUT is what a run sees
        s = self.settings
        return max(s.total_timeout, s.timeout) + s.kill_timeout + 1.0

    def _server_changed(self, why: str) -> None:
        self._definitions = None
        self.notify_changed()
        if why == "reconnect":
            self._resubscribe()

    # -- tools -------------------------------------------------------------------------------
    def _selected(self, tool: str) -> bool:
        s = self.settings
        if s.include and not any(fnmatch.fnmatchcase(tool, p) for p in s.include):
            return False
        return not any(fnmatch.fnmatchcase(tool, p) for p in s.exclude)

    async def list_tools(self) -> list[ToolDefinition]:
        """The server's tools that pass ``include``/``exclude`` and whose definitions are approved."""
        if self._definitions is not None:
            return list(self._definitions.values())
        listed = await self.link.list_tools()
        server, approved, pending = self.settings.name, {}, {}
        for tool in listed:
            parts = _sdk.tool_parts(tool)
            if not self._selected(parts["name"]):
                continue
            if task_only(tool):
                self._withhold(parts["name"])
                continue
            definition = ToolDefinition(
                name=parts["name"],
                description=parts["description"],
                parameters=parts["input_schema"],
                output_schema=parts["output_schema"],
                title=parts["title"],
                untrusted_output=True,
                metadata={
                    "server": server,
                    "annotations": parts["annotations"],
                    # the server's own limits govern its calls, not the agent's tool_timeout
                    "timeout": self._call_limit,
                },
            )
            current, pinned = definition.definition_hash, self.pins.get(server, definition.name)
            if pinned is None and self.settings.approval == "first_use":
                self.pins.pin(server, definition.name, current)
                pinned = current
            if pinned == current:
                approved[definition.name] = definition
                continue
            pending[definition.name] = {
                "approved": pinned,
                "current": current,
                "definition": definition,
            }
            if (
                definition.name not in self.pending
                or self.pending[definition.name]["current"] != current
            ):
                _log.warning(
                    "MCP server %s: tool %r %s; it is disabled until approved "
                    "(toolset.approve(%r)) [%s]",
                    server,
                    definition.name,
                    "changed its definition" if pinned else "is not approved yet",
                    definition.name,
                    current,
                )
                self.link._event(
                    "definition_changed" if pinned else "approval_needed",
                    tool=definition.name,
                    approved=pinned,
                    current=current,
                )
        for extra in await self._feature_tools(set(approved) | set(pending)):
            approved[extra.name] = extra
        self.pending = pending
        self._definitions = approved
        return list(approved.values())

    def approve(self, tool: str | None = None) -> list[str]:
        """Approve the current definition of ``tool`` (or of every pending tool); returns the names."""
        names = [tool] if tool is not None else list(self.pending)
        done = []
        for name in names:
            entry = self.pending.get(name)
            if entry is None:
                continue
            self.pins.pin(self.settings.name, name, entry["current"])
            done.append(name)
        if done:
            self._definitions = None
            self.notify_changed()
        return done

    @property
    def definition_hashes(self) -> dict[str, str]:
        """``tool -> definition hash`` of the tools offered now."""
        return {n: d.definition_hash for n, d in (self._definitions or {}).items()}

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: ToolCallContext | None = None
    ) -> ToolResult:
        """Call ``name``; the model reads the text (see :mod:`lightagent_mcp.content`),
        ``structured`` keeps the structured content, ``metadata`` the blocks and their notes."""
        if self._definitions is None:
            await self.list_tools()
        if name in self.pending:
            entry = self.pending[name]
            raise MCPDefinitionChanged(
                "LA-MCP-UNAPPROVED",
                f"the definition of {name!r} on MCP server {self.settings.name!r} is not approved",
                details={
                    "server": self.settings.name,
                    "tool": name,
                    "approved": entry["approved"],
                    "current": entry["current"],
                },
            )
        if name not in (self._definitions or {}):
            raise ToolError(
                "LA-TOOL-NOT-FOUND",
                f"MCP server {self.settings.name!r} offers no tool {name!r}",
                details={"server": self.settings.name, "tool": name},
            )
        if (self._definitions or {})[name].metadata.get("feature") == name:
            return await self._call_feature(name, dict(arguments or {}))
        emit = getattr(context, "emit", None)
        if emit is not None:
            self._emits.append(emit)
        try:
            result = await self.link.call(
                name, dict(arguments or {}), self._progress_events(name, context)
            )
        finally:
            if emit is not None:
                self._emits.remove(emit)
        text, structured, is_error, metadata = convert_result(
            result, self.settings.max_output_chars, self.settings.media
        )
        return ToolResult(
            content=text,
            structured=structured,
            is_error=is_error,
            metadata={"server": self.settings.name, **metadata},
        )

    def _emit(self, kind: str, data: dict[str, Any]) -> None:
        # the server's requests come during a call: they join the run of the latest one
        if self._emits:
            self._emits[-1](kind, data)

    def _progress_events(self, tool: str, context: ToolCallContext | None) -> Report | None:
        """A call's progress as ``mcp.progress`` events of the run that made it (if any)."""
        emit = getattr(context, "emit", None)
        if emit is None:
            return None
        key = getattr(context, "idempotency_key", None)
        sent = 0

        def report(progress: float, total: float | None, message: str | None) -> None:
            nonlocal sent
            sent += 1
            if sent > EVENTS_KEPT:  # a chatty server must not flood the run's log
                return
            text = self.scrubber.text(message)[:MESSAGE_KEPT] if message is not None else None
            emit(
                "mcp.progress",
                {
                    "server": self.settings.name,
                    "tool": tool,
                    "progress": progress,
                    "total": total,
                    "message": text,
                    "idempotency_key": key,
                    **({"last_kept": True} if sent == EVENTS_KEPT else {}),
                },
            )

        return report

    # -- status ----------------------------------------------------------------------------
    @property
    def events(self) -> list[dict[str, Any]]:
        """Recent lifecycle events (connect, reconnect, lost, list_changed, definition_changed)."""
        return list(self.link.events)

    @property
    def last_error(self) -> dict[str, Any] | None:
        """The last failure, redacted (``LightAgentError.to_dict()`` form), or None."""
        return self.link.last_error
