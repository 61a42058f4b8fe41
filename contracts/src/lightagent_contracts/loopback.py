"""A real OpenAI Chat Completions server on 127.0.0.1 for tests, benchmarks and demos.

``LoopbackServer`` listens on a random port in a background thread and answers
``POST /v1/chat/completions`` from a queue of scripted replies, in JSON or as an SSE
stream (when the request says ``"stream": true``). It speaks HTTP/1.1 with keep-alive so
the ``openai`` SDK reuses its connections, and it records every request body and header.
``POST /v1/embeddings`` answers deterministic vectors (:meth:`LoopbackServer.embed`: hashed
words, so texts sharing words are close); :meth:`LoopbackServer.route` gives one model name
a standing reply (a memory library's extraction calls beside the agent's scripted turns).

    with LoopbackServer() as srv:
        srv.reply("hello", {"tool_calls": [{"name": "add", "arguments": {"a": 1}}]})
        client = openai.OpenAI(base_url=srv.base_url, api_key="test")
        ...
        srv.assert_exhausted()

Replies are strings, dicts ``{content, reasoning_content, tool_calls: [{name, arguments,
id?}], usage, finish_reason, truncate, interleave}``, :meth:`LoopbackServer.error`
objects, :meth:`LoopbackServer.raw` wire-level replies, recorded fixtures (:meth:`replay`)
or callables ``fn(body) -> reply`` evaluated per request.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

__all__ = ["ErrorReply", "LoopbackServer", "RawReply", "UnusedRepliesError", "load_fixture"]


class UnusedRepliesError(AssertionError):
    """Raised by :meth:`LoopbackServer.assert_exhausted` when scripted replies were left unused."""


@dataclass
class ErrorReply:
    """An HTTP error answer: ``status``, a JSON (or text) ``body`` and extra ``headers``."""

    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class RawReply:
    """A wire-level answer, sent exactly as given.

    ``body`` (dict, str or bytes) is sent as one response; otherwise ``chunks`` (dicts
    or raw ``data:`` payload strings) are sent as SSE events, followed by
    ``data: [DONE]`` when ``done``. ``stall`` sleeps that many seconds after the
    chunks (to exercise read timeouts); ``close`` drops the connection mid-body.
    """

    status: int = 200
    body: Any = None
    chunks: list[Any] | None = None
    done: bool = True
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    stall: float = 0.0
    close: bool = False


Reply = Any  # str | dict | ErrorReply | RawReply | Callable[[dict], Reply]


def load_fixture(fixture: str | Path | dict[str, Any]) -> dict[str, Any]:
    """Read a recorded wire fixture (a path to its JSON file, or the parsed dict)."""
    if isinstance(fixture, dict):
        return fixture
    return json.loads(Path(fixture).read_text(encoding="utf-8"))


def _error_body(message: str, kind: str, code: Any = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "code": code}}


def _start(
    handler: BaseHTTPRequestHandler,
    status: int,
    ctype: str,
    headers: dict[str, str],
    length: int | None,
) -> None:
    handler.send_response(status)
    if not any(key.lower() == "content-type" for key in headers):
        handler.send_header("Content-Type", ctype)
    if length is None:
        handler.send_header("Transfer-Encoding", "chunked")
    else:
        handler.send_header("Content-Length", str(length))
    for key, value in headers.items():
        handler.send_header(key, str(value))
    handler.end_headers()


def _fixture_reply(fixture: dict[str, Any]) -> RawReply:
    status = int(fixture.get("http_status") or 200)
    if "stream" in fixture:
        # A missing done_sentinel means the source stored bare chunks; servers send [DONE].
        return RawReply(
            status=status,
            chunks=list(fixture["stream"]),
            done=fixture.get("done_sentinel", True) is not False,
        )
    return RawReply(status=status, body=fixture.get("response"))


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        owner = self.server.owner
        with owner._lock:
            owner.connections += 1
            owner._open.add(self.connection)

    def finish(self) -> None:
        owner = self.server.owner
        with owner._lock:
            owner._open.discard(self.connection)
        try:
            super().finish()
        except OSError:
            pass  # the peer or stop() already closed the socket

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            model = {"id": self.server.owner.model, "object": "model", "owned_by": "loopback"}
            self._send_json(200, {"object": "list", "data": [model]})
        else:
            self._send_json(404, _error_body(f"no route {self.path}", "not_found"))

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = self.path.rstrip("/")
        embeddings = path.endswith("/embeddings")
        if not (embeddings or path.endswith("/chat/completions")):
            self._send_json(404, _error_body(f"no route {self.path}", "not_found"))
            return
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            self._send_json(400, _error_body("body is not JSON", "invalid_request_error"))
            return
        owner = self.server.owner
        if embeddings:
            status, answer = owner._embeddings(body)
            self._send_json(status, answer)
            return
        reply = owner._take(body, _Headers(self.headers.items()), self.path)
        owner._answer(self, body, reply)

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        if isinstance(payload, bytes):
            data = payload
        elif isinstance(payload, str):
            data = payload.encode()
        else:
            data = json.dumps(payload).encode()
        _start(self, status, "application/json", headers or {}, len(data))
        self.wfile.write(data)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    # Hundreds of clients may connect at once (load tests, benchmarks); socketserver's
    # default backlog of 5 would drop their SYNs and stall each for a retransmit.
    request_queue_size = 1024
    owner: LoopbackServer


class _Headers(dict):  # type: ignore[type-arg]
    """A request's headers as sent, looked up regardless of case (HTTP names are)."""

    def _key(self, key: object) -> object:
        if isinstance(key, str) and not dict.__contains__(self, key):
            lower = key.lower()
            for name in self:
                if name.lower() == lower:
                    return name
        return key

    def __getitem__(self, key: str) -> str:
        return dict.__getitem__(self, self._key(key))

    def __contains__(self, key: object) -> bool:
        return dict.__contains__(self, self._key(key))

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        return dict.get(self, self._key(key), default)


def _sse(payload: Any) -> bytes:
    text = payload if isinstance(payload, str) else json.dumps(payload)
    return b"data: " + text.encode() + b"\n\n"


_WORDS = re.compile(r"\w+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def _embedding(text: str, dimensions: int) -> list[float]:
    """Signed feature hashing of the lower-cased words (and CJK characters), L2-normalised."""
    vector = [0.0] * dimensions
    lowered = text.casefold()
    tokens = _WORDS.findall(lowered) + _CJK.findall(lowered)
    for token in tokens:
        digest = hashlib.blake2b(token.encode("utf-8", "surrogatepass"), digest_size=8).digest()
        value = int.from_bytes(digest, "little")
        vector[value % dimensions] += 1.0 if (value >> 63) & 1 else -1.0
    norm = math.sqrt(sum(v * v for v in vector))
    if norm == 0.0:  # no words: a fixed unit vector, never a zero one (cosine needs a norm)
        vector[0] = 1.0
        return vector
    return [v / norm for v in vector]


def _split(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


class LoopbackServer:
    """An OpenAI-wire HTTP server on 127.0.0.1 answering from scripted replies.

    ``default`` answers requests once the queue is empty (a reply or a callable);
    without it such a request gets HTTP 500 and is counted in :attr:`unexpected`.
    Streamed text and tool-call arguments are split into ``chunk_size`` pieces.
    """

    def __init__(
        self,
        *,
        model: str = "loopback-model",
        chunk_size: int = 16,
        default: Reply | None = None,
        port: int = 0,
        embedding_dimensions: int = 256,
    ) -> None:
        self.model = model
        self.embedding_dimensions = embedding_dimensions
        #: Bodies of ``/v1/embeddings`` requests (chat bodies are in :attr:`requests`).
        self.embedding_requests: list[dict[str, Any]] = []
        self._routes: dict[str, Reply] = {}
        self.chunk_size = max(1, chunk_size)
        self.default = default
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        self.unexpected = 0
        #: TCP connections accepted so far (keep-alive keeps this low).
        self.connections = 0
        self._open: set[socket.socket] = set()
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._counter = 0
        self._created = int(time.time())
        self._port = port
        self._server: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------
    def start(self) -> LoopbackServer:
        """Bind 127.0.0.1 on a free port and serve in a daemon thread."""
        if self._server is not None:
            return self
        server = _HTTPServer(("127.0.0.1", self._port), _Handler)
        server.owner = self
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="lightagent-loopback",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket (idempotent)."""
        server, self._server = self._server, None
        if server is None:
            return
        self._stopping.set()
        server.shutdown()
        server.server_close()
        with self._lock:
            open_sockets = list(self._open)
        for sock in open_sockets:
            # Kept-alive connections would park their handler threads forever.
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if self._thread is not None:
            self._thread.join(timeout=5)

    close = stop

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound TCP port."""
        if self._server is None:
            raise RuntimeError("LoopbackServer is not started")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI ``base_url``: ``http://127.0.0.1:<port>/v1``."""
        return f"{self.url}/v1"

    # -- scripting -------------------------------------------------------------------
    def reply(self, *replies: Reply) -> LoopbackServer:
        """Queue replies, one per request, in order; returns self for chaining."""
        with self._lock:
            self._queue.extend(replies)
        return self

    def route(self, model: str, reply: Reply) -> LoopbackServer:
        """Answer every chat request for ``model`` with ``reply`` (a callable is called per
        request), leaving the queue to the others; the request is recorded as usual."""
        with self._lock:
            self._routes[model] = reply
        return self

    @staticmethod
    def embed(text: str, dimensions: int = 256) -> list[float]:
        """The vector ``/v1/embeddings`` answers for ``text``: deterministic, unit length,
        and the closer the more words two texts share."""
        return _embedding(str(text), dimensions)

    def replay(self, fixture: str | Path | dict[str, Any]) -> LoopbackServer:
        """Queue a recorded wire fixture (``response`` or ``stream`` chunks) verbatim."""
        return self.reply(_fixture_reply(load_fixture(fixture)))

    @staticmethod
    def error(status: int, body: Any = None, headers: dict[str, str] | None = None) -> ErrorReply:
        """An HTTP error reply (e.g. ``error(429, headers={"Retry-After": "1"})``)."""
        if body is None:
            body = _error_body(f"loopback error {status}", "loopback_error", status)
        return ErrorReply(status, body, dict(headers or {}))

    @staticmethod
    def raw(**kwargs: Any) -> RawReply:
        """A wire-level reply; see :class:`RawReply` for the fields."""
        return RawReply(**kwargs)

    @property
    def remaining(self) -> int:
        """How many queued replies are still unused."""
        return len(self._queue)

    def assert_exhausted(self) -> None:
        """Fail when queued replies were never requested."""
        if self._queue:
            raise UnusedRepliesError(
                f"LoopbackServer has {len(self._queue)} unused replies: {list(self._queue)[:3]!r}"
            )

    def clear(self) -> None:
        """Drop queued replies and recorded requests."""
        with self._lock:
            self._queue.clear()
            self.requests.clear()
            self.headers.clear()
            self.paths.clear()
            self.embedding_requests.clear()
            self.unexpected = 0

    # -- serving ---------------------------------------------------------------------
    def _take(self, body: dict[str, Any], headers: dict[str, str], path: str) -> Reply:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            self.paths.append(path)
            self._counter += 1
            routed = self._routes.get(str(body.get("model")))
            if routed is not None:
                reply = routed
            elif self._queue:
                reply = self._queue.popleft()
            elif self.default is not None:
                reply = self.default
            else:
                self.unexpected += 1
                message = f"loopback: no reply scripted for request #{self._counter}"
                return ErrorReply(500, _error_body(message, "loopback_unscripted"))
        while callable(reply) and not isinstance(reply, (ErrorReply, RawReply)):
            reply = reply(body)
        return reply

    def _embeddings(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        raw = body.get("input")
        if isinstance(raw, str) or (isinstance(raw, list) and raw and isinstance(raw[0], int)):
            raw = [raw]
        if not isinstance(raw, list) or not raw:
            return 400, _error_body(
                "input must be a string or a non-empty list", "invalid_request_error"
            )
        dims = body.get("dimensions") or self.embedding_dimensions
        if not isinstance(dims, int) or isinstance(dims, bool) or not 1 <= dims <= 4096:
            return 400, _error_body("dimensions must be an integer 1-4096", "invalid_request_error")
        with self._lock:
            self.embedding_requests.append(body)
        data = []
        tokens = 0
        for index, item in enumerate(raw):
            text = item if isinstance(item, str) else " ".join(str(t) for t in item)
            tokens += max(1, len(text.split()))
            vector = _embedding(text, dims)
            encoded: Any = vector
            if body.get("encoding_format") == "base64":
                encoded = base64.b64encode(struct.pack(f"<{dims}f", *vector)).decode()
            data.append({"object": "embedding", "index": index, "embedding": encoded})
        model = body.get("model") or "loopback-embedding"
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        return 200, {"object": "list", "data": data, "model": model, "usage": usage}

    def _answer(self, handler: _Handler, body: dict[str, Any], reply: Reply) -> None:
        if isinstance(reply, ErrorReply):
            handler._send_json(reply.status, reply.body, reply.headers)
            return
        if isinstance(reply, RawReply):
            self._send_raw(handler, reply)
            return
        spec = {"content": reply} if isinstance(reply, str) else dict(reply)
        with self._lock:
            self._counter += 1
            ident = f"chatcmpl-loopback-{self._counter}"
        model = body.get("model") or self.model
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            data = b"".join(_sse(c) for c in self._stream_chunks(spec, ident, model, include_usage))
            if not spec.get("truncate"):
                data += b"data: [DONE]\n\n"
            _start(handler, 200, "text/event-stream", {}, len(data))
            handler.wfile.write(data)
        else:
            handler._send_json(200, self._completion(spec, ident, model))

    def _usage(self, spec: dict[str, Any]) -> dict[str, int]:
        usage = spec.get("usage")
        if usage is not None:
            return dict(usage)
        completion = (len(spec.get("content") or "") + 3) // 4 + 8 * len(
            spec.get("tool_calls") or ()
        )
        return {
            "prompt_tokens": 10,
            "completion_tokens": completion,
            "total_tokens": 10 + completion,
        }

    def _calls(self, spec: dict[str, Any], ident: str) -> list[dict[str, Any]]:
        calls = []
        for index, call in enumerate(spec.get("tool_calls") or ()):
            args = call.get("arguments", {})
            calls.append(
                {
                    "index": index,
                    "id": call.get("id", f"call_{ident.rsplit('-', 1)[-1]}_{index}"),
                    "type": "function",
                    "function": {
                        "name": call["name"],
                        "arguments": args if isinstance(args, str) else json.dumps(args),
                    },
                }
            )
        return calls

    def _completion(self, spec: dict[str, Any], ident: str, model: str) -> dict[str, Any]:
        calls = self._calls(spec, ident)
        message: dict[str, Any] = {"role": "assistant", "content": spec.get("content")}
        if spec.get("reasoning_content") is not None:
            message["reasoning_content"] = spec["reasoning_content"]
        if calls:
            message["tool_calls"] = [{k: v for k, v in c.items() if k != "index"} for c in calls]
        finish = spec.get("finish_reason") or ("tool_calls" if calls else "stop")
        return {
            "id": ident,
            "object": "chat.completion",
            "created": self._created,
            "model": model,
            "choices": [
                {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
            ],
            "usage": self._usage(spec),
        }

    def _stream_chunks(
        self, spec: dict[str, Any], ident: str, model: str, include_usage: bool
    ) -> Iterable[dict[str, Any]]:
        created = self._created

        base = {"id": ident, "object": "chat.completion.chunk", "created": created, "model": model}

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
            return {**base, "choices": [choice]}

        size = self.chunk_size
        yield chunk({"role": "assistant", "content": ""})
        for key in ("reasoning_content", "content"):
            text = spec.get(key)
            if text:
                for piece in _split(text, size):
                    yield chunk({key: piece})
        calls = self._calls(spec, ident)
        fragments: list[list[dict[str, Any]]] = []
        for call in calls:
            pieces = _split(call["function"]["arguments"], size)
            head = {
                "index": call["index"],
                "id": call["id"],
                "type": "function",
                "function": {"name": call["function"]["name"], "arguments": ""},
            }
            fragments.append(
                [head] + [{"index": call["index"], "function": {"arguments": p}} for p in pieces]
            )
        if spec.get("interleave"):
            # Round-robin the calls' fragments, as some servers do for parallel calls.
            longest = max((len(f) for f in fragments), default=0)
            order = [f[i] for i in range(longest) for f in fragments if i < len(f)]
        else:
            order = [frag for f in fragments for frag in f]
        for frag in order:
            yield chunk({"tool_calls": [frag]})
        if spec.get("truncate"):
            return
        finish = spec.get("finish_reason") or ("tool_calls" if calls else "stop")
        yield chunk({}, finish)
        if include_usage:
            yield {**base, "choices": [], "usage": self._usage(spec)}

    def _send_raw(self, handler: _Handler, reply: RawReply) -> None:
        if reply.delay:
            self._stopping.wait(reply.delay)
        if reply.chunks is None:
            handler._send_json(
                reply.status, reply.body if reply.body is not None else {}, reply.headers
            )
            return
        events = [_sse(c) for c in reply.chunks]
        if reply.done:
            events.append(b"data: [DONE]\n\n")
        if not reply.stall and not reply.close:
            data = b"".join(events)
            _start(handler, reply.status, "text/event-stream", reply.headers, len(data))
            handler.wfile.write(data)
            return
        # Chunked transfer so the client sees the events before the stall or the drop.
        _start(handler, reply.status, "text/event-stream", reply.headers, None)
        for event in events:
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
        handler.wfile.flush()
        if reply.stall:
            self._stopping.wait(reply.stall)
        if reply.close:
            handler.close_connection = True
            try:
                handler.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        try:
            handler.wfile.write(b"0\r\n\r\n")
        except OSError:
            pass  # the client gave up during the stall
