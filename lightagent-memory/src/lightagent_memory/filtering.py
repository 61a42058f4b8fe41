"""The filter point between a memory backend and the prompt, and before each write.

Every retrieved result passes :meth:`MemoryFilter.filter_results` before the memory step
may inject it; every write passes :meth:`MemoryFilter.admit_write`. An agent's runs use
``MemoryPolicy`` (``MemoryPolicy()`` without ``memory_policy=``) unless
``agent.memory_filter`` is set to another filter, such as :class:`DefaultMemoryFilter`, the
smallest one: user attribution only. Both fail closed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from lightagent.memory.protocol import result_owner

from lightagent_memory.attribution import plain_user_id

__all__ = [
    "DefaultMemoryFilter",
    "MemoryAdmissionDecision",
    "MemoryFilter",
    "MemoryFilterOutcome",
    "WriteAdmission",
]


@dataclass
class MemoryFilterOutcome:
    """Which results may be injected, and why the others may not (``{"reason", "index"}``)."""

    allowed: list[dict[str, Any]]
    blocked: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class MemoryAdmissionDecision:
    """The verdict on one write: ``allowed``, a ``reason`` when refused, a rewritten ``value``."""

    allowed: bool = True
    reason: str | None = None
    value: Any = None


#: The seam's first name for :class:`MemoryAdmissionDecision` (the same class).
WriteAdmission = MemoryAdmissionDecision


@runtime_checkable
class MemoryFilter(Protocol):
    """Decides what of memory reaches the prompt and what is written."""

    def filter_results(
        self, results: list[dict[str, Any]], *, user_id: str, context: Any
    ) -> MemoryFilterOutcome:
        """Split ``results`` (retrieved for ``user_id``) into allowed and blocked."""
        ...

    def admit_write(self, data: Any, *, user_id: str, context: Any) -> WriteAdmission:
        """Allow, refuse or rewrite one write."""
        ...


#: A filter may also define ``backend_user_id(user_id, *, context) -> str``: the id the
#: backend sees for both retrieve and store (e.g. ``"tenant-a:alice"`` for a namespace);
#: without it the backend sees :func:`~lightagent_memory.attribution.plain_user_id`.


class DefaultMemoryFilter:
    """Isolation by user attribution only: results of another user, or of nobody, are blocked.

    ``allow_unattributed=True`` lets results without a ``user_id`` through (the seeds'
    default, which fails open; ours fails closed).
    """

    def __init__(self, *, allow_unattributed: bool = False) -> None:
        self.allow_unattributed = allow_unattributed

    def backend_user_id(self, user_id: str, *, context: Any = None) -> str:
        """The user id as given (in the run's tenant, when it has one)."""
        return plain_user_id(user_id, context)

    def filter_results(
        self, results: list[dict[str, Any]], *, user_id: str, context: Any
    ) -> MemoryFilterOutcome:
        allowed: list[dict[str, Any]] = []
        blocked: list[dict[str, Any]] = []
        user_id = plain_user_id(user_id, context)
        for index, item in enumerate(results):
            owner = result_owner(item) if isinstance(item, Mapping) else None
            if owner is None:
                if self.allow_unattributed:
                    allowed.append(item)
                else:
                    blocked.append({"index": index, "reason": "unattributed"})
            elif owner != str(user_id):
                blocked.append({"index": index, "reason": "other_user"})
            else:
                allowed.append(item)
        return MemoryFilterOutcome(allowed, blocked)

    def admit_write(self, data: Any, *, user_id: str, context: Any) -> WriteAdmission:
        if data is None or (isinstance(data, str) and not data.strip()):
            return WriteAdmission(False, "empty")
        return WriteAdmission(True)
