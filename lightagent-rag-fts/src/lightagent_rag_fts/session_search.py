"""``SessionSearchProvider``: search a session store's events, cited ``session:<id>:<seq>``.

It reads through the store's public API (``list_sessions``, ``events``), so it works on
every store; the scan is bounded (``max_sessions`` most recent sessions, ``max_events``
events each) and the match is a case-insensitive one over each event's text.
"""

from __future__ import annotations

import json
from typing import Any

from lightagent.errors import ConfigurationError

from lightagent_rag_fts._text import query_terms
from lightagent_rag_fts.models import RetrievalResult

__all__ = ["SessionSearchProvider"]

_SNIPPET = 1000


def _event_text(data: Any) -> str:
    if isinstance(data, dict):
        for key in ("content", "query", "output", "text"):
            value = data.get(key)
            if isinstance(value, str) and value:
                return value
    return json.dumps(data, ensure_ascii=False, sort_keys=True, default=str)


class SessionSearchProvider:
    """Past session events as search results, kept apart from knowledge-base retrieval.

    An event matches when its text (its ``content``, else its JSON) holds the whole query
    or every query word, compared casefolded; the whole phrase ranks first. Filters:
    ``session_id`` (one session), ``type`` (event type) and any key of the session's
    metadata or owner (``tenant_id``, ``user_id`` …), matched exactly. Events of
    ``skip_types`` (the model requests, which repeat the conversation) are not searched.
    """

    def __init__(
        self,
        store: Any,
        *,
        max_sessions: int = 200,
        max_events: int = 2000,
        skip_types: tuple[str, ...] = ("model.requested",),
    ) -> None:
        if not callable(getattr(store, "events", None)) or not callable(
            getattr(store, "list_sessions", None)
        ):
            raise ConfigurationError(
                "LA-CONFIG",
                f"SessionSearchProvider needs a session store, got {type(store).__name__}",
                hint="Pass a SessionStore (InMemorySessionStore, JsonlSessionStore, SqlSessionStore …).",
            )
        self.store = store
        self.max_sessions = max_sessions
        self.max_events = max_events
        self.skip_types = frozenset(skip_types)

    def _sessions(self, filters: dict[str, Any]) -> list[str]:
        wanted = filters.pop("session_id", None)
        if wanted is not None:
            info = self.store.get_session(str(wanted))
            candidates = [] if info is None else [info]
        else:
            candidates = self.store.list_sessions(limit=self.max_sessions)
        wanted_fields = {k: v for k, v in filters.items() if v is not None}
        out = []
        for info in candidates:
            fields = dict(info.metadata or {})
            if wanted_fields:
                # The owner (user, tenant) is recorded on the session's first event.
                first = self.store.events(info.session_id, limit=1)
                owner = first[0].data.get("owner") if first else None
                if isinstance(owner, dict):
                    fields = {**owner, **fields}
            if all(fields.get(k) == v for k, v in wanted_fields.items()):
                out.append(info.session_id)
        return out

    def search(self, query: str, *, limit: int = 5, **filters: Any) -> list[RetrievalResult]:
        """The ``limit`` best matching events, newest first among equals."""
        phrase = " ".join(str(query or "").replace("\x00", " ").split()).casefold()[:500]
        words = [text for text, _ in query_terms(phrase)]
        if not words or limit <= 0:
            return []
        event_type = filters.pop("type", None)
        found: list[tuple[float, float, RetrievalResult]] = []
        for session_id in self._sessions(dict(filters)):
            for event in self.store.events(session_id, limit=self.max_events):
                if event.type in self.skip_types and event.type != event_type:
                    continue
                if event_type is not None and event.type != event_type:
                    continue
                text = _event_text(event.data)
                folded = text.casefold()
                if phrase in folded:
                    score = 2.0
                elif all(word in folded for word in words):
                    score = 1.0
                else:
                    continue
                result = RetrievalResult(
                    document_id=session_id,
                    chunk_id=f"{session_id}:{event.sequence}",
                    content=text[:_SNIPPET],
                    citation_id=f"session:{session_id}:{event.sequence}",
                    title=event.type,
                    source=f"session:{session_id}",
                    position=event.sequence,
                    score=score,
                    scope="session",
                    metadata={"event_type": event.type, "timestamp": event.timestamp},
                )
                found.append((score, event.timestamp, result))
        found.sort(key=lambda item: (-item[0], -item[1]))
        return [result for _, _, result in found[:limit]]
