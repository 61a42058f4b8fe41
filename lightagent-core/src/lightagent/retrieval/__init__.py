"""Retrieval: the search seam (``RetrievalProtocol``, ``SearchHit``) and a reference provider.

``retrieval=`` on ``LightAgent``, its search toolset (``SearchToolset``) and the opt-in
context injection are lightagent-rag-fts's (``pip install 'lightagent-core[rag-fts]'``).
"""

from __future__ import annotations

from lightagent.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "InMemoryRetrieval": "lightagent.retrieval.reference",
    "RetrievalProtocol": "lightagent.retrieval.protocol",
    "SearchHit": "lightagent.retrieval.protocol",
    "search_hits": "lightagent.retrieval.protocol",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
