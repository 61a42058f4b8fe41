"""Issue 28, item 2: after ``swarm.run(..., trace=True)`` each agent's ``export_trace()``
holds its own hop, as the seeds' trace API does after ``agent.run``."""

from __future__ import annotations

from typing import Any

from lightagent import LightAgent, LightSwarm

TRANSFER = {"tool_calls": [{"name": "transfer_to_finance", "arguments": {"reason": "payments"}}]}


def agent(server: Any, name: str, role: str) -> LightAgent:
    return LightAgent(name=name, role=role, model="gpt-4.1", api_key="k", base_url=server.base_url)


def test_each_agent_exports_its_hop_of_a_traced_swarm_run(loopback_server) -> None:
    front = agent(loopback_server, "frontdesk", "Route requests.")
    finance = agent(loopback_server, "finance", "Finance answers.")
    swarm = LightSwarm()
    swarm.register_agent(front, finance)
    loopback_server.reply(TRANSFER)
    loopback_server.reply("Use the ERP.")
    result = swarm.run(front, "approve a payment?", trace=True, result_format="object")
    front_trace, finance_trace = front.export_trace(), finance.export_trace()
    assert front_trace and finance_trace
    assert {e["trace_id"] for e in front_trace} != {e["trace_id"] for e in finance_trace}
    assert "handoff" in [e["type"] for e in front_trace]
    assert finance_trace[-1]["type"] == "run_end"
    assert finance_trace[0]["parent_trace_id"] == front_trace[0]["trace_id"]
    assert result.trace == front_trace + finance_trace
    # a run without trace=True leaves nothing behind, as agent.run does
    loopback_server.reply("Hello.")
    swarm.run(finance, "hi")
    assert finance.export_trace() == []
