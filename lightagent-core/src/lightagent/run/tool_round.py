"""One round of tool calls: events, interceptor phases, dispatch, results into the transcript."""

from __future__ import annotations

import json
from collections.abc import Generator
from typing import Any

from lightagent.errors import PolicyError, ToolError
from lightagent.models.base import ToolCall
from lightagent.run.effects import Output, RunTools
from lightagent.run.ids import idempotency_key
from lightagent.run.phases import ask, payload_value, strip_code
from lightagent.run.spec import RunSpec
from lightagent.run.state import RunState, check_cancel
from lightagent.run.transcript import loads

__all__ = ["REPAIRABLE", "finished_recorder", "screen_call", "tool_round"]

#: Codes of tool outcomes the model can fix by calling again (they count against max_retry).
REPAIRABLE = frozenset({"LA-TOOL-ARGS", "LA-TOOL-NOT-FOUND", "LA-JSON"})


def tool_round(
    spec: RunSpec,
    st: RunState,
    calls: list[ToolCall],
    messages: list[dict[str, Any]],
    positions: dict[str, int],
    recorded_keys: dict[str, str] | None = None,
) -> Generator[Any, Any, None]:
    """Run one round of tool calls and append their results to ``messages`` (call order).

    ``recorded_keys`` (resume) gives calls the idempotency key of their first attempt.
    """
    ctx = spec.ctx
    active = ctx.active
    interceptor = spec.interceptor
    registry = spec.registry
    stream = spec.stream
    results: dict[str, tuple[str, dict[str, Any] | None, float]] = {}
    runnable: list[ToolCall] = []
    keys: dict[str, str] = {}
    titles: dict[str, str | None] = {}
    untrusted: set[str] = set()  # calls whose tool's output comes from outside (MCP, documents)
    for call in calls:
        check_cancel(ctx)
        key = (recorded_keys or {}).get(call.id) or idempotency_key(
            ctx.idempotency_key or ctx.run_id, positions.get(call.id, 0), call.name, call.arguments
        )
        keys[call.id] = key
        tool = registry.get(call.name) if registry is not None else None
        title = getattr(tool, "title", None) or call.name
        titles[call.id] = title
        if tool is not None and tool.metadata.get("untrusted_output"):
            untrusted.add(call.id)
        if active:
            ctx.emit(
                "tool_call",
                {
                    "id": call.id,
                    "call_id": call.id,
                    "name": call.name,
                    "title": title,
                    "arguments": loads(call.arguments),
                    "idempotency_key": key,
                    "index": positions.get(call.id, 0),
                },
            )
        if stream:
            yield Output(
                "tool_call",
                {
                    "name": call.name,
                    "title": title,
                    "arguments": call.arguments,
                    "call_id": call.id,
                },
            )
        if call.id in spec.skip_calls:
            results[call.id] = (spec.skip_calls[call.id], None, 0.0)
            continue
        if call.error is not None:
            # the model layer could not read the arguments: never run the tool on "{}"
            bad = ToolError(
                "LA-TOOL-ARGS",
                f"the arguments of {call.name} could not be parsed: {call.error}",
                hint="Call the tool again with its arguments as one JSON object.",
                details={"raw_arguments": _clipped(call.raw_arguments)},
            )
            results[call.id] = (f"Error [LA-TOOL-ARGS] {bad.message}", bad.to_dict(), 0.0)
            continue
        if st.offered is not None and call.name not in st.offered:
            # a tool left out of this run's selection does not exist for the model
            from lightagent.tools.dispatch import missing_tool

            gone = missing_tool(call, sorted(st.offered))
            results[call.id] = (gone.output, gone.error.to_dict() if gone.error else None, 0.0)
            continue
        denied = st.refused.pop(call.id, None)
        if denied is None and interceptor is not None:
            call, denied = yield from screen_call(spec, call)
        if denied is not None:
            results[call.id] = (f"Error [{denied.code}] {denied.message}", denied.to_dict(), 0.0)
            continue
        runnable.append(call)
    if runnable:
        check_cancel(ctx)
        # Only a durable log (a fail-closed observer) needs each call on record at once;
        # tracing asks for it to time each of several parallel calls.
        record_each = active and any(
            getattr(o, "fail_closed", False) or getattr(o, "wants_tool_finished", False)
            for o in ctx.observers
        )
        if spec.dispatcher is None:
            # A run without tools: whatever the model calls does not exist. It hears so and
            # the run goes on, exactly as for an unknown name next to real tools.
            from lightagent.tools.dispatch import missing_tool

            outcomes = [missing_tool(call) for call in runnable]
        else:
            outcomes = yield RunTools(runnable, keys, record_each)
        for outcome in outcomes:
            failure = outcome.error
            results[outcome.call_id] = (
                outcome.output,
                failure.to_dict() if failure is not None else None,
                outcome.latency_ms,
            )
    repairable, media = False, []
    for call in calls:
        output, err, latency = results.get(
            call.id, ("Error [LA-TOOL] the tool produced no result", {"code": "LA-TOOL"}, 0.0)
        )
        if err is not None and err.get("code") in REPAIRABLE:
            repairable = True
        # a toolset result's structured content and metadata, kept if a hook rewrites the text
        details = getattr(output, "details", {})
        # content parts for the model (images): a tool message is text only, so they follow the
        # round in one user message, unless a hook blocks the result; never in events
        parts = (details.get("metadata") or {}).pop("model_parts", None) if err is None else None
        if interceptor is not None and err is None:
            payload: dict[str, Any] = {"tool_name": call.name, "output": output, "call_id": call.id}
            if call.id in untrusted:
                payload["untrusted"] = True
            out = yield from ask("after_tool_result", payload)
            if out.action == "block":
                parts = None
                code = out.metadata.get("code") or "LA-HOOK"
                reason = strip_code(out.reason or "blocked", code)
                output = f"Error [{code}] the result of {call.name} was withheld: {reason}"
            elif out.action == "replace" and out.payload is not None:
                output = payload_value(out.payload, "output")
        title = titles[call.id]
        record = {
            "id": call.id,
            "name": call.name,
            "arguments": call.arguments,
            "output": output,
            "error": err,
            "latency_ms": latency,
            "idempotency_key": keys[call.id],
        }
        st.executed.append(record)
        if active:
            ctx.emit(
                "tool_result",
                {
                    "call_id": call.id,
                    "name": call.name,
                    "title": title,
                    "output": output,
                    "error": err,
                    "latency_ms": latency,
                    **details,
                },
            )
            if err is not None:
                ctx.emit(
                    "error",
                    {
                        "stage": "tool_arguments"
                        if err.get("code") in REPAIRABLE
                        else "tool_execution",
                        "error": err,
                        "tool": call.name,
                    },
                )
        if stream:
            if err is None:
                yield Output(
                    "tool_result",
                    {
                        "name": call.name,
                        "title": title,
                        "output": output,
                        "latency_ms": latency,
                        "call_id": call.id,
                    },
                )
            else:
                yield Output(
                    "tool_result",
                    {
                        "name": call.name,
                        "title": title,
                        "error": output,
                        "latency_ms": latency,
                        "call_id": call.id,
                        "code": err.get("code"),
                    },
                )
        messages.append({"role": "tool", "tool_call_id": call.id, "content": output})
        if parts:
            media += [{"type": "text", "text": f"Attached to the result of {call.id}:"}, *parts]
    if media:
        messages.append({"role": "user", "content": media})
    if repairable:
        st.retries += 1
        if st.retries > spec.max_retry:
            st.stage = "max_retry"
            raise ToolError(
                "LA-TOOL-ARGS",
                f"the model kept sending invalid tool calls ({st.retries} rounds, max_retry={spec.max_retry})",
                details={"max_retry": spec.max_retry},
            )


#: Per tool phase, the code and the event of a block. A call passes them in this order:
#: guardrails (and policy and the security gate) first, so ``before_tool_call`` hooks and
#: approval see the arguments a guardrail rewrote.
_BLOCKS = {
    "tool_guardrail": ("LA-GUARDRAIL", "guardrail_block"),
    "before_tool_call": ("LA-HOOK", "hook_block"),
}


def screen_call(
    spec: RunSpec, call: ToolCall, phases: tuple[str, ...] = tuple(_BLOCKS)
) -> Generator[Any, Any, tuple[ToolCall, PolicyError | None]]:
    """Ask the interceptor ``phases`` about one call: the call as they left it (arguments
    maybe rewritten), and the denial when one blocked it (its block event emitted)."""
    ctx = spec.ctx
    for phase in phases:
        code, block_event = _BLOCKS[phase]
        payload = {"tool_name": call.name, "arguments": loads(call.arguments), "call_id": call.id}
        out = yield from ask(phase, payload)
        if out.action == "block":
            # the model hears one line: why, never a multi-line dump
            reason = " ".join((out.reason or f"{phase} blocked the call").split())
            block_code = out.metadata.get("code") or code
            if ctx.active:
                data = {
                    "phase": phase,
                    "reason": reason,
                    "tool": call.name,
                    "call_id": call.id,
                    "code": block_code,
                }
                if block_event == "guardrail_block":
                    data["stage"] = "tool"
                ctx.emit(block_event, data)
            denied = PolicyError(
                block_code, f"Tool call {call.name} was denied: {strip_code(reason, block_code)}"
            )
            return call, denied
        if out.action == "replace" and out.payload is not None:
            new_args = (
                out.payload.get("arguments", out.payload)
                if isinstance(out.payload, dict)
                else out.payload
            )
            call = ToolCall(
                call.id,
                call.name,
                new_args if isinstance(new_args, str) else json.dumps(new_args),
                call.index,
            )
    return call, None


#: How much of unusable raw arguments an error keeps (events and logs stay bounded).
_RAW_KEPT = 2000


def _clipped(raw: str | None) -> str | None:
    if raw is None or len(raw) <= _RAW_KEPT:
        return raw
    return f"{raw[:_RAW_KEPT]}... [{len(raw) - _RAW_KEPT:,} more characters not kept]"


def finished_recorder(ctx: Any, keys: dict[str, str], *, flush: bool = False) -> Any:
    """The dispatcher's ``on_outcome``: emit ``tool_finished`` for each call as it returns.

    With ``flush`` (the async driver) it is a coroutine function that also awaits the
    durable observers, so the record lands before the next outcome is reported.
    """

    def emit(outcome: Any) -> None:
        err = outcome.error
        ctx.emit(
            "tool_finished",
            {
                "call_id": outcome.call_id,
                "name": outcome.name,
                "output": outcome.output,
                "error": err.to_dict() if err is not None else None,
                "latency_ms": outcome.latency_ms,
                "idempotency_key": keys.get(outcome.call_id),
            },
        )

    if not flush:
        return emit

    async def emit_and_flush(outcome: Any) -> None:
        emit(outcome)
        await ctx.aflush()

    return emit_and_flush
