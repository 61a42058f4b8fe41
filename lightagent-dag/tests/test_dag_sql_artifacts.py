"""SqlArtifactStore: blobs in the task-graph database, written by the attempt's own fenced write."""

from __future__ import annotations

import time
import uuid

import pytest
import sqlalchemy as sa
from lightagent.errors import LightAgentError, PolicyError
from lightagent_contracts.suites.artifact_store import ArtifactStoreContract
from lightagent_dag import (
    CallableVerifier,
    DAGConfig,
    DAGError,
    DAGFencedError,
    LightDAG,
    LocalArtifactStore,
    SqlArtifactStore,
    SqlTaskGraphStore,
    TaskOutcome,
    TaskSpec,
)


class TestSqlArtifactStoreContract(ArtifactStoreContract):
    __test__ = True

    @pytest.fixture
    def make_artifact_store(self, dag_store):
        return lambda: SqlArtifactStore(dag_store)


def spec(task_id: str, *deps: str) -> TaskSpec:
    return TaskSpec(
        task_id=task_id,
        goal=f"do {task_id}",
        acceptance_contract={"task": task_id},
        worker_key="w",
        verifier_key="v",
        depends_on=deps,
    )


SCOPE = {
    "run_id": "r",
    "task_id": "t",
    "attempt_id": "a",
    "tenant_id": "acme",
    "project_id": "p1",
}


def blob_count(store: SqlTaskGraphStore) -> int:
    with store.engine.begin() as conn:
        return int(conn.execute(sa.text("SELECT COUNT(*) FROM dag_blobs")).scalar_one())


def make(dag_store, inline: bool, **config: object) -> LightDAG:
    cfg = DAGConfig(poll_interval=0.01, poll_interval_max=0.05, **config)  # type: ignore[arg-type]
    return LightDAG(
        store=dag_store,
        artifact_store=SqlArtifactStore(dag_store),
        verifiers={"v": CallableVerifier("v", lambda r: True, inline=inline)},
        config=cfg,
    )


@pytest.mark.parametrize("inline", [True, False], ids=["inline", "staged"])
def test_a_run_keeps_its_artifacts_in_the_database(dag_store, run_id, security, inline) -> None:
    dag = make(dag_store, inline)
    seen: dict[str, bytes] = {}

    def work(ctx):
        seen.update(ctx.dependency_artifacts)
        return TaskOutcome.candidate(f"{ctx.task_id}:" + "+".join(sorted(seen)))

    dag.register_worker("w", work)
    dag.create_run([spec("a"), spec("b", "a")], run_id=run_id, context=security())
    result = dag.run(run_id)
    assert result.success
    # b read a's bytes back from the database: no folder is involved at all.
    assert seen == {"a": b"a:"} and dag.read_artifact(run_id, "b") == b"b:a"
    published = dag_store.published_artifacts(run_id)
    assert all(dag.artifact_store.check_integrity(m) for m in published.values())
    # Same events as with a folder: the blob costs no event and no transaction of its own.
    kinds = [e.type for e in dag.events(run_id, limit=1000) if e.task_id == "a"]
    assert kinds[-3:] == ["dag.artifact.staged", "dag.artifact.published", "dag.task.verified"]


def test_a_fenced_out_attempt_leaves_no_blob(dag_store, run_id, security) -> None:
    dag = make(dag_store, True)
    dag.create_run([spec("t1")], run_id=run_id, context=security(), check_keys=False)
    artifacts = SqlArtifactStore(dag_store)
    old = dag_store.claim("A", run_id=run_id, lease_seconds=0.1)
    time.sleep(0.25)
    new = dag_store.claim("B", run_id=run_id, lease_seconds=30)
    assert old is not None and new is not None and new.fence == old.fence + 1
    before = blob_count(dag_store)
    blob, manifest = artifacts.describe(b"stale bytes", **{**SCOPE, "run_id": run_id})
    report = {"report_id": uuid.uuid4().hex, "verdict": "pass"}
    with pytest.raises(DAGFencedError):
        dag_store.publish_verified(old, manifest, report, blob=blob)
    with pytest.raises(DAGFencedError):
        dag_store.stage_candidate(old, manifest, max_pending=16, blob=blob)
    assert blob_count(dag_store) == before  # rolled back with the refused write
    blob, manifest = artifacts.describe(b"live bytes", **{**SCOPE, "run_id": run_id})
    dag_store.publish_verified(
        new, manifest, {"report_id": uuid.uuid4().hex, "verdict": "pass"}, blob=blob
    )
    assert blob_count(dag_store) == before + 1
    assert artifacts.read(dag_store.published_artifacts(run_id)["t1"]) == b"live bytes"


def test_reads_check_scope_state_and_bytes(dag_store) -> None:
    artifacts = SqlArtifactStore(dag_store)
    manifest = artifacts.stage(b"secret", **SCOPE)
    from dataclasses import replace

    published = replace(manifest, state="published")
    assert artifacts.read(published) == b"secret"

    class Other:
        tenant_id, project_id = "globex", "p1"

    with pytest.raises(PolicyError):
        artifacts.read(published, Other())
    with pytest.raises(DAGError) as info:
        artifacts.read(manifest)
    assert info.value.code == "LA-DAG-STATE"
    # A tampered row is caught by the hash check, never returned.
    with dag_store.engine.begin() as conn:
        conn.execute(sa.text("UPDATE dag_blobs SET content=:c"), {"c": b"SECRET"})
    with pytest.raises(DAGError) as info:
        artifacts.read(published)
    assert info.value.code == "LA-DAG-ARTIFACT-INTEGRITY"
    assert artifacts.check_integrity(manifest) is False
    with dag_store.engine.begin() as conn:
        conn.execute(sa.text("DELETE FROM dag_blobs"))
    with pytest.raises(DAGError) as info:
        artifacts.read(published)
    assert info.value.code == "LA-DAG-ARTIFACT-INTEGRITY" and "missing" in info.value.message


def test_bad_input_is_a_typed_error(dag_store, tmp_path) -> None:
    artifacts = SqlArtifactStore(dag_store, max_bytes=8)
    with pytest.raises(DAGError) as info:
        artifacts.stage(b"123456789", **SCOPE)
    assert info.value.code == "LA-DAG-ARTIFACT-TOO-LARGE" and info.value.details["maximum"] == 8
    with pytest.raises(DAGError) as info:
        artifacts.stage("text", **SCOPE)  # type: ignore[arg-type]
    assert info.value.code == "LA-DAG-INVALID"
    with pytest.raises(DAGError) as info:
        artifacts.stage(b"x", **{**SCOPE, "tenant_id": "../etc"})
    assert info.value.code == "LA-DAG-ARTIFACT-PATH"
    with pytest.raises(LightAgentError) as info:
        SqlArtifactStore(LocalArtifactStore(tmp_path))  # type: ignore[arg-type]
    assert info.value.code == "LA-CONFIG"


def test_the_same_bytes_in_two_tenants_are_two_blobs(dag_store) -> None:
    artifacts = SqlArtifactStore(dag_store)
    before = blob_count(dag_store)
    first = artifacts.stage(b"same", **SCOPE)
    artifacts.stage(b"same", **{**SCOPE, "attempt_id": "a2"})
    other = artifacts.stage(b"same", **{**SCOPE, "tenant_id": "globex"})
    assert first.content_hash == other.content_hash
    assert blob_count(dag_store) == before + 2


@pytest.mark.postgres
def test_a_postgresql_store_keeps_artifacts_in_the_database_by_default(postgres_url) -> None:
    store = SqlTaskGraphStore(postgres_url)
    try:
        dag = LightDAG(store=store)
        assert (
            isinstance(dag.artifact_store, SqlArtifactStore) and dag.artifact_store.store is store
        )
    finally:
        store.close()


def test_a_sqlite_store_keeps_the_folder_default(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    dag = LightDAG(store=tmp_path / "dag.sqlite3")
    assert isinstance(dag.artifact_store, LocalArtifactStore)
    dag.store.close()


@pytest.mark.postgres
def test_a_run_that_grows_the_task_table_refreshes_its_statistics(postgres_url, security) -> None:
    # Planned from the statistics of an empty table, a publication's fenced update
    # walks the claim index row by row; a large run must not wait for autovacuum.
    schema = f"stats_{uuid.uuid4().hex[:8]}"
    with sa.create_engine(postgres_url).begin() as conn:
        conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    url = f"{postgres_url}?options=-csearch_path%3D{schema}"
    store = SqlTaskGraphStore(url)

    def reltuples() -> float:
        with store.engine.begin() as conn:
            return float(
                conn.execute(
                    sa.text("SELECT reltuples FROM pg_class WHERE oid = 'dag_tasks'::regclass")
                ).scalar_one()
            )

    try:
        dag = LightDAG(store=store)
        dag.create_run([spec(f"s{i}") for i in range(10)], context=security(), check_keys=False)
        assert reltuples() < 0  # a small run leaves it to autovacuum
        dag.create_run([spec(f"b{i}") for i in range(100)], context=security(), check_keys=False)
        assert reltuples() == 110
    finally:
        store.close()
        with sa.create_engine(postgres_url).begin() as conn:
            conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))


def test_a_worker_app_with_database_artifacts_keeps_them_in_the_store_it_serves(
    tmp_path, monkeypatch
) -> None:
    import sys
    import types

    from lightagent_dag.cli import load_app

    app_store = SqlTaskGraphStore(f"sqlite:///{tmp_path / 'app.sqlite3'}")
    module = types.ModuleType("sql_artifacts_app")
    module.dag = LightDAG(store=app_store, artifact_store=SqlArtifactStore(app_store, max_bytes=99))  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "sql_artifacts_app", module)
    dag = load_app("sql_artifacts_app:dag", str(tmp_path / "served.sqlite3"))
    try:
        assert isinstance(dag.artifact_store, SqlArtifactStore)
        assert dag.artifact_store.store is dag.store and dag.store is not app_store
        assert dag.artifact_store.max_bytes == 99
    finally:
        dag.store.close()
        app_store.close()
