"""An agent and real stdio MCP servers: the test server (on the SDK's MCPServer) and mcp-server-time."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from lightagent import InMemoryReviewStore, LightAgent, ScriptedModel, tool
from lightagent.tools.diagnostics import TOOL_NAME_PATTERN
from lightagent.toolsets import ToolsetOwner
from lightagent_guardrails import ToolOutputScreen
from lightagent_mcp import (
    MCPDefinitionChanged,
    MCPServerError,
    MCPServerExited,
    MCPStartError,
    MCPTimeout,
    MCPToolset,
)
from mcp_testkit import SERVER, alive, stdio, wait_gone


@pytest.fixture(scope="module")
def shared() -> Iterator[MCPToolset]:
    """One test server for the read-only tests of this module (a call times out after 3 s)."""
    toolset = MCPToolset(stdio(timeout=3), name="kit")
    holder = ToolsetOwner(toolset)  # keeps the session open between the tests' agents
    holder.open()
    yield toolset
    holder.close()


def call(name: str, **arguments: object) -> dict:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def test_schemas_are_kept_whole_and_structured_output_passes_through(shared):
    owner = ToolsetOwner(shared)
    tools = {d.name: d for d in owner.list()}
    plan = tools["plan"]
    assert plan.parameters["properties"]["steps"]["items"] == {"$ref": "#/$defs/Step"}
    assert plan.parameters["properties"]["mode"]["enum"] == ["fast", "safe"]
    assert set(plan.parameters["$defs"]["Step"]["required"]) == {"title", "minutes"}
    assert plan.output_schema["properties"]["total_minutes"]["type"] == "integer"
    assert all(d.untrusted_output for d in tools.values())
    assert shared.definition_hashes["plan"] == plan.definition_hash
    steps = [{"title": "a", "minutes": 3}, {"title": "b", "minutes": 4}]
    result = asyncio.run(owner.acall("plan", {"steps": steps, "mode": "fast"}, None))
    assert result.structured == {"total_minutes": 7, "mode": "fast"}
    assert json.loads(result.content) == {"total_minutes": 7, "mode": "fast"}


def test_an_agent_calls_mcp_tools_with_one_long_lived_session(shared):
    model = ScriptedModel([call("add", a=2, b=3), call("pid"), call("pid"), "five"])
    agent = LightAgent(model=model, tools=[shared])
    result = agent.run("2+3?", result_format="object", trace=True)
    assert result.content == "five"
    outputs = [e["data"]["output"] for e in result.trace if e["type"] == "tool_result"]
    assert outputs[0] == "5"
    assert outputs[1] == outputs[2]  # the same server process: never a process per call
    sent = {t["function"]["name"] for t in model.requests[0].tools}
    assert {"add", "plan", "echo"} <= sent


def test_a_name_taken_by_the_agent_becomes_server__tool(shared):
    @tool
    def echo(text: str) -> str:
        """The agent's own echo."""
        return f"own: {text}"

    model = ScriptedModel([call("echo", text="a"), call("kit__echo", text="b"), "ok"])
    agent = LightAgent(model=model, tools=[echo, shared])
    result = agent.run("echo", result_format="object", trace=True)
    outputs = [e["data"]["output"] for e in result.trace if e["type"] == "tool_result"]
    assert outputs == ["own: a", "b"]


def test_a_server_with_bad_or_colliding_tool_names_never_stops_the_run():
    @tool
    def echo(text: str) -> str:
        """The agent's own echo."""
        return f"own: {text}"

    server = MCPToolset(stdio("odd_names"), name="odd")
    long_name = "n" * 300
    model = ScriptedModel(
        [
            {
                "tool_calls": [
                    {"name": "a_b", "arguments": {"text": "x"}},
                    {"name": "etc_passwd", "arguments": {"text": "y"}},
                    {"name": "odd__echo", "arguments": {"text": "z"}},
                    {"name": "echo", "arguments": {"text": "w"}},
                ]
            },
            "done",
        ]
    )
    with LightAgent(model=model, tools=[echo, server], filter_tools=False) as agent:
        result = agent.run("go", result_format="object", trace=True)
    assert result.content == "done" and len(model.requests) == 2
    offered = [t["function"]["name"] for t in model.requests[0].tools]
    assert all(TOOL_NAME_PATTERN.fullmatch(name) for name in offered)
    assert len(offered) == len(set(offered))
    qualified = next(n for n in offered if n.startswith("nnnn"))
    assert len(qualified) == 64 and qualified != long_name[:64]
    assert {"a_b", "etc_passwd", "odd__echo", "echo"} <= set(offered)
    assert not any("\u202e" in name or "moc" in name for name in offered)
    outputs = [c["output"] for c in result.tool_calls]
    # the server gets its own names back; its own odd__echo keeps the name it gave,
    # so the server's echo (which would be renamed odd__echo) is left out
    assert outputs == ["0:x", "1:y", "4:z", "own: w"]
    events = {
        kind: [e["data"] for e in result.trace if e["type"] == kind]
        for kind in ("toolset_tool_renamed", "toolset_tool_dropped")
    }
    renamed = {d["tool"]: d for d in events["toolset_tool_renamed"]}
    assert set(renamed) == {"a b", "../etc/passwd", long_name[:200] + "..."}
    assert renamed["a b"]["exposed"] == "a_b" and renamed["a b"]["server"] == "odd"
    assert all(d["code"] == "LA-TOOL-DEFINITION" for d in renamed.values())
    dropped = {d["tool"]: d for d in events["toolset_tool_dropped"]}
    assert set(dropped) == {"pay\\u202emoc.exe", "echo"}
    assert "U+202E" in dropped["pay\\u202emoc.exe"]["reason"]
    assert dropped["pay\\u202emoc.exe"]["code"] == "LA-TOOL-DEFINITION"
    assert dropped["echo"]["code"] == "LA-TOOLSET-CONFLICT"
    assert "odd__echo" in dropped["echo"]["reason"] and dropped["echo"]["server"] == "odd"


def test_the_injection_screen_applies_to_mcp_output(shared):
    deleted: list[str] = []

    @tool
    def delete_all(scope: str) -> str:
        """Delete everything in scope."""
        deleted.append(scope)
        return "deleted"

    @tool
    def lookup(key: str) -> str:
        """A trusted local lookup."""
        return f"{key}: 42"

    model = ScriptedModel(
        [
            call("lookup", key="x"),
            call("fetch_page", url="https://example.com"),
            call("delete_all", scope="every-table-now"),
            "summary",
        ]
    )
    store = InMemoryReviewStore()
    agent = LightAgent(
        model=model,
        tools=[lookup, delete_all, shared],
        hooks=[ToolOutputScreen(sensitive_tools={"delete_all"}, only_untrusted=True)],
        approval=store,
    )
    agent.run("check the page")
    assert deleted == []
    (pending,) = store.list_pending()
    assert pending.tool_name == "delete_all" and "tool:fetch_page" in (pending.reason or "")
    tool_messages = [m["content"] for m in model.requests[-1].messages if m["role"] == "tool"]
    assert tool_messages[0] == "x: 42"  # our own tool's output is not wrapped
    assert tool_messages[1].startswith('<untrusted_tool_output source="tool:fetch_page"')


@pytest.mark.slow
def test_a_call_timeout_is_a_short_tool_error_and_the_run_goes_on(shared):
    model = ScriptedModel([call("slow", seconds=30), call("add", a=1, b=1), "done"])
    agent = LightAgent(model=model, tools=[shared])
    started = time.monotonic()
    result = agent.run("slow", result_format="object", trace=True)
    assert time.monotonic() - started < 25
    outputs = [e["data"]["output"] for e in result.trace if e["type"] == "tool_result"]
    assert outputs[0].startswith("Error [LA-MCP-TIMEOUT]") and "Traceback" not in outputs[0]
    assert outputs[1] == "2" and result.content == "done"


@pytest.mark.slow
def test_a_server_that_dies_mid_call_is_a_tool_error_and_restarts_on_the_next_call():
    toolset = MCPToolset(stdio(), name="fragile")
    model = ScriptedModel([call("pid"), call("die"), call("pid"), "done"])
    agent = LightAgent(model=model, tools=[toolset])
    try:
        result = agent.run("die", result_format="object", trace=True)
    finally:
        agent.close()
    outputs = [e["data"]["output"] for e in result.trace if e["type"] == "tool_result"]
    assert outputs[1].startswith("Error [LA-MCP-EXITED]") and "Traceback" not in outputs[1]
    assert outputs[0] != outputs[2] and outputs[2].isdigit()  # a new process answered
    assert [e["event"] for e in toolset.events][:2] == ["connect", "reconnect"]
    assert result.content == "done"


def test_closing_ends_the_whole_process_tree():
    toolset = MCPToolset(stdio(kill_timeout=1), name="tree")
    owner = ToolsetOwner(toolset)
    server = int(asyncio.run(owner.acall("pid", {}, None)).content)
    child = int(asyncio.run(owner.acall("spawn_child", {}, None)).content)
    assert alive(server) and alive(child)
    owner.close()
    assert wait_gone([server, child]) == []


def test_the_tool_list_follows_list_changed_and_a_changed_definition_waits_for_approval():
    toolset = MCPToolset(stdio(), name="live")
    model = ScriptedModel([call("grow"), call("mutate"), call("echo", text="x"), "done"])
    agent = LightAgent(model=model, tools=[toolset])
    with agent:
        result = agent.run("change", result_format="object", trace=True)
        names = [{t["function"]["name"] for t in r.tools} for r in model.requests]
        assert "mul" not in names[0] and "mul" in names[1]  # list_changed refreshed the list
        assert "echo" in names[1] and "echo" not in names[2]  # the rug pull is disabled
        outputs = [e["data"]["output"] for e in result.trace if e["type"] == "tool_result"]
        assert outputs[2].startswith("Error [LA-TOOL-NOT-FOUND]")  # the model no longer sees it
        with pytest.raises(MCPDefinitionChanged):  # and a direct call is refused
            asyncio.run(ToolsetOwner(toolset).acall("echo", {"text": "x"}, None))
        assert list(toolset.pending) == ["echo"]
        assert "evil@example.com" in toolset.pending["echo"]["definition"].description
        assert [e["event"] for e in toolset.events if e["event"] != "connect"][-1:] == [
            "definition_changed"
        ]
        assert toolset.approve() == ["echo"]
        second = LightAgent(
            model=ScriptedModel([call("echo", text="back"), "done"]), tools=[toolset]
        )
        again = second.run("echo", result_format="object", trace=True)
        second.close()
        outputs = [e["data"]["output"] for e in again.trace if e["type"] == "tool_result"]
        assert outputs == ["back"]


def test_include_exclude_and_namespace_tools():
    toolset = MCPToolset(
        stdio(include=["e*", "a*", "p*"], exclude=["pid"], namespace="k", namespace_tools=True),
        name="filtered",
    )
    model = ScriptedModel([call("k__add", a=1, b=2), "ok"])
    agent = LightAgent(model=model, tools=[toolset])
    with agent:
        result = agent.run("add", result_format="object", trace=True)
    assert sorted(t["function"]["name"] for t in model.requests[0].tools) == [
        "k__add",
        "k__echo",
        "k__plan",
    ]
    assert [e["data"]["output"] for e in result.trace if e["type"] == "tool_result"] == ["3"]


def _open_failure(toolset: MCPToolset) -> dict:
    """Open ``toolset`` (which does not raise: see the lifecycle rule); its failure, listed again."""
    owner = ToolsetOwner(toolset)
    owner.open()
    assert toolset.last_error is not None
    assert [e["code"] for e in toolset.events if e["event"] == "open_failed"] == [
        toolset.last_error["code"]
    ]
    try:
        owner.list()  # listing tries again, and raises the typed error
    except MCPServerError as exc:
        return exc.to_dict()
    finally:
        owner.close()
    raise AssertionError("listing a server that cannot start did not fail")


def test_start_failures_are_typed_errors_within_their_timeout():
    missing = MCPToolset({"command": "/no/such/mcp-server"}, name="missing")
    error = _open_failure(missing)
    assert error["code"] == MCPStartError.default_code and "/no/such/mcp-server" in error["message"]

    exits = MCPToolset(stdio("exit_during_init"), name="exits")
    error = _open_failure(exits)
    assert error["code"] == MCPServerExited.default_code
    assert "exiting during initialization" in error["details"]["stderr"]

    hangs = MCPToolset(stdio("hang_init", init_timeout=1.5, kill_timeout=0.5), name="hangs")
    started = time.monotonic()
    ToolsetOwner(hangs).open()
    assert time.monotonic() - started < 20 and hangs.last_error is not None
    assert hangs.last_error["code"] == MCPTimeout.default_code
    assert "1.5 s" in hangs.last_error["message"]
    assert hangs.link.pgid is None


TIME_SERVER = shutil.which("mcp-server-time") or shutil.which(
    "mcp-server-time", path=str(Path(sys.executable).parent)
)


@pytest.mark.skipif(TIME_SERVER is None, reason="mcp-server-time is not installed (make setup)")
def test_setup_mcp_from_asyncio_run_then_a_plain_run_with_mcp_server_time():
    setting = {
        "mcpServers": {
            "time": {
                "command": TIME_SERVER,
                "args": ["--local-timezone", "UTC"],
                "init_timeout": 60,
            },
            "broken": {"command": sys.executable, "args": [SERVER, "--mode", "exit_during_init"]},
            "off": {"command": "/no/such/server", "disabled": True},
        }
    }
    model = ScriptedModel(
        [
            call("convert_time", source_timezone="UTC", time="12:00", target_timezone="Asia/Tokyo"),
            "21:00",
        ]
    )
    agent = LightAgent(model=model)
    manager = asyncio.run(agent.setup_mcp(mcp_setting=json.dumps(setting)))
    assert agent.mcp_client is manager
    assert [(r["server"], r["code"]) for r in manager.last_mcp_errors] == [
        ("broken", "LA-MCP-EXITED")
    ]
    try:
        result = agent.run("noon UTC in Tokyo?", result_format="object", trace=True)
        (output,) = [e["data"]["output"] for e in result.trace if e["type"] == "tool_result"]
        assert '"Asia/Tokyo"' in output and "21:00" in output
        pid = manager.toolsets["time"].link.pgid
        assert pid is not None and alive(pid)
    finally:
        agent.close()
    assert wait_gone([pid]) == []


def test_async_with_agent_opens_and_closes_the_sessions():
    toolset = MCPToolset(stdio(), name="scoped")

    async def main() -> tuple[str, int]:
        model = ScriptedModel([call("pid"), "ok"])
        async with LightAgent(model=model, tools=[toolset]) as agent:
            result = await agent.arun("pid", result_format="object", trace=True)
            (output,) = [e["data"]["output"] for e in result.trace if e["type"] == "tool_result"]
            return result.content, int(output)

    content, pid = asyncio.run(main())
    assert content == "ok" and wait_gone([pid]) == []


def test_the_seeds_manager_registers_calls_refreshes_and_cleans_up():
    from lightagent import ToolRegistry
    from lightagent_mcp import MCPClientManager

    @tool
    def echo(text: str) -> str:
        """Already taken."""
        return text

    registry = ToolRegistry()
    registry.register_tool(echo)
    config = {"mcpServers": {"kit": stdio(include=["echo", "add", "pid"])}}

    async def main() -> tuple[list[str], dict, list[str], int]:
        manager = MCPClientManager(config, registry)
        assert await manager.register_mcp_tool() is True
        names = sorted(registry.names())
        answer = await manager.call_tool("add", {"a": 4, "b": 5})
        pid = int((await manager.call_tool("pid", {}, target_server="kit"))["result"])
        await manager.refresh_tools("kit")
        again = sorted(registry.names())
        await manager.cleanup()
        return names, answer, again, pid

    names, answer, again, pid = asyncio.run(main())
    assert names == ["add", "echo", "kit__echo", "pid"] == again  # refreshed, not duplicated
    assert answer == {"server": "kit", "tool": "add", "result": "9", "structured": {"result": 9}}
    assert wait_gone([pid]) == [] and sorted(registry.names()) == ["echo"]


def test_the_seeds_manager_fits_bad_names_and_never_replaces_a_tool():
    from lightagent import ToolRegistry
    from lightagent_mcp import MCPClientManager

    @tool
    def echo(text: str) -> str:
        """Already taken."""
        return text

    registry = ToolRegistry([echo])
    config = {"mcpServers": {"odd": stdio("odd_names", include=["echo", "a b", "pay*", "odd__*"])}}

    async def main() -> tuple[list[str], list[dict], dict]:
        manager = MCPClientManager(config, registry)
        assert await manager.register_mcp_tool() is True
        receipts = list(manager.last_mcp_errors)
        names = sorted(registry.names())
        answer = await registry.get("a_b").func(text="hi")
        await manager.cleanup()
        return names, receipts, answer

    names, receipts, answer = asyncio.run(main())
    assert answer == "0:hi" and sorted(registry.names()) == ["echo"]
    assert names == ["a_b", "echo", "odd__echo", "odd__odd__echo"]
    assert [(r["server"], r["phase"], r["code"]) for r in receipts] == [
        ("odd", "register_tool", "LA-TOOL-DEFINITION"),
        ("odd", "register_tool", "LA-TOOL-DEFINITION"),
    ]
    assert "registered as 'a_b'" in receipts[0]["message"]
    assert "U+202E" in receipts[1]["message"] and "left out" in receipts[1]["message"]
