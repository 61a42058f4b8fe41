"""The S4 seam: what the agent loop calls to read and record a session.

``SessionBinding(store).history(session_id)`` gives the provider-valid history for the
next turn; ``observer(session_id, run_id)`` gives a per-run :class:`SessionRecorder`
that turns each trace event into a session event and appends it durably *before* the
loop goes on (so a tool call is on record before the tool runs).
"""

from __future__ import annotations

import logging
from typing import Any

from lightagent.errors import StorageError
from lightagent.events.mapping import session_event_from_trace, with_companions
from lightagent.events.model import SessionEvent
from lightagent.events.ownership import check_owner, recorded_owner
from lightagent.events.projector import ContextProjector, trim_messages
from lightagent.events.store import SessionStore, validate_session_id

__all__ = ["SessionBinding", "SessionRecorder", "resolve_session_store"]

log = logging.getLogger("lightagent.events")

_CONFLICT_RETRIES = 8


def resolve_session_store(store: Any) -> SessionStore:
    """A store instance for ``session_store=``: an instance, or a name in the plugin registry."""
    if not isinstance(store, str):
        return store
    from lightagent.run.options import resolve_store

    return resolve_store(store)


class SessionBinding:
    """Reads history from and records runs into one :class:`SessionStore`."""

    def __init__(
        self,
        store: SessionStore,
        *,
        projector: ContextProjector | None = None,
        max_history_messages: int | None = None,
        agent_id: str | None = None,
    ) -> None:
        self.store = store
        self.projector = projector or ContextProjector()
        self.max_history_messages = max_history_messages
        self.agent_id = agent_id

    def history(self, session_id: str) -> list[dict[str, Any]]:
        """Provider-valid OpenAI messages of the session, for the next turn (no system messages)."""
        validate_session_id(session_id)
        return self._shape(list(_iter_all(self.store, session_id)))

    async def ahistory(self, session_id: str) -> list[dict[str, Any]]:
        """:meth:`history` without blocking the event loop."""
        import asyncio

        validate_session_id(session_id)
        events = await asyncio.to_thread(lambda: list(_iter_all(self.store, session_id)))
        return self._shape(events)

    def _shape(self, events: list[SessionEvent]) -> list[dict[str, Any]]:
        # The calling run has already recorded its turn.started: leave it (and any other
        # run that has not reached the model) out, or its question would appear twice.
        messages = self.projector.messages(events, skip_unstarted=True)
        if self.max_history_messages is not None:
            messages = trim_messages(messages, self.max_history_messages)
        return History(messages, events=events)

    def call(self, session_id: str, run_id: str, call: Any) -> Any:
        """``call(store, session_id, run_id)`` for a run's step (a ``SessionCall`` effect)."""
        return call(self.store, session_id, run_id)

    async def acall(self, session_id: str, run_id: str, call: Any) -> Any:
        """:meth:`call` without blocking the event loop."""
        import asyncio

        return await asyncio.to_thread(self.call, session_id, run_id, call)

    def observer(
        self, session_id: str, run_id: str, *, owner: dict[str, str] | None = None
    ) -> SessionRecorder:
        """A recorder for one run (never share it between runs).

        ``owner`` (e.g. ``{"user_id": …, "tenant_id": …}``) is written into a new
        session's ``session.started``; a run whose owner differs from a session's recorded
        one is refused with ``LA-SESSION-OWNER`` before it records anything.
        """
        validate_session_id(session_id)
        return SessionRecorder(self.store, session_id, run_id, agent_id=self.agent_id, owner=owner)


class History(list):  # type: ignore[type-arg]
    """A session's history messages, plus the session events they were read from (so a
    capability that reads the log, such as a session budget or an inbox, costs no second
    read of it)."""

    def __init__(
        self,
        messages: list[dict[str, Any]],
        *,
        events: list[SessionEvent] | None = None,
    ) -> None:
        super().__init__(messages)
        #: The session's events the history was read from, oldest first (the run's steps
        #: read their own state from them — a budget, an inbox, goals — at no second read).
        self.events = events if events is not None else []


def _iter_all(store: SessionStore, session_id: str) -> Any:
    iterate = getattr(store, "iter_events", None)
    if iterate is not None:
        return iterate(session_id)
    return store.events(session_id)


class SessionRecorder:
    """A ``RunObserver`` that persists one run's trace events as session events.

    The first event of a new session is appended on condition that the session is
    still empty (one ``session.started``); every later event is appended at the end,
    whatever concurrent runs on the same session wrote meanwhile — events are
    independent facts, grouped by run on read.
    ``model.requested`` events store only what changed since the run's previous
    request (``$base``/``$prefix``/``$tail``); :func:`resolve_request` rebuilds it exactly.
    """

    #: A loop that honours it stops the run when recording fails, rather than running a
    #: tool whose request is not on record (resume could then not see it).
    fail_closed = True

    def __init__(
        self,
        store: SessionStore,
        session_id: str,
        run_id: str,
        *,
        agent_id: str | None = None,
        owner: dict[str, str] | None = None,
    ) -> None:
        self.store = store
        self.session_id = session_id
        self.run_id = run_id
        self.agent_id = agent_id
        self.owner = dict(owner) if owner else None
        self._owner_checked = owner is None
        self._last: int | None = None
        self._prev_request: tuple[int, list[Any], Any] | None = None
        self.recorded = 0

    # -- RunObserver ------------------------------------------------------------

    def on_event(self, run: Any, event: dict[str, Any]) -> None:
        """Persist one trace event (blocking; the sync driver calls this)."""
        session_event, request = self._convert(run, event)
        for _ in range(_CONFLICT_RETRIES):
            if not self._owner_checked:
                self._last = self.store.last_sequence(self.session_id)
                if self._last:
                    self._check_owner(self.store.events(self.session_id, limit=1))
            batch, expected = self._batch(session_event)
            try:
                stored = self.store.append(self.session_id, batch, expected_sequence=expected)
            except StorageError as exc:
                if exc.code != "LA-STORAGE-CONFLICT":
                    raise
                self._last = None  # re-read; an unchecked owner is checked on the next pass
                continue
            self._stored(stored, request)
            return
        raise _gave_up(self.session_id)

    async def aon_event(self, run: Any, event: dict[str, Any]) -> None:
        """Persist one trace event without blocking the event loop (the async driver)."""
        session_event, request = self._convert(run, event)
        for _ in range(_CONFLICT_RETRIES):
            if self._last is None or not self._owner_checked:
                self._last = await _call_async(
                    self.store, "alast_sequence", "last_sequence", self.session_id
                )
            if not self._owner_checked and self._last:
                first = await _call_async(self.store, "aevents", "events", self.session_id, limit=1)
                self._check_owner(first)
            batch, expected = self._batch(session_event)
            try:
                stored = await _call_async(
                    self.store,
                    "aappend",
                    "append",
                    self.session_id,
                    batch,
                    expected_sequence=expected,
                )
            except StorageError as exc:
                if exc.code != "LA-STORAGE-CONFLICT":
                    raise
                self._last = None
                continue
            self._stored(stored, request)
            return
        raise _gave_up(self.session_id)

    # -- internals --------------------------------------------------------------

    def _check_owner(self, first: list[SessionEvent]) -> None:
        # Only a session that has events has an owner to check: the first event is never
        # rewritten, so a passed check holds for the run's life.
        check_owner(self.session_id, recorded_owner(first), self.owner)
        self._owner_checked = True

    def _convert(self, run: Any, event: dict[str, Any]) -> tuple[SessionEvent, Any]:
        session_event = session_event_from_trace(
            event, agent_id=self.agent_id or getattr(run, "agent_name", None)
        )
        session_event.run_id = session_event.run_id or self.run_id
        session_event.turn_id = session_event.turn_id or self.run_id
        request = None
        if session_event.type == "model.requested":
            request = session_event.data.get("request")
            if isinstance(request, dict):
                session_event.data["request"] = self._compress(request)
        return session_event, request

    def _compress(self, request: dict[str, Any]) -> dict[str, Any]:
        prev = self._prev_request
        messages = request.get("messages")
        if prev is None or not isinstance(messages, list):
            return request
        base_seq, base_messages, base_tools = prev
        k = len(base_messages)
        if len(messages) < k or messages[:k] != base_messages:
            return request
        out = {key: value for key, value in request.items() if key not in ("messages", "tools")}
        out["$base"] = base_seq
        out["$prefix"] = k
        out["$tail"] = messages[k:]
        if request.get("tools") == base_tools:
            out["$same_tools"] = True
        else:
            out["tools"] = request.get("tools")
        return out

    def _batch(self, session_event: SessionEvent) -> tuple[list[SessionEvent], int | None]:
        # Only the session's creation is conditional (one session.started); later events
        # are independent facts appended at the end, so concurrent runs never starve.
        if self._last is None:
            self._last = self.store.last_sequence(self.session_id)
        batch = with_companions(session_event)
        if self._last == 0:
            batch.insert(
                0,
                SessionEvent(
                    "session.started",
                    data={
                        "metadata": {},
                        "created_by_run": self.run_id,
                        **({"owner": self.owner} if self.owner else {}),
                    },
                    agent_id=session_event.agent_id,
                ),
            )
            return batch, 0
        return batch, None

    def _stored(self, stored: list[SessionEvent], request: Any) -> None:
        if stored and stored[0].type == "session.started" and stored[0].sequence == 1:
            # This run created the session, with its own owner. Seeing the session empty
            # checked nothing: had the conditional create lost, the loop re-reads the owner.
            self._owner_checked = True
        self._last = stored[-1].sequence
        self.recorded += 1
        event = stored[-1]
        if event.type == "model.requested" and isinstance(request, dict):
            messages = request.get("messages")
            if isinstance(messages, list):
                self._prev_request = (event.sequence, list(messages), request.get("tools"))


async def _call_async(
    store: Any, async_name: str, sync_name: str, *args: Any, **kwargs: Any
) -> Any:
    """The store's async method, or its sync one in a worker thread (never on the loop)."""
    method = getattr(store, async_name, None)
    if method is not None:
        return await method(*args, **kwargs)
    import asyncio

    return await asyncio.to_thread(getattr(store, sync_name), *args, **kwargs)


def _gave_up(session_id: str) -> StorageError:
    return StorageError(
        "LA-STORAGE-CONFLICT",
        f"Could not append to session {session_id!r}: other writers kept appending first.",
        details={"session_id": session_id, "retries": _CONFLICT_RETRIES},
    )
