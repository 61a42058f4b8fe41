"""Memory: the ``MemoryProtocol`` seam, the filter seam, and the reference backend.

``MemoryPolicy``, scopes, candidates and promotion, ``SharedMemoryPool`` and self-learning
are lightagent-memory's (``pip install 'lightagent-core[memory]'``).
"""

from __future__ import annotations

from lightagent.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "DefaultMemoryFilter": "lightagent.memory.filtering",
    "InMemoryMemory": "lightagent.memory.reference",
    "MemoryAdmissionDecision": "lightagent.memory.filtering",
    "MemoryFilter": "lightagent.memory.filtering",
    "MemoryFilterOutcome": "lightagent.memory.filtering",
    "MemoryProtocol": "lightagent.memory.protocol",
    "WriteAdmission": "lightagent.memory.filtering",
    "memory_items": "lightagent.memory.protocol",
    "result_owner": "lightagent.memory.protocol",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
