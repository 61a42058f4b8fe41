"""``SharedMemoryPool``: memory several agents share, with provenance, scopes and ranking.

In memory by default; durable on SQL by URL — ``SharedMemoryPool("sqlite:///pool.db")``
(embedded) or ``SharedMemoryPool("postgresql://…")`` (several hosts) — with the same
behaviour: records are kept per user id and tenant, every record carries its provenance
(``source``, ``scope``, ``agent_name`` …), ``retrieve`` reads one tenant's records (none
but tenant-less ones without ``tenant_id=``) and filters (by agent, source and scope)
*before* it ranks and limits, and ranking counts the query's words (and CJK
characters) a record shares, most recent first among equals. A write names its
``memory_id`` or gets one; writing the same id again stores nothing new
(``idempotent_writes``), which is what makes promotion safe to repeat.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from lightagent.errors import ConfigurationError, ValidationError

from lightagent_memory.records import (
    MemoryRecords,
    SharedMemoryRecord,
    index_terms,
    query_terms,
)
from lightagent_memory.scope import MemoryScope

__all__ = ["SharedMemoryPool", "SharedMemoryRecord", "index_terms", "query_terms"]

_FILTERS = ("user_id", "agent_name", "source", "scope", "memory_id", "tenant_id")


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise ValidationError("LA-VALIDATION", f"{name} must be a str, got {type(value).__name__}")
    return value


def _tenant(value: Any) -> str | None:
    return None if value is None else _text(value, "tenant_id")


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
            self._records: Any = MemoryRecords()
        else:
            from lightagent_memory.sql_pool import SqlRecords

            self._records = SqlRecords(url, table=table)

    def store(
        self,
        data: Any,
        user_id: str,
        *,
        metadata: Mapping[str, Any] | None = None,
        scope: MemoryScope | None = None,
        memory_id: str | None = None,
        tenant_id: str | None = None,
    ) -> dict[str, Any]:
        """Keep ``data`` for ``user_id`` in ``tenant_id``; ``{"stored", "memory_id", "user_id"}``.

        Provenance is the pool's defaults, then ``metadata``, then ``scope``.
        """
        user_id = _text(user_id, "user_id")
        tenant_id = _tenant(tenant_id)
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
        meta.pop("tenant_id", None)  # the keyword's, never a label's
        if tenant_id is not None:
            meta["tenant_id"] = tenant_id
        record = SharedMemoryRecord(text, user_id, meta, memory_id, tenant_id=tenant_id)
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
        tenant_id: str | None = None,
    ) -> dict[str, Any]:
        """``{"results": [...]}``: ``user_id``'s records in ``tenant_id`` (None: tenant-less
        ones only) matching the filters that share words with ``query``, best first."""
        user_id = _text(user_id, "user_id")
        tenant_id = _tenant(tenant_id)
        filters = {
            k: v
            for k, v in (("agent_name", agent_name), ("source", source), ("scope", scope))
            if v is not None
        }
        words = query_terms(query if isinstance(query, str) else str(query))
        if not words:
            return {"results": []}
        count = self.max_results if limit is None else max(0, int(limit))
        hits = self._records.search(user_id, words, filters, count, tenant_id)
        return {"results": [{**record.to_result(), "score": score} for score, record in hits]}

    def list_records(self, *, limit: int | None = None, **filters: Any) -> list[SharedMemoryRecord]:
        """Records matching every filter (``user_id``, ``agent_name``, ``source``, ``scope``,
        ``memory_id``, ``tenant_id``), oldest first."""
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
