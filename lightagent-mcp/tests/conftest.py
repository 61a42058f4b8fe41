"""Fixtures of the lightagent-mcp tests (helpers live in mcp_testkit.py)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from mcp_testkit import TOKEN, HttpServer


@pytest.fixture
def token_env(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("MCP_TEST_TOKEN", TOKEN)
    return TOKEN


@pytest.fixture(scope="module")
def http_server() -> Iterator[HttpServer]:
    server = HttpServer("http")
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def sse_server() -> Iterator[HttpServer]:
    server = HttpServer("sse")
    server.start()
    yield server
    server.stop()
