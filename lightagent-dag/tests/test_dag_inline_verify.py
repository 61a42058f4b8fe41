"""Inline verifiers: checked before staging, a pass staged and published in one transaction."""

from __future__ import annotations

import time

import pytest
from lightagent_dag import (
    CallableVerifier,
    DAGConfig,
    DAGFencedError,
    LocalArtifactStore,
    TaskOutcome,
    TaskSpec,
)


def spec(task_id: str, *deps: str) -> TaskSpec:
    return TaskSpec(
        task_id=task_id,
        goal=f"do {task_id}",
        acceptance_contract={"task": task_id},
        worker_key="w",
        verifier_key="v",
        depends_on=deps,
    )


def test_inline_pass_writes_what_stage_and_publish_write(make_dag, run_id, security) -> None:
    dag = make_dag(verifiers={"v": CallableVerifier("v", lambda r: True, inline=True)})
    dag.register_worker("w", lambda ctx: TaskOutcome.candidate(ctx.task_id))
    dag.create_run([spec("a"), spec("b", "a")], run_id=run_id, context=security())
    result = dag.run(run_id)
    assert result.success and dag.read_artifact(run_id, "b") == b"b"
    events = [e for e in dag.events(run_id, limit=1000) if e.task_id == "a"]
    kinds = [e.type for e in events]
    # The same events, in the same order, as the two-transaction path (the gate's audit
    # record rides with the publication, ahead of its events).
    assert kinds == [
        "dag.task.claimed",
        "dag.capability.gate",
        "dag.artifact.staged",
        "dag.artifact.published",
        "dag.task.verified",
    ]
    assert [e.event_id for e in events] == sorted(e.event_id for e in events)
    assert dag.store.publication_counts(run_id) == {"a": 1, "b": 1}
    (attempt,) = dag.store.attempts(run_id, "a")
    assert attempt.status.value == "succeeded"
    assert dag.store.published_artifacts(run_id)["a"].state == "published"


def test_inline_fail_is_staged_and_rejected_then_retried(make_dag, run_id, security) -> None:
    cfg = DAGConfig(
        max_attempts_per_task=2,
        retry_backoff_seconds=0.01,
        poll_interval=0.01,
        poll_interval_max=0.05,
    )
    dag = make_dag(
        config=cfg,
        verifiers={"v": CallableVerifier("v", lambda r: {"verdict": "fail"}, inline=True)},
    )
    dag.register_worker("w", lambda ctx: TaskOutcome.candidate("nope"))
    dag.create_run([spec("t")], run_id=run_id, context=security())
    result = dag.run(run_id)
    assert result.status.value == "failed"
    assert result.errors["t"]["code"] == "LA-DAG-VERIFICATION-FAILED"
    types = [e.type for e in dag.events(run_id, limit=1000)]
    assert types.count("dag.artifact.staged") == 2 and types.count("dag.verification.failed") == 2
    assert dag.store.published_artifacts(run_id) == {}


def test_inline_publication_by_a_fenced_attempt_is_refused(
    dag_store, run_id, security, tmp_path
) -> None:
    ctx = security(run_id=run_id)
    dag_store.create_run(
        run_id,
        [spec("t1")],
        tenant_id="acme",
        project_id="p1",
        user_id="alice",
        context=ctx.to_dict(),
        root_task_ids=["t1"],
        config=DAGConfig(),
    )
    old = dag_store.claim("A", run_id=run_id, lease_seconds=0.2)
    assert old is not None
    time.sleep(0.35)
    new = dag_store.claim("B", run_id=run_id, lease_seconds=30)
    assert new is not None and new.fence == old.fence + 1

    def stage(claim):
        return LocalArtifactStore(tmp_path / "a").stage(
            claim.attempt_id.encode(),
            run_id=claim.run_id,
            task_id=claim.task_id,
            attempt_id=claim.attempt_id,
            tenant_id="acme",
            project_id="p1",
        )

    with pytest.raises(DAGFencedError):
        dag_store.publish_verified(
            old, stage(old), {"report_id": run_id + "-old", "verdict": "pass"}
        )
    assert dag_store.published_artifacts(run_id) == {}
    assert dag_store.get_task(run_id, "t1").status.value == "running"
    dag_store.publish_verified(new, stage(new), {"report_id": run_id + "-new", "verdict": "pass"})
    published = dag_store.published_artifacts(run_id)
    assert published["t1"].attempt_id == new.attempt_id
    assert dag_store.get_run(run_id).status.value == "succeeded"
    # A second publication of the same attempt is refused: the task is no longer running.
    with pytest.raises(DAGFencedError):
        dag_store.publish_verified(new, stage(new), {"report_id": run_id + "-2", "verdict": "pass"})


def test_deferred_events_ride_with_the_next_commit_and_survive_a_rollback(
    dag_store, run_id, security
) -> None:
    ctx = security(run_id=run_id)
    dag_store.create_run(
        run_id,
        [spec("t1")],
        tenant_id="acme",
        project_id="p1",
        user_id="alice",
        context=ctx.to_dict(),
        root_task_ids=["t1"],
        config=DAGConfig(),
    )
    dag_store.defer_event(run_id, "dag.audit.test", {"n": 1}, "t1")
    assert dag_store.deferred_events == 1

    def boom(conn):
        raise RuntimeError("rolled back")

    with pytest.raises(RuntimeError):
        dag_store.transaction(boom)
    assert dag_store.deferred_events == 1  # not lost with the rolled-back transaction
    dag_store.flush_deferred()
    assert dag_store.deferred_events == 0
    audit = [e for e in dag_store.events(run_id, limit=100) if e.type == "dag.audit.test"]
    assert [(e.task_id, e.data) for e in audit] == [("t1", {"n": 1})]
