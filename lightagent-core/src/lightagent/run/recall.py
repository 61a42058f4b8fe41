"""How a driver performs the memory and retrieval effects, and the prompt injection the
capabilities that recall share.

Memory (lightagent-memory) and retrieval context (lightagent-rag-fts) are capabilities'
run steps: they yield :class:`~lightagent.run.effects.RetrieveMemory`,
:class:`~lightagent.run.effects.StoreMemory` and :class:`~lightagent.run.effects.Search`,
which carry their backend, and the drivers perform them through :func:`recall_call`.
"""

from __future__ import annotations

from typing import Any

from lightagent.memory.protocol import accepts_keyword, store_call
from lightagent.run.effects import RetrieveMemory, StoreMemory
from lightagent.run.spec import RunSpec

__all__ = ["inject", "recall_call"]


def inject(messages: list[dict[str, Any]], text: str) -> None:
    """Add ``text`` to the leading system message (or put one first)."""
    first = messages[0] if messages else None
    if (
        first is not None
        and first.get("role") == "system"
        and isinstance(first.get("content"), str)
    ):
        messages[0] = {**first, "content": f"{first['content']}\n\n{text}"}
    else:
        messages.insert(0, {"role": "system", "content": text})


def recall_call(spec: RunSpec, effect: Any) -> tuple[Any, ...]:
    """``(function, *args)`` performing a memory or retrieval effect (kwargs bound in); a
    memory backend that accepts ``tenant_id=`` is given the run's tenant."""
    import functools

    if isinstance(effect, RetrieveMemory):
        tenant = _tenant(spec)
        retrieve = effect.memory.retrieve
        if accepts_keyword(retrieve, "tenant_id"):
            retrieve = functools.partial(retrieve, tenant_id=tenant)
        return (retrieve, effect.query, effect.user_id)
    if isinstance(effect, StoreMemory):
        return store_call(
            effect.memory, effect.data, effect.user_id, effect.metadata, _tenant(spec)
        )
    search = effect.retrieval.search
    return (functools.partial(search, limit=effect.limit, **effect.filters), effect.query)


def _tenant(spec: RunSpec) -> str | None:
    tenant = spec.ctx.tenant_id
    return None if tenant is None else str(tenant)
