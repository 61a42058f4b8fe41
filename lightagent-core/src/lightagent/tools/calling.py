"""How one tool function runs: inline, on a kept tool thread, or on the event loop.

Sync tools run on :data:`TOOL_THREADS`, their own :class:`~lightagent.blocking.ThreadLane`
(apart from the store threads of ``run_blocking``, so hung tools never hold those up). A
call handed to a thread carries a :class:`Ticket`: a thread that takes it up after the
dispatcher gave up on it (a timeout) skips it, and one that takes it up after the run was
cancelled reports ``LA-CANCELLED`` instead of running it.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import time
from typing import Any

from lightagent import bridge
from lightagent.blocking import ThreadLane
from lightagent.errors import CancelledError
from lightagent.tools.decorator import Tool
from lightagent.tools.output import format_output, join_items

__all__ = [
    "TOOL_THREADS",
    "Ticket",
    "Timed",
    "ToolExited",
    "cancelled_error",
    "give_up",
    "run_async",
    "run_sync",
    "run_ticket",
    "to_queue",
]

#: The process-wide threads of sync tools. I/O-bound tools dominate, and abandoned
#: (timed-out) calls keep their thread, hence many; a thread starts only when all are busy.
TOOL_THREADS = ThreadLane("lightagent-tool", max(32, (os.cpu_count() or 1) * 8))


def run_sync(tool: Tool, args: list[Any], kwargs: dict[str, Any]) -> str:
    """Call a sync tool (inline or on a tool thread) and turn its result into text."""
    result = tool.func(*args, **kwargs)
    if inspect.isgenerator(result):
        return join_items(list(result))
    if inspect.isawaitable(result):  # a sync callable that returned a coroutine
        return format_output(bridge.resolve_sync(result))
    return format_output(result)


def cancelled_error(cancellation: Any) -> CancelledError | None:
    """``LA-CANCELLED`` for a call about to start when ``cancellation`` (``.cancelled``,
    ``.reason``, or ``is_cancelled``) says the run was cancelled, else None."""
    if cancellation is None:
        return None
    flag = getattr(cancellation, "cancelled", None)
    if flag is None:
        flag = getattr(cancellation, "is_cancelled", False)
    if callable(flag):
        flag = flag()
    if not flag:
        return None
    reason = getattr(cancellation, "reason", None)
    return CancelledError(
        "LA-CANCELLED", f"not run: the run was cancelled ({reason or 'no reason given'})"
    )


class Ticket:
    """A sync call handed to a thread, with its run's ``cancellation``; ``abandoned`` once
    nobody waits for its result."""

    __slots__ = ("abandoned", "cancellation")

    def __init__(self, cancellation: Any = None) -> None:
        self.abandoned = False
        self.cancellation = cancellation


#: What a tool thread hands back: ``(text, exception, finished_at)``.
Timed = tuple["str | None", "BaseException | None", float]


def run_ticket(ticket: Ticket, tool: Tool, args: list[Any], kwargs: dict[str, Any]) -> Timed | None:
    """On a tool thread: ``(text, exception, finished_at)``, so latency stays right when the
    result is read late; None, without running, for a call given up before it started."""
    if ticket.abandoned:
        return None
    # It may have waited for a free thread while the run was cancelled.
    stopped = cancelled_error(ticket.cancellation)
    if stopped is not None:
        return None, stopped, time.perf_counter()
    try:
        return run_sync(tool, args, kwargs), None, time.perf_counter()
    except (Exception, SystemExit) as exc:  # a tool's sys.exit() must not end the host
        return None, exc, time.perf_counter()


def to_queue(token: Any, result: Any, exc: BaseException | None) -> None:
    """The sync dispatcher's ``deliver``: ``(index, result, crash)`` into the round's queue."""
    done, index = token
    done.put((index, result, exc))


def give_up(future: asyncio.Future[Any], ticket: Ticket) -> None:
    """The async timeout of a sync call: its result no longer counts (None means that)."""
    ticket.abandoned = True
    if not future.done():
        future.set_result(None)


class ToolExited(Exception):
    """Carries a tool's ``SystemExit`` out of its task (asyncio would re-raise it in the loop)."""

    def __init__(self, original: SystemExit) -> None:
        super().__init__(str(original))
        self.original = original


async def run_async(tool: Tool, args: list[Any], kwargs: dict[str, Any]) -> str:
    """Call an async tool (or a sync one returning an awaitable) on the loop, as text."""
    try:
        result = tool.func(*args, **kwargs)
        if inspect.isasyncgen(result):
            return join_items([item async for item in result])
        if inspect.isawaitable(result):
            result = await result
        if inspect.isgenerator(result):
            return join_items(list(result))
        return format_output(result)
    except SystemExit as exc:
        raise ToolExited(exc) from None
