"""A request body as the SDK's ``post`` takes it, and an answer read from its bytes.

openai 3.x's ``post`` takes the body as ready JSON (``content=``). Written here with the
settings of the SDK's own writer (compact, UTF-8, NaN refused), the bytes on the wire are
the same, and the SDK's per-request encoder (``json.dumps`` with an encoder class made for
each call) is skipped. Answers are taken as ``bytes`` (``cast_to=bytes``, which every SDK
version knows) and decoded here, which skips the SDK's content-type check and its
response-data step. Nothing here imports the SDK or its HTTP transport.

:func:`loads` is ``json.loads`` for the JSON this package reads most (answers, streamed
chunks, tool arguments): one value, maybe with whitespace after it, read by the decoder's
scanner directly, which skips two Python calls and two regex matches per value.
"""

from __future__ import annotations

import inspect
import json
from json.scanner import make_scanner
from typing import Any

from lightagent.utf8 import utf8

__all__ = ["body_kwargs", "loads", "read_json"]

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
#: Client class -> whether its ``post`` takes ``content=`` (openai 3.x; not 1.x/2.x).
_TAKES_CONTENT: dict[type, bool] = {}


def _takes_content(post: Any) -> bool:
    try:
        return "content" in inspect.signature(post).parameters
    except (TypeError, ValueError):
        return False


def body_kwargs(client: Any, body: dict[str, Any]) -> dict[str, Any]:
    """``{"content": bytes}`` when ``client.post`` takes ready JSON and ``body`` is plain
    JSON; else ``{"body": body}``, written by the SDK (an older SDK, a pydantic model or a
    date among the options, NaN: the SDK's own encoder then decides)."""
    kind = type(client)
    takes = _TAKES_CONTENT.get(kind)
    if takes is None:
        takes = _TAKES_CONTENT[kind] = _takes_content(client.post)
    if takes:
        try:
            text = _ENCODER.encode(body)
        except (TypeError, ValueError):
            return {"body": body}
        return {"content": utf8(text)}  # a lone surrogate is sent as U+FFFD
    return {"body": body}


#: The JSON decoder's scanner (what ``json.loads`` ends up in), with the default options.
_scan = make_scanner(json.JSONDecoder())  # type: ignore[arg-type]  # typeshed: context typed oddly
_JSON_SPACE = " \t\n\r"


def loads(text: str) -> Any:
    """``json.loads(text)``: the same value, or the same error (from ``json.loads`` itself
    whenever the text is not one value starting at its first character)."""
    try:
        value, end = _scan(text, 0)
    except (StopIteration, ValueError):
        return json.loads(text)
    if end != len(text) and text[end:].strip(_JSON_SPACE):
        return json.loads(text)  # data after the value: json.loads words the error
    return value


def read_json(raw: Any) -> Any:
    """The answer's JSON value from the bytes ``cast_to=bytes`` gives (``ValueError`` when
    it is not JSON, as the SDK's own reading raised)."""
    if not isinstance(raw, (bytes, bytearray)):
        return raw
    if raw[:1] == b"{":  # UTF-8 without a byte-order mark; anything else as json.loads reads it
        try:
            return loads(raw.decode())
        except ValueError:  # not UTF-8 after all (or not JSON): json.loads decides
            pass
    return json.loads(raw)
