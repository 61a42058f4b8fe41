"""An agent run as a background job, and a run its caller can detach.

:func:`agent_operation` is the operation of an agent-run job: the first attempt drives the
run under the run id recorded in the job's arguments; a takeover (after the first worker
died) continues that run with :func:`lightagent.events.resume.aresume`, so the tool calls
whose results are in the log are not executed again, and a call whose outcome is unknown
goes through ``reconcile``/``approve`` — never a blind retry.

:func:`run_detachable` runs a query as such a job and waits for it; when the caller's token
is detached (``token.detach()``) it stops waiting and returns at once a result naming the
job, which carries on in the background.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from lightagent.cancellation import CancellationToken
from lightagent.errors import CancelledError, ConfigurationError, StorageError
from lightagent.results import RunResult

from lightagent_runtime.jobs.context import JobContext
from lightagent_runtime.jobs.manager import JobManager
from lightagent_runtime.jobs.records import JobRecord, JobStatus

__all__ = [
    "RUN_OPTIONS",
    "RunFailed",
    "agent_job_name",
    "agent_operation",
    "run_arguments",
    "run_detachable",
    "run_result",
]

#: The run options a job records (JSON values: a takeover in another process reads them).
RUN_OPTIONS = (
    "user_id",
    "metadata",
    "max_retry",
    "max_tool_iterations",
    "idempotency_key",
    "model_options",
    "use_skills",
)


class RunFailed(Exception):
    """A run ended with an error: the job records ``error`` exactly as the run reported it."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error.get("message"))
        self.error = error


def agent_job_name(agent: Any) -> str:
    """The operation name of ``agent``'s runs: ``agent:<agent.name>`` (give agents a stable name)."""
    return f"agent:{agent.name}"


def run_arguments(query: str, session_id: str, run_kwargs: dict[str, Any]) -> dict[str, Any]:
    """A job's recorded arguments for one run of ``query`` (its run id chosen now)."""
    if not isinstance(query, str) or not query:
        raise ConfigurationError(
            "LA-CONFIG", "an agent job needs a non-empty query", hint="Pass the question as text."
        )
    unknown = sorted(set(run_kwargs) - set(RUN_OPTIONS))
    if unknown:
        raise ConfigurationError(
            "LA-CONFIG",
            f"an agent job cannot record the run options {', '.join(unknown)}",
            hint=f"A job's run takes only JSON options a takeover can read again: {', '.join(RUN_OPTIONS)}.",
            details={"refused": unknown, "allowed": list(RUN_OPTIONS)},
        )
    return {
        "query": query,
        "session_id": session_id,
        "run_id": uuid.uuid4().hex,
        "options": dict(run_kwargs),
    }


def agent_operation(agent: Any, *, reconcile: Any = None, approve: Any = None) -> Any:
    """The job operation that runs (or, on takeover, resumes) one run of ``agent``.

    ``reconcile`` and ``approve`` settle, on takeover, a tool call that was requested but
    has no recorded result (see :func:`lightagent.events.resume.resume_steps`). A job
    executor with an ``agent_runner`` for ``agent`` runs the run instead (a ``DBOSAgent``
    wrapping it: a child workflow keyed by the session and job ids).
    """

    async def run_agent(ctx: JobContext) -> dict[str, Any]:
        from lightagent.run.run_options import RunOptions

        args = ctx.arguments
        opts = RunOptions(
            session_id=args["session_id"],
            cancellation_token=ctx.cancellation_token,
            result_format="object",
            **dict(args.get("options") or {}),
        )
        result: Any = None
        runner = getattr(ctx.executor, "agent_runner", None)
        durable = runner(agent) if runner is not None else None
        if durable is not None:  # the executor runs the agent its own way (a durable child run)
            result = await durable(
                args["query"],
                {"session_id": args["session_id"], **dict(args.get("options") or {})},
                f"{ctx.session_id}:{ctx.job_id}",
            )
        elif ctx.resumed:
            from lightagent.events.resume import aresume

            try:
                # lease_seconds=0: the job's lease already says the earlier attempt is gone.
                result = await aresume(
                    agent,
                    args["run_id"],
                    session_id=args["session_id"],
                    reconcile=reconcile,
                    approve=approve,
                    lease_seconds=0,
                    options=opts,
                )
            except StorageError as exc:
                if exc.code != "LA-SESSION":  # LA-SESSION: the run never recorded a thing
                    raise
        if result is None:
            result = await agent._adrive(args["query"], options=opts, run_id=args["run_id"])
        if result.error:
            raise RunFailed(result.error)
        return {"content": result.content, "run_id": result.run_id, "usage": result.usage}

    return run_agent


def run_result(record: JobRecord) -> RunResult:
    """The :class:`RunResult` of a finished agent-run job, as its caller would have had it."""
    result = record.result if isinstance(record.result, dict) else {}
    return RunResult(
        content=result.get("content"),
        usage=result.get("usage"),
        run_id=result.get("run_id") or record.arguments.get("run_id"),
        error=record.error if record.status is not JobStatus.success else None,
    )


async def run_detachable(
    jobs: JobManager,
    name: str,
    arguments: dict[str, Any],
    token: CancellationToken,
    *,
    lease_seconds: float | None = None,
    metadata: dict[str, Any] | None = None,
    owner_agent_id: str | None = None,
) -> tuple[RunResult, JobRecord | None]:
    """Run the agent job and wait for it, unless ``token`` is detached first.

    Returns the run's result and, if the caller detached, the job left running (None when
    the run ended while attached). While attached, ``token``'s ``cancel`` and
    ``stop_after_turn`` reach the run; after a detach they no longer do (cancel the job
    with ``jobs.cancel(job_id)``). If the waiting task itself is cancelled, the run is too.
    """
    loop = asyncio.get_running_loop()
    detached: asyncio.Future[str] = loop.create_future()

    def settle(reason: str) -> None:
        if not detached.done():
            detached.set_result(reason)

    def on_detach(t: CancellationToken) -> None:
        # detach() may be called from any thread: the future is settled on its loop
        loop.call_soon_threadsafe(settle, t.detach_requested or "detached")

    run_token = token.child()  # the caller's cancel and stop reach the run while attached
    record = jobs.start(
        name,
        cancellation_token=run_token,
        arguments=arguments,
        lease_seconds=lease_seconds,
        metadata=metadata,
        owner_agent_id=owner_agent_id,
    )
    token.on_detach(on_detach)
    waiter = asyncio.ensure_future(jobs.wait(record.job_id))
    pending: set[asyncio.Future[Any]] = {waiter, detached}
    try:
        await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        run_token.cancel("the caller stopped waiting")
        waiter.cancel()
        raise
    if waiter.done():
        detached.cancel()
        return run_result(waiter.result()), None
    waiter.cancel()
    run_token.unlink()
    reason = detached.result()
    error = CancelledError(
        "LA-CANCELLED",
        f"run detached ({reason}): it continues as background job {record.job_id}",
        hint="Await the job's result with jobs.wait(job_id); cancel it with jobs.cancel(job_id).",
        details={"mode": "detach", "reason": reason, "job_id": record.job_id},
    )
    return RunResult(run_id=arguments["run_id"], error=error.to_dict()), record
