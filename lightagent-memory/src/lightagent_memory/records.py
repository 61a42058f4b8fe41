"""The records behind ``SharedMemoryPool``: the record type, its search terms, the in-memory store.

Shared by the in-memory pool and the SQL one (:mod:`lightagent_memory.sql_pool`), which
keep records the same way.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lightagent.errors import StorageError
from lightagent.memory.reference import search_terms as terms

__all__ = ["SharedMemoryRecord", "index_terms", "owner_conflict", "query_terms"]

#: The query words a search uses, and the words a record is found by (both bounded).
MAX_QUERY_TERMS = 64
MAX_RECORD_TERMS = 1024


def query_terms(query: str) -> list[str]:
    """The words of ``query`` a search matches (sorted, at most :data:`MAX_QUERY_TERMS`)."""
    return sorted(terms(query))[:MAX_QUERY_TERMS]


def index_terms(text: str) -> list[str]:
    """The words a record is found by (sorted, at most :data:`MAX_RECORD_TERMS`)."""
    return sorted(terms(text))[:MAX_RECORD_TERMS]


@dataclass
class SharedMemoryRecord:
    """One stored memory: its text, owner, provenance metadata, id, creation time and tenant."""

    memory: str
    user_id: str
    metadata: dict[str, Any] = field(default_factory=dict)
    memory_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    created_at: float = field(default_factory=time.time)
    tenant_id: str | None = None

    def to_result(self) -> dict[str, Any]:
        """The record as a ``retrieve`` result item (mem0's shape)."""
        return {
            "memory": self.memory,
            "user_id": self.user_id,
            "metadata": dict(self.metadata),
            "memory_id": self.memory_id,
            "created_at": self.created_at,
            "tenant_id": self.tenant_id,
        }


def _matches(record: SharedMemoryRecord, filters: Mapping[str, str]) -> bool:
    for key, value in filters.items():
        if key == "user_id":
            have: Any = record.user_id
        elif key in ("memory_id", "tenant_id"):
            have = getattr(record, key)
        else:
            have = record.metadata.get(key)
        if have != value:
            return False
    return True


class MemoryRecords:
    """Records in this process (an RLock; per-user lists for search)."""

    def __init__(self) -> None:
        self._by_id: dict[str, SharedMemoryRecord] = {}
        self._terms: dict[str, frozenset[str]] = {}
        self._by_user: dict[str, list[str]] = {}
        self._lock = threading.RLock()

    def add(self, record: SharedMemoryRecord) -> bool:
        with self._lock:
            known = self._by_id.get(record.memory_id)
            if known is not None:
                return _same_owner(known, record)
            self._by_id[record.memory_id] = record
            self._terms[record.memory_id] = frozenset(index_terms(record.memory))
            self._by_user.setdefault(record.user_id, []).append(record.memory_id)
            return True

    def search(
        self,
        user_id: str,
        words: list[str],
        filters: Mapping[str, str],
        limit: int,
        tenant: str | None = None,
    ) -> list[tuple[int, SharedMemoryRecord]]:
        wanted = set(words)
        with self._lock:
            records = [self._by_id[i] for i in self._by_user.get(user_id, ())]
            scored = [
                (len(wanted & self._terms[r.memory_id]), r)
                for r in records
                if r.tenant_id == tenant and _matches(r, filters)
            ]
        hits = [(score, r) for score, r in scored if score > 0]
        hits.sort(key=lambda hit: (-hit[0], -hit[1].created_at, hit[1].memory_id))
        return hits[:limit]

    def list(self, filters: Mapping[str, str], limit: int | None) -> list[SharedMemoryRecord]:
        with self._lock:
            if "user_id" in filters:
                pool = [self._by_id[i] for i in self._by_user.get(filters["user_id"], ())]
            else:
                pool = list(self._by_id.values())
        found = [r for r in pool if _matches(r, filters)]
        found.sort(key=lambda r: (r.created_at, r.memory_id))
        return found if limit is None else found[:limit]

    def clear(self, user_id: str | None) -> int:
        with self._lock:
            if user_id is None:
                count = len(self._by_id)
                self._by_id.clear()
                self._terms.clear()
                self._by_user.clear()
                return count
            ids = self._by_user.pop(user_id, [])
            for memory_id in ids:
                self._by_id.pop(memory_id, None)
                self._terms.pop(memory_id, None)
            return len(ids)

    def count(self) -> int:
        with self._lock:
            return len(self._by_id)

    def close(self) -> None:
        return None


def owner_conflict(memory_id: str) -> StorageError:
    """The error for a memory id another user's (or tenant's) record already has."""
    return StorageError(
        "LA-STORAGE-CONFLICT",
        f"memory id {memory_id!r} already belongs to another user or tenant",
        hint="Leave memory_id unset (one is made) or use ids unique across users and tenants.",
        details={"memory_id": memory_id},
    )


def _same_owner(known: SharedMemoryRecord, record: SharedMemoryRecord) -> bool:
    if (known.user_id, known.tenant_id) != (record.user_id, record.tenant_id):
        raise owner_conflict(record.memory_id)
    return False
