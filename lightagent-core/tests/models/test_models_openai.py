"""``OpenAIModel`` against the loopback server: retries, error mapping, keys, streams, seams."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from types import SimpleNamespace
from typing import Any

import openai
import pytest
from lightagent.errors import ConfigurationError, ModelError
from lightagent.models.base import ModelRequest, ModelResponse
from lightagent.models.openai_compat import OpenAIModel
from lightagent.models.retry import backoff_delay, retry_after_seconds
from lightagent_contracts.loopback import LoopbackServer

HI = ModelRequest([{"role": "user", "content": "hi"}])
ADD = [{"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}]
# The read timeout of the stall tests: a stall (5 s) exceeds it, while the answer's first
# bytes, sent at once, arrive well within it even on a loaded machine.
STALL_TIMEOUT = 2.0


def model(srv: LoopbackServer, **kw: Any) -> OpenAIModel:
    kw.setdefault("retry_backoff", 0.0)
    return OpenAIModel("gpt-4o-mini", base_url=srv.base_url, api_key="k", **kw)


def drain(m: OpenAIModel, request: ModelRequest = HI) -> tuple[list[dict[str, Any]], ModelResponse]:
    items = list(m.stream(request))
    assert isinstance(items[-1], ModelResponse)
    return items[:-1], items[-1]


def test_openai_complete_reuses_one_client_and_connection(loopback_server: LoopbackServer) -> None:
    loopback_server.default = "ok"
    m = model(loopback_server)
    first = m.client
    for _ in range(4):
        r = m.complete(HI)
        assert r.content == "ok" and r.attempts == 1 and r.latency_ms > 0
    assert m.client is first and loopback_server.connections == 1
    body = loopback_server.requests[0]
    assert body == {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}
    assert loopback_server.headers[0]["Authorization"] == "Bearer k"


def test_openai_request_fields_and_options(loopback_server: LoopbackServer) -> None:
    loopback_server.reply("x")
    m = model(loopback_server, options={"temperature": 0.1})
    req = ModelRequest(
        [{"role": "user", "content": "hi"}],
        tools=ADD,
        tool_choice="auto",
        response_format={"type": "json_object"},
        options={"max_tokens": 5, "metadata": {"k": "v"}},
    )
    m.complete(req)
    body = loopback_server.requests[0]
    assert body["tools"] == ADD and body["tool_choice"] == "auto"
    assert body["response_format"] == {"type": "json_object"}
    assert body["temperature"] == 0.1 and body["max_tokens"] == 5 and body["metadata"] == {"k": "v"}
    assert "stream" not in body


def test_openai_retry_after_honoured_then_success(loopback_server: LoopbackServer) -> None:
    loopback_server.reply(
        LoopbackServer.error(429, headers={"Retry-After": "0"}),
        LoopbackServer.error(503),
        "finally",
    )
    r = model(loopback_server).complete(HI)
    assert r.content == "finally" and r.attempts == 3
    assert len(loopback_server.requests) == 3


def test_openai_retry_after_is_capped(loopback_server: LoopbackServer) -> None:
    # Retry-After asks for an hour; max_retry_wait caps the wait so the call goes on.
    loopback_server.reply(LoopbackServer.error(429, headers={"Retry-After": "3600"}), "ok")
    assert model(loopback_server, max_retry_wait=0.01).complete(HI).content == "ok"


def test_openai_gives_up_after_max_retry(loopback_server: LoopbackServer) -> None:
    loopback_server.reply(*[LoopbackServer.error(500)] * 3)
    with pytest.raises(ModelError) as info:
        model(loopback_server, max_retry=2).complete(HI)
    err = info.value
    assert (
        err.code == "LA-500" and err.details["attempts"] == 3 and err.details["status_code"] == 500
    )
    assert err.hint and "loopback error 500" in err.details["provider_error"]


@pytest.mark.parametrize(
    ("status", "code"),
    [(400, "LA-400"), (401, "LA-401"), (403, "LA-403"), (404, "LA-404"), (422, "LA-400")],
)
def test_openai_never_retries_other_4xx(
    loopback_server: LoopbackServer, status: int, code: str
) -> None:
    loopback_server.reply(LoopbackServer.error(status, {"error": {"message": "nope", "type": "x"}}))
    with pytest.raises(ModelError) as info:
        model(loopback_server, max_retry=5).complete(HI)
    assert info.value.code == code and info.value.details["attempts"] == 1
    assert info.value.details["provider_error"] == "nope"
    assert len(loopback_server.requests) == 1


@pytest.mark.parametrize(("status", "code"), [(502, "LA-500"), (504, "LA-503"), (503, "LA-503")])
def test_openai_5xx_codes(loopback_server: LoopbackServer, status: int, code: str) -> None:
    loopback_server.reply(LoopbackServer.error(status))
    with pytest.raises(ModelError) as info:
        model(loopback_server, max_retry=0).complete(HI)
    assert info.value.code == code


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_openai_connection_refused_is_retried_then_typed() -> None:
    m = OpenAIModel(
        "m", base_url=f"http://127.0.0.1:{_free_port()}/v1", max_retry=1, retry_backoff=0.0
    )
    with pytest.raises(ModelError) as info:
        m.complete(HI)
    assert info.value.code == "LA-503" and info.value.details["attempts"] == 2
    assert "Connect" in info.value.details["provider_error"]


def test_openai_missing_key_fails_at_first_call_not_construction(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for var in ("OPENAI_API_KEY", "LIGHTAGENT_API_KEY", "OPENAI_BASE_URL", "LIGHTAGENT_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    m = OpenAIModel("gpt-4o-mini", base_url="https://api.example.com/v1")
    with pytest.raises(ModelError) as info:
        m.complete(HI)
    assert info.value.code == "LA-401" and "OPENAI_API_KEY" in info.value.hint
    assert "api.example.com" in info.value.message


def test_openai_local_server_needs_no_key(
    loopback_server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("LIGHTAGENT_API_KEY", raising=False)
    loopback_server.reply("local")
    assert OpenAIModel("llama3", base_url=loopback_server.base_url).complete(HI).content == "local"


def test_openai_env_vars(loopback_server: LoopbackServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LIGHTAGENT_BASE_URL", loopback_server.base_url)
    monkeypatch.setenv("LIGHTAGENT_MODEL", "env-model")
    monkeypatch.setenv("LIGHTAGENT_API_KEY", "env-key")
    monkeypatch.setenv("OPENAI_API_KEY", "other")
    loopback_server.reply("env")
    m = OpenAIModel()
    assert m.name == "env-model" and m.base_url == loopback_server.base_url
    assert m.complete(HI).content == "env"
    assert loopback_server.headers[0]["Authorization"] == "Bearer env-key"
    monkeypatch.delenv("LIGHTAGENT_BASE_URL")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert OpenAIModel().base_url == "http://127.0.0.1:9/v1"


def test_openai_bad_configuration_is_typed() -> None:
    with pytest.raises(ConfigurationError):
        OpenAIModel("m", timeout=0)
    with pytest.raises(ConfigurationError):
        OpenAIModel("m", max_retry=-1)


def test_openai_stream_chunks_are_openai_shaped(loopback_server: LoopbackServer) -> None:
    loopback_server.reply({"content": "a streamed answer", "reasoning_content": "why"})
    chunks, r = drain(model(loopback_server))
    assert r.content == "a streamed answer" and r.reasoning_content == "why"
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert (
        chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] == r.usage.total_tokens
    )
    assert loopback_server.requests[0]["stream_options"] == {"include_usage": True}


def test_openai_stream_retries_before_first_chunk(loopback_server: LoopbackServer) -> None:
    loopback_server.reply(LoopbackServer.error(429, headers={"retry-after-ms": "1"}), "second try")
    _, r = drain(model(loopback_server))
    assert r.content == "second try" and r.attempts == 2


def test_openai_stream_without_finish_is_truncated(loopback_server: LoopbackServer) -> None:
    loopback_server.reply({"content": "cut short", "truncate": True})
    with pytest.raises(ModelError) as info:
        drain(model(loopback_server))
    assert (
        info.value.code == "LA-TRUNCATED" and info.value.details["partial_content"] == "cut short"
    )


def test_openai_stream_connection_dropped_is_truncated(loopback_server: LoopbackServer) -> None:
    chunk = {
        "id": "x",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": {"content": "half"}, "finish_reason": None}],
    }
    loopback_server.reply(LoopbackServer.raw(chunks=[chunk], close=True))
    with pytest.raises(ModelError) as info:
        drain(model(loopback_server, max_retry=3))
    assert info.value.code == "LA-TRUNCATED" and "cause" in info.value.details
    assert len(loopback_server.requests) == 1  # chunks were already delivered: no silent retry


def test_openai_stream_stall_hits_read_timeout_never_hangs(loopback_server: LoopbackServer) -> None:
    chunk = {
        "id": "x",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": {"content": "thinking"}, "finish_reason": None}],
    }
    loopback_server.reply(LoopbackServer.raw(chunks=[chunk], done=False, stall=5.0))
    with pytest.raises(ModelError) as info:
        drain(model(loopback_server, timeout=STALL_TIMEOUT))
    assert info.value.code == "LA-TRUNCATED" and "Timeout" in info.value.details["cause"]


def test_openai_nonstream_timeout_is_la_408(loopback_server: LoopbackServer) -> None:
    loopback_server.reply(LoopbackServer.raw(body={"never": "seen"}, delay=2.0))
    with pytest.raises(ModelError) as info:
        model(loopback_server, timeout=0.2, max_retry=0).complete(HI)
    assert info.value.code == "LA-408"


def test_openai_invalid_body_is_typed(loopback_server: LoopbackServer) -> None:
    loopback_server.reply(LoopbackServer.raw(body={"object": "chat.completion", "choices": []}))
    with pytest.raises(ModelError) as info:
        model(loopback_server).complete(HI)
    assert info.value.code == "LA-MODEL-OUTPUT"


def test_openai_stream_non_json_data_is_typed(loopback_server: LoopbackServer) -> None:
    chunk = {
        "id": "x",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": {"content": "a"}, "finish_reason": None}],
    }
    loopback_server.reply(LoopbackServer.raw(chunks=[chunk, "{not json"]))
    with pytest.raises(ModelError) as info:
        drain(model(loopback_server))
    assert info.value.code == "LA-MODEL-OUTPUT"


def test_openai_async_complete_and_stream(loopback_server: LoopbackServer) -> None:
    loopback_server.reply("async one", {"tool_calls": [{"name": "add", "arguments": {"a": 1}}]})
    m = model(loopback_server)

    async def main() -> tuple[ModelResponse, ModelResponse]:
        first = await m.acomplete(HI)
        items = [item async for item in m.astream(ModelRequest(HI.messages, tools=ADD))]
        return first, items[-1]

    first, streamed = asyncio.run(main())
    assert first.content == "async one"
    assert [(c.name, json.loads(c.arguments)) for c in streamed.tool_calls] == [("add", {"a": 1})]


def test_openai_async_concurrent_calls_keep_replies_apart(loopback_server: LoopbackServer) -> None:
    loopback_server.default = lambda body: "echo " + body["messages"][-1]["content"]
    m = model(loopback_server)

    async def main() -> list[str]:
        calls = [
            m.acomplete(ModelRequest([{"role": "user", "content": str(i)}])) for i in range(20)
        ]
        return [r.content for r in await asyncio.gather(*calls)]

    assert asyncio.run(main()) == [f"echo {i}" for i in range(20)]


def test_openai_async_retry_and_error(loopback_server: LoopbackServer) -> None:
    loopback_server.reply(LoopbackServer.error(500), "ok", LoopbackServer.error(400))
    m = model(loopback_server)

    async def main() -> None:
        assert (await m.acomplete(HI)).attempts == 2
        with pytest.raises(ModelError) as info:
            await m.acomplete(HI)
        assert info.value.code == "LA-400"

    asyncio.run(main())


def test_openai_injected_client_seam() -> None:
    """The seeds' seam: ``model.client = obj`` whose ``chat.completions.create`` answers."""
    seen: list[dict[str, Any]] = []

    def create(**body: Any) -> Any:
        seen.append(body)
        message = SimpleNamespace(content="fake", tool_calls=None, reasoning_content=None)
        return SimpleNamespace(
            choices=[SimpleNamespace(message=message, finish_reason="stop")],
            usage=None,
            model="fake",
        )

    m = OpenAIModel("m", base_url="https://api.example.com/v1")
    m.client = SimpleNamespace(chat=SimpleNamespace(completions=SimpleNamespace(create=create)))
    assert m.complete(HI).content == "fake"
    assert asyncio.run(m.acomplete(HI)).content == "fake"
    assert seen[0]["model"] == "m"


def test_openai_injected_client_is_retried_and_timed_alike_sync_and_async() -> None:
    """A caller's double behind ``model.client``: ``acomplete`` retries and times it as
    ``complete`` does (one definition of the call, two ways to wait)."""
    outcomes: list[Any] = []

    def create(**body: Any) -> Any:
        outcome = outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        time.sleep(0.005)  # the call itself is part of the latency
        return {"choices": [{"message": {"content": outcome}, "finish_reason": "stop"}]}

    m = OpenAIModel("m", base_url="https://api.example.com/v1", retry_backoff=0.0)
    m.client = SimpleNamespace(chat=SimpleNamespace(completions=SimpleNamespace(create=create)))
    lost = ModelError("LA-503", "connection lost", details={"status_code": None})
    outcomes[:] = [lost, "sync"]
    answer = m.complete(HI)
    assert (answer.content, answer.attempts) == ("sync", 2)
    outcomes[:] = [lost, "async"]
    answer = asyncio.run(m.acomplete(HI))
    assert (answer.content, answer.attempts) == ("async", 2)
    assert answer.latency_ms is not None and answer.latency_ms >= 5.0
    outcomes[:] = [ModelError("LA-400", "bad request", details={"status_code": 400})]
    with pytest.raises(ModelError) as info:
        asyncio.run(m.acomplete(HI))
    assert info.value.code == "LA-400" and info.value.details["attempts"] == 1


def test_openai_injected_client_stream() -> None:
    def create(**body: Any) -> Any:
        assert body["stream"] is True
        return iter(
            [
                {"choices": [{"index": 0, "delta": {"content": "he"}, "finish_reason": None}]},
                {"choices": [{"index": 0, "delta": {"content": "y"}, "finish_reason": "stop"}]},
            ]
        )

    m = OpenAIModel("m", api_key="k")
    m.client = SimpleNamespace(chat=SimpleNamespace(completions=SimpleNamespace(create=create)))
    assert list(m.stream(HI))[-1].content == "hey"

    async def main() -> ModelResponse:
        return [i async for i in m.astream(HI)][-1]

    assert asyncio.run(main()).content == "hey"


def test_openai_injected_client_stream_of_objects() -> None:
    """A double's chunks may be SDK-like objects: both streams read them as dicts."""

    def chunk(text: str, finish: str | None) -> Any:
        choice = SimpleNamespace(index=0, delta=SimpleNamespace(content=text), finish_reason=finish)
        return SimpleNamespace(choices=[choice], model="fake")

    def create(**body: Any) -> Any:
        return iter([chunk("he", None), chunk("y", "stop")])

    m = OpenAIModel("m", api_key="k")
    m.client = SimpleNamespace(chat=SimpleNamespace(completions=SimpleNamespace(create=create)))
    items = list(m.stream(HI))
    assert [c["choices"][0]["delta"]["content"] for c in items[:-1]] == ["he", "y"]
    assert items[-1].content == "hey"

    async def main() -> ModelResponse:
        return [i async for i in m.astream(HI)][-1]

    assert asyncio.run(main()).content == "hey"


def test_openai_text_tool_calls_only_for_offered_tools(loopback_server: LoopbackServer) -> None:
    text = '<tool_call>{"name": "add", "arguments": {"a": 1}}</tool_call>'
    loopback_server.reply(text, text)
    m = OpenAIModel("qwen2.5", base_url=loopback_server.base_url, profile="vllm")
    assert m.complete(ModelRequest(HI.messages, tools=ADD)).tool_calls[0].name == "add"
    assert m.complete(HI).content == text  # no tools offered: it stays text


def test_openai_profile_strips_reasoning_on_send(loopback_server: LoopbackServer) -> None:
    loopback_server.reply("ok")
    history = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "a", "reasoning_content": "r"},
        {"role": "user", "content": "q2"},
    ]
    model(loopback_server, profile="openai").complete(ModelRequest(history))
    assert loopback_server.requests[0]["messages"][1] == {"role": "assistant", "content": "a"}
    assert history[1]["reasoning_content"] == "r"


def test_retry_helpers() -> None:
    assert retry_after_seconds({"retry-after": "2"}) == 2.0
    assert retry_after_seconds({"retry-after-ms": "250"}) == 0.25
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert retry_after_seconds({"retry-after": "soon"}) is None
    err = ModelError("LA-429", details={"retry_after": 90.0})
    assert backoff_delay(err, 1, base=0.5, max_wait=30.0) == 30.0
    plain = ModelError("LA-503")
    assert all(
        0 <= backoff_delay(plain, n, base=0.5, max_wait=4.0) <= min(4.0, 0.5 * 2 ** (n - 1))
        for n in range(1, 8)
    )


def test_openai_sdk_errors_mapped(loopback_server: LoopbackServer) -> None:
    # The raw SDK sees the same server answers as typed openai errors; we see ModelErrors.
    loopback_server.reply(LoopbackServer.error(429), LoopbackServer.error(429))
    raw = openai.OpenAI(base_url=loopback_server.base_url, api_key="k", max_retries=0)
    with pytest.raises(openai.RateLimitError):
        raw.chat.completions.create(model="m", messages=[])
    with pytest.raises(ModelError) as info:
        model(loopback_server, max_retry=0).complete(HI)
    assert info.value.code == "LA-429" and info.value.status_code == 429


def test_openai_module_import_stays_cheap() -> None:
    import subprocess
    import sys

    code = (
        "import sys, lightagent, lightagent.models.openai_compat, lightagent.models.stream;"
        "print(sorted(m for m in ('openai', 'httpx') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_openai_unknown_profile_name_is_typed() -> None:
    with pytest.raises(ConfigurationError) as info:
        OpenAIModel("m", profile="deepsek")
    assert "deepseek" in info.value.hint
    assert OpenAIModel("m", profile="KIMI").profile.name == "moonshot"


def test_openai_aclose_closes_loop_client(loopback_server: LoopbackServer) -> None:
    loopback_server.reply("x")
    m = model(loopback_server)

    async def main() -> None:
        await m.acomplete(HI)
        client = m.async_client
        await m.aclose()
        assert client.is_closed() and m.async_client is not client

    asyncio.run(main())


@pytest.mark.parametrize(
    "reply",
    [
        LoopbackServer.raw(body="<html>gateway</html>", headers={"Content-Type": "text/html"}),
        LoopbackServer.raw(body="{truncated json"),
        LoopbackServer.raw(body=[1, 2]),
    ],
)
def test_openai_unreadable_body_is_typed(loopback_server: LoopbackServer, reply: Any) -> None:
    loopback_server.reply(reply)
    with pytest.raises(ModelError) as info:
        model(loopback_server, max_retry=2).complete(HI)
    assert info.value.code == "LA-MODEL-OUTPUT"
    assert len(loopback_server.requests) == 1


def test_openai_astream_truncation_and_inband_error(loopback_server: LoopbackServer) -> None:
    chunk = {
        "id": "x",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": {"content": "part"}, "finish_reason": None}],
    }
    loopback_server.reply(
        LoopbackServer.raw(chunks=[chunk], done=False, stall=5.0),
        LoopbackServer.raw(chunks=[chunk, {"error": {"message": "overloaded", "code": 529}}]),
    )
    m = model(loopback_server, timeout=STALL_TIMEOUT)

    async def consume() -> list[Any]:
        return [item async for item in m.astream(HI)]

    async def main() -> tuple[ModelError, ModelError]:
        errors = []
        for _ in range(2):
            with pytest.raises(ModelError) as info:
                await consume()
            errors.append(info.value)
        return errors[0], errors[1]

    stalled, inband = asyncio.run(main())
    assert stalled.code == "LA-TRUNCATED" and stalled.details["partial_content"] == "part"
    assert inband.code == "LA-500" and inband.details["in_band"] is True
    assert inband.details["partial_content"] == "part"
    assert len(loopback_server.requests) == 2  # neither was retried after chunks arrived


def test_openai_caller_sdk_client_gets_no_sdk_retries(loopback_server: LoopbackServer) -> None:
    loopback_server.reply(LoopbackServer.error(500), LoopbackServer.error(500))
    own = openai.OpenAI(base_url=loopback_server.base_url, api_key="k", max_retries=5)
    m = OpenAIModel("m", client=own, max_retry=1, retry_backoff=0.0)
    with pytest.raises(ModelError) as info:
        m.complete(HI)
    assert info.value.details["attempts"] == 2 and len(loopback_server.requests) == 2
    assert m.client is own and own.max_retries == 5


def test_openai_async_path_follows_a_caller_sync_client(
    loopback_server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("LIGHTAGENT_API_KEY", raising=False)
    loopback_server.reply("via async twin")
    own = openai.OpenAI(base_url=loopback_server.base_url, api_key="caller-key")
    m = OpenAIModel("m", client=own, base_url="https://api.example.com/v1")
    assert asyncio.run(m.acomplete(HI)).content == "via async twin"
    assert loopback_server.headers[0]["Authorization"] == "Bearer caller-key"


def test_openai_server_408_and_409_are_not_retried(loopback_server: LoopbackServer) -> None:
    loopback_server.reply(LoopbackServer.error(408), LoopbackServer.error(409))
    m = model(loopback_server, max_retry=3)
    for code in ("LA-408", "LA-400"):
        with pytest.raises(ModelError) as info:
            m.complete(HI)
        assert info.value.code == code and info.value.details["attempts"] == 1
    assert len(loopback_server.requests) == 2


def test_openai_streams_reuse_the_connection(loopback_server: LoopbackServer) -> None:
    """Unlike the bare SDK, the body is read to its end, so the connection goes back to the pool."""
    loopback_server.default = "streamed"
    m = model(loopback_server)
    for _ in range(4):
        assert drain(m)[1].content == "streamed"
    assert m.complete(HI).content == "streamed"
    assert loopback_server.connections == 1

    async def main() -> None:
        for _ in range(3):
            assert [i async for i in m.astream(HI)][-1].content == "streamed"

    asyncio.run(main())
    assert loopback_server.connections == 2  # one more for the async client's pool


def test_sse_reader_edge_cases() -> None:
    from lightagent.models.sse import iter_sse_json

    lines = [
        ": OPENROUTER PROCESSING",
        "",
        "event: message",
        'data: {"a":',
        "data: 1}",
        "",
        'data:{"b": 2}',
        "",
        "data: [DONE]",
        "",
        'data: {"late": true}',
        "",
        'data: {"c": 3}',
    ]
    assert list(iter_sse_json(lines)) == [{"a": 1}, {"b": 2}]
    assert list(iter_sse_json(['data: {"c": 3}'])) == [{"c": 3}]  # no final blank line
    with pytest.raises(ValueError):
        list(iter_sse_json(["data: {oops", ""]))


@pytest.mark.parametrize("fault", [{"stall": 5.0}, {"close": True}])
def test_openai_fault_after_done_keeps_the_complete_answer(
    loopback_server: LoopbackServer, fault: dict
) -> None:
    """A server that stalls or drops the connection after [DONE] still gave a whole answer."""
    done = {
        "id": "x",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": {"content": "whole"}, "finish_reason": "stop"}],
    }
    loopback_server.reply(LoopbackServer.raw(chunks=[done], **fault))
    _, r = drain(model(loopback_server, timeout=STALL_TIMEOUT))
    assert r.content == "whole" and r.finish_reason == "stop"


def _chat_request(srv: LoopbackServer, index: int) -> tuple[dict[str, Any], dict[str, str]]:
    return srv.requests[index], srv.headers[index]


@pytest.mark.parametrize("stream", [False, True])
def test_openai_sends_the_body_the_sdk_itself_would(
    loopback_server: LoopbackServer, stream: bool
) -> None:
    # The body goes to the SDK as ready JSON where it takes that (openai 3.x): the bytes on
    # the wire must be the ones the SDK writes for the same dict (compact, UTF-8 as is).
    loopback_server.default = "ok"
    m = model(loopback_server)
    req = ModelRequest([{"role": "user", "content": 'héllo, 世界 \u2028 "quoted"'}], tools=ADD)
    body = m.build_body(req, stream=stream)
    if stream:
        drain(m, req)
        raw = openai.OpenAI(base_url=loopback_server.base_url, api_key="k", max_retries=0)
        list(
            raw.post(
                "/chat/completions",
                body=body,
                cast_to=object,
                stream=True,
                stream_cls=openai.Stream[object],
            )
        )
    else:
        m.complete(req)
        raw = openai.OpenAI(base_url=loopback_server.base_url, api_key="k", max_retries=0)
        raw.post("/chat/completions", body=body, cast_to=object)
    (ours, our_headers), (sdk, sdk_headers) = (
        _chat_request(loopback_server, 0),
        _chat_request(loopback_server, 1),
    )
    assert ours == sdk == json.loads(json.dumps(body))
    assert our_headers["Content-Length"] == sdk_headers["Content-Length"]
    assert our_headers["Content-Type"] == sdk_headers["Content-Type"] == "application/json"


def test_openai_options_only_the_sdk_can_write_still_go_out(
    loopback_server: LoopbackServer,
) -> None:
    # A date (or a pydantic model) among the options is left to the SDK's own encoder.
    import datetime

    loopback_server.default = "ok"
    at = datetime.datetime(2025, 1, 2, 3, 4, 5)
    m = model(loopback_server, options={"metadata": {"at": at}})
    assert m.complete(HI).content == "ok"

    async def main() -> str | None:
        return (await m.acomplete(HI)).content

    assert asyncio.run(main()) == "ok"
    assert [r["metadata"] for r in loopback_server.requests] == [{"at": at.isoformat()}] * 2


def test_openai_default_headers_can_drop_the_sdks_platform_headers(
    loopback_server: LoopbackServer,
) -> None:
    loopback_server.default = "ok"
    platform = ["X-Stainless-Lang", "X-Stainless-OS", "X-Stainless-Arch"]
    plain_model = model(loopback_server)
    lean = model(loopback_server, default_headers={name: openai.omit for name in platform})
    assert plain_model.complete(HI).content == lean.complete(HI).content == "ok"

    async def main() -> str | None:
        return (await lean.acomplete(HI)).content

    assert asyncio.run(main()) == "ok"
    sent, *trimmed = loopback_server.headers
    assert all(name in sent for name in platform)
    assert all(name not in headers for headers in trimmed for name in platform)
