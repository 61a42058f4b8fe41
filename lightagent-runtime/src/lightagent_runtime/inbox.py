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
from lightagent.events.ownership import check_owner, opening_event, recorded_owner
from lightagent.events.store import SessionStore, validate_session_id

__all__ = [
    "MESSAGE_TYPES",
    "InboxScan",
    "append_owned",
    "claim_pending",
    "fold_inbox",
    "send_message",
    "settle_message",
]

_RETRIES = 8

#: The seeds' inbox message types (all are injected as user messages at a step boundary).
MESSAGE_TYPES = ("followup", "steering", "context", "approval")


class InboxScan:
    """What one run has read of its session's inbox: a cursor, the unclaimed messages, and
    whether the session was paused (``runtime.paused``, or the 0.11 form ``session.paused``)
    or its runs cancelled (``runtime.cancelled`` / ``session.cancelled``, counted only once
    the run has read its history)."""

    __slots__ = ("cancelled", "cursor", "foreign_spent", "paused", "pending", "run_id")

    def __init__(self) -> None:
        #: The last sequence read; ``-1``: nothing read yet (the first claim reads the log).
        self.cursor = -1
        #: message_id -> its ``inbox.enqueued`` event, in log order.
        self.pending: dict[str, Any] = {}
        #: The reason of the session's standing pause, or None.
        self.paused: str | None = None
        #: The reason of a cancel recorded while this run was running, or None.
        self.cancelled: str | None = None
        #: The run reading: its own ``budget.consumed`` events are already in its ledger.
        self.run_id: str | None = None
        #: What other runs of the session consumed since this run read its history, not
        #: yet taken into its session budget (:meth:`take_foreign_spent`).
        self.foreign_spent: dict[str, float] = {}

    def feed(self, events: list[Any]) -> None:
        """Take in events read after :attr:`cursor`."""
        live = self.cursor >= 0  # a cancel in the history read at the start is an old one
        for event in events:
            kind = event.type
            if kind == "inbox.enqueued":
                mid = event.data.get("message_id")
                if isinstance(mid, str):
                    self.pending.setdefault(mid, event)
            elif kind in ("inbox.claimed", "inbox.rejected"):
                self.pending.pop(str(event.data.get("message_id")), None)
            elif kind in ("runtime.paused", "session.paused"):
                self.paused = str(event.data.get("reason") or "paused")
            elif kind in ("runtime.resumed", "session.resumed"):
                self.paused = None
            elif kind in ("runtime.cancelled", "session.cancelled") and live:
                self.cancelled = str(event.data.get("reason") or "cancelled")
            elif kind == "budget.consumed" and live and event.run_id != self.run_id:
                for key, value in (event.data.get("delta") or {}).items():
                    if isinstance(value, (int, float)) and not isinstance(value, bool):
                        self.foreign_spent[key] = self.foreign_spent.get(key, 0.0) + value
            self.cursor = max(self.cursor, event.sequence)
        self.cursor = max(self.cursor, 0)

    def take_foreign_spent(self) -> dict[str, float]:
        """What other runs consumed since the last take (then forgotten here)."""
        spent, self.foreign_spent = self.foreign_spent, {}
        return spent

    @property
    def halted(self) -> bool:
        """Whether the run must stop (paused or cancelled): nothing is claimed then."""
        return self.paused is not None or self.cancelled is not None


def send_message(
    store: SessionStore,
    session_id: str,
    text: str,
    *,
    message_id: str | None = None,
    message_type: str = "followup",
    metadata: dict[str, Any] | None = None,
    owner: dict[str, Any] | None = None,
    correlation_id: str | None = None,
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
    if message_type not in MESSAGE_TYPES:
        raise ValidationError(
            "LA-VALIDATION",
            f"unknown inbox message type {message_type!r}",
            hint=f"Use one of {', '.join(MESSAGE_TYPES)}.",
            details={"message_type": repr(message_type)[:100]},
        )
    mid = message_id or uuid.uuid4().hex
    data = {
        "message_id": mid,
        "message_type": message_type,
        "content": text,
        "metadata": dict(metadata or {}),
        **({"correlation_id": correlation_id} if correlation_id else {}),
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
            events.insert(0, opening_event(owner))
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
    scan.run_id = run_id
    for _ in range(_RETRIES):
        scan.feed(store.events(session_id, after=max(scan.cursor, 0)))
        if not scan.pending or scan.halted:
            return []  # a paused or cancelled run claims nothing: the messages wait
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


def fold_inbox(events: list[SessionEvent]) -> dict[str, dict[str, Any]]:
    """message_id -> message, in the order sent, as the log leaves it.

    ``status`` is ``pending``, ``claimed`` (with ``claimed_by_run``), ``completed`` (with
    ``result``) or ``rejected`` (with ``reason``).
    """
    out: dict[str, dict[str, Any]] = {}
    for event in events:
        if not event.type.startswith("inbox."):
            continue
        mid = event.data.get("message_id")
        if not isinstance(mid, str):
            continue
        if event.type == "inbox.enqueued":
            if mid not in out:
                out[mid] = {**event.data, "status": "pending", "sequence": event.sequence}
            continue
        message = out.get(mid)
        if message is None:
            continue
        if event.type == "inbox.claimed" and message["status"] == "pending":
            message.update(status="claimed", claimed_by_run=event.run_id)
        elif event.type == "inbox.completed":
            message.update(status="completed", result=event.data.get("result"))
        elif event.type == "inbox.rejected" and message["status"] == "pending":
            message.update(status="rejected", reason=event.data.get("reason"))
    return out


def settle_message(
    store: SessionStore,
    session_id: str,
    message_id: str,
    status: str,
    *,
    result: Any = None,
    reason: str | None = None,
    owner: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Mark a claimed message ``completed`` or withdraw a pending one (``rejected``).

    Conditional on the log as read: a message a run claims meanwhile is not rejected
    (``LA-VALIDATION`` says it was claimed). Returns the message as the log then holds it.
    """
    validate_session_id(session_id)
    wanted = {"completed": "claimed", "rejected": "pending"}.get(status)
    if wanted is None:
        raise ValidationError(
            "LA-VALIDATION",
            f"an inbox message is settled 'completed' or 'rejected', not {status!r}",
        )
    data: dict[str, Any] = {"message_id": message_id}
    if status == "completed":
        data["result"] = result
    else:
        data["reason"] = reason
    settled: dict[str, Any] = {}

    def known(existing: list[SessionEvent]) -> dict[str, Any] | None:
        message = fold_inbox(existing).get(message_id)
        if message is None:
            raise ValidationError(
                "LA-VALIDATION",
                f"session {session_id!r} has no inbox message {message_id!r}",
                hint="runtime.inbox.list() names the session's messages.",
            )
        if message["status"] == status:
            return message
        if message["status"] != wanted:
            raise ValidationError(
                "LA-VALIDATION",
                f"inbox message {message_id!r} is {message['status']}; only a {wanted} one can be {status}",
                hint="Complete a message a run has claimed; reject one still pending.",
                details={"message_id": message_id, "status": message["status"]},
            )
        settled.update(message)
        return None

    if not store.last_sequence(session_id):
        known([])  # raises: an empty session holds no message
    same = append_owned(
        store, session_id, [SessionEvent(f"inbox.{status}", data=data)], owner, known=known
    )
    if same is not None:
        return dict(same)
    settled.update(status=status, **{k: v for k, v in data.items() if k != "message_id"})
    return settled
