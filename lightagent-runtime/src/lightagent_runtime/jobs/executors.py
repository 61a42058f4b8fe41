"""The executor seam of background jobs: who carries out a job and its ledger steps.

A :class:`~lightagent_runtime.jobs.JobManager` without an executor runs its jobs as tasks of
its event loop, owned by a lease (the default). An executor (``JobManager(executor=...)``,
``agent.job_manager(session_id, executor=...)``) owns the jobs it runs instead: the log
records ``executor: <kind>`` when they start, their lease never expires, and
``resume``/``take_over`` refuse them with ``LA-JOB-EXECUTOR`` (the executor recovers them
itself; both would run one job twice). It wraps four things, and nothing else changes:

- ``run_job(session_id, job_id, start, body)``: one job. ``body()`` records its start
  (when ``start`` is given), performs it here — the operation, then its end — and returns
  the end as recorded (a dict, or None when someone else ended the job first). ``start``
  is what the start records (``job.created``'s data: name, arguments, metadata …); the
  executor keeps it durably before calling ``body()`` and hands it to ``execute_job`` on a
  recovery, so a crash before the start is recorded loses no job. None: a takeover
  recorded the job already.
- ``run_job_step(job_id, name, body)``: one ledger step (``JobContext.step``); ``body()``
  runs it (or returns its recorded result) and records it, returning the recorded value.
- ``run_job_end(job_id, body)``: the recording of the job's end (``job.completed``,
  ``job.failed`` or ``job.cancelled``), so that a replay writes none twice.
- ``cancel_job(session_id, job_id)``: stop the job where the executor runs it, after
  ``cancel`` recorded it ``job.cancelled``.

``bind(manager_factory)`` is called when a manager takes the executor:
``manager_factory(session_id)`` builds a manager (the same store, owner and operations)
that performs a job the executor recovered in another process
(:meth:`~lightagent_runtime.jobs.JobManager.execute_job`). ``kind`` names the executor in
the log. An executor may also offer ``agent_runner(agent)``: an async
``runner(query, options, key)`` that runs the agent's job run its own way (a durable child
run, keyed by ``key``), or None for an agent it does not know.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Protocol, runtime_checkable

from lightagent.cancellation import CancellationToken
from lightagent.errors import ConfigurationError
from lightagent.events.model import SessionEvent

from lightagent_runtime.jobs.context import Operation
from lightagent_runtime.jobs.log import JobLog, Lease
from lightagent_runtime.jobs.records import JobRecord
from lightagent_runtime.jobs.takeover import LocalJob

__all__ = ["ExecutorMethods", "JobExecutor"]


@runtime_checkable
class JobExecutor(Protocol):
    """What ``JobManager(executor=)`` takes (see the module docstring)."""

    #: Recorded as the ``executor`` of the jobs it runs (``"dbos"``).
    kind: str

    def bind(self, manager_factory: Callable[[str], Any]) -> None:
        """Called with the factory of managers that perform recovered jobs."""

    async def run_job(
        self,
        session_id: str,
        job_id: str,
        start: dict[str, Any] | None,
        body: Callable[[], Awaitable[Any]],
    ) -> Any:
        """Carry out one job; return what ``body()`` returns."""

    async def run_job_step(self, job_id: str, name: str, body: Callable[[], Awaitable[Any]]) -> Any:
        """Carry out one ledger step of a job; return what ``body()`` returns."""

    async def run_job_end(self, job_id: str, body: Callable[[], Awaitable[Any]]) -> Any:
        """Record the job's end through ``body()``; return what it returns."""

    async def cancel_job(self, session_id: str, job_id: str) -> None:
        """Stop the job where it runs (its end is recorded already)."""


class ExecutorMethods:
    """The manager's side of the seam, mixed into ``JobManager``: what it records for an
    executor's jobs, and :meth:`execute_job`, by which an executor has a recovered job run."""

    _log: JobLog
    _local: dict[str, LocalJob]
    executor: JobExecutor | None
    worker_id: str
    session_id: str
    poll_interval: float
    lease_seconds: float
    operations: MutableMapping[str, Any]
    #: TakeoverMethods' (after this class in JobManager's bases, so no stub here).
    _resumed: Callable[..., SessionEvent]

    def get(self, job_id: str) -> JobRecord:  # pragma: no cover - JobManager defines it
        raise NotImplementedError

    def _operation(self, name: str) -> Any:  # pragma: no cover - as get
        raise NotImplementedError

    def _starting(
        self, job_id: str, created: dict[str, Any], lease: Lease
    ) -> Any:  # pragma: no cover - as get
        raise NotImplementedError

    async def _attempt(
        self, job_id: str, operation: Any, lease: Lease, token: CancellationToken
    ) -> dict[str, Any] | None:  # pragma: no cover - as get
        raise NotImplementedError

    def _lease_data(self, job_id: str, lease: Lease) -> dict[str, Any]:
        """A ``job.started``/``job.resumed`` event's data; an executor's job has no expiry."""
        data = lease.data(job_id)
        if self.executor is not None:
            data["lease_expires_at"] = None  # the executor owns it: no lease to expire
            data["executor"] = self.executor.kind
        return data

    def _owns(self, record: JobRecord) -> bool:
        """Whether this manager's executor owns ``record`` (a job that has not ended)."""
        return (
            self.executor is not None and record.executor == self.executor.kind and not record.done
        )

    def _sibling(self, session_id: str) -> Any:
        """A manager like this one for ``session_id``: the executor's factory."""
        make: Callable[..., Any] = type(self)
        return make(
            self._log.store,
            session_id,
            worker_id=self.worker_id,
            owner=self._log.owner,
            operations=self.operations,
            poll_interval=self.poll_interval,
            lease_seconds=self.lease_seconds,
            executor=self.executor,
        )

    async def execute_job(
        self,
        job_id: str,
        operation: Operation | None = None,
        *,
        start: dict[str, Any] | None = None,
    ) -> dict[str, Any] | None:
        """Perform job ``job_id`` here for its executor, which recovered it (for executors).

        A job whose start was never recorded is started with ``start`` (what the executor
        kept: ``job.created``'s data); one that was is a new attempt: ``job.resumed`` at
        the next epoch. The operation (``operation``, else the one registered under the
        job's name) runs with the recorded arguments and its end is recorded. Returns the
        end as recorded; None when the job had ended (nothing runs).
        """
        if self.executor is None:
            raise ConfigurationError(
                "LA-CONFIG", "execute_job() is for a manager with an executor= (its recoveries)"
            )
        await asyncio.to_thread(self._log.refresh)
        local = self._local.get(job_id)
        token = local.token if local is not None else CancellationToken()
        box: dict[str, Lease] = {}
        started = False
        if start is not None and job_id not in self._log.scan.jobs:
            box["lease"] = Lease(self.worker_id, 1, self.lease_seconds)
            starting = self._starting(job_id, start, box["lease"])
            started = bool(await asyncio.to_thread(self._log.write, job_id, starting))
        record = self.get(job_id)
        if record.done:
            return None
        op = operation if operation is not None else self._operation(record.name)
        if not started:

            def build(current: JobRecord | None) -> list[SessionEvent]:
                if current is None or current.done:
                    return []
                return [self._resumed(job_id, current, token, self.lease_seconds, box)]

            if not await asyncio.to_thread(self._log.write, job_id, build):
                return None
        lease = box["lease"]
        requested = self.get(job_id).cancel_requested
        if requested:
            token.cancel(requested)
        own = local is None
        if local is None:
            local = self._local[job_id] = LocalJob(token)
        local.lease = lease
        try:
            return await self._attempt(job_id, op, lease, token)
        finally:
            if own:
                self._local.pop(job_id, None)
                local.done.set()
