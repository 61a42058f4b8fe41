"""The argument checks of background jobs, and when a job may be taken over."""

from __future__ import annotations

import math
import time
from typing import Any

from lightagent.errors import ConfigurationError, ValidationError

from lightagent_runtime.jobs.errors import JobError
from lightagent_runtime.jobs.records import JobRecord, JobStatus

__all__ = ["as_seconds", "check_takeover", "job_name", "json_dict"]


def as_seconds(name: str, value: Any) -> float:
    """``value`` as seconds: a finite number > 0, else ``LA-CONFIG`` naming ``name``."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value <= 0
    ):
        raise ConfigurationError(
            "LA-CONFIG",
            f"{name} must be a finite number of seconds > 0, not {value!r}",
            hint=f"Pass e.g. {name}=30.",
        )
    return float(value)


def job_name(value: Any, what: str = "job name") -> str:
    """``value`` if it is non-empty text, else ``LA-VALIDATION``."""
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(
            "LA-VALIDATION",
            f"a {what} must be non-empty text, not {value!r}",
            hint="Name the job after its operation, e.g. jobs.start('report', build_report).",
        )
    return value


def json_dict(name: str, value: Any) -> dict[str, Any]:
    """A copy of ``value`` (a dict; ``{}`` for None), else ``LA-VALIDATION``."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValidationError(
            "LA-VALIDATION",
            f"{name} must be a dict of JSON values, not {type(value).__name__}",
            hint=f"Pass {name}={{'key': 'value'}}.",
        )
    return dict(value)


def check_takeover(job_id: str, record: JobRecord) -> None:
    """Refuse to take over a job that ended or whose lease is live (``LA-JOB-STATE``), or
    one its executor owns (``LA-JOB-EXECUTOR``: the executor recovers it itself)."""
    if record.executor is not None and not record.done:
        raise JobError(
            "LA-JOB-EXECUTOR",
            f"job {job_id!r} is run by its executor ({record.executor}), not under a lease",
            hint="Its executor recovers it (DBOS: the next DBOS.launch()); "
            "cancel it with jobs.cancel(job_id) if it must stop.",
            details={"job_id": job_id, "executor": record.executor},
        )
    if record.done:
        raise JobError(
            "LA-JOB-STATE",
            f"job {job_id!r} has ended ({record.status.value}): there is nothing to resume",
            details={"job_id": job_id, "status": record.status.value},
        )
    if record.status is JobStatus.running and not record.lease_expired():
        left = (record.lease_expires_at or 0) - time.time()
        raise JobError(
            "LA-JOB-STATE",
            f"job {job_id!r} is held by {record.lease_owner!r} for {left:.1f} s more",
            hint="Wait for the lease to expire (its holder stopped renewing it) before taking over.",
            details={"job_id": job_id, "holder": record.lease_owner, "seconds_left": left},
        )
