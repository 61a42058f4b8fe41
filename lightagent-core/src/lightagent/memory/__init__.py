"""Memory: the ``MemoryProtocol`` seam, ``MemoryPolicy``, promotion, and the backends in core."""

from __future__ import annotations

from lightagent._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "DefaultMemoryFilter": "lightagent.memory.filtering",
    "InMemoryMemory": "lightagent.memory.reference",
    "MemoryAdmissionDecision": "lightagent.memory.filtering",
    "MemoryCandidate": "lightagent.memory.candidates",
    "MemoryFilter": "lightagent.memory.filtering",
    "MemoryFilterOutcome": "lightagent.memory.filtering",
    "MemoryPolicy": "lightagent.memory.policy",
    "MemoryPromotionDecision": "lightagent.memory.candidates",
    "MemoryProtocol": "lightagent.memory.protocol",
    "MemoryScope": "lightagent.memory.scope",
    "SharedMemoryPool": "lightagent.memory.shared",
    "SharedMemoryRecord": "lightagent.memory.shared",
    "WriteAdmission": "lightagent.memory.filtering",
    "memory_items": "lightagent.memory.protocol",
    "result_owner": "lightagent.memory.protocol",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
