"""The ``runtime`` agent extension: ``agent.runtime``, background jobs, the inbox and goals.

Registered by :mod:`lightagent_runtime.plugin`. It claims no ``LightAgent`` keyword; it
serves the agent attributes below from the agent's :class:`RuntimePart`, and takes part
in every run that has a session (``sessions = True``): the run's :class:`RuntimeStep`
injects the session's inbox at each step boundary and checks its goals at the end.
"""

from __future__ import annotations

from typing import Any

from lightagent.extensions import AgentExtension, ExtensionPart

from lightagent_runtime.agent_runtime import AgentRuntime
from lightagent_runtime.job_methods import JobMethods
from lightagent_runtime.session_methods import InboxGoalMethods
from lightagent_runtime.steps import RuntimeStep

__all__ = ["RuntimeExtension", "RuntimePart"]


class RuntimePart(JobMethods, InboxGoalMethods, ExtensionPart):
    """The runtime's part of one agent: its jobs, inbox and goal methods, ``runtime``."""

    def __init__(self, agent: Any) -> None:
        #: The ``LightAgent`` this part serves.
        self.agent = agent

    @property
    def runtime(self) -> AgentRuntime:
        """This agent's :class:`AgentRuntime` (one per agent; see ``for_session``)."""
        found = self.__dict__.get("_runtime")
        if found is None:
            found = self.__dict__.setdefault("_runtime", AgentRuntime(self.agent))
        runtime: AgentRuntime = found
        return runtime

    def run_step(self, spec: Any, options: Any) -> RuntimeStep | None:
        """The run's :class:`RuntimeStep` when it has a session (else nothing to do)."""
        if spec.binding is None or not spec.ctx.session_id:
            return None
        step = RuntimeStep(self.goal_checks)
        spec.extensions["runtime"] = step  # its inbox read, for a session budget
        return step


class RuntimeExtension(AgentExtension):
    """``agent.runtime``, ``agent.start_job`` …, ``agent.send_message``, ``agent.create_goal`` …"""

    name = "runtime"
    sessions = True
    attributes = (
        "runtime",
        "job_manager",
        "start_job",
        "run_detachable",
        "arun_detachable",
        "send_message",
        "goal_checks",
        "create_goal",
        "session_goals",
    )

    def configure(self, agent: Any, values: dict[str, Any]) -> RuntimePart:
        return RuntimePart(agent)
