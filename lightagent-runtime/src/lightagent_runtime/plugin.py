"""The lightagent plugin of lightagent-runtime."""

from __future__ import annotations

from typing import Any

from lightagent.hookspecs import hookimpl


@hookimpl
def register_agent_extensions(register: Any) -> None:
    """Register the agent extensions of the long-task runtime: ``budgets`` (limits, progress
    detection, the context budget) and ``runtime`` (``agent.runtime``, jobs, the inbox, goals)."""
    register("budgets", "lightagent_runtime.budgets_extension:BudgetsExtension")
    register("runtime", "lightagent_runtime.extension:RuntimeExtension")
