"""Message content for spans: off unless asked for, always redacted, in the GenAI shapes.

OpenAI chat messages become the semantic conventions' ``{role, parts: [...]}`` form;
everything passes :func:`lightagent.redact` (credentials and key-like strings) before it
is serialized, and long values are cut.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["ENV_CAPTURE", "as_json", "input_messages", "output_message", "system_parts"]

#: The environment switch the OpenTelemetry GenAI instrumentations share.
ENV_CAPTURE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"

#: Longest serialized attribute value kept (longer ones are cut, marked with "…").
MAX_CHARS = 32_000


def as_json(value: Any, limit: int = MAX_CHARS) -> str:
    """``value`` redacted and serialized as JSON text (a string as itself), cut at ``limit``."""
    from lightagent.redaction import redact_or_marker

    clean = redact_or_marker(value)
    text = clean if isinstance(clean, str) else json.dumps(clean, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _text_parts(content: Any) -> list[dict[str, Any]]:
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "content": content}] if content else []
    parts: list[dict[str, Any]] = []
    for item in content if isinstance(content, list) else [content]:
        if isinstance(item, Mapping) and item.get("type") == "text":
            parts.append({"type": "text", "content": item.get("text", "")})
        elif isinstance(item, Mapping):
            parts.append({"type": str(item.get("type") or "unknown")})  # media: kind only
        else:
            parts.append({"type": "text", "content": str(item)})
    return parts


def _message(message: Mapping[str, Any]) -> dict[str, Any]:
    role = str(message.get("role") or "user")
    if role == "tool":
        part = {
            "type": "tool_call_response",
            "id": message.get("tool_call_id"),
            "response": message.get("content"),
        }
        return {"role": "tool", "parts": [part]}
    parts = _text_parts(message.get("content"))
    for call in message.get("tool_calls") or ():
        fn = call.get("function") or {}
        arguments: Any = fn.get("arguments")
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except ValueError:
                pass
        parts.append(
            {
                "type": "tool_call",
                "id": call.get("id"),
                "name": fn.get("name"),
                "arguments": arguments,
            }
        )
    return {"role": role, "parts": parts}


def input_messages(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The non-system messages of a request, in the conventions' shape."""
    return [_message(m) for m in messages if m.get("role") not in ("system", "developer")]


def system_parts(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The system (and developer) instructions of a request as text parts."""
    parts: list[dict[str, Any]] = []
    for message in messages:
        if message.get("role") in ("system", "developer"):
            parts.extend(_text_parts(message.get("content")))
    return parts


def output_message(message: Mapping[str, Any] | None, finish_reason: str | None) -> dict[str, Any]:
    """The assistant's answer (text and tool calls) with its finish reason."""
    out = _message(message or {"role": "assistant", "content": None})
    out["role"] = "assistant"
    out["finish_reason"] = finish_reason or "stop"
    return out
