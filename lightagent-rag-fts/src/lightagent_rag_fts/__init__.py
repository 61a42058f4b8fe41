"""lightagent-rag-fts: Full-text retrieval for lightagent on SQLite FTS5 or PostgreSQL.

``SqliteFTSRetrievalProvider(path)`` needs nothing beyond the standard library;
``PostgresFTSRetrievalProvider(url)`` needs lightagent-postgres (``lightagent-core[postgres]``).
``SessionSearchProvider(store)`` searches a session store's events. Each one is a
retrieval provider for ``LightAgent(retrieval=...)``, which this distribution claims (the
``retrieval`` agent extension): the provider is offered to the model as a search tool
(``SearchToolset``), and ``retrieval_inject=N`` puts the N best passages in the prompt.
"""

from __future__ import annotations

from lightagent.lazy import lazy_exports

__version__ = "0.1.0"

_EXPORTS = {
    "PostgresFTSRetrievalProvider": "lightagent_rag_fts.postgres_fts",
    "RetrievalDocument": "lightagent_rag_fts.models",
    "RetrievalProvider": "lightagent_rag_fts.models",
    "RetrievalResult": "lightagent_rag_fts.models",
    "SearchToolset": "lightagent_rag_fts.toolset",
    "SessionSearchProvider": "lightagent_rag_fts.session_search",
    "SqliteFTSRetrievalProvider": "lightagent_rag_fts.sqlite_fts",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
