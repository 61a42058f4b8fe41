"""``OpenAIModel``: any OpenAI-compatible Chat Completions endpoint, through the ``openai`` SDK.

The SDK is imported on the first call, and its sync and async clients are created
once and reused (the async one per event loop). SDK retries are off: this class
retries 408/409/429/5xx, timeouts and lost connections itself, honouring
``Retry-After`` up to ``max_retry_wait``, and maps every failure to a
:class:`ModelError`. Responses are read as plain dicts (no per-call model
validation) and normalized by the provider profile's quirk rules.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any, cast

from lightagent.errors import ConfigurationError, LightAgentError, ModelError
from lightagent.models.base import ModelRequest, ModelResponse, StreamItem
from lightagent.models.clients import ClientMixin, env, plain
from lightagent.models.parse import parse_completion, tool_names
from lightagent.models.profiles import ProviderProfile, get_profile, profile_by_name
from lightagent.models.retry import backoff_delay, is_retryable, to_model_error
from lightagent.models.sse import aiter_sse_json, aread_lines, iter_sse_json, read_lines
from lightagent.models.stream import StreamAssembler
from lightagent.models.wire import body_kwargs, read_json

__all__ = ["DEFAULT_MODEL", "OpenAIModel"]

DEFAULT_MODEL = "gpt-4o-mini"


def _is_transport(exc: BaseException) -> bool:
    import openai

    return isinstance(exc, openai.APIConnectionError)  # APITimeoutError included


class OpenAIModel(ClientMixin):
    """A chat model behind an OpenAI-compatible ``/chat/completions`` endpoint.

    ``model``, ``base_url`` and ``api_key`` fall back to ``LIGHTAGENT_MODEL``,
    ``LIGHTAGENT_BASE_URL``/``OPENAI_BASE_URL`` and ``LIGHTAGENT_API_KEY``, the
    profile's own key variable (e.g. ``DEEPSEEK_API_KEY``), then ``OPENAI_API_KEY``.
    Local servers need no key; elsewhere a missing key fails the first call with
    ``LA-401``. ``profile`` is a :class:`ProviderProfile` or its name; by default it is
    chosen from ``base_url`` and the model name. ``max_retry`` counts retries after
    the first attempt. ``options`` are default body parameters (e.g. temperature).
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        profile: ProviderProfile | str | None = None,
        client: Any = None,
        async_client: Any = None,
        timeout: float = 60.0,
        max_retry: int = 3,
        max_retry_wait: float = 30.0,
        default_headers: dict[str, Any] | None = None,
        retry_backoff: float = 0.5,
        options: dict[str, Any] | None = None,
    ) -> None:
        if timeout is None or timeout <= 0:
            raise ConfigurationError("LA-CONFIG", f"timeout must be > 0 seconds, got {timeout!r}")
        if max_retry < 0 or max_retry_wait < 0 or retry_backoff < 0:
            raise ConfigurationError(
                "LA-CONFIG", "max_retry, max_retry_wait and retry_backoff must be >= 0"
            )
        self.name: str = model or env("LIGHTAGENT_MODEL") or DEFAULT_MODEL
        base = base_url or env("LIGHTAGENT_BASE_URL", "OPENAI_BASE_URL")
        self.profile: ProviderProfile = (
            profile_by_name(profile)
            if profile is not None
            else get_profile(self.name, base_url=base)
        )
        if base is None and self.profile.name != "openai":
            base = self.profile.default_base_url
        self.base_url: str | None = base
        self.timeout = float(timeout)
        self.max_retry = int(max_retry)
        self.max_retry_wait = float(max_retry_wait)
        self.retry_backoff = float(retry_backoff)
        self.default_headers = dict(default_headers or {})
        self.options: dict[str, Any] = dict(options or {})
        self._api_key = api_key
        self._init_clients(client, async_client)
        self._names_cache: tuple[Any, frozenset[str]] = (None, frozenset())
        self._route: tuple[Any, Any, Any] = (None, None, None)

    def __repr__(self) -> str:
        from lightagent.redaction import redact_text

        base = redact_text(self.base_url) if self.base_url else None  # user:KEY@, ?api-key=
        return f"OpenAIModel({self.name!r}, base_url={base!r}, profile={self.profile.name!r})"

    # -- request building ------------------------------------------------------------
    def _names(self, request: ModelRequest) -> frozenset[str]:
        tools = request.tools
        if not tools or not self.profile.text_tool_calls:
            return frozenset()
        cached_tools, names = self._names_cache
        if cached_tools is not tools:
            names = tool_names(tools)
            self._names_cache = (tools, names)
        return names

    def build_body(self, request: ModelRequest, *, stream: bool = False) -> dict[str, Any]:
        """The JSON body sent for ``request`` (profile rules applied to the history)."""
        body: dict[str, Any] = {
            "model": self.name,
            "messages": self.profile.prepare_messages(request.messages),
        }
        if request.tools:
            body["tools"] = request.tools
        if request.tool_choice is not None:
            body["tool_choice"] = request.tool_choice
        if request.response_format is not None:
            body["response_format"] = request.response_format
        if self.options:
            body.update(self.options)
        if request.options:
            body.update(request.options)
        if stream:
            body["stream"] = True
            if self.profile.supports_stream_usage and "stream_options" not in body:
                body["stream_options"] = {"include_usage": True}
        else:
            body.pop("stream", None)
            body.pop("stream_options", None)
        return body

    def _fail(self, exc: BaseException, attempt: int) -> ModelError:
        if isinstance(exc, ModelError):
            exc.details.setdefault("attempts", attempt)
            return exc
        if isinstance(exc, LightAgentError):
            raise exc
        return to_model_error(exc, attempts=attempt, model=self.name)

    def _should_retry(self, error: ModelError, attempt: int) -> bool:
        return attempt <= self.max_retry and is_retryable(error)

    def _delay(self, error: ModelError, attempt: int) -> float:
        return backoff_delay(error, attempt, base=self.retry_backoff, max_wait=self.max_retry_wait)

    def _retry_wait(self, exc: Exception, attempt: int) -> float:
        """The wait before the next attempt after ``exc`` failed attempt ``attempt``;
        raises ``exc`` as a :class:`ModelError` when it is not retried."""
        error = self._fail(exc, attempt)
        if not self._should_retry(error, attempt):
            raise error from exc
        return self._delay(error, attempt)

    def _injected(self) -> bool:
        """Whether the only client is a caller's non-SDK double: async calls then go
        through it (``acomplete`` calls it as ``complete`` does; see ``_injected_astream``)."""
        import openai

        return (
            self._async_client is None
            and self._client is not None
            and not isinstance(self._client, openai.OpenAI)
        )

    def _finish(self, response: ModelResponse, attempt: int, start: float) -> ModelResponse:
        response.attempts = attempt
        response.latency_ms = (time.perf_counter() - start) * 1000.0
        return response

    # -- non-streamed ----------------------------------------------------------------
    def _sender(self) -> tuple[Any, Any]:
        """The sync client as used (SDK retries off) and its ``post`` when it is the SDK's
        ``OpenAI`` (else None), worked out again only when the client changes."""
        given = self.client
        route = self._route
        if route[0] is not given:
            import openai

            client = self._no_sdk_retries(given)
            post = client.post if isinstance(client, openai.OpenAI) else None
            route = self._route = (given, client, post)
        return route[1], route[2]

    def complete(self, request: ModelRequest) -> ModelResponse:
        """One chat completion, retried on transient failures."""
        start = time.perf_counter()
        body = self.build_body(request)
        client, post = self._sender()
        sent = body_kwargs(client, body) if post is not None else {}
        attempt = 0
        while True:
            attempt += 1
            try:
                if post is not None:
                    data = read_json(post("/chat/completions", cast_to=bytes, **sent))
                else:
                    data = plain(client.chat.completions.create(**body))
                break
            except Exception as exc:
                time.sleep(self._retry_wait(exc, attempt))
        response = parse_completion(data, self.profile, self._names(request))
        return self._finish(response, attempt, start)

    async def acomplete(self, request: ModelRequest) -> ModelResponse:
        """One chat completion on the event loop, retried on transient failures."""
        import openai

        injected = self._injected()
        start = time.perf_counter()
        body = self.build_body(request)
        sent: dict[str, Any] | None = None
        attempt = 0
        while True:
            attempt += 1
            client, shards, slot = (self._client, None, -1) if injected else self._lease()
            try:
                if isinstance(client, openai.AsyncOpenAI):
                    if sent is None:
                        sent = body_kwargs(client, body)
                    raw = await client.post("/chat/completions", cast_to=bytes, **sent)
                    data = cast("dict[str, Any]", read_json(raw))
                else:  # a caller's double: its create may answer directly or be awaited
                    result = client.chat.completions.create(**body)
                    data = plain(await result if inspect.isawaitable(result) else result)
                break
            except Exception as exc:
                delay = self._retry_wait(exc, attempt)
            finally:
                self._unlease(shards, slot)
            await asyncio.sleep(delay)
        response = parse_completion(data, self.profile, self._names(request))
        return self._finish(response, attempt, start)

    # -- streamed --------------------------------------------------------------------
    def _open(self, client: Any, body: dict[str, Any]) -> Any:
        """Open the streamed call on ``client`` (what an async client returns is awaited
        by the caller)."""
        import openai

        stream_cls: Any
        if isinstance(client, openai.OpenAI):
            stream_cls = openai.Stream[object]
        elif isinstance(client, openai.AsyncOpenAI):
            stream_cls = openai.AsyncStream[object]
        else:
            return client.chat.completions.create(**body)
        return client.post(
            "/chat/completions",
            cast_to=object,
            stream=True,
            stream_cls=stream_cls,
            **body_kwargs(client, body),
        )

    def stream(self, request: ModelRequest) -> Iterator[StreamItem]:
        """Yield normalized OpenAI chunk dicts, then one assembled :class:`ModelResponse`."""
        start = time.perf_counter()
        body = self.build_body(request, stream=True)
        names = self._names(request)
        client = self._no_sdk_retries(self.client)
        attempt = 0
        while True:
            attempt += 1
            assembler = StreamAssembler(self.profile, names)
            try:
                raw = self._open(client, body)
                response = getattr(raw, "response", None)  # the SDK stream's HTTP response
                source = iter_sse_json(read_lines(response)) if response is not None else raw
                try:
                    for chunk in source:
                        yield from assembler.feed(chunk)
                finally:
                    closer = getattr(raw, "close", None)
                    if closer is not None:
                        closer()
                break
            except ModelError:
                raise
            except Exception as exc:
                delay = self._stream_wait(exc, assembler, attempt)
                if delay is None:
                    break  # the answer was complete; only the drain after [DONE] failed
                time.sleep(delay)
        yield self._finish(assembler.close(), attempt, start)

    async def astream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        """Async form of :meth:`stream`."""
        if self._injected():
            async for item in self._injected_astream(request):
                yield item
            return
        start = time.perf_counter()
        body = self.build_body(request, stream=True)
        names = self._names(request)
        attempt = 0
        while True:
            attempt += 1
            assembler = StreamAssembler(self.profile, names)
            client, shards, slot = self._lease()
            try:
                raw = await self._open(client, body)
                response = getattr(raw, "response", None)
                source = aiter_sse_json(aread_lines(response)) if response is not None else raw
                try:
                    async for chunk in source:
                        for item in assembler.feed(chunk):
                            yield item
                finally:
                    closer = getattr(raw, "close", None)
                    if closer is not None:
                        await closer()
                break
            except ModelError:
                raise
            except Exception as exc:
                delay = self._stream_wait(exc, assembler, attempt)
                if delay is None:
                    break  # the answer was complete; only the drain after [DONE] failed
            finally:
                self._unlease(shards, slot)
            await asyncio.sleep(delay)
        yield self._finish(assembler.close(), attempt, start)

    async def _injected_astream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        # A test double injected as ``client``: iterate it off the event loop.
        iterator = self.stream(request)
        sentinel = object()
        while True:
            item = await asyncio.to_thread(next, iterator, sentinel)
            if item is sentinel:
                return
            yield cast(StreamItem, item)

    def _stream_wait(
        self, exc: Exception, assembler: StreamAssembler, attempt: int
    ) -> float | None:
        """What a failed stream attempt leads to: None when the answer was already
        complete (only the drain after ``[DONE]`` failed), else the wait before the next
        attempt; raises the :class:`ModelError` when it is not retried (a stream that
        already delivered chunks never is)."""
        if assembler.response is not None and _is_transport(exc):
            return None
        error = self._stream_error(exc, assembler, attempt)
        if assembler.chunks or not self._should_retry(error, attempt):
            raise error from exc
        return self._delay(error, attempt)

    def _stream_error(
        self, exc: BaseException, assembler: StreamAssembler, attempt: int
    ) -> ModelError:
        if assembler.chunks and _is_transport(exc):
            # The connection dropped or stalled mid-answer; name what the transport said.
            error = assembler.truncated(exc.__cause__ or exc)
            error.details["attempts"] = attempt
            return error
        if assembler.chunks and isinstance(exc, ValueError):
            return ModelError(
                "LA-MODEL-OUTPUT",
                f"the model stream sent data that is not JSON: {exc}",
                details={"attempts": attempt, **assembler._partial()},
            )
        error = self._fail(exc, attempt)
        if assembler.chunks:
            error.details.update(assembler._partial())
        return error
