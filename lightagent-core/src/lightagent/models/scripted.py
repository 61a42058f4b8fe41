"""``ScriptedModel``: a deterministic model for tests, examples and the offline demo."""

from __future__ import annotations

import itertools
import json
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from typing import Any

from lightagent.errors import ConfigurationError, ModelError
from lightagent.models.base import ModelRequest, ModelResponse, StreamItem, ToolCall, Usage

__all__ = ["ScriptedModel", "UnusedScriptError"]

Reply = str | ModelResponse | dict[str, Any] | BaseException
ReplyFn = Callable[[ModelRequest], Reply]


class UnusedScriptError(AssertionError):
    """Raised by :meth:`ScriptedModel.assert_exhausted` when replies were left unused."""


def _to_response(reply: Any, counter: Iterator[int]) -> ModelResponse:
    if isinstance(reply, ModelResponse):
        return reply
    if isinstance(reply, str):
        return ModelResponse(content=reply, finish_reason="stop")
    if isinstance(reply, dict):
        calls = []
        for index, spec in enumerate(reply.get("tool_calls") or ()):
            args = spec.get("arguments", {})
            calls.append(
                ToolCall(
                    id=spec.get("id") or f"call_scripted_{next(counter)}",
                    name=spec["name"],
                    arguments=args if isinstance(args, str) else json.dumps(args),
                    index=index,
                )
            )
        return ModelResponse(
            content=reply.get("content"),
            reasoning_content=reply.get("reasoning_content"),
            tool_calls=calls,
            finish_reason="tool_calls" if calls else reply.get("finish_reason", "stop"),
            usage=Usage.from_any(reply.get("usage")),
        )
    raise ConfigurationError(
        "LA-CONFIG",
        f"ScriptedModel cannot use a reply of type {type(reply).__name__}",
        hint="Script replies as str, dict(content=, tool_calls=[{name, arguments}]), ModelResponse or an exception.",
    )


class ScriptedModel:
    """A model that answers from a queue of scripted replies, or from a function.

    Replies may be strings, ``{"content": ..., "tool_calls": [{"name", "arguments"}]}``
    dicts, :class:`ModelResponse` objects, exceptions (raised when reached) or a callable
    ``fn(request) -> reply``. Streaming splits content into chunks in the OpenAI shape.
    Call :meth:`assert_exhausted` (the pytest fixture does it for you) to fail a test
    that leaves scripted replies unused. ``model=`` is an alias of ``name=`` so the
    agent's ``provider="scripted"`` builds one (queue replies with ``agent.model.add``).
    """

    #: The provider name tracing reports for this model.
    provider = "scripted"

    def __init__(
        self,
        replies: Iterable[Reply] | ReplyFn = (),
        *,
        name: str = "scripted",
        chunk_size: int = 8,
        default: Reply | None = None,
        model: str | None = None,
    ) -> None:
        if isinstance(replies, (str, dict, ModelResponse, BaseException)):
            replies = [replies]  # one reply, not a sequence of characters or keys
        self.name = model or name  # model= as the name: LightAgent(provider="scripted", model=...)
        self.chunk_size = max(1, chunk_size)
        self._fn: ReplyFn | None = replies if callable(replies) else None
        self._queue: deque[Reply] = deque() if callable(replies) else deque(replies)
        self._default = default
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self.requests: list[ModelRequest] = []

    def add(self, *replies: Reply) -> ScriptedModel:
        """Queue more replies; returns self for chaining."""
        with self._lock:
            self._queue.extend(replies)
        return self

    @property
    def remaining(self) -> int:
        """How many queued replies are still unused."""
        return len(self._queue)

    def assert_exhausted(self) -> None:
        """Fail when queued replies were never requested."""
        if self._queue:
            raise UnusedScriptError(
                f"ScriptedModel {self.name!r} has {len(self._queue)} unused replies: "
                f"{list(self._queue)[:3]!r}"
            )

    def _next(self, request: ModelRequest) -> ModelResponse:
        with self._lock:
            self.requests.append(request)
            if self._fn is not None:
                reply: Any = self._fn(request)
            elif self._queue:
                reply = self._queue.popleft()
            elif self._default is not None:
                reply = self._default
            else:
                raise ModelError(
                    "LA-PROVIDER",
                    f"ScriptedModel {self.name!r} ran out of replies after {len(self.requests) - 1}",
                    hint="Queue one reply per model call the test makes.",
                )
        if isinstance(reply, BaseException):
            raise reply
        return _to_response(reply, self._ids)

    def complete(self, request: ModelRequest) -> ModelResponse:
        """Answer with the next scripted reply."""
        return self._next(request)

    async def acomplete(self, request: ModelRequest) -> ModelResponse:
        """Answer with the next scripted reply."""
        return self._next(request)

    def stream(self, request: ModelRequest) -> Iterator[StreamItem]:
        """Yield the next reply as OpenAI chunks, then the assembled response."""
        response = self._next(request)
        yield from self._chunks(response)
        yield response

    async def astream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        """Async form of :meth:`stream`."""
        for item in self.stream(request):
            yield item

    def _chunks(self, response: ModelResponse) -> Iterator[dict[str, Any]]:
        from lightagent.models.adapt import response_chunks

        return response_chunks(
            response,
            model=self.name,
            chunk_id=f"chatcmpl-scripted-{next(self._ids)}",
            size=self.chunk_size,
        )
