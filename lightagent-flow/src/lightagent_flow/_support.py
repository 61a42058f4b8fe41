"""Helpers of :class:`~lightagent_flow.flow.LightFlow`: the sync driver and run records."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from lightagent.bridge import run_private
from lightagent.errors import ValidationError

from lightagent_flow.results import LightFlowResult, LightFlowStepResult, LightFlowSteps

__all__ = [
    "check_format",
    "format_result",
    "header_from",
    "result_from_record",
    "run_sync",
    "step_results",
]

T = TypeVar("T")
FORMATS = ("object", "str", "dict")


def run_sync(factory: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine to completion from sync code, even when a loop runs in this thread."""
    return run_private(factory())


def format_result(result: LightFlowResult, result_format: str) -> Any:
    """The result in the requested ``result_format``."""
    if result_format == "dict":
        return result.to_dict()
    if result_format == "str":
        if result.success:
            return "" if result.content is None else str(result.content)
        return result.error or result.status
    return result


def check_format(result_format: str) -> None:
    """``LA-CONFIG`` unless ``result_format`` is object, str or dict."""
    if result_format not in FORMATS:
        raise ValidationError(
            "LA-CONFIG",
            f"result_format must be one of {', '.join(FORMATS)}; got {result_format!r}",
        )


def step_results(
    record: dict[str, Any], shape: list[dict[str, Any]]
) -> dict[str, LightFlowStepResult]:
    """The stored step results, after checking the record was made by a flow of ``shape``."""
    stored = record.get("flow")
    if stored is not None and stored != shape:
        raise ValidationError(
            "LA-FLOW-MISMATCH",
            f"run {record.get('run_id')!r} was made by a flow with other steps",
            details={"stored": stored, "current": shape},
        )
    return {s["name"]: LightFlowStepResult.from_dict(s) for s in record.get("steps") or ()}


def header_from(record: dict[str, Any]) -> dict[str, Any]:
    """The header part of a stored record."""
    return {k: v for k, v in record.items() if k not in ("steps", "approvals", "cancel_requested")}


def result_from_record(record: dict[str, Any]) -> LightFlowResult:
    """A stored record as a :class:`LightFlowResult`."""
    steps = LightFlowSteps(LightFlowStepResult.from_dict(s) for s in record.get("steps") or ())
    return LightFlowResult(
        content=record.get("content"),
        steps=steps,
        trace_id=record.get("trace_id"),
        error=record.get("error"),
        run_id=record.get("run_id"),
        status=record.get("status") or "pending",
        error_code=record.get("error_code"),
    )
