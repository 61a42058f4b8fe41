"""Run the tool calls of one model turn: validated, concurrent, time-limited, never raising.

Async tools run on the caller's event loop, sync tools in one shared thread pool. A
timed-out async tool is cancelled for real; a timed-out sync tool cannot be stopped (Python
cannot kill a thread), so its call is abandoned, reported as ``LA-TOOL-TIMEOUT``, and the
thread finishes in the background. Every failure becomes a short ``Error [LA-…] …`` text
for the model, with the typed error in :attr:`ToolOutcome.error`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import hashlib
import inspect
import json
import os
import threading
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lightagent import bridge
from lightagent.errors import CancelledError, LightAgentError, ToolError
from lightagent.models.arguments import load_arguments
from lightagent.models.base import ToolCall
from lightagent.tools.decorator import Tool
from lightagent.tools.output import error_text, format_output, join_items, wrap_exception
from lightagent.tools.registry import ToolRegistry

__all__ = ["AsyncToolDispatcher", "OnOutcome", "ToolOutcome", "missing_tool"]

#: Called with each outcome of a call that ran, as soon as it is known (completion order).
OnOutcome = Callable[["ToolOutcome"], Any]

_shared_lock = threading.Lock()
_shared_executor: concurrent.futures.ThreadPoolExecutor | None = None


def _default_executor() -> concurrent.futures.ThreadPoolExecutor:
    """The process-wide pool for sync tools, created on first use."""
    global _shared_executor
    with _shared_lock:
        if _shared_executor is None:
            # I/O-bound tools dominate; abandoned (timed-out) calls also hold a worker.
            workers = max(32, (os.cpu_count() or 1) * 8)
            _shared_executor = concurrent.futures.ThreadPoolExecutor(
                max_workers=workers, thread_name_prefix="lightagent-tool"
            )
        return _shared_executor


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


def _is_cancelled(cancellation: Any) -> tuple[bool, str | None]:
    if cancellation is None:
        return False, None
    flag = getattr(cancellation, "cancelled", None)
    if flag is None:
        flag = getattr(cancellation, "is_cancelled", False)
    if callable(flag):
        flag = flag()
    return bool(flag), getattr(cancellation, "reason", None)


def _fallback_key(call: ToolCall) -> str:
    text = f"{call.id}\x00{call.name}\x00{call.arguments}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class _Prepared:
    call: ToolCall
    tool: Tool
    args: list[Any]
    kwargs: dict[str, Any]
    arguments: dict[str, Any]
    timeout: float | None


def _run_sync(tool: Tool, args: list[Any], kwargs: dict[str, Any]) -> str:
    """Call a sync tool (in a worker thread) and turn its result into text."""
    result = tool.func(*args, **kwargs)
    if inspect.isgenerator(result):
        return join_items(list(result))
    if inspect.isawaitable(result):  # a sync callable that returned a coroutine
        return format_output(bridge.resolve_sync(result))
    return format_output(result)


def _run_sync_timed(
    tool: Tool, args: list[Any], kwargs: dict[str, Any]
) -> tuple[str | None, BaseException | None, float]:
    """``(text, exception, finished_at)``: latency stays right when results are read late."""
    try:
        return _run_sync(tool, args, kwargs), None, time.perf_counter()
    except (Exception, SystemExit) as exc:  # a tool's sys.exit() must not end the host
        return None, exc, time.perf_counter()


class _ToolExited(Exception):
    """Carries a tool's ``SystemExit`` out of its task (asyncio would re-raise it in the loop)."""

    def __init__(self, original: SystemExit) -> None:
        super().__init__(str(original))
        self.original = original


async def _run_async(tool: Tool, args: list[Any], kwargs: dict[str, Any]) -> str:
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
        raise _ToolExited(exc) from None


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
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    # -- resources -----------------------------------------------------------------
    def _pool(self) -> concurrent.futures.ThreadPoolExecutor:
        if self.max_workers is None:
            return _default_executor()
        with self._lock:
            if self._executor is None:
                self._executor = concurrent.futures.ThreadPoolExecutor(
                    max_workers=self.max_workers, thread_name_prefix="lightagent-tool"
                )
            return self._executor

    def close(self) -> None:
        """Release a private thread pool (the shared one lives for the process)."""
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)

    # -- preparation ---------------------------------------------------------------------
    def _prepare(
        self,
        call: ToolCall,
        registry: ToolRegistry,
        cancellation: Any,
        idempotency_keys: Mapping[str, str] | None,
        context: Any,
    ) -> _Prepared | ToolOutcome:
        cancelled, reason = _is_cancelled(cancellation)
        if cancelled:
            error = CancelledError(
                "LA-CANCELLED", f"not run: the run was cancelled ({reason or 'no reason given'})"
            )
            return ToolOutcome(call.id, call.name, error_text(error), error)
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
        return _Prepared(call, tool, args, kwargs, clean, timeout)

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
        try:
            work: Awaitable[Any]
            if tool.is_async:
                work = _run_async(tool, prepared.args, prepared.kwargs)
            else:
                loop = asyncio.get_running_loop()
                ctx = contextvars.copy_context()
                work = loop.run_in_executor(
                    self._pool(),
                    functools.partial(ctx.run, _run_sync, tool, prepared.args, prepared.kwargs),
                )
            output = await asyncio.wait_for(work, prepared.timeout)
        except asyncio.TimeoutError:
            return self._failed(prepared, self._timeout_error(prepared), started)
        except asyncio.CancelledError:
            raise
        except _ToolExited as exc:
            return self._failed(prepared, wrap_exception(tool.name, exc.original), started)
        except (Exception, SystemExit) as exc:  # a tool's sys.exit() must not end the host
            return self._failed(prepared, wrap_exception(tool.name, exc), started)
        return self._finish(prepared, output, started)

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
        pending: list[tuple[int, _Prepared, concurrent.futures.Future[Any], float]] = []
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
            ctx = contextvars.copy_context()
            future = self._pool().submit(
                ctx.run, _run_sync_timed, prepared.tool, prepared.args, prepared.kwargs
            )
            pending.append((i, prepared, future, started))
        if pending:
            self._collect(pending, outcomes, on_outcome)
        return [o for o in outcomes if o is not None]

    def _settled(
        self, prepared: _Prepared, future: concurrent.futures.Future[Any], started: float
    ) -> ToolOutcome | None:
        """The outcome of a finished or overdue call; None while it may still finish."""
        if future.done():
            output, exc, ended = future.result()  # a BaseException (a crash) propagates
            if exc is not None:
                return self._failed(
                    prepared, wrap_exception(prepared.tool.name, exc), started, ended
                )
            return self._finish(prepared, output or "", started, ended)
        if prepared.timeout is not None and time.perf_counter() >= started + prepared.timeout:
            future.cancel()  # succeeds only if it never started
            ended = started + prepared.timeout
            return self._failed(prepared, self._timeout_error(prepared), started, ended)
        return None

    def _collect(
        self,
        pending: list[tuple[int, _Prepared, concurrent.futures.Future[Any], float]],
        outcomes: list[ToolOutcome | None],
        on_outcome: OnOutcome | None,
    ) -> None:
        # Each outcome is reported the moment it is known, so a crash later in the round
        # cannot erase the record of a call that already finished.
        waiting = list(pending)
        while waiting:
            deadlines = [s + p.timeout for _, p, _, s in waiting if p.timeout is not None]
            timeout = max(0.0, min(deadlines) - time.perf_counter()) if deadlines else None
            concurrent.futures.wait(
                [f for _, _, f, _ in waiting],
                timeout=timeout,
                return_when=concurrent.futures.FIRST_COMPLETED,
            )
            still: list[tuple[int, _Prepared, concurrent.futures.Future[Any], float]] = []
            crash: BaseException | None = None
            for entry in waiting:
                i, prepared, future, started = entry
                try:
                    outcome = self._settled(prepared, future, started)
                except BaseException as exc:  # report the others first, then let it go
                    crash = crash or exc
                    continue
                if outcome is None:
                    still.append(entry)
                    continue
                outcomes[i] = outcome
                if on_outcome is not None:
                    on_outcome(outcome)
            if crash is not None:
                raise crash
            waiting = still

    def _run_inline(self, prepared: _Prepared, started: float) -> ToolOutcome:
        try:
            output = _run_sync(prepared.tool, prepared.args, prepared.kwargs)
        except (Exception, SystemExit) as exc:  # a tool's sys.exit() must not end the host
            return self._failed(prepared, wrap_exception(prepared.tool.name, exc), started)
        return self._finish(prepared, output, started)

    def _run_on_background_loop(self, calls: list[ToolCall], **options: Any) -> list[ToolOutcome]:
        # Async tools of a sync run share the one background loop (their clients outlive
        # the call); re-entered from a tool running there, the batch gets a private loop.
        return bridge.run_sync(self.arun_calls(calls, **options), reentrant=True)
