"""LightDAG's typed errors: a ``DAGError`` family with the stable ``LA-DAG-…`` codes."""

from __future__ import annotations

from typing import Any

from lightagent.errors import LightAgentError

__all__ = [
    "DAGError",
    "DAGFencedError",
    "DAGLimitError",
    "DAGWorkerProtocolError",
]


class DAGError(LightAgentError):
    """Any LightDAG failure; ``code`` is one of the ``LA-DAG-…`` codes of ``ERROR_TAXONOMY``."""

    default_code = "LA-DAG"
    family = "dag"


class DAGFencedError(DAGError):
    """An attempt's lease was taken over: its write was rejected and nothing of it landed."""

    default_code = "LA-DAG-FENCED"

    def __init__(
        self,
        message: str | None = None,
        *,
        run_id: str = "",
        task_id: str = "",
        fence: int = 0,
        operation: str = "",
    ) -> None:
        super().__init__(
            "LA-DAG-FENCED",
            message
            or f"attempt with fence {fence} of task {task_id!r} was fenced out ({operation})",
            details={"run_id": run_id, "task_id": task_id, "fence": fence, "operation": operation},
        )


class DAGLimitError(DAGError):
    """A ``DAGConfig`` limit was reached; ``details["limit"]`` names it."""

    default_code = "LA-DAG-BUDGET-EXHAUSTED"

    def __init__(self, limit: str, value: Any, maximum: Any, message: str | None = None) -> None:
        super().__init__(
            "LA-DAG-BUDGET-EXHAUSTED",
            message or f"DAGConfig.{limit} exceeded: {value} > {maximum}",
            details={"limit": limit, "value": value, "maximum": maximum},
        )


class DAGWorkerProtocolError(DAGError):
    """A worker returned something that is not a ``TaskOutcome`` (or its mapping/JSON form)."""

    default_code = "LA-DAG-WORKER-PROTOCOL"
