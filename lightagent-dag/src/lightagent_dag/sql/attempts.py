"""Attempt transitions after the claim: stage, publish, reject — each one transaction, each fenced.

Most transitions lock the run row first, then task rows. ``stage`` and ``publish`` — the
hot path — write their own task row first and take the run lock last, to hold it only
briefly; a rare cycle with an administrative change (cancel, supersede, fail_fast) is a
deadlock PostgreSQL detects, and the store retries the losing transaction. Every write on behalf
of an attempt names the attempt's fence in its WHERE clause and checks the row count.
"""

from __future__ import annotations

from typing import Any

from lightagent_dag.records import ArtifactManifest, Claim
from lightagent_dag.sql.common import (
    BLOB_COLUMNS,
    BLOB_VALUES,
    Conn,
    Store,
    announce_ready,
    blob_params,
    event,
    fence_check,
    fetch,
    lock_run,
    put_blob,
    refresh_run,
    save_report,
    write,
)
from lightagent_dag.sql.rows import dumps
from lightagent_dag.sql.schema import CLAIM_STATUSES

# Whether a task of run :r other than :t is still open. Written for the indexes rather
# than as one EXISTS over five states: planned from statistics taken when the run was
# created (every task ready), such an EXISTS is a sequential scan that walks past every
# task already verified — on every publication. The claimable states are read from the
# claim index in its own order (a LIMIT over it cannot be a table scan), the waiting ones
# by (run_id, status).
_OTHERS_OPEN = (
    "((SELECT 1 FROM dag_tasks WHERE run_id=:r AND task_id<>:t AND "
    + CLAIM_STATUSES
    + " ORDER BY priority DESC, seq LIMIT 1) IS NOT NULL"
    " OR EXISTS (SELECT 1 FROM dag_tasks WHERE run_id=:r AND status='waiting_dependencies'))"
)


class NoVerificationSlot(Exception):
    """Raised inside ``stage`` to roll it back: the run has max_pending verifications already."""


def stage(
    store: Store,
    conn: Conn,
    claim: Claim,
    manifest: ArtifactManifest,
    max_pending: int,
    blob: bytes | None = None,
) -> bool:
    """Stage a candidate (fenced), unless max_pending verifications are already pending.

    The task-level writes come first and the run lock last, so the run row is held only
    for the count and the commit; over the limit, everything rolls back.
    """
    n = write(
        store,
        conn,
        "UPDATE dag_tasks SET status='verifying' WHERE run_id=:r AND task_id=:t AND fence=:f AND status='running'",
        {"r": claim.run_id, "t": claim.task_id, "f": claim.fence},
    )
    fence_check(n, claim, "stage")
    if blob is not None:
        put_blob(store, conn, manifest, blob)
    write(
        store,
        conn,
        "INSERT INTO dag_artifacts(artifact_id, run_id, task_id, attempt_id, fence, state, manifest)"
        " VALUES (:id, :r, :t, :a, :f, 'staged', :m)",
        {
            "id": manifest.artifact_id,
            "r": claim.run_id,
            "t": claim.task_id,
            "a": claim.attempt_id,
            "f": claim.fence,
            "m": dumps(manifest.to_dict()),
        },
    )
    write(
        store,
        conn,
        "UPDATE dag_attempts SET status='submitted' WHERE attempt_id=:a",
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
    if store.pg:  # SQLite's BEGIN IMMEDIATE already holds the database's write lock
        conn.execute(
            store.q("SELECT 1 FROM dag_runs WHERE run_id=:r FOR UPDATE"), {"r": claim.run_id}
        )
    pending = fetch(
        store,
        conn,
        "SELECT COUNT(*) FROM dag_tasks WHERE run_id=:r AND status='verifying'",
        {"r": claim.run_id},
    )[0][0]
    if pending > max_pending:  # the count includes this task
        raise NoVerificationSlot
    return True


def publish(
    store: Store,
    conn: Conn,
    claim: Claim,
    manifest: ArtifactManifest,
    report: dict[str, Any],
) -> None:
    """Publish a verified artifact (fenced) and wake the task's dependents."""
    n = write(
        store,
        conn,
        "UPDATE dag_tasks SET status='verified', artifact_id=:aid, lease_owner=NULL, lease_expires_at=NULL, last_error=NULL"
        " WHERE run_id=:r AND task_id=:t AND fence=:f AND status='verifying'",
        {"r": claim.run_id, "t": claim.task_id, "f": claim.fence, "aid": manifest.artifact_id},
    )
    fence_check(n, claim, "publish")
    n = write(
        store,
        conn,
        "UPDATE dag_artifacts SET state='published' WHERE artifact_id=:aid AND fence=:f AND state='staged'",
        {"aid": manifest.artifact_id, "f": claim.fence},
    )
    fence_check(n, claim, "publish")
    _published(store, conn, claim, manifest, report)


def publish_inline(
    store: Store,
    conn: Conn,
    claim: Claim,
    manifest: ArtifactManifest,
    report: dict[str, Any],
    blob: bytes | None = None,
) -> None:
    """Stage and publish an already verified candidate in one transaction (fenced).

    The same rows and events as ``stage`` followed by ``publish``, written once: the
    task goes from ``running`` straight to ``verified``.
    """
    if store.pg:
        _publish_inline_pg(store, conn, claim, manifest, report, blob)
        return
    n = write(
        store,
        conn,
        "UPDATE dag_tasks SET status='verified', artifact_id=:aid, lease_owner=NULL, lease_expires_at=NULL, last_error=NULL"
        " WHERE run_id=:r AND task_id=:t AND fence=:f AND status='running'",
        {"r": claim.run_id, "t": claim.task_id, "f": claim.fence, "aid": manifest.artifact_id},
    )
    fence_check(n, claim, "publish")
    if blob is not None:
        put_blob(store, conn, manifest, blob)
    write(
        store,
        conn,
        "INSERT INTO dag_artifacts(artifact_id, run_id, task_id, attempt_id, fence, state, manifest)"
        " VALUES (:id, :r, :t, :a, :f, 'published', :m)",
        {
            "id": manifest.artifact_id,
            "r": claim.run_id,
            "t": claim.task_id,
            "a": claim.attempt_id,
            "f": claim.fence,
            "m": dumps(manifest.to_dict()),
        },
    )
    staged = {
        "artifact_id": manifest.artifact_id,
        "content_hash": manifest.content_hash,
        "fence": claim.fence,
    }
    event(store, conn, claim.run_id, "dag.artifact.staged", staged, claim.task_id)
    _published(store, conn, claim, manifest, report)


def _publish_inline_pg(
    store: Store,
    conn: Conn,
    claim: Claim,
    manifest: ArtifactManifest,
    report: dict[str, Any],
    blob: bytes | None = None,
) -> None:
    """``publish_inline`` on PostgreSQL: every row in one statement (writable CTEs), not six.

    Each insert reads from the fenced task update, so a refused fence writes nothing.
    The checks that follow a publication (dependents to wake, anything left open) come
    back from the same statement.
    """
    params: dict[str, Any] = {
        "r": claim.run_id,
        "t": claim.task_id,
        "f": claim.fence,
        "a": claim.attempt_id,
        "aid": manifest.artifact_id,
        "m": dumps(manifest.to_dict()),
    }
    rep = ""
    if report:
        rep = (
            " rep AS (INSERT INTO dag_reports(report_id, run_id, task_id, attempt_id, report)"
            " SELECT :rid, run_id, task_id, :a, :rep FROM t),"
        )
        params.update({"rid": report["report_id"], "rep": dumps(report)})
    if blob is not None:
        rep += f" b AS (INSERT INTO {BLOB_COLUMNS} SELECT {BLOB_VALUES} FROM t ON CONFLICT DO NOTHING),"
        params.update(blob_params(manifest, blob))
    n, others, dependents = fetch(
        store,
        conn,
        (
            "WITH t AS (UPDATE dag_tasks SET status='verified', artifact_id=:aid, lease_owner=NULL,"
            " lease_expires_at=NULL, last_error=NULL WHERE run_id=:r AND task_id=:t AND fence=:f"
            " AND status='running' RETURNING run_id, task_id),"
            " a AS (INSERT INTO dag_artifacts(artifact_id, run_id, task_id, attempt_id, fence, state, manifest)"
            " SELECT :aid, run_id, task_id, :a, :f, 'published', :m FROM t),"
            " p AS (INSERT INTO dag_published(run_id, task_id, artifact_id, attempt_id, fence, published_at)"
            " SELECT run_id, task_id, :aid, :a, :f, {now} FROM t)," + rep + ""
            " s AS (UPDATE dag_attempts SET status='succeeded', finished_at={now}"
            " WHERE attempt_id=:a AND EXISTS (SELECT 1 FROM t))"
            f" SELECT (SELECT COUNT(*) FROM t), {_OTHERS_OPEN},"
            " EXISTS (SELECT 1 FROM dag_dependencies WHERE run_id=:r AND depends_on=:t)"
        ),
        params,
    )[0]
    fence_check(int(n), claim, "publish")
    ids = {"artifact_id": manifest.artifact_id, "content_hash": manifest.content_hash}
    event(
        store,
        conn,
        claim.run_id,
        "dag.artifact.staged",
        {**ids, "fence": claim.fence},
        claim.task_id,
    )
    _publication_events(store, conn, claim, manifest)
    if dependents:
        _wake_dependents(store, conn, claim.run_id, claim.task_id)
    if not others:  # see _published: only a publication that may finish the run locks it
        lock_run(store, conn, claim.run_id)
        refresh_run(store, conn, claim.run_id)


def _publication_events(store: Store, conn: Conn, claim: Claim, manifest: ArtifactManifest) -> None:
    """``dag.artifact.published`` then ``dag.task.verified``: the events of every publication."""
    ids = {"artifact_id": manifest.artifact_id, "content_hash": manifest.content_hash}
    event(
        store, conn, claim.run_id, "dag.artifact.published", {**ids, "fence": claim.fence},
        claim.task_id,
    )  # fmt: skip
    event(
        store, conn, claim.run_id, "dag.task.verified",
        {"attempt_id": claim.attempt_id, "fence": claim.fence}, claim.task_id,
    )  # fmt: skip


def _published(
    store: Store,
    conn: Conn,
    claim: Claim,
    manifest: ArtifactManifest,
    report: dict[str, Any],
) -> None:
    """What every publication writes once the task row is ``verified``: rows, events, dependents."""
    write(
        store,
        conn,
        "INSERT INTO dag_published(run_id, task_id, artifact_id, attempt_id, fence, published_at)"
        " VALUES (:r, :t, :aid, :a, :f, {now})",
        {
            "r": claim.run_id,
            "t": claim.task_id,
            "aid": manifest.artifact_id,
            "a": claim.attempt_id,
            "f": claim.fence,
        },
    )
    save_report(store, conn, claim, report)
    write(
        store,
        conn,
        "UPDATE dag_attempts SET status='succeeded', finished_at={now} WHERE attempt_id=:a",
        {"a": claim.attempt_id},
    )
    _publication_events(store, conn, claim, manifest)
    _wake_dependents(store, conn, claim.run_id, claim.task_id)
    # The run lock is taken only when nothing else in the run is left to do, i.e. when
    # this publication may finish it. Two last publications that each still see the
    # other as open both skip it; an idle worker's reconcile() settles the run then.
    ((others,),) = fetch(
        store, conn, f"SELECT {_OTHERS_OPEN}", {"r": claim.run_id, "t": claim.task_id}
    )
    if not others:
        lock_run(store, conn, claim.run_id)
        refresh_run(store, conn, claim.run_id)


def _wake_dependents(store: Store, conn: Conn, run_id: str, task_id: str) -> None:
    dependents = [
        row[0]
        for row in fetch(
            store,
            conn,
            "SELECT task_id FROM dag_dependencies WHERE run_id=:r AND depends_on=:t ORDER BY task_id",
            {"r": run_id, "t": task_id},
        )
    ]
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
    if rows:
        announce_ready(store, conn, run_id)


def reject(
    store: Store,
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
    fence_check(0 if row is None else 1, claim, outcome)
    assert row is not None  # fence_check raised otherwise
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
    fence_check(n, claim, outcome)
    if status == "retry_wait" and backoff <= 0:
        announce_ready(store, conn, claim.run_id)
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
    save_report(store, conn, claim, report)
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
