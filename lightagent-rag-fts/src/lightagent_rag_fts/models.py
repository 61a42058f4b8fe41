"""The seeds' retrieval types: ``RetrievalDocument``, ``RetrievalResult``, ``RetrievalProvider``."""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, runtime_checkable

from lightagent.errors import ValidationError

__all__ = [
    "RetrievalDocument",
    "RetrievalProvider",
    "RetrievalResult",
    "as_document",
    "check_limit",
]


@dataclass
class RetrievalDocument:
    """One document to index; its chunks keep ``title``, ``source``, the owner fields and ``metadata``."""

    content: str
    title: str | None = None
    source: str | None = None
    document_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    scope: str = "workspace"
    owner_id: str | None = None
    tenant_id: str | None = None
    created_at: float = field(default_factory=time.time)
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict of every field."""
        return asdict(self)


@dataclass
class RetrievalResult:
    """One matching chunk. ``citation_id`` is ``rag:<chunk_id>``; ``score`` is higher for better."""

    document_id: str
    chunk_id: str
    content: str
    citation_id: str
    title: str | None = None
    source: str | None = None
    position: int = 0
    score: float | None = None
    scope: str = "workspace"
    owner_id: str | None = None
    tenant_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict of every field."""
        return asdict(self)


@runtime_checkable
class RetrievalProvider(Protocol):
    """The seeds' full provider API; the agent itself needs only :meth:`search`."""

    def ingest(self, documents: Any) -> Any:
        """Index documents: one (returns its id) or many (their ids); re-ingesting a
        ``document_id`` replaces it."""
        ...

    def remove(self, document_id: str) -> bool:
        """Drop a document and its chunks; whether it existed."""
        ...

    def list_documents(self, **filters: Any) -> list[RetrievalDocument]:
        """The stored documents matching ``filters``."""
        ...

    def search(self, query: str, *, limit: int = 5, **filters: Any) -> list[RetrievalResult]:
        """The ``limit`` best chunks for ``query`` among those matching ``filters``."""
        ...

    def read_chunk(self, chunk_id: str) -> RetrievalResult | None:
        """One chunk by id (a citation's ``rag:`` prefix is accepted), or ``None``."""
        ...

    def reindex(self) -> int:
        """Re-chunk every document and rebuild the index; the number of chunks."""
        ...


_FIELDS = ("title", "source", "scope", "owner_id", "tenant_id", "created_at")


def check_limit(limit: Any) -> int:
    """``limit`` as a search takes it: an int of at least 1, else ``LA-VALIDATION`` (as the
    seeds refuse ``limit < 1``; an empty result would hide the mistake)."""
    from lightagent.errors import ValidationError

    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValidationError(
            "LA-VALIDATION",
            f"search(limit=...) must be an int of at least 1, got {limit!r}",
            hint="Ask for at least one result.",
            details={"limit": repr(limit)},
        )
    return limit


def as_document(value: Any) -> RetrievalDocument:
    """``value`` (a :class:`RetrievalDocument`, a dict or an object with ``content``) as a document."""
    if isinstance(value, RetrievalDocument):
        return value
    if isinstance(value, str):
        return RetrievalDocument(content=value)
    raw = (
        dict(value)
        if isinstance(value, Mapping)
        else vars(value)
        if hasattr(value, "__dict__")
        else {}
    )
    content = raw.get("content")
    if not isinstance(content, str):
        raise ValidationError(
            "LA-VALIDATION",
            f"a retrieval document needs a str content, got {type(content).__name__}",
            hint="Pass RetrievalDocument(content=...) or a dict with a 'content' string.",
            details={"field": "content"},
        )
    metadata = raw.get("metadata") or {}
    if not isinstance(metadata, Mapping):
        raise ValidationError(
            "LA-VALIDATION",
            "a retrieval document's metadata must be a dict",
            details={"field": "metadata"},
        )
    doc = RetrievalDocument(content=content, metadata=dict(metadata))
    if raw.get("document_id") is not None:
        doc.document_id = str(raw["document_id"])
    for name in _FIELDS:
        if raw.get(name) is not None:
            setattr(doc, name, raw[name])
    # Keys that are not fields travel as metadata, so nothing a caller passed is lost.
    for key, item in raw.items():
        if key not in _FIELDS and key not in ("content", "metadata", "document_id"):
            doc.metadata.setdefault(key, item)
    return doc
