"""Durable queues and approvals: runs enqueued on a limited DBOS queue served by two
worker processes, and a human approval wait (a durable ``recv``) across a restart."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from dbos import DBOSClient
from lightagent_dbos import APPROVAL_EVENT, approval_topic

from .children import last_json, spawn
from .conftest import unique_name

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def system_db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'dbos.sqlite'}"
    url: str = request.getfixturevalue("postgres_url")
    return url


def test_two_workers_serve_a_limited_queue(system_db, loopback_server, tmp_path):
    runs, limit = 6, 2
    lock = threading.Lock()
    in_flight: set[str] = set()
    most = [0]
    # the first two runs wait for each other: with one run per worker at a time, only
    # two workers serving at once get both of them in
    together = threading.Barrier(limit)
    met = [0]

    def answer(body):
        messages = body["messages"]
        label = next(m["content"] for m in messages if m["role"] == "user")
        if messages[-1]["role"] == "user":  # a run's first request: it is in flight
            with lock:
                in_flight.add(label)
                most[0] = max(most[0], len(in_flight))
                first_two = met[0] < limit
                met[0] += 1
            if first_two:
                together.wait(120)
            return {"tool_calls": [{"name": "mark", "arguments": {"label": label}}]}
        with lock:
            in_flight.discard(label)
        return f"done {label}"

    loopback_server.route("gpt-4.1", answer)
    name = unique_name("queued")
    base = {
        "dir": str(tmp_path),
        "url": system_db,
        "base_url": loopback_server.base_url,
        "name": name,
        "mode": "worker",
        "queue": "la-runs",
        "concurrency": limit,
        "worker_concurrency": 1,
    }
    workers = [spawn({**base, "executor_id": f"worker-{i}"}) for i in range(2)]
    try:
        for worker in workers:
            assert worker.stdout is not None and worker.stdout.readline() == "ready\n"
        client = DBOSClient(system_database_url=system_db)
        try:
            for i in range(runs):
                client.enqueue(
                    {
                        "queue_name": "la-runs",
                        "workflow_name": f"lightagent.{name}",
                        "workflow_id": f"job-{i}",
                        "app_version": "lightagent-dbos-test",
                    },
                    f"job {i}",
                    {},
                )
            results = [client.retrieve_workflow(f"job-{i}").get_result() for i in range(runs)]
        finally:
            client.destroy()
    finally:
        for worker in workers:
            worker.kill()
            worker.wait()
    assert [r.content for r in results] == [f"done job {i}" for i in range(runs)]
    served = [line.split() for line in (tmp_path / "runs.log").read_text().splitlines()]
    labels = sorted(f"{a} {b}" for a, b, _ in served)
    assert labels == sorted(f"job {i}" for i in range(runs))  # none ran twice
    assert len({pid for *_, pid in served}) == 2  # both workers served runs
    assert most[0] == limit  # two at once, never more


def test_approval_wait_survives_a_restart(system_db, loopback_server, tmp_path):
    loopback_server.reply(
        {"tool_calls": [{"name": "send_money", "arguments": {"amount": 5}}]}, "Sent 5."
    )
    cfg = {
        "dir": str(tmp_path),
        "url": system_db,
        "base_url": loopback_server.base_url,
        "name": unique_name("approval"),
        "workflow_id": "wf-pay",
        "mode": "start",
        "query": "Pay 5",
        "approval": ["send_money"],
    }
    first = spawn(cfg)
    client = DBOSClient(system_database_url=system_db)
    try:
        waiting = client.get_event("wf-pay", APPROVAL_EVENT, timeout_seconds=120)
        assert waiting["tool"] == "send_money"
        first.kill()
        first.wait()
        assert not (tmp_path / "payments.log").exists()
        # the decision is a durable message: it waits in DBOS while no process runs the run
        client.send("wf-pay", {"approved": True}, topic=approval_topic(waiting["call_id"]))
    finally:
        client.destroy()
    result = last_json(spawn({**cfg, "mode": "recover"}))
    assert result == {"content": "Sent 5.", "error": None}
    assert (tmp_path / "payments.log").read_text().splitlines() == ["5"]
