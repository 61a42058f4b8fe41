"""Memory as effects of the loop: retrieved before the first model request, written after
the run, through hook phases and the filter point, recorded in the event log."""

from __future__ import annotations

import asyncio

import pytest
from lightagent import HookDecision, LightAgent, ScriptedModel
from lightagent.events.memory_store import InMemorySessionStore
from lightagent.memory import InMemoryMemory
from lightagent_memory.recall import MEMORY_HEADER


def _agent(server, memory, **kw):
    return LightAgent(
        model="loopback-model", api_key="k", base_url=server.base_url, memory=memory, **kw
    )


def _system(request) -> str:
    return request["messages"][0]["content"]


def _events(result, prefix="memory"):
    return [(e["type"], e["data"]) for e in result.trace if e["type"].startswith(prefix)]


@pytest.mark.parametrize("mode", ["run", "arun", "stream", "astream"])
def test_memories_reach_the_model_and_the_turn_is_written(loopback_server, mode):
    memory = InMemoryMemory()
    memory.store("Alice prefers concise reports.", "alice")
    agent = _agent(loopback_server, memory)
    loopback_server.reply("Sure, concise.")
    query = "How should my reports look?"
    if mode == "run":
        agent.run(query, user_id="alice")
    elif mode == "arun":
        asyncio.run(agent.arun(query, user_id="alice"))
    elif mode == "stream":
        list(agent.run(query, user_id="alice", stream=True))
    else:

        async def consume():
            return [c async for c in agent.astream(query, user_id="alice")]

        asyncio.run(consume())
    system = _system(loopback_server.requests[0])
    assert MEMORY_HEADER in system and "Alice prefers concise reports." in system
    texts = [r["memory"] for r in memory.retrieve("reports look", "alice")["results"]]
    assert query in texts, "the turn's user message is written after the run"
    written = memory.retrieve("reports look", "alice")["results"][0]
    assert (
        written["metadata"]["source"] == "user" and written["metadata"]["agent_name"] == agent.name
    )


def test_events_carry_the_runs_trace_ids_and_no_memory_text():
    memory = InMemoryMemory()
    memory.store("The code word is PELICAN.", "alice")
    agent = LightAgent(model=ScriptedModel(["ok"]), memory=memory)
    result = agent.run(
        "code word?", user_id="alice", result_format="object", trace=True, parent_trace_id="p1"
    )
    kinds = [k for k, _ in _events(result)]
    assert kinds == ["memory_read", "memory_write"]
    for event in result.trace:
        if event["type"].startswith("memory"):
            assert event["trace_id"] == result.trace_id and event["parent_trace_id"] == "p1"
            assert event["run_id"] == result.run_id
            assert "PELICAN" not in str(event["data"])
    assert dict(_events(result))["memory_read"]["count"] == 1


def test_memory_events_land_in_the_session_log():
    store = InMemorySessionStore()
    agent = LightAgent(model=ScriptedModel(["ok"]), memory=InMemoryMemory(), session_store=store)
    agent.run("remember tea", user_id="u1", session_id="s1")
    events = agent.get_session("s1", user_id="u1")
    kinds = [e.data.get("trace_type", e.type) for e in events]
    assert "memory_read" in kinds and "memory.written" in kinds


class LeakyMemory:
    """A shared backend that returns every user's records (attributed)."""

    def __init__(self):
        self.records = [
            {"memory": "Bob's PIN is 4711.", "user_id": "bob"},
            {"memory": "Alice likes tea.", "metadata": {"user_id": "alice", "source": "user"}},
            {"memory": "An unattributed fact about tea."},
        ]

    def store(self, data, user_id):  # two-argument backends keep working
        self.records.append({"memory": data, "user_id": user_id})

    def retrieve(self, query, user_id):
        return {"results": list(self.records)}


def test_results_attributed_to_another_user_never_reach_the_prompt():
    model = ScriptedModel(["ok"])
    memory = LeakyMemory()
    agent = LightAgent(model=model, memory=memory)
    result = agent.run("tea?", user_id="alice", result_format="object", trace=True)
    system = model.requests[0].messages[0]["content"]
    assert "4711" not in system and "Alice likes tea." in system
    assert "unattributed fact" not in system, "results naming no user fail closed"
    filtered = dict(_events(result))["memory_retrieve_filter"]
    assert filtered["blocked_count"] == 2
    assert filtered["reasons"] == {"other_user": 1, "unattributed": 1}
    assert memory.records[-1] == {"memory": "tea?", "user_id": "alice"}


def test_a_memory_filter_decides_what_is_injected_and_written():
    from lightagent_memory import DefaultMemoryFilter, WriteAdmission

    class Strict(DefaultMemoryFilter):
        def admit_write(self, data, *, user_id, context):
            return WriteAdmission(False, "too short") if len(data) < 10 else WriteAdmission()

    model = ScriptedModel(["ok"])
    memory = LeakyMemory()
    agent = LightAgent(model=model, memory=memory)
    agent.memory_filter = Strict(allow_unattributed=False)
    result = agent.run("tea?", user_id="alice", result_format="object", trace=True)
    assert "unattributed" not in model.requests[0].messages[0]["content"]
    blocks = dict(_events(result))
    assert blocks["memory_write_block"]["reason"] == "too short"
    assert len(memory.records) == 3


class AsyncMemory:
    def __init__(self):
        self.inner = InMemoryMemory()
        self.loops = []

    async def store(self, data, user_id, *, metadata=None):
        self.loops.append(asyncio.get_running_loop())
        return self.inner.store(data, user_id, metadata=metadata)

    async def retrieve(self, query, user_id):
        await asyncio.sleep(0)
        return self.inner.retrieve(query, user_id)


def test_async_backends_work_from_run_and_arun():
    memory = AsyncMemory()
    memory.inner.store("Alice is in Berlin.", "alice")
    model = ScriptedModel(["a", "b"])
    agent = LightAgent(model=model, memory=memory)
    agent.run("Where is Alice, Berlin?", user_id="alice")

    async def main():
        await agent.arun("Berlin again", user_id="alice")
        return asyncio.get_running_loop()

    loop = asyncio.run(main())
    assert "Berlin" in model.requests[0].messages[0]["content"]
    assert "Berlin" in model.requests[1].messages[0]["content"]
    assert memory.loops[-1] is loop, "an async backend is awaited on the caller's loop"


def test_hooks_can_block_rewrite_and_filter():
    memory = InMemoryMemory()
    memory.store("tea is green", "alice")
    memory.store("tea is hot", "alice")

    class Hooks:
        def before_memory_retrieve(self, ctx):
            return HookDecision.replace({"query": "green"})

        def after_memory_retrieve(self, ctx):
            kept = [r for r in ctx.payload["results"] if "green" in r["memory"]]
            return HookDecision.replace({"results": kept})

        def before_memory_write(self, ctx):
            return HookDecision.replace({"data": ctx.payload["data"].upper()})

    model = ScriptedModel(["ok"])
    agent = LightAgent(model=model, memory=memory, hooks=[Hooks()])
    agent.run("what about tea", user_id="alice")
    system = model.requests[0].messages[0]["content"]
    assert "tea is green" in system and "tea is hot" not in system
    assert "WHAT ABOUT TEA" in [r["memory"] for r in memory.retrieve("tea", "alice")["results"]]

    blocked = LightAgent(
        model=ScriptedModel(["ok"]),
        memory=memory,
        hooks=[
            lambda ctx: (
                False if ctx.phase in ("before_memory_retrieve", "before_memory_write") else None
            )
        ],
    )
    result = blocked.run("tea", user_id="alice", result_format="object", trace=True)
    kinds = [k for k, _ in _events(result)]
    assert kinds == ["memory_retrieve_block", "memory_write_block"]
    assert len(memory) == 3


class Broken:
    def store(self, data, user_id):
        raise ConnectionError("memory server down")

    def retrieve(self, query, user_id):
        return 42  # not the mem0 shape


def test_a_failing_backend_is_recorded_and_the_run_goes_on():
    agent = LightAgent(model=ScriptedModel(["fine"]), memory=Broken())
    result = agent.run("hi", result_format="object", trace=True)
    assert result.content == "fine" and result.error is None
    errors = [e["data"] for e in result.trace if e["type"] == "error"]
    assert [e["stage"] for e in errors] == ["memory_retrieve", "memory_write"]
    assert errors[0]["error"]["code"] == "LA-MEMORY"
    assert "memory server down" in errors[1]["error"]["message"]


def test_memory_by_registered_name_and_bad_objects():
    from lightagent import LightAgentError

    agent = LightAgent(model=ScriptedModel(["ok"]), memory="in-memory")
    agent.run("remember me", user_id="u")
    assert isinstance(agent.memory, InMemoryMemory) and len(agent.memory) == 1
    with pytest.raises(LightAgentError) as info:
        LightAgent(model=ScriptedModel([]), memory=object())
    assert info.value.code == "LA-CONFIG"
    with pytest.raises(LightAgentError) as info:
        LightAgent(model=ScriptedModel(["x"]), memory="no-such-memory").run("x")
    assert info.value.code == "LA-CONFIG" and "no-such-memory" in info.value.message


def test_a_filter_can_scope_the_user_id_the_backend_sees():
    from lightagent_memory import DefaultMemoryFilter

    class Namespaced(DefaultMemoryFilter):
        def backend_user_id(self, user_id, *, context):
            return f"tenant-a:{user_id}"

        def filter_results(self, results, *, user_id, context):
            return super().filter_results(results, user_id=f"tenant-a:{user_id}", context=context)

    memory = InMemoryMemory()
    memory.store("Alice's tenant-a note about tea.", "tenant-a:alice")
    memory.store("Alice's other-tenant note about tea.", "alice")
    model = ScriptedModel(["ok"])
    agent = LightAgent(model=model, memory=memory)
    agent.memory_filter = Namespaced()
    agent.run("tea?", user_id="alice")
    system = model.requests[0].messages[0]["content"]
    assert "tenant-a note" in system and "other-tenant" not in system
    assert "tea?" in [r["memory"] for r in memory.retrieve("tea", "tenant-a:alice")["results"]]
