"""The loopback server, driven by the real ``openai`` SDK (sync and async, streamed and not)."""

from __future__ import annotations

import asyncio
import json

import openai
import pytest
from lightagent_contracts.loopback import LoopbackServer, UnusedRepliesError


def _client(srv: LoopbackServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=srv.base_url, api_key="test-key", max_retries=0)


def test_loopback_plain_reply_nonstream(loopback_server: LoopbackServer) -> None:
    loopback_server.reply("hello there")
    resp = _client(loopback_server).chat.completions.create(
        model="m1", messages=[{"role": "user", "content": "hi"}]
    )
    assert resp.choices[0].message.content == "hello there"
    assert resp.choices[0].finish_reason == "stop"
    assert resp.usage is not None and resp.usage.total_tokens > 0
    assert resp.model == "m1"
    assert loopback_server.requests[0]["messages"] == [{"role": "user", "content": "hi"}]
    assert loopback_server.headers[0]["Authorization"] == "Bearer test-key"


def test_loopback_stream_with_fragmented_tool_calls_and_usage(
    loopback_server: LoopbackServer,
) -> None:
    args = {"city": "Paris", "days": 3, "note": "a long argument string to force fragments"}
    loopback_server.reply(
        {
            "content": "Let me check.",
            "tool_calls": [
                {"name": "weather", "arguments": args},
                {"name": "time", "arguments": {"tz": "CET"}},
            ],
        }
    )
    stream = _client(loopback_server).chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": "hi"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Let me check."
    frags = [tc for c in chunks if c.choices for tc in (c.choices[0].delta.tool_calls or [])]
    by_index: dict[int, str] = {}
    for frag in frags:
        by_index[frag.index] = by_index.get(frag.index, "") + (frag.function.arguments or "")
    assert json.loads(by_index[0]) == args and json.loads(by_index[1]) == {"tz": "CET"}
    first_zero = [f for f in frags if f.index == 0]
    assert len(first_zero) > 2, "arguments must arrive in several fragments"
    assert first_zero[0].id and all(f.id is None for f in first_zero[1:])
    finishes = [
        c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason
    ]
    assert finishes == ["tool_calls"]
    assert chunks[-1].choices == [] and chunks[-1].usage.total_tokens > 0


def test_loopback_interleaved_parallel_calls(loopback_server: LoopbackServer) -> None:
    loopback_server.reply(
        {
            "interleave": True,
            "tool_calls": [
                {"name": "a", "arguments": {"x": "1" * 40}},
                {"name": "b", "arguments": {"y": "2" * 40}},
            ],
        }
    )
    chunks = list(
        _client(loopback_server).chat.completions.create(model="m", messages=[], stream=True)
    )
    indexes = [tc.index for c in chunks for tc in (c.choices[0].delta.tool_calls or [])]
    assert indexes[:4] == [0, 1, 0, 1]


def test_loopback_error_with_retry_after(loopback_server: LoopbackServer) -> None:
    loopback_server.reply(LoopbackServer.error(429, headers={"Retry-After": "7"}))
    with pytest.raises(openai.RateLimitError) as info:
        _client(loopback_server).chat.completions.create(model="m", messages=[])
    assert info.value.response.headers["retry-after"] == "7"
    assert info.value.status_code == 429


def test_loopback_callable_reply_sees_request(loopback_server: LoopbackServer) -> None:
    loopback_server.reply(lambda body: f"echo {body['messages'][-1]['content']}")
    resp = _client(loopback_server).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "ping"}]
    )
    assert resp.choices[0].message.content == "echo ping"


def test_loopback_default_callable_and_unscripted(loopback_server: LoopbackServer) -> None:
    client = _client(loopback_server)
    with pytest.raises(openai.InternalServerError):
        client.chat.completions.create(model="m", messages=[])
    assert loopback_server.unexpected == 1
    loopback_server.default = "always"
    for _ in range(3):
        assert (
            client.chat.completions.create(model="m", messages=[]).choices[0].message.content
            == "always"
        )


def test_loopback_keep_alive_reuses_connection(loopback_server: LoopbackServer) -> None:
    client = _client(loopback_server)
    loopback_server.default = "ok"
    for _ in range(5):
        client.chat.completions.create(model="m", messages=[])
    # The SDK closes a stream's response at [DONE] before reading the body's end, so
    # only non-streamed calls can show connection reuse.
    assert loopback_server.connections == 1


def test_loopback_async_sdk_stream_and_nonstream(loopback_server: LoopbackServer) -> None:
    loopback_server.reply("one", {"content": "two", "reasoning_content": "think"})

    async def main() -> tuple[str, str]:
        client = openai.AsyncOpenAI(base_url=loopback_server.base_url, api_key="k", max_retries=0)
        first = await client.chat.completions.create(model="m", messages=[])
        stream = await client.chat.completions.create(model="m", messages=[], stream=True)
        text = ""
        async for chunk in stream:
            if chunk.choices:
                text += chunk.choices[0].delta.content or ""
        await client.close()
        return first.choices[0].message.content or "", text

    assert asyncio.run(main()) == ("one", "two")


def test_loopback_replay_fixture_stream(loopback_server: LoopbackServer) -> None:
    fixture = {
        "stream": [
            {
                "id": "x",
                "object": "chat.completion.chunk",
                "created": 1,
                "model": "r",
                "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": ""}],
            },
            {
                "id": "x",
                "object": "chat.completion.chunk",
                "created": 1,
                "model": "r",
                "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            },
        ],
        "done_sentinel": True,
    }
    loopback_server.replay(fixture)
    chunks = list(
        _client(loopback_server).chat.completions.create(model="m", messages=[], stream=True)
    )
    assert [c.choices[0].finish_reason for c in chunks] == ["", "stop"]


def test_loopback_replay_error_fixture(loopback_server: LoopbackServer) -> None:
    loopback_server.replay({"http_status": 503, "response": {"error": {"message": "down"}}})
    with pytest.raises(openai.InternalServerError) as info:
        _client(loopback_server).chat.completions.create(model="m", messages=[])
    assert info.value.status_code == 503


def test_loopback_truncated_reply_has_no_finish(loopback_server: LoopbackServer) -> None:
    loopback_server.reply({"content": "partial answ", "truncate": True})
    chunks = list(
        _client(loopback_server).chat.completions.create(model="m", messages=[], stream=True)
    )
    assert all(c.choices[0].finish_reason is None for c in chunks)


def test_loopback_assert_exhausted_fails_on_unused() -> None:
    with LoopbackServer() as srv:
        srv.reply("never asked")
        with pytest.raises(UnusedRepliesError):
            srv.assert_exhausted()
        srv.clear()
        srv.assert_exhausted()


def test_loopback_usable_outside_pytest_and_stops() -> None:
    srv = LoopbackServer(default="x")
    with srv:
        port = srv.port
        assert (
            _client(srv).chat.completions.create(model="m", messages=[]).choices[0].message.content
            == "x"
        )
    with pytest.raises(RuntimeError):
        _ = srv.port
    assert port > 0


def test_loopback_stop_releases_kept_alive_connection_threads() -> None:
    import threading
    import time

    before = threading.active_count()
    with LoopbackServer(default="x") as srv:
        client = _client(srv)
        client.chat.completions.create(model="m", messages=[])
        assert threading.active_count() > before
    deadline = time.monotonic() + 60  # a guard: the threads end at once
    while threading.active_count() > before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert threading.active_count() <= before
    client.close()
