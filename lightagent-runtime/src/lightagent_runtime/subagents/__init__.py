"""Subagents: a bounded tree of agents with narrowed permissions, run by a parent.

:class:`SubagentManager` registers them (depth and count limits, ``SecurityContext.child``
permissions), runs them (a concurrency limit that queues), records each step as a
``subagent.*`` event linked to the parent's run and trace, and restores from the log.
:class:`SubagentToolset` lets a model delegate to them.
"""

from __future__ import annotations

from lightagent_runtime.subagents.manager import SubagentManager
from lightagent_runtime.subagents.records import SUBAGENT_EVENTS, SubagentRecord, SubagentResult
from lightagent_runtime.subagents.toolset import SubagentToolset

__all__ = [
    "SUBAGENT_EVENTS",
    "SubagentManager",
    "SubagentRecord",
    "SubagentResult",
    "SubagentToolset",
]
