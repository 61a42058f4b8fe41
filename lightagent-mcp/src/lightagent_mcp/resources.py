"""Resources and prompts of one MCP server: from code, and as opt-in tools for the model.

:class:`ServerFeatures` is mixed into :class:`~lightagent_mcp.MCPToolset`: ``await
toolset.list_resources()``, ``read_resource(uri)``, ``list_resource_templates()``,
``subscribe_resource(uri, callback)``, ``list_prompts()``, ``get_prompt(name, arguments)``.
Each runs on the loop that owns the server's session (lightagent's background loop), so
it works from any event loop. With ``"resources": true`` / ``"prompts": true`` in the
server's settings the model is offered ``resources_list`` / ``resources_read`` and
``prompts_list`` / ``prompts_get`` (named like the server's tools, ``<server>__…`` on a
collision). A read gives the model text; binary contents are described (mime type, size),
never dumped.

Tools the server marks task-only (``execution.taskSupport: "required"``) are not offered:
the installed SDK defines the task types but does not run the task flow, and calling such
a tool without it can only fail. Each is logged once and listed in ``toolset.withheld``.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import inspect
import json
import logging
import warnings
from collections.abc import Awaitable, Callable, Coroutine
from types import SimpleNamespace
from typing import Any

from lightagent import ToolDefinition, ToolResult
from lightagent.errors import ToolError

from lightagent_mcp import _sdk
from lightagent_mcp.connection import ListClock
from lightagent_mcp.content import block_text, convert_result
from lightagent_mcp.errors import MCPProtocolError, MCPServerError

__all__ = [
    "PROMPT_TOOLS",
    "RESOURCE_TOOLS",
    "ServerFeatures",
    "task_only",
]

_log = logging.getLogger("lightagent.mcp")
_PAGE_CAP = 100
#: The tools ``"resources": true`` offers the model.
RESOURCE_TOOLS = ("resources_list", "resources_read")
#: The tools ``"prompts": true`` offers the model.
PROMPT_TOOLS = ("prompts_list", "prompts_get")
_UPDATED = "notifications/resources/updated"


def task_only(tool: Any) -> bool:
    """Whether a listed tool can only run as a task (``execution.taskSupport == "required"``)."""
    execution = _sdk._field(tool, "execution")
    return _sdk._field(execution, "task_support", "taskSupport") == "required"


def _clean(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if v is not None and v != ""}


def _resource(item: Any) -> dict[str, Any]:
    return _clean(
        {
            "uri": str(item.uri),
            "name": _sdk._field(item, "name"),
            "title": _sdk._field(item, "title"),
            "description": _sdk._field(item, "description"),
            "mime_type": _sdk._field(item, "mime_type", "mimeType"),
            "size": _sdk._field(item, "size"),
        }
    )


def _template(item: Any) -> dict[str, Any]:
    return _clean(
        {
            "uri_template": str(_sdk._field(item, "uri_template", "uriTemplate")),
            "name": _sdk._field(item, "name"),
            "title": _sdk._field(item, "title"),
            "description": _sdk._field(item, "description"),
            "mime_type": _sdk._field(item, "mime_type", "mimeType"),
        }
    )


def _contents(item: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "uri": str(item.uri),
        "mime_type": _sdk._field(item, "mime_type", "mimeType"),
    }
    text = getattr(item, "text", None)
    if text is not None:
        out["text"] = str(text)
        return out
    try:
        blob = base64.b64decode(getattr(item, "blob", "") or "", validate=True)
    except (binascii.Error, ValueError):
        blob = b""
        out["error"] = "the server sent a blob that is not base64"
    out.update(blob=blob, size=len(blob))
    return out


def _prompt(item: Any) -> dict[str, Any]:
    arguments = [
        _clean(
            {
                "name": a.name,
                "description": _sdk._field(a, "description"),
                "required": bool(_sdk._field(a, "required")),
            }
        )
        for a in (_sdk._field(item, "arguments") or [])
    ]
    return _clean(
        {
            "name": item.name,
            "title": _sdk._field(item, "title"),
            "description": _sdk._field(item, "description"),
            "arguments": arguments,
        }
    )


def _capability(client: Any, name: str) -> Any:
    caps = getattr(client, "server_capabilities", None)
    if caps is None:
        getter = getattr(client, "get_server_capabilities", None)
        caps = getter() if callable(getter) else None
    return getattr(caps, name, None) if caps is not None else None


class ServerFeatures:
    """Resources, prompts and subscriptions of an MCP server (mixed into ``MCPToolset``)."""

    link: Any
    settings: Any

    # -- plumbing ---------------------------------------------------------------------
    def _feature_state(self) -> dict[str, Any]:
        state = self.__dict__.get("_mcp_features")
        if state is None:
            state = self.__dict__["_mcp_features"] = {
                "subscriptions": {},
                "withheld": {},
                "withheld_now": {},
                "tasks": set(),
            }
            self.link.notification_listeners.append(self._notified)
        return state

    async def _on_session_loop(self, coro: Coroutine[Any, Any, Any]) -> Any:
        from lightagent.bridge import on_background_loop

        attempt = getattr(self.link, "_attempt", None)
        task = getattr(attempt, "task", None)
        if task is not None and task.get_loop() is asyncio.get_running_loop():
            return await coro
        return await on_background_loop(coro)

    async def _ask(
        self,
        what: str,
        send: Callable[[Any], Awaitable[Any]],
        limit: ListClock | None = None,
    ) -> Any:
        """One request within ``timeout`` (or ``limit()`` seconds, a listing's page); a lost
        session is reconnected once (reads have no effects)."""
        link = self.link
        for attempt in range(2):
            client = await link.client()
            pending = self._feature_state().get("resubscribing")
            if pending is not None:  # a new session gets the old subscriptions first
                await asyncio.shield(pending)
            try:
                seconds = limit() if limit is not None else link.settings.timeout
                return await asyncio.wait_for(send(client), seconds)
            except MCPServerError:
                raise
            except Exception as exc:
                kind = _sdk.classify(exc)
                if kind == "timeout" and limit is not None:
                    raise link.list_timeout(what, limit) from None
                if kind in ("session", "closed", "transport") and attempt == 0:
                    await link.reconnect(f"{what} failed: {kind}")
                    continue
                raise link._request_failure(exc, kind, what) from None
        raise AssertionError("unreachable")  # pragma: no cover

    async def _pages(self, what: str, method: str, field: tuple[str, ...]) -> list[Any]:
        items: list[Any] = []
        cursor: str | None = None
        limit = self.link.list_clock(what)
        for _ in range(_PAGE_CAP):

            async def send(client: Any, cursor: str | None = cursor) -> Any:
                call = getattr(client, method)
                return await (call(cursor=cursor) if _sdk.sdk_major() >= 2 else call(cursor))

            page = await self._ask(what, send, limit)
            items.extend(_sdk._field(page, *field) or [])
            cursor = _sdk._field(page, "next_cursor", "nextCursor")
            if not cursor:
                break
        return items

    async def _supports(self, capability: str) -> bool:
        return _capability(await self.link.client(), capability) is not None

    # -- resources ----------------------------------------------------------------------
    async def list_resources(self) -> list[dict[str, Any]]:
        """The server's resources: ``{"uri", "name", "title", "description", "mime_type", "size"}``."""
        listed = await self._on_session_loop(
            self._pages("resources/list", "list_resources", ("resources",))
        )
        return [_resource(r) for r in listed]

    async def list_resource_templates(self) -> list[dict[str, Any]]:
        """The server's resource templates: ``{"uri_template", "name", "description", …}``."""
        listed = await self._on_session_loop(
            self._pages(
                "resources/templates/list",
                "list_resource_templates",
                ("resource_templates", "resourceTemplates"),
            )
        )
        return [_template(t) for t in listed]

    async def read_resource(self, uri: str) -> list[dict[str, Any]]:
        """The contents at ``uri``: ``{"uri", "mime_type", "text"}`` or ``{…, "blob", "size"}``."""
        if not isinstance(uri, str) or not uri.strip():
            raise ToolError(
                "LA-TOOL-ARGS",
                "read_resource needs a resource URI (a non-empty string)",
                details={"server": self.settings.name},
            )
        result = await self._on_session_loop(
            self._ask("resources/read", lambda client: client.read_resource(uri))
        )
        return [_contents(c) for c in _sdk._field(result, "contents") or []]

    async def subscribe_resource(
        self, uri: str, callback: Callable[[str], Any] | None = None
    ) -> None:
        """Ask the server for ``notifications/resources/updated`` about ``uri``.

        Each update is a ``resource_updated`` entry of ``toolset.events`` and calls
        ``callback(uri)`` (sync or async) on the session's loop. A server that does not
        offer subscriptions is ``LA-MCP-PROTOCOL``.
        """
        await self._on_session_loop(self._subscribe(uri, callback))

    async def _subscribe(self, uri: str, callback: Callable[[str], Any] | None) -> None:
        state = self._feature_state()
        resources = _capability(await self.link.client(), "resources")
        if not getattr(resources, "subscribe", False):
            raise MCPProtocolError(
                "LA-MCP-PROTOCOL",
                f"MCP server {self.settings.name!r} does not offer resource subscriptions",
                details={"server": self.settings.name, "uri": uri},
            )

        await self._send_subscribe(uri)
        callbacks = state["subscriptions"].setdefault(uri, [])
        if callback is not None:
            callbacks.append(callback)

    async def unsubscribe_resource(self, uri: str) -> None:
        """Stop the updates of ``uri`` (and forget its callbacks)."""
        await self._on_session_loop(self._unsubscribe(uri))

    async def _unsubscribe(self, uri: str) -> None:
        if self._feature_state()["subscriptions"].pop(uri, None) is None:
            return

        async def send(client: Any) -> Any:
            session = client.session if _sdk.sdk_major() >= 2 else client
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return await session.unsubscribe_resource(uri)

        await self._ask("resources/unsubscribe", send)

    def _resubscribe(self) -> None:
        """After a reconnect: send the subscriptions again (the new session has none)."""
        state = self._feature_state()
        uris = list(state["subscriptions"])
        if not uris:
            return

        async def again() -> None:
            for uri in uris:
                try:
                    await self._send_subscribe(uri)
                except Exception as exc:  # the subscription is lost; say so, keep the session
                    _log.warning(
                        "MCP server %s: cannot subscribe to %s again: %s",
                        self.settings.name, uri, _sdk.error_text(exc),
                    )  # fmt: skip
            self.link._event("resubscribed", uris=uris)

        task = asyncio.get_running_loop().create_task(again())
        state["resubscribing"] = task
        task.add_done_callback(lambda t: state.pop("resubscribing", None))

    async def _send_subscribe(self, uri: str) -> None:
        async def send(client: Any) -> Any:
            session = client.session if _sdk.sdk_major() >= 2 else client
            with warnings.catch_warnings():  # deprecated only for 2026 servers, which we probe
                warnings.simplefilter("ignore")
                return await session.subscribe_resource(uri)

        link = self.link
        client = await link.client()
        try:
            await asyncio.wait_for(send(client), link.settings.timeout)
        except Exception as exc:
            raise link._request_failure(exc, _sdk.classify(exc), "resources/subscribe") from None

    def _notified(self, method: str, message: Any) -> None:
        if method != _UPDATED:
            return
        uri = str(getattr(getattr(message, "params", None), "uri", ""))
        self.link._event("resource_updated", uri=uri)
        state = self._feature_state()
        for callback in state["subscriptions"].get(uri, []):
            try:
                outcome = callback(uri)
                if inspect.isawaitable(outcome):
                    task = asyncio.ensure_future(outcome)
                    state["tasks"].add(task)  # held until done, then its failure is logged
                    task.add_done_callback(lambda t: self._callback_done(t, state["tasks"]))
            except Exception:  # a listener must not break the session
                _log.exception("MCP server %s: resource callback failed", self.settings.name)

    def _callback_done(self, task: asyncio.Future[Any], tasks: set[Any]) -> None:
        tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            _log.error(
                "MCP server %s: resource callback failed: %r",
                self.settings.name,
                task.exception(),
            )

    # -- prompts ---------------------------------------------------------------------------
    async def list_prompts(self) -> list[dict[str, Any]]:
        """The server's prompts: ``{"name", "description", "arguments": [{"name", "required"}]}``."""
        listed = await self._on_session_loop(
            self._pages("prompts/list", "list_prompts", ("prompts",))
        )
        return [_prompt(p) for p in listed]

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None = None
    ) -> dict[str, Any]:
        """A prompt filled in: ``{"description", "messages": [{"role", "content"}]}`` (text)."""
        args = dict(arguments or {})
        bad = [k for k, v in args.items() if not isinstance(v, str)]
        if not isinstance(name, str) or not name or bad:
            raise ToolError(
                "LA-TOOL-ARGS",
                f"get_prompt needs a prompt name and string arguments (not {bad[:3]})"
                if bad
                else "get_prompt needs a prompt name (a non-empty string)",
                details={"server": self.settings.name, "prompt": name},
            )
        result = await self._on_session_loop(
            self._ask(f"prompts/get {name}", lambda client: client.get_prompt(name, args))
        )
        messages = [
            {"role": str(m.role), "content": block_text(_sdk._dump(m.content))}
            for m in _sdk._field(result, "messages") or []
        ]
        return _clean({"description": _sdk._field(result, "description"), "messages": messages})

    # -- the opt-in tools --------------------------------------------------------------
    @property
    def withheld(self) -> dict[str, str]:
        """Tools of the server that are not offered, and why (task-only tools)."""
        return dict(self._feature_state()["withheld"])

    def _withhold(self, tool: str) -> None:
        state = self._feature_state()
        why = (
            "the server runs it only as a task (execution.taskSupport: required), "
            "and the MCP task flow is not supported"
        )
        state["withheld_now"][tool] = why
        if tool in state["withheld"]:
            return
        _log.warning("MCP server %s: tool %r is not offered: %s", self.settings.name, tool, why)
        self.link._event("tool_withheld", tool=tool, code="LA-TOOL-DEFINITION", reason=why)

    async def _feature_tools(self, taken: set[str]) -> list[ToolDefinition]:
        """The opt-in tools the settings ask for and the server supports (ends a listing)."""
        state = self._feature_state()
        state["withheld"], state["withheld_now"] = state["withheld_now"], {}
        server, out = self.settings.name, []
        wanted = [
            ("resources", RESOURCE_TOOLS, getattr(self.settings, "resources", False)),
            ("prompts", PROMPT_TOOLS, getattr(self.settings, "prompts", False)),
        ]
        for feature, names, enabled in wanted:
            if not enabled:
                continue
            if not await self._supports(feature):
                _log.warning(
                    "MCP server %s: %r is on, but the server offers no %s; no %s tools",
                    server, feature, feature, feature,
                )  # fmt: skip
                continue
            for definition in _definitions(server, names):
                if definition.name in taken:
                    _log.warning(
                        "MCP server %s: its own tool %r hides the %s tool of that name",
                        server, definition.name, feature,
                    )  # fmt: skip
                    continue
                out.append(definition)
        return out

    async def _call_feature(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        """An opt-in tool's call; its text is cut at ``max_output_chars`` like a tool's."""
        structured: Any = None
        if name == "resources_list":
            listing = {
                "resources": await self.list_resources(),
                "resource_templates": await self.list_resource_templates(),
            }
            blocks = [_text_block(json.dumps(listing, ensure_ascii=False))]
        elif name == "resources_read":
            contents = await self.read_resource(arguments.get("uri"))  # type: ignore[arg-type]
            # as an embedded resource: text is read, binary described by type and size
            blocks = [
                {
                    "type": "resource",
                    "resource": {
                        k: v
                        for k, v in (
                            ("uri", c["uri"]),
                            ("mimeType", c.get("mime_type")),
                            ("text", c.get("text")),
                            ("size", c.get("size")),
                        )
                        if v is not None
                    },
                }
                for c in contents
            ]
        elif name == "prompts_list":
            blocks = [_text_block(json.dumps(await self.list_prompts(), ensure_ascii=False))]
        else:
            structured = await self.get_prompt(
                arguments.get("name"),  # type: ignore[arg-type]
                arguments.get("arguments"),
            )
            lines = [f"{m['role']}: {m['content']}" for m in structured["messages"]]
            blocks = [_text_block("\n\n".join(lines))]
        result = SimpleNamespace(content=blocks, structured_content=structured)
        text, kept, _, metadata = convert_result(result, self.settings.max_output_chars)
        return ToolResult(
            content=text,
            structured=kept,
            metadata={"server": self.settings.name, "feature": name, **metadata},
        )


def _text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _definitions(server: str, names: tuple[str, ...]) -> list[ToolDefinition]:
    texts = {
        "resources_list": (
            f"List the resources (URIs) and resource templates of MCP server {server!r}.",
            {},
            [],
        ),
        "resources_read": (
            f"Read a resource of MCP server {server!r} by its URI (from resources_list; fill "
            "a template's {placeholders} in). Binary contents are described, not shown.",
            {"uri": {"type": "string", "description": "The resource URI."}},
            ["uri"],
        ),
        "prompts_list": (
            f"List the prompts of MCP server {server!r} and the arguments each takes.",
            {},
            [],
        ),
        "prompts_get": (
            f"Get a prompt of MCP server {server!r}, filled in with its arguments.",
            {
                "name": {"type": "string", "description": "The prompt's name."},
                "arguments": {
                    "type": "object",
                    "additionalProperties": {"type": "string"},
                    "description": "The prompt's arguments (strings).",
                },
            },
            ["name"],
        ),
    }
    out = []
    for name in names:
        description, properties, required = texts[name]
        parameters: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            parameters["required"] = required
        out.append(
            ToolDefinition(
                name=name,
                description=description,
                parameters=parameters,
                untrusted_output=True,
                metadata={"server": server, "feature": name},
            )
        )
    return out
