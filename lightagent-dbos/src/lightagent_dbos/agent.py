"""``DBOSAgent``: a ``LightAgent`` whose runs are DBOS workflows."""

from __future__ import annotations

import asyncio
import hashlib
import threading
import uuid
from collections.abc import AsyncIterator, Collection
from typing import Any

from dbos import DBOS, Queue, SetWorkflowID, WorkflowHandle
from lightagent.errors import ConfigurationError
from lightagent.loop import run_machine
from lightagent.results import RunResult
from lightagent.run.prepare import build_spec
from lightagent.run.run_options import RunOptions
from lightagent.run.streaming import chunk_events, consumer_chunk, done_event, output_event

from lightagent_dbos.driver import APPROVAL_EVENT, DurableDriver, approval_topic
from lightagent_dbos.replay import ReplayBinding
from lightagent_dbos.stream import channel_for, open_channel

__all__ = ["DURABLE_OPTIONS", "DBOSAgent", "formatted", "run_ids", "wrapping"]

#: The run options a durable run takes: plain data, stored with the workflow's inputs
#: so a recovering process can run it again.
DURABLE_OPTIONS: frozenset[str] = frozenset(
    {
        "user_id",
        "session_id",
        "metadata",
        "history",
        "max_retry",
        "max_tool_iterations",
        "idempotency_key",
        "model_options",
        "trace",
        "parent_trace_id",
        "run_group_id",
    }
)

_names: dict[str, DBOSAgent] = {}
_names_lock = threading.Lock()


class DBOSAgent:
    """Runs ``agent`` as a DBOS workflow named ``lightagent.<name>``, every effect a step.

    Build it before ``DBOS.launch()`` (a recovering process finds the workflow by its
    name), once per name in a process. ``idempotent_tools`` may run again when a crash
    interrupted them (DBOS retries their step); any other interrupted tool call fails
    the run with ``LA-DBOS-UNKNOWN-OUTCOME``. A call to one of ``approval_tools`` waits,
    durably, for :meth:`approve` (up to ``approval_timeout`` seconds).
    """

    def __init__(
        self,
        agent: Any,
        *,
        name: str,
        idempotent_tools: Collection[str] = (),
        approval_tools: Collection[str] = (),
        approval_timeout: float = 3600.0,
    ) -> None:
        if not isinstance(name, str) or not name:
            raise ConfigurationError("LA-CONFIG", "DBOSAgent needs a name= (a non-empty str)")
        for label, names in (
            ("idempotent_tools", idempotent_tools),
            ("approval_tools", approval_tools),
        ):
            if isinstance(names, str):
                raise ConfigurationError(
                    "LA-CONFIG",
                    f"{label}= takes a collection of tool names, not one str",
                    hint=f'Write {label}=["{names}"].',
                )
        self.agent = agent
        self.name = name
        self.workflow_name = f"lightagent.{name}"
        self.idempotent_tools = frozenset(idempotent_tools)
        self.approval_tools = frozenset(approval_tools)
        self.approval_timeout = float(approval_timeout)
        with _names_lock:
            if name in _names:
                raise ConfigurationError(
                    "LA-CONFIG",
                    f"a DBOSAgent named {name!r} already exists in this process",
                    hint="Give each durable agent its own name= (it names its workflow).",
                )
            _names[name] = self

        def workflow(query: str | None, options: dict[str, Any]) -> RunResult:
            return self._run_workflow(query, options)

        workflow.__qualname__ = workflow.__name__ = f"lightagent_{name}"
        self._workflow = DBOS.workflow(name=self.workflow_name)(workflow)

    # -- running --------------------------------------------------------------------
    def run(
        self,
        query: str,
        *,
        workflow_id: str | None = None,
        idempotency_key: str | None = None,
        result_format: str = "str",
        **options: Any,
    ) -> Any:
        """Run durably and return what ``LightAgent.run`` would (``result_format``).

        ``workflow_id`` names the run in DBOS: running again with the same id returns
        the first run's result (or waits for it) instead of running twice. Without one,
        an ``idempotency_key`` names it (``lightagent.<name>:<key>``), else DBOS does.
        """
        plain = _plain_options(options, idempotency_key)
        workflow_id = self._workflow_id(workflow_id, idempotency_key)
        with SetWorkflowID(workflow_id) if workflow_id else _nothing():
            result = self._workflow(query, plain)
        return formatted(result, result_format)

    async def arun(
        self,
        query: str,
        *,
        workflow_id: str | None = None,
        idempotency_key: str | None = None,
        result_format: str = "str",
        **options: Any,
    ) -> Any:
        """:meth:`run` from async code (the workflow runs in a worker thread)."""
        return await asyncio.to_thread(
            self.run,
            query,
            workflow_id=workflow_id,
            idempotency_key=idempotency_key,
            result_format=result_format,
            **options,
        )

    async def astream(
        self,
        query: str,
        *,
        workflow_id: str | None = None,
        idempotency_key: str | None = None,
        result_format: str = "str",
        **options: Any,
    ) -> AsyncIterator[Any]:
        """Run durably and stream it as ``LightAgent.astream`` does (chunk dicts, or
        ``StreamEvent``s with ``result_format="event"``).

        The workflow runs in a worker thread and its output comes here live. A consumer
        that stops early leaves the run going; if the process dies, the run is recovered
        with the others, and its result (not its stream) is kept.
        """
        if result_format not in ("str", "event"):
            raise ConfigurationError(
                "LA-CONFIG",
                f"astream(result_format={result_format!r}): use 'str' (chunks) or 'event'",
            )
        plain = {**_plain_options(options, idempotency_key), "stream": True}
        wid = self._workflow_id(workflow_id, idempotency_key) or uuid.uuid4().hex
        trace_id = run_ids(wid)[1]
        channel = open_channel(wid)

        def durable_run() -> RunResult:
            with SetWorkflowID(wid):
                return self._workflow(query, plain)

        task = asyncio.ensure_future(asyncio.to_thread(durable_run))
        task.add_done_callback(lambda _: channel.push("done", None))
        events = result_format == "event"
        try:
            while True:
                kind, item = await channel.queue.get()
                if kind == "done":
                    break
                if kind == "chunk":
                    if events:
                        for event in chunk_events(item, trace_id):
                            yield event
                    else:
                        yield consumer_chunk(item)
                elif events:
                    yield output_event(item, trace_id)
                else:
                    yield item.item
            result = await task
            if events:
                yield done_event(result)
        finally:
            channel.close()

    def start(
        self,
        query: str,
        *,
        workflow_id: str | None = None,
        idempotency_key: str | None = None,
        **options: Any,
    ) -> WorkflowHandle[RunResult]:
        """Start the run in the background; ``handle.get_result()`` is its ``RunResult``."""
        plain = _plain_options(options, idempotency_key)
        workflow_id = self._workflow_id(workflow_id, idempotency_key)
        with SetWorkflowID(workflow_id) if workflow_id else _nothing():
            return DBOS.start_workflow(self._workflow, query, plain)

    def enqueue(
        self,
        queue: Queue | str,
        query: str,
        *,
        workflow_id: str | None = None,
        idempotency_key: str | None = None,
        **options: Any,
    ) -> WorkflowHandle[RunResult]:
        """Put the run on DBOS ``queue`` (a ``Queue`` or a registered queue's name): any
        process that launched DBOS with this agent registered may serve it."""
        plain = _plain_options(options, idempotency_key)
        workflow_id = self._workflow_id(workflow_id, idempotency_key)
        if isinstance(queue, str):
            found = DBOS.retrieve_queue(queue)
            if found is None:
                raise ConfigurationError(
                    "LA-CONFIG",
                    f"no DBOS queue named {queue!r}",
                    hint="Register it first: DBOS.register_queue(name, global_concurrency=...).",
                )
            queue = found
        with SetWorkflowID(workflow_id) if workflow_id else _nothing():
            return queue.enqueue(self._workflow, query, plain)

    def _workflow_id(self, workflow_id: str | None, idempotency_key: str | None) -> str | None:
        # a run keyed by the caller (a LightFlow step, a retried request) is one workflow:
        # asked again, DBOS answers from it instead of running the agent twice
        if workflow_id is None and idempotency_key is not None:
            return f"{self.workflow_name}:{idempotency_key}"
        return workflow_id

    # -- approvals ------------------------------------------------------------------
    @staticmethod
    def pending_approval(workflow_id: str, timeout_seconds: float = 60.0) -> dict[str, Any] | None:
        """The tool call run ``workflow_id`` waits on (``call_id``, ``tool``, ``arguments``),
        waiting up to ``timeout_seconds`` for one; None when it waits for none."""
        value = DBOS.get_event(workflow_id, APPROVAL_EVENT, timeout_seconds=timeout_seconds)
        return value if isinstance(value, dict) else None

    @staticmethod
    def approve(
        workflow_id: str, call_id: str, *, approved: bool = True, reason: str | None = None
    ) -> None:
        """Decide on tool call ``call_id`` of run ``workflow_id`` (a durable message: it
        waits in DBOS for a run that is down, until it recovers)."""
        DBOS.send(
            workflow_id,
            {"approved": bool(approved), "reason": reason},
            topic=approval_topic(call_id),
        )

    # -- the workflow ---------------------------------------------------------------
    def _run_workflow(self, query: str | None, options: dict[str, Any]) -> RunResult:
        workflow_id = DBOS.workflow_id or ""
        run_id, trace_id = run_ids(workflow_id)
        opts = RunOptions(**options)
        binding = None
        if opts.session_id is not None:
            inner = self.agent.session_binding
            if inner is not None:
                binding = ReplayBinding(inner)
        # the ids a replay must reuse: tool-call idempotency keys derive from the run id
        spec = build_spec(self.agent, query, opts, run_id=run_id, session_binding=binding)
        spec.ctx.trace_id = trace_id
        driver = DurableDriver(
            spec,
            idempotent_tools=self.idempotent_tools,
            approval_tools=self.approval_tools,
            approval_timeout=self.approval_timeout,
            channel=channel_for(workflow_id) if opts.stream else None,
        )
        result: RunResult = driver.drive(run_machine(spec))
        return result

    def __repr__(self) -> str:
        return f"DBOSAgent(name={self.name!r}, agent={self.agent!r})"


def wrapping(agent: Any) -> DBOSAgent | None:
    """The :class:`DBOSAgent` of this process that wraps ``agent`` (None if none does;
    ``LA-CONFIG`` if several do: which one should run it is then unclear)."""
    with _names_lock:
        found = [durable for durable in _names.values() if durable.agent is agent]
    if len(found) > 1:
        raise ConfigurationError(
            "LA-CONFIG",
            f"{len(found)} DBOSAgents wrap this agent: " + ", ".join(sorted(d.name for d in found)),
            hint="Wrap an agent in one DBOSAgent; build another LightAgent for another name.",
        )
    return found[0] if found else None


def run_ids(workflow_id: str) -> tuple[str, str]:
    """The run id and trace id of the run that is workflow ``workflow_id`` (the same on
    every replay, so tool-call idempotency keys are too)."""
    digest = hashlib.sha256(workflow_id.encode("utf-8")).hexdigest()
    return f"run_{digest[:24]}", f"trace_{digest[24:48]}"


def formatted(result: RunResult, result_format: str) -> Any:
    """``result`` as ``LightAgent.run`` gives it for ``result_format``."""
    if result_format == "str":
        return result.content if result.content is not None else ""
    if result_format == "dict":
        return result.to_dict()
    if result_format == "object":
        return result
    raise ConfigurationError(
        "LA-CONFIG",
        f"result_format={result_format!r} is not one of 'str', 'dict', 'object'",
        hint="A durable run is not streamed; use 'str', 'dict' or 'object'.",
    )


def _plain_options(options: dict[str, Any], idempotency_key: str | None) -> dict[str, Any]:
    other = sorted(set(options) - DURABLE_OPTIONS)
    if other:
        raise ConfigurationError(
            "LA-DBOS-OPTION",
            f"{', '.join(other)} cannot be part of a durable run",
            hint="Pass only plain-data options (" + ", ".join(sorted(DURABLE_OPTIONS)) + ").",
            details={"options": other},
        )
    plain = dict(options)
    if idempotency_key is not None:
        plain["idempotency_key"] = idempotency_key
    return plain


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None
