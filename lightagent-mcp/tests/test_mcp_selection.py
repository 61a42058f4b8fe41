"""Tool selection with real MCP servers: more than 16 tools never hide what a question needs.

Three stdio servers: the test server (11 tools), the test server as a browser-automation
server (16 tools, two of them described with "Go ...") and mcp-server-time (2 tools): more
than the 16 tools above which the loop ranks tools for the question.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from lightagent import InMemorySessionStore, LightAgent, ScriptedModel
from lightagent.toolsets import ToolsetOwner
from lightagent_mcp import MCPToolset
from mcp_testkit import stdio

TIME_SERVER = shutil.which("mcp-server-time") or shutil.which(
    "mcp-server-time", path=str(Path(sys.executable).parent)
)
pytestmark = pytest.mark.skipif(TIME_SERVER is None, reason="mcp-server-time is not installed")
# The loop ranks tools only with a tool selector installed.
pytest.importorskip("lightagent_selection")


@pytest.fixture(scope="module")
def servers() -> Iterator[list[MCPToolset]]:
    toolsets = [
        MCPToolset(stdio(), name="kit"),
        MCPToolset(stdio("browser"), name="browser"),
        MCPToolset({"command": TIME_SERVER, "args": ["--local-timezone", "UTC"]}, name="time"),
    ]
    owners = [ToolsetOwner(t) for t in toolsets]  # keep the sessions open between the tests
    for owner in owners:
        owner.open()
    yield toolsets
    for owner in owners:
        owner.close()


def offered(model: ScriptedModel, index: int = 0) -> list[str]:
    return [t["function"]["name"] for t in model.requests[index].tools]


def test_a_short_query_does_not_shrink_the_tools_of_two_servers(servers):
    kit, browser, _ = servers
    model = ScriptedModel(["ok"])
    agent = LightAgent(model=model, tools=[kit, browser])
    result = agent.run("go", result_format="object", trace=True)
    assert len(offered(model)) == 27  # before: the two tools whose description says "Go"
    (selection,) = [e["data"] for e in result.trace if e["type"] == "tool_selection"]
    assert selection["fallback"] == "all" and selection["tools_kept"] == 27


def test_the_time_tools_are_offered_for_a_time_question_among_29(servers):
    model = ScriptedModel(["It is 21:00 in Tokyo."])
    agent = LightAgent(model=model, tools=servers)
    result = agent.run("What time is it in Tokyo?", result_format="object", trace=True)
    (selection,) = [e["data"] for e in result.trace if e["type"] == "tool_selection"]
    assert selection["tools_total"] == 29
    assert {"get_current_time", "convert_time"} <= set(offered(model))


def call(name: str, **arguments: object) -> dict:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def test_a_follow_up_keeps_the_tools_the_conversation_uses(servers):
    model = ScriptedModel(
        [
            call("get_current_time", timezone="Asia/Tokyo"),
            "21:00 in Tokyo.",
            call("add", a=2, b=3),
            "5.",
            call("get_current_time", timezone="Europe/Paris"),
            "14:00 in Paris.",
        ]
    )
    agent = LightAgent(model=model, tools=servers, session_store=InMemorySessionStore())
    agent.run("What time is it in Tokyo?", session_id="s-1")
    agent.run("Then add 2 and 3 for me", session_id="s-1")
    result = agent.run("and in Paris?", session_id="s-1", result_format="object", trace=True)
    assert result.content == "14:00 in Paris."
    # the time tools were used two turns ago, outside the last messages the ranking reads
    assert {"get_current_time", "add"} <= set(offered(model, 4))
    assert [c["name"] for c in result.tool_calls] == ["get_current_time"]
