"""``PostgresSessionStore``: the core's ``SqlSessionStore`` on PostgreSQL.

The store's logic is the core's; what differs on PostgreSQL (placeholders, ``FOR UPDATE``,
jsonb owner fields, the one-statement append) is :class:`PostgresDatabase`'s. This class
is what the plugin registers for ``postgresql://`` URLs, and its :meth:`open_database` is
how :func:`lightagent.sql_conn.open_database` opens PostgreSQL for every SQL store.
"""

from __future__ import annotations

from lightagent.events.sql_store import SqlSessionStore

from lightagent_postgres.database import PostgresDatabase

__all__ = ["PostgresSessionStore"]


class PostgresSessionStore(SqlSessionStore):
    """Sessions in PostgreSQL: ``PostgresSessionStore("postgresql+psycopg://user@host/db")``.

    The same as ``SqlSessionStore(url)`` with a PostgreSQL URL (the same tables, options
    and errors); ``table_prefix`` lets several stores share one database.
    """

    @staticmethod
    def open_database(
        url: str, *, busy_timeout_ms: int = 30000, needed_by: str = "SqlSessionStore"
    ) -> PostgresDatabase:
        """The connection pool of a ``postgresql[+psycopg]://`` URL."""
        return PostgresDatabase.from_url(url, busy_timeout_ms=busy_timeout_ms, needed_by=needed_by)
