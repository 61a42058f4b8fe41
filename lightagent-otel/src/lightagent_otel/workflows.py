"""Spans for LightFlow runs and steps, and LightDAG runs and task attempts.

A flow run or a DAG run is an ``invoke_workflow`` span; each flow step and each DAG
attempt a child span named after the step or task. A step or attempt span is made
current in the asyncio task that runs it (each has a task of its own, and its start
and end are emitted from that task), so agents and tools started inside — sync ones
through ``asyncio.to_thread`` too — nest under it. Agents a step runs on an executor
thread are found through the ``flow_run_id``/``flow_step`` metadata LightFlow gives them.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind

from lightagent_otel import attributes as A
from lightagent_otel.content import as_json
from lightagent_otel.helpers import clean, detach_if_current, fail, ns

__all__ = ["WorkflowSpans"]

#: DAG attempt outcomes that are failures of the attempt (the task may still be retried).
FAILED_OUTCOMES = {
    "retry": "LA-DAG",
    "failed": "LA-POLICY",
    "crashed": "LA-UNKNOWN",
    "rejected": "LA-DAG-VERIFICATION-FAILED",
    "fenced": "LA-DAG-FENCED",
    "cancelled": "LA-CANCELLED",
}


@dataclass(eq=False)
class _Scope:
    span: Span
    context: Any
    token: Any = None
    finalizer: Any = None


class WorkflowSpans:
    """The flow and DAG half of :class:`~lightagent_otel.observer.SpanObserver`."""

    tracer: trace.Tracer
    capture_content: bool

    def __init__(self) -> None:
        self._scopes: dict[tuple[str, ...], _Scope] = {}

    # provided by SpanObserver
    def remember(self, trace_id: Any, span: Span) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def linked(self, trace_id: Any) -> Any:  # pragma: no cover - overridden
        raise NotImplementedError

    def workflow_handlers(self) -> dict[str, Callable[[Any, dict[str, Any]], None]]:
        """Event type -> handler, for the observer's dispatch table."""
        return {
            "flow_start": self._flow_start,
            "step_start": self._step_start,
            "step_retry": self._step_note,
            "step_fallback": self._step_note,
            "step_end": self._step_end,
            "flow_cancelled": self._flow_note,
            "flow_end": self._flow_end,
            "dag_run_start": self._dag_run_start,
            "dag_task_start": self._dag_task_start,
            "dag_task_end": self._dag_task_end,
            "dag_run_end": self._dag_run_end,
        }

    def step_context(self, flow_run_id: Any, step: Any) -> Any:
        """The context of a running flow step's span, for an agent that step runs."""
        if not flow_run_id or not step:
            return None
        scope = self._scopes.get(("step", str(flow_run_id), str(step)))
        return scope.context if scope is not None else None

    def workflow_span(self, event: Mapping[str, Any]) -> Span | None:
        """The step (or else flow) span an event of a flow run belongs to."""
        run_id = str(event.get("run_id"))
        data = event.get("data") or {}
        step = data.get("step") if isinstance(data, Mapping) else None
        scope = self._scopes.get(("step", run_id, str(step))) if step else None
        scope = scope or self._scopes.get(("flow", run_id))
        return scope.span if scope is not None else None

    def _start(
        self,
        key: tuple[str, ...],
        name: str,
        parent: Any,
        attrs: dict[str, Any],
        event: Mapping[str, Any],
        *,
        current: bool = False,
    ) -> _Scope:
        span = self.tracer.start_span(
            name,
            context=parent,
            kind=SpanKind.INTERNAL,
            attributes=clean(attrs),
            start_time=ns(event),
        )
        ctx = trace.set_span_in_context(span)
        scope = _Scope(span, ctx, otel_context.attach(ctx) if current else None)
        self._scopes[key] = scope
        return scope

    def _end(self, key: tuple[str, ...], event: Mapping[str, Any], error: Any = None) -> None:
        scope = self._scopes.pop(key, None)
        if scope is None:
            return
        if scope.finalizer is not None:
            scope.finalizer.detach()
        detach_if_current(scope.span, scope.token)
        if error is not None:
            fail(scope.span, error, ns(event))
        scope.span.end(ns(event))

    # -- LightFlow -------------------------------------------------------------------
    def _flow_start(self, source: Any, event: dict[str, Any]) -> None:
        data = event.get("data") or {}
        run_id = str(event.get("run_id"))
        parent = self.linked(event.get("parent_trace_id"))
        attrs = {
            A.OPERATION: "invoke_workflow",
            A.WORKFLOW_NAME: "LightFlow",
            A.FLOW_RUN_ID: run_id,
            A.TRACE_ID: event.get("trace_id"),
            A.PARENT_TRACE_ID: event.get("parent_trace_id") if parent is None else None,
            A.RUN_GROUP_ID: event.get("run_group_id"),
            "lightagent.flow.mode": data.get("mode"),
        }
        scope = self._start(("flow", run_id), "invoke_workflow LightFlow", parent, attrs, event)
        try:  # a flow whose task dies before flow_end: close its spans when it is freed
            scope.finalizer = weakref.finalize(source, self._abandon_flow, run_id)
        except TypeError:
            scope.finalizer = None
        if self.capture_content and data.get("query") is not None:
            message = {"role": "user", "parts": [{"type": "text", "content": data["query"]}]}
            scope.span.set_attribute(A.INPUT_MESSAGES, as_json([message]))
        self.remember(event.get("trace_id"), scope.span)

    def _step_start(self, source: Any, event: dict[str, Any]) -> None:
        run_id = str(event.get("run_id"))
        step = str((event.get("data") or {}).get("step"))
        flow = self._scopes.get(("flow", run_id))
        attrs = {A.FLOW_RUN_ID: run_id, A.FLOW_STEP: step}
        # Emitted from the step's own asyncio task: safe to make the span current there.
        self._start(
            ("step", run_id, step),
            f"step {step}",
            flow.context if flow is not None else None,
            attrs,
            event,
            current=True,
        )

    def _step_note(self, source: Any, event: dict[str, Any]) -> None:
        span = self.workflow_span(event)
        if span is not None:
            data = event.get("data") or {}
            attrs = clean(
                {
                    "lightagent.attempt": data.get("attempt"),
                    "lightagent.error": as_json(str(data["error"]), 500)
                    if data.get("error")
                    else None,
                }
            )
            span.add_event(str(event.get("type")), attrs, timestamp=ns(event))

    def _step_end(self, source: Any, event: dict[str, Any]) -> None:
        run_id = str(event.get("run_id"))
        data = event.get("data") or {}
        step = str(data.get("step"))
        key = ("step", run_id, step)
        if key not in self._scopes:  # skipped before it started: a point in time
            flow = self._scopes.get(("flow", run_id))
            self._start(key, f"step {step}", flow.context if flow else None, {}, event)
        scope = self._scopes[key]
        scope.span.set_attributes(
            clean(
                {
                    A.FLOW_RUN_ID: run_id,
                    A.FLOW_STEP: step,
                    A.FLOW_STATUS: data.get("status"),
                    A.ATTEMPTS: data.get("attempts"),
                    "lightagent.flow.used_fallback": data.get("used_fallback"),
                    "lightagent.flow.timed_out": data.get("timed_out"),
                }
            )
        )
        if self.capture_content and data.get("output_summary"):
            scope.span.set_attribute(
                "lightagent.flow.output_summary", as_json(data["output_summary"])
            )
        error = None
        if data.get("status") == "failed":
            error = {
                "code": data.get("error_code") or "LA-FLOW-AGENT-ERROR",
                "message": data.get("error"),
            }
        self._end(key, event, error)

    def _flow_note(self, source: Any, event: dict[str, Any]) -> None:
        scope = self._scopes.get(("flow", str(event.get("run_id"))))
        if scope is not None:
            reason = (event.get("data") or {}).get("reason")
            attrs = {"lightagent.reason": as_json(str(reason), 500)} if reason else {}
            scope.span.add_event(str(event.get("type")), attrs, timestamp=ns(event))

    def _flow_end(self, source: Any, event: dict[str, Any]) -> None:
        run_id = str(event.get("run_id"))
        data = event.get("data") or {}
        scope = self._scopes.get(("flow", run_id))
        if scope is None:
            return
        scope.span.set_attribute(A.FLOW_STATUS, str(data.get("status")))
        error = None
        if data.get("status") in ("failed", "cancelled"):
            message = data.get("error") or data.get("status")
            code = "LA-CANCELLED" if data.get("status") == "cancelled" else "LA-FLOW-AGENT-ERROR"
            error = {"code": code, "message": message}
        self._end(("flow", run_id), event, error)

    def _abandon_flow(self, run_id: str) -> None:
        event = {"timestamp": time.time()}
        error = {"code": "abandoned", "message": "the flow run ended without flow_end"}
        for key in [k for k in list(self._scopes) if k[0] in ("flow", "step") and k[1] == run_id]:
            scope = self._scopes.pop(key, None)
            if scope is not None:
                fail(scope.span, error, ns(event))
                scope.span.end(ns(event))

    # -- LightDAG --------------------------------------------------------------------
    def _dag_run_start(self, source: Any, event: dict[str, Any]) -> None:
        run_id = str(event.get("run_id"))
        attrs = {A.OPERATION: "invoke_workflow", A.WORKFLOW_NAME: "LightDAG", A.DAG_RUN_ID: run_id}
        self._start(("dag", run_id), "invoke_workflow LightDAG", None, attrs, event)

    def _dag_task_start(self, source: Any, event: dict[str, Any]) -> None:
        data = event.get("data") or {}
        run_id = str(event.get("run_id"))
        task_id = str(data.get("task_id"))
        run = self._scopes.get(("dag", run_id))
        attrs = {
            A.DAG_RUN_ID: run_id,
            A.DAG_TASK_ID: task_id,
            A.DAG_ATTEMPT_ID: data.get("attempt_id"),
            A.DAG_WORKER_KEY: data.get("worker_key"),
            "lightagent.dag.phase": data.get("phase"),
            "lightagent.dag.fence": data.get("fence"),
        }
        # Emitted from the attempt's own task before its body task is made: the body
        # (the worker, and agents it runs) inherits this span as its current one.
        self._start(
            ("task", str(data.get("attempt_id"))),
            f"dag_task {task_id}",
            run.context if run is not None else None,
            attrs,
            event,
            current=True,
        )

    def _dag_task_end(self, source: Any, event: dict[str, Any]) -> None:
        data = event.get("data") or {}
        key = ("task", str(data.get("attempt_id")))
        scope = self._scopes.get(key)
        if scope is None:
            return
        outcome = str(data.get("outcome"))
        scope.span.set_attribute(A.DAG_OUTCOME, outcome)
        error = None
        if outcome in FAILED_OUTCOMES:
            error = data.get("error") or {"code": FAILED_OUTCOMES[outcome], "message": outcome}
        self._end(key, event, error)

    def _dag_run_end(self, source: Any, event: dict[str, Any]) -> None:
        run_id = str(event.get("run_id"))
        data = event.get("data") or {}
        scope = self._scopes.get(("dag", run_id))
        if scope is None:
            return
        status = str(data.get("status"))
        scope.span.set_attribute(A.DAG_STATUS, status)
        error = None
        if status in ("failed", "cancelled", "interrupted"):
            error = {"code": "LA-DAG", "message": data.get("reason") or status}
        self._end(("dag", run_id), event, error)
