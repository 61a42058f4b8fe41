"""Durable runs on every store: commit before dependants, resume, rerun, list, cancel, approvals."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from lightagent.errors import ApprovalError, PolicyError, StorageError, ValidationError
from lightagent_flow import JsonLightFlowStore, LightFlow, SqlLightFlowStore


def _chain(recorder: Any, store: Any, executor: Any = None, **b_options: Any) -> LightFlow:
    return (
        LightFlow(store=store, retry_backoff=0, executor=executor)
        .step("research", agent=recorder.agent("research", "facts"))
        .step("write", agent=recorder.agent("write", "essay"), depends_on=["research"], **b_options)
        .step("polish", agent=recorder.agent("polish", "final"), depends_on=["write"])
    )


def test_a_step_is_committed_before_its_dependant_starts(
    flow_store: Any, run_id: str, flow_executor: Any
) -> None:
    seen: dict[str, Any] = {}

    def first(query: str) -> str:
        return "one"

    def second(query: str) -> str:
        # Read the store from inside the dependant: its dependency must already be durable.
        seen["record"] = flow_store.load_run(run_id)
        return "two"

    flow = (
        LightFlow(executor=flow_executor, store=flow_store)
        .step("first", agent=first)
        .step("second", agent=second, depends_on="first")
    )
    assert flow.run("q", run_id=run_id).success
    steps = {s["name"]: s for s in seen["record"]["steps"]}
    assert steps["first"]["status"] == "success" and steps["first"]["content"] == "one"
    assert "second" not in steps or steps["second"]["status"] != "success"
    assert seen["record"]["status"] == "running"


def test_resume_continues_without_rerunning_completed_steps(
    flow_store: Any, run_id: str, recorder: Any, flow_executor: Any
) -> None:
    recorder.fail["write"] = 1
    flow = _chain(recorder, flow_store, executor=flow_executor)
    result = flow.run("Analyze this company", run_id=run_id)
    assert result.status == "failed"
    assert [result.steps[n].status for n in ("research", "write", "polish")] == [
        "success",
        "failed",
        "skipped",
    ]
    record = flow.get_run(run_id)
    assert record["status"] == "failed" and record["query"] == "Analyze this company"
    assert [s["status"] for s in record["steps"]] == ["success", "failed", "skipped"]

    # A new LightFlow object (as in a new process) on the same store resumes the run.
    resumed = _chain(recorder, flow_store, executor=flow_executor).resume(run_id, trace=True)
    assert resumed.success and resumed.content == "final"
    assert (
        recorder.count("research") == 1
        and recorder.count("write") == 2
        and recorder.count("polish") == 1
    )
    assert resumed.steps["research"].content == "facts"
    starts = [e["data"]["step"] for e in resumed.trace if e["type"] == "step_start"]
    assert starts == ["write", "polish"]
    assert flow.get_run(run_id)["status"] == "success"


def test_rerun_step_reruns_the_step_and_its_dependants_only(
    flow_store: Any, run_id: str, recorder: Any, flow_executor: Any
) -> None:
    flow = (
        LightFlow(executor=flow_executor, store=flow_store)
        .step("a", agent=recorder.agent("a"))
        .step("b", agent=recorder.agent("b"), depends_on="a")
        .step("c", agent=recorder.agent("c"), depends_on="b")
        .step("side", agent=recorder.agent("side"), depends_on="a")
    )
    assert flow.run("q", run_id=run_id).success
    result = flow.rerun_step(run_id, "b")
    assert result.success
    assert {n: recorder.count(n) for n in ("a", "b", "c", "side")} == {
        "a": 1,
        "b": 2,
        "c": 2,
        "side": 1,
    }
    with pytest.raises(ValidationError) as info:
        flow.rerun_step(run_id, "nope")
    assert info.value.code == "LA-FLOW-STEP"


def test_get_run_list_runs_and_unknown_runs(flow_store: Any, run_id: str, recorder: Any) -> None:
    flow = _chain(recorder, flow_store)
    flow.run("q1", run_id=run_id)
    flow.run("q2", run_id=run_id + "-b")
    ids = [r["run_id"] for r in flow.list_runs()]
    assert run_id in ids and run_id + "-b" in ids
    assert all("steps" not in r for r in flow.list_runs())
    assert flow.get_run("missing-run") is None
    for call in (
        lambda: flow.resume("missing-run"),
        lambda: flow.rerun_step("missing-run", "write"),
    ):
        with pytest.raises(ValidationError) as info:
            call()
        assert info.value.code == "LA-FLOW-RUN-NOT-FOUND"


def test_resume_with_a_different_flow_is_refused(
    flow_store: Any, run_id: str, recorder: Any
) -> None:
    _chain(recorder, flow_store).run("q", run_id=run_id)
    other = LightFlow(store=flow_store).step("research", agent=recorder.agent("x"))
    with pytest.raises(ValidationError) as info:
        other.resume(run_id)
    assert info.value.code == "LA-FLOW-MISMATCH"


def test_cancel_a_stored_run_not_running_here(flow_store: Any, run_id: str, recorder: Any) -> None:
    recorder.fail["write"] = 1
    flow = _chain(recorder, flow_store)
    flow.run("q", run_id=run_id)
    assert flow.cancel(run_id, reason="ops said stop") == 1
    record = flow.get_run(run_id)
    assert record["status"] == "cancelled" and record["cancel_requested"]
    # Resuming is an explicit decision to go on: it clears the request.
    assert flow.resume(run_id).success
    assert not flow.get_run(run_id)["cancel_requested"]


def test_a_cancel_request_in_the_store_stops_a_run_before_its_next_step(
    flow_store: Any, run_id: str, recorder: Any
) -> None:
    def first(query: str) -> str:
        flow_store.request_cancel(run_id, "from elsewhere")  # as another process would
        return "x"

    flow = (
        LightFlow(store=flow_store)
        .step("a", agent=first)
        .step("b", agent=recorder.agent("b"), depends_on="a")
    )
    result = flow.run("q", run_id=run_id)
    assert result.status == "cancelled" and recorder.count("b") == 0
    assert result.steps["a"].status == "success" and result.steps["b"].status == "skipped"


def _approval_flow(
    recorder: Any, store: Any, handler: Any = None, executor: Any = None
) -> LightFlow:
    return (
        LightFlow(store=store, executor=executor)
        .step("draft", agent=recorder.agent("draft", "draft text"))
        .step(
            "publish",
            agent=recorder.agent("publish"),
            depends_on="draft",
            requires_approval=True,
            approval_handler=handler,
        )
        .step("notify", agent=recorder.agent("notify"), depends_on="publish")
    )


def test_approval_waits_then_approve_and_resume(
    flow_store: Any, run_id: str, recorder: Any, flow_executor: Any
) -> None:
    flow = _approval_flow(recorder, flow_store, executor=flow_executor)
    result = flow.run("q", run_id=run_id, trace=True)
    assert result.status == "waiting_approval"
    step = result.steps["publish"]
    assert step.status == "waiting_approval" and step.approval_request_id
    assert result.steps["notify"].status == "pending"
    types = [e["type"] for e in result.trace]
    assert "approval_required" in types and "approval_pending" in types
    assert recorder.count("publish") == 0

    decision = flow.approve(run_id, "publish", True)
    assert decision["action"] == "approve" and decision["request_id"] == step.approval_request_id
    assert flow.get_run(run_id)["approvals"]["publish"]["action"] == "approve"
    resumed = flow.resume(run_id, trace=True)
    assert resumed.success and recorder.count("publish") == 1 and recorder.count("draft") == 1
    assert resumed.steps["publish"].approval_decision["action"] == "approve"
    assert "approval_approve" in [e["type"] for e in resumed.trace]
    with pytest.raises(ApprovalError) as info:
        flow.approve(run_id, "publish", True)
    assert info.value.code == "LA-FLOW-APPROVAL"


def test_approval_edit_reject_and_respond(
    flow_store: Any, run_id: str, recorder: Any, flow_executor: Any
) -> None:
    flow = _approval_flow(recorder, flow_store, executor=flow_executor)
    for suffix in ("edit", "reject", "respond"):
        flow.run("q", run_id=f"{run_id}-{suffix}")
    flow.approve(f"{run_id}-edit", "publish", {"action": "edit", "query": "edited query"})
    edited = flow.resume(f"{run_id}-edit")
    assert edited.success and ("publish", "edited query") in recorder.calls
    assert edited.steps["publish"].query == "edited query"

    flow.approve(f"{run_id}-reject", "publish", {"action": "reject", "reason": "not now"})
    rejected = flow.resume(f"{run_id}-reject")
    assert rejected.status == "failed" and rejected.steps["publish"].error_code == "LA-APPROVAL"
    assert (
        "not now" in rejected.steps["publish"].error
        and rejected.steps["notify"].status == "skipped"
    )

    flow.approve(
        f"{run_id}-respond", "publish", {"action": "respond", "response": "human wrote this"}
    )
    responded = flow.resume(f"{run_id}-respond")
    assert responded.success and responded.steps["publish"].content == "human wrote this"
    assert recorder.count("publish") == 1  # only the edit ran the agent


def test_bad_approval_input_gets_typed_errors(flow_store: Any, run_id: str, recorder: Any) -> None:
    flow = _approval_flow(recorder, flow_store)
    flow.run("q", run_id=run_id)
    cases = [
        ("publish", {"action": "edit"}),
        ("publish", {"action": "respond"}),
        ("publish", "maybe"),
        ("publish", "pending"),
        ("publish", 3.5),
        ("draft", True),  # does not require approval
        ("ghost", True),
    ]
    for step, decision in cases:
        with pytest.raises(ApprovalError) as info:
            flow.approve(run_id, step, decision)
        assert info.value.code == "LA-FLOW-APPROVAL", (step, decision)
    with pytest.raises(ValidationError) as info:
        flow.approve("no-such-run", "publish", True)
    assert info.value.code == "LA-FLOW-RUN-NOT-FOUND"
    assert "publish" not in flow.get_run(run_id)["approvals"]


def test_approval_handler_decides_or_leaves_pending(
    flow_store: Any, run_id: str, recorder: Any
) -> None:
    approve = _approval_flow(
        recorder, flow_store, handler=lambda step, ctx: {"approved": True, "reason": "policy"}
    )
    result = approve.run("q", run_id=run_id)
    assert result.success and result.steps["publish"].approval_decision["source"] == "handler"

    pending = _approval_flow(recorder, flow_store, handler=lambda step, ctx: "needs a human")
    assert pending.run("q", run_id=run_id + "-p").status == "waiting_approval"

    def broken(step: Any, ctx: Any) -> Any:
        raise RuntimeError("reviewer down")

    rejected = _approval_flow(recorder, flow_store, handler=broken).run("q", run_id=run_id + "-r")
    assert (
        rejected.steps["publish"].status == "failed"
        and "reviewer down" in rejected.steps["publish"].error
    )


def test_rerun_of_an_approved_step_needs_a_new_approval(
    flow_store: Any, run_id: str, recorder: Any
) -> None:
    flow = _approval_flow(recorder, flow_store)
    flow.run("q", run_id=run_id)
    flow.approve(run_id, "publish", "approve")
    assert flow.resume(run_id).success
    again = flow.rerun_step(run_id, "publish")
    assert again.status == "waiting_approval" and recorder.count("publish") == 1


def test_json_store_writes_atomically_and_reports_corruption(tmp_path: Path, recorder: Any) -> None:
    store = JsonLightFlowStore(tmp_path / "runs")
    flow = _chain(recorder, store)
    flow.run("q", run_id="atomic")
    folder = tmp_path / "runs" / "atomic"
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert not [f for f in files if ".tmp-" in f]
    assert "run.json" in files and "steps.jsonl" in files and not (folder / "steps").exists()
    journal = folder / "steps.jsonl"
    lines = journal.read_bytes().splitlines()
    assert [json.loads(line)["name"] for line in lines] == ["research", "write", "polish"]
    lines[1] = b'{"name": "write", "status": "succ'  # damage that is no torn last line
    journal.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(StorageError) as info:
        flow.get_run("atomic")
    assert info.value.code == "LA-STORAGE-CORRUPT" and str(journal) in info.value.message
    assert info.value.details["line"] == 2


def test_json_store_ignores_a_torn_last_line_and_cuts_it_before_the_next_commit(
    tmp_path: Path,
) -> None:
    store = JsonLightFlowStore(tmp_path)
    store.save_header("r", {"run_id": "r", "status": "running"})
    store.commit_step("r", {"name": "a", "status": "success", "content": "x"})
    journal = tmp_path / "r" / "steps.jsonl"
    with open(journal, "ab") as handle:  # what a writer killed mid-append leaves
        handle.write(b'{"name": "b", "status": "succ')
    record = store.load_run("r")
    assert record is not None and [s["name"] for s in record["steps"]] == ["a"]
    store.commit_step("r", {"name": "b", "status": "success", "content": "y"})
    assert journal.read_bytes().count(b"\n") == 2 and b"succ{" not in journal.read_bytes()
    record = store.load_run("r")
    assert record is not None and {s["name"]: s["content"] for s in record["steps"]} == {
        "a": "x",
        "b": "y",
    }


def test_json_store_loads_the_step_files_of_earlier_versions(tmp_path: Path, recorder: Any) -> None:
    """A run written by an earlier version (one file per step) loads, resumes, and its
    journal lines take precedence over the files."""
    import hashlib
    import re

    def old_file(name: str) -> str:  # the earlier versions' file name for a step
        digest = hashlib.sha256(name.encode()).hexdigest()[:12]
        return f"{re.sub(r'[^A-Za-z0-9_-]', '_', name)[:40]}-{digest}.json"

    folder = tmp_path / "runs" / "old"
    (folder / "steps").mkdir(parents=True)
    flow = _chain(recorder, JsonLightFlowStore(tmp_path / "runs"))
    header = {"run_id": "old", "query": "q", "status": "failed", "flow": flow._shape()}
    (folder / "run.json").write_text(json.dumps(header))
    (folder / "steps" / old_file("research")).write_text(
        json.dumps({"name": "research", "status": "success", "content": "facts"})
    )
    (folder / "steps" / old_file("write")).write_text(
        json.dumps({"name": "write", "status": "failed", "error": "boom"})
    )
    record = flow.get_run("old")
    assert record is not None
    assert [(s["name"], s["status"]) for s in record["steps"]] == [
        ("research", "success"),
        ("write", "failed"),
        ("polish", "pending"),  # never started: listed, as the seeds do
    ]
    result = flow.resume("old")
    assert result.success and recorder.count("research") == 0
    record = flow.get_run("old")
    assert record is not None
    assert [(s["name"], s["status"]) for s in record["steps"]] == [
        ("research", "success"),
        ("write", "success"),
        ("polish", "success"),
    ]


def test_json_store_seeds_api_save_and_load(tmp_path: Path) -> None:
    store = JsonLightFlowStore(tmp_path)
    record = {
        "run_id": "r",
        "query": "q",
        "status": "success",
        "error": None,
        "updated_at": 1.0,
        "steps": [{"name": "a", "status": "success", "content": "x"}],
        "approvals": {"a": {"action": "approve"}},
    }
    store.save_run("r", record)
    loaded = store.load_run("r")
    assert loaded["steps"][0]["content"] == "x" and loaded["approvals"]["a"]["action"] == "approve"
    assert [r["run_id"] for r in store.list_runs()] == ["r"]


def test_json_store_refuses_a_folder_it_cannot_create(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StorageError) as info:
        JsonLightFlowStore(blocker / "sub")
    assert info.value.code == "LA-STORAGE"


def test_sql_store_bad_urls_get_typed_errors(tmp_path: Path) -> None:
    from lightagent.errors import LightAgentError

    for url in ("", "nosuchdialect://x/y"):
        with pytest.raises(LightAgentError) as info:
            SqlLightFlowStore(url)
        assert info.value.code in ("LA-CONFIG", "LA-MISSING-EXTRA")
    store = SqlLightFlowStore(str(tmp_path / "deep" / "dir" / "flows.db"))  # a bare path is SQLite
    assert store.list_runs() == []
    assert not os.path.exists(tmp_path / "deep")  # a read never creates the store
    store.save_header("r1", {"run_id": "r1", "query": "q", "status": "running"})
    assert os.path.exists(tmp_path / "deep" / "dir" / "flows.db")  # the first write does
    store.close()


def test_unreachable_postgres_is_a_storage_error() -> None:
    store = SqlLightFlowStore("postgresql+psycopg://nobody@127.0.0.1:1/none?connect_timeout=1")
    for use in (store.list_runs, lambda: store.claim_run("r1")):  # building it connects to nothing
        with pytest.raises(StorageError) as info:
            use()
        assert info.value.code == "LA-STORAGE-UNAVAILABLE"


def test_a_failing_store_commit_fails_the_run_loudly(tmp_path: Path, recorder: Any) -> None:
    store = JsonLightFlowStore(tmp_path / "runs")

    def fault(point: str, run: str, step: str) -> None:
        if point == "inside_commit" and step == "write":
            raise OSError(28, "No space left on device")

    store._fault = fault
    flow = _chain(recorder, store)
    with pytest.raises(StorageError) as info:
        flow.run("q", run_id="disk-full")
    assert info.value.code == "LA-STORAGE" and "No space left" in info.value.message
    assert recorder.count("polish") == 0  # nothing ran on top of an uncommitted step


def test_on_resume_and_on_rerun_hooks_can_block(
    flow_store: Any, run_id: str, recorder: Any
) -> None:
    recorder.fail["write"] = 1
    seen: list[str] = []

    class Gate:
        def on_resume(self, ctx: Any) -> Any:
            seen.append(ctx.phase)
            return {"allowed": False, "reason": "frozen"}

        def on_rerun(self, ctx: Any) -> Any:
            seen.append(ctx.phase)
            return "no reruns today"

    flow = LightFlow(store=flow_store, hooks=[Gate()])
    flow.step("research", agent=recorder.agent("research")).step(
        "write", agent=recorder.agent("write"), depends_on="research"
    )
    flow.run("q", run_id=run_id)
    for call in (lambda: flow.resume(run_id), lambda: flow.rerun_step(run_id, "write")):
        with pytest.raises(PolicyError) as info:
            call()
        assert info.value.code == "LA-HOOK"
    assert seen == ["on_resume", "on_rerun"] and recorder.count("write") == 1


def test_concurrent_decisions_first_writer_wins(
    flow_store: Any, run_id: str, recorder: Any
) -> None:
    import threading

    flow = _approval_flow(recorder, flow_store)
    flow.run("q", run_id=run_id)
    outcomes: list[Any] = []
    barrier = threading.Barrier(6)

    def decide(i: int) -> None:
        decision = "approve" if i % 2 else {"action": "reject", "reason": f"r{i}"}
        barrier.wait()
        try:
            outcomes.append(("ok", flow.approve(run_id, "publish", decision)))
        except ApprovalError as exc:
            outcomes.append(("refused", exc.code))

    threads = [threading.Thread(target=decide, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    winners = [o[1] for o in outcomes if o[0] == "ok"]
    assert len(winners) == 1 and len(outcomes) == 6
    assert {o[1] for o in outcomes if o[0] == "refused"} == {"LA-FLOW-APPROVAL"}
    stored = flow.get_run(run_id)["approvals"]["publish"]
    assert stored["action"] == winners[0]["action"]


def test_a_decision_for_another_request_is_refused(
    flow_store: Any, run_id: str, recorder: Any
) -> None:
    flow = _approval_flow(recorder, flow_store)
    waiting = flow.run("q", run_id=run_id)
    with pytest.raises(ApprovalError) as info:
        flow.approve(run_id, "publish", {"action": "approve", "request_id": "stale-request"})
    assert info.value.code == "LA-FLOW-APPROVAL"
    ok = flow.approve(
        run_id,
        "publish",
        {"action": "approve", "request_id": waiting.steps["publish"].approval_request_id},
    )
    assert ok["request_id"] == waiting.steps["publish"].approval_request_id


def test_a_concurrent_resume_fences_out_the_older_runner(flow_store: Any, run_id: str) -> None:
    import threading

    from lightagent_flow import LightFlow as Flow

    started, release = threading.Event(), threading.Event()
    runs: dict[str, int] = {"slow": 0}

    def slow(query: str) -> str:
        runs["slow"] += 1
        if runs["slow"] == 1:  # the first runner stalls (a paused or partitioned process)
            started.set()
            release.wait(10)
            return "stale output"
        return "fresh output"

    def build() -> Flow:
        return (
            Flow(store=flow_store)
            .step("slow", agent=slow)
            .step("after", agent=lambda q: "done", depends_on="slow")
        )

    box: dict[str, Any] = {}

    def first() -> None:
        try:
            box["result"] = build().run("q", run_id=run_id)
        except StorageError as exc:
            box["error"] = exc

    thread = threading.Thread(target=first)
    thread.start()
    assert started.wait(10)
    resumed = build().resume(run_id)  # another runner takes the run over
    assert resumed.success and resumed.steps["slow"].content == "fresh output"
    release.set()
    thread.join(10)
    # The stalled runner woke up and tried to commit: it was fenced out and wrote nothing.
    assert "result" not in box and box["error"].code == "LA-STORAGE-CONFLICT"
    record = flow_store.load_run(run_id)
    assert record["status"] == "success"
    assert {s["name"]: s["content"] for s in record["steps"]} == {
        "slow": "fresh output",
        "after": "done",
    }


def test_sql_store_adds_the_epoch_column_to_an_older_table(tmp_path: Path, recorder: Any) -> None:
    import sqlite3

    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE lightflow_runs (run_id VARCHAR(128) PRIMARY KEY, status VARCHAR(32) NOT NULL, "
        "updated_at FLOAT NOT NULL, header TEXT NOT NULL, cancel_requested BOOLEAN NOT NULL)"
    )
    conn.commit()
    conn.close()
    store = SqlLightFlowStore(str(path))
    assert _chain(recorder, store).run("q", run_id="migrated").success
    store.close()


def test_the_approval_request_stays_the_same_across_resumes(
    flow_store: Any, run_id: str, recorder: Any
) -> None:
    flow = _approval_flow(recorder, flow_store)
    first = flow.run("q", run_id=run_id).steps["publish"].approval_request_id
    again = flow.resume(run_id)
    assert again.status == "waiting_approval"
    assert again.steps["publish"].approval_request_id == first
    flow.approve(run_id, "publish", {"action": "approve", "request_id": first})
    assert flow.resume(run_id).success


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_sql_one_statement_writes_keep_the_fence(
    kind: str, tmp_path: Path, run_id: str, request: pytest.FixtureRequest
) -> None:
    """start_run, claim_run, commit_step and a fenced save_header, each one statement once
    the tables exist: a stale epoch still raises LA-STORAGE-CONFLICT and writes nothing."""
    url = (
        request.getfixturevalue("postgres_url")
        if kind == "postgres"
        else f"sqlite:///{tmp_path / 'runs.db'}"
    )
    store = SqlLightFlowStore(url)
    store.save_header("warm-" + run_id, {"run_id": "warm-" + run_id, "status": "pending"})
    assert store.start_run(run_id, {"run_id": run_id, "status": "running"}) == (1, False)
    assert store.commit_step(run_id, {"name": "a", "status": "success"}, epoch=1) is False
    store.request_cancel(run_id)
    assert store.commit_step(run_id, {"name": "b", "status": "success"}, epoch=1) is True
    assert store.claim_run(run_id) == 2
    assert store.start_run(run_id, {"run_id": run_id, "status": "running"}) == (3, True)
    for stale in (
        lambda: store.commit_step(run_id, {"name": "c", "status": "success"}, epoch=2),
        lambda: store.save_header(run_id, {"run_id": run_id, "status": "failed"}, epoch=2),
    ):
        with pytest.raises(StorageError) as info:
            stale()
        assert info.value.code == "LA-STORAGE-CONFLICT"
    store.save_header(run_id, {"run_id": run_id, "status": "success"}, epoch=3)
    record = store.load_run(run_id)
    assert record is not None and record["status"] == "success"
    assert sorted(s["name"] for s in record["steps"]) == ["a", "b"]
    with pytest.raises(StorageError) as info:
        store.claim_run("no-such-run")
    assert info.value.code == "LA-STORAGE"
    store.close()
