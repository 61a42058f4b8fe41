"""Reliability: LightDAG on PostgreSQL through a database outage in the middle of a run.

The store reaches PostgreSQL through a small TCP proxy on 127.0.0.1 that the test
controls (toxiproxy is not packaged here). While a task runs, the proxy resets every
connection and refuses new ones for a second, as a server restart does. The run must
finish on its own once the database is back: every task verified, exactly one published
artifact per task, and no exception out of ``run``.
"""

from __future__ import annotations

import threading

import pytest
from lightagent_dag import (
    CallableVerifier,
    DAGConfig,
    LightDAG,
    LocalArtifactStore,
    SqlTaskGraphStore,
    TaskOutcome,
    TaskSpec,
)

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


def test_a_run_survives_a_database_outage_mid_run(
    postgres_url, postgres_outage, run_id, security, tmp_path
):
    proxy = postgres_outage
    store = SqlTaskGraphStore(proxy.route(postgres_url))
    outages: list[threading.Timer] = []

    def work(ctx):
        if ctx.task_id == "t3" and not outages:
            proxy.down()
            outages.append(threading.Timer(1.0, proxy.up))
            outages[0].start()
        return TaskOutcome.candidate(f"out-{ctx.task_id}")

    cfg = DAGConfig(
        task_lease_seconds=2.0,
        heartbeat_interval=0.5,
        poll_interval=0.01,
        poll_interval_max=0.2,
        retry_backoff_seconds=0.01,
        max_attempts_per_task=10,
    )
    dag = LightDAG(
        store=store,
        artifact_store=LocalArtifactStore(tmp_path / "art"),
        verifiers={"v": CallableVerifier("v", lambda request: True)},
        config=cfg,
    )
    dag.register_worker("w", work)
    ids = [f"t{i}" for i in range(8)]
    specs = [
        TaskSpec(
            task_id=t, goal="g", acceptance_contract={"t": t}, worker_key="w", verifier_key="v"
        )
        for t in ids
    ]
    try:
        dag.create_run(specs, run_id=run_id, context=security())
        result = dag.run(run_id, concurrency=4)
        assert outages, "the outage never happened"
        outages[0].join(30)
        assert result.success, (result.status, result.errors)
        assert store.publication_counts(run_id) == dict.fromkeys(ids, 1)
        assert {t: dag.read_artifact(run_id, t) for t in ids} == {
            t: f"out-{t}".encode() for t in ids
        }
    finally:
        for timer in outages:
            timer.cancel()
        store.close()
