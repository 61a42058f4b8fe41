"""``MemoryScope``: where a memory came from (source, scope, agent, trace), as metadata.

Every memory the agent writes carries its provenance in ``metadata``: ``source`` (who
produced it: ``user``, ``reflection``, ``tool`` …), ``scope`` (whose it is: ``user``,
``agent``, ``shared`` …), the agent, the trace, and optionally ``confidence`` and
``trust_level``. Sources and scopes named in :data:`INTERNAL_SOURCES` /
:data:`INTERNAL_SCOPES` are the agent's own evidence: they stay non-injectable
candidates until promoted.

The backend ids (tenant, namespace, user) are :mod:`lightagent_memory.attribution`'s,
re-exported here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lightagent_memory.attribution import (
    INTERNAL_SCOPES,
    INTERNAL_SOURCES,
    agent_memory_user_id,
    is_internal,
    memory_user_id,
    plain_user_id,
    run_tenant,
)

__all__ = [
    "INTERNAL_SCOPES",
    "INTERNAL_SOURCES",
    "MemoryScope",
    "agent_memory_user_id",
    "is_internal",
    "memory_user_id",
    "plain_user_id",
    "run_tenant",
]

#: The provenance fields of a ``MemoryScope``, as metadata keys.
_FIELDS = (
    "source",
    "scope",
    "agent_name",
    "trace_id",
    "parent_trace_id",
    "confidence",
    "trust_level",
)


@dataclass(frozen=True)
class MemoryScope:
    """The provenance of one memory write; :meth:`to_metadata` is what the backend keeps."""

    source: str = "user"
    scope: str = "user"
    agent_name: str | None = None
    trace_id: str | None = None
    parent_trace_id: str | None = None
    confidence: float | None = None
    trust_level: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def internal(self) -> bool:
        """Whether this is the agent's own evidence (it needs promotion before injection)."""
        return self.source in INTERNAL_SOURCES or self.scope in INTERNAL_SCOPES

    def to_metadata(self) -> dict[str, Any]:
        """``{"source", "scope", …}``: the set fields, over ``metadata``."""
        out = dict(self.metadata)
        for key in _FIELDS:
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out

    @classmethod
    def from_metadata(cls, metadata: dict[str, Any] | None) -> MemoryScope:
        """The scope a metadata dict describes (unknown keys stay in ``metadata``)."""
        data = dict(metadata or {})
        known = {key: data.pop(key) for key in _FIELDS if data.get(key) is not None}
        return cls(**known, metadata=data)

    @classmethod
    def user(cls, **fields: Any) -> MemoryScope:
        """A user's own memory (``source="user"``, ``scope="user"``)."""
        return cls(**{"source": "user", "scope": "user", **fields})

    @classmethod
    def reflection(cls, agent_name: str | None = None, **fields: Any) -> MemoryScope:
        """An agent's reflection (``source="reflection"``, ``scope="agent"``): a candidate first."""
        return cls(**{"source": "reflection", "scope": "agent", "agent_name": agent_name, **fields})
