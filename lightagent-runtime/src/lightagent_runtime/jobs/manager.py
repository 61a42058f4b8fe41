"""``JobManager``: background jobs of one session, durable in its event log.

A job is started here (:meth:`JobManager.start`), runs as a task on the event loop under a
lease — the worker's id, an epoch (the fencing token) and an expiry, renewed by a
heartbeat while it runs — and ends recorded as ``job.completed``, ``job.failed`` or
``job.cancelled``, with an inbox ``context`` message (``kind: job_completion``) so the
session's next run sees it. Any manager on the same store (another task, another process,
SQLite or PostgreSQL) reads the job from the log: its output as it grows, its result
(:meth:`JobManager.wait` polls the store). A job whose holder died (its lease expired) is
taken over by a manager that has its operation registered by name (:meth:`take_over`,
:meth:`resume`); the steps it recorded (:meth:`JobContext.step`) are not run again.
"""

from __future__ import annotations

import asyncio
import builtins
import os
import socket
import time
import uuid
from collections.abc import MutableMapping
from typing import Any

from lightagent.cancellation import CancellationToken
from lightagent.errors import CancelledError, ConfigurationError, ValidationError
from lightagent.events.model import SessionEvent
from lightagent.events.store import SessionStore

from lightagent_runtime.jobs.checks import as_seconds, job_name, json_dict
from lightagent_runtime.jobs.context import JobContext, Operation, call_maybe_async
from lightagent_runtime.jobs.errors import JobError, JobFencedError
from lightagent_runtime.jobs.executors import ExecutorMethods, JobExecutor
from lightagent_runtime.jobs.log import JobLog, Lease, holder_check
from lightagent_runtime.jobs.outcomes import completion_message, copy_record, error_dict
from lightagent_runtime.jobs.records import JobRecord, JobStatus
from lightagent_runtime.jobs.takeover import LocalJob, TakeoverMethods

__all__ = ["JobManager", "Operation"]


_NAMESPACE = uuid.UUID("6b1f3c52-8a3e-4d1e-9f59-3c0d4a5e7b21")


class JobManager(ExecutorMethods, TakeoverMethods):
    """The background jobs of session ``session_id`` in ``store``.

    ``worker_id`` names this manager as a lease holder (host, process and a random part
    by default). ``owner`` is the session's owner as runs record it
    (``lightagent.events.ownership.owner_of``); a session of anyone else is refused with
    ``LA-SESSION-OWNER``. ``operations`` (name -> operation) may be shared by several
    managers; :meth:`register` adds to it. ``poll_interval`` is how often a waiting or
    running job reads the log (for results, and cancellation requested elsewhere);
    ``lease_seconds`` the default lease, renewed every third of it while a job runs.
    ``executor`` carries out the jobs this manager starts instead of a lease (e.g. as
    durable workflows: see :mod:`lightagent_runtime.jobs.executors`); None runs them here.
    """

    def __init__(
        self,
        store: SessionStore,
        session_id: str,
        *,
        worker_id: str | None = None,
        owner: dict[str, Any] | None = None,
        operations: MutableMapping[str, Operation] | None = None,
        poll_interval: float = 0.25,
        lease_seconds: float = 60.0,
        executor: JobExecutor | None = None,
    ) -> None:
        if executor is not None and not isinstance(executor, JobExecutor):
            raise ConfigurationError(
                "LA-CONFIG",
                f"executor must have kind, bind, run_job, run_job_step, run_job_end and "
                f"cancel_job; got {type(executor).__name__}",
                hint="Pass a job executor such as lightagent_dbos.DBOSJobExecutor(name=...).",
            )
        self._log = JobLog(store, session_id, owner)
        self.session_id = session_id
        self.worker_id = worker_id or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.operations: MutableMapping[str, Operation] = (
            operations if operations is not None else {}
        )
        self.poll_interval = as_seconds("poll_interval", poll_interval)
        self.lease_seconds = as_seconds("lease_seconds", lease_seconds)
        self._local: dict[str, LocalJob] = {}
        #: The loop the jobs run on: the one running where the manager was made or last
        #: started a job (a worker thread of a run's sync tool starts jobs onto it).
        self._loop: asyncio.AbstractEventLoop | None = _running_loop()
        self.executor = executor
        if executor is not None:
            executor.bind(self._sibling)

    # -- registering and starting ---------------------------------------------------

    def register(self, name: str, operation: Operation) -> None:
        """Make ``operation`` runnable under ``name`` here (start by name, take over)."""
        if not callable(operation):
            raise ConfigurationError(
                "LA-CONFIG",
                f"a job operation must be callable, not {type(operation).__name__}",
                hint="Register an async function fn(ctx) (or a sync one, run in a thread).",
            )
        self.operations[job_name(name)] = operation

    def start(
        self,
        name: str,
        operation: Operation | None = None,
        *,
        owner_agent_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        idempotency_key: str | None = None,
        cancellation_token: CancellationToken | None = None,
        lease_seconds: float | None = None,
        arguments: dict[str, Any] | None = None,
        job_id: str | None = None,
    ) -> JobRecord:
        """Start a job on the running event loop; returns its (pending) record at once.

        ``operation`` defaults to the one registered under ``name`` (one given is
        registered). ``arguments`` are the job's recorded inputs (``ctx.arguments``: a
        takeover starts from them). An ``idempotency_key`` (or ``job_id``) already used in
        the session starts nothing: the id is the existing job's — unless that job was
        interrupted or its worker's lease expired: then this start takes it over. What
        goes wrong while recording the start is raised by :meth:`wait`.
        """
        job_name(name)
        if operation is None:
            operation = self._operation(name)
        else:
            self.register(name, operation)
        lease = as_seconds(
            "lease_seconds", self.lease_seconds if lease_seconds is None else lease_seconds
        )
        meta, args = json_dict("metadata", metadata), json_dict("arguments", arguments)
        if idempotency_key is not None and (
            not isinstance(idempotency_key, str) or not idempotency_key
        ):
            raise ValidationError(
                "LA-VALIDATION", f"idempotency_key must be non-empty text, not {idempotency_key!r}"
            )
        if job_id is None:
            job_id = (
                uuid.uuid5(_NAMESPACE, f"{self.session_id}\0{name}\0{idempotency_key}").hex
                if idempotency_key
                else uuid.uuid4().hex
            )
        job_name(job_id, "job id")
        here = _running_loop()
        loop = here or self._loop
        if loop is None or loop.is_closed() or not loop.is_running():
            raise ConfigurationError(
                "LA-CONFIG",
                "JobManager.start() needs a running event loop (jobs run as its tasks)",
                hint="Start jobs from async code (inside asyncio.run(main())), or from a "
                "thread while the loop the manager was made on runs.",
            )
        self._loop = loop
        token = cancellation_token or CancellationToken()
        provisional = JobRecord(
            name=name,
            job_id=job_id,
            owner_agent_id=owner_agent_id,
            session_id=self.session_id,
            idempotency_key=idempotency_key,
            cancellation_token_id=token.token_id,
            metadata=meta,
            arguments=args,
        )
        known = self._local.get(job_id)
        if known is not None and known.error is None:
            return provisional  # already starting or running here: nothing starts twice
        local = self._local[job_id] = LocalJob(token)
        created = {
            "job_id": job_id,
            "name": name,
            "owner_agent_id": owner_agent_id,
            "metadata": meta,
            "arguments": args,
            "idempotency_key": idempotency_key,
            "cancellation_token_id": token.token_id,
        }
        launch = self._launch(job_id, operation, created, lease, local)
        if here is not None:
            local.task = loop.create_task(launch)
        else:  # from another thread (a run's sync tool): the task is made on the jobs' loop
            loop.call_soon_threadsafe(lambda: setattr(local, "task", loop.create_task(launch)))
        return provisional

    async def _launch(
        self,
        job_id: str,
        operation: Operation,
        created: dict[str, Any],
        seconds: float,
        local: LocalJob,
    ) -> None:
        lease = Lease(self.worker_id, 1, seconds)
        if self.executor is not None:
            # The start is recorded inside the executor's job: a crash leaves either
            # nothing (the start never happened) or a job the executor recovers.
            await self._execute(job_id, operation, lease, local, created)
            return
        try:
            stored = await asyncio.to_thread(
                self._log.write, job_id, self._starting(job_id, created, lease)
            )
        except Exception as exc:
            local.error = exc  # wait() raises it; the entry stays so that it can
            local.done.set()
            return
        if not stored:
            existing = self._log.scan.jobs[job_id]
            local.done.set()
            self._local.pop(job_id, None)
            if existing.status is JobStatus.interrupted or existing.lease_expired():
                # started again after its worker died: this start takes it over
                try:
                    await self.resume(job_id, operation, lease_seconds=seconds)
                except Exception as exc:
                    if not (isinstance(exc, JobError) and exc.code == "LA-JOB-STATE"):
                        local.error = exc  # wait() raises it
                        self._local[job_id] = local
                    # LA-JOB-STATE: another worker took it over first
            return
        await self._execute(job_id, operation, lease, local)

    # -- running --------------------------------------------------------------------

    def _starting(self, job_id: str, created: dict[str, Any], lease: Lease) -> Any:
        """The write of a job's start (``job.created``, ``job.started``); none if it exists."""

        def build(record: JobRecord | None) -> list[SessionEvent]:
            if record is not None:
                return []  # idempotent: the job exists (here or elsewhere); nothing starts
            return [
                SessionEvent("job.created", data=created),
                SessionEvent("job.started", data=self._lease_data(job_id, lease)),
            ]

        return build

    async def _execute(
        self,
        job_id: str,
        operation: Operation,
        lease: Lease,
        local: LocalJob,
        created: dict[str, Any] | None = None,
    ) -> None:
        local.lease = lease
        closing = False
        try:
            if self.executor is None:
                await self._attempt(job_id, operation, lease, local.token)
            else:

                async def body() -> Any:
                    if created is not None:
                        starting = self._starting(job_id, created, lease)
                        if not await asyncio.to_thread(self._log.write, job_id, starting):
                            # recorded already: by a start that never reached the
                            # executor (older releases recorded first), or not its job
                            if not self._owns(self.get(job_id)):
                                return None
                            return await self.execute_job(job_id, operation)
                    elif self.get(job_id).done:
                        return None  # cancelled before the executor started it
                    return await self._attempt(job_id, operation, lease, local.token)

                await self.executor.run_job(self.session_id, job_id, created, body)
        except asyncio.CancelledError:
            closing = True  # this manager is closing: aclose() records the interruption
        except Exception as exc:
            local.error = exc
        finally:
            # A failure before the start was recorded stays for wait() to raise: the log
            # has no job to report.
            if not closing and (local.error is None or job_id in self._log.scan.jobs):
                self._local.pop(job_id, None)
            local.done.set()
        if closing:
            raise asyncio.CancelledError

    async def _attempt(
        self, job_id: str, operation: Operation, lease: Lease, token: CancellationToken
    ) -> dict[str, Any] | None:
        """Run the operation under ``lease`` and record its end; returns the end recorded."""
        renew = self.executor is None  # an executor's job has no lease to renew
        heartbeat = asyncio.ensure_future(self._heartbeat(job_id, lease, token, renew))
        try:
            value = await call_maybe_async(operation, JobContext(self, job_id, lease, token))
            kind, data = "job.completed", {"result": value}
        except JobFencedError:
            return None  # the job was taken over: the newer holder records its end
        except Exception as exc:  # the job's failure is recorded, never lost
            error = error_dict(exc)
            if error.get("code") == "LA-CANCELLED" or token.cancelled:
                kind, data = (
                    "job.cancelled",
                    {"reason": token.reason or error.get("message"), "error": error},
                )
            else:
                kind, data = "job.failed", {"error": error}
        finally:
            heartbeat.cancel()
        ending = self._ending(job_id, lease, kind, data)

        async def record_end() -> dict[str, Any] | None:
            try:
                await asyncio.to_thread(self._log.write, job_id, ending)
            except JobFencedError:
                return None  # taken over (or cancelled) while finishing: not ours to record
            return {"event": kind, **data}

        if self.executor is None:
            return await record_end()
        result: dict[str, Any] | None = await self.executor.run_job_end(job_id, record_end)
        return result

    def _ending(self, job_id: str, lease: Lease, kind: str, data: dict[str, Any]) -> Any:
        def build(record: JobRecord | None) -> list[SessionEvent]:
            record = holder_check(job_id, record, lease)
            end = {"job_id": job_id, "lease_epoch": lease.epoch, **data}
            return [SessionEvent(kind, data=end), completion_message(record, kind, data)]

        return build

    async def _heartbeat(
        self, job_id: str, lease: Lease, token: CancellationToken, renew: bool = True
    ) -> None:
        """Renew the lease every third of it (``renew``); read the log for cancel requests
        and takeovers."""
        tick = min(self.poll_interval, lease.seconds / 3)
        renewed = time.monotonic()
        while True:
            await asyncio.sleep(tick)
            try:
                await asyncio.to_thread(self._log.refresh)
                record = self._log.scan.jobs.get(job_id)
                if record is not None and record.cancel_requested and not token.cancelled:
                    token.cancel(record.cancel_requested)
                if renew and time.monotonic() - renewed >= lease.seconds / 3:
                    await asyncio.to_thread(self._renew, job_id, lease, lease.seconds)
                    renewed = time.monotonic()
                else:
                    holder_check(job_id, record, lease)
            except JobFencedError:
                token.cancel("the job's lease was taken over")
                return
            except Exception:
                continue  # the store is briefly unreachable: try again at the next tick

    def _renew(self, job_id: str, lease: Lease, seconds: float) -> None:
        def build(record: JobRecord | None) -> list[SessionEvent]:
            holder_check(job_id, record, lease)
            lease.seconds, lease.expires_at = seconds, time.time() + seconds
            return [SessionEvent("job.lease_renewed", data=lease.data(job_id))]

        self._log.write(job_id, build)

    async def _emit(self, job_id: str, lease: Lease, value: Any, index: int | None = None) -> None:
        """Record an output; the operation's ``index``-th one only if no attempt did."""

        def build(record: JobRecord | None) -> list[SessionEvent]:
            holder_check(job_id, record, lease)
            data = {"job_id": job_id, "value": value, "lease_epoch": lease.epoch}
            if index is not None:
                if index in self._log.scan.emitted.get(job_id, ()):
                    return []  # an earlier attempt's output at this position stands
                data["index"] = index
            return [SessionEvent("job.output", data=data)]

        await asyncio.to_thread(self._log.write, job_id, build)

    # -- reading --------------------------------------------------------------------

    async def refresh(self) -> list[JobRecord]:
        """Read what was recorded since the last read (by anyone); returns every job."""
        self._loop = asyncio.get_running_loop()
        await asyncio.to_thread(self._log.refresh)
        return self.list()

    restore = refresh

    def get(self, job_id: str) -> JobRecord:
        """The job as last read (``await refresh()`` reads what others wrote since)."""
        record = self._log.scan.jobs.get(job_id)
        if record is None:
            raise self._not_found(job_id)
        return copy_record(record)

    def _not_found(self, job_id: str) -> JobError:
        return JobError(
            "LA-JOB-NOT-FOUND",
            f"no job {job_id!r} in session {self.session_id!r}",
            details={"job_id": job_id, "session_id": self.session_id},
        )

    def list(self, *, status: JobStatus | str | None = None) -> builtins.list[JobRecord]:
        """Every job as last read, in creation order (only those in ``status`` if given)."""
        wanted = JobStatus(status) if status is not None else None
        return [
            copy_record(r)
            for r in self._log.scan.jobs.values()
            if wanted is None or r.status is wanted
        ]

    async def wait(self, job_id: str, *, timeout: float | None = None) -> JobRecord:
        """The job's record once it has ended (success, failed or cancelled).

        Polls the store every ``poll_interval`` (another process's job) or wakes when a
        job of this manager ends; never blocks the loop. ``LA-JOB-TIMEOUT`` after
        ``timeout`` seconds (the job goes on); ``LA-JOB-NOT-FOUND`` for an unknown id.
        """
        deadline = None if timeout is None else time.monotonic() + as_seconds("timeout", timeout)
        while True:
            local = self._local.get(job_id)
            await asyncio.to_thread(self._log.refresh)
            record = self._log.scan.jobs.get(job_id)
            if record is not None and record.done and self._settled(local):
                return copy_record(record)
            if record is None and local is None:
                self.get(job_id)  # LA-JOB-NOT-FOUND
            if local is not None and local.error is not None:
                raise local.error
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise JobError(
                    "LA-JOB-TIMEOUT",
                    f"job {job_id!r} did not finish within {timeout} s",
                    details={"job_id": job_id, "status": record.status.value if record else None},
                )
            pause = self.poll_interval if left is None else min(self.poll_interval, left)
            if local is not None:
                try:
                    await asyncio.wait_for(local.done.wait(), pause)
                except TimeoutError:
                    pass
            else:
                await asyncio.sleep(pause)

    def _settled(self, local: LocalJob | None) -> bool:
        # An executor's job that runs here is waited for until its executor is done too
        # (DBOS: the workflow's own end, or a cancelled operation's unwinding), so a
        # program that exits next leaves none running: the log may say it ended first.
        return self.executor is None or local is None or local.done.is_set()

    async def recorded(self, job_id: str) -> JobRecord:
        """The job once its start is in the log (``start()`` returns before it is).

        Await it before handing the id to another process; raises what went wrong while
        recording the start, ``LA-JOB-NOT-FOUND`` for an id not started here nor in the log.
        """
        while True:
            local = self._local.get(job_id)
            if local is not None and local.error is not None:
                raise local.error
            record = self._log.scan.jobs.get(job_id)
            if record is not None:
                return copy_record(record)
            if local is None:
                await asyncio.to_thread(self._log.refresh)
                return self.get(job_id)
            try:
                await asyncio.wait_for(local.done.wait(), self.poll_interval)
            except TimeoutError:
                pass

    def cancellation_token(self, job_id: str) -> CancellationToken:
        """The token of a job running here (cancelled by :meth:`cancel`)."""
        local = self._local.get(job_id)
        if local is None:
            self.get(job_id)  # LA-JOB-NOT-FOUND for an unknown id
            raise JobError(
                "LA-JOB-STATE",
                f"job {job_id!r} is not running in this manager",
                hint="Cancel it with await jobs.cancel(job_id): the holder reads the request from the log.",
                details={"job_id": job_id},
            )
        return local.token

    def _operation(self, name: str) -> Operation:
        operation = self.operations.get(name)
        if operation is None:
            raise JobError(
                "LA-JOB-OPERATION",
                f"no operation is registered under {name!r} in this worker",
                details={"name": name, "registered": sorted(self.operations)},
            )
        return operation

    # -- control --------------------------------------------------------------------

    async def cancel(self, job_id: str, reason: str = "cancelled") -> JobRecord:
        """Cancel the job, wherever it runs; returns its record as recorded.

        A job running under a live lease gets a ``job.cancel_requested`` event: its holder
        (here, or another process reading the log) cancels the job's token and, once the
        operation stops, records ``job.cancelled``. A job nobody holds (interrupted, or
        its holder's lease expired) is recorded ``job.cancelled`` at once. A job this
        manager's executor owns is recorded ``job.cancel_requested`` and ``job.cancelled``
        at once, then stopped through the executor (DBOS: ``DBOS.cancel_workflow``); its
        operation stops at its next step, whose record is refused. Cancelling a job that
        has ended changes nothing.
        """
        local = self._local.get(job_id)
        if local is not None:
            await self.recorded(job_id)  # a job started here a moment ago: its start first
        stop = False

        def build(record: JobRecord | None) -> list[SessionEvent]:
            nonlocal stop
            stop = False  # decided by the build whose events land (it may run again)
            if record is None:
                raise self._not_found(job_id)
            data = {"job_id": job_id, "reason": reason}
            if self._owns(record):
                stop = True  # its executor must stop it: nothing it does later is recorded
                error = CancelledError("LA-CANCELLED", f"job cancelled: {reason}")
                end = {**data, "error": error.to_dict()}
                asked = (
                    []
                    if record.cancel_requested
                    else [SessionEvent("job.cancel_requested", data=data)]
                )
                return [
                    *asked,
                    SessionEvent("job.cancelled", data=end),
                    completion_message(record, "job.cancelled", end),
                ]
            if record.done or record.cancel_requested:
                return []
            if record.status is JobStatus.running and not record.lease_expired():
                return [SessionEvent("job.cancel_requested", data=data)]
            return [
                SessionEvent("job.cancelled", data=data),
                completion_message(record, "job.cancelled", data),
            ]

        await asyncio.to_thread(self._log.write, job_id, build)
        if stop and self.executor is not None:
            await self.executor.cancel_job(self.session_id, job_id)
        if local is not None:  # recorded first, so the request is in the log whatever follows
            local.token.cancel(reason)
        return self.get(job_id)

    async def emit_output(self, job_id: str, value: Any) -> None:
        """Append ``value`` to the output of a job running here (``ctx.emit_output`` in the job)."""
        local = self._local.get(job_id)
        if local is None or local.lease is None:
            self.get(job_id)
            raise JobError(
                "LA-JOB-STATE",
                f"job {job_id!r} is not running in this manager: only its holder adds output",
                details={"job_id": job_id},
            )
        await self._emit(job_id, local.lease, value)

    async def renew_lease(
        self,
        job_id: str,
        seconds: float,
        *,
        owner: str | None = None,
        expected_epoch: int | None = None,
    ) -> JobRecord:
        """Extend the lease of ``owner`` (this worker) at ``expected_epoch`` by ``seconds``.

        Refused with ``LA-JOB-FENCED`` when the job is held by someone else or at another
        epoch (the heartbeat renews leases by itself; this is for an explicit extension).
        """
        seconds = as_seconds("seconds", seconds)
        local = self._local.get(job_id)
        epoch = expected_epoch
        if epoch is None:
            if local is None or local.lease is None:
                self.get(job_id)
                raise JobError(
                    "LA-JOB-STATE",
                    f"job {job_id!r} is not running in this manager: name expected_epoch=",
                    details={"job_id": job_id},
                )
            epoch = local.lease.epoch
        lease = Lease(owner or self.worker_id, epoch, seconds)
        if local is not None and local.lease is not None and local.lease.epoch == epoch:
            lease = local.lease
        await asyncio.to_thread(self._renew, job_id, lease, seconds)
        return self.get(job_id)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
