"""The retrieval seam: ``search(query, *, limit=5, **filters)``, sync or async.

Results may be objects or dicts; the loop reads ``content`` (or ``text``), ``score``,
``citation_id`` (or ``citation``; else ``rag:<chunk_id>`` / the document id),
``title``, ``source``, ``document_id`` and ``metadata`` from each. A provider whose
``search`` names an ``owner`` keyword itself (not through ``**filters``) is also handed
who the run acts for; no other provider ever sees it.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from lightagent.errors import StorageError

__all__ = ["RetrievalProtocol", "SearchHit", "names_keyword", "search_hits"]


@runtime_checkable
class RetrievalProtocol(Protocol):
    """A retrieval provider: ``search`` is the part the loop uses (``ingest`` etc. are the provider's)."""

    def search(self, query: str, *, limit: int = 5, **filters: Any) -> Any:
        """The ``limit`` best results for ``query``, narrowed by ``filters`` (tenant, owner …)."""
        ...


def names_keyword(func: Any, name: str) -> bool:
    """Whether ``func`` takes the keyword ``name`` by that name (``**kwargs`` does not count)."""
    try:
        param = inspect.signature(func).parameters.get(name)
    except (TypeError, ValueError):
        return False
    return param is not None and param.kind in (param.KEYWORD_ONLY, param.POSITIONAL_OR_KEYWORD)


@dataclass(frozen=True)
class SearchHit:
    """One retrieved passage as the loop and the model see it."""

    text: str
    citation: str
    score: float | None = None
    title: str | None = None
    source: str | None = None
    document_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """What the search tool returns to the model (empty fields left out)."""
        out: dict[str, Any] = {"citation": self.citation, "text": self.text}
        for key in ("title", "source", "score"):
            value = getattr(self, key)
            if value is not None:
                out[key] = round(value, 4) if isinstance(value, float) else value
        return out


def _field(item: Any, *names: str) -> Any:
    for name in names:
        value = item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)
        if value is not None:
            return value
    return None


def search_hits(raw: Any) -> list[SearchHit]:
    """Read a provider's ``search`` answer (a list of objects or dicts) as :class:`SearchHit`s."""
    if raw is None:
        return []
    if isinstance(raw, Mapping) and "results" in raw:
        raw = raw["results"]
    if isinstance(raw, (str, bytes)) or not isinstance(raw, Iterable):
        raise StorageError(
            "LA-RETRIEVAL",
            f"search returned {type(raw).__name__}, not a list of results",
            details={"type": type(raw).__name__},
        )
    hits = []
    for position, item in enumerate(raw):
        text = _field(item, "content", "text", "memory")
        if text is None:
            continue
        document = _field(item, "document_id")
        chunk = _field(item, "chunk_id")
        citation = _field(item, "citation_id", "citation")
        if citation is None:
            citation = f"rag:{chunk}" if chunk is not None else str(document or position + 1)
        score = _field(item, "score")
        metadata = _field(item, "metadata")
        hits.append(
            SearchHit(
                text=str(text),
                citation=str(citation),
                score=float(score) if isinstance(score, (int, float)) else None,
                title=_field(item, "title"),
                source=_field(item, "source"),
                document_id=None if document is None else str(document),
                metadata=dict(metadata) if isinstance(metadata, Mapping) else {},
            )
        )
    return hits
