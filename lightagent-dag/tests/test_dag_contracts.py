"""Contracts: TaskSpec, TaskOutcome, DecompositionProposal, graph checks, states, errors, plugin."""

from __future__ import annotations

import json

import pytest
from lightagent.errors import ERROR_TAXONOMY, LightAgentError
from lightagent_dag import (
    DAGError,
    DAGFencedError,
    DAGRunStatus,
    DAGTaskStatus,
    DAGWorkerProtocolError,
    DecompositionProposal,
    SqliteTaskGraphStore,
    TaskOutcome,
    TaskSpec,
    normalize_task_outcome,
    topological_order,
)


def spec(**kw: object) -> TaskSpec:
    values: dict[str, object] = {
        "goal": "g",
        "acceptance_contract": {"a": 1},
        "worker_key": "w",
        "verifier_key": "v",
    }
    values.update(kw)
    return TaskSpec(**values)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "kw",
    [
        {"goal": ""},
        {"worker_key": " "},
        {"verifier_key": None},
        {"task_id": "x", "depends_on": ("x",)},
        {"depends_on": "abc"},
        {"priority": "high"},
        {"contract_hash": "0" * 64},
        {"acceptance_contract": {1, 2}},
    ],
)
def test_bad_task_specs_are_typed_errors(kw: dict[str, object]) -> None:
    with pytest.raises(DAGError) as info:
        spec(**kw)
    assert info.value.code == "LA-DAG-INVALID"
    assert isinstance(info.value, LightAgentError)


def test_task_spec_round_trip_and_contract_hash() -> None:
    s = spec(task_id="t", depends_on=["a", "a", "b"], metadata={"k": 1})
    assert s.depends_on == ("a", "b") and len(s.contract_hash) == 64
    assert TaskSpec.from_dict(json.loads(json.dumps(s.to_dict()))) == s
    with pytest.raises(DAGError):
        TaskSpec.from_dict({**s.to_dict(), "surprise": 1})
    with pytest.raises(DAGError) as info:
        spec(schema_version=2)
    assert info.value.code == "LA-DAG-SCHEMA-MISMATCH"


def test_task_outcomes_and_normalisation() -> None:
    assert TaskOutcome.candidate("42").content_bytes() == b"42"
    proposal = DecompositionProposal(new_tasks=(spec(task_id="c"),), rationale="r")
    outcome = TaskOutcome.decompose(proposal)
    assert (
        TaskOutcome.from_dict(json.loads(json.dumps(outcome.to_dict())))
        .decomposition.new_tasks[0]
        .task_id
        == "c"
    )
    assert normalize_task_outcome('{"kind": "blocked", "blocker": "why"}').blocker == "why"
    assert normalize_task_outcome("plain text").content == "plain text"
    assert normalize_task_outcome(b"\x00").media_type == "application/octet-stream"
    for bad in (None, 42, {"kind": "candidate"}, {"kind": "wat"}):
        with pytest.raises(DAGWorkerProtocolError) as info:
            normalize_task_outcome(bad)
        assert info.value.code == "LA-DAG-WORKER-PROTOCOL"
    with pytest.raises(DAGError):
        DecompositionProposal()


def test_graph_checks() -> None:
    assert topological_order({"c": ["a", "b"], "b": ["a"], "a": []}) == ["a", "b", "c"]
    with pytest.raises(DAGError) as info:
        topological_order({"a": ["b"], "b": ["c"], "c": ["a"]})
    assert (
        info.value.code == "LA-DAG-CYCLE"
        and info.value.details["cycle"][0] == info.value.details["cycle"][-1]
    )
    with pytest.raises(DAGError) as info:
        topological_order({"a": ["zzz"]})
    assert info.value.code == "LA-DAG-UNKNOWN-DEPENDENCY"


def test_seed_vocabularies() -> None:
    assert [s.value for s in DAGRunStatus] == [
        "running",
        "paused",
        "blocked",
        "succeeded",
        "failed",
        "cancelled",
    ]
    assert {
        "ready",
        "running",
        "verifying",
        "waiting_dependencies",
        "blocked",
        "verified",
        "failed",
        "cancelled",
        "superseded",
        "retry_wait",
        "waiting_approval",
    } == {s.value for s in DAGTaskStatus}


def test_error_codes_are_in_the_taxonomy() -> None:
    for code in (
        "LA-DAG-FENCED",
        "LA-DAG-IDENTITY-REQUIRED",
        "LA-DAG-CYCLE",
        "LA-DAG-STALE-ATTEMPT",
        "LA-DAG-BUDGET-EXHAUSTED",
        "LA-DAG-LEASE-REJECTED",
    ):
        assert code in ERROR_TAXONOMY and ERROR_TAXONOMY[code].hint
    err = DAGFencedError(run_id="r", task_id="t", fence=3, operation="publish")
    assert err.code == "LA-DAG-FENCED" and err.details["fence"] == 3 and "Hint:" in str(err)


def test_sqlite_store_refuses_memory_and_bad_urls(tmp_path) -> None:
    from lightagent.errors import StorageError
    from lightagent_dag import SqlTaskGraphStore

    with pytest.raises(StorageError) as info:
        SqliteTaskGraphStore(":memory:")
    assert info.value.code == "LA-CONFIG"
    with pytest.raises(StorageError):
        SqlTaskGraphStore("sqlite://")
    with pytest.raises(StorageError):
        SqlTaskGraphStore("nonsense-url")
    store = SqliteTaskGraphStore(tmp_path / "deep" / "dag.sqlite3")
    assert store.engine.dialect.name == "sqlite" and (tmp_path / "deep" / "dag.sqlite3").exists()
    store.close()


def test_unreachable_postgres_is_a_typed_error() -> None:
    from lightagent.errors import StorageError
    from lightagent_dag import SqlTaskGraphStore

    with pytest.raises(StorageError) as info:
        SqlTaskGraphStore(
            "postgresql+psycopg://nobody@127.0.0.1:1/none", connect_args={"connect_timeout": 2}
        )
    assert info.value.code == "LA-STORAGE-UNAVAILABLE"


def test_schema_version_mismatch(tmp_path) -> None:
    store = SqliteTaskGraphStore(tmp_path / "dag.sqlite3")
    import sqlalchemy as sa

    with store.engine.begin() as conn:
        conn.execute(sa.text("UPDATE dag_meta SET value='99' WHERE key='schema_version'"))
    store.close()
    with pytest.raises(DAGError) as info:
        SqliteTaskGraphStore(tmp_path / "dag.sqlite3")
    assert info.value.code == "LA-DAG-SCHEMA-MISMATCH"


def test_plugin_hooks_register_lazily() -> None:
    from lightagent_dag import plugin

    registered: dict[str, object] = {}
    plugin.register_workflows(lambda name, provider, **kw: registered.setdefault(name, provider))
    assert registered == {"lightdag": "lightagent_dag:LightDAG"}
    manifest = plugin.lightagent_manifest()
    assert manifest["name"] == "lightagent-dag" and manifest["version"] and manifest["docs"]


def test_importing_the_package_is_cheap() -> None:
    import subprocess
    import sys

    code = "import sys, lightagent_dag, lightagent_dag.plugin; print('sqlalchemy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_missing_driver_is_a_typed_error() -> None:
    from lightagent.errors import StorageError
    from lightagent_dag import SqlTaskGraphStore

    with pytest.raises(StorageError) as info:
        SqlTaskGraphStore("mysql+nosuchdriver://u@127.0.0.1/x")
    assert info.value.code in ("LA-MISSING-EXTRA", "LA-CONFIG")
    with pytest.raises(StorageError) as info:
        SqlTaskGraphStore("mysql+pymysql://u@127.0.0.1/x")  # pymysql is not installed here
    assert info.value.code == "LA-MISSING-EXTRA" and "pip install" in info.value.hint


@pytest.mark.postgres
def test_plain_postgresql_urls_use_psycopg(postgres_url: str) -> None:
    from lightagent_dag import SqlTaskGraphStore

    store = SqlTaskGraphStore(postgres_url.replace("postgresql+psycopg://", "postgresql://"))
    assert store.engine.dialect.driver == "psycopg" and store.db_time() > 0
    store.close()
