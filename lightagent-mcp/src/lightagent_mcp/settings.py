"""The seeds' ``mcpServers`` settings: parsed and checked into :class:`ServerSettings`.

Forms (``{"mcpServers": {"<name>": {...}}}``): stdio ``command``/``args``/``env``/``cwd``;
SSE ``url``/``headers``; streamable HTTP ``transport: "streamable-http"`` (or
``"streamable_http"``, ``"http"``) with ``url``/``headers``. A ``url`` without ``transport``
is SSE, as in the seeds; an explicit ``transport`` always wins. Common keys: ``disabled``,
``namespace``, ``namespace_tools``, ``reconnect_attempts``, and ours: ``include`` /
``exclude`` (tool-name globs), ``timeout`` (a call's idle limit, reset by each progress
notification), ``total_timeout`` (a call's hard limit), ``init_timeout``, ``kill_timeout``,
``protocol``, ``approval``, ``max_output_chars`` (the text the model reads of one result),
``resources`` / ``prompts`` (offer the model the server's resources and prompts as tools),
and what the server may ask of us, each off unless set: ``sampling`` (true, or limits:
``model``, ``max_tokens``, ``max_requests``, ``max_total_tokens``, ``approval``),
``elicitation`` (true) and ``roots`` (a list of directories); see
:mod:`lightagent_mcp.client_features`. ``media`` (``["image", "audio"]``) shows the model
the images and audio of results (for a model that reads them); ``oauth`` (true or
``{"scope", "redirect_uri", "client_name"}``) authenticates a streamable-HTTP server with
the SDK's OAuth flow (:mod:`lightagent_mcp.oauth`).
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lightagent_mcp.client_features import SamplingSettings, parse_roots, parse_sampling
from lightagent_mcp.content import DEFAULT_MAX_OUTPUT_CHARS
from lightagent_mcp.credentials import check_literal_secrets
from lightagent_mcp.errors import MCPConfigError
from lightagent_mcp.oauth import OAuthSettings, parse_oauth

__all__ = ["ServerSettings", "load_mcp_settings", "parse_server"]

_TRANSPORTS = {
    "stdio": "stdio",
    "sse": "sse",
    "streamable-http": "streamable-http",
    "streamable_http": "streamable-http",
    "http": "streamable-http",
}
_KEYS = {
    "command", "args", "env", "cwd", "url", "headers", "transport", "type", "disabled",
    "namespace", "namespace_tools", "reconnect_attempts", "include", "exclude", "timeout",
    "total_timeout", "init_timeout", "kill_timeout", "protocol", "approval", "description",
    "max_output_chars",
}  # fmt: skip
_KEYS |= {"resources", "prompts", "sampling", "elicitation", "roots", "media", "oauth"}
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


@dataclass(frozen=True)
class ServerSettings:
    """One MCP server's settings, checked. ``env``/``headers``/``url``/``args`` may hold
    ``${VAR}`` references, resolved from the environment when the server is connected."""

    name: str
    transport: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    disabled: bool = False
    namespace: str | None = None
    namespace_tools: bool = False
    #: Extra connection attempts per call after a lost session (the seeds' meaning).
    reconnect_attempts: int = 1
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    #: Seconds a tool call may go without an answer or a progress notification.
    timeout: float = 60.0
    #: Seconds for starting the server and the MCP handshake.
    init_timeout: float = 30.0
    #: Seconds between SIGTERM and SIGKILL when a stdio server's process tree is ended.
    kill_timeout: float = 2.0
    #: ``"legacy"`` (the initialize handshake), ``"auto"`` (probe, then fall back) or a version.
    protocol: str = "legacy"
    #: ``"first_use"`` (pin definitions when first seen) or ``"manual"`` (approve each tool).
    approval: str = "first_use"
    description: str = ""
    #: Characters of one result's text the model reads; the rest is cut with a marker.
    max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS
    #: Seconds a tool call may take in all, progress or not (default: the larger of 600 and ``timeout``).
    total_timeout: float = 600.0
    #: Offer the model ``resources_list`` / ``resources_read`` for this server.
    resources: bool = False
    #: Offer the model ``prompts_list`` / ``prompts_get`` for this server.
    prompts: bool = False
    #: Answer the server's sampling requests within these limits (None: not offered).
    sampling: SamplingSettings | None = None
    #: Route the server's elicitation requests to the human reviewer.
    elicitation: bool = False
    #: The directories the server may use, as ``(file URI, name)`` (empty: not offered).
    roots: tuple[tuple[str, str], ...] = ()
    #: Content kinds of results the model is shown (``"image"``, ``"audio"``); a vision model needed.
    media: tuple[str, ...] = ()
    #: Authenticate with the SDK's OAuth client flow (streamable HTTP); None: no OAuth.
    oauth: OAuthSettings | None = None

    def to_dict(self) -> dict[str, Any]:
        """The settings in the seeds' shape (references unresolved, so no secret)."""
        out: dict[str, Any] = {"transport": self.transport}
        if self.command is not None:
            out.update(command=self.command, args=list(self.args), env=dict(self.env))
            if self.cwd:
                out["cwd"] = self.cwd
        else:
            out.update(url=self.url, headers=dict(self.headers))
        out.update(
            disabled=self.disabled,
            namespace=self.namespace,
            namespace_tools=self.namespace_tools,
            reconnect_attempts=self.reconnect_attempts,
        )
        return out


def _fail(server: str, key: str | None, text: str) -> MCPConfigError:
    where = f"mcpServers.{server}.{key}" if key else f"mcpServers.{server}"
    return MCPConfigError(
        "LA-MCP-CONFIG",
        f"{where}: {text}",
        details={"server": server, "key": key},
    )


def _strings(server: str, key: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str) and key != "args":
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise _fail(server, key, "must be a list of strings")
    return tuple(value)


def _mapping(server: str, key: str, value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise _fail(server, key, "must be an object of string -> string")
    return dict(value)


def _seconds(server: str, key: str, value: Any, default: float) -> float:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _fail(server, key, f"must be a number of seconds, got {value!r}")
    if value <= 0:
        raise _fail(server, key, f"must be more than 0 seconds, got {value!r}")
    return float(value)


def _flag(server: str, key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise _fail(server, key, f"must be true or false, got {value!r}")
    return value


def _media(server: str, value: Any) -> tuple[str, ...]:
    kinds = _strings(server, "media", value)
    bad = [k for k in kinds if k not in ("image", "audio")]
    if bad:
        raise _fail(server, "media", f"lists content kinds 'image' and 'audio', got {bad[0]!r}")
    return kinds


def parse_server(name: str, cfg: Any) -> ServerSettings:
    """Check one server's settings; raises :class:`MCPConfigError` naming the bad key."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise _fail(str(name), None, "a server name is 1-64 letters, digits, '_', '-' or '.'")
    if not isinstance(cfg, Mapping):
        raise _fail(name, None, f"settings must be an object, got {type(cfg).__name__}")
    unknown = sorted(set(cfg) - _KEYS)
    if unknown:
        raise _fail(name, unknown[0], f"unknown key; known keys are {sorted(_KEYS)}")
    has_command, has_url = cfg.get("command") is not None, cfg.get("url") is not None
    if has_command == has_url:
        raise _fail(name, None, "needs exactly one of `command` (stdio) or `url` (SSE / HTTP)")
    transport_value = cfg.get("transport", cfg.get("type"))
    if transport_value is None:
        transport = "stdio" if has_command else "sse"
    elif transport_value not in _TRANSPORTS:
        raise _fail(
            name,
            "transport",
            f"unknown transport {transport_value!r}; use one of {sorted(_TRANSPORTS)}",
        )
    else:
        transport = _TRANSPORTS[transport_value]
    if (transport == "stdio") != has_command:
        raise _fail(
            name,
            "transport",
            f"{transport!r} needs `{'command' if transport == 'stdio' else 'url'}`",
        )
    check_literal_secrets(name, cfg)
    command = cfg.get("command")
    if has_command and (not isinstance(command, str) or not command.strip()):
        raise _fail(name, "command", "must be a non-empty string")
    url = cfg.get("url")
    if has_url and (not isinstance(url, str) or not re.match(r"(?i)^https?://", url)):
        raise _fail(name, "url", "must be an http:// or https:// URL")
    cwd = cfg.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise _fail(name, "cwd", "must be a string")
    namespace = cfg.get("namespace")
    if namespace is not None and (not isinstance(namespace, str) or not namespace.strip()):
        raise _fail(name, "namespace", "must be a non-empty string")
    attempts = cfg.get("reconnect_attempts", 1)
    if not isinstance(attempts, int) or isinstance(attempts, bool) or not 0 <= attempts <= 10:
        raise _fail(
            name, "reconnect_attempts", f"must be an integer from 0 to 10, got {attempts!r}"
        )
    protocol = cfg.get("protocol", "legacy")
    if not isinstance(protocol, str) or not (
        protocol in ("legacy", "auto") or re.match(r"^\d{4}-\d{2}-\d{2}$", protocol)
    ):
        raise _fail(
            name, "protocol", f"must be 'legacy', 'auto' or a protocol version, got {protocol!r}"
        )
    approval = cfg.get("approval", "first_use")
    if approval not in ("first_use", "manual"):
        raise _fail(name, "approval", f"must be 'first_use' or 'manual', got {approval!r}")
    description = cfg.get("description", "")
    if not isinstance(description, str):
        raise _fail(name, "description", "must be a string")
    limit = cfg.get("max_output_chars", DEFAULT_MAX_OUTPUT_CHARS)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise _fail(name, "max_output_chars", f"must be a positive integer, got {limit!r}")
    oauth = parse_oauth(lambda key, text: _fail(name, key, text), cfg.get("oauth"))
    if oauth is not None and transport != "streamable-http":
        raise _fail(name, "oauth", "OAuth is for streamable-HTTP servers (transport: 'http')")
    timeout = _seconds(name, "timeout", cfg.get("timeout"), 60.0)
    total_timeout = _seconds(name, "total_timeout", cfg.get("total_timeout"), max(600.0, timeout))
    if total_timeout < timeout:
        raise _fail(
            name,
            "total_timeout",
            f"must be at least `timeout` ({timeout:g} s), got {total_timeout:g}",
        )
    return ServerSettings(
        name=name,
        transport=transport,
        command=command,
        args=_strings(name, "args", cfg.get("args", [])),
        env=_mapping(name, "env", cfg.get("env")),
        cwd=cwd,
        url=url,
        headers=_mapping(name, "headers", cfg.get("headers")),
        disabled=_flag(name, "disabled", cfg.get("disabled", False)),
        namespace=namespace,
        namespace_tools=_flag(name, "namespace_tools", cfg.get("namespace_tools", False)),
        reconnect_attempts=attempts,
        include=_strings(name, "include", cfg.get("include", [])),
        exclude=_strings(name, "exclude", cfg.get("exclude", [])),
        timeout=timeout,
        total_timeout=total_timeout,
        init_timeout=_seconds(name, "init_timeout", cfg.get("init_timeout"), 30.0),
        kill_timeout=_seconds(name, "kill_timeout", cfg.get("kill_timeout"), 2.0),
        protocol=protocol,
        approval=approval,
        description=description,
        max_output_chars=limit,
        resources=_flag(name, "resources", cfg.get("resources", False)),
        prompts=_flag(name, "prompts", cfg.get("prompts", False)),
        sampling=parse_sampling(lambda key, text: _fail(name, key, text), cfg.get("sampling")),
        elicitation=_flag(name, "elicitation", cfg.get("elicitation", False)),
        roots=parse_roots(lambda key, text: _fail(name, key, text), cfg.get("roots")),
        media=_media(name, cfg.get("media", [])),
        oauth=oauth,
    )


def _document(source: Any) -> Any:
    if isinstance(source, (str, os.PathLike)):
        text = os.fspath(source)
        if isinstance(source, str) and text.lstrip().startswith("{"):
            try:
                return json.loads(text)
            except json.JSONDecodeError as exc:
                raise MCPConfigError(
                    "LA-MCP-CONFIG",
                    f"the MCP settings are not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})",
                ) from None
        path = Path(text).expanduser()
        try:
            raw = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise MCPConfigError(
                "LA-MCP-CONFIG",
                f"cannot read the MCP settings file {str(path)!r}: {exc.strerror or exc}",
                hint="Pass a dict, a JSON string or the path of a JSON file.",
            ) from None
        try:
            return json.loads(raw)
        except json.JSONDecodeError as exc:
            raise MCPConfigError(
                "LA-MCP-CONFIG",
                f"{str(path)!r} is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})",
            ) from None
    return source


def load_mcp_settings(source: Any) -> dict[str, ServerSettings]:
    """Every server of an ``mcpServers`` document (a dict, a JSON string, or a JSON file path).

    Disabled servers are included (with ``disabled=True``); the order of the document is kept.
    """
    doc = _document(source)
    if isinstance(doc, Mapping) and "mcpServers" in doc:
        servers = doc["mcpServers"]
    else:
        servers = doc
    if not isinstance(servers, Mapping):
        raise MCPConfigError(
            "LA-MCP-CONFIG",
            f'the MCP settings need an object {{"mcpServers": {{name: settings}}}}, got {type(doc).__name__}',
        )
    if "command" in servers or "url" in servers:
        raise MCPConfigError(
            "LA-MCP-CONFIG",
            'these look like one server\'s settings: wrap them as {"mcpServers": {"<name>": ...}}',
        )
    return {name: parse_server(name, cfg) for name, cfg in servers.items()}
