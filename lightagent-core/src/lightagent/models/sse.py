"""Read Server-Sent Events from an HTTP response body, to its end.

The SDK's own stream stops reading at ``data: [DONE]`` and closes the response before
the body's last bytes arrive, so the connection can never go back to the pool; every
streamed call then pays a new TCP (and TLS) handshake. Reading on to the end of the
body, which well-behaved servers send right after ``[DONE]``, keeps the connection.

The lines come from the SDK stream's HTTP response. What its transport raises while the
body is read (a dropped connection, a read timeout) is raised again as the SDK's own
``APIConnectionError`` / ``APITimeoutError``, the original as its cause, so callers test
SDK types only and never import the transport (``httpx`` on openai 2.x, ``httpx2`` on 3.x).
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import Any

from lightagent.models.wire import loads

__all__ = ["aiter_sse_json", "aread_lines", "iter_sse_json", "read_lines"]


def _is_timeout(exc: BaseException) -> bool:
    # Both transports name their timeout base class TimeoutException; checked by name so
    # that neither is imported here.
    return isinstance(exc, TimeoutError) or any(
        k.__name__ == "TimeoutException" for k in type(exc).__mro__
    )


def _sdk_error(exc: Exception, response: Any) -> Exception:
    """``exc``, raised by the transport mid-body, as the SDK's connection or timeout error."""
    import openai

    if isinstance(exc, openai.OpenAIError):
        return exc
    request = getattr(response, "request", None)
    if _is_timeout(exc):
        return openai.APITimeoutError(request=request)  # type: ignore[arg-type]
    return openai.APIConnectionError(
        message=f"{type(exc).__name__}: {exc}",
        request=request,  # type: ignore[arg-type]
    )


def read_lines(response: Any) -> Iterator[str]:
    """The lines of ``response``'s body; transport failures become SDK exceptions."""
    try:
        yield from response.iter_lines()
    except Exception as exc:
        raise _sdk_error(exc, response) from exc


async def aread_lines(response: Any) -> AsyncIterator[str]:
    """Async form of :func:`read_lines`."""
    try:
        async for line in response.aiter_lines():
            yield line
    except Exception as exc:
        raise _sdk_error(exc, response) from exc


class _Events:
    """Line-by-line SSE parsing: ``data:`` lines joined until a blank line; comments skipped."""

    __slots__ = ("data", "done")

    def __init__(self) -> None:
        self.data: list[str] = []
        self.done = False

    def line(self, line: str) -> Any:
        if not line:
            return self.flush()
        if line.startswith("data:"):
            value = line[5:]
            self.data.append(value[1:] if value.startswith(" ") else value)
        # ``event:``, ``id:``, ``retry:`` and ``:`` comments (OpenRouter keep-alives) carry no data.
        return None

    def flush(self) -> Any:
        if not self.data:
            return None
        text = "\n".join(self.data)
        self.data = []
        if self.done:
            return None  # anything after [DONE] is drained, not delivered
        if text.startswith("[DONE]"):
            self.done = True
            return None
        return loads(text)


def iter_sse_json(lines: Iterable[str]) -> Iterator[Any]:
    """Yield each event's ``data`` decoded as JSON, reading ``lines`` to the end."""
    events = _Events()
    for line in lines:
        value = events.line(line)
        if value is not None:
            yield value
    value = events.flush()  # a body that ended without the final blank line
    if value is not None:
        yield value


async def aiter_sse_json(lines: AsyncIterable[str]) -> AsyncIterator[Any]:
    """Async form of :func:`iter_sse_json`."""
    events = _Events()
    async for line in lines:
        value = events.line(line)
        if value is not None:
            yield value
    value = events.flush()
    if value is not None:
        yield value
