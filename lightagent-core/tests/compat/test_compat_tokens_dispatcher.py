"""Item 6 of issue 18: CancellationToken(token_id, parent, run_id); AsyncToolDispatcher(dicts)."""

from __future__ import annotations

import asyncio

import pytest
from lightagent import AsyncToolDispatcher, CancellationToken, ConfigurationError


def test_cancellation_token_seeds_keywords() -> None:
    parent = CancellationToken(token_id="root")
    child = CancellationToken(token_id="leaf", parent=parent, run_id="run-1")
    assert (parent.token_id, child.token_id, child.run_id) == ("root", "leaf", "run-1")
    assert child.parent is parent and parent.parent is None
    assert CancellationToken().token_id != CancellationToken().token_id
    child.cancel("only me")
    assert not parent.cancelled
    other = CancellationToken(parent=parent)
    assert parent.cancel("all") and other.cancelled and other.reason == "all"
    late = CancellationToken(parent=parent)
    assert late.cancelled and late.reason == "all"
    # The project's spelling still works.
    assert parent.child(run_id="r").cancelled


def add(a: int, b: int) -> int:
    return a + b


ADD_INFO = {
    "tool_name": "add",
    "tool_description": "Add two integers.",
    "tool_params": [
        {"name": "a", "description": "first", "type": "integer", "required": True},
        {"name": "b", "description": "second", "type": "integer", "required": True},
    ],
}


def test_dispatcher_from_the_seeds_dicts() -> None:
    dispatcher = AsyncToolDispatcher({"add": add}, {"add": ADD_INFO})
    assert asyncio.run(dispatcher.dispatch("add", {"a": 2, "b": 3})) == "5"
    missing = asyncio.run(dispatcher.dispatch("nope", {}))
    assert "[LA-TOOL-NOT-FOUND]" in missing
    bad = asyncio.run(dispatcher.dispatch("add", {"a": 2}))
    assert "[LA-" in bad
    with pytest.raises(ConfigurationError):
        AsyncToolDispatcher([add])  # type: ignore[arg-type]
