"""Issue 28, item 1: memory promotion as the seeds describe it (README "SharedMemoryPool",
roadmap v0.9.1/v0.9.3/v0.9.5)."""

from __future__ import annotations

import time

from lightagent import (
    HookDecision,
    InMemoryMemory,
    LightAgent,
    MemoryPolicy,
    PolicyHook,
    ScriptedModel,
)


def reflecting_agent(memory, **kwargs):
    return LightAgent(
        name="keeper",
        model=ScriptedModel(["The tide turns at six.", "ok", "ok"]),
        memory=memory,
        self_learning=True,
        **kwargs,
    )


def test_a_learning_note_is_a_reflection_and_a_seeds_policy_promotes_it():
    seen = []

    def admit(candidate, ctx):
        seen.append(candidate.source)
        return True

    memory = InMemoryMemory()
    policy = MemoryPolicy(allowed_sources=("user", "reflection"), memory_promotion_admission=admit)
    agent = reflecting_agent(memory, memory_policy=policy)
    result = agent.run(
        "When does the tide turn?", user_id="alice", result_format="object", trace=True
    )
    assert seen == ["reflection"]
    assert [e["type"] for e in result.trace if e["type"].startswith("memory_promotion")] == [
        "memory_promotion_approved"
    ]
    (stored,) = memory.retrieve("tide turn", policy.agent_user_id("keeper"))["results"]
    assert stored["metadata"]["source"] == "reflection"
    assert stored["metadata"]["kind"] == "self_learning"


def test_promote_memory_candidate_without_a_decision_promotes():
    memory = InMemoryMemory()
    agent = reflecting_agent(memory)
    agent.run("When does the tide turn?", user_id="alice")
    (candidate,) = agent.list_memory_candidates()
    decision = agent.promote_memory_candidate(candidate["candidate_id"])
    assert decision.action == "approve" and decision.promotes
    (stored,) = memory.retrieve("tide turn", MemoryPolicy().agent_user_id("keeper"))["results"]
    assert stored["metadata"]["promotion_status"] == "promoted"
    assert agent.list_memory_candidates(status="promoted")


def test_a_policy_callback_still_decides_a_bare_promotion():
    agent = reflecting_agent(
        InMemoryMemory(),
        memory_policy=MemoryPolicy(memory_promotion_admission=lambda c, ctx: None),
    )
    agent.run("When does the tide turn?", user_id="alice")
    (candidate,) = agent.list_memory_candidates()
    assert agent.promote_memory_candidate(candidate["candidate_id"]).action == "keep"


def test_memory_write_metadata_carries_the_run_group_id():
    memory = InMemoryMemory()
    agent = LightAgent(name="keeper", model=ScriptedModel(["noted"]), memory=memory)
    agent.run("my boat is blue", user_id="alice", run_group_id="group-7")
    (record,) = memory.retrieve("boat blue", "alice")["results"]
    assert record["metadata"]["run_group_id"] == "group-7"


def test_after_memory_retrieve_hooks_edit_memories():
    memory = InMemoryMemory()
    memory.store("the blue boat is Alice's", "alice")
    memory.store("secret: the code is 1234", "alice")

    def drop_secrets(ctx):
        kept = [m for m in ctx.payload["memories"] if "secret" not in m["memory"]]
        return HookDecision.replace({**ctx.payload, "memories": kept})

    drop_secrets.phases = ("after_memory_retrieve",)  # type: ignore[attr-defined]
    model = ScriptedModel(["ok"])
    agent = LightAgent(
        name="keeper",
        model=model,
        memory=memory,
        memory_policy=MemoryPolicy(allow_unattributed_results=True),
        hooks=[PolicyHook(drop_secrets, phases={"after_memory_retrieve"})],
    )
    agent.run("what about the boat code secret?", user_id="alice")
    prompt = str(model.requests[0].messages)
    assert "blue boat" in prompt
    assert "1234" not in prompt


def test_a_record_without_expiry_is_kept_when_expiry_is_enforced():
    policy = MemoryPolicy(enforce_expires_at=True, allow_unattributed_results=True)
    scoped = policy.scoped_user_id("alice")
    assert policy.allows_result({"memory": "no expiry", "user_id": scoped}, scoped)
    past = {"memory": "old", "user_id": scoped, "metadata": {"expires_at": time.time() - 60}}
    assert not policy.allows_result(past, scoped)
    unreadable = {"memory": "?", "user_id": scoped, "metadata": {"expires_at": "soon"}}
    assert not policy.allows_result(unreadable, scoped)


def test_a_failed_promotion_hook_is_traced_as_hook_block():
    def broken(ctx):
        raise RuntimeError("reviewer down")

    agent = reflecting_agent(
        InMemoryMemory(), hooks=[PolicyHook(broken, phases={"before_memory_promote"})]
    )
    result = agent.run("tide?", user_id="alice", result_format="object", trace=True)
    blocks = [e["data"] for e in result.trace if e["type"] == "hook_block"]
    assert [b["phase"] for b in blocks] == ["before_memory_promote"]
    (candidate,) = agent.list_memory_candidates()
    assert candidate["status"] == "candidate"
