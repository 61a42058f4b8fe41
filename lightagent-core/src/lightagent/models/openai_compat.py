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
import os
import threading
import time
import weakref
from collections.abc import AsyncIterator, Iterator
from typing import Any

from lightagent.errors import ConfigurationError, LightAgentError, ModelError
from lightagent.models.base import ModelRequest, ModelResponse, StreamItem
from lightagent.models.parse import parse_completion, tool_names
from lightagent.models.profiles import ProviderProfile, get_profile, is_local_url, profile_by_name
from lightagent.models.retry import backoff_delay, is_retryable, to_model_error
from lightagent.models.stream import StreamAssembler

__all__ = ["DEFAULT_MODEL", "OpenAIModel"]

DEFAULT_MODEL = "gpt-4o-mini"
_NO_KEY = "not-needed"  # the SDK insists on a key; local servers ignore it


def _env(*names: str) -> str | None:
    for name in names:
        value = os.environ.get(name)
        if value:
            return value
    return None


def _plain(value: Any) -> Any:
    """SDK objects, namespaces and dicts from an injected client, as plain dicts and lists."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(exclude_unset=False)
    if hasattr(value, "__dict__"):
        return {k: _plain(v) for k, v in vars(value).items() if not k.startswith("_")}
    return value


class OpenAIModel:
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
        default_headers: dict[str, str] | None = None,
        retry_backoff: float = 0.5,
        options: dict[str, Any] | None = None,
    ) -> None:
        if timeout is None or timeout <= 0:
            raise ConfigurationError("LA-CONFIG", f"timeout must be > 0 seconds, got {timeout!r}")
        if max_retry < 0 or max_retry_wait < 0 or retry_backoff < 0:
            raise ConfigurationError(
                "LA-CONFIG", "max_retry, max_retry_wait and retry_backoff must be >= 0"
            )
        self.name: str = model or _env("LIGHTAGENT_MODEL") or DEFAULT_MODEL
        base = base_url or _env("LIGHTAGENT_BASE_URL", "OPENAI_BASE_URL")
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
        self._client = client
        self._async_client = async_client
        self._async_clients: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()
        self._names_cache: tuple[Any, frozenset[str]] = (None, frozenset())
        self._quiet: dict[int, tuple[Any, Any]] = {}

    def __repr__(self) -> str:
        return (
            f"OpenAIModel({self.name!r}, base_url={self.base_url!r}, profile={self.profile.name!r})"
        )

    # -- clients ---------------------------------------------------------------------
    def _resolve_key(self) -> str:
        key = self._api_key or _env(
            "LIGHTAGENT_API_KEY", *self.profile.api_key_env, "OPENAI_API_KEY"
        )
        if key:
            return key
        if not self.profile.requires_api_key or is_local_url(self.base_url):
            return _NO_KEY
        where = self.base_url or "https://api.openai.com/v1"
        env = ", ".join((*self.profile.api_key_env, "OPENAI_API_KEY"))
        raise ModelError(
            "LA-401",
            f"no API key for the model endpoint {where}",
            hint=f"Set {env} or LIGHTAGENT_API_KEY, or pass api_key=; local servers need none.",
            details={"status_code": None, "attempts": 0, "base_url": where, "model": self.name},
        )

    def _client_kwargs(self) -> dict[str, Any]:
        import httpx
        import openai

        given = self._client
        if isinstance(given, openai.OpenAI):
            # The async twin of a caller-supplied sync client talks to the same endpoint.
            return {
                "api_key": given.api_key,
                "base_url": given.base_url,
                "timeout": given.timeout,
                "max_retries": 0,
                "default_headers": self.default_headers or None,
                "organization": given.organization,
                "project": given.project,
            }
        return {
            "api_key": self._resolve_key(),
            "base_url": self.base_url,
            "timeout": httpx.Timeout(self.timeout, connect=min(self.timeout, 10.0)),
            "max_retries": 0,
            "default_headers": self.default_headers or None,
        }

    @property
    def client(self) -> Any:
        """The sync client (an ``openai.OpenAI``, created on first use); settable to inject one."""
        if self._client is None:
            with self._lock:
                if self._client is None:
                    import openai

                    self._client = openai.OpenAI(**self._client_kwargs())
        return self._client

    @client.setter
    def client(self, value: Any) -> None:
        self._client = value

    @property
    def async_client(self) -> Any:
        """The async client for the running event loop (one per loop, reused)."""
        if self._async_client is not None:
            return self._async_client
        loop = asyncio.get_running_loop()
        client = self._async_clients.get(loop)
        if client is None:
            import openai

            client = openai.AsyncOpenAI(**self._client_kwargs())
            self._async_clients[loop] = client
        return client

    @async_client.setter
    def async_client(self, value: Any) -> None:
        self._async_client = value

    def _no_sdk_retries(self, client: Any) -> Any:
        # A caller-supplied SDK client may retry on its own; retries are ours alone.
        if getattr(client, "max_retries", 0) and hasattr(client, "with_options"):
            cached = self._quiet.get(id(client))
            if cached is None or cached[0] is not client:
                cached = (client, client.with_options(max_retries=0))
                self._quiet[id(client)] = cached
            return cached[1]
        return client

    def close(self) -> None:
        """Close the sync client's connections."""
        client = self._client
        if client is not None and hasattr(client, "close"):
            client.close()

    async def aclose(self) -> None:
        """Close the async client of the running event loop, if one was created."""
        client = self._async_clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.close()

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

    def _finish(self, response: ModelResponse, attempt: int, start: float) -> ModelResponse:
        response.attempts = attempt
        response.latency_ms = (time.perf_counter() - start) * 1000.0
        return response

    # -- non-streamed ----------------------------------------------------------------
    def _send(self, client: Any, body: dict[str, Any]) -> Any:
        import openai

        if isinstance(client, openai.OpenAI):
            return client.post("/chat/completions", body=body, cast_to=object)
        return _plain(client.chat.completions.create(**body))

    def complete(self, request: ModelRequest) -> ModelResponse:
        """One chat completion, retried on transient failures."""
        start = time.perf_counter()
        body = self.build_body(request)
        client = self._no_sdk_retries(self.client)
        attempt = 0
        while True:
            attempt += 1
            try:
                data = self._send(client, body)
                break
            except Exception as exc:
                error = self._fail(exc, attempt)
                if not self._should_retry(error, attempt):
                    raise error from exc
                time.sleep(self._delay(error, attempt))
        response = parse_completion(data, self.profile, self._names(request))
        return self._finish(response, attempt, start)

    async def acomplete(self, request: ModelRequest) -> ModelResponse:
        """One chat completion on the event loop, retried on transient failures."""
        import openai

        if (
            self._async_client is None
            and self._client is not None
            and not isinstance(self._client, openai.OpenAI)
        ):
            return await self._injected_acomplete(request)
        start = time.perf_counter()
        body = self.build_body(request)
        client = self._no_sdk_retries(self.async_client)
        attempt = 0
        while True:
            attempt += 1
            try:
                if isinstance(client, openai.AsyncOpenAI):
                    data = await client.post("/chat/completions", body=body, cast_to=object)
                else:
                    data = _plain(await client.chat.completions.create(**body))
                break
            except Exception as exc:
                error = self._fail(exc, attempt)
                if not self._should_retry(error, attempt):
                    raise error from exc
                await asyncio.sleep(self._delay(error, attempt))
        response = parse_completion(data, self.profile, self._names(request))
        return self._finish(response, attempt, start)

    async def _injected_acomplete(self, request: ModelRequest) -> ModelResponse:
        result = self._client.chat.completions.create(**self.build_body(request))
        if asyncio.iscoroutine(result) or hasattr(result, "__await__"):
            start = time.perf_counter()
            data = _plain(await result)
            return self._finish(
                parse_completion(data, self.profile, self._names(request)), 1, start
            )
        start = time.perf_counter()
        data = _plain(result)
        return self._finish(parse_completion(data, self.profile, self._names(request)), 1, start)

    # -- streamed --------------------------------------------------------------------
    def _open(self, client: Any, body: dict[str, Any]) -> Any:
        import openai

        if isinstance(client, openai.OpenAI):
            return client.post(
                "/chat/completions",
                body=body,
                cast_to=object,
                stream=True,
                stream_cls=openai.Stream[object],
            )
        return client.chat.completions.create(**body)

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
                try:
                    for chunk in raw:
                        if not isinstance(chunk, dict):
                            chunk = _plain(chunk)
                        yield from assembler.feed(chunk)
                finally:
                    closer = getattr(raw, "close", None)
                    if closer is not None:
                        closer()
                break
            except ModelError:
                raise
            except Exception as exc:
                error = self._stream_error(exc, assembler, attempt)
                if assembler.chunks or not self._should_retry(error, attempt):
                    raise error from exc
                time.sleep(self._delay(error, attempt))
        yield self._finish(assembler.close(), attempt, start)

    async def astream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        """Async form of :meth:`stream`."""
        import openai

        if (
            self._async_client is None
            and self._client is not None
            and not isinstance(self._client, openai.OpenAI)
        ):
            async for item in self._injected_astream(request):
                yield item
            return
        start = time.perf_counter()
        body = self.build_body(request, stream=True)
        names = self._names(request)
        client = self._no_sdk_retries(self.async_client)
        attempt = 0
        while True:
            attempt += 1
            assembler = StreamAssembler(self.profile, names)
            try:
                if isinstance(client, openai.AsyncOpenAI):
                    raw = await client.post(
                        "/chat/completions",
                        body=body,
                        cast_to=object,
                        stream=True,
                        stream_cls=openai.AsyncStream[object],
                    )
                else:
                    raw = await client.chat.completions.create(**body)
                try:
                    async for chunk in raw:
                        if not isinstance(chunk, dict):
                            chunk = _plain(chunk)
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
                error = self._stream_error(exc, assembler, attempt)
                if assembler.chunks or not self._should_retry(error, attempt):
                    raise error from exc
                await asyncio.sleep(self._delay(error, attempt))
        yield self._finish(assembler.close(), attempt, start)

    async def _injected_astream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        # A test double injected as ``client``: iterate it off the event loop.
        iterator = self.stream(request)
        sentinel = object()
        while True:
            item = await asyncio.to_thread(next, iterator, sentinel)
            if item is sentinel:
                return
            yield item

    def _stream_error(
        self, exc: BaseException, assembler: StreamAssembler, attempt: int
    ) -> ModelError:
        import httpx
        import openai

        if assembler.chunks and isinstance(exc, (httpx.TransportError, openai.APIConnectionError)):
            error = assembler.truncated(exc)  # the connection dropped or stalled mid-answer
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
