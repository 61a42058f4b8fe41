"""The task-graph store's connection and transactions: statements, retries, queued events.

:class:`StoreTransactions` opens the engine, fills each statement's dialect parts in
once, and runs a function in one transaction: on SQLite in the writers' turn with
``BEGIN IMMEDIATE``, or as a plain WAL reader for reads; retried on deadlocks, lock
timeouts and dropped connections; with the events the transaction recorded written last.
"""

from __future__ import annotations

import collections
import contextlib
import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import sqlalchemy as sa
from lightagent.errors import StorageError

from lightagent_dag.errors import DAGError
from lightagent_dag.sql.common import collecting_events, discard_events, event, flush_events
from lightagent_dag.sql.schema import READ_OPTION, SCHEMA_VERSION, build_engine, metadata, now_sql
from lightagent_dag.sql.turns import WriterTurns

__all__ = ["StoreTransactions"]

# Failures worth another try on a fresh connection (a refused connection is not one).
_TRANSIENT = (
    "deadlock",
    "could not serialize",
    "database is locked",
    "terminating connection",
    "server closed the connection",
    "connection is closed",
    "consuming input failed",
    "connection already closed",
)

T = TypeVar("T")


class StoreTransactions:
    """The engine, the statement texts and the transactions a SQL task-graph store runs on."""

    def __init__(
        self,
        url: str,
        *,
        engine: sa.Engine | None = None,
        create: bool = True,
        **engine_kwargs: Any,
    ) -> None:
        try:
            self.engine = engine or build_engine(str(url), **engine_kwargs)
        except (ValueError, sa.exc.ArgumentError) as exc:
            raise StorageError("LA-CONFIG", f"invalid task-graph store URL {url!r}: {exc}") from exc
        except ImportError as exc:
            raise StorageError(
                "LA-MISSING-EXTRA",
                f"the database driver for {str(url).split(':', 1)[0]!r} is not installed ({exc.name})",
                hint="For PostgreSQL: pip install 'lightagent-dag[postgres]' and use postgresql+psycopg://",
            ) from exc
        self.url = url
        self.dialect = self.engine.dialect.name
        self.now = now_sql(self.dialect)
        self.pg = self.dialect == "postgresql"
        database = self.engine.url.database if self.dialect == "sqlite" else None
        self._turns = WriterTurns(database) if database else None
        self._texts: dict[str, sa.TextClause] = {}
        self._strings: dict[str, str] = {}
        self._driver_texts: dict[str, str] = {}
        # Events for the next transaction (defer_event); deque appends are thread-safe.
        self._deferred: collections.deque[tuple[str, str | None, str, dict[str, Any]]] = (
            collections.deque()
        )
        #: Writes refused by fencing in this process (each one also leaves a ``dag.attempt.fenced`` event).
        self.fenced_rejections = 0
        if create:
            self.create_schema()

    def q(self, sql: str) -> sa.TextClause:
        """SQL text with ``{now}`` (database clock) and ``{lock}`` (row lock on PostgreSQL) filled in."""
        # Built once per statement text: parsing the bind names costs more than running
        # a small statement on SQLite, and a TextClause is never changed once made.
        clause = self._texts.get(sql)
        if clause is None:
            clause = sa.text(self.sql_text(sql))
            if len(self._texts) < 4096:  # statements with IN-lists vary; keep the cache bounded
                self._texts[sql] = clause
        return clause

    def driver_text(self, sql: str) -> str:
        """The statement of :meth:`q` in the driver's own parameter style (``%(name)s`` for psycopg)."""
        text = self._driver_texts.get(sql)
        if text is None:
            if self.pg:
                text = str(self.q(sql).compile(dialect=self.engine.dialect))
            else:
                text = self.sql_text(sql)  # sqlite3 takes :name as it is
            if len(self._driver_texts) < 4096:
                self._driver_texts[sql] = text
        return text

    def sql_text(self, sql: str) -> str:
        """The statement of :meth:`q` as a string with ``:name`` parameters."""
        text = self._strings.get(sql)
        if text is None:
            text = sql.replace("{now}", self.now).replace(
                "{lock}", " FOR UPDATE" if self.pg else ""
            )
            if len(self._strings) < 4096:
                self._strings[sql] = text
        return text

    @contextmanager
    def _conn(self, read: bool = False) -> Iterator[sa.Connection]:
        try:
            if read and not self.pg:
                # A WAL reader sees a snapshot and waits for no writer: no writer turn, and
                # a deferred BEGIN (see schema.build_engine), so a read never stalls behind
                # a writer — not even one frozen mid-transaction.
                with self.engine.connect().execution_options(**{READ_OPTION: True}) as conn:
                    with conn.begin():
                        yield conn
                return
            with self._turns.turn() if self._turns else contextlib.nullcontext():
                with self.engine.begin() as conn:
                    yield conn
        except sa.exc.OperationalError as exc:
            code = "LA-STORAGE-UNAVAILABLE" if self._unreachable(exc) else "LA-STORAGE"
            raise StorageError(
                code, f"task-graph store failed: {str(exc.orig or exc).strip()[:300]}"
            ) from exc
        except sa.exc.DBAPIError as exc:
            raise StorageError(
                "LA-STORAGE", f"task-graph store failed: {str(exc.orig or exc).strip()[:300]}"
            ) from exc

    @staticmethod
    def _unreachable(exc: sa.exc.OperationalError) -> bool:
        text = str(exc.orig or exc).lower()
        return any(
            s in text for s in ("connection", "could not connect", "server closed", "terminating")
        )

    def transaction(
        self, fn: Callable[[sa.Connection], T], *, retries: int = 4, read: bool = False
    ) -> T:
        """Run ``fn(conn)`` in one transaction, retrying deadlocks, lock timeouts and dropped connections.

        Retrying after a dropped connection is safe even when the first try had
        committed: claims and creates are idempotent or merely cost an attempt, and
        every attempt write is fenced, so a repeat is refused instead of applied twice.
        ``read=True`` promises ``fn`` writes nothing: on SQLite it then runs as a plain
        WAL reader, outside the writers' turns, and carries no queued event.
        """
        once = self._read_once if read else self._write_once
        for attempt in range(retries + 1):
            try:
                return once(fn)
            except StorageError as exc:
                transient = any(s in str(exc).lower() for s in _TRANSIENT)
                if not transient or attempt == retries:
                    raise
                time.sleep(random.uniform(0.01, 0.05) * (2**attempt))
        raise AssertionError("unreachable")

    def _write_once(self, fn: Callable[[sa.Connection], T]) -> T:
        carried: list[tuple[str, str | None, str, dict[str, Any]]] = []
        try:
            with self._conn() as conn:
                # Events wait for the end of the transaction (see common.event).
                collecting_events(conn)
                try:
                    # Queued events first: they were recorded before this change.
                    carried = self._take_deferred()
                    for run, task, type_, data in carried:
                        event(self, conn, run, type_, data, task)
                    result = fn(conn)
                    flush_events(self, conn)
                finally:
                    # A connection invalidated by a disconnect refuses even .info;
                    # its leftovers are harmless (the next transaction starts afresh).
                    with contextlib.suppress(sa.exc.SQLAlchemyError):
                        discard_events(conn)
            return result
        except BaseException:
            self._deferred.extendleft(reversed(carried))  # not written: the next one carries them
            raise

    def _read_once(self, fn: Callable[[sa.Connection], T]) -> T:
        with self._conn(read=True) as conn:
            return fn(conn)

    def defer_event(
        self, run_id: str, type_: str, data: dict[str, Any], task_id: str | None = None
    ) -> None:
        """Queue an event for the next transaction this store commits (no write of its own).

        For audit records that need not be atomic with a change: they ride along with
        the attempt's next write instead of costing a transaction each.
        """
        self._deferred.append((run_id, task_id, type_, dict(data)))

    @property
    def deferred_events(self) -> int:
        """How many queued events wait for the next transaction."""
        return len(self._deferred)

    def flush_deferred(self) -> None:
        """Write queued events now, if there are any."""
        if self._deferred:
            self.transaction(lambda c: None)

    def _take_deferred(self) -> list[tuple[str, str | None, str, dict[str, Any]]]:
        taken = []
        while True:
            try:
                taken.append(self._deferred.popleft())
            except IndexError:
                return taken

    def create_schema(self) -> None:
        """Create the tables if needed and check the schema version (safe with concurrent starters)."""

        def create(conn: sa.Connection) -> None:
            if self.pg:
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(8140223)"))
            metadata.create_all(conn, checkfirst=True)
            # Indexes added since a store was created (create_all skips existing tables).
            for table in metadata.tables.values():
                for index in table.indexes:
                    index.create(conn, checkfirst=True)
            row = conn.execute(
                sa.text("SELECT value FROM dag_meta WHERE key='schema_version'")
            ).first()
            if row is None:
                conn.execute(
                    sa.text("INSERT INTO dag_meta(key, value) VALUES ('schema_version', :v)"),
                    {"v": str(SCHEMA_VERSION)},
                )
            elif int(row[0]) != SCHEMA_VERSION:
                raise DAGError(
                    "LA-DAG-SCHEMA-MISMATCH",
                    f"store schema version {row[0]} is not {SCHEMA_VERSION} (lightagent-dag {SCHEMA_VERSION})",
                )

        self.transaction(create)

    def close(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()
        if self._turns is not None:
            self._turns.close()

    def db_time(self) -> float:
        """The database clock, in Unix seconds."""
        return self.transaction(lambda c: float(c.execute(self.q("SELECT {now}")).scalar_one()))
