"""Background jobs: started from a run or from code, leased, heartbeated, durable in the
session log (SQLite or PostgreSQL), taken over when their worker dies — or run by an
executor (``JobExecutor``: DBOS workflows) — see ``docs/runtime.md`` ("Background jobs")."""

from __future__ import annotations

from lightagent_runtime.jobs.context import JobContext
from lightagent_runtime.jobs.errors import JobError, JobFencedError
from lightagent_runtime.jobs.executors import JobExecutor
from lightagent_runtime.jobs.manager import JobManager, Operation
from lightagent_runtime.jobs.records import JobRecord, JobStatus

__all__ = [
    "JobContext",
    "JobError",
    "JobExecutor",
    "JobFencedError",
    "JobManager",
    "JobRecord",
    "JobStatus",
    "Operation",
]
