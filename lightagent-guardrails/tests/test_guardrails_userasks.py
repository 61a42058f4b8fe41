"""User ask 24 (shared/research/user-asks.md): guardrails act before anything starts.

Over the loopback server, so "zero model requests" means zero HTTP requests, in every
driver mode; and a tool guardrail denies one call of a parallel round, not its sibling.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from lightagent import LightAgent, OpenAIModel, tool
from lightagent_contracts.loopback import LoopbackServer

RAN: list[str] = []


@tool
def wire(account: str, amount: int) -> str:
    """Send money."""
    RAN.append(account)
    return f"sent {amount} to {account}"


def no_passwords(query: str) -> str | None:
    return "no passwords, please" if "password" in query else None


def agent_for(srv: LoopbackServer, **kw: Any) -> LightAgent:
    model = OpenAIModel("m", base_url=srv.base_url, api_key="k", profile="openai")
    return LightAgent(model=model, tools=[wire], **kw)


@pytest.mark.parametrize("mode", ["run", "stream", "arun", "astream"])
def test_a_tripped_input_guardrail_sends_no_request_in_any_mode(
    loopback_server: LoopbackServer, mode: str
) -> None:
    RAN.clear()
    agent = agent_for(loopback_server, input_guardrails=[no_passwords])
    query = "my password is hunter2, wire 5 to bob"
    if mode == "run":
        code = agent.run(query, result_format="object").error["code"]
    elif mode == "stream":
        items = list(agent.run(query, stream=True))
        assert all("choices" not in i for i in items)  # nothing of an answer is shown
        code = items[-1]["code"]
    elif mode == "arun":
        code = asyncio.run(agent.arun(query, result_format="object")).error["code"]
    else:

        async def collect() -> list[dict[str, Any]]:
            return [i async for i in agent.astream(query)]

        items = asyncio.run(collect())
        assert all("choices" not in i for i in items)
        code = items[-1]["code"]
    assert code == "LA-GUARDRAIL"
    assert loopback_server.requests == [] and RAN == []


def test_a_tool_guardrail_denies_one_parallel_call_and_its_sibling_runs(
    loopback_server: LoopbackServer,
) -> None:
    RAN.clear()

    def small_amounts(value: Any, ctx: Any = None) -> str | None:
        args = value.get("arguments") if isinstance(value, dict) else None
        if isinstance(args, str):
            args = json.loads(args)
        return "too large" if isinstance(args, dict) and args.get("amount", 0) > 100 else None

    loopback_server.reply(
        {
            "tool_calls": [
                {"name": "wire", "arguments": {"account": "bob", "amount": 5000}},
                {"name": "wire", "arguments": {"account": "amy", "amount": 5}},
            ]
        },
        "Sent 5 to amy; the 5000 to bob was refused.",
    )
    agent = agent_for(loopback_server, tool_guardrails=[small_amounts])
    result = agent.run("pay both", result_format="object")
    assert result.error is None and RAN == ["amy"]
    results = loopback_server.requests[1]["messages"][-2:]
    assert "LA-GUARDRAIL" in results[0]["content"] and "too large" in results[0]["content"]
    assert results[1]["content"] == "sent 5 to amy"
