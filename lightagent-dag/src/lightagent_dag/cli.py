"""``lightagent dag worker`` and ``lightagent dag status``."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import signal
import sys
from typing import Any

from lightagent_dag.errors import DAGError

__all__ = ["configure_dag", "load_app", "run_dag"]


def configure_dag(parser: argparse.ArgumentParser) -> None:
    """Add the ``worker`` and ``status`` subcommands."""
    sub = parser.add_subparsers(dest="dag_command", metavar="SUBCOMMAND")
    worker = sub.add_parser(
        "worker",
        help="claim and run tasks from a shared store until stopped (SIGTERM/SIGINT finish in-flight attempts)",
    )
    worker.add_argument(
        "--store",
        required=True,
        help="store URL (postgresql+psycopg://… or sqlite:///file) or a SQLite path",
    )
    worker.add_argument(
        "--app",
        required=True,
        help="module:attr giving a LightDAG, or a function that configures/returns one (it registers workers and verifiers)",
    )
    worker.add_argument(
        "--concurrency",
        type=int,
        default=None,
        help="attempts at once (default: DAGConfig.max_concurrency)",
    )
    worker.add_argument(
        "--worker-id", default=None, help="this worker's id (default host:pid:random)"
    )
    worker.add_argument(
        "--artifacts",
        default=None,
        help="artifact folder (default: the app's artifact store; in the database on PostgreSQL)",
    )
    worker.add_argument("--run", default=None, help="only claim tasks of this run")
    worker.add_argument(
        "--lease",
        type=float,
        default=None,
        help="task lease seconds (default: DAGConfig.task_lease_seconds)",
    )
    worker.add_argument(
        "--heartbeat",
        type=float,
        default=None,
        help="lease renewal interval seconds (default: lease/3)",
    )
    worker.add_argument("--poll", type=float, default=None, help="idle poll interval seconds")
    worker.add_argument(
        "--until-idle",
        action="store_true",
        help="with --run: exit once the run is no longer running",
    )
    status = sub.add_parser("status", help="show a run: status, per-task states, errors")
    status.add_argument("run_id", help="the run's id")
    status.add_argument("--store", required=True, help="store URL or SQLite path")
    status.add_argument("--json", action="store_true", help="print JSON")
    from lightagent_dag.watch import add_watch_arguments

    add_watch_arguments(status)


def load_app(ref: str, store: Any, artifacts: str | None = None) -> Any:
    """Import ``module:attr`` and return a LightDAG on ``store`` with the app's workers and verifiers."""
    from lightagent_dag.artifacts import LocalArtifactStore
    from lightagent_dag.dag import LightDAG
    from lightagent_dag.sql.blobs import SqlArtifactStore

    module_name, _, attr = ref.partition(":")
    if not module_name or not attr:
        raise DAGError("LA-CONFIG", f"--app must look like module:attr, got {ref!r}")
    try:
        target = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise DAGError(
            "LA-CONFIG", f"cannot load --app {ref!r}: {type(exc).__name__}: {exc}"
        ) from exc
    if isinstance(target, LightDAG):
        app = target
        dag = LightDAG(
            store=store,
            artifact_store=artifacts or app.artifact_store,
            worker_factory=app.worker_factory,
            verifiers=app.verifiers,
            capability_gate=app.capability_gate,
            config=app.config,
        )
        dag._audit = app._audit  # the app's default gate writes its decisions there
        if not artifacts and isinstance(dag.artifact_store, SqlArtifactStore):
            # The app's database artifacts belong with the store this worker serves.
            dag.artifact_store = SqlArtifactStore(dag.store, max_bytes=dag.artifact_store.max_bytes)
        return dag
    if not callable(target):
        raise DAGError("LA-CONFIG", f"--app {ref!r} is neither a LightDAG nor a callable")
    dag = LightDAG(store=store, artifact_store=LocalArtifactStore(artifacts) if artifacts else None)
    returned = target(dag)
    if returned is not None and not isinstance(returned, LightDAG):
        raise DAGError(
            "LA-CONFIG", f"--app {ref!r} returned {type(returned).__name__}, not a LightDAG"
        )
    dag = returned or dag
    if artifacts:
        dag.artifact_store = LocalArtifactStore(artifacts)
    return dag


def _config(dag: Any, args: argparse.Namespace) -> None:
    from dataclasses import replace

    changes: dict[str, Any] = {}
    if args.lease is not None:
        changes["task_lease_seconds"] = args.lease
    if args.heartbeat is not None:
        changes["heartbeat_interval"] = args.heartbeat
    if args.poll is not None:
        changes["poll_interval"] = args.poll
        changes["poll_interval_max"] = max(
            args.poll, min(dag.config.poll_interval_max, args.poll * 4)
        )
    if args.concurrency is not None:
        if args.concurrency < 1:
            raise DAGError("LA-CONFIG", "--concurrency must be >= 1")
        changes["max_concurrency"] = args.concurrency
    if changes:
        dag.config = replace(dag.config, **changes)


async def _work(dag: Any, args: argparse.Namespace) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        try:
            loop.add_signal_handler(sig, stop.set)
        except (NotImplementedError, RuntimeError):  # pragma: no cover - non-Unix
            pass
    runner = dag.runner(worker_id=args.worker_id)
    print(
        f"lightagent dag worker {runner.worker_id}: ready (keys: {', '.join(dag.worker_factory.keys())})",
        flush=True,
    )
    await runner.pool(
        run_id=args.run,
        concurrency=dag.config.max_concurrency,
        stop=stop,
        until_quiescent=bool(args.run and args.until_idle),
    )


def _status(args: argparse.Namespace) -> int:
    from lightagent_dag.sql.store import SqlTaskGraphStore

    # Read-only: a mistyped --store is "no such store", never a new empty database.
    store = SqlTaskGraphStore.open_existing(args.store)
    try:
        if getattr(args, "watch", False):
            from lightagent_dag.watch import watch_run

            watch_run(store, args.run_id, interval=args.interval, timeout=args.timeout)
        run = store.require_run(args.run_id)
        tasks = store.list_tasks(args.run_id)
        if args.json:
            print(
                json.dumps(
                    {"run": run.to_dict(), "tasks": [t.to_dict() for t in tasks]},
                    indent=2,
                    default=str,
                )
            )
            return 0
        counts: dict[str, int] = {}
        for task in tasks:
            counts[task.status.value] = counts.get(task.status.value, 0) + 1
        print(
            f"run {run.run_id}: {run.status.value}  (tenant {run.tenant_id}, project {run.project_id}, graph revision {run.graph_revision})"
        )
        print("  " + ", ".join(f"{k}={v}" for k, v in sorted(counts.items())))
        for task in tasks[:200]:
            line = f"  {task.task_id:<24} {task.status.value:<20} attempts={task.attempts} fence={task.fence}"
            if task.last_error and task.status.value != "verified":
                line += f"  error: [{task.last_error.get('code')}] {task.last_error.get('message')}"
            if task.blocker:
                line += f"  blocker: {task.blocker}"
            print(line)
        if len(tasks) > 200:
            print(f"  … {len(tasks) - 200} more (use --json)")
        return 0
    finally:
        store.close()


def run_dag(args: argparse.Namespace) -> int:
    """Dispatch ``lightagent dag …``; typed errors print one line and exit 2."""
    from lightagent.errors import LightAgentError

    command = getattr(args, "dag_command", None)
    try:
        if command == "status":
            return _status(args)  # `… | head`: lightagent.cli.main ends quietly
        if command == "worker":
            if args.until_idle and not args.run:
                raise DAGError("LA-CONFIG", "--until-idle needs --run RUN_ID")
            dag = load_app(args.app, args.store, args.artifacts)
            _config(dag, args)
            try:
                asyncio.run(_work(dag, args))
            finally:
                dag.close()
            return 0
    except LightAgentError as exc:
        print(f"lightagent dag: {exc}", file=sys.stderr)
        return 2
    print("usage: lightagent dag {worker,status} … (see lightagent dag --help)", file=sys.stderr)
    return 2
