"""Memory: the ``MemoryProtocol`` seam and its reference backend.

``memory=`` on ``LightAgent`` and everything an agent does with it — retrieving before the
first request, filtering (``MemoryFilter``, ``DefaultMemoryFilter``, ``MemoryPolicy``),
writing after the run, scopes, candidates and promotion, ``SharedMemoryPool`` and
self-learning — are lightagent-memory's (``pip install 'lightagent-core[memory]'``).
"""

from __future__ import annotations

from lightagent.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "InMemoryMemory": "lightagent.memory.reference",
    "MemoryProtocol": "lightagent.memory.protocol",
    "memory_items": "lightagent.memory.protocol",
    "result_owner": "lightagent.memory.protocol",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
