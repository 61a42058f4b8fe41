"""Credentials for MCP servers: only from the environment or a credential provider.

A literal secret in the settings is refused, naming the key: a credential-named header,
environment variable or URL query parameter must be made of ``${VAR}`` references (a
scheme word such as ``Bearer`` may precede them), a URL may not carry a password, and a
value shaped like a provider key is refused wherever it appears. References resolve from
``os.environ`` when the server is connected; a credential provider adds headers (the
seeds' ``provider(server_name, settings)`` or ``provider.headers(...)``, sync or async).
Every resolved value is remembered by a :class:`Scrubber` that keeps it out of logs,
events and errors.
"""

from __future__ import annotations

import inspect
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from lightagent import redact
from lightagent.redaction import is_secret_key, redact_text

from lightagent_mcp.errors import MCPConfigError

__all__ = ["ResolvedServer", "Scrubber", "check_literal_secrets", "resolve_server"]

_REF = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}")
_SCHEMES = re.compile(r"(?i)^\s*(bearer|basic|token|apikey|api-key)\s+")
_SECRET_HEADERS = {"authorization", "proxy-authorization", "cookie"}
REDACTED = "[redacted]"


def _secret_name(key: str) -> bool:
    return key.lower() in _SECRET_HEADERS or is_secret_key(key)


def _only_references(value: str) -> bool:
    rest = _SCHEMES.sub("", value, count=1)
    return bool(_REF.search(rest)) and not _REF.sub("", rest).strip()


def _shaped_like_key(value: str) -> bool:
    return redact_text(_REF.sub("", value)) != _REF.sub("", value)


def _refuse(server: str, key: str, why: str) -> MCPConfigError:
    return MCPConfigError(
        "LA-MCP-CONFIG",
        f"mcpServers.{server}.{key} holds a literal credential ({why}); "
        "credentials come from the environment or a credential provider",
        hint=f'Write it as a reference, e.g. "{key.rsplit(".", 1)[-1]}": "${{MY_SECRET}}", '
        "or pass credential_provider=.",
        details={"server": server, "key": key},
    )


def check_literal_secrets(server: str, cfg: Mapping[str, Any]) -> None:
    """Raise :class:`MCPConfigError` naming the first key that holds a literal secret."""
    for group in ("headers", "env"):
        values = cfg.get(group)
        if not isinstance(values, Mapping):
            continue
        for key, value in values.items():
            if not isinstance(value, str):
                continue
            where = f"{group}.{key}"
            if _secret_name(str(key)) and value.strip() and not _only_references(value):
                raise _refuse(server, where, "a credential-named key needs a ${VAR} reference")
            if _shaped_like_key(value):
                raise _refuse(server, where, "the value is shaped like an access key")
    url = cfg.get("url")
    if isinstance(url, str):
        parts = urlsplit(url)
        if parts.password and not _only_references(parts.password):
            raise _refuse(server, "url", "the URL carries a password")
        for key, value in parse_qsl(parts.query, keep_blank_values=True):
            if _secret_name(key) and value and not _only_references(value):
                raise _refuse(server, f"url?{key}", "a credential-named query parameter")
        if _shaped_like_key(url):
            raise _refuse(server, "url", "the URL holds a value shaped like an access key")
    args = cfg.get("args")
    if isinstance(args, (list, tuple)):
        for index, arg in enumerate(args):
            if isinstance(arg, str) and _shaped_like_key(arg):
                raise _refuse(server, f"args[{index}]", "the value is shaped like an access key")


@dataclass
class Scrubber:
    """Removes known secret values (and anything credential-shaped) from text and data."""

    secrets: set[str] = field(default_factory=set)

    def add(self, values: Iterable[str]) -> None:
        """Remember more secret values (short ones would hide ordinary words, so they are kept out)."""
        for value in values:
            if isinstance(value, str) and len(value) >= 4:
                self.secrets.add(value)

    def text(self, value: Any) -> str:
        """``str(value)`` scrubbed."""
        text = value if isinstance(value, str) else str(value)
        for secret in sorted(self.secrets, key=len, reverse=True):
            text = text.replace(secret, REDACTED)
        return redact_text(text)

    def data(self, value: Any) -> Any:
        """A redacted JSON-safe copy of ``value``, known secrets included."""
        cleaned = redact(value)
        return _replace(cleaned, self)


def _replace(value: Any, scrubber: Scrubber) -> Any:
    if isinstance(value, str):
        return scrubber.text(value)
    if isinstance(value, dict):
        return {k: _replace(v, scrubber) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace(v, scrubber) for v in value]
    return value


@dataclass(frozen=True)
class ResolvedServer:
    """A server's connection values with every reference resolved (never logged)."""

    env: dict[str, str]
    headers: dict[str, str]
    url: str | None
    args: list[str]


def _expand(server: str, key: str, value: str, found: list[str], sensitive: bool = True) -> str:
    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        resolved = os.environ.get(name)
        if resolved is None:
            raise MCPConfigError(
                "LA-MCP-CONFIG",
                f"mcpServers.{server}.{key} refers to the environment variable {name}, which is not set",
                hint=f"Set {name} in the environment of this process.",
                details={"server": server, "key": key, "variable": name},
            )
        if sensitive or is_secret_key(name):
            found.append(resolved)
        return resolved

    return _REF.sub(one, value)


async def resolve_server(
    settings: Any, credential_provider: Any, scrubber: Scrubber
) -> ResolvedServer:
    """Resolve ``settings``' references and the provider's headers; the scrubber learns them."""
    found: list[str] = []
    name = settings.name
    env = {k: _expand(name, f"env.{k}", v, found, _secret_name(k)) for k, v in settings.env.items()}
    headers = {k: _expand(name, f"headers.{k}", v, found) for k, v in settings.headers.items()}
    url = _expand(name, "url", settings.url, found) if settings.url else None
    args = [_expand(name, f"args[{i}]", a, found, False) for i, a in enumerate(settings.args)]
    resolver = getattr(credential_provider, "headers", credential_provider)
    # a provider that only keeps OAuth tokens (lightagent_mcp.oauth) supplies no headers
    if callable(resolver) and settings.transport != "stdio":
        try:
            supplied = resolver(name, settings.to_dict())
            if inspect.isawaitable(supplied):
                supplied = await supplied
        except MCPConfigError:
            raise
        except Exception as exc:
            raise MCPConfigError(
                "LA-MCP-CONFIG",
                f"the credential provider failed for MCP server {name!r}: {type(exc).__name__}",
                details={"server": name},
            ) from None
        if supplied is not None and not isinstance(supplied, Mapping):
            raise MCPConfigError(
                "LA-MCP-CONFIG",
                f"the credential provider must return a mapping of headers for {name!r}, "
                f"got {type(supplied).__name__}",
            )
        for key, value in (supplied or {}).items():
            headers[str(key)] = str(value)
            found.append(str(value))
            for part in str(value).split():
                found.append(part)
    scrubber.add(found)
    return ResolvedServer(env=env, headers=headers, url=url, args=args)
