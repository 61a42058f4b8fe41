"""Leases and fencing on a real store (SQLite file and PostgreSQL)."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from lightagent.errors import StorageError
from lightagent_dag import (
    CallableVerifier,
    DAGConfig,
    DAGError,
    DAGFencedError,
    LightDAG,
    LocalArtifactStore,
    SqlTaskGraphStore,
    TaskOutcome,
    TaskSpec,
)


def _spec(task_id: str = "t1", **kw: object) -> TaskSpec:
    values: dict[str, object] = {
        "task_id": task_id,
        "goal": "g",
        "acceptance_contract": {"x": 1},
        "worker_key": "w",
        "verifier_key": "v",
    }
    values.update(kw)
    return TaskSpec(**values)  # type: ignore[arg-type]


def _create(
    store: SqlTaskGraphStore, run_id: str, specs: list[TaskSpec], security, **config: object
) -> None:
    ctx = security(run_id=run_id)
    cfg = DAGConfig(**config)  # type: ignore[arg-type]
    store.create_run(
        run_id,
        specs,
        tenant_id="acme",
        project_id="p1",
        user_id="alice",
        context=ctx.to_dict(),
        root_task_ids=[
            s.task_id for s in specs if not any(s.task_id in o.depends_on for o in specs)
        ],
        config=cfg,
    )


def _stage(tmp_path, claim):
    return LocalArtifactStore(tmp_path / "a").stage(
        b"out",
        run_id=claim.run_id,
        task_id=claim.task_id,
        attempt_id=claim.attempt_id,
        tenant_id="acme",
        project_id="p1",
    )


def test_a_lease_is_over_at_its_expiry_instant(dag_store, run_id, security) -> None:
    # The database clock ticks in milliseconds on SQLite: a zero-length lease must be
    # claimable by the very next statement, even within the same tick.
    _create(dag_store, run_id, [_spec()], security, max_attempts_per_task=1000)
    for fence in range(1, 201):
        claim = dag_store.claim("A", run_id=run_id, lease_seconds=0.0)
        assert claim is not None and claim.fence == fence


def test_stale_attempt_writes_are_all_rejected_and_nothing_lands(
    dag_store, run_id, security, tmp_path
) -> None:
    _create(dag_store, run_id, [_spec()], security)
    # A long lease while B is refused (a short one could run out on a loaded machine
    # before B even asks), then shortened to run out.
    old = dag_store.claim("A", run_id=run_id, lease_seconds=60)
    assert old is not None and old.fence == 1
    assert dag_store.claim("B", run_id=run_id, lease_seconds=0.2) is None  # lease still held
    dag_store.renew(old, 0.2)
    time.sleep(0.35)
    new = dag_store.claim("B", run_id=run_id, lease_seconds=30)
    assert new is not None and new.fence == 2 and new.task_id == old.task_id
    manifest = _stage(tmp_path, old)
    report = {"report_id": "r-old", "verdict": "pass"}
    for write in (
        lambda: dag_store.renew(old, 30),
        lambda: dag_store.stage_candidate(old, manifest, max_pending=16),
        lambda: dag_store.publish(old, manifest, report),
        lambda: dag_store.reject(old, {"code": "x"}, outcome="retry"),
        lambda: dag_store.block(old, "stale"),
    ):
        with pytest.raises(DAGFencedError) as info:
            write()
        assert info.value.code == "LA-DAG-FENCED"
    task = dag_store.get_task(run_id, "t1")
    assert task.status.value == "running" and task.fence == 2 and task.lease_owner == "B"
    assert dag_store.published_artifacts(run_id) == {}
    fenced = [e for e in dag_store.events(run_id, limit=1000) if e.type == "dag.attempt.fenced"]
    assert len(fenced) == 5 and dag_store.fenced_rejections == 5
    # The live attempt stages; the task is now `verifying`, as the stale attempt expects:
    # only the fence can refuse the stale writes now.
    m2 = _stage(tmp_path, new)
    assert dag_store.stage_candidate(new, m2, max_pending=16)
    for write in (
        lambda: dag_store.publish(old, manifest, report),
        lambda: dag_store.publish(old, m2, report),
        lambda: dag_store.reject(old, {"code": "x"}, outcome="fail"),
        lambda: dag_store.renew(old, 30),
    ):
        with pytest.raises(DAGFencedError):
            write()
    assert dag_store.get_task(run_id, "t1").status.value == "verifying"
    assert dag_store.published_artifacts(run_id) == {}
    dag_store.publish(new, m2, {"report_id": "r-new", "verdict": "pass"})
    published = dag_store.published_artifacts(run_id)
    assert list(published) == ["t1"] and published["t1"].attempt_id == new.attempt_id
    assert dag_store.publication_counts(run_id) == {"t1": 1}
    assert dag_store.get_run(run_id).status.value == "succeeded"
    states = {a.fence: a.status.value for a in dag_store.attempts(run_id, "t1")}
    assert states == {1: "expired", 2: "succeeded"}


def test_lease_expiry_uses_the_database_clock(dag_store, run_id, security, monkeypatch) -> None:
    _create(dag_store, run_id, [_spec()], security)
    before = dag_store.db_time()
    claim = dag_store.claim("A", run_id=run_id, lease_seconds=30)
    assert before + 29 < claim.lease_expires_at < dag_store.db_time() + 31
    # A worker whose own clock runs an hour ahead must not see the lease as expired.
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + 3600)
    assert dag_store.claim("B", run_id=run_id, lease_seconds=30) is None


def test_fencing_tokens_only_grow(dag_store, run_id, security) -> None:
    _create(dag_store, run_id, [_spec()], security, max_attempts_per_task=10)
    fences = []
    for _ in range(3):
        claim = dag_store.claim("A", run_id=run_id, lease_seconds=0.05)
        fences.append(claim.fence)
        time.sleep(0.1)
    assert fences == [1, 2, 3]
    dag_store.set_run_status(run_id, "cancel", "stop")
    task = dag_store.get_task(run_id, "t1")
    assert task.status.value == "cancelled" and task.fence == 4


def test_attempts_are_bounded_even_when_every_holder_dies(dag_store, run_id, security) -> None:
    _create(dag_store, run_id, [_spec()], security, max_attempts_per_task=2)
    assert dag_store.claim("A", run_id=run_id, lease_seconds=0.05).fence == 1
    time.sleep(0.1)
    assert dag_store.claim("A", run_id=run_id, lease_seconds=0.05).fence == 2
    time.sleep(0.1)
    assert dag_store.claim("A", run_id=run_id, lease_seconds=0.05) is None
    task = dag_store.get_task(run_id, "t1")
    assert task.status.value == "failed" and task.last_error["code"] == "LA-DAG-BUDGET-EXHAUSTED"
    assert dag_store.get_run(run_id).status.value == "failed"


def test_scheduler_lease_epochs_never_restart(dag_store, run_id, security) -> None:
    _create(dag_store, run_id, [_spec()], security)
    assert dag_store.acquire_scheduler_lease(run_id, "A", 30) == 1
    with pytest.raises(DAGError) as info:
        dag_store.acquire_scheduler_lease(run_id, "B", 30)
    assert info.value.code == "LA-DAG-LEASE-REJECTED"
    dag_store.release_scheduler_lease(run_id, "A", 1)
    assert dag_store.acquire_scheduler_lease(run_id, "B", 30) == 2
    with pytest.raises(DAGFencedError):
        dag_store.renew_scheduler_lease(run_id, "A", 1, 30)
    dag_store.release_scheduler_lease(run_id, "B", 2)
    assert dag_store.acquire_scheduler_lease(run_id, "A", 30) == 3


def test_heartbeat_keeps_a_task_slower_than_its_lease(make_dag, run_id, security) -> None:
    dag = make_dag(
        config=DAGConfig(
            # The lease outlasts a renewal held up for over a second on a loaded machine;
            # the task outlasts two leases.
            task_lease_seconds=1.5,
            heartbeat_interval=0.15,
            poll_interval=0.01,
            poll_interval_max=0.05,
        ),
        verifiers={"v": CallableVerifier("v", lambda r: r.candidate_content == b"slow")},
    )

    def slow(context):
        time.sleep(3.2)  # more than two leases
        return TaskOutcome.candidate("slow")

    dag.register_worker("w", slow)
    dag.create_run([_spec()], run_id=run_id, context=security())
    result = dag.run(run_id)
    assert result.success
    task = dag.get_task(run_id, "t1")
    assert task.attempts == 1 and task.fence == 1
    assert dag.read_artifact(run_id, "t1") == b"slow"


class _PartitionedStore(SqlTaskGraphStore):
    """The same database, reached by a worker whose renewals cannot get through."""

    def renew(self, claim, lease_seconds):  # type: ignore[override]
        raise StorageError("LA-STORAGE-UNAVAILABLE", "simulated partition")


def test_partitioned_worker_self_fences_and_publishes_nothing(
    dag_store, run_id, security, tmp_path
) -> None:
    released = threading.Event()
    calls: list[str] = []

    def work(context):
        calls.append(context.worker_id)
        if context.worker_id == "A":
            released.wait(5)  # stuck past its lease; renewals fail meanwhile
            return TaskOutcome.candidate("from-A")
        return TaskOutcome.candidate("from-B")

    cfg = DAGConfig(
        task_lease_seconds=0.4, heartbeat_interval=0.1, poll_interval=0.01, poll_interval_max=0.05
    )
    verifiers = {"v": CallableVerifier("v", lambda r: True)}
    artifacts = LocalArtifactStore(tmp_path / "art")
    store_a = _PartitionedStore(dag_store.url, engine=dag_store.engine)
    dag_a = LightDAG(store=store_a, artifact_store=artifacts, verifiers=verifiers, config=cfg)
    dag_b = LightDAG(store=dag_store, artifact_store=artifacts, verifiers=verifiers, config=cfg)
    for dag in (dag_a, dag_b):
        dag.register_worker("w", work)
    dag_a.create_run([_spec()], run_id=run_id, context=security())

    async def scenario() -> None:
        claim = await asyncio.to_thread(store_a.claim, "A", run_id=run_id, lease_seconds=0.4)
        runner_a = dag_a.runner(worker_id="A", on_attempt=lambda what, c: outcomes.append(what))
        attempt_a = asyncio.create_task(runner_a.run_attempt(claim))
        await asyncio.sleep(0.6)
        await dag_b.runner(worker_id="B").pool(run_id=run_id)
        released.set()
        await attempt_a

    outcomes: list[str] = []
    asyncio.run(scenario())
    assert calls[-1] == "B"  # A may be fenced before it even started, on a loaded machine
    # A stopped itself at its local deadline: it never even tried a write.
    assert outcomes == ["started", "fenced"]
    assert [e for e in dag_store.events(run_id, limit=1000) if e.type == "dag.attempt.fenced"] == []
    assert dag_b.read_artifact(run_id, "t1") == b"from-B"
    assert dag_store.publication_counts(run_id) == {"t1": 1}
    assert dag_store.get_run(run_id).status.value == "succeeded"


def test_reconcile_settles_a_run_left_running_with_nothing_to_do(
    dag_store, run_id, security, tmp_path
) -> None:
    import sqlalchemy as sa

    _create(dag_store, run_id, [_spec()], security)
    claim = dag_store.claim("A", run_id=run_id, lease_seconds=30)
    manifest = _stage(tmp_path, claim)
    assert dag_store.stage_candidate(claim, manifest, max_pending=16)
    dag_store.publish(claim, manifest, {"report_id": "r", "verdict": "pass"})
    # Force the state two concurrent last publications can leave behind.
    with dag_store.engine.begin() as conn:
        conn.execute(sa.text("UPDATE dag_runs SET status='running' WHERE run_id=:r"), {"r": run_id})
    assert dag_store.reconcile(run_id) == 1
    assert dag_store.get_run(run_id).status.value == "succeeded"
    assert dag_store.reconcile(run_id) == 0
