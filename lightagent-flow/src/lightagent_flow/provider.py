"""``WorkflowProviderAdapter``: a ``LightFlow`` as a capability provider (the runtime
guide's adapter): start, inspect, resume and rerun its runs through a registry."""

from __future__ import annotations

from typing import Any

from lightagent_control.capabilities import BaseCapabilityProvider, CapabilityRisk, CapabilitySpec

__all__ = ["WorkflowProviderAdapter"]


class WorkflowProviderAdapter(BaseCapabilityProvider):
    """``workflow.start`` (cancellable), ``workflow.status`` (read), ``workflow.resume``
    (resumable) and ``workflow.rerun_step`` (L2) over one flow; the flow's own async
    methods run them, so nothing blocks the registry's loop."""

    name = "lightflow"
    version = "1"

    def __init__(self, flow: Any) -> None:
        self.flow = flow

        async def start(query: str, **options: Any) -> Any:
            return await flow.arun(query, **options)

        def status(run_id: str) -> Any:
            return flow.get_run(run_id)

        async def resume(run_id: str, **options: Any) -> Any:
            return await flow.aresume(run_id, **options)

        async def rerun_step(run_id: str, step: str, **options: Any) -> Any:
            return await flow.arerun_step(run_id, step, **options)

        super().__init__(
            [
                CapabilitySpec("workflow.start", execute=True, cancellable=True),
                CapabilitySpec("workflow.status", read=True),
                CapabilitySpec("workflow.resume", execute=True, resumable=True),
                CapabilitySpec("workflow.rerun_step", execute=True, risk=CapabilityRisk.SENSITIVE),
            ],
            handlers={
                "workflow.start": start,
                "workflow.status": status,
                "workflow.resume": resume,
                "workflow.rerun_step": rerun_step,
            },
        )
