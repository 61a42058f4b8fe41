"""The sync driver: performs the loop's effects with blocking calls and no event loop.

It never creates an event loop itself (tool dispatch may, on a worker thread, for async
tools), so ``agent.run()`` also works from a thread whose event loop is running
(Jupyter, FastAPI handlers).
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import Any

from lightagent.errors import ModelError
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
from lightagent.run.tool_round import finished_recorder

__all__ = ["drive", "drive_effects", "drive_stream"]


def _perform(effect: Any, spec: RunSpec) -> Any:
    cls = effect.__class__
    if cls is CallModel:
        return spec.model.complete(effect.request)
    if cls is RunTools:
        return spec.dispatcher.run_calls(effect.calls, **_dispatch_kwargs(spec, effect))
    if cls is CallPhase:
        return spec.interceptor.on_phase_sync(spec.ctx, effect.phase, effect.payload)
    if cls is LoadHistory:
        return spec.binding.history(effect.session_id)
    if cls is SessionCall:
        return spec.binding.call(effect.session_id, spec.ctx.run_id, effect.call)
    if cls is ListTools:
        return spec.toolsets.view(effect.base)
    if cls is RetrieveMemory or cls is StoreMemory or cls is Search:
        from lightagent.bridge import call_sync

        return call_sync(*recall_call(spec, effect))
    if cls is StreamModel:  # a non-streamed consumer never asks for this; collect anyway
        final = None
        for item in spec.model.stream(effect.request):
            if isinstance(item, ModelResponse):
                final = item
        return _final_or_truncated(final)
    return None


def drive_effects(gen: Generator[Any, Any, Any], spec: RunSpec) -> Any:
    """Perform the effects ``gen`` yields for ``spec`` and return its value (a capability's
    own short exchange, such as planning, outside a run's loop)."""
    value: Any = None
    while True:
        try:
            effect = gen.send(value)
        except StopIteration as stop:
            return stop.value
        value = _perform(effect, spec)


def drive(spec: RunSpec) -> RunResult:
    """Run the loop to its end and return the :class:`RunResult`."""
    gen = run_machine(spec)
    value: Any = None
    exc: BaseException | None = None
    try:
        while True:
            try:
                effect = gen.throw(exc) if exc is not None else gen.send(value)
            except StopIteration as stop:
                return stop.value
            exc = None
            try:
                value = _perform(effect, spec)
            except Exception as error:
                exc, value = error, None
    finally:
        gen.close()


def drive_stream(spec: RunSpec) -> Iterator[Any]:
    """Run the loop, yielding OpenAI chunk dicts and the seeds' tool dicts (or ``StreamEvent``s).

    The generator's return value is the :class:`RunResult`.
    """
    events = spec.result_format == "event"
    trace_id = spec.ctx.trace_id
    token = spec.ctx.cancellation
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
                result = stop.value
                if spec.on_result is not None:
                    spec.on_result(result)
                if events:
                    yield done_event(result)
                return result
            exc = None
            value = None
            cls = effect.__class__
            try:
                if cls is StreamModel:
                    final = None
                    screen = new_screen(spec) if screens else None
                    shown: list[Any] = []
                    stream = spec.model.stream(effect.request)
                    try:
                        for item in stream:
                            if isinstance(item, ModelResponse):
                                final = item
                                continue
                            if screen is not None:
                                item = screen.chunk(item)
                                if item is None:
                                    continue
                            if events:
                                yield from chunk_events(item, trace_id)
                            else:
                                yield consumer_chunk(item)
                            shown.append(item)
                            if token is not None and token.cancelled:
                                raise cancelled_mid_stream(token.reason, shown)
                    finally:
                        close = getattr(stream, "close", None)
                        if close is not None:
                            close()
                    value = _final_or_truncated(final)
                elif cls is Output:
                    if effect.kind == "release":
                        if screen is not None:
                            item = screen.release(effect.item)
                            screen = None
                            if events:
                                yield from chunk_events(item, trace_id)
                            else:
                                yield consumer_chunk(item)
                    elif events:
                        yield output_event(effect, trace_id)
                    else:
                        yield effect.item
                else:
                    value = _perform(effect, spec)
            except Exception as error:
                exc = error
    finally:
        gen.close()


def _final_or_truncated(final: ModelResponse | None) -> ModelResponse:
    if final is None:
        raise ModelError("LA-TRUNCATED", "the model stream ended without a final response")
    return final


def _dispatch_kwargs(spec: RunSpec, effect: RunTools, *, flush: bool = False) -> dict[str, Any]:
    kwargs = {
        "cancellation": spec.ctx.cancellation,
        "registry": spec.registry,
        "idempotency_keys": effect.idempotency_keys,
        "context": spec.ctx,
    }
    if effect.record_each:
        kwargs["on_outcome"] = finished_recorder(spec.ctx, effect.idempotency_keys, flush=flush)
    return kwargs
