"""A publication that claims the worker's next task in the same transaction (SQLite and PostgreSQL)."""

from __future__ import annotations

import time
import uuid

from lightagent_dag import ClaimRequest, DAGConfig, LocalArtifactStore, SqlTaskGraphStore, TaskSpec


def _spec(task_id: str, priority: int = 0) -> TaskSpec:
    return TaskSpec(
        task_id=task_id,
        goal="g",
        acceptance_contract={"x": 1},
        worker_key="w",
        verifier_key="v",
        priority=priority,
    )


def _create(store: SqlTaskGraphStore, run_id: str, specs: list[TaskSpec], security) -> None:
    store.create_run(
        run_id,
        specs,
        tenant_id="acme",
        project_id="p1",
        user_id="alice",
        context=security(run_id=run_id).to_dict(),
        root_task_ids=[s.task_id for s in specs],
        config=DAGConfig(),
    )


def _publish(store, tmp_path, claim, request, *, inline: bool):
    manifest = LocalArtifactStore(tmp_path / "a").stage(
        claim.task_id.encode(),
        run_id=claim.run_id,
        task_id=claim.task_id,
        attempt_id=claim.attempt_id,
        tenant_id="acme",
        project_id="p1",
    )
    report = {"report_id": uuid.uuid4().hex, "verdict": "pass"}
    if inline:
        return store.publish_verified(claim, manifest, report, claim_next=request)
    assert store.stage_candidate(claim, manifest, max_pending=16)
    return store.publish(claim, manifest, report, claim_next=request)


def test_a_publication_claims_the_next_task_fenced_and_recorded(
    dag_store, run_id, security, tmp_path
) -> None:
    _create(dag_store, run_id, [_spec("t1"), _spec("t2"), _spec("t3")], security)
    request = ClaimRequest("A", run_id, ("w",), 60.0)
    first = dag_store.claim("A", run_id=run_id, lease_seconds=60)
    assert first is not None and first.task_id == "t1"
    second = _publish(dag_store, tmp_path, first, request, inline=True)
    assert second is not None and second.task_id == "t2" and second.fence == 1
    third = _publish(dag_store, tmp_path, second, request, inline=False)
    assert third is not None and third.task_id == "t3"
    # Nothing left to claim: the last publication claims nothing and still lands.
    assert _publish(dag_store, tmp_path, third, request, inline=True) is None
    assert dag_store.publication_counts(run_id) == {"t1": 1, "t2": 1, "t3": 1}
    assert dag_store.get_run(run_id).status.value == "succeeded"
    claimed = [e for e in dag_store.events(run_id, limit=1000) if e.type == "dag.task.claimed"]
    assert [e.task_id for e in claimed] == ["t1", "t2", "t3"]
    assert [e.data["attempt_id"] for e in claimed[1:]] == [second.attempt_id, third.attempt_id]
    states = {a.task_id: a.status.value for a in dag_store.attempts(run_id)}
    assert states == {"t1": "succeeded", "t2": "succeeded", "t3": "succeeded"}


def test_a_lease_takeover_is_left_to_a_claim_of_its_own(
    dag_store, run_id, security, tmp_path
) -> None:
    # t0 outranks t1 and its holder's lease is already over: the best claimable task is a
    # takeover, which a publication must not do (nor half-do) on its way.
    _create(dag_store, run_id, [_spec("t0", priority=5), _spec("t1"), _spec("t2")], security)
    # The dead holder's lease is long until A has claimed (a short one could run out on
    # a loaded machine before A asks, and A would take t0 over), then cut short.
    dead = dag_store.claim("dead", run_id=run_id, lease_seconds=60)
    assert dead is not None and dead.task_id == "t0"
    live = dag_store.claim("A", run_id=run_id, lease_seconds=60)
    assert live is not None and live.task_id == "t1"
    dag_store.renew(dead, 0.5)
    time.sleep(0.6)  # the dead holder's lease runs out
    request = ClaimRequest("A", run_id, ("w",), 60.0)
    assert _publish(dag_store, tmp_path, live, request, inline=True) is None
    assert [a.status.value for a in dag_store.attempts(run_id, "t0")] == ["running"]
    assert not [e for e in dag_store.events(run_id, limit=1000) if e.type == "dag.attempt.expired"]
    # The pool's own claim then takes t0 over (fence 2) before the lower-priority t2.
    takeover = dag_store.claim("A", run_id=run_id, lease_seconds=60)
    assert takeover is not None and (takeover.task_id, takeover.fence) == ("t0", 2)
    assert [a.status.value for a in dag_store.attempts(run_id, "t0")] == ["expired", "running"]
