"""Pooled connections for the SQL stores, on the database drivers themselves.

SQLite runs here on the standard library's ``sqlite3``; another database on the plugin of
its dialect (PostgreSQL: lightagent-postgres), whose session store registered for the URL
scheme has ``open_database(url, *, busy_timeout_ms, needed_by)``. A :class:`Database` is
a small pool of open connections (an append costs its statements and its commit) that
also answers what dialects differ on, so the stores on it write their logic once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["Database", "SqliteDatabase", "open_database"]


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
    #: Appended to a ``SELECT`` of a row the transaction then updates, where rows lock.
    lock_rows = ""
    #: Whether :meth:`append_guarded` works on this database.
    guarded_appends = False

    def has_table(self, cur: Any, name: str) -> bool:
        """Whether ``name`` exists (inside a transaction of this database)."""
        raise NotImplementedError

    def columns(self, cur: Any, table: str) -> set[str]:
        """The column names of ``table``."""
        raise NotImplementedError

    def json_text(self, column: str, *path: str) -> str:
        """The SQL text of the string at ``path`` of the JSON in ``column``."""
        raise NotImplementedError

    def append_guarded(
        self, tables: tuple[str, str], head: tuple[Any, ...], rows: list[Any]
    ) -> int:
        """One statement, its own transaction: bump a session row (``head``: new last, time,
        id, expected last) and insert ``rows`` only if it still ended at the expected one.
        The rows inserted; 0 when the connection failed (a transaction then decides)."""
        raise NotImplementedError

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
    # The write lock up front: a deferred transaction that reads then writes gets
    # SQLITE_BUSY in WAL mode despite the busy timeout.
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

    def has_table(self, cur: Any, name: str) -> bool:
        """Whether ``name`` exists (inside a transaction of this database)."""
        cur.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,))
        return cur.fetchone() is not None

    def columns(self, cur: Any, table: str) -> set[str]:
        """The column names of ``table``."""
        cur.execute(f"PRAGMA table_info({table})")
        return {row[1] for row in cur.fetchall()}

    def json_text(self, column: str, *path: str) -> str:
        """``json_extract`` of ``path`` (plain names: no caller text reaches the statement)."""
        return f"json_extract({column}, '$.{'.'.join(path)}')"

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


def open_database(
    url: str,
    *,
    sqlite_file: str | None = None,
    synchronous: str = "FULL",
    busy_timeout_ms: int = 30000,
    needed_by: str = "SqlSessionStore",
) -> Database:
    """The pool for a ``sqlite:///…`` URL, or another scheme's from its dialect's plugin
    (PostgreSQL without lightagent-postgres: ``LA-MISSING-EXTRA``)."""
    scheme = url.partition("://")[0].lower()
    if scheme.startswith("sqlite"):
        return SqliteDatabase(
            sqlite_file if sqlite_file is not None else _sqlite_target(url),
            synchronous=synchronous,
            busy_timeout_ms=busy_timeout_ms,
        )
    from lightagent.errors import ConfigurationError, MissingExtraError
    from lightagent.extras import missing_extra
    from lightagent.plugins import get_registry
    from lightagent.providers import find_provider

    try:
        _, store = find_provider(get_registry(), "session_store", f"{scheme}://", needed_by)
    except MissingExtraError as exc:  # say what needed it: a memory pool, a flow store …
        what, details = f"{needed_by} on {scheme}://", exc.details
        raise missing_extra(what, details["distribution"], details["extra"]) from None
    except ConfigurationError:
        store = None
    opener = getattr(store, "open_database", None)
    if not callable(opener):
        raise ConfigurationError(
            "LA-CONFIG",
            f"{needed_by} cannot open {scheme}:// URLs: no installed plugin handles them.",
            hint="Use 'sqlite:///path/to/sessions.db', or 'postgresql+psycopg://user@host/db' "
            "with pip install 'lightagent-core[postgres]'.",
        )
    return opener(url, busy_timeout_ms=busy_timeout_ms, needed_by=needed_by)


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
