"""Jobs as the session log records them: ``JobStatus``, ``JobRecord`` and the fold of ``job.*``.

A job has no row of its own anywhere: its state is the fold of its ``job.*`` events in
the session log (:class:`JobScan`), so any process that reads the log knows it — its
status, its lease (holder, epoch, expiry), its output so far, its recorded steps and
its result.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

__all__ = ["TERMINAL", "JobRecord", "JobScan", "JobStatus"]


class JobStatus(str, Enum):
    """Where a job is (the seeds' six states)."""

    pending = "pending"
    running = "running"
    success = "success"
    failed = "failed"
    cancelled = "cancelled"
    interrupted = "interrupted"


#: States a job never leaves.
TERMINAL = frozenset({JobStatus.success, JobStatus.failed, JobStatus.cancelled})


@dataclass
class JobRecord:
    """One job, as folded from the log (the seeds' fields first, then ours)."""

    name: str
    job_id: str
    status: JobStatus = JobStatus.pending
    owner_agent_id: str | None = None
    session_id: str = ""
    created_at: float | None = None
    updated_at: float | None = None
    started_at: float | None = None
    ended_at: float | None = None
    idempotency_key: str | None = None
    cancellation_token_id: str | None = None
    lease_owner: str | None = None
    lease_epoch: int = 0
    lease_expires_at: float | None = None
    lease_seconds: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    output: list[Any] = field(default_factory=list)
    #: The job's inputs, recorded at creation (a takeover starts from them).
    arguments: dict[str, Any] = field(default_factory=dict)
    #: step name -> recorded result (``JobContext.step``): a takeover returns these.
    steps: dict[str, Any] = field(default_factory=dict)
    result: Any = None
    error: dict[str, Any] | None = None
    #: The reason of a recorded cancellation request that has not ended the job yet.
    cancel_requested: str | None = None
    #: How many times the job was started or taken over.
    attempts: int = 0
    #: What runs the job when not a lease holder: its executor's kind (``"dbos"``), whose
    #: recovery replaces a takeover; None for a job held by a worker's lease.
    executor: str | None = None

    @property
    def done(self) -> bool:
        """Whether the job reached a terminal state (success, failed, cancelled)."""
        return self.status in TERMINAL

    def lease_expired(self, now: float | None = None) -> bool:
        """Whether the job runs under a lease whose holder stopped renewing it (never for
        a job an executor owns: it has no lease to expire)."""
        if (
            self.status is not JobStatus.running
            or self.lease_expires_at is None
            or self.executor is not None
        ):
            return False
        return (time.time() if now is None else now) >= self.lease_expires_at

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict."""
        out = {k: getattr(self, k) for k in self.__dataclass_fields__}
        out["status"] = self.status.value
        out["output"] = list(self.output)
        out["steps"] = dict(self.steps)
        return out


class JobScan:
    """The jobs of one session, folded incrementally from its log (a cursor and the records)."""

    __slots__ = ("by_key", "cursor", "emitted", "first", "jobs")

    def __init__(self) -> None:
        #: The last sequence read (0: nothing read yet).
        self.cursor = 0
        #: job_id -> its record, in creation order.
        self.jobs: dict[str, JobRecord] = {}
        #: idempotency key -> job_id.
        self.by_key: dict[str, str] = {}
        #: The session's first event (its owner), once read.
        self.first: Any = None
        #: job_id -> the positions of the outputs its operation emitted (``ctx.emit_output``).
        self.emitted: dict[str, set[int]] = {}

    def feed(self, events: list[Any]) -> None:
        """Take in events read after :attr:`cursor` (others are ignored)."""
        for event in events:
            if event.sequence <= self.cursor:
                continue
            self.cursor = event.sequence
            if event.sequence == 1:
                self.first = event
            if event.type.startswith("job."):
                self._apply(event)

    def _apply(self, event: Any) -> None:
        data = event.data
        job_id = data.get("job_id")
        if not isinstance(job_id, str):
            return
        kind = event.type[4:]
        if kind == "created":
            if job_id in self.jobs:
                return
            created = JobRecord(
                name=str(data.get("name")),
                job_id=job_id,
                owner_agent_id=data.get("owner_agent_id"),
                session_id=event.session_id,
                created_at=event.timestamp,
                idempotency_key=data.get("idempotency_key"),
                cancellation_token_id=data.get("cancellation_token_id"),
                metadata=dict(data.get("metadata") or {}),
                arguments=dict(data.get("arguments") or {}),
            )
            self.jobs[job_id] = created
            if created.idempotency_key:
                self.by_key.setdefault(created.idempotency_key, job_id)
        record = self.jobs.get(job_id)
        if record is None:
            return  # an event of a job created before a fork point: nothing to fold into
        record.updated_at = event.timestamp
        if kind in ("started", "resumed", "lease_renewed"):
            record.lease_owner = data.get("lease_owner")
            record.lease_epoch = int(data.get("lease_epoch") or 0)
            record.lease_expires_at = data.get("lease_expires_at")
            record.lease_seconds = data.get("lease_seconds", record.lease_seconds)
            if kind == "resumed":
                token_id = data.get("cancellation_token_id")
                record.cancellation_token_id = token_id or record.cancellation_token_id
            if kind != "lease_renewed":
                record.executor = data.get("executor")
                record.status = JobStatus.running
                record.attempts += 1
                record.started_at = record.started_at or event.timestamp
        elif kind == "output":
            record.output.append(data.get("value"))
            if isinstance(data.get("index"), int):
                self.emitted.setdefault(job_id, set()).add(data["index"])
        elif kind == "step":
            record.steps[str(data.get("step"))] = data.get("result")
        elif kind == "cancel_requested":
            record.cancel_requested = str(data.get("reason") or "cancelled")
        elif kind == "interrupted":
            record.status = JobStatus.interrupted
            record.lease_owner, record.lease_expires_at = None, None
        elif kind in ("completed", "failed", "cancelled"):
            record.status = {
                "completed": JobStatus.success,
                "failed": JobStatus.failed,
                "cancelled": JobStatus.cancelled,
            }[kind]
            record.result = data.get("result")
            record.error = data.get("error") if isinstance(data.get("error"), dict) else None
            record.ended_at = event.timestamp
            record.lease_owner, record.lease_expires_at = None, None
