"""The official ``mcp`` SDK behind one small surface: 2.x (``mcp.Client``) and 1.x (``ClientSession``).

Everything version-specific lives here: opening a session over stdio, SSE or streamable
HTTP, listing tools page by page, calling one, and reading tools and errors, whose field
names differ between the two lines (``input_schema`` / ``inputSchema`` …).
"""

from __future__ import annotations

import asyncio
import builtins
from contextlib import AsyncExitStack
from datetime import timedelta
from importlib import metadata
from typing import Any

__all__ = [
    "classify",
    "error_text",
    "find",
    "list_all_tools",
    "open_session",
    "sdk_major",
    "tool_parts",
]

CONNECTION_CLOSED = -32000
REQUEST_TIMEOUT = -32001
INVALID_REQUEST = -32600
_MAJOR: int | None = None
_PAGE_CAP = 100
try:  # Python 3.10: anyio brings the backport
    _GROUP: Any = builtins.BaseExceptionGroup  # type: ignore[attr-defined,unused-ignore]
except AttributeError:  # pragma: no cover
    from exceptiongroup import BaseExceptionGroup as _GROUP  # type: ignore[no-redef,import-not-found,unused-ignore]


def sdk_major() -> int:
    """The installed ``mcp`` SDK's major version."""
    global _MAJOR
    if _MAJOR is None:
        try:
            _MAJOR = int(metadata.version("mcp").split(".", 1)[0])
        except (metadata.PackageNotFoundError, ValueError):
            _MAJOR = 2
    return _MAJOR


def _field(obj: Any, *names: str) -> Any:
    for name in names:
        value = getattr(obj, name, None)
        if value is not None:
            return value
    return None


def _dump(obj: Any) -> Any:
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        return dump(by_alias=True, mode="json", exclude_none=True)
    return obj


def tool_parts(tool: Any) -> dict[str, Any]:
    """name, title, description, input_schema, output_schema, annotations of a listed tool."""
    annotations = _field(tool, "annotations")
    return {
        "name": tool.name,
        "title": _field(tool, "title"),
        "description": _field(tool, "description") or "",
        "input_schema": _dump(_field(tool, "input_schema", "inputSchema"))
        or {"type": "object", "properties": {}},
        "output_schema": _dump(_field(tool, "output_schema", "outputSchema")),
        "annotations": _dump(annotations) if annotations is not None else None,
    }


def classify(exc: BaseException) -> str:
    """``timeout``, ``session`` (the server no longer knows our session), ``closed``,
    ``protocol`` (a JSON-RPC error answer) or ``transport`` (could not reach the server)."""
    error = getattr(exc, "error", None)
    code = getattr(error, "code", None)
    if isinstance(code, int) and hasattr(exc, "error"):
        message = str(getattr(error, "message", "") or "")
        if code == REQUEST_TIMEOUT:
            return "timeout"
        if code == CONNECTION_CLOSED:
            return "closed"
        if code == INVALID_REQUEST and "session" in message.lower():
            return "session"
        if code == -32603 and "error response" in message.lower():
            return "transport"
        return "protocol"
    if isinstance(exc, (TimeoutError, asyncio.TimeoutError)):
        return "timeout"
    if isinstance(exc, _GROUP):
        kinds = {classify(e) for e in exc.exceptions}
        return kinds.pop() if len(kinds) == 1 else "transport"
    return "transport"


def find(exc: BaseException | None, cls: type[BaseException], depth: int = 0) -> Any:
    """The first ``cls`` in ``exc``, its groups and its causes (or None)."""
    if exc is None or depth > 8:
        return None
    if isinstance(exc, cls):
        return exc
    for inner in getattr(exc, "exceptions", None) or ():
        found = find(inner, cls, depth + 1)
        if found is not None:
            return found
    return find(exc.__cause__ or exc.__context__, cls, depth + 1)


def error_text(exc: BaseException) -> str:
    """A short description of ``exc`` (its group members flattened)."""
    if isinstance(exc, _GROUP):
        return "; ".join(error_text(e) for e in exc.exceptions[:3])
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


async def open_session(
    stack: AsyncExitStack,
    settings: Any,
    resolved: Any,
    *,
    message_handler: Any,
    stdio_transport: Any,
    watch: Any = None,
    on_cut: Any = None,
    callbacks: dict[str, Any] | None = None,
    auth: Any = None,
) -> Any:
    """Connect and initialize; the session's resources are entered on ``stack``.

    ``stdio_transport(params)`` wraps the SDK's stdio transport (process-group tracking);
    ``on_cut(probe)`` hears that a streamable-HTTP response stream broke off, ``await
    probe()`` then says whether the server still answers (see :mod:`lightagent_mcp._liveness`).
    ``callbacks`` are the SDK's ``sampling_callback`` / ``elicitation_callback`` /
    ``list_roots_callback`` keywords (each one given advertises its capability); ``auth``
    an ``httpx`` auth for streamable HTTP (the SDK's OAuth client).
    """
    import mcp

    major = sdk_major()
    timeout = settings.init_timeout
    if settings.transport == "stdio":
        params = mcp.StdioServerParameters(
            command=settings.command,
            args=resolved.args,
            env=resolved.env or None,
            cwd=settings.cwd,
        )
        transport = stdio_transport(params)
    elif settings.transport == "sse":
        from mcp.client.sse import sse_client

        transport = sse_client(
            resolved.url, headers=resolved.headers or None, timeout=timeout, sse_read_timeout=3600
        )
    elif major >= 2:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        from lightagent_mcp._liveness import cut_watching_transport, reachable

        def probe() -> Any:
            return reachable(resolved.url, min(timeout, 5.0))

        http = await stack.enter_async_context(
            httpx2.AsyncClient(
                headers=resolved.headers or None,
                timeout=httpx2.Timeout(timeout, read=max(settings.timeout, 300.0)),
                transport=cut_watching_transport(lambda: on_cut(probe)) if on_cut else None,
                auth=auth,
            )
        )
        transport = streamable_http_client(resolved.url, http_client=http)
    else:
        from mcp.client import streamable_http

        transport = streamable_http.streamablehttp_client(  # type: ignore[attr-defined,unused-ignore]
            resolved.url,
            headers=resolved.headers or None,
            timeout=timedelta(seconds=timeout),
            auth=auth,
        )
    from lightagent_mcp.logs import quiet_sdk_loggers, wanted_level

    quiet_sdk_loggers()  # the transport's modules are imported by now
    if watch is not None:
        transport = watch(transport)
    if major >= 2:
        client = mcp.Client(
            transport,
            mode=settings.protocol,
            read_timeout_seconds=timeout,
            message_handler=message_handler,
            # 2026 servers send log messages only to a client that asks for a level
            log_level=wanted_level(settings.name),  # type: ignore[arg-type,unused-ignore]
            client_info=mcp.Implementation(name="lightagent", version=_version()),
            cache=None,
            **(callbacks or {}),
        )
        await stack.enter_async_context(client)
        return client
    streams = await stack.enter_async_context(transport)
    session = mcp.ClientSession(
        streams[0],
        streams[1],
        read_timeout_seconds=timedelta(seconds=timeout),  # type: ignore[arg-type,unused-ignore]
        message_handler=message_handler,
        client_info=mcp.Implementation(name="lightagent", version=_version()),
        **(callbacks or {}),
    )
    await stack.enter_async_context(session)
    await session.initialize()
    return session


def _version() -> str:
    from lightagent_mcp import __version__

    return __version__


async def list_all_tools(client: Any, limit: Any) -> list[Any]:
    """Every tool the server lists (all pages); ``limit()`` gives each page's seconds."""
    tools: list[Any] = []
    cursor: str | None = None
    for _ in range(_PAGE_CAP):
        if sdk_major() >= 2:
            page = await asyncio.wait_for(client.list_tools(cursor=cursor), limit())
        else:
            page = await asyncio.wait_for(client.list_tools(cursor), limit())
        tools.extend(page.tools)
        cursor = _field(page, "next_cursor", "nextCursor")
        if not cursor:
            break
    return tools


async def call_tool(
    client: Any, name: str, arguments: dict[str, Any], timeout: float, progress: Any = None
) -> Any:
    """One ``tools/call``, answered within ``timeout`` seconds or an SDK timeout error.

    ``progress(progress, total, message)`` (async) hears the call's progress notifications;
    with it the SDK sends a progress token.
    """
    if sdk_major() >= 2:
        return await client.call_tool(
            name, arguments, read_timeout_seconds=timeout, progress_callback=progress
        )
    return await client.call_tool(
        name,
        arguments,
        read_timeout_seconds=timedelta(seconds=timeout),
        progress_callback=progress,
    )
