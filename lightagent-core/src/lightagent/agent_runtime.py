"""The agent's runtime settings (budgets, progress detection, context budget), checked once.

Kept out of ``agent.py`` so the loop's runtime features grow here; the loop itself
consults them through :class:`~lightagent.run.spec.RunSpec` (``lightagent.run``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["runtime_settings"]


def runtime_settings(
    budget_limits: Any, progress_policy: Any, context_budget: Any, context_compactor: Any
) -> tuple[tuple[Any, ...], Any, Any, Any]:
    """``(budget limits, progress policy, context budget, context compactor)``, checked.

    A context budget without a compactor gets the default ``ContextCompactor``.
    """
    from lightagent.run.budgets import as_limits
    from lightagent.run.context_steps import check_context_settings
    from lightagent.run.progress import as_progress_policy

    limits = as_limits(budget_limits)
    policy = as_progress_policy(progress_policy)
    budget, compactor = check_context_settings(context_budget, context_compactor)
    if budget is not None and compactor is None:
        from lightagent.events.compaction import ContextCompactor

        compactor = ContextCompactor()
    return limits, policy, budget, compactor
