"""``InMemorySessionStore``: the default store, one process, no files."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any

from lightagent.events.model import SessionEvent
from lightagent.events.store import (
    EventInput,
    SessionInfo,
    SessionStoreBase,
    dumps_event,
    info_from_first,
    validate_session_id,
)

__all__ = ["InMemorySessionStore"]


class InMemorySessionStore(SessionStoreBase):
    """Session logs kept in memory (lost with the process). Thread-safe.

    Events are stored as their JSON text, so what a reader gets back is a detached
    copy shaped exactly like what a durable store would return.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._logs: dict[str, list[str]] = {}
        self._updated: dict[str, float] = {}

    def append(
        self,
        session_id: str,
        events: Iterable[EventInput],
        *,
        expected_sequence: int | None = None,
    ) -> list[SessionEvent]:
        """Append atomically; ``LA-STORAGE-CONFLICT`` when ``expected_sequence`` is stale."""
        validate_session_id(session_id)
        items = list(events)
        with self._lock:
            log = self._logs.get(session_id, [])
            self._check_expected(session_id, expected_sequence, len(log))
            prepared = self._prepare(session_id, items, len(log))
            if not prepared:
                return []
            lines = [dumps_event(e) for e in prepared]
            self._logs.setdefault(session_id, log).extend(lines)
            self._updated[session_id] = time.time()
        return prepared

    def events(
        self, session_id: str, *, after: int = 0, limit: int | None = None
    ) -> list[SessionEvent]:
        """Events with ``sequence > after``, at most ``limit``."""
        import json

        validate_session_id(session_id)
        self._check_page(after, limit)
        with self._lock:
            log = self._logs.get(session_id, [])
            end = len(log) if limit is None else min(len(log), after + limit)
            lines = log[after:end]
        return [SessionEvent.from_dict(json.loads(line)) for line in lines]

    def last_sequence(self, session_id: str) -> int:
        """The last sequence, 0 for an unknown session."""
        validate_session_id(session_id)
        with self._lock:
            return len(self._logs.get(session_id, ()))

    def get_session(self, session_id: str) -> SessionInfo | None:
        """The session's summary or ``None``."""
        validate_session_id(session_id)
        with self._lock:
            if session_id not in self._logs:
                return None
            last = len(self._logs[session_id])
            updated = self._updated.get(session_id)
        first = self.events(session_id, limit=1)
        return info_from_first(session_id, first[0] if first else None, last, updated)

    def list_sessions(
        self, *, limit: int = 100, offset: int = 0, owner: Mapping[str, Any] | None = None
    ) -> list[SessionInfo]:
        """Sessions, most recently updated first; with ``owner``, only the ones it opened."""
        with self._lock:
            order = sorted(self._updated, key=lambda s: self._updated[s], reverse=True)
        if owner is not None:
            from lightagent.events.ownership import owned_sessions

            return owned_sessions(self, order, owner, limit, offset)
        infos = [self.get_session(s) for s in order[offset : offset + limit]]
        return [i for i in infos if i is not None]

    def delete(self, session_id: str) -> bool:
        """Forget the session."""
        validate_session_id(session_id)
        with self._lock:
            self._updated.pop(session_id, None)
            return self._logs.pop(session_id, None) is not None
