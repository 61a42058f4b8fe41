"""``SqlSessionStore``: session logs in SQL, on the drivers themselves.

Two tables: ``sessions`` (one row per session with its last sequence, the optimistic
concurrency guard) and ``session_events`` (primary key ``(session_id, sequence)``, a
second guard). An append reads and bumps the session row in one write transaction —
``BEGIN IMMEDIATE`` on SQLite, a row lock where the database has them — so a stale
``expected_sequence`` gets ``LA-STORAGE-CONFLICT`` and two writers never interleave.
Where the dialect can, an append that names its ``expected_sequence`` (as a run's do)
is one guarded statement instead. SQLite runs on the standard library's ``sqlite3``;
PostgreSQL is lightagent-postgres's dialect (the ``postgres`` extra), reached through
:func:`lightagent.sql_conn.open_database`. The tables are the ones earlier versions
created through SQLAlchemy, so existing databases carry on.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from lightagent.errors import ConfigurationError, StorageError
from lightagent.events.model import SessionEvent
from lightagent.events.store import (
    EventInput,
    SessionInfo,
    SessionStoreBase,
    conflict_error,
    dumps_event,
    path_error,
    validate_session_id,
)
from lightagent.sql_conn import Database, open_database

__all__ = ["DEFAULT_PATH", "SqlSessionStore", "SqliteSessionStore"]

#: Where ``SqliteSessionStore()`` (and ``session_store="sqlite"``) keeps its database.
DEFAULT_PATH = ".lightagent/sessions.sqlite3"

_INFO = "session_id, last_sequence, created_at, updated_at, metadata"
#: The most events one guarded statement appends; larger batches take the transaction.
_ONE_STATEMENT_MAX = 200


class SqlSessionStore(SessionStoreBase):
    """Sessions in ``sqlite:///path`` or (with lightagent-postgres) ``postgresql+psycopg://…``.

    The database file and tables are created on the first write, never by a read (a read
    of a store that does not exist finds nothing). A SQLite file's folder must exist:
    ``create_dirs=True`` creates missing folders (the default location
    ``.lightagent/sessions.sqlite3`` always may); otherwise a missing one is
    ``LA-STORAGE-NOT-FOUND`` naming it. ``table_prefix`` lets several stores share one
    database. ``synchronous`` is SQLite's durability pragma (``FULL`` by default;
    ``NORMAL`` in WAL mode may lose the last commits on power loss, never on a crash).
    ``busy_timeout_ms`` bounds the wait for another writer's lock (and, on PostgreSQL,
    for a connection). ``engine_options`` is kept for the signature of earlier versions,
    which ran on SQLAlchemy; anything passed in it is refused.
    """

    def __init__(
        self,
        url: str,
        *,
        table_prefix: str = "",
        synchronous: str = "FULL",
        busy_timeout_ms: int = 30000,
        engine_options: dict[str, Any] | None = None,
        create_dirs: bool | None = None,
    ) -> None:
        if not isinstance(url, str) or "://" not in url:
            raise ConfigurationError(
                "LA-CONFIG",
                f"SqlSessionStore needs a database URL, not {url!r}.",
                hint="Use 'sqlite:///path/to/sessions.db' or 'postgresql+psycopg://user@host/db'.",
            )
        if synchronous.upper() not in ("OFF", "NORMAL", "FULL", "EXTRA"):
            raise ConfigurationError(
                "LA-CONFIG", f"Unknown SQLite synchronous mode {synchronous!r}."
            )
        if table_prefix and not table_prefix.replace("_", "").isalnum():
            raise ConfigurationError(
                "LA-CONFIG", f"table_prefix must be alphanumeric, not {table_prefix!r}."
            )
        if engine_options:
            raise ConfigurationError(
                "LA-CONFIG",
                "SqlSessionStore no longer takes engine_options: it runs on the database "
                "driver, not SQLAlchemy.",
                hint="Drop engine_options; use busy_timeout_ms and synchronous.",
            )
        self.url = url
        self._is_sqlite = url.startswith("sqlite")
        self._file = _sqlite_file(url) if self._is_sqlite else None
        if create_dirs is None:  # only the built-in default location makes its own folder
            create_dirs = self._file is not None and self._file == Path(DEFAULT_PATH)
        self.create_dirs = create_dirs
        self._db: Database = open_database(
            url,
            sqlite_file=str(self._file) if self._file is not None else None,
            synchronous=synchronous.upper(),
            busy_timeout_ms=busy_timeout_ms,
        )
        self._define(table_prefix)
        self._ready = False
        self._ready_lock = threading.Lock()

    def _define(self, prefix: str) -> None:
        db = self._db
        s, e = f"{prefix}sessions", f"{prefix}session_events"
        self._tables = (s, e)
        # The same tables (and index name) as the SQLAlchemy schema of earlier versions.
        self._ddl = [
            f"CREATE TABLE IF NOT EXISTS {s} (session_id VARCHAR(200) NOT NULL, "
            "last_sequence INTEGER NOT NULL, created_at FLOAT, updated_at FLOAT, "
            "metadata TEXT, PRIMARY KEY (session_id))",
            f"CREATE INDEX IF NOT EXISTS ix_{s}_updated_at ON {s} (updated_at)",
            f"CREATE TABLE IF NOT EXISTS {e} (session_id VARCHAR(200) NOT NULL, "
            "sequence INTEGER NOT NULL, event_id VARCHAR(64) NOT NULL, "
            "type VARCHAR(100) NOT NULL, timestamp FLOAT, payload TEXT NOT NULL, "
            "PRIMARY KEY (session_id, sequence))",
            # The owner's user in each first event: a scoped listing reads only its sessions.
            f"DROP INDEX IF EXISTS ix_{e}_owner",  # its jsonb cast refused a \u0000
            f"CREATE INDEX IF NOT EXISTS ix_{e}_owner_user ON {e} "
            f"(({db.json_text('payload', 'data', 'owner', 'user_id')})) WHERE sequence = 1",
        ]
        sql = db.sql
        self._q_last_locked = sql(
            f"SELECT last_sequence FROM {s} WHERE session_id = ?{db.lock_rows}"
        )
        self._q_last = sql(f"SELECT last_sequence FROM {s} WHERE session_id = ?")
        self._q_new_session = sql(
            f"INSERT INTO {s} (session_id, last_sequence, created_at, updated_at, metadata) "
            "VALUES (?, ?, ?, ?, ?)"
        )
        self._q_bump = sql(
            f"UPDATE {s} SET last_sequence = ?, updated_at = ? "
            "WHERE session_id = ? AND last_sequence = ?"
        )
        self._q_insert = sql(
            f"INSERT INTO {e} (session_id, sequence, event_id, type, timestamp, payload) "
            "VALUES (?, ?, ?, ?, ?, ?)"
        )
        self._q_events = sql(
            f"SELECT sequence, payload FROM {e} WHERE session_id = ? AND sequence > ? "
            "ORDER BY sequence"
        )
        self._q_info = sql(f"SELECT {_INFO} FROM {s} WHERE session_id = ?")
        self._q_list = sql(
            f"SELECT {_INFO} FROM {s} ORDER BY updated_at DESC, session_id LIMIT ? OFFSET ?"
        )
        self._q_delete_events = sql(f"DELETE FROM {e} WHERE session_id = ?")
        self._q_delete = sql(f"DELETE FROM {s} WHERE session_id = ?")

    # -- connections ------------------------------------------------------------

    def exists(self) -> bool:
        """Whether the store exists: its database (file) is there and holds the tables.

        Never creates anything; reads of a store that does not exist finds nothing.
        """
        if self._ready:
            return True
        if self._file is not None and not self._file.is_file():
            return False
        with self._read() as cur:
            return self._db.has_table(cur, self._tables[0])

    def _readable(self) -> bool:
        """Whether there is anything to read (a read never creates the database or tables)."""
        if not self._ready and self.exists():
            self._ready = True
        return self._ready

    def _ensure_tables(self) -> None:
        if self._ready:
            return
        with self._ready_lock:
            if self._ready:
                return
            if self._file is not None:
                self._check_folder(self._file)  # on first write: building a store writes nothing
            for attempt in range(3):
                try:
                    # In a write transaction: a deferred check-then-CREATE deadlocks in WAL.
                    with self._write_tx() as cur:
                        for statement in self._ddl:
                            cur.execute(statement)
                    break
                except StorageError:
                    raise
                except self._db.database_error:
                    # Another process created the tables between the check and CREATE.
                    if attempt == 2:
                        raise
            self._ready = True

    def _check_folder(self, file: Path) -> None:
        """The database file's folder must exist (or be created with ``create_dirs=True``)."""
        folder = file.parent
        if folder.is_dir():
            return
        if self.create_dirs:
            try:
                folder.mkdir(parents=True, exist_ok=True)
                return
            except OSError as exc:
                raise path_error(
                    exc, f"cannot create the folder {folder} of the session database"
                ) from exc
        blocker = next((p for p in [folder, *folder.parents] if p.exists()), None)
        if blocker is not None and not blocker.is_dir():
            raise StorageError(
                "LA-STORAGE",
                f"Cannot create the session database {file}: {blocker} is a file, in the way of its folder.",
                hint="Move the file away or choose another path.",
                details={"path": str(file), "in_the_way": str(blocker)},
            )
        raise StorageError(
            "LA-STORAGE-NOT-FOUND",
            f"The folder {folder} of the session database {file} does not exist.",
            hint="Create the folder, or pass create_dirs=True to create missing folders.",
            details={"path": str(file), "missing_folder": str(folder)},
        )

    @contextmanager
    def _write_tx(self) -> Iterator[Any]:
        try:
            with self._db.transaction(write=True) as cur:
                yield cur
        except self._db.unavailable as exc:
            raise self._unavailable(exc) from exc

    @contextmanager
    def _write(self) -> Iterator[Any]:
        self._ensure_tables()
        with self._write_tx() as cur:
            yield cur

    @contextmanager
    def _read(self) -> Iterator[Any]:
        try:
            with self._db.transaction(write=False) as cur:
                yield cur
        except self._db.unavailable as exc:
            raise self._unavailable(exc) from exc

    def _unavailable(self, exc: BaseException) -> StorageError:
        cause = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        if self._file is not None and "unable to open" in cause:
            cause += _why_unopenable(self._file)
        return StorageError(
            "LA-STORAGE-UNAVAILABLE",
            f"The session database {_safe_url(self.url)} failed: {cause}",
            hint=(
                "Check the file, its folder and their permissions (and the disk)."
                if self._file is not None
                else None
            ),
            details={"url": _safe_url(self.url), "error_type": type(exc).__name__},
        )

    # -- append ----------------------------------------------------------------

    def append(
        self,
        session_id: str,
        events: Iterable[EventInput],
        *,
        expected_sequence: int | None = None,
    ) -> list[SessionEvent]:
        """Append atomically in one write transaction; stale ``expected_sequence`` conflicts."""
        validate_session_id(session_id)
        items = list(events)
        for attempt in range(3):
            try:
                return self._append_once(session_id, items, expected_sequence)
            except self._db.integrity as exc:
                # Two writers created the same session (or raced a sequence) at once.
                if expected_sequence is not None or attempt == 2:
                    actual = self.last_sequence(session_id)
                    raise conflict_error(session_id, expected_sequence, actual) from exc
        raise AssertionError("unreachable")  # pragma: no cover

    def _append_once(
        self, session_id: str, items: list[EventInput], expected: int | None
    ) -> list[SessionEvent]:
        # expected 0 opens a session (no row to bump): the transactional path, prepared once.
        # Else, where the dialect can, one statement bumps the row still at ``expected`` and
        # inserts: a whole transaction in one round trip. When it inserts nothing (a new
        # session, a conflict) or cannot run, the transaction below decides.
        if (
            self._db.guarded_appends
            and self._ready
            and isinstance(expected, int)
            and not isinstance(expected, bool)
            and expected > 0
            and 0 < len(items) <= _ONE_STATEMENT_MAX
        ):
            prepared = self._prepare(session_id, items, expected)
            head = (prepared[-1].sequence, time.time(), session_id, expected)
            rows = _rows(session_id, prepared)
            if self._db.append_guarded(self._tables, head, rows) == len(rows):
                return prepared
        with self._write() as cur:
            cur.execute(self._q_last_locked, (session_id,))
            row = cur.fetchone()
            last = row[0] if row is not None else 0
            self._check_expected(session_id, expected, last)
            prepared = self._prepare(session_id, items, last)
            if not prepared:
                return []
            now = time.time()
            new_last = prepared[-1].sequence
            if row is None:
                first = prepared[0]
                meta = first.data.get("metadata") if first.type == "session.started" else None
                cur.execute(
                    self._q_new_session,
                    (
                        session_id,
                        new_last,
                        first.timestamp,
                        now,
                        json.dumps(meta if isinstance(meta, dict) else {}),
                    ),
                )
            else:
                cur.execute(self._q_bump, (new_last, now, session_id, last))
                if cur.rowcount != 1:
                    raise conflict_error(session_id, expected, self.last_sequence(session_id))
            rows = _rows(session_id, prepared)
            if len(rows) == 1:
                cur.execute(self._q_insert, rows[0])
            else:
                cur.executemany(self._q_insert, rows)
        return prepared

    # -- read ------------------------------------------------------------------

    def events(
        self, session_id: str, *, after: int = 0, limit: int | None = None
    ) -> list[SessionEvent]:
        """Events with ``sequence > after`` in order; a gap raises ``LA-STORAGE-CORRUPT``."""
        validate_session_id(session_id)
        self._check_page(after, limit)
        if not self._readable():
            return []
        query = self._q_events
        args: tuple[object, ...] = (session_id, after)
        if limit is not None:
            query, args = query + self._db.sql(" LIMIT ?"), (session_id, after, limit)
        with self._read() as cur:
            cur.execute(query, args)
            rows = cur.fetchall()
        out: list[SessionEvent] = []
        expected = after + 1
        for seq, payload in rows:
            try:
                event = SessionEvent.from_dict(json.loads(payload))
            except (ValueError, StorageError) as exc:
                raise _corrupt(
                    session_id, seq, f"undecodable payload ({type(exc).__name__})"
                ) from exc
            if seq != expected or event.sequence != seq:
                raise _corrupt(session_id, expected, f"found sequence {seq}")
            expected += 1
            out.append(event)
        return out

    def last_sequence(self, session_id: str) -> int:
        """The session row's last sequence, 0 when unknown."""
        validate_session_id(session_id)
        if not self._readable():
            return 0
        with self._read() as cur:
            cur.execute(self._q_last, (session_id,))
            row = cur.fetchone()
        return int(row[0]) if row and row[0] else 0

    def get_session(self, session_id: str) -> SessionInfo | None:
        """The session's summary or ``None``."""
        validate_session_id(session_id)
        if not self._readable():
            return None
        with self._read() as cur:
            cur.execute(self._q_info, (session_id,))
            row = cur.fetchone()
        return _info(row) if row is not None else None

    def list_sessions(
        self, *, limit: int = 100, offset: int = 0, owner: Mapping[str, Any] | None = None
    ) -> list[SessionInfo]:
        """Sessions, most recently updated first; with ``owner``, only the ones it opened,
        chosen in the query (before ``limit``) from the owner in each first event."""
        query, scope = self._owned_query(owner) if owner is not None else (self._q_list, [])
        if not self._readable():
            return []
        with self._read() as cur:
            cur.execute(query, (*scope, limit, offset))
            return [_info(row) for row in cur.fetchall()]

    def _owned_query(self, owner: Mapping[str, Any]) -> tuple[str, list[str]]:
        """The listing of ``owner``'s sessions: every owner field equal, or absent on both."""
        from lightagent.events.ownership import OWNER_FIELDS, owner_fields

        scope = owner_fields(owner)
        s, e = self._tables
        where = ["e.sequence = 1", "e.type = 'session.started'"]
        args: list[str] = []
        for key in OWNER_FIELDS:  # constant names: no caller text reaches the statement
            value = self._db.json_text("e.payload", "data", "owner", key)
            if key in scope:
                where.append(f"{value} = ?")
                args.append(scope[key])
            else:
                where.append(f"{value} IS NULL")
        columns = ", ".join(f"s.{c}" for c in _INFO.split(", "))
        query = (
            f"SELECT {columns} FROM {s} s JOIN {e} e ON e.session_id = s.session_id "
            f"WHERE {' AND '.join(where)} ORDER BY s.updated_at DESC, s.session_id LIMIT ? OFFSET ?"
        )
        return self._db.sql(query), args

    def delete(self, session_id: str) -> bool:
        """Remove the session and its events in one transaction."""
        validate_session_id(session_id)
        if not self._readable():
            return False
        with self._write() as cur:
            cur.execute(self._q_delete_events, (session_id,))
            cur.execute(self._q_delete, (session_id,))
            done = cur.rowcount
        return done > 0

    def close(self) -> None:
        """Close the pooled connections (a later call opens new ones)."""
        self._db.close()


class SqliteSessionStore(SqlSessionStore):
    """The embedded default: ``SqlSessionStore("sqlite:///<path>")`` with WAL and ``BEGIN IMMEDIATE``."""

    def __init__(self, path: str | os.PathLike[str] = DEFAULT_PATH, **options: Any) -> None:
        self.path = Path(path)
        super().__init__(f"sqlite:///{self.path}", **options)


def _rows(session_id: str, events: list[SessionEvent]) -> list[tuple[Any, ...]]:
    return [
        (session_id, ev.sequence, ev.event_id[:64], ev.type, ev.timestamp, dumps_event(ev))
        for ev in events
    ]


def _info(row: Any) -> SessionInfo:
    session_id, last_sequence, created_at, updated_at, metadata = row
    try:
        meta = json.loads(metadata) if metadata else {}
    except ValueError:
        meta = {}
    return SessionInfo(
        session_id=session_id,
        last_sequence=int(last_sequence),
        created_at=created_at,
        updated_at=updated_at,
        metadata=meta if isinstance(meta, dict) else {},
    )


def _corrupt(session_id: str, seq: int, reason: str) -> StorageError:
    return StorageError(
        "LA-STORAGE-CORRUPT",
        f"Session {session_id!r} is corrupt at sequence {seq}: {reason}.",
        hint="Events before it are intact; export them with events(limit=...) and re-append.",
        details={"session_id": session_id, "sequence": seq, "reason": reason},
    )


def _safe_url(url: str) -> str:
    # Never echo a password from a URL into an error message.
    head, sep, tail = url.partition("://")
    if "@" in tail:
        creds, _, host = tail.rpartition("@")
        user = creds.split(":", 1)[0]
        return f"{head}{sep}{user}:***@{host}"
    return url


def _sqlite_file(url: str) -> Path | None:
    """The database file of a SQLite URL (``None`` for in-memory and ``file:`` URIs)."""
    path = url.split(":///", 1)[-1].split("?", 1)[0] if ":///" in url else ""
    if not path or path == ":memory:" or path.startswith("file:"):
        return None
    return Path(path)


def _why_unopenable(file: Path) -> str:
    """What keeps SQLite from opening ``file``, in words (SQLite only says "unable to open")."""
    folder = file.parent
    if file.is_dir():
        return f" ({file} is a folder)"
    if not folder.exists():
        return f" (its folder {folder} does not exist)"
    if not folder.is_dir():
        return f" ({folder} is a file, not a folder)"
    if file.exists():
        return "" if os.access(file, os.R_OK | os.W_OK) else f" (permission denied on {file})"
    # Only on this failure path: try to create a file where SQLite could not (root ignores
    # mode bits, so os.access would not tell), and say what the system answered.
    probe = folder / f".lightagent-probe-{os.getpid()}"
    try:
        os.close(os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except OSError as exc:
        return f" ({exc.strerror or exc} in {folder})"
    os.unlink(probe)
    return ""
