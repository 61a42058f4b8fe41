"""The fast JSON readers give exactly what ``json.loads`` gives: the value or the error."""

from __future__ import annotations

import json
from typing import Any

import pytest
from lightagent.models.wire import loads, read_json

TEXTS = [
    '{"a": [1, 2.5, null, true], "b": "ü"}',
    '{"a":1}\n',
    ' {"a":1}',
    '{"a":1} x',
    '{"a":1}\x0b',
    "[1, 2]",
    '"s"',
    "NaN",
    "{bad",
    "",
    "\ufeff{}",
]
BODIES = [
    *(t.encode() for t in TEXTS),
    b'\xef\xbb\xbf{"a": 1}',
    '{"a": 1}'.encode("utf-16-le"),
    '{"a": 1}'.encode("utf-16"),
    b'{"a": "\xed\xa0\x80"}',
    b"<html>gateway</html>",
]


def outcome(fn: Any, value: Any) -> Any:
    try:
        result = fn(value)
    except ValueError as exc:
        return type(exc).__name__, str(exc)
    return "ok", repr(result)


@pytest.mark.parametrize("text", TEXTS)
def test_loads_is_json_loads(text: str) -> None:
    assert outcome(loads, text) == outcome(json.loads, text)


@pytest.mark.parametrize("raw", BODIES)
def test_read_json_is_json_loads_of_the_bytes(raw: bytes) -> None:
    assert outcome(read_json, raw) == outcome(json.loads, raw)
