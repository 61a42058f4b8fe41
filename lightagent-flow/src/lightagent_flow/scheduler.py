"""The per-run engine: an async scheduler that starts every step whose dependencies succeeded.

All state of one run lives on one :class:`FlowRun`; nothing per-run is kept on the
:class:`~lightagent_flow.flow.LightFlow`. A step's result is committed to the store
(and, for file/SQL stores, fsynced) before any of its dependants is started, so a
crash never loses a step a dependant already used. A failed step skips only its own
dependants; unrelated branches keep running.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from lightagent.blocking import run_blocking
from lightagent.errors import PolicyError
from lightagent.interceptors import global_observers

from lightagent_flow.execution import StepExecution, summarize
from lightagent_flow.hooks import FlowHookRunner
from lightagent_flow.results import (
    CANCELLED,
    FAILED,
    PENDING,
    RUNNING,
    SKIPPED,
    SUCCESS,
    WAITING_APPROVAL,
    LightFlowStepResult,
)
from lightagent_flow.step import LightFlowStep

__all__ = ["FlowRun", "summarize"]

_DEAD = (FAILED, SKIPPED)


class FlowRun(StepExecution):
    """One execution (a run, a resume or a rerun) of a flow; never shared between runs."""

    def __init__(
        self,
        *,
        steps: Sequence[LightFlowStep],
        store: Any,
        hooks: FlowHookRunner,
        header: dict[str, Any],
        results: dict[str, LightFlowStepResult],
        approvals: dict[str, dict[str, Any]],
        retry_backoff: float,
        retry_backoff_max: float,
        trace_enabled: bool,
        observers: Sequence[Any] = (),
        session: tuple[Any, str] | None = None,
        cancellation_token: Any = None,
        max_concurrency: int | None = None,
        executor: Any = None,
    ) -> None:
        self.steps = list(steps)
        self.by_name = {s.name: s for s in self.steps}
        self.store = store
        self.hooks = hooks
        self.header = header
        self.run_id: str = header["run_id"]
        self.query: str = header["query"]
        self.results = results
        self.approvals = approvals
        self.retry_backoff = retry_backoff
        self.retry_backoff_max = retry_backoff_max
        self.trace_enabled = trace_enabled
        self.observers = list(observers)
        self.session = session
        self.token = cancellation_token
        self.trace: list[dict[str, Any]] = []
        self._unsent: list[dict[str, Any]] = []
        self._seq = 0
        self.cancel_reason: str | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._cancel_event: asyncio.Event | None = None
        self._executor: ThreadPoolExecutor | None = None
        self._poll_cancel = True
        self.epoch: int | None = None
        self.executor = executor
        self._limit = asyncio.Semaphore(max_concurrency) if max_concurrency else None
        # The run's outcome as the last step's commit stored it in the header (a store with
        # finish_run): the final header write is then skipped when the outcome still holds.
        self.stored_outcome: tuple[str, str | None, str | None, Any] | None = None
        self._finishes = callable(getattr(store, "finish_run", None))
        self._pending: list[str] = []
        self._running: dict[asyncio.Task[LightFlowStepResult], str] = {}
        self._commits = 0

    # -- events --------------------------------------------------------------

    def emit(self, type: str, data: dict[str, Any]) -> dict[str, Any]:
        """Record a flow trace event and hand it to observers (an observer failure is recorded, never raised)."""
        self._seq += 1
        event = {
            "type": type,
            "data": data,
            "trace_id": self.header.get("trace_id"),
            "parent_trace_id": self.header.get("parent_trace_id"),
            "run_group_id": self.header.get("run_group_id"),
            "timestamp": time.time(),
            "run_id": self.run_id,
            "seq": self._seq,
        }
        self.trace.append(event)
        if self.session is not None:
            self._unsent.append(event)
        handlers = [getattr(o, "on_event", o) for o in self.observers]
        # Process-wide instrumentation gets the RunObserver call shape: (source, event).
        handlers.extend(functools.partial(o.on_event, self) for o in global_observers())
        for handler in handlers:
            try:
                handler(event)
            except Exception as exc:
                self._seq += 1
                self.trace.append(
                    {
                        **event,
                        "type": "observer_failed",
                        "seq": self._seq,
                        "data": {"error": str(exc)},
                    }
                )
        return event

    async def _flush_session(self) -> None:
        if self.session is None or not self._unsent:
            return
        store, session_id = self.session
        batch, self._unsent = self._unsent, []
        events = [
            {
                "type": e["type"],
                "data": e["data"],
                "timestamp": e["timestamp"],
                "run_id": self.run_id,
                "turn_id": self.run_id,
                "step_id": e["data"].get("step") if isinstance(e["data"], dict) else None,
                "trace_id": e["trace_id"],
                "parent_trace_id": e["parent_trace_id"],
                "run_group_id": e["run_group_id"],
            }
            for e in batch
        ]
        try:
            await asyncio.to_thread(store.append, session_id, events)
        except Exception as exc:  # the flow store is the source of truth; the log is best effort
            self._seq += 1
            self.trace.append(
                {
                    **batch[-1],
                    "type": "session_append_failed",
                    "seq": self._seq,
                    "data": {"error": str(exc)},
                }
            )

    # -- store ---------------------------------------------------------------

    async def call_store(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """Call a store method, off the event loop when the store blocks."""
        fn = getattr(self.store, method)
        if getattr(self.store, "blocking", True):
            return await run_blocking(fn, *args, **kwargs)
        return fn(*args, **kwargs)

    def _fence(self) -> dict[str, Any]:
        return {} if self.epoch is None else {"epoch": self.epoch}

    async def claim(self) -> None:
        """Take the run over in the store (fencing out an older runner), when the store can."""
        if callable(getattr(self.store, "claim_run", None)):
            self.epoch = await self.call_store("claim_run", self.run_id)

    async def start(self, **fields: Any) -> None:
        """Persist the header with ``fields`` and claim the run: one store call when the
        store has ``start_run`` (which reads the cancel flag too), else the two calls."""
        if not callable(getattr(self.store, "start_run", None)):
            await self.save_header(**fields)
            await self.claim()
            return
        self.header.update(fields, updated_at=time.time())
        self._claimed(*await self.call_store("start_run", self.run_id, dict(self.header)))

    async def create(self) -> bool:
        """Write a new run's header and claim it in one store call (the store's ``create_run``).

        False when the store already holds the run (nothing was written).
        """
        claimed = await self.call_store("create_run", self.run_id, dict(self.header))
        if claimed is None:
            return False
        self._claimed(*claimed)
        return True

    def _claimed(self, epoch: int, cancel: bool) -> None:
        self.epoch, self._poll_cancel = epoch, False
        if cancel:
            self.request_cancel("cancel requested")

    async def save_header(self, **fields: Any) -> None:
        """Update and persist the run header."""
        self.header.update(fields, updated_at=time.time())
        await self.call_store("save_header", self.run_id, dict(self.header), **self._fence())

    async def _commit(self, result: LightFlowStepResult, *, last: bool = False) -> None:
        """Commit a step; with ``last`` (see :meth:`_is_last`) the run's outcome goes with it."""
        self._commits += 1
        try:
            if last:
                outcome = self.outcome()
                status, error, code, content = outcome
                self.header.update(
                    status=status,
                    error=error,
                    error_code=code,
                    content=content,
                    updated_at=time.time(),
                )
                flag = await self.call_store(
                    "finish_run", self.run_id, result.to_dict(), dict(self.header), **self._fence()
                )
                self.stored_outcome = outcome
            else:
                flag = await self.call_store(
                    "commit_step", self.run_id, result.to_dict(), **self._fence()
                )
        finally:
            self._commits -= 1
        if flag is None:
            self._poll_cancel = True
        else:  # the store read the cancel flag in the commit: no extra read per step
            self._poll_cancel = False
            if flag:
                self.request_cancel("cancel requested")

    # -- cancellation --------------------------------------------------------

    def request_cancel(self, reason: str | None = None) -> None:
        """Stop this run: no new step starts and running steps are cancelled (thread-safe)."""
        if self.cancel_reason is None:
            self.cancel_reason = reason or "cancelled"
        loop, event = self._loop, self._cancel_event
        if loop is None or event is None or loop.is_closed():
            return
        try:
            here = asyncio.get_running_loop()
        except RuntimeError:
            here = None
        if here is loop:
            event.set()
        else:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(event.set)

    async def _remote_cancel(self) -> bool:
        if self.token is not None and getattr(self.token, "cancelled", False):
            self.request_cancel(getattr(self.token, "reason", None) or "cancellation token")
            return True
        if self.cancel_reason is not None:
            return True
        if not self._poll_cancel:
            return False
        # Another process's request is read before a step starts (or with the last commit).
        if await self.call_store("cancel_requested", self.run_id):
            self.request_cancel("cancel requested")
            return True
        return False

    # -- scheduling ----------------------------------------------------------

    def context(self) -> dict[str, Any]:
        """What callables (``query``, ``cancel_if``, handlers) receive: input, steps and outputs."""
        return {
            "input": self.query,
            "run_id": self.run_id,
            "steps": dict(self.results),
            "outputs": {n: r.content for n, r in self.results.items() if r.status == SUCCESS},
        }

    async def execute(self, to_run: Sequence[str]) -> None:
        """Run the named steps (others keep their results), as concurrently as dependencies allow."""
        self._loop = asyncio.get_running_loop()
        self._cancel_event = asyncio.Event()
        if self.cancel_reason is not None:
            self._cancel_event.set()
        if self.token is not None and callable(getattr(self.token, "on_cancel", None)):
            self.token.on_cancel(lambda tok: self.request_cancel(getattr(tok, "reason", None)))
        self._executor = ThreadPoolExecutor(
            max_workers=min(32, len(self.steps) + 2), thread_name_prefix=f"lightflow-{self.run_id}"
        )
        for name in to_run:
            previous = self.results.get(name)
            fresh = LightFlowStepResult(name=name, idempotency_key=self._key(name))
            if previous is not None and previous.status == WAITING_APPROVAL:
                # The same request stays open across resumes, so a reviewer's answer still fits.
                fresh.approval_request_id = previous.approval_request_id
            self.results[name] = fresh
        pending = self._pending = [s.name for s in self.steps if s.name in set(to_run)]
        running: dict[asyncio.Task[LightFlowStepResult], str] = {}
        self._running = running
        cancel_wait = asyncio.ensure_future(self._cancel_event.wait())
        try:
            while self.cancel_reason is None:
                await self._schedule(pending, running)
                if not running or self.cancel_reason is not None:
                    break
                done, _ = await asyncio.wait(
                    [*running, cancel_wait], return_when=asyncio.FIRST_COMPLETED
                )
                for task in [t for t in running if t in done]:
                    self.results[running.pop(task)] = task.result()
        except BaseException:
            for task in running:  # a failed commit or an outside cancel: stop, write nothing more
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)
            raise
        finally:
            cancel_wait.cancel()
            self._executor.shutdown(wait=False, cancel_futures=True)
        if self.cancel_reason is not None:
            await self._stop(running)
            await self._skip_cancelled(pending)
        await self._flush_session()

    async def _schedule(
        self, pending: list[str], running: dict[asyncio.Task[LightFlowStepResult], str]
    ) -> None:
        changed = True
        while changed:
            changed = False
            for name in list(pending):
                deps = self.by_name[name].depends_on
                # A step's status is final before its commit returns; its dependants wait
                # for the commit, so none runs on an output a crash could still lose.
                if any(d in running.values() for d in deps):
                    continue
                states = [self.results[d].status for d in deps]
                if all(s == SUCCESS for s in states):
                    if await self._remote_cancel():
                        return
                    pending.remove(name)
                    self.results[name].status = RUNNING
                    task = asyncio.ensure_future(self._step_task(self.by_name[name]))
                    running[task] = name
                    changed = True
                elif any(s in _DEAD for s in states):
                    pending.remove(name)
                    dead = [d for d, s in zip(deps, states, strict=True) if s in _DEAD]
                    result = self.results[name]
                    result.status = SKIPPED
                    result.error = f"skipped: dependency {', '.join(dead)} did not succeed"
                    await self._commit(result)
                    self.emit("step_end", self._end_data(result))
                    changed = True

    async def _stop(self, running: dict[asyncio.Task[LightFlowStepResult], str]) -> None:
        for task in running:
            task.cancel()
        if running:
            await asyncio.gather(*running, return_exceptions=True)
        for name in running.values():
            result = self.results[name]
            if result.status in (PENDING, RUNNING):
                self._finish(result, SKIPPED, "LA-CANCELLED", f"cancelled: {self.cancel_reason}")
                await self._commit(result)
                self.emit("step_end", self._end_data(result))
        running.clear()

    async def _skip_cancelled(self, pending: list[str]) -> None:
        for name in pending:
            result = self.results[name]
            result.status = SKIPPED
            result.error = f"[LA-CANCELLED] cancelled: {self.cancel_reason}"
            result.error_code = "LA-CANCELLED"
            await self._commit(result)
        pending.clear()
        self.emit("flow_cancelled", {"run_id": self.run_id, "reason": self.cancel_reason})

    async def _step_task(self, step: LightFlowStep) -> LightFlowStepResult:
        if self._limit is not None:
            async with self._limit:
                result = await self._carry_out(step)
        else:
            result = await self._carry_out(step)
        await self._commit(result, last=self._is_last())
        self.emit("step_end", self._end_data(result))
        await self._flush_session()
        return result

    async def _carry_out(self, step: LightFlowStep) -> LightFlowStepResult:
        if self.executor is None:
            return await self._run_step(step)

        async def body() -> dict[str, Any]:
            return (await self._run_step(step)).to_dict()

        data = await self.executor.run_step(step, self._key(step.name), body)
        # the executor may answer from its record, without running the step here
        result = self.results[step.name] = LightFlowStepResult.from_dict(data)
        return result

    def _is_last(self) -> bool:
        """Whether the commit now due is this execution's last write but the header's.

        Nothing pending, no other step running, no other commit in flight and no cancel:
        the run's outcome is then known, and a store with ``finish_run`` writes it with
        the step in one commit.
        """
        return (
            self._finishes
            and self.cancel_reason is None
            and not self._pending
            and len(self._running) == 1
            and self._commits == 0
        )

    @staticmethod
    def _end_data(r: LightFlowStepResult) -> dict[str, Any]:
        return {
            "step": r.name,
            "status": r.status,
            "success": r.status == SUCCESS,
            "error": r.error,
            "error_code": r.error_code,
            "attempts": r.attempts,
            "retry_count": r.retry_count,
            "duration_ms": r.duration_ms,
            "input_summary": r.input_summary,
            "output_summary": r.output_summary,
            "used_fallback": r.used_fallback,
            "timed_out": r.timed_out,
            "timeout_mode": r.timeout_mode,
            "idempotency_key": r.idempotency_key,
            "approval_request_id": r.approval_request_id,
        }

    # -- outcome -------------------------------------------------------------

    def outcome(self) -> tuple[str, str | None, str | None, Any]:
        """The run's ``(status, error, error_code, content)`` from its step results."""
        results = [self.results.get(s.name) for s in self.steps]
        if self.cancel_reason is not None:
            status = CANCELLED
        elif any(r is not None and r.status == WAITING_APPROVAL for r in results):
            status = WAITING_APPROVAL
        elif any(r is None or r.status == FAILED for r in results):
            status = FAILED
        elif any(r.status == SKIPPED and r.error_code == "LA-CANCELLED" for r in results if r):
            status = CANCELLED
        else:
            status = SUCCESS
        error = code = None
        if status == CANCELLED:
            code, error = "LA-CANCELLED", f"[LA-CANCELLED] {self.cancel_reason or 'cancelled'}"
        else:
            failed = next((r for r in results if r is not None and r.status == FAILED), None)
            if failed is not None:
                code, error = failed.error_code, f"step {failed.name!r} failed: {failed.error}"
                if (failed.approval_decision or {}).get("action") == "reject":
                    error = failed.error  # a reviewer's refusal reads as the seeds show it
        fed = {d for s in self.steps for d in s.depends_on}
        sinks = [s.name for s in self.steps if s.name not in fed]
        last = self.results.get(sinks[-1]) if sinks else None
        content = last.content if status == SUCCESS and last is not None else None
        return status, error, code, content


def raise_hook_block(decision: Any, phase: str) -> None:
    """Raise ``LA-HOOK`` when a run-level hook (``on_resume``/``on_rerun``) blocked."""
    if decision.action == "block":
        raise PolicyError("LA-HOOK", f"{phase} blocked: {decision.reason or 'blocked by a hook'}")
