"""OAuth for a streamable-HTTP server that requires it: the SDK's client flow against the
test server acting as its own authorization server; tokens never reach a log."""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from lightagent.toolsets import ToolsetOwner
from lightagent_mcp import MCPConfigError, MCPToolset, parse_server
from mcp_testkit import SERVER, free_port

TOKEN_PREFIX = "oat-"  # servers/oauth_server.py


@pytest.fixture(scope="module")
def oauth_url() -> Iterator[str]:
    import socket
    import time

    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, SERVER, "--transport", "http", "--port", str(port), "--mode", "oauth"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError("the OAuth test server did not start") from None
            time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/mcp"
    proc.terminate()
    proc.wait(10)


def _authorize(seen: list[str]) -> Any:
    """The user's part: open the authorization URL, come back with the redirect (granted)."""

    def authorize(url: str) -> str:
        seen.append(url)
        answer = httpx.get(url, follow_redirects=False, timeout=30)
        assert answer.status_code in (302, 303, 307), answer.text
        return answer.headers["location"]

    return authorize


class Vault:
    """A credential provider that keeps OAuth tokens (and supplies no headers)."""

    def __init__(self) -> None:
        self.tokens: Any = None
        self.client_info: Any = None

    async def get_tokens(self) -> Any:
        return self.tokens

    async def set_tokens(self, tokens: Any) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> Any:
        return self.client_info

    async def set_client_info(self, client_info: Any) -> None:
        self.client_info = client_info


def _listed(toolset: MCPToolset) -> set[str]:
    owner = ToolsetOwner(toolset)
    try:
        return {d.name for d in owner.list()}
    finally:
        owner.close()


def test_the_oauth_flow_authorizes_once_and_keeps_tokens_in_the_provider(oauth_url, caplog):
    caplog.set_level(logging.DEBUG)
    vault, seen = Vault(), []
    settings = {"url": oauth_url, "transport": "http", "oauth": {"scope": "tools"}}
    toolset = MCPToolset(
        settings, name="guarded", credential_provider=vault, oauth_authorize=_authorize(seen)
    )
    assert _listed(toolset) == {"echo"}
    assert len(seen) == 1 and "code_challenge=" in seen[0]
    token = vault.tokens.access_token
    assert token.startswith(TOKEN_PREFIX)
    # a second toolset with the same vault needs no authorization
    again = MCPToolset(
        settings, name="guarded", credential_provider=vault, oauth_authorize=_authorize(seen)
    )
    assert _listed(again) == {"echo"} and len(seen) == 1
    assert token not in caplog.text
    assert toolset.scrubber.text(f"Bearer {token}") != f"Bearer {token}"


def test_without_oauth_authorize_the_failure_is_typed(oauth_url):
    toolset = MCPToolset({"url": oauth_url, "transport": "http", "oauth": True}, name="guarded")
    ToolsetOwner(toolset).open()
    error = toolset.last_error or {}
    assert error.get("code") == "LA-MCP-CONFIG" and "oauth_authorize=" in error["message"]


@pytest.mark.parametrize(
    "cfg",
    [
        {"command": "x", "oauth": True},
        {"url": "http://127.0.0.1:9/sse", "oauth": True},
        {"url": "http://127.0.0.1:9/mcp", "transport": "http", "oauth": {"scopes": "a"}},
        {"url": "http://127.0.0.1:9/mcp", "transport": "http", "oauth": "yes"},
    ],
)
def test_bad_oauth_settings_are_typed_config_errors(cfg):
    with pytest.raises(MCPConfigError) as info:
        parse_server("s", cfg)
    assert "mcpServers.s.oauth" in info.value.message
