"""Memory: the ``MemoryProtocol`` seam the loop uses, its filter point and a reference backend."""

from __future__ import annotations

from lightagent._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "DefaultMemoryFilter": "lightagent.memory.filtering",
    "InMemoryMemory": "lightagent.memory.reference",
    "MemoryFilter": "lightagent.memory.filtering",
    "MemoryFilterOutcome": "lightagent.memory.filtering",
    "MemoryProtocol": "lightagent.memory.protocol",
    "WriteAdmission": "lightagent.memory.filtering",
    "memory_items": "lightagent.memory.protocol",
    "result_owner": "lightagent.memory.protocol",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
