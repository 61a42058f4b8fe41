"""Run the tool calls of one model turn: validated, concurrent, time-limited, never raising.

Async tools run on the caller's event loop, sync tools on threads kept for them (one
shared :class:`~lightagent.blocking.ThreadLane`). A timed-out async tool is cancelled for
real; a timed-out sync tool cannot be stopped (Python cannot kill a thread), so its call is
abandoned, reported as ``LA-TOOL-TIMEOUT``, and the thread finishes in the background.
Every failure becomes a short ``Error [LA-…] …`` text for the model, with the typed error
in :attr:`ToolOutcome.error`.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import queue
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lightagent import bridge
from lightagent.blocking import ThreadLane, loop_delivery
from lightagent.errors import LightAgentError, ToolError
from lightagent.models.arguments import load_arguments
from lightagent.models.base import ToolCall
from lightagent.tools.calling import (
    TOOL_THREADS,
    Ticket,
    Timed,
    ToolExited,
    cancelled_error,
    give_up,
    run_async,
    run_sync,
    run_ticket,
    to_queue,
)
from lightagent.tools.decorator import Tool
from lightagent.tools.output import error_text, wrap_exception
from lightagent.tools.registry import ToolRegistry
from lightagent.utf8 import utf8

__all__ = ["AsyncToolDispatcher", "OnOutcome", "ToolOutcome", "missing_tool"]

#: Called with each outcome of a call that ran, as soon as it is known (completion order).
OnOutcome = Callable[["ToolOutcome"], Any]
#: A sync call on its thread: what it runs, its ticket, when it started.
_Pending = tuple["_Prepared", Ticket, float]


@dataclass
class ToolOutcome:
    """The result of one tool call as the model will see it."""

    call_id: str
    name: str
    output: str
    error: LightAgentError | None = None
    latency_ms: float = 0.0
    #: The validated (coerced, JSON-safe) arguments; the raw ones when validation failed.
    arguments: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        """True when the tool ran and returned."""
        return self.error is None

    def to_message(self) -> dict[str, Any]:
        """The OpenAI ``tool`` message carrying this outcome."""
        return {"role": "tool", "tool_call_id": self.call_id, "content": self.output}


def missing_tool(call: ToolCall, available: Sequence[str] = ()) -> ToolOutcome:
    """The ``LA-TOOL-NOT-FOUND`` outcome of a call to a tool that is not offered."""
    names = list(available)
    listed = ", ".join(names[:20]) + (" ..." if len(names) > 20 else "")
    error = ToolError(
        "LA-TOOL-NOT-FOUND",
        f"no tool named `{call.name}`; available: {listed or 'none'}",
        details={"tool": call.name},
    )
    return ToolOutcome(call.id, call.name, error_text(error), error)


def _as_call(call: Any, index: int) -> ToolCall:
    if isinstance(call, ToolCall):
        return call
    if isinstance(call, Mapping):
        function: Mapping[str, Any] = (
            call["function"] if isinstance(call.get("function"), Mapping) else call
        )
        arguments = function.get("arguments", "{}")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False, default=str)
        return ToolCall(
            id=str(call.get("id") or f"call_{index}"),
            name=str(function.get("name") or ""),
            arguments=arguments,
            index=index,
        )
    raise ToolError(
        "LA-TOOL",
        f"a tool call must be a ToolCall or a dict, got {type(call).__name__}",
        hint="Pass the ToolCall objects of the model response.",
    )


def _fallback_key(call: ToolCall) -> str:
    text = f"{call.id}\x00{call.name}\x00{call.arguments}"
    return hashlib.sha256(utf8(text)).hexdigest()


@dataclass
class _Prepared:
    call: ToolCall
    tool: Tool
    args: list[Any]
    kwargs: dict[str, Any]
    arguments: dict[str, Any]
    timeout: float | None
    cancellation: Any = None


def _async_notifier(on_outcome: OnOutcome) -> Callable[[ToolOutcome], Any]:
    """Serialize ``on_outcome`` calls; a sync callback goes to a thread, off the loop."""
    lock = asyncio.Lock()
    is_async = inspect.iscoroutinefunction(on_outcome)

    async def notify(outcome: ToolOutcome) -> None:
        async with lock:
            if is_async:
                await on_outcome(outcome)
            else:
                await asyncio.to_thread(on_outcome, outcome)

    return notify


def _registry_of(
    function_mappings: Mapping[str, Any], function_info: Mapping[str, Any] | None
) -> ToolRegistry:
    """The seeds' form ``AsyncToolDispatcher(function_mappings, function_info)`` as a registry."""
    from lightagent.tools.decorator import from_tool_info

    if not isinstance(function_mappings, Mapping):
        from lightagent.errors import ConfigurationError

        raise ConfigurationError(
            "LA-CONFIG",
            f"AsyncToolDispatcher needs a ToolRegistry or {{name: callable}}, got {type(function_mappings).__name__}",
            hint="Pass agent.tools, or the seeds' (function_mappings, function_info) dicts.",
        )
    registry = ToolRegistry()
    infos = function_info or {}
    for name, func in function_mappings.items():
        info = infos.get(name)
        if isinstance(info, Mapping):
            info = {"tool_name": name, **info}
            registry.register_tool(from_tool_info(func, info))
        else:
            registry.register_tool(func, infer=True)
    return registry


class AsyncToolDispatcher:
    """Runs a model turn's tool calls concurrently and returns one outcome per call, in order.

    ``default_timeout`` applies to tools without their own ``timeout`` (``None``: no
    limit). Sync tools share one lazily created thread pool (process-wide unless
    ``max_workers`` asks for a private one).
    """

    def __init__(
        self,
        registry: ToolRegistry | Mapping[str, Any],
        function_info: Mapping[str, Any] | None = None,
        *,
        default_timeout: float | None = 60.0,
        max_workers: int | None = None,
        max_output_chars: int | None = None,
    ) -> None:
        if default_timeout is not None and not (
            isinstance(default_timeout, (int, float)) and default_timeout > 0
        ):
            from lightagent.errors import ConfigurationError

            raise ConfigurationError(
                "LA-CONFIG",
                f"default_timeout must be a positive number or None, got {default_timeout!r}",
            )
        if not isinstance(registry, ToolRegistry):
            registry = _registry_of(registry, function_info)
        self.registry = registry
        self.default_timeout = default_timeout
        self.max_workers = max_workers
        self.max_output_chars = max_output_chars
        self._private: ThreadLane | None = None
        self._lock = threading.Lock()

    # -- resources -----------------------------------------------------------------
    def _lane(self) -> ThreadLane:
        if self.max_workers is None:
            return TOOL_THREADS
        with self._lock:
            if self._private is None:
                lane = self._private = ThreadLane("lightagent-tool", self.max_workers)
                # A dispatcher dropped without close() must not leave its threads behind.
                weakref.finalize(self, lane.close)
            return self._private

    def close(self) -> None:
        """Release private threads (``max_workers``); the shared ones live for the process."""
        with self._lock:
            lane, self._private = self._private, None
        if lane is not None:
            lane.close()

    # -- preparation ---------------------------------------------------------------------
    def _prepare(
        self,
        call: ToolCall,
        registry: ToolRegistry,
        cancellation: Any,
        idempotency_keys: Mapping[str, str] | None,
        context: Any,
    ) -> _Prepared | ToolOutcome:
        stopped = cancelled_error(cancellation)
        if stopped is not None:
            return ToolOutcome(call.id, call.name, error_text(stopped), stopped)
        tool = registry.get(call.name)
        if tool is None:
            return missing_tool(call, registry.names())
        try:
            kwargs, clean = tool.prepare_arguments(call.arguments)
        except LightAgentError as error:
            raw = None
            try:
                parsed = load_arguments(call.arguments) if call.arguments else {}
                raw = parsed if isinstance(parsed, dict) else None
            except ValueError:
                pass
            return ToolOutcome(call.id, call.name, error_text(error), error, arguments=raw)
        for name, what in tool.injected.items():
            if what == "idempotency_key":
                keys = idempotency_keys or {}
                kwargs[name] = keys.get(call.id) or _fallback_key(call)
            elif what == "context":
                kwargs[name] = context
        args, kwargs = tool.bind(kwargs)
        timeout = tool.timeout if tool.timeout is not None else self.default_timeout
        return _Prepared(call, tool, args, kwargs, clean, timeout, cancellation)

    def _finish(
        self, prepared: _Prepared, output: str, started: float, ended: float | None = None
    ) -> ToolOutcome:
        limit = self.max_output_chars
        if limit is not None and len(output) > limit:
            output = f"{output[:limit]}\n...[truncated {len(output) - limit} characters]"
        latency = ((ended or time.perf_counter()) - started) * 1000.0
        call = prepared.call
        return ToolOutcome(call.id, call.name, output, None, latency, prepared.arguments)

    def _failed(
        self,
        prepared: _Prepared,
        error: LightAgentError,
        started: float,
        ended: float | None = None,
    ) -> ToolOutcome:
        latency = ((ended or time.perf_counter()) - started) * 1000.0
        call = prepared.call
        return ToolOutcome(
            call.id, call.name, error_text(error), error, latency, prepared.arguments
        )

    def _timeout_error(self, prepared: _Prepared) -> ToolError:
        kind = (
            "abandoned (a sync tool cannot be stopped)"
            if not prepared.tool.is_async
            else "cancelled"
        )
        return ToolError(
            "LA-TOOL-TIMEOUT",
            f"tool `{prepared.tool.name}` did not finish within {prepared.timeout:g}s and was {kind}",
            details={"tool": prepared.tool.name, "timeout": prepared.timeout},
        )

    # -- async driver ----------------------------------------------------------------------
    async def _arun_one(self, prepared: _Prepared) -> ToolOutcome:
        started = time.perf_counter()
        tool = prepared.tool
        if not tool.is_async:
            return await self._athread(prepared, started)
        try:
            work: Awaitable[Any] = run_async(tool, prepared.args, prepared.kwargs)
            output = await asyncio.wait_for(work, prepared.timeout)
        except asyncio.TimeoutError:
            return self._failed(prepared, self._timeout_error(prepared), started)
        except asyncio.CancelledError:
            raise
        except ToolExited as exc:
            return self._failed(prepared, wrap_exception(tool.name, exc.original), started)
        except (Exception, SystemExit) as exc:  # a tool's sys.exit() must not end the host
            return self._failed(prepared, wrap_exception(tool.name, exc), started)
        return self._finish(prepared, output, started)

    async def _athread(self, prepared: _Prepared, started: float) -> ToolOutcome:
        """A sync tool on a tool thread, awaited: one queue put out, back by :func:`loop_delivery`,
        and a loop timer (not ``wait_for``'s extra task) for the timeout."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Timed | None] = loop.create_future()
        ticket = Ticket(prepared.cancellation)
        work = (ticket, prepared.tool, prepared.args, prepared.kwargs)
        self._lane().submit(run_ticket, work, {}, *loop_delivery(loop, future))
        timeout = prepared.timeout
        timer = None if timeout is None else loop.call_later(timeout, give_up, future, ticket)
        try:
            timed = await future  # a crash (not Exception or SystemExit) propagates
        except asyncio.CancelledError:
            ticket.abandoned = True
            raise
        finally:
            if timer is not None:
                timer.cancel()
        if timed is None:
            return self._failed(prepared, self._timeout_error(prepared), started)
        return self._settled(prepared, timed, started)

    async def arun_calls(
        self,
        calls: Sequence[ToolCall | Mapping[str, Any]],
        *,
        cancellation: Any = None,
        registry: ToolRegistry | None = None,
        idempotency_keys: Mapping[str, str] | None = None,
        context: Any = None,
        on_outcome: OnOutcome | None = None,
    ) -> list[ToolOutcome]:
        """Run ``calls`` concurrently; one :class:`ToolOutcome` per call, in call order.

        ``cancellation`` (``.cancelled``/``.reason``) is checked before each call;
        ``registry`` overrides the dispatcher's (e.g. a per-run overlay);
        ``idempotency_keys`` maps call ids to the key injected into tools that declare
        an ``idempotency_key`` parameter; ``context`` goes to ``RunContext`` parameters;
        ``on_outcome`` hears each call that ran as soon as it finishes (one at a time; an
        async callable is awaited, a sync one runs in a worker thread).
        """
        reg = registry if registry is not None else self.registry
        notify = _async_notifier(on_outcome) if on_outcome is not None else None

        async def one(index: int, raw: Any) -> ToolOutcome:
            call = _as_call(raw, index)
            prepared = self._prepare(call, reg, cancellation, idempotency_keys, context)
            if isinstance(prepared, ToolOutcome):
                return prepared
            outcome = await self._arun_one(prepared)
            if notify is not None:
                await notify(outcome)
            return outcome

        if len(calls) == 1:
            return [await one(0, calls[0])]
        return list(await asyncio.gather(*(one(i, c) for i, c in enumerate(calls))))

    async def arun_call(self, call: ToolCall | Mapping[str, Any], **options: Any) -> ToolOutcome:
        """Run one call (see :meth:`arun_calls` for ``options``)."""
        return (await self.arun_calls([call], **options))[0]

    async def dispatch(self, name: str, params: Any = None) -> str:
        """The seeds' entry point: run tool ``name`` with ``params`` and return the text."""
        arguments = params if isinstance(params, str) else json.dumps(params or {}, default=str)
        outcome = await self.arun_call(ToolCall(id="call_dispatch", name=name, arguments=arguments))
        return outcome.output

    # -- sync driver -------------------------------------------------------------------------
    def run_calls(
        self,
        calls: Sequence[ToolCall | Mapping[str, Any]],
        *,
        cancellation: Any = None,
        registry: ToolRegistry | None = None,
        idempotency_keys: Mapping[str, str] | None = None,
        context: Any = None,
        on_outcome: OnOutcome | None = None,
    ) -> list[ToolOutcome]:
        """Sync form of :meth:`arun_calls`: sync tools in worker threads, no event loop.

        Only when a call targets an async tool is the batch handed to a background
        event-loop thread; this also makes it safe to call from inside a running loop
        (Jupyter, a FastAPI handler), which it blocks until the batch is done.
        """
        reg = registry if registry is not None else self.registry
        normalized = [_as_call(c, i) for i, c in enumerate(calls)]
        if any(getattr(reg.get(c.name), "is_async", False) for c in normalized):
            return self._run_on_background_loop(
                normalized,
                cancellation=cancellation,
                registry=reg,
                idempotency_keys=idempotency_keys,
                context=context,
                on_outcome=on_outcome,
            )
        outcomes: list[ToolOutcome | None] = [None] * len(normalized)
        pending: dict[int, _Pending] = {}
        done: queue.SimpleQueue[tuple[int, Timed | None, BaseException | None]] = (
            queue.SimpleQueue()
        )
        for i, call in enumerate(normalized):
            prepared = self._prepare(call, reg, cancellation, idempotency_keys, context)
            if isinstance(prepared, ToolOutcome):
                outcomes[i] = prepared
                continue
            started = time.perf_counter()
            if len(normalized) == 1 and prepared.timeout is None:
                outcome = outcomes[i] = self._run_inline(prepared, started)
                if on_outcome is not None:
                    on_outcome(outcome)
                continue
            ticket = Ticket(prepared.cancellation)
            work = (ticket, prepared.tool, prepared.args, prepared.kwargs)
            self._lane().submit(run_ticket, work, {}, to_queue, (done, i))
            pending[i] = (prepared, ticket, started)
        if pending:
            self._collect(pending, done, outcomes, on_outcome)
        return [o for o in outcomes if o is not None]

    def _settled(self, prepared: _Prepared, timed: Timed, started: float) -> ToolOutcome:
        """The outcome of a call that returned or raised on its thread."""
        output, exc, ended = timed
        if exc is not None:
            return self._failed(prepared, wrap_exception(prepared.tool.name, exc), started, ended)
        return self._finish(prepared, output or "", started, ended)

    def _collect(
        self,
        pending: dict[int, _Pending],
        done: queue.SimpleQueue[tuple[int, Timed | None, BaseException | None]],
        outcomes: list[ToolOutcome | None],
        on_outcome: OnOutcome | None,
    ) -> None:
        # Each outcome is reported the moment it is known, so a crash later in the round
        # cannot erase the record of a call that already finished.
        def report(index: int, outcome: ToolOutcome) -> None:
            outcomes[index] = outcome
            if on_outcome is not None:
                on_outcome(outcome)

        while pending:
            deadlines = [s + p.timeout for p, _, s in pending.values() if p.timeout is not None]
            wait = max(0.0, min(deadlines) - time.perf_counter()) if deadlines else None
            try:
                index, timed, crash = done.get(timeout=wait)
            except queue.Empty:
                now = time.perf_counter()
                for index, (prepared, ticket, started) in list(pending.items()):
                    if prepared.timeout is not None and now >= started + prepared.timeout:
                        ticket.abandoned = True  # its thread skips it if it never started
                        del pending[index]
                        ended = started + prepared.timeout
                        error = self._timeout_error(prepared)
                        report(index, self._failed(prepared, error, started, ended))
                continue
            if crash is not None:
                # Report the calls that have already finished, then let the crash go.
                while not done.empty():
                    index, timed, other = done.get()
                    entry = pending.pop(index, None)
                    if entry is not None and timed is not None and other is None:
                        report(index, self._settled(entry[0], timed, entry[2]))
                raise crash
            entry = pending.pop(index, None)
            if entry is None or timed is None:
                continue  # a late answer of a call already reported as timed out
            report(index, self._settled(entry[0], timed, entry[2]))

    def _run_inline(self, prepared: _Prepared, started: float) -> ToolOutcome:
        try:
            output = run_sync(prepared.tool, prepared.args, prepared.kwargs)
        except (Exception, SystemExit) as exc:  # a tool's sys.exit() must not end the host
            return self._failed(prepared, wrap_exception(prepared.tool.name, exc), started)
        return self._finish(prepared, output, started)

    def _run_on_background_loop(self, calls: list[ToolCall], **options: Any) -> list[ToolOutcome]:
        # Async tools of a sync run share the one background loop (their clients outlive
        # the call); re-entered from a tool running there, the batch gets a private loop.
        return bridge.run_sync(self.arun_calls(calls, **options), reentrant=True)
