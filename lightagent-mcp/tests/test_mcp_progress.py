"""Progress notifications, the idle and total call timeouts, and server log messages."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest
from lightagent import LightAgent, ScriptedModel
from lightagent.toolsets import ToolsetOwner
from lightagent_mcp import MCPTimeout, MCPToolset
from mcp_testkit import stdio

SECRET = "hunter2-5b1c9e7a3f"  # what the test server's `chatty` tool logs


def call(name: str, **arguments: object) -> dict:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


class Seen:
    """An ``on_event`` observer keeping every event."""

    def __init__(self) -> None:
        self.events: list[dict] = []

    def on_event(self, run: object, event: dict) -> None:
        self.events.append(event)


def test_progress_becomes_events_and_keeps_a_call_alive_past_the_idle_timeout():
    # 5 reports 0.5 s apart: 2.5 s in all, longer than the 2 s idle timeout (4x a gap, so
    # a loaded machine does not end it) and the agent's own tool_timeout; each report
    # starts the idle clock again.
    toolset = MCPToolset(stdio("progress", timeout=2.0, total_timeout=30), name="long")
    seen = Seen()
    model = ScriptedModel([call("report", count=5, pause=0.5), "done"])
    agent = LightAgent(model=model, tools=[toolset], tool_timeout=1.0, observers=[seen])
    with agent:
        agent.open()  # the server's start-up is not part of the call
        started = time.monotonic()
        result = agent.run("go", result_format="object", trace=True)
        took = time.monotonic() - started
    assert took > 2.0
    outputs = [e["data"]["output"] for e in result.trace if e["type"] == "tool_result"]
    assert outputs == ["reported 5"]
    types = [e["type"] for e in result.trace]
    progress = [e["data"] for e in result.trace if e["type"] == "mcp.progress"]
    assert [(p["progress"], p["total"], p["message"]) for p in progress] == [
        (float(i), 5.0, f"step {i} of 5") for i in range(1, 6)
    ]
    assert {(p["server"], p["tool"]) for p in progress} == {("long", "report")}
    first, last = types.index("mcp.progress"), len(types) - types[::-1].index("mcp.progress")
    assert types.index("tool_call") < first and last <= types.index("tool_result")
    assert [e["data"] for e in seen.events if e["type"] == "mcp.progress"] == progress


def test_a_call_past_the_total_timeout_is_a_typed_timeout_even_while_progressing():
    # Reports every 0.1 s against a 3 s idle timeout (which a loaded machine does not
    # reach first), cut at the 3.5 s total.
    toolset = MCPToolset(stdio("progress", timeout=3.0, total_timeout=3.5), name="capped")
    owner = ToolsetOwner(toolset)
    try:
        assert asyncio.run(owner.acall("echo", {"text": "up"}, None)).content == "up"
        started = time.monotonic()
        with pytest.raises(MCPTimeout) as info:
            asyncio.run(owner.acall("report", {"count": 300, "pause": 0.1}, None))
        assert time.monotonic() - started < 20.0  # the 30 s of reports were cut short
        assert info.value.code == "LA-MCP-TIMEOUT"
        assert "total_timeout" in info.value.message
        assert info.value.details["limit"] == "total_timeout"
        # the session stays usable
        assert asyncio.run(owner.acall("echo", {"text": "hi"}, None)).content == "hi"
    finally:
        owner.close()


def test_a_call_without_progress_times_out_at_the_idle_timeout():
    toolset = MCPToolset(stdio("progress", timeout=0.5, total_timeout=20), name="idle")
    owner = ToolsetOwner(toolset)
    try:
        with pytest.raises(MCPTimeout) as info:
            asyncio.run(owner.acall("slow", {"seconds": 10}, None))
        assert info.value.details["limit"] == "timeout"
    finally:
        owner.close()


def test_total_timeout_below_timeout_is_a_config_error():
    from lightagent_mcp import MCPConfigError, parse_server

    with pytest.raises(MCPConfigError) as info:
        parse_server("x", {"command": "x", "timeout": 10, "total_timeout": 5})
    assert "total_timeout" in info.value.message


@pytest.mark.parametrize("protocol", ["legacy", "auto"])  # auto: a 2026 session, which opts in
def test_server_log_messages_reach_python_logging_at_their_level_redacted(caplog, protocol):
    caplog.set_level(logging.DEBUG, logger="lightagent.mcp")
    toolset = MCPToolset(stdio("progress", protocol=protocol), name="talker")
    owner = ToolsetOwner(toolset)
    try:
        assert asyncio.run(owner.acall("chatty", {}, None)).content == "logged"
    finally:
        owner.close()
    records = [r for r in caplog.records if r.name == "lightagent.mcp.talker"]
    assert [(r.levelno, r.getMessage()) for r in records] == [
        (logging.DEBUG, "looking around"),
        (logging.INFO, '{"rows": 3}'),
        (logging.WARNING, "disk: slow disk"),
        (logging.ERROR, "login failed with password=[redacted]"),
        (logging.CRITICAL, "on fire"),
    ]
    assert SECRET not in caplog.text


def test_the_sdk_loggers_write_one_line_per_event_unless_debug_is_asked(caplog):
    from lightagent_mcp.logs import quiet_sdk_loggers

    quiet_sdk_loggers()
    sdk = logging.getLogger("mcp.client.sse")
    caplog.set_level(logging.INFO)
    try:
        raise ConnectionError("peer closed connection")
    except ConnectionError:
        sdk.exception("Error in sse_reader")
    record = caplog.records[-1]
    assert record.exc_info is None and "\n" not in caplog.text.strip()
    assert record.getMessage() == "Error in sse_reader (ConnectionError: peer closed connection)"
    caplog.clear()
    caplog.set_level(logging.DEBUG)  # an app that asks for debug logs gets the traceback
    try:
        raise ConnectionError("peer closed connection")
    except ConnectionError:
        sdk.exception("Error in sse_reader")
    assert caplog.records[-1].exc_info is not None


CHILD = """
import asyncio, os, sys, time
sys.path.insert(0, {tests!r})
from lightagent.toolsets import ToolsetOwner
from lightagent_mcp import MCPToolset
from mcp_testkit import HttpServer
server = HttpServer("sse")
server.start()
toolset = MCPToolset(server.settings(headers={{}}), name="noisy")
owner = ToolsetOwner(toolset)
asyncio.run(owner.acall("pid", {{}}, None))
server.proc.kill()
server.proc.wait()
deadline = time.monotonic() + 30
while not toolset.link._broken and time.monotonic() < deadline:
    time.sleep(0.05)  # the broken event stream reaches the session
print("broken" if toolset.link._broken else "not broken", flush=True)
owner.close()
"""


def test_an_app_without_logging_gets_no_sdk_traceback_when_a_server_goes_away():
    import subprocess
    import sys
    from pathlib import Path

    script = CHILD.format(tests=str(Path(__file__).parent))
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.stdout.strip() == "broken", done.stderr
    assert "Traceback" not in done.stderr
    assert "Error in sse_reader" in done.stderr  # still said, in one line


def test_a_flood_of_progress_is_kept_to_a_bounded_number_of_events():
    from lightagent_mcp.progress import EVENTS_KEPT

    toolset = MCPToolset(stdio("progress"), name="flood")
    model = ScriptedModel([call("report", count=EVENTS_KEPT + 50, pause=0), "done"])
    with LightAgent(model=model, tools=[toolset]) as agent:
        result = agent.run("go", result_format="object", trace=True)
    progress = [e["data"] for e in result.trace if e["type"] == "mcp.progress"]
    assert len(progress) == EVENTS_KEPT
    assert progress[-1]["last_kept"] is True and "last_kept" not in progress[0]
    assert [e["data"]["output"] for e in result.trace if e["type"] == "tool_result"] == [
        f"reported {EVENTS_KEPT + 50}"
    ]
