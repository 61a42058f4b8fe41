"""LightSwarm over the real OpenAI wire: handoffs are tool calls the model makes, streamed and not."""

from __future__ import annotations

import asyncio
from typing import Any

from lightagent import LightAgent, LightSwarm, StreamEvent


def agent(server: Any, name: str, role: str, **kw: Any) -> LightAgent:
    return LightAgent(
        name=name, role=role, model="gpt-4.1", api_key="k", base_url=server.base_url, **kw
    )


def who(body: dict[str, Any]) -> str:
    """Which agent sent a request: the role line of its system prompt."""
    return body["messages"][0]["content"].splitlines()[-1]


def script(server: Any, *steps: tuple[str, Any]) -> None:
    """Queue replies that also check which agent asks (``(role, reply)`` pairs)."""
    for role, reply in steps:

        def answer(body: dict[str, Any], role: str = role, reply: Any = reply) -> Any:
            assert who(body) == role, f"expected {role!r}, got {who(body)!r}"
            return reply

        server.reply(answer)


TRANSFER = {"tool_calls": [{"name": "transfer_to_finance", "arguments": {"reason": "payments"}}]}


def test_frontdesk_hands_off_to_finance(loopback_server) -> None:
    front = agent(loopback_server, "frontdesk", "Route requests to the right specialist.")
    finance = agent(loopback_server, "finance", "Answer finance approval questions.")
    swarm = LightSwarm()
    swarm.register_agent(front, finance)
    script(
        loopback_server,
        ("Route requests to the right specialist.", TRANSFER),
        ("Answer finance approval questions.", "Approve it in the ERP under Payables."),
    )
    result = swarm.run(agent=front, query="How do I approve a vendor payment?")
    assert result == "Approve it in the ERP under Payables."
    first, second = loopback_server.requests
    tools = {t["function"]["name"]: t["function"] for t in first["tools"]}
    assert set(tools) == {"transfer_to_finance"}
    assert tools["transfer_to_finance"]["parameters"]["required"] == ["reason"]
    assert "finance approval" in tools["transfer_to_finance"]["description"]
    # the target gets the user's conversation: its own prompt and the question, once
    assert second["messages"] == [
        {
            "role": "system",
            "content": "You are a helpful agent.\nAnswer finance approval questions.",
        },
        {"role": "user", "content": "How do I approve a vendor payment?"},
    ]
    assert [t["function"]["name"] for t in second["tools"]] == ["transfer_to_frontdesk"]


def test_streamed_handoff_streams_the_target(loopback_server) -> None:
    front = agent(loopback_server, "frontdesk", "Route requests.")
    finance = agent(loopback_server, "finance", "Finance answers.")
    swarm = LightSwarm()
    swarm.register_agent(front, finance)
    script(loopback_server, ("Route requests.", TRANSFER), ("Finance answers.", "Use the ERP."))
    items = list(swarm.run(front, "approve a payment?", stream=True))
    handoffs = [i for i in items if isinstance(i, dict) and i.get("type") == "handoff"]
    assert [(h["source_agent"], h["target_agent"], h["reason"]) for h in handoffs] == [
        ("frontdesk", "finance", "payments")
    ]
    text = "".join(
        (i["choices"][0]["delta"].get("content") or "")
        for i in items
        if isinstance(i, dict) and i.get("object") == "chat.completion.chunk"
    )
    assert text == "Use the ERP."
    assert all(body["stream"] is True for body in loopback_server.requests)


def test_async_event_stream_has_one_done_event_for_the_chain(loopback_server) -> None:
    front = agent(loopback_server, "frontdesk", "Route requests.")
    finance = agent(loopback_server, "finance", "Finance answers.")
    swarm = LightSwarm()
    swarm.register_agent(front, finance)
    script(loopback_server, ("Route requests.", TRANSFER), ("Finance answers.", "Use the ERP."))

    async def collect() -> list[StreamEvent]:
        return [e async for e in front.astream("pay?", light_swarm=swarm, result_format="event")]

    events = asyncio.run(collect())
    kinds = [e.type for e in events]
    assert kinds.count("done") == 1 and kinds[-1] == "done"
    assert "handoff" in kinds and kinds.index("handoff") < kinds.index("content")
    done = events[-1].data
    assert done["content"] == "Use the ERP."
    assert [h["target_agent"] for h in done["handoffs"]] == ["finance"]


def test_sync_and_async_event_streams_end_with_the_same_combined_result(loopback_server) -> None:
    front = agent(loopback_server, "frontdesk", "Route requests.")
    finance = agent(loopback_server, "finance", "Finance answers.")
    swarm = LightSwarm()
    swarm.register_agent(front, finance)

    async def collect() -> list[StreamEvent]:
        stream = await swarm.arun(front, "pay?", stream=True, result_format="event", trace=True)
        return [e async for e in stream]

    done = {}
    for way in ("sync", "async"):
        script(loopback_server, ("Route requests.", TRANSFER), ("Finance answers.", "Use the ERP."))
        if way == "sync":
            events = list(swarm.run(front, "pay?", stream=True, result_format="event", trace=True))
        else:
            events = asyncio.run(collect())
        assert [e.type for e in events].count("done") == 1 and events[-1].type == "done"
        done[way] = events[-1].data
    for data in done.values():
        # the chain's result: both hops' usage, trace and handoffs, the last hop's answer
        assert data["content"] == "Use the ERP." and data["error"] is None
        assert [h["target_agent"] for h in data["handoffs"]] == ["finance"]
        assert data["usage"]["prompt_tokens"] == 20
        assert len({e["run_id"] for e in data["trace"]}) == 2
    assert done["sync"].keys() == done["async"].keys()


def test_arun_and_light_swarm_option_reach_the_same_chain(loopback_server) -> None:
    front = agent(loopback_server, "frontdesk", "Route requests.")
    finance = agent(loopback_server, "finance", "Finance answers.")
    swarm = LightSwarm()
    swarm.register_agent(front, finance)
    script(loopback_server, ("Route requests.", TRANSFER), ("Finance answers.", "Use the ERP."))
    result = asyncio.run(front.arun("pay?", light_swarm=swarm, result_format="object"))
    assert result.content == "Use the ERP." and result.error is None
    assert [h["target_agent"] for h in result.handoffs] == ["finance"]
    # usage covers both runs of the chain
    assert result.usage["prompt_tokens"] == 20


def test_a_transfer_the_context_denies_is_not_offered_and_calling_it_is_refused(
    loopback_server,
) -> None:
    from lightagent import PermissionSet, SecurityContext

    closed = SecurityContext(permissions=PermissionSet(denied=["tool.transfer_to_*"]))
    front = agent(loopback_server, "frontdesk", "Route requests.", security_context=closed)
    finance = agent(loopback_server, "finance", "Finance answers.")
    swarm = LightSwarm()
    swarm.register_agent(front, finance)
    script(loopback_server, ("Route requests.", TRANSFER), ("Route requests.", "Ask your bank."))
    items = list(swarm.run(front, "approve a payment?", stream=True))
    assert not [i for i in items if isinstance(i, dict) and i.get("type") == "handoff"]
    offered = [t["function"]["name"] for t in loopback_server.requests[0].get("tools") or ()]
    assert not [name for name in offered if name.startswith("transfer_to_")]
    refusal = loopback_server.requests[1]["messages"][-1]
    assert refusal["role"] == "tool"
    assert refusal["content"].startswith("Error [LA-TOOL-NOT-FOUND]")
    # the same decision from the async driver
    script(loopback_server, ("Route requests.", TRANSFER), ("Route requests.", "Ask your bank."))
    result = asyncio.run(swarm.arun(front, "approve a payment?", result_format="object"))
    assert result.content == "Ask your bank." and result.handoffs == []
    assert len(loopback_server.requests) == 4
