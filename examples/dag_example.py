"""The seeds' offline LightDAG example, as written, with lightagent's imports.

No model, API key or network is needed. Run: python examples/dag_example.py
"""

from pathlib import Path
from tempfile import TemporaryDirectory

from lightagent import PermissionSet, SecurityContext
from lightagent_dag import (
    CallableVerifier,
    LightDAG,
    LocalArtifactStore,
    SqliteTaskGraphStore,
    TaskOutcome,
    TaskSpec,
)

with TemporaryDirectory() as directory:
    root = Path(directory)
    store = SqliteTaskGraphStore(root / "dag.sqlite3")
    try:
        dag = LightDAG(
            store=store,
            artifact_store=LocalArtifactStore(root / "artifacts"),
            verifiers={
                "exact": CallableVerifier(
                    "exact",
                    lambda request: request.candidate_content == b"42",
                )
            },
        )
        dag.register_worker("local", lambda context: TaskOutcome.candidate("42"))
        dag.create_run(
            [
                TaskSpec(
                    task_id="answer",
                    goal="42",
                    acceptance_contract={"equals": "42"},
                    worker_key="local",
                    verifier_key="exact",
                )
            ],
            run_id="readme-demo",
            context=SecurityContext(
                user_id="alice",
                tenant_id="demo",
                project_id="readme",
                permissions=PermissionSet(allowed=frozenset({"dag.task.execute"})),
            ),
        )
        result = dag.run("readme-demo")
        assert result.success
        print(result.status.value)
    finally:
        store.close()
