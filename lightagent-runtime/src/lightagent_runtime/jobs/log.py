"""One session's log as its jobs see it: a :class:`JobScan` kept current, and fenced appends.

Every job write is appended *on condition* that the log still ends where it was read
(``expected_sequence``), after its builder has checked the job's folded state — the
exactly-once pattern of the inbox's claims. A builder that finds the job's lease held at a
newer epoch than the writer's refuses with :class:`~lightagent_runtime.jobs.errors.JobFencedError`;
an append that loses to another writer re-reads and builds again, so the check always
holds for the state the write lands on. These calls block (store I/O): the manager runs
them in worker threads.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from typing import Any

from lightagent.errors import StorageError
from lightagent.events.model import SessionEvent
from lightagent.events.ownership import check_owner, opening_event, recorded_owner
from lightagent.events.store import SessionStore, validate_session_id

from lightagent_runtime.jobs.errors import JobError, JobFencedError
from lightagent_runtime.jobs.records import JobRecord, JobScan, JobStatus

__all__ = ["Build", "JobLog", "Lease", "holder_check"]

#: ``build(record or None) -> events``: what to append, given the job's state as read.
Build = Callable[[JobRecord | None], list[SessionEvent]]

_RETRIES = 32


class Lease:
    """A worker's hold on one job: who, at which epoch (the fencing token), for how long."""

    __slots__ = ("epoch", "expires_at", "owner", "seconds")

    def __init__(self, owner: str, epoch: int, seconds: float) -> None:
        self.owner = owner
        self.epoch = epoch
        self.seconds = seconds
        self.expires_at = time.time() + seconds

    def data(self, job_id: str) -> dict[str, Any]:
        """The lease as a ``job.started``/``job.resumed``/``job.lease_renewed`` event holds it."""
        return {
            "job_id": job_id,
            "lease_owner": self.owner,
            "lease_epoch": self.epoch,
            "lease_expires_at": self.expires_at,
            "lease_seconds": self.seconds,
        }


def holder_check(job_id: str, record: JobRecord | None, lease: Lease) -> JobRecord:
    """``record`` if ``lease`` still holds the job, else the typed refusal (nothing is written)."""
    if record is None:
        raise JobError("LA-JOB-NOT-FOUND", f"job {job_id!r} is not in this session")
    if (
        record.status is not JobStatus.running
        or record.lease_epoch != lease.epoch
        or record.lease_owner != lease.owner
    ):
        raise JobFencedError(
            "LA-JOB-FENCED",
            f"job {job_id!r} is no longer held by {lease.owner!r} at epoch {lease.epoch} "
            f"(now {record.status.value}, epoch {record.lease_epoch}, holder {record.lease_owner!r})",
            details={
                "job_id": job_id,
                "epoch": lease.epoch,
                "current_epoch": record.lease_epoch,
                "current_holder": record.lease_owner,
                "status": record.status.value,
            },
        )
    return record


class JobLog:
    """The jobs of ``session_id`` in ``store``, acting for ``owner`` (the session's owner)."""

    def __init__(
        self, store: SessionStore, session_id: str, owner: dict[str, Any] | None = None
    ) -> None:
        self.store = store
        self.session_id = validate_session_id(session_id)
        self.owner = dict(owner) if owner else None
        self.scan = JobScan()
        self._owner_checked = False
        # The scan is fed from worker threads (reads and writes of several jobs at once).
        self._lock = threading.Lock()

    def refresh(self) -> JobScan:
        """Read what was appended since the last read (blocking)."""
        with self._lock:
            self._read()
        return self.scan

    def _read(self) -> None:
        self.scan.feed(self.store.events(self.session_id, after=self.scan.cursor))
        if not self._owner_checked and self.scan.first is not None:
            check_owner(self.session_id, recorded_owner([self.scan.first]), self.owner)
            self._owner_checked = True

    def write(self, job_id: str, build: Build) -> list[SessionEvent]:
        """Append what ``build`` returns, on condition that the log is as read (blocking).

        Returns the stored events ([] when ``build`` returned none). ``build`` is called
        again on every lost race, with the job's state as re-read.
        """
        for attempt in range(_RETRIES):
            with self._lock:
                self._read()
                events = build(self.scan.jobs.get(job_id))
                if not events:
                    return []
                expected = self.scan.cursor
                if expected == 0:  # this opens the session: record its owner first, as a run does
                    events.insert(0, opening_event(self.owner))
                try:
                    stored = self.store.append(self.session_id, events, expected_sequence=expected)
                except StorageError as exc:
                    if exc.code != "LA-STORAGE-CONFLICT":
                        raise
                    stored = None
                if stored is not None:
                    self.scan.feed(stored)
                    return stored
            # Another writer (a run, another job's heartbeat) appended first: back off a
            # little, outside the lock, then read and check again.
            time.sleep(random.random() * min(0.002 * (attempt + 1), 0.05))
        raise StorageError(
            "LA-STORAGE-CONFLICT",
            f"could not record job {job_id!r}: other writers of session {self.session_id!r} "
            "kept appending first",
            details={"job_id": job_id, "session_id": self.session_id, "retries": _RETRIES},
        )
