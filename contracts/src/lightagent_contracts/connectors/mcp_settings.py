"""Checking MCP server settings in the seeds' ``mcpServers`` shape."""

from __future__ import annotations

import re
from typing import Any

from lightagent_contracts.connectors.credentials import (
    check_credentials_in_mapping,
    literal_setting_secret,
)
from lightagent_contracts.connectors.findings import Finding

__all__ = ["check_mcp_servers"]

_MCP_KEYS = {
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "transport",
    "type",
    "disabled",
    "namespace",
    "namespace_tools",
    "reconnect_attempts",
    "timeout",
    "description",
}
_TRANSPORTS = {"stdio", "sse", "streamable-http", "streamable_http", "http"}


def check_mcp_servers(servers: Any, location: str) -> list[Finding]:
    """LAV060 for malformed ``mcpServers`` entries, LAV070 for literal secrets (accepts the outer
    or the inner dict)."""
    if isinstance(servers, dict) and set(servers) == {"mcpServers"}:
        servers = servers["mcpServers"]
    if not isinstance(servers, dict):
        return [
            Finding.make("LAV060", "mcpServers must be an object of name -> settings", location)
        ]
    out: list[Finding] = []

    def bad(name: str, text: str, level: str | None = None) -> None:
        out.append(Finding.make("LAV060", f"MCP server {name!r}: {text}", location, level=level))  # type: ignore[arg-type]

    for name, cfg in servers.items():
        if not isinstance(cfg, dict):
            bad(name, "settings must be an object")
            continue
        has_cmd, has_url = "command" in cfg, "url" in cfg
        if has_cmd == has_url:
            bad(name, "needs exactly one of `command` (stdio) or `url` (SSE / streamable HTTP)")
        if has_cmd and (not isinstance(cfg["command"], str) or not cfg["command"].strip()):
            bad(name, "`command` must be a non-empty string")
        if "args" in cfg and (
            not isinstance(cfg["args"], list) or not all(isinstance(a, str) for a in cfg["args"])
        ):
            bad(name, "`args` must be a list of strings")
        if has_url and (not isinstance(cfg["url"], str) or not re.match(r"https?://", cfg["url"])):
            bad(name, "`url` must be an http:// or https:// URL")
        for key in ("env", "headers"):
            if key in cfg and (
                not isinstance(cfg[key], dict)
                or not all(isinstance(k, str) and isinstance(v, str) for k, v in cfg[key].items())
            ):
                bad(name, f"`{key}` must be an object of string -> string")
        transport = cfg.get("transport", cfg.get("type"))
        if transport is not None and transport not in _TRANSPORTS:
            bad(name, f"unknown transport {transport!r}; use one of {sorted(_TRANSPORTS)}")
        for key in ("disabled", "namespace_tools"):
            if key in cfg and not isinstance(cfg[key], bool):
                bad(name, f"`{key}` must be true or false")
        if "namespace" in cfg and not isinstance(cfg["namespace"], str):
            bad(name, "`namespace` must be a string")
        attempts = cfg.get("reconnect_attempts", 0)
        if not isinstance(attempts, int) or isinstance(attempts, bool) or attempts < 0:
            bad(name, "`reconnect_attempts` must be a non-negative integer")
        unknown = sorted(set(cfg) - _MCP_KEYS)
        if unknown:
            bad(name, f"unknown keys {unknown}", level="warning")
        # env and headers should hold ${ENV_VAR} references: a stricter rule there.
        rest = {k: v for k, v in cfg.items() if k not in ("env", "headers")}
        out.extend(check_credentials_in_mapping(rest, location, f"mcpServers.{name}"))
        for key in ("env", "headers"):
            settings = cfg.get(key)
            for item, value in settings.items() if isinstance(settings, dict) else ():
                if literal_setting_secret(str(item), value):
                    out.append(
                        Finding.make(
                            "LAV070",
                            f"`mcpServers.{name}.{key}.{item}` holds a literal secret",
                            location,
                            hint=f'Write a reference such as "${{{_env_name(name, item)}}}" '
                            f'(for a header "Bearer ${{{_env_name(name, "token")}}}") and set that '
                            "variable where the agent runs.",
                        )
                    )
    return out


def _env_name(server: str, item: str) -> str:
    """An environment variable name to suggest: SERVER_ITEM in capitals."""
    return re.sub(r"[^A-Z0-9]+", "_", f"{server}_{item}".upper()).strip("_")
