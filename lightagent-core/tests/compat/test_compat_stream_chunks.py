"""Item 1 of issue 18: streamed chunks read like the SDK's ``ChatCompletionChunk`` and dicts."""

from __future__ import annotations

import asyncio
import copy
import json
import pickle

from lightagent import LightAgent


def agent_for(server, **kw) -> LightAgent:
    return LightAgent(model="gpt-4.1", api_key="your_api_key", base_url=server.base_url, **kw)


def test_sdk_style_consumer_reads_attributes(loopback_server) -> None:
    report = "AI agents plan, call tools and report back."
    loopback_server.reply(report)
    agent = agent_for(loopback_server)
    text = ""
    for chunk in agent.run("Write a short report about AI agents.", stream=True):
        # The usual OpenAI SDK consumer, unchanged.
        assert chunk.object == "chat.completion.chunk"
        if chunk.choices[0].delta.content:
            text += chunk.choices[0].delta.content
        # ... and the dict consumer on the same object.
        assert chunk["choices"][0]["delta"].get("content") == chunk.choices[0].delta.content
        assert isinstance(chunk, dict)
    assert text == report


def test_chunks_stay_dicts_json_and_copyable(loopback_server) -> None:
    loopback_server.reply("hello there")
    chunks = list(agent_for(loopback_server).run("hi", stream=True))
    first = chunks[0]
    assert json.loads(json.dumps(first)) == first
    assert pickle.loads(pickle.dumps(first)) == first
    assert copy.deepcopy(first) == first
    plain = first.model_dump()
    assert type(plain) is dict and plain == first
    assert [c.choices[0].finish_reason for c in chunks].count("stop") == 1
    # A field the chunk lacks reads as None, as the SDK's optional fields do.
    assert first.choices[0].delta.tool_calls is None


def test_async_stream_chunks_have_attributes(loopback_server) -> None:
    loopback_server.reply("streamed hello")
    agent = agent_for(loopback_server)

    async def main() -> str:
        text = ""
        async for chunk in await agent.arun("hi", stream=True):
            text += chunk.choices[0].delta.content or ""
        return text

    assert asyncio.run(main()) == "streamed hello"


def test_every_chunk_validates_as_the_sdks_chunk(loopback_server) -> None:
    # isinstance(chunk, ChatCompletionChunk) cannot hold for a dict (docs/migration.md);
    # code that needs the SDK object gets it from any streamed chunk.
    from openai.types.chat import ChatCompletionChunk

    loopback_server.reply("two words")
    chunks = list(agent_for(loopback_server).run("hi", stream=True))
    sdk = [ChatCompletionChunk.model_validate(c) for c in chunks]
    assert all(isinstance(c, ChatCompletionChunk) for c in sdk)
    assert "".join(c.choices[0].delta.content or "" for c in sdk) == "two words"
    assert [c.model_dump(exclude_unset=True) for c in sdk] == [c.model_dump() for c in chunks]
