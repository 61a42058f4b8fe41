"""Normalize the tool-call ``arguments`` providers send into one JSON object text.

Seen on the wire: ``""`` and ``null`` for tools without parameters, dicts already
decoded (Ollama), JSON encoded twice, Python dict reprs with single quotes, code
fences around the JSON, arrays or scalars, and JSON cut short by a token limit.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from lightagent.models.wire import loads
from lightagent.utf8 import clean_text

__all__ = [
    "MAX_ARGUMENT_CHARS",
    "MAX_ARGUMENT_DEPTH",
    "ArgumentLimitError",
    "load_arguments",
    "normalize_arguments",
]

#: Tool arguments nested deeper than this (objects and arrays, the outer object is 1) are
#: refused with ``LA-TOOL-ARGS`` for that call; no tool sees them.
MAX_ARGUMENT_DEPTH = 64
#: Tool-argument text longer than this many characters is refused the same way.
MAX_ARGUMENT_CHARS = 1_000_000

_EMPTY = "{}"
#: The JSON escape of a surrogate (``\ud800``): a lone one decodes to text UTF-8 cannot hold.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


class ArgumentLimitError(json.JSONDecodeError):
    """JSON text over :data:`MAX_ARGUMENT_DEPTH` or :data:`MAX_ARGUMENT_CHARS`.

    A ``JSONDecodeError`` (so a ``ValueError``): every reader that already treats text it
    cannot decode as "not JSON" treats over-limit text the same way, never as a crash.
    """

    def __init__(self, message: str, text: str) -> None:
        super().__init__(message, text[:64], 0)
        self.msg = message

    def __str__(self) -> str:
        return self.msg


def _too_deep(value: Any, limit: int) -> bool:
    # Iterative: a recursive walk would hit the recursion limit on exactly these values.
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node
        if depth > limit:
            return True
        for child in children:
            if isinstance(child, (dict, list)):
                stack.append((child, depth + 1))
    return False


_DEEP = f"tool arguments nest deeper than {MAX_ARGUMENT_DEPTH} levels (the limit)"


def _size_problem(text: str) -> str | None:
    if len(text) > MAX_ARGUMENT_CHARS:
        return f"tool arguments are {len(text):,} characters; the limit is {MAX_ARGUMENT_CHARS:,}"
    return None


def _depth_problem(text: str, value: Any) -> str | None:
    # Text with at most MAX_ARGUMENT_DEPTH brackets cannot nest deeper: the common case
    # costs two str.count calls, and only bracket-heavy values are walked.
    if (
        isinstance(value, (dict, list))
        and text.count("[") + text.count("{") > MAX_ARGUMENT_DEPTH
        and _too_deep(value, MAX_ARGUMENT_DEPTH)
    ):
        return _DEEP
    return None


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_text(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def load_arguments(text: str) -> Any:
    """``json.loads(text)`` within the argument limits; raises :class:`ArgumentLimitError`.

    Over :data:`MAX_ARGUMENT_CHARS` characters or :data:`MAX_ARGUMENT_DEPTH` levels of
    nesting is refused; text that is not JSON raises ``json.JSONDecodeError`` as usual.
    A lone surrogate (raw or escaped) arrives as U+FFFD, as it is hashed and stored.
    """
    if len(text) > MAX_ARGUMENT_CHARS:
        raise ArgumentLimitError(_size_problem(text) or "", text)
    text = clean_text(text)
    try:
        value = loads(text)
    except RecursionError:
        raise ArgumentLimitError(_DEEP, text) from None
    # Inlined _depth_problem: this runs for every tool call, so the common case stays at
    # two str.count calls on top of json.loads.
    if (
        text.count("[") + text.count("{") > MAX_ARGUMENT_DEPTH
        and isinstance(value, (dict, list))
        and _too_deep(value, MAX_ARGUMENT_DEPTH)
    ):
        raise ArgumentLimitError(_DEEP, text)
    if "\\u" in text and _SURROGATE_ESCAPE.search(text):
        return _clean(value)  # the escapes may be pairs (emoji): cleaning keeps those
    return value


def _checked(value: dict[str, Any]) -> tuple[str, str | None] | None:
    """A decoded (or repaired) argument object as JSON text within the limits; None when
    it has no JSON form (a set, bytes ...)."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except RecursionError:
        return _EMPTY, _DEEP
    except (TypeError, ValueError):
        return None
    problem = _size_problem(text) or _depth_problem(text, value)
    return (_EMPTY, problem) if problem else (text, None)


def _as_object_text(value: Any, raw: str) -> tuple[str, str | None]:
    if isinstance(value, dict):
        return _checked(value) or (_EMPTY, "tool arguments have no JSON form")
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
        return _checked(raw) or (_EMPTY, "tool arguments have no JSON form")
    if not isinstance(raw, str):
        return _as_object_text(raw, repr(raw))
    problem = _size_problem(raw)
    if problem is not None:
        return _EMPTY, problem
    text = raw.strip()
    if not text or text == "null":
        return _EMPTY, None
    if text[0] == "{" and text[-1] == "}":
        try:
            value = load_arguments(text)
        except ArgumentLimitError as exc:
            return _EMPTY, exc.msg
        except ValueError:
            pass
        else:
            if isinstance(value, dict):
                return (raw if text is raw else text), None  # already a JSON object
    return _repair(text)


def _repair(text: str) -> tuple[str, str | None]:
    text = _strip_fence(text)
    try:
        value = load_arguments(text)
    except ArgumentLimitError as exc:
        return _EMPTY, exc.msg  # never handed to the slower repairs below
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
                checked = _checked(value)
                if checked is not None:  # else e.g. a set or bytes value: no JSON form
                    return checked
    return _EMPTY, f"tool arguments are not valid JSON ({first_error}): {text[:200]}"
