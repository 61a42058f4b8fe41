"""The process's one long-lived event loop on a background thread: the sync-to-async bridge.

Sync code reaches async work through it (the sync driver's async tools, toolsets that
hold connections), and async code on another loop hands work to it when that work is
bound to this loop. It starts on first use and lives for the process (a daemon thread),
so loop-bound resources (clients, sessions, subprocess pipes) survive between calls.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from lightagent.errors import LightAgentError

__all__ = [
    "background_loop",
    "call_async",
    "call_sync",
    "in_background_loop",
    "on_background_loop",
    "run_sync",
]

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None


def background_loop() -> tuple[asyncio.AbstractEventLoop, threading.Thread]:
    """The running background loop and its thread (started, or restarted if it died)."""
    global _loop, _thread
    with _lock:
        alive = _thread is not None and _thread.is_alive()
        if _loop is None or _loop.is_closed() or not alive:
            loop = asyncio.new_event_loop()
            thread = threading.Thread(
                target=loop.run_forever, name="lightagent-tools-loop", daemon=True
            )
            thread.start()
            _loop, _thread = loop, thread
        assert _thread is not None
        return _loop, _thread


def in_background_loop() -> bool:
    """Whether the caller runs on the background loop's thread."""
    thread = _thread
    return thread is not None and threading.current_thread() is thread


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on the background loop and block until it is done (from sync code).

    Never call it from the background loop's own thread (that would wait on itself):
    it raises ``LA-CONFIG`` instead of deadlocking.
    """
    loop, thread = background_loop()
    if threading.current_thread() is thread:
        coro.close()
        raise LightAgentError(
            "LA-CONFIG",
            "a blocking call was made from the lightagent background event loop",
            hint="Await the async form of this call instead (e.g. `await agent.aclose()`).",
        )
    future = asyncio.run_coroutine_threadsafe(coro, loop)
    while True:  # never wait forever on a loop thread that has died
        try:
            return future.result(timeout=0.5)
        except concurrent.futures.TimeoutError:
            if not thread.is_alive():
                future.cancel()
                raise LightAgentError(
                    "LA-CONFIG",
                    "the lightagent background event loop stopped",
                    hint="Something stopped its event loop; the next call starts a new one.",
                ) from None


async def on_background_loop(coro: Coroutine[Any, Any, T]) -> T:
    """Await ``coro`` on the background loop from any event loop (directly when already there).

    Cancelling the awaiting task cancels the work on the background loop too.
    """
    loop, _ = background_loop()
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:  # pragma: no cover - only awaited from a coroutine
        running = None
    if running is loop:
        return await coro
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, loop))


def call_sync(func: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """Call a sync-or-async ``func`` from sync code (an async one runs on the background loop)."""
    result = func(*args, **kwargs)
    if inspect.isawaitable(result):
        return run_sync(_awaited(result))
    return result


async def call_async(func: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """Call a sync-or-async ``func`` from async code (a sync one runs in a worker thread)."""
    if inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(
        getattr(func, "__call__", None)  # noqa: B004 - objects with an async __call__
    ):
        return await func(*args, **kwargs)
    result = await asyncio.to_thread(func, *args, **kwargs)
    if inspect.isawaitable(result):
        return await result
    return result


async def _awaited(awaitable: Any) -> Any:
    return await awaitable
