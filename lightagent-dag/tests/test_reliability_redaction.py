"""Reliability: a key in a worker's error never lands in the task-graph store.

Workers fail with whatever their libraries raise, and an exception message often carries
the credential that was refused. The attempt's error is stored three times (the attempt
row, the task's last error, the ``dag.attempt.failed`` event) and handed back in
``DAGRunResult.errors``: each copy must be redacted, on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import sqlalchemy as sa
from lightagent.errors import StorageError
from lightagent_dag import CallableVerifier, DAGConfig, TaskSpec

SECRET = "sk-proj-PLANTEDsecret0123456789abcdefXYZ"


def _spec(task_id: str) -> TaskSpec:
    return TaskSpec(
        task_id=task_id,
        goal="g",
        acceptance_contract={"t": task_id},
        worker_key="w",
        verifier_key="v",
    )


def test_worker_errors_are_stored_redacted(make_dag, dag_store, run_id, security):
    dag = make_dag(
        verifiers={"v": CallableVerifier("v", lambda request: True)},
        config=DAGConfig(
            poll_interval=0.01,
            poll_interval_max=0.05,
            retry_backoff_seconds=0.01,
            max_attempts_per_task=2,
        ),
    )

    def work(ctx):
        if ctx.task_id == "plain":
            raise ValueError(f"upstream refused token {SECRET}")
        raise StorageError(
            "LA-STORAGE",
            f"login failed with password={SECRET}",
            details={"password": SECRET, "url": f"postgresql://app:{SECRET}@db.internal/x"},
        )

    dag.register_worker("w", work)
    dag.create_run([_spec("plain"), _spec("typed")], run_id=run_id, context=security())
    result = dag.run(run_id)
    assert not result.success and set(result.errors) == {"plain", "typed"}
    assert SECRET not in repr(result.errors)
    assert "[redacted]" in result.errors["plain"]["message"]
    failed = [e for e in dag.events(run_id, limit=1000) if e.type == "dag.attempt.failed"]
    assert len(failed) == 4  # two attempts per task, each one recorded
    assert SECRET not in repr([e.data for e in failed])
    # Every row of this run, in every table of the store.
    with dag_store.engine.connect() as conn:
        for table in sa.inspect(conn).get_table_names():
            if not table.startswith("dag_"):
                continue
            for row in conn.execute(sa.text(f"SELECT * FROM {table}")).all():
                text = repr(tuple(row))
                if run_id in text:
                    assert SECRET not in text, (table, text[:300])
