"""Ownership of a toolset's lifecycle: one owner task enters it, serves its calls and exits it.

Connection-based toolsets (MCP sessions, subprocess pipes, sockets) are bound to the
event loop, and often to the task, that opened them. A loop-bound toolset is therefore
entered by one owner task on the process's background loop (:mod:`lightagent.bridge`);
calls and the exit come from any thread or event loop and are marshalled to it. So
``asyncio.run(setup())`` followed by a plain ``agent.run(...)``, ``async with agent:``,
and ``agent.close()`` from another thread all work. Static toolsets (no resources) skip
all of this and are called on the caller's own loop.
"""

from __future__ import annotations

import asyncio
import atexit
import inspect
import weakref
from typing import Any

from lightagent.bridge import on_background_loop, run_sync
from lightagent.toolsets.protocol import BaseToolset, ToolCallContext

__all__ = ["ToolsetOwner", "is_loop_bound", "maybe_await"]


async def maybe_await(value: Any) -> Any:
    """``await value`` when it is awaitable, else ``value``."""
    if inspect.isawaitable(value):
        return await value
    return value


def _has_lifecycle(toolset: Any) -> bool:
    enter = getattr(type(toolset), "__aenter__", None)
    return enter is not None and enter is not BaseToolset.__aenter__


def is_loop_bound(toolset: Any) -> bool:
    """Whether ``toolset`` must live on one owner task (see :class:`ToolsetOwner`)."""
    flag = getattr(toolset, "loop_bound", None)
    if flag is not None:
        return bool(flag)
    return _has_lifecycle(toolset)


class ToolsetOwner:
    """Enters, calls and exits one toolset; any thread and any event loop may use it.

    ``open``/``aopen`` are idempotent (a toolset is also opened on its first listing or
    call); ``close``/``aclose`` exit it (a later use opens it again).
    """

    def __init__(self, toolset: Any) -> None:
        self.toolset = toolset
        self.loop_bound = is_loop_bound(toolset)
        self.state = "new"  # new | open | closed | failed
        self.error: BaseException | None = None
        # loop-bound state, touched only on the background loop
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[None] | None = None
        self._stop: asyncio.Event | None = None

    # -- loop-bound: everything below runs on the background loop -----------------------
    async def _open_here(self) -> None:
        if self._ready is not None and (self._task is not None and not self._task.done()):
            await asyncio.shield(self._ready)
            return
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()
        stop = asyncio.Event()
        self._ready, self._stop = ready, stop
        # The task must not hold the owner: a dropped, unclosed agent is then collected,
        # and its finalizer asks the task to exit the toolset (in the task that entered it).
        task = loop.create_task(_own(self.toolset, ready, stop), name="lightagent-toolset-owner")
        self._task = task
        _tasks[task] = stop
        task.add_done_callback(_forget)
        weakref.finalize(self, _request_stop, loop, stop)
        try:
            await asyncio.shield(ready)
        except BaseException as exc:
            self.state, self.error = "failed", exc
            self._ready = None
            raise
        self.state, self.error = "open", None

    async def _close_here(self) -> None:
        task, stop = self._task, self._stop
        self._task = self._ready = self._stop = None
        if task is None:
            return
        if stop is not None:
            stop.set()
        try:
            await task
        finally:
            self.state = "closed"

    async def _call_here(self, name: str, arguments: dict[str, Any], context: Any) -> Any:
        await self._open_here()
        return await maybe_await(self.toolset.call_tool(name, arguments, context))

    async def _list_here(self) -> Any:
        await self._open_here()
        return await maybe_await(self.toolset.list_tools())

    # -- static ---------------------------------------------------------------------------
    async def _static_open(self) -> None:
        if self.state == "open":
            return
        if _has_lifecycle(self.toolset):
            await self.toolset.__aenter__()
        self.state = "open"

    async def _static_close(self) -> None:
        if self.state != "open":
            return
        self.state = "closed"
        if _has_lifecycle(self.toolset):
            await self.toolset.__aexit__(None, None, None)

    # -- public ---------------------------------------------------------------------------
    async def aopen(self) -> None:
        """Enter the toolset (from any event loop)."""
        if self.loop_bound:
            await on_background_loop(self._open_here())
        else:
            await self._static_open()

    def open(self) -> None:
        """Enter the toolset (from sync code)."""
        if self.loop_bound:
            run_sync(self._open_here())
        elif self.state != "open":
            if _has_lifecycle(self.toolset):
                run_sync(self._static_open())
            else:
                self.state = "open"

    async def aclose(self) -> None:
        """Exit the toolset (from any event loop)."""
        if self.loop_bound:
            if self._task is not None:
                await on_background_loop(self._close_here())
        else:
            await self._static_close()

    def close(self) -> None:
        """Exit the toolset (from sync code, any thread but the background loop's)."""
        if self.loop_bound:
            if self._task is not None:
                run_sync(self._close_here())
        elif self.state == "open":
            if _has_lifecycle(self.toolset):
                run_sync(self._static_close())
            else:
                self.state = "closed"

    async def alist(self) -> Any:
        """The toolset's tool definitions (opening it first when needed)."""
        if self.loop_bound:
            return await on_background_loop(self._list_here())
        if self.state != "open":
            await self._static_open()
        return await maybe_await(self.toolset.list_tools())

    def list(self) -> Any:
        """Sync :meth:`alist`."""
        if self.loop_bound:
            return run_sync(self._list_here())
        if self.state != "open":
            self.open()
        result = self.toolset.list_tools()
        return run_sync(maybe_await(result)) if inspect.isawaitable(result) else result

    async def acall(self, name: str, arguments: dict[str, Any], context: ToolCallContext) -> Any:
        """Call one tool; a loop-bound toolset is called on its owner's loop."""
        if self.loop_bound:
            return await on_background_loop(self._call_here(name, arguments, context))
        if self.state != "open":
            await self._static_open()
        return await maybe_await(self.toolset.call_tool(name, arguments, context))


async def _own(toolset: Any, ready: asyncio.Future[None], stop: asyncio.Event) -> None:
    """The owner task: enter ``toolset``, wait for ``stop``, exit it, all in this one task."""
    try:
        await toolset.__aenter__()
    except BaseException as exc:
        if not ready.done():
            ready.set_exception(exc)
        return
    ready.set_result(None)
    try:
        await stop.wait()
    finally:
        # Exit in the task that entered: anyio cancel scopes and task groups require it.
        await toolset.__aexit__(None, None, None)


#: Live owner tasks and their stop events (touched on the background loop only); the
#: strong reference keeps a pending task from being garbage-collected mid-wait.
_tasks: dict[asyncio.Task[None], asyncio.Event] = {}


def _forget(task: asyncio.Task[None]) -> None:
    _tasks.pop(task, None)
    if not task.cancelled():
        task.exception()  # marked retrieved: an exit error reaches whoever awaits the close


def _request_stop(loop: asyncio.AbstractEventLoop, stop: asyncio.Event) -> None:
    if not loop.is_closed():
        try:
            loop.call_soon_threadsafe(stop.set)
        except RuntimeError:  # the loop closed meanwhile
            pass


async def _stop_all(timeout: float) -> None:
    tasks = list(_tasks)
    for stop in list(_tasks.values()):
        stop.set()
    if tasks:
        await asyncio.wait(tasks, timeout=timeout)


@atexit.register
def _close_at_exit() -> None:
    """Exit loop-bound toolsets nobody closed, while the background loop still runs."""
    from lightagent import bridge

    if bridge._loop is None or not _tasks:
        return
    try:
        bridge.run_sync(_stop_all(5.0))
    except Exception:  # best effort at interpreter exit
        pass
