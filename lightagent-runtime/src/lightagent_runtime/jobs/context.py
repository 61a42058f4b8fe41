"""What a job's operation gets: ``JobContext`` — its inputs, its token, output and steps.

``await ctx.step(name, fn, *args)`` is the job's ledger: the first time, ``fn`` runs and its
result is recorded as a ``job.step`` event (fenced by the job's lease); a takeover of the
job — another worker, after this one died — gets the recorded result back and ``fn`` is not
called again. A step that ran but whose record did not land (the process died between the
two) runs again on takeover: give ``fn`` :meth:`JobContext.idempotency_key` so the outside
world can recognise the repeat.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

from lightagent.cancellation import CancellationToken
from lightagent.errors import ValidationError
from lightagent.events.model import SessionEvent

from lightagent_runtime.jobs.log import Lease, holder_check

__all__ = ["JobContext", "Operation", "call_maybe_async"]


async def call_maybe_async(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``: awaited when async, in a worker thread when sync (never on the loop)."""
    if inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - an object whose __call__ is async
    ):
        return await fn(*args, **kwargs)
    value = await asyncio.to_thread(fn, *args, **kwargs)
    if inspect.isawaitable(value):
        value = await value
    return value


class JobContext:
    """One attempt at a job: its id, name, inputs, cancellation token, output and step ledger.

    Made by the :class:`~lightagent_runtime.jobs.manager.JobManager` (``manager``) that runs it.
    """

    def __init__(self, manager: Any, job_id: str, lease: Lease, token: CancellationToken) -> None:
        record = manager.get(job_id)
        self._manager = manager
        self._lease = lease
        #: The job's id.
        self.job_id = job_id
        #: The job's name (the operation it runs is registered under it).
        self.name = record.name
        #: The session whose log holds the job.
        self.session_id = record.session_id
        #: The inputs recorded at creation.
        self.arguments: dict[str, Any] = dict(record.arguments)
        #: The metadata recorded at creation.
        self.metadata: dict[str, Any] = dict(record.metadata)
        #: 1 for the first attempt, 2 and more for a takeover (or an executor's recovery).
        self.attempt = record.attempts
        #: The lease epoch this attempt holds (the fencing token of its writes).
        self.epoch = lease.epoch
        #: Cancelled when the job is cancelled (here or, through the log, from elsewhere)
        #: or when this attempt loses its lease.
        self.cancellation_token = token
        self._outputs = 0

    @property
    def executor(self) -> Any:
        """The executor that runs the job (``JobManager(executor=)``), or None."""
        return self._manager.executor

    @property
    def resumed(self) -> bool:
        """Whether this attempt took the job over from an earlier one."""
        return self.attempt > 1

    def idempotency_key(self, step: str) -> str:
        """A key for ``step`` that is the same in every attempt (for outside deduplication)."""
        return f"{self.job_id}:{step}"

    async def step(self, name: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """The recorded result of step ``name``, running ``fn(*args, **kwargs)`` only if none is.

        ``fn`` may be sync (run in a worker thread) or async. Its result must be JSON-safe;
        what is returned is the value as recorded (the same in the first attempt and in a
        takeover). A name already recorded returns its result again. The record is fenced:
        an attempt that lost its lease gets ``LA-JOB-FENCED``.
        """
        if not isinstance(name, str) or not name:
            raise ValidationError(
                "LA-VALIDATION",
                f"a job step needs a non-empty name, not {name!r}",
                hint="Name each step of the job uniquely: await ctx.step('charge', charge, order).",
            )
        executor = self._manager.executor
        if executor is None:
            return await self._record(name, fn, args, kwargs)
        return await executor.run_job_step(
            self.job_id, name, lambda: self._record(name, fn, args, kwargs)
        )

    async def _record(
        self, name: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        steps = self._manager.get(self.job_id).steps
        if name in steps:
            return steps[name]
        self.cancellation_token.raise_if_cancelled()
        value = await call_maybe_async(fn, *args, **kwargs)
        job_id, lease = self.job_id, self._lease

        def build(record: Any) -> list[SessionEvent]:
            holder_check(job_id, record, lease)
            if name in record.steps:
                return []  # recorded meanwhile (cannot happen under one lease; kept for safety)
            data = {"job_id": job_id, "step": name, "result": value, "lease_epoch": lease.epoch}
            return [SessionEvent("job.step", data=data)]

        await asyncio.to_thread(self._manager._log.write, job_id, build)
        return self._manager.get(job_id).steps[name]

    async def emit_output(self, value: Any) -> None:
        """Append ``value`` to the job's output (``job.output``), readable by others at once.

        Written once per position: a later attempt (a takeover, an executor's recovery)
        that emits its n-th output again, as deterministic code does, writes nothing; the
        recorded value stands.
        """
        index, self._outputs = self._outputs, self._outputs + 1
        await self._manager._emit(self.job_id, self._lease, value, index)


#: An operation: ``fn(ctx: JobContext) -> result`` (async, or sync: run in a worker thread).
Operation = Callable[[JobContext], Any]
