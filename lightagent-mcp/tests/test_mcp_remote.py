"""Streamable HTTP and SSE servers on 127.0.0.1: credentials, restarts, a server that is down."""

from __future__ import annotations

import asyncio
import logging
import threading
import time

import pytest
from lightagent import LightAgent, ScriptedModel
from lightagent.toolsets import ToolCallContext, ToolsetOwner
from lightagent_mcp import MCPToolset, MCPUnavailable
from mcp_testkit import TOKEN, HttpServer, free_port


def call(name: str, **arguments: object) -> dict:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


@pytest.mark.parametrize("transport", ["http", "sse"])
def test_remote_servers_get_the_credential_from_the_environment(transport, request, token_env):
    server = request.getfixturevalue(f"{transport}_server")
    toolset = MCPToolset(server.settings(), name=f"remote-{transport}")
    model = ScriptedModel([call("whoami"), call("add", a=20, b=22), "ok"])
    agent = LightAgent(model=model, tools=[toolset])
    with agent:
        result = agent.run("who?", result_format="object", trace=True)
    outputs = [e["data"]["output"] for e in result.trace if e["type"] == "tool_result"]
    assert outputs == ["authorized", "42"]


def test_a_credential_provider_supplies_the_header(http_server):
    async def vault(server: str, settings: dict) -> dict:
        return {"Authorization": f"Bearer {TOKEN}"}

    settings = http_server.settings()
    del settings["headers"]
    toolset = MCPToolset(settings, name="vaulted", credential_provider=vault)
    owner = ToolsetOwner(toolset)
    try:
        assert asyncio.run(owner.acall("whoami", {}, None)).content == "authorized"
    finally:
        owner.close()


def test_a_restarted_http_server_is_reinitialized_and_the_call_retried(http_server, token_env):
    toolset = MCPToolset(http_server.settings(), name="restarts")
    owner = ToolsetOwner(toolset)
    try:
        before = asyncio.run(owner.acall("pid", {}, None)).content
        http_server.restart()  # the new process does not know our session id
        after = asyncio.run(owner.acall("pid", {}, None)).content
        assert after != before
        assert [e["event"] for e in toolset.events] == ["connect", "reconnect"]
        assert len(owner.list()) == len({d.name for d in owner.list()})  # no duplicates
    finally:
        owner.close()


def test_a_server_that_is_down_is_a_typed_error_and_never_leaks_the_token(token_env, caplog):
    port = free_port()  # nothing listens there
    toolset = MCPToolset(
        {
            "url": f"http://127.0.0.1:{port}/mcp?trace=1",
            "transport": "streamable-http",
            "headers": {"Authorization": "Bearer ${MCP_TEST_TOKEN}"},
            "init_timeout": 10,
        },
        name="down",
    )
    caplog.set_level(logging.DEBUG)
    started = time.monotonic()
    ToolsetOwner(toolset).open()  # a server that cannot be opened does not raise here
    assert time.monotonic() - started < 10
    error = toolset.last_error or {}
    assert error.get("code") == "LA-MCP-UNAVAILABLE" and "not reachable" in error["message"]
    model = ScriptedModel(["fine without it"])
    agent = LightAgent(model=model, tools=[toolset])
    result = agent.run("hi", result_format="object", trace=True)
    assert result.content == "fine without it"
    errors = [e for e in result.trace if e["type"] == "toolset_error"]
    assert errors and errors[0]["data"]["error"]["code"] == "LA-MCP-UNAVAILABLE"
    seen = str(error) + str(result.trace) + caplog.text
    assert TOKEN not in seen


@pytest.mark.slow
def test_a_restarted_sse_server_is_reconnected(sse_server, token_env):
    toolset = MCPToolset(sse_server.settings(), name="sse-restarts")
    owner = ToolsetOwner(toolset)
    try:
        before = asyncio.run(owner.acall("pid", {}, None)).content
        sse_server.stop()
        deadline = time.monotonic() + 30
        while not toolset.link._broken and time.monotonic() < deadline:
            time.sleep(0.05)  # the broken event stream reaches the session
        sse_server.start()
        after = asyncio.run(owner.acall("pid", {}, None)).content
        assert after != before and [e["event"] for e in toolset.events][-1] == "reconnect"
    finally:
        owner.close()


def test_a_resumable_http_server_killed_mid_call_is_reported_at_once(token_env):
    # The server gives its events ids and a 20 s retry hint: the SDK alone would wait to
    # resume the cut stream (twice) before giving the call up.
    server = HttpServer("http", mode="resumable")
    server.start()
    owner = ToolsetOwner(MCPToolset(server.settings(timeout=60), name="resumable"))
    reporting = threading.Event()
    context = ToolCallContext(emit=lambda kind, data: reporting.set())

    async def kill_mid_call() -> float:
        call = asyncio.ensure_future(owner.acall("report", {"count": 600, "pause": 0.1}, context))
        assert await asyncio.get_running_loop().run_in_executor(None, reporting.wait, 60)
        server.proc.kill()
        server.proc.wait()
        killed = time.monotonic()
        with pytest.raises(MCPUnavailable) as info:
            await call
        assert "was lost during report" in info.value.message
        return time.monotonic() - killed

    try:
        assert asyncio.run(kill_mid_call()) < 10
    finally:
        owner.close()
        server.stop()
