"""``SessionManager``: the session API over any store — replay, checkpoint, fork, export.

The agent's ``replay_session``/``checkpoint_session``/``fork_session``/
``export_session`` delegate to these methods through a manager scoped to the caller
(``owner=``); a manager built without an owner is the admin view of the store.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

from lightagent.errors import StorageError, ValidationError
from lightagent.events.model import SessionEvent
from lightagent.events.ownership import check_owner, recorded_owner
from lightagent.events.projector import ContextProjector, Projection, TurnView, group_turns
from lightagent.events.store import SessionStore, validate_session_id

__all__ = ["ForkedSession", "SessionCheckpoint", "SessionManager", "SessionReplay"]


class _DictAccess:
    def __getitem__(self, key: str) -> Any:
        # The seeds return dicts here (checkpoint["sequence"]); keep that spelling working.
        return getattr(self, key)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict."""
        return asdict(self)  # type: ignore[call-overload]


@dataclass
class SessionReplay(_DictAccess):
    """A session's state, rebuilt from its events (each ``*_turns`` lists run ids, as the seeds)."""

    session_id: str
    event_count: int
    completed_turns: list[str]
    incomplete_turns: list[str]
    failed_turns: list[str]
    last_sequence: int
    last_event_type: str | None
    incomplete_runs: list[str] = field(default_factory=list)
    checkpoints: list[dict[str, Any]] = field(default_factory=list)
    forked_from: dict[str, Any] | None = None


@dataclass
class SessionCheckpoint(_DictAccess):
    """A named position in a session's log (``sequence`` is the last event it covers)."""

    checkpoint_id: str
    session_id: str
    sequence: int
    label: str
    created_at: float
    metadata: dict[str, Any] = field(default_factory=dict)


class ForkedSession(str):
    """A fork's id (a ``str``, as before) that also answers the seeds' ``Session`` fields:
    ``session_id`` and ``metadata`` with ``forked_from`` and ``forked_at_sequence``."""

    metadata: dict[str, Any]

    @property
    def session_id(self) -> str:
        """The new session's id."""
        return str(self)


class SessionManager:
    """Session operations on one store; every method takes the session id explicitly.

    With ``owner=`` (``{"user_id": …, "tenant_id": …, "project_id": …}``, the shape a
    session records) every operation first checks that the session belongs to that owner
    and refuses others with ``LA-SESSION-OWNER``; the agent's session methods build it so.
    Without it, the manager is the **admin view** of the store: no owner checks, for
    whoever holds the store (operators, migrations, tests).
    """

    def __init__(
        self,
        store: SessionStore,
        *,
        projector: ContextProjector | None = None,
        owner: Mapping[str, str] | None = None,
    ) -> None:
        self.store = store
        self.projector = projector or ContextProjector()
        self.owner = dict(owner) if owner is not None else None

    def _check(self, session_id: str, first: Sequence[SessionEvent] | None = None) -> None:
        """Refuse a caller who is not the session's owner (reads the first event if needed)."""
        if self.owner is None:
            return
        if first is None:
            first = self.store.events(session_id, limit=1)
        check_owner(session_id, recorded_owner(first), self.owner)

    def _require_store(self) -> None:
        """``LA-STORAGE-NOT-FOUND`` when the store itself does not exist (a mistyped path)."""
        exists = getattr(self.store, "exists", None)
        if exists is not None and not exists():
            where = getattr(self.store, "path", None) or getattr(self.store, "directory", None)
            where = where or getattr(self.store, "url", None) or type(self.store).__name__
            raise StorageError(
                "LA-STORAGE-NOT-FOUND",
                f"No such store: {where} does not exist (nothing has been written to it).",
                hint="Check the store's path or URL; reading a store never creates it.",
                details={"store": str(where)},
            )

    def events(self, session_id: str) -> list[SessionEvent]:
        """Every event of the session (``LA-STORAGE-NOT-FOUND`` when the store does not exist)."""
        validate_session_id(session_id)
        iterate = getattr(self.store, "iter_events", None)
        events = list(iterate(session_id)) if iterate else self.store.events(session_id)
        if not events:
            self._require_store()
        self._check(session_id, events[:1])
        return events

    def create(
        self, session_id: str | None = None, *, metadata: dict[str, Any] | None = None
    ) -> str:
        """Start a session (``session.started``, with the manager's owner); ``LA-STORAGE-CONFLICT`` if it exists."""
        session_id = session_id or f"session_{uuid.uuid4().hex[:16]}"
        data: dict[str, Any] = {"metadata": dict(metadata or {})}
        if self.owner is not None:
            data["owner"] = dict(self.owner)
        self.store.append(
            session_id, [SessionEvent("session.started", data=data)], expected_sequence=0
        )
        return session_id

    def replay(self, session_id: str) -> SessionReplay:
        """Counts, turn states (completed / failed / incomplete), checkpoints and lineage."""
        events = self.events(session_id)
        turns = group_turns(events)
        checkpoints = [e.data for e in events if e.type == "session.checkpointed"]
        forked = next((e.data for e in events if e.type == "session.forked"), None)
        last = events[-1] if events else None
        incomplete = [t.run_id for t in turns if t.status == "incomplete"]
        return SessionReplay(
            session_id=session_id,
            event_count=len(events),
            completed_turns=[t.run_id for t in turns if t.status == "completed"],
            incomplete_turns=incomplete,
            failed_turns=[t.run_id for t in turns if t.status == "failed"],
            last_sequence=last.sequence if last else 0,
            last_event_type=last.type if last else None,
            incomplete_runs=list(incomplete),
            checkpoints=checkpoints,
            forked_from=forked,
        )

    def turns(self, session_id: str) -> list[TurnView]:
        """The session's runs with their events and status."""
        return group_turns(self.events(session_id))

    def incomplete_turns(self, session_id: str) -> list[TurnView]:
        """Runs that started and never ended (a crash, a kill, a pending approval)."""
        return [t for t in self.turns(session_id) if t.status == "incomplete"]

    def history(self, session_id: str, *, through_sequence: int | None = None) -> Projection:
        """The provider-valid history and the repairs made to it."""
        return self.projector.project(self.events(session_id), through_sequence=through_sequence)

    def checkpoint(
        self, session_id: str, label: str, *, metadata: dict[str, Any] | None = None
    ) -> SessionCheckpoint:
        """Mark the current end of the log with ``label`` (a ``session.checkpointed`` event)."""
        if not isinstance(label, str) or not label:
            raise ValidationError("LA-VALIDATION", "A checkpoint needs a non-empty label.")
        validate_session_id(session_id)
        for _ in range(8):
            last = self.store.last_sequence(session_id)
            if last == 0:
                self._require_store()
                raise StorageError("LA-SESSION", f"No session {session_id!r} to checkpoint.")
            self._check(session_id)  # on every pass: a lost race re-reads the owner
            checkpoint = SessionCheckpoint(
                checkpoint_id=f"ckpt_{uuid.uuid4().hex[:16]}",
                session_id=session_id,
                sequence=last,
                label=label,
                created_at=0.0,
                metadata=dict(metadata or {}),
            )
            try:
                (event,) = self.store.append(
                    session_id,
                    [SessionEvent("session.checkpointed", data=checkpoint.to_dict())],
                    expected_sequence=last,
                )
            except StorageError as exc:
                if exc.code == "LA-STORAGE-CONFLICT":
                    continue  # a run appended meanwhile: checkpoint the new end
                raise
            checkpoint.created_at = event.timestamp
            return checkpoint
        raise StorageError("LA-STORAGE-CONFLICT", f"Session {session_id!r} kept changing.")

    def fork(
        self,
        session_id: str,
        *,
        through_sequence: int | None = None,
        new_session_id: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> ForkedSession:
        """Copy events ``1..through_sequence`` into a new session; returns its id.

        Copies keep their sequences and point at their source with ``parent_event_id``;
        a final ``session.forked`` event records the lineage.
        """
        source = self.events(session_id)
        if not source:
            raise StorageError("LA-SESSION", f"No session {session_id!r} to fork.")
        last = source[-1].sequence
        if through_sequence is None:
            through_sequence = last
        if (
            not isinstance(through_sequence, int)
            or isinstance(through_sequence, bool)
            or not 1 <= through_sequence <= last
        ):
            raise ValidationError(
                "LA-VALIDATION",
                f"through_sequence must be between 1 and {last}, not {through_sequence!r}.",
            )
        new_id = new_session_id or f"{session_id[:150]}.fork-{uuid.uuid4().hex[:8]}"
        copies = [_copy(e) for e in source[:through_sequence]]
        copies.append(
            SessionEvent(
                "session.forked",
                data={
                    "source_session_id": session_id,
                    "through_sequence": through_sequence,
                    "source_event_id": source[through_sequence - 1].event_id,
                    "metadata": dict(metadata or {}),
                },
                parent_event_id=source[through_sequence - 1].event_id,
            )
        )
        self.store.append(new_id, copies, expected_sequence=0)
        fork = ForkedSession(new_id)
        lineage = {"forked_from": session_id, "forked_at_sequence": through_sequence}
        fork.metadata = {**(metadata or {}), **lineage}
        return fork

    def compact(
        self,
        session_id: str,
        *,
        max_messages: int = 20,
        summarizer: Any = None,
        metadata: dict[str, Any] | None = None,
    ) -> dict[str, Any] | None:
        """Fold older turns into an optional summary so the history keeps at most about
        ``max_messages`` (always at least the last turn, never a split tool group).

        Records a ``context.compacted`` event that later history projections honour and
        returns its data, or ``None`` when there was nothing to compact.
        """
        if not isinstance(max_messages, int) or max_messages < 0:
            raise ValidationError(
                "LA-VALIDATION", f"max_messages must be an int >= 0, not {max_messages!r}."
            )
        events = self.events(session_id)
        projection = self.projector.project(events)
        turns = projection.turns
        kept, count = 0, 0
        for turn in reversed(turns):
            size = len(self.projector.messages(turn.events))
            if kept and count + size > max_messages:
                break
            kept, count = kept + 1, count + size
        if kept >= len(turns):
            return None
        cut = turns[len(turns) - kept].first_sequence - 1
        removed = self.projector.messages(events, through_sequence=cut)
        summary = str(summarizer(removed)) if summarizer is not None and removed else None
        data = {
            "through_sequence": cut,
            "summary": summary,
            "removed_messages": len(removed),
            "removed_count": len(removed),  # the seeds' name
            "kept_turns": kept,
            "max_messages": max_messages,
            "metadata": dict(metadata or {}),
        }
        self.store.append(session_id, [SessionEvent("context.compacted", data=data)])
        return data

    def export(self, session_id: str, destination: str | Path | IO[str]) -> int:
        """Write the session as JSONL (redacted events, one per line); returns the count."""
        validate_session_id(session_id)
        first = self.store.events(session_id, limit=1)
        if not first:
            self._require_store()
        self._check(session_id, first)
        return self.store.export(session_id, destination)

    def delete(self, session_id: str) -> bool:
        """Remove the session."""
        validate_session_id(session_id)
        self._check(session_id)
        return self.store.delete(session_id)

    def model_request(self, session_id: str, sequence: int) -> dict[str, Any]:
        """The exact model request recorded at ``sequence``."""
        return self.projector.model_request(self.events(session_id), sequence=sequence)

    def trace(self, session_id: str, *, turn_id: str | None = None) -> list[dict[str, Any]]:
        """The seeds-compatible trace view of the session (or of one run)."""
        return self.projector.trace(self.events(session_id), turn_id=turn_id)


def _copy(event: SessionEvent) -> SessionEvent:
    fields: dict[str, Any] = {k: getattr(event, k) for k in event.__dataclass_fields__}
    fields.update(session_id="", parent_event_id=event.event_id, event_id=uuid.uuid4().hex)
    return SessionEvent(**fields)


def count_by_type(events: Sequence[SessionEvent]) -> dict[str, int]:
    """How many events of each type (for reports)."""
    counts: dict[str, int] = {}
    for event in events:
        counts[event.type] = counts.get(event.type, 0) + 1
    return counts
