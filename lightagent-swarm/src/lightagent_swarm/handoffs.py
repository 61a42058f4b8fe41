"""Transfer tools (one ``transfer_to_<agent>`` per other agent), a handoff and the route of one hop.

:class:`HandoffToolset` offers a swarm agent's transfer tools through the toolset seam; the
hop's run step recognises them by the :data:`HANDOFF_TARGET` metadata and never dispatches
them (see :mod:`lightagent_swarm.handoff_step`). :class:`Handoff` is what a run that handed
on ended with. :class:`Route` is what one hop of a chain knows: the agents visited so far,
the hop count and the swarm's limits.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from lightagent.errors import BudgetError, LightAgentError, ValidationError
from lightagent.toolsets.protocol import BaseToolset, ToolCallContext, ToolDefinition

__all__ = ["HANDOFF_TARGET", "Handoff", "HandoffToolset", "Route", "transfer_tool_name"]

#: The tool-definition metadata key that names the agent a transfer tool hands off to.
HANDOFF_TARGET = "handoff_target"


@dataclass
class Handoff:
    """A handoff a run ended with: who hands off to whom, with which query and why."""

    source_agent: str
    target_agent: str
    query: str | None
    reason: str | None = None
    call_id: str | None = None
    tool: str | None = None
    #: The conversation before the handed-off query (no system messages): the target's history.
    history: list[dict[str, Any]] = field(default_factory=list, repr=False)
    #: The source run's trace id (the target's ``parent_trace_id``).
    trace_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe form (the conversation left out)."""
        return {
            "source_agent": self.source_agent,
            "target_agent": self.target_agent,
            "query": self.query,
            "reason": self.reason,
            "call_id": self.call_id,
            "tool": self.tool,
            "trace_id": self.trace_id,
        }


_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
_PARAMETERS = {
    "type": "object",
    "properties": {
        "reason": {
            "type": "string",
            "description": "Why this agent should take over (one sentence).",
        }
    },
    "required": ["reason"],
    "additionalProperties": False,
}


def transfer_tool_name(agent_name: str) -> str:
    """``transfer_to_<agent>``, safe for model APIs (``[A-Za-z0-9_-]``, at most 64 characters)."""
    name = "transfer_to_" + (_UNSAFE.sub("_", agent_name).strip("_") or "agent")
    return name[:64]


def _describe(agent: Any) -> str:
    role = getattr(agent, "role", None)
    text = role or getattr(agent, "instructions", None) or ""
    if text == "You are a helpful agent.":
        text = ""
    text = " ".join(str(text).split())
    if len(text) > 300:
        text = text[:297] + "..."
    name = getattr(agent, "name", "?")
    return f"Hand the conversation over to the agent {name!r}" + (f": {text}" if text else ".")


class HandoffToolset(BaseToolset):
    """The transfer tools of one swarm agent: one per other registered agent.

    The tool list follows the swarm's registrations (it changes when an agent joins).
    ``call_tool`` is reached only outside a swarm-driven run — inside one, the hop's run step
    performs the handoff itself — and then says that nothing was transferred.
    """

    namespace = "handoff"
    loop_bound = False

    def __init__(self, swarm: Any, agent_name: str) -> None:
        super().__init__()
        self.swarm = swarm
        self.agent_name = agent_name

    def list_tools(self) -> list[ToolDefinition]:
        """``transfer_to_<agent>`` for every other agent of the swarm."""
        out = []
        for name, agent in self.swarm.agents.items():
            if name == self.agent_name:
                continue
            out.append(
                ToolDefinition(
                    name=transfer_tool_name(name),
                    description=_describe(agent),
                    parameters=_PARAMETERS,
                    title=f"Transfer to {name}",
                    metadata={HANDOFF_TARGET: name, "capability": "swarm.handoff"},
                )
            )
        return out

    def call_tool(self, name: str, arguments: dict[str, Any], context: ToolCallContext) -> str:
        """Outside a swarm run there is nobody to hand off to."""
        return (
            f"{name} transfers a conversation only inside LightSwarm.run; "
            "nothing was transferred. Answer the user yourself."
        )


class Route:
    """One hop of a handoff chain: where it came from and what the next hop may do.

    ``chain`` is the agents that have handled the conversation so far (this hop's agent
    last); ``arrived`` the handoff that started this hop (None for the entry agent);
    ``taken`` the handoff this hop ended with, set by the hop's run step.
    """

    __slots__ = ("agents", "allow_cycles", "arrived", "chain", "max_handoffs", "taken")

    def __init__(
        self,
        *,
        agents: Iterable[str],
        chain: Sequence[str],
        max_handoffs: int,
        allow_cycles: bool,
        arrived: Handoff | None = None,
    ) -> None:
        self.agents = frozenset(agents)
        self.chain = tuple(chain)
        self.max_handoffs = max_handoffs
        self.allow_cycles = allow_cycles
        self.arrived = arrived
        self.taken: Handoff | None = None

    @property
    def hops(self) -> int:
        """Handoffs made before this hop."""
        return len(self.chain) - 1

    def check(self, target: str) -> LightAgentError | None:
        """Why a handoff from this hop to ``target`` is refused, or None when it may go."""
        chain = " -> ".join(self.chain)
        details = {"target_agent": target, "chain": list(self.chain)}
        if target not in self.agents:
            return ValidationError(
                "LA-HANDOFF",
                f"no agent named {target!r} is registered in this swarm",
                hint="Register the agent with swarm.register_agent(...) first.",
                details={**details, "agents": sorted(self.agents)},
            )
        if target == self.chain[-1]:
            return ValidationError(
                "LA-HANDOFF",
                f"{target} cannot hand the conversation off to itself",
                details=details,
            )
        if self.hops >= self.max_handoffs:
            return BudgetError(
                "LA-HANDOFF-LIMIT",
                f"the chain {chain} reached max_handoffs={self.max_handoffs}; "
                f"the handoff to {target} was refused",
                details={**details, "max_handoffs": self.max_handoffs},
            )
        if not self.allow_cycles and target in self.chain:
            return BudgetError(
                "LA-HANDOFF-CYCLE",
                f"the handoff to {target} would close a cycle ({chain} -> {target})",
                details=details,
            )
        return None

    def next(self, handoff: Handoff) -> Route:
        """The route of the hop ``handoff`` starts."""
        return Route(
            agents=self.agents,
            chain=(*self.chain, handoff.target_agent),
            max_handoffs=self.max_handoffs,
            allow_cycles=self.allow_cycles,
            arrived=handoff,
        )
