"""Asking the interceptor about a phase and applying its decision."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from lightagent.errors import LightAgentError, PolicyError
from lightagent.interceptors import CONTINUE, PhaseOutcome, RunContext
from lightagent.models.base import ModelRequest
from lightagent.run.effects import CallPhase
from lightagent.run.spec import RunSpec

__all__ = [
    "ask",
    "blocked_or_replaced",
    "model_request_decision",
    "params",
    "payload_value",
    "strip_code",
]


def ask(phase: str, payload: dict[str, Any]) -> Generator[Any, Any, PhaseOutcome]:
    try:
        out = yield CallPhase(phase, payload)
    except LightAgentError:
        raise
    except Exception as exc:  # deciders fail closed
        raise PolicyError(
            "LA-HOOK", f"the interceptor failed at {phase}: {type(exc).__name__}: {exc}"
        ) from exc
    return out if out is not None else CONTINUE


def blocked_or_replaced(
    ctx: RunContext, out: PhaseOutcome, phase: str, code: str, value: Any, key: str
) -> Any:
    if out.action == "block":
        guard = phase in ("input_guardrail", "output_guardrail")
        # the decider names its code (LA-POLICY, LA-APPROVAL-PENDING, ...); ``code`` is the default
        code = out.metadata.get("code") or code
        reason = strip_code(out.reason or f"{phase} blocked the run", code)
        if ctx.active:
            if guard:
                stage = {"input_guardrail": "input", "output_guardrail": "output"}[phase]
                ctx.emit(
                    "guardrail_block",
                    {"stage": stage, "phase": phase, "reason": reason, "code": code},
                )
            else:
                ctx.emit("hook_block", {"phase": phase, "reason": reason, "code": code})
        raise PolicyError(code, reason, details={"phase": phase})
    if out.action == "replace" and out.payload is not None:
        return payload_value(out.payload, key)
    return value


def strip_code(reason: str, code: str) -> str:
    """``reason`` without a leading ``[code]`` (the error text carries the code once)."""
    prefix = f"[{code}]"
    if reason.startswith(prefix):
        return reason[len(prefix) :].lstrip() or reason
    return reason


def payload_value(payload: Any, key: str) -> Any:
    if isinstance(payload, dict):
        return payload.get(key)
    return payload


def params(spec: RunSpec, request: ModelRequest) -> dict[str, Any]:
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


def model_request_decision(
    ctx: RunContext, out: PhaseOutcome, request: ModelRequest
) -> tuple[ModelRequest, Any]:
    action = out.action
    if action == "block":
        blocked_or_replaced(ctx, out, "before_model_request", "LA-HOOK", None, "params")
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
