"""Prompt death detection on streamable HTTP: a response stream cut mid-body makes us ask.

A streamable-HTTP server that gives its events ids lets the SDK resume a cut stream: it waits
the server's retry hint (1 s unless the server says otherwise) before each of its two
attempts, and only then gives the call up. A dead server cannot be resumed. So when a
response stream breaks, one request (``HEAD`` on the server's URL, through the same HTTP
client) tells a dead server from a cut connection: a refused connection fails the calls in
flight at once; any answer leaves the resumption to the SDK.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

__all__ = ["cut_watching_transport", "reachable"]


def cut_watching_transport(on_cut: Callable[[], None]) -> Any:
    """An ``httpx2`` transport (the default one) that calls ``on_cut()`` when a response body
    breaks off (the peer closed the connection, or it failed mid-read)."""
    import httpx2

    class Stream(httpx2.AsyncByteStream):
        def __init__(self, inner: Any) -> None:
            self._inner = inner

        async def __aiter__(self) -> AsyncIterator[bytes]:
            try:
                async for chunk in self._inner:
                    yield chunk
            except httpx2.TransportError:
                on_cut()
                raise

        async def aclose(self) -> None:
            await self._inner.aclose()

    class Transport(httpx2.AsyncBaseTransport):
        def __init__(self) -> None:
            self._inner = httpx2.AsyncHTTPTransport()

        async def handle_async_request(self, request: Any) -> Any:
            response = await self._inner.handle_async_request(request)
            response.stream = Stream(response.stream)
            return response

        async def aclose(self) -> None:
            await self._inner.aclose()

    return Transport()


async def reachable(http: Any, url: str, timeout: float) -> bool | None:
    """Whether the server at ``url`` answers at all: False when the connection is refused,
    None when that cannot be told within ``timeout`` seconds."""
    import httpx2

    try:
        response = await http.request("HEAD", url, timeout=timeout)
        await response.aclose()
    except httpx2.ConnectError:
        return False
    except httpx2.HTTPError:
        return None
    return True
