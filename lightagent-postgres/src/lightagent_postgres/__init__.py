"""PostgreSQL for lightagent: the dialect the SQL stores use on ``postgresql://`` URLs.

With this distribution installed (``pip install 'lightagent-core[postgres]'``),
``SqlSessionStore("postgresql+psycopg://…")``, ``session_store="postgresql+psycopg://…"``
and every distribution's SQL store that opens its connections through
:func:`lightagent.sql_conn.open_database` (LightFlow, the shared memory pool, full-text
retrieval) run on PostgreSQL through ``psycopg`` 3 (docs/sessions.md).
"""

from __future__ import annotations

from lightagent_postgres.database import PostgresDatabase
from lightagent_postgres.store import PostgresSessionStore

__version__ = "0.1.0"
__all__ = ["PostgresDatabase", "PostgresSessionStore", "__version__"]
