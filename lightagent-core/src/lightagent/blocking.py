"""Blocking calls off the event loop, on threads kept for them: :func:`run_blocking`.

``asyncio.to_thread`` pays, on every call, for a ``concurrent.futures`` future chained to
an asyncio one and the executor's bookkeeping. A durable store commit is short enough (a
fraction of a millisecond) for that to show, so the stores' async paths (LightFlow steps,
LightDAG attempts, the session log) hand their calls here instead: one queue put out, and
back one byte written to a pipe the loop watches (a reader callback settles every call
that finished). ``call_soon_threadsafe`` would cost a socket send, two receives and a
callback handle per call; it remains the way back on loops that cannot watch a pipe. A
thread is started only when every kept thread is busy, so concurrent calls never wait
for each other below the cap; idle threads block on the queue and cost nothing.
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import os
import queue
import threading
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["MAX_BLOCKING_THREADS", "run_blocking"]

T = TypeVar("T")

MAX_BLOCKING_THREADS = 64
"""Threads kept at most; past it a call waits in the queue for the first free one."""

_Deliver = Callable[["asyncio.Future[Any]", Any, "BaseException | None"], None]
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
            ctx, fn, args, kwargs, deliver, future = self._jobs.get()
            try:
                result = ctx.run(fn, *args, **kwargs)
            except BaseException as exc:  # handed to the awaiting task, never lost here
                deliver(future, None, exc)
            else:
                deliver(future, result, None)
            # Drop the references before waiting: an idle thread must not keep a
            # finished call's arguments or result alive.
            del ctx, fn, args, kwargs, deliver, future
            with self._lock:
                self._idle += 1


class _Channel:
    """The way back to one event loop: finished calls queued, a pipe byte to wake it.

    Holds no reference to the loop, so the loop can be collected; the pipe is closed then.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._read, self._write = os.pipe()
        self._done: collections.deque[tuple[Any, Any, BaseException | None]] = collections.deque()
        self._lock = threading.Lock()
        self._open = True
        weakref.finalize(loop, self.close)
        try:
            os.set_blocking(self._read, False)
            os.set_blocking(self._write, False)
            loop.add_reader(self._read, self._drain)
        except BaseException:
            self.close()
            raise

    def deliver(self, future: Any, result: Any, exc: BaseException | None) -> None:
        """Queue a finished call and wake the loop (from a kept thread)."""
        self._done.append((future, result, exc))
        with self._lock:  # never write to a descriptor number that close() gave back
            if self._open:
                try:
                    os.write(self._write, b"\0")
                except BlockingIOError:
                    pass  # the pipe is full: the loop is woken already

    def _drain(self) -> None:
        try:
            os.read(self._read, 65536)
        except BlockingIOError:
            pass  # woken for calls an earlier drain settled already
        while self._done:
            _settle(*self._done.popleft())

    def close(self) -> None:
        """Close the pipe (when the loop is gone)."""
        with self._lock:
            if self._open:
                self._open = False
                os.close(self._read)
                os.close(self._write)


def _settle(future: asyncio.Future[Any], result: Any, exc: BaseException | None) -> None:
    if future.cancelled():
        return
    if exc is not None:
        future.set_exception(exc)
    else:
        future.set_result(result)


def _call_soon(loop: asyncio.AbstractEventLoop) -> _Deliver:
    def deliver(future: Any, result: Any, exc: BaseException | None) -> None:
        try:
            loop.call_soon_threadsafe(_settle, future, result, exc)
        except RuntimeError:
            pass  # the loop is closed: nobody waits for this result any more

    return deliver


_THREADS = _Threads()
# Per loop: its channel, or None when it cannot watch a pipe (Windows, a loop without
# add_reader); those get results back through call_soon_threadsafe.
_CHANNELS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Channel | None] = (
    weakref.WeakKeyDictionary()
)


def _deliver_for(loop: asyncio.AbstractEventLoop) -> _Deliver:
    try:
        channel = _CHANNELS[loop]
    except TypeError:  # a loop that takes no weak reference: no channel to tie to it
        return _call_soon(loop)
    except KeyError:
        channel = None
        if os.name == "posix":  # a Windows pipe cannot be watched by a selector
            try:
                channel = _Channel(loop)
            except (NotImplementedError, OSError):
                channel = None
        _CHANNELS[loop] = channel
    return channel.deliver if channel is not None else _call_soon(loop)


def _after_fork() -> None:
    # A forked child has none of its parent's threads: counting them would leave a call
    # queued for a thread that does not exist. Its loops get channels of their own.
    global _THREADS, _CHANNELS
    _THREADS = _Threads()
    _CHANNELS = weakref.WeakKeyDictionary()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


async def run_blocking(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Await ``fn(*args, **kwargs)`` run on a kept thread, with the caller's context variables.

    As with ``asyncio.to_thread``, cancelling the caller does not stop a call already
    running (a commit in flight completes); its result is then dropped.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    _THREADS.submit((contextvars.copy_context(), fn, args, kwargs, _deliver_for(loop), future))
    return await future
