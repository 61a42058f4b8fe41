"""Reliability: a LightFlow run on PostgreSQL when the database goes away mid-run.

The store reaches PostgreSQL through a small TCP proxy on 127.0.0.1 that the test
controls (toxiproxy is not packaged here). While step ``write`` runs, the proxy resets
every connection and refuses new ones, as a server restart does. The step's commit
cannot land, so the run stops with a typed ``StorageError`` and nothing starts on top
of the uncommitted step. Once the database is back, ``resume`` finishes the run without
running the committed step again.
"""

from __future__ import annotations

import uuid

import pytest
from lightagent.errors import StorageError
from lightagent_flow import LightFlow, SqlLightFlowStore

pytestmark = [pytest.mark.postgres]


def test_a_run_stopped_by_an_outage_resumes_without_repeating_committed_steps(
    postgres_url, postgres_outage, recorder
):
    proxy = postgres_outage
    store = SqlLightFlowStore(proxy.route(postgres_url))
    run_id = f"outage-{uuid.uuid4().hex[:10]}"
    writes: list[str] = []

    def write(query: str) -> str:
        writes.append(query)
        if len(writes) == 1:
            proxy.down()  # the database restarts while this step runs
        return "essay"

    flow = (
        LightFlow(store=store, retry_backoff=0)
        .step("research", agent=recorder.agent("research", "facts"))
        .step("write", agent=write, depends_on=["research"])
        .step("polish", agent=recorder.agent("polish", "final"), depends_on=["write"])
    )
    try:
        with pytest.raises(StorageError) as info:
            flow.run("q", run_id=run_id)
        assert info.value.code.startswith("LA-STORAGE"), info.value
        assert recorder.count("polish") == 0  # nothing ran on top of an uncommitted step
        proxy.up()
        result = flow.resume(run_id)
        assert result.success and result.content == "final", (result.status, result.error)
        assert recorder.count("research") == 1  # committed before the outage: never again
        assert len(writes) == 2  # the step in flight runs at most twice
        assert recorder.count("polish") == 1
        assert flow.get_run(run_id)["status"] == "success"
    finally:
        store.close()
