"""What the attempt path reads and writes on every task: parsed once, written whole."""

from __future__ import annotations

import dataclasses
import json

import pytest
from lightagent_dag import (
    ArtifactManifest,
    DAGError,
    TaskSpec,
    VerificationReport,
    VerificationVerdict,
)


def _spec(task_id: str, **kw: object) -> TaskSpec:
    values: dict[str, object] = {
        "task_id": task_id,
        "goal": "g",
        "acceptance_contract": {"x": [1, 2]},
        "worker_key": "w",
        "verifier_key": "v",
    }
    values.update(kw)
    return TaskSpec(**values)  # type: ignore[arg-type]


def test_a_stored_spec_loads_back_equal_without_being_checked_again() -> None:
    spec = _spec("t", depends_on=("a",), resource_requirements=["db"], metadata={"k": {"n": 1}})
    stored = json.loads(json.dumps(spec.to_dict()))
    loaded = TaskSpec.from_stored(stored)
    assert loaded == spec and isinstance(loaded.depends_on, tuple)
    # Something the store never writes takes the checked path and its typed errors.
    with pytest.raises(DAGError) as info:
        TaskSpec.from_stored({"goal": "g"})
    assert info.value.code == "LA-DAG-INVALID"


def test_manifest_and_report_dicts_are_whole_and_detached() -> None:
    manifest = ArtifactManifest(
        run_id="r",
        task_id="t",
        attempt_id="a",
        tenant_id="acme",
        project_id="p",
        content_hash="0" * 64,
        relative_blob_path="acme/p/00/" + "0" * 64,
        media_type="text/plain",
        byte_size=3,
        dependency_manifest={"d": "x"},
        metadata={"nested": {"k": [1]}},
    )
    out = manifest.to_dict()
    assert out == dataclasses.asdict(manifest)
    out["metadata"]["nested"]["k"].append(2)
    out["dependency_manifest"]["e"] = "y"
    assert manifest.metadata == {"nested": {"k": [1]}} and manifest.dependency_manifest == {
        "d": "x"
    }
    assert ArtifactManifest.from_dict(manifest.to_dict()) == manifest

    report = VerificationReport(
        kind="completion", verdict=VerificationVerdict.PASS, diagnostics=("ok",)
    )
    data = report.to_dict()
    assert data["verdict"] == "pass" and data["diagnostics"] == ["ok"]
    assert set(data) == {f.name for f in dataclasses.fields(VerificationReport)}
    json.dumps(data)


def test_an_unchanged_run_row_reads_as_the_same_record(dag_store, run_id, security) -> None:
    from lightagent_dag import DAGConfig

    dag_store.create_run(
        run_id,
        [_spec("t1")],
        tenant_id="acme",
        project_id="p1",
        user_id="alice",
        context=security(run_id=run_id).to_dict(),
        root_task_ids=["t1"],
        config=DAGConfig(),
    )
    first = dag_store.get_run(run_id)
    assert dag_store.get_run(run_id) is first
    paused = dag_store.set_run_status(run_id, "pause")
    again = dag_store.get_run(run_id)
    assert again is not first and again.status.value == "paused" == paused.status.value
    assert first.status.value == "running"  # the earlier record is not changed under its holder


@pytest.mark.postgres
def test_the_open_task_check_reads_an_index_as_the_run_progresses(postgres_url, security) -> None:
    # Planned from statistics taken when every task was ready, a plain EXISTS over the
    # open states became a sequential scan past every verified task, on each publication.
    import uuid

    import sqlalchemy as sa
    from lightagent_dag import ClaimRequest, DAGConfig, SqlTaskGraphStore
    from lightagent_dag.sql.attempts import _OTHERS_OPEN

    store = SqlTaskGraphStore(postgres_url)
    run_id = f"open-{uuid.uuid4().hex[:8]}"
    try:
        store.create_run(
            run_id,
            [_spec(f"t{i:03}") for i in range(300)],
            tenant_id="acme",
            project_id="p1",
            user_id="alice",
            context=security(run_id=run_id).to_dict(),
            root_task_ids=[f"t{i:03}" for i in range(300)],
            config=DAGConfig(max_tasks=1000),
        )
        request = ClaimRequest("w", run_id, ("w",), 60)
        claim = store.claim("w", run_id=run_id)
        for _ in range(250):
            assert claim is not None
            manifest = _manifest(claim)
            report = {"report_id": uuid.uuid4().hex, "verdict": "pass"}
            claim = store.publish_verified(claim, manifest, report, claim_next=request)
        with store.engine.begin() as conn:
            plan = "\n".join(
                row[0]
                for row in conn.execute(
                    sa.text("EXPLAIN SELECT " + store.sql_text(_OTHERS_OPEN)),
                    {"r": run_id, "t": "t000"},
                )
            )
        assert "Seq Scan on dag_tasks" not in plan, plan
    finally:
        store.close()


def _manifest(claim):
    from lightagent_dag import ArtifactManifest

    return ArtifactManifest(
        run_id=claim.run_id,
        task_id=claim.task_id,
        attempt_id=claim.attempt_id,
        tenant_id="acme",
        project_id="p1",
        content_hash="0" * 64,
        relative_blob_path="acme/p1/00/" + "0" * 64,
        media_type="text/plain",
        byte_size=0,
    )
