"""LightSwarm: agents handing a conversation to each other through ``transfer_to_<agent>`` tool calls."""

from __future__ import annotations

from lightagent._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "HandoffToolset": "lightagent.swarm.handoffs",
    "LightSwarm": "lightagent.swarm.core",
    "Route": "lightagent.swarm.handoffs",
    "transfer_tool_name": "lightagent.swarm.handoffs",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
