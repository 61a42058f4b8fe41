"""Claims and leases: take the best claimable task fenced, renew a lease, fail a task out of attempts.

A claim bumps the task's fencing token and records the attempt in the same transaction.
On PostgreSQL the pick is ``FOR UPDATE SKIP LOCKED``, so workers never wait on each
other's claims, and a claim riding on a publication is one statement (see
:func:`_claim_pg_plain`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lightagent_dag.records import Claim
from lightagent_dag.sql.common import (
    Conn,
    Store,
    event,
    events_cte,
    fence_check,
    fetch,
    lock_run,
    refresh_run,
    take_waiting_events,
    write,
)
from lightagent_dag.sql.rows import dumps, new_attempt_id, row_to_run, row_to_task
from lightagent_dag.sql.schema import CLAIM_STATUSES

__all__ = ["claim", "fail_exhausted", "renew"]

# The claimed event, written by the claim's own statement (as dumps() would write it).
_CLAIMED_EVENT = (
    "SELECT 1000000000, u.task_id, 'dag.task.claimed',"
    " '{\"attempt_id\":' || to_json(CAST(:a AS text))::text || ',\"fence\":' || u.fence"
    " || ',\"worker_id\":' || to_json(CAST(:w AS text))::text || '}' FROM u"
)

_CLAIMABLE = (
    "(t.status='ready' OR (t.status='retry_wait' AND t.available_at<={now})"
    " OR (t.status IN ('running','verifying') AND t.lease_expires_at<={now}))"
)


def claim(
    store: Store,
    conn: Conn,
    worker_id: str,
    run_id: str | None,
    worker_keys: Sequence[str] | None,
    lease_seconds: float,
    *,
    plain_only: bool = False,
) -> Claim | tuple[str, str, int] | None:
    """Claim one task. Returns a Claim, None, or (run, task, fence) of a task out of attempts.

    With ``plain_only`` (a claim riding on another write) the best task is claimed only
    when that takes no more than the claim itself: a lease takeover or a task out of
    attempts returns None before writing anything, for a claim of its own.
    """
    params: dict[str, Any] = {}
    where = ["r.status='running'", "t." + CLAIM_STATUSES, _CLAIMABLE]
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
        "SELECT t.run_id, t.task_id, t.status, t.fence, t.attempts, r.max_attempts,"
        # Counted here so that a task without dependencies costs no query for them.
        " (SELECT COUNT(*) FROM dag_dependencies d WHERE d.run_id=t.run_id AND d.task_id=t.task_id)"
        " FROM dag_tasks t"
        " JOIN dag_runs r ON r.run_id=t.run_id WHERE "
        + " AND ".join(where)
        + " ORDER BY t.priority DESC, t.seq LIMIT 1"
    )
    if store.pg:
        sql += " FOR UPDATE OF t SKIP LOCKED"
        if plain_only:
            return _claim_pg_plain(store, conn, sql, params, worker_id, lease_seconds)
    found = fetch(store, conn, sql, params)
    if not found:
        return None
    r, t, status, fence, attempts, max_attempts, dep_count = found[0]
    if plain_only and (status in ("running", "verifying") or attempts >= max_attempts):
        return None
    if status in ("running", "verifying"):
        conn.execute(
            store.q(
                "UPDATE dag_attempts SET status='expired', finished_at={now} WHERE run_id=:r AND task_id=:t AND fence=:f"
            ),
            {"r": r, "t": t, "f": fence},
        )
        conn.execute(
            store.q(
                "UPDATE dag_artifacts SET state='rejected' WHERE run_id=:r AND task_id=:t AND fence=:f AND state='staged'"
            ),
            {"r": r, "t": t, "f": fence},
        )
        event(store, conn, r, "dag.attempt.expired", {"fence": fence}, t)
    if attempts >= max_attempts:
        return (r, t, int(fence))
    new_fence = int(fence) + 1
    if store.pg:
        return _claim_pg(store, conn, r, t, int(fence), worker_id, lease_seconds)
    updated = fetch(
        store,
        conn,
        "UPDATE dag_tasks SET status='running', fence=:nf, attempts=attempts+1, lease_owner=:w,"
        " lease_expires_at={now}+:ttl, available_at=NULL WHERE run_id=:r AND task_id=:t AND fence=:f"
        " RETURNING *",
        {"r": r, "t": t, "f": fence, "nf": new_fence, "w": worker_id, "ttl": lease_seconds},
    )
    if not updated:
        return None
    task_row = updated[0]
    attempt_id = new_attempt_id()
    write(
        store,
        conn,
        "INSERT INTO dag_attempts(attempt_id, run_id, task_id, fence, worker_id, status, created_at)"
        " VALUES (:a, :r, :t, :f, :w, 'running', {now})",
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
    run = row_to_run(fetch(store, conn, "SELECT * FROM dag_runs WHERE run_id=:r", {"r": r})[0])
    deps: tuple[str, ...] = ()
    if dep_count:
        deps = tuple(
            conn.execute(
                store.q(
                    "SELECT depends_on FROM dag_dependencies WHERE run_id=:r AND task_id=:t ORDER BY depends_on"
                ),
                {"r": r, "t": t},
            ).scalars()
        )
    task = row_to_task(task_row, deps)
    return Claim(
        run=run,
        task=task,
        attempt_id=attempt_id,
        fence=new_fence,
        worker_id=worker_id,
        lease_expires_at=float(task.lease_expires_at or 0),
    )


class _Mapped:
    """A row-like holder for a mapping (what ``row_to_run`` reads)."""

    def __init__(self, mapping: dict[str, Any]) -> None:
        self._mapping = mapping


def _claim_pg(
    store: Store, conn: Conn, r: str, t: str, fence: int, worker_id: str, lease_seconds: float
) -> Claim | None:
    """The claim's writes and reads on PostgreSQL in one statement (the task row is locked)."""
    new_fence = fence + 1
    attempt_id = new_attempt_id()
    row = conn.execute(
        store.q(
            "WITH u AS (UPDATE dag_tasks SET status='running', fence=:nf, attempts=attempts+1, lease_owner=:w,"
            " lease_expires_at={now}+:ttl, available_at=NULL WHERE run_id=:r AND task_id=:t AND fence=:f"
            " RETURNING *),"
            " a AS (INSERT INTO dag_attempts(attempt_id, run_id, task_id, fence, worker_id, status, created_at)"
            " SELECT :a, run_id, task_id, :nf, :w, 'running', {now} FROM u)"
            " SELECT u.*, row_to_json(run) AS run_row,"
            " ARRAY(SELECT d.depends_on FROM dag_dependencies d WHERE d.run_id=u.run_id AND d.task_id=u.task_id"
            " ORDER BY d.depends_on) AS deps"
            " FROM u JOIN dag_runs run ON run.run_id=u.run_id"
        ),
        {
            "r": r,
            "t": t,
            "f": fence,
            "nf": new_fence,
            "w": worker_id,
            "ttl": lease_seconds,
            "a": attempt_id,
        },
    ).first()
    if row is None:
        return None
    event(
        store,
        conn,
        r,
        "dag.task.claimed",
        {"attempt_id": attempt_id, "fence": new_fence, "worker_id": worker_id},
        t,
    )
    run_row = row._mapping["run_row"]
    task = row_to_task(row, tuple(row._mapping["deps"] or ()))
    return Claim(
        run=row_to_run(_Mapped(dict(run_row))),
        task=task,
        attempt_id=attempt_id,
        fence=new_fence,
        worker_id=worker_id,
        lease_expires_at=float(task.lease_expires_at or 0),
    )


def _claim_pg_plain(
    store: Store,
    conn: Conn,
    pick: str,
    params: dict[str, Any],
    worker_id: str,
    lease_seconds: float,
) -> Claim | None:
    """``claim(plain_only=True)`` on PostgreSQL: pick, claim and read back in one statement.

    ``pick`` is the claim's select (the best claimable task, row-locked); the update takes
    it only when it is plain (ready or a retry due, attempts left), so a lease takeover
    or a task out of attempts updates nothing here and waits for a claim of its own.
    """
    attempt_id = new_attempt_id()
    extra: dict[str, Any] = {"w": worker_id, "ttl": lease_seconds, "a": attempt_id}
    # Claiming the next task of the same run, the statement also writes the transaction's
    # waiting events and its own: one round trip fewer per task.
    run_id = params.get("run")
    waiting, writes_events = None, ""
    if isinstance(run_id, str) and (waiting := take_waiting_events(conn, run_id)) is not None:
        writes_events = events_cte(store, run_id, waiting, extra, after=_CLAIMED_EVENT)
    found = fetch(
        store,
        conn,
        (
            f"WITH c AS ({pick}),"
            " u AS (UPDATE dag_tasks SET status='running', fence=c.fence+1, attempts=dag_tasks.attempts+1,"
            " lease_owner=:w, lease_expires_at={now}+:ttl, available_at=NULL FROM c"
            " WHERE dag_tasks.run_id=c.run_id AND dag_tasks.task_id=c.task_id AND dag_tasks.fence=c.fence"
            " AND c.status IN ('ready','retry_wait') AND c.attempts < c.max_attempts"
            " RETURNING dag_tasks.*),"
            " a AS (INSERT INTO dag_attempts(attempt_id, run_id, task_id, fence, worker_id, status, created_at)"
            " SELECT :a, run_id, task_id, fence, :w, 'running', {now} FROM u)" + writes_events + ""
            " SELECT u.*, row_to_json(run) AS run_row,"
            " ARRAY(SELECT d.depends_on FROM dag_dependencies d WHERE d.run_id=u.run_id AND d.task_id=u.task_id"
            " ORDER BY d.depends_on) AS deps"
            " FROM u JOIN dag_runs run ON run.run_id=u.run_id"
        ),
        {**params, **extra},
    )
    if not found:
        return None
    row = found[0]
    task = row_to_task(row, tuple(row._mapping["deps"] or ()))
    if waiting is None:
        event(
            store,
            conn,
            task.run_id,
            "dag.task.claimed",
            {"attempt_id": attempt_id, "fence": task.fence, "worker_id": worker_id},
            task.task_id,
        )
    return Claim(
        run=row_to_run(_Mapped(dict(row._mapping["run_row"]))),
        task=task,
        attempt_id=attempt_id,
        fence=task.fence,
        worker_id=worker_id,
        lease_expires_at=float(task.lease_expires_at or 0),
    )


def fail_exhausted(store: Store, conn: Conn, run_id: str, task_id: str, fence: int) -> None:
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


def renew(store: Store, conn: Conn, claim: Claim, lease_seconds: float) -> float:
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
        fence_check(int(current == claim.fence), claim, "renew")
    return float(conn.execute(store.q("SELECT {now}+:ttl"), {"ttl": lease_seconds}).scalar_one())
