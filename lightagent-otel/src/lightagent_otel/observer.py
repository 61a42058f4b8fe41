"""The observer that turns lightagent events into OpenTelemetry spans.

One :class:`SpanObserver` serves every run of the process (it is a global observer, see
``lightagent.add_global_observer``). State is kept per run id, never per observer call,
so concurrent runs on threads or on one event loop never share a span. Parents are
found from lightagent's own identifiers first (a flow step's metadata, a
``parent_trace_id``), then from the OpenTelemetry context current when the run starts;
nothing relies on context that a suspended generator might leave behind.

Span times are the events' own timestamps, so a slow exporter never stretches a span.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, Span, SpanContext, SpanKind

from lightagent_otel import attributes as A
from lightagent_otel.content import as_json, input_messages, output_message, system_parts
from lightagent_otel.helpers import clean, fail, ns
from lightagent_otel.workflows import WorkflowSpans

__all__ = ["SpanObserver"]

#: How many finished runs' span contexts are kept so a later run can name them as parent.
RECENT_TRACES = 4096

#: Agent-run events shown as span events on the run's span (with their small fields).
SPAN_EVENTS = frozenset(
    {
        "hook_block",
        "guardrail_block",
        "approval_required",
        "approval_pending",
        "approval_granted",
        "approval_approve",
        "approval_approved",
        "approval_rejected",
        "approval_reject",
        "approval_timeout",
        "approval_edit",
        "handoff",
        "exporter_error",
    }
)
_EVENT_FIELDS = ("reason", "phase", "tool", "call_id", "code", "stage", "request_id", "target")


@dataclass(eq=False)
class _Run:
    """The spans of one agent run."""

    span: Span
    context: Any
    provider: str
    model: str | None
    chat: Span | None = None
    tools: dict[str, Span] = field(default_factory=dict)
    finished: dict[str, int] = field(default_factory=dict)
    input_tokens: int = 0
    output_tokens: int = 0
    saw_usage: bool = False
    output: dict[str, Any] | None = None
    finalizer: Any = None


class SpanObserver(WorkflowSpans):
    """A run observer that writes GenAI semantic-convention spans through ``tracer``.

    ``capture_content`` adds messages, tool arguments and results (redacted) to spans.
    """

    #: Ask the loop for ``tool_finished`` so each of several parallel calls ends on time.
    wants_tool_finished = True

    def __init__(self, tracer: trace.Tracer, *, capture_content: bool = False) -> None:
        super().__init__()
        self.tracer = tracer
        self.capture_content = capture_content
        self._lock = threading.Lock()
        self._runs: dict[str, _Run] = {}
        self._recent: OrderedDict[str, SpanContext] = OrderedDict()
        self._handlers: dict[str, Callable[[Any, dict[str, Any]], None]] = {
            "run_start": self._run_start,
            "model_request": self._model_request,
            "model_response": self._model_response,
            "tool_call": self._tool_call,
            "tool_finished": self._tool_finished,
            "tool_result": self._tool_result,
            "error": self._error,
            "run_end": self._run_end,
            **self.workflow_handlers(),
        }

    # -- dispatch --------------------------------------------------------------------
    def on_event(self, run: Any, event: dict[str, Any]) -> None:
        """Handle one event of an agent run, a LightFlow run or a LightDAG attempt."""
        kind = event.get("type")
        handler = self._handlers.get(kind)  # type: ignore[arg-type]
        if handler is not None:
            handler(run, event)
        elif kind in SPAN_EVENTS:
            self._span_event(event)

    # -- linking ---------------------------------------------------------------------
    def remember(self, trace_id: Any, span: Span) -> None:
        """Let later runs that name ``trace_id`` as their parent join this span's trace."""
        if not trace_id:
            return
        with self._lock:
            self._recent[str(trace_id)] = span.get_span_context()
            self._recent.move_to_end(str(trace_id))
            while len(self._recent) > RECENT_TRACES:
                self._recent.popitem(last=False)

    def linked(self, trace_id: Any) -> Any:
        """The OpenTelemetry context of the span that carried lightagent ``trace_id``, if known."""
        if not trace_id:
            return None
        with self._lock:
            found = self._recent.get(str(trace_id))
        return trace.set_span_in_context(NonRecordingSpan(found)) if found is not None else None

    def _parent(self, run: Any, event: Mapping[str, Any]) -> Any:
        meta = getattr(run, "metadata", None) or {}
        step = self.step_context(meta.get("flow_run_id"), meta.get("flow_step"))
        if step is not None:
            return step
        return self.linked(event.get("parent_trace_id"))  # None: the current context

    # -- agent runs ------------------------------------------------------------------
    def _run_start(self, run: Any, event: dict[str, Any]) -> None:
        data = event.get("data") or {}
        run_id = str(event.get("run_id"))
        name = str(getattr(run, "agent_name", None) or "agent")
        provider = str(data.get("provider") or "unknown")
        model = data.get("model")
        parent = self._parent(run, event)
        unlinked = event.get("parent_trace_id") if parent is None else None
        attrs = clean(
            {
                A.OPERATION: "invoke_agent",
                A.PROVIDER: provider,
                A.AGENT_NAME: name,
                A.REQUEST_MODEL: model,
                A.CONVERSATION_ID: data.get("session_id") or getattr(run, "session_id", None),
                A.RUN_ID: run_id,
                A.TRACE_ID: event.get("trace_id"),
                A.PARENT_TRACE_ID: unlinked,
                A.RUN_GROUP_ID: event.get("run_group_id"),
            }
        )
        span = self.tracer.start_span(
            f"invoke_agent {name}",
            context=parent,
            kind=SpanKind.INTERNAL,
            attributes=attrs,
            start_time=ns(event),
        )
        if self.capture_content and data.get("query") is not None:
            query = {"role": "user", "content": data.get("query")}
            span.set_attribute(A.INPUT_MESSAGES, as_json(input_messages([query])))
        state = _Run(span, trace.set_span_in_context(span), provider, model)
        try:  # a run whose consumer walks away never ends: close its spans when it is freed
            state.finalizer = weakref.finalize(run, self._abandon, run_id)
        except TypeError:
            state.finalizer = None
        with self._lock:
            self._runs[run_id] = state
        self.remember(event.get("trace_id"), span)

    def _state(self, event: Mapping[str, Any]) -> _Run | None:
        return self._runs.get(str(event.get("run_id")))

    def _model_request(self, run: Any, event: dict[str, Any]) -> None:
        st = self._state(event)
        if st is None:
            return
        data = event.get("data") or {}
        model = data.get("model") or st.model
        if st.chat is not None:  # a request without a response: close it first
            st.chat.end(ns(event))
        attrs = clean(
            {
                A.OPERATION: "chat",
                A.PROVIDER: st.provider,
                A.REQUEST_MODEL: model,
                A.REQUEST_INDEX: data.get("request_index"),
            }
        )
        span = self.tracer.start_span(
            f"chat {model or 'unknown'}",
            context=st.context,
            kind=SpanKind.CLIENT,
            attributes=attrs,
            start_time=ns(event),
        )
        request = data.get("request") or {}
        if self.capture_content and isinstance(request, Mapping):
            messages = request.get("messages") or []
            span.set_attribute(A.INPUT_MESSAGES, as_json(input_messages(messages)))
            system = system_parts(messages)
            if system:
                span.set_attribute(A.SYSTEM_INSTRUCTIONS, as_json(system))
            if request.get("tools"):
                span.set_attribute(A.TOOL_DEFINITIONS, as_json(request["tools"]))
        st.chat = span

    def _model_response(self, run: Any, event: dict[str, Any]) -> None:
        st = self._state(event)
        if st is None or st.chat is None:
            return
        span, st.chat = st.chat, None
        data = event.get("data") or {}
        finish = data.get("finish_reason")
        usage = data.get("usage") or {}
        attrs = clean(
            {
                A.RESPONSE_MODEL: data.get("response_model"),
                A.FINISH_REASONS: [str(finish)] if finish else None,
                A.ATTEMPTS: data.get("attempts"),
            }
        )
        if usage:
            attrs[A.INPUT_TOKENS] = int(usage.get("prompt_tokens") or 0)
            attrs[A.OUTPUT_TOKENS] = int(usage.get("completion_tokens") or 0)
            st.input_tokens += attrs[A.INPUT_TOKENS]
            st.output_tokens += attrs[A.OUTPUT_TOKENS]
            st.saw_usage = True
        span.set_attributes(attrs)
        if self.capture_content:
            st.output = output_message(data.get("message"), finish)
            span.set_attribute(A.OUTPUT_MESSAGES, as_json([st.output]))
        span.end(ns(event))

    def _tool_call(self, run: Any, event: dict[str, Any]) -> None:
        st = self._state(event)
        if st is None:
            return
        data = event.get("data") or {}
        name = str(data.get("name") or "tool")
        call_id = str(data.get("call_id") or data.get("id") or "")
        span = self.tracer.start_span(
            f"execute_tool {name}",
            context=st.context,
            kind=SpanKind.INTERNAL,
            attributes=clean(
                {
                    A.OPERATION: "execute_tool",
                    A.TOOL_NAME: name,
                    A.TOOL_CALL_ID: call_id or None,
                    A.TOOL_TYPE: "function",
                }
            ),
            start_time=ns(event),
        )
        if self.capture_content:
            span.set_attribute(A.TOOL_ARGUMENTS, as_json(data.get("arguments")))
        st.tools[call_id] = span

    def _tool_finished(self, run: Any, event: dict[str, Any]) -> None:
        st = self._state(event)
        if st is not None:
            st.finished[str((event.get("data") or {}).get("call_id"))] = ns(event)

    def _tool_result(self, run: Any, event: dict[str, Any]) -> None:
        st = self._state(event)
        if st is None:
            return
        data = event.get("data") or {}
        call_id = str(data.get("call_id") or "")
        span = st.tools.pop(call_id, None)
        if span is None:
            return
        end = st.finished.pop(call_id, None) or ns(event)
        if data.get("latency_ms") is not None:
            span.set_attribute(A.TOOL_LATENCY_MS, float(data["latency_ms"]))
        if data.get("error"):
            fail(span, data["error"], end)
        if self.capture_content:
            output = data.get("output")
            span.set_attribute(A.TOOL_RESULT, as_json(output if output is not None else ""))
        span.end(end)

    def _error(self, run: Any, event: dict[str, Any]) -> None:
        st = self._state(event)
        data = event.get("data") or {}
        if st is None or data.get("tool") is not None or st.chat is None:
            return  # tool errors are on their tool span; run errors on the run span
        span, st.chat = st.chat, None
        fail(span, data.get("error") or "failed", ns(event))
        span.end(ns(event))

    def _run_end(self, run: Any, event: dict[str, Any]) -> None:
        with self._lock:
            st = self._runs.pop(str(event.get("run_id")), None)
        if st is None:
            return
        if st.finalizer is not None:
            st.finalizer.detach()
        data = event.get("data") or {}
        at = ns(event)
        self._close_children(st, at, data.get("error") or "the run ended first")
        span = st.span
        if st.saw_usage:
            span.set_attribute(A.INPUT_TOKENS, st.input_tokens)
            span.set_attribute(A.OUTPUT_TOKENS, st.output_tokens)
        if not data.get("success", True):
            fail(span, data.get("error") or "run failed", at)
        elif self.capture_content and st.output is not None:
            span.set_attribute(A.OUTPUT_MESSAGES, as_json([st.output]))
        span.end(at)

    def _close_children(self, st: _Run, at: int, error: Any) -> None:
        if st.chat is not None:
            fail(st.chat, error, at)
            st.chat.end(at)
            st.chat = None
        for span in st.tools.values():
            fail(span, error, at)
            span.end(at)
        st.tools.clear()

    def _abandon(self, run_id: str) -> None:
        with self._lock:
            st = self._runs.pop(run_id, None)
        if st is None:
            return
        at = time.time_ns()
        error = {"code": "abandoned", "message": "the run was dropped before it ended"}
        self._close_children(st, at, error)
        fail(st.span, error, at)
        st.span.end(at)

    def _span_event(self, event: dict[str, Any]) -> None:
        data = event.get("data") or {}
        target = self._state(event)
        span = target.span if target is not None else self.workflow_span(event)
        if span is None:
            return
        attrs: dict[str, str | int | float | bool] = {}
        for key in _EVENT_FIELDS:
            value = data.get(key) if isinstance(data, Mapping) else None
            if isinstance(value, (int, float, bool)):
                attrs[f"lightagent.{key}"] = value
            elif value is not None:  # a reason quotes what was refused: redacted
                attrs[f"lightagent.{key}"] = as_json(value, 500)
        span.add_event(str(event.get("type")), attrs, timestamp=ns(event))

    # -- for tests and shutdown --------------------------------------------------------
    def open_runs(self) -> int:
        """How many agent runs have a span that has not ended yet."""
        return len(self._runs)
