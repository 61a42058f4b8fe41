"""The Starlette application: ``POST /v1/chat/completions`` and ``GET /v1/models``.

Every run goes through the agent's ``arun``/``astream`` on the event loop, so requests
are served concurrently by one process. Each request gets a ``CancellationToken``: a
client that disconnects cancels its run, which stops at its next check (before the
next model or tool call, or at the next streamed chunk) and ends with ``LA-CANCELLED``
in its event log. A streamed run is driven by a task of its own that feeds the
response, so a run always ends through the loop, never by being torn down mid-step.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any

from lightagent.cancellation import CancellationToken
from lightagent.errors import ConfigurationError, LightAgentError
from lightagent.events.log_redaction import RedactingFilter
from lightagent.utf8 import utf8
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from lightagent_serve.chat import (
    MAX_BODY_BYTES,
    SESSION_HEADER,
    BadRequest,
    ChatRequest,
    chunk,
    completion,
    parse_body,
    parse_request,
)
from lightagent_serve.errors import error_body, http_status

__all__ = ["create_app"]

log = logging.getLogger("lightagent.serve")
# Its tracebacks quote what failed (a request header, a tool's arguments): redacted at the
# source, whatever handlers the application installs.
log.addFilter(RedactingFilter())
_END = object()


def _json(content: Any) -> bytes:
    # A lone surrogate (a model may answer one) is sent as U+FFFD, never a 500.
    return utf8(json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":")))


class _JSONResponse(JSONResponse):
    def render(self, content: Any) -> bytes:
        return _json(content)


class _TooLarge(Exception):
    pass


def _error(status: int, message: str, code: str | None = None, **extra: Any) -> JSONResponse:
    body = error_body(message, status=status, code=code, **extra)
    return _JSONResponse(body, status_code=status)


def _instructions(agent: Any) -> str | None:
    text = getattr(agent, "instructions", None)
    role = getattr(agent, "role", None)
    if text and role:
        return f"{text}\n{role}"
    return text or None


def _run_error(error: Mapping[str, Any]) -> JSONResponse:
    code = str(error.get("code") or "LA-UNKNOWN")
    return _error(
        http_status(code), str(error.get("message") or code), code, hint=error.get("hint") or None
    )


class _Server:
    """The app's state: the agents by model name, the key, and the streams still running."""

    def __init__(self, agents: Mapping[str, Any], api_key: str | None, max_body: int) -> None:
        self.agents = dict(agents)
        self.api_key = api_key
        self.max_body = max_body
        self.created = int(time.time())
        self.runs: set[asyncio.Task[Any]] = set()

    # -- checks ------------------------------------------------------------------------
    def unauthorized(self, request: Request) -> Response | None:
        if self.api_key is None:
            return None
        header = request.headers.get("authorization", "")
        scheme, _, given = header.partition(" ")
        given = given.strip()
        if (
            scheme.lower() == "bearer"
            and given
            and hmac.compare_digest(utf8(given), utf8(self.api_key))
        ):
            return None
        return _error(401, "Incorrect API key provided.", "invalid_api_key")

    # -- endpoints ---------------------------------------------------------------------
    async def models(self, request: Request) -> Response:
        denied = self.unauthorized(request)
        if denied is not None:
            return denied
        data = [
            {"id": name, "object": "model", "created": self.created, "owned_by": "lightagent"}
            for name in self.agents
        ]
        return _JSONResponse({"object": "list", "data": data})

    async def _body(self, request: Request) -> bytes:
        """The body, read up to :attr:`max_body` bytes (:class:`_TooLarge` past that)."""
        length = request.headers.get("content-length", "")
        if length.isdigit() and int(length) > self.max_body:
            raise _TooLarge  # refused before a byte of it is read
        parts: list[bytes] = []
        size = 0
        async for part in request.stream():
            size += len(part)
            if size > self.max_body:  # chunked, or a Content-Length that lied
                raise _TooLarge
            parts.append(part)
        return b"".join(parts)

    async def chat(self, request: Request) -> Response:
        denied = self.unauthorized(request)
        if denied is not None:
            return denied
        try:
            body = parse_body(await self._body(request))
        except _TooLarge:
            message = f"the request body is larger than {self.max_body} bytes (the limit)"
            return _error(413, message, "LA-REQUEST-TOO-LARGE")
        except ClientDisconnect:
            log.info("the client disconnected before its request body arrived")
            return Response(status_code=499)  # nobody reads it: the connection is gone
        except BadRequest as exc:
            return _error(400, exc.message, exc.code)
        model = body.get("model") if isinstance(body, dict) else None
        agent = self.agents.get(model) if isinstance(model, str) else None
        if isinstance(model, str) and model and agent is None:
            message = f"The model `{model}` does not exist or you do not have access to it."
            return _error(404, message, "model_not_found", param="model")
        try:
            chat = parse_request(
                body,
                instructions=_instructions(agent),
                session_id=request.headers.get(SESSION_HEADER),
            )
        except BadRequest as exc:
            return _error(400, exc.message, exc.code, param=exc.param)
        assert agent is not None  # parse_request refused a body without a model
        if chat.session_id is not None and getattr(agent, "session_binding", None) is None:
            return _error(
                400,
                f"model {chat.model!r} keeps no sessions (its agent has no session_store)",
                "LA-CONFIG",
                param=SESSION_HEADER,
            )
        token = CancellationToken()
        options = self._options(chat, token)
        if chat.stream:
            return await self._stream(request, agent, chat, options, token)
        watcher = asyncio.create_task(_cancel_on_disconnect(request, token))
        try:
            result = await agent.arun(chat.query, **options)
        except LightAgentError as exc:  # refused before the loop started (options, session)
            return _run_error(exc.to_dict())
        finally:
            watcher.cancel()
        if result.error:
            return _run_error(result.error)
        ident = f"chatcmpl-{result.run_id}"
        payload = completion(
            ident, chat.model, result.content, result.usage, result.reasoning_content
        )
        return _JSONResponse(payload, headers=_ids(result.run_id, result.trace_id))

    @staticmethod
    def _options(chat: ChatRequest, token: CancellationToken) -> dict[str, Any]:
        options: dict[str, Any] = {
            "history": chat.history,
            "result_format": "object",
            "cancellation_token": token,
        }
        if chat.user is not None:
            options["user_id"] = chat.user
        if chat.session_id is not None:
            options["session_id"] = chat.session_id
        if chat.options:
            options["model_options"] = chat.options
        return options

    async def _stream(
        self,
        request: Request,
        agent: Any,
        chat: ChatRequest,
        options: dict[str, Any],
        token: CancellationToken,
    ) -> Response:
        options = {**options, "result_format": "event"}
        queue: asyncio.Queue[Any] = asyncio.Queue()
        task = asyncio.create_task(_produce(agent, chat.query, options, queue))
        self.runs.add(task)
        task.add_done_callback(self.runs.discard)
        first = await queue.get()
        # Nothing was sent yet: a run that fails before its first item gets an HTTP error.
        if getattr(first, "type", None) == "error" or first is _END or isinstance(first, Exception):
            await _drain(queue, first)
            return _run_error(_error_of(first))
        events = _sse(chat, first, queue, token, request)
        return StreamingResponse(
            events,
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    async def drain(self, timeout: float) -> None:
        """Wait (at most ``timeout`` s) for streamed runs whose clients went away to end."""
        if self.runs:
            await asyncio.wait(set(self.runs), timeout=timeout)


async def _cancel_on_disconnect(request: Request, token: CancellationToken) -> None:
    while True:
        message = await request.receive()
        if message.get("type") == "http.disconnect":
            token.cancel("the client disconnected")
            return


async def _produce(
    agent: Any, query: str, options: dict[str, Any], queue: asyncio.Queue[Any]
) -> None:
    """Drive one streamed run to its end, handing each event to the response."""
    try:
        async for event in agent.astream(query, **options):
            queue.put_nowait(event)
    except Exception as exc:  # a run that raises (bad options, a bug): still an answer
        if not isinstance(exc, LightAgentError):
            log.exception("streamed run failed")
        queue.put_nowait(exc)
    finally:
        queue.put_nowait(_END)


async def _drain(queue: asyncio.Queue[Any], item: Any) -> None:
    while item is not _END:
        item = await queue.get()


def _error_of(item: Any) -> dict[str, Any]:
    if isinstance(item, Exception):
        code = getattr(item, "code", None) or "LA-UNKNOWN"
        return {"code": code, "message": getattr(item, "message", None) or str(item)}
    if item is _END:
        return {"code": "LA-UNKNOWN", "message": "the run ended without an answer"}
    data = item.data or {}
    details = data["details"] if isinstance(data.get("details"), dict) else {}
    return {
        "code": data.get("code"),
        "message": details.get("message") or data.get("error"),
        "hint": details.get("hint"),
    }


def _ids(run_id: str | None, trace_id: str | None) -> dict[str, str]:
    headers = {}
    if run_id:
        headers["X-Lightagent-Run-Id"] = run_id
    if trace_id:
        headers["X-Lightagent-Trace-Id"] = trace_id
    return headers


def _data(payload: Any) -> bytes:
    return b"data: " + _json(payload) + b"\n\n"


async def _sse(
    chat: ChatRequest,
    first: Any,
    queue: asyncio.Queue[Any],
    token: CancellationToken,
    request: Request,
) -> AsyncIterator[bytes]:
    """The SSE body: content deltas, then the finish (and usage) chunk, then ``[DONE]``."""
    ident = f"chatcmpl-{time.time_ns():x}"
    created = int(time.time())
    watcher = asyncio.create_task(_cancel_on_disconnect(request, token))
    finished = False
    try:
        yield _data(chunk(ident, chat.model, created, {"role": "assistant", "content": ""}))
        item = first
        while item is not _END:
            kind = getattr(item, "type", None)
            if kind == "content":
                yield _data(chunk(ident, chat.model, created, {"content": item.data}))
            elif kind == "reasoning":
                yield _data(chunk(ident, chat.model, created, {"reasoning_content": item.data}))
            elif kind == "error" or isinstance(item, Exception):
                error = _error_of(item)
                code = error.get("code") or "LA-UNKNOWN"
                status = http_status(code)
                yield _data(error_body(str(error.get("message") or code), status=status, code=code))
            elif kind == "done":
                result = item.data or {}
                if not result.get("error"):
                    yield _data(chunk(ident, chat.model, created, {}, finish="stop"))
                    if chat.include_usage:  # last, with no choices, as OpenAI sends it
                        usage = result.get("usage") or {}
                        yield _data(chunk(ident, chat.model, created, usage=usage))
            item = await queue.get()
        yield b"data: [DONE]\n\n"
        finished = True
    finally:
        watcher.cancel()
        if not finished:  # the response was torn down (client gone): stop the run
            token.cancel("the client disconnected")


async def _http_error(request: Request, exc: Exception) -> Response:
    status = getattr(exc, "status_code", 500)
    return _error(status, str(getattr(exc, "detail", "") or exc), None)


async def _server_error(request: Request, exc: Exception) -> Response:
    log.exception("request failed", exc_info=exc)
    if isinstance(exc, LightAgentError):
        return _run_error(exc.to_dict())
    return _error(500, f"the server failed: {type(exc).__name__}", "LA-UNKNOWN")


def create_app(
    agents: Mapping[str, Any],
    *,
    api_key: str | None,
    drain_timeout: float = 30.0,
    max_body_bytes: int = MAX_BODY_BYTES,
) -> Starlette:
    """The ASGI app serving ``agents`` (model name -> agent) behind the OpenAI Chat Completions API.

    ``api_key=None`` turns authentication off (``lightagent serve --no-auth``, loopback
    only); an empty key is refused with ``LA-CONFIG``. Bodies over ``max_body_bytes`` get
    413. At shutdown the app waits up to ``drain_timeout`` s for streamed runs whose
    clients went away.
    """
    if api_key is not None and (not isinstance(api_key, str) or not api_key.strip()):
        raise ConfigurationError(
            "LA-CONFIG",
            "api_key is empty: every client would be let in",
            hint="Pass the key clients must send, or api_key=None to serve without one "
            "(loopback only).",
        )
    if (
        not isinstance(max_body_bytes, int)
        or isinstance(max_body_bytes, bool)
        or max_body_bytes <= 0
    ):
        raise ConfigurationError(
            "LA-CONFIG",
            f"max_body_bytes must be a positive int, got {max_body_bytes!r}",
            hint=f"The default is {MAX_BODY_BYTES} (16 MiB).",
        )
    server = _Server(agents, api_key, max_body_bytes)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await server.drain(drain_timeout)

    app = Starlette(
        routes=[
            Route("/v1/chat/completions", server.chat, methods=["POST"]),
            Route("/v1/models", server.models, methods=["GET"]),
        ],
        lifespan=lifespan,
        exception_handlers={HTTPException: _http_error, Exception: _server_error},
    )
    app.state.lightagent = server
    return app
