"""Normalize the tool-call ``arguments`` providers send into one JSON object text.

Seen on the wire: ``""`` and ``null`` for tools without parameters, dicts already
decoded (Ollama), JSON encoded twice, Python dict reprs with single quotes, code
fences around the JSON, arrays or scalars, and JSON cut short by a token limit.
"""

from __future__ import annotations

import ast
import json
from typing import Any

__all__ = ["normalize_arguments"]

_EMPTY = "{}"


def _as_object_text(value: Any, raw: str) -> tuple[str, str | None]:
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False), None
    kind = "array" if isinstance(value, list) else type(value).__name__
    return _EMPTY, f"tool arguments must be a JSON object, got {kind}: {raw[:200]}"


def _strip_fence(text: str) -> str:
    if text.startswith("```"):
        body = text[3:]
        if body.endswith("```"):
            body = body[:-3]
        newline = body.find("\n")
        if newline != -1 and body[:newline].strip().isalpha():
            body = body[newline + 1 :]  # a language tag such as ``json``
        return body.strip()
    return text


def normalize_arguments(raw: Any) -> tuple[str, str | None]:
    """Return ``(json_object_text, error)``.

    ``error`` is ``None`` when the arguments could be used (possibly after repair);
    otherwise it is a short message naming the problem, meant to be sent back to the
    model, and the text is ``"{}"``. Never raises, never uses ``eval``.
    """
    if raw is None:
        return _EMPTY, None
    if isinstance(raw, dict):
        return json.dumps(raw, ensure_ascii=False), None
    if not isinstance(raw, str):
        return _as_object_text(raw, repr(raw))
    text = raw.strip()
    if not text or text == "null":
        return _EMPTY, None
    if text[0] == "{" and text[-1] == "}":
        try:
            value = json.loads(text)
        except ValueError:
            pass
        else:
            if isinstance(value, dict):
                return (raw if text is raw else text), None  # already a JSON object
    return _repair(text)


def _repair(text: str) -> tuple[str, str | None]:
    text = _strip_fence(text)
    try:
        value = json.loads(text)
    except ValueError as exc:
        first_error = exc
    else:
        if isinstance(value, str):
            inner = value.strip()
            if inner.startswith("{"):
                return normalize_arguments(inner)  # JSON encoded twice
        return _as_object_text(value, text)
    if text.startswith("{"):
        try:
            # Python dict reprs (single quotes, True/None); literal_eval evaluates no code.
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
            pass
        else:
            if isinstance(value, dict):
                try:
                    return json.dumps(value, ensure_ascii=False), None
                except (TypeError, ValueError):
                    pass  # e.g. a set or bytes value: not JSON-representable
    return _EMPTY, f"tool arguments are not valid JSON ({first_error}): {text[:200]}"
