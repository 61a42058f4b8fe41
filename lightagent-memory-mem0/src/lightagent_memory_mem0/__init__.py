"""lightagent-memory-mem0: mem0 long-term memory for lightagent agents.

Installing it registers the memory provider ``"mem0"``: ``LightAgent(memory="mem0")`` or
``memory=("mem0", {"base_url": ..., "path": ...})``.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
__all__ = ["Mem0Memory", "__version__", "echo_facts", "mem0_user_id"]

_EXPORTS = {
    "Mem0Memory": "lightagent_memory_mem0.memory",
    "mem0_user_id": "lightagent_memory_mem0.memory",
    "echo_facts": "lightagent_memory_mem0.offline",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'lightagent_memory_mem0' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
