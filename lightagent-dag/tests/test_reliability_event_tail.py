"""Reliability: a reader tailing ``events(run_id, after=cursor)`` never skips an event.

Event ids come from a sequence (BIGSERIAL on PostgreSQL). A sequence value is taken at
INSERT time, not at COMMIT time: when the transaction holding id N commits after the one
holding N+1, a reader that already saw N+1 moves its cursor past N and never reads it.
Two workers claiming tasks of one run at the same moment is the everyday case. Writers do
not wait for one another (they share the run's event lock); a reader takes it alone and
so waits for the writers in flight.

SQLite is not affected (``BEGIN IMMEDIATE`` makes writers take turns, so ids commit in
order), so this test runs on PostgreSQL only.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
import sqlalchemy as sa
from lightagent_dag import DAGConfig, SqlTaskGraphStore, TaskSpec

pytestmark = [pytest.mark.postgres]

WAIT = 30.0  # generous: a loaded 2-core machine must never hit it


def _spec(task_id: str) -> TaskSpec:
    return TaskSpec(
        task_id=task_id,
        goal="g",
        acceptance_contract={"x": 1},
        worker_key="w",
        verifier_key="v",
    )


def _create_run(store: SqlTaskGraphStore, run_id: str, security: Any) -> None:
    store.create_run(
        run_id,
        [_spec("t1"), _spec("t2")],
        tenant_id="acme",
        project_id="p1",
        user_id="alice",
        context=security(run_id=run_id).to_dict(),
        root_task_ids=["t1", "t2"],
        config=DAGConfig(),
    )


def _lock_waiters(engine: sa.Engine) -> int:
    """Backends of this test database that wait for a lock right now."""
    with engine.connect() as conn:
        return int(
            conn.execute(
                sa.text(
                    "SELECT COUNT(*) FROM pg_stat_activity"
                    " WHERE datname = current_database() AND wait_event_type = 'Lock'"
                )
            ).scalar_one()
        )


def test_a_claim_committing_late_is_not_skipped_by_a_tailing_reader(
    postgres_url: str, run_id: str, security: Any
) -> None:
    engine = sa.create_engine(postgres_url)
    store = SqlTaskGraphStore(postgres_url, engine=engine)
    # Worker A's claim transaction is held open right before its COMMIT.
    a_at_commit, release_a = threading.Event(), threading.Event()

    def hold(conn: Any) -> None:
        if threading.current_thread().name == "worker-A":
            a_at_commit.set()
            release_a.wait(WAIT)

    try:
        _create_run(store, run_id, security)
        seen: list[int] = [e.event_id for e in store.events(run_id, limit=1000)]
        cursor = seen[-1]
        sa.event.listen(engine, "commit", hold)
        claims: dict[str, Any] = {}

        def claim(worker: str) -> None:
            claims[worker] = store.claim(worker, run_id=run_id, lease_seconds=60)

        thread_a = threading.Thread(target=claim, args=("A",), name="worker-A")
        thread_b = threading.Thread(target=claim, args=("B",), name="worker-B")
        thread_a.start()
        assert a_at_commit.wait(WAIT), "worker A never reached its commit"
        thread_b.start()
        # Event writers share the run's event lock: B commits while A is still open
        # (B's claim event has the larger id and commits first).
        thread_b.join(WAIT)
        assert not thread_b.is_alive(), "worker B waited for worker A"

        # A reader tails the log now, while A's claim is still uncommitted: it must not
        # return B's event without A's (it waits for A instead).
        pages: list[Any] = []
        reader = threading.Thread(
            target=lambda: pages.append(store.events(run_id, after=cursor, limit=1000))
        )
        reader.start()
        deadline = time.monotonic() + WAIT
        while reader.is_alive() and _lock_waiters(engine) == 0:
            assert time.monotonic() < deadline, "the reader neither read nor waited"
            time.sleep(0.01)
        assert reader.is_alive(), "the reader read while worker A's events were uncommitted"

        release_a.set()
        thread_a.join(WAIT)
        reader.join(WAIT)
        assert not thread_a.is_alive() and not reader.is_alive()
        assert claims["A"] is not None and claims["B"] is not None
        assert {claims["A"].task_id, claims["B"].task_id} == {"t1", "t2"}
        page = pages[0]
        seen += [e.event_id for e in page]
        cursor = page[-1].event_id if page else cursor

        # ... and goes on from its cursor.
        seen += [e.event_id for e in store.events(run_id, after=cursor, limit=1000)]
        everything = store.events(run_id, limit=1000)
        claimed = [e for e in everything if e.type == "dag.task.claimed"]
        assert sorted(e.data["worker_id"] for e in claimed) == ["A", "B"]
        missed = [(e.event_id, e.type, e.data) for e in everything if e.event_id not in seen]
        assert missed == [], f"the tailing reader skipped {missed}"
    finally:
        release_a.set()
        if sa.event.contains(engine, "commit", hold):
            sa.event.remove(engine, "commit", hold)
        store.close()
        engine.dispose()
