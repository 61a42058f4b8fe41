"""A request body as the SDK's ``post`` takes it, and an answer read from its bytes.

openai 3.x's ``post`` takes the body as ready JSON (``content=``). Written here with the
settings of the SDK's own writer (compact, UTF-8, NaN refused), the bytes on the wire are
the same, and the SDK's per-request encoder (``json.dumps`` with an encoder class made for
each call) is skipped. Answers are taken as ``bytes`` (``cast_to=bytes``, which every SDK
version knows) and decoded here, which skips the SDK's content-type check and its
response-data step. Nothing here imports the SDK or its HTTP transport.
"""

from __future__ import annotations

import inspect
import json
from typing import Any

__all__ = ["body_kwargs", "read_json"]

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
            return {"content": _ENCODER.encode(body).encode()}
        except (TypeError, ValueError):  # UnicodeEncodeError (a lone surrogate) included
            pass
    return {"body": body}


def read_json(raw: Any) -> Any:
    """The answer's JSON value from the bytes ``cast_to=bytes`` gives (``ValueError`` when
    it is not JSON, as the SDK's own reading raised)."""
    if isinstance(raw, (bytes, bytearray)):
        return json.loads(raw)
    return raw
