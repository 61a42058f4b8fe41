"""A first-come-first-served limit on concurrent runs that works across threads and event loops.

``asyncio.Semaphore`` belongs to one event loop; a manager may be used from the caller's
loop and from the process's background loop (a sync ``agent.run`` whose tool delegates).
:class:`RunSlots` keeps its count under a ``threading.Lock`` and wakes each waiter on its
own loop, in arrival order, handing the freed slot straight to it (no barging).
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from typing import Any, TypeVar

from lightagent.cancellation import CancellationToken

T = TypeVar("T")

__all__ = ["RunSlots", "acquire_unless_cancelled", "await_elsewhere"]


class _Waiter:
    __slots__ = ("future", "granted", "loop")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.future: asyncio.Future[None] = loop.create_future()
        self.granted = False


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class RunSlots:
    """At most ``limit`` holders at once; the others wait in a FIFO queue."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._lock = threading.Lock()
        self._free = limit
        self._waiters: deque[_Waiter] = deque()

    @property
    def in_use(self) -> int:
        """How many slots are held now."""
        with self._lock:
            return self.limit - self._free

    @property
    def waiting(self) -> int:
        """How many callers wait for a slot."""
        with self._lock:
            return len(self._waiters)

    def try_acquire(self) -> bool:
        """Take a slot if one is free and nobody waits before us; never blocks."""
        with self._lock:
            if self._free > 0 and not self._waiters:
                self._free -= 1
                return True
            return False

    async def acquire(self) -> None:
        """Wait for a slot (in arrival order). Cancelling the wait gives up the place in line."""
        if self.try_acquire():
            return
        waiter = _Waiter(asyncio.get_running_loop())
        with self._lock:
            if self._free > 0 and not self._waiters:  # freed meanwhile
                self._free -= 1
                return
            self._waiters.append(waiter)
        try:
            await waiter.future
        except BaseException:
            with self._lock:
                granted = waiter.granted
                if not granted:
                    self._waiters.remove(waiter)
            if granted:  # the slot reached us as we were cancelled: pass it on
                self.release()
            raise

    def release(self) -> None:
        """Give a slot back: to the first waiter, else to the pool."""
        with self._lock:
            if self._waiters:
                waiter = self._waiters.popleft()
                waiter.granted = True
            else:
                self._free += 1
                return
        try:
            waiter.loop.call_soon_threadsafe(_wake, waiter.future)
        except RuntimeError:  # its loop is closed: nobody will take the slot there
            self.release()


async def await_elsewhere(future: asyncio.Future[T]) -> T:
    """Await ``future`` from this loop, even when it belongs to another loop (thread)."""
    if future.get_loop() is asyncio.get_running_loop():
        return await future
    # started on another loop (another thread): wait for it without touching its loop
    return await asyncio.wrap_future(_threadsafe(future))


def _threadsafe(future: asyncio.Future[T]) -> Any:
    import concurrent.futures

    out: concurrent.futures.Future[T] = concurrent.futures.Future()

    def copy(done: asyncio.Future[T]) -> None:
        if done.cancelled():
            out.cancel()
        elif done.exception() is not None:
            out.set_exception(done.exception())  # type: ignore[arg-type]
        else:
            out.set_result(done.result())

    future.get_loop().call_soon_threadsafe(future.add_done_callback, copy)
    return out


async def acquire_unless_cancelled(slots: RunSlots, token: CancellationToken) -> bool:
    """Wait for a slot; False (and no slot held) when ``token`` fires first."""
    loop = asyncio.get_running_loop()
    waiting = asyncio.ensure_future(slots.acquire())

    def stop(_token: CancellationToken) -> None:
        loop.call_soon_threadsafe(waiting.cancel)

    token.on_cancel(stop)
    try:
        await waiting
    except asyncio.CancelledError:
        if token.cancelled:
            return False
        raise
    if token.cancelled:  # fired as the slot arrived: give it back
        slots.release()
        return False
    return True
