"""``agent.runtime``: the seeds' facade over one session's goals, inbox, budget, progress,
subagents and pause/resume/cancel — thin views over the session log, which the loop obeys."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from lightagent import (
    AgentRuntime,
    BudgetExceeded,
    BudgetLimits,
    ConfigurationError,
    LightAgent,
    ProgressPolicy,
    ValidationError,
)
from lightagent.events.sql_store import SqliteSessionStore, SqlSessionStore
from lightagent_runtime.goals import create_goal, update_goal
from lightagent_runtime.subagents import SubagentManager


def make(server, db, **kw) -> LightAgent:
    return LightAgent(
        name="lead",
        model="gpt-4.1",
        api_key="k",
        base_url=server.base_url,
        session_store=SqliteSessionStore(db),
        **kw,
    )


def test_the_seeds_example_runs_and_the_loop_consults_it(loopback_server, tmp_path) -> None:
    agent = make(loopback_server, tmp_path / "s.db")
    rt = agent.runtime.open_session("release")
    assert isinstance(rt, AgentRuntime) and rt is agent.runtime
    goal = agent.runtime.goals.create(
        "Prepare the release", acceptance_criteria=["tests pass", "artifacts build"]
    )
    assert goal.status == "pending"
    assert agent.runtime.goals.activate(goal.goal_id).status == "active"
    hold = agent.runtime.inbox.enqueue("steering", "Do not publish yet", message_id="release-hold")
    assert (hold.status, hold.message_type) == ("pending", "steering")
    # idempotent by id
    assert agent.runtime.inbox.enqueue("steering", "other", message_id="release-hold") == hold
    loopback_server.reply("tests pass and artifacts build")
    result = agent.run("Status?", session_id="release", result_format="object")
    assert result.error is None
    # the run took the message in and checked the active goal
    assert loopback_server.requests[0]["messages"][-1]["content"] == "Do not publish yet"
    assert agent.runtime.inbox.get("release-hold").status == "claimed"
    assert agent.runtime.inbox.get("release-hold").claimed_by_run == result.run_id
    assert agent.runtime.goals.get(goal.goal_id).status == "completed"
    assert agent.runtime.inbox.complete("release-hold", result="held").status == "completed"


def test_goal_moves_and_their_typed_errors(loopback_server, tmp_path) -> None:
    agent = make(loopback_server, tmp_path / "s.db")
    goals = agent.runtime.for_session("g").goals
    with pytest.raises(ValidationError) as missing:
        goals.activate("nope")
    assert missing.value.code == "LA-GOAL-UNKNOWN"
    parent = goals.create("Ship", activate=True)
    child = goals.create("Write notes", parent_goal_id=parent.goal_id, metadata={"owner": "ana"})
    assert child.parent_goal_id == parent.goal_id and child.metadata == {"owner": "ana"}
    with pytest.raises(ValidationError) as orphan:
        goals.create("x", parent_goal_id="nope")
    assert orphan.value.code == "LA-GOAL-UNKNOWN"
    blocked = goals.block(child.goal_id, "waiting for CI")
    assert (blocked.status, blocked.blocker) == ("blocked", "waiting for CI")
    with pytest.raises(ValidationError):
        goals.block(child.goal_id, " ")
    done = goals.complete(child.goal_id, evidence={"url": "ci/42"})
    assert (done.status, done.evidence) == ("completed", {"url": "ci/42"})
    assert goals.complete(child.goal_id).status == "completed"  # same status: a no-op
    with pytest.raises(ValidationError) as closed:
        goals.activate(child.goal_id)
    assert closed.value.code == "LA-GOAL-STATE"
    assert goals.cancel(parent.goal_id, "dropped").status == "cancelled"
    assert [g.status for g in goals.list()] == ["cancelled", "completed"]
    assert goals.list(status="completed")[0].goal_id == child.goal_id
    with pytest.raises(ValidationError):
        goals.create("   ")


def test_blocked_and_pending_goals_are_not_checked_by_runs(loopback_server, tmp_path) -> None:
    agent = make(loopback_server, tmp_path / "s.db")
    goals = agent.runtime.for_session("b").goals
    pending = goals.create("A", acceptance_criteria=["done"])
    active = goals.create("B", acceptance_criteria=["done"], activate=True)
    blocked = goals.create("C", acceptance_criteria=["done"], activate=True)
    goals.block(blocked.goal_id, "later")
    loopback_server.reply("done")
    agent.run("go", session_id="b")
    status = {g.goal_id: g.status for g in goals.list()}
    assert status == {
        pending.goal_id: "pending",
        active.goal_id: "completed",
        blocked.goal_id: "blocked",
    }


def test_inbox_views_and_rejecting_a_pending_message(loopback_server, tmp_path) -> None:
    agent = make(loopback_server, tmp_path / "s.db")
    inbox = agent.runtime.for_session("i").inbox
    with pytest.raises(ValidationError):
        inbox.enqueue("shout", "hi")  # not one of the seeds' types
    with pytest.raises(ValidationError):
        inbox.reject("none", "x")  # the session is empty
    inbox.enqueue("followup", "keep", message_id="a", correlation_id="c1")
    inbox.enqueue("context", "drop", message_id="b")
    assert [m.message_id for m in inbox.pending()] == ["a", "b"]
    assert [m.message_id for m in inbox.pending("context")] == ["b"]
    assert inbox.get("a").correlation_id == "c1"
    assert inbox.reject("b", "stale").status == "rejected"
    with pytest.raises(ValidationError) as unclaimed:
        inbox.complete("a")  # only a claimed message is completed
    assert "pending" in unclaimed.value.message
    loopback_server.reply("ok")
    agent.run("go", session_id="i")
    sent = [m["content"] for m in loopback_server.requests[0]["messages"]]
    assert "keep" in sent and "drop" not in sent  # a rejected message is never injected
    with pytest.raises(ValidationError):
        inbox.reject("a", "too late")  # claimed meanwhile
    assert [m.status for m in inbox.list()] == ["claimed", "rejected"]


def test_budget_view_reads_the_ledger_and_consume_is_fail_closed(loopback_server, tmp_path) -> None:
    agent = make(
        loopback_server,
        tmp_path / "s.db",
        budget_limits=BudgetLimits(model_calls=3, tool_calls=2, per="session"),
    )
    budget = agent.runtime.for_session("bud").budget
    loopback_server.reply("one")
    agent.run("q", session_id="bud")
    assert budget.used()["model_calls"] == 1
    assert budget.remaining()["model_calls"] == 2
    assert budget.consume(tool_calls=2)["tool_calls"] == 2
    with pytest.raises(BudgetExceeded) as over:
        budget.consume(tool_calls=1)
    assert over.value.dimension == "tool_calls" and over.value.scope == "session"
    assert budget.used()["tool_calls"] == 2  # the refused usage was not recorded
    with pytest.raises(ValidationError):
        budget.consume(bananas=1)
    with pytest.raises(ValidationError):
        budget.consume(model_calls=-1)


def test_progress_view_shows_the_stalls(loopback_server, tmp_path) -> None:
    def lookup(city: str) -> str:
        """Look up `city`."""
        return "same"

    agent = make(
        loopback_server,
        tmp_path / "s.db",
        tools=[lookup],
        progress_policy=ProgressPolicy(max_repeated_tool_calls=2, max_unchanged_steps=5),
    )
    call = {"tool_calls": [{"name": "lookup", "arguments": {"city": "P"}}]}
    loopback_server.reply(call, call)
    result = agent.run("q", session_id="p", result_format="object")
    assert result.error["code"] == "LA-NO-PROGRESS"
    progress = agent.runtime.for_session("p").progress
    assert progress.stalled and progress.stalls()[0]["run_id"] == result.run_id
    assert progress.policy.max_repeated_tool_calls == 2


def test_pause_stops_a_running_run_at_its_next_boundary_and_continue_goes_on(
    loopback_server, tmp_path
) -> None:
    holder: dict = {}

    def lookup(city: str) -> str:
        """Look up `city`."""
        holder["agent"].runtime.for_session("run").pause("waiting for CI")
        return f"{city}: sunny"

    agent = make(loopback_server, tmp_path / "s.db", tools=[lookup])
    holder["agent"] = agent
    rt = agent.runtime.for_session("run")
    loopback_server.reply({"tool_calls": [{"name": "lookup", "arguments": {"city": "P"}}]})
    result = agent.run("weather?", session_id="run", result_format="object")
    assert result.error["code"] == "LA-CANCELLED"
    assert result.error["details"]["mode"] == "paused"
    assert len(loopback_server.requests) == 1  # the tool round finished, no further request
    assert rt.paused == "waiting for CI"
    # a new run of a paused session stops before its first request
    assert agent.run("again", session_id="run", result_format="object").error["code"] == (
        "LA-CANCELLED"
    )
    assert len(loopback_server.requests) == 1
    loopback_server.reply("P is sunny")
    answer = rt.continue_run("go on")
    assert answer == "P is sunny" and rt.paused is None
    with pytest.raises(ValidationError):
        agent.runtime.for_session("empty").continue_run()


def test_cancel_reaches_a_running_run_but_not_later_ones(loopback_server, tmp_path) -> None:
    holder: dict = {}
    cancelled = threading.Event()

    def lookup(city: str) -> str:
        """Look up `city`."""
        if not cancelled.is_set():
            holder["agent"].runtime.for_session("c").cancel("user left")
            cancelled.set()
        return "ok"

    agent = make(loopback_server, tmp_path / "s.db", tools=[lookup])
    holder["agent"] = agent
    loopback_server.reply({"tool_calls": [{"name": "lookup", "arguments": {"city": "P"}}]})
    first = agent.run("q", session_id="c", result_format="object")
    assert first.error["details"]["mode"] == "now"
    loopback_server.reply("fine")
    assert agent.run("q2", session_id="c") == "fine"


def test_snapshot_subagents_and_the_missing_pieces(loopback_server, tmp_path) -> None:
    agent = make(loopback_server, tmp_path / "s.db")
    rt = agent.runtime.for_session("snap")
    rt.goals.create("G")
    rt.inbox.enqueue("followup", "hello", message_id="m")
    helper = LightAgent(
        name="helper", model="gpt-4.1", api_key="k", base_url=loopback_server.base_url
    )
    record = rt.subagents.register(helper)
    # one manager per agent and session, whichever runtime asks: one concurrency limit
    assert agent.runtime.for_session("snap").subagents is rt.subagents
    assert agent.runtime.for_session("other").subagents is not rt.subagents
    assert record.parent_agent_id is None and rt.subagents.root_agent_id == "lead"
    snap = rt.snapshot()
    assert snap["session_id"] == "snap"
    assert [g["objective"] for g in snap["goals"]] == ["G"]
    assert [m["message_id"] for m in snap["inbox"]["pending"]] == ["m"]
    assert [s["agent_id"] for s in snap["subagents"]] == ["helper"]
    assert snap["paused"] is None and snap["last_sequence"] > 0
    # the session's job manager, the one agent.job_manager gives, over the same log
    from lightagent_runtime.jobs import JobManager

    assert isinstance(rt.jobs, JobManager) and rt.jobs is agent.job_manager("snap")
    assert rt.jobs.session_id == "snap"
    with pytest.raises(ConfigurationError):
        rt.subagents = object()
    bare = LightAgent(model="gpt-4.1", api_key="k", base_url=loopback_server.base_url)
    with pytest.raises(ConfigurationError):
        _ = bare.runtime.goals  # no session store
    stored = make(loopback_server, tmp_path / "t.db")
    with pytest.raises(ConfigurationError):
        _ = stored.runtime.session_id  # no session opened, no run yet


@pytest.fixture(params=["sqlite", "postgres"])
def open_store(request, tmp_path) -> Callable[[], Any]:
    """Opens a new store object on one shared storage (as separate processes would)."""
    if request.param == "sqlite":
        return lambda: SqliteSessionStore(tmp_path / "s.db")
    url = request.getfixturevalue("postgres_url")
    prefix = f"rt{uuid.uuid4().hex[:8]}_"
    return lambda: SqlSessionStore(url, table_prefix=prefix)


def test_racing_goal_moves_close_a_goal_once(open_store) -> None:
    create_goal(open_store(), "race", "Decide", goal_id="g")
    outcomes: list[str] = []
    barrier = threading.Barrier(6)

    def move(i: int) -> None:
        store = open_store()
        barrier.wait()
        try:
            goal = update_goal(store, "race", "g", "completed" if i % 2 else "cancelled")
            outcomes.append(goal["status"])
        except ValidationError as exc:
            outcomes.append(exc.code)

    threads = [threading.Thread(target=move, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    closes = [
        e for e in open_store().events("race") if e.type in ("goal.completed", "goal.cancelled")
    ]
    assert len(closes) == 1  # one writer moved it; the others saw it closed
    winner = closes[0].data["status"]
    assert set(outcomes) <= {winner, "LA-GOAL-STATE"} and winner in outcomes


def test_subagent_records_and_results_restore_on_each_store(loopback_server, open_store) -> None:
    def helper() -> LightAgent:
        return LightAgent(name="h", model="gpt-4.1", api_key="k", base_url=loopback_server.base_url)

    m = SubagentManager(store=open_store(), session_id="sub", max_agents=2)
    m.register(helper(), persistent=True, metadata={"k": 1})
    loopback_server.reply("result")
    first = asyncio.run(m.run("h", "q", idempotency_key="once"))
    again = SubagentManager(store=open_store(), session_id="sub", max_agents=2)
    (record,) = again.list()
    assert (record.agent_id, record.status, record.runs, record.metadata) == (
        "h",
        "completed",
        1,
        {"k": 1},
    )
    with pytest.raises(ValidationError) as detached:
        asyncio.run(again.run("h", "q", idempotency_key="once"))
    assert detached.value.code == "LA-SUBAGENT-UNKNOWN"  # the agent object is not attached yet
    again.register(helper(), persistent=True)
    replay = asyncio.run(again.run("h", "q", idempotency_key="once"))
    assert replay.content == "result" and replay.run_id == first.run_id
