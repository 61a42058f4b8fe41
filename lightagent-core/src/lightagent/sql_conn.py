"""Connections for the SQL session store, on the database drivers themselves.

SQLite goes through the standard library's ``sqlite3``; PostgreSQL through ``psycopg``
3 (the ``postgres`` extra). Both sit behind one small pool of open connections, so an
append costs its statements and its commit, nothing more. Writes begin with ``BEGIN
IMMEDIATE`` on SQLite (the write lock up front: a deferred transaction that reads then
writes gets ``SQLITE_BUSY`` in WAL mode despite the busy timeout) and ``BEGIN`` on
PostgreSQL, where the session row is then read ``FOR UPDATE``.

A pooled PostgreSQL connection may have died while it sat idle (a server restart); one
that fails on the first statement of a transaction has written nothing, so it is
dropped and the statement is tried again on the next connection, as a pre-ping would
do without paying a round trip per checkout.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["Database", "PostgresDatabase", "SqliteDatabase", "open_database"]


class Database:
    """A pool of DB-API connections to one database, and what its dialect needs."""

    dialect = ""
    #: The driver's exceptions for a database that cannot be reached or used.
    unavailable: tuple[type[BaseException], ...]
    #: The driver's exception for a broken constraint (a concurrent writer won).
    integrity: type[BaseException]
    #: The driver's base exception.
    database_error: type[BaseException]

    def __init__(self, *, single: bool = False) -> None:
        self._idle: list[tuple[Any, int]] = []
        self._lock = threading.Lock()
        self._generation = 0
        # An in-memory SQLite database lives in one connection: transactions take turns on it.
        self._single = threading.Lock() if single else None

    # -- to be provided by each dialect ------------------------------------------------
    def _connect(self) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def sql(self, text: str) -> str:
        """``text`` written with ``?`` placeholders, in the driver's own style."""
        return text

    begin_write = "BEGIN"

    # -- pool --------------------------------------------------------------------------
    def _take(self) -> tuple[Any, int, bool]:
        """A connection, the pool generation it belongs to, and whether it sat idle."""
        with self._lock:
            if self._idle:
                conn, generation = self._idle.pop()
                return conn, generation, True
            generation = self._generation
        return self._connect(), generation, False

    def _give(self, conn: Any, generation: int) -> None:
        with self._lock:
            if generation == self._generation:  # not closed since it was taken
                self._idle.append((conn, generation))
                return
        _close_quietly(conn)

    @contextmanager
    def transaction(self, *, write: bool) -> Iterator[Any]:
        """A cursor inside one transaction: committed on success, rolled back on error."""
        if self._single is None:
            with self._transaction(write) as cur:
                yield cur
            return
        with self._single, self._transaction(write) as cur:
            yield cur

    def has_table(self, cur: Any, name: str) -> bool:
        """Whether ``name`` exists (inside a transaction of this database)."""
        if self.dialect == "sqlite":
            cur.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,))
        else:
            cur.execute("SELECT to_regclass(%s) IS NOT NULL", (name,))
        row = cur.fetchone()
        return bool(row and row[0])

    def columns(self, cur: Any, table: str) -> set[str]:
        """The column names of ``table``."""
        if self.dialect == "sqlite":
            cur.execute(f"PRAGMA table_info({table})")
            return {row[1] for row in cur.fetchall()}
        cur.execute(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_name = %s AND table_schema = current_schema()",
            (table,),
        )
        return {row[0] for row in cur.fetchall()}

    @contextmanager
    def _transaction(self, write: bool) -> Iterator[Any]:
        while True:
            conn, generation, reused = self._take()
            cur = conn.cursor()
            try:
                cur.execute(self.begin_write if write else "BEGIN")
            except self.unavailable:
                _close_quietly(conn)
                if reused:
                    continue  # died while idle: nothing was sent, take the next one
                raise
            break
        try:
            yield cur
            cur.execute("COMMIT")
        except BaseException:
            try:
                cur.execute("ROLLBACK")
            except Exception:
                _close_quietly(conn)  # a broken connection never goes back to the pool
            else:
                self._give(conn, generation)
            raise
        self._give(conn, generation)

    @contextmanager
    def autocommit(self) -> Iterator[Any]:
        """A cursor outside any transaction: each statement commits on its own.

        For one statement that is a whole transaction (one round trip instead of three).
        A connection that fails here is closed, never given back to the pool.
        """
        conn, generation, _ = self._take()
        try:
            yield conn.cursor()
        except self.unavailable:
            _close_quietly(conn)
            raise
        except BaseException:
            self._give(conn, generation)
            raise
        self._give(conn, generation)

    def close(self) -> None:
        """Close every idle connection; those in use close when given back."""
        with self._lock:
            idle, self._idle = self._idle, []
            self._generation += 1
        for conn, _ in idle:
            _close_quietly(conn)


def _close_quietly(conn: Any) -> None:
    try:
        conn.close()
    except Exception:
        pass


class SqliteDatabase(Database):
    """``sqlite3`` connections in autocommit mode (transactions are ours), WAL, a busy timeout."""

    dialect = "sqlite"
    begin_write = "BEGIN IMMEDIATE"

    def __init__(self, path: str, *, synchronous: str, busy_timeout_ms: int) -> None:
        import sqlite3

        super().__init__(single=path == ":memory:")
        self.path = path
        self.synchronous = synchronous
        self.busy_timeout_ms = busy_timeout_ms
        self.unavailable = (sqlite3.OperationalError,)
        self.integrity = sqlite3.IntegrityError
        self.database_error = sqlite3.DatabaseError

    def _connect(self) -> Any:
        import sqlite3

        conn = sqlite3.connect(
            self.path,
            timeout=self.busy_timeout_ms / 1000,
            isolation_level=None,
            check_same_thread=False,  # pooled: one thread at a time, never two at once
        )
        try:
            conn.execute(f"PRAGMA busy_timeout={int(self.busy_timeout_ms)}")
            _enable_wal(conn, self.busy_timeout_ms)
            conn.execute(f"PRAGMA synchronous={self.synchronous}")
        except BaseException:
            conn.close()
            raise
        return conn


class PostgresDatabase(Database):
    """``psycopg`` 3 connections in autocommit mode (transactions are ours)."""

    dialect = "postgresql"

    def __init__(self, conninfo: str, connect_timeout: float) -> None:
        import psycopg

        super().__init__()
        self.conninfo = conninfo
        self.connect_timeout = connect_timeout
        self.unavailable = (psycopg.OperationalError, psycopg.InterfaceError)
        self.integrity = psycopg.IntegrityError
        self.database_error = psycopg.DatabaseError

    def sql(self, text: str) -> str:
        return text.replace("?", "%s")

    def _connect(self) -> Any:
        import psycopg

        try:
            return psycopg.connect(
                self.conninfo, autocommit=True, connect_timeout=max(1, int(self.connect_timeout))
            )
        except psycopg.InterfaceError as exc:  # a malformed URL or option
            raise psycopg.OperationalError(str(exc)) from exc


def open_database(
    url: str, *, sqlite_file: str | None, synchronous: str, busy_timeout_ms: int
) -> Database:
    """The pool for a ``sqlite:///…`` or ``postgresql[+psycopg]://…`` URL."""
    if url.startswith("sqlite"):
        return SqliteDatabase(
            sqlite_file if sqlite_file is not None else _sqlite_target(url),
            synchronous=synchronous,
            busy_timeout_ms=busy_timeout_ms,
        )
    scheme, _, rest = url.partition("://")
    if scheme.split("+", 1)[0] in ("postgresql", "postgres") and scheme in (
        "postgresql",
        "postgres",
        "postgresql+psycopg",
    ):
        from lightagent.extras import require

        require("psycopg", "postgres", "SqlSessionStore on PostgreSQL")
        return PostgresDatabase(f"postgresql://{rest}", busy_timeout_ms / 1000)
    from lightagent.errors import ConfigurationError

    raise ConfigurationError(
        "LA-CONFIG",
        f"SqlSessionStore supports SQLite and PostgreSQL URLs, not {scheme}://.",
        hint="Use 'sqlite:///path/to/sessions.db' or 'postgresql+psycopg://user@host/db'.",
    )


def _sqlite_target(url: str) -> str:
    """What ``sqlite3.connect`` opens for a SQLite URL without a plain file path."""
    rest = url.split("://", 1)[-1].lstrip("/") if ":///" not in url else url.split(":///", 1)[1]
    return rest.split("?", 1)[0] or ":memory:"


def _enable_wal(conn: Any, busy_timeout_ms: int) -> None:
    # Switching a fresh file to WAL needs an exclusive lock, and SQLite answers "database
    # is locked" at once (no busy handler) while another process opens or switches the
    # same file; wait and try again within the busy timeout instead of failing the store.
    import sqlite3

    deadline = time.monotonic() + busy_timeout_ms / 1000
    delay = 0.005
    while True:
        try:
            row = conn.execute("PRAGMA journal_mode=WAL").fetchone()
            # SQLite reports the mode still in force when it could not switch.
            mode = str(row[0]).lower() if row else ""
            if mode in ("wal", "memory") or time.monotonic() >= deadline:
                return
        except sqlite3.OperationalError as exc:
            text = str(exc).lower()
            if ("locked" not in text and "busy" not in text) or time.monotonic() >= deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.1)
