"""Tables of the task-graph store and the engine set-up for each dialect."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy import event

__all__ = [
    "CLAIM_STATUSES",
    "READ_OPTION",
    "SCHEMA_VERSION",
    "build_engine",
    "metadata",
    "now_sql",
]

SCHEMA_VERSION = 1

metadata = sa.MetaData()
_ID = sa.String(200)
_BIGID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

sa.Table(
    "dag_meta",
    metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("value", sa.Text),
)

sa.Table(
    "dag_runs",
    metadata,
    sa.Column("run_id", _ID, primary_key=True),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("tenant_id", sa.String(128), nullable=False),
    sa.Column("project_id", sa.String(128), nullable=False),
    sa.Column("user_id", sa.String(200), nullable=False),
    sa.Column("root_task_ids", sa.Text, nullable=False),
    sa.Column("graph_revision", sa.Integer, nullable=False),
    sa.Column("config", sa.Text, nullable=False),
    sa.Column("context", sa.Text, nullable=False),
    sa.Column("digest", sa.String(64), nullable=False),
    sa.Column("max_attempts", sa.Integer, nullable=False),
    sa.Column("task_count", sa.Integer, nullable=False),
    sa.Column("edge_count", sa.Integer, nullable=False),
    sa.Column("reason", sa.Text),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("updated_at", sa.Float, nullable=False),
)

_tasks = sa.Table(
    "dag_tasks",
    metadata,
    sa.Column("run_id", _ID, primary_key=True),
    sa.Column("task_id", _ID, primary_key=True),
    sa.Column("seq", sa.Integer, nullable=False),
    sa.Column("spec", sa.Text, nullable=False),
    sa.Column("worker_key", sa.String(200), nullable=False),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("priority", sa.Integer, nullable=False),
    sa.Column("depth", sa.Integer, nullable=False),
    sa.Column("attempts", sa.Integer, nullable=False),
    # The fencing token: +1 on every claim (and on cancel/supersede); never reset.
    sa.Column("fence", sa.BigInteger, nullable=False),
    sa.Column("phase", sa.String(16), nullable=False),
    sa.Column("decompositions", sa.Integer, nullable=False),
    sa.Column("lease_owner", sa.String(200)),
    sa.Column("lease_expires_at", sa.Float),
    sa.Column("available_at", sa.Float),
    sa.Column("artifact_id", sa.String(64)),
    sa.Column("last_error", sa.Text),
    sa.Column("blocker", sa.Text),
    sa.Index("ix_dag_tasks_claim", "status", "priority", "seq"),
    sa.Index("ix_dag_tasks_run_status", "run_id", "status"),
)

# What a claim reads: the claimable tasks (a superset: retries not yet due and live
# leases are filtered per row) in claim order, so that a claim walks from the best task
# and stops at the first it may take, instead of reading and sorting the whole run.
# CLAIM_STATUSES is repeated in the claim's WHERE clause, which lets SQLite use the index.
CLAIM_STATUSES = "status IN ('ready', 'retry_wait', 'running', 'verifying')"
for _name, _lead in (
    ("ix_dag_tasks_claim_run", (_tasks.c.run_id,)),
    ("ix_dag_tasks_claim_any", ()),
):
    sa.Index(
        _name,
        *_lead,
        _tasks.c.priority.desc(),
        _tasks.c.seq,
        postgresql_where=sa.text(CLAIM_STATUSES),
        sqlite_where=sa.text(CLAIM_STATUSES),
    )

sa.Table(
    "dag_dependencies",
    metadata,
    sa.Column("run_id", _ID, primary_key=True),
    sa.Column("task_id", _ID, primary_key=True),
    sa.Column("depends_on", _ID, primary_key=True),
    sa.Index("ix_dag_dependencies_reverse", "run_id", "depends_on"),
)

sa.Table(
    "dag_attempts",
    metadata,
    sa.Column("attempt_id", sa.String(64), primary_key=True),
    sa.Column("run_id", _ID, nullable=False),
    sa.Column("task_id", _ID, nullable=False),
    sa.Column("fence", sa.BigInteger, nullable=False),
    sa.Column("worker_id", sa.String(200), nullable=False),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("error", sa.Text),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("finished_at", sa.Float),
    sa.UniqueConstraint("run_id", "task_id", "fence", name="uq_dag_attempts_fence"),
)

sa.Table(
    "dag_artifacts",
    metadata,
    sa.Column("artifact_id", sa.String(64), primary_key=True),
    sa.Column("run_id", _ID, nullable=False),
    sa.Column("task_id", _ID, nullable=False),
    sa.Column("attempt_id", sa.String(64), nullable=False),
    sa.Column("fence", sa.BigInteger, nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("manifest", sa.Text, nullable=False),
    sa.Index("ix_dag_artifacts_task", "run_id", "task_id"),
)

# One row per task at most: the database itself refuses a second publication.
sa.Table(
    "dag_published",
    metadata,
    sa.Column("run_id", _ID, primary_key=True),
    sa.Column("task_id", _ID, primary_key=True),
    sa.Column("artifact_id", sa.String(64), nullable=False, unique=True),
    sa.Column("attempt_id", sa.String(64), nullable=False),
    sa.Column("fence", sa.BigInteger, nullable=False),
    sa.Column("published_at", sa.Float, nullable=False),
)

sa.Table(
    "dag_reports",
    metadata,
    sa.Column("report_id", sa.String(64), primary_key=True),
    sa.Column("run_id", _ID, nullable=False),
    sa.Column("task_id", _ID, nullable=False),
    sa.Column("attempt_id", sa.String(64), nullable=False),
    sa.Column("report", sa.Text, nullable=False),
)

sa.Table(
    "dag_events",
    metadata,
    sa.Column("event_id", _BIGID, primary_key=True, autoincrement=True),
    sa.Column("run_id", _ID, nullable=False),
    sa.Column("task_id", _ID),
    sa.Column("type", sa.String(64), nullable=False),
    sa.Column("data", sa.Text, nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Index("ix_dag_events_run", "run_id", "event_id"),
)

# Artifact bytes kept in the database (SqlArtifactStore), by tenant, project and sha256:
# immutable once written, shared by the artifacts of one scope with the same content.
sa.Table(
    "dag_blobs",
    metadata,
    sa.Column("tenant_id", sa.String(128), primary_key=True),
    sa.Column("project_id", sa.String(128), primary_key=True),
    sa.Column("content_hash", sa.String(64), primary_key=True),
    sa.Column("byte_size", sa.BigInteger, nullable=False),
    sa.Column("content", sa.LargeBinary, nullable=False),
)

sa.Table(
    "dag_scheduler_leases",
    metadata,
    sa.Column("run_id", _ID, primary_key=True),
    sa.Column("owner", sa.String(200)),
    # Grows on every acquisition; the row is never deleted, so it never restarts.
    sa.Column("epoch", sa.BigInteger, nullable=False),
    sa.Column("expires_at", sa.Float),
)


READ_OPTION = "lightagent_dag_read"
"""The execution option that marks a read-only SQLite transaction (a deferred ``BEGIN``)."""


def now_sql(dialect: str) -> str:
    """The database clock as Unix seconds, in SQL: lease expiry never uses a worker's clock."""
    if dialect == "postgresql":
        return "CAST(EXTRACT(EPOCH FROM clock_timestamp()) AS DOUBLE PRECISION)"
    if dialect == "sqlite":
        return "((julianday('now') - 2440587.5) * 86400.0)"
    raise ValueError(dialect)


def build_engine(url: str, **kwargs: Any) -> sa.Engine:
    """An engine with the per-dialect settings the store relies on."""
    parsed = sa.make_url(url)
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")  # the driver we support and test
    if parsed.get_backend_name() == "sqlite":
        if parsed.database in (None, "", ":memory:"):
            raise ValueError("SQLite task-graph stores need a file path, not :memory:")
        kwargs.setdefault("connect_args", {}).setdefault("timeout", 30)
        engine = sa.create_engine(parsed, **kwargs)

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_conn: Any, _record: Any) -> None:
            dbapi_conn.isolation_level = None  # we issue BEGIN ourselves
            cursor = dbapi_conn.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute("PRAGMA busy_timeout=30000")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _on_begin(conn: sa.Connection) -> None:
            # Take the write lock up front: a read-then-write under a deferred BEGIN
            # would fail with SQLITE_BUSY instead of waiting (a read-only transaction,
            # marked with READ_OPTION, begins deferred and writes nothing). Sent on the driver's
            # connection: through SQLAlchemy's statement path it costs more than the
            # rest of a small transaction. Errors still surface as SQLAlchemy's.
            import sqlite3

            begin = "BEGIN" if conn.get_execution_options().get(READ_OPTION) else "BEGIN IMMEDIATE"
            try:
                conn.connection.driver_connection.execute(begin)  # type: ignore[union-attr]
            except sqlite3.Error as exc:
                raise sa.exc.DBAPIError.instance(begin, None, exc, sqlite3.Error) from exc

        return engine
    # No ping per checkout (a round trip per transaction): a dropped connection fails its
    # statement, which transaction() retries on a fresh connection.
    kwargs.setdefault("pool_pre_ping", False)
    return sa.create_engine(parsed, **kwargs)
