"""One MCP server's long-lived session: opened, watched, reconnected and closed by its own task.

Each connection attempt runs in one task that enters the SDK's transport and session, waits
until it is told to stop, and exits them: anyio's task-bound cancel scopes are entered and
left in that task, whichever task or thread asks. Calls from any task of the same loop use
the open session. Timeouts bound initialization and every call; a server the SDK reports
gone is reconnected (a lost HTTP session is re-initialized and the call retried, up to
``reconnect_attempts``; a stdio server that died is started again on the next call, since
the call it died in may have had effects).
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AsyncExitStack, ExitStack, contextmanager
from typing import Any

from lightagent_mcp import _process, _sdk
from lightagent_mcp.credentials import Scrubber, resolve_server
from lightagent_mcp.errors import (
    MCPConfigError,
    MCPProtocolError,
    MCPServerError,
    MCPServerExited,
    MCPStartError,
    MCPTimeout,
    MCPUnavailable,
)
from lightagent_mcp.logs import forward_server_log
from lightagent_mcp.progress import ProgressWatch, Report
from lightagent_mcp.settings import ServerSettings

__all__ = ["ServerLink"]

_log = logging.getLogger("lightagent.mcp")
_STDERR_KEPT = 2000
_spawn_locks: dict[int, asyncio.Lock] = {}


def _spawn_lock() -> asyncio.Lock:
    # One per loop: spawns are serialised so a new server process is told apart from others.
    loop = asyncio.get_running_loop()
    lock = _spawn_locks.get(id(loop))
    if lock is None:
        lock = _spawn_locks[id(loop)] = asyncio.Lock()
    return lock


class _TrackedStdio:
    """The SDK's stdio transport, noting the server's process group and ending it on exit."""

    def __init__(self, link: ServerLink, params: Any, errlog: Any) -> None:
        from mcp.client.stdio import stdio_client

        self._link = link
        self._argv = [params.command, *params.args]
        self._cm = stdio_client(params, errlog=errlog)

    async def __aenter__(self) -> Any:
        async with _spawn_lock():
            before = _process.child_leaders()
            streams = await self._cm.__aenter__()
            self._link.pgid = _process.pick_leader(_process.child_leaders() - before, self._argv)
        return streams

    async def __aexit__(self, *exc_info: Any) -> Any:
        try:
            return await self._cm.__aexit__(*exc_info)
        finally:
            await _process.end_group(self._link.pgid, self._link.settings.kill_timeout)


class _WatchedRead:
    """The session's read stream, telling the link when the transport breaks or ends."""

    def __init__(self, inner: Any, link: ServerLink) -> None:
        self._inner, self._link = inner, link

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        return self._seen(await self._inner.receive())

    def __aiter__(self) -> _WatchedRead:
        return self

    async def __anext__(self) -> Any:
        try:
            item = await self._inner.__anext__()
        except StopAsyncIteration:
            self._link._broken = True
            raise
        return self._seen(item)

    def _seen(self, item: Any) -> Any:
        if isinstance(item, Exception) and self._link.settings.transport != "stdio":
            # A remote transport reports its stream broke (server gone or restarted):
            # the next request reconnects first instead of writing into a dead session.
            self._link._broken = True
        return item

    async def aclose(self) -> None:
        self._link._broken = True
        await self._inner.aclose()

    async def __aenter__(self) -> _WatchedRead:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> Any:
        return await self._inner.__aexit__(*exc_info)


class _Watched:
    """A transport whose read stream is watched (see :class:`_WatchedRead`)."""

    def __init__(self, inner: Any, link: ServerLink) -> None:
        self._inner, self._link = inner, link

    async def __aenter__(self) -> Any:
        streams = await self._inner.__aenter__()
        return (_WatchedRead(streams[0], self._link), *streams[1:])

    async def __aexit__(self, *exc_info: Any) -> Any:
        return await self._inner.__aexit__(*exc_info)


class _Attempt:
    __slots__ = ("done", "ready", "scope", "task")

    def __init__(self) -> None:
        self.ready: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.ready.add_done_callback(_retrieved)
        self.done = asyncio.Event()
        self.scope: Any = None
        self.task: asyncio.Task[None] | None = None


def _retrieved(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


class ListClock:
    """``clock()``: the seconds the next page of a listing may take (see ``list_clock``)."""

    __slots__ = ("deadline", "link", "what")

    def __init__(self, link: ServerLink, what: str, deadline: float) -> None:
        self.link, self.what, self.deadline = link, what, deadline

    def __call__(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise self.link._timeout(self.what, "total_timeout", 0)
        return min(self.link.settings.timeout, left)


class ServerLink:
    """The session with one server. Use it from one event loop (the toolset owner's)."""

    def __init__(
        self,
        settings: ServerSettings,
        *,
        credential_provider: Any = None,
        scrubber: Scrubber | None = None,
        on_change: Callable[[str], None] | None = None,
    ) -> None:
        self.settings = settings
        self.scrubber = scrubber or Scrubber()
        self._provider = credential_provider
        self._on_change = on_change
        self._client: Any = None
        self._attempt: _Attempt | None = None
        self._lock: asyncio.Lock | None = None
        self._stderr: Any = None
        self._broken = False
        self._calls: set[ProgressWatch] = set()
        self._probing: asyncio.Task[None] | None = None
        #: The stdio server's process group (its pid), while it runs.
        self.pgid: int | None = None
        #: Successful connections so far (1 after the first open).
        self.connects = 0
        #: Recent lifecycle events: connect, reconnect, lost, list_changed (newest last).
        self.events: deque[dict[str, Any]] = deque(maxlen=50)
        self.last_error: dict[str, Any] | None = None
        #: Called with (method, notification) for each server notification.
        self.notification_listeners: list[Callable[[str, Any], None]] = []
        #: The SDK callbacks answering the server's own requests (sampling, elicitation, roots).
        self.callbacks: dict[str, Any] = {}
        #: ``auth(url)``: the HTTP auth of a connection (OAuth), or None.
        self.auth: Callable[[str], Any] | None = None

    # -- the attempt task ---------------------------------------------------------------
    async def _run(self, attempt: _Attempt) -> None:
        import anyio

        with anyio.CancelScope() as scope:
            attempt.scope = scope
            try:
                async with AsyncExitStack() as stack:
                    resolved = await resolve_server(self.settings, self._provider, self.scrubber)
                    client = await _sdk.open_session(
                        stack,
                        self.settings,
                        resolved,
                        message_handler=self._on_message,
                        stdio_transport=self._stdio,
                        watch=lambda transport: _Watched(transport, self),
                        on_cut=self._stream_cut,
                        callbacks=self.callbacks,
                        auth=self.auth(resolved.url) if self.auth and resolved.url else None,
                    )
                    attempt.ready.set_result(client)
                    await attempt.done.wait()
            except Exception as exc:
                if not attempt.ready.done():
                    attempt.ready.set_exception(exc)
                else:
                    self._lost(attempt, exc)
        if not attempt.ready.done():
            attempt.ready.set_exception(asyncio.CancelledError())

    def _stream_cut(self, probe: Callable[[], Awaitable[bool | None]]) -> None:
        # A cut response stream: ask whether the server is still there (once at a time).
        if self._probing is None or self._probing.done():
            self._probing = asyncio.get_running_loop().create_task(self._probe(probe))

    async def _probe(self, probe: Callable[[], Awaitable[bool | None]]) -> None:
        try:
            answers = await probe()
        except Exception as exc:  # a closing client: nothing to tell
            _log.debug("MCP server %s: probe failed: %s", self.settings.name, exc)
            return
        if answers is False:
            self._broken = True  # the next request connects again
            for watch in list(self._calls):
                watch.lose()

    @contextmanager
    def hold(self) -> Iterator[None]:
        """Stop the idle clocks of the calls in flight while the block runs."""
        with ExitStack() as stack:
            for watch in list(self._calls):
                stack.enter_context(watch.hold())
            yield

    def _stdio(self, params: Any) -> _TrackedStdio:
        if self._stderr is None:
            self._stderr = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")
        else:
            self._stderr.seek(0)
            self._stderr.truncate()
        return _TrackedStdio(self, params, self._stderr)

    def _lost(self, attempt: _Attempt, exc: BaseException) -> None:
        if self._attempt is attempt:
            self._client = None
        text = self.scrubber.text(_sdk.error_text(exc))
        self._event("lost", error=text)
        _log.warning("MCP server %s: connection lost: %s", self.settings.name, text)

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, Exception):
            _log.debug(
                "MCP server %s: transport: %s",
                self.settings.name,
                self.scrubber.text(_sdk.error_text(message)),
            )
            return
        notification = getattr(message, "root", message)
        method = getattr(notification, "method", None)
        for listener in self.notification_listeners:
            listener(str(method), notification)
        if method == "notifications/message":
            forward_server_log(self.settings.name, notification.params, self.scrubber.text)
        elif method == "notifications/tools/list_changed":
            self._event("list_changed")
            self._changed("list_changed")

    def _changed(self, why: str) -> None:
        if self._on_change is not None:
            try:
                self._on_change(why)
            except Exception:  # a listener must not break the session
                _log.exception("MCP server %s: change listener failed", self.settings.name)

    def _event(self, kind: str, **data: Any) -> None:
        self.events.append({"event": kind, "server": self.settings.name, "at": time.time(), **data})

    # -- opening and closing --------------------------------------------------------------
    def _guard(self) -> asyncio.Lock:
        if self._lock is None:
            self._lock = asyncio.Lock()
        return self._lock

    def _alive(self) -> bool:
        if self._client is None or self._attempt is None or self._attempt.task is None:
            return False
        if self._attempt.task.done() or self._broken:
            return False
        if self.settings.transport == "stdio" and self.pgid is not None:
            return _process.process_alive(self.pgid)
        return True

    async def client(self) -> Any:
        """The open session, connecting (or reconnecting) first when needed."""
        if self._alive():
            return self._client
        async with self._guard():
            if self._alive():
                return self._client
            return await self._connect()

    async def reconnect(self, reason: str) -> Any:
        """Close the current session and open a new one."""
        async with self._guard():
            return await self._connect(reason)

    async def _connect(self, reason: str | None = None) -> Any:
        was_open = self.connects > 0
        await self._end()
        self._broken = False
        attempt = _Attempt()
        self._attempt = attempt
        attempt.task = asyncio.get_running_loop().create_task(
            self._run(attempt), name=f"lightagent-mcp:{self.settings.name}"
        )
        try:
            client = await asyncio.wait_for(
                asyncio.shield(attempt.ready), self.settings.init_timeout
            )
        except (asyncio.TimeoutError, TimeoutError):
            await self._end(cancel=True)
            raise self._failure(
                MCPTimeout,
                f"MCP server {self.settings.name!r} did not finish initialization within "
                f"{self.settings.init_timeout:g} s",
                phase="initialize",
            ) from None
        except MCPConfigError as exc:
            await self._end(cancel=True)
            self.last_error = exc.to_dict()
            raise
        except BaseException as exc:
            await self._end(cancel=True)
            config = _sdk.find(exc, MCPConfigError)  # e.g. OAuth needing oauth_authorize=
            if config is not None:
                self.last_error = config.to_dict()
                raise config from None
            raise self._start_failure(exc) from None
        self._client = client
        self.connects += 1
        self.last_error = None
        self._event("reconnect" if was_open else "connect", reason=reason)
        if was_open:
            _log.info("MCP server %s: reconnected (%s)", self.settings.name, reason or "lost")
            self._changed("reconnect")
        return client

    async def _end(self, *, cancel: bool = False) -> None:
        attempt, self._attempt, self._client = self._attempt, None, None
        if attempt is None or attempt.task is None:
            return
        if cancel and attempt.scope is not None:
            attempt.scope.cancel()
        attempt.done.set()
        limit = self.settings.kill_timeout * 2 + 10.0
        done, _ = await asyncio.wait({attempt.task}, timeout=limit)
        if not done:  # a transport that would not close: cancel it, then end the processes
            if attempt.scope is not None:
                attempt.scope.cancel()
            await asyncio.wait({attempt.task}, timeout=limit)
            await _process.end_group(self.pgid, self.settings.kill_timeout)
        self.pgid = None

    async def close(self) -> None:
        """End the session (and a stdio server's process tree)."""
        async with self._guard():
            await self._end()

    # -- errors -----------------------------------------------------------------------------
    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        try:
            self._stderr.flush()
            self._stderr.seek(0)
            text = self._stderr.read()
        except (OSError, ValueError):
            return ""
        return self.scrubber.text(text[-_STDERR_KEPT:].strip())

    def _failure(self, cls: type[MCPServerError], message: str, **details: Any) -> MCPServerError:
        info = {"server": self.settings.name, "transport": self.settings.transport, **details}
        stderr = self._stderr_tail() if self.settings.transport == "stdio" else ""
        if stderr:
            info["stderr"] = stderr
        error = cls(cls.default_code, self.scrubber.text(message), details=info)
        self.last_error = error.to_dict()
        return error

    def _start_failure(self, exc: BaseException) -> MCPServerError:
        name, s = self.settings.name, self.settings
        text = _sdk.error_text(exc)
        if s.transport == "stdio":
            if isinstance(exc, OSError):
                return self._failure(
                    MCPStartError, f"cannot start MCP server {name!r} ({s.command!r}): {text}"
                )
            return self._failure(
                MCPServerExited,
                f"MCP server {name!r} exited during initialization ({text})",
                phase="initialize",
            )
        kind = _sdk.classify(exc)
        if kind == "protocol":
            return self._failure(
                MCPProtocolError, f"MCP server {name!r} refused to initialize: {text}"
            )
        return self._failure(
            MCPUnavailable, f"MCP server {name!r} at {s.url} is not reachable: {text}"
        )

    # -- requests ---------------------------------------------------------------------------
    def list_clock(self, what: str) -> ListClock:
        """A listing's limits: each page within ``timeout``, all pages within ``total_timeout``."""
        s = self.settings
        return ListClock(self, what, time.monotonic() + max(s.total_timeout, s.timeout))

    def list_timeout(self, what: str, clock: ListClock) -> MCPServerError:
        """The typed timeout of a page that did not come within ``clock()``."""
        spent = time.monotonic() >= clock.deadline - 0.001
        return self._timeout(what, "total_timeout" if spent else "timeout", 0)

    async def list_tools(self) -> list[Any]:
        """Every tool the server lists (reconnecting once when the session was lost)."""
        limit = self.list_clock("tools/list")
        for attempt in range(2):
            client = await self.client()
            try:
                return await _sdk.list_all_tools(client, limit)
            except MCPServerError:
                raise
            except Exception as exc:
                kind = _sdk.classify(exc)
                if kind == "timeout":
                    raise self.list_timeout("tools/list", limit) from None
                if kind in ("session", "closed", "transport") and attempt == 0:
                    await self.reconnect(f"tools/list failed: {kind}")
                    continue
                raise self._request_failure(exc, kind, "tools/list") from None
        raise AssertionError("unreachable")  # pragma: no cover

    async def call(
        self, tool: str, arguments: dict[str, Any], on_progress: Report | None = None
    ) -> Any:
        """One ``tools/call`` within its timeouts; a lost session is re-initialized and retried.

        ``on_progress(progress, total, message)`` hears each progress notification, and each
        starts the idle ``timeout`` again; ``total_timeout`` bounds the call in any case.
        """
        attempts = self.settings.reconnect_attempts
        total = max(self.settings.total_timeout, self.settings.timeout)
        for attempt in range(attempts + 1):
            client = await self.client()
            watch = ProgressWatch(self.settings.timeout, on_progress)
            self._calls.add(watch)
            try:
                with watch.idle_clock():
                    result = await _sdk.call_tool(client, tool, arguments, total, watch)
                if watch.lost:
                    self._client = None  # the next call connects again
                    raise self._failure(
                        MCPUnavailable,
                        f"MCP server {self.settings.name!r} was lost during {tool}: "
                        "it refuses connections",
                        tool=tool,
                    )
                if not watch.idled:
                    return result
                raise self._timeout(tool, "timeout", watch.reports)
            except MCPServerError:
                raise
            except Exception as exc:
                kind = _sdk.classify(exc)
                if kind == "timeout" and hasattr(exc, "error"):  # the SDK's request timeout
                    raise self._timeout(tool, "total_timeout", watch.reports) from None
                if kind in ("session", "transport") and self.settings.transport != "stdio":
                    # The server never ran this call (it does not know the session, or
                    # the request did not reach it): a new session may retry it safely.
                    if attempt < attempts:
                        try:
                            await self.reconnect(f"{kind} during {tool}")
                        except MCPServerError:
                            pass
                        continue
                if kind in ("closed", "session", "transport"):
                    self._client = None  # the next call connects again
                raise self._request_failure(exc, kind, tool) from None
            finally:
                self._calls.discard(watch)
        raise AssertionError("unreachable")  # pragma: no cover

    def _timeout(self, tool: str, limit: str, reports: int) -> MCPServerError:
        s = self.settings
        if limit == "timeout" and "/" in tool:  # a listing: one page took too long
            why = f"went {s.timeout:g} s without an answer (timeout)"
        elif limit == "timeout":
            why = f"went {s.timeout:g} s without an answer or a progress notification (timeout)"
        else:
            why = f"did not finish within {max(s.total_timeout, s.timeout):g} s (total_timeout)"
        return self._failure(
            MCPTimeout,
            f"{tool} on MCP server {s.name!r} {why}",
            tool=tool,
            limit=limit,
            progress_reports=reports,
        )

    def _request_failure(self, exc: BaseException, kind: str, what: str) -> MCPServerError:
        name, text = self.settings.name, _sdk.error_text(exc)
        if kind == "timeout":
            return self._failure(
                MCPTimeout,
                f"{what} on MCP server {name!r} did not answer within {self.settings.timeout:g} s",
                tool=what,
            )
        if kind == "protocol":
            message = getattr(getattr(exc, "error", None), "message", None) or text
            return self._failure(MCPProtocolError, f"MCP server {name!r}: {message}", tool=what)
        if self.settings.transport == "stdio":
            return self._failure(
                MCPServerExited,
                f"MCP server {name!r} exited during {what}; it is started again on the next call",
                tool=what,
            )
        return self._failure(
            MCPUnavailable, f"MCP server {name!r} was lost during {what}: {text}", tool=what
        )
