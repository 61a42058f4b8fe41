"""Blocking calls off the caller's thread, on threads kept for them: :func:`run_blocking`.

``asyncio.to_thread`` pays, on every call, for a ``concurrent.futures`` future chained to
an asyncio one and the executor's bookkeeping. A durable store commit is short enough (a
fraction of a millisecond) for that to show, so the stores' async paths (LightFlow steps,
LightDAG attempts, the session log) hand their calls here instead: one queue put out, and
back one byte written to a pipe the loop watches (a reader callback settles every call
that finished). ``call_soon_threadsafe`` would cost a socket send, two receives and a
callback handle per call; it remains the way back on loops that cannot watch a pipe. A
thread is started only when every kept thread is busy, so concurrent calls never wait
for each other below the cap; idle threads block on the queue and cost nothing.

:class:`ThreadLane` is that mechanism as an object, for work that needs threads of its own
(sync tools, which may hang, must not take the threads store commits rely on) or that
waits for its results without an event loop (the sync tool dispatcher).
:func:`loop_delivery` is the way back to an event loop, for any lane.
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

__all__ = [
    "MAX_BLOCKING_THREADS",
    "Deliver",
    "ThreadLane",
    "deliver_to_future",
    "loop_delivery",
    "run_blocking",
]

T = TypeVar("T")

MAX_BLOCKING_THREADS = 64
"""Threads kept at most for :func:`run_blocking`; past it a call waits for the first free one."""

#: Called on the worker thread with ``(token, result, None)`` or ``(token, None, exception)``.
Deliver = Callable[[Any, Any, "BaseException | None"], None]

_Job = tuple[contextvars.Context, Callable[..., Any], tuple[Any, ...], dict[str, Any], Deliver, Any]

_LANES: weakref.WeakSet[ThreadLane] = weakref.WeakSet()


class ThreadLane:
    """Daemon threads named ``name`` taking calls from one queue, at most ``limit`` of them.

    :meth:`submit` hands a call over and returns at once; the thread that ran it reports
    the result through the ``deliver`` callable it was given.
    """

    def __init__(self, name: str, limit: int) -> None:
        self.name = name
        self.limit = limit
        self._reset()
        _LANES.add(self)

    def _reset(self) -> None:
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0
        self._count = 0
        self._closed = False

    def submit(
        self,
        fn: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        deliver: Deliver,
        token: Any,
    ) -> None:
        """Run ``fn(*args, **kwargs)`` on a kept thread, in a copy of the caller's context;
        the thread then calls ``deliver(token, result, None)`` or ``deliver(token, None, exc)``."""
        with self._lock:
            if self._closed:
                raise RuntimeError(f"the thread lane {self.name!r} is closed")
            if self._idle:
                self._idle -= 1  # that thread is spoken for
            elif self._count < self.limit:
                self._count += 1
                threading.Thread(target=self._work, name=self.name, daemon=True).start()
        self._jobs.put((contextvars.copy_context(), fn, args, kwargs, deliver, token))

    def close(self) -> None:
        """Let the kept threads end once idle (calls handed over still run); no more calls."""
        with self._lock:
            count, self._count, self._closed = self._count, 0, True
        for _ in range(count):
            self._jobs.put(None)

    def _work(self) -> None:
        jobs = self._jobs
        while True:
            job = jobs.get()
            if job is None:
                return
            ctx, fn, args, kwargs, deliver, token = job
            try:
                result = ctx.run(fn, *args, **kwargs)
            except BaseException as exc:  # handed to the waiting caller, never lost here
                deliver(token, None, exc)
            else:
                deliver(token, result, None)
            # Drop the references before waiting: an idle thread must not keep a
            # finished call's arguments or result alive.
            del job, ctx, fn, args, kwargs, deliver, token
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
        """Queue a finished call and wake the loop (a :data:`Deliver`, from a kept thread)."""
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


def deliver_to_future(token: Any, result: Any, exc: BaseException | None) -> None:
    """A :data:`Deliver` for ``token = (loop, asyncio_future)``: settles it on its loop."""
    loop, future = token
    try:
        loop.call_soon_threadsafe(_settle, future, result, exc)
    except RuntimeError:
        pass  # the loop is closed: nobody waits for this result any more


def _settle(future: asyncio.Future[Any], result: Any, exc: BaseException | None) -> None:
    if future.done():  # cancelled, or given up on (a timeout)
        return
    if exc is not None:
        future.set_exception(exc)
    else:
        future.set_result(result)


_THREADS = ThreadLane("lightagent-blocking", MAX_BLOCKING_THREADS)
# Per loop: its channel, or None when it cannot watch a pipe (Windows, a loop without
# add_reader); those get results back through call_soon_threadsafe.
_CHANNELS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Channel | None] = (
    weakref.WeakKeyDictionary()
)


def loop_delivery(
    loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any]
) -> tuple[Deliver, Any]:
    """``(deliver, token)`` for :meth:`ThreadLane.submit` that settle ``future`` on ``loop``."""
    try:
        channel = _CHANNELS[loop]
    except TypeError:  # a loop that takes no weak reference: no channel to tie to it
        return deliver_to_future, (loop, future)
    except KeyError:
        channel = None
        if os.name == "posix":  # a Windows pipe cannot be watched by a selector
            try:
                channel = _Channel(loop)
            except (NotImplementedError, OSError):
                channel = None
        _CHANNELS[loop] = channel
    if channel is None:
        return deliver_to_future, (loop, future)
    return channel.deliver, future


def _after_fork() -> None:
    # A forked child has none of its parent's threads: counting them would leave a call
    # queued for a thread that does not exist. Its loops get channels of their own.
    global _CHANNELS
    for lane in list(_LANES):
        lane._reset()
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
    _THREADS.submit(fn, args, kwargs, *loop_delivery(loop, future))
    return await future
