"""What a model provider must write, and the kernel's adaptation of the rest.

A provider really needs ``name`` and one way to answer: ``acomplete`` (async) or
``complete`` (sync). ``stream`` and ``astream`` are optional. :func:`as_model` gives the
loop an object with all four: a provider that has them all is used as it is (no
wrapper, no cost); otherwise :class:`ModelAdapter` fills the gaps:

* ``complete`` from ``acomplete`` on the background loop (:func:`lightagent.bridge.run_sync`:
  the provider's async client lives on across calls), ``acomplete`` from ``complete`` in a
  worker thread;
* a missing stream from the other stream form, else from the complete answer, sent as
  OpenAI ``chat.completion.chunk`` dicts (:func:`response_chunks`) and then the answer.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Iterator
from typing import Any

from lightagent.models.base import ModelRequest, ModelResponse, StreamItem

__all__ = ["REQUIRED", "ModelAdapter", "as_model", "is_model", "response_chunks"]

#: A model has ``name`` and at least one of these.
REQUIRED = ("acomplete", "complete")
_ALL = ("complete", "acomplete", "stream", "astream")
_ids = itertools.count(1)


def is_model(obj: Any) -> bool:
    """Whether ``obj`` can serve as a model (it has ``complete`` or ``acomplete``)."""
    return any(callable(getattr(obj, attr, None)) for attr in REQUIRED)


def as_model(obj: Any) -> Any:
    """``obj`` when it has all four methods, else a :class:`ModelAdapter` around it."""
    if all(callable(getattr(obj, attr, None)) for attr in _ALL):
        return obj
    return ModelAdapter(obj)


def response_chunks(
    response: ModelResponse, *, model: str = "", chunk_id: str | None = None, size: int = 16
) -> Iterator[dict[str, Any]]:
    """``response`` as the OpenAI chunk dicts a stream of it would have sent."""
    chunk_id = chunk_id or f"chatcmpl-lightagent-{next(_ids)}"

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": chunk_id,
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    yield chunk({"role": "assistant", "content": ""})
    for text, key in (
        (response.reasoning_content, "reasoning_content"),
        (response.content, "content"),
    ):
        for start in range(0, len(text or ""), size):
            yield chunk({key: text[start : start + size]})  # type: ignore[index]
    for call in response.tool_calls:
        yield chunk(
            {
                "tool_calls": [
                    {
                        "index": call.index,
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": call.arguments},
                    }
                ]
            }
        )
    final = chunk({}, response.finish_reason or "stop")
    if response.usage is not None:
        final["usage"] = response.usage.to_dict()
    yield final


class ModelAdapter:
    """A provider's model with the methods it lacks supplied by the kernel.

    Every other attribute (``client``, ``profile`` …) is the provider's own.
    """

    def __init__(self, model: Any) -> None:
        if not is_model(model):
            from lightagent.errors import ConfigurationError

            raise ConfigurationError(
                "LA-CONFIG",
                f"a model needs complete() or acomplete(), got {type(model).__name__}",
                hint="Give the provider an async acomplete(request) -> ModelResponse (docs/plugins.md).",
            )
        self.model = model
        self.name = str(getattr(model, "name", None) or type(model).__name__)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.__dict__["model"], attr)

    @property
    def client(self) -> Any:
        """The provider's client, when it has one (settable, as on the provider)."""
        return getattr(self.model, "client", None)

    @client.setter
    def client(self, value: Any) -> None:
        self.model.client = value

    def _has(self, attr: str) -> bool:
        return callable(getattr(self.model, attr, None))

    def complete(self, request: ModelRequest) -> ModelResponse:
        """The provider's ``complete``, or its ``acomplete`` on the background loop."""
        if self._has("complete"):
            return self.model.complete(request)  # type: ignore[no-any-return]
        from lightagent.bridge import run_sync

        return run_sync(self.model.acomplete(request))  # type: ignore[no-any-return]

    async def acomplete(self, request: ModelRequest) -> ModelResponse:
        """The provider's ``acomplete``, or its ``complete`` in a worker thread."""
        if self._has("acomplete"):
            return await self.model.acomplete(request)  # type: ignore[no-any-return]
        return await asyncio.to_thread(self.model.complete, request)

    def stream(self, request: ModelRequest) -> Iterator[StreamItem]:
        """The provider's ``stream``, its ``astream`` on the background loop, or the answer as chunks."""
        if self._has("stream"):
            yield from self.model.stream(request)
            return
        if self._has("astream"):
            from lightagent.bridge import run_sync

            items = self.model.astream(request)
            while (item := run_sync(_next(items))) is not _DONE:
                yield item
            return
        response = self.complete(request)
        yield from response_chunks(response, model=self.name)
        yield response

    async def astream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        """The provider's ``astream``, its ``stream`` read in a worker thread, or the answer as chunks."""
        if self._has("astream"):
            async for item in self.model.astream(request):
                yield item
            return
        if self._has("stream"):
            items = iter(self.model.stream(request))
            done = object()
            while (item := await asyncio.to_thread(next, items, done)) is not done:
                yield item
            return
        response = await self.acomplete(request)
        for chunk in response_chunks(response, model=self.name):
            yield chunk
        yield response

    def __repr__(self) -> str:
        return f"ModelAdapter({self.model!r})"


_DONE = object()


async def _next(items: Any) -> Any:
    try:
        return await items.__anext__()
    except StopAsyncIteration:
        return _DONE
