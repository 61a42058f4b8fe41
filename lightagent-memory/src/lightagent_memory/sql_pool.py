"""The durable store of ``SharedMemoryPool``: SQLite (stdlib ``sqlite3``) or PostgreSQL
(lightagent-postgres), on the pooled connections the session store uses.

Two tables: the records (with their tenant; a table made before tenants gains the column
when first opened), and a word index (``user_key, term_key, memory_id``) so a search
ranks by shared words *in SQL*, with the user and the filters in the ``WHERE`` clause
before ``LIMIT``. Ids are compared exactly; the owner is found by ``user_key`` (a sha256
of the user id, so ids of any length are indexable) *and* the id itself. Text columns
escape ``%`` and NUL (PostgreSQL text cannot hold NUL), so any string round-trips.
The driver is imported on first use; a missing one is ``LA-MISSING-EXTRA``.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from lightagent.errors import ConfigurationError, StorageError

__all__ = ["SqlRecords", "parse_url"]

_TABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,40}$")
_COLUMNS = {
    "agent_name": "agent_name",
    "source": "source",
    "scope": "scope",
    "tenant_id": "tenant_id",
}


def parse_url(url: str) -> tuple[str, str]:
    """``("sqlite", path)`` or ``("postgresql", libpq URL)`` for a pool URL."""
    if not isinstance(url, str):
        raise ConfigurationError(
            "LA-CONFIG", f"SharedMemoryPool(url=...) must be a str, got {type(url).__name__}"
        )
    scheme, sep, rest = url.partition("://")
    scheme = scheme.lower()
    if sep and scheme == "sqlite":
        path = rest[1:] if rest.startswith("/") else rest
        return "sqlite", path or ":memory:"
    if sep and scheme.split("+", 1)[0] in ("postgresql", "postgres"):
        return "postgresql", f"postgresql://{rest}"
    raise ConfigurationError(
        "LA-CONFIG",
        f"SharedMemoryPool cannot use the URL {url[:80]!r}",
        hint='Use "sqlite:///path/pool.db" (embedded) or "postgresql://user@host/db".',
    )


def _enc(text: str | None) -> str | None:
    return None if text is None else text.replace("%", "%25").replace("\x00", "%00")


def _dec(text: str | None) -> str | None:
    return None if text is None else text.replace("%00", "\x00").replace("%25", "%")


def _key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _term_key(term: str) -> str:
    return hashlib.blake2b(term.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


def _dumps(metadata: Mapping[str, Any]) -> str:
    # json escapes NUL as \\u0000 text, which both databases keep in a TEXT column
    return json.dumps(metadata, ensure_ascii=True, default=str)


class SqlRecords:
    """Pool records in one SQL database, through the core's pooled connections
    (:mod:`lightagent.sql_conn`, the session store's too)."""

    def __init__(self, url: str, *, table: str = "lightagent_memory") -> None:
        if not _TABLE.fullmatch(table):
            raise ConfigurationError(
                "LA-CONFIG", f"SharedMemoryPool(table={table!r}) is not a plain SQL name"
            )
        self.dialect, self.target = parse_url(url)
        self.table = table
        self._db: Any = None  # opened on first use: the driver is imported then
        self._lock = threading.Lock()

    def describe(self) -> str:
        """The backend without credentials (for repr)."""
        if self.dialect == "sqlite":
            return f"sqlite:///{self.target}"
        return "postgresql://" + self.target.rsplit("@", 1)[-1]

    # -- connection --------------------------------------------------------------------
    def _database(self) -> Any:
        with self._lock:
            if self._db is not None:
                return self._db
            from lightagent.sql_conn import SqliteDatabase, open_database

            if self.dialect == "sqlite":
                if self.target != ":memory:" and not Path(self.target).parent.exists():
                    raise StorageError(
                        "LA-STORAGE-NOT-FOUND",
                        f"the folder of {self.target!r} does not exist",
                        hint="Create the folder first, or point the URL at an existing one.",
                    )
                db: Any = SqliteDatabase(self.target, synchronous="FULL", busy_timeout_ms=30000)
            else:  # lightagent-postgres's dialect (the ``postgres`` extra)
                db = open_database(self.target, busy_timeout_ms=10000, needed_by="SharedMemoryPool")
            try:
                with db.transaction(write=True) as cur:
                    self._schema(cur)
            except Exception:
                db.close()
                raise
            self._db = db
            return db

    def _schema(self, cur: Any) -> None:
        t = self.table
        if self.dialect == "postgresql":
            # one creator at a time when several processes start on a fresh database
            cur.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (t,))
        cur.execute(
            f"CREATE TABLE IF NOT EXISTS {t} (memory_id TEXT PRIMARY KEY, user_key TEXT NOT NULL, "
            "user_id TEXT NOT NULL, memory TEXT NOT NULL, source TEXT, scope TEXT, "
            "agent_name TEXT, metadata TEXT NOT NULL, created_at DOUBLE PRECISION NOT NULL, "
            "tenant_id TEXT)"
        )
        if "tenant_id" not in self._columns(cur):  # a pool made before tenants
            cur.execute(f"ALTER TABLE {t} ADD COLUMN tenant_id TEXT")
        cur.execute(f"CREATE INDEX IF NOT EXISTS {t}_by_user ON {t} (user_key, created_at)")
        cur.execute(
            f"CREATE TABLE IF NOT EXISTS {t}_terms (user_key TEXT NOT NULL, term_key TEXT NOT NULL, "
            "memory_id TEXT NOT NULL, PRIMARY KEY (user_key, term_key, memory_id))"
        )

    def _columns(self, cur: Any) -> set[str]:
        if self.dialect == "sqlite":
            return {row[1] for row in self._rows(cur, f"PRAGMA table_info({self.table})")}
        rows = self._rows(
            cur,
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND table_name = ?",
            (self.table.lower(),),  # unquoted names are folded to lower case
        )
        return {row[0] for row in rows}

    @contextmanager
    def _session(self, write: bool = False) -> Iterator[Any]:
        """A cursor in one transaction (committed on success); driver errors typed."""
        try:
            db = self._database()
            with db.transaction(write=write) as cur:
                yield cur
        except (ConfigurationError, StorageError):
            raise
        except Exception as exc:
            raise _storage_error(exc, self.describe()) from exc

    def _sql(self, statement: str) -> str:
        return statement.replace("?", "%s") if self.dialect == "postgresql" else statement

    def _rows(self, cur: Any, statement: str, params: Sequence[Any] = ()) -> list[Any]:
        cur.execute(self._sql(statement), tuple(params))
        return list(cur.fetchall())

    # -- the records protocol (see records.MemoryRecords) -----------------------------
    def add(self, record: Any) -> bool:
        from lightagent_memory.records import index_terms, owner_conflict

        t = self.table
        user_key = _key(record.user_id)
        meta = record.metadata
        with self._session(write=True) as cur:
            existing = self._rows(
                cur,
                f"SELECT user_key, user_id, tenant_id FROM {t} WHERE memory_id = ?",
                (_enc(record.memory_id),),
            )
            if existing:
                key, owner, tenant = existing[0]
                if (key, _dec(owner), _dec(tenant)) != (user_key, record.user_id, record.tenant_id):
                    raise owner_conflict(record.memory_id)
                return False
            cur.execute(
                self._sql(
                    f"INSERT INTO {t} (memory_id, user_key, user_id, memory, source, scope, "
                    "agent_name, metadata, created_at, tenant_id) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (memory_id) DO NOTHING"
                ),
                (
                    _enc(record.memory_id),
                    user_key,
                    _enc(record.user_id),
                    _enc(record.memory),
                    *(_enc(_str(meta.get(c))) for c in ("source", "scope", "agent_name")),
                    _dumps(meta),
                    record.created_at,
                    _enc(record.tenant_id),
                ),
            )
            rows = [
                (user_key, _term_key(w), _enc(record.memory_id)) for w in index_terms(record.memory)
            ]
            if rows:
                statement = self._sql(
                    f"INSERT INTO {t}_terms (user_key, term_key, memory_id) VALUES (?, ?, ?) "
                    "ON CONFLICT DO NOTHING"
                )
                cur.executemany(statement, rows)
        return True

    def search(
        self,
        user_id: str,
        words: list[str],
        filters: Mapping[str, str],
        limit: int,
        tenant: str | None = None,
    ) -> list[tuple[int, Any]]:
        if limit <= 0 or not words:
            return []
        t = self.table
        user_key = _key(user_id)
        marks = ", ".join("?" for _ in words)
        where, params = self._where(filters)
        # one tenant's records; a search naming none reads only records of no tenant
        own = "r.tenant_id IS NULL" if tenant is None else "r.tenant_id = ?"
        statement = (
            f"SELECT {_FIELDS}, s.score FROM "
            f"(SELECT memory_id, COUNT(*) AS score FROM {t}_terms WHERE user_key = ? "
            f"AND term_key IN ({marks}) GROUP BY memory_id) s "
            f"JOIN {t} r ON r.memory_id = s.memory_id "
            f"WHERE r.user_key = ? AND r.user_id = ? AND {own}{where} "
            "ORDER BY s.score DESC, r.created_at DESC, r.memory_id LIMIT ?"
        )
        mine = [] if tenant is None else [_enc(tenant)]
        args = [user_key, *(_term_key(w) for w in words), user_key, _enc(user_id), *mine]
        with self._session() as cur:
            rows = self._rows(cur, statement, [*args, *params, limit])
        return [(int(row[6]), _record(row)) for row in rows]

    def _where(self, filters: Mapping[str, str]) -> tuple[str, list[Any]]:
        clauses, params = [], []
        for key, value in filters.items():
            if key == "user_id":
                clauses.append("r.user_key = ? AND r.user_id = ?")
                params += [_key(value), _enc(value)]
            elif key == "memory_id":
                clauses.append("r.memory_id = ?")
                params.append(_enc(value))
            else:
                clauses.append(f"r.{_COLUMNS[key]} = ?")
                params.append(_enc(value))
        return "".join(f" AND {c}" for c in clauses), params

    def list(self, filters: Mapping[str, str], limit: int | None) -> list[Any]:
        where, params = self._where(filters)
        statement = (
            f"SELECT {_FIELDS} FROM {self.table} r WHERE 1 = 1{where} "
            "ORDER BY r.created_at, r.memory_id"
        )
        if limit is not None:
            statement += " LIMIT ?"
            params.append(int(limit))
        with self._session() as cur:
            return [_record(row) for row in self._rows(cur, statement, params)]

    def clear(self, user_id: str | None) -> int:
        t = self.table
        with self._session(write=True) as cur:
            if user_id is None:
                count = self._rows(cur, f"SELECT COUNT(*) FROM {t}")[0][0]
                cur.execute(f"DELETE FROM {t}_terms")
                cur.execute(f"DELETE FROM {t}")
                return int(count)
            key, enc = _key(user_id), _enc(user_id)
            ids = self._rows(
                cur, f"SELECT memory_id FROM {t} WHERE user_key = ? AND user_id = ?", (key, enc)
            )
            for (memory_id,) in ids:
                cur.execute(
                    self._sql(f"DELETE FROM {t}_terms WHERE user_key = ? AND memory_id = ?"),
                    (key, memory_id),
                )
            cur.execute(
                self._sql(f"DELETE FROM {t} WHERE user_key = ? AND user_id = ?"), (key, enc)
            )
            return len(ids)

    def count(self) -> int:
        with self._session() as cur:
            return int(self._rows(cur, f"SELECT COUNT(*) FROM {self.table}")[0][0])

    def close(self) -> None:
        with self._lock:
            db, self._db = self._db, None
        if db is not None:
            db.close()


#: The columns a record is read from (see :func:`_record`).
_FIELDS = "r.memory_id, r.user_id, r.memory, r.metadata, r.created_at, r.tenant_id"


def _str(value: Any) -> str | None:
    return None if value is None else str(value)


def _record(row: Sequence[Any]) -> Any:
    from lightagent_memory.records import SharedMemoryRecord

    return SharedMemoryRecord(
        memory=_dec(row[2]) or "",
        user_id=_dec(row[1]) or "",
        metadata=json.loads(row[3]),
        memory_id=_dec(row[0]) or "",
        created_at=float(row[4]),
        tenant_id=_dec(row[5]),
    )


def _storage_error(exc: Exception, where: str) -> StorageError:
    name = type(exc).__name__
    unavailable = name in ("OperationalError", "ConnectionTimeout", "InterfaceError")
    return StorageError(
        "LA-STORAGE-UNAVAILABLE" if unavailable else "LA-STORAGE",
        f"the memory pool at {where} failed: {name}: {str(exc).strip()[:300]}",
        hint="Check that the database is reachable and the URL is right.",
        details={"exception": name},
    )
