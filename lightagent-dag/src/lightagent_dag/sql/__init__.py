"""The SQL task-graph store (SQLAlchemy 2.x): SQLite embedded, PostgreSQL for many hosts."""

from lightagent_dag.sql.store import SqliteTaskGraphStore, SqlTaskGraphStore

__all__ = ["SqlTaskGraphStore", "SqliteTaskGraphStore"]
