"""What a LightFlow run returns: one :class:`LightFlowStepResult` per step and a :class:`LightFlowResult`."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field, fields
from typing import Any, SupportsIndex, overload

__all__ = [
    "CANCELLED",
    "FAILED",
    "PENDING",
    "RUNNING",
    "RUN_STATES",
    "SKIPPED",
    "STEP_STATES",
    "SUCCESS",
    "WAITING_APPROVAL",
    "LightFlowResult",
    "LightFlowStepResult",
    "LightFlowSteps",
]

PENDING = "pending"
RUNNING = "running"
SUCCESS = "success"
FAILED = "failed"
SKIPPED = "skipped"
WAITING_APPROVAL = "waiting_approval"
CANCELLED = "cancelled"

#: The seeds' step states, in lifecycle order.
STEP_STATES: tuple[str, ...] = (PENDING, RUNNING, SUCCESS, FAILED, SKIPPED, WAITING_APPROVAL)
#: A run has the step states plus ``cancelled`` (its steps that never ran are ``skipped``).
RUN_STATES: tuple[str, ...] = (*STEP_STATES, CANCELLED)


@dataclass
class LightFlowStepResult:
    """The outcome of one step in one run (the seeds' fields, plus ``error_code`` and ``query``)."""

    name: str
    content: Any = None
    error: str | None = None
    attempts: int = 0
    trace: list[dict[str, Any]] | None = None
    status: str = PENDING
    started_at: float | None = None
    ended_at: float | None = None
    duration_ms: float | None = None
    input_summary: str | None = None
    output_summary: str | None = None
    retry_count: int = 0
    used_fallback: bool = False
    timed_out: bool = False
    timeout_mode: str | None = None
    idempotency_key: str | None = None
    approval_request_id: str | None = None
    approval_decision: dict[str, Any] | None = None
    error_code: str | None = None
    query: str | None = None

    @property
    def success(self) -> bool:
        """Whether the step finished with status ``success``."""
        return self.status == SUCCESS

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict (the form stored in checkpoints)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LightFlowStepResult:
        """Rebuild a step result from :meth:`to_dict` output, ignoring unknown keys."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


class LightFlowSteps(list[LightFlowStepResult]):
    """A flow run's step results: a list in step order, as in the seeds (and in
    ``to_dict()`` and stored records), that also answers by step name.

    ``steps[0]`` and iteration follow the step order; ``steps["fetch"]``,
    ``steps.get("fetch")``, ``"fetch" in steps`` and ``keys()/values()/items()`` look up
    by name, so code written against the earlier dict keeps working.
    """

    def __init__(self, items: Iterable[LightFlowStepResult] = ()) -> None:
        super().__init__(items)

    @overload
    def __getitem__(self, key: SupportsIndex) -> LightFlowStepResult: ...
    @overload
    def __getitem__(self, key: slice) -> list[LightFlowStepResult]: ...
    @overload
    def __getitem__(self, key: str) -> LightFlowStepResult: ...
    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            for step in self:
                if step.name == key:
                    return step
            raise KeyError(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            return any(step.name == key for step in self)
        return super().__contains__(key)

    def get(self, name: str, default: Any = None) -> Any:
        """The result of step ``name``, or ``default``."""
        return next((step for step in self if step.name == name), default)

    def keys(self) -> list[str]:
        """Step names, in step order."""
        return [step.name for step in self]

    def values(self) -> Iterator[LightFlowStepResult]:
        """The step results, in step order."""
        return iter(self)

    def items(self) -> list[tuple[str, LightFlowStepResult]]:
        """``(name, result)`` pairs, in step order."""
        return [(step.name, step) for step in self]


@dataclass
class LightFlowResult:
    """The outcome of a flow run: the final ``content``, every step, the run's status and trace."""

    content: Any = None
    steps: LightFlowSteps = field(default_factory=LightFlowSteps)
    trace_id: str | None = None
    trace: list[dict[str, Any]] | None = None
    error: str | None = None
    run_id: str | None = None
    status: str = PENDING
    idempotent_replay: bool = False
    error_code: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.steps, LightFlowSteps):
            given: Any = self.steps
            self.steps = LightFlowSteps(given.values() if isinstance(given, dict) else given)

    @property
    def success(self) -> bool:
        """Whether every step that had to run succeeded."""
        return self.status == SUCCESS

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict; ``steps`` is a list in declaration order."""
        data = asdict(self)
        data["steps"] = [step.to_dict() for step in self.steps]
        data["success"] = self.success
        return data
