"""Shared pieces of the store's transitions: events, the run lock, fencing, graph reads, run status."""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Any, Protocol

import sqlalchemy as sa

from lightagent_dag.errors import DAGError, DAGFencedError, DAGLimitError
from lightagent_dag.records import ArtifactManifest, Claim, DAGRun
from lightagent_dag.specs import TaskSpec
from lightagent_dag.sql.rows import dumps, loads, row_to_run

Conn = sa.Connection

# Where a transaction's events wait for its end (a key of ``Connection.info``).
_PENDING = "lightagent_dag.pending_events"
# The runs a transaction gave claimable tasks, announced at its end (PostgreSQL).
_READY = "lightagent_dag.ready_runs"

READY_CHANNEL = "lightagent_dag_ready"
"""The PostgreSQL channel on which a commit that made tasks claimable names their run."""


class Store(Protocol):
    """What the transitions need of the store (kept apart so they never import it)."""

    pg: bool
    url: str

    def q(self, sql: str) -> sa.TextClause:
        """SQL text with the dialect's clock and lock filled in."""
        ...

    def sql_text(self, sql: str) -> str:
        """The same, as a string with SQLAlchemy's ``:name`` parameters."""
        ...

    def driver_text(self, sql: str) -> str:
        """The same, as the string the driver runs (its own parameter style)."""
        ...


def event(
    store: Store,
    conn: Conn,
    run_id: str,
    type_: str,
    data: dict[str, Any],
    task_id: str | None = None,
) -> None:
    """Append one event to the run's log (same transaction as the change it records).

    Inside :func:`collecting_events` the event waits for :func:`flush_events` at the
    end of the transaction, so it costs no round trip of its own and, on PostgreSQL,
    the run lock that orders event ids is held only from that last statement to the commit.
    """
    pending = conn.info.get(_PENDING)
    if pending is not None:
        pending.append((run_id, task_id, type_, dumps(data)))
        return
    _insert_events(store, conn, [(run_id, task_id, type_, dumps(data))])


def write(store: Store, conn: Conn, sql: str, params: dict[str, Any]) -> int:
    """Run a write statement in the transaction; returns its row count.

    It goes straight to the driver's connection (the same transaction), which takes a
    few microseconds where a statement through SQLAlchemy takes tens (its result
    metadata alone); the hot path runs several per task. A driver error is raised as
    SQLAlchemy's, as every other statement's would be.
    """
    cursor, _ = _on_driver(store, conn, sql, params, rows=False)
    return int(cursor.rowcount)


_NAMES: dict[tuple[str, str], tuple[str, ...]] = {}


class RawRow(tuple[Any, ...]):
    """A driver row with the ``_mapping`` of SQLAlchemy's rows (what ``row_to_*`` read)."""

    names: tuple[str, ...] = ()

    @property
    def _mapping(self) -> dict[str, Any]:
        return dict(zip(self.names, self, strict=True))


def fetch(store: Store, conn: Conn, sql: str, params: dict[str, Any]) -> list[Any]:
    """Every row of a statement in the transaction (straight from the driver, as :func:`write`)."""
    cursor, rows = _on_driver(store, conn, sql, params, rows=True)
    if not rows:
        return []
    # A statement's columns are those of its text on its database: read them once (psycopg
    # builds a description object per column on every call, which costs more than the rows).
    key = (store.url, sql)
    names = _NAMES.get(key)
    if names is None:
        names = tuple(d[0] for d in cursor.description or ())
        if len(_NAMES) < 4096:
            _NAMES[key] = names
    out = []
    for row in rows:
        raw = RawRow(row)
        raw.names = names
        out.append(raw)
    return out


def _on_driver(
    store: Store, conn: Conn, sql: str, params: dict[str, Any], *, rows: bool
) -> tuple[Any, list[Any]]:
    """The driver cursor of ``sql`` run on the transaction's own connection (and its rows)."""
    driver = conn.connection.driver_connection
    if store.pg:
        import psycopg

        text = store.driver_text(sql)
        base: type[Exception] = psycopg.Error
    else:
        import sqlite3

        text = store.sql_text(sql)
        base = sqlite3.Error
    try:
        cursor = driver.execute(text, params)  # type: ignore[union-attr]
        return cursor, cursor.fetchall() if rows else []
    except base as exc:
        raise sa.exc.DBAPIError.instance(text, params, exc, base) from exc


def collecting_events(conn: Conn) -> None:
    """From now on, events written on ``conn`` wait for :func:`flush_events`."""
    conn.info[_PENDING] = []
    conn.info.pop(_READY, None)


def flush_events(store: Store, conn: Conn) -> None:
    """Write the transaction's waiting events and announcements (call it last, just before the commit)."""
    pending = conn.info.pop(_PENDING, None)
    if pending:
        _insert_events(store, conn, pending)
    ready = conn.info.pop(_READY, None)
    if ready:
        # Delivered by PostgreSQL at the commit, and only then (never for a rollback).
        write(
            store,
            conn,
            f"SELECT pg_notify('{READY_CHANNEL}', r) FROM unnest(CAST(:runs AS text[])) AS r",
            {"runs": sorted(ready)},
        )


def announce_ready(store: Store, conn: Conn, run_id: str) -> None:
    """Tell idle workers (listening on PostgreSQL) that ``run_id`` has tasks to claim, at the commit."""
    if store.pg and _PENDING in conn.info:
        conn.info.setdefault(_READY, set()).add(run_id)


def take_waiting_events(conn: Conn, run_id: str) -> list[tuple[str, str | None, str, str]] | None:
    """Take the transaction's waiting events off its queue, if every one is of ``run_id``.

    For a statement that writes them itself (see :func:`events_cte`); None, leaving the
    queue as it is, while the transaction collects no events or some are of another run.
    """
    pending = conn.info.get(_PENDING)
    if pending is None or any(row[0] != run_id for row in pending):
        return None
    taken = list(pending)
    pending.clear()
    return taken


def events_cte(
    store: Store,
    run_id: str,
    waiting: Sequence[tuple[str, str | None, str, str]],
    params: dict[str, Any],
    *,
    after: str = "",
) -> str:
    """``, l AS (…), ev AS (INSERT INTO dag_events …)``: ``waiting`` events of ``run_id`` then ``after``'s.

    ``after`` is a ``SELECT n, task_id, type, data`` of events the statement makes itself
    (from its own CTEs), written last; the run's event lock is taken shared first, as
    :func:`_insert_events` does. Fills ``params``.
    """
    params["elk1"], params["elk2"] = event_lock_key(run_id)
    params["erun"] = run_id
    parts = []
    if waiting:
        rows = []
        for i, (_, task_id, type_, data) in enumerate(waiting):
            rows.append(f"({i}, :et{i}, :ety{i}, :ed{i})")
            params.update({f"et{i}": task_id, f"ety{i}": type_, f"ed{i}": data})
        parts.append(f"SELECT * FROM (VALUES {', '.join(rows)}) AS v(n, task_id, type, data)")
    if after:
        parts.append(after)
    return (
        ", l AS (SELECT run_id, pg_advisory_xact_lock_shared(:elk1, :elk2) FROM dag_runs WHERE run_id=:erun),"
        " ev AS (INSERT INTO dag_events(run_id, task_id, type, data, created_at)"
        f" SELECT l.run_id, x.task_id, x.type, x.data, {{now}} FROM l, ({' UNION ALL '.join(parts)}) AS x"
        " ORDER BY x.n)"
    )


def discard_events(conn: Conn) -> None:
    """Forget waiting events and announcements (the transaction rolled back)."""
    conn.info.pop(_PENDING, None)
    conn.info.pop(_READY, None)


def _insert_events(store: Store, conn: Conn, rows: list[tuple[str, str | None, str, str]]) -> None:
    """Insert events in one statement per run, each run's event lock taken (shared) in it.

    On PostgreSQL an event id is drawn from a sequence at INSERT, not at COMMIT: a
    transaction holding id N can commit after one holding N+1, and a reader tailing
    ``events(after=cursor)`` that saw N+1 would skip N for good. So an event writer
    holds the run's event lock (a transaction-scoped advisory lock, see
    :func:`event_lock_key`) in shared mode from its id draw — this statement, the
    transaction's last — to its commit, and a reader takes it exclusively before it
    reads (``StoreReads.events``): it waits for the writers in flight, and its snapshot
    then holds every id drawn before it or none. Writers share the lock, so they never
    wait for one another and their commits overlap (group commit with many workers);
    the lock manager queues a new writer behind a waiting reader, so readers are not
    starved. SQLite's ``BEGIN IMMEDIATE`` already makes writers take turns.
    """
    by_run: dict[str, list[tuple[str, str | None, str, str]]] = {}
    for row in rows:
        by_run.setdefault(row[0], []).append(row)
    for run_id in sorted(by_run):
        params: dict[str, Any] = {"r": run_id}
        if store.pg:
            params["lk1"], params["lk2"] = event_lock_key(run_id)
        values = []
        for i, (_, task_id, type_, data) in enumerate(by_run[run_id]):
            # The row number keeps the run's events in the order they were written.
            values.append(f"({i}, :t{i}, :ty{i}, :d{i})")
            params.update({f"t{i}": task_id, f"ty{i}": type_, f"d{i}": data})
        source = f"(VALUES {', '.join(values)}) AS v(n, task_id, type, data)"
        if store.pg:
            sql = (
                "WITH l AS (SELECT run_id, pg_advisory_xact_lock_shared(:lk1, :lk2)"
                " FROM dag_runs WHERE run_id=:r)"
                " INSERT INTO dag_events(run_id, task_id, type, data, created_at)"
                f" SELECT l.run_id, v.task_id, v.type, v.data, {{now}} FROM l, {source} ORDER BY v.n"
            )
        elif len(values) == 1:
            sql = (
                "INSERT INTO dag_events(run_id, task_id, type, data, created_at)"
                " VALUES (:r, :t0, :ty0, :d0, {now})"
            )
        else:
            sql = (
                "INSERT INTO dag_events(run_id, task_id, type, data, created_at)"
                f" VALUES {', '.join(f'(:r, :t{i}, :ty{i}, :d{i}, {{now}})' for i in range(len(values)))}"
            )
        write(store, conn, sql, params)


# The first half of every event lock's key: the lightagent-dag event log's own space
# among the database's advisory locks (the second half is the run's).
_EVENT_LOCK_SPACE = 0x4C414445  # "LADE"


def event_lock_key(run_id: str) -> tuple[int, int]:
    """The two-int advisory lock key of a run's event log on PostgreSQL.

    Two runs whose ids share a CRC-32 share the lock: they wait for each other a little
    more, never less, so a collision costs time and never order.
    """
    crc = zlib.crc32(run_id.encode("utf-8"))
    return _EVENT_LOCK_SPACE, crc - (1 << 32) if crc >= 1 << 31 else crc


def lock_events(store: Store, conn: Conn, run_id: str) -> None:
    """Wait for the run's event writers in flight (PostgreSQL); what follows reads a complete prefix.

    The next statement's snapshot (READ COMMITTED: a new one per statement) holds every
    event id drawn before the lock was granted, committed, or none of them; writers
    after it wait for this transaction's end.
    """
    if store.pg:
        k1, k2 = event_lock_key(run_id)
        conn.execute(store.q("SELECT pg_advisory_xact_lock(:k1, :k2)"), {"k1": k1, "k2": k2})


def lock_run(store: Store, conn: Conn, run_id: str) -> DAGRun:
    """Read the run row, locking it on PostgreSQL (SQLite's BEGIN IMMEDIATE already serialises)."""
    row = conn.execute(
        store.q("SELECT * FROM dag_runs WHERE run_id=:r{lock}"), {"r": run_id}
    ).first()
    if row is None:
        raise DAGError("LA-DAG-NOT-FOUND", f"no LightDAG run {run_id!r}")
    return row_to_run(row)


def fence_check(n: int, claim: Claim, operation: str) -> None:
    if n != 1:
        raise DAGFencedError(
            run_id=claim.run_id, task_id=claim.task_id, fence=claim.fence, operation=operation
        )


def insert_tasks(
    store: Store,
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
        if status == "ready":
            announce_ready(store, conn, run_id)
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


#: ``dag_blobs`` and its columns, then the parameters of a row (see :func:`blob_params`).
BLOB_COLUMNS = "dag_blobs(tenant_id, project_id, content_hash, byte_size, content)"
BLOB_VALUES = ":bt, :bp, :bh, :bs, :blob"


def put_blob(store: Store, conn: Conn, manifest: ArtifactManifest, content: bytes) -> None:
    """Keep an artifact's bytes in ``dag_blobs`` (in the caller's transaction; a blob already there stays)."""
    write(
        store,
        conn,
        f"INSERT INTO {BLOB_COLUMNS} VALUES ({BLOB_VALUES}) ON CONFLICT DO NOTHING",
        blob_params(manifest, content),
    )


def blob_params(manifest: ArtifactManifest, content: bytes) -> dict[str, Any]:
    """The parameters of a ``dag_blobs`` row."""
    return {
        "bt": manifest.tenant_id,
        "bp": manifest.project_id,
        "bh": manifest.content_hash,
        "bs": len(content),
        "blob": content,
    }


def save_report(store: Store, conn: Conn, claim: Claim, report: dict[str, Any] | None) -> None:
    if report:
        write(
            store,
            conn,
            "INSERT INTO dag_reports(report_id, run_id, task_id, attempt_id, report) VALUES (:id, :r, :t, :a, :rep)",
            {
                "id": report["report_id"],
                "r": claim.run_id,
                "t": claim.task_id,
                "a": claim.attempt_id,
                "rep": dumps(report),
            },
        )


def run_graph(
    store: Store, conn: Conn, run_id: str
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


def check_limits(run: DAGRun, tasks: int, edges: int) -> None:
    if tasks > int(run.config["max_tasks"]):
        raise DAGLimitError("max_tasks", tasks, run.config["max_tasks"])
    if edges > int(run.config["max_edges"]):
        raise DAGLimitError("max_edges", edges, run.config["max_edges"])


def refresh_run(store: Store, conn: Conn, run_id: str) -> None:
    """Derive the run's status from its tasks (called under the run lock)."""
    row = conn.execute(
        store.q("SELECT status, root_task_ids, config FROM dag_runs WHERE run_id=:r"), {"r": run_id}
    ).one()
    status, roots, config = row[0], loads(row[1]), loads(row[2])
    if status not in ("running", "blocked"):
        return
    counts: dict[str, int] = dict(
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


def reconcile(store: Store, conn: Conn, run_id: str) -> None:
    """Re-derive a run's status under its lock (idle workers call this)."""
    lock_run(store, conn, run_id)
    refresh_run(store, conn, run_id)
