"""The session event: one versioned, append-only fact, and its schema migrations.

Every event a run writes is a :class:`SessionEvent`. Its ``schema_version`` says which
shape it was written in; :data:`event_migrations` upgrades older shapes on read, one
version step at a time, so a log written by an older lightagent stays readable.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from lightagent.errors import StorageError

__all__ = [
    "SESSION_EVENT_TYPES",
    "SESSION_SCHEMA_VERSION",
    "EventMigrationRegistry",
    "SessionEvent",
    "event_migrations",
]

#: The schema version written by this lightagent.
SESSION_SCHEMA_VERSION = 1

#: The session event vocabulary (the seeds' names plus ours). Stores accept any
#: dotted type; these are the ones lightagent writes and projects.
SESSION_EVENT_TYPES: frozenset[str] = frozenset(
    {
        # session lifecycle
        "session.started",
        "session.checkpointed",
        "session.forked",
        "session.paused",
        "session.resumed",
        "session.cancelled",
        "session.continued",
        # turns and runs
        "turn.started",
        "run.started",
        "turn.completed",
        "turn.failed",
        "run.resumed",
        "run.completed",
        "run.failed",
        "message.received",
        # model
        "model.requested",
        "assistant.completed",
        "model.completed",
        "model.failed",
        # tools
        "tool.requested",
        "tool.finished",
        "tool.completed",
        "tool.reconciled",
        # memory
        "memory.retrieved",
        "memory.written",
        "memory.blocked",
        "memory.promotion",
        # control
        "policy.decision",
        "policy.blocked",
        "guardrail.blocked",
        "approval.requested",
        "approval.decided",
        "handoff.requested",
        # budgets (the lightagent-runtime distribution)
        "budget.consumed",
        "budget.exhausted",
        "progress.stalled",
        # context and errors
        "context.compacted",
        "error.recorded",
        "exporter.failed",
        "trace.recorded",
    }
)


def _now() -> float:
    return time.time()


def _new_id() -> str:
    return uuid.uuid4().hex


@dataclass
class SessionEvent:
    """One fact in a session's log.

    ``sequence`` is assigned by the store on append (1, 2, 3 … with no gap);
    ``data`` is JSON-safe and already redacted once stored. ``turn_id`` groups the
    events of one turn (lightagent uses the run id), ``step_id`` one model step.
    """

    type: str
    session_id: str = ""
    data: dict[str, Any] = field(default_factory=dict)
    event_id: str = field(default_factory=_new_id)
    timestamp: float = field(default_factory=_now)
    sequence: int = 0
    schema_version: int = SESSION_SCHEMA_VERSION
    turn_id: str | None = None
    step_id: str | None = None
    run_id: str | None = None
    agent_id: str | None = None
    parent_event_id: str | None = None
    trace_id: str | None = None
    parent_trace_id: str | None = None
    run_group_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict; ``None`` fields are left out to keep lines short."""
        out: dict[str, Any] = {}
        for f in _FIELDS:
            value = getattr(self, f)
            if value is not None:
                out[f] = value
        return out

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> SessionEvent:
        """Read a stored dict, upgrading older schema versions first."""
        upgraded = event_migrations.upgrade(dict(raw))
        known = {k: upgraded[k] for k in _FIELDS if k in upgraded}
        if "type" not in known:
            raise StorageError(
                "LA-STORAGE-CORRUPT",
                "A stored session event has no type.",
                details={"event": {k: upgraded.get(k) for k in ("sequence", "event_id")}},
            )
        data = known.get("data")
        if not isinstance(data, dict):
            known["data"] = {"value": data} if data is not None else {}
        return cls(**known)

    def __getitem__(self, key: str) -> Any:
        # The seeds' code reads events as dicts (event["type"]); keep that working.
        return self.to_dict()[key] if key in _FIELDS else self.data[key]


_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(SessionEvent))

Migration = Callable[[dict[str, Any]], dict[str, Any]]


class EventMigrationRegistry:
    """Upgrade functions by schema version: ``fn(event_dict_at_v) -> event_dict_at_v+1``."""

    def __init__(self, current: int = SESSION_SCHEMA_VERSION) -> None:
        self.current = current
        self._steps: dict[int, Migration] = {}

    def register(self, from_version: int, fn: Migration | None = None) -> Any:
        """Register the step from ``from_version`` to ``from_version + 1`` (usable as a decorator)."""

        def add(func: Migration) -> Migration:
            self._steps[from_version] = func
            return func

        return add(fn) if fn is not None else add

    def upgrade(self, raw: dict[str, Any]) -> dict[str, Any]:
        """Apply every registered step from the event's version up to :attr:`current`."""
        version = raw.get("schema_version", 0)
        if not isinstance(version, int) or version < 0:
            raise StorageError(
                "LA-STORAGE-CORRUPT",
                f"A stored session event has an invalid schema_version {version!r}.",
            )
        if version > self.current:
            raise StorageError(
                "LA-STORAGE",
                f"The event was written with schema version {version}, newer than this "
                f"lightagent supports ({self.current}).",
                hint="Upgrade lightagent-core to read this session.",
                details={"schema_version": version, "supported": self.current},
            )
        while version < self.current:
            step = self._steps.get(version)
            if step is None:
                raise StorageError(
                    "LA-STORAGE",
                    f"No migration registered from session schema version {version}.",
                    details={"schema_version": version},
                )
            raw = step(raw)
            version += 1
            raw["schema_version"] = version
        return raw


#: The process-wide migration registry used by :meth:`SessionEvent.from_dict`.
event_migrations = EventMigrationRegistry()


@event_migrations.register(0)
def _v0_to_v1(raw: dict[str, Any]) -> dict[str, Any]:
    # Version 0 (pre-release logs) spelled the fields kind/seq/payload/ts and had no ids.
    out = dict(raw)
    for old, new in (
        ("kind", "type"),
        ("seq", "sequence"),
        ("payload", "data"),
        ("ts", "timestamp"),
    ):
        if old in out and new not in out:
            out[new] = out.pop(old)
    out.setdefault("event_id", _new_id())
    if out.get("turn_id") is None and out.get("run_id") is not None:
        out["turn_id"] = out["run_id"]
    return out
