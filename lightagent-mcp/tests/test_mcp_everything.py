"""The npm reference server ``server-everything``: with sampling, elicitation and roots on it
shows its full tool list, and its requests are answered (or refused) as configured."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from lightagent import OpenAIModel, ToolCallContext
from lightagent.toolsets import ToolsetOwner
from lightagent_contracts.loopback import LoopbackServer
from lightagent_mcp import MCPToolset
from reference_servers import node_server

pytestmark = pytest.mark.slow

EVERYTHING = "@modelcontextprotocol/server-everything"
ASKING = {"trigger-sampling-request", "trigger-elicitation-request", "get-roots-list"}


def _toolset(**extra: Any) -> MCPToolset:
    command, *args = node_server(EVERYTHING, "stdio")
    settings = {"command": command, "args": args, "init_timeout": 60, "timeout": 60, **extra}
    return MCPToolset(settings, name="everything")


def _names(toolset: MCPToolset) -> set[str]:
    owner = ToolsetOwner(toolset)
    try:
        return {d.name for d in owner.list()}
    finally:
        owner.close()


def test_without_client_features_the_asking_tools_are_hidden():
    assert not _names(_toolset()) & ASKING


def test_with_sampling_elicitation_and_roots_on_the_full_tool_list_shows(tmp_path):
    names = _names(_toolset(sampling=True, elicitation=True, roots=[str(tmp_path)]))
    assert names >= ASKING


def test_its_sampling_request_is_answered_by_our_model_and_its_roots_are_ours(tmp_path):
    with LoopbackServer() as srv:
        srv.reply({"content": "pong", "usage": {"prompt_tokens": 5, "completion_tokens": 1}})
        model = OpenAIModel("m", base_url=srv.base_url, api_key="k", max_retry=0)
        command, *args = node_server(EVERYTHING, "stdio")
        toolset = MCPToolset(
            {
                "command": command,
                "args": args,
                "init_timeout": 60,
                "sampling": {"max_tokens": 16},
                "roots": [str(tmp_path)],
            },
            name="everything",
            sampling_model=model,
        )
        owner = ToolsetOwner(toolset)

        async def ask() -> tuple[Any, Any]:
            try:
                await owner.alist()
                sampled = await owner.acall(
                    "trigger-sampling-request",
                    {"prompt": "ping", "maxTokens": 100},
                    ToolCallContext(),
                )
                return sampled, await owner.acall("get-roots-list", {}, ToolCallContext())
            finally:
                await owner.aclose()

        sampled, roots = asyncio.run(ask())
        srv.assert_exhausted()
        assert srv.requests[0]["max_tokens"] == 16
    assert '"text": "pong"' in sampled.content
    assert tmp_path.resolve().as_uri() in roots.content
    kinds = [e["event"] for e in toolset.events]
    assert "sampling" in kinds and "roots" in kinds
    assert json.dumps(toolset.events)  # events stay JSON-safe


def test_its_elicitation_reaches_our_reviewer_and_a_missing_one_is_refused():
    asked: list[Any] = []

    def reviewer(request: Any) -> dict[str, Any]:
        asked.append(request)
        return {"name": "Ada Lovelace", "check": True}

    command, *args = node_server(EVERYTHING, "stdio")
    settings = {"command": command, "args": args, "init_timeout": 60, "elicitation": True}
    answered = MCPToolset(settings, name="everything", reviewer=reviewer)
    refused = MCPToolset(settings, name="everything")

    async def ask(toolset: MCPToolset) -> Any:
        owner = ToolsetOwner(toolset)
        try:
            await owner.alist()
            return await owner.acall("trigger-elicitation-request", {}, ToolCallContext())
        finally:
            await owner.aclose()

    got = asyncio.run(ask(answered))
    assert "Ada Lovelace" in str(got.content)
    assert asked[0].action == "mcp_elicitation"
    assert "name" in asked[0].arguments["requested_schema"]["properties"]
    failed = asyncio.run(ask(refused))  # the server reports our refusal in its result
    assert failed.is_error and "LA-MCP-ELICITATION-REFUSED" in str(failed.content)
    assert [e["status"] for e in refused.events if e["event"] == "elicitation"] == ["refused"]
