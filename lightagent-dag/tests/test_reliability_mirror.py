"""Reliability: two processes mirroring one run's events into a session never duplicate them.

``LightDAG(session_store=...)`` mirrors a run's events after each ``run``. Two hosts can
finish (or re-run) the same run at about the same time; each mirror read where the
session ended and appended the rest, so both appended the same events. The session log
must hold each DAG event exactly once, in order.
"""

from __future__ import annotations

import threading
from collections import Counter

from lightagent.events.sql_store import SqliteSessionStore
from lightagent_dag import DAGConfig, TaskSpec
from lightagent_dag.session import mirror_events, session_id_for


def test_concurrent_mirrors_append_each_event_once(dag_store, run_id, security, tmp_path):
    specs = [
        TaskSpec(
            task_id=f"t{i}", goal="g", acceptance_contract={}, worker_key="w", verifier_key="v"
        )
        for i in range(20)
    ]
    dag_store.create_run(
        run_id,
        specs,
        tenant_id="acme",
        project_id="p1",
        user_id="alice",
        context=security(run_id=run_id).to_dict(),
        root_task_ids=[s.task_id for s in specs],
        config=DAGConfig(),
    )
    for i in range(200):
        dag_store.append_event(run_id, "audit.note", {"i": i})
    expected = [e.event_id for e in dag_store.events(run_id, limit=10_000)]
    for trial in range(3):
        sessions = SqliteSessionStore(tmp_path / f"mirror{trial}.db")
        barrier = threading.Barrier(3)
        errors: list[BaseException] = []

        def mirror(sessions=sessions, barrier=barrier, errors=errors) -> None:
            try:
                barrier.wait(30)
                mirror_events(dag_store, sessions, run_id, batch=15)
            except BaseException as exc:  # surfaced below
                errors.append(exc)

        threads = [threading.Thread(target=mirror) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert not errors, errors
        mirrored = [e.data["dag_event_id"] for e in sessions.events(session_id_for(run_id))]
        duplicated = {k: n for k, n in Counter(mirrored).items() if n > 1}
        assert not duplicated, f"trial {trial}: {len(duplicated)} events mirrored twice or more"
        assert mirrored == expected
        # A later mirror finds nothing new.
        assert mirror_events(dag_store, sessions, run_id) == 0
        sessions.close()
