"""The state transitions of the task-graph store, each run inside one transaction.

Most transitions lock the run row first, then task rows. ``stage`` and ``publish`` — the
hot path — write their own task row first and take the run lock last, to hold it only
briefly; a rare cycle with an administrative change (cancel, supersede, fail_fast) is a
deadlock PostgreSQL detects, and the store retries the losing transaction. Every write on behalf
of an attempt names the attempt's fence in its WHERE clause and checks the row count.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from lightagent_dag.errors import DAGError, DAGFencedError, DAGLimitError
from lightagent_dag.graph import check_graph
from lightagent_dag.records import ArtifactManifest, Claim, DAGRun
from lightagent_dag.specs import TaskSpec
from lightagent_dag.sql.rows import dumps, loads, row_to_run, row_to_task

if TYPE_CHECKING:
    from lightagent_dag.sql.store import SqlTaskGraphStore

Conn = sa.Connection
_CLAIMABLE = (
    "(t.status='ready' OR (t.status='retry_wait' AND t.available_at<={now})"
    " OR (t.status IN ('running','verifying') AND t.lease_expires_at<{now}))"
)


def event(
    store: SqlTaskGraphStore,
    conn: Conn,
    run_id: str,
    type_: str,
    data: dict[str, Any],
    task_id: str | None = None,
) -> None:
    """Append one event to the run's log (same transaction as the change it records)."""
    conn.execute(
        store.q(
            "INSERT INTO dag_events(run_id, task_id, type, data, created_at) VALUES (:r, :t, :ty, :d, {now})"
        ),
        {"r": run_id, "t": task_id, "ty": type_, "d": dumps(data)},
    )


def lock_run(store: SqlTaskGraphStore, conn: Conn, run_id: str) -> DAGRun:
    """Read the run row, locking it on PostgreSQL (SQLite's BEGIN IMMEDIATE already serialises)."""
    row = conn.execute(
        store.q("SELECT * FROM dag_runs WHERE run_id=:r{lock}"), {"r": run_id}
    ).first()
    if row is None:
        raise DAGError("LA-DAG-NOT-FOUND", f"no LightDAG run {run_id!r}")
    return row_to_run(row)


def _fence_check(n: int, claim: Claim, operation: str) -> None:
    if n != 1:
        raise DAGFencedError(
            run_id=claim.run_id, task_id=claim.task_id, fence=claim.fence, operation=operation
        )


def insert_tasks(
    store: SqlTaskGraphStore,
    conn: Conn,
    run_id: str,
    specs: Sequence[TaskSpec],
    *,
    depth: int,
    first_seq: int,
    verified: set[str] | None = None,
) -> None:
    """Insert specs as tasks: ready when every dependency is verified, else waiting."""
    verified = verified or set()
    for i, spec in enumerate(specs):
        status = "ready" if all(d in verified for d in spec.depends_on) else "waiting_dependencies"
        conn.execute(
            store.q(
                "INSERT INTO dag_tasks(run_id, task_id, seq, spec, worker_key, status, priority, depth, attempts,"
                " fence, phase, decompositions) VALUES (:r, :t, :seq, :spec, :wk, :st, :p, :depth, 0, 0, 'execute', 0)"
            ),
            {
                "r": run_id,
                "t": spec.task_id,
                "seq": first_seq + i,
                "spec": dumps(spec.to_dict()),
                "wk": spec.worker_key,
                "st": status,
                "p": spec.priority,
                "depth": depth,
            },
        )
        for dep in spec.depends_on:
            conn.execute(
                store.q(
                    "INSERT INTO dag_dependencies(run_id, task_id, depends_on) VALUES (:r, :t, :d)"
                ),
                {"r": run_id, "t": spec.task_id, "d": dep},
            )


def claim(
    store: SqlTaskGraphStore,
    conn: Conn,
    worker_id: str,
    run_id: str | None,
    worker_keys: Sequence[str] | None,
    lease_seconds: float,
) -> Claim | tuple[str, str, int] | None:
    """Claim one task. Returns a Claim, None, or (run, task, fence) of a task out of attempts."""
    params: dict[str, Any] = {}
    where = ["r.status='running'", _CLAIMABLE]
    if run_id is not None:
        where.append("t.run_id=:run")
        params["run"] = run_id
    if worker_keys is not None:
        if not worker_keys:
            return None
        names = [f"wk{i}" for i in range(len(worker_keys))]
        where.append(f"t.worker_key IN ({', '.join(':' + n for n in names)})")
        params.update(dict(zip(names, worker_keys, strict=True)))
    sql = (
        "SELECT t.run_id, t.task_id, t.status, t.fence, t.attempts, r.max_attempts FROM dag_tasks t"
        " JOIN dag_runs r ON r.run_id=t.run_id WHERE "
        + " AND ".join(where)
        + " ORDER BY t.priority DESC, t.seq LIMIT 1"
    )
    if store.pg:
        sql += " FOR UPDATE OF t SKIP LOCKED"
    row = conn.execute(store.q(sql), params).first()
    if row is None:
        return None
    r, t, status, fence, attempts, max_attempts = row
    if status in ("running", "verifying"):
        conn.execute(
            store.q(
                "UPDATE dag_attempts SET status='expired', finished_at={now} WHERE run_id=:r AND task_id=:t AND fence=:f"
            ),
            {"r": r, "t": t, "f": fence},
        )
        event(store, conn, r, "dag.attempt.expired", {"fence": fence}, t)
    if attempts >= max_attempts:
        return (r, t, int(fence))
    new_fence = int(fence) + 1
    n = conn.execute(
        store.q(
            "UPDATE dag_tasks SET status='running', fence=:nf, attempts=attempts+1, lease_owner=:w,"
            " lease_expires_at={now}+:ttl, available_at=NULL WHERE run_id=:r AND task_id=:t AND fence=:f"
        ),
        {"r": r, "t": t, "f": fence, "nf": new_fence, "w": worker_id, "ttl": lease_seconds},
    ).rowcount
    if n != 1:
        return None
    from lightagent_dag.sql.store import new_attempt_id

    attempt_id = new_attempt_id()
    conn.execute(
        store.q(
            "INSERT INTO dag_attempts(attempt_id, run_id, task_id, fence, worker_id, status, created_at)"
            " VALUES (:a, :r, :t, :f, :w, 'running', {now})"
        ),
        {"a": attempt_id, "r": r, "t": t, "f": new_fence, "w": worker_id},
    )
    event(
        store,
        conn,
        r,
        "dag.task.claimed",
        {"attempt_id": attempt_id, "fence": new_fence, "worker_id": worker_id},
        t,
    )
    run = row_to_run(
        conn.execute(store.q("SELECT * FROM dag_runs WHERE run_id=:r"), {"r": r}).one()
    )
    task_row = conn.execute(
        store.q("SELECT * FROM dag_tasks WHERE run_id=:r AND task_id=:t"), {"r": r, "t": t}
    ).one()
    deps = conn.execute(
        store.q(
            "SELECT depends_on FROM dag_dependencies WHERE run_id=:r AND task_id=:t ORDER BY depends_on"
        ),
        {"r": r, "t": t},
    ).scalars()
    task = row_to_task(task_row, tuple(deps))
    return Claim(
        run=run,
        task=task,
        attempt_id=attempt_id,
        fence=new_fence,
        worker_id=worker_id,
        lease_expires_at=float(task.lease_expires_at or 0),
    )


def fail_exhausted(
    store: SqlTaskGraphStore, conn: Conn, run_id: str, task_id: str, fence: int
) -> None:
    """A task whose lease expired after its last attempt: it fails (fence +1 fences the dead holder)."""
    lock_run(store, conn, run_id)
    error = {
        "code": "LA-DAG-BUDGET-EXHAUSTED",
        "message": "max_attempts_per_task reached (last attempt's lease expired)",
    }
    n = conn.execute(
        store.q(
            "UPDATE dag_tasks SET status='failed', fence=fence+1, lease_owner=NULL, lease_expires_at=NULL, last_error=:e"
            " WHERE run_id=:r AND task_id=:t AND fence=:f AND status IN ('ready','retry_wait','running','verifying')"
        ),
        {"r": run_id, "t": task_id, "f": fence, "e": dumps(error)},
    ).rowcount
    if n == 1:
        event(store, conn, run_id, "dag.attempt.failed", {"error": error, "fence": fence}, task_id)
        refresh_run(store, conn, run_id)


def renew(store: SqlTaskGraphStore, conn: Conn, claim: Claim, lease_seconds: float) -> float:
    """Extend a lease, fenced."""
    n = conn.execute(
        store.q(
            "UPDATE dag_tasks SET lease_expires_at={now}+:ttl WHERE run_id=:r AND task_id=:t AND fence=:f"
            " AND status IN ('running','verifying')"
        ),
        {"r": claim.run_id, "t": claim.task_id, "f": claim.fence, "ttl": lease_seconds},
    ).rowcount
    if n != 1:
        current = conn.execute(
            store.q("SELECT fence FROM dag_tasks WHERE run_id=:r AND task_id=:t"),
            {"r": claim.run_id, "t": claim.task_id},
        ).scalar_one_or_none()
        # Still our fence: the attempt itself just finished (a renewal racing its own
        # completion), which is not a takeover.
        _fence_check(int(current == claim.fence), claim, "renew")
    return float(conn.execute(store.q("SELECT {now}+:ttl"), {"ttl": lease_seconds}).scalar_one())


class NoVerificationSlot(Exception):
    """Raised inside ``stage`` to roll it back: the run has max_pending verifications already."""


def stage(
    store: SqlTaskGraphStore, conn: Conn, claim: Claim, manifest: ArtifactManifest, max_pending: int
) -> bool:
    """Stage a candidate (fenced), unless max_pending verifications are already pending.

    The task-level writes come first and the run lock last, so the run row is held only
    for the count and the commit; over the limit, everything rolls back.
    """
    n = conn.execute(
        store.q(
            "UPDATE dag_tasks SET status='verifying' WHERE run_id=:r AND task_id=:t AND fence=:f AND status='running'"
        ),
        {"r": claim.run_id, "t": claim.task_id, "f": claim.fence},
    ).rowcount
    _fence_check(n, claim, "stage")
    conn.execute(
        store.q(
            "INSERT INTO dag_artifacts(artifact_id, run_id, task_id, attempt_id, fence, state, manifest)"
            " VALUES (:id, :r, :t, :a, :f, 'staged', :m)"
        ),
        {
            "id": manifest.artifact_id,
            "r": claim.run_id,
            "t": claim.task_id,
            "a": claim.attempt_id,
            "f": claim.fence,
            "m": dumps(manifest.to_dict()),
        },
    )
    conn.execute(
        store.q("UPDATE dag_attempts SET status='submitted' WHERE attempt_id=:a"),
        {"a": claim.attempt_id},
    )
    event(
        store,
        conn,
        claim.run_id,
        "dag.artifact.staged",
        {
            "artifact_id": manifest.artifact_id,
            "content_hash": manifest.content_hash,
            "fence": claim.fence,
        },
        claim.task_id,
    )
    lock_run(store, conn, claim.run_id)
    pending = conn.execute(
        store.q("SELECT COUNT(*) FROM dag_tasks WHERE run_id=:r AND status='verifying'"),
        {"r": claim.run_id},
    ).scalar_one()
    if pending > max_pending:  # the count includes this task
        raise NoVerificationSlot
    return True


def publish(
    store: SqlTaskGraphStore,
    conn: Conn,
    claim: Claim,
    manifest: ArtifactManifest,
    report: dict[str, Any],
) -> None:
    """Publish a verified artifact (fenced) and wake the task's dependents."""
    n = conn.execute(
        store.q(
            "UPDATE dag_tasks SET status='verified', artifact_id=:aid, lease_owner=NULL, lease_expires_at=NULL, last_error=NULL"
            " WHERE run_id=:r AND task_id=:t AND fence=:f AND status='verifying'"
        ),
        {"r": claim.run_id, "t": claim.task_id, "f": claim.fence, "aid": manifest.artifact_id},
    ).rowcount
    _fence_check(n, claim, "publish")
    conn.execute(
        store.q(
            "INSERT INTO dag_published(run_id, task_id, artifact_id, attempt_id, fence, published_at)"
            " VALUES (:r, :t, :aid, :a, :f, {now})"
        ),
        {
            "r": claim.run_id,
            "t": claim.task_id,
            "aid": manifest.artifact_id,
            "a": claim.attempt_id,
            "f": claim.fence,
        },
    )
    n = conn.execute(
        store.q(
            "UPDATE dag_artifacts SET state='published' WHERE artifact_id=:aid AND fence=:f AND state='staged'"
        ),
        {"aid": manifest.artifact_id, "f": claim.fence},
    ).rowcount
    _fence_check(n, claim, "publish")
    _save_report(store, conn, claim, report)
    conn.execute(
        store.q(
            "UPDATE dag_attempts SET status='succeeded', finished_at={now} WHERE attempt_id=:a"
        ),
        {"a": claim.attempt_id},
    )
    event(
        store,
        conn,
        claim.run_id,
        "dag.artifact.published",
        {
            "artifact_id": manifest.artifact_id,
            "content_hash": manifest.content_hash,
            "fence": claim.fence,
        },
        claim.task_id,
    )
    event(
        store,
        conn,
        claim.run_id,
        "dag.task.verified",
        {"attempt_id": claim.attempt_id, "fence": claim.fence},
        claim.task_id,
    )
    _wake_dependents(store, conn, claim.run_id, claim.task_id)
    # The run lock is taken only when nothing else in the run is left to do, i.e. when
    # this publication may finish it. Two last publications that each still see the
    # other as open both skip it; an idle worker's reconcile() settles the run then.
    others = conn.execute(
        store.q(
            "SELECT 1 FROM dag_tasks WHERE run_id=:r AND task_id<>:t"
            " AND status IN ('ready','running','verifying','retry_wait','waiting_dependencies') LIMIT 1"
        ),
        {"r": claim.run_id, "t": claim.task_id},
    ).first()
    if others is None:
        lock_run(store, conn, claim.run_id)
        refresh_run(store, conn, claim.run_id)


def _save_report(
    store: SqlTaskGraphStore, conn: Conn, claim: Claim, report: dict[str, Any] | None
) -> None:
    if report:
        conn.execute(
            store.q(
                "INSERT INTO dag_reports(report_id, run_id, task_id, attempt_id, report) VALUES (:id, :r, :t, :a, :rep)"
            ),
            {
                "id": report["report_id"],
                "r": claim.run_id,
                "t": claim.task_id,
                "a": claim.attempt_id,
                "rep": dumps(report),
            },
        )


def _wake_dependents(store: SqlTaskGraphStore, conn: Conn, run_id: str, task_id: str) -> None:
    dependents = (
        conn.execute(
            store.q(
                "SELECT task_id FROM dag_dependencies WHERE run_id=:r AND depends_on=:t ORDER BY task_id"
            ),
            {"r": run_id, "t": task_id},
        )
        .scalars()
        .all()
    )
    if not dependents:
        return
    params = {f"d{i}": d for i, d in enumerate(dependents)}
    names = ", ".join(":" + k for k in params)
    if store.pg:
        # Lock the dependents (in one order) so that publications of their last two
        # dependencies serialise here; the check below then reads a fresh snapshot
        # and the later of the two sees the other's commit.
        conn.execute(
            store.q(
                f"SELECT task_id FROM dag_tasks WHERE run_id=:r AND task_id IN ({names}) ORDER BY task_id FOR UPDATE"
            ),
            {"r": run_id, **params},
        )
    rows = (
        conn.execute(
            store.q(
                f"UPDATE dag_tasks SET status='ready' WHERE run_id=:r AND status='waiting_dependencies'"
                f" AND task_id IN ({names})"
                " AND NOT EXISTS (SELECT 1 FROM dag_dependencies d2 JOIN dag_tasks x ON x.run_id=d2.run_id AND x.task_id=d2.depends_on"
                " WHERE d2.run_id=:r AND d2.task_id=dag_tasks.task_id AND x.status<>'verified') RETURNING task_id"
            ),
            {"r": run_id, **params},
        )
        .scalars()
        .all()
    )
    for ready in rows:
        event(store, conn, run_id, "dag.task.ready", {"after": task_id}, ready)


def reconcile(store: SqlTaskGraphStore, conn: Conn, run_id: str) -> None:
    """Re-derive a run's status under its lock (idle workers call this)."""
    lock_run(store, conn, run_id)
    refresh_run(store, conn, run_id)


def reject(
    store: SqlTaskGraphStore,
    conn: Conn,
    claim: Claim,
    error: dict[str, Any],
    outcome: str,
    backoff: float,
    report: dict[str, Any] | None,
    *,
    blocker: str | None = None,
) -> None:
    """A failed or blocked attempt (fenced): retry after backoff, fail, or block the task."""
    run = lock_run(store, conn, claim.run_id)
    row = conn.execute(
        store.q(
            "SELECT attempts FROM dag_tasks WHERE run_id=:r AND task_id=:t AND fence=:f AND status IN ('running','verifying')"
        ),
        {"r": claim.run_id, "t": claim.task_id, "f": claim.fence},
    ).first()
    _fence_check(0 if row is None else 1, claim, outcome)
    max_attempts = int(run.config.get("max_attempts_per_task", 3))
    if outcome == "retry" and row[0] >= max_attempts:
        outcome = "fail"
    status = {"retry": "retry_wait", "fail": "failed", "block": "blocked"}[outcome]
    available = "{now}+:delay" if status == "retry_wait" else "NULL"
    n = conn.execute(
        store.q(
            "UPDATE dag_tasks SET status=:s, lease_owner=NULL, lease_expires_at=NULL, last_error=:e, blocker=:b,"
            f" available_at={available} WHERE run_id=:r AND task_id=:t AND fence=:f AND status IN ('running','verifying')"
        ),
        {
            "s": status,
            "e": dumps(error),
            "b": blocker,
            "delay": float(backoff),
            "r": claim.run_id,
            "t": claim.task_id,
            "f": claim.fence,
        },
    ).rowcount
    _fence_check(n, claim, outcome)
    conn.execute(
        store.q(
            "UPDATE dag_artifacts SET state='rejected' WHERE run_id=:r AND task_id=:t AND fence=:f AND state='staged'"
        ),
        {"r": claim.run_id, "t": claim.task_id, "f": claim.fence},
    )
    attempt_status = "submitted" if outcome == "block" else "failed"
    conn.execute(
        store.q(
            "UPDATE dag_attempts SET status=:s, error=:e, finished_at={now} WHERE attempt_id=:a"
        ),
        {"s": attempt_status, "e": dumps(error), "a": claim.attempt_id},
    )
    _save_report(store, conn, claim, report)
    if report is not None:
        event(
            store,
            conn,
            claim.run_id,
            "dag.verification.failed",
            {"verdict": report.get("verdict"), "fence": claim.fence},
            claim.task_id,
        )
    if outcome == "block":
        event(
            store,
            conn,
            claim.run_id,
            "dag.task.blocked",
            {"reason": blocker or error.get("message")},
            claim.task_id,
        )
    else:
        event(
            store,
            conn,
            claim.run_id,
            "dag.attempt.failed",
            {"error": error, "fence": claim.fence, "next": status, "backoff": backoff},
            claim.task_id,
        )
    refresh_run(store, conn, claim.run_id)


def _run_graph(
    store: SqlTaskGraphStore, conn: Conn, run_id: str
) -> tuple[dict[str, dict[str, Any]], dict[str, list[str]]]:
    tasks = {
        m["task_id"]: dict(m)
        for m in (
            r._mapping
            for r in conn.execute(
                store.q(
                    "SELECT task_id, status, depth, decompositions, fence, seq FROM dag_tasks WHERE run_id=:r"
                ),
                {"r": run_id},
            )
        )
    }
    edges: dict[str, list[str]] = {t: [] for t in tasks}
    for t, d in conn.execute(
        store.q("SELECT task_id, depends_on FROM dag_dependencies WHERE run_id=:r"), {"r": run_id}
    ):
        edges.setdefault(t, []).append(d)
    return tasks, edges


def _check_limits(run: DAGRun, tasks: int, edges: int) -> None:
    if tasks > int(run.config["max_tasks"]):
        raise DAGLimitError("max_tasks", tasks, run.config["max_tasks"])
    if edges > int(run.config["max_edges"]):
        raise DAGLimitError("max_edges", edges, run.config["max_edges"])


def decompose(
    store: SqlTaskGraphStore, conn: Conn, claim: Claim, proposal: Any, report: dict[str, Any]
) -> DAGRun:
    """Accept a verified decomposition (fenced, CAS on the graph revision, every limit checked)."""
    run = lock_run(store, conn, claim.run_id)
    if (
        proposal.expected_graph_revision is not None
        and proposal.expected_graph_revision != run.graph_revision
    ):
        raise DAGError(
            "LA-DAG-VERSION-CONFLICT",
            f"graph is at revision {run.graph_revision}, proposal expected {proposal.expected_graph_revision}",
        )
    tasks, edges = _run_graph(store, conn, claim.run_id)
    parent = tasks.get(claim.task_id)
    _fence_check(
        int(
            parent is not None and parent["fence"] == claim.fence and parent["status"] == "running"
        ),
        claim,
        "decompose",
    )
    assert parent is not None
    cfg = run.config
    if parent["decompositions"] >= int(cfg["max_decompositions_per_task"]):
        raise DAGLimitError(
            "max_decompositions_per_task",
            parent["decompositions"] + 1,
            cfg["max_decompositions_per_task"],
        )
    depth = int(parent["depth"]) + 1
    if depth > int(cfg["max_decomposition_depth"]):
        raise DAGLimitError("max_decomposition_depth", depth, cfg["max_decomposition_depth"])
    new_ids = [t.task_id for t in proposal.new_tasks]
    clash = [t for t in new_ids if t in tasks] or [t for t in new_ids if new_ids.count(t) > 1]
    if clash:
        raise DAGError(
            "LA-DAG-INVALID", f"decomposition reuses existing task ids as new: {sorted(set(clash))}"
        )
    for reused in proposal.reuse_task_ids:
        if reused not in tasks:
            raise DAGError(
                "LA-DAG-UNKNOWN-DEPENDENCY", f"decomposition reuses unknown task {reused!r}"
            )
    children = [*new_ids, *proposal.reuse_task_ids]
    graph = {k: list(v) for k, v in edges.items()}
    for spec in proposal.new_tasks:
        graph[spec.task_id] = list(spec.depends_on)
    graph[claim.task_id] = list(dict.fromkeys([*graph.get(claim.task_id, []), *children]))
    added_edges = sum(len(s.depends_on) for s in proposal.new_tasks) + len(
        set(children) - set(edges.get(claim.task_id, []))
    )
    _check_limits(run, len(tasks) + len(new_ids), sum(len(v) for v in edges.values()) + added_edges)
    check_graph(graph)
    verified = {t for t, m in tasks.items() if m["status"] == "verified"}
    specs = [
        TaskSpec.from_dict({**s.to_dict(), "created_by_task_id": claim.task_id})
        for s in proposal.new_tasks
    ]
    first_seq = max((int(m["seq"]) for m in tasks.values()), default=0) + 1
    insert_tasks(
        store, conn, claim.run_id, specs, depth=depth, first_seq=first_seq, verified=verified
    )
    for child in children:
        if child not in edges.get(claim.task_id, []):
            conn.execute(
                store.q(
                    "INSERT INTO dag_dependencies(run_id, task_id, depends_on) VALUES (:r, :t, :d)"
                ),
                {"r": claim.run_id, "t": claim.task_id, "d": child},
            )
    all_done = all(c in verified for c in children)
    # The accepted proposal was a successful attempt: the integration phase starts with fresh attempts.
    n = conn.execute(
        store.q(
            "UPDATE dag_tasks SET status=:s, phase='integrate', decompositions=decompositions+1, attempts=0, lease_owner=NULL,"
            " lease_expires_at=NULL WHERE run_id=:r AND task_id=:t AND fence=:f AND status='running'"
        ),
        {
            "s": "ready" if all_done else "waiting_dependencies",
            "r": claim.run_id,
            "t": claim.task_id,
            "f": claim.fence,
        },
    ).rowcount
    _fence_check(n, claim, "decompose")
    conn.execute(
        store.q(
            "UPDATE dag_runs SET graph_revision=graph_revision+1, task_count=:n, updated_at={now} WHERE run_id=:r"
        ),
        {"r": claim.run_id, "n": len(tasks) + len(new_ids)},
    )
    conn.execute(
        store.q(
            "UPDATE dag_attempts SET status='succeeded', finished_at={now} WHERE attempt_id=:a"
        ),
        {"a": claim.attempt_id},
    )
    _save_report(store, conn, claim, report)
    event(
        store,
        conn,
        claim.run_id,
        "dag.decomposition.accepted",
        {
            "proposal_id": proposal.proposal_id,
            "new_tasks": new_ids,
            "reused": list(proposal.reuse_task_ids),
            "graph_revision": run.graph_revision + 1,
        },
        claim.task_id,
    )
    return lock_run(store, conn, claim.run_id)


def resolve_blocker(
    store: SqlTaskGraphStore, conn: Conn, run_id: str, task_id: str, reason: str | None
) -> None:
    """blocked -> ready (with fresh attempts); the run goes back to running."""
    run = lock_run(store, conn, run_id)
    if run.status.value in ("succeeded", "failed", "cancelled"):
        raise DAGError("LA-DAG-STATE", f"run {run_id!r} is {run.status.value}")
    n = conn.execute(
        store.q(
            "UPDATE dag_tasks SET status='ready', blocker=NULL, attempts=0 WHERE run_id=:r AND task_id=:t AND status='blocked'"
        ),
        {"r": run_id, "t": task_id},
    ).rowcount
    if n != 1:
        raise DAGError("LA-DAG-STATE", f"task {task_id!r} of run {run_id!r} is not blocked")
    event(store, conn, run_id, "dag.task.unblocked", {"reason": reason}, task_id)
    if run.status.value == "blocked":
        conn.execute(
            store.q("UPDATE dag_runs SET status='running', updated_at={now} WHERE run_id=:r"),
            {"r": run_id},
        )
        event(store, conn, run_id, "dag.run.resumed", {"reason": reason or "blocker resolved"})


def supersede(
    store: SqlTaskGraphStore,
    conn: Conn,
    run_id: str,
    task_id: str,
    replacement: TaskSpec,
    expected: int,
) -> DAGRun:
    """Replace a task by a new one; CAS on the graph revision; fences out the old task's attempt."""
    run = lock_run(store, conn, run_id)
    if run.graph_revision != expected:
        raise DAGError(
            "LA-DAG-VERSION-CONFLICT",
            f"graph is at revision {run.graph_revision}, expected {expected}",
        )
    if run.status.value in ("succeeded", "cancelled"):
        raise DAGError("LA-DAG-STATE", f"run {run_id!r} is {run.status.value}")
    tasks, edges = _run_graph(store, conn, run_id)
    old = tasks.get(task_id)
    if old is None:
        raise DAGError("LA-DAG-NOT-FOUND", f"no task {task_id!r} in run {run_id!r}")
    if old["status"] in ("verified", "superseded"):
        raise DAGError(
            "LA-DAG-STATE", f"task {task_id!r} is {old['status']} and cannot be superseded"
        )
    if replacement.task_id in tasks:
        raise DAGError(
            "LA-DAG-INVALID", f"replacement task id {replacement.task_id!r} already exists"
        )
    graph = {
        k: [replacement.task_id if d == task_id else d for d in v]
        for k, v in edges.items()
        if k != task_id
    }
    graph[replacement.task_id] = list(replacement.depends_on)
    if task_id in replacement.depends_on:
        raise DAGError("LA-DAG-CYCLE", "a replacement cannot depend on the task it supersedes")
    check_graph({**graph, **{t: [] for t in tasks if t not in graph and t != task_id}})
    _check_limits(run, len(tasks) + 1, sum(len(v) for v in graph.values()))
    verified = {t for t, m in tasks.items() if m["status"] == "verified"}
    spec = TaskSpec.from_dict({**replacement.to_dict(), "supersedes_task_id": task_id})
    first_seq = max(int(m["seq"]) for m in tasks.values()) + 1
    insert_tasks(
        store, conn, run_id, [spec], depth=int(old["depth"]), first_seq=first_seq, verified=verified
    )
    conn.execute(
        store.q(
            "UPDATE dag_tasks SET status='superseded', fence=fence+1, lease_owner=NULL, lease_expires_at=NULL"
            " WHERE run_id=:r AND task_id=:t"
        ),
        {"r": run_id, "t": task_id},
    )
    conn.execute(
        store.q(
            "UPDATE dag_attempts SET status='cancelled', finished_at={now} WHERE run_id=:r AND task_id=:t AND status IN ('claimed','running','submitted')"
        ),
        {"r": run_id, "t": task_id},
    )
    conn.execute(
        store.q("UPDATE dag_dependencies SET depends_on=:new WHERE run_id=:r AND depends_on=:old"),
        {"r": run_id, "old": task_id, "new": spec.task_id},
    )
    roots = [spec.task_id if t == task_id else t for t in run.root_task_ids]
    conn.execute(
        store.q(
            "UPDATE dag_runs SET graph_revision=graph_revision+1, root_task_ids=:roots, task_count=task_count+1,"
            " status=CASE WHEN status IN ('blocked','failed') THEN 'running' ELSE status END, updated_at={now} WHERE run_id=:r"
        ),
        {"r": run_id, "roots": dumps(roots)},
    )
    event(
        store,
        conn,
        run_id,
        "dag.task.superseded",
        {"replacement": spec.task_id, "graph_revision": run.graph_revision + 1},
        task_id,
    )
    refresh_run(store, conn, run_id)
    return lock_run(store, conn, run_id)


def set_run_status(
    store: SqlTaskGraphStore, conn: Conn, run_id: str, action: str, reason: str | None
) -> DAGRun:
    """pause / resume / cancel."""
    run = lock_run(store, conn, run_id)
    status = run.status.value
    allowed = {
        "pause": ("running", "blocked"),
        "resume": ("paused", "blocked"),
        "cancel": ("running", "paused", "blocked"),
    }
    if action not in allowed:
        raise DAGError("LA-DAG-INVALID", f"unknown run action {action!r}")
    if status not in allowed[action]:
        if (action, status) in (
            ("pause", "paused"),
            ("resume", "running"),
            ("cancel", "cancelled"),
        ):
            return run  # already there: idempotent
        raise DAGError("LA-DAG-STATE", f"cannot {action} run {run_id!r}: it is {status}")
    new = {"pause": "paused", "resume": "running", "cancel": "cancelled"}[action]
    conn.execute(
        store.q("UPDATE dag_runs SET status=:s, reason=:why, updated_at={now} WHERE run_id=:r"),
        {"s": new, "why": reason, "r": run_id},
    )
    if action == "cancel":
        conn.execute(
            store.q(
                "UPDATE dag_tasks SET status='cancelled', fence=fence+1, lease_owner=NULL, lease_expires_at=NULL WHERE run_id=:r"
                " AND status NOT IN ('verified','failed','cancelled','superseded')"
            ),
            {"r": run_id},
        )
        conn.execute(
            store.q(
                "UPDATE dag_attempts SET status='cancelled', finished_at={now} WHERE run_id=:r AND status IN ('claimed','running','submitted')"
            ),
            {"r": run_id},
        )
    event(
        store,
        conn,
        run_id,
        {"pause": "dag.run.paused", "resume": "dag.run.resumed", "cancel": "dag.run.cancelled"}[
            action
        ],
        {"reason": reason},
    )
    if action == "resume":
        refresh_run(store, conn, run_id)
    return lock_run(store, conn, run_id)


def refresh_run(store: SqlTaskGraphStore, conn: Conn, run_id: str) -> None:
    """Derive the run's status from its tasks (called under the run lock)."""
    row = conn.execute(
        store.q("SELECT status, root_task_ids, config FROM dag_runs WHERE run_id=:r"), {"r": run_id}
    ).one()
    status, roots, config = row[0], loads(row[1]), loads(row[2])
    if status not in ("running", "blocked"):
        return
    counts = dict(
        conn.execute(
            store.q("SELECT status, COUNT(*) FROM dag_tasks WHERE run_id=:r GROUP BY status"),
            {"r": run_id},
        ).all()
    )
    root_states = set()
    if roots:
        params = {f"x{i}": t for i, t in enumerate(roots)}
        root_states = set(
            conn.execute(
                store.q(
                    f"SELECT status FROM dag_tasks WHERE run_id=:r AND task_id IN ({', '.join(':' + k for k in params)})"
                ),
                {"r": run_id, **params},
            ).scalars()
        )
    active = sum(counts.get(s, 0) for s in ("ready", "running", "verifying", "retry_wait"))
    new = status
    if root_states and root_states <= {"verified"}:
        new = "succeeded"
    elif config.get("failure_policy") == "fail_fast" and counts.get("failed"):
        new = "failed"
    elif active == 0:
        new = "blocked" if counts.get("blocked") else "failed"
    elif status == "blocked":
        new = "running"
    if new == status:
        return
    conn.execute(
        store.q("UPDATE dag_runs SET status=:s, updated_at={now} WHERE run_id=:r"),
        {"s": new, "r": run_id},
    )
    if new == "failed":
        # Nothing more can run: fence out any attempt still holding a lease (fail_fast).
        conn.execute(
            store.q(
                "UPDATE dag_tasks SET status='cancelled', fence=fence+1, lease_owner=NULL, lease_expires_at=NULL"
                " WHERE run_id=:r AND status IN ('ready','running','verifying','retry_wait')"
            ),
            {"r": run_id},
        )
    names = {
        "succeeded": "dag.run.completed",
        "failed": "dag.run.failed",
        "blocked": "dag.run.blocked",
        "running": "dag.run.resumed",
    }
    event(store, conn, run_id, names[new], {"tasks": {k: int(v) for k, v in counts.items()}})


def acquire_scheduler(
    store: SqlTaskGraphStore, conn: Conn, run_id: str, owner: str, lease_seconds: float
) -> int:
    """Take the run's scheduler lease; the epoch grows on every acquisition."""
    lock_run(store, conn, run_id)
    row = conn.execute(
        store.q(
            "SELECT owner, epoch, (expires_at IS NULL OR expires_at<{now}) AS free FROM dag_scheduler_leases WHERE run_id=:r"
        ),
        {"r": run_id},
    ).first()
    if row is None:
        conn.execute(
            store.q(
                "INSERT INTO dag_scheduler_leases(run_id, owner, epoch, expires_at) VALUES (:r, :o, 1, {now}+:ttl)"
            ),
            {"r": run_id, "o": owner, "ttl": lease_seconds},
        )
        epoch = 1
    else:
        holder, epoch, free = row
        if not free and holder not in (None, owner):
            raise DAGError(
                "LA-DAG-LEASE-REJECTED",
                f"run {run_id!r} is being scheduled by {holder!r}",
                details={"owner": holder},
            )
        epoch = int(epoch) + 1
        conn.execute(
            store.q(
                "UPDATE dag_scheduler_leases SET owner=:o, epoch=:e, expires_at={now}+:ttl WHERE run_id=:r"
            ),
            {"r": run_id, "o": owner, "e": epoch, "ttl": lease_seconds},
        )
    event(store, conn, run_id, "dag.scheduler.acquired", {"owner": owner, "epoch": epoch})
    return epoch
