"""The ``openai`` SDK clients behind :class:`OpenAIModel`: keys, lazy creation, reuse.

Kept apart so the model module holds only the request/response logic. Nothing here
imports ``openai`` until a client is first needed, and nothing here imports the SDK's
HTTP transport (``httpx`` on openai 1.x/2.x, ``httpx2`` on 3.x): timeouts are the SDK's
own ``openai.Timeout`` type.
"""

from __future__ import annotations

import asyncio
import os
import threading
import weakref
from typing import Any

from lightagent.errors import ModelError
from lightagent.models.profiles import ProviderProfile, is_local_url

__all__ = ["ClientMixin", "env", "plain"]

_NO_KEY = "not-needed"  # the SDK insists on a key; local servers ignore it

#: Requests one async SDK client carries at once before another client takes the next.
#: The SDK's connection pool scans every connection it holds for each request it sends,
#: and keeps at most 100 idle ones (more are closed and reopened): with hundreds of runs
#: in flight one client spends more CPU in its pool than on the requests. Several small
#: pools per event loop keep each scan short and every connection reused.
REQUESTS_PER_CLIENT = 50


class _Shards:
    """The async clients of one event loop, each carrying at most ``per_client`` requests."""

    __slots__ = ("clients", "load", "make", "per_client")

    def __init__(self, make: Any, per_client: int) -> None:
        self.make = make
        self.per_client = per_client
        self.clients: list[Any] = []
        self.load: list[int] = []

    def first(self) -> Any:
        if not self.clients:
            self.clients.append(self.make())
            self.load.append(0)
        return self.clients[0]

    def acquire(self) -> int:
        """The slot of the first client with room, creating one when all are full."""
        load = self.load
        for slot, count in enumerate(load):
            if count < self.per_client:
                load[slot] = count + 1
                return slot
        self.clients.append(self.make())
        load.append(1)
        return len(load) - 1

    def release(self, slot: int) -> None:
        self.load[slot] -= 1


def env(*names: str) -> str | None:
    """The first of these environment variables that is set and not empty."""
    for name in names:
        value = os.environ.get(name)
        if value:
            return value
    return None


def plain(value: Any) -> Any:
    """SDK objects, namespaces and dicts from an injected client, as plain dicts and lists."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(exclude_unset=False)
    if hasattr(value, "__dict__"):
        return {k: plain(v) for k, v in vars(value).items() if not k.startswith("_")}
    return value


class ClientMixin:
    """Lazily created, reused sync/async SDK clients (the async one per event loop)."""

    name: str
    profile: ProviderProfile
    base_url: str | None
    timeout: float
    default_headers: dict[str, Any]
    _api_key: str | None
    _client: Any
    _async_client: Any

    def _init_clients(self, client: Any, async_client: Any) -> None:
        self._client = client
        self._async_client = async_client
        self._async_clients: weakref.WeakKeyDictionary[Any, _Shards] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()
        self._quiet: dict[int, tuple[Any, Any]] = {}

    def _resolve_key(self) -> str:
        key = self._api_key or env(
            "LIGHTAGENT_API_KEY", *self.profile.api_key_env, "OPENAI_API_KEY"
        )
        if key:
            return key
        if not self.profile.requires_api_key or is_local_url(self.base_url):
            return _NO_KEY
        from lightagent.redaction import redact_text

        where = redact_text(self.base_url or "https://api.openai.com/v1")  # an error is shown
        names = ", ".join((*self.profile.api_key_env, "OPENAI_API_KEY"))
        raise ModelError(
            "LA-401",
            f"no API key for the model endpoint {where}",
            hint=f"Set {names} or LIGHTAGENT_API_KEY, or pass api_key=; local servers need none.",
            details={"status_code": None, "attempts": 0, "base_url": where, "model": self.name},
        )

    def _client_kwargs(self) -> dict[str, Any]:
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
            "timeout": openai.Timeout(self.timeout, connect=min(self.timeout, 10.0)),
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

    def _shards(self) -> _Shards:
        loop = asyncio.get_running_loop()
        shards = self._async_clients.get(loop)
        if shards is None:
            import openai

            kwargs = self._client_kwargs()
            shards = _Shards(lambda: openai.AsyncOpenAI(**kwargs), REQUESTS_PER_CLIENT)
            self._async_clients[loop] = shards
        return shards

    @property
    def async_client(self) -> Any:
        """The async client for the running event loop (created on first use, reused).

        Requests made through this model spread over more clients of the same loop when
        more than ``REQUESTS_PER_CLIENT`` are in flight; this is the first of them.
        """
        if self._async_client is not None:
            return self._async_client
        return self._shards().first()

    @async_client.setter
    def async_client(self, value: Any) -> None:
        self._async_client = value

    def _lease(self) -> tuple[Any, _Shards | None, int]:
        """An async client for one request, its shards and slot (give it back with ``_unlease``)."""
        if self._async_client is not None:
            return self._no_sdk_retries(self._async_client), None, -1
        shards = self._shards()
        slot = shards.acquire()
        return shards.clients[slot], shards, slot

    @staticmethod
    def _unlease(shards: _Shards | None, slot: int) -> None:
        if shards is not None:
            shards.release(slot)

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
        """Close the async clients of the running event loop, if any were created."""
        shards = self._async_clients.pop(asyncio.get_running_loop(), None)
        if shards is not None:
            for client in shards.clients:
                await client.close()
