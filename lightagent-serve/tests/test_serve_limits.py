"""What the server refuses and what it never leaks: keys in error bodies, empty keys, deep and
oversized bodies, bodies cut off mid-way, lone surrogates, and the usage chunk of a stream."""

from __future__ import annotations

import json
import logging
import socket
import threading

import httpx
import pytest
from lightagent import ConfigurationError, LightAgent, ScriptedModel, SqliteSessionStore
from lightagent_serve import create_app

KEY = "serve-test-key-0123456789"
AUTH = {"Authorization": f"Bearer {KEY}"}
LEAK = "sk-live0123456789abcdefXYZ"
HELLO = {"model": "support", "messages": [{"role": "user", "content": "hi"}]}


def agent_for(server, name: str = "support", **kw) -> LightAgent:
    agent = LightAgent(
        name=name, model="gpt-4.1", api_key="upstream", base_url=server.base_url, **kw
    )
    agent.model.max_retry = 0
    return agent


def _raw(port: int, head: bytes, body: bytes = b"") -> bytes:
    """Send ``head`` and ``body`` on a fresh connection; the answer, read to its end."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(head + body)
        answer = b""
        while b"\r\n\r\n" not in answer or not _complete(answer):
            data = sock.recv(65536)
            if not data:
                break
            answer += data
    return answer


def _complete(answer: bytes) -> bool:
    head, _, body = answer.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return len(body) >= int(line.split(b":")[1])
    return False


def _post_head(length: int) -> bytes:
    return (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        + f"Authorization: Bearer {KEY}\r\nContent-Type: application/json\r\n".encode()
        + f"Content-Length: {length}\r\n\r\n".encode()
    )


# -- secrets never reach a client -----------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
def test_a_model_error_s_credentials_are_redacted_in_the_502_body(
    loopback_server, serve, stream
) -> None:
    message = f"upstream refused the request (Authorization: Bearer {LEAK}; password=hunter2xyz)"
    loopback_server.default = loopback_server.error(
        400, {"error": {"message": message, "type": "invalid_request_error", "code": "x"}}
    )
    served = serve(agent_for(loopback_server))
    response = httpx.post(
        f"{served.base_url}/chat/completions", json={**HELLO, "stream": stream}, headers=AUTH
    )
    assert response.status_code == 502, response.text
    assert LEAK not in response.text and "hunter2xyz" not in response.text
    assert "Bearer [redacted]" in response.json()["error"]["message"]
    assert response.json()["error"]["code"] == "LA-400"


def test_an_error_event_inside_a_stream_is_redacted(serve) -> None:
    class Leaky:
        name = "support"

        async def arun(self, query, **options):
            raise AssertionError("streamed only")

        async def astream(self, query, **options):
            yield type("E", (), {"type": "content", "data": "partial "})()
            raise RuntimeError(f"tool said Authorization: Bearer {LEAK}")

    served = serve(Leaky())
    response = httpx.post(
        f"{served.base_url}/chat/completions", json={**HELLO, "stream": True}, headers=AUTH
    )
    assert response.status_code == 200
    assert "data: [DONE]" in response.text
    assert LEAK not in response.text and "[redacted]" in response.text


# -- keys -----------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["", "   ", "\t\n"])
def test_an_empty_api_key_is_refused_by_create_app(key) -> None:
    agent = LightAgent(name="support", model=ScriptedModel(default="hi"))
    with pytest.raises(ConfigurationError) as info:
        create_app([agent], api_key=key)
    assert info.value.code == "LA-CONFIG"
    assert "api_key=None" in (info.value.hint or "")


@pytest.mark.parametrize("header", [b"Bearer ", b"Bearer", b"Bearer    ", b"bearer \t"])
def test_a_bearer_header_without_a_token_is_401(serve, header) -> None:
    served = serve(LightAgent(name="support", model=ScriptedModel(default="hi")))
    body = json.dumps(HELLO).encode()
    head = (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: "
        + header
        + f"\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode()
    )
    answer = _raw(served.port, head, body)
    assert answer.startswith(b"HTTP/1.1 401"), answer[:200]
    assert json.loads(answer.partition(b"\r\n\r\n")[2])["error"]["code"] == "invalid_api_key"


# -- bodies ---------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [100_000, 200])
def test_a_deeply_nested_body_is_a_400_not_a_500(serve, caplog, depth) -> None:
    served = serve(LightAgent(name="support", model=ScriptedModel(default="hi")))
    nested = "[" * depth + "]" * depth
    body = '{"model": "support", "messages": [{"role": "user", "content": "x", "name": %s}]}'
    with caplog.at_level(logging.ERROR):
        response = httpx.post(
            f"{served.base_url}/chat/completions",
            content=(body % nested).encode(),
            headers={**AUTH, "Content-Type": "application/json"},
        )
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == "LA-JSON"
    assert "nests more than 64 levels" in response.json()["error"]["message"]
    assert "Traceback" not in response.text
    # the server's own loggers; asyncio may report a client another test left to the GC
    ours = [r for r in caplog.records if r.name.startswith(("lightagent", "uvicorn"))]
    assert not [r for r in ours if r.levelno >= logging.ERROR]


def test_a_body_over_the_limit_is_413_before_it_is_read(serve) -> None:
    agent = LightAgent(name="support", model=ScriptedModel(default="hi"))
    served = serve(agent, max_body_bytes=1_000_000)
    # 150 MB announced, a few bytes sent: the answer comes without the rest being waited for.
    answer = _raw(served.port, _post_head(150_000_000), b'{"model": "support", ')
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    error = json.loads(answer.partition(b"\r\n\r\n")[2])["error"]
    assert error["code"] == "LA-REQUEST-TOO-LARGE"
    assert error["type"] == "invalid_request_error"
    assert "1000000" in error["message"]


def test_a_chunked_body_over_the_limit_is_413_while_it_is_read(serve) -> None:
    served = serve(
        LightAgent(name="support", model=ScriptedModel(default="hi")), max_body_bytes=2000
    )

    def body():  # no Content-Length: chunked, counted as it arrives
        for _ in range(5):
            yield b" " * 1000

    response = httpx.post(
        f"{served.base_url}/chat/completions",
        content=body(),
        headers={**AUTH, "Content-Type": "application/json"},
    )
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "LA-REQUEST-TOO-LARGE"


def test_a_body_under_the_limit_is_served(serve) -> None:
    served = serve(
        LightAgent(name="support", model=ScriptedModel(default="hi")), max_body_bytes=4096
    )
    reply = served.client().chat.completions.create(
        model="support", messages=[{"role": "user", "content": "x" * 3000}]
    )
    assert reply.choices[0].message.content == "hi"


@pytest.mark.parametrize("limit", [0, -1, 1.5, True])
def test_a_bad_body_limit_is_refused_by_create_app(limit) -> None:
    agent = LightAgent(name="support", model=ScriptedModel(default="hi"))
    with pytest.raises(ConfigurationError):
        create_app([agent], api_key=KEY, max_body_bytes=limit)


class _Records(logging.Handler):
    """Keeps the serve logger's records; ``seen`` is set at the first one."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []
        self.seen = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)
        self.seen.set()


def test_a_client_that_hangs_up_mid_body_is_logged_as_a_disconnect(serve) -> None:
    served = serve(LightAgent(name="support", model=ScriptedModel(default="hi")))
    records = _Records()
    logger = logging.getLogger("lightagent.serve")
    level = logger.level
    logger.setLevel(logging.DEBUG)
    logger.addHandler(records)
    errors = _Records()
    logging.getLogger("uvicorn.error").addHandler(errors)
    try:
        with socket.create_connection(("127.0.0.1", served.port), timeout=30) as sock:
            sock.sendall(_post_head(1000) + b'{"model": "supp')
        assert records.seen.wait(30), "the server never noticed"
    finally:
        logger.removeHandler(records)
        logger.setLevel(level)
        logging.getLogger("uvicorn.error").removeHandler(errors)
    [record] = records.records
    assert record.levelno <= logging.INFO
    assert "disconnect" in record.getMessage()
    assert record.exc_info is None
    assert not [r for r in errors.records if r.levelno >= logging.ERROR]


# -- lone surrogates ------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
def test_a_lone_surrogate_in_a_request_is_served(loopback_server, serve, tmp_path, stream) -> None:
    store = SqliteSessionStore(tmp_path / "s.sqlite3")
    loopback_server.reply("echo: \ud800!")  # the model answers one too
    served = serve(agent_for(loopback_server, session_store=store))
    body = {**HELLO, "stream": stream, "messages": [{"role": "user", "content": "a\ud800b"}]}
    response = httpx.post(
        f"{served.base_url}/chat/completions",
        content=json.dumps(body).encode(),  # the escape \ud800 on the wire
        headers={**AUTH, "Content-Type": "application/json", "X-Session-Id": "s-1"},
    )
    assert response.status_code == 200, response.text
    if stream:
        datas = [line[6:] for line in response.text.splitlines() if line.startswith("data: {")]
        chunks = [json.loads(d) for d in datas]
        answer = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks)
    else:
        answer = response.json()["choices"][0]["message"]["content"]
    assert answer == "echo: \ufffd!"
    assert loopback_server.requests[0]["messages"][-1]["content"] == "a\ufffdb"
    stored = json.dumps([e.data for e in store.events("s-1")], ensure_ascii=False)
    assert "a\ufffdb" in stored and "echo: \ufffd!" in stored


def test_a_user_with_a_lone_surrogate_is_400(serve) -> None:
    served = serve(LightAgent(name="support", model=ScriptedModel(default="hi")))
    response = httpx.post(
        f"{served.base_url}/chat/completions",
        content=json.dumps({**HELLO, "user": "ann\ud800"}).encode(),
        headers={**AUTH, "Content-Type": "application/json"},
    )
    assert response.status_code == 400, response.text
    assert response.json()["error"]["param"] == "user"
    assert response.json()["error"]["code"] == "LA-VALIDATION"


# -- the usage chunk ------------------------------------------------------------------


def test_the_usage_chunk_comes_last_with_no_choices(loopback_server, serve) -> None:
    usage = {"prompt_tokens": 9, "completion_tokens": 3}
    loopback_server.reply({"content": "Counted.", "usage": usage})
    served = serve(agent_for(loopback_server))
    chunks = list(
        served.client().chat.completions.create(
            model="support",
            messages=[{"role": "user", "content": "count"}],
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    last = chunks[-1]
    assert last.choices == []
    assert last.usage is not None
    assert (last.usage.prompt_tokens, last.usage.completion_tokens) == (9, 3)
    assert all(c.usage is None for c in chunks[:-1])
    assert [c.choices[0].finish_reason for c in chunks[:-1]][-1] == "stop"


def test_the_usage_chunk_through_a_scripted_model(serve) -> None:
    served = serve(LightAgent(name="support", model=ScriptedModel(default="hi")))
    chunks = list(
        served.client().chat.completions.create(
            model="support",
            messages=[{"role": "user", "content": "count"}],
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert chunks[-1].usage.total_tokens >= 0


def test_no_usage_chunk_unless_asked(serve) -> None:
    served = serve(LightAgent(name="support", model=ScriptedModel(default="hi")))
    chunks = list(
        served.client().chat.completions.create(
            model="support", messages=[{"role": "user", "content": "x"}], stream=True
        )
    )
    assert all(c.choices for c in chunks)
    assert all(c.usage is None for c in chunks)


# -- log lines ------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
def test_a_crash_s_log_lines_are_redacted(serve, caplog, stream) -> None:
    class Broken:
        name = "support"

        async def arun(self, query, **options):
            raise RuntimeError(f"kaput (Authorization: Bearer {LEAK})")

        async def astream(self, query, **options):
            raise RuntimeError(f"kaput (Authorization: Bearer {LEAK})")
            yield  # an async generator

    served = serve(Broken())
    with caplog.at_level(logging.ERROR, logger="lightagent.serve"):
        response = httpx.post(
            f"{served.base_url}/chat/completions", json={**HELLO, "stream": stream}, headers=AUTH
        )
    assert response.status_code == 500
    assert LEAK not in response.text
    records = [r for r in caplog.records if r.name == "lightagent.serve"]
    assert records and all(r.exc_text for r in records)  # the traceback is kept, redacted
    assert LEAK not in caplog.text and "Bearer [redacted]" in caplog.text
