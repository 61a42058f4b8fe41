"""Workers: what runs a task. Callables, factories, and an adapter for any agent."""

from __future__ import annotations

import asyncio
import inspect
import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from lightagent_dag.errors import DAGError, DAGWorkerProtocolError
from lightagent_dag.records import DAGRun, DAGTask
from lightagent_dag.specs import TaskOutcome, TaskSpec

__all__ = [
    "CallableWorker",
    "DAGWorker",
    "LightAgentWorkerAdapter",
    "RegistryWorkerFactory",
    "TaskContext",
    "WorkerFactory",
    "normalize_task_outcome",
]


@dataclass(frozen=True)
class TaskContext:
    """What a worker gets for one attempt: the task, its verified inputs and a narrowed context.

    A worker has no handle on the store or the artifact store: it can only return an
    outcome. ``dependency_artifacts`` maps each dependency's task id to its published,
    hash-checked bytes (in the ``integrate`` phase these include the children's).
    """

    run: DAGRun
    task: DAGTask
    attempt_id: str
    fence: int
    worker_id: str
    security_context: Any
    dependency_artifacts: dict[str, bytes] = field(default_factory=dict)
    fenced: threading.Event = field(default_factory=threading.Event, compare=False)

    @property
    def spec(self) -> TaskSpec:
        """The task's spec."""
        return self.task.spec

    @property
    def goal(self) -> str:
        """The task's goal."""
        return self.task.spec.goal

    @property
    def run_id(self) -> str:
        """The run's id."""
        return self.run.run_id

    @property
    def task_id(self) -> str:
        """The task's id."""
        return self.task.task_id

    @property
    def phase(self) -> str:
        """``execute``, or ``integrate`` after a decomposition's children are verified."""
        return self.task.phase

    @property
    def acceptance_contract(self) -> Any:
        """What the verifier will check."""
        return self.task.spec.acceptance_contract

    def is_fenced(self) -> bool:
        """True once this attempt lost its lease: stop side effects; nothing it returns will land."""
        return self.fenced.is_set()

    def dependency_text(self, task_id: str) -> str:
        """A dependency's artifact decoded as UTF-8."""
        return self.dependency_artifacts[task_id].decode("utf-8", "replace")


@runtime_checkable
class DAGWorker(Protocol):
    """Runs one attempt of a task and returns a :class:`TaskOutcome`."""

    async def execute(self, context: TaskContext) -> TaskOutcome: ...


@runtime_checkable
class WorkerFactory(Protocol):
    """Creates the worker for a key, per attempt, and releases it afterwards."""

    def create(self, key: str, context: TaskContext) -> DAGWorker: ...

    def release(self, worker: DAGWorker) -> None: ...


def normalize_task_outcome(raw: Any) -> TaskOutcome:
    """A TaskOutcome from what a worker returned: a TaskOutcome, its mapping or JSON form, or str/bytes (a candidate)."""
    if isinstance(raw, TaskOutcome):
        return raw
    if isinstance(raw, Mapping):
        return TaskOutcome.from_dict(raw)
    if isinstance(raw, bytes):
        return TaskOutcome.candidate(raw, media_type="application/octet-stream")
    if isinstance(raw, str):
        text = raw.strip()
        if text.startswith("{"):
            try:
                data = json.loads(text)
            except ValueError:
                data = None
            if isinstance(data, dict) and "kind" in data:
                return TaskOutcome.from_dict(data)
        return TaskOutcome.candidate(raw)
    raise DAGWorkerProtocolError(
        "LA-DAG-WORKER-PROTOCOL",
        f"a worker returned {type(raw).__name__}; return TaskOutcome.candidate/decompose/blocked",
    )


class CallableWorker:
    """A worker from a function ``fn(context)``; sync functions run in a thread, async ones on the loop."""

    def __init__(self, fn: Callable[[TaskContext], Any]) -> None:
        if not callable(fn):
            raise DAGError("LA-DAG-INVALID", f"a worker must be callable, got {type(fn).__name__}")
        self.fn = fn

    async def execute(self, context: TaskContext) -> TaskOutcome:
        """Call the function and normalise what it returns."""
        if inspect.iscoroutinefunction(self.fn):
            raw = await self.fn(context)
        else:
            raw = await asyncio.to_thread(self.fn, context)
            if inspect.isawaitable(raw):
                raw = await raw
        return normalize_task_outcome(raw)


def _as_worker(obj: Any) -> DAGWorker:
    if hasattr(obj, "execute") and callable(obj.execute):
        return obj
    if callable(obj):
        return CallableWorker(obj)
    raise DAGError(
        "LA-DAG-INVALID", f"not a worker: {obj!r} (give a callable or an object with execute())"
    )


class RegistryWorkerFactory:
    """Workers and worker factories by key (what ``LightDAG.register_worker`` fills)."""

    def __init__(self) -> None:
        self._workers: dict[str, DAGWorker] = {}
        self._factories: dict[str, Callable[..., Any]] = {}

    def register(self, key: str, worker: Any) -> None:
        """A shared worker (a callable or an object with ``execute``) for ``key``."""
        if not isinstance(key, str) or not key:
            raise DAGError("LA-DAG-INVALID", "a worker key must be a non-empty string")
        self._workers[key] = _as_worker(worker)
        self._factories.pop(key, None)

    def register_factory(self, key: str, factory: Callable[..., Any]) -> None:
        """``factory(context)`` (or ``factory()``) builds a fresh worker for every attempt."""
        if not isinstance(key, str) or not key or not callable(factory):
            raise DAGError("LA-DAG-INVALID", "register_factory needs a key and a callable")
        self._factories[key] = factory
        self._workers.pop(key, None)

    def keys(self) -> list[str]:
        """Every registered worker key."""
        return sorted({*self._workers, *self._factories})

    def __contains__(self, key: object) -> bool:
        return key in self._workers or key in self._factories

    def create(self, key: str, context: TaskContext) -> DAGWorker:
        """The worker for ``key`` (a fresh one when a factory is registered)."""
        if key in self._workers:
            return self._workers[key]
        factory = self._factories.get(key)
        if factory is None:
            raise DAGError(
                "LA-DAG-RECOVERY-CONFIG-MISMATCH", f"no worker registered for key {key!r}"
            )
        try:
            made = factory(context) if _accepts_argument(factory) else factory()
        except TypeError:
            made = factory()
        return _as_worker(made)

    def release(self, worker: DAGWorker) -> None:
        """Close factory-made workers that have ``close()``."""
        if worker in self._workers.values():
            return
        target = getattr(worker, "fn", worker)
        close = getattr(target, "close", None) or getattr(worker, "close", None)
        if callable(close):
            close()


def _accepts_argument(fn: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(
        p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL) for p in params
    )


def _default_prompt(context: TaskContext) -> str:
    parts = [
        f"Task: {context.goal}",
        f"Acceptance contract: {json.dumps(context.acceptance_contract, default=str)}",
    ]
    for task_id, data in sorted(context.dependency_artifacts.items()):
        parts.append(f"Output of {task_id}:\n{data.decode('utf-8', 'replace')}")
    parts.append(
        'Answer with the result only, or with JSON {"kind": "blocked", "blocker": "<why>"} if you cannot proceed.'
    )
    return "\n\n".join(parts)


class LightAgentWorkerAdapter:
    """Runs any object with ``arun(query)`` or ``run(query)`` — a ``LightAgent`` — as a worker.

    The answer becomes the candidate; an answer that is a JSON TaskOutcome mapping
    (``{"kind": "blocked", ...}``, a decomposition …) is taken as that outcome. A run
    that reports an error raises :class:`DAGWorkerProtocolError` (the attempt fails and
    is retried with backoff).
    """

    def __init__(
        self,
        agent: Any,
        *,
        prompt_builder: Callable[[TaskContext], str] | None = None,
        run_kwargs: Mapping[str, Any] | None = None,
    ) -> None:
        if not (callable(getattr(agent, "arun", None)) or callable(getattr(agent, "run", None))):
            raise DAGError(
                "LA-DAG-INVALID", "LightAgentWorkerAdapter needs an object with arun() or run()"
            )
        self.agent = agent
        self.prompt_builder = prompt_builder or _default_prompt
        self.run_kwargs = dict(run_kwargs or {})

    async def execute(self, context: TaskContext) -> TaskOutcome:
        """Ask the agent and turn its answer into an outcome."""
        prompt = self.prompt_builder(context)
        arun = getattr(self.agent, "arun", None)
        if callable(arun):
            result = await arun(prompt, **self.run_kwargs)
        else:
            result = await asyncio.to_thread(self.agent.run, prompt, **self.run_kwargs)
        error = getattr(result, "error", None)
        if error:
            raise DAGWorkerProtocolError(
                "LA-DAG-WORKER-PROTOCOL", f"the agent's run failed: {str(error)[:300]}"
            )
        content = getattr(result, "content", result)
        if not isinstance(content, str | bytes | Mapping | TaskOutcome):
            content = str(content)
        return normalize_task_outcome(content)
