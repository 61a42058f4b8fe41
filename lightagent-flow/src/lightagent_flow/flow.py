"""``LightFlow``: deterministic, durable, resumable multi-step agent workflows."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import fields
from typing import Any

from lightagent.blocking import run_blocking
from lightagent.errors import ConfigurationError, ValidationError
from lightagent.progress import ProgressLine

from lightagent_flow._support import (
    check_format,
    format_result,
    header_from,
    result_from_record,
    run_sync,
    step_results,
)
from lightagent_flow.approvals import record_decision
from lightagent_flow.executors import FlowExecutor
from lightagent_flow.graph import downstream, raise_for_report, validate_steps
from lightagent_flow.hooks import FlowHookRunner
from lightagent_flow.results import (
    SUCCESS,
    LightFlowResult,
    LightFlowStepResult,
    LightFlowSteps,
)
from lightagent_flow.scheduler import FlowRun, raise_hook_block
from lightagent_flow.step import LightFlowStep, make_step
from lightagent_flow.stores.base import MemoryLightFlowStore, check_run_id

__all__ = ["LightFlow"]


class LightFlow:
    """A workflow of named steps with explicit dependencies, run as concurrently as they allow.

    ``store`` keeps run records (``JsonLightFlowStore``, ``SqlLightFlowStore``; an
    in-memory store when ``None``). ``hooks`` are flow hooks (see :mod:`lightagent_flow.hooks`).
    ``observers`` receive every flow trace event (``on_event(event)`` or a callable).
    ``session_store`` takes what ``LightAgent(session_store=)`` takes (a ``SessionStore``,
    a registered name, ``"sqlite:///x.db"`` …) and gets the flow trace events appended to
    session ``session_id`` (default: the run id). ``progress`` draws a live
    line of finished steps on a terminal (None: only when stderr is a TTY; see
    ``lightagent.ProgressLine``). ``executor`` carries out runs and steps elsewhere, e.g.
    as durable workflows (see :mod:`lightagent_flow.executors`); None runs them here.
    """

    def __init__(
        self,
        *,
        store: Any = None,
        hooks: Sequence[Any] | None = None,
        retry_backoff: float = 0.5,
        retry_backoff_max: float = 8.0,
        max_concurrency: int | None = None,
        observers: Sequence[Any] | None = None,
        session_store: Any = None,
        progress: bool | None = None,
        executor: Any = None,
    ) -> None:
        for label, value in (
            ("retry_backoff", retry_backoff),
            ("retry_backoff_max", retry_backoff_max),
        ):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ConfigurationError(
                    "LA-CONFIG", f"{label} must be a number >= 0, got {value!r}"
                )
        if max_concurrency is not None and (
            not isinstance(max_concurrency, int) or max_concurrency < 1
        ):
            raise ConfigurationError(
                "LA-CONFIG", f"max_concurrency must be an int >= 1, got {max_concurrency!r}"
            )
        self.store = store if store is not None else MemoryLightFlowStore()
        self.hooks = FlowHookRunner(hooks)
        self.retry_backoff = float(retry_backoff)
        self.retry_backoff_max = float(retry_backoff_max)
        self.max_concurrency = max_concurrency
        self.observers = list(observers or ())
        self.session_store = None if session_store is None else _session_store(session_store)
        self.progress = progress
        if executor is not None and not isinstance(executor, FlowExecutor):
            raise ConfigurationError(
                "LA-CONFIG",
                f"executor must have bind, run_flow and run_step; got {type(executor).__name__}",
            )
        self.executor = executor
        if executor is not None:
            executor.bind(self)
            cap = getattr(executor, "max_concurrency", None)
            if cap is not None:
                self.max_concurrency = min(cap, max_concurrency or cap)
        self._steps: list[LightFlowStep] = []
        self._active: dict[str, FlowRun] = {}
        self._active_lock = threading.Lock()

    # -- building ------------------------------------------------------------

    def step(
        self,
        name: str,
        agent: Any = None,
        *,
        depends_on: str | Sequence[str] | None = None,
        query: str | Callable[..., Any] | None = None,
        timeout: float | None = None,
        max_retry: int = 1,
        cancel_if: Callable[[dict[str, Any]], Any] | None = None,
        fallback_agent: Any = None,
        requires_approval: bool = False,
        approval_handler: Callable[..., Any] | None = None,
        metadata: dict[str, Any] | None = None,
        tools: Sequence[Any] | None = None,
        allow_timeout_overlap: bool = False,
        retry_backoff: float | None = None,
        retry_backoff_max: float | None = None,
    ) -> LightFlow:
        """Add a step and return the flow (chainable). A repeated name raises ``LA-FLOW-DUPLICATE-STEP``."""
        built = make_step(
            name,
            agent=agent,
            depends_on=depends_on,
            query=query,
            timeout=timeout,
            max_retry=max_retry,
            cancel_if=cancel_if,
            fallback_agent=fallback_agent,
            requires_approval=requires_approval,
            approval_handler=approval_handler,
            metadata=metadata,
            tools=tools,
            allow_timeout_overlap=allow_timeout_overlap,
            retry_backoff=retry_backoff,
            retry_backoff_max=retry_backoff_max,
        )
        if any(s.name == built.name for s in self._steps):
            raise ValidationError(
                "LA-FLOW-DUPLICATE-STEP",
                f"a step named {built.name!r} already exists",
                details={"step": built.name},
            )
        self._steps.append(built)
        return self

    @property
    def steps(self) -> tuple[LightFlowStep, ...]:
        """The declared steps, in declaration order."""
        return tuple(self._steps)

    def validate(self, *, strict: bool = False) -> dict[str, Any]:
        """``{"valid", "errors", "warnings"}``: unknown dependencies, cycles, duplicates, isolated steps.

        Each issue is ``{"code", "message", "steps"}``; with ``strict`` isolated steps are errors.
        """
        return validate_steps(self._steps, strict=strict)

    def _shape(self) -> list[dict[str, Any]]:
        return [{"name": s.name, "depends_on": list(s.depends_on)} for s in self._steps]

    # -- running -------------------------------------------------------------

    def run(
        self,
        query: str,
        *,
        run_id: str | None = None,
        trace: bool = False,
        result_format: str = "object",
        user_id: str = "default_user",
        parent_trace_id: str | None = None,
        run_group_id: str | None = None,
        cancellation_token: Any = None,
        metadata: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Any:
        """Run the flow to completion (or until it waits for approval); see :meth:`arun`."""
        return run_sync(
            lambda: self.arun(
                query,
                run_id=run_id,
                trace=trace,
                result_format=result_format,
                user_id=user_id,
                parent_trace_id=parent_trace_id,
                run_group_id=run_group_id,
                cancellation_token=cancellation_token,
                metadata=metadata,
                session_id=session_id,
            )
        )

    async def arun(
        self,
        query: str,
        *,
        run_id: str | None = None,
        trace: bool = False,
        result_format: str = "object",
        user_id: str = "default_user",
        parent_trace_id: str | None = None,
        run_group_id: str | None = None,
        cancellation_token: Any = None,
        metadata: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Any:
        """Run the flow; returns a :class:`LightFlowResult` (or ``str``/``dict`` per ``result_format``).

        Reusing a stored ``run_id`` with the same query returns the stored result
        (``idempotent_replay=True``) without running anything; with another query it
        raises ``LA-FLOW-RUN-EXISTS``. Use :meth:`resume` to continue a stored run.
        """
        check_format(result_format)
        if not isinstance(query, str):
            raise ValidationError(
                "LA-VALIDATION", f"query must be a str, got {type(query).__name__}"
            )
        raise_for_report(validate_steps(self._steps))
        run_id = check_run_id(run_id) if run_id is not None else uuid.uuid4().hex
        if metadata is not None and not isinstance(metadata, dict):
            raise ValidationError("LA-VALIDATION", "metadata must be a dict")
        # A store with create_run answers "is the run new?" with the write that starts it.
        creates = callable(getattr(self.store, "create_run", None))
        existing = None if creates else await self._load(run_id)
        if existing is None:
            run = self._new_run(
                self._header(run_id, query, user_id, parent_trace_id, run_group_id, metadata),
                {},
                {},
                trace,
                cancellation_token,
                session_id,
            )
            if not creates or await run.create():
                result = await self._execute(
                    run, [s.name for s in self._steps], kind="run", created=creates
                )
                return format_result(result, result_format)
            existing = await self._require(run_id)
        if existing.get("query") != query:
            raise ValidationError(
                "LA-FLOW-RUN-EXISTS",
                f"run {run_id!r} exists with another query",
                details={"run_id": run_id},
            )
        result = result_from_record(existing)
        result.idempotent_replay = True
        return format_result(result, result_format)

    def _header(
        self,
        run_id: str,
        query: str,
        user_id: str,
        parent_trace_id: str | None,
        run_group_id: str | None,
        metadata: dict[str, Any] | None,
    ) -> dict[str, Any]:
        """The header a new run starts with."""
        now = time.time()
        return {
            "run_id": run_id,
            "query": query,
            "status": "running",
            "error": None,
            "error_code": None,
            "content": None,
            "user_id": user_id,
            "trace_id": uuid.uuid4().hex,
            "parent_trace_id": parent_trace_id,
            "run_group_id": run_group_id,
            "metadata": dict(metadata or {}),
            "flow": self._shape(),
            "created_at": now,
            "updated_at": now,
        }

    def resume(self, run_id: str, **kwargs: Any) -> Any:
        """Continue a stored run: completed steps keep their output, the others run. See :meth:`aresume`."""
        return run_sync(lambda: self.aresume(run_id, **kwargs))

    async def aresume(
        self,
        run_id: str,
        *,
        trace: bool = False,
        result_format: str = "object",
        cancellation_token: Any = None,
        session_id: str | None = None,
    ) -> Any:
        """Continue ``run_id`` where it stopped, possibly in another process.

        Steps with status ``success`` are not run again; failed, skipped, pending and
        interrupted ones are, and a ``waiting_approval`` step uses its persisted decision.
        """
        check_format(result_format)
        record = await self._require(run_id)
        results = step_results(record, self._shape())
        to_run = [
            s.name
            for s in self._steps
            if results.get(s.name) is None or results[s.name].status != SUCCESS
        ]
        run = self._new_run(
            header_from(record),
            results,
            dict(record.get("approvals") or {}),
            trace,
            cancellation_token,
            session_id,
        )
        decision = await self.hooks.run(
            "on_resume",
            {"run_id": run_id, "record": record, "steps": to_run},
            run.emit,
            **run._hook_context(None),
        )
        raise_hook_block(decision, "on_resume")
        await run.call_store("clear_cancel", run_id)
        return format_result(await self._execute(run, to_run, kind="resume"), result_format)

    def rerun_step(self, run_id: str, step: str, **kwargs: Any) -> Any:
        """Run ``step`` and everything downstream of it again. See :meth:`arerun_step`."""
        return run_sync(lambda: self.arerun_step(run_id, step, **kwargs))

    async def arerun_step(
        self,
        run_id: str,
        step: str,
        *,
        trace: bool = False,
        result_format: str = "object",
        cancellation_token: Any = None,
        session_id: str | None = None,
    ) -> Any:
        """Rerun ``step`` and its dependants (their approvals are cleared: a rerun needs new ones)."""
        check_format(result_format)
        if step not in {s.name for s in self._steps}:
            raise ValidationError(
                "LA-FLOW-STEP", f"the flow has no step {step!r}", details={"step": step}
            )
        record = await self._require(run_id)
        results = step_results(record, self._shape())
        targets = downstream(self._steps, [step])
        to_run = [s.name for s in self._steps if s.name in targets]
        approvals = {k: v for k, v in (record.get("approvals") or {}).items() if k not in targets}
        header = header_from(record)
        header["reruns"] = int(header.get("reruns") or 0) + 1  # saved when the rerun starts
        run = self._new_run(header, results, approvals, trace, cancellation_token, session_id)
        decision = await self.hooks.run(
            "on_rerun",
            {"run_id": run_id, "step": step, "steps": to_run},
            run.emit,
            **run._hook_context(step),
        )
        raise_hook_block(decision, "on_rerun")
        await run.call_store("clear_approvals", run_id, to_run)
        await run.call_store("clear_cancel", run_id)
        return format_result(
            await self._execute(run, to_run, kind="rerun", rerun_step=step), result_format
        )

    async def _execute(
        self,
        run: FlowRun,
        to_run: list[str],
        *,
        kind: str,
        rerun_step: str | None = None,
        created: bool = False,
    ) -> LightFlowResult:
        if self.executor is None:
            return await self._execute_here(
                run, to_run, kind=kind, rerun_step=rerun_step, created=created
            )
        plan = {
            "header": dict(run.header),
            "results": {n: r.to_dict() for n, r in run.results.items()},
            "approvals": dict(run.approvals),
            "to_run": list(to_run),
            "kind": kind,
            "rerun_step": rerun_step,
            "trace": run.trace_enabled,
            "session_id": None if run.session is None else run.session[1],
        }
        result = await self.executor.run_flow(
            self,
            plan,
            lambda: self._execute_here(
                run, to_run, kind=kind, rerun_step=rerun_step, created=created
            ),
        )
        if isinstance(result, dict):  # an executor may answer with a recorded to_dict()
            known = {f.name for f in fields(LightFlowResult)}
            data = {k: v for k, v in result.items() if k in known}
            data["steps"] = [LightFlowStepResult.from_dict(d) for d in data.get("steps") or ()]
            result = LightFlowResult(**data)
        assert isinstance(result, LightFlowResult)
        return result

    async def execute_plan(self, plan: dict[str, Any]) -> LightFlowResult:
        """Perform an execution an executor's ``run_flow`` was given, again (for executors)."""
        results = {n: LightFlowStepResult.from_dict(d) for n, d in plan["results"].items()}
        run = self._new_run(
            dict(plan["header"]),
            results,
            dict(plan["approvals"]),
            bool(plan.get("trace")),
            None,
            plan.get("session_id"),
        )
        # created=False: this runner claims the run, fencing out the one that stopped
        return await self._execute_here(
            run, list(plan["to_run"]), kind=plan["kind"], rerun_step=plan.get("rerun_step")
        )

    async def _execute_here(
        self,
        run: FlowRun,
        to_run: list[str],
        *,
        kind: str,
        rerun_step: str | None = None,
        created: bool = False,
    ) -> LightFlowResult:
        with self._active_lock:
            if run.run_id in self._active:
                raise ValidationError(
                    "LA-FLOW-RUN-ACTIVE", f"run {run.run_id!r} is already executing"
                )
            self._active[run.run_id] = run
        started = time.time()
        try:
            # From here on, a runner that resumes this run elsewhere fences us out (a new
            # run that create_run started is claimed already).
            if not created:
                await run.start(status="running", error=None, error_code=None, content=None)
            data = {
                "query": run.query,
                "steps": [s.name for s in self._steps],
                "run_id": run.run_id,
                "mode": kind,
            }
            if rerun_step:
                data["rerun_step"] = rerun_step
            run.emit("flow_start", data)
            with ProgressLine(
                f"flow {run.run_id}", total=len(to_run), enabled=self.progress
            ) as line:
                if line.enabled:
                    run.observers = [*run.observers, _StepCounter(line)]
                await run.execute(to_run)
            outcome = run.outcome()
            status, error, code, content = outcome
            if outcome != run.stored_outcome:  # else the last step's commit stored it
                await run.save_header(status=status, error=error, error_code=code, content=content)
            run.emit(
                "flow_end",
                {
                    "run_id": run.run_id,
                    "status": status,
                    "success": status == SUCCESS,
                    "error": error,
                    "duration_ms": round((time.time() - started) * 1000, 3),
                },
            )
            await run._flush_session()
        finally:
            with self._active_lock:
                self._active.pop(run.run_id, None)
        return LightFlowResult(
            content=content,
            steps=LightFlowSteps(run.results[s.name] for s in self._steps if s.name in run.results),
            trace_id=run.header.get("trace_id"),
            trace=run.trace if run.trace_enabled else None,
            error=error,
            run_id=run.run_id,
            status=status,
            error_code=code,
        )

    def _new_run(
        self,
        header: dict[str, Any],
        results: dict[str, LightFlowStepResult],
        approvals: dict[str, dict[str, Any]],
        trace: bool,
        token: Any,
        session_id: str | None,
    ) -> FlowRun:
        session = None
        if self.session_store is not None:
            session = (self.session_store, session_id or header["run_id"])
        return FlowRun(
            steps=list(self._steps),
            store=self.store,
            hooks=self.hooks,
            header=header,
            results=results,
            approvals=approvals,
            retry_backoff=self.retry_backoff,
            retry_backoff_max=self.retry_backoff_max,
            trace_enabled=bool(trace),
            observers=self.observers,
            session=session,
            cancellation_token=token,
            max_concurrency=self.max_concurrency,
            executor=self.executor,
        )

    # -- records -------------------------------------------------------------

    async def _load(self, run_id: str) -> dict[str, Any] | None:
        if getattr(self.store, "blocking", True):
            return await run_blocking(self.store.load_run, run_id)
        return self.store.load_run(run_id)

    async def _require(self, run_id: str) -> dict[str, Any]:
        record = await self._load(check_run_id(run_id))
        if record is None:
            raise ValidationError(
                "LA-FLOW-RUN-NOT-FOUND", f"no flow run {run_id!r}", details={"run_id": run_id}
            )
        return record

    def get_run(self, run_id: str) -> dict[str, Any] | None:
        """The stored record ``{run_id, query, status, error, steps, approvals, updated_at, …}`` or
        ``None``; a step that has not started is listed as ``pending``, as in the seeds."""
        record = self.store.load_run(check_run_id(run_id))
        if record is None:
            return None
        order = [s.get("name") for s in record.get("flow") or ()] or [s.name for s in self._steps]
        started = {s["name"] for s in record.get("steps") or ()}
        pending = [LightFlowStepResult(name=n).to_dict() for n in order if n not in started]
        if pending:
            by_name = {s["name"]: s for s in record["steps"]}
            by_name.update((p["name"], p) for p in pending)
            record["steps"] = [by_name[n] for n in order] + [
                s for s in record["steps"] if s["name"] not in order
            ]
        return record

    def get_result(self, run_id: str) -> LightFlowResult:
        """The stored run as a :class:`LightFlowResult` (``LA-FLOW-RUN-NOT-FOUND`` when missing)."""
        record = self.get_run(run_id)
        if record is None:
            raise ValidationError(
                "LA-FLOW-RUN-NOT-FOUND", f"no flow run {run_id!r}", details={"run_id": run_id}
            )
        return result_from_record(record)

    def list_runs(self) -> list[dict[str, Any]]:
        """Every stored run's header (no steps), most recently updated first."""
        return self.store.list_runs()

    def approve(self, run_id: str, step: str, decision: Any = True) -> dict[str, Any]:
        """Persist a decision for a ``requires_approval`` step; :meth:`resume` then applies it.

        ``decision`` is ``True``/``False``, ``"approve"``/``"reject"``, a dict
        (``{"action": "edit", "query": ...}``, ``{"action": "respond", "response": ...}``) or an
        ``ApprovalDecision``. Works from any process that shares the store.
        """
        return record_decision(self.store, self._steps, self._shape(), run_id, step, decision)

    def cancel(self, run_id: str | None = None, reason: str | None = None) -> int:
        """Cancel ``run_id`` (or every run this flow executes in this process); returns how many.

        A run executing in this process stops at once (running steps are cancelled); a
        stored run executing elsewhere stops before its next step (the request is stored).
        """
        with self._active_lock:
            active = (
                list(self._active.values())
                if run_id is None
                else [r for r in self._active.values() if r.run_id == run_id]
            )
        for run in active:
            run.request_cancel(reason)
        if run_id is not None and not active:
            record = self.get_run(run_id)
            if record is None:
                return 0
            self.store.request_cancel(run_id, reason)
            if record.get("status") == "running":
                return 1
            header = header_from(record)
            header.update(
                status="cancelled",
                error=f"[LA-CANCELLED] {reason or 'cancelled'}",
                error_code="LA-CANCELLED",
                updated_at=time.time(),
            )
            self.store.save_header(run_id, header)
            return 1
        return len(active)

    def describe(self) -> dict[str, Any]:
        """The flow's shape and step options (JSON-safe, without the agents)."""
        skip = {"agent", "fallback_agent", "cancel_if", "approval_handler", "query", "tools"}
        out = []
        for s in self._steps:
            data = {f.name: getattr(s, f.name) for f in fields(s) if f.name not in skip}
            data["depends_on"] = list(s.depends_on)
            data["has_fallback"] = s.fallback_agent is not None
            out.append(data)
        return {"steps": out}


class _StepCounter:
    """A run observer that advances a progress line at each finished step."""

    def __init__(self, line: ProgressLine) -> None:
        self.line = line

    def on_event(self, event: dict[str, Any]) -> None:
        if event.get("type") == "step_end":
            data = event.get("data") or {}
            self.line.advance(note=f"{data.get('step')}: {data.get('status')}")


def _session_store(spec: Any) -> Any:
    """The store for ``session_store=``, resolved as ``LightAgent`` resolves it; ``LA-CONFIG`` when unusable."""
    from lightagent.run.options import resolve_store

    store = resolve_store(spec)
    if not callable(getattr(store, "append", None)):
        raise ConfigurationError(
            "LA-CONFIG",
            f"session_store= got a {type(store).__name__}, not a session store (no append method)",
            hint='Pass a SessionStore, a registered name such as "sqlite" or a URL such as "sqlite:///sessions.db".',
        )
    return store
