"""LightDAG: verified dynamic task graphs, persisted in a store, run by any number of workers."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from lightagent.blocking import run_blocking
from lightagent.bridge import run_private
from lightagent.keywords import seeds_keywords

from lightagent_dag.artifacts import ArtifactStore, LocalArtifactStore
from lightagent_dag.errors import DAGError, DAGFencedError
from lightagent_dag.executor import AttemptRunner
from lightagent_dag.observe import notify
from lightagent_dag.records import DAGEvent, DAGRun, DAGRunResult, DAGTask
from lightagent_dag.specs import DAGConfig, TaskSpec, coerce_specs
from lightagent_dag.sql.store import SqliteTaskGraphStore, SqlTaskGraphStore
from lightagent_dag.states import DAGRunStatus
from lightagent_dag.verifiers import as_verifier
from lightagent_dag.workers import RegistryWorkerFactory

__all__ = ["LightDAG"]


def default_worker_id() -> str:
    """``host:pid:random`` — unique per process start."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


def _open_store(store: Any) -> SqlTaskGraphStore:
    if store is None:
        return SqliteTaskGraphStore(Path(".lightagent") / "dag.sqlite3")
    if isinstance(store, SqlTaskGraphStore):
        return store
    if isinstance(store, str) and "://" in store:
        return SqlTaskGraphStore(store)
    if isinstance(store, str | os.PathLike):
        return SqliteTaskGraphStore(store)
    raise DAGError(
        "LA-CONFIG",
        f"store must be a SqlTaskGraphStore, a URL or a path, got {type(store).__name__}",
    )


def _registered_artifact_store(spec: Any) -> ArtifactStore | str | os.PathLike[str] | None:
    """``("name", {...})`` or ``{"provider": "name", ...}``: the artifact store registered
    under that name (``register_artifact_stores``), built with that configuration. Any
    other value is returned as given (a plain string is a folder, not a name)."""
    if spec is None or isinstance(spec, str | os.PathLike):
        return spec
    from lightagent.providers import provider_reference, resolve_provider

    if provider_reference(spec) is None:
        return spec
    return resolve_provider("artifact_store", spec, param="artifact_store")


def _verifier_names(verifiers: Any) -> list[Any]:
    if verifiers is None:
        return []
    if isinstance(verifiers, str) or not isinstance(verifiers, Iterable):
        raise DAGError(
            "LA-DAG-INVALID",
            "verifiers must be a mapping of key -> verifier, or a list of registered "
            f"verifier names, got {type(verifiers).__name__}",
        )
    return list(verifiers)


def _registered_verifier(spec: Any) -> tuple[str, Any]:
    """The verifier registered (``register_verifiers``) under a name, as ``(key, verifier)``.

    ``"name"`` takes the registered object; a registered class is instantiated.
    ``("name", {...})`` calls the registered factory with that configuration.
    The name is the key tasks select it by (``TaskSpec.verifier_key``).
    """
    from lightagent.providers import build_provider, provider_reference, resolve_provider

    reference = provider_reference(spec)
    if reference is None or "://" in reference[0]:
        raise DAGError(
            "LA-DAG-INVALID",
            f"verifiers=[...] takes registered verifier names, got {spec!r}",
            hint='Pass verifiers={"key": verifier} for your own objects, or register them '
            "with the register_verifiers hook.",
        )
    name, config = reference
    if config:
        return name, resolve_provider("verifier", spec, param="verifiers")
    from lightagent.plugins import get_registry

    registry = get_registry()
    if ("verifier", name) not in registry:
        raise DAGError(
            "LA-DAG-VERIFIER-UNAVAILABLE",
            f"no verifier is registered under {name!r} "
            f"(registered: {', '.join(registry.names('verifier')) or 'none'})",
            hint="Install the plugin that registers it (`lightagent plugins` lists them), "
            'or pass verifiers={"key": verifier}.',
            details={"verifier": name},
        )
    found = registry.get("verifier", name).load()
    if isinstance(found, type):
        found = build_provider("verifier", name, found, {}, param="verifiers")
    return name, found


class LightDAG:
    """Verified dynamic task graphs.

    Workers return a candidate, a decomposition or a blocker; only the verifiers the
    application registered here can publish an artifact or accept a decomposition.
    State lives in the store (SQLite file by default, PostgreSQL for many hosts), so
    ``run`` can be called again after a crash and ``lightagent dag worker`` processes
    can share the work.
    """

    def __init__(
        self,
        *,
        store: SqlTaskGraphStore | str | os.PathLike[str] | None = None,
        artifact_store: ArtifactStore
        | str
        | os.PathLike[str]
        | tuple[str, Mapping[str, Any]]
        | Mapping[str, Any]
        | None = None,
        worker_factory: RegistryWorkerFactory | None = None,
        verifiers: Mapping[str, Any] | Sequence[str | tuple[str, Mapping[str, Any]]] | None = None,
        capability_gate: Any = None,
        config: DAGConfig | None = None,
        scheduler_id: str | None = None,
        session_store: Any = None,
    ) -> None:
        self.store = _open_store(store)
        chosen = _registered_artifact_store(artifact_store)
        if chosen is None and self.store.pg:
            # Workers on several hosts share the database, not a folder.
            from lightagent_dag.sql.blobs import SqlArtifactStore

            chosen = SqlArtifactStore(self.store)
        elif chosen is None or isinstance(chosen, str | os.PathLike):
            chosen = LocalArtifactStore(chosen or Path(".lightagent") / "artifacts")
        self.artifact_store: ArtifactStore = chosen
        self.worker_factory = worker_factory or RegistryWorkerFactory()
        self.verifiers: dict[str, Any] = {}
        if isinstance(verifiers, Mapping):
            for key, verifier in verifiers.items():
                self.register_verifier(key, verifier)
        else:
            for spec in _verifier_names(verifiers):
                self.register_verifier(*_registered_verifier(spec))
        # Gate decisions of the default gate are buffered here and written to the
        # run's event log as ``dag.capability.gate`` (the gate's sink must not block).
        self._audit: deque[tuple[str, dict[str, Any]]] = deque(maxlen=10_000)
        if capability_gate is None:
            from lightagent_control.security import CapabilityGate

            capability_gate = CapabilityGate(
                audit=lambda kind, data: self._audit.append((kind, data))
            )
        self.capability_gate = capability_gate
        self.config = config or DAGConfig()
        if not isinstance(self.config, DAGConfig):
            raise DAGError("LA-CONFIG", "config must be a DAGConfig")
        self.scheduler_id = scheduler_id or default_worker_id()
        self.session_store = session_store

    # -- registration ------------------------------------------------------------------

    @seeds_keywords(worker_or_callable="worker")
    def register_worker(self, key: str, worker: Any) -> None:
        """Register a worker for ``key``: a callable ``fn(context)`` or an object with ``execute``."""
        self.worker_factory.register(key, worker)

    def register_worker_factory(self, key: str, factory: Callable[..., Any]) -> None:
        """Register ``factory(context)`` to build a fresh worker for every attempt of ``key``."""
        self.worker_factory.register_factory(key, factory)

    def register_verifier(self, key: str, verifier: Any) -> None:
        """Register an application-owned verifier (an object with ``verify`` or a callable)."""
        if not isinstance(key, str) or not key:
            raise DAGError("LA-DAG-INVALID", "a verifier key must be a non-empty string")
        self.verifiers[key] = as_verifier(key, verifier)

    # -- runs ----------------------------------------------------------------------------

    def create_run(
        self,
        root_tasks: Iterable[TaskSpec | Mapping[str, Any]],
        *,
        run_id: str | None = None,
        context: Any = None,
        root_task_ids: Sequence[str] | None = None,
        check_keys: bool = True,
    ) -> DAGRun:
        """Persist a new run (idempotent: the same id with the same tasks returns the stored run).

        ``context`` must be a ``SecurityContext`` with ``tenant_id`` and ``project_id``.
        ``root_task_ids`` default to the tasks nothing depends on; the run succeeds when
        they are all verified. ``check_keys=False`` lets a client that only submits work
        (the workers run elsewhere) skip the registered-key check.
        """
        from lightagent_dag.graph import check_graph

        security = self._identity(context)
        specs = coerce_specs(root_tasks)
        if not specs:
            raise DAGError("LA-DAG-INVALID", "a run needs at least one task")
        ids = [s.task_id for s in specs]
        duplicates = sorted({t for t in ids if ids.count(t) > 1})
        if duplicates:
            raise DAGError("LA-DAG-INVALID", f"duplicate task ids: {duplicates}")
        self._check_limits(len(specs), sum(len(s.depends_on) for s in specs))
        check_graph({s.task_id: s.depends_on for s in specs})
        if check_keys:
            self._check_keys(specs)
        depended = {d for s in specs for d in s.depends_on}
        roots = (
            list(root_task_ids)
            if root_task_ids is not None
            else [t for t in ids if t not in depended]
        )
        unknown = [r for r in roots if r not in ids]
        if unknown or not roots:
            raise DAGError(
                "LA-DAG-UNKNOWN-DEPENDENCY", f"root task ids not in the run: {unknown or roots}"
            )
        run_id = run_id or uuid.uuid4().hex
        if not isinstance(run_id, str) or not run_id or len(run_id) > 200:
            raise DAGError(
                "LA-DAG-INVALID", "run_id must be a non-empty string of at most 200 characters"
            )
        security = security.narrow(run_id=run_id) if security.run_id is None else security
        if security.run_id != run_id:
            raise DAGError(
                "LA-DAG-IDENTITY-REQUIRED",
                f"context is for run {security.run_id!r}, not {run_id!r}",
            )
        run, _created = self.store.create_run(
            run_id,
            specs,
            tenant_id=security.tenant_id,
            project_id=security.project_id,
            user_id=security.user_id or "",
            context=security.to_dict(),
            root_task_ids=roots,
            config=self.config,
        )
        return run

    async def acreate_run(
        self, root_tasks: Iterable[TaskSpec | Mapping[str, Any]], **kwargs: Any
    ) -> DAGRun:
        """Async :meth:`create_run` (the store call runs in a thread)."""
        return await run_blocking(lambda: self.create_run(root_tasks, **kwargs))

    def _check_limits(self, tasks: int, edges: int) -> None:
        from lightagent_dag.errors import DAGLimitError

        if tasks > self.config.max_tasks:
            raise DAGLimitError("max_tasks", tasks, self.config.max_tasks)
        if edges > self.config.max_edges:
            raise DAGLimitError("max_edges", edges, self.config.max_edges)

    def _check_keys(self, specs: Iterable[TaskSpec]) -> None:
        for spec in specs:
            if spec.worker_key not in self.worker_factory:
                raise DAGError(
                    "LA-DAG-RECOVERY-CONFIG-MISMATCH",
                    f"task {spec.task_id!r} needs worker {spec.worker_key!r}, which is not registered",
                )
            for key in (spec.verifier_key, spec.decomposer_key):
                if key is not None and key not in self.verifiers:
                    raise DAGError(
                        "LA-DAG-VERIFIER-UNAVAILABLE",
                        f"task {spec.task_id!r} needs verifier {key!r}, which is not registered",
                    )

    @staticmethod
    def _identity(context: Any) -> Any:
        from lightagent_control.security import SecurityContext

        if context is None or not isinstance(context, SecurityContext):
            raise DAGError(
                "LA-DAG-IDENTITY-REQUIRED",
                "create_run needs context=SecurityContext(tenant_id=..., project_id=...)",
            )
        if not context.tenant_id or not context.project_id:
            raise DAGError(
                "LA-DAG-IDENTITY-REQUIRED",
                "the SecurityContext needs both tenant_id and project_id",
            )
        return context

    def _check_context(self, run: DAGRun, context: Any) -> None:
        if context is None:
            return
        for name in ("tenant_id", "project_id", "run_id"):
            expected = run.run_id if name == "run_id" else getattr(run, name)
            given = getattr(context, name, None)
            if (given is not None and given != expected) or (name != "run_id" and given is None):
                raise DAGError(
                    "LA-DAG-IDENTITY-REQUIRED",
                    f"context {name}={given!r} does not match run {run.run_id!r} ({expected!r})",
                )

    def runner(
        self, *, worker_id: str | None = None, on_attempt: Callable[..., None] | None = None
    ) -> AttemptRunner:
        """An :class:`AttemptRunner` over this DAG's store, workers and verifiers."""
        return AttemptRunner(
            store=self.store,
            artifact_store=self.artifact_store,
            workers=self.worker_factory,
            verifiers=self.verifiers,
            gate=self.capability_gate,
            config=self.config,
            worker_id=worker_id or self.scheduler_id,
            on_attempt=on_attempt,
            audit_buffer=self._audit,
        )

    async def arun(
        self, run_id: str, *, context: Any = None, concurrency: int | None = None
    ) -> DAGRunResult:
        """Run the run's tasks here until it succeeds, fails, blocks, pauses or is cancelled."""
        run = await run_blocking(self.store.require_run, run_id)
        self._check_context(run, context)
        tasks = await run_blocking(self.store.list_tasks, run_id)
        self._check_keys(
            t.spec
            for t in tasks
            if t.status.value not in ("verified", "superseded", "cancelled", "failed")
        )
        ttl = self.config.scheduler_lease_seconds
        epoch = await run_blocking(
            self.store.acquire_scheduler_lease, run_id, self.scheduler_id, ttl
        )
        stop = asyncio.Event()
        keeper = asyncio.create_task(self._keep_scheduler_lease(run_id, epoch, stop))
        started = {"run_id": run_id, "tenant_id": run.tenant_id, "project_id": run.project_id}
        notify(self, "dag_run_start", started, run_id=run_id)
        ended: dict[str, Any] = {"status": "interrupted"}
        try:
            try:
                await self.runner().pool(
                    run_id=run_id, concurrency=concurrency or self.config.max_concurrency, stop=stop
                )
            finally:
                keeper.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await keeper
                with contextlib.suppress(Exception):
                    await run_blocking(
                        self.store.release_scheduler_lease, run_id, self.scheduler_id, epoch
                    )
            await run_blocking(self._mirror_events, run_id)
            result = await run_blocking(self.result, run_id)
            ended = {
                "status": result.status.value,
                "success": result.success,
                "reason": result.reason,
                "errors": {
                    k: v.get("code") if isinstance(v, dict) else str(v)
                    for k, v in result.errors.items()
                },
            }
            return result
        finally:
            notify(self, "dag_run_end", {**started, **ended}, run_id=run_id)

    async def _keep_scheduler_lease(self, run_id: str, epoch: int, stop: asyncio.Event) -> None:
        ttl = self.config.scheduler_lease_seconds
        while True:
            await asyncio.sleep(ttl / 3)
            try:
                await run_blocking(
                    self.store.renew_scheduler_lease, run_id, self.scheduler_id, epoch, ttl
                )
            except DAGFencedError:
                stop.set()  # another scheduler took over: claim nothing more here
                return
            except Exception:
                continue

    def run(
        self, run_id: str, *, context: Any = None, concurrency: int | None = None
    ) -> DAGRunResult:
        """Sync form of :meth:`arun` (works inside a running event loop too, via a thread)."""
        return run_private(self.arun(run_id, context=context, concurrency=concurrency))

    async def resume(
        self, run_id: str, *, context: Any = None, reason: str | None = None
    ) -> DAGRunResult:
        """Resume a paused or blocked run and run it."""
        run = await run_blocking(self.store.require_run, run_id)
        if run.status in (DAGRunStatus.PAUSED, DAGRunStatus.BLOCKED):
            await run_blocking(self.store.set_run_status, run_id, "resume", reason)
        return await self.arun(run_id, context=context)

    def pause(self, run_id: str, reason: str | None = None) -> DAGRun:
        """Stop new claims; attempts already running finish."""
        return self.store.set_run_status(run_id, "pause", reason)

    def cancel(self, run_id: str, reason: str | None = None) -> DAGRun:
        """Cancel the run: open tasks are cancelled and running attempts fenced out."""
        return self.store.set_run_status(run_id, "cancel", reason)

    def resolve_blocker(self, run_id: str, task_id: str, reason: str | None = None) -> DAGTask:
        """Make a blocked task ready again (its attempts start over)."""
        return self.store.resolve_blocker(run_id, task_id, reason)

    resolve_approval = resolve_blocker

    def supersede_task(
        self,
        run_id: str,
        task_id: str,
        replacement: TaskSpec | Mapping[str, Any],
        *,
        expected_graph_revision: int,
    ) -> DAGRun:
        """Replace a task, if the graph is still at ``expected_graph_revision`` (else ``LA-DAG-VERSION-CONFLICT``)."""
        spec = coerce_specs([replacement])[0]
        return self.store.supersede_task(
            run_id, task_id, spec, expected_graph_revision=expected_graph_revision
        )

    # -- reading --------------------------------------------------------------------------

    def get_run(self, run_id: str) -> DAGRun | None:
        """The stored run, or None."""
        return self.store.get_run(run_id)

    def list_tasks(self, run_id: str) -> list[DAGTask]:
        """Every task of the run."""
        return self.store.list_tasks(run_id)

    def get_task(self, run_id: str, task_id: str) -> DAGTask | None:
        """One task, or None."""
        return self.store.get_task(run_id, task_id)

    def events(self, run_id: str, *, after: int = 0, limit: int = 100) -> list[DAGEvent]:
        """The run's events after the cursor ``after``."""
        return self.store.events(run_id, after=after, limit=limit)

    def read_artifact(self, run_id: str, task_id: str, *, context: Any = None) -> bytes:
        """The published artifact of a verified task (hash checked)."""
        manifest = self.store.published_artifacts(run_id).get(task_id)
        if manifest is None:
            raise DAGError(
                "LA-DAG-NOT-FOUND", f"task {task_id!r} of run {run_id!r} has no published artifact"
            )
        return self.artifact_store.read(manifest, context)

    def result(self, run_id: str) -> DAGRunResult:
        """The run's current result (status, task states, artifacts, errors)."""
        run = self.store.require_run(run_id)
        tasks = self.store.list_tasks(run_id)
        return DAGRunResult(
            run_id=run_id,
            status=run.status,
            tasks={t.task_id: t.status for t in tasks},
            artifacts=self.store.published_artifacts(run_id),
            errors={
                t.task_id: t.last_error
                for t in tasks
                if t.last_error and t.status.value != "verified"
            },
            graph_revision=run.graph_revision,
            events_cursor=self.store.last_event_id(run_id),
            reason=run.reason,
        )

    def session_events(self, run_id: str, *, after: int = 0, limit: int = 1000) -> list[Any]:
        """The run's events as ``SessionEvent`` objects (session id ``dag-<run_id>``)."""
        from lightagent_dag.session import to_session_event

        return [to_session_event(e) for e in self.store.events(run_id, after=after, limit=limit)]

    def _mirror_events(self, run_id: str) -> None:
        if self.session_store is None:
            return
        from lightagent_dag.session import mirror_events

        mirror_events(self.store, self.session_store, run_id)

    def close(self) -> None:
        """Close the store's connections."""
        self.store.close()
