"""LightFlow checkpoint overhead per step: JSON and SQL stores against a run with no store.

What is measured: a 20-step chain of trivial async step agents (so the flow machinery
and the store are all that costs), run R times per configuration:

* ``no store``: ``LightFlow()`` (records kept in process memory) — the baseline;
* ``JsonLightFlowStore``: one journal line per step commit (an append and an ``fdatasync``);
* ``SqlLightFlowStore`` on a SQLite file (WAL, ``synchronous=FULL``, one transaction per commit);
* ``SqlLightFlowStore`` on PostgreSQL, when one answers on 127.0.0.1:5432;
* a reference store whose step commit is exactly the floor's raw ``sqlite3`` commit (the
  rest of its records in memory), called off the event loop like the others: what one raw
  commit per step costs once LightFlow hands it to a store thread and back.

Figures: time per step, its ratio to the no-store run, the checkpoint overhead per step
(store run minus no-store run), and that overhead as a ratio to raw ``sqlite3`` doing one
``INSERT`` + ``COMMIT`` of the same step record with the same settings (the floor of a
durable commit on this disk).

Run: ``.venv/bin/python bench/bench_flow.py [--runs 60] [--steps 20]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "lightagent-flow" / "src"))
sys.path.insert(0, str(HERE.parent / "lightagent-core" / "src"))

from lightagent_flow import JsonLightFlowStore, LightFlow, SqlLightFlowStore  # noqa: E402


async def _agent(query: str) -> str:
    return "ok"


def _flow(store: Any, steps: int) -> LightFlow:
    flow = LightFlow(store=store)
    for i in range(steps):
        flow.step(
            f"step-{i}", agent=_agent, depends_on=[f"step-{i - 1}"] if i else None, query="work"
        )
    return flow


class RawFloor:
    """Raw ``sqlite3`` commits of one step record each (WAL, ``synchronous=FULL``): the floor."""

    def __init__(self, path: Path) -> None:
        # Any thread may commit (the reference store commits on a store thread).
        self.conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=FULL")
        self.conn.execute(
            "CREATE TABLE steps (run_id TEXT, name TEXT, record TEXT, PRIMARY KEY (run_id, name))"
        )
        self.record = json.dumps(
            {"name": "step-1", "status": "success", "content": "ok", "attempts": 1}
        )

    def commit(self, run_id: str, name: str) -> None:
        """One step record, committed durably."""
        self.conn.execute("BEGIN IMMEDIATE")
        self.conn.execute(
            "INSERT OR REPLACE INTO steps VALUES (?, ?, ?)", (run_id, name, self.record)
        )
        self.conn.execute("COMMIT")

    def per_commit(self, n: int) -> float:
        """Seconds per commit over ``n`` commits."""
        run = uuid.uuid4().hex
        start = time.perf_counter()
        for i in range(n):
            self.commit(run, f"s{i}")
        return (time.perf_counter() - start) / n


class PostgresFloor:
    """Raw ``psycopg`` commits of one step record each on its own connection: the PostgreSQL floor."""

    def __init__(self, url: str) -> None:
        import psycopg

        self.conn = psycopg.connect(url, autocommit=True)
        self.conn.execute(
            "CREATE TABLE steps (run_id TEXT, name TEXT, record TEXT, PRIMARY KEY (run_id, name))"
        )
        self.record = json.dumps(
            {"name": "step-1", "status": "success", "content": "ok", "attempts": 1}
        )

    def per_commit(self, n: int) -> float:
        """Seconds per commit over ``n`` commits."""
        run = uuid.uuid4().hex
        start = time.perf_counter()
        for i in range(n):
            with self.conn.transaction():
                self.conn.execute(
                    "INSERT INTO steps VALUES (%s, %s, %s) ON CONFLICT (run_id, name) "
                    "DO UPDATE SET record = excluded.record",
                    (run, f"s{i}", self.record),
                )
        return (time.perf_counter() - start) / n


class RawCommitStore:
    """A reference store: each step commit is the floor's raw commit; the rest in memory."""

    blocking = True

    def __init__(self, path: Path) -> None:
        from lightagent_flow import MemoryLightFlowStore

        self.memory = MemoryLightFlowStore()
        self.floor = RawFloor(path)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.memory, name)

    def commit_step(self, run_id: str, step: dict[str, Any], *, epoch: int | None = None) -> bool:
        """The floor's commit, on a store thread."""
        self.floor.commit(run_id, step["name"])
        return False


def _time_flow(store: Any, runs: int, steps: int, floor: Any) -> tuple[float, float]:
    """(seconds per step, seconds per raw commit): medians over runs, the floor timed between runs.

    Timing the floor interleaved with the flow runs keeps both under the same disk and CPU
    load (the machine is shared), so their ratio is stable where absolute figures are not.
    """
    flow = _flow(store, steps)

    async def main() -> tuple[list[float], list[float]]:
        await flow.arun("warm-up", run_id=f"warm-{uuid.uuid4().hex[:8]}")
        times, floors = [], []
        for _ in range(runs):
            start = time.perf_counter()
            result = await flow.arun("bench", run_id=f"b-{uuid.uuid4().hex[:12]}")
            times.append(time.perf_counter() - start)
            assert result.success, result.error
            floors.append(floor.per_commit(steps))
        return times, floors

    times, floors = asyncio.run(main())
    return statistics.median(times) / steps, statistics.median(floors)


ADMIN = os.environ.get("LIGHTAGENT_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")


def _postgres_database() -> str | None:
    """A fresh database for this bench (dropped afterwards), or None without a server."""
    try:
        import psycopg
    except ImportError:
        return None
    name = f"la_bench_flow_{uuid.uuid4().hex[:10]}"
    try:
        with psycopg.connect(ADMIN, autocommit=True, connect_timeout=2) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
    except Exception:
        return None
    return name


def _drop_postgres(name: str) -> None:
    import psycopg

    with psycopg.connect(ADMIN, autocommit=True, connect_timeout=2) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    rows: list[tuple[str, float, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        floor = RawFloor(base / "raw.db")
        rows.append(
            ("no store (in-memory records)", *_time_flow(None, args.runs, args.steps, floor))
        )
        json_store = JsonLightFlowStore(base / "json")
        rows.append(
            ("JsonLightFlowStore (journal)", *_time_flow(json_store, args.runs, args.steps, floor))
        )
        sqlite_store = SqlLightFlowStore(f"sqlite:///{base / 'flows.db'}")
        rows.append(
            (
                "SqlLightFlowStore (SQLite, FULL)",
                *_time_flow(sqlite_store, args.runs, args.steps, floor),
            )
        )
        sqlite_store.close()
        raw_store = RawCommitStore(base / "raw-store.db")
        rows.append(
            (
                "reference: the raw sqlite3 commit as the store",
                *_time_flow(raw_store, args.runs, args.steps, floor),
            )
        )
        raw_store.floor.conn.close()
        database = _postgres_database()
        if database:
            base_url = ADMIN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+psycopg://", 1)
            pg = SqlLightFlowStore(f"{base_url}/{database}")
            pg_floor = PostgresFloor(f"{ADMIN.rsplit('/', 1)[0]}/{database}")
            try:
                rows.append(
                    (
                        "SqlLightFlowStore (PostgreSQL; floor: raw psycopg)",
                        *_time_flow(pg, args.runs, args.steps, pg_floor),
                    )
                )
            finally:
                pg.close()
                pg_floor.conn.close()
                _drop_postgres(database)
        floor.conn.close()
    nostore = rows[0][1]
    lines = [
        "# LightFlow checkpoint overhead",
        "",
        f"`bench/bench_flow.py` — a {args.steps}-step chain of trivial async agents, {args.runs} runs per store "
        "(median run, per step). `x no store` is the time per step over the run without a store; "
        "`overhead` is the store run minus the no-store run, per step; `overhead x floor` divides it by raw "
        "`sqlite3` doing one `INSERT`+`COMMIT` of a step record (WAL, `synchronous=FULL`), the cost of one "
        "durable commit on this disk (for PostgreSQL: raw `psycopg` doing one upsert + `COMMIT`), timed "
        "between the same store's runs (`floor ms`). The goal is 2.0 or less. Each step commit "
        "is durable before the next step starts. The reference row is no store to use: each of its step "
        "commits is the floor's own raw commit, handed to a store thread and back as LightFlow does for "
        "every blocking store (its other records stay in memory), so it shows what leaving the event loop "
        "adds to one raw commit per step. The machine is shared, so absolute times vary between "
        "runs; the ratios to the interleaved floor are the figures to compare.",
        f"Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f} when it ended.",
        "",
        "| store | ms per step | x no store | overhead ms per step | floor ms | overhead x floor |",
        "|---|---|---|---|---|---|",
    ]
    for name, per_step, raw in rows:
        overhead = per_step - nostore
        if name.startswith("no store"):
            lines.append(f"| {name} | {per_step * 1000:.3f} | 1.00 | - | {raw * 1000:.3f} | - |")
        else:
            lines.append(
                f"| {name} | {per_step * 1000:.3f} | {per_step / nostore:.1f} | "
                f"{overhead * 1000:.3f} | {raw * 1000:.3f} | {overhead / raw:.2f} |"
            )
    if not any("PostgreSQL" in row[0] for row in rows):
        lines.append("")
        lines.append("PostgreSQL: not measured (no server answered on 127.0.0.1:5432).")
    text = "\n".join(lines) + "\n"
    out = HERE / "results" / "flow.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
