"""The lightagent plugin of lightagent-runtime."""

from __future__ import annotations

from typing import Any

from lightagent.hookspecs import hookimpl


@hookimpl
def register_agent_extensions(register: Any) -> None:
    """``agent.runtime``, jobs, the inbox and goals (:mod:`lightagent_runtime.extension`)."""
    register("runtime", "lightagent_runtime.extension:RuntimeExtension")
