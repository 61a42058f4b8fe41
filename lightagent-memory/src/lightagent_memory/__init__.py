"""lightagent-memory: memory policy for lightagent.

``memory=`` on ``LightAgent``: retrieving before the first request and writing after the
answer, through ``MemoryPolicy`` or another ``MemoryFilter`` such as
``DefaultMemoryFilter`` (what of memory reaches the prompt and what is written); ``MemoryScope``
(provenance), memory candidates and their promotion, ``SharedMemoryPool`` (in process,
SQLite or PostgreSQL) and self-learning. It reaches ``LightAgent`` as the ``memory``
agent extension (``memory=``, ``memory_policy=``, ``memory_namespace=``, ``self_learning=``,
``agent.list_memory_candidates`` / ``agent.promote_memory_candidate``); the names below
are importable from ``lightagent`` too.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

#: Public name -> the module that defines it (imported on first use).
_EXPORTS: dict[str, str] = {
    "CandidateBook": "lightagent_memory.candidates",
    "DefaultMemoryFilter": "lightagent_memory.filtering",
    "MemoryAdmissionDecision": "lightagent_memory.filtering",
    "MemoryCandidate": "lightagent_memory.candidates",
    "MemoryFilter": "lightagent_memory.filtering",
    "MemoryFilterOutcome": "lightagent_memory.filtering",
    "MemoryPolicy": "lightagent_memory.policy",
    "MemoryProviderAdapter": "lightagent_memory.provider",
    "MemoryPromotionDecision": "lightagent_memory.candidates",
    "MemoryScope": "lightagent_memory.scope",
    "SharedMemoryPool": "lightagent_memory.shared",
    "SharedMemoryRecord": "lightagent_memory.shared",
    "WriteAdmission": "lightagent_memory.filtering",
    "learning_note": "lightagent_memory.learning",
    "learning_scope": "lightagent_memory.learning",
}

__all__ = sorted([*_EXPORTS, "__version__"])


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'lightagent_memory' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
