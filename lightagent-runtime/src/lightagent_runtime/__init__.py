"""The long-task runtime for lightagent: jobs, subagents, inbox, goals, budgets, progress detection, compaction and AgentRuntime."""

from __future__ import annotations

__all__: list[str] = []
