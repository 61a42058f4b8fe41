"""The lightagent plugin of lightagent-rag-fts: its hook implementations.

Registering imports nothing heavy: each provider is a lazy ``"module:attribute"``
reference, imported when ``retrieval="sqlite-fts"`` (or another name) is first resolved.
"""

from __future__ import annotations

from typing import Any

from lightagent import hookimpl

from lightagent_rag_fts import __version__


@hookimpl
def register_retrieval(register: Any) -> None:
    """``sqlite-fts`` (configuration: ``path``…), ``postgres-fts`` (``url``…) and ``session-search`` (``store``)."""
    register("sqlite-fts", "lightagent_rag_fts.sqlite_fts:SqliteFTSRetrievalProvider")
    register("postgres-fts", "lightagent_rag_fts.postgres_fts:PostgresFTSRetrievalProvider")
    register("session-search", "lightagent_rag_fts.session_search:SessionSearchProvider")


@hookimpl
def register_agent_extensions(register: Any) -> None:
    """The ``retrieval`` agent extension: ``retrieval=`` and ``retrieval_inject=``."""
    register("retrieval", "lightagent_rag_fts.agent:RetrievalExtension")


@hookimpl
def lightagent_manifest() -> dict[str, Any]:
    """What this plugin brings."""
    return {
        "name": "lightagent-rag-fts",
        "version": __version__,
        "description": "Full-text retrieval on SQLite FTS5 or PostgreSQL (retrieval='sqlite-fts').",
        "providers": {"retrieval": ("sqlite-fts", "postgres-fts", "session-search")},
    }
