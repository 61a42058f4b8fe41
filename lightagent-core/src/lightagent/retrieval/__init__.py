"""Retrieval: the search seam the loop uses, its search toolset and a reference provider."""

from __future__ import annotations

from lightagent.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "InMemoryRetrieval": "lightagent.retrieval.reference",
    "RetrievalProtocol": "lightagent.retrieval.protocol",
    "SearchHit": "lightagent.retrieval.protocol",
    "SearchToolset": "lightagent.retrieval.toolset",
    "search_hits": "lightagent.retrieval.protocol",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
