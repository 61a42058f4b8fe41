"""``DBOSFlowExecutor``: LightFlow runs as DBOS workflows, each step a DBOS step.

It plugs into LightFlow's executor seam (``LightFlow(executor=...)``), so this module
needs nothing from lightagent-flow: the flow hands it plain-data plans and step bodies.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from dbos import DBOS, SetWorkflowID
from lightagent.errors import ConfigurationError

from lightagent_dbos.agent import DBOSAgent

__all__ = ["DBOSFlowExecutor"]

_names: set[str] = set()
_names_lock = threading.Lock()


class DBOSFlowExecutor:
    """Runs a LightFlow's executions as the DBOS workflow ``lightflow.<name>``.

    Each step is one DBOS step (``lightflow.step.<step>``), its result checkpointed; a
    recovering process returns finished steps from their checkpoint and runs the rest.
    Build it, and the flow that takes it, before ``DBOS.launch()`` (recovery finds the
    workflow by its name), once per name in a process. Steps run one at a time, in a
    fixed order, so that a replay meets them in the order they were recorded.
    """

    #: read by LightFlow: one step at a time keeps DBOS's step order deterministic
    max_concurrency = 1

    def __init__(self, *, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise ConfigurationError(
                "LA-CONFIG", "DBOSFlowExecutor needs a name= (a non-empty str)"
            )
        with _names_lock:
            if name in _names:
                raise ConfigurationError(
                    "LA-CONFIG",
                    f"a DBOSFlowExecutor named {name!r} exists in this process",
                    hint="Give each flow's executor its own name.",
                )
            _names.add(name)
        self.name = name
        self.workflow_name = f"lightflow.{name}"
        self._flow: Any = None
        # bodies of executions started in this process, by workflow id; a recovered
        # execution has none and is performed from its plan
        self._bodies: dict[str, Callable[[], Awaitable[Any]]] = {}
        self._results: dict[str, Any] = {}

        async def execution(plan: dict[str, Any]) -> dict[str, Any]:
            wid = DBOS.workflow_id or ""
            body = self._bodies.pop(wid, None)
            if body is None:
                if self._flow is None:
                    raise RuntimeError(f"{self.workflow_name}: no flow took this executor")
                result = await self._flow.execute_plan(plan)
            else:
                result = await body()
                self._results[wid] = result  # the caller here takes the live result
            data: dict[str, Any] = result.to_dict()
            return data

        self._workflow = DBOS.workflow(name=self.workflow_name)(execution)

    def bind(self, flow: Any) -> None:
        """Remember the flow (called by ``LightFlow(executor=...)``); the flow bound last
        performs recovered executions, so bind a flow of the same steps only."""
        self._flow = flow

    def workflow_id(self, plan: dict[str, Any]) -> str:
        """The DBOS workflow id of an execution: a first run's is its run id's; a resume
        or rerun is new work and gets an id of its own."""
        run_id = plan["header"]["run_id"]
        base = f"{self.workflow_name}:{run_id}"
        return base if plan["kind"] == "run" else f"{base}:{plan['kind']}-{uuid.uuid4().hex}"

    async def run_flow(
        self, flow: Any, plan: dict[str, Any], body: Callable[[], Awaitable[Any]]
    ) -> Any:
        """Start the execution as a workflow and wait for it; the live result is returned
        when this process performed it (else one rebuilt from the checkpointed dict)."""
        wid = self.workflow_id(plan)
        self._bodies[wid] = body
        try:
            with SetWorkflowID(wid):
                handle = await DBOS.start_workflow_async(self._workflow, plan)
            data = await handle.get_result()
        finally:
            self._bodies.pop(wid, None)
        live = self._results.pop(wid, None)
        return live if live is not None else data

    async def run_step(
        self, step: Any, key: str, body: Callable[[], Awaitable[dict[str, Any]]]
    ) -> dict[str, Any]:
        """One flow step as a DBOS step (run at most once per execution, unless a crash
        interrupted it: then the recovering process runs it again, under the same ``key``).

        A step whose agent is a :class:`DBOSAgent` is not wrapped: DBOS starts no workflow
        inside a step, so its run becomes a child workflow of the flow's, named by ``key``
        (a replay gets the child's recorded result; the step's hooks run again).
        """
        if DBOS.workflow_id is None or isinstance(step.agent, DBOSAgent):
            return await body()
        name = step.name

        async def perform() -> dict[str, Any]:
            return await body()

        return await DBOS.run_step_async({"name": f"lightflow.step.{name}"}, perform)
