"""What callers and workers hand to LightDAG: task specs, outcomes, proposals and limits."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from lightagent_dag.errors import DAGError, DAGWorkerProtocolError
from lightagent_dag.states import TaskOutcomeKind

__all__ = [
    "DAG_SCHEMA_VERSION",
    "DAGConfig",
    "DecompositionProposal",
    "TaskOutcome",
    "TaskSpec",
    "canonical_digest",
]

DAG_SCHEMA_VERSION = 1


def canonical_digest(value: Any) -> str:
    """sha256 of the canonical JSON form of ``value`` (sorted keys, no spaces)."""
    try:
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise DAGError("LA-DAG-INVALID", f"value is not JSON-serialisable: {exc}") from exc
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _invalid(message: str) -> DAGError:
    return DAGError("LA-DAG-INVALID", message)


def _key(value: Any, name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _invalid(f"TaskSpec.{name} must be a non-empty string, got {value!r}")
    return value


@dataclass(frozen=True)
class TaskSpec:
    """One node of the graph: a goal, its acceptance contract, and who works and verifies it."""

    goal: str
    acceptance_contract: Any
    worker_key: str
    verifier_key: str
    task_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    decomposer_key: str | None = None
    depends_on: tuple[str, ...] = ()
    resource_requirements: tuple[str, ...] = ()
    created_by_task_id: str | None = None
    supersedes_task_id: str | None = None
    priority: int = 0
    metadata: Mapping[str, Any] = field(default_factory=dict)
    contract_hash: str = ""
    schema_version: int = DAG_SCHEMA_VERSION

    def __post_init__(self) -> None:
        _key(self.goal, "goal")
        _key(self.worker_key, "worker_key")
        _key(self.verifier_key, "verifier_key")
        _key(self.task_id, "task_id")
        if len(self.task_id) > 200:
            raise _invalid("TaskSpec.task_id is longer than 200 characters")
        if self.decomposer_key is not None:
            _key(self.decomposer_key, "decomposer_key")
        if isinstance(self.depends_on, str) or isinstance(self.resource_requirements, str):
            raise _invalid(
                "TaskSpec.depends_on and resource_requirements are sequences, not strings"
            )
        object.__setattr__(self, "depends_on", tuple(dict.fromkeys(self.depends_on)))
        object.__setattr__(self, "resource_requirements", tuple(self.resource_requirements))
        for dep in self.depends_on:
            _key(dep, "depends_on[]")
        if self.task_id in self.depends_on:
            raise _invalid(f"task {self.task_id!r} depends on itself")
        if not isinstance(self.priority, int) or isinstance(self.priority, bool):
            raise _invalid("TaskSpec.priority must be an int")
        if self.schema_version != DAG_SCHEMA_VERSION:
            raise DAGError(
                "LA-DAG-SCHEMA-MISMATCH",
                f"TaskSpec schema_version {self.schema_version} is not {DAG_SCHEMA_VERSION}",
            )
        object.__setattr__(self, "metadata", dict(self.metadata or {}))
        digest = canonical_digest(self.acceptance_contract)
        if self.contract_hash and self.contract_hash != digest:
            raise _invalid(
                f"TaskSpec.contract_hash does not match the acceptance contract of {self.task_id!r}"
            )
        object.__setattr__(self, "contract_hash", digest)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe form (round-trips through :meth:`from_dict`)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["depends_on"] = list(self.depends_on)
        out["resource_requirements"] = list(self.resource_requirements)
        out["metadata"] = dict(self.metadata)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TaskSpec:
        """Build a spec from :meth:`to_dict` output (unknown keys are refused)."""
        if not isinstance(data, Mapping):
            raise _invalid(f"a task spec must be a mapping, got {type(data).__name__}")
        names = {f.name for f in fields(cls)}
        unknown = set(data) - names
        if unknown:
            raise _invalid(f"unknown TaskSpec fields: {sorted(unknown)}")
        try:
            return cls(**{k: v for k, v in data.items()})
        except TypeError as exc:
            raise _invalid(f"invalid TaskSpec: {exc}") from exc

    @classmethod
    def from_stored(cls, data: Mapping[str, Any]) -> TaskSpec:
        """A spec as the store wrote it: checked when it was stored, so not checked again.

        Every claim reads its task's spec; re-validating it (and re-hashing its acceptance
        contract) would cost more than the claim's own statements on SQLite.
        """
        if not isinstance(data, Mapping) or not _SPEC_REQUIRED <= data.keys():
            return cls.from_dict(data)  # not what the store writes: the checked path explains
        spec = object.__new__(cls)
        for name in _SPEC_FIELDS:
            object.__setattr__(spec, name, data[name] if name in data else _SPEC_DEFAULTS[name])
        object.__setattr__(spec, "depends_on", tuple(spec.depends_on))
        object.__setattr__(spec, "resource_requirements", tuple(spec.resource_requirements))
        object.__setattr__(spec, "metadata", dict(spec.metadata or {}))
        return spec

    def digest(self) -> str:
        """A digest of the whole spec, used for idempotent create_run."""
        return canonical_digest(self.to_dict())


_SPEC_FIELDS = tuple(f.name for f in fields(TaskSpec))
_SPEC_DEFAULTS = {
    f.name: f.default for f in fields(TaskSpec) if f.default is not dataclasses.MISSING
}
_SPEC_DEFAULTS["metadata"] = {}
_SPEC_REQUIRED = frozenset(
    ("task_id", *(f.name for f in fields(TaskSpec) if f.name not in _SPEC_DEFAULTS))
)


@dataclass(frozen=True)
class DecompositionProposal:
    """A worker's proposal to split its task: new tasks, reused tasks, and why."""

    parent_task_id: str = ""
    new_tasks: tuple[TaskSpec, ...] = ()
    reuse_task_ids: tuple[str, ...] = ()
    rationale: str = ""
    composition_contract: Any = None
    expected_graph_revision: int | None = None
    proposal_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    verification_report_id: str | None = None

    def __post_init__(self) -> None:
        tasks = tuple(
            t if isinstance(t, TaskSpec) else TaskSpec.from_dict(t) for t in self.new_tasks
        )
        object.__setattr__(self, "new_tasks", tasks)
        object.__setattr__(self, "reuse_task_ids", tuple(self.reuse_task_ids))
        if not tasks and not self.reuse_task_ids:
            raise _invalid("a DecompositionProposal needs new_tasks or reuse_task_ids")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe form."""
        return {
            "parent_task_id": self.parent_task_id,
            "new_tasks": [t.to_dict() for t in self.new_tasks],
            "reuse_task_ids": list(self.reuse_task_ids),
            "rationale": self.rationale,
            "composition_contract": self.composition_contract,
            "expected_graph_revision": self.expected_graph_revision,
            "proposal_id": self.proposal_id,
            "verification_report_id": self.verification_report_id,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DecompositionProposal:
        """Build a proposal from its mapping form."""
        if not isinstance(data, Mapping):
            raise DAGWorkerProtocolError(
                "LA-DAG-WORKER-PROTOCOL", "a decomposition must be a mapping"
            )
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass(frozen=True)
class TaskOutcome:
    """What a worker returns: a candidate artifact, a decomposition, or a blocker."""

    kind: TaskOutcomeKind
    content: str | bytes | None = None
    media_type: str = "text/plain"
    decomposition: DecompositionProposal | None = None
    blocker: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def candidate(
        cls,
        content: str | bytes,
        *,
        media_type: str = "text/plain",
        metadata: Mapping[str, Any] | None = None,
    ) -> TaskOutcome:
        """A candidate artifact for the verifier to check and, on pass, publish."""
        if not isinstance(content, str | bytes):
            raise DAGWorkerProtocolError(
                "LA-DAG-WORKER-PROTOCOL",
                f"candidate content must be str or bytes, got {type(content).__name__}",
            )
        return cls(
            TaskOutcomeKind.CANDIDATE,
            content=content,
            media_type=media_type,
            metadata=dict(metadata or {}),
        )

    @classmethod
    def decompose(
        cls, proposal: DecompositionProposal, *, metadata: Mapping[str, Any] | None = None
    ) -> TaskOutcome:
        """A proposal to split the task; it takes effect only if its verifier passes it."""
        if not isinstance(proposal, DecompositionProposal):
            proposal = DecompositionProposal.from_dict(proposal)
        return cls(
            TaskOutcomeKind.DECOMPOSITION, decomposition=proposal, metadata=dict(metadata or {})
        )

    @classmethod
    def blocked(cls, reason: str, *, metadata: Mapping[str, Any] | None = None) -> TaskOutcome:
        """The task cannot go on without outside help; ``resolve_blocker`` makes it ready again."""
        return cls(TaskOutcomeKind.BLOCKED, blocker=str(reason), metadata=dict(metadata or {}))

    def content_bytes(self) -> bytes:
        """The candidate content as bytes (str is UTF-8 encoded)."""
        if isinstance(self.content, bytes):
            return self.content
        return (self.content or "").encode("utf-8")

    def to_dict(self) -> dict[str, Any]:
        """The seeds' mapping form (bytes content is decoded as UTF-8 with replacement)."""
        out: dict[str, Any] = {
            "kind": self.kind.value,
            "media_type": self.media_type,
            "metadata": dict(self.metadata),
        }
        if self.kind is TaskOutcomeKind.CANDIDATE:
            content = self.content
            out["content"] = (
                content.decode("utf-8", "replace") if isinstance(content, bytes) else content
            )
        elif self.kind is TaskOutcomeKind.DECOMPOSITION and self.decomposition is not None:
            out["decomposition"] = self.decomposition.to_dict()
        else:
            out["blocker"] = self.blocker
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TaskOutcome:
        """Build an outcome from the seeds' mapping form; anything else is a protocol error."""
        if not isinstance(data, Mapping):
            raise DAGWorkerProtocolError("LA-DAG-WORKER-PROTOCOL", "an outcome mapping is required")
        kind = data.get("kind")
        meta = data.get("metadata") or {}
        if kind == "candidate" and isinstance(data.get("content"), str | bytes):
            return cls.candidate(
                data["content"],
                media_type=str(data.get("media_type") or "text/plain"),
                metadata=meta,
            )
        if kind in ("decomposition", "decompose") and data.get("decomposition") is not None:
            return cls.decompose(
                DecompositionProposal.from_dict(data["decomposition"]), metadata=meta
            )
        if kind == "blocked":
            return cls.blocked(
                str(data.get("blocker") or data.get("reason") or "blocked"), metadata=meta
            )
        raise DAGWorkerProtocolError(
            "LA-DAG-WORKER-PROTOCOL",
            f"not a TaskOutcome mapping: kind={kind!r} (expected candidate, decomposition or blocked)",
        )


_FAILURE_POLICIES = ("continue_independent", "fail_fast")
_POSITIVE_INTS = (
    "max_tasks",
    "max_edges",
    "max_attempts_per_task",
    "max_concurrency",
    "verification_concurrency",
    "max_pending_verifications",
    "max_artifact_bytes",
)


def _check(name: str, value: Any, floor: float, *, integer: bool = False) -> None:
    kinds = int if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds) or value < floor:
        kind = "an int" if integer else "a number"
        raise DAGError("LA-CONFIG", f"DAGConfig.{name} must be {kind} >= {floor}, got {value!r}")


@dataclass(frozen=True)
class DAGConfig:
    """Every limit of a run. Each one is enforced; exceeding it gives ``LA-DAG-BUDGET-EXHAUSTED``."""

    max_tasks: int = 1000
    max_edges: int = 3000
    max_decomposition_depth: int = 8
    max_attempts_per_task: int = 3
    max_decompositions_per_task: int = 1
    max_concurrency: int = 4
    verification_concurrency: int = 4
    max_pending_verifications: int = 16
    max_artifact_bytes: int = 10 * 1024 * 1024
    scheduler_lease_seconds: float = 60.0
    task_lease_seconds: float = 60.0
    failure_policy: str = "continue_independent"
    heartbeat_interval: float | None = None
    retry_backoff_seconds: float = 0.5
    retry_backoff_max_seconds: float = 30.0
    poll_interval: float = 0.05
    poll_interval_max: float = 1.0
    task_timeout_seconds: float | None = None

    def __post_init__(self) -> None:
        if self.failure_policy not in _FAILURE_POLICIES:
            raise DAGError(
                "LA-CONFIG", f"DAGConfig.failure_policy must be one of {_FAILURE_POLICIES}"
            )
        for name in _POSITIVE_INTS:
            _check(name, getattr(self, name), 1, integer=True)
        for name in ("max_decomposition_depth", "max_decompositions_per_task"):
            _check(name, getattr(self, name), 0, integer=True)
        for name in (
            "scheduler_lease_seconds",
            "task_lease_seconds",
            "poll_interval",
            "poll_interval_max",
        ):
            _check(name, getattr(self, name), 1e-3)
        for name in ("retry_backoff_seconds", "retry_backoff_max_seconds"):
            _check(name, getattr(self, name), 0)
        if self.task_timeout_seconds is not None:
            _check("task_timeout_seconds", self.task_timeout_seconds, 1e-3)
        if self.heartbeat_interval is not None:
            _check("heartbeat_interval", self.heartbeat_interval, 1e-3)
            if self.heartbeat_interval >= self.task_lease_seconds:
                raise DAGError(
                    "LA-CONFIG",
                    "DAGConfig.heartbeat_interval must be shorter than task_lease_seconds",
                )

    @property
    def heartbeat_seconds(self) -> float:
        """How often a running attempt renews its lease (a third of the lease unless set)."""
        return self.heartbeat_interval or self.task_lease_seconds / 3.0

    def backoff(self, failed_attempts: int) -> float:
        """Delay before the next attempt: exponential in the failures so far, capped."""
        if failed_attempts <= 0:
            return 0.0
        return min(
            self.retry_backoff_max_seconds, self.retry_backoff_seconds * 2 ** (failed_attempts - 1)
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe form."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DAGConfig:
        """Build a config from :meth:`to_dict` output, ignoring unknown keys."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in dict(data).items() if k in names})

    def digest(self) -> str:
        """A digest of the limits that shape a run's graph."""
        return canonical_digest(
            {
                k: getattr(self, k)
                for k in ("max_tasks", "max_edges", "max_decomposition_depth", "failure_policy")
            }
        )


def coerce_specs(tasks: Iterable[Any]) -> list[TaskSpec]:
    """TaskSpecs from specs or their mapping form."""
    out = []
    for task in tasks:
        out.append(task if isinstance(task, TaskSpec) else TaskSpec.from_dict(task))
    return out
