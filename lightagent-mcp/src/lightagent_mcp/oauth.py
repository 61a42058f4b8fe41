"""OAuth for streamable-HTTP servers that require it: the SDK's OAuth client flow.

``"oauth": true`` (or ``{"scope", "redirect_uri", "client_name"}``) in a server's settings
makes its HTTP client authenticate through the SDK's ``OAuthClientProvider``: it finds the
server's authorization server, registers lightagent as a client, sends the user to
authorize (``oauth_authorize(url)`` returns the URL they were sent back to, with the code)
and keeps the tokens in ``token_storage``: the credential provider when it stores tokens
(``get_tokens``/``set_tokens``/``get_client_info``/``set_client_info``), else memory.
Tokens go into request headers only; they are never logged, and every one the flow sees
is added to the toolset's scrubber.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs, urlparse

from lightagent_mcp.errors import MCPConfigError

__all__ = ["MemoryTokens", "OAuthSettings", "oauth_auth", "parse_oauth"]

_STORE = ("get_tokens", "set_tokens", "get_client_info", "set_client_info")


class OAuthSettings:
    """A server's OAuth client settings (``"oauth"`` in its settings)."""

    __slots__ = ("client_name", "redirect_uri", "scope")

    def __init__(
        self,
        scope: str | None = None,
        redirect_uri: str = "http://127.0.0.1:33418/callback",
        client_name: str = "lightagent",
    ) -> None:
        self.scope, self.redirect_uri, self.client_name = scope, redirect_uri, client_name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OAuthSettings) and (
            (self.scope, self.redirect_uri, self.client_name)
            == (other.scope, other.redirect_uri, other.client_name)
        )

    def __hash__(self) -> int:
        return hash((self.scope, self.redirect_uri, self.client_name))


class MemoryTokens:
    """Tokens and client registration kept in memory (for one toolset's life)."""

    def __init__(self) -> None:
        self.tokens: Any = None
        self.client_info: Any = None

    async def get_tokens(self) -> Any:
        """The stored tokens, or None."""
        return self.tokens

    async def set_tokens(self, tokens: Any) -> None:
        """Store tokens."""
        self.tokens = tokens

    async def get_client_info(self) -> Any:
        """The stored client registration, or None."""
        return self.client_info

    async def set_client_info(self, client_info: Any) -> None:
        """Store the client registration."""
        self.client_info = client_info


def parse_oauth(fail: Any, value: Any) -> OAuthSettings | None:
    """``"oauth"`` of a server's settings: false/absent, true, or ``{scope, redirect_uri, client_name}``."""
    if value is None or value is False:
        return None
    if value is True:
        return OAuthSettings()
    if not isinstance(value, Mapping):
        raise fail("oauth", f"must be true, false or an object, got {value!r}")
    known = {"scope", "redirect_uri", "client_name"}
    unknown = sorted(set(value) - known)
    if unknown:
        raise fail("oauth", f"unknown key {unknown[0]!r}; known keys are {sorted(known)}")
    if not all(isinstance(v, str) and v for v in value.values()):
        raise fail("oauth", "its values must be non-empty strings")
    return OAuthSettings(**dict(value))


class _Scrubbing:
    """A token storage that tells the scrubber each token it stores or hands out."""

    def __init__(self, inner: Any, scrubber: Any) -> None:
        self._inner, self._scrubber = inner, scrubber

    def _note(self, tokens: Any) -> Any:
        for name in ("access_token", "refresh_token"):
            value = getattr(tokens, name, None)
            if isinstance(value, str) and value:
                self._scrubber.add([value])
        return tokens

    async def get_tokens(self) -> Any:
        return self._note(await _maybe(self._inner.get_tokens()))

    async def set_tokens(self, tokens: Any) -> None:
        await _maybe(self._inner.set_tokens(self._note(tokens)))

    async def get_client_info(self) -> Any:
        return await _maybe(self._inner.get_client_info())

    async def set_client_info(self, client_info: Any) -> None:
        await _maybe(self._inner.set_client_info(client_info))


async def _maybe(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def token_storage(provider: Any) -> Any:
    """The credential provider when it stores tokens, else a new :class:`MemoryTokens`."""
    if provider is not None and all(callable(getattr(provider, m, None)) for m in _STORE):
        return provider
    return MemoryTokens()


def oauth_auth(
    server: str, url: str, settings: OAuthSettings, storage: Any, authorize: Any, scrubber: Any
) -> Any:
    """The SDK's ``OAuthClientProvider`` (an ``httpx`` auth) for one server."""
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

    pending: dict[str, str] = {}

    async def redirect(authorization_url: str) -> None:
        pending["url"] = authorization_url

    async def callback() -> Any:
        if authorize is None:
            raise MCPConfigError(
                "LA-MCP-CONFIG",
                f"MCP server {server!r} needs the user to authorize (OAuth) and no "
                "oauth_authorize= was given",
                hint="Pass oauth_authorize=fn: fn(url) sends the user to url and returns the "
                "URL they were sent back to.",
                details={"server": server},
            )
        back = str(await _maybe(authorize(pending.pop("url", ""))))
        query = parse_qs(urlparse(back).query)
        if "code" not in query:
            raise MCPConfigError(
                "LA-MCP-CONFIG",
                f"MCP server {server!r}: the authorization gave no code "
                f"({query.get('error', ['no error named'])[0]})",
                details={"server": server},
            )
        return AuthorizationCodeResult(
            code=query["code"][0],
            state=query.get("state", [None])[0],
            iss=query.get("iss", [None])[0],
        )

    metadata = OAuthClientMetadata(
        client_name=settings.client_name,
        redirect_uris=[settings.redirect_uri],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        scope=settings.scope,
    )
    return OAuthClientProvider(
        server_url=url,
        client_metadata=metadata,
        storage=_Scrubbing(storage, scrubber),
        redirect_handler=redirect,
        callback_handler=callback,
    )
