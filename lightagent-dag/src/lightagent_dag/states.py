"""The seeds' LightDAG state vocabularies: run, task, attempt, verdict and assurance."""

from __future__ import annotations

from enum import Enum

__all__ = [
    "ACTIVE_TASK_STATES",
    "TERMINAL_RUN_STATES",
    "AssuranceLevel",
    "DAGAttemptStatus",
    "DAGRunStatus",
    "DAGTaskStatus",
    "TaskOutcomeKind",
    "VerificationVerdict",
]


class DAGRunStatus(str, Enum):
    """Where a run stands."""

    RUNNING = "running"
    PAUSED = "paused"
    BLOCKED = "blocked"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"


class DAGTaskStatus(str, Enum):
    """Where a task stands (``retry_wait`` is a failed attempt waiting for its backoff)."""

    READY = "ready"
    RUNNING = "running"
    VERIFYING = "verifying"
    WAITING_DEPENDENCIES = "waiting_dependencies"
    RETRY_WAIT = "retry_wait"
    WAITING_APPROVAL = "waiting_approval"
    BLOCKED = "blocked"
    VERIFIED = "verified"
    FAILED = "failed"
    CANCELLED = "cancelled"
    SUPERSEDED = "superseded"


class DAGAttemptStatus(str, Enum):
    """Where one claim of a task stands."""

    CLAIMED = "claimed"
    RUNNING = "running"
    SUBMITTED = "submitted"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    EXPIRED = "expired"
    CANCELLED = "cancelled"


class TaskOutcomeKind(str, Enum):
    """What a worker handed back."""

    CANDIDATE = "candidate"
    DECOMPOSITION = "decomposition"
    BLOCKED = "blocked"


class VerificationVerdict(str, Enum):
    """A verifier's answer."""

    PASS = "pass"
    FAIL = "fail"
    INCONCLUSIVE = "inconclusive"
    ERROR = "error"


class AssuranceLevel(str, Enum):
    """How strong a verifier's check is."""

    FORMAL = "formal"
    EXECUTABLE_CHECKS = "executable_checks"
    HUMAN_REVIEW = "human_review"


TERMINAL_RUN_STATES = frozenset(
    {DAGRunStatus.SUCCEEDED, DAGRunStatus.FAILED, DAGRunStatus.CANCELLED}
)
#: Task states in which work is still going on or due (the run is not quiescent).
ACTIVE_TASK_STATES = frozenset(
    {
        DAGTaskStatus.READY,
        DAGTaskStatus.RUNNING,
        DAGTaskStatus.VERIFYING,
        DAGTaskStatus.RETRY_WAIT,
    }
)
