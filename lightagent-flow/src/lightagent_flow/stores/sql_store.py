"""``SqlLightFlowStore``: flow runs in SQL (a SQLite file or PostgreSQL), on the drivers.

``SqlLightFlowStore("sqlite:///runs.db")`` (or a bare path) keeps runs in one SQLite
file in WAL mode with ``synchronous=FULL`` and ``BEGIN IMMEDIATE`` writes, through the
standard library's ``sqlite3``; ``SqlLightFlowStore("postgresql+psycopg://…")`` moves
them to PostgreSQL (lightagent-postgres, on ``psycopg`` 3) so several hosts share them. Both use the pooled
connections of ``lightagent``'s SQL session store. A step commit is one statement that
is its own transaction (one WAL sync on SQLite, one round trip on PostgreSQL): the step
upserted only while the run's fencing epoch is the caller's, the run's cancel flag read
back with it; a claim and a header write are one statement each too. When such a
statement writes nothing (no run row, another epoch) or cannot run, the transactional
path (run row read ``FOR UPDATE`` on PostgreSQL, then the write) decides and raises.
The tables are the ones earlier versions created through SQLAlchemy.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from lightagent.errors import ConfigurationError, StorageError
from lightagent.sql_conn import Database, open_database

from lightagent_flow.stores.base import FaultHook, assemble_record, check_run_id, fenced_out

__all__ = ["SqlLightFlowStore"]

_DDL = [
    "CREATE TABLE IF NOT EXISTS lightflow_runs (run_id VARCHAR(128) NOT NULL, "
    "status VARCHAR(32) NOT NULL, updated_at FLOAT NOT NULL, header TEXT NOT NULL, "
    "cancel_requested BOOLEAN NOT NULL, epoch INTEGER NOT NULL, PRIMARY KEY (run_id))",
    "CREATE TABLE IF NOT EXISTS lightflow_steps (run_id VARCHAR(128) NOT NULL, "
    "name VARCHAR(512) NOT NULL, updated_at FLOAT NOT NULL, record TEXT NOT NULL, "
    "PRIMARY KEY (run_id, name))",
    "CREATE TABLE IF NOT EXISTS lightflow_approvals (run_id VARCHAR(128) NOT NULL, "
    "step VARCHAR(512) NOT NULL, decision TEXT NOT NULL, PRIMARY KEY (run_id, step))",
]


# The fenced step commit on PostgreSQL: the run row locked, the step upserted only while
# the epoch is the caller's (and, with ``header``, the run's header written with it),
# the cancel flag read back; no row: the run has no row or another epoch.
_PG_STEP = (
    "WITH run AS (SELECT epoch, cancel_requested FROM lightflow_runs "
    "WHERE run_id = %s FOR UPDATE), ins AS (INSERT INTO lightflow_steps "
    "(run_id, name, updated_at, record) SELECT %s, %s, %s, %s FROM run "
    "WHERE %s::integer IS NULL OR run.epoch = %s::integer "
    "ON CONFLICT (run_id, name) DO UPDATE SET "
    "updated_at = excluded.updated_at, record = excluded.record RETURNING 1){header} "
    "SELECT run.cancel_requested FROM run WHERE EXISTS (SELECT 1 FROM ins)"
)
_PG_HEADER = (
    ", hdr AS (UPDATE lightflow_runs SET status = %s, updated_at = %s, header = %s "
    "WHERE run_id = %s AND EXISTS (SELECT 1 FROM ins) RETURNING 1)"
)


# json.dumps with an option builds an encoder per call; a step commit reuses this one.
_encode = json.JSONEncoder(ensure_ascii=False).encode


def _url(url: str) -> str:
    return url if "://" in url else f"sqlite:///{url}"


def _sqlite_path(url: str) -> str | None:
    """The file of a SQLite URL (``None`` for an in-memory database)."""
    path = url.split(":///", 1)[1].split("?", 1)[0] if ":///" in url else ""
    return None if path in ("", ":memory:") else path


def _safe(url: str) -> str:
    head, sep, tail = url.partition("://")
    if "@" in tail:
        creds, _, host = tail.rpartition("@")
        return f"{head}{sep}{creds.split(':', 1)[0]}:***@{host}"
    return url


class SqlLightFlowStore:
    """Flow run records in SQLite (a URL or a file path) or PostgreSQL (a URL).

    ``echo`` is kept for the signature of earlier versions, which ran on SQLAlchemy; it
    logs nothing now.
    """

    blocking = True

    def __init__(self, url: str, *, echo: bool = False) -> None:
        if not isinstance(url, str) or not url:
            raise ConfigurationError(
                "LA-CONFIG", f"SqlLightFlowStore needs a URL or a path, got {url!r}"
            )
        self.url = _url(url)
        self._sqlite = self.url.startswith("sqlite")
        path = _sqlite_path(self.url) if self._sqlite else None
        self._db: Database = open_database(
            self.url,
            sqlite_file=path,
            synchronous="FULL",
            busy_timeout_ms=30000,
            needed_by="SqlLightFlowStore",
        )
        lock = self._db.lock_rows
        sql = self._db.sql
        self._q_run_locked = sql(
            f"SELECT epoch, cancel_requested FROM lightflow_runs WHERE run_id = ?{lock}"
        )
        self._q_header = sql(
            "INSERT INTO lightflow_runs (run_id, status, updated_at, header, cancel_requested, "
            "epoch) VALUES (?, ?, ?, ?, ?, 0) ON CONFLICT (run_id) DO UPDATE SET "
            "status = excluded.status, updated_at = excluded.updated_at, header = excluded.header"
        )
        self._q_step = sql(
            "INSERT INTO lightflow_steps (run_id, name, updated_at, record) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (run_id, name) DO UPDATE SET "
            "updated_at = excluded.updated_at, record = excluded.record"
        )
        # The fenced step commit as one statement, its own transaction (SQLite: one write
        # lock, one WAL sync; PostgreSQL: one round trip): the step is written only while
        # the run's epoch is the caller's. On PostgreSQL the run's cancel flag comes back
        # with it; SQLite writes only while no cancel is requested and answers with its
        # row count (a RETURNING clause costs about a tenth of a commit there). Nothing
        # written: no run row, another epoch or a cancel request, and the transactional
        # path decides. SQLite needs 3.35 for RETURNING (the other one-statement writes),
        # and a file (an in-memory database is one connection, which only transactions
        # take turns on).
        self._one_statement = (
            sqlite3.sqlite_version_info >= (3, 35) and path is not None if self._sqlite else True
        )
        self._q_step_fenced = (
            "INSERT INTO lightflow_steps (run_id, name, updated_at, record) "
            "SELECT ?, ?, ?, ? FROM lightflow_runs WHERE run_id = ? "
            "AND (? IS NULL OR epoch = ?) AND NOT cancel_requested "
            "ON CONFLICT (run_id, name) DO UPDATE SET "
            "updated_at = excluded.updated_at, record = excluded.record"
            if self._sqlite
            else _PG_STEP.format(header="")
        )
        # PostgreSQL: an execution's last step and the run's header, one statement too.
        self._q_finish = _PG_STEP.format(header=_PG_HEADER)
        # A fenced header write and a claim, one statement each; no row: the run has no
        # row or another epoch, and the transactional path decides (and raises).
        self._q_header_returning = f"{self._q_header} RETURNING 1"
        self._q_header_fenced = sql(
            "UPDATE lightflow_runs SET status = ?, updated_at = ?, header = ? "
            "WHERE run_id = ? AND epoch = ? RETURNING 1"
        )
        self._q_start = sql(
            "INSERT INTO lightflow_runs (run_id, status, updated_at, header, cancel_requested, "
            "epoch) VALUES (?, ?, ?, ?, ?, 1) ON CONFLICT (run_id) DO UPDATE SET "
            "status = excluded.status, updated_at = excluded.updated_at, "
            "header = excluded.header, epoch = lightflow_runs.epoch + 1 "
            "RETURNING epoch, cancel_requested"
        )
        self._q_claim = sql(
            "UPDATE lightflow_runs SET epoch = epoch + 1 WHERE run_id = ? RETURNING epoch"
        )
        # A new run's header and claim (epoch 1); nothing written: the run exists, or the
        # statement could not run, and the transactional path tells which.
        self._q_create = sql(
            "INSERT INTO lightflow_runs (run_id, status, updated_at, header, cancel_requested, "
            "epoch) VALUES (?, ?, ?, ?, ?, 1) ON CONFLICT (run_id) DO NOTHING"
        )
        # Created on the first write (or a read of a store that exists), never by a read:
        # a mistyped path stays a missing store instead of becoming a new empty one.
        self._file = Path(path) if path is not None else None
        self._ready = False
        self._ready_lock = threading.Lock()
        self._fault: FaultHook | None = None

    def exists(self) -> bool:
        """Whether the store's tables exist (creates nothing)."""
        if self._ready:
            return True
        if self._file is not None and not self._file.is_file():
            return False
        with self._tx(read_only=True, ensure=False) as cur:
            return self._db.has_table(cur, "lightflow_runs")

    def _ensure(self) -> None:
        """Create the tables (and a SQLite file's folder) and migrate them, once."""
        if self._ready:
            return
        with self._ready_lock:
            if self._ready:
                return
            if self._file is not None:
                try:
                    self._file.parent.mkdir(parents=True, exist_ok=True)
                except OSError as exc:
                    raise StorageError(
                        "LA-STORAGE", f"cannot create the folder of flow store {self!r}: {exc}"
                    ) from exc
            for attempt in range(3):
                try:
                    with self._tx(ensure=False) as cur:
                        for statement in _DDL:
                            cur.execute(statement)
                        self._migrate(cur)
                    break
                except StorageError as exc:
                    # Another process created the tables between the check and CREATE.
                    if exc.code != "LA-STORAGE" or attempt == 2:
                        raise
            self._ready = True

    def _readable(self) -> bool:
        """Whether a read has anything to read (it never creates the store)."""
        if not self._ready and self.exists():
            self._ensure()  # an existing store of an older version gets its new columns
        return self._ready

    def _migrate(self, cur: Any) -> None:
        """Add the columns newer versions need to tables an older version created."""
        if "epoch" not in self._db.columns(cur, "lightflow_runs"):
            cur.execute("ALTER TABLE lightflow_runs ADD COLUMN epoch INTEGER NOT NULL DEFAULT 0")

    def __repr__(self) -> str:
        return f"SqlLightFlowStore({_safe(self.url)!r})"

    @contextmanager
    def _tx(self, *, read_only: bool = False, ensure: bool = True) -> Iterator[Any]:
        db = self._db
        if ensure and not read_only:
            self._ensure()
        try:
            with db.transaction(write=not read_only) as cur:
                yield cur
        except db.unavailable as exc:
            raise StorageError(
                "LA-STORAGE-UNAVAILABLE", f"flow store {self!r} failed: {exc}"
            ) from exc
        except db.database_error as exc:
            raise StorageError("LA-STORAGE", f"flow store {self!r} failed: {exc}") from exc

    def close(self) -> None:
        """Close the pooled connections (a later call opens new ones)."""
        self._db.close()

    # -- the store contract --------------------------------------------------

    def _check_epoch(self, cur: Any, run_id: str, epoch: int | None) -> Any:
        # FOR UPDATE (PostgreSQL): a claim and a fenced write on one run serialize.
        cur.execute(self._q_run_locked, (run_id,))
        row = cur.fetchone()
        if epoch is not None and (row is None or row[0] != epoch):
            raise fenced_out(run_id, epoch, None if row is None else row[0])
        return row

    @staticmethod
    def _header_values(run_id: str, header: dict[str, Any]) -> tuple[Any, ...]:
        return (
            run_id,
            str(header.get("status") or "pending"),
            float(header.get("updated_at") or time.time()),
            json.dumps(header, ensure_ascii=False, sort_keys=True),
            False,
        )

    def save_header(self, run_id: str, header: dict[str, Any], *, epoch: int | None = None) -> None:
        """Write (replace) the run's header."""
        check_run_id(run_id)
        values = self._header_values(run_id, header)
        if self._fast():
            if epoch is None:
                rows = self._one_statement_rows(self._q_header_returning, values)
            else:
                rows = self._one_statement_rows(
                    self._q_header_fenced, (values[1], values[2], values[3], run_id, epoch)
                )
            if rows:
                return
        with self._tx() as cur:
            if epoch is not None:
                self._check_epoch(cur, run_id, epoch)
            cur.execute(self._q_header, values)

    def start_run(self, run_id: str, header: dict[str, Any]) -> tuple[int, bool]:
        """Write the run's header and claim it, in one transaction.

        What :meth:`save_header` then :meth:`claim_run` do, with one commit instead of
        two; returns the new epoch and whether a cancel is requested for the run.
        """
        check_run_id(run_id)
        values = self._header_values(run_id, header)
        if self._fast():
            rows = self._one_statement_rows(self._q_start, values)
            if rows:
                return int(rows[0][0]), bool(rows[0][1])
        with self._tx() as cur:
            cur.execute(self._q_header, values)
            row = self._check_epoch(cur, run_id, None)
            epoch = int(row[0] or 0) + 1
            cur.execute(
                self._db.sql("UPDATE lightflow_runs SET epoch = ? WHERE run_id = ?"),
                (epoch, run_id),
            )
        return epoch, bool(row[1])

    def create_run(self, run_id: str, header: dict[str, Any]) -> tuple[int, bool] | None:
        """Write the header of a run the store does not hold yet and claim it, in one commit.

        Returns the epoch and whether a cancel is requested (never, for a new run), or
        ``None`` when the run exists: nothing is written then.
        """
        check_run_id(run_id)
        values = self._header_values(run_id, header)
        if self._fast() and self._one_statement_count(self._q_create, values):
            return 1, False
        # No row back: the run exists, or the statement could not run; decide in a
        # transaction (the insert-if-absent is atomic on both databases).
        with self._tx() as cur:
            cur.execute(self._q_create, values)
            created = cur.rowcount == 1
        return (1, False) if created else None

    def claim_run(self, run_id: str) -> int:
        """Bump and return the run's epoch (the run's header must exist)."""
        check_run_id(run_id)
        if self._fast():
            rows = self._one_statement_rows(self._q_claim, (run_id,))
            if rows:
                return int(rows[0][0])
        with self._tx() as cur:
            row = self._check_epoch(cur, run_id, None)
            if row is None:
                raise StorageError("LA-STORAGE", f"cannot claim run {run_id!r}: it has no header")
            epoch = int(row[0] or 0) + 1
            cur.execute(
                self._db.sql("UPDATE lightflow_runs SET epoch = ? WHERE run_id = ?"),
                (epoch, run_id),
            )
        return epoch

    def commit_step(self, run_id: str, step: dict[str, Any], *, epoch: int | None = None) -> bool:
        """Durably record one step's result (one upsert, one transaction).

        Returns whether a cancel is requested for the run, read in the same transaction.
        """
        return self._commit(run_id, step, epoch, None)

    def finish_run(
        self,
        run_id: str,
        step: dict[str, Any],
        header: dict[str, Any],
        *,
        epoch: int | None = None,
    ) -> bool:
        """Record an execution's last step and the run's final header in one transaction.

        What :meth:`commit_step` then :meth:`save_header` do, with one commit instead of
        two; returns whether a cancel is requested for the run.
        """
        return self._commit(run_id, step, epoch, header)

    def _commit(
        self, run_id: str, step: dict[str, Any], epoch: int | None, header: dict[str, Any] | None
    ) -> bool:
        check_run_id(run_id)
        name = step["name"]
        if self._fault:
            self._fault("before_commit", run_id, name)
        record = _encode(step)
        if self._fast() and self._sqlite and header is None:
            wrote = self._one_statement_count(
                self._q_step_fenced, (run_id, name, time.time(), record, run_id, epoch, epoch)
            )
            if wrote:
                return False  # written, so no cancel was requested
        elif self._fast() and not self._sqlite:
            args: tuple[Any, ...] = (run_id, run_id, name, time.time(), record, epoch, epoch)
            if header is not None:
                values = self._header_values(run_id, header)
                args = (*args, values[1], values[2], values[3], run_id)
            rows = self._one_statement_rows(
                self._q_step_fenced if header is None else self._q_finish, args
            )
            if rows:
                return bool(rows[0][0])
        with self._tx() as cur:
            row = self._check_epoch(cur, run_id, epoch)
            cur.execute(self._q_step, (run_id, name, time.time(), record))
            if header is not None:
                cur.execute(self._q_header, self._header_values(run_id, header))
            if self._fault:
                self._fault("inside_commit", run_id, name)
        if self._fault:
            self._fault("after_commit", run_id, name)
        return bool(row is not None and row[1])

    def _fast(self) -> bool:
        """Whether a write may go as one statement (a fault hook needs the steps apart)."""
        return self._one_statement and self._ready and not self._fault

    def _one_statement_count(self, query: str, args: tuple[Any, ...]) -> int:
        """The row count of one write statement (no rows back), durable on return; 0 as
        for :meth:`_one_statement_rows`."""
        try:
            with self._db.autocommit() as cur:
                cur.execute(query, args)
                return int(cur.rowcount)
        except self._db.unavailable:
            return 0
        except self._db.database_error as exc:
            raise StorageError("LA-STORAGE", f"flow store {self!r} failed: {exc}") from exc

    def _one_statement_rows(self, query: str, args: tuple[Any, ...]) -> list[Any]:
        """The rows of one write statement that is its own transaction, durable on return.

        ``[]`` when it wrote nothing or could not run (a busy SQLite file past the
        timeout, a pooled PostgreSQL connection that died while idle): the caller's
        transactional path then decides, on a fresh connection. Every statement given
        here is an upsert or a fenced update, so running it again there is harmless.
        """
        try:
            with self._db.autocommit() as cur:
                cur.execute(query, args)
                # Every row read: SQLite commits an autocommit statement when it is done.
                return list(cur.fetchall())
        except self._db.unavailable:
            return []
        except self._db.database_error as exc:
            raise StorageError("LA-STORAGE", f"flow store {self!r} failed: {exc}") from exc

    def set_approval(
        self, run_id: str, step: str, decision: dict[str, Any], *, exclusive: bool = False
    ) -> bool:
        """Persist a decision for ``step`` (with ``exclusive``, only when it has none)."""
        check_run_id(run_id)
        text = json.dumps(decision, ensure_ascii=False)
        insert = "INSERT INTO lightflow_approvals (run_id, step, decision) VALUES (?, ?, ?)"
        if exclusive:
            try:  # the primary key makes the first insert win
                with self._tx() as cur:
                    cur.execute(self._db.sql(insert), (run_id, step, text))
            except StorageError as exc:
                if isinstance(exc.__cause__, self._db.integrity):
                    return False
                raise
            return True
        upsert = f"{insert} ON CONFLICT (run_id, step) DO UPDATE SET decision = excluded.decision"
        with self._tx() as cur:
            cur.execute(self._db.sql(upsert), (run_id, step, text))
        return True

    def clear_approvals(self, run_id: str, steps: list[str]) -> None:
        """Forget the decisions of ``steps``."""
        if not steps:
            return
        query = self._db.sql("DELETE FROM lightflow_approvals WHERE run_id = ? AND step = ?")
        with self._tx() as cur:
            cur.executemany(query, [(run_id, step) for step in steps])

    def _set_cancel(self, run_id: str, value: bool) -> None:
        query = self._db.sql("UPDATE lightflow_runs SET cancel_requested = ? WHERE run_id = ?")
        with self._tx() as cur:
            cur.execute(query, (value, run_id))

    def request_cancel(self, run_id: str, reason: str | None = None) -> None:
        """Ask whoever runs ``run_id`` to stop before its next step."""
        self._set_cancel(check_run_id(run_id), True)

    def clear_cancel(self, run_id: str) -> None:
        """Withdraw a cancel request."""
        self._set_cancel(check_run_id(run_id), False)

    def cancel_requested(self, run_id: str) -> bool:
        """Whether a cancel was requested for ``run_id``."""
        if not self._readable():
            return False
        query = self._db.sql("SELECT cancel_requested FROM lightflow_runs WHERE run_id = ?")
        with self._tx(read_only=True) as cur:
            cur.execute(query, (run_id,))
            row = cur.fetchone()
        return bool(row and row[0])

    def _decode(self, text: str, where: str) -> dict[str, Any]:
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise StorageError(
                "LA-STORAGE-CORRUPT", f"{where} is not valid JSON: {exc}", details={"where": where}
            ) from exc
        return data

    def load_run(self, run_id: str) -> dict[str, Any] | None:
        """The assembled record, or ``None`` when there is no such run."""
        check_run_id(run_id)
        if not self._readable():
            return None
        sql = self._db.sql
        with self._tx(read_only=True) as cur:
            cur.execute(
                sql("SELECT header, cancel_requested FROM lightflow_runs WHERE run_id = ?"),
                (run_id,),
            )
            row = cur.fetchone()
            if row is None:
                return None
            cur.execute(sql("SELECT name, record FROM lightflow_steps WHERE run_id = ?"), (run_id,))
            step_rows = cur.fetchall()
            cur.execute(
                sql("SELECT step, decision FROM lightflow_approvals WHERE run_id = ?"), (run_id,)
            )
            approval_rows = cur.fetchall()
        header = self._decode(row[0], f"run {run_id} header")
        step_map = {n: self._decode(r, f"run {run_id} step {n}") for n, r in step_rows}
        approval_map = {s: self._decode(d, f"run {run_id} approval {s}") for s, d in approval_rows}
        return assemble_record(header, step_map, approval_map, bool(row[1]))

    def list_runs(self) -> list[dict[str, Any]]:
        """Every run's header, most recently updated first."""
        if not self._readable():
            return []
        with self._tx(read_only=True) as cur:
            cur.execute("SELECT run_id, header FROM lightflow_runs ORDER BY updated_at DESC")
            rows = cur.fetchall()
        return [self._decode(h, f"run {rid} header") for rid, h in rows]

    def save_run(self, run_id: str, record: dict[str, Any]) -> None:
        """Write a whole record (the seeds' API): header, steps and approvals."""
        header = {
            k: v for k, v in record.items() if k not in ("steps", "approvals", "cancel_requested")
        }
        header.setdefault("run_id", run_id)
        self.save_header(run_id, header)
        for step in record.get("steps") or ():
            self.commit_step(run_id, step)
        for name, decision in (record.get("approvals") or {}).items():
            self.set_approval(run_id, name, decision)
