"""Subagents: depth/count limits refuse with typed errors, over the concurrency limit runs
queue (FIFO, never refused), permissions only narrow and are enforced on the subagent's
tool calls, events link to the parent's run and trace, idempotent runs replay from the log."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from lightagent import (
    BudgetError,
    CancellationToken,
    ConfigurationError,
    LightAgent,
    PermissionSet,
    PolicyError,
    SecurityContext,
    ValidationError,
    summarize_trace,
)
from lightagent.events.sql_store import SqliteSessionStore
from lightagent_runtime.subagents import SubagentManager, SubagentToolset
from lightagent_runtime.subagents.slots import RunSlots


def agent(server, name: str, **kw) -> LightAgent:
    return LightAgent(name=name, model="gpt-4.1", api_key="k", base_url=server.base_url, **kw)


def kinds(store, session_id: str) -> list[str]:
    return [e.type for e in store.events(session_id) if e.type.startswith("subagent.")]


# -- limits --------------------------------------------------------------------------


def test_depth_and_count_limits_refuse_with_typed_errors(loopback_server) -> None:
    m = SubagentManager(max_depth=2, max_agents=3, root_agent_id="root")
    m.register(agent(loopback_server, "a"))
    m.register(agent(loopback_server, "b"), parent_agent_id="a")
    with pytest.raises(BudgetError) as deep:
        m.register(agent(loopback_server, "c"), parent_agent_id="b")
    assert deep.value.code == "LA-SUBAGENT-DEPTH"
    assert deep.value.details == {"depth": 3, "max_depth": 2}
    m.register(agent(loopback_server, "c"), parent_agent_id="root")  # the root's id is the root
    with pytest.raises(BudgetError) as many:
        m.register(agent(loopback_server, "d"))
    assert many.value.code == "LA-SUBAGENT-LIMIT"
    assert [r.agent_id for r in m.list()] == ["a", "b", "c"]
    tree = m.tree()
    assert tree["agent_id"] == "root"
    assert [(c["agent_id"], [g["agent_id"] for g in c["children"]]) for c in tree["children"]] == [
        ("a", ["b"]),
        ("c", []),
    ]


def test_bad_input_is_typed(loopback_server) -> None:
    with pytest.raises(ConfigurationError):
        SubagentManager(max_concurrency=0)
    with pytest.raises(ConfigurationError):
        SubagentManager(store=SqliteSessionStore(":memory:"))  # no session_id
    m = SubagentManager()
    with pytest.raises(ConfigurationError):
        m.register(object())
    with pytest.raises(ValidationError) as bad_id:
        m.register(agent(loopback_server, "a"), agent_id="../x")
    assert bad_id.value.code == "LA-VALIDATION"
    with pytest.raises(ValidationError) as unknown_parent:
        m.register(agent(loopback_server, "a"), parent_agent_id="nobody")
    assert unknown_parent.value.code == "LA-SUBAGENT-UNKNOWN"
    m.register(agent(loopback_server, "a"))
    with pytest.raises(ValidationError) as moved:
        m.register(agent(loopback_server, "b"), agent_id="a", parent_agent_id="a")
    assert moved.value.code == "LA-SUBAGENT-EXISTS"
    with pytest.raises(ValidationError) as none:
        asyncio.run(m.run("ghost", "hi"))
    assert none.value.code == "LA-SUBAGENT-UNKNOWN"
    with pytest.raises(ValidationError):
        asyncio.run(m.run("a", "  "))


# -- permissions ---------------------------------------------------------------------


def test_permissions_only_narrow_and_bind_the_subagents_tool_calls(loopback_server) -> None:
    root = SecurityContext(
        agent_id="root", permissions=PermissionSet(allowed=["tool.read_*"], max_risk="L2")
    )
    m = SubagentManager(root_agent_id="root", root_context=root)
    with pytest.raises(PolicyError) as widen:
        m.register(agent(loopback_server, "w"), allowed_capabilities=["tool.delete_all"])
    assert widen.value.code == "LA-PERMISSION-WIDEN"
    with pytest.raises(PolicyError):
        m.register(agent(loopback_server, "w"), max_risk="L3")

    def read_file(path: str) -> str:
        """Read `path`."""
        return f"contents of {path}"

    def write_file(path: str) -> str:
        """Write `path`."""
        raise AssertionError("a narrowed subagent must not write")

    reader = agent(loopback_server, "reader", tools=[read_file, write_file])
    record = m.register(reader, allowed_capabilities=["tool.read_file"], max_risk="L2")
    assert record.permissions["allowed"] == ["tool.read_file"]
    assert record.permissions["max_risk"] == "L2"  # tools are L2 by default
    ctx = m.context("reader")
    assert ctx.parent_agent_id == "root" and ctx.agent_id == "reader"
    assert ctx.is_within(root)
    # a grandchild cannot get back what its parent lost
    with pytest.raises(PolicyError):
        m.register(
            agent(loopback_server, "g"),
            parent_agent_id="reader",
            allowed_capabilities=["tool.read_dir"],
        )
    loopback_server.reply(
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "x"}}]},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "x"}}]},
        "done",
    )
    result = asyncio.run(m.run("reader", "work"))
    assert result.success, result.error
    tool_msgs = [m for m in loopback_server.requests[2]["messages"] if m["role"] == "tool"]
    # not permitted: never offered, so the call is an unknown tool and never ran
    assert tool_msgs[0]["content"].startswith("Error [LA-TOOL-NOT-FOUND]")
    assert tool_msgs[1]["content"] == "contents of x"


def test_an_agent_with_a_wider_context_of_its_own_is_refused(loopback_server) -> None:
    m = SubagentManager(root_context=SecurityContext(permissions=PermissionSet(allowed=["tool.a"])))
    wide = agent(loopback_server, "wide", security_context=SecurityContext())
    with pytest.raises(PolicyError) as refused:
        m.register(wide)
    assert refused.value.code == "LA-PERMISSION-WIDEN"


# -- concurrency: queue, never refuse -------------------------------------------------


def test_runs_over_the_concurrency_limit_queue_and_all_complete(loopback_server, tmp_path) -> None:
    lock = threading.Lock()
    live = {"now": 0, "max": 0}
    limit_reached = threading.Event()

    def slow(body):
        with lock:
            live["now"] += 1
            live["max"] = max(live["max"], live["now"])
        # The first requests wait (bounded) until both slots are busy and the other three
        # runs wait in line: the limit is reached however slowly the runs start.
        deadline = time.monotonic() + 30
        while not limit_reached.is_set() and time.monotonic() < deadline:
            if live["now"] == 2 and m.queued == 3:
                limit_reached.set()
            time.sleep(0.01)
        time.sleep(0.05)  # lingers, so a run started over the limit would be counted
        with lock:
            live["now"] -= 1
        return "ok " + body["messages"][-1]["content"]

    loopback_server.default = slow
    store = SqliteSessionStore(tmp_path / "s.db")
    m = SubagentManager(max_concurrency=2, max_agents=5, store=store, session_id="parent")
    for i in range(5):
        m.register(agent(loopback_server, f"w{i}"), persistent=True)

    async def main():
        return await asyncio.gather(*(m.run(f"w{i}", f"task {i}") for i in range(5)))

    results = asyncio.run(main())
    assert [r.content for r in results] == [f"ok task {i}" for i in range(5)]
    assert live["max"] == 2  # never more than the limit at once ...
    events = kinds(store, "parent")
    assert events.count("subagent.queued") == 3  # ... and the rest waited, none refused
    assert events.count("subagent.completed") == 5
    assert m.running == 0 and m.queued == 0
    assert {r.status for r in m.list()} == {"completed"}
    # the live records are what a new manager folds from the log
    restored = SubagentManager(store=store, session_id="parent", max_agents=5)
    assert [r.to_dict() for r in restored.list()] == [r.to_dict() for r in m.list()]


def test_run_slots_are_fifo_and_a_cancelled_waiter_leaves_the_line() -> None:
    async def main():
        slots = RunSlots(1)
        await slots.acquire()
        order = []

        async def take(name):
            await slots.acquire()
            order.append(name)
            slots.release()

        first = asyncio.ensure_future(take("first"))
        quitter = asyncio.ensure_future(take("quitter"))
        second = asyncio.ensure_future(take("second"))
        await asyncio.sleep(0)
        assert slots.waiting == 3
        quitter.cancel()
        await asyncio.sleep(0)
        slots.release()
        await asyncio.gather(first, second)
        assert order == ["first", "second"]
        assert slots.in_use == 0 and slots.waiting == 0

    asyncio.run(main())


def test_cancel_stops_a_queued_run_before_it_starts(loopback_server) -> None:
    gate, entered = threading.Event(), threading.Event()

    def held(body):
        entered.set()
        assert gate.wait(10)
        return "first done"

    loopback_server.default = held
    queued: dict = {}
    m = SubagentManager(
        max_concurrency=1,
        event_sink=lambda e: e["type"] == "subagent.queued" and queued["event"].set(),
    )
    m.register(agent(loopback_server, "busy"))
    m.register(agent(loopback_server, "later"))

    async def main():
        queued["event"] = asyncio.Event()
        running = asyncio.ensure_future(m.run("busy", "one"))
        assert await asyncio.to_thread(entered.wait, 10)
        waiting = asyncio.ensure_future(m.run("later", "two"))
        await asyncio.wait_for(queued["event"].wait(), 10)
        assert m.queued == 1 and m.running == 1
        m.cancel("later", "not needed")
        cancelled = await waiting
        gate.set()
        return await running, cancelled

    first, cancelled = asyncio.run(main())
    assert first.content == "first done"
    assert cancelled.status == "cancelled" and cancelled.error["code"] == "LA-CANCELLED"
    assert len(loopback_server.requests) == 1  # the queued run never reached the model
    assert (m.get("busy").status, m.get("later").status) == ("completed", "cancelled")
    assert m.get("later").runs == 0
    with pytest.raises(ValidationError) as closed:
        asyncio.run(m.run("later", "again"))
    assert closed.value.code == "LA-SUBAGENT-CLOSED"


def test_a_parent_token_cancels_its_subagent_runs(loopback_server) -> None:
    m = SubagentManager()
    m.register(agent(loopback_server, "a"), persistent=True)
    token = CancellationToken()
    token.cancel("user pressed stop")
    result = asyncio.run(m.run("a", "hi", cancellation_token=token))
    assert result.status == "cancelled"
    assert loopback_server.requests == []
    # that run was stopped; the subagent itself was not cancelled and runs again
    assert m.get("a").status == "stopped"
    loopback_server.reply("again")
    assert asyncio.run(m.run("a", "hi")).content == "again"
    assert (m.get("a").status, m.get("a").runs) == ("completed", 2)


def test_a_non_persistent_subagent_runs_once(loopback_server) -> None:
    m = SubagentManager(max_agents=1)
    m.register(agent(loopback_server, "once"))
    loopback_server.reply("done")
    assert asyncio.run(m.run("once", "hi")).content == "done"
    with pytest.raises(ValidationError) as closed:
        asyncio.run(m.run("once", "hi"))
    assert closed.value.code == "LA-SUBAGENT-CLOSED"
    m.register(agent(loopback_server, "next"))  # a closed one no longer counts to max_agents


# -- trace links and idempotency ------------------------------------------------------


def test_events_link_to_the_parent_run_and_trace(loopback_server, tmp_path) -> None:
    store = SqliteSessionStore(tmp_path / "s.db")
    seen: list[dict] = []
    m = SubagentManager(store=store, session_id="parent", event_sink=seen.append)
    child = agent(loopback_server, "child", session_store=store)
    m.register(child, persistent=True)
    loopback_server.reply("child answer")
    result = asyncio.run(
        m.run("child", "hi", parent_run_id="run_p", parent_trace_id="trace_p", trace=True)
    )
    assert result.parent_trace_id == "trace_p" and result.parent_run_id == "run_p"
    # the subagent's own events carry the parent's trace id, in its trace and its log
    child_events = store.events("parent:child")
    assert child_events and all(e.parent_trace_id == "trace_p" for e in child_events if e.trace_id)
    assert summarize_trace(child_events).parent_trace_id == "trace_p"
    # the parent's log holds the link both ways, and its trace summary names the child
    parent_events = store.events("parent")
    done = next(e for e in parent_events if e.type == "subagent.completed")
    assert done.run_id == "run_p" and done.trace_id == "trace_p"
    assert done.data["run_id"] == result.run_id and done.data["trace_id"] == result.trace_id
    assert summarize_trace(parent_events).child_trace_ids == [result.trace_id]
    assert [e["type"] for e in seen] == [
        "subagent.created",
        "subagent.started",
        "subagent.completed",
    ]


def test_a_repeated_idempotency_key_returns_the_recorded_result(loopback_server, tmp_path) -> None:
    store = SqliteSessionStore(tmp_path / "s.db")
    m = SubagentManager(store=store, session_id="parent")
    m.register(agent(loopback_server, "w"), persistent=True)
    loopback_server.reply("first")
    first = asyncio.run(m.run("w", "do it", idempotency_key="k1"))
    again = asyncio.run(m.run("w", "do it", idempotency_key="k1"))
    assert (first.content, again.content) == ("first", "first")
    assert again.idempotent_replay and not first.idempotent_replay
    assert len(loopback_server.requests) == 1
    # a new manager (a new process) reads it from the log alone
    fresh = SubagentManager(store=SqliteSessionStore(tmp_path / "s.db"), session_id="parent")
    fresh.register(agent(loopback_server, "w"), persistent=True)
    replay = asyncio.run(fresh.run("w", "do it", idempotency_key="k1"))
    assert replay.content == "first" and replay.run_id == first.run_id
    assert len(loopback_server.requests) == 1


def test_concurrent_runs_with_one_key_run_once(loopback_server) -> None:
    def slow(body):
        time.sleep(0.1)
        return "once"

    loopback_server.default = slow
    m = SubagentManager()
    m.register(agent(loopback_server, "w"), persistent=True)

    async def main():
        return await asyncio.gather(*(m.run("w", "x", idempotency_key="same") for _ in range(3)))

    results = asyncio.run(main())
    assert [r.content for r in results] == ["once"] * 3
    assert sum(not r.idempotent_replay for r in results) == 1
    assert len(loopback_server.requests) == 1


# -- delegation as a tool -------------------------------------------------------------


def test_a_model_delegates_through_the_tool_and_the_trace_links(loopback_server, tmp_path) -> None:
    store = SqliteSessionStore(tmp_path / "s.db")
    m = SubagentManager(store=store, session_id="p1", max_concurrency=1)
    m.register(agent(loopback_server, "researcher"), persistent=True)
    parent = agent(loopback_server, "lead", tools=[SubagentToolset(m)], session_store=store)
    loopback_server.reply(
        {
            "tool_calls": [
                {"name": "delegate", "arguments": {"agent_id": "researcher", "task": "find X"}},
                {"name": "delegate", "arguments": {"agent_id": "nobody", "task": "y"}},
            ]
        },
        "X is 42",  # the subagent's answer
        "The answer is 42",
    )
    result = parent.run("What is X?", session_id="p1", result_format="object", trace=True)
    assert result.content == "The answer is 42", result.error
    tools = [msg for msg in loopback_server.requests[-1]["messages"] if msg["role"] == "tool"]
    assert tools[0]["content"] == "X is 42"
    assert "LA-SUBAGENT-UNKNOWN" in tools[1]["content"] or "LA-TOOL" in tools[1]["content"]
    done = next(e for e in store.events("p1") if e.type == "subagent.completed")
    assert done.data["parent_run_id"] == result.run_id
    assert done.data["parent_trace_id"] == result.trace_id
    assert done.data["idempotency_key"]  # the call's key: a resumed parent replays it
    assert result.trace_id in summarize_trace(store.events("p1")).trace_ids
    assert done.data["trace_id"] in summarize_trace(store.events("p1")).child_trace_ids


def test_the_limit_holds_across_threads_and_event_loops(loopback_server) -> None:
    lock = threading.Lock()
    live = {"now": 0, "max": 0}

    def slow(body):
        with lock:
            live["now"] += 1
            live["max"] = max(live["max"], live["now"])
        time.sleep(0.05)
        with lock:
            live["now"] -= 1
        return "ok"

    loopback_server.default = slow
    m = SubagentManager(max_concurrency=1, max_agents=4)
    for i in range(4):
        m.register(agent(loopback_server, f"w{i}"), persistent=True)
    results: list = []

    def worker(i: int) -> None:  # each thread its own event loop
        results.append(asyncio.run(m.run(f"w{i}", "go")).content)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert results == ["ok"] * 4
    assert live["max"] == 1
    # and from sync code
    assert m.run_sync("w0", "go").content == "ok"


def test_send_reaches_the_subagents_inbox(loopback_server, tmp_path) -> None:
    store = SqliteSessionStore(tmp_path / "s.db")
    m = SubagentManager(store=store, session_id="p")
    m.register(agent(loopback_server, "w", session_store=store), persistent=True)
    sent = m.send("w", "use the 2024 figures", message_id="n1")
    assert sent["message_id"] == "n1"
    loopback_server.reply("done")
    asyncio.run(m.run("w", "report"))
    assert loopback_server.requests[0]["messages"][-1]["content"] == "use the 2024 figures"
    bare = SubagentManager()
    bare.register(agent(loopback_server, "x"))
    with pytest.raises(ConfigurationError):
        bare.send("x", "hi")


def test_only_a_narrowed_context_is_bound_to_the_agent(loopback_server) -> None:
    m = SubagentManager()
    free = agent(loopback_server, "free")
    m.register(free)
    assert free.interceptor is None  # unrestricted: nothing to check, the fast path stays
    assert m.context("free").network_allowed  # the default root holds everything
    narrow = agent(loopback_server, "narrow")
    m.register(narrow, allowed_capabilities=["tool.read"])
    assert narrow.interceptor.security_context == m.context("narrow")
    assert not m.context("narrow").permissions.allows("tool.write", "L0")
