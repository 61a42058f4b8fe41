"""LightDAG claim+complete throughput with 1, 2, 4 and 8 worker processes, SQLite and PostgreSQL.

Ours: each worker process runs the real attempt path of ``lightagent dag worker`` (claim
with a lease and a fencing token, heartbeat, run a no-op task, stage a content-addressed
artifact, verify, publish with the fence checked, wake dependents, refresh the run).
Floor: the same number of processes driving the raw driver (``sqlite3`` / ``psycopg``)
through the minimum a fenced queue needs: one claim transaction (``UPDATE … RETURNING``,
``FOR UPDATE SKIP LOCKED`` on PostgreSQL, ``BEGIN IMMEDIATE`` on SQLite) and one
completion transaction checking the fence. Workers are forked and wait on a start
signal, so process start-up is not timed. Figures: tasks/s and the floor's throughput
over ours (x floor, lower is better).

Run: ``.venv/bin/python bench/bench_dag.py`` (PostgreSQL from ``LIGHTAGENT_TEST_POSTGRES``,
default ``postgresql://postgres@127.0.0.1:5432/test``; skipped when unreachable).
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import platform
import sqlite3
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
WORKERS = tuple(int(n) for n in os.environ.get("BENCH_DAG_WORKERS", "1,2,4,8").split(","))
# "sqlite,postgres" by default; one of them to measure only that store.
STORES = os.environ.get("BENCH_DAG_STORES", "sqlite,postgres").split(",")
OURS_TASKS = int(os.environ.get("BENCH_DAG_TASKS", "400"))
FLOOR_TASKS = OURS_TASKS * 3
CTX = multiprocessing.get_context("fork")
# The no-op check is quick and pure: an inline verifier (stage + publish in one transaction).
# BENCH_DAG_INLINE=0 measures the two-transaction path of any other verifier.
INLINE = os.environ.get("BENCH_DAG_INLINE", "1") != "0"
# Each figure is the best of this many runs (the machine is shared: the best run is the
# one least disturbed by other work, for ours and the floor alike).
REPEAT = int(os.environ.get("BENCH_DAG_REPEAT", "3"))
# Where artifacts go: "database" (SqlArtifactStore, the blob rides on the publication) or
# "folder" (LocalArtifactStore: a file and two fsyncs per artifact).
ARTIFACTS = os.environ.get("BENCH_DAG_ARTIFACTS", "database")


# -- ours -------------------------------------------------------------------------------


def _ours_child(url: str, art: str, run_id: str, start: Any, worker_id: str) -> None:
    from lightagent_dag import (
        CallableVerifier,
        DAGConfig,
        LightDAG,
        LocalArtifactStore,
        SqlArtifactStore,
        SqlTaskGraphStore,
        TaskOutcome,
    )

    async def work(ctx: Any) -> TaskOutcome:
        return TaskOutcome.candidate(ctx.task_id)

    async def verify(request: Any) -> bool:
        return True

    store = SqlTaskGraphStore(url, create=False)
    dag = LightDAG(
        store=store,
        artifact_store=SqlArtifactStore(store)
        if ARTIFACTS == "database"
        else LocalArtifactStore(art),
        verifiers={"v": CallableVerifier("v", verify, inline=INLINE)},
        config=DAGConfig(poll_interval=0.002, poll_interval_max=0.01, max_tasks=100_000),
    )
    dag.register_worker("w", work)
    start.wait()
    asyncio.run(dag.runner(worker_id=worker_id).pool(run_id=run_id, concurrency=1))
    store.close()
    os._exit(0)


def run_ours(url: str, workers: int, tmp: Path) -> float:
    from lightagent import PermissionSet, SecurityContext
    from lightagent_dag import DAGConfig, LightDAG, LocalArtifactStore, SqlTaskGraphStore, TaskSpec

    run_id = f"bench-{uuid.uuid4().hex[:8]}"
    store = SqlTaskGraphStore(url)
    dag = LightDAG(
        store=store,
        artifact_store=LocalArtifactStore(tmp / "art"),
        config=DAGConfig(max_tasks=100_000),
    )
    ctx = SecurityContext(
        tenant_id="bench",
        project_id="dag",
        permissions=PermissionSet(allowed=frozenset({"dag.task.execute"})),
    )
    tasks = [
        TaskSpec(
            task_id=f"t{i}", goal="noop", acceptance_contract={}, worker_key="w", verifier_key="v"
        )
        for i in range(OURS_TASKS)
    ]
    dag.create_run(tasks, run_id=run_id, context=ctx, check_keys=False)
    store.close()
    start = CTX.Event()
    procs = [
        CTX.Process(target=_ours_child, args=(url, str(tmp / "art"), run_id, start, f"b{i}"))
        for i in range(workers)
    ]
    for p in procs:
        p.start()
    time.sleep(0.5)  # let every worker build its engine
    t0 = time.perf_counter()
    start.set()
    for p in procs:
        p.join(600)
    elapsed = time.perf_counter() - t0
    check = SqlTaskGraphStore(url, create=False)
    status = check.get_run(run_id).status.value
    published = len(check.publication_counts(run_id))
    check.close()
    if status != "succeeded" or published != OURS_TASKS:
        raise SystemExit(f"bench run {run_id} ended {status} with {published} published")
    return OURS_TASKS / elapsed


# -- floor ------------------------------------------------------------------------------


def _floor_sqlite_child(path: str, start: Any) -> None:
    conn = sqlite3.connect(path, timeout=30, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA busy_timeout=30000")
    start.wait()
    while True:
        conn.execute("BEGIN IMMEDIATE")
        row = conn.execute(
            "UPDATE q SET status='running', fence=fence+1 WHERE id=(SELECT id FROM q WHERE status='ready' ORDER BY id LIMIT 1) RETURNING id, fence"
        ).fetchone()
        conn.execute("COMMIT")
        if row is None:
            break
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("UPDATE q SET status='done' WHERE id=? AND fence=?", row)
        conn.execute("COMMIT")
    conn.close()
    os._exit(0)


def _floor_pg_child(dsn: str, table: str, start: Any) -> None:
    import psycopg

    conn = psycopg.connect(dsn)
    start.wait()
    while True:
        with conn.transaction():
            row = conn.execute(
                f"UPDATE {table} SET status='running', fence=fence+1 WHERE id=(SELECT id FROM {table} WHERE status='ready'"
                " ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id, fence"
            ).fetchone()
        if row is None:
            break
        with conn.transaction():
            conn.execute(f"UPDATE {table} SET status='done' WHERE id=%s AND fence=%s", row)
    conn.close()
    os._exit(0)


def _time_children(procs: list[Any], start: Any) -> float:
    for p in procs:
        p.start()
    time.sleep(0.3)
    t0 = time.perf_counter()
    start.set()
    for p in procs:
        p.join(600)
    return time.perf_counter() - t0


def run_floor_sqlite(workers: int, tmp: Path) -> float:
    path = str(tmp / f"floor-{uuid.uuid4().hex[:6]}.sqlite3")
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(
        "CREATE TABLE q (id INTEGER PRIMARY KEY, status TEXT NOT NULL, fence INTEGER NOT NULL)"
    )
    conn.execute("CREATE INDEX q_status ON q(status, id)")
    conn.executemany(
        "INSERT INTO q(id, status, fence) VALUES (?, 'ready', 0)",
        [(i,) for i in range(FLOOR_TASKS)],
    )
    conn.close()
    start = CTX.Event()
    elapsed = _time_children(
        [CTX.Process(target=_floor_sqlite_child, args=(path, start)) for _ in range(workers)], start
    )
    return FLOOR_TASKS / elapsed


def run_floor_pg(dsn: str, workers: int) -> float:
    import psycopg

    table = f"floor_{uuid.uuid4().hex[:6]}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, status TEXT NOT NULL, fence INTEGER NOT NULL)"
        )
        conn.execute(f"CREATE INDEX {table}_status ON {table}(status, id)")
        with conn.cursor() as cur:
            cur.executemany(
                f"INSERT INTO {table}(id, status, fence) VALUES (%s, 'ready', 0)",
                [(i,) for i in range(FLOOR_TASKS)],
            )
    start = CTX.Event()
    elapsed = _time_children(
        [CTX.Process(target=_floor_pg_child, args=(dsn, table, start)) for _ in range(workers)],
        start,
    )
    return FLOOR_TASKS / elapsed


# -- where the time goes ------------------------------------------------------------------


def breakdown(url: str, tmp: Path, n: int = 100) -> dict[str, float]:
    """Mean ms per task of each store step, one process, no contention."""
    from lightagent import PermissionSet, SecurityContext
    from lightagent_dag import DAGConfig, LightDAG, LocalArtifactStore, SqlTaskGraphStore, TaskSpec

    run_id = f"steps-{uuid.uuid4().hex[:8]}"
    store = SqlTaskGraphStore(url)
    artifacts = LocalArtifactStore(tmp / "steps")
    dag = LightDAG(store=store, artifact_store=artifacts, config=DAGConfig(max_tasks=100_000))
    ctx = SecurityContext(tenant_id="bench", project_id="dag", permissions=PermissionSet())
    tasks = [
        TaskSpec(
            task_id=f"t{i}", goal="noop", acceptance_contract={}, worker_key="w", verifier_key="v"
        )
        for i in range(n)
    ]
    dag.create_run(tasks, run_id=run_id, context=ctx, check_keys=False)
    totals = dict.fromkeys(
        ("claim", "artifact write (2 fsyncs)", "stage", "publish", "stage+publish inline"), 0.0
    )
    inline = False  # every other task takes the inline verifier's one-transaction path
    while True:
        t0 = time.perf_counter()
        claim = store.claim("b", run_id=run_id, lease_seconds=60)
        t1 = time.perf_counter()
        if claim is None:
            break
        manifest = artifacts.stage(
            claim.task_id.encode(),
            run_id=run_id,
            task_id=claim.task_id,
            attempt_id=claim.attempt_id,
            tenant_id="bench",
            project_id="dag",
        )
        t2 = time.perf_counter()
        report = {"report_id": uuid.uuid4().hex, "verdict": "pass"}
        if inline:
            store.publish_verified(claim, manifest, report)
            totals["stage+publish inline"] += time.perf_counter() - t2
        else:
            store.stage_candidate(claim, manifest, max_pending=16)
            t3 = time.perf_counter()
            store.publish(claim, manifest, report)
            totals["stage"] += t3 - t2
            totals["publish"] += time.perf_counter() - t3
        totals["claim"] += t1 - t0
        totals["artifact write (2 fsyncs)"] += t2 - t1
        inline = not inline
    store.close()
    halves = ("stage", "publish", "stage+publish inline")
    return {k: v / (n / 2 if k in halves else n) * 1000 for k, v in totals.items()}


# -- driver -----------------------------------------------------------------------------


def _postgres() -> tuple[str, str] | None:
    try:
        import psycopg
    except ImportError:
        return None
    admin = os.environ.get("LIGHTAGENT_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
    name = f"la_bench_{uuid.uuid4().hex[:8]}"
    try:
        with psycopg.connect(admin, autocommit=True, connect_timeout=3) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
    except Exception as exc:
        print(f"bench_dag: PostgreSQL skipped ({type(exc).__name__}: {exc})", file=sys.stderr)
        return None
    return admin, f"{admin.rsplit('/', 1)[0]}/{name}"


def _drop(admin: str, dsn: str) -> None:
    import psycopg

    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{dsn.rsplit("/", 1)[1]}" WITH (FORCE)')


def main() -> int:
    load_before = os.getloadavg()[0]
    rows: list[tuple[str, int, float, float]] = []
    with tempfile.TemporaryDirectory() as directory:
        tmp = Path(directory)
        steps: dict[str, dict[str, float]] = {}
        for n in WORKERS if "sqlite" in STORES else ():
            floor = max(run_floor_sqlite(n, tmp) for _ in range(REPEAT))
            ours = max(
                run_ours(f"sqlite:///{tmp / f'dag-{n}-{i}.sqlite3'}", n, tmp) for i in range(REPEAT)
            )
            rows.append(("SQLite (WAL)", n, ours, floor))
            print(f"sqlite  {n} workers: ours {ours:7.1f}/s  floor {floor:8.1f}/s", flush=True)
        if "sqlite" in STORES:
            steps["SQLite (WAL)"] = breakdown(f"sqlite:///{tmp / 'steps.sqlite3'}", tmp)
        pg = _postgres() if "postgres" in STORES else None
        if pg is not None:
            admin, dsn = pg
            try:
                url = dsn.replace("postgresql://", "postgresql+psycopg://", 1)
                for n in WORKERS:
                    floor = max(run_floor_pg(dsn, n) for _ in range(REPEAT))
                    ours = max(run_ours(url, n, tmp) for _ in range(REPEAT))
                    rows.append(("PostgreSQL", n, ours, floor))
                    print(
                        f"postgres {n} workers: ours {ours:7.1f}/s  floor {floor:8.1f}/s",
                        flush=True,
                    )
                steps["PostgreSQL"] = breakdown(url, tmp)
            finally:
                _drop(admin, dsn)
    sqlite_version = sqlite3.sqlite_version
    lines = [
        "# LightDAG claim+complete throughput",
        "",
        f"`bench/bench_dag.py` — {OURS_TASKS} no-op tasks per run through the full LightDAG attempt path (claim with",
        "lease and fencing token, heartbeat, stage a content-addressed artifact, verify, publish with the fence",
        "checked, wake dependents, refresh the run), by N forked worker processes with one attempt at a time each.",
        "Floor: the same N processes doing only a fenced claim transaction and a fenced completion transaction on the raw",
        f"driver (`sqlite3` / `psycopg`), {FLOOR_TASKS} tasks. `x floor` = floor tasks/s over ours (lower is better).",
        f"Python {platform.python_version()}, SQLite {sqlite_version}, {os.cpu_count()} CPUs (shared with other work:"
        f" 1-minute load {load_before:.1f} at the start, {os.getloadavg()[0]:.1f} at the end).",
        f"Each figure is the best of {REPEAT} runs; the verifier is {'inline (stage and publish in one transaction)' if INLINE else 'staged (stage, verify, publish)'}.",
        "",
        "| store | workers | LightDAG tasks/s | floor tasks/s | x floor |",
        "|---|---|---|---|---|",
    ]
    for store, n, ours, floor in rows:
        lines.append(f"| {store} | {n} | {ours:,.0f} | {floor:,.0f} | {floor / ours:.1f} |")
    columns = list(next(iter(steps.values())))
    lines += [
        "",
        "Where a task's time goes (store calls only, one process, no contention, mean ms per task): the",
        "floor runs two small transactions and writes no artifact; LightDAG's calls below are larger (attempt",
        "rows, events, reports, dependents, run status; in a worker pool the next claim rides on the",
        "publication, so an inline-verified task costs one transaction) and it writes the artifact",
        "(fsync of the blob and of its directory, so it is durable before its publication commits). The rest",
        "of a task's time in the table above is the worker path around them: thread hand-offs from the event",
        "loop, the security context and CapabilityGate, verification, and the heartbeat.",
        "",
        "| store | " + " | ".join(columns) + " |",
        "|---|" + "---|" * len(columns),
    ]
    for store, values in steps.items():
        lines.append(f"| {store} | " + " | ".join(f"{v:.1f}" for v in values.values()) + " |")
    lines += [
        "",
        "The PyPI `lightagent==0.11.0` LightDAG runs one in-process scheduler per run on SQLite and has no",
        "worker processes; `bench/bench_dag_peer.py` compares the two in one process on the same work.",
        "",
    ]
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "dag.md").write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
