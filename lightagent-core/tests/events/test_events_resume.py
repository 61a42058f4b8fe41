"""Resume: done calls never rerun, unknown calls need reconcile or approval, pending ones run."""

from __future__ import annotations

import asyncio
import sqlite3
import time

import pytest
from lightagent import LightAgent, ScriptedModel, tool
from lightagent.errors import ApprovalError, StorageError
from lightagent.events.manager import SessionManager
from lightagent.events.resume import aresume, plan_resume, resume
from lightagent.events.sql_store import SqliteSessionStore


class Crash(BaseException):
    """Stands in for the process dying in the middle of a tool call."""


class Ledger:
    """An external side effect: a SQLite table of applied charges keyed by idempotency key."""

    def __init__(self, path):
        self.path = str(path)
        with sqlite3.connect(self.path) as db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS applied (key TEXT PRIMARY KEY, item TEXT, n INTEGER)"
            )

    def apply(self, key, item):
        with sqlite3.connect(self.path) as db:
            db.execute(
                "INSERT INTO applied VALUES (?, ?, 1) ON CONFLICT(key) DO UPDATE SET n = n + 1",
                (key, item),
            )

    def get(self, key):
        with sqlite3.connect(self.path) as db:
            row = db.execute("SELECT item, n FROM applied WHERE key = ?", (key,)).fetchone()
        return row

    def counts(self):
        with sqlite3.connect(self.path) as db:
            return dict(db.execute("SELECT item, n FROM applied").fetchall())


def _agent(store, ledger, crash_on=(), after_effect=True):
    crashes = set(crash_on)

    @tool
    def charge(item: str, idempotency_key: str) -> str:
        """Charge for an item (a side effect)."""
        if item in crashes and not after_effect:
            crashes.discard(item)
            raise Crash(item)
        ledger.apply(idempotency_key, item)
        if item in crashes:
            crashes.discard(item)
            raise Crash(item)
        return f"charged {item}"

    model = ScriptedModel(
        [
            {
                "tool_calls": [
                    {"name": "charge", "arguments": {"item": "a"}},
                    {"name": "charge", "arguments": {"item": "b"}},
                ]
            },
            {"tool_calls": [{"name": "charge", "arguments": {"item": "c"}}]},
            "all charged",
        ]
    )
    return LightAgent(model=model, tools=[charge], session_store=store, max_tool_workers=1), model


def _crash_run(store, ledger, **kw):
    agent, model = _agent(store, ledger, **kw)
    with pytest.raises(Crash):
        agent.run("charge a, b then c", session_id="s")
    (run_id,) = SessionManager(store).replay("s").incomplete_runs
    return run_id, model


def _reconcile(ledger):
    def check(call):
        row = ledger.get(call.idempotency_key)
        return f"charged {row[0]}" if row else None

    return check


def test_plan_sorts_calls_into_done_unknown_pending(tmp_path):
    store = SqliteSessionStore(tmp_path / "s.db")
    ledger = Ledger(tmp_path / "ledger.db")
    run_id, _ = _crash_run(store, ledger, crash_on={"c"})
    plan = plan_resume(SessionManager(store).events("s"), run_id, session_id="s")
    assert plan.status == "continue"
    assert plan.done == {} and [c.name for c in plan.unknown] == ["charge"]
    assert plan.unknown[0].arguments == {"item": "c"} and len(plan.unknown[0].idempotency_key) == 64
    # The rebuilt transcript ends with the assistant message asking for the call.
    assert plan.messages[-1]["tool_calls"][0]["id"] == plan.unknown[0].call_id
    assert [m["role"] for m in plan.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
    ]


def test_unknown_call_without_reconcile_or_approval_stops_typed(tmp_path):
    store = SqliteSessionStore(tmp_path / "s.db")
    ledger = Ledger(tmp_path / "ledger.db")
    run_id, _ = _crash_run(store, ledger, crash_on={"c"})
    agent, model = _agent(store, ledger)
    with pytest.raises(ApprovalError) as info:
        resume(agent, run_id, session_id="s")
    assert info.value.code == "LA-APPROVAL" and info.value.details["tool"] == "charge"
    assert "charge" in info.value.message and info.value.details["call_id"]
    assert model.requests == [] and ledger.counts()["c"] == 1


@pytest.mark.parametrize("after_effect", [True, False])
def test_reconcile_settles_unknown_calls_and_nothing_runs_twice(tmp_path, after_effect):
    store = SqliteSessionStore(tmp_path / "s.db")
    ledger = Ledger(tmp_path / "ledger.db")
    run_id, _ = _crash_run(store, ledger, crash_on={"c"}, after_effect=after_effect)
    agent, model = _agent(store, ledger)
    model._queue.popleft()  # the first two answers were consumed before the crash
    model._queue.popleft()
    answer = resume(agent, run_id, session_id="s", reconcile=_reconcile(ledger), approve=True)
    assert answer == "all charged"
    assert ledger.counts() == {"a": 1, "b": 1, "c": 1}
    replay = SessionManager(store).replay("s")
    assert len(replay.completed_turns) == 1 and replay.incomplete_turns == []
    kinds = [e.type for e in SessionManager(store).events("s")]
    assert ("tool.reconciled" in kinds) == after_effect
    assert ("approval.decided" in kinds) == (not after_effect)
    # Resuming a finished run returns its answer and runs nothing.
    assert resume(agent, run_id, session_id="s") == "all charged"
    assert ledger.counts() == {"a": 1, "b": 1, "c": 1}


def test_done_calls_are_skipped_in_the_first_round(tmp_path):
    store = SqliteSessionStore(tmp_path / "s.db")
    ledger = Ledger(tmp_path / "ledger.db")
    run_id, _ = _crash_run(store, ledger, crash_on={"c"})
    agent, model = _agent(store, ledger)
    model._queue.popleft()
    model._queue.popleft()
    # First resume settles c and dies again before the final answer is recorded.
    model._queue.clear()
    model.add(Crash("model call"))
    with pytest.raises(Crash):
        resume(agent, run_id, session_id="s", reconcile=_reconcile(ledger))
    plan = plan_resume(SessionManager(store).events("s"), run_id)
    # c's result is on record and the model was asked again: nothing unknown is left,
    # the next attempt starts from that exact request.
    assert plan.unknown == [] and plan.done == {}
    assert plan.messages[-1] == {
        "role": "tool",
        "tool_call_id": plan.messages[-2]["tool_calls"][0]["id"],
        "content": "charged c",
    }
    model.add("all charged")

    async def go():
        # The first resume died: take over its claim at once.
        return await aresume(
            agent, run_id, session_id="s", reconcile=_reconcile(ledger), lease_seconds=0
        )

    assert asyncio.run(go()) == "all charged"
    assert ledger.counts() == {"a": 1, "b": 1, "c": 1}
    # Idempotency keys of the resumed run are those of the first attempt.
    events = SessionManager(store).events("s")
    keys = {}
    for e in events:
        if e.type == "tool.requested":
            keys.setdefault(e.data["call_id"], set()).add(e.data["idempotency_key"])
    assert all(len(k) == 1 for k in keys.values())


def test_resume_of_an_unknown_run_is_typed(tmp_path):
    store = SqliteSessionStore(tmp_path / "s.db")
    store.append("s", [{"type": "session.started"}])
    agent = LightAgent(model=ScriptedModel([]), session_store=store)
    with pytest.raises(StorageError) as info:
        resume(agent, "run_missing", session_id="s")
    assert info.value.code == "LA-SESSION"


def test_a_run_killed_before_its_model_request_restarts_from_its_question(tmp_path):
    store = SqliteSessionStore(tmp_path / "s.db")
    first = ScriptedModel(["hello Ada"])
    LightAgent(model=first, session_store=store).run("I am Ada", session_id="s")
    store.append(
        "s",
        [
            {
                "type": "turn.started",
                "data": {"query": "who am I?"},
                "run_id": "run_x",
                "turn_id": "run_x",
            }
        ],
    )
    model = ScriptedModel(["you are Ada"])
    agent = LightAgent(model=model, session_store=store)
    assert agent.resume("run_x", session_id="s") == "you are Ada"
    sent = [m["content"] for m in model.requests[0].messages[1:]]
    assert sent == ["I am Ada", "hello Ada", "who am I?"]  # the question once, after the history
    replay = SessionManager(store).replay("s")
    assert len(replay.completed_turns) == 2 and replay.incomplete_turns == []


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_call_that_finished_before_a_crash_mid_round_is_done_not_unknown(tmp_path, mode):
    store = SqliteSessionStore(tmp_path / "s.db")
    ledger = Ledger(tmp_path / "ledger.db")

    def finished_items():
        return [
            e.data["output"] for e in SessionManager(store).events("s") if e.type == "tool.finished"
        ]

    crashed: list[str] = []

    @tool
    def charge(item: str, idempotency_key: str) -> str:
        """Charge for an item; b dies once a's return is on record."""
        ledger.apply(idempotency_key, item)
        if item == "b" and not crashed:
            for _ in range(6000):  # up to a minute
                if "charged a" in finished_items():
                    crashed.append(item)
                    raise Crash(item)
                time.sleep(0.01)
            return "a was never recorded"
        return f"charged {item}"

    model = ScriptedModel(
        [
            {
                "tool_calls": [
                    {"name": "charge", "arguments": {"item": "b"}},
                    {"name": "charge", "arguments": {"item": "a"}},
                ]
            }
        ]
    )
    agent = LightAgent(model=model, tools=[charge], session_store=store, max_tool_workers=2)
    with pytest.raises(Crash):
        if mode == "sync":
            agent.run("charge b and a", session_id="s")
        else:
            asyncio.run(agent.arun("charge b and a", session_id="s"))
    (run_id,) = SessionManager(store).replay("s").incomplete_runs
    plan = plan_resume(SessionManager(store).events("s"), run_id, session_id="s")
    assert list(plan.done.values()) == ["charged a"]
    assert [c.arguments for c in plan.unknown] == [{"item": "b"}]
    # Approving b runs it again; a, already on record, never runs twice.
    model.add("all charged")
    assert resume(agent, run_id, session_id="s", approve=True) == "all charged"
    assert ledger.counts() == {"a": 1, "b": 2}


def test_two_resumes_at_once_run_an_unknown_call_once(tmp_path):
    import threading

    store = SqliteSessionStore(tmp_path / "s.db")
    ledger = Ledger(tmp_path / "ledger.db")
    run_id, _ = _crash_run(store, ledger, crash_on={"c"})
    assert ledger.counts()["c"] == 1  # applied, then the process "died"
    start = threading.Barrier(2)
    outcomes: list[object] = []

    def resumer():
        agent, model = _agent(store, ledger)
        model._queue.popleft()
        model._queue.popleft()
        agent.tools.get("charge").func = _slowly(agent.tools.get("charge").func)
        start.wait()
        try:
            outcomes.append(resume(agent, run_id, session_id="s", approve=True))
        except StorageError as exc:
            outcomes.append(exc.code)
            model._queue.clear()  # this resumer never reached the model

    threads = [threading.Thread(target=resumer) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    # The second resume is refused while the first is active (or, had it come late, finds
    # the run finished); either way the approved call runs once.
    assert "all charged" in outcomes and set(outcomes) <= {"all charged", "LA-RESUME-ACTIVE"}
    assert ledger.counts() == {"a": 1, "b": 1, "c": 2}
    # A later resume of the finished run just returns its answer.
    agent, _model = _agent(store, ledger)
    _model._queue.clear()
    assert resume(agent, run_id, session_id="s") == "all charged"


def _slowly(func):
    def slow(*args, **kwargs):
        time.sleep(0.3)  # keeps the first resume busy while the second one tries
        return func(*args, **kwargs)

    return slow
