"""The long-task runtime for lightagent: jobs, subagents, inbox, goals, budgets, progress detection, compaction and AgentRuntime."""

from __future__ import annotations

from lightagent_runtime.agent_runtime import AgentRuntime
from lightagent_runtime.budgets import BudgetExceeded, BudgetLimits
from lightagent_runtime.compaction import CompactionResult, ContextBudget, ContextCompactor
from lightagent_runtime.jobs import (
    JobContext,
    JobError,
    JobExecutor,
    JobFencedError,
    JobManager,
    JobRecord,
    JobStatus,
)
from lightagent_runtime.progress import ProgressPolicy
from lightagent_runtime.subagents import (
    SubagentManager,
    SubagentRecord,
    SubagentResult,
    SubagentToolset,
)
from lightagent_runtime.views import Goal, InboxMessage

__all__: list[str] = [
    "AgentRuntime",
    "BudgetExceeded",
    "BudgetLimits",
    "CompactionResult",
    "ContextBudget",
    "ContextCompactor",
    "Goal",
    "InboxMessage",
    "JobContext",
    "JobError",
    "JobExecutor",
    "JobFencedError",
    "JobManager",
    "JobRecord",
    "JobStatus",
    "ProgressPolicy",
    "SubagentManager",
    "SubagentRecord",
    "SubagentResult",
    "SubagentToolset",
]
