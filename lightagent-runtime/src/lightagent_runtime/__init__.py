"""The long-task runtime for lightagent: jobs, subagents, inbox, goals, budgets, progress detection, compaction and AgentRuntime."""

from __future__ import annotations

from lightagent_runtime.budgets import BudgetExceeded, BudgetLimits
from lightagent_runtime.compaction import CompactionResult, ContextBudget, ContextCompactor
from lightagent_runtime.progress import ProgressPolicy

__all__: list[str] = [
    "BudgetExceeded",
    "BudgetLimits",
    "CompactionResult",
    "ContextBudget",
    "ContextCompactor",
    "ProgressPolicy",
]
