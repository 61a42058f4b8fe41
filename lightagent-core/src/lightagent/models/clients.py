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
    default_headers: dict[str, str]
    _api_key: str | None
    _client: Any
    _async_client: Any

    def _init_clients(self, client: Any, async_client: Any) -> None:
        self._client = client
        self._async_client = async_client
        self._async_clients: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
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
        where = self.base_url or "https://api.openai.com/v1"
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
