"""A provider writes only what it needs (name and acomplete, or complete); the kernel adapts the rest."""

from __future__ import annotations

import asyncio
import threading

import pytest
from lightagent import ConfigurationError, LightAgent, ModelResponse, ScriptedModel
from lightagent.models.adapt import ModelAdapter, as_model


class AsyncOnly:
    """A provider with one async method, whose client is bound to the loop it first ran on."""

    name = "async-only"

    def __init__(self) -> None:
        self.loops: list[asyncio.AbstractEventLoop] = []

    async def acomplete(self, request):
        self.loops.append(asyncio.get_running_loop())
        last = request.messages[-1]["content"]
        return ModelResponse(content=f"async saw {last}")


class SyncOnly:
    name = "sync-only"

    def __init__(self) -> None:
        self.threads: list[str] = []

    def complete(self, request):
        self.threads.append(threading.current_thread().name)
        return ModelResponse(content="sync answer " + "x" * 40)


def test_a_complete_model_is_used_as_it_is():
    model = ScriptedModel(["hi"])
    assert as_model(model) is model


def test_an_async_only_provider_serves_run_arun_and_both_streams():
    provider = AsyncOnly()
    agent = LightAgent(model=provider)
    assert isinstance(agent.model, ModelAdapter) and agent.model.name == "async-only"
    assert agent.run("one") == "async saw one"
    assert agent.run("two") == "async saw two"
    # run() uses the one background loop: an async client made there lives on.
    assert provider.loops[0] is provider.loops[1]
    assert asyncio.run(agent.arun("three")) == "async saw three"
    chunks = list(agent.run("four", stream=True))
    text = "".join(
        c["choices"][0]["delta"].get("content") or "" for c in chunks if isinstance(c, dict)
    )
    assert text == "async saw four"

    async def collect():
        return [e async for e in agent.astream("five", result_format="event")]

    events = asyncio.run(collect())
    assert events[-1].type == "done" and events[-1].data["content"] == "async saw five"


def test_a_sync_only_provider_runs_off_the_event_loop():
    provider = SyncOnly()
    agent = LightAgent(model=provider)
    assert asyncio.run(agent.arun("q")).startswith("sync answer")
    assert provider.threads and provider.threads[0] != "MainThread"  # a worker thread
    streamed = list(agent.run("q", stream=True, result_format="event"))
    deltas = [e for e in streamed if e.type == "content"]
    assert len(deltas) > 1  # the answer arrives in pieces, as a stream would send it
    assert streamed[-1].data["content"].startswith("sync answer")


def test_an_object_that_cannot_answer_is_a_typed_error():
    with pytest.raises(ConfigurationError) as info:
        LightAgent(model=object())
    assert info.value.code == "LA-CONFIG" and "acomplete" in info.value.message
