"""The LightDAG suites (TaskGraphStore, ArtifactStore, Verifier) against lightagent-dag's
own SQLite store, local artifact store and CallableVerifier."""

from __future__ import annotations

import pytest

dag_records = pytest.importorskip("lightagent_dag.records")
from lightagent_contracts.suites.artifact_store import ArtifactStoreContract  # noqa: E402
from lightagent_contracts.suites.task_graph_store import TaskGraphStoreContract  # noqa: E402
from lightagent_contracts.suites.verifier import VerifierContract  # noqa: E402
from lightagent_dag.artifacts import LocalArtifactStore  # noqa: E402
from lightagent_dag.specs import DAGConfig, TaskSpec  # noqa: E402
from lightagent_dag.sql.store import SqliteTaskGraphStore  # noqa: E402
from lightagent_dag.states import DAGRunStatus, DAGTaskStatus  # noqa: E402
from lightagent_dag.verifiers import CallableVerifier  # noqa: E402


def _specs(variant: int) -> list[TaskSpec]:
    return [
        TaskSpec(
            goal=f"write {variant}",
            acceptance_contract={"v": variant},
            worker_key="w",
            verifier_key="v",
            task_id="a",
        ),
        TaskSpec(
            goal="review",
            acceptance_contract={},
            worker_key="w",
            verifier_key="v",
            task_id="b",
            depends_on=("a",),
        ),
    ]


class TestSqliteTaskGraphStoreContract(TaskGraphStoreContract):
    @pytest.fixture
    def make_store(self, tmp_path):
        return lambda: SqliteTaskGraphStore(tmp_path / "dag.db")

    @pytest.fixture
    def create_run_kwargs(self):
        def kwargs(run_id, variant=0):
            return dict(
                run_id=run_id,
                tasks=_specs(variant),
                tenant_id="acme",
                project_id="demo",
                user_id="u1",
                context={},
                root_task_ids=["b"],
                config=DAGConfig(),
            )

        return kwargs


class TestLocalArtifactStoreContract(ArtifactStoreContract):
    @pytest.fixture
    def make_artifact_store(self, tmp_path):
        return lambda: LocalArtifactStore(tmp_path / "artifacts")


def _request(kind: str, content: bytes):
    spec = _specs(0)[0]
    run = dag_records.DAGRun(
        run_id="r",
        status=DAGRunStatus.RUNNING,
        tenant_id="acme",
        project_id="demo",
        user_id="u",
        root_task_ids=("a",),
        graph_revision=1,
        config={},
        context={},
    )
    task = dag_records.DAGTask(run_id="r", spec=spec, status=DAGTaskStatus.RUNNING)
    return dag_records.VerificationRequest(
        kind=kind,
        run=run,
        task=task,
        attempt_id="at",
        input_snapshot_hash="h",
        candidate_content=content,
    )


class TestCallableVerifierContract(VerifierContract):
    @pytest.fixture
    def make_verifier(self):
        return lambda: CallableVerifier(
            "has-ok", lambda req: (req.candidate_content or b"").startswith(b"PASS")
        )

    @pytest.fixture
    def verification_cases(self):
        return [
            (_request("completion", b"PASS: all good"), "pass"),
            (_request("completion", b"nope"), "fail"),
        ]
