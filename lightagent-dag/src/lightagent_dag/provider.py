"""LightDAGProvider: a run's reads and controls as capabilities, behind the CapabilityGate."""

from __future__ import annotations

from typing import Any

from lightagent_control.capabilities import BaseCapabilityProvider, CapabilitySpec

__all__ = ["LightDAGProvider"]


def _specs() -> list[CapabilitySpec]:
    read: dict[str, Any] = {"risk": 0, "read": True}
    return [
        CapabilitySpec("workflow.dag.get_run", "Read a LightDAG run", **read),
        CapabilitySpec("workflow.dag.list_tasks", "List the tasks of a LightDAG run", **read),
        CapabilitySpec("workflow.dag.events", "Read a LightDAG run's events", **read),
        CapabilitySpec(
            "workflow.dag.pause",
            "Pause a LightDAG run",
            risk=2,
            write=True,
            persistent=True,
            requires_approval=True,
        ),
        CapabilitySpec(
            "workflow.dag.cancel",
            "Cancel a LightDAG run",
            risk=3,
            write=True,
            persistent=True,
            requires_approval=True,
        ),
    ]


class LightDAGProvider(BaseCapabilityProvider):
    """Exposes a :class:`LightDAG` as capabilities: reads are L0; pause (L2) and cancel (L3) need approval."""

    name = "lightdag"
    version = "1"

    def __init__(self, dag: Any, *, name: str | None = None) -> None:
        self.dag = dag
        super().__init__(
            _specs(),
            name=name,
            handlers={
                "workflow.dag.get_run": self._get_run,
                "workflow.dag.list_tasks": self._list_tasks,
                "workflow.dag.events": self._events,
                "workflow.dag.pause": self._pause,
                "workflow.dag.cancel": self._cancel,
            },
        )

    def _get_run(self, run_id: str) -> dict[str, Any] | None:
        run = self.dag.get_run(run_id)
        return None if run is None else run.to_dict()

    def _list_tasks(self, run_id: str) -> list[dict[str, Any]]:
        return [t.to_dict() for t in self.dag.list_tasks(run_id)]

    def _events(self, run_id: str, after: int = 0, limit: int = 100) -> list[dict[str, Any]]:
        return [e.to_dict() for e in self.dag.events(run_id, after=after, limit=limit)]

    def _pause(self, run_id: str, reason: str | None = None) -> dict[str, Any]:
        return self.dag.pause(run_id, reason).to_dict()

    def _cancel(self, run_id: str, reason: str | None = None) -> dict[str, Any]:
        return self.dag.cancel(run_id, reason).to_dict()
