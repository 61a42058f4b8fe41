"""Memory candidates and their promotion: decided by the policy, a hook or a person; recorded
once in the session log, even when two processes promote the same candidate."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
import threading

import pytest
from lightagent import (
    HookDecision,
    InMemoryMemory,
    LightAgent,
    LightAgentError,
    MemoryPolicy,
    MemoryPromotionDecision,
    ScriptedModel,
    SharedMemoryPool,
    SqliteSessionStore,
)


def reflecting_agent(memory, *, replies=("The tide turns at six.",), **kwargs):
    return LightAgent(
        name="keeper",
        model=ScriptedModel(list(replies)),
        memory=memory,
        self_learning=True,
        **kwargs,
    )


def kinds(result):
    return [e["type"] for e in result.trace if e["type"].startswith("memory_promotion")]


def agent_memories(memory, policy=None):
    policy = policy or MemoryPolicy()
    return memory.retrieve("tide turns pier", policy.agent_user_id("keeper"))["results"]


def test_a_reflection_waits_as_a_non_injectable_candidate():
    memory = InMemoryMemory()
    agent = reflecting_agent(memory, replies=["The tide turns at six.", "ok"])
    result = agent.run(
        "When does the tide turn at the pier?", user_id="alice", result_format="object", trace=True
    )
    assert kinds(result) == ["memory_promotion_required"]
    (candidate,) = agent.list_memory_candidates()
    assert candidate["status"] == "candidate" and candidate["injectable"] is False
    assert (
        candidate["memory_user_id"] == "agent:keeper" and candidate["original_user_id"] == "alice"
    )
    assert candidate["trace_id"] == result.trace_id and candidate["run_id"] == result.run_id
    assert "data" not in agent.list_memory_candidates(include_data=False)[0]
    assert agent_memories(memory) == [], "nothing is stored before promotion"
    model = agent.model
    agent.run("The tide at the pier?", user_id="bob")
    assert "tide turns at six" not in model.requests[1].messages[0]["content"]


@pytest.mark.parametrize(
    ("answer", "event", "stored"),
    [
        (True, "memory_promotion_approved", "When asked"),
        (
            lambda c, ctx: MemoryPromotionDecision.rewrite("The pier tide turns at six."),
            "memory_promotion_rewritten",
            "The pier tide",
        ),
        (False, "memory_promotion_rejected", None),
    ],
)
def test_the_policy_decides_during_the_run(answer, event, stored):
    memory = InMemoryMemory()
    decide = answer if callable(answer) else (lambda c, ctx, a=answer: a)
    agent = reflecting_agent(memory, memory_policy=MemoryPolicy(memory_promotion_admission=decide))
    result = agent.run(
        "When does the tide turn at the pier?", user_id="alice", result_format="object", trace=True
    )
    assert kinds(result) == [event], (
        "a decided candidate is never pending, so no reviewer can race it"
    )
    found = agent_memories(memory)
    if stored is None:
        assert found == []
        assert agent.list_memory_candidates(status="rejected")
    else:
        assert len(found) == 1 and found[0]["memory"].startswith(stored)
        meta = found[0]["metadata"]
        assert meta["promotion_status"] == "promoted" and meta["injectable"] is True
        assert meta["source"] == "reflection" and meta["candidate_id"]


def test_a_failing_promotion_policy_keeps_the_candidate():
    def broken(candidate, ctx):
        raise KeyError("reviewer")

    agent = reflecting_agent(
        InMemoryMemory(), memory_policy=MemoryPolicy(memory_promotion_admission=broken)
    )
    result = agent.run("tide?", user_id="alice", result_format="object", trace=True)
    assert kinds(result) == ["memory_promotion_required", "memory_promotion_blocked"]
    blocked = next(e["data"] for e in result.trace if e["type"] == "memory_promotion_blocked")
    assert blocked["reason"] == "memory_promotion_admission failed: KeyError"


def test_hooks_decide_or_block_promotion():
    class Approve:
        def before_memory_promote(self, ctx):
            return HookDecision.replace({"decision": "approve"})

    memory = InMemoryMemory()
    agent = reflecting_agent(memory, hooks=[Approve()])
    result = agent.run(
        "When does the tide turn at the pier?", user_id="alice", result_format="object", trace=True
    )
    assert kinds(result) == ["memory_promotion_approved"] and len(agent_memories(memory)) == 1
    decided = next(e["data"] for e in result.trace if e["type"] == "memory_promotion_approved")
    assert decided["decided_by"] == "hook"

    blocker = reflecting_agent(
        InMemoryMemory(),
        hooks=[lambda ctx: False if ctx.phase == "before_memory_promote" else None],
    )
    result = blocker.run("tide?", user_id="alice", result_format="object", trace=True)
    assert kinds(result) == ["memory_promotion_required", "memory_promotion_blocked"]
    (candidate,) = blocker.list_memory_candidates()
    decision = blocker.promote_memory_candidate(candidate["candidate_id"], "approve")
    assert decision.action == "keep" and decision.metadata["status"] == "candidate", (
        "the hook blocks people too"
    )


def test_a_person_approves_rewrites_or_rejects_once():
    memory = InMemoryMemory()
    agent = reflecting_agent(memory, replies=["The tide turns at six."] * 3)
    ids = []
    for _ in range(3):
        agent.run("When does the tide turn at the pier?", user_id="alice")
    ids = [c["candidate_id"] for c in agent.list_memory_candidates()]
    assert len(ids) == 3
    assert agent.promote_memory_candidate(ids[0], "keep").action == "keep", "kept: it waits"
    first = agent.promote_memory_candidate(
        ids[0], MemoryPromotionDecision.approve("checked"), reviewer_id="rita"
    )
    rewritten = agent.promote_memory_candidate(
        ids[1], {"action": "rewrite", "value": "Pier tide: six."}
    )
    rejected = agent.promote_memory_candidate(ids[2], False)
    assert (first.action, rewritten.action, rejected.action) == ("approve", "rewrite", "reject")
    assert [
        first.metadata["stored"],
        rewritten.metadata["stored"],
        rejected.metadata["stored"],
    ] == [True, True, None]
    again = agent.promote_memory_candidate(ids[2], "approve")
    assert again.action == "reject" and again.metadata["idempotent"], "a decision is final"
    stored = sorted(r["memory"][:12] for r in agent_memories(memory))
    assert stored == ["Pier tide: s", "When asked: "]
    assert agent.list_memory_candidates() == []
    assert {c["status"] for c in agent.list_memory_candidates(status=None)} == {
        "promoted",
        "rejected",
    }
    with pytest.raises(LightAgentError) as info:
        agent.promote_memory_candidate("cand_nope", "approve")
    assert info.value.code == "LA-MEMORY-CANDIDATE"
    with pytest.raises(LightAgentError) as info:
        agent.promote_memory_candidate(ids[0], "perhaps")
    assert info.value.code == "LA-VALIDATION"


def test_promotion_phases_and_events_reach_hooks_and_observers():
    phases, seen = [], []

    class Observer:
        def on_event(self, run, event):
            seen.append((event["type"], event["trace_id"]))

    agent = reflecting_agent(
        InMemoryMemory(), hooks=[lambda ctx: phases.append(ctx.phase)], observers=[Observer()]
    )
    result = agent.run("tide?", user_id="alice", result_format="object", trace=True)
    (candidate,) = agent.list_memory_candidates()
    phases.clear()
    seen.clear()
    agent.promote_memory_candidate(candidate["candidate_id"], "approve")
    assert phases == ["before_memory_promote", "after_memory_promote"]
    assert [t for t, _ in seen] == ["memory_promotion_approved", "memory_write"]
    assert {trace for _, trace in seen} == {result.trace_id}, (
        "promotion events keep the run's trace id"
    )


def test_async_promotion():
    memory = InMemoryMemory()
    agent = reflecting_agent(memory)

    async def main():
        await agent.arun("When does the tide turn at the pier?", user_id="alice")
        (candidate,) = agent.list_memory_candidates()
        return await agent.apromote_memory_candidate(candidate["candidate_id"], "approve")

    assert asyncio.run(main()).metadata["stored"] and len(agent_memories(memory)) == 1


def test_decisions_are_durable_in_the_session_log(tmp_path):
    store = SqliteSessionStore(str(tmp_path / "sessions.db"))
    pool = SharedMemoryPool(f"sqlite:///{tmp_path / 'pool.db'}")
    agent = reflecting_agent(pool, session_store=store)
    agent.run("When does the tide turn at the pier?", user_id="alice", session_id="s1")
    (candidate,) = agent.list_memory_candidates()
    # Another process (a fresh agent over the same stores) finds it in the log and decides.
    reviewer = reflecting_agent(pool, session_store=store)
    assert [c["candidate_id"] for c in reviewer.list_memory_candidates(session_id="s1")] == [
        candidate["candidate_id"]
    ]
    decision = reviewer.promote_memory_candidate(
        candidate["candidate_id"], "approve", session_id="s1"
    )
    assert decision.metadata["stored"] and not decision.metadata["idempotent"]
    again = agent.promote_memory_candidate(candidate["candidate_id"], "reject")
    assert again.action == "approve" and again.metadata["idempotent"], (
        "the first agent reads the log"
    )
    log = agent.get_session("s1", user_id="alice")
    decided = [e for e in log if e.data.get("trace_type") == "memory_promotion_approved"]
    assert len(decided) == 1 and decided[0].run_id is None, "promotion is no turn of the session"
    assert len(pool.list_records(user_id="agent:keeper")) == 1
    assert reviewer.list_memory_candidates(session_id="s1") == []
    assert reviewer.list_memory_candidates(session_id="s1", status="promoted")
    replay = agent.replay_session("s1", user_id="alice")
    assert (len(replay.completed_turns), replay.incomplete_turns, replay.incomplete_runs) == (
        1,
        [],
        [],
    )


class RacingStore:
    """A session store that lets every promoter read the log before any of them appends."""

    def __init__(self, inner, parties):
        self.inner = inner
        self.barrier = threading.Barrier(parties, timeout=30)
        self.armed = True

    def events(self, session_id, *, after=0, limit=None):
        found = self.inner.events(session_id, after=after, limit=limit)
        if self.armed and after == 0:
            self.barrier.wait()
        return found

    def __getattr__(self, name):
        return getattr(self.inner, name)


def test_concurrent_promoters_record_one_decision(tmp_path):
    store = SqliteSessionStore(str(tmp_path / "sessions.db"))
    pool = SharedMemoryPool(f"sqlite:///{tmp_path / 'pool.db'}")
    reflecting_agent(pool, session_store=store).run(
        "tide at the pier?", user_id="alice", session_id="s1"
    )
    (candidate,) = reflecting_agent(pool, session_store=store).list_memory_candidates(
        session_id="s1"
    )
    racing = RacingStore(store, 4)
    results = []

    def promote(action):
        agent = reflecting_agent(pool, session_store=racing)
        results.append(
            agent.promote_memory_candidate(candidate["candidate_id"], action, session_id="s1")
        )

    threads = [
        threading.Thread(target=promote, args=(a,))
        for a in ("approve", "reject", "approve", "reject")
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(results) == 4 and sum(not r.metadata["idempotent"] for r in results) == 1
    assert len({r.action for r in results}) == 1, "every promoter reports the one decision"
    log = store.events("s1")
    decided = ("memory_promotion_approved", "memory_promotion_rejected")
    assert sum(e.data.get("trace_type") in decided for e in log) == 1
    expected = 1 if results[0].action == "approve" else 0
    assert len(pool.list_records(user_id="agent:keeper")) == expected


PROMOTER = r"""
import json, sys
from lightagent import LightAgent, ScriptedModel, SharedMemoryPool, SqliteSessionStore
sessions, pool_url, candidate = sys.argv[1:4]
agent = LightAgent(name="keeper", model=ScriptedModel([]), memory=SharedMemoryPool(pool_url),
                   session_store=SqliteSessionStore(sessions), self_learning=True)
decision = agent.promote_memory_candidate(candidate, "approve", session_id="s1")
print(json.dumps({"idempotent": decision.metadata["idempotent"], "stored": decision.metadata["stored"]}))
"""


def test_two_processes_promote_one_candidate_once(tmp_path):
    sessions, pool_url = str(tmp_path / "sessions.db"), f"sqlite:///{tmp_path / 'pool.db'}"
    agent = reflecting_agent(SharedMemoryPool(pool_url), session_store=SqliteSessionStore(sessions))
    agent.run("When does the tide turn at the pier?", user_id="alice", session_id="s1")
    (candidate,) = agent.list_memory_candidates()
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                textwrap.dedent(PROMOTER),
                sessions,
                pool_url,
                candidate["candidate_id"],
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outs = [json.loads(p.communicate(timeout=120)[0].strip().splitlines()[-1]) for p in procs]
    assert sorted(o["idempotent"] for o in outs) == [False, True], outs
    assert len(SharedMemoryPool(pool_url).list_records(user_id="agent:keeper")) == 1


class FlakyPool(SharedMemoryPool):
    """Fails the first write: as if the promoter died between the decision and the write."""

    failures = 0

    def store(self, data, user_id, **kwargs):
        if self.failures:
            self.failures -= 1
            raise ConnectionError("pool went away")
        return super().store(data, user_id, **kwargs)


def test_an_unfinished_promotion_is_completed_once(tmp_path):
    store = SqliteSessionStore(str(tmp_path / "sessions.db"))
    pool = FlakyPool()
    agent = reflecting_agent(pool, session_store=store)
    agent.run("When does the tide turn at the pier?", user_id="alice", session_id="s1")
    (candidate,) = agent.list_memory_candidates()
    pool.failures = 1
    first = agent.promote_memory_candidate(candidate["candidate_id"], "approve")
    assert first.action == "approve" and first.metadata["stored"] is False
    assert len(pool.list_records(user_id="agent:keeper")) == 0
    second = agent.promote_memory_candidate(candidate["candidate_id"], "approve")
    third = agent.promote_memory_candidate(candidate["candidate_id"], "approve")
    assert second.metadata["idempotent"] and second.metadata["stored"]
    assert third.metadata["stored"], "the pool is idempotent by memory id"
    assert len(pool.list_records(user_id="agent:keeper")) == 1
    kinds_in_log = [
        e.data.get("trace_type")
        for e in store.events("s1")
        if e.type in ("memory.promotion", "error.recorded")
    ]
    assert kinds_in_log.count("memory_promotion_approved") == 1
