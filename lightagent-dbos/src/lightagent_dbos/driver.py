"""The durable driver: performs the loop's effects, each one a DBOS step.

It runs inside a DBOS workflow. The loop itself (:func:`lightagent.loop.run_machine`)
does no I/O, so the effects it yields are exactly the points where the outside world is
touched: each is performed through ``DBOS.run_step`` and its result checkpointed. When
DBOS recovers the workflow after a crash, finished steps return their checkpoint and the
loop, fed the same results, takes the same path to the first step that had not finished.

A streamed request (``DBOSAgent.astream``) hands its chunks to the consumer from inside
its step (:mod:`lightagent_dbos.stream`); the step's checkpoint is the final response.

Tool calls are one step each, run one after another (their order is then the same on
every replay). A tool not declared idempotent marks its start in DBOS (a workflow event
written from inside the step) before it runs; a step that finds its own mark was
interrupted while the tool ran, and it fails with ``LA-DBOS-UNKNOWN-OUTCOME`` rather
than run the tool a second time.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Generator
from typing import Any

from dbos import DBOS, StepOptions
from lightagent.errors import ModelError, ToolError
from lightagent.models.base import ModelResponse
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
from lightagent.run.recall import recall_call
from lightagent.run.spec import RunSpec
from lightagent.run.streaming import new_screen
from lightagent.run.tool_round import finished_recorder
from lightagent.run.transcript import unique_call_ids
from lightagent.tools.dispatch import ToolOutcome
from lightagent.tools.output import error_text

from lightagent_dbos.stream import Channel

__all__ = ["APPROVAL_EVENT", "DurableDriver", "approval_topic"]

#: The workflow event naming the tool call that waits for a decision.
APPROVAL_EVENT = "lightagent.approval"


def approval_topic(call_id: str) -> str:
    """The ``DBOS.send`` topic a decision on tool call ``call_id`` goes to."""
    return f"lightagent.approval.{call_id}"


class DurableDriver:
    """Drives one run's loop inside a DBOS workflow (make one per run)."""

    def __init__(
        self,
        spec: RunSpec,
        *,
        idempotent_tools: Collection[str] = (),
        approval_tools: Collection[str] = (),
        approval_timeout: float = 3600.0,
        channel: Channel | None = None,
    ) -> None:
        self.spec = spec
        self.idempotent_tools = frozenset(idempotent_tools)
        self.approval_tools = frozenset(approval_tools)
        self.approval_timeout = approval_timeout
        #: Where a live consumer in this process takes the run's output (None: nobody).
        self.channel = channel
        self.screen: Any = None

    def drive(self, gen: Generator[Any, Any, Any]) -> Any:
        """Send each effect's result (or throw its error) into ``gen``; return its value."""
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
                    value = self.perform(effect)
                except Exception as error:
                    if _from_dbos(error):
                        # DBOS's own failure (a replay that went another way, its database):
                        # the workflow fails and DBOS handles it; it is not the agent's error
                        raise
                    exc, value = error, None
        finally:
            gen.close()

    def perform(self, effect: Any) -> Any:
        """Perform one effect; everything but a tool listing is a checkpointed step."""
        spec = self.spec
        cls = effect.__class__
        if cls is CallModel:
            return _step("lightagent.model", _complete, spec.model, effect.request)
        if cls is StreamModel:
            return _step("lightagent.model", self._stream, effect.request)
        if cls is RunTools:
            return [self._tool(call, effect) for call in effect.calls]
        if cls is CallPhase:
            return _step(
                f"lightagent.phase.{effect.phase}",
                spec.interceptor.on_phase_sync,
                spec.ctx,
                effect.phase,
                effect.payload,
            )
        if cls is LoadHistory:
            # checkpointed: a replay must see the history the first attempt saw, not a
            # log that by then holds this run's own events
            return _step("lightagent.history", _plain_history, spec, effect.session_id)
        if cls is SessionCall:
            return _step(
                "lightagent.session",
                spec.binding.call,
                effect.session_id,
                spec.ctx.run_id,
                effect.call,
            )
        if cls is ListTools:
            # not a step: the view holds live tool objects; listing is read-only and is
            # asked again on every replay
            return spec.toolsets.view(effect.base)
        if cls is RetrieveMemory or cls is StoreMemory or cls is Search:
            from lightagent.bridge import call_sync

            return _step(f"lightagent.{_kind(effect)}", call_sync, *recall_call(spec, effect))
        if cls is Output:
            self._output(effect)
        return None

    def _stream(self, request: Any) -> ModelResponse:
        """A streamed model request (inside its step): chunks go to a live consumer, if
        any; the final response is the checkpoint."""
        spec = self.spec
        channel = self.channel
        self.screen = new_screen(spec) if channel is not None and spec.interceptor else None
        final = None
        for item in spec.model.stream(request):
            if isinstance(item, ModelResponse):
                final = item
                continue
            if channel is None:
                continue
            if self.screen is not None:
                item = self.screen.chunk(item)
                if item is None:
                    continue
            channel.push("chunk", item)
        if final is None:
            raise ModelError("LA-TRUNCATED", "the model stream ended without a final response")
        unique_call_ids(final)
        return final

    def _output(self, effect: Output) -> None:
        channel = self.channel
        if channel is None:
            return
        if effect.kind == "release":  # what the output screen held back, now judged
            if self.screen is not None:
                channel.push("chunk", self.screen.release(effect.item))
                self.screen = None
            return
        channel.push("output", effect)

    def _tool(self, call: Any, effect: RunTools) -> ToolOutcome:
        name = call.name
        if name in self.approval_tools:
            refused = self._await_approval(call)
            if refused is not None:
                return refused
        key = effect.idempotency_keys.get(call.id, call.id)
        idempotent = name in self.idempotent_tools
        return _step(
            f"lightagent.tool.{name}",
            self._call_tool,
            call,
            effect,
            key,
            idempotent,
            retries=idempotent,
        )

    def _call_tool(self, call: Any, effect: RunTools, key: str, idempotent: bool) -> ToolOutcome:
        if not idempotent:
            mark = f"lightagent.tool.{key}"
            if DBOS.get_event(DBOS.workflow_id or "", mark, timeout_seconds=0) is not None:
                raise ToolError(
                    "LA-DBOS-UNKNOWN-OUTCOME",
                    f"tool call {call.id} ({call.name}) was interrupted; it is not run again",
                    hint="Check the outside world by the call's idempotency_key, or declare "
                    "the tool idempotent (DBOSAgent(idempotent_tools=...)).",
                    details={"call_id": call.id, "tool": call.name, "idempotency_key": key},
                )
            DBOS.set_event(mark, "started")
        spec = self.spec
        kwargs: dict[str, Any] = {
            "cancellation": spec.ctx.cancellation,
            "registry": spec.registry,
            "idempotency_keys": effect.idempotency_keys,
            "context": spec.ctx,
        }
        if effect.record_each:
            kwargs["on_outcome"] = finished_recorder(spec.ctx, effect.idempotency_keys)
        outcomes = spec.dispatcher.run_calls([call], **kwargs)
        outcome: ToolOutcome = outcomes[0]
        return outcome

    def _await_approval(self, call: Any) -> ToolOutcome | None:
        """Wait (durably) for a decision on ``call``; None when it is approved."""
        try:
            arguments = json.loads(call.arguments or "{}")
        except ValueError:  # the loop never sends a call it could not decode; keep the text
            arguments = call.arguments
        DBOS.set_event(
            APPROVAL_EVENT, {"call_id": call.id, "tool": call.name, "arguments": arguments}
        )
        decision = DBOS.recv(approval_topic(call.id), timeout_seconds=self.approval_timeout)
        DBOS.set_event(APPROVAL_EVENT, None)
        if isinstance(decision, dict) and decision.get("approved") is True:
            return None
        reason = decision.get("reason") if isinstance(decision, dict) else None
        error = ToolError(
            "LA-DBOS-DENIED",
            f"tool call {call.id} ({call.name}) was "
            + ("denied" if decision is not None else "not approved in time")
            + (f": {reason}" if reason else ""),
            details={"call_id": call.id, "tool": call.name},
        )
        return ToolOutcome(call.id, call.name, error_text(error), error)


def _step(name: str, func: Callable[..., Any], *args: Any, retries: bool = False) -> Any:
    options: StepOptions = {"name": name}
    if retries:
        options = {
            "name": name,
            "retries_allowed": True,
            "max_attempts": 3,
            "interval_seconds": 0.1,
        }
    return DBOS.run_step(options, func, *args)


def _from_dbos(error: BaseException) -> bool:
    # DBOS exports no base class for its errors; what a step raised for the agent (a
    # provider's error, a tool's) comes from elsewhere
    return type(error).__module__.split(".", 1)[0] == "dbos"


def _complete(model: Any, request: Any) -> Any:
    response = model.complete(request)
    if isinstance(response, ModelResponse):
        # the loop gives repeated or missing call ids fresh random ones; done here, inside
        # the step, the ids are part of the checkpoint and a replay sees the same ones
        unique_call_ids(response)
    return response


def _plain_history(spec: RunSpec, session_id: str) -> Any:
    return spec.binding.history(session_id)


def _kind(effect: Any) -> str:
    if isinstance(effect, RetrieveMemory):
        return "memory.retrieve"
    if isinstance(effect, StoreMemory):
        return "memory.store"
    return "retrieval.search"
