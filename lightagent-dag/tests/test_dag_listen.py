"""Idle worker pools on PostgreSQL wake on the commit that makes tasks claimable, not on a poll."""

from __future__ import annotations

import asyncio
import time

import pytest
from lightagent_dag import CallableVerifier, DAGConfig, LightDAG, TaskOutcome, TaskSpec

pytestmark = pytest.mark.postgres


def _spec(task_id: str, *deps: str) -> TaskSpec:
    return TaskSpec(
        task_id=task_id,
        goal="g",
        acceptance_contract={"t": task_id},
        worker_key="w",
        verifier_key="v",
        depends_on=deps,
    )


@pytest.fixture
def pg_store(postgres_url):
    from lightagent_dag import SqlTaskGraphStore

    store = SqlTaskGraphStore(postgres_url)
    yield store
    store.close()


def test_an_idle_pool_starts_new_work_without_waiting_out_its_poll(
    pg_store, run_id, security
) -> None:
    dag_store = pg_store
    # Polling alone would first look again 20 to 40 seconds after finding nothing.
    config = DAGConfig(poll_interval=40.0, poll_interval_max=60.0)
    dag = LightDAG(
        store=dag_store, verifiers={"v": CallableVerifier("v", lambda r: True)}, config=config
    )
    dag.register_worker("w", lambda ctx: TaskOutcome.candidate(ctx.task_id))
    submitter = LightDAG(store=dag_store, config=config)
    runner = dag.runner(worker_id="idle")

    async def scenario() -> float:
        stop = asyncio.Event()
        pool = asyncio.create_task(runner.pool(stop=stop, until_quiescent=False))
        for _ in range(500):
            if runner.listener is not None and runner.listener.listening.is_set():
                break
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.2)  # the pool found nothing and rests
        started = time.monotonic()
        await asyncio.to_thread(
            submitter.create_run,
            [_spec("a"), _spec("b", "a")],
            run_id=run_id,
            context=security(),
            check_keys=False,
        )
        for _ in range(1000):
            if (await asyncio.to_thread(dag_store.get_run, run_id)).status.value != "running":
                break
            await asyncio.sleep(0.05)
        took = time.monotonic() - started
        stop.set()
        await pool
        return took

    took = asyncio.run(asyncio.wait_for(scenario(), 20))
    assert dag_store.get_run(run_id).status.value == "succeeded"
    assert took < 15  # generous: the point is not waiting out the 20-40 s poll
    assert runner.listener is None  # closed with the pool
