"""LightSwarm's decisions on the ScriptedModel: on_handoff, approval, hop limit, cycles, options."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from lightagent import (
    ApprovalDecision,
    CancellationToken,
    HookDecision,
    HumanApprovalHook,
    InMemoryReviewStore,
    LightAgent,
    LightSwarm,
    ScriptedModel,
    SqliteSessionStore,
)
from lightagent.errors import ConfigurationError
from lightagent.events.binding import SessionBinding
from swarm_kit import Recorder, transfer


def pair(*, front: list[Any], back: list[Any], **kw: Any) -> tuple[Any, ...]:
    a, b = Recorder(*front), Recorder(*back)
    front_agent = LightAgent(name="front", role="Triage.", model=a.model, **kw)
    back_agent = LightAgent(name="back", role="Specialist.", model=b.model)
    swarm = LightSwarm()
    swarm.register_agent(front_agent, back_agent)
    return swarm, front_agent, back_agent, a, b


def test_on_handoff_block_ends_the_run_typed_and_the_target_is_never_called() -> None:
    phases: list[str] = []

    def hook(ctx: Any) -> Any:
        phases.append(ctx.phase)
        if ctx.phase == "on_handoff":
            assert ctx.payload["target_agent"] == "back"
            assert ctx.payload["reason"] == "their job"
            return HookDecision.block("handoffs are closed")
        return None

    swarm, front, _, _, b = pair(front=[transfer("back")], back=[], hooks=[hook])
    result = swarm.run(front, "help", result_format="object", trace=True)
    assert result.error["code"] == "LA-HOOK" and "handoffs are closed" in result.content
    assert b.requests == []
    assert phases[-3:] == ["on_handoff", "on_error", "after_run"]
    handoff = next(e for e in result.trace if e["type"] == "handoff")
    assert handoff["data"]["status"] == "blocked"
    # the transcript stays valid: the transfer call has a result
    assert result.messages[-1]["role"] == "tool" and "blocked" in result.messages[-1]["content"]


def test_on_handoff_can_edit_the_query_the_target_gets() -> None:
    def hook(ctx: Any) -> Any:
        if ctx.phase == "on_handoff":
            return HookDecision.replace({**ctx.payload, "query": "REDACTED question"})
        return None

    swarm, front, _, _, b = pair(front=[transfer("back")], back=["done"], hooks=[hook])
    assert swarm.run(front, "my card 4111 1111 1111 1111 was charged twice") == "done"
    assert b.requests[0].messages[-1] == {"role": "user", "content": "REDACTED question"}


def test_human_approval_parks_a_handoff_then_an_edited_approval_runs_it() -> None:
    store = InMemoryReviewStore()
    approval = HumanApprovalHook(store=store)  # default phases: tool calls and handoffs
    swarm, front, _, _, b = pair(
        front=[transfer("back"), transfer("back")], back=["edited answer"], approval=approval
    )
    first = swarm.run(front, "refund me", result_format="object")
    assert first.error["code"] == "LA-APPROVAL-PENDING" and b.requests == []
    (pending,) = store.list_pending()
    assert (pending.source_agent, pending.target_agent) == ("front", "back")
    store.resolve(
        pending.request_id,
        ApprovalDecision.edit({"query": "refund order 7", "target_agent": "back"}),
    )
    again = swarm.run(front, "refund me", approval_id=pending.request_id)
    assert again == "edited answer"
    assert b.requests[0].messages[-1]["content"] == "refund order 7"


def test_approval_built_from_a_store_does_not_review_every_handoff() -> None:
    swarm, front, *_ = pair(front=[transfer("back")], back=["ok"], approval=InMemoryReviewStore())
    assert swarm.run(front, "hi") == "ok"


def test_a_cycle_ends_the_chain_with_a_typed_error() -> None:
    swarm, front, _, a, b = pair(front=[transfer("back")], back=[transfer("front")])
    result = swarm.run(front, "loop?", result_format="object", trace=True)
    assert result.error["code"] == "LA-HANDOFF-CYCLE"
    assert result.error["details"]["chain"] == ["front", "back"]
    assert [h["target_agent"] for h in result.handoffs] == ["back"]
    assert len(a.requests) == 1 and len(b.requests) == 1
    failed = [e for e in result.trace if e["type"] == "handoff" and e["data"]["status"] == "failed"]
    assert failed and failed[0]["data"]["target_agent"] == "front"


def test_the_hop_limit_bounds_a_chain_even_when_cycles_are_allowed() -> None:
    a, b = Recorder(*[transfer("back")] * 3), Recorder(*[transfer("front")] * 3)
    front = LightAgent(name="front", model=a.model)
    back = LightAgent(name="back", model=b.model)
    swarm = LightSwarm(max_handoffs=3, allow_cycles=True)
    swarm.register_agent(front, back)
    result = swarm.run(front, "ping", result_format="object")
    assert result.error["code"] == "LA-HANDOFF-LIMIT"
    assert len(result.handoffs) == 3  # front->back->front->back, then refused
    assert len(a.requests) + len(b.requests) == 4


def test_an_edit_to_an_unknown_agent_is_refused() -> None:
    def hook(ctx: Any) -> Any:
        if ctx.phase == "on_handoff":
            return HookDecision.replace({**ctx.payload, "target_agent": "nobody"})
        return None

    swarm, front, *_ = pair(front=[transfer("back")], back=[], hooks=[hook])
    result = swarm.run(front, "x", result_format="object")
    assert result.error["code"] == "LA-HANDOFF"


def test_runtime_options_reach_every_agent_of_the_chain(tmp_path) -> None:
    seen: list[Any] = []

    def spy(ctx: Any) -> None:
        if ctx.phase == "before_run":
            seen.append((ctx.agent_name, ctx.user_id, dict(ctx.metadata), ctx.run_group_id))

    token = CancellationToken()
    a, b = Recorder(transfer("back")), Recorder("answer")
    front = LightAgent(name="front", model=a.model, hooks=[spy])
    back = LightAgent(name="back", model=b.model, hooks=[spy])
    swarm = LightSwarm()
    swarm.register_agent(front, back)
    result = swarm.run(
        front,
        "q",
        user_id="alice",
        metadata={"tenant_id": "t1"},
        trace=True,
        result_format="dict",
        max_retry=2,
        max_tool_iterations=1,
        cancellation_token=token,
        run_group_id="group-1",
    )
    assert isinstance(result, dict) and result["content"] == "answer"
    assert seen == [
        ("front", "alice", {"tenant_id": "t1"}, "group-1"),
        ("back", "alice", {"tenant_id": "t1"}, "group-1"),
    ]
    runs = {e["run_id"] for e in result["trace"]}
    assert len(runs) == 2  # both runs' events, one trace: the target is the source's child
    source_trace = result["handoffs"][0]["trace_id"]
    target_events = [e for e in result["trace"] if e["trace_id"] != source_trace]
    assert target_events and all(e["parent_trace_id"] == source_trace for e in target_events)


def test_a_cancelled_token_stops_the_target_too() -> None:
    token = CancellationToken()

    def cancel_on_handoff(ctx: Any) -> None:
        if ctx.phase == "on_handoff":
            token.cancel("user left")

    swarm, front, _, _, b = pair(front=[transfer("back")], back=[], hooks=[cancel_on_handoff])
    result = swarm.run(front, "q", cancellation_token=token, result_format="object")
    assert result.error["code"] == "LA-CANCELLED" and b.requests == []


def test_one_session_log_holds_the_chain_and_its_history_asks_once(tmp_path) -> None:
    store = SqliteSessionStore(str(tmp_path / "s.db"))
    a = Recorder(transfer("back"), "front again")
    b = Recorder("the specialist's answer")
    front = LightAgent(name="front", model=a.model, session_store=store)
    back = LightAgent(name="back", model=b.model)  # no store of its own: the chain's is used
    swarm = LightSwarm()
    swarm.register_agent(front, back)
    assert swarm.run(front, "first question", session_id="s1") == "the specialist's answer"
    events = store.events("s1")
    types = [e.type for e in events]
    assert types.count("turn.started") == 2 and "handoff.requested" in types
    assert {e.agent_id for e in events if e.type == "turn.started"} == {"front", "back"}
    history = SessionBinding(store).history("s1")
    assert [m["role"] for m in history] == ["user", "assistant", "tool", "assistant"]
    assert history[0]["content"] == "first question"
    assert history[-1]["content"] == "the specialist's answer"
    # the next turn (plain run of the entry agent) continues from that history
    assert front.run("and then?", session_id="s1") == "front again"
    assert [m.get("content") for m in a.requests[-1].messages if m["role"] == "user"] == [
        "first question",
        "and then?",
    ]


def test_registration_rules_and_agents_left_unchanged(caplog) -> None:
    a, b = Recorder("alone"), Recorder()
    front = LightAgent(name="front", model=a.model)
    back = LightAgent(name="back", model=b.model)
    swarm = LightSwarm()
    swarm.register_agent(front, back)
    with caplog.at_level(logging.WARNING, logger="lightagent.swarm"):
        swarm.register_agent(LightAgent(name="back", model=ScriptedModel()))
    assert swarm.agents["back"] is back and "already registered" in caplog.text
    with pytest.raises(ConfigurationError) as err:
        swarm.register_agent(LightAgent(name="back!", model=ScriptedModel()))
    assert err.value.details["tool"] == "transfer_to_back"
    with pytest.raises(ConfigurationError) as err:
        swarm.run("nobody", "q")
    assert err.value.code == "LA-HANDOFF"
    # outside the swarm the agent offers no transfer tools
    assert front.run("hi") == "alone"
    assert a.requests[0].tools is None


def test_concurrent_chains_on_one_swarm_keep_their_own_routes() -> None:
    def front_reply(request: Any) -> Any:
        query = request.messages[-1]["content"]
        return transfer("back", reason=query)

    def back_reply(request: Any) -> Any:
        return "answer to " + request.messages[-1]["content"]

    front = LightAgent(name="front", model=ScriptedModel(front_reply))
    back = LightAgent(name="back", model=ScriptedModel(back_reply))
    swarm = LightSwarm()
    swarm.register_agent(front, back)

    async def many() -> list[Any]:
        return await asyncio.gather(
            *(swarm.arun(front, f"q{i}", result_format="object") for i in range(8))
        )

    results = asyncio.run(many())
    assert [r.content for r in results] == [f"answer to q{i}" for i in range(8)]
    assert [r.handoffs[0]["reason"] for r in results] == [f"q{i}" for i in range(8)]
