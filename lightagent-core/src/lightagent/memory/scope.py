"""``MemoryScope``: where a memory came from (source, scope, agent, trace), as metadata.

Every memory the agent writes carries its provenance in ``metadata``: ``source`` (who
produced it: ``user``, ``reflection``, ``tool`` …), ``scope`` (whose it is: ``user``,
``agent``, ``shared`` …), the agent, the trace, and optionally ``confidence`` and
``trust_level``. Sources and scopes named in :data:`INTERNAL_SOURCES` /
:data:`INTERNAL_SCOPES` are the agent's own evidence: they stay non-injectable
candidates until promoted.

User ids reach a backend through :func:`memory_user_id`: the run's tenant (its
``SecurityContext``), the policy's namespace, then the id with ``%`` and ``:``
percent-escaped, so no tenant, namespace or user id can be spelt to collide with another
(``"tenant-a:alice"`` stays as the seeds wrote it; ``"tenant%3Dacme:alice"`` is tenant
``acme``: no escaped id or namespace holds ``%3D``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

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

#: Sources that are the agent's own evidence (need promotion before injection).
INTERNAL_SOURCES = frozenset(
    {"reflection", "delegation", "self_learning", "agent", "derived", "swarm", "trace", "tool"}
)
#: Scopes that are not one user's own memory (need promotion before injection).
INTERNAL_SCOPES = frozenset({"agent", "delegation", "shared", "internal", "swarm", "flow"})


def is_internal(metadata: Any) -> bool:
    """Whether a memory's ``metadata`` names an internal source or scope."""
    if type(metadata) is not dict and not isinstance(metadata, Mapping):
        return False
    return metadata.get("source") in INTERNAL_SOURCES or metadata.get("scope") in INTERNAL_SCOPES


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


def _escape(text: str) -> str:
    return text.replace("%", "%25").replace(":", "%3A")


def _scoped(own: str, namespace: str | None, tenant: str | None) -> str:
    scoped = f"{namespace}:{own}" if namespace else own
    return f"tenant%3D{_escape(tenant)}:{scoped}" if tenant is not None else scoped


def memory_user_id(user_id: str, namespace: str | None = None, tenant: str | None = None) -> str:
    """The id a backend stores a user's memories under (``"tenant%3Dacme:ns:alice"``)."""
    return _scoped(_escape(str(user_id)), namespace, tenant)


def agent_memory_user_id(
    agent_name: str, namespace: str | None = None, tenant: str | None = None
) -> str:
    """The id of an agent's own memory (``"ns:agent:writer"``); no user id can spell it."""
    return _scoped(f"agent:{_escape(str(agent_name))}", namespace, tenant)


def plain_user_id(user_id: str, context: Any) -> str:
    """The backend id for a filter that scopes none: the user id as given, in the run's tenant."""
    tenant = run_tenant(context)
    return str(user_id) if tenant is None else memory_user_id(user_id, tenant=tenant)


def run_tenant(context: Any) -> str | None:
    """The tenant of ``context`` (a run's: its ``SecurityContext``'s, else its metadata's;
    or a ``SecurityContext``), or None."""
    tenant = getattr(context, "tenant_id", None)
    return None if tenant is None else str(tenant)


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
