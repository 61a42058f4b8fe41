"""Resources, prompts, subscriptions and task-only tools against the real test server.

The server (``--mode resources``) has a text resource, a binary one, a ``notes://{id}``
template, a ``review`` prompt with arguments and resource subscriptions; ``--mode tasks``
adds a tool it marks task-only.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Iterator

import pytest
from lightagent import LightAgent
from lightagent.toolsets import ToolsetOwner
from lightagent_mcp import (
    MCPClientManager,
    MCPConfigError,
    MCPProtocolError,
    MCPServerExited,
    MCPToolset,
    parse_server,
)
from mcp_testkit import HttpServer, stdio

LOGO = b"\x89PNG\r\n\x1a\n" + bytes(range(24))


@pytest.fixture(scope="module")
def kit() -> Iterator[MCPToolset]:
    settings = stdio("resources", resources=True, prompts=True, include=["echo", "touch_note"])
    toolset = MCPToolset(settings, name="kit")
    owner = ToolsetOwner(toolset)
    owner.open()
    yield toolset
    owner.close()


def call(name: str, **arguments: object) -> dict:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def offered(request: dict) -> list[str]:
    return sorted(t["function"]["name"] for t in request.get("tools", []))


def test_resources_and_templates_are_listed_and_read_from_code(kit):
    resources = asyncio.run(kit.list_resources())
    assert {r["uri"]: r.get("mime_type") for r in resources} == {
        "notes://readme": "text/plain",
        "files://logo.png": "image/png",
    }
    templates = asyncio.run(kit.list_resource_templates())
    assert [t["uri_template"] for t in templates] == ["notes://{id}"]
    (text,) = asyncio.run(kit.read_resource("notes://readme"))
    assert text == {
        "uri": "notes://readme",
        "mime_type": "text/plain",
        "text": "The notes of the test server.",
    }
    (note,) = asyncio.run(kit.read_resource("notes://2"))
    assert note["text"] == "second note"
    (blob,) = asyncio.run(kit.read_resource("files://logo.png"))
    assert blob["blob"] == LOGO and blob["size"] == 32 and blob["mime_type"] == "image/png"


def test_an_unknown_resource_is_a_typed_protocol_error(kit):
    with pytest.raises(MCPProtocolError) as caught:
        asyncio.run(kit.read_resource("nothing://here"))
    assert caught.value.code == "LA-MCP-PROTOCOL"
    assert "nothing://here" in caught.value.message
    with pytest.raises(Exception) as empty:
        asyncio.run(kit.read_resource(""))
    assert getattr(empty.value, "code", None) == "LA-TOOL-ARGS"


def test_prompts_are_listed_and_filled_in_from_code(kit):
    (review,) = asyncio.run(kit.list_prompts())
    assert review["name"] == "review"
    assert [(a["name"], a["required"]) for a in review["arguments"]] == [
        ("code", True),
        ("style", False),
    ]
    prompt = asyncio.run(kit.get_prompt("review", {"code": "x = 1", "style": "long"}))
    assert prompt["messages"] == [{"role": "user", "content": "Review this code (long):\nx = 1"}]
    with pytest.raises(MCPProtocolError):
        asyncio.run(kit.get_prompt("no_such_prompt"))
    with pytest.raises(Exception) as bad:
        asyncio.run(kit.get_prompt("review", {"code": 1}))  # type: ignore[dict-item]
    assert getattr(bad.value, "code", None) == "LA-TOOL-ARGS"


def test_a_subscription_delivers_resource_updated(kit):
    seen: list[str] = []
    arrived = threading.Event()

    def updated(uri: str) -> None:
        seen.append(uri)
        arrived.set()

    asyncio.run(kit.subscribe_resource("notes://7", updated))
    owner = ToolsetOwner(kit)
    result = asyncio.run(owner.acall("touch_note", {"id": "7", "text": "new"}, None))
    assert result.content == "touched"
    assert arrived.wait(30), "no notifications/resources/updated arrived"
    assert seen == ["notes://7"]
    assert any(e["event"] == "resource_updated" and e["uri"] == "notes://7" for e in kit.events)
    (note,) = asyncio.run(kit.read_resource("notes://7"))
    assert note["text"] == "new"


def test_subscriptions_are_sent_again_after_the_server_restarts():
    toolset = MCPToolset(stdio("resources"), name="kit")
    owner = ToolsetOwner(toolset)
    owner.open()
    try:
        arrived = threading.Event()
        asyncio.run(toolset.subscribe_resource("notes://3", lambda uri: arrived.set()))
        asyncio.run(toolset.subscribe_resource("notes://4"))
        asyncio.run(toolset.unsubscribe_resource("notes://4"))
        with pytest.raises(MCPServerExited):
            asyncio.run(owner.acall("die", {}, None))
        # the reconnect of this read sends the subscriptions again before the read
        asyncio.run(toolset.list_resources())
        (again,) = [e for e in toolset.events if e["event"] == "resubscribed"]
        assert again["uris"] == ["notes://3"]
        asyncio.run(owner.acall("touch_note", {"id": "3", "text": "x"}, None))
        assert arrived.wait(30), "the subscription did not survive the restart"
    finally:
        owner.close()


def test_a_server_without_subscriptions_refuses_with_a_typed_error():
    toolset = MCPToolset(stdio(), name="plain")
    owner = ToolsetOwner(toolset)
    owner.open()
    try:
        with pytest.raises(MCPProtocolError, match="does not offer resource subscriptions"):
            asyncio.run(toolset.subscribe_resource("notes://1"))
    finally:
        owner.close()


def test_the_model_reads_resources_and_prompts_through_the_opt_in_tools(kit, loopback_server):
    loopback_server.reply(
        call("resources_list"),
        {
            "tool_calls": [
                {"name": "resources_read", "arguments": {"uri": "notes://1"}},
                {"name": "resources_read", "arguments": {"uri": "files://logo.png"}},
            ]
        },
        {
            "tool_calls": [
                {
                    "name": "prompts_get",
                    "arguments": {"name": "review", "arguments": {"code": "y = 2"}},
                }
            ]
        },
        "done",
    )
    agent = LightAgent(model="gpt-4.1", api_key="k", base_url=loopback_server.base_url, tools=[kit])
    assert agent.run("read the notes") == "done"
    first, second, third, fourth = loopback_server.requests
    names = offered(first)
    assert {"resources_list", "resources_read", "prompts_list", "prompts_get"} <= set(names)
    assert "echo" in names
    listing = json.loads(second["messages"][-1]["content"])
    assert {r["uri"] for r in listing["resources"]} == {"notes://readme", "files://logo.png"}
    assert listing["resource_templates"][0]["uri_template"] == "notes://{id}"
    note, logo = [m["content"] for m in third["messages"] if m["role"] == "tool"][-2:]
    assert note == "first note"
    assert logo == "[resource: files://logo.png (image/png, 32 bytes)]"
    prompt = fourth["messages"][-1]["content"]
    assert prompt == "user: Review this code (short):\ny = 2"


def test_a_resource_read_by_the_model_is_cut_at_max_output_chars():
    toolset = MCPToolset(stdio("resources", resources=True, max_output_chars=9), name="kit")
    owner = ToolsetOwner(toolset)
    try:
        result = asyncio.run(owner.acall("resources_read", {"uri": "notes://readme"}, None))
    finally:
        owner.close()
    assert result.content.startswith("The notes\n[LA-MCP-TRUNCATED: showed 9 of 29 characters")
    assert result.metadata["truncated"] is True and result.metadata["original_chars"] == 29


def test_without_the_opt_in_no_resource_or_prompt_tool_is_offered(loopback_server):
    loopback_server.reply("ok")
    toolset = MCPToolset(stdio("resources"), name="kit")
    with LightAgent(
        model="gpt-4.1", api_key="k", base_url=loopback_server.base_url, tools=[toolset]
    ) as agent:
        assert agent.run("hi") == "ok"
        assert asyncio.run(toolset.list_resources())  # still usable from code
    names = offered(loopback_server.requests[0])
    assert "echo" in names
    assert not [n for n in names if n.startswith(("resources_", "prompts_"))]


def test_two_servers_with_resources_get_namespaced_tools(loopback_server):
    loopback_server.reply(call("b__resources_read", uri="notes://2"), "ok")
    one = MCPToolset(stdio("resources", resources=True, include=["echo"]), name="a")
    two = MCPToolset(stdio("resources", resources=True, include=["echo"]), name="b")
    with LightAgent(
        model="gpt-4.1", api_key="k", base_url=loopback_server.base_url, tools=[one, two]
    ) as agent:
        result = agent.run("read", result_format="object", trace=True)
    names = offered(loopback_server.requests[0])
    assert {"a__resources_read", "b__resources_read", "a__resources_list"} <= set(names)
    assert "resources_read" not in names and "prompts_get" not in names
    outputs = [e["data"]["output"] for e in result.trace if e["type"] == "tool_result"]
    assert outputs == ["second note"]


def test_task_only_tools_are_not_offered_and_say_why(loopback_server, caplog):
    loopback_server.reply("ok")
    toolset = MCPToolset(stdio("tasks"), name="kit")
    with caplog.at_level(logging.WARNING, logger="lightagent.mcp"):
        with LightAgent(
            model="gpt-4.1", api_key="k", base_url=loopback_server.base_url, tools=[toolset]
        ) as agent:
            result = agent.run("research", result_format="object", trace=True)
    assert result.content == "ok"
    (dropped,) = [e["data"] for e in result.trace if e["type"] == "toolset_tool_dropped"]
    assert dropped["tool"] == "research" and dropped["toolset"] == "kit"
    assert "taskSupport: required" in dropped["reason"]
    names = offered(loopback_server.requests[0])
    assert "echo" in names and "research" not in names
    assert "taskSupport: required" in toolset.withheld["research"]
    assert [e["tool"] for e in toolset.events if e["event"] == "tool_withheld"] == ["research"]
    warned = [
        r.getMessage() for r in caplog.records if "'research' is not offered" in r.getMessage()
    ]
    assert len(warned) == 1


def test_a_task_only_tool_called_by_name_is_not_found_never_a_server_error():
    async def scenario() -> None:
        async with MCPClientManager({"mcpServers": {"kit": stdio("tasks")}}) as manager:
            with pytest.raises(Exception) as caught:
                await manager.call_tool("research", {"topic": "x"})
            assert getattr(caught.value, "code", None) == "LA-TOOL-NOT-FOUND"
            assert (await manager.call_tool("echo", {"text": "hi"}))["result"] == "hi"

    asyncio.run(scenario())


def test_the_manager_reaches_resources_and_prompts_of_its_servers():
    settings = {"mcpServers": {"plain": stdio(), "kit": stdio("resources")}}

    async def scenario() -> None:
        async with MCPClientManager(settings) as manager:
            listed = await manager.list_resources()
            assert listed["plain"] == []
            assert {r["uri"] for r in listed["kit"]} == {"notes://readme", "files://logo.png"}
            templates = await manager.list_resource_templates("kit")
            assert [t["uri_template"] for t in templates["kit"]] == ["notes://{id}"]
            read = await manager.read_resource("notes://1")
            assert read["server"] == "kit" and read["contents"][0]["text"] == "first note"
            assert [r["server"] for r in manager.last_mcp_errors] == ["plain"]
            prompt = await manager.get_prompt("review", {"code": "z"}, server_name="kit")
            assert prompt["server"] == "kit" and "z" in prompt["messages"][0]["content"]
            assert (await manager.list_prompts())["kit"][0]["name"] == "review"
            with pytest.raises(MCPProtocolError) as caught:
                await manager.read_resource("nothing://x")
            assert {r["server"] for r in caught.value.details["errors"]} == {"plain", "kit"}
            with pytest.raises(MCPConfigError):
                await manager.list_prompts("nope")

    asyncio.run(scenario())


def test_the_opt_in_settings_are_checked():
    assert parse_server("kit", {"command": "x", "resources": True, "prompts": True}).prompts
    assert not parse_server("kit", {"command": "x"}).resources
    with pytest.raises(MCPConfigError, match=r"mcpServers\.kit\.resources"):
        parse_server("kit", {"command": "x", "resources": "yes"})


@pytest.mark.parametrize("transport", ["http", "sse"])
def test_resources_prompts_and_subscriptions_over_remote_transports(transport, token_env):
    server = HttpServer(transport, mode="resources")
    server.start()
    toolset = MCPToolset(server.settings(resources=True), name="remote")
    owner = ToolsetOwner(toolset)
    try:
        owner.open()
        assert "resources_read" in {d.name for d in owner.list()}
        (blob,) = asyncio.run(toolset.read_resource("files://logo.png"))
        assert blob["blob"] == LOGO
        assert asyncio.run(toolset.get_prompt("review", {"code": "q"}))["messages"]
        arrived = threading.Event()
        asyncio.run(toolset.subscribe_resource("notes://5", lambda uri: arrived.set()))
        asyncio.run(owner.acall("touch_note", {"id": "5", "text": "y"}, None))
        assert arrived.wait(30)
    finally:
        owner.close()
        server.stop()
