"""Human review: stores, restart survival, exactly-once, edits, replay, timeout, batches, feedback."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
import threading

import pytest
from lightagent import (
    ApprovalDecision,
    ApprovalRequest,
    HumanApprovalHook,
    InMemoryReviewStore,
    JsonReviewStore,
    LightAgent,
    ScriptedModel,
    SqlReviewStore,
    tool,
)
from lightagent.errors import ApprovalError, ConfigurationError, StorageError
from lightagent_review import HumanFeedback, record_feedback

PAID: list[int] = []


@tool
def send_payment(amount: int) -> str:
    """Send a payment."""
    PAID.append(amount)
    return f"paid {amount}"


def pay_model(*amounts: int, final: str = "done") -> ScriptedModel:
    replies = [
        {"tool_calls": [{"name": "send_payment", "arguments": {"amount": a}}]} for a in amounts
    ]
    return ScriptedModel([*replies, final])


@pytest.fixture(params=["memory", "json", "sqlite"])
def store(request, tmp_path):
    if request.param == "memory":
        return InMemoryReviewStore()
    if request.param == "json":
        return JsonReviewStore(tmp_path / "reviews.json")
    return SqlReviewStore(f"sqlite:///{tmp_path / 'reviews.sqlite3'}")


def _contract(store) -> None:
    request = store.create_request(
        ApprovalRequest(tool_name="send_payment", arguments={"amount": 1})
    )
    assert [r.request_id for r in store.list_pending()] == [request.request_id]
    assert store.get_decision(request.request_id) is None
    with pytest.raises(ApprovalError) as info:
        store.consume(request.request_id)
    assert info.value.code == "LA-APPROVAL-PENDING"
    store.resolve(request.request_id, ApprovalDecision.approve(reviewer_id="ann"))
    with pytest.raises(ApprovalError):
        store.resolve(request.request_id, ApprovalDecision.reject())
    assert store.list_pending() == []
    assert store.consume(request.request_id).reviewer_id == "ann"
    with pytest.raises(ApprovalError) as info:
        store.consume(request.request_id)
    assert info.value.code == "LA-APPROVAL-REPLAY"
    with pytest.raises(ApprovalError):
        store.resolve("missing", ApprovalDecision.approve())
    batch = store.create_batch(
        [ApprovalRequest(tool_name="t", arguments={"i": i}) for i in range(3)]
    )
    assert len({r.batch_id for r in batch}) == 1
    decided = store.resolve_batch([batch[0].batch_id], ApprovalDecision.reject("no"))
    assert len(decided) == 3 and all(d.action == "reject" for d in decided)
    store.add_feedback(HumanFeedback(trace_id="tr", rating=5, comment="good"))
    store.add_feedback(HumanFeedback(trace_id="other", rating=1))
    assert [f.rating for f in store.list_feedback("tr")] == [5]


def test_store_contract(store):
    _contract(store)


@pytest.mark.postgres
def test_store_contract_postgres(postgres_url):
    store = SqlReviewStore(postgres_url)
    _contract(store)
    store.close()


def test_bad_inputs_are_typed(tmp_path):
    with pytest.raises(ConfigurationError):
        ApprovalDecision("maybe")
    with pytest.raises(ConfigurationError):
        ApprovalDecision.edit("not a dict")
    with pytest.raises(ConfigurationError):
        SqlReviewStore("not a url")
    with pytest.raises(ConfigurationError):
        HumanApprovalHook(store=object())
    with pytest.raises(ConfigurationError):
        HumanApprovalHook(phases={"after_run"})
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(StorageError) as info:
        JsonReviewStore(broken).list_pending()
    assert info.value.code == "LA-STORAGE-CORRUPT"
    assert broken.read_text() == "{not json"  # nothing stored was overwritten


def test_pending_then_approved_call_runs_exactly_once(store):
    PAID.clear()
    hook = HumanApprovalHook(store=store, tools={"send_payment"})
    model = pay_model(5)
    result = LightAgent(model=model, tools=[send_payment], hooks=[hook]).run(
        "pay", result_format="object", trace=True
    )
    assert PAID == [] and result.error is None
    denial = next(m for m in model.requests[1].messages if m["role"] == "tool")["content"]
    (pending,) = store.list_pending()
    assert "LA-APPROVAL-PENDING" in denial and pending.request_id in denial
    assert {"approval_required", "approval_pending"} <= {e["type"] for e in result.trace}

    store.resolve(pending.request_id, ApprovalDecision.approve())
    again = LightAgent(model=pay_model(5, 5), tools=[send_payment], hooks=[hook])
    result = again.run("pay", approval_id=pending.request_id, result_format="object", trace=True)
    assert PAID == [5]  # the second identical call in the rerun is refused: single use
    assert any(e["type"] == "approval_approve" for e in result.trace)
    replay = LightAgent(model=pay_model(5), tools=[send_payment], hooks=[hook])
    replay.run("pay", approval_id=pending.request_id)
    assert PAID == [5]


def test_editing_arguments_after_approval_needs_a_new_approval():
    PAID.clear()
    store = InMemoryReviewStore()
    hook = HumanApprovalHook(store=store, tools={"send_payment"})
    LightAgent(model=pay_model(5), tools=[send_payment], hooks=[hook]).run("pay")
    (pending,) = store.list_pending()
    store.resolve(pending.request_id, ApprovalDecision.approve())
    result = LightAgent(model=pay_model(5000), tools=[send_payment], hooks=[hook]).run(
        "pay", approval_id=pending.request_id, result_format="object", trace=True
    )
    assert PAID == []
    rejected = [e["data"] for e in result.trace if e["type"] == "approval_rejected"]
    assert rejected and rejected[0]["fields"] == ["argument_digest"]
    assert len(store.list_pending()) == 1  # a new request for the new arguments


def test_reviewer_decisions_edit_reject_respond():
    PAID.clear()
    answers = iter(
        [
            ApprovalDecision.edit({"amount": 1}),
            ApprovalDecision.reject("too much"),
            ApprovalDecision.respond("Ask finance"),
        ]
    )
    hook = HumanApprovalHook(reviewer=lambda request: next(answers), tools={"send_payment"})
    model = pay_model(100, 200, 300)
    LightAgent(model=model, tools=[send_payment], hooks=[hook]).run("pay")
    assert PAID == [1]
    outputs = [m["content"] for m in model.requests[-1].messages if m["role"] == "tool"]
    assert "too much" in outputs[1] and "Ask finance" in outputs[2]


def test_reviewer_timeout_is_a_typed_denial_the_model_sees():
    PAID.clear()
    gate = threading.Event()

    def slow_reviewer(request):
        gate.wait(1)
        return True

    store = InMemoryReviewStore()
    hook = HumanApprovalHook(
        store=store, reviewer=slow_reviewer, tools={"send_payment"}, timeout=0.05
    )
    model = pay_model(5)
    result = LightAgent(model=model, tools=[send_payment], hooks=[hook]).run(
        "pay", result_format="object", trace=True
    )
    gate.set()
    assert PAID == []
    denial = next(m for m in model.requests[1].messages if m["role"] == "tool")["content"]
    assert "LA-APPROVAL-TIMEOUT" in denial
    assert any(e["type"] == "approval_timeout" for e in result.trace)
    assert len(store.list_pending()) == 1  # still resolvable later


def test_async_reviewer_through_arun():
    PAID.clear()

    async def reviewer(request):
        await asyncio.sleep(0)
        return ApprovalDecision.approve(reviewer_id="bot")

    hook = HumanApprovalHook(reviewer=reviewer, tools={"send_payment"})
    agent = LightAgent(model=pay_model(7), tools=[send_payment], hooks=[hook])
    assert asyncio.run(agent.arun("pay")) == "done"
    assert PAID == [7]


def test_handoff_phase_is_reviewed():
    from lightagent.hooks import HookContext

    store = InMemoryReviewStore()
    hook = HumanApprovalHook(store=store)
    ctx = HookContext(
        phase="on_handoff", payload={"source_agent": "a", "target_agent": "b", "query": "q"}
    )
    decision = hook(ctx)
    assert decision.action == "block" and "LA-APPROVAL-PENDING" in decision.reason
    assert store.list_pending()[0].action_name == "handoff:b"


def test_feedback_event():
    events = []
    store = InMemoryReviewStore()
    data = record_feedback(
        lambda t, d: events.append((t, d)), HumanFeedback(trace_id="tr", rating=4), store
    )
    assert events == [("human_feedback", data)] and store.list_feedback("tr")[0].rating == 4
    with pytest.raises(ConfigurationError):
        record_feedback(lambda *a: None, {"rating": 1})


def _child(script: str, *args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip().splitlines()[-1]


_FIRST = """
import sys
from lightagent import HumanApprovalHook, LightAgent, ScriptedModel, tool
from lightagent_review import JsonReviewStore, SqlReviewStore

@tool
def send_payment(amount: int) -> str:
    '''Send a payment.'''
    print("RAN", amount)
    return "paid"

kind, where = sys.argv[1], sys.argv[2]
store = JsonReviewStore(where) if kind == "json" else SqlReviewStore(where)
model = ScriptedModel([{"tool_calls": [{"name": "send_payment", "arguments": {"amount": 9}}]}, "done"])
LightAgent(name="payer", model=model, tools=[send_payment], hooks=[HumanApprovalHook(store=store, tools={"send_payment"})]).run("pay")
print(store.list_pending()[0].request_id)
"""

_SECOND = """
import sys
from lightagent import ApprovalDecision, HumanApprovalHook, LightAgent, ScriptedModel, tool
from lightagent_review import JsonReviewStore, SqlReviewStore

ran = []

@tool
def send_payment(amount: int) -> str:
    '''Send a payment.'''
    ran.append(amount)
    return "paid"

kind, where, request_id = sys.argv[1], sys.argv[2], sys.argv[3]
store = JsonReviewStore(where) if kind == "json" else SqlReviewStore(where)
if sys.argv[4] == "resolve":
    store.resolve(request_id, ApprovalDecision.approve())
model = ScriptedModel([{"tool_calls": [{"name": "send_payment", "arguments": {"amount": 9}}]}, "done"])
LightAgent(name="payer", model=model, tools=[send_payment], hooks=[HumanApprovalHook(store=store, tools={"send_payment"})]).run("pay", approval_id=request_id)
print(ran)
"""


@pytest.mark.parametrize("kind", ["json", "sqlite"])
def test_pending_approval_survives_a_process_restart(kind, tmp_path):
    where = (
        str(tmp_path / "reviews.json")
        if kind == "json"
        else f"sqlite:///{tmp_path / 'reviews.sqlite3'}"
    )
    request_id = _child(_FIRST, kind, where)
    assert "RAN" not in request_id and len(request_id) == 32
    assert _child(_SECOND, kind, where, request_id, "resolve") == "[9]"
    # a third process replaying the same approval is refused
    assert _child(_SECOND, kind, where, request_id, "replay") == "[]"


def test_json_store_writes_atomically(tmp_path):
    path = tmp_path / "r.json"
    store = JsonReviewStore(path)
    store.create_request(ApprovalRequest(tool_name="t", arguments={"a": 1}))
    data = json.loads(path.read_text())
    assert len(data["requests"]) == 1
    assert not [p for p in tmp_path.iterdir() if p.suffix == ".tmp"]


_RACE = """
import sys, time
from lightagent_review import JsonReviewStore, SqlReviewStore
kind, where, request_id, start = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
store = JsonReviewStore(where) if kind == "json" else SqlReviewStore(where)
time.sleep(max(0.0, start - time.time()))
try:
    store.consume(request_id)
    print("won")
except Exception as exc:
    print(getattr(exc, "code", type(exc).__name__))
"""


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["json", "sqlite"])
def test_concurrent_consumers_in_separate_processes_one_wins(kind, tmp_path):
    import time

    where = str(tmp_path / "r.json") if kind == "json" else f"sqlite:///{tmp_path / 'r.sqlite3'}"
    store = JsonReviewStore(where) if kind == "json" else SqlReviewStore(where)
    request = store.create_request(ApprovalRequest(tool_name="t", arguments={"a": 1}))
    store.resolve(request.request_id, ApprovalDecision.approve())
    start = str(time.time() + 2.0)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _RACE, kind, where, request.request_id, start],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    results = sorted(p.communicate(timeout=120)[0].strip() for p in procs)
    assert results == ["LA-APPROVAL-REPLAY"] * 3 + ["won"]


def test_unreachable_database_is_a_typed_error(tmp_path):
    with pytest.raises(StorageError) as info:
        SqlReviewStore("postgresql+psycopg://nobody@127.0.0.1:1/nothing?connect_timeout=2")
    assert info.value.code == "LA-STORAGE-UNAVAILABLE"
    path = tmp_path / "gone.sqlite3"
    store = SqlReviewStore(f"sqlite:///{path}")
    with store.engine.begin() as conn:
        conn.exec_driver_sql("DROP TABLE la_review_requests")
    with pytest.raises(StorageError):
        store.get_request("x")
