"""The ``memory`` agent extension: ``memory=``, ``memory_policy=``, ``memory_namespace=``,
``self_learning=``, ``agent.memory`` / ``agent.memory_filter`` and the candidate methods on
``LightAgent``.

Every run of an agent with memory retrieves before the first request and writes after the
answer (:class:`~lightagent_memory.steps.MemoryStep`), through ``MemoryPolicy()`` (which
fails closed) when no policy was given.
"""

from __future__ import annotations

from typing import Any

from lightagent.extensions import AgentExtension, ExtensionPart

from lightagent_memory.part import MemoryPart, memory_settings

__all__ = ["MemoryExtension"]


class MemoryExtension(AgentExtension):
    """Memory for ``LightAgent``: its backend, policy, candidates and promotion, and
    self-learning."""

    name = "memory"
    keywords = {
        "memory": None,
        "memory_policy": None,
        "memory_namespace": None,
        "self_learning": False,
    }
    attributes = (
        "memory",
        "memory_filter",
        "memory_policy",
        "list_memory_candidates",
        "promote_memory_candidate",
        "apromote_memory_candidate",
    )

    def configure(self, agent: Any, values: dict[str, Any]) -> ExtensionPart | None:
        self_learning = values.get("self_learning", False)
        memory = values.get("memory")
        policy, book = memory_settings(
            memory,
            values.get("memory_policy"),
            values.get("memory_namespace"),
            self_learning,
        )
        if policy is not None:
            agent.memory_filter = policy
        return MemoryPart(agent, memory, book, bool(self_learning))
