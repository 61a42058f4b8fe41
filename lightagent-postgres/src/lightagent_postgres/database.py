"""``PostgresDatabase``: the core's connection pool on ``psycopg`` 3, and PostgreSQL's dialect.

Connections run in autocommit mode (transactions are the pool's own ``BEGIN`` … ``COMMIT``).
A pooled connection may have died while it sat idle (a server restart); one that fails on
the first statement of a transaction has written nothing, so the pool drops it and takes
the next, as a pre-ping would without a round trip per checkout. ``psycopg`` is imported
when a database is built, never when this module is.
"""

from __future__ import annotations

from typing import Any

from lightagent.errors import ConfigurationError
from lightagent.sql_conn import Database

__all__ = ["SCHEMES", "PostgresDatabase"]

#: The URL schemes this dialect opens (``+psycopg`` names the one driver it runs on).
SCHEMES = ("postgresql", "postgres", "postgresql+psycopg", "postgres+psycopg")

#: One event row of :meth:`PostgresDatabase.append_guarded`, cast so ``VALUES`` types its columns.
_ROW = "(%s::varchar, %s::integer, %s::varchar, %s::varchar, %s::float8, %s::text)"


class PostgresDatabase(Database):
    """``psycopg`` 3 connections to ``conninfo`` (a libpq URL), in autocommit mode."""

    dialect = "postgresql"
    lock_rows = " FOR UPDATE"
    guarded_appends = True

    def __init__(self, conninfo: str, connect_timeout: float) -> None:
        import psycopg

        super().__init__()
        self.conninfo = conninfo
        self.connect_timeout = connect_timeout
        self.unavailable = (psycopg.OperationalError, psycopg.InterfaceError)
        self.integrity = psycopg.IntegrityError
        self.database_error = psycopg.DatabaseError

    @classmethod
    def from_url(
        cls, url: str, *, busy_timeout_ms: int = 30000, needed_by: str = "SqlSessionStore"
    ) -> PostgresDatabase:
        """The pool for ``postgresql[+psycopg]://…``; waits ``busy_timeout_ms`` to connect.

        Another driver in the scheme is ``LA-CONFIG``; ``psycopg`` missing is ``LA-MISSING-EXTRA``.
        """
        scheme, _, rest = url.partition("://")
        if scheme.lower() not in SCHEMES:
            raise ConfigurationError(
                "LA-CONFIG",
                f"{needed_by} runs PostgreSQL on psycopg 3, not {scheme}://.",
                hint="Use 'postgresql+psycopg://user@host/db' or 'postgresql://user@host/db'.",
                details={"scheme": scheme},
            )
        from lightagent.extras import require

        require("psycopg", "postgres", f"{needed_by} on PostgreSQL")
        return cls(f"postgresql://{rest}", busy_timeout_ms / 1000)

    def sql(self, text: str) -> str:
        """``text`` with psycopg's ``%s`` placeholders for ``?``."""
        return text.replace("?", "%s")

    def has_table(self, cur: Any, name: str) -> bool:
        """Whether ``name`` exists on the connection's ``search_path``."""
        cur.execute("SELECT to_regclass(%s) IS NOT NULL", (name,))
        row = cur.fetchone()
        return bool(row and row[0])

    def columns(self, cur: Any, table: str) -> set[str]:
        """The column names of ``table`` in the current schema."""
        cur.execute(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_name = %s AND table_schema = current_schema()",
            (table,),
        )
        return {row[0] for row in cur.fetchall()}

    def json_text(self, column: str, *path: str) -> str:
        """The text at ``path`` of the JSON in ``column``; NULL where the text holds ``\\u0000``.

        jsonb holds no NUL, and a cast that fails inside an index fails the insert: a first
        event with an escaped NUL has no indexed owner (so no scoped listing finds it).
        """
        return (
            f"(CASE WHEN strpos({column}, E'\\\\u0000') = 0 "
            f"THEN {column}::jsonb #>> '{{{','.join(path)}}}' END)"
        )

    def append_guarded(
        self, tables: tuple[str, str], head: tuple[Any, ...], rows: list[Any]
    ) -> int:
        """A data-modifying CTE: the bump of the session row, and the insert only if it bumped.

        On its own it is a whole transaction: one round trip where the locked read, bump,
        insert and commit take five. 0 when the connection failed: the caller's
        transaction takes a fresh one and decides.
        """
        sessions, events = tables
        statement = (
            f"WITH bump AS (UPDATE {sessions} SET last_sequence = %s, updated_at = %s "
            "WHERE session_id = %s AND last_sequence = %s RETURNING 1) "
            f"INSERT INTO {events} (session_id, sequence, event_id, type, timestamp, payload) "
            f"SELECT v.* FROM (VALUES {', '.join([_ROW] * len(rows))}) AS v(session_id, "
            "sequence, event_id, type, timestamp, payload), bump"
        )
        args = [*head, *(value for row in rows for value in row)]
        try:
            with self.autocommit() as cur:
                cur.execute(statement, args)
                return int(cur.rowcount)
        except self.unavailable:
            return 0

    def _connect(self) -> Any:
        import psycopg

        try:
            return psycopg.connect(
                self.conninfo, autocommit=True, connect_timeout=max(1, int(self.connect_timeout))
            )
        except psycopg.InterfaceError as exc:  # a malformed URL or option
            raise psycopg.OperationalError(str(exc)) from exc
