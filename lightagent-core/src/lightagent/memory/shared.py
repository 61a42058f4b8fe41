"""``SharedMemoryPool``: memory several agents share, with provenance, scopes and ranking.

In memory by default; durable on SQL by URL — ``SharedMemoryPool("sqlite:///pool.db")``
(embedded) or ``SharedMemoryPool("postgresql://…")`` (several hosts) — with the same
behaviour: records are kept per user id, every record carries its provenance
(``source``, ``scope``, ``agent_name`` …), ``retrieve`` filters (by agent, source and
scope) *before* it ranks and limits, and ranking counts the query's words (and CJK
characters) a record shares, most recent first among equals. A write names its
``memory_id`` or gets one; writing the same id again stores nothing new
(``idempotent_writes``), which is what makes promotion safe to repeat.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lightagent.errors import ConfigurationError, StorageError, ValidationError
from lightagent.memory.reference import _terms as terms
from lightagent.memory.scope import MemoryScope

__all__ = ["SharedMemoryPool", "SharedMemoryRecord", "index_terms", "query_terms"]

#: The query words a search uses, and the words a record is found by (both bounded).
MAX_QUERY_TERMS = 64
MAX_RECORD_TERMS = 1024
_FILTERS = ("user_id", "agent_name", "source", "scope", "memory_id")


def query_terms(query: str) -> list[str]:
    """The words of ``query`` a search matches (sorted, at most :data:`MAX_QUERY_TERMS`)."""
    return sorted(terms(query))[:MAX_QUERY_TERMS]


def index_terms(text: str) -> list[str]:
    """The words a record is found by (sorted, at most :data:`MAX_RECORD_TERMS`)."""
    return sorted(terms(text))[:MAX_RECORD_TERMS]


@dataclass
class SharedMemoryRecord:
    """One stored memory: its text, owner, provenance metadata, id and creation time."""

    memory: str
    user_id: str
    metadata: dict[str, Any] = field(default_factory=dict)
    memory_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    created_at: float = field(default_factory=time.time)

    def to_result(self) -> dict[str, Any]:
        """The record as a ``retrieve`` result item (mem0's shape)."""
        return {
            "memory": self.memory,
            "user_id": self.user_id,
            "metadata": dict(self.metadata),
            "memory_id": self.memory_id,
            "created_at": self.created_at,
        }


def _matches(record: SharedMemoryRecord, filters: Mapping[str, str]) -> bool:
    for key, value in filters.items():
        if key == "user_id":
            have: Any = record.user_id
        elif key == "memory_id":
            have = record.memory_id
        else:
            have = record.metadata.get(key)
        if have != value:
            return False
    return True


class _MemoryRecords:
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
        self, user_id: str, words: list[str], filters: Mapping[str, str], limit: int
    ) -> list[tuple[int, SharedMemoryRecord]]:
        wanted = set(words)
        with self._lock:
            records = [self._by_id[i] for i in self._by_user.get(user_id, ())]
            scored = [
                (len(wanted & self._terms[r.memory_id]), r) for r in records if _matches(r, filters)
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
    """The error for a memory id another user's record already has."""
    return StorageError(
        "LA-STORAGE-CONFLICT",
        f"memory id {memory_id!r} already belongs to another user",
        hint="Leave memory_id unset (one is made) or use ids unique across users.",
        details={"memory_id": memory_id},
    )


def _same_owner(known: SharedMemoryRecord, record: SharedMemoryRecord) -> bool:
    if known.user_id != record.user_id:
        raise owner_conflict(record.memory_id)
    return False


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise ValidationError("LA-VALIDATION", f"{name} must be a str, got {type(value).__name__}")
    return value


class SharedMemoryPool:
    """Shared memory with provenance: in memory, or on SQL by URL (see the module docstring).

    ``agent_name``, ``default_source`` and ``default_scope`` are the provenance of writes
    that name none; ``max_results`` bounds ``retrieve``.
    """

    #: Writing a memory id twice stores it once (promotion relies on it).
    idempotent_writes = True

    def __init__(
        self,
        url: str | None = None,
        *,
        agent_name: str | None = None,
        default_source: str = "user",
        default_scope: str = "user",
        max_results: int = 5,
        table: str = "lightagent_memory",
    ) -> None:
        if isinstance(max_results, bool) or not isinstance(max_results, int) or max_results < 1:
            raise ConfigurationError(
                "LA-CONFIG", f"SharedMemoryPool(max_results=...) must be >= 1, got {max_results!r}"
            )
        self.agent_name = agent_name
        self.default_source = default_source
        self.default_scope = default_scope
        self.max_results = max_results
        self.url = url
        if url is None:
            self._records: Any = _MemoryRecords()
        else:
            from lightagent.memory.sql_pool import SqlRecords

            self._records = SqlRecords(url, table=table)

    def store(
        self,
        data: Any,
        user_id: str,
        *,
        metadata: Mapping[str, Any] | None = None,
        scope: MemoryScope | None = None,
        memory_id: str | None = None,
    ) -> dict[str, Any]:
        """Keep ``data`` for ``user_id``; ``{"stored", "memory_id", "user_id"}``.

        Provenance is the pool's defaults, then ``metadata``, then ``scope``.
        """
        user_id = _text(user_id, "user_id")
        text = data if isinstance(data, str) else str(data)
        if not text.strip():
            raise ValidationError("LA-VALIDATION", "SharedMemoryPool.store needs non-empty data")
        meta: dict[str, Any] = {"source": self.default_source, "scope": self.default_scope}
        if self.agent_name is not None:
            meta["agent_name"] = self.agent_name
        meta.update(metadata or {})
        if scope is not None:
            meta.update(scope.to_metadata())
        memory_id = memory_id or meta.get("memory_id") or uuid.uuid4().hex
        memory_id = _text(memory_id, "memory_id")
        if not memory_id or len(memory_id) > 200:
            raise ValidationError(
                "LA-VALIDATION",
                "memory_id must have 1-200 characters",
                details={"length": len(memory_id)},
            )
        meta["user_id"] = user_id
        meta["memory_id"] = memory_id
        record = SharedMemoryRecord(text, user_id, meta, memory_id)
        added = self._records.add(record)
        return {"stored": True, "memory_id": memory_id, "user_id": user_id, "existing": not added}

    def retrieve(
        self,
        query: str,
        user_id: str,
        *,
        agent_name: str | None = None,
        source: str | None = None,
        scope: str | None = None,
        limit: int | None = None,
    ) -> dict[str, Any]:
        """``{"results": [...]}``: ``user_id``'s records matching the filters that share words
        with ``query``, best first."""
        user_id = _text(user_id, "user_id")
        filters = {
            k: v
            for k, v in (("agent_name", agent_name), ("source", source), ("scope", scope))
            if v is not None
        }
        words = query_terms(query if isinstance(query, str) else str(query))
        if not words:
            return {"results": []}
        count = self.max_results if limit is None else max(0, int(limit))
        hits = self._records.search(user_id, words, filters, count)
        return {"results": [{**record.to_result(), "score": score} for score, record in hits]}

    def list_records(self, *, limit: int | None = None, **filters: Any) -> list[SharedMemoryRecord]:
        """Records matching every filter (``user_id``, ``agent_name``, ``source``, ``scope``,
        ``memory_id``), oldest first."""
        unknown = sorted(set(filters) - set(_FILTERS))
        if unknown:
            raise ConfigurationError(
                "LA-CONFIG",
                f"SharedMemoryPool.list_records does not filter on {', '.join(unknown)}",
                hint=f"Filter on {', '.join(_FILTERS)}.",
            )
        return self._records.list({k: str(v) for k, v in filters.items() if v is not None}, limit)

    def clear(self, *, user_id: str | None = None) -> int:
        """Forget one user's records (or every record); returns how many."""
        return int(self._records.clear(user_id))

    def close(self) -> None:
        """Release the database connection (the pool reconnects on next use)."""
        self._records.close()

    def __len__(self) -> int:
        return int(self._records.count())

    def __repr__(self) -> str:
        where = "memory" if self.url is None else self._records.describe()
        return f"SharedMemoryPool({where}, agent_name={self.agent_name!r})"
