"""The agent loop, written once: a generator that yields effects and returns a ``RunResult``.

It does no I/O. A driver (sync: :mod:`lightagent.run.sync_driver`, async:
:mod:`lightagent.run.async_driver`) performs each effect (call the model, stream the
model, run tool calls, ask the interceptor, load history, hand an item to the stream
consumer) and sends the result back, or throws the exception the effect raised.
"""

from __future__ import annotations

import time
from collections.abc import Generator
from typing import Any

from lightagent.errors import (
    BudgetError,
    CancelledError,
    LightAgentError,
    ModelError,
    ValidationError,
    classify_exception,
)
from lightagent.interceptors import RunContext
from lightagent.models.base import ModelRequest, ModelResponse
from lightagent.results import RunResult
from lightagent.run.effects import (
    CallModel,
    CallPhase,
    ListTools,
    LoadHistory,
    Output,
    StreamModel,
)
from lightagent.run.phases import (
    ask,
    blocked_or_replaced,
    model_request_decision,
    params,
    payload_value,
)
from lightagent.run.spec import RunSpec
from lightagent.run.state import RunState, check_cancel
from lightagent.run.tool_round import tool_round
from lightagent.run.transcript import assistant_message, pending_tool_calls, unique_call_ids
from lightagent.run.usage import usage_clamped

__all__ = ["pending_tool_calls", "run_machine"]

Machine = Generator[Any, Any, RunResult]


def run_machine(spec: RunSpec) -> Machine:
    """The loop for one run. Drive it with ``send``/``throw``; it returns a :class:`RunResult`."""
    ctx = spec.ctx
    active = ctx.active
    started = time.perf_counter()
    st = RunState()
    error: LightAgentError | None = None
    content: str | None = None
    reasoning: str | None = None
    parsed: Any = None
    messages: list[dict[str, Any]] = []
    interceptor = spec.interceptor
    query = spec.query
    # What a run may not use is looked up once and its steps skipped outright when off
    # (each would be a call, or a generator to make and finish, doing nothing).
    token = ctx.cancellation
    steps = spec.steps  # the capabilities' parts in this run (usually none)
    try:
        # Inside the try: a session that refuses this run (owner, store down) ends it typed.
        if active:
            _run_start(spec, st)
        if interceptor is not None:
            query = yield from _admit(spec, st, query)
        history = yield from _prepare(spec, st, query, messages)

        toolsets = spec.toolsets
        if toolsets is not None:
            yield from _toolset_view(spec, ctx, True)
        tools, tool_choice, response_format = _select_tools(spec, ctx, query, messages, active)
        for step in steps:
            yield from step.start(spec, st, history, messages, tools)

        if spec.initial_messages is not None:
            yield from _resume_pending(spec, st, messages)

        structured_repairs = 0
        first_request = True
        while True:
            st.stage = "model_request"
            if token is not None:
                check_cancel(ctx, turn_boundary=True)
            if toolsets is not None and not first_request:
                if (yield from _toolset_view(spec, ctx, False)):
                    tools, tool_choice, response_format = _select_tools(
                        spec, ctx, query, messages, active
                    )
            first_request = False
            for step in steps:
                yield from step.before_request(spec, st, messages, tools)
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
                st.stage = "before_model_request"  # what on_error reports for a block here
                out = yield from ask("before_model_request", {"params": params(spec, request)})
                request, fallback = model_request_decision(ctx, out, request)
                st.stage = "model_request"
                if out.action == "retry":
                    _bump_retry(spec, st, "before_model_request")
                    continue
            if fallback is not None:
                content = str(fallback)
                break
            # the request as it will go out: refused here, nothing of it is committed
            st.offered = _offered(request.tools)
            for step in steps:
                step.request(spec, st, request)
            st.model_requests += 1
            if active:
                _emit_request(spec, st, request)
            t0 = time.perf_counter()
            try:
                response = yield (StreamModel(request) if spec.stream else CallModel(request))
            except LightAgentError as exc:
                for step in steps:  # a step may mend the messages once (a context overflow)
                    if (yield from step.request_failed(spec, st, exc, messages)):
                        break
                else:
                    raise
                continue
            except Exception as exc:
                raise _model_failed(exc) from exc
            if not isinstance(response, ModelResponse):
                raise _model_failed(response)
            if response.usage is not None:
                usage_clamped(spec, response.usage, request_index=st.model_requests)
                st.usage = response.usage if st.usage is None else st.usage + response.usage
            for step in steps:
                step.response(spec, st, request, response)
            calls = response.tool_calls
            if calls:
                unique_call_ids(response)
            assistant = assistant_message(response)
            if active:
                _emit_response(spec, st, response, assistant, t0)
            spec_out = spec.output
            if spec_out is not None and spec_out.via_tool and calls:
                answer = _answer_by_tool(spec_out, calls, assistant, messages)
                if answer is not None:
                    parsed, problem = answer
                    if problem is not None:
                        structured_repairs = _structured_retry(structured_repairs, problem)
                        continue
                    content, reasoning = spec_out.dump(parsed), response.reasoning_content
                    break
            if calls and steps and (yield from _calls(spec, st, calls, assistant, messages)):
                break
            if calls:
                yield from _tools(spec, st, calls, assistant, messages)
                continue

            text = response.content or ""
            st.stage = "model_response"
            if response.finish_reason == "length":
                # a cut-off answer is never taken as the answer
                raise ModelError(
                    "LA-TRUNCATED",
                    "the model stopped at its output token limit (finish_reason=length)",
                    hint="Raise max_tokens (model_options=) or ask for a shorter answer.",
                    details={"finish_reason": "length", "partial_content": text},
                )
            if spec_out is not None:
                parsed, problem = spec_out.validate(text)
                if problem is not None:
                    messages.append(assistant)
                    messages.append(spec_out.repair_message(problem))
                    structured_repairs = _structured_retry(structured_repairs, problem)
                    continue
                text = spec_out.dump(parsed)
            if interceptor is not None:
                out = yield from ask("after_model_response", {"content": text})
                if out.action == "retry":
                    _bump_retry(spec, st, "after_model_response")
                    continue
                if out.action == "fallback":
                    text = str(out.payload)
                else:
                    text = blocked_or_replaced(
                        ctx, out, "after_model_response", "LA-HOOK", text, "content"
                    )
            messages.append(assistant)
            content = text
            reasoning = response.reasoning_content
            break

        if st.handoff is None and (interceptor is not None or steps):
            content = yield from _finish(spec, st, content)
        st.stage = None
    except LightAgentError as exc:
        error = exc
    except Exception as exc:  # a bug in a component: still never a bare traceback
        error = LightAgentError(
            "LA-UNKNOWN", f"{type(exc).__name__}: {exc}", details={"stage": st.stage}
        )

    if error is not None or interceptor is not None:
        content = yield from _aftermath(spec, st, error, content)
    usage = st.usage.to_dict() if st.usage is not None else None
    end_data: dict[str, Any] = {}
    for step in steps:
        step.end(spec, st, end_data)
    if active:
        _run_end(spec, st, error, usage, started, end_data)
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
        handoffs=[st.handoff.to_dict()] if st.handoff is not None else [],
    )


def _run_start(spec: RunSpec, st: RunState) -> None:
    ctx = spec.ctx
    ctx.emit(
        "run_start",
        {
            "query": spec.query,
            "agent": ctx.agent_name,
            "user_id": ctx.user_id,
            "stream": spec.stream,
            "result_format": spec.result_format,
            "run_id": ctx.run_id,
            "idempotency_key": ctx.idempotency_key,
            "session_id": ctx.session_id,
            "model": getattr(spec.model, "name", None),
            "provider": _provider(spec.model),
            "resumed": spec.initial_messages is not None,
            **(_begun(spec, st) if spec.steps else {}),
        },
    )


def _admit(spec: RunSpec, st: RunState, query: str | None) -> Generator[Any, Any, str | None]:
    """The query as the interceptor lets it in: ``before_run``, then the input guardrails."""
    ctx = spec.ctx
    st.stage = "before_run"
    out = yield from ask(
        "before_run",
        {
            "query": query,
            "tools": spec.registry.names() if spec.registry is not None else [],
            "stream": spec.stream,
            "result_format": spec.result_format,
            "metadata": ctx.metadata,
        },
    )
    query = blocked_or_replaced(ctx, out, "before_run", "LA-HOOK", query, "query")
    st.stage = "input_guardrail"
    out = yield from ask("input_guardrail", {"query": query})
    return blocked_or_replaced(ctx, out, "input_guardrail", "LA-GUARDRAIL", query, "query")


def _prepare(
    spec: RunSpec, st: RunState, query: str | None, messages: list[dict[str, Any]]
) -> Generator[Any, Any, Any]:
    """Fill ``messages`` (prompt, history, query, what the steps recall); returns the history read."""
    st.stage = "prepare"
    history = None
    if spec.initial_messages is not None:
        messages.extend(spec.initial_messages)
    else:
        history = spec.history
        if history is None and spec.load_history and spec.ctx.session_id:
            history = yield LoadHistory(spec.ctx.session_id)
        if spec.system_prompt and not (history and history[0].get("role") == "system"):
            messages.append({"role": "system", "content": spec.system_prompt})
        if history:
            messages.extend(history)
    if query is not None:
        messages.append({"role": "user", "content": query})
        st.query_message = messages[-1]
        for step in spec.steps:  # what a capability recalls for the query
            yield from step.recall(spec, st, query, messages)
        st.stage = "prepare"
    return history


def _resume_pending(
    spec: RunSpec, st: RunState, messages: list[dict[str, Any]]
) -> Generator[Any, Any, None]:
    """A resumed run first runs the tool calls its transcript left without a result."""
    pending, positions, total = pending_tool_calls(messages)
    st.call_index = total
    if pending:
        st.rounds += 1
        st.stage = "tool_execution"
        for step in spec.steps:
            step.before_tools(spec, st, pending)
        yield from tool_round(spec, st, pending, messages, positions, spec.call_keys)
        for step in spec.steps:
            step.after_tools(spec, st, pending, messages)


def _emit_request(spec: RunSpec, st: RunState, request: ModelRequest) -> None:
    spec.ctx.emit(
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


def _emit_response(
    spec: RunSpec, st: RunState, response: ModelResponse, assistant: dict[str, Any], t0: float
) -> None:
    spec.ctx.emit(
        "model_response",
        {
            "content": response.content,
            "reasoning_content": response.reasoning_content,
            "message": assistant,
            "finish_reason": response.finish_reason,
            "response_model": response.model,
            "usage": response.usage.to_dict() if response.usage else None,
            "latency_ms": round((time.perf_counter() - t0) * 1000, 3),
            "attempts": getattr(response, "attempts", 1),
            "request_index": st.model_requests,
        },
    )


def _model_failed(problem: Any) -> ModelError:
    """The typed error of a model call that raised ``problem`` or answered it instead of a
    ``ModelResponse``."""
    if isinstance(problem, Exception):
        return ModelError(
            classify_exception(problem, "LA-PROVIDER"),
            f"model call failed: {type(problem).__name__}: {problem}",
            details={"exception": type(problem).__name__},
        )
    return ModelError(
        "LA-MODEL-OUTPUT", f"the model returned {type(problem).__name__}, not a ModelResponse"
    )


def _answer_by_tool(
    out: Any, calls: list[Any], assistant: dict[str, Any], messages: list[dict[str, Any]]
) -> tuple[Any, str | None] | None:
    """``(parsed, problem)`` when the model gave its structured answer as the answer tool's
    call (every call of the turn then gets a result); None when it did not."""
    final = next((c for c in calls if c.name == out.name), None)
    if final is None:
        return None
    messages.append(assistant)
    parsed, problem = (None, final.error) if final.error else out.validate(final.arguments)
    for call in calls:  # every call gets a result, so the transcript stays valid
        if call is final:
            text = problem or "Answer recorded."
        else:
            text = "Not run: the final answer was given in the same turn."
        messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
    return parsed, problem


def _tools(
    spec: RunSpec,
    st: RunState,
    calls: list[Any],
    assistant: dict[str, Any],
    messages: list[dict[str, Any]],
) -> Generator[Any, Any, None]:
    """One tool round: the model's ``calls`` run, each result appended to ``messages``."""
    st.stage = "tool_execution"
    if st.rounds >= spec.max_tool_iterations:
        st.stage = "max_tool_iterations"
        raise BudgetError(
            "LA-MAX-ITERATIONS",
            f"Max tool iterations({spec.max_tool_iterations}) reached.",
            details={"max_tool_iterations": spec.max_tool_iterations},
        )
    steps = spec.steps
    for step in steps:
        step.before_tools(spec, st, calls)
    st.rounds += 1
    messages.append(assistant)
    positions = {}
    for call in calls:
        positions[call.id] = st.call_index
        st.call_index += 1
    yield from tool_round(spec, st, calls, messages, positions)
    for step in steps:
        step.after_tools(spec, st, calls, messages)


def _finish(spec: RunSpec, st: RunState, content: str | None) -> Generator[Any, Any, str | None]:
    """After the answer: the output guardrails, then the steps' ``finish``."""
    if spec.interceptor is not None:
        st.stage = "output_guardrail"
        out = yield from ask("output_guardrail", {"content": content})
        content = blocked_or_replaced(
            spec.ctx, out, "output_guardrail", "LA-GUARDRAIL", content, "content"
        )
        if spec.stream:
            # the driver shows what its output screen held back, now that it is judged
            yield Output("release", content)
    for step in spec.steps:
        yield from step.finish(spec, st, content)
    return content


def _aftermath(
    spec: RunSpec, st: RunState, error: LightAgentError | None, content: str | None
) -> Generator[Any, Any, str | None]:
    """The error event and ``on_error``, then ``after_run`` (which may replace the answer)."""
    interceptor = spec.interceptor
    if error is not None:
        if spec.ctx.active:
            spec.ctx.emit("error", {"stage": st.stage, "error": error.to_dict()})
        if interceptor is not None and not isinstance(error, CancelledError):
            try:
                failed = {"success": False, "content": content, "error": error.to_dict()}
                yield CallPhase("on_error", {**failed, "stage": st.stage})  # the seeds' payload
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
                content = payload_value(out.payload, "content")
        except Exception:
            pass
    if error is not None and spec.stream:
        yield Output("error", {"error": str(error), "code": error.code, "details": error.to_dict()})
    return content


def _run_end(
    spec: RunSpec,
    st: RunState,
    error: LightAgentError | None,
    usage: dict[str, Any] | None,
    started: float,
    end_data: dict[str, Any],
) -> None:
    end: dict[str, Any] = {
        "success": error is None,
        "duration_ms": round((time.perf_counter() - started) * 1000, 3),
        "model_request_count": st.model_requests,
        "tool_call_count": len(st.executed),
        "retry_count": st.retries,
        "usage": usage,
    }
    end.update(end_data)
    if error is not None:
        end["error"] = error.to_dict()
        end["stage"] = st.stage
        if error.details.get("exit_reason"):
            end["exit_reason"] = error.details["exit_reason"]
    spec.ctx.emit("run_end", end)


def _calls(
    spec: RunSpec,
    st: RunState,
    calls: list[Any],
    assistant: dict[str, Any],
    messages: list[dict[str, Any]],
) -> Generator[Any, Any, bool]:
    """Whether a capability's step ended the run on the model's ``calls`` (handed it on).

    Steps see only calls of offered tools; the others are the tool round's unknown tools."""
    if st.offered is not None:
        calls = [call for call in calls if call.name in st.offered]
    for step in spec.steps:
        if (yield from step.calls(spec, st, calls, assistant, messages)):
            return True
    return False


def _begun(spec: RunSpec, st: RunState) -> dict[str, Any]:
    """What the capabilities' steps add to the ``run_start`` data."""
    data: dict[str, Any] = {}
    for step in spec.steps:
        step.begin(spec, st, data)
    return data


def _toolset_view(spec: RunSpec, ctx: RunContext, first: bool) -> Generator[Any, Any, bool]:
    """Refresh ``spec.registry`` from the toolsets; whether it changed since the last look."""
    view = yield ListTools(spec.base_registry)
    changed = view.registry is not spec.registry
    spec.registry = view.registry
    if ctx.active and (first or changed):
        for conflict in view.conflicts:
            ctx.emit("toolset_conflict", conflict.to_dict())
        for skipped in view.skipped:
            kind = "toolset_tool_renamed" if skipped["exposed"] else "toolset_tool_dropped"
            ctx.emit(kind, skipped)
        for error in view.errors:
            ctx.emit("toolset_error", error)
        if changed and not first:
            ctx.emit("toolsets_changed", {"tools": view.registry.names()})
    return changed


def _select_tools(
    spec: RunSpec, ctx: RunContext, query: str | None, messages: list[dict[str, Any]], active: bool
) -> tuple[list[dict[str, Any]] | None, Any, dict[str, Any] | None]:
    registry = spec.registry
    tools: list[dict[str, Any]] | None = None
    if registry is not None and len(registry):
        names = None
        selector = spec.tool_selector if len(registry) > spec.filter_threshold else None
        if selector is not None:
            if query is None:  # a resumed run: rank by the turn's question
                query = next(
                    (m.get("content") for m in reversed(messages) if m.get("role") == "user"), None
                )
            if isinstance(query, str) and query:
                names = selector.offer(
                    registry, query, limit=spec.filter_limit, messages=messages[:-1]
                )
            else:
                selector = None  # nothing to rank by: every tool, no event
        if names is None:
            # a weak match (or no ranking): offer every tool and let the model decide
            tools = registry.schemas()
            if active and selector is not None:
                names = registry.names()
                report = selector.report(registry, names)
                ctx.emit("tool_selection", {"kept": names, "fallback": "all", **report})
        else:
            tools = registry.schemas(names)
            if active and selector is not None:  # (names came from it)
                report = selector.report(registry, names)
                ctx.emit("tool_selection", {"kept": list(names), **report})
    tool_choice: Any = None
    response_format = None
    out = spec.output
    if out is not None:
        if out.via_tool:
            tools = [*(tools or ()), out.tool_schema()]
            if out.forced:  # else "auto": the loop also reads a JSON answer given as text
                tool_choice = out.tool_choice() if len(tools) == 1 else "required"
        else:
            response_format = out.response_format()
    return tools or None, tool_choice, response_format


def _offered(tools: list[dict[str, Any]] | None) -> frozenset[str]:
    """The names in a request's tool list: the only tools a call may name."""
    return frozenset(t.get("function", {}).get("name") for t in tools or ())


def _provider(model: Any) -> str | None:
    """Who serves the model: its ``provider``, else its provider profile's name."""
    name = getattr(model, "provider", None)
    if name is None:
        name = getattr(getattr(model, "profile", None), "name", None)
    return name if isinstance(name, str) else None


def _bump_retry(spec: RunSpec, st: RunState, phase: str) -> None:
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
