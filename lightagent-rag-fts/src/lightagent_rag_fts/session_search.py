"""``SessionSearchProvider``: search a session store's events, cited ``session:<id>:<seq>``.

It reads through the store's public API (``list_sessions``, ``events``), so it works on
every store; the scan is bounded (``max_sessions`` most recent sessions, ``max_events``
events each) and the match is a case-insensitive one over each event's text. A search is
scoped to one owner (the run's, through the agent): the built-in stores list only that
owner's sessions, the SQL store in its query, before the ``max_sessions`` bound.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from lightagent.errors import ConfigurationError, PolicyError
from lightagent.events.ownership import owned_sessions, owner_fields, recorded_owner, same_owner
from lightagent.retrieval.protocol import names_keyword
from lightagent.run.options import positive_int

from lightagent_rag_fts._text import query_terms
from lightagent_rag_fts.models import RetrievalResult, check_limit

__all__ = ["SessionSearchProvider"]

_SNIPPET = 1000
_PAGE = 200


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
    or every query word, compared casefolded; the whole phrase ranks first. ``owner``
    (``{"user_id", "tenant_id", "project_id"}``, the shape a session records; an agent
    passes its run's) limits the search to the sessions that owner opened, exactly; a
    search without one is refused with ``LA-SESSION-OWNER`` unless the provider is built
    with ``require_owner=False`` (the admin view of the store, as ``SessionManager``
    without an owner). Filters: ``session_id`` (one session), ``type`` (event type) and
    any key of the session's metadata or owner, matched exactly. Events of ``skip_types``
    (the model requests, which repeat the conversation) are not searched.
    """

    def __init__(
        self,
        store: Any,
        *,
        max_sessions: int = 200,
        max_events: int = 2000,
        skip_types: tuple[str, ...] = ("model.requested",),
        require_owner: bool = True,
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
        # a bound below zero reads as no bound on SQLite and fails on PostgreSQL
        self.max_sessions = positive_int("max_sessions", max_sessions)
        self.max_events = positive_int("max_events", max_events)
        self.skip_types = frozenset(skip_types)
        self.require_owner = require_owner

    def _listed(self, owner: dict[str, str] | None) -> list[Any]:
        """The ``max_sessions`` most recent sessions, of ``owner`` only when given."""
        store = self.store
        if owner is None:
            return list(store.list_sessions(limit=self.max_sessions))
        if names_keyword(store.list_sessions, "owner"):
            return list(store.list_sessions(limit=self.max_sessions, owner=owner))

        def every_session() -> Iterator[str]:  # a store that cannot list by owner
            offset = 0
            while True:
                page = store.list_sessions(limit=_PAGE, offset=offset)
                yield from (info.session_id for info in page)
                if len(page) < _PAGE:
                    return
                offset += len(page)

        return owned_sessions(store, every_session(), owner, self.max_sessions, 0)

    def _sessions(self, owner: dict[str, str] | None, filters: dict[str, Any]) -> Iterator[Any]:
        """Each candidate session's events, when its owner and fields pass (read once)."""
        wanted = filters.pop("session_id", None)
        if wanted is not None:
            info = self.store.get_session(str(wanted))
            candidates = [] if info is None else [info]
        else:
            candidates = self._listed(owner)
        wanted_fields = {k: v for k, v in filters.items() if v is not None}
        for info in candidates:
            events = self.store.events(info.session_id, limit=self.max_events)
            recorded = recorded_owner(events[:1])
            if owner is not None and not same_owner(recorded, owner):
                continue  # never another owner's session, however it was named
            fields = {**(recorded or {}), **(info.metadata or {})}
            if all(fields.get(k) == v for k, v in wanted_fields.items()):
                yield events

    def search(
        self,
        query: str,
        *,
        limit: int = 5,
        owner: Mapping[str, Any] | None = None,
        **filters: Any,
    ) -> list[RetrievalResult]:
        """The ``limit`` best matching events of ``owner``'s sessions, newest first among equals."""
        if owner is None and self.require_owner:
            raise PolicyError(
                "LA-SESSION-OWNER",
                "a session search must name the owner it searches for",
                hint="Search through the agent (it passes the run's owner), pass owner=, "
                "or build SessionSearchProvider(store, require_owner=False) for an admin view.",
            )
        limit = check_limit(limit)
        scope = None if owner is None else owner_fields(owner)
        phrase = " ".join(str(query or "").replace("\x00", " ").split()).casefold()[:500]
        words = [text for text, _ in query_terms(phrase)]
        if not words:
            return []
        event_type = filters.pop("type", None)
        found: list[tuple[float, float, RetrievalResult]] = []
        for events in self._sessions(scope, dict(filters)):
            for event in events:
                session_id = event.session_id
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
