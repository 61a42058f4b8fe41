"""The typed errors of background jobs (family ``job``, codes ``LA-JOB-…``)."""

from __future__ import annotations

from lightagent.errors import LightAgentError

__all__ = ["JobError", "JobFencedError"]


class JobError(LightAgentError):
    """A job is unknown, in the wrong state, has no registered operation, or timed out."""

    default_code = "LA-JOB"
    family = "job"


class JobFencedError(JobError):
    """A stale lease holder tried to write: a newer holder (a higher epoch) took the job over."""

    default_code = "LA-JOB-FENCED"
