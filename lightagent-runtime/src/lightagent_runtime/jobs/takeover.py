"""How a job changes hands: taken over when its worker died, interrupted when one closes.

Mixed into :class:`~lightagent_runtime.jobs.manager.JobManager`. A takeover is a ``job.resumed``
event at the next lease epoch, appended on condition that the log is as read, so of two
workers racing one wins; the job's operation then runs again with its recorded arguments,
and the steps it recorded return their results without running.
"""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import MutableMapping
from typing import Any

from lightagent.cancellation import CancellationToken
from lightagent.errors import ConfigurationError
from lightagent.events.model import SessionEvent

from lightagent_runtime.jobs.checks import as_seconds, check_takeover
from lightagent_runtime.jobs.context import Operation
from lightagent_runtime.jobs.errors import JobError, JobFencedError
from lightagent_runtime.jobs.log import JobLog, Lease, holder_check
from lightagent_runtime.jobs.records import JobRecord, JobStatus

__all__ = ["LocalJob", "TakeoverMethods"]


class LocalJob:
    """A job running in this manager: its task, token, lease and completion signal."""

    __slots__ = ("done", "error", "lease", "task", "token")

    def __init__(self, token: CancellationToken) -> None:
        self.token = token
        self.lease: Lease | None = None
        self.task: asyncio.Task[None] | None = None
        self.done = asyncio.Event()
        self.error: BaseException | None = None


class TakeoverMethods:
    """``resume``, ``take_over``, ``mark_interrupted`` and ``aclose`` of a ``JobManager``."""

    _log: JobLog
    _local: dict[str, LocalJob]
    worker_id: str
    lease_seconds: float
    operations: MutableMapping[str, Any]
    executor: Any  # ExecutorMethods' (a JobExecutor or None)

    def get(self, job_id: str) -> JobRecord:  # pragma: no cover - JobManager defines it
        raise NotImplementedError

    async def refresh(self) -> builtins.list[JobRecord]:  # pragma: no cover - as get
        raise NotImplementedError

    def _operation(self, name: str) -> Any:  # pragma: no cover - as get
        raise NotImplementedError

    def _lease_data(self, job_id: str, lease: Lease) -> dict[str, Any]:  # pragma: no cover
        raise NotImplementedError

    async def _execute(
        self, job_id: str, operation: Any, lease: Lease, local: LocalJob
    ) -> None:  # pragma: no cover - as get
        raise NotImplementedError

    async def resume(
        self, job_id: str, operation: Operation | None = None, *, lease_seconds: float | None = None
    ) -> JobRecord:
        """Take the job over and run it here: an interrupted job, or one whose lease expired.

        The claim is a ``job.resumed`` event at the next epoch, appended on condition that
        the log is as read: of two workers racing, one wins, the other gets
        ``LA-JOB-STATE``. ``operation`` defaults to the one registered under the job's
        name (``LA-JOB-OPERATION`` when there is none). The operation runs again with the
        job's recorded arguments; its recorded steps return their results without running.
        A job an executor owns is refused with ``LA-JOB-EXECUTOR`` (it recovers the job).
        """
        seconds = as_seconds(
            "lease_seconds", self.lease_seconds if lease_seconds is None else lease_seconds
        )
        await asyncio.to_thread(self._log.refresh)
        record = self.get(job_id)
        if record.executor is not None:
            check_takeover(job_id, record)  # LA-JOB-EXECUTOR before anything else
        if job_id in self._local:
            raise JobError(
                "LA-JOB-STATE",
                f"job {job_id!r} is already running in this manager",
                details={"job_id": job_id},
            )
        op = operation if operation is not None else self._operation(record.name)
        if not callable(op):
            raise ConfigurationError("LA-CONFIG", "a job operation must be callable")
        token = CancellationToken()
        box: dict[str, Lease] = {}

        def build(current: JobRecord | None) -> list[SessionEvent]:
            assert current is not None  # a job is never removed from its log
            check_takeover(job_id, current)
            return [self._resumed(job_id, current, token, seconds, box)]

        await asyncio.to_thread(self._log.write, job_id, build)
        local = self._local[job_id] = LocalJob(token)
        local.task = asyncio.ensure_future(self._execute(job_id, op, box["lease"], local))
        return self.get(job_id)

    def _resumed(
        self,
        job_id: str,
        current: JobRecord,
        token: CancellationToken,
        seconds: float,
        box: dict[str, Lease],
    ) -> SessionEvent:
        """The ``job.resumed`` event of a new attempt at the next epoch; its lease goes in ``box``."""
        lease = box["lease"] = Lease(self.worker_id, current.lease_epoch + 1, seconds)
        data = {
            **self._lease_data(job_id, lease),  # under an executor, it owns the job now
            "previous_status": current.status.value,
            "previous_owner": current.lease_owner,
            "cancellation_token_id": token.token_id,
        }
        return SessionEvent("job.resumed", data=data)

    async def take_over(self) -> builtins.list[JobRecord]:
        """Resume every job of the session whose holder is gone and whose operation is here.

        Jobs interrupted or with an expired lease are claimed one by one; one claimed by
        another worker first, or with no operation registered here, is left alone.
        """
        taken = []
        for record in await self.refresh():
            if record.name not in self.operations or record.job_id in self._local:
                continue
            if record.status is JobStatus.interrupted or record.lease_expired():
                try:
                    taken.append(await self.resume(record.job_id))
                except JobError as exc:
                    if exc.code not in ("LA-JOB-STATE", "LA-JOB-EXECUTOR"):
                        raise
        return taken

    async def mark_interrupted(self, *, reason: str = "lease expired") -> builtins.list[JobRecord]:
        """Record ``job.interrupted`` for every running job whose lease expired; returns them."""
        marked = []
        for record in await self.refresh():
            if not record.lease_expired() or record.job_id in self._local:
                continue
            epoch = record.lease_epoch

            def build(current: JobRecord | None, epoch: int = epoch) -> list[SessionEvent]:
                if current is None or current.lease_epoch != epoch or not current.lease_expired():
                    return []  # renewed, taken over or ended meanwhile
                data = {"job_id": current.job_id, "reason": reason, "lease_epoch": epoch}
                return [SessionEvent("job.interrupted", data=data)]

            if await asyncio.to_thread(self._log.write, record.job_id, build):
                marked.append(self.get(record.job_id))
        return marked

    async def aclose(self) -> None:
        """Stop the jobs running here and record them ``job.interrupted``, lease released.

        Another worker can take them over at once (no lease to wait out); the steps they
        recorded are kept. A job an executor owns is left to it (stopped waiting for
        here, not interrupted): the executor recovers it.
        """
        for job_id, local in list(self._local.items()):
            lease = local.lease
            record = self._log.scan.jobs.get(job_id)
            # An executor's job (maybe not in the log yet: the executor records its start
            # inside the job) is not marked interrupted: the executor recovers it.
            if self.executor is not None if record is None else record.executor is not None:
                if local.task is not None and not local.task.done():
                    local.task.cancel()
                self._local.pop(job_id, None)
                continue
            if local.task is not None and not local.task.done():
                local.task.cancel()
                try:
                    await local.task
                except (asyncio.CancelledError, Exception):
                    pass  # stopped: what it recorded stays, the rest runs again elsewhere
            if lease is None:
                continue

            def build(
                record: JobRecord | None, lease: Lease = lease, job_id: str = job_id
            ) -> list[SessionEvent]:
                try:
                    holder_check(job_id, record, lease)
                except JobFencedError:
                    return []
                data = {"job_id": job_id, "reason": "worker closed", "lease_epoch": lease.epoch}
                return [SessionEvent("job.interrupted", data=data)]

            await asyncio.to_thread(self._log.write, job_id, build)
            self._local.pop(job_id, None)
