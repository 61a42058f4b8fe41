"""Blocking store calls off the event loop, on threads kept for them.

``asyncio.to_thread`` pays for a ``concurrent.futures`` future chained to an asyncio one,
the executor's bookkeeping and a wake-up through it on each call; a durable step commit
is short enough (a fraction of a millisecond) for that to show. Here a call is one queue
put, and its result comes back by one ``call_soon_threadsafe``. A thread is started only
when every kept thread is busy (parallel branches, concurrent runs), so calls never wait
for each other here; idle threads wait on the queue and cost nothing.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import queue
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["run_blocking"]

_MAX_THREADS = 32

_Job = tuple[contextvars.Context, Callable[..., Any], tuple[Any, ...], dict[str, Any], Any, Any]


class _Workers:
    """Daemon threads that take blocking calls from one queue."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0
        self._threads = 0

    def submit(self, job: _Job) -> None:
        with self._lock:
            if self._idle:
                self._idle -= 1  # that thread is spoken for
            elif self._threads < _MAX_THREADS:
                self._threads += 1
                threading.Thread(target=self._work, name="lightflow-store", daemon=True).start()
            # else: all threads busy and at the cap; the job waits its turn in the queue
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


_WORKERS = _Workers()


def _after_fork() -> None:
    # A forked child has none of the parent's threads: counting them would leave a call
    # queued for a thread that does not exist.
    global _WORKERS
    _WORKERS = _Workers()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


async def run_blocking(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` on a store thread (with this task's context variables).

    Like ``asyncio.to_thread``: cancelling the caller does not stop a call already running
    (a commit in flight completes); its result is then dropped.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    _WORKERS.submit((contextvars.copy_context(), fn, args, kwargs, loop, future))
    return await future
