"""The lightagent plugin of lightagent-postgres: the session store of ``postgresql://`` URLs.

Registering that store is also how :func:`lightagent.sql_conn.open_database` finds the
dialect for the other SQL stores. The reference is lazy: loading this plugin imports
neither the store nor ``psycopg``.
"""

from __future__ import annotations

from typing import Any

from lightagent.hookspecs import hookimpl

__all__ = ["lightagent_manifest", "register_session_stores"]

_STORE = "lightagent_postgres.store:PostgresSessionStore"


@hookimpl
def register_session_stores(register: Any) -> None:
    """``session_store="postgresql+psycopg://…"`` (and ``postgres://``) and the name ``postgres``."""
    register("postgresql://", _STORE)
    register("postgres://", _STORE)
    register("postgres", _STORE)


@hookimpl
def lightagent_manifest() -> dict[str, Any]:
    """What ``lightagent plugins`` shows for this distribution."""
    from lightagent_postgres import __version__

    return {
        "name": "lightagent-postgres",
        "version": __version__,
        "description": "PostgreSQL for the SQL stores: the session store's dialect and pooled connections.",
        "docs": "docs/sessions.md",
        "providers": {"session_store": ("postgresql://", "postgres://", "postgres")},
    }
