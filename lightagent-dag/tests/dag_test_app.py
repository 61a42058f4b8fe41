"""The application module the worker-process tests load with ``--app dag_test_app:configure``.

Tasks sleep ``metadata["sleep_ms"]`` milliseconds, then answer ``<task_id>:ok``; the
verifier accepts exactly that. With ``DAG_TEST_STOP_FILE`` set, a worker writes its pid
into that file when it starts a task whose metadata has ``"announce": true``.
"""

from __future__ import annotations

import os
import time

from lightagent_dag import CallableVerifier, LightDAG, TaskOutcome


def _work(context):
    meta = context.spec.metadata
    if meta.get("announce") and os.environ.get("DAG_TEST_STOP_FILE"):
        with open(os.environ["DAG_TEST_STOP_FILE"], "a") as handle:
            handle.write(f"{os.getpid()} {context.fence}\n")
    time.sleep(int(meta.get("sleep_ms", 0)) / 1000.0)
    return TaskOutcome.candidate(f"{context.task_id}:ok")


def configure(dag: LightDAG) -> None:
    """Register the test worker and verifier on ``dag``."""
    dag.register_worker("sleepy", _work)
    dag.register_verifier(
        "ok",
        CallableVerifier("ok", lambda r: r.candidate_content == f"{r.task.task_id}:ok".encode()),
    )
