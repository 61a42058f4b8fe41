"""The async driver: performs the loop's effects on the running event loop, never blocking it.

Model calls use ``Model.acomplete``/``astream``, tool calls ``AsyncToolDispatcher.arun_calls``
(sync tools go to worker threads there), phases ``Interceptor.on_phase``, and observers
with ``aon_event`` are awaited after each step.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Generator
from typing import Any

from lightagent.errors import LightAgentError
from lightagent.models.base import ModelResponse
from lightagent.results import RunResult
from lightagent.run.effects import (
    CallModel,
    CallPhase,
    ListTools,
    LoadHistory,
    Output,
    RetrieveMemory,
    RunTools,
    Search,
    SessionCall,
    StoreMemory,
    StreamModel,
)
from lightagent.run.machine import run_machine
from lightagent.run.recall import recall_call
from lightagent.run.spec import RunSpec
from lightagent.run.streaming import (
    cancelled_mid_stream,
    chunk_events,
    consumer_chunk,
    done_event,
    new_screen,
    output_event,
)
from lightagent.run.sync_driver import _dispatch_kwargs, _final_or_truncated

__all__ = ["adrive", "adrive_effects", "adrive_stream"]


async def _aperform(effect: Any, spec: RunSpec) -> Any:
    cls = effect.__class__
    if cls is CallModel:
        return await spec.model.acomplete(effect.request)
    if cls is RunTools:
        kwargs = _dispatch_kwargs(spec, effect, flush=True)
        return await spec.dispatcher.arun_calls(effect.calls, **kwargs)
    if cls is CallPhase:
        return await spec.interceptor.on_phase(spec.ctx, effect.phase, effect.payload)
    if cls is LoadHistory:
        return await spec.binding.ahistory(effect.session_id)
    if cls is SessionCall:
        return await spec.binding.acall(effect.session_id, spec.ctx.run_id, effect.call)
    if cls is ListTools:
        return await spec.toolsets.aview(effect.base)
    if cls is RetrieveMemory or cls is StoreMemory or cls is Search:
        from lightagent.bridge import call_async

        return await call_async(*recall_call(spec, effect))
    if cls is StreamModel:
        final = None
        async for item in spec.model.astream(effect.request):
            if isinstance(item, ModelResponse):
                final = item
        return _final_or_truncated(final)
    return None


async def _final_flush(ctx: Any, result: Any) -> None:
    """Flush the last events; a fail-closed log that misses the end marks the result failed."""
    try:
        await ctx.aflush()
    except LightAgentError as error:
        if result is not None and getattr(result, "error", None) is None:
            result.error = error.to_dict()


def _prepare(spec: RunSpec) -> bool:
    ctx = spec.ctx
    has_async = any(hasattr(o, "aon_event") for o in ctx.observers)
    if has_async:
        ctx._pending = []
    return has_async


async def adrive_effects(gen: Generator[Any, Any, Any], spec: RunSpec) -> Any:
    """Async :func:`~lightagent.run.sync_driver.drive_effects`."""
    value: Any = None
    while True:
        try:
            effect = gen.send(value)
        except StopIteration as stop:
            return stop.value
        value = await _aperform(effect, spec)


async def adrive(spec: RunSpec) -> RunResult:
    """Run the loop to its end on the event loop and return the :class:`RunResult`."""
    flush = _prepare(spec)
    ctx = spec.ctx
    gen = run_machine(spec)
    value: Any = None
    exc: BaseException | None = None
    try:
        while True:
            try:
                effect = gen.throw(exc) if exc is not None else gen.send(value)
            except StopIteration as stop:
                if flush:
                    await _final_flush(ctx, stop.value)
                return stop.value
            exc = None
            if flush:
                try:
                    await ctx.aflush()
                except Exception as error:  # a fail-closed observer: the effect must not run
                    exc, value = error, None
                    continue
            try:
                value = await _aperform(effect, spec)
            except Exception as error:
                exc, value = error, None
    finally:
        gen.close()


async def adrive_stream(spec: RunSpec) -> AsyncIterator[Any]:
    """Async form of :func:`lightagent.run.sync_driver.drive_stream`."""
    flush = _prepare(spec)
    ctx = spec.ctx
    events = spec.result_format == "event"
    trace_id = ctx.trace_id
    token = ctx.cancellation
    screens = spec.interceptor is not None
    screen = None
    gen = run_machine(spec)
    value: Any = None
    exc: BaseException | None = None
    try:
        while True:
            try:
                effect = gen.throw(exc) if exc is not None else gen.send(value)
            except StopIteration as stop:
                if flush:
                    await _final_flush(ctx, stop.value)
                if spec.on_result is not None:
                    spec.on_result(stop.value)
                if events:
                    yield done_event(stop.value)
                return
            exc = None
            value = None
            if flush:
                try:
                    await ctx.aflush()
                except Exception as error:  # a fail-closed observer: the effect must not run
                    exc = error
                    continue
            cls = effect.__class__
            try:
                if cls is StreamModel:
                    final = None
                    screen = new_screen(spec) if screens else None
                    shown: list[Any] = []
                    stream = spec.model.astream(effect.request)
                    try:
                        async for item in stream:
                            if isinstance(item, ModelResponse):
                                final = item
                                continue
                            if screen is not None:
                                item = screen.chunk(item)
                                if item is None:
                                    continue
                            if events:
                                for event in chunk_events(item, trace_id):
                                    yield event
                            else:
                                yield consumer_chunk(item)
                            shown.append(item)
                            if token is not None and token.cancelled:
                                raise cancelled_mid_stream(token.reason, shown)
                    finally:
                        aclose = getattr(stream, "aclose", None)
                        if aclose is not None:
                            await aclose()
                    value = _final_or_truncated(final)
                elif cls is Output:
                    if effect.kind == "release":
                        if screen is not None:
                            item = screen.release(effect.item)
                            screen = None
                            if events:
                                for event in chunk_events(item, trace_id):
                                    yield event
                            else:
                                yield consumer_chunk(item)
                    elif events:
                        yield output_event(effect, trace_id)
                    else:
                        yield effect.item
                else:
                    value = await _aperform(effect, spec)
            except Exception as error:
                exc = error
    finally:
        gen.close()
