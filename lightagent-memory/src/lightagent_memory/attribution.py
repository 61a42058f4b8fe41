"""Whose a memory is: the backend ids of users and agents, the run's tenant, and which
provenance is internal.

User ids reach a backend through :func:`memory_user_id`: the run's tenant (its
``SecurityContext``), the policy's namespace, then the id with ``%`` and ``:``
percent-escaped, so no tenant, namespace or user id can be spelt to collide with another
(``"tenant-a:alice"`` stays as the seeds wrote it; ``"tenant%3Dacme:alice"`` is tenant
``acme``: no escaped id or namespace holds ``%3D``).

Sources and scopes named in :data:`INTERNAL_SOURCES` / :data:`INTERNAL_SCOPES` are the
agent's own evidence: they stay non-injectable candidates until promoted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "INTERNAL_SCOPES",
    "INTERNAL_SOURCES",
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
