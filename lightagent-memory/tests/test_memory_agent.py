"""``LightAgent(memory=..., memory_policy=...)``: the policy decides what reaches the prompt
and what is written; every step goes through its hook phase and is an event with the
run's trace ids."""

from __future__ import annotations

import pytest
from lightagent import (
    HookDecision,
    InMemoryMemory,
    LightAgent,
    LightAgentError,
    MemoryPolicy,
    ScriptedModel,
    SharedMemoryPool,
)


def events(result, prefix="memory"):
    return [(e["type"], e["data"]) for e in result.trace if e["type"].startswith(prefix)]


def test_the_seeds_shared_memory_example_runs_as_written():
    shared_memory = SharedMemoryPool(agent_name="writer")
    agent = LightAgent(
        name="writer",
        model=ScriptedModel(["Noted."]),
        memory=shared_memory,
        memory_policy=MemoryPolicy(
            namespace="tenant-a",
            allow_unattributed_results=False,
            allowed_sources=("user",),
            allowed_scopes=("user",),
        ),
    )
    agent.run("Remember that I prefer concise reports.", user_id="alice")
    records = shared_memory.list_records(user_id="tenant-a:alice")
    assert [r.memory for r in records] == ["Remember that I prefer concise reports."]
    assert (
        records[0].metadata["namespace"] == "tenant-a" and records[0].metadata["source"] == "user"
    )
    assert (
        agent.memory_policy is agent.memory_filter and agent.memory_policy.namespace == "tenant-a"
    )


def test_memory_namespace_is_the_policys_namespace():
    memory = InMemoryMemory()
    LightAgent(model=ScriptedModel(["ok"]), memory=memory, memory_namespace="t1").run(
        "I like tea", user_id="alice"
    )
    assert memory.retrieve("tea", "t1:alice")["results"]
    model = ScriptedModel(["ok"])
    agent = LightAgent(
        model=model,
        memory=memory,
        memory_namespace="t1",
        memory_policy=MemoryPolicy(min_write_length=3),
    )
    agent.run("tea?", user_id="alice")
    assert "I like tea" in model.requests[0].messages[0]["content"]
    assert agent.memory_policy.min_write_length == 3 and agent.memory_policy.namespace == "t1"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"memory_policy": MemoryPolicy()},
        {"memory_namespace": "t1"},
        {"self_learning": True},
        {"memory": InMemoryMemory(), "memory_policy": object()},
        {"memory": InMemoryMemory(), "memory_namespace": "t:1"},
        {
            "memory": InMemoryMemory(),
            "memory_namespace": "t1",
            "memory_policy": MemoryPolicy(namespace="t2"),
        },
    ],
)
def test_a_bad_memory_configuration_is_refused(kwargs):
    with pytest.raises(LightAgentError) as info:
        LightAgent(model=ScriptedModel([]), **kwargs)
    assert info.value.code == "LA-CONFIG"


def test_a_refused_write_is_recorded_with_its_reason():
    memory = InMemoryMemory()
    agent = LightAgent(
        model=ScriptedModel(["ok"] * 4),
        memory=memory,
        memory_policy=MemoryPolicy(
            min_write_length=12,
            reject_duplicate_writes=True,
            memory_write_admission=lambda data, ctx: (
                True if "work" in data.lower() else "off topic"
            ),
        ),
    )
    blocked = []
    for query in ("short", "I like holidays a lot", "Work starts at nine.", "work starts at NINE."):
        result = agent.run(query, user_id="alice", result_format="object", trace=True)
        blocked.append([d.get("reason") for k, d in events(result) if k == "memory_write_block"])
    assert blocked == [["too_short"], ["off topic"], [], ["duplicate"]]
    assert [r["memory"] for r in memory.retrieve("work nine", "alice")["results"]] == [
        "Work starts at nine."
    ]
    decisions = [d for k, d in events(result, "hook_decision")]
    assert decisions and decisions[0]["hook"] == "memory_write_admission"


def test_per_run_write_limit_covers_the_reflection():
    memory = InMemoryMemory()
    agent = LightAgent(
        model=ScriptedModel(["an answer"]),
        memory=memory,
        self_learning=True,
        memory_policy=MemoryPolicy(max_writes_per_run=1),
    )
    result = agent.run(
        "a question for the agent", user_id="alice", result_format="object", trace=True
    )
    kinds = [(k, d.get("reason")) for k, d in events(result) if k.startswith("memory_write")]
    assert kinds == [("memory_write", None), ("memory_write_block", "limit")]
    assert agent.list_memory_candidates() == []


def test_every_step_passes_its_hook_phase_in_order():
    seen = []

    def hook(ctx):
        if "memory" in ctx.phase:
            seen.append(ctx.phase)

    agent = LightAgent(
        model=ScriptedModel(["an answer"]),
        memory=InMemoryMemory(),
        self_learning=True,
        hooks=[hook],
    )
    agent.run("a question", user_id="alice")
    assert seen == [
        "before_memory_retrieve",
        "after_memory_retrieve",
        "before_memory_retrieve",  # the agent's own memory (self_learning)
        "after_memory_retrieve",
        "before_memory_write",
        "after_memory_write",
        "before_memory_write",  # the reflection
        "before_memory_promote",
        "after_memory_promote",
    ]


def test_memory_events_carry_the_runs_trace_ids():
    agent = LightAgent(
        model=ScriptedModel(["an answer"]), memory=InMemoryMemory(), self_learning=True
    )
    result = agent.run(
        "a question",
        user_id="alice",
        result_format="object",
        trace=True,
        parent_trace_id="p1",
        run_group_id="g1",
    )
    memory_events = [e for e in result.trace if e["type"].startswith("memory")]
    assert {e["type"] for e in memory_events} == {
        "memory_read",
        "memory_write",
        "memory_promotion_required",
    }
    for event in memory_events:
        assert (
            event["trace_id"],
            event["parent_trace_id"],
            event["run_group_id"],
            event["run_id"],
        ) == (
            result.trace_id,
            "p1",
            "g1",
            result.run_id,
        )


def test_a_hook_can_turn_a_write_into_internal_evidence():
    """A write a hook labels as tool output is not stored: it waits for promotion."""

    class FromTool:
        def before_memory_write(self, ctx):
            return HookDecision.replace({"metadata": {**ctx.payload["metadata"], "source": "tool"}})

    memory = InMemoryMemory()
    agent = LightAgent(model=ScriptedModel(["ok"]), memory=memory, hooks=[FromTool()])
    result = agent.run(
        "The build server is build-7.", user_id="alice", result_format="object", trace=True
    )
    assert len(memory) == 0
    (candidate,) = agent.list_memory_candidates()
    assert candidate["source"] == "tool" and candidate["data"] == "The build server is build-7."
    assert [k for k, _ in events(result)][-1] == "memory_promotion_required"


def test_an_agents_own_memory_cannot_be_read_or_written_as_a_user():
    memory = InMemoryMemory()
    agent = LightAgent(
        name="writer", model=ScriptedModel(["ok", "ok"]), memory=memory, self_learning=True
    )
    agent.run("What is the launch code?", user_id="alice")
    (candidate,) = agent.list_memory_candidates()
    agent.promote_memory_candidate(candidate["candidate_id"], "approve")
    model = ScriptedModel(["ok"])
    LightAgent(name="other", model=model, memory=memory).run("launch code", user_id="agent:writer")
    assert "launch code" not in model.requests[0].messages[0]["content"].split("\n", 1)[-1]
    assert memory.retrieve("launch code", "agent%3Awriter")["results"][0]["memory"] == "launch code"


def test_a_url_names_a_durable_pool(tmp_path):
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    LightAgent(model=ScriptedModel(["ok"]), memory=url).run("I was born in Porto.", user_id="eve")
    model = ScriptedModel(["ok"])
    agent = LightAgent(model=model, memory=url)
    agent.run("Where was I born?", user_id="eve")
    assert isinstance(agent.memory, SharedMemoryPool)
    assert "I was born in Porto." in model.requests[0].messages[0]["content"]
