"""The lightagent plugin of lightagent-swarm: the ``light_swarm=`` run option."""

from __future__ import annotations

from typing import Any

from lightagent.hookspecs import hookimpl


@hookimpl
def register_agent_extensions(register: Any) -> None:
    """Register the swarm's agent extension (it claims ``run(light_swarm=...)``)."""
    register("swarm", "lightagent_swarm.extension:SwarmExtension")
