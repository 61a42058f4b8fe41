"""Sampling, elicitation and roots: what a server may ask of us, each opt-in per server.

The server is the test server's ``--mode client`` (its tools ask back and report what they
got); the model is the loopback OpenAI server through the real ``openai`` SDK.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from lightagent import LightAgent, OpenAIModel
from lightagent_contracts.loopback import LoopbackServer
from lightagent_mcp import MCPConfigError, MCPToolset, parse_server
from mcp_testkit import stdio


def _agent(srv: LoopbackServer, **settings: Any) -> tuple[LightAgent, MCPToolset]:
    """An agent on the loopback model with the client-mode server; sampling uses the agent's model."""
    model = OpenAIModel("m", base_url=srv.base_url, api_key="k", max_retry=0)
    agent = LightAgent(model=model)
    reviewer = settings.pop("reviewer", None)
    toolset = MCPToolset(
        stdio("client", **settings), name="asks", sampling_model=agent, reviewer=reviewer
    )
    agent.add_toolset(toolset)
    return agent, toolset


def _call(agent: LightAgent) -> tuple[str, list]:
    """One run (scripted by :func:`_script`): (the last tool output, the trace)."""
    result = agent.run("go", result_format="object", trace=True)
    outputs = [e["data"]["output"] for e in result.trace if e["type"] == "tool_result"]
    return outputs[-1], result.trace


def _script(srv: LoopbackServer, tool: str, *between: Any, **arguments: Any) -> None:
    srv.reply({"tool_calls": [{"name": tool, "arguments": arguments}]}, *between, "ok")


def test_sampling_is_answered_by_the_agents_model_within_the_servers_limits(loopback_server):
    srv = loopback_server
    agent, toolset = _agent(srv, sampling={"max_tokens": 20, "max_requests": 5})
    _script(
        srv,
        "ask_model",
        {"content": "Paris", "usage": {"prompt_tokens": 9, "completion_tokens": 1}},
        prompt="capital of France?",
        max_tokens=500,
    )
    with agent:
        output, trace = _call(agent)
    assert output.endswith(": Paris")
    sampled = srv.requests[1]
    assert sampled["max_tokens"] == 20  # the server asked 500; its limit is 20
    assert sampled["messages"] == [
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": "capital of France?"},
    ]
    assert "tools" not in sampled  # the server's request never sees the agent's tools
    events = [e["data"] for e in trace if e["type"] == "mcp.sampling"]
    assert len(events) == 1
    assert events[0]["status"] == "answered" and events[0]["server"] == "asks"
    assert events[0]["tokens"] == 10 and events[0]["requests_left"] == 4
    assert any(e["event"] == "sampling" for e in toolset.events)


def test_a_server_past_its_sampling_limit_is_refused_with_a_typed_event(loopback_server):
    srv = loopback_server
    agent, _ = _agent(srv, sampling={"max_requests": 1})
    _script(srv, "ask_model", "first", prompt="one")
    _script(srv, "ask_model", prompt="two")  # refused: no model request in between
    with agent:
        first, _ = _call(agent)
        second, trace = _call(agent)
    assert first.endswith(": first")
    assert second.startswith("refused:") and "LA-MCP-SAMPLING-REFUSED" in second
    [event] = [e["data"] for e in trace if e["type"] == "mcp.sampling"]
    assert event["status"] == "refused" and event["code"] == "LA-MCP-SAMPLING-REFUSED"
    assert "1 sampling requests" in event["reason"]


def test_sampling_with_approval_asks_the_reviewer_first(loopback_server):
    srv = loopback_server
    asked: list[Any] = []

    def reviewer(request: Any) -> bool:
        asked.append(request)
        return False

    agent, _ = _agent(srv, sampling={"approval": True}, reviewer=reviewer)
    _script(srv, "ask_model", prompt="spend my tokens")
    with agent:
        output, _ = _call(agent)
    assert "LA-MCP-SAMPLING-REFUSED" in output and "did not approve" in output
    assert asked[0].action == "mcp_sampling" and asked[0].server == "asks"
    assert asked[0].arguments["messages"][-1]["content"] == "spend my tokens"


def test_sampling_off_is_not_advertised(loopback_server):
    srv = loopback_server
    agent, _ = _agent(srv)
    _script(srv, "ask_model", prompt="hello")
    with agent:
        output, trace = _call(agent)
    assert output.startswith("refused:")
    assert not [e for e in trace if e["type"] == "mcp.sampling"]


def test_elicitation_goes_to_the_reviewer(loopback_server):
    srv = loopback_server
    asked: list[Any] = []

    async def reviewer(request: Any) -> dict[str, Any]:
        asked.append(request)
        return {"name": "Ada", "age": 36}

    agent, _ = _agent(srv, elicitation=True, reviewer=reviewer)
    _script(srv, "ask_user", question="Who should we call?")
    with agent:
        output, trace = _call(agent)
    assert output == "accept: {'name': 'Ada', 'age': 36}"
    assert asked[0].action == "mcp_elicitation"
    assert asked[0].arguments["message"] == "Who should we call?"
    assert set(asked[0].arguments["requested_schema"]["properties"]) == {"name", "age"}
    [event] = [e["data"] for e in trace if e["type"] == "mcp.elicitation"]
    assert event["status"] == "accept" and event["server"] == "asks"


def test_an_approval_decision_answers_an_elicitation(loopback_server):
    review = pytest.importorskip("lightagent_review")
    srv = loopback_server
    agent, _ = _agent(
        srv, elicitation=True, reviewer=lambda r: review.ApprovalDecision.reject("no")
    )
    _script(srv, "ask_user", question="Who?")
    with agent:
        output, _ = _call(agent)
    assert output == "decline: None"


def test_elicitation_without_a_reviewer_is_refused_with_a_typed_event(loopback_server):
    srv = loopback_server
    agent, _ = _agent(srv, elicitation=True)
    _script(srv, "ask_user", question="Who?")
    with agent:
        output, trace = _call(agent)
    assert output.startswith("refused:") and "LA-MCP-ELICITATION-REFUSED" in output
    [event] = [e["data"] for e in trace if e["type"] == "mcp.elicitation"]
    assert event["status"] == "refused" and event["code"] == "LA-MCP-ELICITATION-REFUSED"


def test_roots_come_from_the_settings(loopback_server, tmp_path):
    srv = loopback_server
    agent, _ = _agent(srv, roots=[str(tmp_path), "file:///srv/data"])
    _script(srv, "roots")
    with agent:
        output, trace = _call(agent)
    assert json.loads(output) == [tmp_path.resolve().as_uri(), "file:///srv/data"]
    assert [e["data"]["status"] for e in trace if e["type"] == "mcp.roots"] == ["answered"]


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("sampling", {"max_tokens": 0}),
        ("sampling", {"budget": 3}),
        ("sampling", "yes"),
        ("elicitation", "yes"),
        ("roots", ["https://example.org"]),
        ("roots", "/tmp"),
    ],
)
def test_bad_client_feature_settings_are_typed_config_errors(key, value):
    with pytest.raises(MCPConfigError) as info:
        parse_server("s", {"command": "x", key: value})
    assert info.value.code == "LA-MCP-CONFIG" and f"mcpServers.s.{key}" in info.value.message


def test_roots_are_resolved_to_file_uris():
    settings = parse_server("s", {"command": "x", "roots": ["."]})
    assert settings.roots == ((Path(".").resolve().as_uri(), Path(".").resolve().name),)


def test_a_slow_human_does_not_run_the_call_into_its_idle_timeout(loopback_server):
    import asyncio

    srv = loopback_server

    async def reviewer(request: Any) -> dict[str, Any]:
        await asyncio.sleep(2.5)  # longer than the call's idle timeout (1 s)
        return {"name": "Grace"}

    agent, _ = _agent(srv, elicitation=True, reviewer=reviewer, timeout=1.0)
    _script(srv, "ask_user", question="Who?")
    with agent:
        output, _ = _call(agent)
    assert output == "accept: {'name': 'Grace', 'age': 0}"


def test_setup_mcp_answers_sampling_with_the_agents_own_model(loopback_server):
    import asyncio

    srv = loopback_server
    model = OpenAIModel("m", base_url=srv.base_url, api_key="k", max_retry=0)
    agent = LightAgent(model=model)
    setting = {"mcpServers": {"asks": stdio("client", sampling={"max_requests": 1})}}
    manager = asyncio.run(agent.setup_mcp(setting))
    _script(srv, "ask_model", "from the agent's model", prompt="hi")
    try:
        output, trace = _call(agent)
    finally:
        asyncio.run(manager.cleanup())
    assert output.endswith(": from the agent's model")
    assert [e["data"]["status"] for e in trace if e["type"] == "mcp.sampling"] == ["answered"]
