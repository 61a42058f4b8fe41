"""The loop's budget decisions (written once, for both drivers): restore, check, settle.

Each function is called by the run's :class:`~lightagent_runtime.budgets_extension.BudgetsStep`
at one step boundary of :func:`lightagent.run.machine.run_machine`; they only yield effects
the drivers already perform (``LoadHistory``) and emit events through the run's context, so
no driver knows budgets exist.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from typing import Any

from lightagent.run.effects import LoadHistory
from lightagent.run.spec import RunSpec

from lightagent_runtime.budgets import BudgetExceeded, RunBudget, session_spent

__all__ = [
    "budget_check_model",
    "budget_check_tools",
    "budget_restore",
    "budget_settle",
    "budget_settle_time",
]


def budget_restore(
    spec: RunSpec, budget: RunBudget | None, history: Any = None
) -> Generator[Any, Any, None]:
    """Start a session budget from the session log (the events the history was read from)."""
    if budget is None or not budget.needs_session:
        return
    ctx = spec.ctx
    if spec.binding is None or not ctx.session_id:
        budget.restore({})  # no log: the run is its own session
        return
    events = getattr(history, "events", None)
    if events is None:
        loaded = yield LoadHistory(ctx.session_id)
        events = getattr(loaded, "events", None) or ()
    spent = session_spent(events)
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


def budget_check_model(
    spec: RunSpec, budget: RunBudget | None, request: Any, scan: Any = None
) -> dict[str, float] | None:
    """The request's estimate if every budget allows it; else ``BudgetExceeded``.

    Nothing is committed by a refusal. ``scan`` is the run's inbox read of its session
    log: what other runs of the session consumed meanwhile counts against the session's
    budgets before this request goes out.
    """
    if budget is None:
        return None
    if scan is not None and scan.foreign_spent:
        budget.absorb(scan.take_foreign_spent())
    try:
        return budget.check_model(request)
    except BudgetExceeded as exc:
        raise _refused(spec, exc, "model_request") from None


def budget_check_tools(spec: RunSpec, budget: RunBudget | None, count: int) -> None:
    """Refuse a round of ``count`` tool calls (before any runs) that a budget does not allow."""
    if budget is None:
        return
    try:
        budget.check_tools(count)
    except BudgetExceeded as exc:
        raise _refused(spec, exc, "tool_execution") from None


def budget_settle(
    spec: RunSpec,
    budget: RunBudget | None,
    step: str,
    *,
    estimate: Mapping[str, float] | None = None,
    usage: Any = None,
    tool_calls: int = 0,
) -> None:
    """Commit a step that happened and record it as a ``budget_consumed`` event."""
    if budget is None:
        return
    if tool_calls:
        delta = budget.settle_tools(tool_calls)
    else:  # a model call: the run's request, or a summary for context compaction
        delta = budget.settle_model(estimate or {}, usage)
    _consumed(spec, budget, step, delta)


def budget_settle_time(spec: RunSpec, budget: RunBudget | None) -> None:
    """Commit the run's wall-clock seconds at its end (never raises: the run is over)."""
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
