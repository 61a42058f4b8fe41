"""The loop's budget decisions (written once, for both drivers): restore, check, settle.

Each function is called by :func:`lightagent.run.machine.run_machine` at one step
boundary; they only yield effects the drivers already perform (``LoadHistory``) and emit
events through the run's context, so no driver knows budgets exist.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from typing import Any

from lightagent.run.budgets import BudgetExceeded, RunBudget
from lightagent.run.effects import LoadHistory
from lightagent.run.spec import RunSpec

__all__ = [
    "budget_check_model",
    "budget_check_tools",
    "budget_restore",
    "budget_settle",
    "budget_settle_time",
    "usage_clamped",
]


def budget_restore(spec: RunSpec, history: Any = None) -> Generator[Any, Any, None]:
    """Start a session budget from the session log (the history's ``budget_spent``)."""
    budget: RunBudget | None = spec.budget
    if budget is None or not budget.needs_session:
        return
    ctx = spec.ctx
    if spec.binding is None or not ctx.session_id:
        budget.restore({})  # no log: the run is its own session
        return
    spent = getattr(history, "budget_spent", None)
    if spent is None:
        loaded = yield LoadHistory(ctx.session_id)
        spent = getattr(loaded, "budget_spent", None) or {}
    budget.restore(spent)
    if ctx.active:
        ctx.emit("budget_restored", {"session_used": {k: v for k, v in spent.items() if v}})


def _refused(spec: RunSpec, exc: BudgetExceeded, step: str) -> BudgetExceeded:
    ctx = spec.ctx
    if ctx.active:
        ctx.emit(
            "budget_exhausted",
            {
                "step": step,
                "dimension": exc.dimension,
                "limit": exc.limit,
                "used": exc.used,
                "requested": exc.requested,
                "scope": exc.scope,
            },
        )
    return exc


def budget_check_model(spec: RunSpec, request: Any, scan: Any = None) -> dict[str, float] | None:
    """The request's estimate if every budget allows it; else ``BudgetExceeded``.

    Nothing is committed by a refusal. ``scan`` is the run's inbox read of its session
    log: what other runs of the session consumed meanwhile counts against the session's
    budgets before this request goes out.
    """
    budget: RunBudget | None = spec.budget
    if budget is None:
        return None
    if scan is not None and scan.foreign_spent:
        budget.absorb(scan.take_foreign_spent())
    try:
        return budget.check_model(request)
    except BudgetExceeded as exc:
        raise _refused(spec, exc, "model_request") from None


def budget_check_tools(spec: RunSpec, count: int) -> None:
    """Refuse a round of ``count`` tool calls (before any runs) that a budget does not allow."""
    budget: RunBudget | None = spec.budget
    if budget is None:
        return
    try:
        budget.check_tools(count)
    except BudgetExceeded as exc:
        raise _refused(spec, exc, "tool_execution") from None


def budget_settle(
    spec: RunSpec,
    step: str,
    *,
    estimate: Mapping[str, float] | None = None,
    usage: Any = None,
    tool_calls: int = 0,
) -> None:
    """Commit a step that happened and record it as a ``budget_consumed`` event."""
    budget: RunBudget | None = spec.budget
    if budget is None:
        return
    if tool_calls:
        delta = budget.settle_tools(tool_calls)
    else:  # a model call: the run's request, or a summary for context compaction
        delta = budget.settle_model(estimate or {}, usage)
    _consumed(spec, budget, step, delta)


def budget_settle_time(spec: RunSpec) -> None:
    """Commit the run's wall-clock seconds at its end (never raises: the run is over)."""
    budget: RunBudget | None = spec.budget
    if budget is None:
        return
    delta = budget.settle_time()
    try:
        _consumed(spec, budget, "run_end", delta)
    except Exception:  # the end of a run already failing to record cannot fail it further
        pass


def _consumed(spec: RunSpec, budget: RunBudget, step: str, delta: dict[str, float]) -> None:
    ctx = spec.ctx
    if ctx.active and delta:
        ctx.emit(
            "budget_consumed",
            {"step": step, "delta": delta, "remaining": budget.remaining()},
        )


def usage_clamped(spec: RunSpec, usage: Any, **where: Any) -> None:
    """Record the counts a provider reported below zero (read as 0: never a refill)."""
    ctx = spec.ctx
    if usage is not None and usage.clamped and ctx.active:
        ctx.emit("usage_clamped", {"reported": usage.clamped, **where})
