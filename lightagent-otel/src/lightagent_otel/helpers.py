"""Small span helpers shared by the agent-run and workflow parts of the observer."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span, Status, StatusCode

from lightagent_otel import attributes as A
from lightagent_otel.content import as_json

__all__ = ["clean", "detach_if_current", "fail", "ns"]


def ns(event: Mapping[str, Any]) -> int:
    """The event's timestamp in nanoseconds (now when it has none)."""
    stamp = event.get("timestamp")
    return int(stamp * 1e9) if isinstance(stamp, (int, float)) else time.time_ns()


def clean(values: Mapping[str, Any]) -> dict[str, Any]:
    """Attributes without ``None`` values (OpenTelemetry refuses them)."""
    return {k: v for k, v in values.items() if v is not None}


def fail(span: Span, error: Any, at: int | None = None) -> None:
    """Mark ``span`` failed: status, ``error.type`` (the ``LA-…`` code) and an exception event.

    The message passes the event log's redaction first (content capture or not: error text
    quotes whatever failed, a request header or a tool's arguments included).
    """
    if isinstance(error, Mapping):
        code = str(error.get("code") or "LA-UNKNOWN")
        message = as_json(str(error.get("message") or code), 2000)
        kind = str(error.get("type") or "LightAgentError")
    else:
        text = str(error)
        code = text[1 : text.index("]")] if text.startswith("[LA-") and "]" in text else "error"
        message, kind = as_json(text, 2000), "LightAgentError"
    span.set_attribute(A.ERROR_TYPE, code)
    span.add_event(
        "exception",
        {"exception.type": kind, "exception.message": message, "lightagent.code": code},
        timestamp=at,
    )
    span.set_status(Status(StatusCode.ERROR, f"[{code}] {message}"[:500]))


def detach_if_current(span: Span, token: Any) -> None:
    """Detach ``token`` when ``span`` is still the current span of this context."""
    if token is not None and trace.get_current_span() is span:
        otel_context.detach(token)
