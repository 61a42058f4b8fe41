"""Executing one step: query, hooks, approval, attempts with timeout and backoff, fallback.

:class:`StepExecution` is mixed into :class:`~lightagent_flow.scheduler.FlowRun`; it works
on that run's state only.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import time
import uuid
from collections.abc import Callable
from typing import Any

from lightagent.errors import ApprovalError, LightAgentError

from lightagent_flow.approvals import from_handler, normalize_decision
from lightagent_flow.invoke import call_agent, call_maybe_async, to_jsonable
from lightagent_flow.results import (
    FAILED,
    RUNNING,
    SKIPPED,
    SUCCESS,
    WAITING_APPROVAL,
    LightFlowStepResult,
)
from lightagent_flow.step import LightFlowStep

__all__ = ["StepExecution", "summarize"]


def summarize(value: Any, limit: int = 200) -> str:
    """A one-line summary of a step input or output for traces and UIs."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _positional_arity(fn: Callable[..., Any]) -> int:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 1
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return 2
    return sum(1 for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))


class StepExecution:
    """How one step of a run is executed (the per-run state lives on the run)."""

    run_id: str
    query: str
    header: dict[str, Any]
    hooks: Any
    results: dict[str, LightFlowStepResult]
    approvals: dict[str, dict[str, Any]]
    trace_enabled: bool
    retry_backoff: float
    retry_backoff_max: float
    _executor: Any

    def emit(
        self, type: str, data: dict[str, Any]
    ) -> dict[str, Any]:  # pragma: no cover - FlowRun's
        raise NotImplementedError

    def context(self) -> dict[str, Any]:  # pragma: no cover - FlowRun's
        raise NotImplementedError

    async def call_store(self, method: str, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover
        raise NotImplementedError

    def _key(self, name: str) -> str:
        # Stable across retries and resumes (tools deduplicate on it); a deliberate
        # rerun_step is new work, so each rerun generation gets keys of its own.
        reruns = self.header.get("reruns") or 0
        return f"{self.run_id}:{name}" + (f":rerun-{reruns}" if reruns else "")

    def _finish(
        self,
        res: LightFlowStepResult,
        status: str,
        code: str | None = None,
        message: str | None = None,
    ) -> LightFlowStepResult:
        res.status = status
        res.ended_at = time.time()
        if res.started_at is not None:
            res.duration_ms = round((res.ended_at - res.started_at) * 1000, 3)
        if message is not None:
            message = _redacted(message)
        if code is not None:
            res.error_code = code
            res.error = f"[{code}] {message}"
        elif message is not None:
            res.error = message
        if status == SUCCESS:
            res.output_summary = summarize(res.content)
        return res

    async def _build_query(self, step: LightFlowStep, ctx: dict[str, Any]) -> str:
        if step.query is None:
            if not step.depends_on:
                return self.query
            lines = [f"{d}: {_as_text(ctx['outputs'].get(d, ''))}" for d in step.depends_on]
            return self.query + "\n\nPrevious step outputs:\n" + "\n".join(lines)
        if isinstance(step.query, str):
            return step.query
        args = (self.query, ctx) if _positional_arity(step.query) >= 2 else (ctx,)
        return _as_text(await call_maybe_async(step.query, *args))

    def _hook_context(self, step: str | None) -> dict[str, Any]:
        return {
            "trace_id": self.header.get("trace_id"),
            "parent_trace_id": self.header.get("parent_trace_id"),
            "run_id": self.run_id,
            "run_group_id": self.header.get("run_group_id"),
            "user_id": self.header.get("user_id"),
            "flow_id": self.run_id,
            "step_name": step,
        }

    async def _run_step(self, step: LightFlowStep) -> LightFlowStepResult:
        name = step.name
        res = self.results[name]
        res.status, res.started_at = RUNNING, time.time()
        res.idempotency_key = self._key(name)
        self.emit("step_start", {"step": name, "depends_on": list(step.depends_on)})
        ctx = self.context()
        try:
            if step.cancel_if is not None and await call_maybe_async(step.cancel_if, ctx):
                return self._finish(res, SKIPPED, message="skipped: cancel_if returned true")
            query = await self._build_query(step, ctx)
            agent = step.agent
            decision = await self.hooks.run(
                "before_flow_step",
                {"query": query, "context": ctx, "run_id": self.run_id, "step": name},
                self.emit,
                **self._hook_context(name),
            )
            if decision.action == "block":
                return self._finish(res, FAILED, "LA-HOOK", decision.reason or "blocked by a hook")
            if decision.action == "replace":
                replaced = decision.payload
                query = _as_text(
                    replaced.get("query", query) if isinstance(replaced, dict) else replaced
                )
            if decision.action == "fallback":
                if step.fallback_agent is None:
                    return self._finish(
                        res, FAILED, "LA-HOOK", "a hook asked for a fallback agent; none is set"
                    )
                agent, res.used_fallback = step.fallback_agent, True
            res.query, res.input_summary = query, summarize(query)
            if step.requires_approval:
                kind, value = await self._approval(step, res, query, ctx)
                if kind == "wait":
                    return self._finish(res, WAITING_APPROVAL)
                if kind == "reject":  # the step's error is the reviewer's reason, as in the seeds
                    res.error_code = "LA-APPROVAL"
                    return self._finish(res, FAILED, None, value)
                if kind == "respond":
                    res.content = value
                    return await self._after(step, res, agent, query, ctx)
                query = value
                res.query, res.input_summary = query, summarize(query)
            res.content = await self._attempts(step, agent, query, res, ctx)
            return await self._after(step, res, agent, query, ctx)
        except LightAgentError as exc:
            return self._finish(res, FAILED, exc.code, exc.message)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a failing query callable, cancel_if or handler
            return self._finish(res, FAILED, "LA-FLOW-AGENT-ERROR", f"{type(exc).__name__}: {exc}")

    async def _after(
        self,
        step: LightFlowStep,
        res: LightFlowStepResult,
        agent: Any,
        query: str,
        ctx: dict[str, Any],
    ) -> LightFlowStepResult:
        for _ in range(step.max_retry):
            decision = await self.hooks.run(
                "after_flow_step",
                {"run_id": self.run_id, "step_result": res.to_dict()},
                self.emit,
                **self._hook_context(step.name),
            )
            if decision.action == "block":
                return self._finish(res, FAILED, "LA-HOOK", decision.reason or "blocked by a hook")
            if decision.action == "replace":
                payload = decision.payload
                if not isinstance(payload, dict):
                    res.content = to_jsonable(payload)  # a bare value is the new output
                elif "content" in payload:
                    res.content = to_jsonable(payload["content"])
                elif (
                    isinstance(payload.get("step_result"), dict)
                    and "content" in payload["step_result"]
                ):
                    res.content = to_jsonable(payload["step_result"]["content"])
            if decision.action != "retry":
                break
            res.content = await self._attempts(step, agent, query, res, ctx)
        return self._finish(res, SUCCESS)

    async def _approval(
        self, step: LightFlowStep, res: LightFlowStepResult, query: str, ctx: dict[str, Any]
    ) -> tuple[str, Any]:
        name = step.name
        decision = self.approvals.get(name)
        if decision is None and step.approval_handler is not None:
            try:
                decision = from_handler(await call_maybe_async(step.approval_handler, step, ctx))
            except LightAgentError:
                raise
            except Exception as exc:
                decision = normalize_decision(
                    {"action": "reject", "reason": f"approval handler failed: {exc}"}
                )
            if decision is not None:
                decision["source"] = "handler"
                self.approvals[name] = decision
                await self.call_store("set_approval", self.run_id, name, decision)
        if decision is None:
            request_id = res.approval_request_id or uuid.uuid4().hex
            res.approval_request_id = request_id
            data = {"step": name, "request_id": request_id, "query": summarize(query)}
            self.emit("approval_required", data)
            hook = await self.hooks.run(
                "on_approval_required",
                {
                    "run_id": self.run_id,
                    "step": name,
                    "query": query,
                    "request_id": request_id,
                    "context": ctx,
                },
                self.emit,
                **self._hook_context(name),
            )
            if hook.action == "block":
                raise ApprovalError("LA-APPROVAL", hook.reason or "approval refused by a hook")
            self.emit("approval_pending", data)
            return "wait", None
        res.approval_decision = decision
        self.emit(
            f"approval_{decision['action']}", {"step": name, "reason": decision.get("reason")}
        )
        action = decision["action"]
        if action == "reject":
            return "reject", decision.get("reason") or "approval rejected"
        if action == "respond":
            return "respond", decision["response"]
        if action == "edit":
            return "run", decision["query"]
        return "run", query

    async def _attempts(
        self,
        step: LightFlowStep,
        agent: Any,
        query: str,
        res: LightFlowStepResult,
        ctx: dict[str, Any],
    ) -> Any:
        offered: dict[str, Any] = {
            "user_id": self.header.get("user_id"),
            "result_format": "object",
            "trace": self.trace_enabled,
            "parent_trace_id": self.header.get("trace_id"),
            "run_group_id": self.header.get("run_group_id") or self.run_id,
            "metadata": {
                **(self.header.get("metadata") or {}),
                **step.metadata,
                "flow_run_id": self.run_id,
                "flow_step": step.name,
            },
            "idempotency_key": self._key(step.name),
            "context": ctx,
        }
        if step.tools:
            offered["tools"] = list(step.tools)
        base = self.retry_backoff if step.retry_backoff is None else step.retry_backoff
        cap = self.retry_backoff_max if step.retry_backoff_max is None else step.retry_backoff_max
        error: LightAgentError | None = None
        for attempt in range(1, step.max_retry + 1):
            if attempt > 1:
                wait = min(cap, base * 2 ** (attempt - 2))
                self.emit(
                    "step_retry",
                    {"step": step.name, "attempt": attempt, "wait_s": wait, "error": str(error)},
                )
                await asyncio.sleep(wait)
            res.attempts += 1
            res.retry_count = res.attempts - 1
            try:
                out = await call_agent(
                    agent, query, offered, timeout=step.timeout, executor=self._executor
                )
                res.trace = out.trace
                return out.content
            except LightAgentError as exc:
                error = exc
                if exc.code == "LA-FLOW-TIMEOUT":
                    res.timed_out, res.timeout_mode = True, exc.details.get("timeout_mode")
                    if res.timeout_mode == "abandoned" and not step.allow_timeout_overlap:
                        break  # the abandoned thread still runs; do not start a second copy
        fallback = step.fallback_agent
        overlap_blocked = res.timeout_mode == "abandoned" and not step.allow_timeout_overlap
        if fallback is not None and agent is not fallback and not overlap_blocked:
            res.used_fallback = True
            self.emit("step_fallback", {"step": step.name, "error": str(error)})
            try:
                out = await call_agent(
                    fallback, query, offered, timeout=step.timeout, executor=self._executor
                )
                res.trace = out.trace
                return out.content
            except LightAgentError as exc:
                error = exc
                if exc.code == "LA-FLOW-TIMEOUT":
                    res.timed_out, res.timeout_mode = True, exc.details.get("timeout_mode")
        assert error is not None
        raise error


def _redacted(message: str) -> str:
    """An error message as it is stored and shown: credentials redacted, fail closed."""
    from lightagent.redaction import REDACTION_FAILED, redact_text

    try:
        return redact_text(str(message))
    except Exception:
        return REDACTION_FAILED
