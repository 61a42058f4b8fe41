"""Small span helpers shared by the agent-run and workflow parts of the observer."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span, Status, StatusCode

from lightagent_otel import attributes as A

__all__ = ["clean", "detach_if_current", "fail", "ns"]


def ns(event: Mapping[str, Any]) -> int:
    """The event's timestamp in nanoseconds (now when it has none)."""
    stamp = event.get("timestamp")
    return int(stamp * 1e9) if isinstance(stamp, (int, float)) else time.time_ns()


def clean(values: Mapping[str, Any]) -> dict[str, Any]:
    """Attributes without ``None`` values (OpenTelemetry refuses them)."""
    return {k: v for k, v in values.items() if v is not None}


def fail(span: Span, error: Any, at: int | None = None) -> None:
    """Mark ``span`` failed: status, ``error.type`` (the ``LA-…`` code) and an exception event."""
    if isinstance(error, Mapping):
        code = str(error.get("code") or "LA-UNKNOWN")
        message = str(error.get("message") or code)
        kind = str(error.get("type") or "LightAgentError")
    else:
        text = str(error)
        code = text[1 : text.index("]")] if text.startswith("[LA-") and "]" in text else "error"
        message, kind = text, "LightAgentError"
    span.set_attribute(A.ERROR_TYPE, code)
    span.add_event(
        "exception",
        {"exception.type": kind, "exception.message": message[:2000], "lightagent.code": code},
        timestamp=at,
    )
    span.set_status(Status(StatusCode.ERROR, f"[{code}] {message}"[:500]))


def detach_if_current(span: Span, token: Any) -> None:
    """Detach ``token`` when ``span`` is still the current span of this context."""
    if token is not None and trace.get_current_span() is span:
        otel_context.detach(token)
