"""Memory write admission fails closed: a callback that decides nothing refuses, every write
that reaches a backend — the learning note and a promoted candidate too — passes the one
admission path, and a record still waiting for promotion never reaches a prompt."""

from __future__ import annotations

import pytest
from lightagent import (
    DefaultMemoryFilter,
    InMemoryMemory,
    LightAgent,
    MemoryPolicy,
    MemoryPromotionDecision,
    ScriptedModel,
    SharedMemoryPool,
)


def blocks(result):
    return [e["data"] for e in result.trace if e["type"] == "memory_write_block"]


class Undecided:
    pass


@pytest.mark.parametrize("answer", [None, Undecided(), 42, {"reason": "no allowed key"}])
@pytest.mark.parametrize("required", [True, False])
def test_an_admission_callback_that_decides_nothing_refuses(answer, required):
    pool = SharedMemoryPool()
    policy = MemoryPolicy(
        require_write_admission=required, memory_write_admission=lambda data, ctx: answer
    )
    agent = LightAgent(model=ScriptedModel(["ok"]), memory=pool, memory_policy=policy)
    result = agent.run("I like green tea.", user_id="alice", result_format="object", trace=True)
    (block,) = blocks(result)
    assert block["phase"] == "memory_policy"
    assert block["reason"].startswith("memory_write_admission returned ")
    assert len(pool) == 0, "nothing is stored"
    decisions = [e["data"] for e in result.trace if e["type"] == "hook_decision"]
    assert [d["action"] for d in decisions if d["hook"] == "memory_write_admission"] == ["block"]


def _learner(memory, policy, replies=("The tide turns at six.",)):
    return LightAgent(
        name="keeper",
        model=ScriptedModel(list(replies)),
        memory=memory,
        memory_policy=policy,
        self_learning=True,
    )


def test_the_learning_note_passes_the_write_admission():
    seen = []

    def admit(data, ctx):
        seen.append(ctx["source"])
        return ctx["metadata"].get("kind") != "self_learning" or "not a learning note"

    pool = SharedMemoryPool()
    agent = _learner(pool, MemoryPolicy(memory_write_admission=admit))
    result = agent.run(
        "When does the tide turn?", user_id="alice", result_format="object", trace=True
    )
    assert seen == ["user", "reflection"]
    assert [b["reason"] for b in blocks(result)] == ["not a learning note"]
    assert agent.list_memory_candidates() == [], "a refused note is no candidate"
    assert [r.metadata["source"] for r in pool.list_records()] == ["user"]


def test_a_promotion_rewrite_during_the_run_passes_the_write_admission():
    pool = SharedMemoryPool()
    policy = MemoryPolicy(
        memory_write_admission=lambda data, ctx: "forbidden" not in data or "forbidden word",
        memory_promotion_admission=lambda c, ctx: MemoryPromotionDecision.rewrite(
            "A forbidden fact about tides."
        ),
    )
    agent = _learner(pool, policy)
    result = agent.run(
        "When does the tide turn?", user_id="alice", result_format="object", trace=True
    )
    (block,) = [b for b in blocks(result) if b["phase"] == "memory_promote"]
    assert block["reason"] == "forbidden word" and block["candidate_id"]
    kinds = [e["type"] for e in result.trace if e["type"].startswith("memory_promotion")]
    assert kinds == ["memory_promotion_required", "memory_promotion_blocked"]
    assert [r.metadata["source"] for r in pool.list_records()] == ["user"], "nothing promoted"
    (candidate,) = agent.list_memory_candidates()
    assert candidate["status"] == "candidate", "refused, it waits for another decision"


def test_a_promotion_after_the_run_passes_the_write_admission():
    memory = InMemoryMemory()
    seen = []

    class Observer:
        def on_event(self, run, event):
            seen.append((event["type"], event["data"].get("reason")))

    policy = MemoryPolicy(
        memory_write_admission=lambda data, ctx: "forbidden" not in data or "forbidden word"
    )
    agent = LightAgent(
        name="keeper",
        model=ScriptedModel(["The tide turns at six."]),
        memory=memory,
        memory_policy=policy,
        self_learning=True,
        observers=[Observer()],
    )
    agent.run("When does the tide turn?", user_id="alice")
    (candidate,) = agent.list_memory_candidates()
    seen.clear()
    cid = candidate["candidate_id"]
    refused = agent.promote_memory_candidate(cid, MemoryPromotionDecision.rewrite("forbidden"))
    assert refused.action == "keep" and refused.metadata["blocked"]
    assert ("memory_write_block", "forbidden word") in seen
    assert agent.list_memory_candidates()[0]["status"] == "candidate"
    secret = agent.promote_memory_candidate(
        cid, MemoryPromotionDecision.rewrite("the api key is token=abcd1234efgh5678ijkl")
    )
    assert secret.action == "keep" and secret.reason == "secret"
    assert memory.retrieve("tide forbidden token", policy.agent_user_id("keeper")) == {
        "results": []
    }
    approved = agent.promote_memory_candidate(cid, "approve")
    assert approved.action == "approve" and approved.metadata["stored"]


@pytest.mark.parametrize("use_filter", ["policy", "default"])
@pytest.mark.parametrize("status", ["candidate", "rejected", "pending"])
def test_a_record_waiting_for_promotion_never_reaches_the_prompt(use_filter, status):
    pool = SharedMemoryPool()
    pool.store("The vault opens at noon.", "alice", metadata={"promotion_status": status})
    pool.store(
        "The vault closes at six.",
        "alice",
        metadata={"promotion_status": "promoted", "injectable": True},
    )
    model = ScriptedModel(["ok"])
    agent = LightAgent(model=model, memory=pool)
    if use_filter == "default":
        agent.memory_filter = DefaultMemoryFilter()
    result = agent.run("vault opens closes?", user_id="alice", result_format="object", trace=True)
    seen = model.requests[0].messages[0]["content"]
    assert "closes at six" in seen and "noon" not in seen
    (held,) = [e["data"] for e in result.trace if e["type"] == "memory_retrieve_filter"]
    assert held["reasons"] == {"unpromoted": 1} and held["allowed_count"] == 1
