"""``InMemoryRetrieval``: the reference retrieval provider (documents in a dict, word-overlap ranking)."""

from __future__ import annotations

import math
import threading
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from lightagent.memory.reference import _terms

__all__ = ["InMemoryRetrieval"]

_FIELDS = ("tenant_id", "owner_id", "scope")


def _doc(value: Any) -> dict[str, Any]:
    if isinstance(value, Mapping):
        doc = dict(value)
    else:
        doc = {k: getattr(value, k) for k in dir(value) if not k.startswith("_")}
        doc = {k: v for k, v in doc.items() if not callable(v)}
    if not isinstance(doc.get("content"), str):
        from lightagent.errors import ValidationError

        raise ValidationError("LA-VALIDATION", "a document needs a str content")
    doc.setdefault("document_id", uuid.uuid4().hex)
    doc["document_id"] = str(doc["document_id"])
    doc.setdefault("metadata", {})
    return doc


class InMemoryRetrieval:
    """Documents in this process; ``search`` ranks by shared words, title words count double.

    Filters match document fields (``tenant_id``, ``owner_id``, ``scope``) or metadata
    keys exactly, and are applied before the limit. Citations are ``rag:<document_id>``.
    """

    def __init__(self, documents: Iterable[Any] = ()) -> None:
        self._docs: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()
        if documents:
            self.ingest(documents)

    def ingest(self, documents: Any) -> list[str]:
        """Add or replace documents (dicts or objects with ``content``); returns their ids."""
        if isinstance(documents, (Mapping, str)) or not isinstance(documents, Iterable):
            documents = [documents]
        docs = [_doc(d) for d in documents]
        with self._lock:
            for doc in docs:
                self._docs[doc["document_id"]] = doc
        return [d["document_id"] for d in docs]

    def remove(self, document_id: str) -> bool:
        """Forget one document; whether it existed."""
        with self._lock:
            return self._docs.pop(str(document_id), None) is not None

    def list_documents(self, **filters: Any) -> list[dict[str, Any]]:
        """The stored documents matching ``filters``."""
        with self._lock:
            docs = list(self._docs.values())
        return [dict(d) for d in docs if _matches(d, filters)]

    def search(self, query: str, *, limit: int = 5, **filters: Any) -> list[dict[str, Any]]:
        """The ``limit`` best matches, each with ``content``, ``score`` and ``citation_id``."""
        wanted = _terms(query or "")
        if not wanted or limit <= 0:
            return []
        with self._lock:
            docs = [d for d in self._docs.values() if _matches(d, filters)]
        scored = []
        for doc in docs:
            body = len(wanted & _terms(doc["content"]))
            title = len(wanted & _terms(doc.get("title") or ""))
            score = body + 2 * title
            if score:
                scored.append((score / math.sqrt(len(wanted)), doc))
        scored.sort(key=lambda pair: (-pair[0], pair[1]["document_id"]))
        return [
            {
                "document_id": doc["document_id"],
                "chunk_id": f"{doc['document_id']}:0",
                "content": doc["content"],
                "title": doc.get("title"),
                "source": doc.get("source"),
                "score": round(score, 4),
                "citation_id": f"rag:{doc['document_id']}",
                "metadata": dict(doc.get("metadata") or {}),
                **{k: doc.get(k) for k in _FIELDS if doc.get(k) is not None},
            }
            for score, doc in scored[:limit]
        ]


def _matches(doc: dict[str, Any], filters: Mapping[str, Any]) -> bool:
    metadata = doc.get("metadata") or {}
    for key, wanted in filters.items():
        if wanted is None:
            continue
        value = doc.get(key, metadata.get(key))
        if value != wanted:
            return False
    return True
