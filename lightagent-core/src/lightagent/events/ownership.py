"""Who a session belongs to, and the one check every session API makes.

A session's owner is written once, into its first event (``session.started``), as a
dict of ``user_id`` and, where the agent has a security context, ``tenant_id`` and
``project_id``. The first event is never rewritten, so once read the owner holds for
the session's life; a caller that saw the session *empty* has checked nothing, and must
read the owner again when it loses the race to create it.

``list_sessions(owner=...)`` on the built-in stores lists one owner's sessions (the SQL
store selects them in its query), which session search scopes itself by.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from lightagent.errors import PolicyError, ValidationError
from lightagent.events.model import SessionEvent
from lightagent.run.prepare import owner_of

__all__ = [
    "check_owner",
    "opening_event",
    "owned_sessions",
    "owner_fields",
    "owner_of",
    "recorded_owner",
    "same_owner",
]

#: The identity fields an owner may carry, in the order a refusal names them.
OWNER_FIELDS = ("tenant_id", "project_id", "user_id")


def recorded_owner(first: Sequence[SessionEvent]) -> dict[str, Any] | None:
    """The owner recorded in a session's first event, or ``None`` (no owner recorded)."""
    if not first or first[0].type != "session.started":
        return None
    owner = first[0].data.get("owner")
    return owner if isinstance(owner, dict) else None


def _differing(recorded: Mapping[str, Any], caller: Mapping[str, Any]) -> list[str]:
    return [k for k in sorted(set(recorded) | set(caller)) if recorded.get(k) != caller.get(k)]


def same_owner(recorded: Mapping[str, Any] | None, caller: Mapping[str, Any]) -> bool:
    """Whether ``caller`` is exactly the recorded owner (never when none is recorded)."""
    return recorded is not None and not _differing(recorded, caller)


def owner_fields(owner: Mapping[str, Any]) -> dict[str, str]:
    """``owner`` as a scope: its identity fields (``LA-VALIDATION`` for any other key)."""
    unknown = sorted(set(owner) - set(OWNER_FIELDS))
    if unknown:
        raise ValidationError(
            "LA-VALIDATION",
            f"an owner has only {', '.join(OWNER_FIELDS)}, not {', '.join(map(str, unknown))}",
            details={"fields": [str(k) for k in unknown]},
        )
    return {k: str(v) for k, v in owner.items() if v is not None}


def owned_sessions(
    store: Any, session_ids: Iterable[str], owner: Mapping[str, Any], limit: int, offset: int
) -> list[Any]:
    """The ``SessionInfo`` of the sessions among ``session_ids`` (in their order) that
    ``owner`` opened: ``offset`` of them skipped, at most ``limit``, each first event read."""
    scope = owner_fields(owner)
    out: list[Any] = []
    for session_id in session_ids:
        if len(out) >= limit:
            break
        if not same_owner(recorded_owner(store.events(session_id, limit=1)), scope):
            continue
        if offset > 0:
            offset -= 1
            continue
        info = store.get_session(session_id)
        if info is not None:
            out.append(info)
    return out


def check_owner(
    session_id: str, recorded: Mapping[str, Any] | None, caller: Mapping[str, Any] | None
) -> None:
    """Refuse with ``LA-SESSION-OWNER`` when ``caller`` is not the session's owner.

    Every field either side names must match: a caller without a tenant is not the owner
    of a session that has one (fail closed). A session with no recorded owner (written
    before owners were recorded), or a caller that states no identity, passes.
    """
    if recorded is None or caller is None:
        return
    differing = _differing(recorded, caller)
    if not differing:
        return
    which = next((f for f in OWNER_FIELDS if f in differing), differing[0])
    noun = {"tenant_id": "tenant", "project_id": "project", "user_id": "user"}.get(which, which)
    raise PolicyError(
        "LA-SESSION-OWNER",
        f"session {session_id!r} belongs to another {noun}",
        details={"session_id": session_id, "fields": differing},
    )


def opening_event(owner: dict[str, Any] | None) -> SessionEvent:
    """The ``session.started`` event that opens a session for ``owner``, as a run's does."""
    return SessionEvent(
        "session.started", data={"metadata": {}, **({"owner": owner} if owner else {})}
    )
