"""``DBOSJobExecutor``: the runtime's background jobs as DBOS workflows.

It plugs into the job executor seam of lightagent-runtime
(``JobManager(executor=...)``, ``agent.job_manager(session_id, executor=...)``), so this
module needs nothing from lightagent-runtime: the manager hands it job ids, plain-data
inputs and bodies to run.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from dbos import DBOS, SetWorkflowID, StepOptions
from dbos import error as dbos_error
from lightagent.errors import ConfigurationError

from lightagent_dbos.agent import DBOSAgent, wrapping

__all__ = ["DBOSJobExecutor"]

#: how long a recovered job waits for a manager to take the executor (seconds)
_BIND_GRACE = 60.0

_names: set[str] = set()
_names_lock = threading.Lock()


class DBOSJobExecutor:
    """Runs background jobs as the DBOS workflow ``lightjob.<name>``.

    A job is the workflow ``lightjob.<name>:<session id>:<job id>``; each ledger step
    (``ctx.step``) is a DBOS step ``lightjob.step.<step>``, and the job's end is recorded
    by the step ``lightjob.end``. A process that launches DBOS recovers the jobs a dead
    one left running, through the manager factory bound last (a manager built with this
    executor binds it). Build the executor and that manager before ``DBOS.launch()``
    (a recovered job waits up to a minute for one), once per name in a process.
    """

    #: recorded as the ``executor`` of the jobs it runs
    kind = "dbos"

    def __init__(self, *, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise ConfigurationError("LA-CONFIG", "DBOSJobExecutor needs a name= (a non-empty str)")
        with _names_lock:
            if name in _names:
                raise ConfigurationError(
                    "LA-CONFIG",
                    f"a DBOSJobExecutor named {name!r} exists in this process",
                    hint="Give each job executor its own name (it names its workflow).",
                )
            _names.add(name)
        self.name = name
        self.workflow_name = f"lightjob.{name}"
        self._factory: Callable[[str], Any] | None = None
        self._bound = threading.Event()
        # bodies of jobs started in this process, by workflow id; a recovered job has none
        # and is performed by a manager the factory builds
        self._bodies: dict[str, Callable[[], Awaitable[Any]]] = {}

        async def job(session_id: str, job_id: str, start: dict[str, Any] | None) -> Any:
            body = self._bodies.pop(DBOS.workflow_id or "", None)
            if body is not None:
                return await body()
            # recovery starts at DBOS.launch(): a manager built just after it still counts
            if not await asyncio.to_thread(self._bound.wait, _BIND_GRACE):
                raise RuntimeError(f"{self.workflow_name}: no job manager took this executor")
            assert self._factory is not None
            # the workflow's inputs hold the start: a job whose process died before
            # recording it starts here
            return await self._factory(session_id).execute_job(job_id, start=start)

        job.__qualname__ = job.__name__ = f"lightjob_{name}"
        self._workflow = DBOS.workflow(name=self.workflow_name)(job)

    def bind(self, manager_factory: Callable[[str], Any]) -> None:
        """Remember how to build a session's manager (called by ``JobManager(executor=)``);
        the factory bound last performs recovered jobs."""
        self._factory = manager_factory
        self._bound.set()

    def workflow_id(self, session_id: str, job_id: str) -> str:
        """The DBOS workflow id of job ``job_id`` of session ``session_id``."""
        return f"{self.workflow_name}:{session_id}:{job_id}"

    async def run_job(
        self,
        session_id: str,
        job_id: str,
        start: dict[str, Any] | None,
        body: Callable[[], Awaitable[Any]],
    ) -> Any:
        """Start the job's workflow (or find it: the id is the job's) and wait for it.

        ``start`` (the job's start, which ``body`` records) is a workflow input, so DBOS
        keeps it before ``body`` runs. Returns the job's end as recorded, or None when
        the job was cancelled (its workflow too) or ended elsewhere first.
        """
        wid = self.workflow_id(session_id, job_id)
        self._bodies.setdefault(wid, body)

        async def launch() -> Any:
            with SetWorkflowID(wid):
                handle = await DBOS.start_workflow_async(self._workflow, session_id, job_id, start)
            return await handle.get_result()

        try:
            if DBOS.workflow_id is None:
                return await launch()
            # started from inside another workflow (a DBOSAgent's tool): the job outlives
            # that run, so it is a workflow of its own, not its child (a fresh context)
            return await contextvars.Context().run(asyncio.ensure_future, launch())
        except dbos_error.DBOSAwaitedWorkflowCancelledError:
            return None  # cancel() recorded the job's end before cancelling the workflow
        finally:
            if self._bodies.get(wid) is body:
                del self._bodies[wid]

    async def run_job_step(self, job_id: str, name: str, body: Callable[[], Awaitable[Any]]) -> Any:
        """A ledger step as the DBOS step ``lightjob.step.<name>``: its result comes from
        the checkpoint on a replay (``body`` records the step in the log from inside it)."""
        if DBOS.workflow_id is None:
            return await body()
        return await DBOS.run_step_async({"name": f"lightjob.step.{name}"}, _coroutine(body))

    async def run_job_end(self, job_id: str, body: Callable[[], Awaitable[Any]]) -> Any:
        """The job's end, recorded by the DBOS step ``lightjob.end`` (retried: the record
        is conditional, so a second try writes nothing twice)."""
        if DBOS.workflow_id is None:
            return await body()
        options: StepOptions = {"name": "lightjob.end", "retries_allowed": True, "max_attempts": 5}
        return await DBOS.run_step_async(options, _coroutine(body))

    async def cancel_job(self, session_id: str, job_id: str) -> None:
        """Cancel the job's workflow and its children (an agent run's child workflow)."""
        wid = self.workflow_id(session_id, job_id)
        await DBOS.cancel_workflow_async(wid, cancel_children=True)

    def agent_runner(self, agent: Any) -> Callable[..., Awaitable[Any]] | None:
        """For an agent a :class:`DBOSAgent` wraps: a runner of its job runs as that
        DBOSAgent's workflows, children of the job's (``lightagent.<agent>:<session>:<job>``)."""
        durable = wrapping(agent)
        if durable is None:
            return None
        found: DBOSAgent = durable

        async def run(query: str, options: dict[str, Any], key: str) -> Any:
            return await found.arun(
                query,
                workflow_id=f"{found.workflow_name}:{key}",
                result_format="object",
                **options,
            )

        return run

    def __repr__(self) -> str:
        return f"DBOSJobExecutor(name={self.name!r})"


def _coroutine(body: Callable[[], Awaitable[Any]]) -> Callable[[], Awaitable[Any]]:
    """``body`` as a coroutine function (DBOS awaits a step only when it is one; a lambda
    returning an awaitable would be checkpointed as the awaitable)."""

    async def perform() -> Any:
        return await body()

    return perform
