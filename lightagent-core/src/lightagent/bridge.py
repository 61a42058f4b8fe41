"""The one sync-to-async bridge: every place where sync code waits for async work.

Two ways, chosen by what the work is bound to:

* :func:`run_sync` runs a coroutine on the process's one long-lived event loop on a
  background thread (started on first use, a daemon thread), so loop-bound resources
  (clients, sessions, subprocess pipes, toolset connections) survive between calls. The
  sync driver's async tools and loop-bound toolsets go there; async code on another
  loop reaches it with :func:`on_background_loop`.
* :func:`run_private` runs a coroutine to completion on a fresh loop of its own: in the
  caller's thread when no loop runs there, else in a helper thread (``run()`` called
  inside a notebook or an async app). Self-contained work goes there: a sync call of an
  async hook, guardrail, policy or reviewer (:mod:`lightagent.deciders`), a sync
  ``LightFlow.run`` / ``LightDAG.run``.

No other module of any distribution starts an event loop for sync callers.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar, cast

from lightagent.errors import LightAgentError

__all__ = [
    "background_loop",
    "call_async",
    "call_sync",
    "in_background_loop",
    "on_background_loop",
    "resolve_sync",
    "run_private",
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


def run_sync(coro: Coroutine[Any, Any, T], *, reentrant: bool = False) -> T:
    """Run ``coro`` on the background loop and block until it is done (from sync code).

    Called from the background loop's own thread it would wait on itself: it raises
    ``LA-CONFIG`` instead of deadlocking, or, with ``reentrant=True`` (work that is not
    bound to that loop, e.g. a batch of async tools re-entered from a tool), runs
    ``coro`` on a private loop (:func:`run_private`).
    """
    loop, thread = background_loop()
    if threading.current_thread() is thread:
        if reentrant:
            return run_private(coro)
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


def run_private(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion on a fresh event loop and return its result (from sync code).

    In this thread when no event loop runs here, else in a helper thread (a loop that
    is running cannot be blocked on). Exceptions, ``KeyboardInterrupt`` included,
    reach the caller.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=target, name="lightagent-sync-bridge", daemon=True)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return cast(T, box.get("value"))


def resolve_sync(value: Any) -> Any:
    """``value``, or what it resolves to when it is awaitable (on a private loop)."""
    if inspect.isawaitable(value):
        return run_private(_awaited(value))
    return value


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
