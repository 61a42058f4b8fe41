"""Real third-party servers: the npm reference servers (filesystem, memory, sequential
thinking) and PyPI ones in venvs of their own (git; sqlite on the 1.x ``mcp`` SDK)."""

from __future__ import annotations

import asyncio
import json
import subprocess
from typing import Any

import pytest
from lightagent import ToolCallContext
from lightagent.toolsets import ToolsetOwner
from lightagent_mcp import MCPToolset
from reference_servers import node_server, py_server

pytestmark = pytest.mark.slow


def _use(toolset: MCPToolset, *calls: tuple[str, dict[str, Any]]) -> tuple[set[str], list[Any]]:
    """(the tool names, each call's result) on one open session."""
    owner = ToolsetOwner(toolset)

    async def body() -> tuple[set[str], list[Any]]:
        try:
            names = {d.name for d in await owner.alist()}
            results = [await owner.acall(n, a, ToolCallContext()) for n, a in calls]
            return names, results
        finally:
            await owner.aclose()

    return asyncio.run(body())


def _node(package: str, *args: str, **settings: Any) -> MCPToolset:
    command, *argv = node_server(f"@modelcontextprotocol/{package}", *args)
    return MCPToolset(
        {"command": command, "args": argv, "init_timeout": 60, **settings}, name=package
    )


def test_server_filesystem_reads_a_directory_given_as_a_root(tmp_path):
    (tmp_path / "notes.txt").write_text("hello from the roots", encoding="utf-8")
    # no directory on the command line: the server works only in the roots we give it
    toolset = _node("server-filesystem", roots=[str(tmp_path)])
    owner = ToolsetOwner(toolset)

    async def body() -> tuple[str, str]:
        try:
            await owner.alist()
            allowed = ""
            for _ in range(500):  # the server applies our roots after its initialization
                allowed = (
                    await owner.acall("list_allowed_directories", {}, ToolCallContext())
                ).content
                if str(tmp_path.resolve()) in allowed:
                    break
            read = await owner.acall(
                "read_text_file", {"path": str(tmp_path / "notes.txt")}, ToolCallContext()
            )
            return allowed, read.content
        finally:
            await owner.aclose()

    allowed, text = asyncio.run(body())
    assert str(tmp_path.resolve()) in allowed
    assert text == "hello from the roots"
    assert any(e["event"] == "roots" for e in toolset.events)


def test_server_memory_keeps_what_it_is_told(tmp_path):
    toolset = _node("server-memory", env={"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")})
    entity = {"name": "Ada", "entityType": "person", "observations": ["wrote the first program"]}
    names, (created, graph) = _use(
        toolset, ("create_entities", {"entities": [entity]}), ("read_graph", {})
    )
    assert {"create_entities", "read_graph", "search_nodes"} <= names
    assert "Ada" in created.content
    assert json.loads(graph.content)["entities"][0]["observations"] == ["wrote the first program"]


def test_server_sequential_thinking_takes_a_thought():
    toolset = _node("server-sequential-thinking")
    thought = {
        "thought": "first",
        "thoughtNumber": 1,
        "totalThoughts": 2,
        "nextThoughtNeeded": True,
    }
    names, (result,) = _use(toolset, ("sequentialthinking", thought))
    assert names == {"sequentialthinking"}
    assert json.loads(result.content)["thoughtNumber"] == 1


def test_mcp_server_git_in_its_own_venv(tmp_path):
    command = py_server("mcp-server-git")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "a.txt").write_text("x", encoding="utf-8")
    toolset = MCPToolset(
        {"command": command, "args": ["--repository", str(tmp_path)], "init_timeout": 60},
        name="git",
    )
    names, (status,) = _use(toolset, ("git_status", {"repo_path": str(tmp_path)}))
    assert {"git_status", "git_log", "git_diff"} <= names
    assert "a.txt" in status.content


def test_mcp_server_sqlite_on_the_1x_sdk_in_its_own_venv(tmp_path):
    command = py_server("mcp-server-sqlite")
    toolset = MCPToolset(
        {"command": command, "args": ["--db-path", str(tmp_path / "t.db")], "init_timeout": 60},
        name="sqlite",
    )
    names, (_, _, rows) = _use(
        toolset,
        ("create_table", {"query": "CREATE TABLE t (n INTEGER)"}),
        ("write_query", {"query": "INSERT INTO t VALUES (42)"}),
        ("read_query", {"query": "SELECT n FROM t"}),
    )
    assert {"read_query", "write_query", "list_tables"} <= names
    assert "42" in rows.content
