"""Turn what a tool returns, or raises, into the short text the model reads."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from lightagent.errors import LightAgentError, ToolError

__all__ = [
    "NO_OUTPUT",
    "DetailedOutput",
    "error_text",
    "format_output",
    "join_items",
    "wrap_exception",
]

#: What the model reads when a tool returns ``None``.
NO_OUTPUT = "(no output)"
_MAX_ERROR_CHARS = 300


class DetailedOutput(str):
    """A tool's text for the model that also carries ``details`` for its ``tool_result`` event
    (a toolset result's ``structured`` and ``metadata``); it is the plain text everywhere else."""

    details: dict[str, Any]

    def __new__(cls, text: str, details: dict[str, Any] | None = None) -> DetailedOutput:
        made = super().__new__(cls, text)
        made.details = details or {}  # copy and pickle call this with the text alone
        return made


def _jsonable(value: Any) -> Any:
    if hasattr(value, "model_dump") and callable(value.model_dump):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    return str(value)


def format_output(value: Any) -> str:
    """Text for a tool result: str as is, dict/list as JSON, ``None`` as ``"(no output)"``."""
    if value is None:
        return NO_OUTPUT
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace")
    if (
        isinstance(value, (dict, list, tuple))
        or hasattr(value, "model_dump")
        or (dataclasses.is_dataclass(value) and not isinstance(value, type))
    ):
        try:
            return json.dumps(
                _jsonable(value) if not isinstance(value, (dict, list, tuple)) else value,
                ensure_ascii=False,
                default=_jsonable,
            )
        except (TypeError, ValueError):
            return str(value)
    return str(value)


def _chunk_text(item: Any) -> str | None:
    """The text of a streamed chat chunk yielded by a generator tool (seeds pass-through)."""
    choices = item.get("choices") if isinstance(item, dict) else getattr(item, "choices", None)
    if not choices or isinstance(item, (str, bytes)):
        return None
    first = choices[0]
    delta = first.get("delta") if isinstance(first, dict) else getattr(first, "delta", None)
    content = delta.get("content") if isinstance(delta, dict) else getattr(delta, "content", None)
    return content if isinstance(content, str) else ""


def join_items(items: list[Any]) -> str:
    """Join what a generator tool yielded: strings back to back, other items one per line."""
    if not items:
        return NO_OUTPUT
    texts = []
    all_strings = True
    for item in items:
        chunk = _chunk_text(item) if not isinstance(item, (str, bytes)) else None
        if chunk is not None:
            texts.append(chunk)
            continue
        if not isinstance(item, str):
            all_strings = False
        texts.append(format_output(item))
    return ("" if all_strings else "\n").join(texts)


def _short(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= _MAX_ERROR_CHARS else text[: _MAX_ERROR_CHARS - 3] + "..."


def wrap_exception(name: str, exc: BaseException) -> LightAgentError:
    """A typed error for an exception raised by tool ``name`` (kept as ``__cause__``)."""
    if isinstance(exc, LightAgentError):
        return exc
    error = ToolError(
        "LA-TOOL",
        f"{type(exc).__name__}: {_short(str(exc))}" if str(exc) else type(exc).__name__,
        details={"tool": name, "exception_type": type(exc).__name__},
    )
    error.__cause__ = exc
    return error


def error_text(error: LightAgentError) -> str:
    """The one line the model reads for a failed call, e.g. ``Error [LA-TOOL] ValueError: bad date``."""
    return f"Error [{error.code}] {_short(error.message)}"
