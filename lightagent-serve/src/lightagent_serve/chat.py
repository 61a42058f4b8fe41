"""The Chat Completions wire format: reading a request, writing completions and chunks.

The request's last message must be the user's (the run's query); the messages before
it become the run's history, after the agent's own instructions. ``system`` and
``developer`` messages are kept as system messages; the agent's instructions always
come first. Tools sent by the client are refused (the agent runs its own tools).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lightagent.utf8 import clean_text

__all__ = [
    "MAX_BODY_BYTES",
    "MAX_DEPTH",
    "SESSION_HEADER",
    "BadRequest",
    "ChatRequest",
    "chunk",
    "completion",
    "parse_body",
    "parse_request",
]

#: The request header that names the session a request continues.
SESSION_HEADER = "X-Session-Id"

ROLES = ("system", "developer", "user", "assistant", "tool")
#: Body fields passed to the model as options (everything else the SDK may send is ignored).
MODEL_OPTIONS = (
    "temperature",
    "top_p",
    "max_tokens",
    "max_completion_tokens",
    "stop",
    "seed",
    "presence_penalty",
    "frequency_penalty",
)
_SESSION_ID = re.compile(r"^[A-Za-z0-9_.:@-]{1,128}$")
MAX_USER = 256
#: The largest request body accepted by default (16 MiB: a long history with room to spare).
MAX_BODY_BYTES = 16 * 1024 * 1024
#: Bodies nested deeper than this (objects and arrays; the body itself is 1) are refused.
MAX_DEPTH = 64


class BadRequest(Exception):
    """A request the server refuses with 400; ``param`` names the field, ``code`` the error."""

    def __init__(self, message: str, param: str | None = None, code: str = "LA-VALIDATION") -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        self.code = code


def _too_deep(value: Any) -> bool:
    # Iterative: a recursive walk would fail on exactly the values it looks for.
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        for child in node.values() if isinstance(node, dict) else node:
            if isinstance(child, (dict, list)):
                stack.append((child, depth + 1))
    return False


def parse_body(raw: bytes) -> Any:
    """The JSON value of a request body; :class:`BadRequest` (``LA-JSON``) when it is not
    JSON or nests deeper than :data:`MAX_DEPTH`."""
    deep = BadRequest(f"the request body nests more than {MAX_DEPTH} levels", code="LA-JSON")
    try:
        value = json.loads(raw or b"null")
    except RecursionError:
        raise deep from None
    except ValueError:
        raise BadRequest("the request body is not valid JSON", code="LA-JSON") from None
    if isinstance(value, (dict, list)) and _too_deep(value):
        raise deep
    return value


@dataclass
class ChatRequest:
    """One checked ``POST /v1/chat/completions`` body."""

    model: str
    query: str
    history: list[dict[str, Any]] | None
    stream: bool = False
    include_usage: bool = False
    user: str | None = None
    session_id: str | None = None
    options: dict[str, Any] = field(default_factory=dict)


def _text(content: Any, where: str) -> str:
    if isinstance(content, str):
        return clean_text(content)
    if isinstance(content, list) and all(
        isinstance(p, Mapping) and p.get("type") == "text" and isinstance(p.get("text"), str)
        for p in content
    ):
        return clean_text("".join(p["text"] for p in content))
    raise BadRequest(f"{where} must be a string or a list of text parts", "messages")


def _message(raw: Any, index: int) -> dict[str, Any]:
    where = f"messages[{index}]"
    if not isinstance(raw, Mapping):
        raise BadRequest(f"{where} must be an object", "messages")
    role = raw.get("role")
    if role not in ROLES:
        raise BadRequest(f"{where}.role must be one of {', '.join(ROLES)}", "messages")
    message = {
        k: v
        for k, v in raw.items()
        if k in ("role", "content", "name", "tool_calls", "tool_call_id")
    }
    if role == "developer":
        message["role"] = "system"  # not every OpenAI-compatible model knows "developer"
    if role in ("system", "developer", "user"):
        message["content"] = _text(raw.get("content"), f"{where}.content")
    elif role == "tool":
        if not isinstance(raw.get("tool_call_id"), str):
            raise BadRequest(f"{where}.tool_call_id is required for a tool message", "messages")
        message["content"] = _text(raw.get("content") or "", f"{where}.content")
    elif raw.get("content") is not None:
        message["content"] = _text(raw.get("content"), f"{where}.content")
    return message


def parse_request(body: Any, *, instructions: str | None, session_id: str | None) -> ChatRequest:
    """Check a request body and turn it into the run's query, history and options."""
    if not isinstance(body, Mapping):
        raise BadRequest("the request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise BadRequest("model is required", "model")
    for name in ("tools", "functions"):
        if body.get(name):
            raise BadRequest(
                f"{name} in the request are not supported: the agent runs its own tools", name
            )
    if body.get("tool_choice") not in (None, "none", "auto"):
        raise BadRequest(
            "tool_choice is not supported: the agent runs its own tools", "tool_choice"
        )
    if body.get("n") not in (None, 1):
        raise BadRequest("only n=1 is supported", "n")
    fmt = body.get("response_format")
    if fmt is not None and (not isinstance(fmt, Mapping) or fmt.get("type") != "text"):
        raise BadRequest("only response_format {type: text} is supported", "response_format")
    raw = body.get("messages")
    if not isinstance(raw, list) or not raw:
        raise BadRequest("messages must be a non-empty list", "messages")
    messages = [_message(m, i) for i, m in enumerate(raw)]
    if messages[-1]["role"] != "user":
        raise BadRequest("the last message must be the user's", "messages")
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise BadRequest("stream must be true or false", "stream")
    user = body.get("user")
    if user is not None and (not isinstance(user, str) or not 0 < len(user) <= MAX_USER):
        raise BadRequest(f"user must be a string of 1 to {MAX_USER} characters", "user")
    if user is not None and clean_text(user) != user:  # U+FFFD would merge two users
        raise BadRequest("user holds a lone surrogate, which is not valid text", "user")
    if session_id is not None and not _SESSION_ID.match(session_id):
        raise BadRequest(
            "the session id must be 1-128 letters, digits or _ . : @ -", "X-Session-Id"
        )
    earlier = messages[:-1]
    history = None
    if earlier:
        history = ([{"role": "system", "content": instructions}] if instructions else []) + earlier
    stream_options = body.get("stream_options")
    include_usage = bool(
        isinstance(stream_options, Mapping) and stream_options.get("include_usage")
    )
    options = {k: body[k] for k in MODEL_OPTIONS if body.get(k) is not None}
    return ChatRequest(
        model=model,
        query=messages[-1]["content"],
        history=history,
        stream=stream,
        include_usage=include_usage,
        user=user,
        session_id=session_id,
        options=options,
    )


def _usage(usage: Mapping[str, Any] | None) -> dict[str, int]:
    usage = usage or {}
    prompt = int(usage.get("prompt_tokens") or 0)
    completion_tokens = int(usage.get("completion_tokens") or 0)
    total = int(usage.get("total_tokens") or prompt + completion_tokens)
    return {"prompt_tokens": prompt, "completion_tokens": completion_tokens, "total_tokens": total}


def completion(
    ident: str,
    model: str,
    content: str | None,
    usage: Mapping[str, Any] | None,
    reasoning: str | None,
) -> dict[str, Any]:
    """A ``chat.completion`` object."""
    message: dict[str, Any] = {"role": "assistant", "content": content or ""}
    if reasoning:
        message["reasoning_content"] = reasoning
    return {
        "id": ident,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "stop", "logprobs": None}],
        "usage": _usage(usage),
    }


def chunk(
    ident: str,
    model: str,
    created: int,
    delta: dict[str, Any] | None = None,
    *,
    finish: str | None = None,
    usage: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A ``chat.completion.chunk``; with ``usage`` the usage-only chunk (no choices)."""
    base = {"id": ident, "object": "chat.completion.chunk", "created": created, "model": model}
    if usage is not None:
        return {**base, "choices": [], "usage": _usage(usage)}
    choice = {"index": 0, "delta": delta or {}, "finish_reason": finish, "logprobs": None}
    return {**base, "choices": [choice]}
