"""The agent loop, written once: a generator that yields effects and returns a ``RunResult``.

It does no I/O. A driver (sync: :mod:`lightagent.run.sync_driver`, async:
:mod:`lightagent.run.async_driver`) performs each effect (call the model, stream the
model, run tool calls, ask the interceptor, load history, hand an item to the stream
consumer) and sends the result back, or throws the exception the effect raised.
"""

from __future__ import annotations

import json
import time
from collections.abc import Generator
from typing import Any

from lightagent.errors import (
    BudgetError,
    CancelledError,
    LightAgentError,
    ModelError,
    PolicyError,
    ToolError,
    ValidationError,
    classify_exception,
)
from lightagent.interceptors import CONTINUE, PhaseOutcome, RunContext
from lightagent.models.base import ModelRequest, ModelResponse, ToolCall, Usage
from lightagent.results import RunResult
from lightagent.run.effects import CallModel, CallPhase, LoadHistory, Output, RunTools, StreamModel
from lightagent.run.ids import idempotency_key
from lightagent.run.spec import RunSpec

__all__ = ["pending_tool_calls", "run_machine"]

Machine = Generator[Any, Any, RunResult]

#: Codes of tool outcomes the model can fix by calling again (they count against max_retry).
_REPAIRABLE = frozenset({"LA-TOOL-ARGS", "LA-TOOL-NOT-FOUND", "LA-JSON"})


class _State:
    """Mutable per-run counters (lives in the generator frame, never on the agent)."""

    __slots__ = ("call_index", "executed", "model_requests", "retries", "rounds", "stage", "usage")

    def __init__(self) -> None:
        self.call_index = 0
        self.executed: list[dict[str, Any]] = []
        self.model_requests = 0
        self.retries = 0
        self.rounds = 0
        self.stage: str | None = None
        self.usage: Usage | None = None


def run_machine(spec: RunSpec) -> Machine:
    """The loop for one run. Drive it with ``send``/``throw``; it returns a :class:`RunResult`."""
    ctx = spec.ctx
    active = ctx.active
    started = time.perf_counter()
    st = _State()
    error: LightAgentError | None = None
    content: str | None = None
    reasoning: str | None = None
    parsed: Any = None
    messages: list[dict[str, Any]] = []
    interceptor = spec.interceptor
    query = spec.query
    if active:
        ctx.emit(
            "run_start",
            {
                "query": query,
                "user_id": ctx.user_id,
                "stream": spec.stream,
                "result_format": spec.result_format,
                "run_id": ctx.run_id,
                "idempotency_key": ctx.idempotency_key,
                "session_id": ctx.session_id,
                "model": getattr(spec.model, "name", None),
                "resumed": spec.initial_messages is not None,
            },
        )
    try:
        if interceptor is not None:
            st.stage = "before_run"
            out = yield from _phase(
                "before_run",
                {
                    "query": query,
                    "tools": spec.registry.names() if spec.registry is not None else [],
                    "stream": spec.stream,
                    "result_format": spec.result_format,
                    "metadata": ctx.metadata,
                },
            )
            query = _blocked_or_replaced(ctx, out, "before_run", "LA-HOOK", query, "query")
            st.stage = "input_guardrail"
            out = yield from _phase("input_guardrail", {"query": query})
            query = _blocked_or_replaced(
                ctx, out, "input_guardrail", "LA-GUARDRAIL", query, "query"
            )

        st.stage = "prepare"
        if spec.initial_messages is not None:
            messages = list(spec.initial_messages)
        else:
            history = spec.history
            if history is None and spec.load_history and ctx.session_id:
                history = yield LoadHistory(ctx.session_id)
            if spec.system_prompt and not (history and history[0].get("role") == "system"):
                messages.append({"role": "system", "content": spec.system_prompt})
            if history:
                messages.extend(history)
        if query is not None:
            messages.append({"role": "user", "content": query})

        tools, tool_choice, response_format = _select_tools(spec, ctx, query, messages, active)

        if spec.initial_messages is not None:
            pending, positions, total = pending_tool_calls(messages)
            st.call_index = total
            if pending:
                st.rounds += 1
                st.stage = "tool_execution"
                yield from _tool_round(spec, st, pending, messages, positions)

        structured_repairs = 0
        while True:
            st.stage = "model_request"
            _check_cancel(ctx)
            request = ModelRequest(
                messages=list(messages),
                tools=tools,
                tool_choice=tool_choice,
                response_format=response_format,
                stream=spec.stream,
                options=spec.model_options,
            )
            fallback: Any = None
            if interceptor is not None:
                out = yield from _phase("before_model_request", {"params": _params(spec, request)})
                request, fallback = _model_request_decision(ctx, out, request)
                if out.action == "retry":
                    _bump_retry(spec, st, "before_model_request")
                    continue
            if fallback is not None:
                content = str(fallback)
                break
            st.model_requests += 1
            if active:
                ctx.emit(
                    "model_request",
                    {
                        "model": getattr(spec.model, "name", None),
                        "stream": spec.stream,
                        "message_count": len(request.messages),
                        "tools": [t["function"]["name"] for t in request.tools or ()],
                        "request_index": st.model_requests,
                        "request": {
                            "messages": request.messages,
                            "tools": request.tools,
                            "tool_choice": request.tool_choice,
                            "response_format": request.response_format,
                        },
                    },
                )
            t0 = time.perf_counter()
            try:
                response = yield (StreamModel(request) if spec.stream else CallModel(request))
            except LightAgentError:
                raise
            except Exception as exc:
                raise ModelError(
                    classify_exception(exc, "LA-PROVIDER"),
                    f"model call failed: {type(exc).__name__}: {exc}",
                    details={"exception": type(exc).__name__},
                ) from exc
            if not isinstance(response, ModelResponse):
                raise ModelError(
                    "LA-MODEL-OUTPUT",
                    f"the model returned {type(response).__name__}, not a ModelResponse",
                )
            if response.usage is not None:
                st.usage = response.usage if st.usage is None else st.usage + response.usage
            assistant = _assistant_message(response)
            if active:
                ctx.emit(
                    "model_response",
                    {
                        "content": response.content,
                        "reasoning_content": response.reasoning_content,
                        "message": assistant,
                        "finish_reason": response.finish_reason,
                        "usage": response.usage.to_dict() if response.usage else None,
                        "latency_ms": round((time.perf_counter() - t0) * 1000, 3),
                        "attempts": getattr(response, "attempts", 1),
                        "request_index": st.model_requests,
                    },
                )
            calls = response.tool_calls
            spec_out = spec.output
            if spec_out is not None and spec_out.via_tool and calls:
                final = next((c for c in calls if c.name == spec_out.name), None)
                if final is not None:
                    messages.append(assistant)
                    parsed, problem = spec_out.validate(final.arguments)
                    messages.append(
                        {
                            "role": "tool",
                            "tool_call_id": final.id,
                            "content": problem or "Answer recorded.",
                        }
                    )
                    if problem is not None:
                        structured_repairs = _structured_retry(structured_repairs, problem)
                        continue
                    content, reasoning = spec_out.dump(parsed), response.reasoning_content
                    break
            if calls:
                st.stage = "tool_execution"
                if st.rounds >= spec.max_tool_iterations:
                    st.stage = "max_tool_iterations"
                    raise BudgetError(
                        "LA-MAX-ITERATIONS",
                        f"Max tool iterations({spec.max_tool_iterations}) reached.",
                        details={"max_tool_iterations": spec.max_tool_iterations},
                    )
                st.rounds += 1
                messages.append(assistant)
                positions = {}
                for call in calls:
                    positions[call.id] = st.call_index
                    st.call_index += 1
                yield from _tool_round(spec, st, calls, messages, positions)
                continue

            text = response.content or ""
            st.stage = "model_response"
            if spec_out is not None:
                parsed, problem = spec_out.validate(text)
                if problem is not None:
                    messages.append(assistant)
                    messages.append(spec_out.repair_message(problem))
                    structured_repairs = _structured_retry(structured_repairs, problem)
                    continue
                text = spec_out.dump(parsed)
            if interceptor is not None:
                out = yield from _phase("after_model_response", {"content": text})
                if out.action == "retry":
                    _bump_retry(spec, st, "after_model_response")
                    continue
                if out.action == "fallback":
                    text = str(out.payload)
                else:
                    text = _blocked_or_replaced(
                        ctx, out, "after_model_response", "LA-HOOK", text, "content"
                    )
            messages.append(assistant)
            content = text
            reasoning = response.reasoning_content
            break

        if interceptor is not None:
            st.stage = "output_guardrail"
            out = yield from _phase("output_guardrail", {"content": content})
            content = _blocked_or_replaced(
                ctx, out, "output_guardrail", "LA-GUARDRAIL", content, "content"
            )
            if spec.stream:
                # the driver shows what its output screen held back, now that it is judged
                yield Output("release", content)
        st.stage = None
    except LightAgentError as exc:
        error = exc
    except Exception as exc:  # a bug in a component: still never a bare traceback
        error = LightAgentError(
            "LA-UNKNOWN", f"{type(exc).__name__}: {exc}", details={"stage": st.stage}
        )

    if error is not None:
        if active:
            ctx.emit("error", {"stage": st.stage, "error": error.to_dict()})
        if interceptor is not None and not isinstance(error, CancelledError):
            try:
                yield CallPhase("on_error", {"stage": st.stage, "error": error.to_dict()})
            except Exception:  # observers of failure cannot make it worse
                pass
    if interceptor is not None:
        try:
            out = yield CallPhase(
                "after_run",
                {
                    "success": error is None,
                    "content": content,
                    "error": error.to_dict() if error else None,
                },
            )
            if (
                error is None
                and out is not None
                and out.action == "replace"
                and out.payload is not None
            ):
                content = _payload_text(out.payload, "content")
        except Exception:
            pass
    if error is not None and spec.stream:
        yield Output("error", {"error": str(error), "code": error.code, "details": error.to_dict()})
    usage = st.usage.to_dict() if st.usage is not None else None
    if active:
        end: dict[str, Any] = {
            "success": error is None,
            "duration_ms": round((time.perf_counter() - started) * 1000, 3),
            "model_request_count": st.model_requests,
            "tool_call_count": len(st.executed),
            "retry_count": st.retries,
            "usage": usage,
        }
        if error is not None:
            end["error"] = error.to_dict()
            end["stage"] = st.stage
        ctx.emit("run_end", end)
    return RunResult(
        content=content if error is None else str(error),
        reasoning_content=reasoning,
        tool_calls=st.executed,
        usage=usage,
        trace_id=ctx.trace_id,
        trace=ctx.trace,
        error=error.to_dict() if error is not None else None,
        parsed=parsed,
        run_id=ctx.run_id,
        messages=messages,
    )


def _tool_round(
    spec: RunSpec,
    st: _State,
    calls: list[ToolCall],
    messages: list[dict[str, Any]],
    positions: dict[str, int],
) -> Generator[Any, Any, None]:
    """Run one round of tool calls and append their results to ``messages``."""
    ctx = spec.ctx
    active = ctx.active
    interceptor = spec.interceptor
    registry = spec.registry
    stream = spec.stream
    results: dict[str, tuple[str, dict[str, Any] | None, float]] = {}
    runnable: list[ToolCall] = []
    keys: dict[str, str] = {}
    titles: dict[str, str | None] = {}
    for call in calls:
        _check_cancel(ctx)
        key = idempotency_key(ctx.run_id, positions.get(call.id, 0), call.name, call.arguments)
        keys[call.id] = key
        tool = registry.get(call.name) if registry is not None else None
        title = getattr(tool, "title", None) or call.name
        titles[call.id] = title
        if active:
            ctx.emit(
                "tool_call",
                {
                    "id": call.id,
                    "call_id": call.id,
                    "name": call.name,
                    "title": title,
                    "arguments": _loads(call.arguments),
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
        if interceptor is not None:
            denied = None
            for phase, code, block_event in (
                ("before_tool_call", "LA-HOOK", "hook_block"),
                ("tool_guardrail", "LA-GUARDRAIL", "guardrail_block"),
            ):
                payload = {
                    "tool_name": call.name,
                    "arguments": _loads(call.arguments),
                    "call_id": call.id,
                }
                out = yield from _phase(phase, payload)
                if out.action == "block":
                    reason = out.reason or f"{phase} blocked the call"
                    if active:
                        data = {
                            "phase": phase,
                            "reason": reason,
                            "tool": call.name,
                            "call_id": call.id,
                        }
                        if block_event == "guardrail_block":
                            data["stage"] = "tool"
                        ctx.emit(block_event, data)
                    denied = PolicyError(code, f"Tool call {call.name} was denied: {reason}")
                    break
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
            if denied is not None:
                results[call.id] = (
                    f"Error [{denied.code}] {denied.message}",
                    denied.to_dict(),
                    0.0,
                )
                continue
        runnable.append(call)
    if runnable:
        _check_cancel(ctx)
        outcomes = yield RunTools(runnable, keys)
        for outcome in outcomes:
            err = outcome.error
            results[outcome.call_id] = (
                outcome.output,
                err.to_dict() if err is not None else None,
                outcome.latency_ms,
            )
    repairable = False
    for call in calls:
        output, err, latency = results.get(
            call.id, ("Error [LA-TOOL] the tool produced no result", {"code": "LA-TOOL"}, 0.0)
        )
        if err is not None and err.get("code") in _REPAIRABLE:
            repairable = True
        if interceptor is not None and err is None:
            out = yield from _phase(
                "after_tool_result", {"tool_name": call.name, "output": output, "call_id": call.id}
            )
            if out.action == "block":
                output = f"Error [LA-HOOK] the result of {call.name} was withheld: {out.reason or 'blocked'}"
            elif out.action == "replace" and out.payload is not None:
                output = _payload_text(out.payload, "output")
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
                },
            )
            if err is not None:
                ctx.emit(
                    "error",
                    {
                        "stage": "tool_arguments"
                        if err.get("code") in _REPAIRABLE
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
    if repairable:
        st.retries += 1
        if st.retries > spec.max_retry:
            st.stage = "max_retry"
            raise ToolError(
                "LA-TOOL-ARGS",
                f"the model kept sending invalid tool calls ({st.retries} rounds, max_retry={spec.max_retry})",
                details={"max_retry": spec.max_retry},
            )


def pending_tool_calls(
    messages: list[dict[str, Any]],
) -> tuple[list[ToolCall], dict[str, int], int]:
    """Tool calls of the current turn that have no result yet.

    Returns ``(pending calls, {call_id: position in the turn}, calls in the turn)``; the
    turn is everything after the last user message.
    """
    start = 0
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user":
            start = i + 1
            break
    positions: dict[str, int] = {}
    answered: set[str] = set()
    last_calls: list[dict[str, Any]] = []
    for message in messages[start:]:
        role = message.get("role")
        if role == "assistant" and message.get("tool_calls"):
            last_calls = list(message["tool_calls"])
            for call in last_calls:
                positions.setdefault(call.get("id"), len(positions))
        elif role == "tool":
            answered.add(message.get("tool_call_id"))
    pending = []
    for index, call in enumerate(last_calls):
        if call.get("id") in answered:
            continue
        function = call.get("function") or {}
        arguments = function.get("arguments")
        pending.append(
            ToolCall(
                id=call.get("id"),
                name=function.get("name", ""),
                arguments=arguments if isinstance(arguments, str) else json.dumps(arguments or {}),
                index=index,
            )
        )
    return pending, positions, len(positions)


def _select_tools(
    spec: RunSpec, ctx: RunContext, query: str | None, messages: list[dict[str, Any]], active: bool
) -> tuple[list[dict[str, Any]] | None, Any, dict[str, Any] | None]:
    registry = spec.registry
    tools: list[dict[str, Any]] | None = None
    if registry is not None and len(registry):
        names = None
        if spec.filter_tools and query and len(registry) > spec.filter_threshold:
            names = registry.select(query, limit=spec.filter_limit, messages=messages[-6:-1])
        tools = registry.schemas(names)
        if active and names is not None:
            ctx.emit("tool_selection", {"kept": list(names), **registry.selection_report(names)})
    tool_choice: Any = None
    response_format = None
    out = spec.output
    if out is not None:
        if out.via_tool:
            tools = [*(tools or ()), out.tool_schema()]
            tool_choice = out.tool_choice() if len(tools) == 1 else "required"
        else:
            response_format = out.response_format()
    return tools or None, tool_choice, response_format


def _phase(phase: str, payload: dict[str, Any]) -> Generator[Any, Any, PhaseOutcome]:
    try:
        out = yield CallPhase(phase, payload)
    except LightAgentError:
        raise
    except Exception as exc:  # deciders fail closed
        raise PolicyError(
            "LA-HOOK", f"the interceptor failed at {phase}: {type(exc).__name__}: {exc}"
        ) from exc
    return out if out is not None else CONTINUE


def _blocked_or_replaced(
    ctx: RunContext, out: PhaseOutcome, phase: str, code: str, value: Any, key: str
) -> Any:
    if out.action == "block":
        reason = out.reason or f"{phase} blocked the run"
        if ctx.active:
            if code == "LA-GUARDRAIL":
                stage = {"input_guardrail": "input", "output_guardrail": "output"}.get(phase, phase)
                ctx.emit("guardrail_block", {"stage": stage, "phase": phase, "reason": reason})
            else:
                ctx.emit("hook_block", {"phase": phase, "reason": reason})
        raise PolicyError(code, reason, details={"phase": phase})
    if out.action == "replace" and out.payload is not None:
        return _payload_text(out.payload, key)
    return value


def _payload_text(payload: Any, key: str) -> Any:
    if isinstance(payload, dict):
        return payload.get(key)
    return payload


def _params(spec: RunSpec, request: ModelRequest) -> dict[str, Any]:
    params: dict[str, Any] = {
        "model": getattr(spec.model, "name", None),
        "messages": request.messages,
        "stream": request.stream,
    }
    if request.tools:
        params["tools"] = request.tools
    if request.tool_choice is not None:
        params["tool_choice"] = request.tool_choice
    if request.response_format is not None:
        params["response_format"] = request.response_format
    params.update(request.options)
    return params


def _model_request_decision(
    ctx: RunContext, out: PhaseOutcome, request: ModelRequest
) -> tuple[ModelRequest, Any]:
    action = out.action
    if action == "block":
        _blocked_or_replaced(ctx, out, "before_model_request", "LA-HOOK", None, "params")
    if action == "fallback":
        return request, out.payload if out.payload is not None else ""
    if action == "replace" and out.payload is not None:
        payload = out.payload
        if isinstance(payload, ModelRequest):
            return payload, None
        params = dict(payload.get("params", payload)) if isinstance(payload, dict) else {}
        params.pop("model", None)
        return (
            ModelRequest(
                messages=list(params.pop("messages", request.messages)),
                tools=params.pop("tools", request.tools),
                tool_choice=params.pop("tool_choice", request.tool_choice),
                response_format=params.pop("response_format", request.response_format),
                stream=params.pop("stream", request.stream),
                options=params,
            ),
            None,
        )
    return request, None


def _bump_retry(spec: RunSpec, st: _State, phase: str) -> None:
    st.retries += 1
    if st.retries > spec.max_retry:
        st.stage = "max_retry"
        raise ModelError(
            "LA-MODEL-OUTPUT", f"{phase} asked for more than max_retry={spec.max_retry} retries"
        )


def _structured_retry(done: int, problem: str) -> int:
    if done >= 1:
        raise ValidationError(
            "LA-VALIDATION",
            f"the model's answer does not match output_schema after one repair: {problem}",
            details={"validation_error": problem},
        )
    return done + 1


def _assistant_message(response: ModelResponse) -> dict[str, Any]:
    # Reasoning stays in the history; the model's provider profile echoes, renames or drops it on send.
    return response.to_message(reasoning=True)


def _check_cancel(ctx: RunContext) -> None:
    token = ctx.cancellation
    if token is not None and token.cancelled:
        raise CancelledError(
            "LA-CANCELLED", f"run cancelled: {token.reason}", details={"reason": token.reason}
        )


def _loads(arguments: Any) -> Any:
    if not isinstance(arguments, str):
        return arguments
    try:
        return json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return arguments
