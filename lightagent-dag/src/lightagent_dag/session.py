"""LightDAG events as lightagent ``SessionEvent`` objects, and mirroring into a SessionStore."""

from __future__ import annotations

from typing import Any

from lightagent_dag.records import DAGEvent

__all__ = ["mirror_events", "session_id_for", "to_session_event"]


def session_id_for(run_id: str) -> str:
    """The session a run's events are mirrored into."""
    return f"dag-{run_id}"


def to_session_event(event: DAGEvent) -> Any:
    """One DAG event as a ``SessionEvent`` (type kept, e.g. ``dag.task.verified``)."""
    from lightagent.events.model import SessionEvent

    return SessionEvent(
        type=event.type,
        session_id=session_id_for(event.run_id),
        data={**event.data, "task_id": event.task_id, "dag_event_id": event.event_id},
        event_id=f"dag-{event.run_id}-{event.event_id}",
        timestamp=event.created_at,
        run_id=event.run_id,
        step_id=event.task_id,
    )


def mirror_events(store: Any, session_store: Any, run_id: str, *, batch: int = 500) -> int:
    """Append the run's events not yet mirrored to ``session_store``; returns how many.

    Each batch is appended with the session's last sequence as ``expected_sequence``, so
    two processes mirroring the same run at once never both append the same events: the
    loser of a race re-reads where the session ends and goes on from there.
    """
    from lightagent.errors import StorageError

    session_id = session_id_for(run_id)
    total = 0
    while True:
        seq = session_store.last_sequence(session_id)
        last = 0
        if seq:
            page = session_store.events(session_id, after=seq - 1, limit=1)
            if not page:
                raise StorageError(
                    "LA-STORAGE-CORRUPT",
                    f"session {session_id!r} ends at {seq} but that event cannot be read",
                )
            last = int(page[0].data.get("dag_event_id", 0))
        events = store.events(run_id, after=last, limit=batch)
        if not events:
            return total
        try:
            session_store.append(
                session_id, [to_session_event(e) for e in events], expected_sequence=seq
            )
        except StorageError as exc:
            if exc.code != "LA-STORAGE-CONFLICT":
                raise
            continue  # another mirror appended first
        total += len(events)
