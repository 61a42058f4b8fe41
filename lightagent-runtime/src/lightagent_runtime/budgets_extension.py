"""The ``budgets`` agent extension: run and session budgets, progress detection and the
context budget, taking part in a run as one :class:`~lightagent.extensions.RunStep`.

``LightAgent(budget_limits=, progress_policy=, context_budget=, context_compactor=)`` are
claimed here and checked once, when the agent is built (:func:`runtime_settings`);
``run(budget_limits=, progress_policy=)`` arrive in ``options.extensions``. For each run
that has anything to do, :class:`BudgetsStep` holds the run's ledger and progress state and
is called by the loop at its step boundaries:

* ``start``: a session budget is restored from the session log;
* ``before_request``: the messages are fitted to the context budget (trim, summarize);
* ``request``: the request is checked against the budgets before it goes out;
* ``response``: the model call is settled from the provider's usage;
* ``before_tools`` / ``after_tools``: a tool round is checked, then settled, and the run's
  progress is judged (repeated calls, rounds with nothing new);
* ``end``: the run's wall-clock seconds are settled.

The agent's settings are its attributes ``budget_limits`` (a tuple of ``BudgetLimits``),
``progress_policy``, ``context_budget`` and ``context_compactor``, which
:class:`~lightagent.agent_runtime.AgentRuntime` reads.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from lightagent.extensions import AgentExtension, ExtensionPart, RunStep

from lightagent_runtime.budget_steps import (
    budget_check_model,
    budget_check_tools,
    budget_restore,
    budget_settle,
    budget_settle_time,
)
from lightagent_runtime.budgets import (
    BUDGET_DIMENSIONS,
    BudgetLimits,
    RunBudget,
    as_limits,
    session_spent,
)
from lightagent_runtime.context_steps import check_context_settings, fit_context
from lightagent_runtime.overflow import recover_overflow
from lightagent_runtime.progress import (
    ProgressPolicy,
    ProgressState,
    as_progress_policy,
    progress_after_round,
)

__all__ = ["BudgetsExtension", "BudgetsPart", "BudgetsStep", "runtime_settings"]

Steps = Generator[Any, Any, None]


def runtime_settings(
    budget_limits: Any, progress_policy: Any, context_budget: Any, context_compactor: Any
) -> tuple[tuple[Any, ...], Any, Any, Any]:
    """``(budget limits, progress policy, context budget, context compactor)``, checked.

    A context budget without a compactor gets the default ``ContextCompactor``.
    """
    limits = as_limits(budget_limits)
    policy = as_progress_policy(progress_policy)
    budget, compactor = check_context_settings(context_budget, context_compactor)
    if budget is not None and compactor is None:
        from lightagent_runtime.compaction import ContextCompactor

        compactor = ContextCompactor()
    return limits, policy, budget, compactor


class BudgetsExtension(AgentExtension):
    """Claims the budget, progress and context-budget keywords and run options."""

    name = "budgets"
    keywords = {
        "budget_limits": None,
        "progress_policy": None,
        "context_budget": None,
        "context_compactor": None,
    }
    run_options = {"budget_limits": None, "progress_policy": None}
    attributes = ("budget_limits", "progress_policy", "context_budget", "context_compactor")

    def configure(self, agent: Any, values: dict[str, Any]) -> BudgetsPart:
        """The agent's settings, checked (a bad one fails ``LightAgent(...)``)."""
        return BudgetsPart(**values)


class BudgetsPart(ExtensionPart):
    """One agent's budget limits, progress policy, context budget and compactor.

    ``agent.runtime`` reads a session's ledger through it: :meth:`session_spent` and
    :attr:`dimensions`.
    """

    #: What a budget can cap, in the order they are checked.
    dimensions: tuple[str, ...] = BUDGET_DIMENSIONS
    #: What a session's runs consumed: the sum of its ``budget.consumed`` events.
    session_spent = staticmethod(session_spent)

    def __init__(
        self,
        *,
        budget_limits: Any = None,
        progress_policy: Any = None,
        context_budget: Any = None,
        context_compactor: Any = None,
    ) -> None:
        limits, policy, budget, compactor = runtime_settings(
            budget_limits, progress_policy, context_budget, context_compactor
        )
        #: The agent's ``BudgetLimits`` (run and session ones; empty: no limits).
        self.budget_limits: tuple[BudgetLimits, ...] = limits
        #: The agent's ``ProgressPolicy`` (None: detection is off).
        self.progress_policy: ProgressPolicy | None = policy
        #: The prompt's token budget (a ``ContextBudget``) and its ``ContextCompactor``, or None.
        self.context_budget: Any = budget
        self.context_compactor: Any = compactor

    def run_step(self, spec: Any, options: Any) -> BudgetsStep | None:
        """The run's step: the agent's limits plus the run's, the run's policy over the
        agent's, and the context budget; None when the run has none of them."""
        extra = getattr(options, "extensions", None) or {}
        limits = self.budget_limits
        run_limits = extra.get("budget_limits")
        if run_limits is not None:
            limits = (*limits, *as_limits(run_limits))
        policy = self.progress_policy
        run_policy = extra.get("progress_policy")
        if run_policy is not None:
            policy = as_progress_policy(run_policy)
        # with any setting the step also recovers from a provider's context-overflow error
        if not (limits or policy or self.context_budget or self.context_compactor):
            return None
        return BudgetsStep(
            RunBudget(limits) if limits else None,
            ProgressState(policy) if policy is not None else None,
            self.context_budget,
            self.context_compactor,
        )


class BudgetsStep(RunStep):
    """One run's ledger, progress state and context budget, at the loop's step boundaries."""

    def __init__(
        self,
        budget: RunBudget | None,
        progress: ProgressState | None,
        context_budget: Any,
        context_compactor: Any,
    ) -> None:
        #: This run's ledger over its budget limits, or None.
        self.budget = budget
        #: This run's repeated-call / no-progress state, or None.
        self.progress = progress
        self.context_budget = context_budget
        self.context_compactor = context_compactor
        #: The estimate of the request in flight (settled when its response arrives).
        self.estimate: dict[str, float] | None = None
        #: What the overflow recovery remembers for this run (it retries once).
        self.overflow: dict[str, Any] = {}

    def start(
        self,
        spec: Any,
        st: Any,
        history: Any,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
    ) -> Steps:
        """Restore a session budget from the session log."""
        if self.budget is not None:
            yield from budget_restore(spec, self.budget, history)

    def before_request(
        self, spec: Any, st: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> Steps:
        """Fit the next request's messages to the context budget."""
        if self.context_budget is not None:
            yield from fit_context(
                spec, st, messages, tools, self.context_budget, self.context_compactor, self.budget
            )

    def request(self, spec: Any, st: Any, request: Any) -> None:
        """Refuse a request a budget does not allow (nothing of it is committed)."""
        if self.budget is not None:
            # other runs of the session count too: what the run's inbox read of the log saw
            scan = getattr(spec.extensions.get("runtime"), "scan", None)
            self.estimate = budget_check_model(spec, self.budget, request, scan)

    def response(self, spec: Any, st: Any, request: Any, response: Any) -> None:
        """Settle the model call from the provider's usage."""
        if self.budget is not None:
            budget_settle(
                spec, self.budget, "model_response", estimate=self.estimate, usage=response.usage
            )

    def request_failed(
        self, spec: Any, st: Any, error: Any, messages: list[dict[str, Any]]
    ) -> Generator[Any, Any, bool]:
        """After a provider's context-overflow error: compact once and have it asked again."""
        settings = (self.context_budget, self.context_compactor, self.budget)
        return (yield from recover_overflow(spec, st, error, messages, self.overflow, settings))

    def before_tools(self, spec: Any, st: Any, calls: list[Any]) -> None:
        """Refuse a tool round a budget does not allow, before any call of it runs."""
        if self.budget is not None:
            budget_check_tools(spec, self.budget, len(calls))

    def after_tools(
        self, spec: Any, st: Any, calls: list[Any], messages: list[dict[str, Any]]
    ) -> None:
        """Settle the tool round, then judge the run's progress."""
        if self.budget is not None:
            budget_settle(spec, self.budget, "tool_execution", tool_calls=len(calls))
        if self.progress is not None:
            progress_after_round(spec, self.progress, calls, messages)

    def end(self, spec: Any, st: Any, end: dict[str, Any]) -> None:
        """Settle the run's wall-clock seconds (never raises: the run is over)."""
        if self.budget is not None:
            budget_settle_time(spec, self.budget)
