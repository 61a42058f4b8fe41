"""``MemoryProtocol``: the seeds' memory contract, and reading what a backend returns.

A memory backend has ``store(data, user_id)`` and ``retrieve(query, user_id)``; either may
be sync or async. ``retrieve`` returns the mem0 shape
``{"results": [{"memory": str, "user_id"?: str, "metadata"?: {...}}]}``. ``store`` receives
``metadata=`` (provenance: source, scope, agent, trace and run ids) and both receive
``tenant_id=`` (the run's tenant, None without one) only when their signatures accept
them, so two-argument backends keep working.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from lightagent.errors import StorageError

__all__ = ["MemoryProtocol", "accepts_keyword", "memory_items", "result_owner", "store_call"]


@runtime_checkable
class MemoryProtocol(Protocol):
    """A user memory backend (sync or async methods)."""

    def store(self, data: Any, user_id: str) -> Any:
        """Keep ``data`` for ``user_id`` (may also accept ``metadata=``)."""
        ...

    def retrieve(self, query: str, user_id: str) -> Any:
        """Memories of ``user_id`` relevant to ``query``: ``{"results": [{"memory": ...}]}``."""
        ...


def memory_items(raw: Any) -> list[dict[str, Any]]:
    """The result items of a ``retrieve`` answer, each a dict with a ``memory`` text.

    Accepts the mem0 dict, a bare list of items, or None (no memories); items that are
    plain strings become ``{"memory": text}``. Anything else raises ``LA-MEMORY``.
    """
    if raw is None:
        return []
    if type(raw) is dict or isinstance(raw, Mapping):
        items = raw.get("results", [])
    elif isinstance(raw, (list, tuple)):
        items = raw
    else:
        raise StorageError(
            "LA-MEMORY",
            f"memory.retrieve returned {type(raw).__name__}, not {{'results': [...]}}",
            details={"type": type(raw).__name__},
        )
    if not isinstance(items, (list, tuple)):
        raise StorageError(
            "LA-MEMORY",
            f"memory.retrieve returned results of type {type(items).__name__}, not a list",
        )
    out = []
    for item in items:
        if isinstance(item, str):
            out.append({"memory": item})
        elif type(item) is dict or isinstance(item, Mapping):
            text = item.get("memory", item.get("text", item.get("content")))
            if text is None:
                continue
            entry = dict(item)
            entry["memory"] = text if isinstance(text, str) else str(text)
            out.append(entry)
    return out


def result_owner(item: Mapping[str, Any]) -> str | None:
    """The user a memory result is attributed to (``user_id`` or ``metadata.user_id``), if any."""
    owner = item.get("user_id")
    if owner is None:
        metadata = item.get("metadata")
        if isinstance(metadata, Mapping):
            owner = metadata.get("user_id")
    return None if owner is None else str(owner)


_accepts: dict[Any, bool] = {}


def accepts_keyword(func: Any, name: str) -> bool:
    """Whether ``func`` takes the keyword ``name`` (or ``**kwargs``); cached per function."""
    key = (getattr(func, "__func__", func), name)
    known = _accepts.get(key)
    if known is not None:
        return known
    try:
        params = inspect.signature(func).parameters.values()
        found = any(
            p.kind is p.VAR_KEYWORD
            or (p.name == name and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD))
            for p in params
        )
    except (TypeError, ValueError):
        found = False
    if len(_accepts) < 4096:
        _accepts[key] = found
    return found


def store_call(
    memory: Any, data: Any, user_id: str, metadata: Mapping[str, Any], tenant: str | None
) -> tuple[Any, ...]:
    """``(function, data, user_id)`` storing one memory, with the keywords ``store`` accepts."""
    import functools

    store = memory.store
    keywords: dict[str, Any] = {}
    if accepts_keyword(store, "metadata"):
        keywords["metadata"] = metadata
    if accepts_keyword(store, "tenant_id"):
        keywords["tenant_id"] = tenant
    return (functools.partial(store, **keywords) if keywords else store, data, user_id)
