"""LightSwarm for lightagent: agents that hand a run on to each other through checked transfer tools.

:class:`LightSwarm` drives a chain of runs: each registered agent gets a
``transfer_to_<agent>`` tool for every other agent (:class:`HandoffToolset`), a call of one
ends the run with a checked :class:`Handoff` (:class:`HandoffStep`, the hop's run step) and
the swarm starts the target. ``agent.run(query, light_swarm=swarm)`` does the same
(:class:`SwarmExtension`).
"""

from __future__ import annotations

from lightagent_swarm.extension import SwarmExtension
from lightagent_swarm.handoff_step import HandoffStep
from lightagent_swarm.handoffs import (
    HANDOFF_TARGET,
    Handoff,
    HandoffToolset,
    Route,
    transfer_tool_name,
)
from lightagent_swarm.swarm import LightSwarm

__version__ = "0.1.0"
__all__ = [
    "HANDOFF_TARGET",
    "Handoff",
    "HandoffStep",
    "HandoffToolset",
    "LightSwarm",
    "Route",
    "SwarmExtension",
    "__version__",
    "transfer_tool_name",
]
