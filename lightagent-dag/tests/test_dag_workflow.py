"""LightDAG end to end on a real store: dependencies, decomposition, retries, blockers, repair, control."""

from __future__ import annotations

import json

import pytest
from lightagent import LightAgent, PermissionSet, ScriptedModel
from lightagent.events.memory_store import InMemorySessionStore
from lightagent_dag import (
    CallableVerifier,
    DAGConfig,
    DAGError,
    DecompositionProposal,
    LightAgentWorkerAdapter,
    TaskOutcome,
    TaskSpec,
)


def spec(
    task_id: str, *deps: str, worker: str = "w", verifier: str = "v", **kw: object
) -> TaskSpec:
    return TaskSpec(
        task_id=task_id,
        goal=f"do {task_id}",
        acceptance_contract={"task": task_id},
        worker_key=worker,
        verifier_key=verifier,
        depends_on=deps,
        **kw,
    )  # type: ignore[arg-type]


def accept_all(request) -> bool:
    return True


def test_diamond_runs_in_dependency_order_with_verified_inputs(make_dag, run_id, security) -> None:
    dag = make_dag(verifiers={"v": CallableVerifier("v", accept_all)})
    seen: dict[str, dict[str, bytes]] = {}

    def work(ctx):
        seen[ctx.task_id] = dict(ctx.dependency_artifacts)
        return TaskOutcome.candidate(
            ctx.task_id + "".join(sorted(ctx.dependency_text(d) for d in ctx.dependency_artifacts))
        )

    dag.register_worker("w", work)
    dag.create_run(
        [spec("a"), spec("b", "a"), spec("c", "a"), spec("d", "b", "c")],
        run_id=run_id,
        context=security(),
    )
    result = dag.run(run_id)
    assert result.success and result.status.value == "succeeded"
    assert {k: v.value for k, v in result.tasks.items()} == dict.fromkeys("abcd", "verified")
    assert seen["a"] == {} and seen["d"] == {"b": b"ba", "c": b"ca"}
    assert dag.read_artifact(run_id, "d") == b"dbaca"
    types = {e.type for e in dag.events(run_id, limit=1000)}
    assert {
        "dag.run.created",
        "dag.scheduler.acquired",
        "dag.task.claimed",
        "dag.artifact.staged",
        "dag.artifact.published",
        "dag.task.verified",
        "dag.task.ready",
        "dag.run.completed",
    } <= types
    assert dag.store.publication_counts(run_id) == dict.fromkeys("abcd", 1)


def test_verified_decomposition_then_integration(make_dag, run_id, security) -> None:
    proposals: list[str] = []

    def decomposer(request) -> bool:
        proposals.append(request.kind)
        return request.kind == "decomposition" and len(request.decomposition.new_tasks) == 2

    dag = make_dag(
        verifiers={
            "v": CallableVerifier("v", accept_all),
            "plan": CallableVerifier("plan", decomposer),
        }
    )

    def work(ctx):
        if ctx.task_id == "root" and ctx.phase == "execute":
            return TaskOutcome.decompose(
                DecompositionProposal(new_tasks=(spec("part1"), spec("part2")), rationale="split")
            )
        if ctx.task_id == "root":
            return TaskOutcome.candidate(
                "+".join(ctx.dependency_text(d) for d in sorted(ctx.dependency_artifacts))
            )
        return TaskOutcome.candidate(ctx.task_id)

    dag.register_worker("w", work)
    dag.create_run([spec("root", decomposer_key="plan")], run_id=run_id, context=security())
    result = dag.run(run_id)
    assert result.success, result.errors
    assert dag.read_artifact(run_id, "root") == b"part1+part2"
    assert result.graph_revision == 2 and proposals == ["decomposition"]
    root = dag.get_task(run_id, "root")
    assert root.phase == "integrate" and set(root.depends_on) == {"part1", "part2"}
    assert dag.get_task(run_id, "part1").depth == 1
    assert "dag.decomposition.accepted" in {e.type for e in dag.events(run_id, limit=1000)}


def test_rejected_candidates_retry_with_backoff_then_fail(make_dag, run_id, security) -> None:
    cfg = DAGConfig(
        max_attempts_per_task=3,
        retry_backoff_seconds=0.05,
        poll_interval=0.01,
        poll_interval_max=0.05,
    )
    dag = make_dag(
        config=cfg,
        verifiers={
            "v": CallableVerifier("v", lambda r: {"verdict": "fail", "diagnostics": ["wrong"]})
        },
    )
    dag.register_worker("w", lambda ctx: TaskOutcome.candidate("nope"))
    dag.create_run([spec("t")], run_id=run_id, context=security())
    result = dag.run(run_id)
    assert result.status.value == "failed" and not result.success
    assert result.errors["t"]["code"] == "LA-DAG-VERIFICATION-FAILED" and result.errors["t"][
        "diagnostics"
    ] == ["wrong"]
    task = dag.get_task(run_id, "t")
    assert task.attempts == 3 and task.artifact_id is None
    assert dag.store.published_artifacts(run_id) == {}
    backoffs = [
        e.data["backoff"] for e in dag.events(run_id, limit=1000) if e.type == "dag.attempt.failed"
    ]
    assert backoffs[:2] == [0.05, 0.1]  # exponential
    failed = [e for e in dag.events(run_id, limit=1000) if e.type == "dag.verification.failed"]
    assert len(failed) == 3


def test_worker_exception_is_retried_and_recorded(make_dag, run_id, security) -> None:
    dag = make_dag(verifiers={"v": CallableVerifier("v", accept_all)})
    calls: list[int] = []

    def flaky(ctx):
        calls.append(ctx.fence)
        if len(calls) == 1:
            raise ValueError("temporary glitch")
        return TaskOutcome.candidate("ok")

    dag.register_worker("w", flaky)
    dag.create_run([spec("t")], run_id=run_id, context=security())
    assert dag.run(run_id).success
    assert calls == [1, 2]
    attempts = dag.store.attempts(run_id, "t")
    assert (
        attempts[0].error["type"] == "ValueError"
        and "temporary glitch" in attempts[0].error["message"]
    )


def test_blocked_task_blocks_the_run_until_resolved(make_dag, run_id, security) -> None:
    dag = make_dag(verifiers={"v": CallableVerifier("v", accept_all)})
    state = {"blocked": True}
    dag.register_worker(
        "w",
        lambda ctx: (
            TaskOutcome.blocked("need a human")
            if state["blocked"]
            else TaskOutcome.candidate("done")
        ),
    )
    dag.create_run([spec("t")], run_id=run_id, context=security())
    result = dag.run(run_id)
    assert result.status.value == "blocked"
    assert dag.get_task(run_id, "t").blocker == "need a human"
    with pytest.raises(DAGError) as info:
        dag.resolve_blocker(run_id, "missing")
    assert info.value.code == "LA-DAG-STATE"
    state["blocked"] = False
    dag.resolve_blocker(run_id, "t", "answered")
    assert dag.get_run(run_id).status.value == "running"
    assert dag.run(run_id).success


def test_inconclusive_verdict_blocks(make_dag, run_id, security) -> None:
    dag = make_dag(verifiers={"v": CallableVerifier("v", lambda r: "inconclusive")})
    dag.register_worker("w", lambda ctx: TaskOutcome.candidate("maybe"))
    dag.create_run([spec("t")], run_id=run_id, context=security())
    assert dag.run(run_id).status.value == "blocked"


def test_supersede_checks_the_graph_revision(make_dag, run_id, security) -> None:
    dag = make_dag(verifiers={"v": CallableVerifier("v", lambda r: r.candidate_content != b"bad")})
    dag.register_worker(
        "w", lambda ctx: TaskOutcome.candidate("bad" if ctx.task_id == "a" else ctx.task_id)
    )
    dag.register_worker("fixed", lambda ctx: TaskOutcome.candidate("good"))
    dag.create_run([spec("a"), spec("b", "a")], run_id=run_id, context=security())
    first = dag.run(run_id)
    assert first.status.value == "failed"
    revision = dag.get_run(run_id).graph_revision
    with pytest.raises(DAGError) as info:
        dag.supersede_task(
            run_id, "a", spec("a2", worker="fixed"), expected_graph_revision=revision - 1
        )
    assert info.value.code == "LA-DAG-VERSION-CONFLICT"
    run = dag.supersede_task(
        run_id, "a", spec("a2", worker="fixed"), expected_graph_revision=revision
    )
    assert run.graph_revision == revision + 1 and run.status.value == "running"
    result = dag.run(run_id)
    assert result.success, result.errors
    assert result.tasks["a"].value == "superseded" and dag.get_task(run_id, "b").depends_on == (
        "a2",
    )
    assert dag.read_artifact(run_id, "b") == b"b"


def test_pause_resume_and_cancel(make_dag, run_id, security) -> None:
    dag = make_dag(verifiers={"v": CallableVerifier("v", accept_all)})
    dag.register_worker("w", lambda ctx: TaskOutcome.candidate(ctx.task_id))
    dag.create_run([spec("a"), spec("b", "a")], run_id=run_id, context=security())
    dag.pause(run_id, "maintenance")
    result = dag.run(run_id)
    assert result.status.value == "paused" and result.tasks["a"].value == "ready"
    import asyncio

    assert asyncio.run(dag.resume(run_id)).success
    with pytest.raises(DAGError) as info:
        dag.cancel(run_id)
    assert info.value.code == "LA-DAG-STATE"

    other = run_id + "-c"
    dag.create_run([spec("a")], run_id=other, context=security())
    cancelled = dag.cancel(other, "not needed")
    assert cancelled.status.value == "cancelled"
    task = dag.get_task(other, "a")
    assert task.status.value == "cancelled" and task.fence == 1
    assert dag.run(other).status.value == "cancelled"


def test_fail_fast_stops_independent_work(make_dag, run_id, security) -> None:
    cfg = DAGConfig(
        failure_policy="fail_fast", max_attempts_per_task=1, max_concurrency=1, poll_interval=0.01
    )
    dag = make_dag(
        config=cfg, verifiers={"v": CallableVerifier("v", lambda r: r.candidate_content == b"ok")}
    )
    dag.register_worker(
        "w", lambda ctx: TaskOutcome.candidate("bad" if ctx.task_id == "x" else "ok")
    )
    dag.create_run(
        [spec("x", priority=10), spec("y"), spec("z")], run_id=run_id, context=security()
    )
    result = dag.run(run_id)
    assert result.status.value == "failed"
    assert result.tasks["x"].value == "failed" and {
        result.tasks["y"].value,
        result.tasks["z"].value,
    } == {"cancelled"}


def test_lightagent_runs_as_a_worker(make_dag, run_id, security) -> None:
    model = ScriptedModel(["Paris", json.dumps({"kind": "blocked", "blocker": "no data"})])
    agent = LightAgent(name="geo", model=model)
    dag = make_dag(
        verifiers={"v": CallableVerifier("v", lambda r: r.candidate_content == b"Paris")}
    )
    dag.register_worker("agent", LightAgentWorkerAdapter(agent))
    dag.create_run([spec("capital", worker="agent")], run_id=run_id, context=security())
    assert dag.run(run_id).success
    assert dag.read_artifact(run_id, "capital") == b"Paris"
    assert "do capital" in str(model.requests[0].messages)
    dag.create_run([spec("other", worker="agent")], run_id=run_id + "-2", context=security())
    assert dag.run(run_id + "-2").status.value == "blocked"
    model.assert_exhausted()


def test_identity_is_required_and_checked(make_dag, run_id, security) -> None:
    dag = make_dag(verifiers={"v": CallableVerifier("v", accept_all)})
    dag.register_worker("w", lambda ctx: TaskOutcome.candidate("x"))
    for context in (None, security(tenant_id=None), security(project_id=None), {"tenant_id": "a"}):
        with pytest.raises(DAGError) as info:
            dag.create_run([spec("t")], run_id=run_id, context=context)
        assert info.value.code == "LA-DAG-IDENTITY-REQUIRED"
    dag.create_run([spec("t")], run_id=run_id, context=security())
    with pytest.raises(DAGError) as info:
        dag.run(run_id, context=security(tenant_id="someone-else"))
    assert info.value.code == "LA-DAG-IDENTITY-REQUIRED"
    assert dag.run(run_id, context=security()).success


def test_each_attempt_passes_the_capability_gate_with_a_narrowed_context(
    make_dag, run_id, security
) -> None:
    contexts = []
    dag = make_dag(verifiers={"v": CallableVerifier("v", accept_all)})

    def work(ctx):
        contexts.append(ctx.security_context)
        return TaskOutcome.candidate("x")

    dag.register_worker("w", work)
    dag.create_run(
        [spec("t", resource_requirements=("db:orders",))],
        run_id=run_id,
        context=security(resources=frozenset({"db:*"})),
    )
    assert dag.run(run_id).success
    (ctx,) = contexts
    assert (ctx.run_id, ctx.task_id, ctx.tenant_id, ctx.resources) == (
        run_id,
        "t",
        "acme",
        frozenset({"db:orders"}),
    )
    assert ctx.attempt_id and ctx.agent_id and ctx.parent_agent_id is None
    audits = [e for e in dag.events(run_id, limit=1000) if e.type == "dag.capability.gate"]
    assert [(a.data["decision"], a.data["capability"], a.data["resource"]) for a in audits] == [
        ("allow", "dag.task.execute", "db:orders")
    ]

    denied = run_id + "-denied"
    dag.create_run(
        [spec("t")], run_id=denied, context=security(permissions=PermissionSet(allowed=frozenset()))
    )
    result = dag.run(denied)
    assert result.status.value == "failed" and result.errors["t"]["code"] == "LA-POLICY"
    assert dag.get_task(denied, "t").attempts == 1  # a denial is not retried
    assert [
        e.data["decision"]
        for e in dag.events(denied, limit=1000)
        if e.type == "dag.capability.gate"
    ] == ["deny"]
    outside = run_id + "-outside"
    dag.create_run(
        [spec("t", resource_requirements=("fs:/etc",))],
        run_id=outside,
        context=security(resources=frozenset({"db:*"})),
    )
    assert dag.run(outside).errors["t"]["code"] == "LA-POLICY"
    assert len(contexts) == 1  # the worker never ran for denied attempts


def test_create_run_is_idempotent_and_validates(make_dag, run_id, security) -> None:
    dag = make_dag(verifiers={"v": CallableVerifier("v", accept_all)})
    dag.register_worker("w", lambda ctx: TaskOutcome.candidate("x"))
    first = dag.create_run([spec("a"), spec("b", "a")], run_id=run_id, context=security())
    again = dag.create_run([spec("a"), spec("b", "a")], run_id=run_id, context=security())
    assert again.created_at == first.created_at
    cases = [
        ([spec("a"), spec("b", "z")], "LA-DAG-UNKNOWN-DEPENDENCY"),
        ([spec("a", "b"), spec("b", "a")], "LA-DAG-CYCLE"),
        ([spec("a"), spec("a")], "LA-DAG-INVALID"),
        ([], "LA-DAG-INVALID"),
        ([spec("a", worker="nobody")], "LA-DAG-RECOVERY-CONFIG-MISMATCH"),
        ([spec("a", verifier="nobody")], "LA-DAG-VERIFIER-UNAVAILABLE"),
    ]
    for tasks, code in cases:
        with pytest.raises(DAGError) as info:
            dag.create_run(tasks, run_id=run_id + "-x", context=security())
        assert info.value.code == code, tasks
    with pytest.raises(DAGError) as info:
        dag.create_run([spec("a")], run_id=run_id, context=security())
    assert info.value.code == "LA-DAG-IDEMPOTENCY-CONFLICT"
    with pytest.raises(DAGError) as info:
        dag.run("no-such-run")
    assert info.value.code == "LA-DAG-NOT-FOUND"


def test_events_are_session_events_and_mirror_into_a_session_store(
    make_dag, run_id, security
) -> None:
    sessions = InMemorySessionStore()
    dag = make_dag(verifiers={"v": CallableVerifier("v", accept_all)}, session_store=sessions)
    dag.register_worker("w", lambda ctx: TaskOutcome.candidate("x"))
    dag.create_run([spec("t")], run_id=run_id, context=security())
    dag.run(run_id)
    events = dag.session_events(run_id)
    assert events[0].type == "dag.run.created" and events[-1].type == "dag.run.completed"
    mirrored = sessions.events(f"dag-{run_id}")
    assert [e.type for e in mirrored] == [e.type for e in events]
    dag.run(run_id)  # mirroring again adds only what is new
    assert len(sessions.events(f"dag-{run_id}")) == len(dag.events(run_id, limit=1000))


def test_capability_provider_reads_freely_and_needs_approval_to_control(
    make_dag, run_id, security, monkeypatch
) -> None:
    import asyncio

    from lightagent import ApprovalToken, CapabilityRegistry
    from lightagent.errors import ApprovalError
    from lightagent_dag import LightDAGProvider

    monkeypatch.setenv("LIGHTAGENT_APPROVAL_KEY", "k" * 32)
    dag = make_dag(verifiers={"v": CallableVerifier("v", accept_all)})
    dag.register_worker("w", lambda ctx: TaskOutcome.candidate("x"))
    dag.create_run([spec("t")], run_id=run_id, context=security())
    registry = CapabilityRegistry()
    registry.register(LightDAGProvider(dag))
    caller = security(permissions=PermissionSet())

    async def scenario() -> None:
        run = await registry.invoke("workflow.dag.get_run", {"run_id": run_id}, context=caller)
        assert run["status"] == "running"
        tasks = await registry.invoke("workflow.dag.list_tasks", {"run_id": run_id}, context=caller)
        assert [t["task_id"] for t in tasks] == ["t"]
        with pytest.raises(ApprovalError):
            await registry.invoke("workflow.dag.cancel", {"run_id": run_id}, context=caller)
        assert dag.get_run(run_id).status.value == "running"
        token = ApprovalToken.issue("workflow.dag.pause", {"run_id": run_id}, caller)
        paused = await registry.invoke(
            "workflow.dag.pause", {"run_id": run_id}, context=caller, approval_token=token
        )
        assert paused["status"] == "paused"

    asyncio.run(scenario())


def test_a_worker_without_the_verifier_blocks_the_task_before_working(
    make_dag, run_id, security
) -> None:
    import asyncio

    dag = make_dag()
    calls: list[str] = []
    dag.register_worker("w", lambda ctx: calls.append(ctx.task_id) or TaskOutcome.candidate("x"))
    dag.create_run([spec("t")], run_id=run_id, context=security(), check_keys=False)
    with pytest.raises(DAGError) as info:
        dag.run(run_id)  # a local run checks every key up front
    assert info.value.code == "LA-DAG-VERIFIER-UNAVAILABLE"
    asyncio.run(
        dag.runner(worker_id="lonely").pool(run_id=run_id)
    )  # as `lightagent dag worker` would
    task = dag.get_task(run_id, "t")
    assert (
        task.status.value == "blocked" and task.last_error["code"] == "LA-DAG-VERIFIER-UNAVAILABLE"
    )
    assert calls == []
    dag.register_verifier("v", CallableVerifier("v", accept_all))
    dag.resolve_blocker(run_id, "t", "verifier deployed")
    assert dag.run(run_id).success and calls == ["t"]


def test_worker_factories_build_a_fresh_worker_per_attempt_and_close_it(
    make_dag, run_id, security
) -> None:
    made: list[object] = []
    closed: list[object] = []

    class Worker:
        def __init__(self, context) -> None:
            self.task_id = context.task_id
            made.append(self)

        async def execute(self, context):
            return TaskOutcome.candidate(f"{context.task_id}-{id(self)}")

        def close(self) -> None:
            closed.append(self)

    dag = make_dag(verifiers={"v": CallableVerifier("v", accept_all)})
    dag.register_worker_factory("w", Worker)
    dag.create_run([spec("a"), spec("b")], run_id=run_id, context=security())
    assert dag.run(run_id).success
    assert len(made) == 2 and made[0] is not made[1] and closed == made


def test_verifier_answers_are_normalised() -> None:
    import asyncio
    import time as _time

    from lightagent_dag import VerificationVerdict
    from lightagent_dag.records import DAGRun, DAGTask, VerificationRequest
    from lightagent_dag.states import DAGRunStatus, DAGTaskStatus

    run = DAGRun("r", DAGRunStatus.RUNNING, "t", "p", "u", ("a",), 1, {}, {})
    request = VerificationRequest(
        "completion",
        run,
        DAGTask("r", spec("a"), DAGTaskStatus.VERIFYING),
        "att",
        "snap",
        candidate_content=b"x",
    )

    def boom(r):
        raise RuntimeError("checker crashed")

    cases = [
        (lambda r: True, VerificationVerdict.PASS),
        (lambda r: None, VerificationVerdict.FAIL),
        (lambda r: "inconclusive", VerificationVerdict.INCONCLUSIVE),
        (lambda r: {"verdict": "pass", "diagnostics": ["ok"]}, VerificationVerdict.PASS),
        (lambda r: {"verdict": "maybe"}, VerificationVerdict.ERROR),
        (lambda r: 42, VerificationVerdict.ERROR),
        (boom, VerificationVerdict.ERROR),
    ]
    for fn, verdict in cases:
        report = asyncio.run(CallableVerifier("k", fn).verify(request))
        assert report.verdict is verdict
        assert report.input_snapshot_hash == "snap" and report.verifier_key == "k"
    slow = CallableVerifier("slow", lambda r: _time.sleep(1) or True, timeout=0.1)
    report = asyncio.run(slow.verify(request))
    assert report.verdict is VerificationVerdict.ERROR and "timed out" in report.diagnostics[0]
    assert (
        "checker crashed" in asyncio.run(CallableVerifier("k", boom).verify(request)).diagnostics[0]
    )
    with pytest.raises(DAGError):
        CallableVerifier("", accept_all)


def test_adapter_runs_objects_with_only_a_sync_run(make_dag, run_id, security) -> None:
    import threading

    class Echo:
        def __init__(self) -> None:
            self.threads: list[str] = []

        def run(self, query: str) -> str:
            self.threads.append(threading.current_thread().name)
            return "ECHO"

    echo = Echo()
    dag = make_dag(verifiers={"v": CallableVerifier("v", lambda r: r.candidate_content == b"ECHO")})
    dag.register_worker("w", LightAgentWorkerAdapter(echo))
    dag.create_run([spec("t")], run_id=run_id, context=security())
    assert dag.run(run_id).success
    assert echo.threads and echo.threads[0] != "MainThread"  # off the event loop
    with pytest.raises(DAGError):
        LightAgentWorkerAdapter(object())
