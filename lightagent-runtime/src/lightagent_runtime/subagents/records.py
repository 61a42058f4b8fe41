"""What a session log says about its subagents: :class:`SubagentRecord` and the runs' results.

The manager writes ``subagent.created``, ``subagent.queued``, ``subagent.started``,
``subagent.completed``, ``subagent.failed`` and ``subagent.cancelled`` events;
:func:`fold_subagents` reads them back into records and the recorded results of runs that
had an idempotency key, so a new process restores both from the log alone.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "SUBAGENT_EVENTS",
    "SubagentRecord",
    "SubagentResult",
    "advance",
    "fold_subagents",
]

#: The session event types the manager writes (each also has a ``subagent_*`` trace type).
SUBAGENT_EVENTS = (
    "subagent.created",
    "subagent.queued",
    "subagent.started",
    "subagent.completed",
    "subagent.failed",
    "subagent.cancelled",
)

_STATUS = {
    "subagent.created": "idle",
    "subagent.queued": "queued",
    "subagent.started": "running",
    "subagent.completed": "completed",
    "subagent.failed": "failed",
    "subagent.cancelled": "cancelled",
}


@dataclass
class SubagentRecord:
    """One registered subagent: where it sits in the tree and what it may do.

    ``status`` is ``idle`` (registered, not run yet), ``queued``, ``running``, the outcome
    of its latest run (``completed``, ``failed``, ``stopped``: that run was cancelled),
    ``cancelled`` (the subagent itself: it takes no further runs), or ``interrupted`` (a
    run was started and the log has no end for it: its process died). ``permissions`` is the narrowed
    ``PermissionSet`` as a dict (``PermissionSet.from_dict`` rebuilds it).
    """

    agent_id: str
    name: str
    parent_agent_id: str | None
    depth: int
    permissions: dict[str, Any]
    persistent: bool = False
    status: str = "idle"
    metadata: dict[str, Any] = field(default_factory=dict)
    #: Runs started (queued runs that never started are not counted).
    runs: int = 0

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict."""
        return {
            "agent_id": self.agent_id,
            "name": self.name,
            "parent_agent_id": self.parent_agent_id,
            "depth": self.depth,
            "permissions": dict(self.permissions),
            "persistent": self.persistent,
            "status": self.status,
            "metadata": dict(self.metadata),
            "runs": self.runs,
        }

    @property
    def closed(self) -> bool:
        """Cancelled, or not persistent and already run: it takes no further runs."""
        return self.status == "cancelled" or (
            not self.persistent and self.runs > 0 and self.status not in ("queued", "running")
        )


@dataclass
class SubagentResult:
    """The outcome of one subagent run, linked to the parent's run and trace."""

    agent_id: str
    status: str
    content: str | None = None
    error: dict[str, Any] | None = None
    run_id: str | None = None
    trace_id: str | None = None
    parent_run_id: str | None = None
    parent_trace_id: str | None = None
    idempotency_key: str | None = None
    #: True when the result was read from the log (a repeated idempotency key).
    idempotent_replay: bool = False

    @property
    def success(self) -> bool:
        """Whether the run completed without an error."""
        return self.status == "completed"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict."""
        return {
            "agent_id": self.agent_id,
            "status": self.status,
            "content": self.content,
            "error": self.error,
            "run_id": self.run_id,
            "trace_id": self.trace_id,
            "parent_run_id": self.parent_run_id,
            "parent_trace_id": self.parent_trace_id,
            "idempotency_key": self.idempotency_key,
            "idempotent_replay": self.idempotent_replay,
        }


def advance(
    record: SubagentRecord, kind: str, data: dict[str, Any], queued_from: dict[str, str]
) -> None:
    """Move ``record`` by one ``subagent.*`` event (the live manager and the fold share it).

    ``queued_from`` remembers each agent's status before it queued, for a queued run given
    up before it started. A cancelled subagent stays cancelled.
    """
    if record.status == "cancelled":
        return
    agent_id = record.agent_id
    if kind == "subagent.queued":
        queued_from.setdefault(agent_id, record.status)
        record.status = "queued"
    elif kind == "subagent.started":
        queued_from.pop(agent_id, None)
        record.runs += 1
        record.status = "running"
    elif kind == "subagent.cancelled" and data.get("queued_only"):
        record.status = queued_from.pop(agent_id, record.status)  # it never started
    elif kind == "subagent.cancelled":
        record.status = "stopped" if data.get("scope") == "run" else "cancelled"
    elif kind in _STATUS and kind != "subagent.created":
        record.status = _STATUS[kind]


def fold_subagents(
    events: Iterable[Any],
) -> tuple[dict[str, SubagentRecord], dict[str, SubagentResult]]:
    """``(agent_id -> record, idempotency_key -> result)`` from a session's events.

    A run whose ``subagent.started`` has no matching end leaves its record
    ``interrupted``; a queued run that never started leaves it as it was before.
    """
    records: dict[str, SubagentRecord] = {}
    results: dict[str, SubagentResult] = {}
    queued_from: dict[str, str] = {}
    for event in events:
        kind = getattr(event, "type", "")
        if kind not in _STATUS:
            continue
        data = event.data
        agent_id = data.get("agent_id")
        if not isinstance(agent_id, str):
            continue
        if kind == "subagent.created":
            records[agent_id] = SubagentRecord(
                agent_id=agent_id,
                name=str(data.get("name") or agent_id),
                parent_agent_id=data.get("parent_agent_id"),
                depth=int(data.get("depth") or 1),
                permissions=dict(data.get("permissions") or {}),
                persistent=bool(data.get("persistent")),
                metadata=dict(data.get("metadata") or {}),
            )
            continue
        record = records.get(agent_id)
        if record is None:
            continue
        advance(record, kind, data, queued_from)
        key = data.get("idempotency_key")
        if kind in ("subagent.completed", "subagent.failed") and isinstance(key, str):
            results[key] = SubagentResult(
                agent_id=agent_id,
                status=_STATUS[kind],
                content=data.get("content"),
                error=data.get("error"),
                run_id=data.get("run_id"),
                trace_id=data.get("trace_id"),
                parent_run_id=data.get("parent_run_id"),
                parent_trace_id=data.get("parent_trace_id"),
                idempotency_key=key,
                idempotent_replay=True,
            )
    for agent_id, status in queued_from.items():
        if records[agent_id].status == "queued":
            records[agent_id].status = status  # queued when the process died: never started
    for record in records.values():
        if record.status == "running":
            record.status = "interrupted"
    return records, results
