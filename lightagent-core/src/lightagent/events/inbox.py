"""A session's inbox, kept in its event log: ``inbox.enqueued`` and ``inbox.claimed`` events.

:func:`send_message` appends an ``inbox.enqueued`` event; a running run of the session
claims what is pending at its next step boundary with :func:`claim_pending`, which appends
one ``inbox.claimed`` event per message *on condition* that the log still ends where the
run last read it (``expected_sequence``). Another claimer — a thread, a task, a process on
the same SQLite file — that got there first makes the append conflict; the claim re-reads
and sees those messages taken. So each message is claimed exactly once.
"""

from __future__ import annotations

import uuid
from typing import Any

from lightagent.errors import StorageError, ValidationError
from lightagent.events.model import SessionEvent
from lightagent.events.ownership import check_owner, recorded_owner
from lightagent.events.store import SessionStore, validate_session_id
from lightagent.run.inbox_steps import InboxScan

__all__ = ["InboxScan", "append_owned", "claim_pending", "send_message"]

_RETRIES = 8


def send_message(
    store: SessionStore,
    session_id: str,
    text: str,
    *,
    message_id: str | None = None,
    message_type: str = "followup",
    metadata: dict[str, Any] | None = None,
    owner: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Append ``text`` to the session's inbox; returns the ``inbox.enqueued`` event's data.

    Idempotent by ``message_id``: sending an id the inbox already holds returns it again.
    """
    validate_session_id(session_id)
    if not isinstance(text, str) or not text.strip():
        raise ValidationError(
            "LA-VALIDATION",
            "an inbox message needs non-empty text",
            hint="Pass the message as a non-empty str: agent.send_message(session_id, 'text').",
        )
    mid = message_id or uuid.uuid4().hex
    data = {
        "message_id": mid,
        "message_type": message_type,
        "content": text,
        "metadata": dict(metadata or {}),
    }

    def known(existing: list[SessionEvent]) -> dict[str, Any] | None:
        for event in existing:
            if event.type == "inbox.enqueued" and event.data.get("message_id") == mid:
                return dict(event.data)
        return None

    found = append_owned(
        store,
        session_id,
        [SessionEvent("inbox.enqueued", data=data)],
        owner,
        known=known if message_id else None,
    )
    return found if found is not None else data


def append_owned(
    store: SessionStore,
    session_id: str,
    batch: list[SessionEvent],
    owner: dict[str, Any] | None,
    *,
    known: Any = None,
) -> Any:
    """Append ``batch`` to a session of ``owner`` (opening it, with its owner, when empty).

    ``known(events)`` may return what is already there instead (then nothing is appended).
    """
    for _ in range(_RETRIES):
        last: int | None = store.last_sequence(session_id)
        events = list(batch)
        if last == 0:  # this opens the session: record its owner first, as a run does
            started = {"metadata": {}, **({"owner": owner} if owner else {})}
            events.insert(0, SessionEvent("session.started", data=started))
        elif known is None:
            check_owner(session_id, recorded_owner(store.events(session_id, limit=1)), owner)
            last = None  # an independent fact: appended at the end, whatever came meanwhile
        else:  # idempotent by what is there: appended only if the log still ends as read
            existing = store.events(session_id)
            check_owner(session_id, recorded_owner(existing[:1]), owner)
            found = known(existing)
            if found is not None:
                return found
            last = existing[-1].sequence if existing else last
        try:
            store.append(session_id, events, expected_sequence=last)
        except StorageError as exc:
            if exc.code != "LA-STORAGE-CONFLICT":
                raise
            continue
        return None
    raise StorageError(
        "LA-STORAGE-CONFLICT",
        f"could not append to session {session_id!r}: other writers kept appending first",
    )


def claim_pending(store: SessionStore, session_id: str, run_id: str, scan: InboxScan) -> list[str]:
    """Claim every pending message for ``run_id``; their texts, oldest first ([] if none).

    A claim that keeps losing to other writers claims nothing this time (the run tries
    again at its next step boundary).
    """
    for _ in range(_RETRIES):
        scan.feed(store.events(session_id, after=max(scan.cursor, 0)))
        if not scan.pending:
            return []
        taken = list(scan.pending.values())
        batch = [
            SessionEvent(
                "inbox.claimed",
                data={
                    "message_id": e.data["message_id"],
                    "content": e.data.get("content"),
                    "enqueued_sequence": e.sequence,
                },
                run_id=run_id,
                turn_id=run_id,
            )
            for e in taken
        ]
        try:
            stored = store.append(session_id, batch, expected_sequence=scan.cursor)
        except StorageError as exc:
            if exc.code != "LA-STORAGE-CONFLICT":
                raise
            continue
        scan.feed(stored)
        return [str(e.data.get("content") or "") for e in taken]
    return []
