"""Background jobs: how many jobs a second one session's log carries, and one job's latency.

For each store (SQLite file with ``synchronous=FULL``; PostgreSQL when one answers on
127.0.0.1:5432), ``JobManager`` runs N trivial jobs started at once in one session, each
with one recorded step (``ctx.step``) — three fenced appends per job: created+started,
step, completed+inbox message — and, separately, one job at a time (start to ``wait``).

The floor is raw ``sqlite3`` making the same three durable commits per job, one after the
other, on the same payload sizes (no fencing, no fold, no event loop): the ratio says what
the job machinery costs over the writes themselves (lower is better).

Run: ``.venv/bin/python bench/bench_jobs.py [--jobs 200] [--single 20]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "lightagent-core" / "src"))
sys.path.insert(0, str(HERE.parent / "lightagent-runtime" / "src"))

from lightagent.events.sql_store import SqliteSessionStore, SqlSessionStore  # noqa: E402
from lightagent_runtime.jobs import JobManager  # noqa: E402

PG = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


async def _op(ctx):
    value = await ctx.step("work", lambda: {"n": ctx.arguments["n"]})
    return value


async def _burst(store, n: int) -> float:
    jobs = JobManager(store, f"bench-{uuid.uuid4().hex[:8]}", poll_interval=0.05)
    jobs.register("work", _op)
    began = time.perf_counter()
    ids = [jobs.start("work", arguments={"n": i}).job_id for i in range(n)]
    await asyncio.gather(*(jobs.wait(i) for i in ids))
    return time.perf_counter() - began


async def _single(store, rounds: int) -> list[float]:
    jobs = JobManager(store, f"single-{uuid.uuid4().hex[:8]}", poll_interval=0.01)
    jobs.register("work", _op)
    out = []
    for i in range(rounds):
        began = time.perf_counter()
        await jobs.wait(jobs.start("work", arguments={"n": i}).job_id)
        out.append(time.perf_counter() - began)
    return out


def _floor(path: Path, n: int) -> float:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("CREATE TABLE e (s TEXT, seq INTEGER, payload TEXT, PRIMARY KEY (s, seq))")
    payload = json.dumps({"job_id": uuid.uuid4().hex, "data": "x" * 200})
    began, seq = time.perf_counter(), 0
    for _ in range(n):
        for _ in range(3):
            seq += 1
            db.execute("BEGIN IMMEDIATE")
            db.execute("INSERT INTO e VALUES ('s', ?, ?)", (seq, payload))
            db.execute("COMMIT")
    return time.perf_counter() - began


def _stores(folder: Path):
    yield "sqlite", lambda: SqliteSessionStore(folder / "jobs.sqlite3")
    try:
        import psycopg

        with psycopg.connect(PG.replace("+psycopg", ""), connect_timeout=2):
            pass
    except Exception as exc:
        print(f"postgres: skipped ({type(exc).__name__})")
        return
    prefix = f"bench{uuid.uuid4().hex[:6]}_"
    yield "postgres", lambda: SqlSessionStore(PG, table_prefix=prefix)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--single", type=int, default=20)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    floor = _floor(folder / "floor.sqlite3", args.jobs)
    lines = [
        "# Background jobs",
        "",
        f"N jobs started at once in one session, each with one recorded step (three fenced "
        f"appends per job); the floor is raw sqlite3 making three durable commits per job "
        f"({args.jobs / floor:,.0f} jobs/s here). `x floor` is our time over the floor's; "
        f"the last column is one job at a time, `start` to `wait`. "
        f"Run: `.venv/bin/python bench/bench_jobs.py --jobs {args.jobs}`.",
        "",
        "| store | jobs at once | jobs/s | x floor | one job, median ms |",
        "|---|---|---|---|---|",
    ]
    for name, open_store in _stores(folder):
        burst = asyncio.run(_burst(open_store(), args.jobs))
        single = asyncio.run(_single(open_store(), args.single))
        ratio = burst / floor
        median = statistics.median(single) * 1000
        lines.append(
            f"| {name} | {args.jobs} | {args.jobs / burst:,.0f} | {ratio:.1f} | {median:.1f} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    (HERE / "results" / "jobs.md").write_text(text)


if __name__ == "__main__":
    main()
