"""The ``memory`` agent extension: ``memory_policy=``, ``memory_namespace=``,
``self_learning=`` and the candidate methods on ``LightAgent``.

It follows ``memory=``: every agent with memory gets this part at its first run, so its
runs use ``MemoryPolicy()`` (which fails closed) when no policy was given.
"""

from __future__ import annotations

from typing import Any

from lightagent.extensions import AgentExtension, ExtensionPart

from lightagent_memory.part import MemoryPart, memory_settings

__all__ = ["MemoryExtension"]


class MemoryExtension(AgentExtension):
    """Memory policy, candidates and promotion, and self-learning for ``LightAgent``."""

    name = "memory"
    keywords = {"memory_policy": None, "memory_namespace": None, "self_learning": False}
    attributes = (
        "memory_policy",
        "list_memory_candidates",
        "promote_memory_candidate",
        "apromote_memory_candidate",
    )
    follows = ("memory",)

    def configure(self, agent: Any, values: dict[str, Any]) -> ExtensionPart | None:
        self_learning = values.get("self_learning", False)
        policy, book = memory_settings(
            getattr(agent, "_memory_spec", None),
            values.get("memory_policy"),
            values.get("memory_namespace"),
            self_learning,
        )
        if policy is not None:
            agent.memory_filter = policy
        return MemoryPart(agent, book, bool(self_learning))
