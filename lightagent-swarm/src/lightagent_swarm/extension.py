"""``SwarmExtension``: ``agent.run(query, light_swarm=swarm)`` runs the query through the swarm.

The extension claims the run option ``light_swarm`` and takes such a run over: it is
``swarm.run(agent, query, ...)`` (``arun``, ``astream`` likewise) with the run's other
options. The hops of a swarm's chain are ordinary runs of its agents, each carrying the
swarm's :class:`~lightagent_swarm.handoff_step.HandoffStep`; no agent part is needed.
"""

from __future__ import annotations

from typing import Any

from lightagent.extensions import AgentExtension
from lightagent.run.run_options import RunOptions

__all__ = ["SwarmExtension"]

#: The ways ``LightAgent`` asks for a delegated run.
_MODES = ("run", "arun", "astream")


class SwarmExtension(AgentExtension):
    """The ``light_swarm=`` run option of ``LightAgent.run`` / ``arun`` / ``astream``."""

    name = "swarm"
    run_options = {"light_swarm": None}

    def delegate(self, agent: Any, query: Any, options: RunOptions, mode: str) -> Any:
        """The swarm's ``run`` / ``arun`` (an awaitable) / ``astream`` (an async iterator)
        of ``query`` from ``agent``; ``NotImplemented`` when no swarm was given."""
        from lightagent_swarm.swarm import as_swarm

        claimed = options.extensions or {}
        value = claimed.get("light_swarm")
        if value is None or mode not in _MODES:
            return NotImplemented
        swarm = as_swarm(value)
        keywords = options.to_dict()
        keywords.pop("light_swarm", None)
        if mode == "run":
            return swarm.run(agent, query, **keywords)
        if mode == "arun":
            return swarm.arun(agent, query, **keywords)
        keywords.pop("stream", None)
        return swarm.astream(agent, query, **keywords)
