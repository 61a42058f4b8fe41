"""MCP tool results as the model reads them (through the agent and the loopback model) and as
the trace records them; argument checks that follow ``$ref`` into ``$defs``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from lightagent import LightAgent, OpenAIModel
from lightagent.toolsets import ToolsetOwner
from lightagent_contracts.loopback import LoopbackServer
from lightagent_guardrails import ToolOutputScreen
from lightagent_mcp import MCPConfigError, MCPToolset
from lightagent_mcp.content import DEFAULT_MAX_OUTPUT_CHARS
from mcp_testkit import stdio

BIG_CHARS = 300_000


@pytest.fixture(scope="module")
def content() -> Iterator[MCPToolset]:
    """One test server in ``--mode content`` for the module (its session kept open)."""
    toolset = MCPToolset(stdio("content"), name="content")
    holder = ToolsetOwner(toolset)
    holder.open()
    yield toolset
    holder.close()


def _run(
    srv: LoopbackServer, toolset: MCPToolset, tool: str, arguments: Any = None, **agent: Any
) -> Any:
    """The agent calls ``tool`` once, then answers; (tool message sent back, tool_result event)."""
    srv.reply({"tool_calls": [{"name": tool, "arguments": arguments or {}}]}, "ok")
    model = OpenAIModel("m", base_url=srv.base_url, api_key="k", max_retry=0)
    agent = LightAgent(model=model, tools=[toolset], **agent)
    result = agent.run("go", result_format="object", trace=True)
    assert result.content == "ok"
    sent = [m for m in srv.requests[-1]["messages"] if m["role"] == "tool"]
    events = [e["data"] for e in result.trace if e["type"] == "tool_result"]
    return sent[-1]["content"], events[-1]


def test_a_bad_enum_inside_defs_is_refused_before_the_call(loopback_server, content):
    text, event = _run(loopback_server, content, "paint", {"job": {"shade": "green"}})
    offered = {t["function"]["name"]: t for t in loopback_server.requests[0]["tools"]}
    schema = offered["paint"]["function"]["parameters"]
    assert schema["properties"]["job"] == {"$ref": "#/$defs/Paint"}  # sent whole
    assert event["error"]["code"] == "LA-TOOL-ARGS"  # the server's own refusal is LA-TOOL
    assert '`job.shade`: "green" is not one of: "light", "dark"' in text
    text, event = _run(loopback_server, content, "paint", {"job": {"shade": "dark"}})
    assert event["error"] is None and text == "painted dark x1"


def test_content_for_the_user_only_is_kept_out_of_the_model_request(loopback_server, content):
    text, event = _run(loopback_server, content, "report")
    assert text == "summary: 3 items, 42 EUR\nplain note"
    assert "USER-ONLY" not in json.dumps(loopback_server.requests[-1])
    meta = event["metadata"]
    assert meta["user_content"] == [0]
    assert meta["content"][0]["text"] == "USER-ONLY: your invoice is attached"
    assert meta["priority"] == [{"index": 0, "priority": 0.2}, {"index": 1, "priority": 0.9}]


def test_a_result_only_for_the_user_tells_the_model_so(loopback_server, content):
    text, event = _run(loopback_server, content, "user_only")
    assert text == "[1 content block(s) shown to the user only]"
    assert "USER-ONLY" not in json.dumps(loopback_server.requests[-1])
    assert event["metadata"]["content"][0]["text"] == "USER-ONLY: a receipt"


def test_structured_content_is_the_text_without_text_and_is_in_the_event(loopback_server, content):
    text, event = _run(loopback_server, content, "weather")
    assert json.loads(text) == {"city": "Oslo", "temp": -3}
    assert event["structured"] == {"city": "Oslo", "temp": -3}


def test_the_event_keeps_structured_content_when_a_screen_rewrites_the_text(
    loopback_server, content
):
    screen = ToolOutputScreen(only_untrusted=True)
    text, event = _run(loopback_server, content, "report", hooks=[screen])
    assert text.startswith("<untrusted_tool_output") and "USER-ONLY" not in text
    assert event["metadata"]["user_content"] == [0]
    text, event = _run(loopback_server, content, "weather", hooks=[screen])
    assert event["structured"] == {"city": "Oslo", "temp": -3}


def test_a_large_output_is_cut_at_the_default_limit_with_a_typed_marker(loopback_server, content):
    text, event = _run(loopback_server, content, "big")
    head, marker = text[:DEFAULT_MAX_OUTPUT_CHARS], text[DEFAULT_MAX_OUTPUT_CHARS:]
    assert head == ("0123456789" * (BIG_CHARS // 10))[:DEFAULT_MAX_OUTPUT_CHARS]
    assert marker == (
        f"\n[LA-MCP-TRUNCATED: showed {DEFAULT_MAX_OUTPUT_CHARS} of {BIG_CHARS} characters; "
        f"the server's output limit is max_output_chars={DEFAULT_MAX_OUTPUT_CHARS}]"
    )
    meta = event["metadata"]
    assert meta["truncated"] is True and meta["original_chars"] == BIG_CHARS
    assert meta["content"][0]["text"]["omitted_chars"] == BIG_CHARS  # no 300 KB in the trace
    assert len(json.dumps(event)) < 2 * DEFAULT_MAX_OUTPUT_CHARS + 10_000


def test_the_limit_is_set_per_server_in_mcp_servers(loopback_server):
    doc = {"mcpServers": {"small": {**stdio("content"), "max_output_chars": 1000}}}
    (toolset,) = MCPToolset.from_settings(doc)
    holder = ToolsetOwner(toolset)
    holder.open()
    try:
        text, event = _run(loopback_server, toolset, "big")
    finally:
        holder.close()
    assert text.startswith("0123456789" * 100 + "\n[LA-MCP-TRUNCATED: showed 1000 of 300000")
    assert event["metadata"]["original_chars"] == BIG_CHARS


@pytest.mark.parametrize("bad", [0, -5, "100", 1.5, True])
def test_a_bad_output_limit_is_a_typed_config_error(bad):
    with pytest.raises(MCPConfigError) as info:
        MCPToolset.from_settings({"mcpServers": {"s": {**stdio(), "max_output_chars": bad}}})
    assert info.value.code == "LA-MCP-CONFIG" and "max_output_chars" in info.value.message


def test_a_resource_link_reads_as_name_uri_type_and_description(loopback_server, content):
    text, _ = _run(loopback_server, content, "link")
    assert text == (
        "[resource link: report.csv <file:///data/report.csv> (text/csv, 2048 bytes)] "
        "The monthly report"
    )


def test_an_image_is_a_placeholder_for_the_model_and_whole_in_the_event(loopback_server, content):
    text, event = _run(loopback_server, content, "picture")
    assert text == "a pixel\n[image: image/png, 69 bytes, not shown to the model]"
    assert event["metadata"]["content"][1]["mimeType"] == "image/png"


def test_with_media_on_an_image_reaches_the_model_as_a_content_part(loopback_server):
    toolset = MCPToolset(stdio("content", media=["image"]), name="seeing")
    holder = ToolsetOwner(toolset)
    holder.open()
    try:
        text, event = _run(loopback_server, toolset, "picture")
    finally:
        holder.close()
    assert text == "a pixel\n[image: image/png, 69 bytes, attached for the model]"
    messages = loopback_server.requests[-1]["messages"]
    tool_at = max(i for i, m in enumerate(messages) if m["role"] == "tool")
    follow = messages[tool_at + 1]
    assert follow["role"] == "user"
    intro, image = follow["content"]
    assert intro["type"] == "text" and messages[tool_at]["tool_call_id"] in intro["text"]
    assert image["type"] == "image_url"
    assert image["image_url"]["url"].startswith("data:image/png;base64,iVBOR")
    assert "model_parts" not in event["metadata"]  # the trace keeps the (bounded) blocks only


def test_a_blocked_result_sends_no_media(loopback_server):
    from lightagent.hooks import HookDecision

    def block(ctx: Any) -> Any:
        if ctx.phase == "after_tool_result":
            return HookDecision.block("not for the model")
        return HookDecision()

    toolset = MCPToolset(stdio("content", media=["image"]), name="seeing")
    holder = ToolsetOwner(toolset)
    holder.open()
    try:
        text, _ = _run(loopback_server, toolset, "picture", hooks=[block])
    finally:
        holder.close()
    assert "withheld" in text
    assert not [
        m for m in loopback_server.requests[-1]["messages"] if isinstance(m["content"], list)
    ]


def test_media_lists_only_image_and_audio():
    with pytest.raises(MCPConfigError):
        MCPToolset(stdio("content", media=["video"]), name="bad")
