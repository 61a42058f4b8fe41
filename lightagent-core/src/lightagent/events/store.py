"""The ``SessionStore`` contract and what every store shares.

A store keeps one append-only log per session. Sequences start at 1 and have no gap.
Every append may name the sequence it expects the log to end at
(``expected_sequence``); when another writer got there first the append fails with a
:class:`~lightagent.errors.StorageError` of code ``LA-STORAGE-CONFLICT`` and nothing is
written. Events are redacted (fail closed) before they reach the storage.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol, runtime_checkable

from lightagent.errors import StorageError, ValidationError
from lightagent.events.model import SessionEvent
from lightagent.redaction import REDACTION_FAILED, redact

__all__ = [
    "EventInput",
    "SessionInfo",
    "SessionStore",
    "SessionStoreBase",
    "StoredSession",
    "conflict_error",
    "dumps_event",
    "path_error",
    "validate_session_id",
]

EventInput = SessionEvent | Mapping[str, Any]

_SESSION_ID = re.compile(r"^[A-Za-z0-9_@:+=-][A-Za-z0-9_.@:+=-]{0,199}$")
_EVENT_TYPE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,99}$")


@dataclass
class SessionInfo:
    """What a store knows about a session without reading its events."""

    session_id: str
    last_sequence: int
    created_at: float | None = None
    updated_at: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict."""
        return {
            "session_id": self.session_id,
            "last_sequence": self.last_sequence,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "metadata": self.metadata,
        }


@dataclass
class StoredSession(SessionInfo):
    """The seeds' ``Session`` (``store.get(session_id)``): the info, lineage and events."""

    events: list[SessionEvent] = field(default_factory=list)


@runtime_checkable
class SessionStore(Protocol):
    """An append-only event log per session. Register one with ``register_session_stores``."""

    def append(
        self,
        session_id: str,
        events: Iterable[EventInput],
        *,
        expected_sequence: int | None = None,
    ) -> list[SessionEvent]:
        """Append ``events`` atomically; returns them with their sequences assigned.

        ``expected_sequence`` is the last sequence the caller saw (0 for a new
        session); ``None`` appends at the end whatever it is.
        """
        ...

    def events(
        self, session_id: str, *, after: int = 0, limit: int | None = None
    ) -> list[SessionEvent]:
        """Events with ``sequence > after`` in order, at most ``limit`` of them."""
        ...

    def last_sequence(self, session_id: str) -> int:
        """The last sequence of the session, 0 when it has no events."""
        ...

    def get_session(self, session_id: str) -> SessionInfo | None:
        """The session's summary, or ``None`` when it does not exist."""
        ...

    def list_sessions(self, *, limit: int = 100, offset: int = 0) -> list[SessionInfo]:
        """Sessions, most recently updated first."""
        ...

    def delete(self, session_id: str) -> bool:
        """Remove the session; ``False`` when there was none."""
        ...

    def export(self, session_id: str, destination: str | Path | IO[str]) -> int:
        """Write the session as JSONL (one event per line); returns the event count."""
        ...

    async def aappend(
        self,
        session_id: str,
        events: Iterable[EventInput],
        *,
        expected_sequence: int | None = None,
    ) -> list[SessionEvent]:
        """:meth:`append` without blocking the event loop."""
        ...

    async def aevents(
        self, session_id: str, *, after: int = 0, limit: int | None = None
    ) -> list[SessionEvent]:
        """:meth:`events` without blocking the event loop."""
        ...

    def close(self) -> None:
        """Release files, connections and pools."""
        ...


EventLog = RunStore = SessionStore  # the roadmap's names: runs live in the session log


def validate_session_id(session_id: Any) -> str:
    """``session_id`` if it is a safe identifier, else a ``ValidationError``."""
    if not isinstance(session_id, str) or not _SESSION_ID.fullmatch(session_id):
        raise ValidationError(
            "LA-VALIDATION",
            f"Invalid session id {session_id!r}.",
            hint="Use 1-200 characters from A-Z a-z 0-9 _ - . @ : + = (not starting with '.').",
            details={"session_id": repr(session_id)[:200]},
        )
    return session_id


def conflict_error(session_id: str, expected: int | None, actual: int) -> StorageError:
    """The typed error a losing concurrent writer gets."""
    return StorageError(
        "LA-STORAGE-CONFLICT",
        f"Session {session_id!r} ends at sequence {actual}, not {expected}: another writer appended first.",
        details={
            "session_id": session_id,
            "expected_sequence": expected,
            "actual_sequence": actual,
        },
    )


def path_error(exc: OSError, doing: str) -> StorageError:
    """A typed error for a file-system failure that names its cause (a missing folder, a file
    in the way, permission denied …), never a bare ``OSError``."""
    import errno as errnos

    reason = exc.strerror or type(exc).__name__
    path = exc.filename
    if exc.errno == errnos.ENOENT:
        code, hint = "LA-STORAGE-NOT-FOUND", "Check the path; create the folder if it should exist."
    elif exc.errno in (errnos.ENOTDIR, errnos.EEXIST, errnos.EISDIR):
        code, hint = "LA-STORAGE", "A file or folder is in the way: move it or choose another path."
    elif exc.errno in (errnos.EACCES, errnos.EPERM, errnos.EROFS):
        code, hint = (
            "LA-STORAGE",
            "Check the permissions of the path (and that the disk is writable).",
        )
    else:
        code, hint = "LA-STORAGE", "Check the disk and the path."
    where = f" ({path})" if path else ""
    return StorageError(
        code,
        f"{doing}: {reason}{where}.",
        hint=hint,
        details={"path": str(path) if path else None, "errno": exc.errno, "reason": reason},
    )


def dumps_event(event: SessionEvent) -> str:
    """The compact JSON text of one event (as stored)."""
    return json.dumps(event.to_dict(), ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _coerce(item: EventInput) -> SessionEvent:
    if isinstance(item, SessionEvent):
        return SessionEvent(**{k: getattr(item, k) for k in item.__dataclass_fields__})
    if isinstance(item, Mapping):
        raw = dict(item)
        if "type" not in raw:
            raise ValidationError("LA-VALIDATION", "A session event needs a 'type'.")
        allowed = SessionEvent.__dataclass_fields__
        unknown = sorted(set(raw) - set(allowed))
        if unknown:
            raise ValidationError(
                "LA-VALIDATION",
                f"Unknown session event fields: {', '.join(unknown)}.",
                details={"fields": unknown},
            )
        return SessionEvent(**raw)
    raise ValidationError(
        "LA-VALIDATION",
        f"A session event must be a SessionEvent or a dict, not {type(item).__name__}.",
    )


class SessionStoreBase:
    """Shared behaviour: id checks, redaction, sequence assignment, async forms, export."""

    def _prepare(
        self, session_id: str, events: Iterable[EventInput], last: int
    ) -> list[SessionEvent]:
        prepared: list[SessionEvent] = []
        for offset, item in enumerate(events, start=1):
            event = _coerce(item)
            if not isinstance(event.type, str) or not _EVENT_TYPE.fullmatch(event.type):
                raise ValidationError(
                    "LA-VALIDATION",
                    f"Invalid session event type {event.type!r}.",
                    hint="Use a dotted name such as 'tool.completed'.",
                )
            if event.session_id not in ("", session_id):
                raise ValidationError(
                    "LA-VALIDATION",
                    f"Event for session {event.session_id!r} appended to {session_id!r}.",
                )
            if event.sequence not in (0, last + offset):
                raise ValidationError(
                    "LA-VALIDATION",
                    f"Event carries sequence {event.sequence}, but it would be {last + offset}.",
                    hint="Leave sequence at 0; the store assigns it.",
                )
            event.session_id = session_id
            event.sequence = last + offset
            event.data = _redacted_data(event.data)
            prepared.append(event)
        return prepared

    @staticmethod
    def _check_expected(session_id: str, expected: int | None, actual: int) -> None:
        if expected is None:
            return
        if not isinstance(expected, int) or isinstance(expected, bool) or expected < 0:
            raise ValidationError(
                "LA-VALIDATION", f"expected_sequence must be an int >= 0, not {expected!r}."
            )
        if expected != actual:
            raise conflict_error(session_id, expected, actual)

    @staticmethod
    def _check_page(after: int, limit: int | None) -> None:
        if not isinstance(after, int) or after < 0:
            raise ValidationError("LA-VALIDATION", f"after must be an int >= 0, not {after!r}.")
        if limit is not None and (not isinstance(limit, int) or limit < 0):
            raise ValidationError("LA-VALIDATION", f"limit must be an int >= 0, not {limit!r}.")

    # Subclasses implement these four plus list_sessions/delete/get_session.
    def append(
        self,
        session_id: str,
        events: Iterable[EventInput],
        *,
        expected_sequence: int | None = None,
    ) -> list[SessionEvent]:  # pragma: no cover - abstract
        raise NotImplementedError

    def events(
        self, session_id: str, *, after: int = 0, limit: int | None = None
    ) -> list[SessionEvent]:  # pragma: no cover - abstract
        raise NotImplementedError

    def iter_events(
        self, session_id: str, *, after: int = 0, page_size: int = 1000
    ) -> Iterator[SessionEvent]:
        """Every event after ``after``, read page by page."""
        while True:
            page = self.events(session_id, after=after, limit=page_size)
            yield from page
            if len(page) < page_size:
                return
            after = page[-1].sequence

    def export(self, session_id: str, destination: str | Path | IO[str]) -> int:
        """Write the session as JSONL (one redacted event per line); returns the count."""
        validate_session_id(session_id)
        if isinstance(destination, (str, Path)):
            with open(destination, "w", encoding="utf-8") as handle:
                return self._export_to(session_id, handle)
        return self._export_to(session_id, destination)

    def _export_to(self, session_id: str, handle: IO[str]) -> int:
        count = 0
        for event in self.iter_events(session_id):
            handle.write(dumps_event(event) + "\n")
            count += 1
        return count

    def get(self, session_id: str) -> StoredSession | None:
        """The seeds' ``store.get(session_id)``: the session with its events, or ``None``."""
        info = self.get_session(session_id)  # type: ignore[attr-defined]
        if info is None:
            return None
        events = list(self.iter_events(session_id))
        meta = dict(info.metadata)
        for fork in (e.data for e in events if e.type == "session.forked"):  # the last is its own
            meta.update(
                forked_from=fork["source_session_id"], forked_at_sequence=fork["through_sequence"]
            )
        return StoredSession(**{**vars(info), "metadata": meta}, events=events)

    def close(self) -> None:
        """Release resources (nothing by default)."""

    async def aappend(
        self,
        session_id: str,
        events: Iterable[EventInput],
        *,
        expected_sequence: int | None = None,
    ) -> list[SessionEvent]:
        """:meth:`append` in a worker thread."""
        items = list(events)
        return await asyncio.to_thread(
            self.append, session_id, items, expected_sequence=expected_sequence
        )

    async def aevents(
        self, session_id: str, *, after: int = 0, limit: int | None = None
    ) -> list[SessionEvent]:
        """:meth:`events` in a worker thread."""
        return await asyncio.to_thread(self.events, session_id, after=after, limit=limit)

    async def alast_sequence(self, session_id: str) -> int:
        """``last_sequence`` in a worker thread."""
        return await asyncio.to_thread(self.last_sequence, session_id)  # type: ignore[attr-defined]

    async def alist_sessions(self, *, limit: int = 100, offset: int = 0) -> list[SessionInfo]:
        """``list_sessions`` in a worker thread."""
        return await asyncio.to_thread(self.list_sessions, limit=limit, offset=offset)  # type: ignore[attr-defined]

    async def adelete(self, session_id: str) -> bool:
        """``delete`` in a worker thread."""
        return await asyncio.to_thread(self.delete, session_id)  # type: ignore[attr-defined]

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _redacted_data(data: Any) -> dict[str, Any]:
    try:
        # redact() returns JSON-safe values only (jsonable), so serializing cannot fail later.
        return redact(data if isinstance(data, Mapping) else {"value": data})
    except Exception:
        # Fail closed: the value is never persisted when redaction cannot vouch for it.
        return {"redaction": REDACTION_FAILED}


def info_from_first(
    session_id: str, first: SessionEvent | None, last_seq: int, updated: float | None
) -> SessionInfo:
    """A :class:`SessionInfo` from the session's first event (``session.started`` carries metadata)."""
    metadata: dict[str, Any] = {}
    if first is not None and first.type == "session.started":
        meta = first.data.get("metadata")
        if isinstance(meta, dict):
            metadata = meta
    return SessionInfo(
        session_id=session_id,
        last_sequence=last_seq,
        created_at=first.timestamp if first else None,
        updated_at=updated,
        metadata=metadata,
    )
