"""Deciders written once: generators that yield the calls they need, and their two drivers.

Hooks, guardrails, policies, the capability gate, human approval and resume each decide
in one generator. Where a decision needs a user callback (sync or async) or blocking I/O
it yields a :class:`Call`; :func:`decide` performs it from sync code and :func:`adecide`
on an event loop, then sends the result back, or throws the exception into the
generator at the ``yield`` (so the decider's own ``try`` handles a failing callback).
A decider composes others with ``yield from``. This is how the agent loop itself is
written (:mod:`lightagent.run.machine`); the one sync-to-async bridge is
:mod:`lightagent.bridge`.

A :class:`Call` with a ``timeout`` that expires is thrown in as the builtin
``TimeoutError``. A sync callback with a timeout runs in a worker thread (a thread
cannot be stopped: one that overruns finishes in the background, its result dropped).
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Callable, Generator, Mapping
from typing import Any, TypeVar

from lightagent.bridge import run_private

__all__ = ["Call", "Decider", "adecide", "decide"]

T = TypeVar("T")


class Call:
    """A callback a decider needs performed: ``fn(*args, **kwargs)``, sync or async.

    ``timeout`` bounds it (seconds). ``offload=True`` marks blocking I/O (a store read or
    write): the async driver runs it in a worker thread. ``afn``, when given, is what the
    async driver calls instead (for objects that offer a sync and an async method).
    """

    __slots__ = ("afn", "args", "fn", "kwargs", "offload", "timeout")

    def __init__(
        self,
        fn: Callable[..., Any],
        args: tuple[Any, ...] = (),
        kwargs: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        offload: bool = False,
        afn: Callable[..., Any] | None = None,
    ) -> None:
        self.fn = fn
        self.args = args
        self.kwargs = kwargs or {}
        self.timeout = timeout
        self.offload = offload
        self.afn = afn

    def __repr__(self) -> str:
        name = getattr(self.fn, "__qualname__", type(self.fn).__name__)
        return f"Call({name}, timeout={self.timeout}, offload={self.offload})"


#: A decider: a generator of :class:`Call` s that returns its decision.
Decider = Generator[Call, Any, T]


def decide(decider: Decider[T]) -> T:
    """Run ``decider`` from sync code (async callbacks run on a private loop)."""
    outcome: tuple[Any, BaseException | None] = (None, None)
    while True:
        done, call = _advance(decider, outcome)
        if done:
            return call  # type: ignore[no-any-return]
        outcome = _performed(call)


async def adecide(decider: Decider[T]) -> T:
    """Run ``decider`` on the running event loop (blocking I/O goes to a worker thread)."""
    outcome: tuple[Any, BaseException | None] = (None, None)
    while True:
        done, call = _advance(decider, outcome)
        if done:
            return call  # type: ignore[no-any-return]
        try:
            outcome = (await _aperform(call), None)
        except asyncio.TimeoutError as exc:  # the builtin TimeoutError on every Python version
            # Only a call with a timeout is timed here; without one the error is the callback's.
            error = exc if call.timeout is None else TimeoutError(f"{call!r} timed out")
            outcome = (None, error)
        except Exception as exc:
            outcome = (None, exc)


def _advance(decider: Decider[Any], outcome: tuple[Any, BaseException | None]) -> tuple[bool, Any]:
    """Send the last call's result (or throw its error) in: ``(True, decision)`` when done."""
    value, error = outcome
    try:
        return False, decider.send(value) if error is None else decider.throw(error)
    except StopIteration as stop:
        return True, stop.value


def _performed(call: Call) -> tuple[Any, BaseException | None]:
    try:
        return _perform(call), None
    except Exception as exc:
        return None, exc


def _perform(call: Call) -> Any:
    fn, timeout = call.fn, call.timeout
    if timeout is None:
        result = fn(*call.args, **call.kwargs)
    elif inspect.iscoroutinefunction(fn):
        return run_private(_bounded(fn(*call.args, **call.kwargs), timeout))
    else:
        result = _threaded(call, timeout)
    if inspect.isawaitable(result):
        return run_private(_bounded(result, timeout))
    return result


async def _aperform(call: Call) -> Any:
    fn, timeout = call.afn or call.fn, call.timeout
    if call.offload:
        result = await asyncio.to_thread(fn, *call.args, **call.kwargs)
    elif timeout is None or inspect.iscoroutinefunction(fn):
        result = fn(*call.args, **call.kwargs)
    else:
        result = await asyncio.wait_for(asyncio.to_thread(fn, *call.args, **call.kwargs), timeout)
    if inspect.isawaitable(result):
        return await (result if timeout is None else asyncio.wait_for(result, timeout))
    return result


async def _bounded(awaitable: Any, timeout: float | None) -> Any:
    if timeout is None:
        return await awaitable
    try:
        return await asyncio.wait_for(awaitable, timeout)
    except asyncio.TimeoutError:
        raise TimeoutError(f"timed out after {timeout}s") from None


def _threaded(call: Call, timeout: float) -> Any:
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = call.fn(*call.args, **call.kwargs)
        except BaseException as exc:
            box["error"] = exc

    name = getattr(call.fn, "__name__", "callback")
    thread = threading.Thread(target=target, name=f"lightagent-decider-{name}", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise TimeoutError(f"{name} exceeded {timeout}s")
    if "error" in box:
        raise box["error"]
    return box.get("value")
