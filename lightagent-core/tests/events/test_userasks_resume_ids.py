"""User asks 7 and 9 (shared/research/user-asks.md): resume stays exactly-once when the provider
reuses tool-call ids across rounds.

Moonshot/Kimi number calls per turn (``functions.charge:0`` in every round), and other
servers synthesize ids the same way. A crash in a later round must not mistake that round's
call for the earlier one with the same id: the call is *unknown* (needs reconcile or
approval), it gets the idempotency key of its first attempt, and the resumed request
answers every call.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest
from lightagent import LightAgent, ScriptedModel, tool
from lightagent.errors import ApprovalError
from lightagent.events.manager import SessionManager
from lightagent.events.resume import plan_resume, resume
from lightagent.events.sql_store import SqliteSessionStore
from lightagent.run.transcript import pending_tool_calls

KIMI_ID = "functions.charge:0"


class Crash(BaseException):
    """Stands in for the process dying inside a tool call."""


class Ledger:
    """The outside world: applied charges keyed by idempotency key, in a SQLite file."""

    def __init__(self, path: Any) -> None:
        self.path = str(path)
        with sqlite3.connect(self.path) as db:
            db.execute("CREATE TABLE applied (key TEXT PRIMARY KEY, item TEXT, n INTEGER)")

    def apply(self, key: str, item: str) -> None:
        with sqlite3.connect(self.path) as db:
            db.execute(
                "INSERT INTO applied VALUES (?, ?, 1) ON CONFLICT(key) DO UPDATE SET n = n + 1",
                (key, item),
            )

    def rows(self) -> list[tuple[str, str, int]]:
        with sqlite3.connect(self.path) as db:
            return db.execute("SELECT key, item, n FROM applied ORDER BY item").fetchall()

    def output(self, key: str | None) -> str | None:
        with sqlite3.connect(self.path) as db:
            row = db.execute("SELECT item FROM applied WHERE key = ?", (key,)).fetchone()
        return f"charged {row[0]}" if row else None


def calls(item: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "charge", "arguments": {"item": item}, "id": KIMI_ID}]}


def agent_for(store: Any, ledger: Ledger, replies: list[Any], crash_on: set[str], after: bool):
    @tool
    def charge(item: str, idempotency_key: str) -> str:
        """Charge for an item (a side effect)."""
        if item in crash_on and not after:
            crash_on.discard(item)
            raise Crash(item)
        ledger.apply(idempotency_key, item)
        if item in crash_on:
            crash_on.discard(item)
            raise Crash(item)
        return f"charged {item}"

    model = ScriptedModel(replies)
    return LightAgent(model=model, tools=[charge], session_store=store), model


def crashed_run(tmp_path: Any, *, after: bool) -> tuple[Any, Ledger, str]:
    store = SqliteSessionStore(tmp_path / "s.db")
    ledger = Ledger(tmp_path / "ledger.db")
    agent, _ = agent_for(store, ledger, [calls("a"), calls("c")], {"c"}, after)
    with pytest.raises(Crash):
        agent.run("charge a, then c", session_id="s")
    (run_id,) = SessionManager(store).replay("s").incomplete_runs
    return store, ledger, run_id


def first_key_of(store: Any, item: str) -> str:
    keys = [
        e.data["idempotency_key"]
        for e in SessionManager(store).events("s")
        if e.type == "tool.requested" and e.data["arguments"] == {"item": item}
    ]
    assert len(set(keys)) == 1, keys
    return keys[0]


def assert_every_call_answered(messages: list[dict[str, Any]]) -> None:
    open_ids: list[str] = []
    for m in messages:
        if m["role"] == "tool":
            assert m["tool_call_id"] in open_ids, m
            open_ids.remove(m["tool_call_id"])
        else:
            assert not open_ids, f"unanswered calls {open_ids} before {m}"
            open_ids = [c["id"] for c in m.get("tool_calls") or ()]
    assert not open_ids, f"unanswered calls {open_ids}"


def test_a_reused_id_from_an_earlier_round_does_not_make_the_crashed_call_done(tmp_path) -> None:
    store, _, run_id = crashed_run(tmp_path, after=True)
    plan = plan_resume(SessionManager(store).events("s"), run_id, session_id="s")
    assert plan.done == {}  # not "charged a", the earlier round's result under the same id
    assert [(u.call_id, u.arguments) for u in plan.unknown] == [(KIMI_ID, {"item": "c"})]
    assert plan.unknown[0].idempotency_key == first_key_of(store, "c")


def test_resume_asks_about_the_unknown_call_instead_of_skipping_it(tmp_path) -> None:
    store, ledger, run_id = crashed_run(tmp_path, after=True)
    agent, model = agent_for(store, ledger, ["all charged"], set(), True)
    with pytest.raises(ApprovalError) as info:
        resume(agent, run_id, session_id="s")
    assert info.value.details["arguments"] == {"item": "c"}
    assert model.requests == []


def test_reconcile_settles_it_and_the_resumed_request_answers_every_call(tmp_path) -> None:
    store, ledger, run_id = crashed_run(tmp_path, after=True)
    agent, model = agent_for(store, ledger, ["all charged"], set(), True)

    def reconcile(call: Any) -> str | None:
        return ledger.output(call.idempotency_key)

    assert resume(agent, run_id, session_id="s", reconcile=reconcile) == "all charged"
    assert [(item, n) for _, item, n in ledger.rows()] == [("a", 1), ("c", 1)]
    sent = model.requests[0].messages
    assert_every_call_answered(sent)
    assert sent[-1] == {"role": "tool", "tool_call_id": KIMI_ID, "content": "charged c"}


def test_an_approved_rerun_gets_the_key_of_its_first_attempt(tmp_path) -> None:
    store, ledger, run_id = crashed_run(tmp_path, after=False)  # died before the effect
    key = first_key_of(store, "c")
    agent, model = agent_for(store, ledger, ["all charged"], set(), True)
    assert resume(agent, run_id, session_id="s", approve=True) == "all charged"
    assert [(k, item, n) for k, item, n in ledger.rows() if item == "c"] == [(key, "c", 1)]
    assert_every_call_answered(model.requests[0].messages)


def test_pending_calls_count_positions_per_call_not_per_id() -> None:
    def assistant(item: str) -> dict[str, Any]:
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": KIMI_ID,
                    "type": "function",
                    "function": {"name": "charge", "arguments": f'{{"item": "{item}"}}'},
                }
            ],
        }

    messages = [
        {"role": "user", "content": "charge a, then c"},
        assistant("a"),
        {"role": "tool", "tool_call_id": KIMI_ID, "content": "charged a"},
        assistant("c"),
    ]
    pending, positions, total = pending_tool_calls(messages)
    assert [c.arguments for c in pending] == ['{"item": "c"}']
    assert positions[KIMI_ID] == 1 and total == 2  # as the live loop numbered them


def test_a_rerun_after_a_structured_output_repair_keeps_its_first_key(tmp_path) -> None:
    """The repair round adds a user message mid-run; numbering must not restart there."""
    import pydantic

    class Done(pydantic.BaseModel):
        ok: bool

    store = SqliteSessionStore(tmp_path / "s.db")
    ledger = Ledger(tmp_path / "ledger.db")
    replies = [calls("a"), "all done, trust me", calls("c")]  # prose -> a repair round
    agent, _ = agent_for(store, ledger, replies, {"c"}, after=False)
    with pytest.raises(Crash):
        agent.run("charge a, then c", session_id="s", output_schema=Done)
    (run_id,) = SessionManager(store).replay("s").incomplete_runs
    key = first_key_of(store, "c")
    answer = {"tool_calls": [{"name": "Done", "arguments": {"ok": True}}]}
    agent, _ = agent_for(store, ledger, [answer], set(), True)
    assert resume(agent, run_id, session_id="s", approve=True, output_schema=Done) == '{"ok":true}'
    assert [(k, item) for k, item, _ in ledger.rows() if item == "c"] == [(key, "c")]


def test_a_later_round_reusing_the_resumed_id_gets_its_own_key(tmp_path) -> None:
    store, ledger, run_id = crashed_run(tmp_path, after=False)
    agent, _ = agent_for(store, ledger, [calls("d"), "all charged"], set(), True)
    assert resume(agent, run_id, session_id="s", approve=True) == "all charged"
    keys = {item: k for k, item, _ in ledger.rows()}
    assert keys["c"] == first_key_of(store, "c") and len(set(keys.values())) == 3
