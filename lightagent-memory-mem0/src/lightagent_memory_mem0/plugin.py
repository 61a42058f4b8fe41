"""The lightagent plugin of lightagent-memory-mem0: its hook implementations.

Registering imports nothing heavy: the provider is a lazy ``"module:attribute"``
reference, and mem0 itself loads on the first store or retrieve.
"""

from __future__ import annotations

from typing import Any

from lightagent import hookimpl

from lightagent_memory_mem0 import __version__


@hookimpl
def register_memory(register: Any) -> None:
    register("mem0", "lightagent_memory_mem0.memory:Mem0Memory")


@hookimpl
def lightagent_manifest() -> dict[str, Any]:
    return {
        "name": "lightagent-memory-mem0",
        "version": __version__,
        "description": "mem0 long-term memory (memory='mem0').",
    }
