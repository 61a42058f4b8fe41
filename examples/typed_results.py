"""What `run()` / `arun()` / `astream()` return, as a type checker sees it.

`make typecheck` runs mypy over this file: each `assert_type` fails there if the return
type were `Any`. It also runs offline (a scripted model answers).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any, assert_type

from lightagent import LightAgent, ModelError, RunResult, ScriptedModel, StreamEvent


def main() -> None:
    agent = LightAgent(
        model=ScriptedModel(
            ["a str", "an object", "a dict", "chunks", "events", ModelError("LA-PROVIDER", "down")]
        )
    )
    text = assert_type(agent.run("hi"), str)
    result = assert_type(agent.run("hi", result_format="object"), RunResult)
    as_dict = assert_type(agent.run("hi", result_format="dict"), dict[str, Any])
    chunks = assert_type(agent.run("hi", stream=True), Iterator[dict[str, Any]])
    events = assert_type(agent.run("hi", stream=True, result_format="event"), Iterator[StreamEvent])
    assert text == "a str" and result.success and as_dict["content"] == "a dict"
    assert list(chunks) and [e.type for e in events][-1] == "done"
    # A failed run answers with its error text (and logs a WARNING); an object says so.
    failed = agent.run("hi", result_format="object")
    assert not failed.success and failed.error is not None
    print(failed.error["code"])

    async def async_forms() -> None:
        agent = LightAgent(model=ScriptedModel(["one", "two", "three", "four"]))
        assert_type(await agent.arun("hi"), str)
        assert_type(await agent.arun("hi", result_format="object"), RunResult)
        stream = assert_type(await agent.arun("hi", stream=True), AsyncIterator[dict[str, Any]])
        assert [c async for c in stream]
        typed = assert_type(agent.astream("hi", result_format="event"), AsyncIterator[StreamEvent])
        assert [e.type async for e in typed][-1] == "done"

    asyncio.run(async_forms())


if __name__ == "__main__":
    main()
