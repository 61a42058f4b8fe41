"""``SqlSessionStore``: session logs in SQL through SQLAlchemy 2 (SQLite or PostgreSQL).

Two tables: ``sessions`` (one row per session with its last sequence, the optimistic
concurrency guard) and ``session_events`` (primary key ``(session_id, sequence)``, a
second guard). An append reads and bumps the session row in one write transaction —
``BEGIN IMMEDIATE`` on SQLite, ``SELECT … FOR UPDATE`` on PostgreSQL — so a stale
``expected_sequence`` gets ``LA-STORAGE-CONFLICT`` and two writers never interleave.
SQLAlchemy is imported only when a store is built.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterable, Iterator
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

__all__ = ["DEFAULT_PATH", "SqlSessionStore", "SqliteSessionStore"]

#: Where ``SqliteSessionStore()`` (and ``session_store="sqlite"``) keeps its database.
DEFAULT_PATH = ".lightagent/sessions.sqlite3"


class SqlSessionStore(SessionStoreBase):
    """Sessions in any SQLAlchemy database: ``sqlite:///path`` or ``postgresql+psycopg://…``.

    The database file and tables are created on the first write, never by a read (a read
    of a store that does not exist finds nothing). A SQLite file's folder must exist:
    ``create_dirs=True`` creates missing folders (the default location
    ``.lightagent/sessions.sqlite3`` always may); otherwise a missing one is
    ``LA-STORAGE-NOT-FOUND`` naming it. ``table_prefix`` lets several stores share one
    database. ``synchronous`` is SQLite's durability pragma (``FULL`` by default;
    ``NORMAL`` in WAL mode may lose the last commits on power loss, never on a crash).
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
        try:
            import sqlalchemy as sa
        except ImportError as exc:  # pragma: no cover - sqlalchemy is a core dependency
            raise StorageError(
                "LA-MISSING-EXTRA", "SQLAlchemy is not installed.", hint="pip install sqlalchemy"
            ) from exc
        self.url = url
        self._sa = sa
        self._is_sqlite = url.startswith("sqlite")
        self._file = _sqlite_file(url) if self._is_sqlite else None
        if create_dirs is None:  # only the built-in default location makes its own folder
            create_dirs = self._file is not None and self._file == Path(DEFAULT_PATH)
        self.create_dirs = create_dirs
        options = dict(engine_options or {})
        if self._is_sqlite:
            options.setdefault("connect_args", {}).setdefault("timeout", busy_timeout_ms / 1000)
        else:
            options.setdefault("pool_pre_ping", True)
        try:
            self.engine = sa.create_engine(url, **options)
        except Exception as exc:
            raise ConfigurationError(
                "LA-CONFIG",
                f"Cannot use database URL {_safe_url(url)}: {type(exc).__name__}: {exc}",
                hint="For PostgreSQL install the driver: pip install 'lightagent-core[postgres]'.",
            ) from exc
        if self._is_sqlite:
            _configure_sqlite(self.engine, synchronous.upper(), busy_timeout_ms)
        self._define(table_prefix)
        self._ready = False
        self._ready_lock = threading.Lock()

    def _define(self, prefix: str) -> None:
        sa = self._sa
        meta = sa.MetaData()
        self.sessions = sa.Table(
            f"{prefix}sessions",
            meta,
            sa.Column("session_id", sa.String(200), primary_key=True),
            sa.Column("last_sequence", sa.Integer, nullable=False),
            sa.Column("created_at", sa.Float),
            sa.Column("updated_at", sa.Float, index=True),
            sa.Column("metadata", sa.Text),
        )
        self.session_events = sa.Table(
            f"{prefix}session_events",
            meta,
            sa.Column("session_id", sa.String(200), primary_key=True),
            sa.Column("sequence", sa.Integer, primary_key=True, autoincrement=False),
            sa.Column("event_id", sa.String(64), nullable=False),
            sa.Column("type", sa.String(100), nullable=False),
            sa.Column("timestamp", sa.Float),
            sa.Column("payload", sa.Text, nullable=False),
        )
        self._meta = meta

    # -- connections ------------------------------------------------------------

    def exists(self) -> bool:
        """Whether the store exists: its database (file) is there and holds the tables.

        Never creates anything; reads of a store that does not exist find nothing.
        """
        if self._ready:
            return True
        if self._file is not None and not self._file.is_file():
            return False
        try:
            with self.engine.connect() as conn:
                return bool(self._sa.inspect(conn).has_table(self.sessions.name))
        except self._sa.exc.OperationalError as exc:
            raise self._unavailable(exc) from exc

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
                    with self.engine.connect() as conn:
                        conn = conn.execution_options(lightagent_immediate=True)
                        with conn.begin():
                            self._meta.create_all(conn, checkfirst=True)
                    break
                except self._sa.exc.OperationalError as exc:
                    raise self._unavailable(exc) from exc
                except self._sa.exc.DatabaseError:
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
    def _write(self) -> Iterator[Any]:
        self._ensure_tables()
        try:
            with self.engine.connect() as conn:
                conn = conn.execution_options(lightagent_immediate=True)
                with conn.begin():
                    yield conn
        except self._sa.exc.OperationalError as exc:
            raise self._unavailable(exc) from exc

    @contextmanager
    def _read(self) -> Iterator[Any]:
        try:
            with self.engine.connect() as conn:
                yield conn
        except self._sa.exc.OperationalError as exc:
            raise self._unavailable(exc) from exc

    def _unavailable(self, exc: Exception) -> StorageError:
        cause = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0][:200]
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
            except self._sa.exc.IntegrityError as exc:
                # Two writers created the same session (or raced a sequence) at once.
                if expected_sequence is not None or attempt == 2:
                    actual = self.last_sequence(session_id)
                    raise conflict_error(session_id, expected_sequence, actual) from exc
        raise AssertionError("unreachable")  # pragma: no cover

    def _append_once(
        self, session_id: str, items: list[EventInput], expected: int | None
    ) -> list[SessionEvent]:
        sa, s, e = self._sa, self.sessions, self.session_events
        with self._write() as conn:
            row = conn.execute(
                sa.select(s.c.last_sequence).where(s.c.session_id == session_id).with_for_update()
            ).first()
            last = row[0] if row is not None else 0
            self._check_expected(session_id, expected, last)
            prepared = self._prepare(session_id, items, last)
            if not prepared:
                return []
            now = time.time()
            new_last = prepared[-1].sequence
            if row is None:
                meta = (
                    prepared[0].data.get("metadata")
                    if prepared[0].type == "session.started"
                    else None
                )
                conn.execute(
                    s.insert().values(
                        session_id=session_id,
                        last_sequence=new_last,
                        created_at=prepared[0].timestamp,
                        updated_at=now,
                        metadata=json.dumps(meta if isinstance(meta, dict) else {}),
                    )
                )
            else:
                done = conn.execute(
                    s.update()
                    .where(s.c.session_id == session_id, s.c.last_sequence == last)
                    .values(last_sequence=new_last, updated_at=now)
                )
                if done.rowcount != 1:
                    raise conflict_error(session_id, expected, self.last_sequence(session_id))
            conn.execute(
                e.insert(),
                [
                    {
                        "session_id": session_id,
                        "sequence": ev.sequence,
                        "event_id": ev.event_id[:64],
                        "type": ev.type,
                        "timestamp": ev.timestamp,
                        "payload": dumps_event(ev),
                    }
                    for ev in prepared
                ],
            )
        return prepared

    # -- read ------------------------------------------------------------------

    def events(
        self, session_id: str, *, after: int = 0, limit: int | None = None
    ) -> list[SessionEvent]:
        """Events with ``sequence > after`` in order; a gap raises ``LA-STORAGE-CORRUPT``."""
        validate_session_id(session_id)
        self._check_page(after, limit)
        e = self.session_events
        query = (
            self._sa.select(e.c.sequence, e.c.payload)
            .where(e.c.session_id == session_id, e.c.sequence > after)
            .order_by(e.c.sequence)
        )
        if limit is not None:
            query = query.limit(limit)
        if not self._readable():
            return []
        with self._read() as conn:
            rows = conn.execute(query).all()
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
        s = self.sessions
        if not self._readable():
            return 0
        with self._read() as conn:
            value = conn.execute(
                self._sa.select(s.c.last_sequence).where(s.c.session_id == session_id)
            ).scalar()
        return int(value or 0)

    def get_session(self, session_id: str) -> SessionInfo | None:
        """The session's summary or ``None``."""
        validate_session_id(session_id)
        s = self.sessions
        if not self._readable():
            return None
        with self._read() as conn:
            row = conn.execute(s.select().where(s.c.session_id == session_id)).first()
        return _info(row) if row is not None else None

    def list_sessions(self, *, limit: int = 100, offset: int = 0) -> list[SessionInfo]:
        """Sessions, most recently updated first."""
        s = self.sessions
        query = (
            s.select().order_by(s.c.updated_at.desc(), s.c.session_id).limit(limit).offset(offset)
        )
        if not self._readable():
            return []
        with self._read() as conn:
            return [_info(row) for row in conn.execute(query).all()]

    def delete(self, session_id: str) -> bool:
        """Remove the session and its events in one transaction."""
        validate_session_id(session_id)
        s, e = self.sessions, self.session_events
        if not self._readable():
            return False
        with self._write() as conn:
            conn.execute(e.delete().where(e.c.session_id == session_id))
            done = conn.execute(s.delete().where(s.c.session_id == session_id))
        return done.rowcount > 0

    def close(self) -> None:
        """Dispose of the connection pool."""
        self.engine.dispose()


class SqliteSessionStore(SqlSessionStore):
    """The embedded default: ``SqlSessionStore("sqlite:///<path>")`` with WAL and ``BEGIN IMMEDIATE``."""

    def __init__(self, path: str | os.PathLike[str] = DEFAULT_PATH, **options: Any) -> None:
        self.path = Path(path)
        super().__init__(f"sqlite:///{self.path}", **options)


def _info(row: Any) -> SessionInfo:
    try:
        meta = json.loads(row.metadata) if row.metadata else {}
    except ValueError:
        meta = {}
    return SessionInfo(
        session_id=row.session_id,
        last_sequence=int(row.last_sequence),
        created_at=row.created_at,
        updated_at=row.updated_at,
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


def _enable_wal(cursor: Any, busy_timeout_ms: int) -> None:
    # Switching a fresh file to WAL needs an exclusive lock, and SQLite answers "database
    # is locked" at once (no busy handler) while another process opens or switches the
    # same file; wait and try again within the busy timeout instead of failing the store.
    import sqlite3

    deadline = time.monotonic() + busy_timeout_ms / 1000
    delay = 0.005
    while True:
        try:
            row = cursor.execute("PRAGMA journal_mode=WAL").fetchone()
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


def _configure_sqlite(engine: Any, synchronous: str, busy_timeout_ms: int) -> None:
    from sqlalchemy import event

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # Let SQLAlchemy's "begin" event issue BEGIN itself (deferred or IMMEDIATE).
        dbapi_conn.isolation_level = None
        cursor = dbapi_conn.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
            _enable_wal(cursor, busy_timeout_ms)
            cursor.execute(f"PRAGMA synchronous={synchronous}")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        # A deferred transaction that reads then writes gets SQLITE_BUSY in WAL despite
        # busy_timeout; writers take the write lock up front instead.
        immediate = conn.get_execution_options().get("lightagent_immediate")
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")
