"""The lightagent plugin of lightagent-memory: the ``memory`` agent extension and the
``SharedMemoryPool`` memory providers."""

from __future__ import annotations

from typing import Any

from lightagent.hookspecs import Register, hookimpl

from lightagent_memory import __version__


@hookimpl
def register_agent_extensions(register: Register) -> None:
    register("memory", "lightagent_memory.extension:MemoryExtension")


@hookimpl
def register_memory(register: Register) -> None:
    register("shared", "lightagent_memory.shared:SharedMemoryPool")
    # URL forms: memory="sqlite:///memory.db" or "postgresql://..." (a durable SharedMemoryPool)
    register("sqlite://", "lightagent_memory.shared:SharedMemoryPool")
    register("postgresql://", "lightagent_memory.shared:SharedMemoryPool")


@hookimpl
def lightagent_manifest() -> dict[str, Any]:
    return {
        "name": "lightagent-memory",
        "version": __version__,
        "description": "Memory policy, candidates and promotion, SharedMemoryPool, self-learning.",
    }
