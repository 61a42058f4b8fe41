"""Blocking calls off the event loop, on threads kept for them: :func:`run_blocking`.

``asyncio.to_thread`` pays, on every call, for a ``concurrent.futures`` future chained to
an asyncio one and the executor's bookkeeping. A durable store commit is short enough (a
fraction of a millisecond) for that to show, so the stores' async paths (LightFlow steps,
LightDAG attempts, the session log) hand their calls here instead: one queue put out, one
``call_soon_threadsafe`` back. A thread is started only when every kept thread is busy, so
concurrent calls never wait for each other below the cap; idle threads block on the queue
and cost nothing.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["MAX_BLOCKING_THREADS", "run_blocking"]

T = TypeVar("T")

MAX_BLOCKING_THREADS = 64
"""Threads kept at most; past it a call waits in the queue for the first free one."""

_Job = tuple[contextvars.Context, Callable[..., Any], tuple[Any, ...], dict[str, Any], Any, Any]


class _Threads:
    """Daemon threads taking blocking calls from one queue."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0
        self._count = 0

    def submit(self, job: _Job) -> None:
        with self._lock:
            if self._idle:
                self._idle -= 1  # that thread is spoken for
            elif self._count < MAX_BLOCKING_THREADS:
                self._count += 1
                threading.Thread(target=self._work, name="lightagent-blocking", daemon=True).start()
        self._jobs.put(job)

    def _work(self) -> None:
        while True:
            ctx, fn, args, kwargs, loop, future = self._jobs.get()
            try:
                result = ctx.run(fn, *args, **kwargs)
            except BaseException as exc:  # handed to the awaiting task, never lost here
                _deliver(loop, future, None, exc)
            else:
                _deliver(loop, future, result, None)
            # Drop the references before waiting: an idle thread must not keep a
            # finished call's arguments or result alive.
            del ctx, fn, args, kwargs, loop, future
            with self._lock:
                self._idle += 1


def _deliver(loop: Any, future: Any, result: Any, exc: BaseException | None) -> None:
    try:
        loop.call_soon_threadsafe(_settle, future, result, exc)
    except RuntimeError:
        pass  # the loop is closed: nobody waits for this result any more


def _settle(future: asyncio.Future[Any], result: Any, exc: BaseException | None) -> None:
    if future.cancelled():
        return
    if exc is not None:
        future.set_exception(exc)
    else:
        future.set_result(result)


_THREADS = _Threads()


def _after_fork() -> None:
    # A forked child has none of its parent's threads: counting them would leave a call
    # queued for a thread that does not exist.
    global _THREADS
    _THREADS = _Threads()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


async def run_blocking(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Await ``fn(*args, **kwargs)`` run on a kept thread, with the caller's context variables.

    As with ``asyncio.to_thread``, cancelling the caller does not stop a call already
    running (a commit in flight completes); its result is then dropped.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    _THREADS.submit((contextvars.copy_context(), fn, args, kwargs, loop, future))
    return await future
