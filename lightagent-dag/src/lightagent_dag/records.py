"""What LightDAG stores and returns: runs, tasks, attempts, artifacts, reports, events, results."""

from __future__ import annotations

import copy
import time
import uuid
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from lightagent_dag.specs import DAG_SCHEMA_VERSION, DecompositionProposal, TaskSpec
from lightagent_dag.states import (
    AssuranceLevel,
    DAGAttemptStatus,
    DAGRunStatus,
    DAGTaskStatus,
    VerificationVerdict,
)

__all__ = [
    "ArtifactManifest",
    "Claim",
    "ClaimRequest",
    "DAGEvent",
    "DAGRun",
    "DAGRunResult",
    "DAGTask",
    "TaskAttempt",
    "VerificationReport",
    "VerificationRequest",
]


@dataclass(frozen=True)
class DAGRun:
    """A run as stored: identity, status, graph revision and the persisted security context."""

    run_id: str
    status: DAGRunStatus
    tenant_id: str
    project_id: str
    user_id: str
    root_task_ids: tuple[str, ...]
    graph_revision: int
    config: dict[str, Any]
    context: dict[str, Any]
    reason: str | None = None
    created_at: float = 0.0
    updated_at: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe form."""
        out = asdict(self)
        out["status"] = self.status.value
        out["root_task_ids"] = list(self.root_task_ids)
        return out


@dataclass(frozen=True)
class DAGTask:
    """A task as stored: its spec plus where it stands, its lease and its fencing token."""

    run_id: str
    spec: TaskSpec
    status: DAGTaskStatus
    depth: int = 0
    attempts: int = 0
    fence: int = 0
    phase: str = "execute"
    decompositions: int = 0
    lease_owner: str | None = None
    lease_expires_at: float | None = None
    available_at: float | None = None
    artifact_id: str | None = None
    last_error: dict[str, Any] | None = None
    blocker: str | None = None
    depends_on: tuple[str, ...] = ()

    @property
    def task_id(self) -> str:
        """The task's id (unique within its run)."""
        return self.spec.task_id

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe form."""
        return {
            "run_id": self.run_id,
            "task_id": self.task_id,
            "status": self.status.value,
            "goal": self.spec.goal,
            "worker_key": self.spec.worker_key,
            "verifier_key": self.spec.verifier_key,
            "depth": self.depth,
            "attempts": self.attempts,
            "fence": self.fence,
            "phase": self.phase,
            "lease_owner": self.lease_owner,
            "lease_expires_at": self.lease_expires_at,
            "artifact_id": self.artifact_id,
            "last_error": self.last_error,
            "blocker": self.blocker,
            "depends_on": list(self.depends_on),
        }


@dataclass(frozen=True)
class ClaimRequest:
    """What a worker claims with: the store's ``claim`` arguments, to claim again in a finishing write."""

    worker_id: str
    run_id: str | None = None
    worker_keys: tuple[str, ...] | None = None
    lease_seconds: float = 60.0


@dataclass(frozen=True)
class TaskAttempt:
    """One claim of a task, identified by its fencing token."""

    attempt_id: str
    run_id: str
    task_id: str
    fence: int
    worker_id: str
    status: DAGAttemptStatus
    error: dict[str, Any] | None = None
    created_at: float = 0.0


@dataclass(frozen=True)
class Claim:
    """What a successful claim hands the worker: the task, its attempt and its lease."""

    run: DAGRun
    task: DAGTask
    attempt_id: str
    fence: int
    worker_id: str
    lease_expires_at: float

    @property
    def run_id(self) -> str:
        """The claimed task's run."""
        return self.run.run_id

    @property
    def task_id(self) -> str:
        """The claimed task."""
        return self.task.task_id


@dataclass(frozen=True)
class ArtifactManifest:
    """A content-addressed artifact: where its bytes are, their hash and size, and its provenance."""

    run_id: str
    task_id: str
    attempt_id: str
    tenant_id: str
    project_id: str
    content_hash: str
    relative_blob_path: str
    media_type: str
    byte_size: int
    contract_hash: str = ""
    dependency_manifest: dict[str, str] = field(default_factory=dict)
    artifact_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    verification_report_id: str | None = None
    state: str = "staged"
    created_at: float = field(default_factory=time.time)
    schema_version: int = DAG_SCHEMA_VERSION
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe form."""
        # Field by field rather than dataclasses.asdict, which deep-copies every value:
        # a manifest is written on every publication, and only its two dicts can nest.
        out = {name: getattr(self, name) for name in _MANIFEST_FIELDS}
        out["dependency_manifest"] = dict(self.dependency_manifest)
        out["metadata"] = copy.deepcopy(self.metadata) if self.metadata else {}
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ArtifactManifest:
        """Build a manifest from :meth:`to_dict` output."""
        return cls(**data)


_MANIFEST_FIELDS = tuple(f.name for f in fields(ArtifactManifest))


@dataclass(frozen=True)
class VerificationReport:
    """A verifier's verdict on a candidate or a decomposition, with its evidence."""

    kind: str
    verdict: VerificationVerdict
    assurance_level: AssuranceLevel = AssuranceLevel.EXECUTABLE_CHECKS
    verifier_key: str = ""
    verifier_version: str = "1"
    config_digest: str = ""
    input_snapshot_hash: str = ""
    artifact_hashes: tuple[str, ...] = ()
    evidence_refs: tuple[str, ...] = ()
    diagnostics: tuple[str, ...] = ()
    report_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    created_at: float = field(default_factory=time.time)

    @property
    def passed(self) -> bool:
        """Whether the verdict is ``pass``."""
        return self.verdict is VerificationVerdict.PASS

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe form."""
        # Every field is a string, a number or a tuple of strings: no deep copy needed.
        out = {name: getattr(self, name) for name in _REPORT_FIELDS}
        out["verdict"] = self.verdict.value
        out["assurance_level"] = self.assurance_level.value
        for key in ("artifact_hashes", "evidence_refs", "diagnostics"):
            out[key] = list(out[key])
        return out


_REPORT_FIELDS = tuple(f.name for f in fields(VerificationReport))


@dataclass(frozen=True)
class VerificationRequest:
    """What a verifier sees: the run, task and attempt, and the candidate or decomposition."""

    kind: str
    run: DAGRun
    task: DAGTask
    attempt_id: str
    input_snapshot_hash: str
    candidate: ArtifactManifest | None = None
    candidate_content: bytes | None = None
    decomposition: DecompositionProposal | None = None
    dependency_artifacts: dict[str, bytes] = field(default_factory=dict)
    security_context: Any = None

    @property
    def spec(self) -> TaskSpec:
        """The task's spec (goal and acceptance contract)."""
        return self.task.spec


@dataclass(frozen=True)
class DAGEvent:
    """One entry of a run's event log (``dag.run.created``, ``dag.task.claimed`` …)."""

    event_id: int
    run_id: str
    type: str
    data: dict[str, Any]
    task_id: str | None = None
    created_at: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe form."""
        return asdict(self)


@dataclass(frozen=True)
class DAGRunResult:
    """The outcome of ``LightDAG.run``: status, per-task states, published artifacts, errors."""

    run_id: str
    status: DAGRunStatus
    tasks: dict[str, DAGTaskStatus] = field(default_factory=dict)
    artifacts: dict[str, ArtifactManifest] = field(default_factory=dict)
    errors: dict[str, dict[str, Any]] = field(default_factory=dict)
    graph_revision: int = 0
    events_cursor: int = 0
    reason: str | None = None

    @property
    def success(self) -> bool:
        """Whether the run succeeded (every root task verified)."""
        return self.status is DAGRunStatus.SUCCEEDED

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe form."""
        return {
            "run_id": self.run_id,
            "status": self.status.value,
            "success": self.success,
            "tasks": {k: v.value for k, v in self.tasks.items()},
            "artifacts": {k: v.to_dict() for k, v in self.artifacts.items()},
            "errors": self.errors,
            "graph_revision": self.graph_revision,
            "events_cursor": self.events_cursor,
            "reason": self.reason,
        }
